r"""Poisson-binomial distribution: exact PMF by divide-and-conquer convolution.

:math:`K=\sum_{i=1}^n Y_i` with independent :math:`Y_i\sim\mathrm{Bernoulli}(p_i)` has the PMF whose
generating function is :math:`\prod_i(1-p_i+p_i z)`. The product is formed by direct recursion on
blocks of trials, then the blocks are multiplied pairwise (directly while short, then by real FFT),
which costs :math:`O(n\log^2 n)`. Trials with :math:`p_i\in\{0,1\}` are factored out exactly.

Each intermediate product is cut to the window :math:`|k-\mu|\le t` outside which Bernstein's
inequality bounds its mass by ``_DROP`` (:math:`10^{-30}`); with :math:`L=\ln(2/\delta)`,

.. math:: P(|K-\mu|\ge t)\le 2\exp\!\Big(-\frac{t^2}{2(\sigma^2+t/3)}\Big)=\delta
          \iff t=\tfrac L3+\sqrt{\tfrac{L^2}9+2L\sigma^2}.

The cut changes no probability by more than the total cut mass (< 1e-20 for any feasible n), far
below the FFT round-off (about 1e-16 of the largest mass), and keeps the top-level products
:math:`O(\sigma)` long instead of :math:`O(n)`.

Where the variance :math:`\sigma^2` is large (above 163 and at least :math:`n/64`), the PMF on
that window comes instead from the characteristic function, expanded around :math:`p=\frac12`
in the power sums of :math:`p_i-\frac12` and inverted by one short FFT: :math:`O(nK)` with
:math:`K\le30` terms, 15-25 times faster at :math:`n\ge10^4`, to the same round-off.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import scipy

from bayeval.validation import as_array, as_probabilities, as_scores, as_seed

__all__ = ["UNDERFLOW", "PoissonBinomial", "convolve", "convolve_pmfs", "log_ends", "pmf_above",
           "pmf_rows", "truncated_pmf"]

_BLOCK = 16  # trials per leaf product, formed by direct recursion
_DIRECT = 65  # rows (and `convolve` inputs) at most this long are convolved directly
_DROP = 1e-30  # mass bound cut from each intermediate product (Bernstein window)
_LOG_DROP = math.log(2.0 / _DROP)
_FFT_TOL = 1e-12  # absolute error allowed for an FFT convolution in `convolve`
_CF_LOG_TINY = 75.0  # frequencies where |chi| <= exp(-75) are dropped
_CF_MIN_VAR = _CF_LOG_TINY / (1.0 - math.cos(1.0))  # the kept frequencies stay below 1
_CF_TERMS = 30  # most series terms of the characteristic-function path

UNDERFLOW = 800.0
r"""A sum of probabilities past which :math:`P(K=0)` (or, for the complements,
:math:`P(K=n)`) is 0 in double precision: :math:`\log(1-p)\le-p`, so
:math:`\prod_i(1-p_i)\le e^{-800}`, below the smallest double (about :math:`e^{-744.4}`)."""


def log_ends(p: np.ndarray, total: np.ndarray | float | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\log P(K=0)=\sum_i\log(1-p_i)` and :math:`\log P(K=n)=\sum_i\log p_i` of
    :math:`K\sim\mathrm{PB}(p)` along the last axis of validated ``p`` (``total``: its sums
    :math:`\sum_ip_i`, if known).

    Where :math:`\sum_ip_i` (or :math:`\sum_i(1-p_i)`) exceeds :data:`UNDERFLOW` the
    logarithms are not taken: the answer is :math:`-\infty`, whose exponential, 0, is that of
    the sum.

    Examples
    --------
    >>> np.exp(log_ends(np.array([0.5, 0.5])))  # P(K = 0), P(K = 2)
    array([0.25, 0.25])
    >>> log_ends(np.full(2000, 0.5))  # 1,000 expected of each: both products are 0
    (array(-inf), array(-inf))
    """
    total = p.sum(-1) if total is None else total
    rows, totals = p.reshape(math.prod(p.shape[:-1]), p.shape[-1]), np.reshape(total, -1)
    out = np.full((2, rows.shape[0]), -np.inf)
    for k, (far, log) in enumerate(((totals > UNDERFLOW, lambda x: np.log1p(-x)),
                                    (rows.shape[1] - totals > UNDERFLOW, np.log))):
        near = np.flatnonzero(~far)
        if near.size:
            with np.errstate(divide="ignore"):  # p of 0 or 1: a product of 0
                out[k, near] = log(rows[near]).sum(1)
    return out[0].reshape(p.shape[:-1]), out[1].reshape(p.shape[:-1])


