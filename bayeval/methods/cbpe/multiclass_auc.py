r"""One-vs-rest ROC-AUC of K classes in CBPE: each class's law, and the macro average's.

Class :math:`k` against the rest is a binary problem: the raw scores :math:`s_{\cdot k}` rank
the rows and its labels :math:`\mathbb 1\{Y_i=k\}` are Bernoulli(:math:`p_{ik}`), so
:math:`\mathrm{AUC}_k` has binary CBPE's law (:mod:`bayeval.methods.cbpe.auc`): exact in windows
of at most :func:`~bayeval.methods.cbpe.auc.exact_auc_rows` rows, else normal from the exact
moments of its Mann-Whitney count and :math:`n_{1k}n_{0k}`. The macro average
:math:`\frac1K\sum_k\mathrm{AUC}_k` (scikit-learn's ``roc_auc_score(y, s, multi_class="ovr",
average="macro")``) is normal with the mean of the classes' means and the variance
:math:`\frac1{K^2}\sum_{k,l}\operatorname{Cov}(\mathrm{AUC}_k,\mathrm{AUC}_l)`: the classes share
every row's label, and their covariances are the delta method's on the exact second moments of
the counts (:func:`bayeval.multiclass_laws.ovr_auc_moments`).

With the calibration maps' posterior, each draw :math:`m` moves the mean of
:math:`\mathrm{AUC}_k` by :math:`\Delta_{mk}=\mathbb E^{(m)}A_k/\mathbb E^{(m)}D_k-R_k`, the
ratio of the counts' means under the draw's renormalised probabilities against the plug-in's
(:func:`mean_shifts`); a normal law takes the mixture's mean and variance
(:func:`~bayeval.methods.cbpe.auc.auc_law`) and the macro average adds
:math:`\frac1{K^2}\sum_{k\ne l}\operatorname{Cov}_m(\Delta_{mk},\Delta_{ml})`. NannyML's
estimate (``plugin``) is its binary estimate per class, the area under the ROC curve of the
expected counts ranked by :math:`s_{\cdot k}` (:func:`~bayeval.methods.cbpe.auc.nannyml_auc`), and
their mean for the macro average, as NannyML's multiclass CBPE.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from bayeval.confusion import MetricDistribution
from bayeval.methods.cbpe.auc import (
    auc_cells,
    auc_law,
    both_classes_probability,
    exact_auc_rows,
    nannyml_auc,
)
from bayeval.methods.cbpe.fast import NormalLaw
from bayeval.multiclass_laws import ovr_auc_terms

__all__ = ["AUC_METRICS", "BLOCK_CELLS", "ClassAucs", "mean_shifts", "window_aucs"]

AUC_METRICS = ("roc_auc", "macro_roc_auc")
"""Each class's one-vs-rest ROC-AUC and their macro average."""


class ClassAucs(NamedTuple):
    """A window's ROC-AUC laws: each class's (law, NannyML's estimate), then the macro
    average's.

    Examples
    --------
    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.4, 0.3, 0.3]])
    >>> a = window_aucs(p, p, None, 0.0)
    >>> len(a.classes), type(a.macro[0]).__name__
    (3, 'NormalLaw')
    """

    classes: list[tuple[NormalLaw | MetricDistribution, float]]
    macro: tuple[NormalLaw, float]


BLOCK_CELLS = 1 << 25
"""Probabilities (draws x rows x classes) of the maps' draws held at once (256 MB): a longer
window's moves of the means are summed a block of rows at a time (:func:`mean_shifts`)."""


