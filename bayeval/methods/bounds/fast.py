r"""The closed forms of the Fréchet bounds: exact bounds and the paper's entropic estimator.

Every metric below is :math:`\sum_k w_k\,P(H{=}k, Y{=}k) / D_k` with identified denominators
:math:`D_k = s_H P(H{=}k) + s_Y P(Y{=}k) + s_1` (:func:`metric_terms`):

==========  ===========================  =================================
metric      terms :math:`k`, :math:`w_k`  :math:`D_k`
==========  ===========================  =================================
accuracy    every class, 1               1
precision   class 1, 1                   :math:`P(H=1)`
recall      class 1, 1                   :math:`P(Y=1)`
f1          class 1, 2                   :math:`P(H=1) + P(Y=1)`
macro_f1    every class, :math:`2/K`     :math:`P(H=k) + P(Y=k)`
==========  ===========================  =================================

**Exact bounds** (:func:`exact_bounds`). Over all couplings of :math:`\alpha_z` and
:math:`\beta_z` in each cell, each diagonal mass obeys the Fréchet–Hoeffding bounds

.. math:: \max(0, \alpha_{zk} + \beta_{zk} - 1) \le P(H{=}k, Y{=}k \mid z)
          \le \min(\alpha_{zk}, \beta_{zk}),

and one coupling attains every lower end at once (and the maximal coupling every upper end), so
for non-negative :math:`w_k/D_k` the sharp bounds of a metric are
:math:`L = \sum_k \frac{w_k}{D_k}\sum_z p_z \max(0, \alpha_{zk}+\beta_{zk}-1)` and
:math:`U = \sum_k \frac{w_k}{D_k}\sum_z p_z \min(\alpha_{zk}, \beta_{zk})`.
Their standard errors come from the influence function of an item :math:`(h, z)` (with the
denominators' own sampling error since they come from the same items):

.. math:: \mathrm{IF}(h, z) = \sum_k \tfrac{w_k}{D_k}\big[\nu_{zk} - N_k
          + \partial_{\alpha}\nu_{zk}\,([h{=}k] - \alpha_{zk})\big]
          - \sum_k \tfrac{w_k N_k}{D_k^2}\,\mathrm{IF}_{D_k}(h, z),\qquad
          \widehat{\mathrm{SE}} = \sqrt{\widehat{\mathrm{Var}}\,\mathrm{IF} / (n - 1)},

where :math:`\nu_{zk}` is the cell's lower or upper end and :math:`N_k = \sum_z p_z \nu_{zk}`.

**Entropic bounds** (:func:`entropic_bounds`, the estimator of Maia Polo et al., 2024, eq. 2.3):
the dual of their Thm 2.1 with soft-max temperature :math:`\varepsilon`, solved by L-BFGS on the
cell counts (equal to the sample-level dual). With the paper's :math:`1/K` inside the log,
:math:`L \le L_\varepsilon \le L + \varepsilon\log K` and
:math:`U - \varepsilon\log K \le U_\varepsilon \le U` (on the scale of
:math:`\sum_k w_k P(H{=}k,Y{=}k)/D_k`); the CI uses the per-item dual values as influence
function (Thm 2.5).

:func:`closed_form` turns either into the per-metric Dataset of an Evaluation: ``mean`` is the
midpoint :math:`(L+U)/2`, ``sd`` :math:`\sqrt{(U-L)^2/12 + \mathrm{SE}^2_{\text{mid}}}`,
``lower``/``upper`` the ends of the interval covering the identified set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy
import xarray as xr
from threadpoolctl import threadpool_limits

from bayeval.metrics import REGISTRY

__all__ = [
    "BINARY_ONLY",
    "METRICS",
    "closed_form",
    "default_metrics",
    "entropic_bounds",
    "exact_bounds",
    "metric_bounds",
    "metric_terms",
]

METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1")
"""The metrics of :data:`bayeval.metrics.REGISTRY` that have Fréchet bounds here."""
BINARY_ONLY = tuple(m for m in METRICS if not REGISTRY[m].multiclass)
"""Those defined for two classes only (of class 1)."""


def metric_terms(metric: str, n_classes: int
                 ) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    r"""The terms of a metric :math:`\sum_k w_k P(H{=}k, Y{=}k) / D_k` (the module's table).

    Parameters
    ----------
    metric : str
        One of :data:`METRICS`.
    n_classes : int
        :math:`K`.

    Returns
    -------
    classes : int array
        The classes :math:`k` of the terms.
    weights : float array
        :math:`w_k`.
    (s_H, s_Y, s_1) : tuple of float
        :math:`D_k = s_H P(H{=}k) + s_Y P(Y{=}k) + s_1`.

    Examples
    --------
    >>> classes, weights, scales = metric_terms("f1", 2)
    >>> classes.tolist(), weights.tolist(), scales
    ([1], [2.0], (1.0, 1.0, 0.0))
    """
    every = np.arange(n_classes)
    return {
        "accuracy": (every, np.ones(n_classes), (0.0, 0.0, 1.0)),
        "precision": (np.array([1]), np.ones(1), (1.0, 0.0, 0.0)),
        "recall": (np.array([1]), np.ones(1), (0.0, 1.0, 0.0)),
        "f1": (np.array([1]), np.array([2.0]), (1.0, 1.0, 0.0)),
        "macro_f1": (every, np.full(n_classes, 2.0 / n_classes), (1.0, 1.0, 0.0)),
    }[metric]


#: The fast paths' products have an inner size of K or of a few terms (or are L-BFGS vector
#: updates): a threaded BLAS only adds overhead, several-fold on a busy machine.
_single_threaded_blas = threadpool_limits.wrap(limits=1, user_api="blas")


def _nan_divide(num, den):
    """num / den, NaN where den == 0 (an undefined ratio), without a warning."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    return np.divide(num, den, out=out, where=den > 0)


def _numpy_or_pytensor(x):
    if isinstance(x, np.ndarray):
        return np, _nan_divide
    import pytensor.tensor as pt

    return pt, lambda num, den: num / den


def metric_bounds(p, alpha, beta, metric: str, n_classes: int | None = None):
    r"""Sharp bounds :math:`(L, U)` of a metric over all couplings, vectorised over draws.

    .. math:: L = \sum_k \frac{w_k}{D_k}\sum_z p_z \max(0, \alpha_{zk} + \beta_{zk} - 1),\qquad
              U = \sum_k \frac{w_k}{D_k}\sum_z p_z \min(\alpha_{zk}, \beta_{zk}).

    Parameters
    ----------
    p : array (..., n_cells)
        :math:`P(Z = z)`.
    alpha, beta : arrays (..., n_cells, n_classes)
        :math:`P(H = k \mid z)` and :math:`P(Y = k \mid z)`. numpy arrays or PyTensor tensors
        (the PyMC models call this on tensors).
    metric : str
        One of :data:`METRICS` (precision, recall, f1: class 1 of a binary problem).
    n_classes : int, optional
        :math:`K`, needed for tensors (default ``alpha.shape[-1]``).

    Returns
    -------
    (lower, upper), arrays of shape (...); NaN where a denominator is 0.

    Examples
    --------
    >>> p, alpha, beta = np.array([1.0]), np.array([[0.3, 0.7]]), np.array([[0.6, 0.4]])
    >>> [round(float(v), 6) for v in metric_bounds(p, alpha, beta, "accuracy")]  # |a+b-1|, 1-|a-b|
    [0.1, 0.7]
    """
    xp, divide = _numpy_or_pytensor(alpha)
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, n_classes or alpha.shape[-1])
    a, b = xp.take(alpha, classes, axis=-1), xp.take(beta, classes, axis=-1)
    pz = p[..., :, None]
    den = s_h * (pz * a).sum(axis=-2) + s_y * (pz * b).sum(axis=-2) + s_1
    lower = (pz * xp.maximum(0.0, a + b - 1.0)).sum(axis=-2)
    upper = (pz * xp.minimum(a, b)).sum(axis=-2)
    return (divide(weights * lower, den).sum(axis=-1),
            divide(weights * upper, den).sum(axis=-1))


