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
* beyond that, :class:`ConditionalLaw`: the exact mean, sd, CDF and equal-tailed interval
  without enumerating the grid. Given :math:`S=TP+FN=s`, every metric is affine in :math:`TP`,
  :math:`g=\alpha(s)+\beta(s)\,TP` (:math:`FN=s-TP`), so with
  :math:`m_k(s)=\sum_t t^k P(TP=t, S=s)`, three convolutions,

  .. math:: \mathbb E\,g=\sum_s \alpha(s)\,m_0(s)+\beta(s)\,m_1(s),\qquad
            \mathbb E\,g^2=\sum_s \alpha^2m_0+2\alpha\beta\, m_1+\beta^2m_2 ;

  and every metric is non-decreasing in :math:`TP` for fixed :math:`FN` (for MCC: the
  derivative in :math:`TP` has the sign of :math:`\varphi(n_--2f)+f\ge0`), so
  :math:`P(g\le v)=\sum_f P(FN=f)\,P(TP\le t^*(f, v))` with :math:`t^*` found by a vectorised
  bisection. Quantiles are bracketed, then the few support points inside the bracket are
  enumerated: exact, at :math:`O(w\log w)` cost for windows of width :math:`w`.

Undefined values (a zero denominator) depend on :math:`S` only and follow ``zero_division``
as in :class:`bayeval.confusion.MetricDistribution`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.fft
from scipy import special

from bayeval.confusion import TOL, MetricDistribution
from bayeval.metrics import metric_value
from bayeval.poibin import convolve, truncated_pmf

__all__ = ["GRID_CELLS", "ONE_COUNT", "ConditionalLaw", "CountLaw", "NormalLaw",
           "beta_binomial_pmf"]

ONE_COUNT = ("accuracy", "precision", "npv")
"""Metrics that depend on one count: their PMF is always computed whole."""

GRID_CELLS = 250_000
"""Two-count metrics whose (TP, FN) grid has more cells use :class:`ConditionalLaw`."""

HDI_CELLS = 30_000_000
"""The shortest interval needs the whole PMF; refused beyond this many grid cells."""

_ENUMERATE = 1 << 13  # a quantile's bracket is halved until it holds this many cells


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
        (ts, tp), (fs, fn) = (truncated_pmf(p[side], tol=TOL) for side in (pos, ~pos))
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

    def law(self, metric: str, zero_division: float = 0.0, beta: float = 1.0):
        """The exact law of ``metric``: a MetricDistribution, or a ConditionalLaw if large."""
        if metric in ONE_COUNT:
            return self._one_count(metric, zero_division)
        if self.cells <= GRID_CELLS or min(self.tp.shape[1], self.fn.shape[1]) == 1:
            return self.grid(metric, zero_division, beta)
        return ConditionalLaw(self, metric, zero_division, beta)

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
        return _distribution(metric, values, probs, zero_division)

    def grid(self, metric: str, zero_division: float = 0.0,
             beta: float = 1.0) -> MetricDistribution:
        """The exact PMF of ``metric`` pushed forward from the whole (TP, FN) grid."""
        joint = (self.tp.T * self.weights) @ self.fn
        tp = self.tp_start + np.arange(self.tp.shape[1], dtype=float)[:, None]
        fn = self.fn_start + np.arange(self.fn.shape[1], dtype=float)[None, :]
        values = metric_value(metric, tp, self.n_pos - tp, fn, self.n_neg - fn, beta, np.nan)
        return _distribution(metric, np.ravel(values), joint.ravel(), zero_division)


def _distribution(metric: str, values: np.ndarray, probs: np.ndarray,
                  zero_division: float) -> MetricDistribution:
    """Merge equal values; the undefined (NaN) cells follow ``zero_division``."""
    undefined = np.isnan(values)
    p_undefined = float(probs[undefined].sum())
    if not np.isnan(zero_division):
        values = np.where(undefined, zero_division, values)
    elif undefined.all():
        values, probs = np.full(1, np.nan), np.ones(1)
    else:
        values, probs = values[~undefined], probs[~undefined] / (1.0 - p_undefined)
    support, where = np.unique(values, return_inverse=True)
    merged = np.bincount(where.ravel(), weights=probs, minlength=support.size)
    support.flags.writeable = merged.flags.writeable = False
    return MetricDistribution(metric, support, merged, min(p_undefined, 1.0), zero_division)


