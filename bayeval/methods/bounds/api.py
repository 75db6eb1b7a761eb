r"""Fréchet bounds: evaluating a classifier from weak labels only (Maia Polo et al., 2024).

Labelling functions vote on every item; their votes form one categorical variable :math:`Z`
(a *cell* per distinct pattern, :mod:`bayeval.methods.bounds.label_models`), and a label model gives
:math:`\beta_z(y) = P(Y = y \mid Z = z)`. No true label is seen, so the joint law of the
prediction :math:`H = h(X)` and :math:`Y` is not identified: only its margins
:math:`p_z = P(Z = z)`, :math:`\alpha_z(k) = P(H = k \mid z)` and :math:`\beta_z` are. Every metric
below is :math:`\sum_k w_k\,P(H{=}k, Y{=}k) / D_k` with identified denominators
:math:`D_k = s_H P(H{=}k) + s_Y P(Y{=}k) + s_1`:

==========  ===========================  =================================
metric      terms :math:`k`, :math:`w_k`  :math:`D_k`
==========  ===========================  =================================
accuracy    every class, 1               1
precision   class 1, 1                   :math:`P(H=1)`
recall      class 1, 1                   :math:`P(Y=1)`
f1          class 1, 2                   :math:`P(H=1) + P(Y=1)`
macro_f1    every class, :math:`2/K`     :math:`P(H=k) + P(Y=k)`
==========  ===========================  =================================

**Exact bounds** (the fast path, spec §7.2). Over all couplings of :math:`\alpha_z` and
:math:`\beta_z` in each cell, each diagonal mass obeys the Fréchet–Hoeffding bounds

.. math:: \max(0, \alpha_{zk} + \beta_{zk} - 1) \le P(H{=}k, Y{=}k \mid z)
          \le \min(\alpha_{zk}, \beta_{zk}),

and one coupling attains every lower end at once (and the maximal coupling every upper end), so
for non-negative :math:`w_k/D_k` the sharp bounds of a metric are
:math:`L = \sum_k \frac{w_k}{D_k}\sum_z p_z \max(0, \alpha_{zk}+\beta_{zk}-1)` and
:math:`U = \sum_k \frac{w_k}{D_k}\sum_z p_z \min(\alpha_{zk}, \beta_{zk})`.
Their standard errors come from the influence function of an item :math:`(h, z)` (spec §7.2,
with the denominators' own sampling error since they come from the same items):

.. math:: \mathrm{IF}(h, z) = \sum_k \tfrac{w_k}{D_k}\big[\nu_{zk} - N_k
          + \partial_{\alpha}\nu_{zk}\,([h{=}k] - \alpha_{zk})\big]
          - \sum_k \tfrac{w_k N_k}{D_k^2}\,\mathrm{IF}_{D_k}(h, z),\qquad
          \widehat{\mathrm{SE}} = \sqrt{\widehat{\mathrm{Var}}\,\mathrm{IF} / (n - 1)},

where :math:`\nu_{zk}` is the cell's lower or upper end and :math:`N_k = \sum_z p_z \nu_{zk}`.

**Entropic bounds** (the paper's estimator, eq. 2.3): the dual of Thm 2.1 with soft-max
temperature :math:`\varepsilon`, solved by L-BFGS on the cell counts (§7.1: equal to the
sample-level dual). With the paper's :math:`1/K` inside the log,
:math:`L \le L_\varepsilon \le L + \varepsilon\log K` and
:math:`U - \varepsilon\log K \le U_\varepsilon \le U` (on the scale of
:math:`\sum_k w_k P(H{=}k,Y{=}k)/D_k`); the CI uses the per-item dual values as influence
function (Thm 2.5).

**Generative models** (spec §7.3–7.6), on cell counts only: M1 (:func:`model_m1`, plug-in
label model), M2 (:func:`model_m2`, Bayesian Dawid–Skene), M3 (:func:`model_m3`, a few gold
labels). The bounds :math:`L(\phi)`, :math:`U(\phi)` of the identified parameters
:math:`\phi = (p, \alpha, \beta)` are the headline posterior. A metric draw places one coupling
position :math:`u \sim \mathrm{Beta}(c, c)`, shared by all cells, in the identified set:
:math:`M = L + u\,(U - L)`; a shared :math:`u` makes :math:`M \mid \phi` uniform on
:math:`[L, U]` for :math:`c = 1`, where independent per-cell positions would concentrate
:math:`M` artificially (spec §7.6). Only gold labels (M3) inform :math:`u`.

**Summary.** ``lower_bound``/``upper_bound`` are the estimated bounds (posterior means for
draws); ``lower``/``upper`` cover the identified set: the lower end of the lower bound's interval
and the upper end of the upper bound's; ``mean`` is the midpoint :math:`(L+U)/2` (the paper's
"bounds average", the mean of :math:`M` under a uniform coupling position) and ``sd`` the sd of
:math:`M`: :math:`\sqrt{(U-L)^2/12 + \mathrm{SE}^2_{\text{mid}}}` for the fast paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.bounds import label_models as lm
from bayeval.sampling import sample
from bayeval.table import Table, table
from bayeval.validation import as_array, as_choice, as_ci_prob, check_same_length

__all__ = [
    "METRICS",
    "BoundsEvaluation",
    "bounds",
    "compare_labelling_functions",
    "default_metrics",
    "entropic_bounds",
    "exact_bounds",
    "m1_posterior_bounds",
    "metric_bounds",
    "model_m1",
    "model_m2",
    "model_m3",
    "rank_classifiers",
]

METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1")
BINARY_ONLY = ("precision", "recall", "f1")
METHODS = ("exact", "entropic", "pymc", "both")
MODELS = ("m1", "m2", "m3")
#: cells with fewer items than this are "small": plug-in bounds are biased inward there (§8.2)
SMALL_CELL, SMALL_SHARE = 10, 0.2
ROW_SUM_TOL = 1e-6
ASSUMPTIONS = ("The label model's P(Y | weak labels) is right (a wrong one moves each bound by up "
               "to the total-variation error, Thm 5.1); the items are a random sample of the "
               "population; the classifier was not trained on them. Nothing is assumed about how "
               "predictions and true labels are coupled within a weak-label pattern: the bounds "
               "are the best and worst case over all couplings. A metric's position inside the "
               "bounds is a prior (a uniform coupling position) unless gold labels are given.")


# --------------------------------------------------------------------------- bound algebra
def _terms(metric: str, n_classes: int) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    """(classes k, weights w_k, (s_H, s_Y, s_1)) of metric = sum_k w_k P(H=k,Y=k) / D_k."""
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
    classes, weights, (s_h, s_y, s_1) = _terms(metric, n_classes or alpha.shape[-1])
    a, b = xp.take(alpha, classes, axis=-1), xp.take(beta, classes, axis=-1)
    pz = p[..., :, None]
    den = s_h * (pz * a).sum(axis=-2) + s_y * (pz * b).sum(axis=-2) + s_1
    lower = (pz * xp.maximum(0.0, a + b - 1.0)).sum(axis=-2)
    upper = (pz * xp.minimum(a, b)).sum(axis=-2)
    return (divide(weights * lower, den).sum(axis=-1),
            divide(weights * upper, den).sum(axis=-1))


def _independence_value(p, alpha, beta, metric: str) -> float:
    """The metric under the label model's coupling H ⊥ Y | Z (the paper's 'label model')."""
    classes, weights, (s_h, s_y, s_1) = _terms(metric, alpha.shape[-1])
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
    classes, weights, (s_h, s_y, s_1) = _terms(metric, n_classes)
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
    classes, _, (s_h, s_y, s_1) = _terms(metric, alpha.shape[1])
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
        classes = _terms(metric, alpha.shape[1])[0]
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
    res = optimize.minimize(objective, start.ravel(), jac=True, method="L-BFGS-B",
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
        classes, weights, (s_h, s_y, s_1) = _terms(metric, n_classes)
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


def _closed_form(results: dict[str, dict[str, float]], ci_prob: float) -> xr.Dataset:
    """The per-metric Dataset of a fast path (see the module docstring for what each means)."""
    frame = pd.DataFrame(results).T[list(_nan_result())].astype(float)
    z = stats.norm.ppf((1 + ci_prob) / 2)
    lo, hi = frame["lower_bound"], frame["upper_bound"]
    frame["mean"] = (lo + hi) / 2
    frame["sd"] = np.sqrt((hi - lo) ** 2 / 12 + frame["midpoint_sd"] ** 2)
    frame["lower"] = np.clip(lo - z * frame["lower_bound_sd"], 0.0, 1.0)
    frame["upper"] = np.clip(hi + z * frame["upper_bound_sd"], 0.0, 1.0)
    cols = ["mean", "sd", "lower", "upper", "lower_bound", "upper_bound", "lower_bound_sd",
            "upper_bound_sd", "label_model"]
    frame.index.name = "metric"
    return xr.Dataset.from_dataframe(frame[cols].astype(float))


# ------------------------------------------------------------------------------ PyMC models
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
    return ("accuracy", "precision", "recall", "f1") if n_classes == 2 else ("accuracy",
                                                                               "macro_f1")


def _coords(n_cells: int, n_classes: int, metrics) -> dict[str, Any]:
    return {"cell": np.arange(n_cells), "class": np.arange(n_classes), "metric": list(metrics)}


def _identified_margins(cell_counts: np.ndarray, prior_cells: float, prior_predictions: float):
    r"""``w`` :math:`\sim\mathrm{Dir}`, ``alpha`` :math:`\sim\mathrm{Dir}` per cell, and their
    multinomial likelihoods on the cell totals and the predictions per cell."""
    import pymc as pm
    import pytensor.tensor as pt

    n_cells, n_classes = cell_counts.shape
    totals = cell_counts.sum(axis=1)
    if n_cells == 1:  # one pattern: P(Z = z) = 1, nothing to learn
        w = pt.ones(1)
    else:
        w = pm.Dirichlet("w", a=np.full(n_cells, prior_cells), dims="cell")
        pm.Multinomial("cell_totals", n=int(totals.sum()), p=w, observed=totals, dims="cell")
    alpha = pm.Dirichlet("alpha", a=np.full((n_cells, n_classes), prior_predictions),
                         dims=("cell", "class"))
    pm.Multinomial("predictions", n=totals, p=alpha, observed=cell_counts,
                   dims=("cell", "class"))
    return w, alpha


def _bounds_and_value(w, alpha, beta, u, metrics, n_classes: int) -> None:
    """Deterministics ``lower_bound``, ``upper_bound`` and ``value = L + u (U - L)`` (metric)."""
    import pymc as pm
    import pytensor.tensor as pt

    lowers, uppers = zip(*(metric_bounds(w, alpha, beta, m, n_classes) for m in metrics),
                             strict=True)
    lower = pm.Deterministic("lower_bound", pt.stack(lowers), dims="metric")
    upper = pm.Deterministic("upper_bound", pt.stack(uppers), dims="metric")
    pm.Deterministic("value", lower + u * (upper - lower), dims="metric")


def model_m1(cell_counts, beta, *, metrics=None, prior_cells: float = 1.0,
             prior_predictions: float = 1.0, prior_coupling: float = 1.0):
    r"""M1: posterior of the identified margins with the label model plugged in (spec §7.4).

    .. math::
        w \sim \mathrm{Dir}(a_w\mathbf 1),\quad \alpha_z \sim \mathrm{Dir}(a_\alpha\mathbf 1),
        \quad u \sim \mathrm{Beta}(c, c),\qquad
        (n_z)_z \sim \mathrm{Mult}(n, w),\quad (n_{zk})_k \sim \mathrm{Mult}(n_z, \alpha_z),

    :math:`\beta` fixed; deterministics ``lower_bound`` :math:`L(w, \alpha, \beta)`,
    ``upper_bound`` :math:`U(w, \alpha, \beta)` (:func:`metric_bounds`) and ``value``
    :math:`L + u(U - L)`. The posterior is conjugate (:func:`m1_posterior_bounds`).

    Parameters
    ----------
    cell_counts : int array-like (n_cells, n_classes)
        Items per weak-label pattern and predicted class.
    beta : float array-like (n_cells, n_classes)
        The label model :math:`P(Y = k \mid z)`.
    metrics : sequence of str, optional
        Default: :func:`default_metrics`.
    prior_cells, prior_predictions, prior_coupling : float
        :math:`a_w`, :math:`a_\alpha` and :math:`c`.

    Returns
    -------
    pm.Model with free ``w``, ``alpha``, ``u`` and dims ``cell``, ``class``, ``metric``.

    Examples
    --------
    >>> m = model_m1([[30, 70], [60, 40]], [[0.6, 0.4], [0.9, 0.1]], metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha', 'u', 'w']
    """
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts, beta = np.asarray(cell_counts, dtype=np.int64), np.asarray(beta, dtype=float)
    metrics = list(metrics or default_metrics(beta.shape[1]))
    with pm.Model(coords=_coords(*cell_counts.shape, metrics)) as m:
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, pt.as_tensor(beta), u, metrics, beta.shape[1])
    return m


def model_m2(cell_counts, patterns, *, metrics=None, prior_cells: float = 1.0,
             prior_predictions: float = 1.0, prior_coupling: float = 1.0):
    r"""M2: M1 with a Bayesian Dawid–Skene label model (one accuracy per LF, spec §7.4).

    .. math::
        \pi \sim \mathrm{Dir}(\mathbf 1),\ \rho_j \sim \mathrm{Beta}(1, 1),\
        \mathrm{acc}_j = \tfrac1K + (1 - \tfrac1K)\,\mathrm{Beta}(2, 2),\qquad
        P(\lambda_j = v \mid y) = \begin{cases} 1 - \rho_j & v = -1\\ \rho_j\,\mathrm{acc}_j
        & v = y\\ \rho_j (1 - \mathrm{acc}_j)/(K - 1) & \text{else}\end{cases}

    The votes enter through :math:`\sum_z n_z \log\sum_y \pi_y\prod_j P(\lambda_j = z_j\mid y)`
    (latent :math:`Y` summed out, one term per pattern), ``beta`` :math:`=P(Y\mid z)` is a
    deterministic, and the rest is M1 with this random :math:`\beta`. The constraint
    :math:`\mathrm{acc}_j > 1/K` removes label switching.

    Parameters
    ----------
    cell_counts : int array-like (n_cells, n_classes)
        Items per pattern and predicted class; the patterns' totals are the vote counts.
    patterns : int array-like (n_cells, n_lfs)
        The weak-label pattern of each cell (-1 = abstain).
    metrics, prior_cells, prior_predictions, prior_coupling
        As for :func:`model_m1`.

    Returns
    -------
    pm.Model; extra free ``pi``, ``propensity``, ``accuracy_raw`` (dim ``lf``).

    Examples
    --------
    >>> m = model_m2([[30, 70], [60, 40]], [[1, 1], [0, -1]], metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['accuracy_raw', 'alpha', 'pi', 'propensity', 'u', 'w']
    """
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts, patterns = np.asarray(cell_counts, dtype=np.int64), np.asarray(patterns)
    n_cells, n_classes = cell_counts.shape
    n_lfs = patterns.shape[1]
    metrics = list(metrics or default_metrics(n_classes))
    outcome = np.eye(n_classes + 1)[patterns + 1].reshape(n_cells, n_lfs * (n_classes + 1))
    coords = {**_coords(n_cells, n_classes, metrics), "lf": np.arange(n_lfs)}
    with pm.Model(coords=coords) as m:
        pi = pm.Dirichlet("pi", a=np.ones(n_classes), dims="class")
        rho = pm.Beta("propensity", 1.0, 1.0, dims="lf")
        raw = pm.Beta("accuracy_raw", 2.0, 2.0, dims="lf")
        acc = pm.Deterministic("lf_accuracy", 1 / n_classes + (1 - 1 / n_classes) * raw,
                               dims="lf")
        same = np.eye(n_classes)[None]
        log_vote = pt.log(rho)[:, None, None] + pt.log(
            same * acc[:, None, None] + (1 - same) * ((1 - acc) / (n_classes - 1))[:, None, None])
        log_abstain = pt.log1p(-rho)[:, None, None] * pt.ones((n_lfs, 1, n_classes))
        table_ = pt.concatenate([log_abstain, log_vote], axis=1)  # (lf, vote, y)
        log_joint = pt.log(pi)[None, :] + pt.dot(outcome, table_.reshape(
            (n_lfs * (n_classes + 1), n_classes)))
        log_marginal = pt.logsumexp(log_joint, axis=1)
        pm.Potential("weak_labels", (cell_counts.sum(axis=1) * log_marginal).sum())
        beta = pm.Deterministic("beta", pt.exp(log_joint - log_marginal[:, None]),
                                dims=("cell", "class"))
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, beta, u, metrics, n_classes)
    return m


def model_m3(cell_counts, beta, gold_counts, *, metrics=None, label_model_strength: float = 10.0,
             prior_cells: float = 1.0, prior_predictions: float = 1.0,
             prior_coupling: float = 1.0):
    r"""M3 (binary): a few gold labels update the label model and the coupling (spec §7.4).

    M1 with a random label model centred on the given one,
    :math:`b_z = \beta_z(1) \sim \mathrm{Beta}(1 + \kappa\hat b_z, 1 + \kappa(1 - \hat b_z))`,
    and, for the gold items (whose prediction and pattern are already in ``cell_counts``), the
    label given prediction and pattern under the coupling
    :math:`t_z = P(H{=}1, Y{=}1 \mid z) = \mathrm{lo}_z + u\,(\mathrm{hi}_z - \mathrm{lo}_z)`:

    .. math:: m_{z1\cdot 1} \sim \mathrm{Bin}(m_{z1\cdot}, t_z / a_z),\qquad
              m_{z0\cdot 1} \sim \mathrm{Bin}(m_{z0\cdot}, (b_z - t_z) / (1 - a_z)),

    with :math:`a_z = \alpha_z(1)`. Gold labels are the only data that move :math:`u`.

    Parameters
    ----------
    cell_counts, beta
        As for :func:`model_m1` (two classes).
    gold_counts : int array-like (n_cells, 2, 2)
        :math:`m_{zhy}`: gold items of pattern :math:`z` with prediction :math:`h`, label
        :math:`y`.
    label_model_strength : float
        :math:`\kappa`: how many gold labels the label model is worth in each cell.
    metrics, prior_cells, prior_predictions, prior_coupling
        As for :func:`model_m1`.

    Returns
    -------
    pm.Model; extra free ``b`` (dim ``cell``) and observed ``gold_labels`` (cell, class = h).

    Examples
    --------
    >>> m = model_m3([[30, 70], [60, 40]], [[0.6, 0.4], [0.9, 0.1]],
    ...              [[[2, 1], [0, 3]], [[4, 0], [1, 0]]], metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha', 'b', 'u', 'w']
    """
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts = np.asarray(cell_counts, dtype=np.int64)
    b_hat = np.asarray(beta, dtype=float)[:, 1]
    gold = np.asarray(gold_counts, dtype=np.int64)
    metrics = list(metrics or default_metrics(2))
    with pm.Model(coords=_coords(len(b_hat), 2, metrics)) as m:
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        b = pm.Beta("b", 1 + label_model_strength * b_hat,
                    1 + label_model_strength * (1 - b_hat), dims="cell")
        a = alpha[:, 1]
        width = pt.minimum(pt.minimum(a, b), pt.minimum(1 - a, 1 - b))  # hi - lo, >= 0 exactly
        t = pt.maximum(0.0, a + b - 1) + u * width
        p_gold = pt.stack([(pt.maximum(0.0, b - a) + (1 - u) * width) / (1 - a), t / a], axis=1)
        pm.Binomial("gold_labels", n=gold.sum(axis=2), p=pt.clip(p_gold, 0.0, 1.0),
                    observed=gold[:, :, 1], dims=("cell", "class"))
        _bounds_and_value(w, alpha, pt.stack([1 - b, b], axis=1), u, metrics, 2)
    return m


def m1_posterior_bounds(cell_counts, beta, metrics, *, n_draws: int = 20000,
                        random_seed=None, prior_cells: float = 1.0,
                        prior_predictions: float = 1.0) -> np.ndarray:
    r"""Independent draws of M1's bounds from its conjugate posterior (the check of NUTS).

    :math:`w \mid n \sim \mathrm{Dir}(a_w + n_z)`,
    :math:`\alpha_z \mid n \sim \mathrm{Dir}(a_\alpha + n_{z\cdot})`, pushed through
    :func:`metric_bounds`.

    Parameters
    ----------
    cell_counts : array-like of int, shape (n_cells, n_classes)
        Predictions of each class per weak-label cell :math:`z`.
    beta : array-like, shape (n_cells, n_classes)
        The label model :math:`P(Y\mid z)` per cell.
    metrics : sequence of str
        Metric names (:func:`metric_bounds`).
    n_draws : int
        Number of draws.
    random_seed : None, int or numpy.random.Generator
    prior_cells, prior_predictions : float
        Dirichlet concentrations :math:`a_w` and :math:`a_\alpha`.

    Returns
    -------
    numpy.ndarray
        Shape (n_draws, n_metrics, 2): lower and upper bound per draw and metric.

    Examples
    --------
    >>> d = m1_posterior_bounds([[300, 700]], [[0.6, 0.4]], ["accuracy"], random_seed=0)
    >>> d.shape, bool((d[..., 0] <= d[..., 1]).all())
    ((20000, 1, 2), True)
    """
    rng = np.random.default_rng(random_seed)
    cell_counts, beta = np.asarray(cell_counts), np.asarray(beta, dtype=float)
    totals = cell_counts.sum(axis=1)
    chunk = max(1, int(2e6 // cell_counts.size))
    out = []
    for start in range(0, n_draws, chunk):
        size = min(chunk, n_draws - start)
        w = rng.dirichlet(prior_cells + totals, size=size)
        alpha = rng.gamma(prior_predictions + cell_counts, size=(size, *cell_counts.shape))
        alpha /= alpha.sum(axis=2, keepdims=True)
        out.append(np.stack([np.stack(metric_bounds(w, alpha, beta, m), axis=-1)
                             for m in metrics], axis=1))
    return np.concatenate(out)


def _check_reference(draws: np.ndarray, metrics, ci_prob: float) -> xr.Dataset:
    """mean, sd, ETI and its mass of iid bound draws, dims (metric, bound)."""
    tail = (1 - ci_prob) / 2
    lower, upper = np.quantile(draws, [tail, 1 - tail], axis=0)
    mass = ((draws >= lower) & (draws <= upper)).mean(axis=0)
    dims = ("metric", "bound")
    return xr.Dataset(
        {"mean": (dims, draws.mean(axis=0)), "sd": (dims, draws.std(axis=0, ddof=1)),
         "lower": (dims, lower), "upper": (dims, upper), "interval_mass": (dims, mass)},
        coords={"metric": list(metrics), "bound": ["lower", "upper"]})


# ------------------------------------------------------------------------------- results
class BoundsEvaluation(Evaluation, method="bounds"):
    """An :class:`Evaluation` of a partially identified metric: bounds first.

    ``summary()`` has one row per metric with ``lower_bound``, ``upper_bound`` (estimated
    bounds), ``lower``/``upper`` (the interval covering the identified set) and ``mean``/``sd``
    of a metric draw under a uniform coupling position (module docstring). ``check()`` compares
    the NUTS draws of each bound with M1's exact conjugate posterior.

    Examples
    --------
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 50
    >>> y_pred = [1, 1, 0, 0, 0, 1] * 50
    >>> ev = bounds(y_pred, weak, label_model="majority_vote")
    >>> type(ev).__name__
    'BoundsEvaluation'
    >>> ev.summary()[["lower_bound", "upper_bound", "lower", "upper"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    bounds (exact), closed form: 95% equal-tailed intervals (eti)
               lower_bound  upper_bound  lower  upper
    metric
    accuracy         0.667          1.0  0.613    1.0
    precision        0.667          1.0  0.591    1.0
    recall           0.667          1.0  0.605    1.0
    f1               0.667          1.0  0.601    1.0
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """One row per metric: the bounds, an interval covering the identified set, a metric draw.

        Parameters
        ----------
        source : {"closed_form", "draws"}, optional
            By default the draws where a model was sampled, else the closed form (then as
            :meth:`Evaluation.summary`).
        ci_prob, ci_kind : optional
            Interval level and kind for the draws.

        Returns
        -------
        Table
            From draws: ``mean``/``sd`` of ``value`` (a metric draw under a uniform coupling),
            ``lower``/``upper`` (the lower end of the lower bound's interval and the upper end of
            the upper bound's), ``lower_bound``/``upper_bound`` (posterior means) with their sds,
            and ``r_hat`` (the larger of the two bounds').

        Examples
        --------
        Independent draws of model M1's bounds (:func:`m1_posterior_bounds`) stand in for NUTS:

        >>> import xarray as xr
        >>> from bayeval.methods.bounds.api import _check_reference
        >>> counts, beta = [[300, 700], [500, 100]], [[0.6, 0.4], [0.2, 0.8]]
        >>> d = m1_posterior_bounds(counts, beta, ["accuracy"], n_draws=2000, random_seed=1)
        >>> d = d.reshape(2, 1000, 1, 2)  # two "chains" of (lower, upper) bound draws
        >>> dims = ("chain", "draw", "metric")
        >>> post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
        ...                    "value": (dims, d.mean(axis=-1))}, coords={"metric": ["accuracy"]})
        >>> ref = _check_reference(m1_posterior_bounds(counts, beta, ["accuracy"], random_seed=2),
        ...                        ["accuracy"], 0.95)  # what bounds() stores for the check
        >>> ev = BoundsEvaluation.create(
        ...     method="bounds", variant="pymc", estimand="posterior/value",
        ...     draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))
        >>> ev.summary()[["lower", "upper", "lower_bound", "upper_bound"]].round(4)
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        bounds (pymc), posterior: bounds are posterior means; ...
                   lower   upper  lower_bound  upper_bound
        metric
        accuracy  0.0539  0.5984       0.0744       0.5756
        """
        default = "draws" if self.draws is not None else "closed_form"
        if as_choice(source or default, "source", ("closed_form", "draws")) == "closed_form":
            return super().summary("closed_form", ci_prob, ci_kind)
        ci_prob = as_ci_prob(self.ci_prob if ci_prob is None else ci_prob)
        ci_kind = as_choice(ci_kind or self.ci_kind, "ci_kind", CI_KINDS)
        post = self.tree["posterior"].to_dataset()
        interval = az.eti if ci_kind == "eti" else az.hdi
        dims = ("chain", "draw")
        frame = xr.Dataset({
            "mean": post["value"].mean(dims), "sd": post["value"].std(dims, ddof=1),
            "lower": interval(post["lower_bound"], prob=ci_prob).sel(ci_bound="lower", drop=True),
            "upper": interval(post["upper_bound"], prob=ci_prob).sel(ci_bound="upper", drop=True),
            "lower_bound": post["lower_bound"].mean(dims),
            "upper_bound": post["upper_bound"].mean(dims),
            "lower_bound_sd": post["lower_bound"].std(dims, ddof=1),
            "upper_bound_sd": post["upper_bound"].std(dims, ddof=1),
            "r_hat": np.maximum(az.rhat(post["lower_bound"]), az.rhat(post["upper_bound"])),
        }).to_dataframe()
        caption = (f"bounds ({self.meta['variant']}), posterior: bounds are posterior means; "
                   f"lower/upper = {100 * ci_prob:g}% {ci_kind} lower end of the lower bound and "
                   "upper end of the upper bound; mean/sd of a metric draw (uniform coupling)")
        return table(frame, caption, ci_prob=ci_prob, ci_kind=ci_kind, source="draws")

    def check(self) -> Table:
        """Each bound's NUTS draws against M1's conjugate posterior (4-sigma MC tolerances).

        The tests of :func:`bayeval.check.compare` (mean, variance ratio, interval mass) per
        metric and bound.

        Returns
        -------
        Table
            Indexed by ``(bound, metric, test)``; ``attrs["passed"]`` as in
            :meth:`Evaluation.check`.

        Raises
        ------
        ValueError
            Unless model M1 was sampled (M2 and M3 have no closed-form posterior).

        Examples
        --------
        Independent draws of model M1's bounds (:func:`m1_posterior_bounds`) stand in for NUTS:

        >>> import xarray as xr
        >>> from bayeval.methods.bounds.api import _check_reference
        >>> counts, beta = [[300, 700], [500, 100]], [[0.6, 0.4], [0.2, 0.8]]
        >>> d = m1_posterior_bounds(counts, beta, ["accuracy"], n_draws=2000, random_seed=1)
        >>> d = d.reshape(2, 1000, 1, 2)  # two "chains" of (lower, upper) bound draws
        >>> dims = ("chain", "draw", "metric")
        >>> post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
        ...                    "value": (dims, d.mean(axis=-1))}, coords={"metric": ["accuracy"]})
        >>> ref = _check_reference(m1_posterior_bounds(counts, beta, ["accuracy"], random_seed=2),
        ...                        ["accuracy"], 0.95)  # what bounds() stores for the check
        >>> ev = BoundsEvaluation.create(
        ...     method="bounds", variant="pymc", estimand="posterior/value",
        ...     draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))
        >>> ev.check()[["fast", "draws", "tolerance", "passed"]].round(4)
        ... # doctest: +NORMALIZE_WHITESPACE
        fast path vs MCMC draws, 4-sigma Monte-Carlo tolerances: all passed
                                         fast   draws  tolerance  passed
        bound metric   test
        lower accuracy mean            0.0743  0.0744     0.0009    True
                       variance_ratio  1.0000  0.9839     0.1303    True
                       interval_mass   0.9500  0.9530     0.0210    True
        upper accuracy mean            0.5757  0.5756     0.0010    True
                       variance_ratio  1.0000  1.0077     0.1263    True
                       interval_mass   0.9500  0.9520     0.0198    True
        """
        if "check_reference" not in self.tree.children:
            raise ValueError("check() compares model M1's NUTS draws of the bounds with their "
                             "exact conjugate posterior; run bounds(..., method='pymc' or "
                             "'both', model='m1'). M2 and M3 have no closed-form posterior: "
                             "use diagnostics().")
        post = self.tree["posterior"].to_dataset()
        draws = xr.concat([post["lower_bound"], post["upper_bound"]],
                          dim=pd.Index(["lower", "upper"], name="bound"))
        view = Evaluation.create(
            method="bounds", variant=self.meta["variant"], ci_prob=self.ci_prob,
            closed_form=self.tree["check_reference"].to_dataset(), estimand="posterior/bounds",
            draws=xr.DataTree.from_dict({"posterior": xr.Dataset({"bounds": draws})}))
        return view.check()


# ------------------------------------------------------------------------------ the inputs
def _as_classes(x, name: str, *, ndim: int, minimum: int) -> np.ndarray:
    """Integer-valued array (ints, floats holding integers or booleans) with values >= minimum."""
    integral = getattr(getattr(x, "dtype", None), "kind", "f") in ("i", "u", "b")  # fast path
    arr = as_array(x, name, ndim=None, dtype=np.int64 if integral else float)
    if ndim == 2 and arr.ndim == 1:
        arr = arr[:, None]  # one labelling function
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    if (arr.min() < minimum) or not (integral or (arr == np.round(arr)).all()):
        bad = (arr != np.round(arr)) | (arr < minimum)
        vals = np.unique(arr[bad])[:5].tolist()
        allowed = "-1 (abstain) or a class 0, 1, ..." if minimum < 0 else "a class 0, 1, ..."
        raise ValueError(f"{name} must hold integers, each {allowed}; got values such as "
                         f"{vals}.")
    return arr.astype(np.int64)


def _check_below(arr: np.ndarray, name: str, n_classes: int) -> None:
    if arr.max() >= n_classes:
        vals = np.unique(arr[arr >= n_classes])[:5].tolist()
        raise ValueError(f"{name} has values {vals} outside the {n_classes} classes "
                         f"0..{n_classes - 1} (and -1 = abstain for weak_labels); set n_classes "
                         "or fix the labels.")


def _as_label_model(label_model, n_items: int):
    """A label model name, or a validated (n_items, n_classes) array of distributions."""
    if isinstance(label_model, str):
        return as_choice(label_model, "label_model", lm.LABEL_MODELS)
    probs = as_array(label_model, "label_model", ndim=2)
    if probs.shape[0] != n_items:
        raise ValueError(f"length mismatch: label_model has {probs.shape[0]} rows, weak_labels "
                         f"{n_items}; give P(Y | weak labels) for every item.")
    if probs.shape[1] < 2 or (probs < 0).any() or (probs > 1).any():
        raise ValueError("label_model must hold probabilities in [0, 1], one column per class "
                         f"(at least 2); got shape {probs.shape}, range [{probs.min():g}, "
                         f"{probs.max():g}].")
    worst = np.abs(probs.sum(axis=1) - 1.0)
    if (worst > ROW_SUM_TOL).any():
        i = int(np.argmax(worst))
        raise ValueError(f"label_model rows must be distributions summing to 1; row {i} sums to "
                         f"{probs[i].sum():.6g}.")
    return probs


def _label_model_by_cell(label_model, cell, patterns, counts, n_classes, warn) -> np.ndarray:
    """beta (n_cells, n_classes): the named label model, or the given rows averaged per cell."""
    if isinstance(label_model, str):
        if label_model == "majority_vote":
            return lm.majority_vote(patterns, n_classes)
        return lm.dawid_skene(patterns, counts, n_classes)
    beta = np.stack([np.bincount(cell, label_model[:, k], minlength=len(counts))
                     for k in range(n_classes)], axis=1) / counts[:, None]
    if np.abs(label_model - beta[cell]).max() > ROW_SUM_TOL:
        warn.append("label_model differs between items with the same weak labels; its mean per "
                    "pattern is used as P(Y | pattern) (right if the rows are P(Y | X, Z)).")
    return beta


class _Cells:
    """Weak-label patterns of the items and the label model per pattern (validated inputs)."""

    def __init__(self, weak_labels, label_model, n_classes, warn):
        self.n_classes = n_classes
        self.cell, self.patterns, self.counts = lm.weak_label_patterns(weak_labels, n_classes)
        _check_votes(self.cell, self.patterns, self.counts)
        self.beta = _label_model_by_cell(label_model, self.cell, self.patterns, self.counts,
                                         n_classes, warn)

    def cell_counts(self, y_pred: np.ndarray) -> np.ndarray:
        """n_zk: items per pattern z and predicted class k."""
        k = self.n_classes
        flat = np.bincount(self.cell * k + y_pred, minlength=len(self.counts) * k)
        return flat.reshape(-1, k)


def _validate(y_pred, weak_labels, label_model, n_classes, metrics, warn):
    """Validated (y_pred, cells, metrics) from the raw inputs of the public functions."""
    weak = _as_classes(weak_labels, "weak_labels", ndim=2, minimum=-1)
    y_pred = _as_classes(y_pred, "y_pred", ndim=1, minimum=0)
    check_same_length(y_pred=y_pred, weak_labels=weak)
    label_model = _as_label_model(label_model, len(weak))
    if n_classes is None:
        n_classes = (label_model.shape[1] if isinstance(label_model, np.ndarray) else
                     max(2, int(weak.max()) + 1, int(y_pred.max()) + 1))
    elif isinstance(label_model, np.ndarray) and label_model.shape[1] != n_classes:
        raise ValueError(f"label_model has {label_model.shape[1]} columns but n_classes is "
                         f"{n_classes}.")
    _check_below(weak, "weak_labels", n_classes)
    _check_below(y_pred, "y_pred", n_classes)
    metrics = tuple(default_metrics(n_classes) if metrics is None else
                    [as_choice(m, "metrics", METRICS) for m in np.atleast_1d(metrics)])
    if n_classes > 2 and set(metrics) & set(BINARY_ONLY):
        raise ValueError(f"metrics {sorted(set(metrics) & set(BINARY_ONLY))} are for two "
                         f"classes; with {n_classes} use 'accuracy' or 'macro_f1'.")
    return y_pred, _Cells(weak, label_model, n_classes, warn), metrics


def _check_votes(cell: np.ndarray, patterns: np.ndarray, counts: np.ndarray) -> None:
    """Every item needs a vote: the all-abstain pattern is rejected."""
    silent = (patterns == -1).all(axis=1)
    if silent.any():
        first = int(np.flatnonzero(silent[cell])[0])
        raise ValueError(f"weak_labels: every labelling function abstains (-1) on "
                         f"{int(counts[silent].sum())} item(s) (first at row {first}); no weak "
                         "label informs them: drop those items.")


def _as_gold(labels, y_pred: np.ndarray) -> np.ndarray:
    gold = as_array(labels, "labels", allow_nan=True)
    check_same_length(labels=gold, y_pred=y_pred)
    known = ~np.isnan(gold)
    if not known.any() or ((gold[known] != 0) & (gold[known] != 1)).any():
        raise ValueError("labels must be 0, 1 or NaN (no gold label), with at least one gold "
                         "label.")
    return gold


def _gold_counts(gold: np.ndarray, cells: _Cells, y_pred: np.ndarray) -> np.ndarray:
    known = ~np.isnan(gold)
    flat = cells.cell[known] * 4 + y_pred[known] * 2 + gold[known].astype(np.int64)
    return np.bincount(flat, minlength=4 * len(cells.counts)).reshape(-1, 2, 2)


def _fast_path(method, cell_counts, beta, metrics, epsilon, n_classes):
    if method == "entropic":
        eps = 0.01 / np.log(n_classes) if epsilon is None else float(epsilon)
        if not eps > 0:
            raise ValueError(f"epsilon must be a positive temperature, got {epsilon!r}.")
        return entropic_bounds(cell_counts, beta, metrics, epsilon=eps)
    if epsilon is not None:
        raise ValueError("epsilon is the temperature of method='entropic'; leave it None.")
    return exact_bounds(cell_counts, beta, metrics)


def _diagnose(results, cells: _Cells, warn: list[str]) -> xr.Dataset:
    """Warnings for undefined metrics and sparse patterns; the data summary."""
    stopped = [m for m, r in results.items() if not r.get("converged", True)]
    if stopped:
        warn.append(f"entropic: L-BFGS reached its iteration limit for {stopped}; the bounds may "
                    "be slightly off (use method='exact').")
    undefined = [m for m, r in results.items() if np.isnan(r["lower_bound"])]
    if undefined:
        warn.append(f"undefined (a denominator is 0, e.g. no predicted positive): {undefined}.")
    small = cells.counts[cells.counts < SMALL_CELL].sum() / cells.counts.sum()
    if small > SMALL_SHARE:
        warn.append(f"{100 * small:.0f}% of the items are in weak-label patterns with fewer than "
                    f"{SMALL_CELL} items: the bounds are biased inward there (one item pins its "
                    "pattern's metric); use fewer labelling functions or merge patterns.")
    return xr.Dataset({"n_items": int(cells.counts.sum()),
                       "n_labelling_functions": cells.patterns.shape[1],
                       "n_classes": cells.n_classes, "n_cells": len(cells.counts),
                       "share_in_small_cells": float(small)})


def _pymc_model(model, cell_counts, cells, metrics, gold, y_pred):
    if model == "m1":
        return model_m1(cell_counts, cells.beta, metrics=metrics)
    if model == "m2":
        return model_m2(cell_counts, cells.patterns, metrics=metrics)
    return model_m3(cell_counts, cells.beta, _gold_counts(gold, cells, y_pred), metrics=metrics)


def _check_model_args(method, model, labels, n_classes):
    model = as_choice(model, "model", MODELS)
    if model != "m1" and method in ("exact", "entropic"):
        raise ValueError(f"model={model!r} is a PyMC model: use method='pymc' or 'both'.")
    if (labels is not None) != (model == "m3"):
        raise ValueError("labels (gold labels) go with model='m3', and model='m3' needs them.")
    if model == "m3" and n_classes != 2:
        raise ValueError(f"model='m3' is for two classes; got {n_classes}.")
    return model


# ------------------------------------------------------------------------------ entry point
def bounds(y_pred, weak_labels, *, label_model="dawid_skene", metrics=None,
           method: str = "exact", model: str = "m1", labels=None, n_classes: int | None = None,
           epsilon: float | None = None, ci_prob: float = 0.95, ci_kind: str = "eti",
           random_seed: int | None = None,
           sample_kwargs: dict[str, Any] | None = None) -> BoundsEvaluation:
    r"""Sharp bounds on a classifier's metrics from weak labels only, with their uncertainty.

    Parameters
    ----------
    y_pred : array-like of int (n_items,)
        The classifier's predicted classes :math:`0, \dots, K-1` on held-out items.
    weak_labels : array-like of int (n_items, n_lfs)
        Votes of the labelling functions, -1 = abstain; every item needs one vote at least.
    label_model : {"dawid_skene", "majority_vote"} or array (n_items, n_classes)
        How :math:`P(Y \mid \text{weak labels})` is obtained: Dawid–Skene EM, the soft majority
        vote (:mod:`bayeval.methods.bounds.label_models`), or your label model's output per item
        (averaged over the items of each weak-label pattern).
    metrics : sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``f1`` (two classes) and ``macro_f1``;
        default :func:`default_metrics`.
    method : {"exact", "entropic", "pymc", "both"}
        Exact bounds with influence-function CIs; the paper's smoothed estimator (L-BFGS);
        NUTS on ``model``; or exact and NUTS (then :meth:`BoundsEvaluation.check`).
    model : {"m1", "m2", "m3"}
        The PyMC model: :func:`model_m1` (label model plugged in), :func:`model_m2` (Bayesian
        Dawid–Skene), :func:`model_m3` (needs ``labels``).
    labels : array-like (n_items,), optional
        Gold labels, NaN where unknown (model M3, two classes).
    n_classes : int, optional
        :math:`K`; by default the label model's width or the largest class seen plus one.
    epsilon : float, optional
        Temperature of ``method="entropic"`` (default :math:`0.01/\log K`).
    ci_prob, ci_kind
        Interval level; kind (``"eti"``/``"hdi"``) for posterior draws.
    random_seed : int, optional
    sample_kwargs : dict, optional
        Passed to ``pm.sample``.

    Returns
    -------
    BoundsEvaluation
        ``closed_form`` (fast path) and/or ``posterior`` with ``lower_bound``, ``upper_bound``
        and ``value`` (dim ``metric``); see the module docstring for the summary's columns.

    Examples
    --------
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 50
    >>> y_pred = [1, 1, 0, 0, 0, 1] * 50
    >>> ev = bounds(y_pred, weak, label_model="majority_vote", metrics=["accuracy"])
    >>> ev.summary()[["lower_bound", "upper_bound"]].round(4).values.tolist()
    [[0.6667, 1.0]]
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    warn: list[str] = []
    y_pred, cells, metrics = _validate(y_pred, weak_labels, label_model, n_classes, metrics,
                                       warn)
    model = _check_model_args(method, model, labels, cells.n_classes)
    gold = None if labels is None else _as_gold(labels, y_pred)
    cell_counts = cells.cell_counts(y_pred)
    fast = method if method in ("exact", "entropic") else "exact"
    results = _fast_path(fast, cell_counts, cells.beta, metrics, epsilon, cells.n_classes)
    data = _diagnose(results, cells, warn)
    lm_name = label_model if isinstance(label_model, str) else "given P(Y | Z)"
    common = dict(method="bounds", variant=method, ci_prob=ci_prob, ci_kind=ci_kind,
                  random_seed=random_seed, data=data, assumptions=ASSUMPTIONS, warnings=warn,
                  description=f"Fréchet bounds from {len(y_pred)} items in {len(cells.counts)} "
                              f"weak-label patterns, label model: {lm_name}")
    closed = _closed_form(results, ci_prob)
    if method in ("exact", "entropic"):
        return BoundsEvaluation.create(closed_form=closed, **common)
    pm_model = _pymc_model(model, cell_counts, cells, metrics, gold, y_pred)
    draws = sample(pm_model, random_seed, sample_kwargs)
    if model == "m1":
        reference = m1_posterior_bounds(cell_counts, cells.beta, metrics,
                                        random_seed=random_seed)
        draws["check_reference"] = xr.DataTree(_check_reference(reference, metrics, ci_prob))
    return BoundsEvaluation.create(closed_form=closed if method == "both" else None,
                                   draws=draws, estimand="posterior/value", model=pm_model,
                                   **common)


# ------------------------------------------------------------------------------- selection
def rank_classifiers(candidates: Mapping[str, Any], weak_labels, *,
                     label_model="dawid_skene", metric: str = "accuracy",
                     n_classes: int | None = None, ci_prob: float = 0.95) -> Table:
    r"""Rank candidate classifiers by their lower bound and by their bounds' midpoint.

    The paper's model selection without labels (§4.3): the lower bound is the worst case over
    all couplings (a distributionally robust choice), the midpoint
    :math:`(\hat L + \hat U)/2` the mean under a uniform coupling position. A classifier that
    is constant within each weak-label pattern has :math:`L = U` (nothing is unknown about its
    coupling), so the lower bound favours it; look at both ranks.

    Parameters
    ----------
    candidates : mapping name -> y_pred
        Predictions of each candidate on the same items.
    weak_labels, label_model, n_classes
        As for :func:`bounds`; the label model is fitted once.
    metric : str
    ci_prob : float

    Returns
    -------
    Table indexed by ``candidate``, sorted by lower bound (best first), with ``lower_bound``,
    ``upper_bound``, ``midpoint``, ``width``, ``lower``, ``upper``, ``label_model``,
    ``rank_lower`` and ``rank_midpoint`` (1 = best).

    Examples
    --------
    >>> weak = [[1, 1], [0, 0], [1, 0], [0, -1]] * 25
    >>> ranked = rank_classifiers({"votes": [1, 0, 1, 0] * 25, "ones": [1] * 100}, weak,
    ...                           label_model="majority_vote")
    >>> ranked.index.tolist(), ranked["rank_midpoint"].tolist()
    (['votes', 'ones'], [1, 2])
    """
    if not isinstance(candidates, Mapping) or not candidates:
        raise ValueError("candidates must be a non-empty mapping name -> y_pred.")
    names = list(candidates)
    warn: list[str] = []
    first, cells, metrics = _validate(candidates[names[0]], weak_labels, label_model, n_classes,
                                      [metric], warn)
    ci_prob = as_ci_prob(ci_prob)
    rows = {}
    for name in names:
        y_pred = first if name == names[0] else _validated_candidate(candidates[name], first,
                                                                      cells, name)
        rows[name] = exact_bounds(cells.cell_counts(y_pred), cells.beta, metrics)[metric]
    frame = _closed_form(rows, ci_prob).to_dataframe().rename_axis("candidate")
    frame["midpoint"] = frame["mean"]
    frame["width"] = frame["upper_bound"] - frame["lower_bound"]
    frame["rank_lower"] = frame["lower_bound"].rank(ascending=False, method="min").astype(int)
    frame["rank_midpoint"] = frame["midpoint"].rank(ascending=False, method="min").astype(int)
    cols = ["lower_bound", "upper_bound", "midpoint", "width", "lower", "upper", "label_model",
            "rank_lower", "rank_midpoint"]
    frame = frame[cols].sort_values("lower_bound", ascending=False)
    return table(frame, f"candidates ranked by the exact lower bound of {metric} "
                        f"({100 * ci_prob:g}% interval of the identified set)")


def _validated_candidate(y_pred, first, cells: _Cells, name: str) -> np.ndarray:
    arr = _as_classes(y_pred, f"candidates[{name!r}]", ndim=1, minimum=0)
    check_same_length(**{"candidates[first]": first, f"candidates[{name!r}]": arr})
    _check_below(arr, f"candidates[{name!r}]", cells.n_classes)
    return arr


def compare_labelling_functions(y_pred, weak_labels, subsets: Mapping[str, Sequence[int]], *,
                                label_model="dawid_skene", metric: str = "accuracy",
                                n_classes: int | None = None, ci_prob: float = 0.95) -> Table:
    r"""Bound widths of one classifier when only some labelling functions are used.

    Finer weak labels can only narrow the population bounds, but every extra pattern adds
    estimation error (spec §8.2): compare the widths :math:`\hat U - \hat L` (paper, Fig. 3).
    A named label model is refitted on each subset; a given ``label_model`` array is averaged
    over the coarser patterns (its conditional given the subset).

    Parameters
    ----------
    y_pred, weak_labels, label_model, metric, n_classes, ci_prob
        As for :func:`bounds`.
    subsets : mapping name -> column indices
        Labelling functions (columns of ``weak_labels``) of each subset.

    Returns
    -------
    Table indexed by ``subset`` with ``n_lfs``, ``n_cells``, ``lower_bound``, ``upper_bound``,
    ``width``, ``lower`` and ``upper``. Every subset is evaluated on the same items: those on
    which each subset has a vote (``attrs["n_items"]``).

    Examples
    --------
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, 1], [0, 0], [1, 1]] * 50
    >>> out = compare_labelling_functions([1, 1, 0, 0, 0, 1] * 50, weak,
    ...                                   {"first": [0], "both": [0, 1]})
    >>> out[["n_cells", "width"]].round(3).values.tolist()
    [[2.0, 0.316], [4.0, 0.075]]
    """
    if not isinstance(subsets, Mapping) or not subsets:
        raise ValueError("subsets must be a non-empty mapping name -> column indices.")
    weak = _as_classes(weak_labels, "weak_labels", ndim=2, minimum=-1)
    ci_prob = as_ci_prob(ci_prob)
    columns = {name: _subset_columns(cols, name, weak.shape[1]) for name, cols in subsets.items()}
    covered = np.logical_and.reduce([(weak[:, c] != -1).any(axis=1) for c in columns.values()])
    if not covered.any():
        raise ValueError("subsets: no item has a vote in every subset; compare subsets that "
                         "overlap in coverage.")
    y_pred = _as_classes(y_pred, "y_pred", ndim=1, minimum=0)
    check_same_length(y_pred=y_pred, weak_labels=weak)
    if not isinstance(label_model, str):
        label_model = _as_label_model(label_model, len(weak))[covered]
    rows = {}
    for name, idx in columns.items():
        y, cells, metrics = _validate(y_pred[covered], weak[covered][:, idx], label_model,
                                      n_classes, [metric], [])
        rows[name] = {**exact_bounds(cells.cell_counts(y), cells.beta, metrics)[metric],
                      "n_lfs": idx.size, "n_cells": len(cells.counts)}
    frame = pd.DataFrame(rows).T
    closed = _closed_form(rows, ci_prob).to_dataframe()
    frame = pd.concat([frame[["n_lfs", "n_cells"]].astype(int),
                       closed[["lower_bound", "upper_bound", "lower", "upper"]]], axis=1)
    frame.insert(4, "width", frame["upper_bound"] - frame["lower_bound"])
    return table(frame.rename_axis("subset"),
                 f"exact bounds of {metric} per subset of labelling functions, on the "
                 f"{int(covered.sum())} items every subset votes on", n_items=int(covered.sum()))


def _subset_columns(cols, name: str, n_lfs: int) -> np.ndarray:
    idx = np.asarray(cols, dtype=np.int64).ravel()
    if idx.size == 0 or (idx < 0).any() or (idx >= n_lfs).any():
        raise ValueError(f"subsets[{name!r}] must list columns of weak_labels (0..{n_lfs - 1}); "
                         f"got {idx.tolist()}.")
    return idx
