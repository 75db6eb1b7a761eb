r"""The posterior of a calibration map learned from a finite labelled set.

A calibrator fitted on :math:`n` labelled rows estimates :math:`f(s)=P(Y=1\mid s)` with an error
that every row it is applied to shares: it does not average out over a long period. Its posterior
is drawn by the **weighted likelihood bootstrap** (Newton & Raftery 1994), the parametric
counterpart of Rubin's (1981) Bayesian bootstrap: draw :math:`m` refits the calibrator's own
family with weights :math:`(w_1,\dots,w_n)\sim\mathrm{Dirichlet}(1,\dots,1)` on the labelled
rows,

.. math:: f_m=\arg\max_{f\in\mathcal F}\sum_i w_i\log f(s_i)^{y_i}\bigl(1-f(s_i)\bigr)^{1-y_i}
   \quad(\text{isotonic: the weighted least-squares fit}).

For isotonic regression (and any user object) this is the posterior of the map under a
non-informative Dirichlet-process prior on the law of :math:`(s, y)`. For the parametric
families, Platt and beta calibration, it is only correct to first order: with tens of labelled
rows it inherits the maximum-likelihood estimate's bias away from zero and its intervals
undercover (0.92 for a window's positives with 30 rows). Their draws are therefore those of the
exact posterior of the logistic coefficients under **Jeffreys' prior**
:math:`\lvert I(\beta)\rvert^{1/2}` (proper for logistic regression, Ibrahim & Laud 1991; its
mode is Firth's 1993 bias-reduced estimate), obtained by importance sampling with the bootstrap
draws as the proposal's guide (:func:`_jeffreys`). With hundreds of rows the two coincide.

Every draw is in the user's family (monotone for isotonic, Platt and beta calibration), a
calibrator split at the decision threshold is drawn side by side (independently: the sides'
rows are disjoint), and the draws spread where the labelled scores are sparse, since there a
few rows carry all the weight. Where no labelled score lies (beyond the range of the
reference), a draw extrapolates as its family does (isotonic: flat), so a shift in the scores
reaches the answer through the map's own extrapolation.

Sums of Dirichlet weights over tied rows are Gamma variables, so the rows are reduced once to
distinct scores (at most :data:`MAX_POINTS` equal-count bins per side) with their positives and
negatives, and draw :math:`m` weighs them by :math:`\mathrm{Gamma}(k_u)` and
:math:`\mathrm{Gamma}(n_u-k_u)`. The draws are kept as deviations :math:`D_m=f_m-\hat f` from
the map fitted on the reduced rows, on a grid of knots (the distinct scores and a logit-spaced
grid), linearly interpolated: exact for isotonic regression (piecewise linear on those knots),
an :math:`O(h^2)` approximation for the smooth families. Draw :math:`m` of the probability of a
row is :math:`\hat p(s)+D_m(s)` with :math:`\hat p` the user's fitted map, and a window's
expected positives move by

.. math:: \delta_m=\sum_i D_m(s_i)=\sum_k D_{mk}\,b_k,\qquad b_k=\sum_i B_k(s_i),

with :math:`B_k` the hat functions of the knots: one pass over the rows, whatever the number of
draws (:meth:`MapPosterior.shifts`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy
from scipy import special

from bayeval.calibration import (
    CALIBRATORS,
    BetaCalibration,
    Calibrator,
    Identity,
    Isotonic,
    Platt,
    SplitAtThreshold,
)
from bayeval.poibin import convolve_pmfs, pmf_rows
from bayeval.validation import as_seed

__all__ = ["DRAWS", "EXACT_MAP_ROWS", "MAX_POINTS", "SPARSE_ROWS", "SUPPORT_EDGES", "DrawPmfs",
           "MapPosterior", "MapSums", "draw_pmfs", "lattice_kernel", "map_posterior", "sparse_bins",
           "support_counts"]

DRAWS = 400
"""Draws of the map: the 2.5 % quantile of the mixture carries a Monte-Carlo error of about
:math:`\\sqrt{0.025\\cdot0.975/400}=0.008` in probability."""

PROPOSALS = 10
"""Proposals per draw in each round of the importance sampler of Platt's and beta calibration's
posterior."""

MAX_POINTS = 500
"""Distinct labelled scores per side above which they are pooled into this many equal-count
bins (at the mean score of each bin) for the draws."""

#: the logit-spaced knots added to every side: the smooth families' draws are interpolated on
#: them beyond and between the labelled scores
_TAIL = special.expit(np.linspace(-14.0, 14.0, 113))


def _span(s: np.ndarray, low: float, high: float) -> slice:
    """The sorted scores in ``[low, high)`` (``high`` included when it is 1), as a slice."""
    end = s.size if high == 1.0 else int(np.searchsorted(s, high))
    return slice(int(np.searchsorted(s, low)), end)


@dataclass(frozen=True)
class _Side:
    """The draws on one side of the threshold: scores in ``[low, high)`` (``high`` included
    when it is 1)."""

    low: float
    high: float
    knots: np.ndarray  # (K,) increasing
    deviations: np.ndarray  # (M, K)

    def rows(self, s: np.ndarray) -> np.ndarray:
        return (s >= self.low) & ((s < self.high) | (self.high == 1.0))

    def span(self, s: np.ndarray) -> slice:
        """:meth:`rows` of scores sorted in increasing order, as a slice."""
        return _span(s, self.low, self.high)

    def basis_sums(self, s: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        r""":math:`b_k=\sum_i w_i B_k(s_i)`: the hat functions of the knots summed over ``s``."""
        k = self.knots
        j = np.clip(np.searchsorted(k, s, side="right") - 1, 0, k.size - 2)
        t = np.clip((s - k[j]) / (k[j + 1] - k[j]), 0.0, 1.0)
        w = 1.0 if weights is None else weights
        return (np.bincount(j, weights=(1.0 - t) * w, minlength=k.size)
                + np.bincount(j + 1, weights=t * w, minlength=k.size))

    def at(self, s: np.ndarray) -> np.ndarray:
        """:math:`D_m(s_i)`, shape (M, n)."""
        k = self.knots
        j = np.clip(np.searchsorted(k, s, side="right") - 1, 0, k.size - 2)
        t = np.clip((s - k[j]) / (k[j + 1] - k[j]), 0.0, 1.0)
        return self.deviations[:, j] * (1.0 - t) + self.deviations[:, j + 1] * t


@dataclass(frozen=True)
class MapSums:
    r"""What the draws of a map need of a set of rows: sums over the knot intervals.

    A row at :math:`s` between knots :math:`k_j` and :math:`k_{j+1}` of its side of the map, at
    :math:`t=(s-k_j)/(k_{j+1}-k_j)`, adds :math:`1-t, t, (1-t)\hat p, t\hat p` to interval
    :math:`j`, separately for the rows predicted 0 and 1. Sums of disjoint row sets add.

    Attributes
    ----------
    parts : tuple of ndarray
        One array per side of the map, shape (2, 4, K): predicted class, the four sums,
        interval (the last interval of a side is empty).

    Examples
    --------
    >>> from bayeval.calibration import Platt
    >>> s = np.array([0.1, 0.3, 0.6, 0.9])
    >>> post = map_posterior(Platt().fit(s, [0, 1, 0, 1]), s, [0, 1, 0, 1], draws=10)
    >>> sums = post.sums(s, s, s >= 0.5)
    >>> [part.shape[:2] for part in sums.parts], float((sums + sums).parts[0][1, :2].sum())
    ([(2, 4)], 4.0)
    """

    parts: tuple[np.ndarray, ...]

    def __add__(self, other: MapSums) -> MapSums:
        return MapSums(tuple(a + b for a, b in zip(self.parts, other.parts, strict=True)))


@dataclass(frozen=True)
class MapPosterior:
    r"""Draws of a calibration map given the labelled rows it was fitted on.

    Attributes
    ----------
    plugin : Calibrator
        The fitted map :math:`\hat f` (the plug-in answer's).
    sides : tuple
        One set of draws per side of the threshold (one side if the map is not split).

    Examples
    --------
    >>> from bayeval.calibration import make_calibrator
    >>> rng = np.random.default_rng(0)
    >>> s = rng.beta(2, 5, 500)  # few high scores
    >>> y = rng.random(500) < s
    >>> post = map_posterior(make_calibrator("platt", 0.5).fit(s, y), s, y, random_seed=1)
    >>> post.draws, post.predict([0.3, 0.9]).shape
    (400, (400, 2))
    >>> post.predict([0.2, 0.9]).std(axis=0).round(3)  # wider where rows are sparse
    array([0.022, 0.238])
    >>> abs(post.shifts(s).mean()) < 3 * post.shifts(s).std() / 20  # centred on the fit
    np.True_
    """

    plugin: Calibrator
    sides: tuple[_Side, ...]

    @property
    def draws(self) -> int:
        return self.sides[0].deviations.shape[0]

    def shifts(self, scores: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        r""":math:`\delta_m=\sum_i w_i D_m(s_i)`: how far each draw moves the expected number of
        positives among ``scores`` (validated, in [0, 1]) from the plug-in's (``weights``
        default to 1; other weights give the first-order change of a smooth function of the
        probabilities). Shape (M,)."""
        out = np.zeros(self.draws)
        for side in self.sides:
            rows = side.rows(scores)
            out += side.deviations @ side.basis_sums(
                scores[rows], None if weights is None else weights[rows])
        return out

    def sums(self, s: np.ndarray, p: np.ndarray, positive: np.ndarray) -> MapSums:
        """:class:`MapSums` of rows with scores ``s``, plug-in probabilities ``p`` and
        predictions ``positive`` (validated arrays)."""
        parts = []
        ordered = bool((s[1:] >= s[:-1]).all())  # sorted windows: slices and no search per row
        for side in self.sides:
            rows = side.span(s) if ordered else side.rows(s)
            k, x, q, pos = side.knots, s[rows], p[rows], positive[rows]
            if ordered:  # x >= k[m] from the first row at or above k[m]
                starts = np.searchsorted(x, k[1:-1])
                j = np.repeat(np.arange(k.size - 1), np.diff(np.r_[0, starts, x.size]))
            else:
                j = np.clip(np.searchsorted(k, x, side="right") - 1, 0, k.size - 2)
            t = np.clip((x - k[j]) / (k[j + 1] - k[j]), 0.0, 1.0)
            at = j + k.size * pos.astype(np.int64)
            weights = np.stack([t, q, t * q])
            if at.size and (at[1:] >= at[:-1]).all():  # sorted rows: one sum per run of cells
                first = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
                count, total = np.zeros(2 * k.size), np.zeros((3, 2 * k.size))
                count[at[first]] = np.diff(np.r_[first, at.size])
                total[:, at[first]] = np.add.reduceat(weights, first, axis=1)
            else:
                count = np.bincount(at, minlength=2 * k.size).astype(float)
                total = np.stack([np.bincount(at, weights=w, minlength=2 * k.size)
                                  for w in weights])
            part = np.stack([count - total[0], total[0], total[1] - total[2], total[2]])
            parts.append(part.reshape(4, 2, k.size).transpose(1, 0, 2))
        return MapSums(tuple(parts))

    def linear(self, sums: MapSums, cls: int | None = None, *, with_p: bool = False,
               interval_weights: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
        r""":math:`\sum_i c_i D_m(s_i)` over the rows of ``sums`` (of predicted class ``cls``,
        default both), with :math:`c_i=1`, or :math:`\hat p_i` (``with_p``), times a weight of
        the row's knot interval (``interval_weights``, one array per side). Shape (M,)."""
        return self.linear_many(sums, [(cls, with_p, interval_weights)])[:, 0]

    def linear_many(self, sums: MapSums,
                    terms: list[tuple[int | None, bool, tuple[np.ndarray, ...] | None]]
                    ) -> np.ndarray:
        """:meth:`linear` of several ``(cls, with_p, interval_weights)`` at once, each draw's
        deviations read once for all of them. Shape (M, len(terms))."""
        out = np.zeros((self.draws, len(terms)))
        for i, (side, part) in enumerate(zip(self.sides, sums.parts, strict=True)):
            bases = []
            for cls, with_p, interval_weights in terms:
                total = part[slice(None) if cls is None else slice(cls, cls + 1)].sum(axis=0)
                first, second = (total[2], total[3]) if with_p else (total[0], total[1])
                if interval_weights is not None:
                    first, second = first * interval_weights[i], second * interval_weights[i]
                bases.append(first + np.r_[0.0, second[:-1]])
            out += side.deviations @ np.stack(bases, axis=1)
        return out

    def predict(self, scores: Any) -> np.ndarray:
        r""":math:`\hat p(s_i)+D_m(s_i)`, clipped to [0, 1]: row probabilities of every draw,
        shape (M, n)."""
        s = np.asarray(scores, dtype=float)
        out = np.broadcast_to(self.plugin.predict(s), (self.draws, s.size)).copy()
        for side in self.sides:
            rows = side.rows(s)
            out[:, rows] += side.at(s[rows])
        return np.clip(out, 0.0, 1.0)