class ConditionalLaw:
    r"""Exact mean, sd, CDF and equal-tailed interval of a two-count metric, without its grid.

    See the module docstring for the method. ``interval(kind="hdi")`` needs the whole PMF and
    computes the grid (refused beyond :data:`HDI_CELLS` cells).

    Parameters
    ----------
    law : CountLaw
        The window's law of (TP, FN).
    metric : str
        A metric of two counts (recall, specificity, F1, F-beta, balanced accuracy, MCC).
    zero_division : {0.0, 1.0, nan}
        Value where the metric is undefined.
    beta : float
        Weight of recall in F-beta.

    Examples
    --------
    On 4,000 rows the (TP, FN) grid still fits in memory, so both can be compared: the same
    mean, interval and CDF, without enumerating the grid.

    >>> rng = np.random.default_rng(0)
    >>> s = rng.beta(2, 2, 4000)
    >>> law = CountLaw.poisson_binomial(s, (s >= 0.5).astype(int))
    >>> f1, grid = ConditionalLaw(law, "f1", 0.0, 1.0), law.grid("f1")
    >>> [round(v, 6) for v in f1.interval(0.95)], f1.interval(0.95) == grid.interval(0.95)
    ([0.675484, 0.704378], True)
    >>> round(f1.cdf(0.7), 6), round(grid.mass(-1.0, 0.7), 6)
    (0.912907, 0.912907)
    >>> bool(abs(f1.mean - grid.mean) < 1e-12)
    True
    """

    def __init__(self, law: CountLaw, metric: str, zero_division: float, beta: float) -> None:
        self.count_law, self.metric = law, metric
        self.zero_division, self.beta = zero_division, beta
        self._mean, self._sd, self.p_undefined = self._moments()
        self._tp_cdf = np.concatenate([np.zeros((law.tp.shape[0], 1)),
                                       np.cumsum(law.tp, axis=1)], axis=1)
        self._fn_weighted = law.fn * law.weights[:, None]
        # the cell (TP, FN) = (0, 0) is undefined for some metrics and sits first in its row
        zero = np.zeros(1, dtype=np.int64)
        origin = law.tp_start == 0 and law.fn_start == 0 and np.isnan(self._values(zero, zero)[0])
        self._origin = float(law.weights @ (law.tp[:, 0] * law.fn[:, 0])) if origin else 0.0

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def sd(self) -> float:
        return self._sd

    def _values(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Metric at grid indices (a into tp, b into fn); NaN where undefined."""
        law = self.count_law
        tp, fn = law.tp_start + a.astype(float), law.fn_start + b.astype(float)
        return np.asarray(metric_value(self.metric, tp, law.n_pos - tp, fn, law.n_neg - fn,
                                       self.beta, np.nan))

    def _moments(self) -> tuple[float, float, float]:
        law = self.count_law
        w_t, w_f = law.tp.shape[1], law.fn.shape[1]
        centre = (law.weights @ law.tp) @ np.arange(w_t)
        u = np.arange(w_t) - centre
        size = scipy.fft.next_fast_len(w_t + w_f - 1, real=True)
        spectra = scipy.fft.rfft(np.stack([law.tp, u * law.tp, u**2 * law.tp]), size, axis=-1)
        spectra *= scipy.fft.rfft(law.fn, size, axis=-1) * law.weights[:, None]
        m0, m1, m2 = scipy.fft.irfft(spectra.sum(axis=1), size, axis=-1)[:, : w_t + w_f - 1]
        # per s = tp_start + fn_start + k: the valid TP indices [a1, a2], g affine between them
        k = np.arange(w_t + w_f - 1)
        a1, a2 = np.maximum(0, k - (w_f - 1)), np.minimum(w_t - 1, k)
        g1, g2 = self._values(a1, k - a1), self._values(a2, k - a2)
        slope = np.where(a2 > a1, (g2 - g1) / np.maximum(a2 - a1, 1), 0.0)
        level = g1 + slope * (centre - a1)  # g = level + slope * u
        defined = ~np.isnan(g1)
        p_undefined = float(np.clip(m0[~defined].sum(), 0.0, 1.0))
        level, slope, m0, m1, m2 = (x[defined] for x in (level, slope, m0, m1, m2))
        mass = m0.sum()
        zd = self.zero_division
        mean = float(level @ m0 + slope @ m1)
        if np.isnan(zd):
            mean /= mass
        else:
            mean += zd * p_undefined
        d = level - mean
        var = float(d**2 @ m0 + 2 * (d * slope) @ m1 + slope**2 @ m2)
        var = var / mass if np.isnan(zd) else var + (zd - mean) ** 2 * p_undefined
        return mean, float(np.sqrt(max(var, 0.0))), p_undefined

    def _counted(self, a: np.ndarray, b: np.ndarray, v: float, strict: bool) -> np.ndarray:
        """Whether cell (a, b) counts below ``v``; the undefined (0, 0) cell as -inf, others +inf.
        """
        g = self._values(a, b)
        g = np.where(np.isnan(g), np.where(self.count_law.tp_start + a == 0, -np.inf, np.inf), g)
        return np.isneginf(g) | ((g < v) if strict else (g <= v))

    def _guess(self, v: float, b: np.ndarray) -> np.ndarray | None:
        r"""Per FN index, the TP count at which a linear-fractional metric crosses ``v``.

        :math:`g(t,f)\le v` solved for :math:`t` (recall :math:`t\le vf/(1-v)`,
        :math:`F_\beta` :math:`t\le v(\beta^2f+n_+)/(1+\beta^2-v\beta^2)`, specificity
        :math:`t\le n_+-(n_--f)(1-v)/v`), up to rounding; None for other metrics.
        """
        law, fn = self.count_law, self.count_law.fn_start + b
        b2 = 1.0 if self.metric == "f1" else self.beta**2
        if not 0.0 < v < 1.0 or (self.metric == "fbeta" and not np.isfinite(b2)):
            return None
        if self.metric == "recall":
            x = v * fn / (1.0 - v)
        elif self.metric in ("f1", "fbeta"):
            x = v * (b2 * fn + law.n_pos) / (1.0 + b2 - v * b2)
        elif self.metric == "specificity":
            x = law.n_pos - (law.n_neg - fn) * (1.0 - v) / v
        else:
            return None
        return np.floor(np.clip(x - law.tp_start, -1.0, law.tp.shape[1])).astype(np.int64) + 1

    def _below(self, v: float, strict: bool = False, lo: np.ndarray | None = None,
               hi: np.ndarray | None = None) -> np.ndarray:
        """Per FN index: how many TP indices have g <= v (g < v if ``strict``), by bisection.

        ``lo`` and ``hi`` bound the answers (counts at smaller and larger values). For the
        linear-fractional metrics the solved crossing is confirmed (or corrected by one) from
        the four cells around it, and the bisection is left for the rows where it is not.
        """
        law = self.count_law
        w_t, w_f = law.tp.shape[1], law.fn.shape[1]
        lo = np.zeros(w_f, dtype=np.int64) if lo is None else lo.copy()
        hi = np.full(w_f, w_t, dtype=np.int64) if hi is None else hi.copy()
        b = np.arange(w_f)
        guess = self._guess(v, b)
        if guess is not None:  # cells t - 1 .. t + 2 around t = guess - 1, in one evaluation
            t = np.clip(guess - 1, lo, hi)
            cells = t + np.arange(-1, 3)[:, None]
            counted = self._counted(np.clip(cells, 0, w_t - 1).ravel(), np.tile(b, 4), v,
                                    strict).reshape(4, -1) & (cells >= lo) & (cells < hi)
            # the answer is in [t, t + 2] if cell t - 1 counts (or t = lo) and t + 2 does not
            ok = ((t == lo) | counted[0]) & ~counted[3]
            answer = t + counted[1] + (counted[1] & counted[2])
            lo, hi = np.where(ok, answer, lo), np.where(ok, answer, hi)
        while (active := np.flatnonzero(lo < hi)).size:
            mid = (lo[active] + hi[active]) // 2
            counted = self._counted(mid, active, v, strict)
            lo[active] = np.where(counted, mid + 1, lo[active])
            hi[active] = np.where(counted, hi[active], mid)
        return lo

    def _cdf_at(self, counts: np.ndarray, v: float, strict: bool = False) -> float:
        """P(g <= v) (or < v) from the counts of ``_below``."""
        cdf = float(np.sum(self._fn_weighted * np.take_along_axis(
            self._tp_cdf, np.broadcast_to(counts, self._fn_weighted.shape), axis=1)))
        cdf -= self._origin  # the undefined cell counted as -inf by the bisection
        zd = self.zero_division
        if np.isnan(zd):
            return cdf / (1.0 - self.p_undefined)
        return cdf + self.p_undefined * float(zd < v if strict else zd <= v)

    def cdf(self, v: float, strict: bool = False) -> float:
        """:math:`P(g\\le v)`, or :math:`P(g<v)` with ``strict``."""
        return self._cdf_at(self._below(v, strict), v, strict)

    def mass(self, lower: float, upper: float) -> float:
        """P(lower <= metric <= upper)."""
        return self.cdf(upper) - self.cdf(lower, strict=True)

    def quantile(self, q: float) -> float:
        r""":math:`\min\{v \in \text{support}: P(g\le v)\ge q\}`, exactly.

        A bracket :math:`(v_0, v_1]` with :math:`F(v_0)<q\le F(v_1)` is grown from the normal
        approximation, then halved while it holds many support points; those are enumerated.
        """
        step = 0.005 * self.sd
        guess = self.mean + special.ndtri(q) * self.sd
        lo, hi = guess - step, guess + step
        c_lo, c_hi = self._below(lo), None
        while self._cdf_at(c_lo, lo) >= q:
            hi, c_hi = lo, c_lo
            lo, step = lo - step, 2 * step
            c_lo = self._below(lo, hi=c_hi)
        if c_hi is None:
            c_hi = self._below(hi, lo=c_lo)
            while self._cdf_at(c_hi, hi) < q:
                lo, c_lo = hi, c_hi
                hi, step = hi + step, 2 * step
                c_hi = self._below(hi, lo=c_lo)
        while (c_hi - c_lo).sum() > _ENUMERATE:
            mid = (lo + hi) / 2
            c_mid = self._below(mid, lo=c_lo, hi=c_hi)
            if self._cdf_at(c_mid, mid) >= q:
                hi, c_hi = mid, c_mid
            else:
                lo, c_lo = mid, c_mid
        return self._enumerate(q, (lo, hi), c_lo, c_hi)

    def _enumerate(self, q: float, bracket: tuple[float, float], c_lo: np.ndarray,
                   c_hi: np.ndarray) -> float:
        """The quantile from the support points in the bracket (lo, hi], counted from F(lo)."""
        lo, hi = bracket
        law = self.count_law
        runs = c_hi - c_lo
        b = np.repeat(np.arange(runs.size), runs)
        a = np.repeat(c_lo - np.cumsum(runs) + runs, runs) + np.arange(runs.sum())
        values = self._values(a, b)
        probs = law.weights @ (law.tp[:, a] * law.fn[:, b])
        defined = ~np.isnan(values)
        values, probs = values[defined], probs[defined]
        zd = self.zero_division
        if np.isnan(zd):
            probs = probs / (1.0 - self.p_undefined)
        elif lo < zd <= hi:
            values, probs = np.r_[values, zd], np.r_[probs, self.p_undefined]
        order = np.argsort(values)  # equal values: the same quantile in any order
        cum = self._cdf_at(c_lo, lo) + np.cumsum(probs[order])
        hit = min(int(np.searchsorted(cum, q, side="left")), order.size - 1)
        return float(values[order][hit])

    def interval(self, ci_prob: float = 0.95, kind: str = "eti") -> tuple[float, float]:
        """Equal-tailed interval; ``hdi`` and ``paper_hdi`` from the whole PMF."""
        if kind != "eti":
            return self.distribution.interval(ci_prob, kind)
        alpha = 1.0 - ci_prob
        return self.quantile(alpha / 2), self.quantile(1 - alpha / 2)

    @cached_property
    def distribution(self) -> MetricDistribution:
        """The whole PMF (the grid), for the shortest interval."""
        law = self.count_law
        if law.cells > HDI_CELLS:
            raise ValueError(f"ci_kind='hdi' needs the whole PMF of {self.metric}, whose grid "
                             f"has {law.cells:.2g} cells here (limit {HDI_CELLS:.0e}); use "
                             "ci_kind='eti' (exact at any size) or smaller chunks.")
        return law.grid(self.metric, self.zero_division, self.beta)


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