def _as_p(p: Any) -> np.ndarray:
    """Validated 1-D probabilities; empty is a valid n = 0."""
    arr = as_array(p, "p", allow_empty=True)
    return as_probabilities(arr, "p") if arr.size else arr


def _blocks(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients of prod_i (1 - p_i + p_i z) over consecutive blocks of p, one row per block,
    and the blocks' p (zero padded: p = 0 is the factor 1).

    Leaves of ``_BLOCK`` trials by direct recursion, then pairwise direct convolution while rows
    are at most ``_DIRECT`` long. Both run on the transposed (coefficient, block) layout, so each
    step works on whole contiguous rows, and both are exact to relative round-off per entry; the
    FFT only starts on long rows, where its round-off noise is smallest.
    """
    size = min(_BLOCK, p.size)
    leaves = -(-p.size // size)
    merges = 0
    while 2**merges < leaves and size * 2**merges + 1 <= _DIRECT:
        merges += 1
    leaves = -(-leaves // 2**merges) * 2**merges
    padded = np.zeros(leaves * size)
    padded[: p.size] = p
    return _leaf_products(padded.reshape(leaves, size), merges)


def _leaf_products(leaves: np.ndarray, merges: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_blocks` of the rows of ``leaves`` (each a block of trials), then ``merges``
    rounds of pairwise direct convolution of neighbouring rows."""
    size = leaves.shape[1]
    pp = leaves.T.copy()
    qq = 1.0 - pp
    out = np.zeros((size + 1, leaves.shape[0]))
    out[0] = 1.0
    for j in range(size):
        step = out[: j + 1] * pp[j]
        out[: j + 2] *= qq[j]
        out[1 : j + 2] += step
    for _ in range(merges):
        a, b, w = out[:, 0::2], out[:, 1::2], out.shape[0]
        out = np.zeros((2 * w - 1, a.shape[1]))
        for j in range(w):
            out[j : j + w] += a[j] * b
    return np.ascontiguousarray(out.T), leaves.reshape(out.shape[1], -1)


def _conv_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise full convolution of two equally shaped 2-D arrays by real FFT, clipped at 0."""
    w = a.shape[1]
    nfft = scipy.fft.next_fast_len(2 * w - 1, real=True)
    fa = scipy.fft.rfft(a, nfft, axis=1, workers=-1)
    fa *= scipy.fft.rfft(b, nfft, axis=1, workers=-1)
    out = scipy.fft.irfft(fa, nfft, axis=1, workers=-1)[:, : 2 * w - 1]
    return np.maximum(out, 0.0, out=out)


def _bernstein(var):
    """Half-width t of the window |k - mu| <= t outside which at most _DROP of the mass lies."""
    return _LOG_DROP / 3 + np.sqrt(_LOG_DROP**2 / 9 + 2 * _LOG_DROP * var)


def _cut(rows: np.ndarray, off: np.ndarray, mu: np.ndarray,
         var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Restrict every row to a common width covering its Bernstein window |k - mu| <= t."""
    width = rows.shape[1]
    t = _bernstein(var)
    lo = np.maximum(np.ceil(mu - t).astype(np.int64) - off, 0)
    hi = np.minimum(np.floor(mu + t).astype(np.int64) - off, width - 1)
    new = int((hi - lo).max()) + 1
    if new >= width:
        return rows, off
    lo = np.minimum(lo, width - new)
    return np.take_along_axis(rows, lo[:, None] + np.arange(new), axis=1), off + lo


def _series(coefficients: np.ndarray, x: np.ndarray, first: int) -> np.ndarray:
    """sum_k coefficients[k] x**(first + 2k), by Horner's rule in x**2."""
    x2, out = x * x, np.zeros_like(x)
    for c in coefficients[::-1]:
        out = out * x2 + c
    return out * x**first


def _tangent_numbers(count: int) -> list[int]:
    """T_1, T_3, ... with tan x = sum_j T_(2j-1) x^(2j-1) / (2j-1)!, exactly (Brent and
    Zimmermann, Modern Computer Arithmetic, algorithm TangentNumbers)."""
    t = [0, 1] + [0] * (count - 1)
    for k in range(2, count + 1):
        t[k] = (k - 1) * t[k - 1]
    for k in range(2, count + 1):
        for j in range(k, count + 1):
            t[j] = (j - k) * t[j - 1] + (j - k + 2) * t[j]
    return t[1:]


#: coefficients of x^3, x^5, ... in tan x - x and in w - sin w
_TAN = np.array([float(Fraction(t, math.factorial(2 * j + 1)))
                 for j, t in enumerate(_tangent_numbers(22))][1:])
_SIN = np.array([float(Fraction((-1) ** k, math.factorial(2 * k + 3))) for k in range(12)])


def _cf_terms(n: int, r: float) -> int | None:
    """Fewest series terms K with remainder n r^(K+1) / ((K+1)(1-r)) <= 1e-17, if <= 30."""
    if r >= 0.5:
        return None
    return next((k for k in range(1, _CF_TERMS + 1)
                 if n * r ** (k + 1) / ((k + 1) * (1 - r)) <= 1e-17), None)


def _window_cf(p: np.ndarray, mu: float, var: float) -> tuple[int, np.ndarray] | None:
    r"""(start, probs) of PB(p) from its characteristic function, or None where too costly.

    Around a centre :math:`c\in\{0,\frac12,1\}`, with :math:`d_i=p_i-c`,
    :math:`D_k=\sum_id_i^k`, :math:`x=\omega/2` and :math:`z=(e^{i\omega}-1)/(1-c+ce^{i\omega})`
    (:math:`2i\tan x` for :math:`c=\frac12`, :math:`2i\sin x\,e^{\pm ix}` for :math:`c=0, 1`),
    :math:`1-p+pe^{i\omega}=(1-c+ce^{i\omega})(1+d\,z)`, so

    .. math:: \log\chi(\omega)=i\omega\mu+n\,h_c(\omega)+(z-i\omega)D_1
              +\sum_{k=2}^K\frac{(-1)^{k+1}z^k}{k}D_k,

    :math:`h_{1/2}=\log\cos x`, :math:`h_0=h_1=0`; the series is truncated where its
    remainder (ratio :math:`r=|z|\max|d_i|`) is below 1e-17 in all. As
    :math:`|\chi(\omega)|\le e^{-\sigma^2(1-\cos\omega)}`, only frequencies where that bound
    exceeds :math:`e^{-75}` are kept, and the PMF on the Bernstein window
    :math:`[\mu-t,\mu+t]` is one inverse real FFT of :math:`m\ge2t+1` points (mass aliased from
    outside: below ``_DROP``). No large angle is rounded: the phase
    :math:`\omega(\mu-\text{start})` is one product, :math:`z-i\omega` comes from the series of
    :math:`\tan x-x` or :math:`\omega-\sin\omega`, :math:`\log\cos x` is
    :math:`\frac12\log(1-\sin^2x)`. The centre needing the fewest terms is used, provided the
    real parts of the leading terms, each about ``load`` :math:`/\sigma^2` times their sum
    (``load`` is :math:`n/4`, :math:`\mu` or :math:`n-\mu`), lose at most four bits to
    cancellation: cost :math:`O(nK)`, :math:`K\le30`, instead of :math:`O(n\log^2n)`,
    absolute error about 1e-16.
    """
    if var < _CF_MIN_VAR:
        return None
    n = p.size
    w_max = math.acos(1.0 - _CF_LOG_TINY / var)
    lo, hi = float(p.min()), float(p.max())
    options = []
    for centre, scale, spread, load in (
            (0.5, 2 * math.tan(w_max / 2), max(hi - 0.5, 0.5 - lo), n / 4),
            (0.0, 2 * math.sin(w_max / 2), hi, mu),
            (1.0, 2 * math.sin(w_max / 2), 1.0 - lo, n - mu)):
        terms = _cf_terms(n, scale * spread)
        if terms is not None and load <= 16 * var:
            options.append((terms, centre))
    if not options:
        return None
    terms, centre = min(options)
    t = _bernstein(var)
    start, stop = max(math.ceil(mu - t), 0), min(math.floor(mu + t), n)
    m = scipy.fft.next_fast_len(stop - start + 1, real=True)
    omega = 2 * math.pi * np.arange(min(m // 2, int(w_max * m / (2 * math.pi)) + 1) + 1) / m
    x = omega / 2
    d = p - centre
    powers, sums = d.copy(), []
    for k in range(terms):
        sums.append(float(powers.sum()))
        if k + 1 < terms:
            powers *= d
    sin_x = np.sin(x)
    if centre == 0.5:
        z = 2j * np.tan(x)
        log_chi = n / 2 * np.log1p(-sin_x**2) + 2j * _series(_TAN, x, 3) * sums[0]
    else:
        z = 2j * sin_x * np.exp((1j - 2j * centre) * x)
        log_chi = ((2 * centre - 1) * 2 * sin_x**2 - 1j * _series(_SIN, omega, 3)) * sums[0]
    log_chi = log_chi + 1j * omega * ((centre * n - start) + sums[0])
    zk = z
    for k in range(2, terms + 1):
        zk = zk * z
        log_chi += (-1) ** (k + 1) * zk * (sums[k - 1] / k)
    spectrum = np.zeros(m // 2 + 1, dtype=complex)
    spectrum[: omega.size] = np.conj(np.exp(log_chi))
    probs = np.maximum(scipy.fft.irfft(spectrum, m)[: stop - start + 1], 0.0)
    return start, probs / probs.sum()


def _window(p: np.ndarray) -> tuple[int, np.ndarray]:
    """(start, probs) of PB(p), p strictly inside (0, 1); probs is zero beyond the cut windows.

    From the characteristic function where the variance allows (:func:`_window_cf`), else by
    divide-and-conquer convolution.
    """
    if p.size == 0:
        return 0, np.ones(1)
    cf = _window_cf(p, float(p.sum()), float((p * (1.0 - p)).sum()))
    return _window_convolved(p) if cf is None else cf


def _window_convolved(p: np.ndarray) -> tuple[int, np.ndarray]:
    """:func:`_window` by divide-and-conquer convolution, p strictly inside (0, 1), n > 0."""
    off, rows = _tree(*_blocks(p), 1)
    start = int(off[0])
    probs = rows[0, : p.size + 1 - start]
    return start, probs / probs.sum()


def _tree(rows: np.ndarray, blocks: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbouring ``rows`` (coefficients of the products of ``blocks``) convolved pairwise by
    FFT, each product cut to its Bernstein window, until ``count`` rows are left (the number of
    rows must be ``count`` times a power of 2, or ``count`` = 1). Returns the rows' offsets and
    the rows."""
    mu, var = blocks.sum(axis=1), (blocks * (1.0 - blocks)).sum(axis=1)
    off = np.zeros(rows.shape[0], dtype=np.int64)
    while rows.shape[0] > count:
        if rows.shape[0] % 2:  # pair the last row with the polynomial 1
            one = np.zeros((1, rows.shape[1]))
            one[0, 0] = 1.0
            rows = np.vstack([rows, one])
            off, mu, var = (np.append(x, 0) for x in (off, mu, var))
        rows = _conv_rows(rows[0::2], rows[1::2])
        off, mu, var = (x[0::2] + x[1::2] for x in (off, mu, var))
        rows, off = _cut(rows, off, mu, var)
    return off, rows


def pmf_rows(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Poisson-binomial PMFs of every row of ``p`` (shape (m, n), probabilities in [0, 1],
    unchecked), computed together: the divide-and-conquer convolution of :func:`truncated_pmf`
    on all rows at once, each row's trials padded with zeros to a power of 2 of leaves.

    Returns ``(start, probs)``: ``probs[r, k]`` :math:`=P(K_r=\text{start}[r]+k)`, each row cut
    to a common width outside which it holds less than :math:`10^{-30}` of its mass.

    Examples
    --------
    >>> start, probs = pmf_rows(np.array([[0.1, 0.2, 0.2], [1.0, 0.5, 0.0]]))
    >>> start.tolist(), probs.round(3).tolist()
    ([0, 0], [[0.576, 0.352, 0.068, 0.004], [0.0, 0.5, 0.5, 0.0]])
    """
    m, n = p.shape
    if n == 0:
        return np.zeros(m, dtype=np.int64), np.ones((m, 1))
    size = min(_BLOCK, n)
    per = 1 << (-(-n // size) - 1).bit_length()  # leaves per row, a power of 2
    merges = 0
    while 2**merges < per and size * 2**merges + 1 <= _DIRECT:
        merges += 1
    padded = np.zeros((m, per * size))
    padded[:, :n] = p
    off, rows = _tree(*_leaf_products(padded.reshape(m * per, size), merges), m)
    rows = rows[:, : n + 1]
    return off, rows / rows.sum(axis=1, keepdims=True)


def _split(p: np.ndarray) -> tuple[int, int, np.ndarray]:
    """(number of ones, number of zeros, the p strictly inside (0, 1))."""
    inside = (p > 0.0) & (p < 1.0)
    n_inside = int(np.count_nonzero(inside))
    if n_inside == p.size:
        return 0, 0, p
    ones = int(np.count_nonzero(p == 1.0))
    return ones, p.size - ones - n_inside, p[inside]


class PoissonBinomial:
    r"""Law of the number of successes in independent Bernoulli trials.

    .. math:: P(K=k)=\sum_{|A|=k}\prod_{i\in A}p_i\prod_{j\notin A}(1-p_j),\qquad
              \mathbb E K=\sum_i p_i,\quad \operatorname{Var}K=\sum_i p_i(1-p_i).

    Parameters
    ----------
    p : array-like, shape (n,)
        Success probabilities in [0, 1]. Empty ``p`` is the law of an empty sum (``K = 0``).

    Notes
    -----
    The PMF is exact to 1e-12 absolute for any n (module docstring) and never negative; it is
    computed once, on first use, in :math:`O(n\log^2 n)`.

    References
    ----------
    W. Biscarri, S. D. Zhao, R. J. Brunner (2018). A simple and fast method for computing the
    Poisson binomial distribution function. Computational Statistics & Data Analysis 122, 92-100.

    Examples
    --------
    >>> PoissonBinomial([0.1, 0.2, 0.2]).pmf()
    array([0.576, 0.352, 0.068, 0.004])
    """

    def __init__(self, p: Any) -> None:
        self.p = np.array(_as_p(p))  # a private copy, read-only
        self.p.flags.writeable = False
        self.n = self.p.size
        self._pmf: np.ndarray | None = None
        self._cdf: np.ndarray | None = None
        self._sf: np.ndarray | None = None

    def _full(self) -> np.ndarray:
        if self._pmf is None:
            ones, _, inside = _split(self.p)
            start, probs = _window(inside)
            pmf = np.zeros(self.n + 1)
            pmf[ones + start : ones + start + probs.size] = probs
            pmf.flags.writeable = False
            self._pmf = pmf
        return self._pmf

    def _cum(self) -> tuple[np.ndarray, np.ndarray]:
        """cdf[k] = P(K <= k) and sf[k] = P(K > k), each summed from its own tail."""
        if self._cdf is None:
            pmf = self._full()
            cdf = np.minimum(np.cumsum(pmf), 1.0)
            cdf[-1] = 1.0
            sf = np.zeros(self.n + 1)
            sf[:-1] = np.minimum(np.cumsum(pmf[:0:-1])[::-1], 1.0)
            self._cdf, self._sf = cdf, sf
        return self._cdf, self._sf

    def _at(self, table: np.ndarray, k: Any, below: float, above: float) -> np.ndarray | float:
        """table[floor(k)] with ``below`` for k < 0 and ``above`` for k > n."""
        kk = np.floor(as_array(k, "k", ndim=None, allow_empty=True))
        idx = np.clip(kk, 0, self.n).astype(np.int64)
        out = np.where(kk < 0, below, np.where(kk > self.n, above, table[idx]))
        return out[()]

    def pmf(self, k: Any = None) -> np.ndarray | float:
        """Probability mass :math:`P(K=k)`.

        Parameters
        ----------
        k : array-like, optional
            Counts; non-integers and counts outside 0..n have mass 0.

        Returns
        -------
        numpy.ndarray or float
            :math:`P(K=k)`, shaped like ``k``; the whole PMF (length n + 1, read-only) when ``k``
            is None.

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).pmf([1, 1.5, 4])
        array([0.352, 0.   , 0.   ])
        """
        pmf = self._full()
        if k is None:
            return pmf
        kk = as_array(k, "k", ndim=None, allow_empty=True)
        ok = (kk == np.floor(kk)) & (kk >= 0) & (kk <= self.n)
        return np.where(ok, pmf[np.where(ok, kk, 0).astype(np.int64)], 0.0)[()]

    def cdf(self, k: Any) -> np.ndarray | float:
        r"""Distribution function :math:`P(K\le k)=\sum_{j\le\lfloor k\rfloor}P(K=j)`, for real k.

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).cdf([-1, 1, 1.5, 3])
        array([0.   , 0.928, 0.928, 1.   ])
        """
        return self._at(self._cum()[0], k, 0.0, 1.0)

    def sf(self, k: Any) -> np.ndarray | float:
        """Survival function :math:`P(K>k)`, summed from the upper tail (accurate where the cdf
        rounds to 1).

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).sf([0, 1, 2])
        array([0.424, 0.072, 0.004])
        >>> float(PoissonBinomial([1e-3] * 10).sf(9))  # 1 - cdf rounds to 0  # doctest: +ELLIPSIS
        1.0...e-30
        """
        return self._at(self._cum()[1], k, 1.0, 0.0)

    def ppf(self, q: Any) -> np.ndarray | int:
        r"""Quantile :math:`\min\{k: P(K\le k)\ge q\}`; q = 0 and q = 1 give the support's ends.

        Parameters
        ----------
        q : array-like
            Probabilities in [0, 1].

        Returns
        -------
        numpy.ndarray or int
            Integer counts, shaped like ``q``.

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).ppf([0, 0.5, 0.95, 1])
        array([0, 0, 2, 3])
        """
        qq = as_scores(q, "q", ndim=None)
        ones, zeros, _ = _split(self.p)
        k = np.minimum(np.searchsorted(self._cum()[0], qq, side="left"), self.n)
        k = np.where(qq == 0, ones, np.where(qq == 1, self.n - zeros, k))
        return k.astype(np.int64)[()]

    def mean(self) -> float:
        r"""The mean :math:`\mathbb E K=\sum_i p_i`.

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).mean()
        0.5
        """
        return float(self.p.sum())

    def var(self) -> float:
        r"""The variance :math:`\operatorname{Var}K=\sum_i p_i(1-p_i)`.

        Examples
        --------
        >>> round(PoissonBinomial([0.1, 0.2, 0.2]).var(), 12)
        0.41
        """
        return float((self.p * (1.0 - self.p)).sum())

    def rvs(self, size: int | tuple[int, ...] | None = None,
            random_state: Any = None) -> np.ndarray | int:
        r"""Draws of K by inversion of the CDF.

        Parameters
        ----------
        size : int or tuple of int, optional
            Shape of the draws; None gives one int.
        random_state : None, int or numpy.random.Generator
            Seed or generator of the uniforms :math:`U`; the draw is
            :math:`\min\{k: P(K\le k)>U\}`.

        Returns
        -------
        numpy.ndarray or int
            Integer draws of shape ``size``.

        Examples
        --------
        >>> PoissonBinomial([0.1, 0.2, 0.2]).rvs(5, random_state=0)
        array([1, 0, 0, 0, 1])
        """
        rng = as_seed(random_state, "random_state")
        u = rng.random(size)
        return np.searchsorted(self._cum()[0], u, side="right").astype(np.int64)[()]


def _fft_ok(a: np.ndarray, b: np.ndarray, nfft: int) -> bool:
    """Whether the FFT round-off bound 10 eps log2(nfft) |a|_2 |b|_2 stays below 1e-12."""
    bound = 10 * np.finfo(float).eps * math.log2(nfft) * np.linalg.norm(a) * np.linalg.norm(b)
    return bound <= _FFT_TOL


def _convolve2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if min(a.size, b.size) <= _DIRECT:
        return np.convolve(a, b)
    nfft = scipy.fft.next_fast_len(a.size + b.size - 1, real=True)
    if not _fft_ok(a, b, nfft):
        return np.convolve(a, b)
    out = scipy.fft.irfft(scipy.fft.rfft(a, nfft) * scipy.fft.rfft(b, nfft), nfft)
    return np.maximum(out[: a.size + b.size - 1], 0.0)


def convolve(*pmfs: Any) -> np.ndarray:
    r"""PMF of the sum of independent counts, :math:`(f*g)[k]=\sum_j f[j]\,g[k-j]`.

    Parameters
    ----------
    *pmfs : array-like
        Each 1-D and non-negative, entry k the probability of count k. No argument gives
        ``[1.0]``, the law of an empty sum.

    Returns
    -------
    numpy.ndarray
        Length ``sum(len(f) - 1) + 1``. Long inputs are multiplied by FFT only when its round-off
        bound is at most 1e-12 absolute, otherwise directly; never negative.

    Raises
    ------
    ValueError
        If a PMF is not 1-D or has a negative entry.

    Examples
    --------
    >>> convolve([0.5, 0.5], [0.25, 0.5, 0.25])
    array([0.125, 0.375, 0.375, 0.125])
    """
    arrs = []
    for i, f in enumerate(pmfs):
        arr = as_array(f, f"pmfs[{i}]")
        if (arr < 0).any():
            raise ValueError(f"pmfs[{i}] must be non-negative probabilities; got "
                             f"{int((arr < 0).sum())} negative value(s).")
        arrs.append(arr)
    return convolve_pmfs(*arrs)


def convolve_pmfs(*pmfs: np.ndarray) -> np.ndarray:
    """:func:`convolve` without its checks, for PMFs already checked.

    Each of ``pmfs`` must be a 1-D float numpy array of non-negative entries.

    Examples
    --------
    >>> convolve_pmfs(np.array([0.5, 0.5]), np.array([0.5, 0.5]))
    array([0.25, 0.5 , 0.25])
    """
    arrs = list(pmfs)
    if not arrs:
        return np.ones(1)
    while len(arrs) > 1:
        arrs = [_convolve2(*arrs[i : i + 2]) if i + 1 < len(arrs) else arrs[i]
                for i in range(0, len(arrs), 2)]
    return arrs[0].copy()


def truncated_pmf(p: Any, tol: float = 1e-16) -> tuple[int, np.ndarray]:
    r"""The PMF of PB(p) on the contiguous window of counts whose probability exceeds ``tol``.

    Parameters
    ----------
    p : array-like, shape (n,)
        Success probabilities in [0, 1].
    tol : float
        Probabilities at most ``tol`` are dropped from both ends, in [0, 1).

    Returns
    -------
    start : int
        The count of ``probs[0]``.
    probs : numpy.ndarray
        ``PoissonBinomial(p).pmf()[start : start + len(probs)]`` (not renormalised). The PMF is
        log-concave, so the window holds every count above ``tol`` and always holds the mode.
        Its cost is that of the PMF, with the long products kept :math:`O(\sigma)` long.

    Examples
    --------
    >>> truncated_pmf([0.1, 0.2, 0.2], tol=0.01)
    (0, array([0.576, 0.352, 0.068]))
    >>> start, probs = truncated_pmf([0.5] * 100, tol=1e-6)
    >>> start, len(probs), round(float(probs.sum()), 6)
    (27, 47, 0.999998)
    """
    p = _as_p(p)
    if not (isinstance(tol, (int, float, np.floating, np.integer)) and 0 <= tol < 1):
        raise ValueError(f"tol must be a number in [0, 1), got {tol!r}.")
    return pmf_above(p, tol)


def pmf_above(p: np.ndarray, tol: float) -> tuple[int, np.ndarray]:
    """:func:`truncated_pmf` without its checks, for arguments already checked.

    ``p`` must be a 1-D float numpy array of probabilities in [0, 1], ``tol`` in [0, 1).

    Examples
    --------
    >>> pmf_above(np.array([0.1, 0.2, 0.2]), 0.01)
    (0, array([0.576, 0.352, 0.068]))
    """
    ones, _, inside = _split(p)
    start, probs = _window(inside)
    keep = np.flatnonzero(probs > tol)
    lo, hi = (keep[0], keep[-1]) if keep.size else (int(np.argmax(probs)),) * 2
    return ones + start + int(lo), probs[lo : hi + 1].copy()
