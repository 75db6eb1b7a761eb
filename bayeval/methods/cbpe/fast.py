r"""CBPE's fast paths: exact laws of the metrics of a window from the laws of its counts.

Given the predictions, a window's confusion matrix is fixed by :math:`(TP, FN)`
(:math:`FP=n_+-TP`, :math:`TN=n_--FN`), and in every CBPE model the two counts are independent
given a component :math:`j` of a mixture (Kivimäki et al., 2025, arXiv:2505.05295):

.. math:: P(TP=t, FN=f)=\sum_j w_j\,a_j(t)\,b_j(f).

One component for V0 (:math:`a, b` Poisson-binomial) and V2 (convolutions of Beta-binomials),
the grid over :math:`\kappa` for V2b (:mod:`bayeval.methods.cbpe.kappa`). :class:`CountLaw`
holds this law, cut (like :mod:`bayeval.confusion`) to the counts of probability above
:data:`~bayeval.confusion.TOL`. A metric :math:`g(TP, FN)` then has

* for accuracy, precision and NPV, which depend on one count (:math:`TP+TN`, :math:`TP`,
  :math:`FN`), a one-dimensional exact PMF;
* for the others, while the grid has at most :data:`GRID_CELLS` cells, the exact PMF pushed
  forward from the grid (as :func:`bayeval.confusion.metric_distribution`);
* beyond that, the same law kept lazy (:func:`bayeval.confusion.count_distribution`, mixing
  the components): exact mean, sd, masses and equal-tailed interval without enumerating the
  grid, in :math:`O(w\log w)` for windows of width :math:`w`.

Undefined values (a zero denominator) depend on :math:`S` only and follow ``zero_division``
as in :class:`bayeval.confusion.MetricDistribution`. ROC-AUC has an exact law in short windows
and a normal law from the exact moments of its numerator and denominator in long ones
(:mod:`bayeval.methods.cbpe.auc`). :func:`closed_form`
tabulates the laws of every chunk and metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import NamedTuple

import numpy as np
import xarray as xr
from scipy import special

from bayeval.calibration_map import DrawPmfs, MapPosterior, MapSums, lattice_kernel
from bayeval.chunks import WHOLE, Chunking, sorted_scores
from bayeval.confusion import TOL, MetricDistribution
from bayeval.confusion_grid import GridLaw
from bayeval.methods.cbpe.kappa import shifted_beta
from bayeval.metrics import METRICS, REGISTRY, metric_value
from bayeval.poibin import convolve_pmfs, pmf_above

__all__ = ["GRID_CELLS", "MAP_GROUPS", "ONE_COUNT", "PMF_CELLS", "CountLaw", "NormalLaw",
           "Window", "beta_binomial_pmf", "closed_form", "count_laws", "map_laws",
           "threshold_grid", "window_labels", "windows", "with_whole"]

ONE_COUNT = tuple(m for m in METRICS if REGISTRY[m].one_count)
"""Metrics that depend on one count: their PMF is always computed whole."""

GRID_CELLS = 250_000
"""Two-count metrics whose (TP, FN) grid has more cells get a lazy law."""

MAP_GROUPS = 16
"""Components of a law mixed over the draws of a pooled (not split) calibration map."""

PMF_CELLS = 2_000_000
"""The exact PMFs are kept in the result (NaN for the other laws: ROC-AUC's normal, lazy) when,
padded to the widest, they have at most this many values in all."""


def _trim(start: int, pmf: np.ndarray) -> tuple[int, np.ndarray]:
    """Rows of ``pmf`` (components x counts) cut to the counts above TOL, renormalised."""
    keep = np.flatnonzero(pmf.max(axis=0) > TOL)
    lo, hi = (keep[0], keep[-1]) if keep.size else (int(np.argmax(pmf.max(axis=0))),) * 2
    out = pmf[:, lo : hi + 1]
    return start + int(lo), out / out.sum(axis=1, keepdims=True)


def beta_binomial_pmf(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""PMF of :math:`\mathrm{BetaBinomial}(n, a_j, b_j)` on :math:`0..n`, one row per j.

    With :math:`c=a/(a+b)` and rising factorials :math:`x^{(k)}=x^k\prod_{i<k}(1+i/x)`,

    .. math:: P(K=k)=\binom nk\frac{a^{(k)}\,b^{(n-k)}}{(a+b)^{(n)}}
              =\binom nk c^k(1-c)^{n-k}\,
              \frac{\prod_{i<k}(1+\frac ia)\prod_{i<n-k}(1+\frac ib)}{\prod_{i<n}(1+\frac i{a+b})},

    summed in logarithms (``log1p`` for the products): accurate for any concentration, including the
    binomial limit :math:`a+b\to\infty` where a difference of ``betaln`` loses all digits.

    Parameters
    ----------
    n : int
        Trials.
    a, b : array-like, shape (J,)
        Beta parameters, one law per pair.

    Returns
    -------
    numpy.ndarray, shape (J, n + 1)

    Examples
    --------
    >>> from scipy import stats
    >>> beta_binomial_pmf(4, [2.0], [3.0]).round(6)
    array([[0.214286, 0.285714, 0.257143, 0.171429, 0.071429]])
    >>> bool(np.allclose(beta_binomial_pmf(4, [2.0], [3.0])[0],
    ...                  stats.betabinom.pmf(range(5), 4, 2, 3), rtol=1e-12))
    True
    """
    a, b = np.asarray(a, float)[:, None], np.asarray(b, float)[:, None]
    i, k = np.arange(n), np.arange(n + 1)

    def rising(x):  # sum_{i < m} log1p(i / x) for m = 0..n
        return np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(np.log1p(i / x), axis=1)],
                              axis=1)

    log_choose = np.r_[0.0, np.cumsum(np.log((n - i) / (i + 1.0)))]
    log = (log_choose + k * np.log(a / (a + b)) + (n - k) * np.log(b / (a + b))
           + rising(a)[:, k] + rising(b)[:, n - k] - rising(a + b)[:, n:])
    return np.exp(log)


