r"""ROC-AUC in CBPE: a normal law from the exact moments of its numerator and denominator.

With the labels :math:`Y_i\sim\mathrm{Bernoulli}(p_i)` of a window, ROC-AUC is the ratio of
the Mann-Whitney count :math:`A` to :math:`D=n_+n_-`; their exact moments
(:func:`bayeval.confusion_moments.auc_count_moments`) give its mean and variance by the delta
method (:func:`auc_law`), mixed over the draws of the calibration map when it is uncertain
(:func:`auc_map_shift`).
"""

from __future__ import annotations

import numpy as np

from bayeval.calibration_map import MapPosterior, MapSums
from bayeval.confusion_moments import RatioMoments, auc_count_moments, ratio_moments
from bayeval.methods.cbpe.fast import NormalLaw, Window

__all__ = ["auc_law", "auc_map_shift", "defined_probability", "window_auc_law"]




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
    is :math:`3/4`. One labelling in 15.4 has a single class (ROC-AUC 0 by ``zero_division``):
    the mean over the 16 labellings is 0.75027, the law's 0.7503, and their sd 0.3306, the law's
    0.3287:

    >>> s = np.array([0.2, 0.4, 0.6, 0.8])
    >>> law, plugin = window_auc_law(Window(s, s, s >= 0.5), 0.0)
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
    pq = total_p * total_q
    law = NormalLaw(mean, float(np.sqrt(var)), p_undefined)
    return law, (moments.mean_num + 0.5 * (pq - moments.mean_den)) / pq


def window_auc_law(w: Window, zero_division: float, posterior: MapPosterior | None = None,
                   sums: MapSums | None = None) -> tuple[NormalLaw, float]:
    """:func:`auc_law` of a window's rows (in score order), mixed over the calibration map's
    draws when ``posterior`` and the window's ``sums`` are given (:func:`auc_map_shift`).

    Examples
    --------
    >>> s = np.array([0.2, 0.4, 0.7, 0.9])
    >>> law, plugin = window_auc_law(Window(s, s, s >= 0.5), 0.0)
    >>> round(plugin, 6), round(law.p_undefined, 6)  # .8 .6 .3 .1 + .2 .4 .7 .9
    (0.80303, 0.0648)
    """
    moments = auc_count_moments(w.s, w.p, 0.5)
    with np.errstate(divide="ignore"):  # p of 0 or 1: a product of 0
        defined = defined_probability(float(np.log1p(-w.p).sum()), float(np.log(w.p).sum()))
    shift = (None if posterior is None or moments.mean_den <= 0 else
             auc_map_shift(moments, sums, posterior))
    return auc_law(moments, float(w.p.sum()), float((1.0 - w.p).sum()), defined, zero_division,
                   shift)


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
    d_num = posterior.linear(sums, interval_weights=tuple(weights))
    d_den = ((negatives.sum() - positives.sum() - 1.0) * posterior.linear(sums)
             + 2.0 * posterior.linear(sums, with_p=True))
    ratio = moments.mean_num / moments.mean_den
    return (d_num - ratio * d_den) / moments.mean_den
