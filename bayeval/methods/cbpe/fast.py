r"""CBPE's fast paths: exact laws of the metrics of a window from the laws of its counts.

Given the predictions, a window's confusion matrix is fixed by :math:`(TP, FN)`
(:math:`FP=n_+-TP`, :math:`TN=n_--FN`), and in every CBPE model the two counts are independent
given a component :math:`j` of a mixture (``specs/cbpe.md`` §5):

.. math:: P(TP=t, FN=f)=\sum_j w_j\,a_j(t)\,b_j(f).

One component for V0 (:math:`a, b` Poisson-binomial) and V2 (convolutions of Beta-binomials),
the grid over :math:`\kappa` for V2b. :class:`CountLaw` holds this law, cut (like
:mod:`bayeval.confusion`) to the counts of probability above :data:`~bayeval.confusion.TOL`.
A metric :math:`g(TP, FN)` then has

* for accuracy, precision and NPV, which depend on one count (:math:`TP+TN`, :math:`TP`,
  :math:`FN`), a one-dimensional exact PMF;
* for the others, while the grid has at most :data:`GRID_CELLS` cells, the exact PMF pushed
  forward from the grid (as :func:`bayeval.confusion.metric_distribution`);
* beyond that, the same law kept lazy (:func:`bayeval.confusion.count_distribution`, mixing
  the components): exact mean, sd, masses and equal-tailed interval without enumerating the
  grid, in :math:`O(w\log w)` for windows of width :math:`w`.

Undefined values (a zero denominator) depend on :math:`S` only and follow ``zero_division``
as in :class:`bayeval.confusion.MetricDistribution`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from bayeval.confusion import TOL, MetricDistribution, count_distribution
from bayeval.metrics import metric_value
from bayeval.poibin import convolve, truncated_pmf

__all__ = ["GRID_CELLS", "ONE_COUNT", "CountLaw", "NormalLaw", "beta_binomial_pmf"]

ONE_COUNT = ("accuracy", "precision", "npv")
"""Metrics that depend on one count: their PMF is always computed whole."""

GRID_CELLS = 250_000
"""Two-count metrics whose (TP, FN) grid has more cells get a lazy law."""


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
        (ts, tp), (fs, fn) = (truncated_pmf(np.compress(side, p), tol=TOL) for side in (pos, ~pos))
        return cls(int(pos.sum()), int((~pos).sum()), ts, (tp / tp.sum())[None, :], fs,
                   (fn / fn.sum())[None, :], np.ones(1))

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
            rows = np.array([convolve(*(pmf[j] for _, pmf in parts)) for j in
                             range(a.shape[0])]) if parts else np.ones((a.shape[0], 1))
            sides.append(_trim(start, rows))
        (ts, tp), (fs, fn) = sides
        return cls(int(n[y_pred == 1].sum()), int(n[y_pred == 0].sum()), ts, tp, fs, fn,
                   np.asarray(weights, float))

    def __add__(self, other: CountLaw) -> CountLaw:
        """Law of the summed counts of two windows, independent given the component."""
        def conv(a, b):
            return np.array([convolve(x, y) for x, y in zip(a, b, strict=True)])

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
        :data:`GRID_CELLS` cells, else lazy (:func:`bayeval.confusion.count_distribution`)."""
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
                (self.weights @ np.array([convolve(a, b[::-1]) for a, b in
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

    def _lazy(self, metric: str, zero_division: float, beta: float) -> MetricDistribution:
        return count_distribution(
            metric, self.n_pos, self.n_neg, self.tp_start + np.arange(self.tp.shape[1]), self.tp,
            self.fn_start + np.arange(self.fn.shape[1]), self.fn, self.weights, beta=beta,
            zero_division=zero_division)


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