def mean_shifts(s: np.ndarray, ratio: np.ndarray, draws) -> np.ndarray:
    r"""How each draw :math:`m` of the maps moves every class's first-order mean ROC-AUC,
    :math:`\Delta_{mk}=\mathbb E^{(m)}A_k/\mathbb E^{(m)}D_k-R_k`, shape (M, K).

    Under draw :math:`m` the rows' class-:math:`k` probabilities are :math:`p^{(m)}_{ik}`, and
    with :math:`q=1-p` in the order of :math:`s_{\cdot k}`,
    :math:`\mathbb EA_k=\sum_ip_{ik}\bigl(\sum_{s_j<s_i}q_{jk}+\frac12\sum_{j\ne i,
    s_j=s_i}q_{jk}\bigr)` and :math:`\mathbb ED_k=\sum_ip_{ik}\sum_jq_{jk}-\sum_ip_{ik}q_{ik}`:
    one pass over the rows in score order per class, the draws of at most :data:`BLOCK_CELLS`
    probabilities (whole tie groups) at a time.

    Parameters
    ----------
    s : ndarray (n, K)
        Raw scores.
    ratio : ndarray (K,)
        :math:`R_k` of the plug-in probabilities.
    draws : ndarray (M, n, K) or callable
        The probabilities under every draw, or a function of row indices returning them for
        those rows.

    Returns
    -------
    ndarray (M, K)

    Examples
    --------
    Two draws that move the top row's probability of class 0 from 0.7 to 0.8 and to 0.5 move
    class 0's mean ROC-AUC up and down:

    >>> p = np.array([[0.2, 0.5, 0.3], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1]])
    >>> from bayeval.multiclass_laws import ovr_auc_terms
    >>> ratio = np.array([m.mean_num / m.mean_den for m in ovr_auc_terms(p, p).moments])
    >>> up, down = p.copy(), p.copy()
    >>> up[2], down[2] = [0.8, 0.15, 0.05], [0.5, 0.3, 0.2]
    >>> mean_shifts(p, ratio, np.stack([up, down]))[:, 0].round(4).tolist()
    [0.0485, -0.1086]
    """
    n, k = s.shape
    if not isinstance(draws, np.ndarray):
        first = draws(np.arange(min(n, 1)))
        block = max(1, BLOCK_CELLS // (first.shape[0] * k))
        if n <= block:  # all at once
            draws = draws(np.arange(n))
    out = None
    for c in range(k):
        order = np.argsort(s[:, c], kind="stable")
        s_o = s[order, c]
        starts = np.flatnonzero(np.r_[True, s_o[1:] != s_o[:-1]])
        step = n if isinstance(draws, np.ndarray) else block
        bounds = np.r_[starts, n]  # each block from the first tie group at or after a step
        cuts = np.unique(np.r_[bounds[np.searchsorted(starts, np.arange(0, n, step))], n])
        sums = None
        for lo, hi in itertools.pairwise(cuts):
            rows = order[lo:hi]
            pb = draws[:, rows, c] if isinstance(draws, np.ndarray) else draws(rows)[:, :, c]
            qb = 1.0 - pb
            first = starts[(starts >= lo) & (starts < hi)] - lo
            group = np.repeat(np.arange(first.size), np.diff(np.r_[first, hi - lo]))
            sum_q = np.add.reduceat(qb, first, axis=1)
            carry = 0.0 if sums is None else sums[1][:, None]
            forward = carry + (np.cumsum(sum_q, axis=1) - sum_q)[:, group] + 0.5 * (
                sum_q[:, group] - qb)
            part = np.stack([pb.sum(axis=1), qb.sum(axis=1), (pb * qb).sum(axis=1),
                             (pb * forward).sum(axis=1)])
            sums = part if sums is None else sums + part
        if out is None:
            out = np.zeros((sums.shape[1], k))
        den = sums[0] * sums[1] - sums[2]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, c] = np.where(den > 0, sums[3] / den, ratio[c]) - ratio[c]
    return out


def window_aucs(s: np.ndarray, p: np.ndarray, draws, zero_division: float) -> ClassAucs:
    r"""ROC-AUC's laws of every class and of the macro average in a window (module docstring).

    Parameters
    ----------
    s : ndarray (n, K)
        Raw scores (they rank the rows).
    p : ndarray (n, K)
        Renormalised calibrated probabilities.
    draws : None, ndarray (M, n, K) or callable
        The renormalised probabilities under each draw of the maps' posterior, or a function
        of row indices returning them (:func:`mean_shifts`); None without the posterior.
    zero_division : float
        A class's value when it or the rest is absent.

    Returns
    -------
    ClassAucs

    Examples
    --------
    Five rows of calibrated scores: class 0's exact law (its mean is that of the 243
    labellings, 0.72663); the macro average's normal law has the exact mean 0.67973 and an sd
    of 0.2276 from the classes' covariances, against 0.2249 over the labellings:

    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.4, 0.3, 0.3],
    ...               [0.3, 0.5, 0.2]])
    >>> a = window_aucs(p, p, None, 0.0)
    >>> law, plugin = a.classes[0]
    >>> type(law).__name__, round(law.mean, 5), round(plugin, 4)
    ('MetricDistribution', 0.72663, 0.7496)
    >>> round(a.macro[0].mean, 5), round(a.macro[0].sd, 4), round(a.macro[1], 4)
    (0.67973, 0.2276, 0.7167)
    """
    n, k = p.shape
    terms = ovr_auc_terms(s, p)
    shifts = None
    if draws is not None:
        ratio = np.array([m.mean_num / m.mean_den if m.mean_den > 0 else 0.0
                          for m in terms.moments])
        shifts = mean_shifts(s, ratio, draws)
    exact = n <= exact_auc_rows(0 if shifts is None else shifts.shape[0])
    classes = []
    for c in range(k):
        m, pc = terms.moments[c], p[:, c]
        total_p, total_q = float(pc.sum()), float((1.0 - pc).sum())
        if exact:
            order = np.argsort(s[:, c], kind="stable")
            cells = auc_cells(s[order, c], pc[order] if draws is None else draws[:, order, c])
            classes.append((MetricDistribution.from_cells("roc_auc", *cells, zero_division),
                            nannyml_auc(m, total_p, total_q, zero_division)))
            continue
        defined = both_classes_probability(pc)
        shift = None if shifts is None or m.mean_den <= 0 else shifts[:, c]
        classes.append(auc_law(m, total_p, total_q, defined, zero_division, shift))
    var = sum(law.sd**2 for law, _ in classes) + float(
        terms.cov.sum() - np.trace(terms.cov))
    if shifts is not None:
        between = np.atleast_2d(np.cov(shifts, rowvar=False))
        var += float(between.sum() - np.trace(between))
    mean = float(np.nanmean([law.mean for law, _ in classes]))
    macro = (NormalLaw(mean, float(np.sqrt(max(var, 0.0))) / k, np.nan),
             float(np.mean([plugin for _, plugin in classes])))
    return ClassAucs(classes, macro)