def _independence_value(p, alpha, beta, metric: str) -> float:
    """The metric under the label model's coupling H ⊥ Y | Z (the paper's 'label model')."""
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[-1])
    a, b = alpha[:, classes], beta[:, classes]
    den = s_h * p @ a + s_y * p @ b + s_1
    return float(_nan_divide(weights * (p @ (a * b)), den).sum())


def _plug_in(cell_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    totals = cell_counts.sum(axis=1)
    n = int(totals.sum())
    return totals / n, cell_counts / totals[:, None], n


def _influence(p, alpha, beta, metric, cell_value, cell_slope, diagonal, diag_if):
    r"""Influence function :math:`\mathrm{IF}(z, h)` of one bound of a metric, shape (cells, K).

    ``cell_value`` (cells, terms) and ``cell_slope`` are :math:`\nu_{zk}` and
    :math:`\partial\nu_{zk}/\partial\alpha_{zk}` for the exact bounds; the entropic bounds pass
    their per-item dual values as ``diag_if`` (the numerator's influence function) instead, and
    ``diagonal``, the optimal coupling's :math:`P(H{=}k,Y{=}k)` per term, in both cases.
    """
    n_classes = alpha.shape[1]
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, n_classes)
    a, b = alpha[:, classes], beta[:, classes]
    den = s_h * p @ a + s_y * p @ b + s_1
    scale = weights / den
    is_class = (np.arange(n_classes)[:, None] == classes[None, :]).astype(float)  # (K, terms)
    if diag_if is None:
        base = (cell_value - diagonal - cell_slope * a) @ scale
        diag_if = base[:, None] + (cell_slope * scale) @ is_class.T
    # sum_t r_t IF_{D_t}(z, h), IF_D(z, h) = s_H ([h = k] - a_zk) + (s_H a + s_Y b + s_1)_zk - D
    r = weights * diagonal / den**2
    den_if = s_h * (is_class @ r)[None, :] + ((s_y * b + s_1 - den) @ r)[:, None]
    return diag_if - den_if


