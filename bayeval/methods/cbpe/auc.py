r"""ROC-AUC in CBPE: its exact law in short windows, a normal law from exact moments in long ones.

With the labels :math:`Y_i\sim\mathrm{Bernoulli}(p_i)` of a window, ROC-AUC is the ratio of
the Mann-Whitney count :math:`A` to :math:`D=n_+n_-`. In windows of at most
:data:`AUC_EXACT_ROWS` rows (:data:`AUC_EXACT_MAP_ROWS` when it is mixed over the calibration
map's draws) its law is exact (:func:`auc_cells`, a dynamic programme over the scores' tie
groups); in longer ones the exact moments of :math:`A` and :math:`D`
(:func:`bayeval.confusion_moments.auc_count_moments`) give its mean and variance by the delta
method (:func:`auc_law`), mixed over the draws of the calibration map when it is uncertain
(:func:`auc_map_shift`). :func:`window_auc_law` picks between the two.
"""

from __future__ import annotations

import numpy as np

from bayeval.calibration_map import MapPosterior, MapSums
from bayeval.confusion import MetricDistribution
from bayeval.confusion_moments import RatioMoments, auc_count_moments, ratio_moments
from bayeval.methods.cbpe.fast import NormalLaw, Window
from bayeval.poibin import log_ends

__all__ = ["AUC_EXACT_MAP_ROWS", "AUC_EXACT_ROWS", "auc_cells", "auc_law", "auc_map_shift",
           "both_classes_probability", "defined_probability", "exact_auc_law", "exact_auc_rows",
           "nannyml_auc", "window_auc_law"]

AUC_EXACT_ROWS = 64
"""Windows of at most this many rows get ROC-AUC's exact law (:func:`auc_cells`: about
:math:`n^4/8` operations, 12 ms at 64 rows); longer windows the normal law of :func:`auc_law`."""

AUC_EXACT_MAP_ROWS = 12
"""The same when the law is mixed over the calibration map's draws (one programme per draw,
400 by default: 30 ms at 12 rows)."""


def exact_auc_rows(map_draws: int) -> int:
    """The longest window whose ROC-AUC law is exact, with ``map_draws`` draws of the
    calibration map (0: the plug-in map alone).

    Examples
    --------
    >>> exact_auc_rows(0), exact_auc_rows(400)
    (64, 12)
    """
    return AUC_EXACT_ROWS if map_draws == 0 else AUC_EXACT_MAP_ROWS


def _bernoulli_sums(p: np.ndarray) -> np.ndarray:
    """PMF of the number of successes among independent Bernoulli(``p[m, j]``) over ``j``, for
    every row ``m``: shape (rows, columns + 1)."""
    pmf = np.ones((p.shape[0], 1))
    for j in range(p.shape[1]):
        pj = p[:, j : j + 1]
        pmf = (np.hstack([pmf * (1.0 - pj), np.zeros_like(pj)])
               + np.hstack([np.zeros_like(pj), pmf * pj]))
    return pmf


