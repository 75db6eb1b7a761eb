r"""The closed forms of the Fréchet bounds: exact bounds and the paper's entropic estimator.

Every metric below is :math:`\sum_k w_k\,P(H{=}k, Y{=}k) / D_k` with identified denominators
:math:`D_k = s_H P(H{=}k) + s_Y P(Y{=}k) + s_1` (:func:`metric_terms`):

==========  ===========================  =================================
metric      terms :math:`k`, :math:`w_k`  :math:`D_k`
==========  ===========================  =================================
accuracy    every class, 1               1
precision   class :math:`c`, 1           :math:`P(H=c)`
recall      class :math:`c`, 1           :math:`P(Y=c)`
f1          class :math:`c`, 2           :math:`P(H=c) + P(Y=c)`
macro_f1    every class, :math:`2/K`     :math:`P(H=k) + P(Y=k)`
==========  ===========================  =================================

Precision, recall and F1 are of one class :math:`c` against the rest: class 1 of two, or the
class of the key ``"precision[c]"`` (every class for :math:`K>2`, :func:`class_metrics`).

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

**Small patterns** (``small_pattern_correction=True``, the default). The plug-in upper end
:math:`\min(\hat\alpha_{zk}, \beta_{zk}) = \hat\alpha_{zk} - \hat d^+` is concave in
:math:`\hat d = \hat\alpha_{zk} - \kappa` (the kink :math:`\kappa = \beta_{zk}`; the lower end
is :math:`\hat d^+` with :math:`\kappa = 1 - \beta_{zk}`), so by Jensen it is biased inward:
with :math:`\hat d \approx N(d, \sigma^2)` by :math:`\sigma\psi(d/\sigma)`,
:math:`\psi(t) = \varphi(t) - |t|\Phi(-|t|)` (:math:`0.40\sigma` at the kink); summed over many
small patterns this exceeds the standard error. Two steps bound it:

1. *pooling* (:func:`pool_small_cells`): patterns with fewer than ``POOL_BELOW`` items are merged
   with the other small patterns of the same label-model bin (most probable class and its
   probability in steps of 0.1), with the count-weighted label model
   :math:`\beta_g = \sum_{z \in g} n_z\beta_z / n_g` (the conditional law of :math:`Y` given the
   coarser pattern). Coarser weak labels give valid, wider bounds (every coupling for the fine
   patterns is one for the coarse ones), so pooling can only move the bounds outward;
2. a *correction at the kinks*: each end is moved outward by :math:`\sigma c`, with
   :math:`\sigma^2 = \kappa(1 - \kappa)/n_g + \sigma_\beta^2` (the cell's binomial variance at
   its kink, plus the variance of a label model fitted on the same items, below) and
   :math:`c = E[\psi(t) \mid \hat t]` under the law of the distances :math:`t` of all the
   bound's cells, estimated from their :math:`\hat t = \hat d/\sigma` (empirical Bayes,
   :func:`~bayeval.methods.bounds.kinks.kink_gaps`): no correction of one cell is unbiased at
   every :math:`t` (Hirano & Porter, 2012), but the sum over the cells is, up to the estimate
   of that law, whether the cells sit at their kinks or far from them.

The correction vanishes like :math:`n_g^{-1/2}` and no pattern is pooled when every pattern is
large: the estimate is then the exact plug-in bound. ``small_pattern_correction=False`` gives
the plug-in. The influence function of a corrected end takes the correction's slope,
:math:`\partial(\sigma c)/\partial\hat\alpha = dC/d\hat t` with :math:`C` the bound's summed
correction, the estimated law's dependence on :math:`\hat t` included; at a kink the one-sided
slopes make the standard error larger than the estimate's sd.

**A label model fitted on the same items** (``label_model_pullback``, ``label_model_sd``).
Dawid–Skene (or the majority vote's prior for the pattern without votes) is fitted on the
pattern counts :math:`c_u = n\hat p_u` of the items whose bounds it then gives: the bound is
:math:`T(\hat p, \hat\alpha, \beta(c))`, a two-step estimator, and its sampling error includes the
label model's (the paper's Thm 2.5 assumes a label model fitted on many more items,
:math:`n/m \to 0`; here :math:`m = n`). By the delta method for the whole pipeline (counts
:math:`\to` label-model fit :math:`\to` bounds; Newey & McFadden, 1994, §6) an item of pattern
:math:`u` adds to its influence function

.. math:: \mathrm{IF}_\beta(u) = n\Big(\frac{dT}{dc_u} - \sum_v \hat p_v \frac{dT}{dc_v}\Big)
          + \sum_k \frac{\partial T}{\partial\beta_{gk}}\,(\beta_{uk} - \beta_{gk}),\qquad
          \frac{dT}{dc_u} = \sum_{u', k}\frac{\partial T}{\partial\beta_{u'k}}
          \frac{\partial\beta_{u'k}}{\partial c_u},

with :math:`\partial\beta/\partial c` from the implicit function theorem at the EM fixed point
(:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pullback`) and the second term the
pooled pattern :math:`g \ni u`'s own weights (also for a label model given as fixed
probabilities); then :math:`\widehat{\mathrm{SE}}^2 = \sum_{u,h}\hat p_u\hat\alpha_{uh}\,
(\mathrm{IF}(g(u), h) + \mathrm{IF}_\beta(u))^2/(n-1)`, which keeps the covariance of the two
parts. The same fit's noise moves each kink: :math:`\sigma_\beta^2` is the variance of the
pooled :math:`\hat\beta_{gk}`
(:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pooled_sd`). Given the pattern
counts, :math:`\hat\alpha` is binomial around :math:`\alpha`
and :math:`\hat\beta` fixed, so the two noises of :math:`\hat d` are uncorrelated and their
variances add.

The delta method is first order, and the bounds are not differentiable in :math:`\beta` at the
kinks: one refit of the label model moves every pattern at once (its parameters are shared), so
what the kinks fold out of that error does not average over the patterns. A binary pattern
predicted as the label model says moves by :math:`\min(\alpha, \beta + \delta) + \min(1 -
\alpha, 1 - \beta - \delta) - 1 = -|\delta|`, a variance :math:`(1 - 2/\pi)\sigma_\delta^2`
where the two classes' slopes cancel. With ``label_model_draws`` the variance adds
:math:`\mathrm{Var}_\delta\,T(\hat\beta + \delta) - \mathrm{Var}_\delta\,\nabla_\beta T
\cdot\delta` (at least 0) over draws :math:`\delta` of the pooled :math:`\hat\beta`'s error
from its normal law
(:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pooled_draws`), :math:`T` the
corrected bound at the observed :math:`\hat\alpha` with the gaps' law :math:`\hat G` held.

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

from bayeval.methods.bounds.kinks import gaps_under, kink_gaps
from bayeval.metrics import REGISTRY

__all__ = [
    "BINARY_ONLY",
    "METRICS",
    "class_metrics",
    "closed_form",
    "default_metrics",
    "entropic_bounds",
    "exact_bounds",
    "kink_corrections",
    "metric_bounds",
    "metric_terms",
    "pool_small_cells",
]

METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1")
"""The metrics of :data:`bayeval.metrics.REGISTRY` that have Fréchet bounds here."""
BINARY_ONLY = tuple(m for m in METRICS if not REGISTRY[m].multiclass)
"""The metrics of one class (one-vs-rest): of class 1 for two classes, else of every class
(:func:`class_metrics`)."""
#: patterns with fewer items are pooled with the small patterns of a similar label model
POOL_BELOW = 10
#: width of the label-model bins that pool small patterns
POOL_BIN = 0.1


def class_metrics(metric: str, n_classes: int) -> tuple[str, ...]:
    """The keys of a one-class metric for each class: ``"precision[k]"``, :math:`k<K`.

    Examples
    --------
    >>> class_metrics("recall", 3)
    ('recall[0]', 'recall[1]', 'recall[2]')
    """
    return tuple(f"{metric}[{k}]" for k in range(n_classes))


def _split(metric: str) -> tuple[str, int | None]:
    """``("precision", 2)`` for ``"precision[2]"``; ``(metric, None)`` without a class."""
    name, _, cls = metric.partition("[")
    return (name, int(cls[:-1])) if cls else (metric, None)


def metric_terms(metric: str, n_classes: int
                 ) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    r"""The terms of a metric :math:`\sum_k w_k P(H{=}k, Y{=}k) / D_k` (the module's table).

    Parameters
    ----------
    metric : str
        One of :data:`METRICS`, or a one-class metric of class :math:`k` as ``"precision[k]"``
        (:func:`class_metrics`; the bare name is class 1 of two).
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
    >>> metric_terms("precision[2]", 3)[0].tolist()
    [2]
    """
    name, cls = _split(metric)
    every, one = np.arange(n_classes), np.array([1 if cls is None else cls])
    return {
        "accuracy": (every, np.ones(n_classes), (0.0, 0.0, 1.0)),
        "precision": (one, np.ones(1), (1.0, 0.0, 0.0)),
        "recall": (one, np.ones(1), (0.0, 1.0, 0.0)),
        "f1": (one, np.array([2.0]), (1.0, 1.0, 0.0)),
        "macro_f1": (every, np.full(n_classes, 2.0 / n_classes), (1.0, 1.0, 0.0)),
    }[name]


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


def pool_small_cells(cell_counts, beta, *, min_items: int = POOL_BELOW,
                     width: float = POOL_BIN) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Merge the patterns with fewer than ``min_items`` items by label-model bin.

    A small pattern's bin is its most probable class under :math:`\beta_z` and that
    probability in steps of ``width``; the patterns of a bin become one pattern with the summed
    counts and the count-weighted label model :math:`\beta_g = \sum_{z\in g} n_z\beta_z / n_g`.
    Larger patterns are kept as they are.

    Parameters
    ----------
    cell_counts : int array (n_cells, n_classes)
        :math:`n_{zk}`.
    beta : float array (n_cells, n_classes)
        :math:`P(Y = k \mid z)`.
    min_items : int
    width : float

    Returns
    -------
    counts : int array (n_groups, n_classes)
    beta : float array (n_groups, n_classes)
    group : int array (n_cells,)
        The pooled pattern of each pattern.

    Examples
    --------
    >>> counts = np.array([[3, 1], [2, 2], [40, 10], [0, 1]])
    >>> beta = np.array([[0.62, 0.38], [0.68, 0.32], [0.9, 0.1], [0.1, 0.9]])
    >>> pooled, pooled_beta, group = pool_small_cells(counts, beta)
    >>> pooled.tolist(), pooled_beta.round(2).tolist(), group.tolist()
    ([[5, 3], [40, 10], [0, 1]], [[0.65, 0.35], [0.9, 0.1], [0.1, 0.9]], [0, 0, 1, 2])
    """
    counts, beta = np.asarray(cell_counts), np.asarray(beta, dtype=float)
    totals = counts.sum(axis=1)
    small = totals < min_items
    if small.sum() < 2:
        return counts, beta, np.arange(len(counts))
    bins = np.minimum(np.floor(beta.max(axis=1) / width), np.ceil(1 / width) - 1)
    key = beta.argmax(axis=1) * (np.ceil(1 / width) + 1) + bins
    # large patterns keep their own (distinct, negative) keys; first-seen order is kept
    key = np.where(small, key, -1.0 - np.arange(len(counts)))
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    group = order[group.ravel()]
    n_groups = int(group.max()) + 1
    pooled = np.zeros((n_groups, counts.shape[1]), dtype=counts.dtype)
    np.add.at(pooled, group, counts)
    mass = np.zeros((n_groups, beta.shape[1]))
    np.add.at(mass, group, totals[:, None] * beta)
    sizes = pooled.sum(axis=1)
    pooled_beta = np.where(sizes[:, None] > 0, mass / np.maximum(sizes, 1)[:, None], 0.0)
    return pooled, pooled_beta, group


def _end_gaps(p, a, kink, totals, noise, scale, key, gaps):
    r"""One end's :math:`\sigma` and :math:`\hat t = (\hat\alpha - \kappa)/\sigma` per
    (cell, term) and its empirical-Bayes gaps ``(gap, slope, prior)``
    (:func:`~bayeval.methods.bounds.kinks.kink_gaps`), kept in ``gaps`` under ``key``."""
    sd = np.sqrt(kink * (1.0 - kink) / np.maximum(totals, 1)[:, None] + noise)
    t_hat = np.divide(a - kink, sd, out=np.full(sd.shape, np.inf), where=sd > 0)
    found = None if gaps is None else gaps.get(key)
    if found is None:
        found = kink_gaps(t_hat, p[:, None] * sd * scale)
        if gaps is not None:
            gaps[key] = found
    return sd, t_hat, found


def _cell_ends(p, alpha, beta, totals, metric, correct, beta_sd=None, gaps=None):
    r"""Each cell's (lower, upper) end of a metric's terms and their slopes in :math:`\alpha`
    and :math:`\beta`: ``[(value, slope_alpha, slope_beta)] * 2``, arrays (cells, terms).

    Plug-in: :math:`(\alpha + \beta - 1)^+` and :math:`\min(\alpha, \beta)` with their
    one-sided slopes. With ``correct`` each is moved outward by its empirical-Bayes Jensen gap
    :math:`\sigma c` (:func:`~bayeval.methods.bounds.kinks.kink_gaps`; module docstring), with
    :math:`\sigma^2 = \kappa(1 - \kappa)/n_z + \sigma_\beta^2` (``beta_sd``: the fitted label
    model's sd of each pooled :math:`\beta`, 0 for a given one), and the slopes include the
    gap's. ``gaps``, a dict, keeps the gaps of each set of terms for the metrics that share
    them (precision, recall and F1 weigh the same cells alike).
    """
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
    a, b = alpha[:, classes], beta[:, classes]
    scale = weights / (s_h * p @ a + s_y * p @ b + s_1)
    lower = (a + b > 1).astype(float)
    out = [[np.maximum(0.0, a + b - 1.0), lower, lower.copy()],
           [np.minimum(a, b), (a < b).astype(float), (a >= b).astype(float)]]
    if not correct:
        return out
    noise = 0.0 if beta_sd is None else beta_sd[:, classes] ** 2
    for sign, kink, end in ((-1.0, 1.0 - b, out[0]), (1.0, b, out[1])):
        key = (end is out[0], classes.tobytes(), (scale / scale.sum()).round(12).tobytes())
        sd, _, (gap, slope, _) = _end_gaps(p, a, kink, totals, noise, scale, key, gaps)
        # lower: (t-hat^+ - c) sigma, t-hat = (alpha + beta - 1)/sigma; upper: alpha -
        # (t-hat^+ - c) sigma, t-hat = (alpha - beta)/sigma
        end[:] = [end[0] + sign * sd * gap, end[1] + sign * slope, end[2] - slope]
    return out


def _label_model_folding(p, alpha, beta, totals, metric, correct, beta_sd, cache, draws):
    r"""The variance the label model's error adds to a metric's (lower, upper, midpoint)
    bound beyond its linearisation (module docstring): over draws :math:`\delta` of the
    pooled :math:`\hat\beta` (``draws``, (S, cells, K)), :math:`\mathrm{Var}\,T(\hat\beta
    + \delta) - \mathrm{Var}\,\nabla_\beta T\cdot\delta`, at least 0, with the gaps' law
    :math:`\hat G` held and the denominators at the estimate; ``cache`` (a dict) keeps the
    draws' moves of each set of terms for the metrics that share them."""
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
    a, b, delta = alpha[:, classes], beta[:, classes], draws[:, :, classes]
    scale = weights / (s_h * p @ a + s_y * p @ b + s_1)
    shifts, linear = [], []
    for is_lower in (True, False):
        key = (is_lower, classes.tobytes(), (scale / scale.sum()).round(12).tobytes())
        if ("folding", *key) not in cache:  # the metrics that weigh the same cells alike
            moved = np.clip(b + delta, 0.0, 1.0)
            if is_lower:
                kink, kink_d, sign = 1.0 - b, 1.0 - moved, -1.0
                value, value_d = np.maximum(0.0, a + b - 1.0), np.maximum(0.0, a + moved - 1.0)
                slope = (a + b > 1).astype(float)
            else:
                kink, kink_d, sign = b, moved, 1.0
                value, value_d = np.minimum(a, b), np.minimum(a, moved)
                slope = (a >= b).astype(float)
            if correct:
                noise = 0.0 if beta_sd is None else beta_sd[:, classes] ** 2
                sd, t_hat, (_, _, prior) = _end_gaps(p, a, kink, totals, noise, scale, key,
                                                     cache)
                gap, gap_slope = gaps_under(t_hat, prior)
                t_d = np.divide(a - kink_d, sd, out=np.full(kink_d.shape, np.inf),
                                where=sd > 0)
                value = value + sign * sd * gap
                value_d = value_d + sign * sd * gaps_under(t_d, prior)[0]
                slope = slope - gap_slope
            cache["folding", *key] = (value_d - value, slope)
        change, slope = cache["folding", *key]
        shifts.append(np.einsum("z,szk,k->s", p, change, scale))
        linear.append(np.einsum("z,zk,szk,k->s", p, slope, delta, scale))
    shifts.append((shifts[0] + shifts[1]) / 2)
    linear.append((linear[0] + linear[1]) / 2)
    return [max(0.0, float(np.var(s) - np.var(lin))) for s, lin in zip(shifts, linear,
                                                                          strict=True)]


def _posterior_gaps(counts, kink_lower, kink_upper, prior):
    r"""Jensen gaps of the cell ends under the conjugate posterior of :math:`\alpha_{zk}`.

    :math:`\alpha_{zk} \mid n \sim \mathrm{Beta}(a + n_{zk}, (K-1)a + n_z - n_{zk})`; with
    :math:`E(X - \kappa)^+ = E X\,(1 - I_\kappa(a_1 + 1, b_1)) - \kappa\,(1 - I_\kappa(a_1, b_1))`
    for :math:`X \sim \mathrm{Beta}(a_1, b_1)`, the gaps are
    :math:`E(\alpha - \kappa^L)^+ - (\hat\alpha - \kappa^L)^+` (lower end, >= 0) and
    :math:`E\min(\alpha, \kappa^U) - \min(\hat\alpha, \kappa^U)` (upper end, <= 0).
    """
    totals = counts.sum(axis=1, keepdims=True).astype(float)
    a1 = prior + counts
    b1 = prior * (counts.shape[1] - 1) + totals - counts
    mean, a_hat = a1 / (a1 + b1), counts / totals

    def excess(kink):  # E(X - kink)^+
        return (mean * scipy.special.betaincc(a1 + 1, b1, kink)
                - kink * scipy.special.betaincc(a1, b1, kink))

    return (excess(kink_lower) - np.maximum(a_hat - kink_lower, 0.0),
            mean - excess(kink_upper) - np.minimum(a_hat, kink_upper))


def kink_corrections(cell_counts, beta, metrics: Sequence[str], *,
                     posterior_prior: float | None = None) -> np.ndarray:
    r"""The kink correction of each metric's (lower, upper) bound on these cells.

    The shifts that :func:`exact_bounds` adds to the plug-in bounds of ``cell_counts`` (already
    pooled, :func:`pool_small_cells`). A posterior draw of a bound carries a Jensen gap of its
    own: :math:`E[\min(\alpha, \beta) \mid n] < \min(\hat\alpha, \beta)` near a kink. With
    ``posterior_prior`` (the Dirichlet concentration :math:`a_\alpha` of M1) the shift also
    removes that gap, linearised through the metric's denominators like the correction itself,
    so that M1's posterior of a bound is centred where the fast path's estimate is and both
    estimate the same quantity.

    Parameters
    ----------
    cell_counts : int array (n_cells, n_classes)
    beta : float array (n_cells, n_classes)
    metrics : sequence of str
    posterior_prior : float, optional
        :math:`a_\alpha`; None for the fast path's shifts.

    Returns
    -------
    float array (n_metrics, 2): lower and upper shifts (the fast path's are <= 0 and >= 0);
    0 for undefined metrics.

    Examples
    --------
    >>> kink_corrections(np.array([[5, 5]]), np.array([[0.5, 0.5]]), ["accuracy"]).round(4)
    array([[-0.1169,  0.1169]])
    >>> kink_corrections(np.array([[5, 5]]), np.array([[0.5, 0.5]]), ["accuracy"],
    ...                  posterior_prior=0.25).round(4)
    array([[-0.2371,  0.2371]])
    """
    counts = np.asarray(cell_counts)
    p, alpha, _ = _plug_in(counts)
    beta = np.asarray(beta, dtype=float)
    if posterior_prior is not None:
        gap_lower, gap_upper = _posterior_gaps(counts, 1.0 - beta, beta, float(posterior_prior))
    out = np.zeros((len(metrics), 2))
    for i, metric in enumerate(metrics):
        if _undefined(p, alpha, beta, metric):
            continue
        classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
        scale = weights / (s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1)
        plug = _cell_ends(p, alpha, beta, counts.sum(axis=1), metric, False)
        ours = _cell_ends(p, alpha, beta, counts.sum(axis=1), metric, True)
        out[i] = [(p @ (ours[j][0] - plug[j][0])) @ scale for j in range(2)]
        if posterior_prior is not None:
            out[i] -= [(p @ gap_lower[:, classes]) @ scale, (p @ gap_upper[:, classes]) @ scale]
    return out


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


def _label_model_gradients(p, alpha, beta, metric, ends, fine_p, group):
    r""":math:`\partial T/\partial\beta_{uk}` of a metric's (lower, upper) bound on the fine
    patterns, and the coefficient of the pooled label model's direct dependence on the counts
    (both ``(2, patterns, K)``), from the cells' ``ends`` (:func:`_cell_ends`)."""
    classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
    den = s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1
    pooled = np.zeros((2, len(p), alpha.shape[1]))
    for i, (value, _, slope_beta) in enumerate(ends):
        pooled[i][:, classes] = (weights / den * slope_beta
                                 - s_y * weights * (p @ value) / den**2)
    return fine_p[None, :, None] * pooled[:, group], pooled[:, group]


def _label_model_influence(pullback, fine_counts, fine_beta, group, parts):
    r"""The influence :math:`\mathrm{IF}_\beta(u)` of an item of pattern :math:`u` on each bound
    through the pooled label model (module docstring), shape (n, patterns): the pooled
    pattern's own weights and, with ``pullback``, the label model refitted on the counts."""
    direct = np.concatenate([d for _, d in parts])
    totals = fine_counts.sum(axis=1)
    n, fine_p = totals.sum(), totals / totals.sum()
    pooled_beta = np.zeros((group.max() + 1, fine_beta.shape[1]))
    np.add.at(pooled_beta, group, totals[:, None] * fine_beta)
    pooled_beta /= np.maximum(np.bincount(group, totals), 1)[:, None]
    out = (direct * (fine_beta - pooled_beta[group])[None]).sum(axis=2)
    if pullback is not None:
        slope = pullback(np.concatenate([g for g, _ in parts]))  # dT/dc_u (functions, patterns)
        out += n * (slope - (slope @ fine_p)[:, None])
    return out


@_single_threaded_blas
def exact_bounds(cell_counts, beta, metrics: Sequence[str], *,
                 small_pattern_correction: bool = True,
                 label_model_pullback=None, label_model_sd=None,
                 label_model_draws=None) -> dict[str, dict[str, float]]:
    r"""Exact Fréchet bounds and their standard errors from cell counts.

    Parameters
    ----------
    cell_counts : int array (n_cells, n_classes)
        :math:`n_{zk}`: items of weak-label pattern :math:`z` predicted as class :math:`k`;
        :math:`\hat p_z = n_z/n`, :math:`\hat\alpha_{zk} = n_{zk}/n_z`.
    beta : float array (n_cells, n_classes)
        The label model :math:`P(Y = k \mid z)`.
    metrics : sequence of str
    small_pattern_correction : bool
        Pool small patterns and correct the kinks (module docstring); False gives the plug-in
        bounds.
    label_model_pullback : callable, optional
        For a label model fitted on the pattern counts :math:`c_u = n_u` of these cells: maps
        gradients :math:`\partial T_i/\partial\beta_u(k)`, an array (n, n_cells, n_classes), to
        :math:`dT_i/dc_u`, an array (n, n_cells)
        (:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pullback`). The standard
        errors then include the label model's own sampling error (module docstring); None
        treats ``beta`` as known.
    label_model_sd : callable, optional
        For the same fitted label model: maps the pooled pattern of each cell (int array) to
        the sd of the pooled :math:`\hat\beta_{gk}`
        (:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pooled_sd`), the label
        model's noise at the kinks; None: no such noise.
    label_model_draws : callable, optional
        For the same fitted label model: maps the pooled pattern of each cell to draws of the
        pooled :math:`\hat\beta`'s error (S, groups, K)
        (:meth:`~bayeval.methods.bounds.label_models.LabelModelDelta.pooled_draws`); the
        standard errors then add the variance the bounds' kinks fold out of that error beyond
        its linearisation (module docstring).

    Returns
    -------
    dict metric -> {lower_bound, upper_bound, lower_bound_sd, upper_bound_sd, midpoint_sd,
    label_model}; the sds are the influence-function SEs (module docstring),
    NaN everywhere for an undefined metric (a zero denominator). With
    ``label_model_pullback`` also ``lower_bound_sd_fixed_label_model`` and
    ``upper_bound_sd_fixed_label_model``: the sds were ``beta`` known.

    Examples
    --------
    >>> counts, beta = np.array([[30, 70]]), np.array([[0.6, 0.4]])
    >>> out = exact_bounds(counts, beta, ["accuracy"], small_pattern_correction=False)
    >>> round(out["accuracy"]["lower_bound"], 6), round(out["accuracy"]["upper_bound"], 6)
    (0.1, 0.7)
    """
    counts, beta = np.asarray(cell_counts), np.asarray(beta, dtype=float)
    fine_counts, fine_p, fine_alpha, _ = counts, *_plug_in(counts)
    fine_beta, group = beta, np.arange(len(counts))
    if small_pattern_correction:
        counts, beta, group = pool_small_cells(counts, beta)
    p, alpha, n = _plug_in(counts)
    totals = counts.sum(axis=1)
    beta_sd = draws = None
    if small_pattern_correction and label_model_sd is not None:
        beta_sd = label_model_sd(group)
    if label_model_draws is not None:
        draws = label_model_draws(group)
    out, influences, parts, gaps, folding = {}, {}, [], {}, {}
    for metric in metrics:
        if _undefined(p, alpha, beta, metric):
            out[metric] = _nan_result()
            continue
        classes, weights, (s_h, s_y, s_1) = metric_terms(metric, alpha.shape[1])
        scale = weights / (s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1)
        ends = _cell_ends(p, alpha, beta, totals, metric, small_pattern_correction, beta_sd,
                          gaps)
        bounds_, ifs = [], []
        for value, slope_alpha, _ in ends:
            bounds_.append(float(np.clip((p @ value) @ scale, 0.0, 1.0)))
            ifs.append(_influence(p, alpha, beta, metric, value, slope_alpha, p @ value, None))
        res = _result(*bounds_, *ifs, p, alpha, beta, metric, n)
        influences[metric] = ifs
        parts.append(_label_model_gradients(p, alpha, beta, metric, ends, fine_p, group))
        if draws is not None:
            folding[metric] = _label_model_folding(p, alpha, beta, totals, metric,
                                                   small_pattern_correction, beta_sd, gaps,
                                                   draws)
        # the independence coupling is not a Fréchet end: no bias at kinks, no pooling
        res["label_model"] = _independence_value(fine_p, fine_alpha, fine_beta, metric)
        out[metric] = res
    pullbacks = {"": label_model_pullback}
    if label_model_pullback is not None:
        pullbacks = {"_fixed_label_model": None, "": label_model_pullback}
    for suffix, pullback in (pullbacks.items() if parts else ()):
        lm = _label_model_influence(pullback, fine_counts, fine_beta, group, parts)
        for i, (metric, (if_lower, if_upper)) in enumerate(influences.items()):
            fine = [if_lower[group] + lm[2 * i][:, None], if_upper[group] + lm[2 * i + 1][:, None]]
            res = out[metric]
            extra = folding.get(metric, (0.0,) * 3) if suffix == "" else (0.0,) * 3
            for key, influence, more in zip(
                    (f"lower_bound_sd{suffix}", f"upper_bound_sd{suffix}", "midpoint_sd"),
                    (*fine, sum(fine) / 2), extra, strict=True):
                res[key] = float(np.hypot(_standard_error(fine_p, fine_alpha, influence, n),
                                          np.sqrt(more)))
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
    ...                               ["accuracy"], small_pattern_correction=False), 0.95)
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