def _reduced(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores (or MAX_POINTS equal-count bins) with their positives and negatives, of
    rows sorted by score."""
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    if first.size > MAX_POINTS:
        first = first[np.unique(np.linspace(0, first.size, MAX_POINTS, endpoint=False)
                                .astype(np.int64))]
    n = np.diff(np.r_[first, s.size]).astype(float)
    return np.add.reduceat(s, first) / n, np.add.reduceat(y, first), n - np.add.reduceat(y, first)


def _interpolation(knots: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray, np.ndarray]:
    r"""How ``np.interp(knots, x, f)`` reads any ``f`` on the increasing ``x``: each knot's
    interval :math:`j` (:math:`x_j\le k<x_{j+1}`), the knots that take a value of ``f`` as is
    (:math:`k\le x_0`, :math:`k\ge x_{n-1}` or :math:`k=x_j`: ``at``, the index of that
    value) and, for the others (``inner``), :math:`k-x_j` and :math:`x_{j+1}-x_j`."""
    j = np.searchsorted(x, knots, side="right") - 1
    at = np.clip(j, 0, x.size - 1)
    inner = (j >= 0) & (j < x.size - 1)
    inner[inner] = knots[inner] != x[j[inner]]
    j = j[inner]
    return at, inner, j, np.stack([knots[inner] - x[j], x[j + 1] - x[j]])


def _interp_rows(knots: np.ndarray, x: np.ndarray, f: np.ndarray) -> np.ndarray:
    r"""``np.interp(knots, x, row)`` for every row of ``f`` at once, with NumPy's arithmetic:
    :math:`f_j+\frac{f_{j+1}-f_j}{x_{j+1}-x_j}(k-x_j)`, :math:`f_j` at a knot equal to
    :math:`x_j` and the end values outside :math:`[x_0, x_{n-1}]`."""
    at, inner, j, (offset, width) = _interpolation(knots, x)
    out = f.take(at, axis=1)  # C order, as the draws' products with the rows' sums need
    out[:, inner] = (f[:, j + 1] - f[:, j]) / width * offset + f[:, j]
    return out


def _isotonic_draws(x, pos, neg, knots, gammas_pos, gammas_neg) -> np.ndarray:
    """Isotonic regression on the distinct scores: rate and weight of each, per draw (SciPy's
    pool-adjacent-violators, one fit per draw), all interpolated at the knots at once."""
    from scipy.optimize import isotonic_regression

    weights = gammas_pos + gammas_neg
    rates = gammas_pos / weights
    fitted = np.empty((rates.shape[0] + 1, x.size))
    fitted[0] = isotonic_regression(pos / (pos + neg), weights=pos + neg).x
    for m in range(rates.shape[0]):
        fitted[m + 1] = isotonic_regression(rates[m], weights=weights[m]).x
    at_knots = _interp_rows(knots, x, fitted)
    return at_knots[1:] - at_knots[0]


def _newton(features: np.ndarray, ys: np.ndarray, share: np.ndarray,
            coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted logistic regressions, one per row of ``share`` (weights summing to 1), by
    Newton's method from ``coef``; returns the coefficients and which converged."""
    k = features.shape[1]
    outer = (features[:, :, None] * features[:, None, :]).reshape(-1, k * k)
    coef = coef.copy()
    for _ in range(50):
        p = special.expit(coef @ features.T)
        grad = (share * (p - ys)) @ features
        hess = ((share * p * (1 - p)) @ outer).reshape(-1, k, k) + 1e-10 * np.eye(k)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        coef -= step
        done = (np.abs(step) <= 1e-9 * (1.0 + np.abs(coef))).all(axis=1)
        if done.all():
            break
    return coef, done & np.isfinite(coef).all(axis=1)


def _logistic_draws(cal, xs, ys, base, gammas, knots, rng) -> np.ndarray:
    r"""Platt or beta calibration: the bootstrap's refits by Newton's method for all draws at
    once, from the fit on the reduced rows, then Jeffreys' posterior guided by them
    (:func:`_jeffreys`). Beta calibration's :math:`a, b\ge0`: a refit's most negative one is
    fixed at 0 and the refit redone, as in :class:`~bayeval.calibration.BetaCalibration`. A
    refit that does not converge is redone on its own."""
    features = cal.features(xs)
    centre = copy.copy(cal)._fitted(xs, ys, base).coef_
    share = gammas / gammas.sum(axis=1, keepdims=True)
    coef, ok = _newton(features, ys, share, np.tile(centre, (share.shape[0], 1)))
    fixed = np.zeros(coef.shape, dtype=bool)
    for _ in range(2 if isinstance(cal, BetaCalibration) else 0):
        negative = np.where(~fixed[:, :2] & (coef[:, :2] < 0), coef[:, :2], 0.0)
        redo = negative.min(axis=1) < 0
        if not redo.any():
            break
        fixed[np.flatnonzero(redo), np.argmin(negative[redo], axis=1)] = True
        for pattern in np.unique(fixed[redo], axis=0):
            rows = np.flatnonzero(redo & (fixed == pattern).all(axis=1))
            free = ~pattern
            coef[rows] = 0.0
            coef[np.ix_(rows, free)], ok[rows] = _newton(
                features[:, free], ys, share[rows], np.tile(centre[free], (rows.size, 1)))
    for m in np.flatnonzero(~ok):
        coef[m] = copy.copy(cal)._fitted(xs, ys, gammas[m]).coef_
    coef = _jeffreys(features, ys, base, coef, isinstance(cal, BetaCalibration), rng)
    grid = cal.features(knots)
    return special.expit(coef @ grid.T) - special.expit(grid @ centre)


def _jeffreys(features: np.ndarray, ys: np.ndarray, counts: np.ndarray, proposal: np.ndarray,
              monotone: bool, rng: np.random.Generator) -> np.ndarray:
    r"""Draws of the logistic coefficients' posterior under Jeffreys' prior, as many as the
    rows of ``proposal`` (the weighted likelihood bootstrap's draws).

    The target is :math:`\pi(\beta\mid y)\propto\prod_u f_u^{y_u c_u}(1-f_u)^{(1-y_u)c_u}
    \,\lvert X^\top W_\beta X\rvert^{1/2}` with :math:`f_u=\sigma(x_u^\top\beta)`,
    :math:`W_\beta=\mathrm{diag}(c_u f_u(1-f_u))` (proper for logistic regression, Ibrahim &
    Laud 1991; its mode is Firth's 1993 bias-reduced estimate); ``monotone`` restricts the first
    two coefficients (beta calibration's :math:`a, b`) to :math:`\ge0`. It is sampled by
    importance sampling from a Student-t with 4 degrees of freedom at the bootstrap draws' mean,
    its scale :math:`1.5^2` times the average of their covariance and the inverse Fisher
    information there, in rounds of :data:`PROPOSALS` proposals per draw until the effective
    sample size reaches the number of draws, then resampled systematically. Where the
    information is singular at every proposal (e.g. one distinct score) the bootstrap draws are
    returned."""
    m, k = proposal.shape
    centre = proposal.mean(axis=0)
    outer = (features[:, :, None] * features[:, None, :]).reshape(-1, k * k)

    def information(coef: np.ndarray) -> np.ndarray:
        p = special.expit(coef @ features.T)
        return ((counts * p * (1 - p)) @ outer).reshape(-1, k, k)

    scale = 1.5**2 * 0.5 * (np.cov(proposal.T).reshape(k, k)
                            + np.linalg.pinv(information(centre[None])[0]))
    scale += 1e-12 * np.trace(scale) * np.eye(k)
    try:
        t = scipy.stats.multivariate_t(centre, scale, df=4)
    except (np.linalg.LinAlgError, ValueError):  # singular, e.g. one distinct score
        return proposal
    draws, logw = np.empty((0, k)), np.empty(0)
    while draws.shape[0] < 64 * m:
        new = t.rvs(PROPOSALS * m, random_state=rng).reshape(-1, k)
        eta = new @ features.T
        with np.errstate(divide="ignore", invalid="ignore"):  # singular: prior density 0
            sign, logdet = np.linalg.slogdet(information(new))
            logw_new = (counts * (ys * eta - np.logaddexp(0.0, eta))).sum(axis=1) \
                + 0.5 * np.where(sign > 0, logdet, -np.inf) - t.logpdf(new)
        logw_new[~np.isfinite(logw_new)] = -np.inf
        if monotone:
            logw_new[(new[:, :2] < 0).any(axis=1)] = -np.inf
        draws, logw = np.vstack([draws, new]), np.r_[logw, logw_new]
        if np.isinf(top := logw.max()):
            continue
        w = np.exp(logw - top)
        if w.sum() ** 2 >= m * (w**2).sum():  # effective sample size >= m
            break
    if np.isinf(logw.max()):  # the information is singular everywhere: no Jeffreys posterior
        return proposal
    cumulative = np.cumsum(w / w.sum())
    picks = np.searchsorted(cumulative, (rng.random() + np.arange(m)) / m)
    return draws[rng.permutation(np.minimum(picks, draws.shape[0] - 1))]


def _weighted_draws(cal: Calibrator, s: np.ndarray, y: np.ndarray, knots: np.ndarray,
                    draws: int, rng: np.random.Generator) -> np.ndarray:
    """Deviations at ``knots`` of the family's fits with Gamma weights on the reduced rows."""
    x, pos, neg = _reduced(s, y)
    gammas_pos = rng.standard_gamma(pos, size=(draws, x.size))
    gammas_neg = rng.standard_gamma(neg, size=(draws, x.size))
    if isinstance(cal, Isotonic):
        return _isotonic_draws(x, pos, neg, knots, gammas_pos, gammas_neg)
    keep = np.r_[pos, neg] > 0
    xs = np.r_[x, x][keep]
    ys = np.r_[np.ones(x.size), np.zeros(x.size)][keep]
    base, gammas = np.r_[pos, neg][keep], np.hstack([gammas_pos, gammas_neg])[:, keep]
    if isinstance(cal, (Platt, BetaCalibration)):
        return _logistic_draws(cal, xs, ys, base, gammas, knots, rng)
    centre = copy.copy(cal)._fitted(xs, ys, base)._predict(knots)
    return np.array([copy.copy(cal)._fitted(xs, ys, g)._predict(knots) for g in gammas]) - centre


def _resampled_draws(cal: Any, s: np.ndarray, y: np.ndarray, knots: np.ndarray, draws: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Deviations at ``knots`` of refits on multinomial resamples (any ``fit``/``predict``
    object: the classical bootstrap, approximating the Bayesian one)."""
    centre = np.asarray(cal.predict(knots), dtype=float)
    out = np.empty((draws, knots.size))
    for m in range(draws):
        rows = rng.integers(0, s.size, s.size)
        out[m] = np.asarray(copy.deepcopy(cal).fit(s[rows], y[rows]).predict(knots)) - centre
    return out


def _knots(s: np.ndarray, low: float, high: float) -> np.ndarray:
    x = _reduced(s, np.zeros(s.size))[0] if s.size else s
    grid = np.unique(np.r_[x, _TAIL, low, np.nextafter(high, low) if high < 1 else 1.0])
    return grid[(grid >= low) & (grid <= high)]


def map_posterior(calibrator: Any, scores: np.ndarray, labels: np.ndarray, *,
                  draws: int = DRAWS, random_seed: Any = None) -> MapPosterior:
    r"""Draws of a fitted calibration map's posterior given the rows it was fitted on.

    Parameters
    ----------
    calibrator : Calibrator or object with ``fit`` and ``predict``
        The map, fitted on ``scores`` and ``labels``. Platt and beta calibration: their
        coefficients' posterior under Jeffreys' prior. Other built-in
        :class:`~bayeval.calibration.Calibrator` (or one split at the threshold) are refitted
        with Gamma weights on their distinct scores; any other object on multinomial resamples
        of the rows. :class:`~bayeval.calibration.Identity` (and a side left uncalibrated) has no
        parameter: its draws equal the map.
    scores, labels : ndarray
        The labelled rows the map was fitted on (validated: scores in [0, 1], labels 0/1).
    draws : int
        Number of draws :math:`M`.
    random_seed : None, int or Generator

    Returns
    -------
    MapPosterior

    Examples
    --------
    Isotonic regression split at 0.5, on 200 labelled rows:

    >>> from bayeval.calibration import make_calibrator
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(200)
    >>> y = (rng.random(200) < s).astype(float)
    >>> post = map_posterior(make_calibrator("isotonic", 0.5).fit(s, y), s, y, random_seed=1)
    >>> len(post.sides), post.draws, post.predict([0.2, 0.8]).std(axis=0).round(2)
    (2, 400, array([0.06, 0.06]))
    """
    rng = as_seed(random_seed)
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=float)
    if not (s[1:] >= s[:-1]).all():  # sorted: each side's rows are one slice
        order = np.argsort(s, kind="stable")
        s, y = s[order], y[order]
    if isinstance(calibrator, SplitAtThreshold):
        t = calibrator.threshold
        parts = [(0.0, t, calibrator.sides_[0]), (t, 1.0, calibrator.sides_[1])]
    else:
        parts = [(0.0, 1.0, calibrator)]
    sides = []
    for low, high, cal in parts:
        rows = _span(s, low, high)
        knots = _knots(s[rows], low, high)
        if isinstance(cal, Identity) or rows.start == rows.stop:
            deviations = np.zeros((draws, knots.size))
        elif type(cal) in CALIBRATORS.values():
            deviations = _weighted_draws(cal, s[rows], y[rows], knots, draws, rng)
        else:
            deviations = _resampled_draws(cal, s[rows], y[rows], knots, draws, rng)
        sides.append(_Side(low, high, knots, deviations))
    return MapPosterior(calibrator, tuple(sides))


EXACT_MAP_ROWS = 2000
r"""Windows of at most this many rows are mixed over the calibration map's draws exactly, one
Poisson-binomial per draw (:class:`DrawPmfs`); longer ones, in CBPE, by the lattice kernel of
the draws' shifts (:meth:`bayeval.methods.cbpe.fast.CountLaw.with_map`). The kernel leaves out
how a draw changes the count's variance, :math:`\sum_i D_m(s_i)(1-2\hat p_i)-D_m(s_i)^2`,
and adds the lattice's split (at most 1/4): both are of order :math:`n` against the shared
shift's variance, of order :math:`n^2`, so they matter only in short windows (and in narrow
counts, of rows with probabilities near 0 or 1)."""


class DrawPmfs(NamedTuple):
    r"""The laws of a window's true positives and false negatives given each draw :math:`m` of
    the map:
    ``(start, pmf)`` with ``pmf[m, i]`` :math:`=P(\cdot=\text{start}+i\mid m)`. Windows of
    disjoint rows add: the draws are shared, so their rows convolve.

    Examples
    --------
    One row predicted positive in each of two windows, probability 0.2 or 0.8 by draw:

    >>> one = draw_pmfs(np.array([[0.2], [0.8]]), np.ones(1))
    >>> start, pmf = (one + one).tp
    >>> start, pmf.round(2).tolist()
    (0, [[0.64, 0.32, 0.04], [0.04, 0.32, 0.64]])
    """

    tp: tuple[int, np.ndarray]
    fn: tuple[int, np.ndarray]

    def __add__(self, other: DrawPmfs) -> DrawPmfs:
        def conv(a, b):
            rows = np.array([convolve_pmfs(x, y) for x, y in zip(a[1], b[1], strict=True)])
            return a[0] + b[0], rows

        return DrawPmfs(conv(self.tp, other.tp), conv(self.fn, other.fn))


def _by_draw(p: np.ndarray) -> tuple[int, np.ndarray]:
    """Poisson-binomial PMFs of the rows of ``p`` (draws x rows) on a common support
    (:func:`bayeval.poibin.pmf_rows`)."""
    starts, pmfs = pmf_rows(p)
    first = int(starts.min())
    out = np.zeros((p.shape[0], int(starts.max()) - first + pmfs.shape[1]))
    at = (starts - first)[:, None] + np.arange(pmfs.shape[1])
    np.put_along_axis(out, at, pmfs, axis=1)
    return first, out


def draw_pmfs(p: np.ndarray, y_pred: np.ndarray) -> DrawPmfs:
    """:class:`DrawPmfs` of a window whose rows have probabilities ``p`` under each draw
    (draws x rows, :meth:`MapPosterior.predict`) and predictions
    ``y_pred``.

    Examples
    --------
    >>> draws = draw_pmfs(np.array([[0.1, 0.5], [0.3, 0.5]]), np.array([1, 0]))
    >>> draws.tp[1].round(2).tolist(), draws.fn[1].tolist()
    ([[0.9, 0.1], [0.7, 0.3]], [[0.5, 0.5], [0.5, 0.5]])
    """
    pos = np.asarray(y_pred, bool)
    return DrawPmfs(_by_draw(p[:, pos]), _by_draw(p[:, ~pos]))



def lattice_kernel(shifts: np.ndarray) -> tuple[int, np.ndarray]:
    r"""The law of an integer shift that moves a count by :math:`\delta_m` on average: each
    draw's :math:`\delta_m` split between :math:`\lfloor\delta_m\rfloor` and
    :math:`\lfloor\delta_m\rfloor+1` so that its mean is kept, the draws weighted equally.

    Returns the first shift and the probabilities of the consecutive shifts from it.

    Examples
    --------
    >>> start, probs = lattice_kernel(np.array([-0.5, 1.0]))
    >>> start, probs.tolist()
    (-1, [0.25, 0.25, 0.5])
    """
    low = np.floor(shifts)
    frac = shifts - low
    start = int(low.min())
    at = (low - start).astype(np.int64)
    weight = 1.0 / shifts.size
    probs = (np.bincount(at, weights=(1.0 - frac) * weight, minlength=at.max() + 2)
             + np.bincount(at + 1, weights=frac * weight, minlength=at.max() + 2))
    return start, probs[: np.flatnonzero(probs)[-1] + 1]


SUPPORT_EDGES = special.expit(np.linspace(-14.0, 14.0, 57))
"""Edges of the support bins: 56 bins of width 0.5 on the logit scale, and the two tails."""

SPARSE_ROWS = 10
"""A support bin where fewer labelled rows than this fell is sparse: the map is extrapolated
there, from its neighbours."""


def support_counts(scores: np.ndarray) -> np.ndarray:
    r"""Rows of ``scores`` per support bin (:data:`SUPPORT_EDGES` :math:`e_1<\dots<e_{57}`);
    counts of disjoint sets add.

    Bin :math:`b` holds the scores in :math:`[e_b, e_{b+1})` (:math:`e_0=-\infty`,
    :math:`e_{58}=\infty`): :math:`c_b=\#\{s<e_{b+1}\}-\#\{s<e_b\}`, which sorted scores
    give by bisection at the edges.

    Examples
    --------
    >>> counts = support_counts(np.array([0.5, 0.55, 0.99]))
    >>> counts.size, int(counts.sum()), int(counts.max())
    (58, 3, 2)
    """
    if (scores[1:] >= scores[:-1]).all():  # sorted: the rows below each edge, by bisection
        below = np.searchsorted(scores, SUPPORT_EDGES, side="left")
        return np.diff(np.r_[0, below, scores.size])
    return np.bincount(np.searchsorted(SUPPORT_EDGES, scores, side="right"),
                       minlength=SUPPORT_EDGES.size + 1)


def sparse_bins(labelled_scores: np.ndarray) -> np.ndarray:
    """The support bins where the labelled rows are sparse (fewer than :data:`SPARSE_ROWS`).

    The share of a window's rows in them measures how much of it lies where the calibration
    map was learned from few rows (a covariate shift of the scores, or a thin reference).

    Examples
    --------
    >>> sparse = sparse_bins(np.full(50, 0.3))
    >>> float(support_counts(np.array([0.3, 0.31, 0.9]))[sparse].sum())  # 0.9 is unsupported
    1.0
    """
    return support_counts(labelled_scores) < SPARSE_ROWS