def auc_cells(s: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""ROC-AUC's exact law in a window: its value (NaN with one class) and probability in every
    cell :math:`(n_+, 2A)` of the labellings.

    :math:`A` is the Mann-Whitney count, ties halved, and :math:`\mathrm{AUC}=A/(n_+n_-)`.
    Over the tie groups in increasing score order, a group of :math:`g` rows above :math:`t`
    rows with :math:`k` positives (the Poisson-binomial of its :math:`p_i`) adds
    :math:`2k(t-n_+)+k(g-k)` to :math:`2A`: :math:`k` positives above the :math:`t-n_+`
    negatives so far, and :math:`k(g-k)` tied pairs counted half. The law of
    :math:`(n_+, 2A)` is so carried group by group, :math:`(g+1)` shifted copies each, over at
    most :math:`(n+1)(n^2/2+1)` cells: :math:`O(n^4)` operations, :math:`n^4/8` without ties.

    Parameters
    ----------
    s : ndarray, shape (n,)
        Scores, sorted.
    p : ndarray, shape (n,) or (draws, n)
        :math:`P(Y_i=1)` of each row, or under each draw of the calibration map (the law is
        then the mixture over the draws).

    Returns
    -------
    values, probs : ndarray
        Every cell of positive probability, for
        :meth:`bayeval.confusion.MetricDistribution.from_cells`.

    Examples
    --------
    Two rows: one class (undefined) with probability :math:`0.7\cdot0.2+0.3\cdot0.8`, AUC 1
    (the higher row positive) with :math:`0.7\cdot0.8` and 0 with :math:`0.3\cdot0.2`:

    >>> values, probs = auc_cells(np.array([0.3, 0.7]), np.array([0.3, 0.8]))
    >>> values.tolist(), probs.round(4).tolist()
    ([nan, 0.0, 1.0, nan], [0.14, 0.06, 0.56, 0.24])
    >>> values, probs = auc_cells(np.array([0.5, 0.5]), np.array([0.3, 0.8]))  # a tie: 1/2
    >>> values.tolist(), probs.round(4).tolist()
    ([nan, 0.5, nan], [0.14, 0.62, 0.24])
    """
    p = np.atleast_2d(p)
    draws, n = p.shape
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    width = n * n // 2 + 2 * n + 1  # 2A <= n^2/2, and room for the row strides below
    state = np.zeros((draws, n + 1, width))
    state[:, 0, 0] = 1.0
    flat = state.reshape(draws, -1)
    for start, stop in zip(first, np.r_[first[1:], n], strict=True):
        t, g = int(start), int(stop - start)
        group = _bernoulli_sums(p[:, start:stop])
        rows, cols = t + 1, t * t // 2 + 1  # the cells reachable after t rows
        old = state[:, :rows, :cols].copy()
        state[:, :rows, :cols] *= group[:, 0, None, None]
        for k in range(1, g + 1):
            # row n+ moves to n+ + k and right by 2k(t - n+) + k(g - k): a view whose rows
            # step by width - 2k; it stays inside the array and its cells are distinct, since
            # 2A <= (t + g)^2 / 2 <= n^2 / 2 and cols <= width - 2k
            at = k * width + 2 * k * t + k * (g - k)
            moved = np.lib.stride_tricks.as_strided(
                flat[:, at:], shape=(draws, rows, cols),
                strides=(flat.strides[0], (width - 2 * k) * flat.itemsize, flat.itemsize))
            moved += group[:, k, None, None] * old
    probs = state.mean(axis=0)
    n_pos = np.arange(n + 1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.arange(width) / (2.0 * n_pos * (n - n_pos))
    values[[0, n]] = np.nan  # one class
    keep = probs > 0
    return values[keep], probs[keep]


def defined_probability(log_no_positive: float, log_no_negative: float) -> float:
    r""":math:`\pi=P(\text{both classes})=1-e^a-e^b`, with :math:`a=\sum_i\log(1-p_i)`
    (:math:`\log P(\text{no positive})`) and :math:`b=\sum_i\log p_i`.

    The larger product is subtracted as :math:`-\operatorname{expm1}`, so :math:`\pi` keeps
    its relative precision when it is tiny (scores all near 0 or all near 1).

    Examples
    --------
    >>> defined_probability(2 * np.log(0.5), 2 * np.log(0.5))
    0.5
    >>> p = np.full(4, 1 - 1e-9)  # P(some negative) = 1 - p^4, about 4e-9
    >>> round(defined_probability(np.log1p(-p).sum(), np.log(p).sum()) / 4e-9, 6)
    1.0
    """
    small, large = sorted((log_no_positive, log_no_negative))
    return float(min(max(-np.expm1(large) - np.exp(small), 0.0), 1.0))


def both_classes_probability(p: np.ndarray, total_p: float | None = None) -> float:
    r""":func:`defined_probability` of independent labels :math:`Y_i\sim\mathrm{Bernoulli}(p_i)`
    (``total_p``: :math:`\sum_ip_i`, if known), its logarithms from
    :func:`bayeval.poibin.log_ends`: 1.0 without them when :math:`\sum p_i` and
    :math:`\sum(1-p_i)` are both large.

    Examples
    --------
    >>> both_classes_probability(np.array([0.5, 0.5]))
    0.5
    >>> both_classes_probability(np.full(4000, 0.5))
    1.0
    """
    return defined_probability(*(float(x) for x in log_ends(p, total_p)))


def auc_law(moments: RatioMoments, total_p: float, total_q: float, defined: float,
            zero_division: float, shift: np.ndarray | None = None) -> tuple[NormalLaw, float]:
    r"""ROC-AUC's normal law from its exact moments, and NannyML's estimate.

    The mean and variance of :math:`A/D` given both classes (:math:`D>0`, probability
    ``defined``) come from the exact moments of the Mann-Whitney numerator :math:`A` and the
    denominator :math:`D` by the delta method
    (:func:`bayeval.confusion_moments.ratio_moments`); with probability :math:`1-\pi` a
    single class is present and the realized value is ``zero_division`` (a number), so the
    law's mean and variance are those of that mixture, as for the other metrics. NannyML's
    estimate is the area under the ROC curve of the expected counts: with
    :math:`\xi_{ij}=\mathbb 1[s_i>s_j]+\frac12\mathbb 1[s_i=s_j]`, :math:`q=1-p`,
    :math:`P=\sum p`, :math:`Q=\sum q`, it is :math:`\sum_{i,j}p_iq_j\xi_{ij}/(PQ)
    =(\mathbb E A+\frac12\sum_ip_iq_i)/(PQ)`, the pairs :math:`i=j` included, where
    :math:`\sum_ip_iq_i=PQ-\mathbb E D`.

    Parameters
    ----------
    moments : RatioMoments
        Exact moments of :math:`A` and :math:`D`
        (:func:`bayeval.confusion_moments.auc_numerator_moments`).
    total_p, total_q : float
        :math:`P` and :math:`Q`.
    defined : float
        :math:`\pi`, the probability of both classes (:func:`defined_probability`).
    zero_division : float
        The value when both classes are impossible (undefined with probability 1).
    shift : ndarray, optional
        How each draw of the calibration map moves the mean (:func:`auc_map_shift`): the law
        is then the normal with the mean and variance of the mixture over the draws.

    Returns
    -------
    NormalLaw, float
        The law and NannyML's estimate (the plug-in map's).

    Examples
    --------
    Four rows with :math:`p=s=(0.2, 0.4, 0.6, 0.8)`: :math:`P=Q=2`, the ordered pairs give
    :math:`\sum_{s_i>s_j}p_iq_j=2.6` and :math:`\frac12\sum_ip_iq_i=0.4`, so NannyML's estimate
    is :math:`3/4`. One labelling in 13 has a single class (ROC-AUC 0 by ``zero_division``):
    the mean over the 16 labellings is 0.75027 (:func:`window_auc_law`), the normal law's
    0.7503, and their sd 0.3306, the normal law's 0.3287:

    >>> s = np.array([0.2, 0.4, 0.6, 0.8])
    >>> defined = defined_probability(np.log1p(-s).sum(), np.log(s).sum())
    >>> law, plugin = auc_law(auc_count_moments(s, s, 0.5), 2.0, 2.0, defined, 0.0)
    >>> round(law.mean, 4), round(law.sd, 4), round(plugin, 4)
    (0.7503, 0.3287, 0.75)
    """
    if moments.mean_den <= 0 or defined == 0:  # undefined with probability 1
        return NormalLaw(zero_division, 0.0, 1.0), zero_division
    mean, var = ratio_moments(moments, defined=defined)
    if shift is not None:
        mean, var = mean + float(shift.mean()), var + float(shift.var())
    p_undefined = 1.0 - defined
    if p_undefined > 0 and not np.isnan(zero_division):  # the realized value is then zd
        second = (1 - p_undefined) * (var + mean**2) + p_undefined * zero_division**2
        mean = (1 - p_undefined) * mean + p_undefined * zero_division
        var = max(second - mean**2, 0.0)
    law = NormalLaw(mean, float(np.sqrt(var)), p_undefined)
    return law, nannyml_auc(moments, total_p, total_q, zero_division)


def nannyml_auc(moments: RatioMoments, total_p: float, total_q: float,
                zero_division: float) -> float:
    r"""NannyML's estimate of ROC-AUC, :math:`(\mathbb EA+\frac12(PQ-\mathbb ED))/(PQ)`
    (:func:`auc_law`); ``zero_division`` where :math:`\mathbb ED=0`.

    Examples
    --------
    >>> s = np.array([0.2, 0.4, 0.6, 0.8])
    >>> round(nannyml_auc(auc_count_moments(s, s, 0.5), 2.0, 2.0, 0.0), 12)
    0.75
    """
    if moments.mean_den <= 0:
        return zero_division
    pq = total_p * total_q
    return float((moments.mean_num + 0.5 * (pq - moments.mean_den)) / pq)


def exact_auc_law(s: np.ndarray, p: np.ndarray, zero_division: float,
                  posterior: MapPosterior | None = None) -> MetricDistribution:
    """ROC-AUC's exact law in a window of rows sorted by score ``s``, with probabilities ``p``
    (:func:`auc_cells`), or mixed over the draws of ``posterior``, the calibration map, when
    given; one class gives ``zero_division``, as for the other metrics.

    Examples
    --------
    >>> exact_auc_law(np.array([0.3, 0.7]), np.array([0.3, 0.8]), 0.0).probs.round(4)
    array([0.44, 0.56])
    """
    cells = auc_cells(s, p if posterior is None else posterior.predict(s))
    return MetricDistribution.from_cells("roc_auc", *cells, zero_division)


def window_auc_law(w: Window, zero_division: float, posterior: MapPosterior | None = None,
                   sums: MapSums | None = None) -> tuple[NormalLaw | MetricDistribution, float]:
    """ROC-AUC's law in a window (rows in score order) and NannyML's estimate: exact
    (:func:`exact_auc_law`) up to :func:`exact_auc_rows` rows, else :func:`auc_law`; mixed
    over the calibration map's draws when ``posterior`` and the window's ``sums`` are given
    (:func:`auc_map_shift` for the normal law).

    Examples
    --------
    The four rows of :func:`auc_law`'s example: the law of the 16 labellings.

    >>> s = np.array([0.2, 0.4, 0.6, 0.8])
    >>> law, plugin = window_auc_law(Window(s, s, s >= 0.5), 0.0)
    >>> round(law.mean, 5), round(law.sd, 4), round(plugin, 4), round(law.p_undefined, 4)
    (0.75027, 0.3306, 0.75, 0.0768)
    """
    moments = auc_count_moments(w.s, w.p, 0.5)
    total_p, total_q = float(w.p.sum()), float((1.0 - w.p).sum())
    if w.s.size <= exact_auc_rows(0 if posterior is None else posterior.draws):
        return (exact_auc_law(w.s, w.p, zero_division, posterior),
                nannyml_auc(moments, total_p, total_q, zero_division))
    defined = both_classes_probability(w.p, total_p)
    shift = (None if posterior is None or moments.mean_den <= 0 else
             auc_map_shift(moments, sums, posterior))
    return auc_law(moments, total_p, total_q, defined, zero_division, shift)


def auc_map_shift(moments: RatioMoments, sums: MapSums, posterior: MapPosterior) -> np.ndarray:
    r"""How each draw :math:`m` of the map moves ROC-AUC's mean, to first order.

    With :math:`R=\mathbb EA/\mathbb ED`,
    :math:`\Delta_m=\sum_iD_m(s_i)(\partial_iA-R\,\partial_iD)/\mathbb ED`, where
    :math:`\partial_iA=\sum_jq_j\xi_{ij}-\sum_jp_j\xi_{ji}` (the rows below minus the rows
    above, ties halved), taken per knot interval of the map (the rows of an interval counted
    half below and half above each other), and :math:`\partial_iD=Q-P-1+2p_i`.

    Examples
    --------
    >>> from bayeval.calibration import make_calibrator
    >>> from bayeval.calibration_map import map_posterior
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.random(500)
    >>> cal = make_calibrator("platt", 0.5).fit(ref, rng.random(500) < ref)
    >>> post = map_posterior(cal, ref, rng.random(500) < ref, random_seed=0)
    >>> s = np.sort(rng.random(1000))
    >>> p = cal.predict(s)
    >>> shift = auc_map_shift(auc_count_moments(s, p, 0.5), post.sums(s, p, s >= 0.5), post)
    >>> shift.shape, bool(0 < shift.std() < 0.05)
    ((400,), True)
    """
    totals = [part.sum(axis=0) for part in sums.parts]  # (4, K) per side
    positives = np.concatenate([t[2] + t[3] for t in totals])
    negatives = np.concatenate([t[0] + t[1] for t in totals]) - positives
    below = np.cumsum(negatives) - 0.5 * negatives
    above = positives.sum() - np.cumsum(positives) + 0.5 * positives
    weights = np.split(below - above, np.cumsum([t.shape[1] for t in totals])[:-1])
    d_num, ones, with_p = posterior.linear_many(
        sums, [(None, False, tuple(weights)), (None, False, None), (None, True, None)]).T
    d_den = (negatives.sum() - positives.sum() - 1.0) * ones + 2.0 * with_p
    ratio = moments.mean_num / moments.mean_den
    return (d_num - ratio * d_den) / moments.mean_den
