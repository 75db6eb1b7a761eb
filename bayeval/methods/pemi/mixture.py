r"""PEMI's laws mixed over draws of the imputation probabilities, and the choice of law.

When :math:`p` comes from a calibration map fitted on finite labelled data, the map is uncertain
and its error is shared by every missing row: the metric's law is the mixture

.. math:: P(\widehat Q_n\in\cdot)=\sum_s w_s\,P(\widehat Q_n\in\cdot\mid p^{(s)})

over draws :math:`p^{(s)}` of the map (:func:`bayeval.calibration_map.map_posterior`; or the
quadrature nodes of PEMI's model M1), crossed with the nodes of a prior on the MNAR shift
:math:`\delta`. Given a draw the missing labels are independent Bernoullis, so each component is
PEMI's law (Dervovic & Cashmore, AISTATS 2025):

* :func:`component_moments`: PEMI-Gauss's mean and variance of every component, from the sums
  :math:`\sum p`, :math:`\sum p(1-p)` over the missing rows of each predicted class (ROC-AUC:
  the exact moments of :class:`bayeval.methods.pemi.missing_auc.MissingAuc`, the labelled rows'
  part once and the missing rows' per component); the mixture of
  the normals is :func:`bayeval.methods.pemi.fast.mixture` (equal-tailed interval from the
  mixture's CDF);
* :func:`exact_mixture`: the exact law of a confusion-matrix metric, the push-forward of the
  mixed joint law of :math:`(U,V)`,
  :math:`P(U=u,V=v)=\sum_sw_s\,P_s(U=u)\,P_s(V=v)`, one matrix product of the components'
  Poisson-binomial PMFs (:func:`bayeval.poibin.pmf_rows`, all components at once);
* :func:`choose`: PEMI-Gauss unless it is poor, judged against the exact law: the normal
  interval leaves the metric's range, has zero width while the metric is not determined, or
  its exact mass is off ``ci_prob`` by more than :data:`MASS_TOL` (a mass at a bound, strong
  skew, few missing labels). Then the exact law replaces it, and where none is affordable
  (ROC-AUC, many missing rows) the imputation law (:func:`imputed_summary`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import special

from bayeval.confusion import MetricDistribution, metric_law
from bayeval.confusion_moments import RatioMoments, moments_of_counts, ratio_moments
from bayeval.methods.pemi.fast import (
    Options,
    Rows,
    mixture,
    roc_auc_moments,
    simulate,
    undefined_probability,
)
from bayeval.methods.pemi.missing_auc import MissingAuc
from bayeval.metrics import REGISTRY, metric_value
from bayeval.poibin import log_ends, pmf_rows

__all__ = [
    "EXACT_WORK",
    "MASS_TOL",
    "Components",
    "choose",
    "component_moments",
    "exact_mixture",
    "imputed_summary",
    "subset",
]

#: cells (components x rows) per chunk of probabilities held at once
CELLS = 1 << 22
#: the exact mixture is computed when its Poisson-binomial recursions cost at most this many
#: cell updates, :math:`S(m_1^2+m_0^2)/2` (a fraction of a second)
EXACT_WORK = 6e7
#: ... and its (U, V) grid has at most this many cells
GRID_CELLS = 4_000_000
#: the most the exact mass of PEMI-Gauss's interval may differ from ``ci_prob`` before the
#: default replaces it by the exact (or imputation) law
MASS_TOL = 0.01
#: completions drawn when the imputation law replaces a poor normal one
FALLBACK_DRAWS = 20_000


def subset(posterior: Any, index: np.ndarray) -> Any:
    """The draws ``index`` of a :class:`bayeval.calibration_map.MapPosterior` (a copy whose
    sides keep those rows of their deviations).

    Examples
    --------
    >>> from bayeval.calibration import Platt
    >>> from bayeval.calibration_map import map_posterior
    >>> s = np.array([0.1, 0.3, 0.6, 0.9])
    >>> post = map_posterior(Platt().fit(s, [0, 1, 0, 1]), s, [0, 1, 0, 1], draws=10,
    ...                      random_seed=0)
    >>> bool((subset(post, np.array([3, 5])).predict(s) == post.predict(s)[[3, 5]]).all())
    True
    """
    sides = tuple(dataclasses.replace(side, deviations=side.deviations[index])
                  for side in posterior.sides)
    return dataclasses.replace(posterior, sides=sides)


@dataclasses.dataclass(frozen=True)
class Components:
    r"""Weighted draws :math:`p^{(s)}` of the imputation probabilities of the missing rows.

    Attributes
    ----------
    weights : numpy.ndarray, shape (S,)
        :math:`w_s`, summing to 1.
    p_of : callable
        ``p_of(index) -> (len(index), m)``: the probabilities of the missing rows (columns in
        ``rows.order``) of the components ``index``.

    Examples
    --------
    >>> comps = Components(np.full(2, 0.5), lambda i: np.array([[0.2, 0.9], [0.4, 0.7]])[i])
    >>> comps.size, [p.shape for _, p in comps.chunks(2, chunk=1)]
    (2, [(1, 2), (1, 2)])
    """

    weights: np.ndarray
    p_of: Callable[[np.ndarray], np.ndarray]

    @property
    def size(self) -> int:
        return self.weights.size

    def chunks(self, width: int, chunk: int | None = None) -> Iterator[tuple[np.ndarray,
                                                                           np.ndarray]]:
        """(index, probabilities) of consecutive components, about :data:`CELLS` cells at a
        time for rows of ``width`` cells."""
        step = chunk or max(1, CELLS // max(width, 1))
        for start in range(0, self.size, step):
            index = np.arange(start, min(start + step, self.size))
            yield index, self.p_of(index)


# ------------------------------------------------------------------------------ moments
def component_moments(rows: Rows, comps: Components, metrics: tuple[str, ...],
                      opts: Options) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    r"""PEMI-Gauss's (means, variances, probabilities undefined) of every component.

    Confusion-matrix metrics from :math:`\mathbb E\,TP=TP_K+\sum_{\hat y=1}p`,
    :math:`\operatorname{Var}TP=\sum_{\hat y=1}p(1-p)` and likewise :math:`FN`
    (:func:`bayeval.confusion_moments.moments_of_counts`); ROC-AUC from its exact moments on
    the completed rows, the labelled rows' part computed once and the missing rows' per
    component (:class:`bayeval.methods.pemi.missing_auc.MissingAuc`).

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> comps = Components(np.full(2, 0.5), lambda i: np.array([[0.8, 0.1], [0.4, 0.1]])[i])
    >>> means, variances, _ = component_moments(rows, comps, ("precision",), Options())[
    ...     "precision"]
    >>> means.tolist(), variances.round(4).tolist()  # (2 + U) / 4
    ([0.7, 0.6], [0.01, 0.015])
    """
    out = {metric: (np.empty(comps.size), np.empty(comps.size), np.empty(comps.size))
           for metric in metrics}
    tp, fp, fn, tn = rows.known_counts
    m1, m0 = rows.m1, rows.m - rows.m1
    auc = None
    if "roc_auc" in metrics:  # the labelled rows' part of its moments, once
        auc = MissingAuc.of(rows, 0.5 if opts.ties == "half" else 1.0)
    # undefined_probability is pi0 u0 + pi1 u1 + max(1 - pi0 - pi1, 0) u_mix: its three
    # indicators once per metric, then every component at once
    corners = {metric: [undefined_probability(rows.known_counts, m1, m0, a, b, metric,
                                              opts.beta) for a, b in ((1, 0), (0, 1), (0, 0))]
               for metric in metrics}
    for index, p in comps.chunks(rows.m):
        v = p * (1.0 - p)
        sums = (p[:, :m1].sum(1), p[:, m1:].sum(1), v[:, :m1].sum(1), v[:, m1:].sum(1))
        pi0, pi1 = np.exp(log_ends(p, sums[0] + sums[1]))  # all 0, all 1
        rest = np.maximum(1.0 - pi0 - pi1, 0.0)
        undefined_of = {metric: pi0 * u0 + pi1 * u1 + rest * u_mix
                        for metric, (u0, u1, u_mix) in corners.items()}
        if auc is not None:
            auc_rows = auc.moments(p)
        for j, s in enumerate(index):
            for metric in metrics:
                undefined = float(undefined_of[metric][j])
                if metric == "roc_auc":
                    mean, var = roc_auc_moments(
                        undefined, lambda j=j, m=auc_rows: ratio_moments(
                            RatioMoments(*(float(x[j]) for x in m)),
                            opts.second_order), opts.zero_division)
                else:
                    mean, var = moments_of_counts(
                        metric, tp + fp + m1, fn + tn + m0, tp + sums[0][j], fn + sums[1][j],
                        sums[2][j], sums[3][j], opts.beta, opts.zero_division,
                        opts.second_order)
                out[metric][0][s], out[metric][1][s], out[metric][2][s] = mean, var, undefined
    return out


# ---------------------------------------------------------------------------------- exact
def _pmfs(p: np.ndarray) -> np.ndarray:
    """Poisson-binomial PMFs of the rows of ``p`` (S, k) on :math:`0..k`
    (:func:`bayeval.poibin.pmf_rows`, zero beyond each row's window). Shape (S, k + 1)."""
    start, probs = pmf_rows(p)
    width = max(p.shape[1] + 1, int(start.max()) + probs.shape[1])
    out = np.zeros((p.shape[0], width))
    np.put_along_axis(out, start[:, None] + np.arange(probs.shape[1]), probs, axis=1)
    return out[:, : p.shape[1] + 1]


def exact_work(rows: Rows, size: int) -> float:
    """The work of :func:`exact_mixture`'s PMFs for ``size`` components, counted as the cell
    updates of the quadratic recursion (an upper bound of :func:`bayeval.poibin.pmf_rows`)."""
    m1, m0 = rows.m1, rows.m - rows.m1
    return size * (m1**2 + m0**2) / 2


def affordable(rows: Rows, size: int) -> bool:
    """Whether :func:`exact_mixture` is cheap enough for the default (:data:`EXACT_WORK`,
    :data:`GRID_CELLS`)."""
    cells = (rows.m1 + 1) * (rows.m - rows.m1 + 1)
    return (size == 1 or exact_work(rows, size) <= EXACT_WORK) and cells <= GRID_CELLS


def exact_mixture(rows: Rows, comps: Components, metrics: tuple[str, ...],
                  opts: Options) -> dict[str, MetricDistribution]:
    r"""Exact laws of confusion-matrix metrics mixed over the components.

    :math:`U` and :math:`V` are independent given a component, so the mixed joint PMF is
    :math:`J=\sum_sw_sP^U_s{P^V_s}^\top`, a product of the (S, m1 + 1) and (S, m0 + 1)
    matrices of Poisson-binomial PMFs; each metric's law is :math:`J` pushed through
    ``metric(rows.counts(u, v))`` (undefined cells take ``zero_division``). One component uses
    the engine's law (:func:`bayeval.methods.pemi.fast.law`), cheap for any size.

    Examples
    --------
    Precision with two equally likely maps of the missing row predicted positive, 0.8 and 0.4:

    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> comps = Components(np.full(2, 0.5), lambda i: np.array([[0.8, 0.1], [0.4, 0.1]])[i])
    >>> d = exact_mixture(rows, comps, ("precision",), Options())["precision"]
    >>> d.values.tolist(), d.probs.round(12).tolist()
    ([0.5, 0.75], [0.4, 0.6])
    """
    if comps.size == 1:  # law(rows, p, metric, opts) of every metric, the rows split once
        split = rows.split(comps.p_of(np.zeros(1, dtype=np.int64))[0])
        return {metric: metric_law(metric, split, opts.beta, opts.zero_division)
                for metric in metrics}
    m1 = rows.m1
    joint = 0.0
    for index, p in comps.chunks(rows.m):
        w = comps.weights[index][:, None]
        joint = joint + (w * _pmfs(p[:, :m1])).T @ _pmfs(p[:, m1:])
    u, v = np.meshgrid(np.arange(joint.shape[0]), np.arange(joint.shape[1]), indexing="ij")
    counts = (np.asarray(c, dtype=float).ravel() for c in rows.counts(u, v))
    tp, fp, fn, tn = counts
    probs = joint.ravel() / joint.sum()
    return {metric: MetricDistribution.from_cells(
        metric, metric_value(metric, tp, fp, fn, tn, opts.beta, np.nan), probs,
        opts.zero_division) for metric in metrics}


# ------------------------------------------------------------------------------- choosing
def _normal_mass(means, sds, weights, lo: float, hi: float) -> float:
    """The normal mixture's mass on [lo, hi] (``ndtr`` is the standard normal CDF)."""
    sds = np.maximum(sds, np.finfo(float).tiny)
    return float(weights @ (special.ndtr((hi - means) / sds) - special.ndtr((lo - means) / sds)))


def _exact_row(d: MetricDistribution, ci_prob: float, ci_kind: str) -> tuple:
    """(mean, sd, lower, upper, mass, p_undefined) of an exact law; an interval of zero width
    on a law that is not a point mass takes in the neighbouring support value of larger
    probability."""
    lo, hi = d.interval_ends(ci_prob, ci_kind)
    values, probs = d.values, d.probs
    if lo == hi and values.size > 1:
        k = int(np.searchsorted(values, lo))
        below = probs[k - 1] if k > 0 else -1.0
        above = probs[k + 1] if k + 1 < values.size else -1.0
        lo, hi = (float(values[k - 1]), hi) if below >= above else (lo, float(values[k + 1]))
    return d.mean, d.sd, lo, hi, d.mass(lo, hi), d.p_undefined


def choose(metric: str, normal: tuple, exact: MetricDistribution | None, *, ci_prob: float,
           ci_kind: str, fallback: bool) -> tuple[tuple | None, str | None, str | None]:
    r"""The summary of one metric: PEMI-Gauss, or the exact law when PEMI-Gauss is poor.

    Parameters
    ----------
    metric : str
    normal : tuple
        ``(means, variances, weights, ci_prob interval (mean, sd, lower, upper),
        p_undefined)`` of the normal mixture.
    exact : MetricDistribution or None
        The exact law, when computed.
    ci_prob, ci_kind : float, str
    fallback : bool
        Replace a poor normal law (the default method); otherwise keep it and say so.

    Returns
    -------
    row, note, kind
        ``(mean, sd, lower, upper, interval_mass, p_undefined)``, or None when the normal law
        is poor, no exact law is at hand and ``fallback`` asks for the imputation law; a note
        for the warnings (or None); which law the row is of, ``"normal"`` or ``"exact"`` (None
        with no row). The normal interval is clipped to the metric's range and its mass is
        the exact one where the exact law is known, else the normal mixture's.

    Examples
    --------
    Precision with 16 of 20 predicted positives known to be positive and the 4 others
    missing, :math:`p=0.5`: the normal interval [0.802, 0.998] holds 0.875 of the exact law
    (the values 0.85, 0.9, 0.95), so the exact law replaces it.

    >>> s = np.full(20, 0.9)
    >>> rows = Rows(s, np.ones(20, np.int8), np.r_[np.ones(16), np.full(4, np.nan)])
    >>> comps = Components(np.ones(1), lambda i: np.full((1, 4), 0.5))
    >>> exact = exact_mixture(rows, comps, ("precision",), Options())["precision"]
    >>> normal = normal_of((np.array([0.9]), np.array([0.05**2]), np.zeros(1)), np.ones(1),
    ...                    0.95)
    >>> row, note, kind = choose("precision", normal, exact, ci_prob=0.95, ci_kind="eti",
    ...                          fallback=True)
    >>> [round(v, 4) for v in row[2:5]], kind
    ([0.8, 1.0, 1.0], 'exact')
    >>> note.split(":")[1]
    ' the normal approximation is poor here (its 0.95 interval holds 0.875 of the exact law)'

    """
    means, variances, weights, (mean, sd, lo, hi), undefined = normal
    low, high = REGISTRY[metric].low, REGISTRY[metric].high
    if np.isnan(mean):
        return (np.nan,) * 5 + (undefined,), None, "normal"
    outside = lo < low - 1e-12 or hi > high + 1e-12
    lo_c, hi_c = max(lo, low), min(hi, high)
    if exact is not None and not np.isnan(exact.mean):
        if exact.sd == 0:  # determined: a point mass
            return _exact_row(exact, ci_prob, ci_kind), None, "exact"
        mass = exact.mass(lo_c, hi_c)
        reasons = []
        if outside:
            reasons.append(f"its interval [{lo:.4g}, {hi:.4g}] leaves [{low:g}, {high:g}]")
        if hi_c - lo_c <= 0:
            reasons.append("its interval has zero width")
        if abs(mass - ci_prob) > MASS_TOL:
            reasons.append(f"its {ci_prob:g} interval holds {mass:.3g} of the exact law")
        if not reasons:
            return (mean, sd, lo_c, hi_c, mass, undefined), None, "normal"
        why = f"{metric}: the normal approximation is poor here ({'; '.join(reasons)})"
        if fallback:
            return _exact_row(exact, ci_prob, ci_kind), (
                why + ": the exact law of the metric is reported instead."), "exact"
        return (mean, sd, lo_c, hi_c, mass, undefined), (
            why + ": method='exact' (or the default method) gives the exact law."), "normal"
    sds = np.sqrt(variances)
    mass = _normal_mass(means, sds, weights, lo_c, hi_c) if outside else ci_prob
    zero = hi_c - lo_c <= 0 and float(weights @ variances) > 0
    if not (outside or zero):
        return (mean, sd, lo_c, hi_c, mass, undefined), None, "normal"
    why = (f"{metric}: the normal approximation is poor here (its interval "
           + (f"[{lo:.4g}, {hi:.4g}] leaves [{low:g}, {high:g}]" if outside else
              "has zero width") + ")")
    if fallback:
        return None, why + ": the law of PEMI's imputations is reported instead.", None
    return ((mean, sd, lo_c, hi_c, mass, undefined), why + ": method='impute' gives its law.",
            "normal")


def imputed_summary(rows: Rows, comps: Components, metrics: tuple[str, ...], ci_prob: float,
                    rng: np.random.Generator, opts: Options) -> dict[str, tuple]:
    """(mean, sd, lower, upper, interval_mass, p_undefined) of PEMI's imputation law
    (:data:`FALLBACK_DRAWS` completions, each of a component drawn with its weight); the
    interval is equal-tailed, its mass the share of the completions inside it, ``p_undefined``
    the mixture's.

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> comps = Components(np.ones(1), lambda i: np.tile([0.8, 0.1], (i.size, 1)))
    >>> out = imputed_summary(rows, comps, ("precision",), 0.95, np.random.default_rng(0),
    ...                       Options())
    >>> [round(v, 2) for v in out["precision"][:4]]
    [0.7, 0.1, 0.5, 0.75]
    """
    pick = rng.choice(comps.size, size=FALLBACK_DRAWS, p=comps.weights)
    values = simulate(rows, metrics, lambda start, stop: comps.p_of(pick[start:stop]),
                      FALLBACK_DRAWS, rng, opts)
    tail = (1.0 - ci_prob) / 2
    out = {}
    for j, metric in enumerate(metrics):
        x = np.sort(values[:, j])
        lo, hi = np.quantile(x, [tail, 1 - tail], method="inverted_cdf")
        mass = float(np.mean((x >= lo) & (x <= hi)))
        out[metric] = (float(x.mean()), float(x.std(ddof=1)), float(lo), float(hi), mass)
    return out


def normal_of(moments: tuple[np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray,
              ci_prob: float) -> tuple:
    """The ``normal`` argument of :func:`choose` from :func:`component_moments`'s triple.

    Examples
    --------
    >>> normal = normal_of((np.array([0.5]), np.array([0.01]), np.zeros(1)), np.ones(1), 0.95)
    >>> [round(v, 3) for v in normal[3]], normal[4]
    ([0.5, 0.1, 0.304, 0.696], 0.0)
    """
    means, variances, undefined = moments
    p_undef = float(weights @ undefined)
    if np.isnan(means).any() or np.isnan(variances).any():
        return means, variances, weights, (np.nan,) * 4, p_undef
    return means, variances, weights, mixture(means, variances, weights, ci_prob), p_undef