def _standard_error(p, alpha, influence, n) -> float:
    return float(np.sqrt((p[:, None] * alpha * influence**2).sum() / max(n - 1, 1)))


def _result(lower, upper, if_lower, if_upper, p, alpha, beta, metric, n) -> dict[str, float]:
    return {
        "lower_bound": float(lower), "upper_bound": float(upper),
        "lower_bound_sd": _standard_error(p, alpha, if_lower, n),
        "upper_bound_sd": _standard_error(p, alpha, if_upper, n),
        "midpoint_sd": _standard_error(p, alpha, (if_lower + if_upper) / 2, n),
        "label_model": _independence_value(p, alpha, beta, metric),
    }


def _undefined(p, alpha, beta, metric) -> bool:
    classes, _, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
    den = s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1
    return bool((den <= 0).any())


def _nan_result() -> dict[str, float]:
    keys = ("lower_bound", "upper_bound", "lower_bound_sd", "upper_bound_sd", "midpoint_sd",
            "label_model")
    return dict.fromkeys(keys, np.nan)


@_single_threaded_blas
def exact_bounds(cell_counts, beta, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    r"""Exact plug-in Fréchet bounds and their standard errors from cell counts.

    Parameters
    ----------
    cell_counts : int array (n_cells, n_classes)
        :math:`n_{zk}`: items of weak-label pattern :math:`z` predicted as class :math:`k`;
        :math:`\hat p_z = n_z/n`, :math:`\hat\alpha_{zk} = n_{zk}/n_z`.
    beta : float array (n_cells, n_classes)
        The label model :math:`P(Y = k \mid z)`.
    metrics : sequence of str

    Returns
    -------
    dict metric -> {lower_bound, upper_bound, lower_bound_sd, upper_bound_sd, midpoint_sd,
    label_model}; the sds are the influence-function SEs (module docstring), NaN everywhere
    for an undefined metric (a zero denominator).

    Examples
    --------
    >>> out = exact_bounds(np.array([[30, 70]]), np.array([[0.6, 0.4]]), ["accuracy"])
    >>> round(out["accuracy"]["lower_bound"], 6), round(out["accuracy"]["upper_bound"], 6)
    (0.1, 0.7)
    """
    p, alpha, n = _plug_in(np.asarray(cell_counts))
    out = {}
    for metric in metrics:
        if _undefined(p, alpha, beta, metric):
            out[metric] = _nan_result()
            continue
        classes = metric_terms(metric, alpha.shape[1])[0]
        a, b = alpha[:, classes], beta[:, classes]
        lo, hi = np.maximum(0.0, a + b - 1.0), np.minimum(a, b)
        if_lower = _influence(p, alpha, beta, metric, lo, (a + b > 1).astype(float), p @ lo,
                              None)
        if_upper = _influence(p, alpha, beta, metric, hi, (a < b).astype(float), p @ hi, None)
        lower, upper = metric_bounds(p, alpha, beta, metric)
        out[metric] = _result(lower, upper, if_lower, if_upper, p, alpha, beta, metric, n)
    return out


def _entropic_max(cost, alpha, beta, epsilon, max_iter):
    r"""The paper's smoothed upper dual on the cell counts, solved by L-BFGS.

    Minimises :math:`\sum_z [\sum_h \alpha_{zh}\,\varepsilon \log(\frac1K\sum_y
    e^{(c_{hy} + a_{zy})/\varepsilon}) - \beta_z^\top a_z + (\sum_y a_{zy})^2]`: the sample
    average of eq. 2.3 grouped by cell, each cell's term divided by :math:`p_z` (the objective is
    separable over cells, §2.2, so the optimiser is unchanged and every cell is solved to the
    same precision), plus the paper's gauge penalty. It starts from
    :math:`a_{zy} = \varepsilon\log\beta_z(y) - \sum_h \alpha_{zh} c_{hy}`, the optimum of
    every cell whose items share one prediction (most cells when there are many LFs); the
    repository starts from 0. Returns the per-item dual values :math:`f(h, z)` (cells, K) and
    the soft assignments :math:`s_{zhy}`: the optimal entropic coupling is
    :math:`\alpha_{zh}s_{zhy}`.
    """
    n_cells, k = beta.shape

    def parts(flat):
        a = flat.reshape(n_cells, k)
        x = (cost[None] + a[:, None, :]) / epsilon
        top = x.max(axis=2, keepdims=True)
        soft = np.exp(x - top)
        total = soft.sum(axis=2, keepdims=True)
        lse = (top + np.log(total))[..., 0]
        dual = epsilon * (lse - np.log(k)) - (beta * a).sum(axis=1)[:, None]
        return a, dual, soft / total

    def objective(flat):
        a, dual, soft = parts(flat)
        gauge = a.sum(axis=1)
        grad = (alpha[..., None] * soft).sum(axis=1) - beta + 2 * gauge[:, None]
        return float((alpha * dual).sum() + gauge @ gauge), grad.ravel()

    start = epsilon * np.log(np.maximum(beta, np.finfo(float).tiny)) - alpha @ cost
    start -= start.mean(axis=1, keepdims=True)
    res = scipy.optimize.minimize(objective, start.ravel(), jac=True, method="L-BFGS-B",
                                  options={"maxiter": max_iter, "maxfun": 2 * max_iter,
                                           "ftol": 1e-15, "gtol": 1e-10})
    _, dual, soft = parts(res.x)
    return dual, soft, bool(res.success)


@_single_threaded_blas
def entropic_bounds(cell_counts, beta, metrics: Sequence[str], *, epsilon: float,
                    max_iter: int = 1000) -> dict[str, dict[str, float]]:
    r"""The paper's entropically smoothed bounds :math:`\hat L_\varepsilon, \hat U_\varepsilon`.

    For :math:`g(h, y) = \sum_k \frac{w_k}{D_k}[h = y = k]` (plug-in :math:`D_k`),

    .. math:: \hat U_\varepsilon = \min_a \sum_{z,h} \hat p_z\hat\alpha_{zh}\Big[\varepsilon
              \log\Big(\frac1K\sum_y e^{(g(h,y) + a_{zy})/\varepsilon}\Big)
              - \sum_y \beta_z(y)\,a_{zy}\Big],

    and :math:`\hat L_\varepsilon(g) = -\hat U_\varepsilon(-g)`, with the 95 % CI of Thm 2.5 from
    the per-item dual values (plus the denominators' influence, as for :func:`exact_bounds`).
    :math:`L \le \hat L_\varepsilon \le L + \varepsilon\log K` and
    :math:`U - \varepsilon\log K \le \hat U_\varepsilon \le U`; the repository's variant without
    the :math:`1/K` is this interval widened by :math:`\varepsilon\log K` at both ends.

    Parameters
    ----------
    cell_counts, beta, metrics
        As for :func:`exact_bounds`.
    epsilon : float
        Temperature :math:`\varepsilon > 0`; the paper sets :math:`\varepsilon = e/\log K` for a
        target error :math:`e` (``approx_error=0.01``).
    max_iter : int
        L-BFGS iterations (the repository's ``max_epochs``); small :math:`\varepsilon` and label
        models near 0 or 1 need more.

    Returns
    -------
    dict metric -> the same keys as :func:`exact_bounds`, and ``converged`` (both L-BFGS runs
    met their tolerance before ``max_iter``).

    Examples
    --------
    >>> out = entropic_bounds(np.array([[30, 70]]), np.array([[0.6, 0.4]]), ["accuracy"],
    ...                       epsilon=0.001)
    >>> round(out["accuracy"]["lower_bound"], 2), round(out["accuracy"]["upper_bound"], 2)
    (0.1, 0.7)
    """
    p, alpha, n = _plug_in(np.asarray(cell_counts))
    n_classes = alpha.shape[1]
    out = {}
    for metric in metrics:
        if _undefined(p, alpha, beta, metric):
            out[metric] = _nan_result()
            continue
        classes, weights, (s_h, s_y, s_1) = metric_terms(metric, n_classes)
        den = s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1
        cost = np.zeros((n_classes, n_classes))
        cost[classes, classes] = weights / den
        sides, converged = {}, True
        for side, sign in (("lower", -1.0), ("upper", 1.0)):
            dual, soft, success = _entropic_max(sign * cost, alpha, beta, epsilon, max_iter)
            converged &= success
            value = float(p @ (alpha * dual).sum(axis=1))
            diagonal = p @ (alpha[:, classes] * soft[:, classes, classes])
            influence = _influence(p, alpha, beta, metric, None, None, diagonal,
                                   sign * (dual - value))
            sides[side] = (sign * value, influence)
        out[metric] = _result(sides["lower"][0], sides["upper"][0], sides["lower"][1],
                              sides["upper"][1], p, alpha, beta, metric, n)
        out[metric]["converged"] = converged
    return out


def closed_form(results: dict[str, dict[str, float]], ci_prob: float) -> xr.Dataset:
    r"""The per-metric Dataset of a fast path, as an Evaluation's ``closed_form`` holds it.

    .. math:: \text{mean} = \tfrac{L + U}2,\quad
              \text{sd} = \sqrt{(U - L)^2/12 + \mathrm{SE}^2_{\text{mid}}},\quad
              [\text{lower}, \text{upper}] = [L - z\,\mathrm{SE}_L,\ U + z\,\mathrm{SE}_U]
              \cap [0, 1],

    with :math:`z` the normal quantile of ``(1 + ci_prob) / 2``: the mean and sd of a metric
    draw under a uniform coupling position, and an interval covering the identified set.

    Parameters
    ----------
    results : dict metric -> dict
        The output of :func:`exact_bounds` or :func:`entropic_bounds`.
    ci_prob : float
        Level of the interval.

    Returns
    -------
    xr.Dataset
        Over ``metric``: ``mean``, ``sd``, ``lower``, ``upper``, ``lower_bound``,
        ``upper_bound``, ``lower_bound_sd``, ``upper_bound_sd`` and ``label_model``.

    Examples
    --------
    >>> ds = closed_form(exact_bounds(np.array([[30, 70]]), np.array([[0.6, 0.4]]),
    ...                               ["accuracy"]), 0.95)
    >>> round(float(ds["mean"].item()), 6)
    0.4
    """
    frame = pd.DataFrame(results).T[list(_nan_result())].astype(float)
    z = scipy.stats.norm.ppf((1 + ci_prob) / 2)
    lo, hi = frame["lower_bound"], frame["upper_bound"]
    frame["mean"] = (lo + hi) / 2
    frame["sd"] = np.sqrt((hi - lo) ** 2 / 12 + frame["midpoint_sd"] ** 2)
    frame["lower"] = np.clip(lo - z * frame["lower_bound_sd"], 0.0, 1.0)
    frame["upper"] = np.clip(hi + z * frame["upper_bound_sd"], 0.0, 1.0)
    cols = ["mean", "sd", "lower", "upper", "lower_bound", "upper_bound", "lower_bound_sd",
            "upper_bound_sd", "label_model"]
    frame.index.name = "metric"
    return xr.Dataset.from_dataframe(frame[cols].astype(float))


def default_metrics(n_classes: int) -> tuple[str, ...]:
    """accuracy, precision, recall and f1 for two classes; accuracy and macro_f1 for more.

    Parameters
    ----------
    n_classes : int

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> default_metrics(2), default_metrics(3)
    (('accuracy', 'precision', 'recall', 'f1'), ('accuracy', 'macro_f1'))
    """
    if n_classes == 2:
        return ("accuracy", *BINARY_ONLY)
    return tuple(m for m in METRICS if REGISTRY[m].multiclass)