def _folded(start: int, pmf: np.ndarray, n: int) -> tuple[int, np.ndarray]:
    """``pmf`` (rows x counts from ``start``) with the mass below 0 and above ``n`` moved onto
    0 and ``n``, trimmed."""
    end = start + pmf.shape[1] - 1
    if start < 0:
        cut = min(-start, pmf.shape[1] - 1)
        pmf = np.hstack([pmf[:, : cut + 1].sum(axis=1, keepdims=True), pmf[:, cut + 1:]])
        start += cut
    if end > n:
        keep = max(n - start + 1, 1)
        pmf = np.hstack([pmf[:, : keep - 1], pmf[:, keep - 1:].sum(axis=1, keepdims=True)])
    return _trim(start, pmf)


def _draw_groups(key: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The map's draws sorted by ``key`` into at most :data:`MAP_GROUPS` equal groups, and the
    groups' shares of the draws."""
    groups = np.array_split(np.argsort(key, kind="stable"), min(MAP_GROUPS, key.size))
    sizes = np.array([g.size for g in groups], dtype=float)
    return groups, sizes / sizes.sum()


def _moved(start: int, pmf: np.ndarray, shifts: np.ndarray, n: int) -> tuple[int, np.ndarray]:
    """The law of count + K, K the lattice kernel of ``shifts``, kept in 0..n."""
    first, kernel = lattice_kernel(shifts)
    start, out = _folded(start + first, convolve_pmfs(pmf, kernel)[None, :], n)
    return start, out[0]


def _moved_rows(start: int, pmf: np.ndarray, groups: list[np.ndarray],
                n: int) -> tuple[int, np.ndarray]:
    """One row per group of shifts: ``pmf`` convolved with the group's lattice kernel."""
    kernels = [lattice_kernel(shifts) for shifts in groups]
    base = min(first for first, _ in kernels)
    rows = np.zeros((len(groups), pmf.size + max(first + k.size for first, k in kernels) - base))
    for row, (first, kernel) in zip(rows, kernels, strict=True):
        moved = convolve_pmfs(pmf, kernel)
        row[first - base : first - base + moved.size] = moved
    return _folded(start + base, rows, n)


@dataclass(frozen=True, eq=False)
class CountLaw:
    r"""Law of a window's :math:`(TP, FN)`: a mixture of independent pairs.

    Attributes
    ----------
    n_pos, n_neg : int
        Rows predicted positive and negative.
    tp_start, fn_start : int
        The counts of the first columns of ``tp`` and ``fn``.
    tp, fn : ndarray, shape (J, w)
        :math:`P(TP=\text{tp\_start}+i\mid j)` and :math:`P(FN=\text{fn\_start}+i\mid j)`.
    weights : ndarray, shape (J,)
        Mixture weights :math:`w_j`, summing to 1.

    Examples
    --------
    Six rows, four predicted positive: TP is Poisson-binomial over 0.9, 0.8, 0.7, 0.6.

    >>> s = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.6])
    >>> law = CountLaw.poisson_binomial(s, (s >= 0.5).astype(int))
    >>> law.n_pos, law.n_neg, law.tp.round(4)
    (4, 2, array([[0.0024, 0.0404, 0.2144, 0.4404, 0.3024]]))
    >>> law.tp_moments()  # sum of p, sum of p (1 - p)
    (3.0, 0.7)
    >>> round(law.law("accuracy").mean, 6)  # (E TP + n_neg - E FN) / n
    0.75

    Two independent windows add (their counts convolve):

    >>> both = law + law
    >>> both.n_pos, round(both.tp_moments()[1], 6)
    (8, 1.4)
    """

    n_pos: int
    n_neg: int
    tp_start: int
    tp: np.ndarray
    fn_start: int
    fn: np.ndarray
    weights: np.ndarray

    @classmethod
    def poisson_binomial(cls, p: np.ndarray, y_pred: np.ndarray) -> CountLaw:
        """V0: :math:`TP` and :math:`FN` Poisson-binomial over the predicted positives and
        negatives."""
        pos = y_pred == 1
        return cls.from_windows(int(pos.sum()), int((~pos).sum()),
                                *(pmf_above(np.compress(side, p), TOL)
                                  for side in (pos, ~pos)))

    @classmethod
    def from_windows(cls, n_pos: int, n_neg: int, tp: tuple[int, np.ndarray],
                     fn: tuple[int, np.ndarray]) -> CountLaw:
        """V0 from the windows ``(start, probs)`` of the PMFs of TP and FN, each renormalised.

        Examples
        --------
        >>> law = CountLaw.from_windows(2, 1, (1, np.array([0.5, 0.5])), (0, np.array([1.0])))
        >>> law.tp_moments()
        (1.5, 0.25)
        """
        (ts, tp), (fs, fn) = tp, fn
        return cls(n_pos, n_neg, ts, (tp / tp.sum())[None, :], fs, (fn / fn.sum())[None, :],
                   np.ones(1))

    @classmethod
    def beta_binomial(cls, n: np.ndarray, a: np.ndarray, b: np.ndarray, y_pred: np.ndarray,
                      weights: np.ndarray) -> CountLaw:
        r"""Sums of independent Beta-binomial cells, mixed over components :math:`j`.

        Cell :math:`g` has :math:`n_g` rows and prediction :math:`\hat y_g`; given component
        :math:`j`, :math:`K_g\sim\mathrm{BetaBinomial}(n_g,a_{jg},b_{jg})` independently, and
        :math:`TP=\sum_{\hat y_g=1}K_g`, :math:`FN=\sum_{\hat y_g=0}K_g`. V2 has one component,
        :math:`a=\kappa c_g`, :math:`b=\kappa(1-c_g)`; V2b a grid of :math:`\kappa_j` with
        posterior weights; with ``noise="binning"`` the reference's positives and negatives of
        the cell's bin are added to :math:`a` and :math:`b`.

        Parameters
        ----------
        n, y_pred : ndarray, shape (G,)
            Rows and prediction of each cell.
        a, b : ndarray, shape (J, G)
            Beta parameters per component and cell.
        weights : ndarray, shape (J,)
            Mixture weights, summing to 1.
        """
        sides = []
        for side in (y_pred == 1, y_pred == 0):
            parts = [_trim(0, beta_binomial_pmf(int(m), ag, bg))
                     for m, ag, bg in zip(n[side], a[:, side].T, b[:, side].T, strict=True)]
            start = sum(s for s, _ in parts)
            rows = np.array([convolve_pmfs(*(pmf[j] for _, pmf in parts)) for j in
                             range(a.shape[0])]) if parts else np.ones((a.shape[0], 1))
            sides.append(_trim(start, rows))
        (ts, tp), (fs, fn) = sides
        return cls(int(n[y_pred == 1].sum()), int(n[y_pred == 0].sum()), ts, tp, fs, fn,
                   np.asarray(weights, float))

    def with_map(self, tp_shifts: np.ndarray, fn_shifts: np.ndarray,
                 split: bool) -> CountLaw:
        r"""This law mixed over draws :math:`m` of the calibration map.

        Given draw :math:`m`, the probabilities of the window's rows move by :math:`D_m(s_i)`
        and the expected TP and FN by :math:`\delta^{TP}_m=\sum_{\hat y_i=1}D_m(s_i)` and
        :math:`\delta^{FN}_m` (:meth:`bayeval.calibration_map.MapPosterior.shifts`); the
        count's law is taken as this (plug-in) law moved by :math:`\delta_m`, split between
        the two nearest integers so that the mean is exact
        (:func:`bayeval.calibration_map.lattice_kernel`). The variance's own change,
        :math:`\sum_i D_m(s_i)(1-2\hat p_i)`, averages to second order over the draws and is
        left out. With a map ``split`` at the threshold the two sides' draws are independent, so
        TP and FN stay independent and each is convolved with its kernel. A pooled map moves
        both together: the draws are sorted by :math:`\delta^{TP}_m` into :data:`MAP_GROUPS`
        equal groups, each a component whose TP and FN kernels are those of its draws. The
        marginals stay exact and the covariance of the shifts is kept but for its part within
        the groups, :math:`\beta\,\mathrm{Var}(\delta^{TP}\mid\text{group})` with
        :math:`\beta` the regression slope of :math:`\delta^{FN}` on :math:`\delta^{TP}`.

        Examples
        --------
        Twenty rows of probability 1/2 predicted positive; two draws of the map move the
        expected TP by -0.5 and +0.5, a kernel of variance 1/2 on -1, 0, 1:

        >>> law = CountLaw.poisson_binomial(np.full(20, 0.5), np.ones(20))
        >>> moved = law.with_map(np.array([-0.5, 0.5]), np.zeros(2), split=True)
        >>> law.tp_moments(), [round(v, 4) for v in moved.tp_moments()]
        ((10.0, 5.0), [10.0, 5.5])
        """
        if self.weights.size != 1:
            raise ValueError("with_map needs a law of one component (noise='none').")
        if split:
            ts, tp = _moved(self.tp_start, self.tp[0], tp_shifts, self.n_pos)
            fs, fn = _moved(self.fn_start, self.fn[0], fn_shifts, self.n_neg)
            return CountLaw(self.n_pos, self.n_neg, ts, tp[None], fs, fn[None], np.ones(1))
        groups, weights = _draw_groups(tp_shifts)
        (ts, tp), (fs, fn) = (_moved_rows(start, pmf[0], [shifts[g] for g in groups], n)
                              for start, pmf, shifts, n in (
                                  (self.tp_start, self.tp, tp_shifts, self.n_pos),
                                  (self.fn_start, self.fn, fn_shifts, self.n_neg)))
        return CountLaw(self.n_pos, self.n_neg, ts, tp, fs, fn, weights)

    def from_draws(self, draws: DrawPmfs, split: bool) -> CountLaw:
        r"""This window's law mixed over the map's draws exactly: :math:`TP` and :math:`FN`
        given draw :math:`m` are Poisson-binomial with the draw's probabilities. Split at the
        threshold, the two sides' draws are independent and each count's mixture is its own
        component; pooled, the draws are sorted by :math:`E[TP\mid m]` into
        :data:`MAP_GROUPS` equal groups, one component each (exact marginals, the covariance
        of the two counts kept but for its part within the groups).

        Examples
        --------
        Two rows predicted positive, two draws of the map that give them 0.2 and 0.8:

        >>> from bayeval.calibration_map import draw_pmfs
        >>> law = CountLaw.poisson_binomial(np.full(2, 0.5), np.ones(2))
        >>> draws = draw_pmfs(np.array([[0.2, 0.2], [0.8, 0.8]]), np.ones(2))
        >>> [round(v, 4) for v in law.from_draws(draws, split=True).tp_moments()]
        [1.0, 0.68]
        """
        if self.weights.size != 1:
            raise ValueError("from_draws needs a law of one component (noise='none').")
        (ts, tp), (fs, fn) = draws
        if split:
            return CountLaw(self.n_pos, self.n_neg, *_trim(ts, tp.mean(axis=0, keepdims=True)),
                            *_trim(fs, fn.mean(axis=0, keepdims=True)), np.ones(1))
        groups, weights = _draw_groups(tp @ np.arange(tp.shape[1]))
        return CountLaw(self.n_pos, self.n_neg,
                        *_trim(ts, np.array([tp[g].mean(axis=0) for g in groups])),
                        *_trim(fs, np.array([fn[g].mean(axis=0) for g in groups])), weights)

    def __add__(self, other: CountLaw) -> CountLaw:
        """Law of the summed counts of two windows, independent given the component."""
        def conv(a, b):
            return np.array([convolve_pmfs(x, y) for x, y in zip(a, b, strict=True)])

        ts, tp = _trim(self.tp_start + other.tp_start, conv(self.tp, other.tp))
        fs, fn = _trim(self.fn_start + other.fn_start, conv(self.fn, other.fn))
        return CountLaw(self.n_pos + other.n_pos, self.n_neg + other.n_neg, ts, tp, fs, fn,
                        self.weights)

    @property
    def cells(self) -> int:
        return self.tp.shape[1] * self.fn.shape[1]

    def tp_moments(self) -> tuple[float, float]:
        """Mean and variance of TP."""
        t = self.tp_start + np.arange(self.tp.shape[1])
        marginal = self.weights @ self.tp
        mean = float(marginal @ t)
        return mean, float(marginal @ (t - mean) ** 2)

    def law(self, metric: str, zero_division: float = 0.0,
            beta: float = 1.0) -> MetricDistribution:
        """The exact law of ``metric``: its whole PMF while the grid has at most
        :data:`GRID_CELLS` cells, else lazy
        (:meth:`~bayeval.confusion.MetricDistribution.from_grid`)."""
        if metric in ONE_COUNT:
            return self._one_count(metric, zero_division)
        if self.cells <= GRID_CELLS or min(self.tp.shape[1], self.fn.shape[1]) == 1:
            return self.grid(metric, zero_division, beta)
        return self._lazy(metric, zero_division, beta)

    def _one_count(self, metric: str, zero_division: float) -> MetricDistribution:
        if metric == "precision":
            tp = self.tp_start + np.arange(self.tp.shape[1], dtype=float)
            values = metric_value(metric, tp, self.n_pos - tp, 0.0, 0.0, 1.0, np.nan)
            probs = self.weights @ self.tp
        elif metric == "npv":
            fn = self.fn_start + np.arange(self.fn.shape[1], dtype=float)
            values = metric_value(metric, 0.0, 0.0, fn, self.n_neg - fn, 1.0, np.nan)
            probs = self.weights @ self.fn
        else:  # accuracy: correct = TP + n_neg - FN
            start, probs = _trim(
                self.tp_start + self.n_neg - (self.fn_start + self.fn.shape[1] - 1),
                (self.weights @ np.array([convolve_pmfs(a, b[::-1]) for a, b in
                                          zip(self.tp, self.fn, strict=True)]))[None, :])
            probs = probs[0]
            correct = start + np.arange(probs.size, dtype=float)
            wrong = self.n_pos + self.n_neg - correct
            values = metric_value(metric, correct, wrong, 0.0, 0.0, 1.0, np.nan)
        return MetricDistribution.from_cells(metric, values, probs, zero_division)

    def grid(self, metric: str, zero_division: float = 0.0,
             beta: float = 1.0) -> MetricDistribution:
        """The exact PMF of ``metric`` pushed forward from the whole (TP, FN) grid."""
        law = self._lazy(metric, zero_division, beta)
        return MetricDistribution(metric, law.values, law.probs, law.p_undefined, zero_division)

    @cached_property
    def _grid(self) -> GridLaw:
        """The (TP, FN) grid, whose tail and diagonal sums the laws of every two-count metric
        share (:meth:`~bayeval.confusion_grid.GridLaw.for_metric`; built for recall)."""
        return GridLaw("recall", self.n_pos, self.n_neg,
                       self.tp_start + np.arange(self.tp.shape[1], dtype=float), self.tp,
                       self.fn_start + np.arange(self.fn.shape[1], dtype=float), self.fn,
                       np.asarray(self.weights, float), 1.0, 0.0)

    def _lazy(self, metric: str, zero_division: float, beta: float) -> MetricDistribution:
        return MetricDistribution.from_grid(self._grid.for_metric(metric, beta, zero_division))


class NormalLaw:
    r"""A normal approximation :math:`N(\mu,\sigma^2)` (ROC-AUC from its exact moments).

    Its interval is :math:`\mu\pm z\sigma` (equal-tailed and highest-density), clipped to the
    metric's range; ``mass`` uses the normal CDF.

    Parameters
    ----------
    mean, sd : float
    p_undefined : float
        Probability that the metric is undefined (reported, not part of the normal).
    limits : (float, float)
        The metric's range, where intervals are clipped.

    Examples
    --------
    >>> law = NormalLaw(0.8, 0.05, 0.0)
    >>> [round(float(v), 4) for v in law.interval(0.95)], round(law.mass(0.7, 0.9), 4)
    ([0.702, 0.898], 0.9545)
    >>> [round(float(v), 4) for v in NormalLaw(0.98, 0.02, 0.0).interval(0.95)]  # clipped
    [0.9408, 1.0]
    """

    def __init__(self, mean: float, sd: float, p_undefined: float,
                 limits: tuple[float, float] = (0.0, 1.0)) -> None:
        self.mean, self.sd, self.p_undefined, self.limits = mean, sd, p_undefined, limits

    def interval(self, ci_prob: float = 0.95, kind: str = "eti") -> tuple[float, float]:
        half = special.ndtri((1 + ci_prob) / 2) * self.sd
        return max(self.mean - half, self.limits[0]), min(self.mean + half, self.limits[1])

    def mass(self, lower: float, upper: float) -> float:
        if self.sd == 0:
            return float(lower <= self.mean <= upper)
        return float(special.ndtr((upper - self.mean) / self.sd)
                     - special.ndtr((lower - self.mean) / self.sd))


# ---------------------------------------------------------------------------------------------
# windows and their count laws


class Window(NamedTuple):
    """A window's rows sorted by score: scores, calibrated probabilities, predictions.

    Examples
    --------
    >>> w = Window(np.array([0.2, 0.9]), np.array([0.25, 0.85]), np.array([False, True]))
    >>> CountLaw.poisson_binomial(w.p, w.y_pred).tp_moments()
    (0.85, 0.1275)
    """

    s: np.ndarray
    p: np.ndarray
    y_pred: np.ndarray

    def sides(self) -> tuple[np.ndarray, np.ndarray]:
        """The probabilities of the predicted negatives and of the predicted positives: slices
        where the positives are the last rows (a window sorted by score), else copies.

        Examples
        --------
        >>> Window(np.array([0.2, 0.9]), np.array([0.25, 0.85]), np.array([False, True])).sides()
        (array([0.25]), array([0.85]))
        """
        cut = self.y_pred.size - np.count_nonzero(self.y_pred)
        if self.y_pred[cut:].all():
            return self.p[:cut], self.p[cut:]
        return self.p[~self.y_pred], self.p[self.y_pred]


def windows(scores: np.ndarray, chunking: Chunking, calibrate: Callable[[np.ndarray], np.ndarray],
            threshold: float, whole: bool = True, ordered: bool = True,
            order: np.ndarray | None = None) -> list[Window]:
    """Every chunk's rows, then (with ``whole``) the whole period's, sorted by score (with
    ``ordered``, read in ``order``, the rows' stable order by score, when it is known; else
    each chunk's rows as they come, views of ``scores`` for contiguous chunks).

    The exact laws and NannyML's estimates depend on a window's rows only through its multiset
    of scores (``p`` and ``y_pred`` are functions of the score): the count laws need no order,
    and sorted rows spare the ROC-AUC moments and the map's sums their argsort.

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> ws = windows(np.array([0.7, 0.2, 0.9, 0.4]), make_chunks(4, n_chunks=2), np.sqrt, 0.5)
    >>> [w.s.tolist() for w in ws], ws[-1].y_pred.tolist()
    ([[0.2, 0.7], [0.4, 0.9], [0.2, 0.4, 0.7, 0.9]], [False, False, True, True])
    >>> ws = windows(np.array([0.7, 0.2, 0.9, 0.4]), make_chunks(4, n_chunks=2), np.sqrt, 0.5,
    ...              whole=False, ordered=False)
    >>> [w.s.tolist() for w in ws]
    [[0.7, 0.2], [0.9, 0.4]]
    """
    def window(s):
        return Window(s, calibrate(s), s >= threshold)

    if ordered and order is not None:
        chunks = [window(scores[rows]) for rows in chunking.rows(order)]
    else:
        chunks = [window(sorted_scores(part) if ordered else part)
                  for part in chunking.parts(scores)]
    if not whole:
        return chunks
    merged = np.concatenate([w.s for w in chunks])
    return [*chunks, window(sorted_scores(merged) if ordered else merged)]


def with_whole(laws: list[CountLaw]) -> list[CountLaw]:
    """The laws of the chunks, then the whole period's: the sum of the chunks' (independent).

    Examples
    --------
    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.2]), np.array([1, 0]))
    >>> [w.n_pos for w in with_whole([law, law, law])]
    [1, 1, 1, 3]
    """
    whole = laws[0]
    for law in laws[1:]:
        whole = whole + law
    return [*laws, whole]


def count_laws(windows: list[Window], noise: str, cells: dict[str, np.ndarray] | None,
               beta_grid: tuple[np.ndarray, ...] | None, whole: bool = True) -> list[CountLaw]:
    """The CountLaw of every chunk, then (with ``whole``) of the whole period.

    The whole period's is the sum of the chunks' where they are independent; with
    ``noise="binning"`` they share each bin's calibration rate, so the whole period is the bins'
    cells pooled over the chunks (a sum of Binomials with one rate is Binomial).

    Parameters
    ----------
    windows : list of Window
        The chunks, then with ``whole`` the whole period (:func:`windows`); only their number
        is read unless ``noise="none"``.
    noise : {"none", "beta", "learned", "binning"}
    cells : dict of ndarray, optional
        The cells of V2 (:func:`bayeval.methods.cbpe.models.bin_cells`), for the noise models.
    beta_grid : (a, b, weights), optional
        :func:`~bayeval.methods.cbpe.kappa.beta_grid` of the cells, for the noise models.

    Returns
    -------
    list of CountLaw

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> ws = windows(np.array([0.7, 0.2, 0.9, 0.4]), make_chunks(4, n_chunks=2), np.asarray,
    ...              0.5)
    >>> laws = count_laws(ws, "none", None, None)
    >>> [law.n_pos for law in laws], [round(law.tp_moments()[0], 6) for law in laws]
    ([1, 1, 2], [0.7, 0.9, 1.6])
    """
    chunks = windows[:-1] if whole else windows
    if noise == "none":
        laws = [CountLaw.from_windows(pos.size, neg.size, pmf_above(pos, TOL),
                                      pmf_above(neg, TOL))
                for neg, pos in (w.sides() for w in chunks)]
        return with_whole(laws) if whole else laws
    a, b, weights = beta_grid
    laws = []
    for c in range(len(chunks)):
        mine = cells["chunk"] == c
        laws.append(CountLaw.beta_binomial(cells["n"][mine], a[:, mine], b[:, mine],
                                           cells["y_pred"][mine], weights))
    if not whole:
        return laws
    if noise != "binning":
        return with_whole(laws)
    _, first, where = np.unique(cells["bin"], return_index=True, return_inverse=True)
    n = np.bincount(where, weights=cells["n"]).astype(np.int64)
    # the whole period pools each bin's cells: the mean rate of the pool, the bin's variance
    means = np.array([np.bincount(where, weights=cells["n"] * row) for row in a / (a + b)]) / n
    pooled = shifted_beta(a[:, first], b[:, first], means - (a / (a + b))[:, first])
    return [*laws, CountLaw.beta_binomial(n, *pooled, cells["y_pred"][first], weights)]


def map_laws(laws: list[CountLaw], sums: list[MapSums], posterior: MapPosterior,
             split: bool, draws: Iterable[DrawPmfs | None] | None = None) -> list[CountLaw]:
    """Every window's law mixed over the calibration map's draws: exactly where ``draws`` has
    the window's :class:`~bayeval.calibration_map.DrawPmfs` (:meth:`CountLaw.from_draws`, the
    windows of at most :data:`~bayeval.calibration_map.EXACT_MAP_ROWS` rows), else by the
    shifts (:meth:`CountLaw.with_map`). ``draws`` may be an iterator, so that each window's
    draws are made when its law is (and not held for all windows at once).

    ``sums`` are the chunks' (:meth:`~bayeval.calibration_map.MapPosterior.sums`); the draws
    are shared by all windows, so the whole period's sums are the total of its chunks'.

    Examples
    --------
    >>> from bayeval.calibration import make_calibrator
    >>> from bayeval.calibration_map import map_posterior
    >>> from bayeval.chunks import make_chunks
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.random(300)
    >>> y = rng.random(300) < ref
    >>> cal = make_calibrator("platt", 0.5).fit(ref, y)
    >>> post = map_posterior(cal, ref, y, random_seed=0)
    >>> ws = windows(rng.random(400), make_chunks(400, n_chunks=2), cal.predict, 0.5)
    >>> laws = count_laws(ws, "none", None, None)
    >>> mixed = map_laws(laws, [post.sums(*w) for w in ws[:-1]], post, split=True)
    >>> [round(m.tp_moments()[1] / law.tp_moments()[1], 1) for m, law in zip(mixed, laws)]
    [1.6, 1.8, 2.4]
    """
    if len(laws) > len(sums):  # the whole period's too
        sums = [*sums, sum(sums[1:], sums[0])]
    draws = [None] * len(laws) if draws is None else draws
    return [law.with_map(*posterior.linear_many(s, [(1, False, None), (0, False, None)]).T,
                         split) if d is None
            else law.from_draws(d, split)
            for law, s, d in zip(laws, sums, draws, strict=True)]


# ---------------------------------------------------------------------------------------------
# the closed form


def threshold_grid(thresholds: tuple[np.ndarray, np.ndarray], n_chunks: int,
                   size: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper thresholds per (window, metric) of ``size`` windows: the
    ``n_chunks`` chunks', then NaN for the whole period, which the reference chunks do not
    compare to.

    Examples
    --------
    >>> lower, upper = threshold_grid((np.array([0.6]), np.array([0.9])), 2, 3)
    >>> lower.ravel().tolist(), upper.ravel().tolist()
    ([0.6, 0.6, nan], [0.9, 0.9, nan])
    """
    lower, upper = (np.tile(t, (size, 1)) for t in thresholds)
    lower[n_chunks:] = upper[n_chunks:] = np.nan
    return lower, upper


def window_labels(chunk_labels, size: int) -> list:
    """The labels of ``size`` windows: the chunks', then :data:`~bayeval.chunks.WHOLE` when
    there is one window more than chunks (the whole period's).

    Examples
    --------
    >>> window_labels(["a", "b"], 3), window_labels(["a", "b"], 2)
    (['a', 'b', 'all'], ['a', 'b'])
    """
    return [*chunk_labels, WHOLE][:size]


def closed_form(laws: list[CountLaw],
                auc: list[tuple[NormalLaw | MetricDistribution, float]] | None,
                expected: list[tuple[float, float]], chunk_labels, metrics, ci_prob: float,
                ci_kind: str, zero_division: float, beta: float,
                thresholds: tuple[np.ndarray, np.ndarray]) -> xr.Dataset:
    r"""The laws of every chunk (then the whole period) and metric, tabulated.

    For a metric :math:`g` and a window with count law ``laws[i]``: ``mean``, ``sd``, the
    ``ci_prob`` interval (``lower``, ``upper``) and its exact ``interval_mass``,
    ``p_undefined``, ``plugin`` (NannyML's :math:`g(\mathbb E\,TP,\mathbb E\,FN)`), ``exact``
    (False for ROC-AUC's normal law in long windows), the alert thresholds, ``alert`` (the mean
    outside them), ``p_alert`` (the law's mass outside them) and, when small
    (:data:`PMF_CELLS`), the exact PMFs ``pmf_value`` and ``pmf_prob`` over ``support``.

    Parameters
    ----------
    laws : list of CountLaw
        One per chunk, then the whole period's (if there is one more law than chunks).
    auc : list of (NormalLaw or MetricDistribution, float), optional
        ROC-AUC's law and NannyML's estimate per window
        (:func:`bayeval.methods.cbpe.auc.window_auc_law`), when ``metrics`` has ``roc_auc``.
    expected : list of (float, float)
        :math:`(\mathbb E\,TP, \mathbb E\,FN)` per window.
    chunk_labels : sequence of str
        The chunks' labels (the whole period is :data:`bayeval.chunks.WHOLE`).
    metrics : sequence of str
    ci_prob, ci_kind : float, {"eti", "hdi"}
    zero_division, beta : float
    thresholds : (lower, upper)
        Alert thresholds per metric (NaN: none).

    Returns
    -------
    xarray.Dataset
        The variables above over ``(chunk, metric)``.

    Examples
    --------
    Three rows predicted 1, 1, 0 with probabilities 0.9, 0.8, 0.3: the number right is
    :math:`Y_1+Y_2+(1-Y_3)`, below the threshold 0.5 (accuracy 0 or 1/3) with probability
    :math:`0.1\cdot0.2\cdot0.3+0.9\cdot0.2\cdot0.3+0.1\cdot0.8\cdot0.3+0.1\cdot0.2\cdot0.7
    =0.098`:

    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.8, 0.3]), np.array([1, 1, 0]))
    >>> ds = closed_form([law, law], None, [(1.7, 0.3)] * 2, ["c"], ["accuracy"], 0.95, "eti",
    ...                  0.0, 1.0, (np.array([0.5]), np.array([1.0])))
    >>> ds["mean"].round(4).values.tolist(), ds["p_alert"].round(4).values.tolist()
    ([[0.8], [0.8]], [[0.098], [nan]])
    """
    size, k = len(laws), len(metrics)
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin",
             "p_alert")
    out = {v: np.full((size, k), np.nan) for v in names}
    lower_thr, upper_thr = threshold_grid(thresholds, len(chunk_labels), size)

    def cell(i, j):
        metric, count_law, (tp, fn) = metrics[j], laws[i], expected[i]
        if metric == "roc_auc":
            law, plugin = auc[i]
        else:
            law = count_law.law(metric, zero_division, beta)
            plugin = metric_value(metric, tp, count_law.n_pos - tp, fn, count_law.n_neg - fn,
                                  beta, zero_division)
        normal = isinstance(law, NormalLaw)
        lo, hi = law.interval(ci_prob, ci_kind) if normal else law.interval_ends(ci_prob, ci_kind)
        mass = ci_prob if normal else min(law.mass(lo, hi), 1.0)  # a sum that rounds above 1
        alert = (1.0 - law.mass(lower_thr[i, j], upper_thr[i, j])
                 if np.isfinite(lower_thr[i, j]) or np.isfinite(upper_thr[i, j]) else np.nan)
        return law, (law.mean, law.sd, lo, hi, mass, law.p_undefined, plugin, alert)

    pmfs, exact = {}, np.ones((size, k), bool)
    for i, j in product(range(size), range(k)):
        law, values = cell(i, j)
        for name, value in zip(names, values, strict=True):
            out[name][i, j] = value
        exact[i, j] = not isinstance(law, NormalLaw)
        if isinstance(law, MetricDistribution) and not law.lazy:
            pmfs[i, j] = law
    dims = ("chunk", "metric")
    variables = {v: (dims, out[v]) for v in names[:-1]}
    variables.update(exact=(dims, exact), lower_threshold=(dims, lower_thr),
                     upper_threshold=(dims, upper_thr),
                     alert=(dims, (out["mean"] < lower_thr) | (out["mean"] > upper_thr)),
                     p_alert=(dims, out["p_alert"]))
    widest = max((d.values.size for d in pmfs.values()), default=0)
    if pmfs and size * k * widest <= PMF_CELLS:
        values, probs = np.full((size, k, widest), np.nan), np.full((size, k, widest), np.nan)
        for (i, j), d in pmfs.items():
            values[i, j, : d.values.size], probs[i, j, : d.values.size] = d.values, d.probs
        variables.update(pmf_value=((*dims, "support"), values),
                         pmf_prob=((*dims, "support"), probs))
    return xr.Dataset(variables, coords={"chunk": window_labels(chunk_labels, size),
                                         "metric": list(metrics)})
