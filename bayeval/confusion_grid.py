r"""The law of a two-count metric on the grid of its counts, without listing the grid.

A confusion-matrix metric of uncertain labels is a function :math:`g(TP, FN)` of two independent
counts (:mod:`bayeval.confusion`). :class:`GridLaw` holds the two count PMFs, cut to their
counts of non-negligible probability, and gives the metric's moments, the mass of any interval
and its quantiles from sums over the grid's rows and diagonals; :func:`merge_values` lists a law's
support when it must be.
"""

from __future__ import annotations

import copy
from functools import cached_property

import numpy as np
from scipy import fft, special

from bayeval.metrics import metric_value

__all__ = ["GridLaw", "merge_values"]

_ENUMERATE = 1 << 11  # a quantile's bracket is narrowed to this many grid cells, then sorted


def _sort(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` sorted (equal ones adjacent, in any order) and ``probs`` in the same order.

    Sorting 64-bit keys, the value's rank quantised into the high bits and the position in the
    low bits, is several times faster than an argsort of the values. Values closer than the
    quantum may come out swapped; a stable argsort of the nearly sorted result repairs that.
    """
    bits = max((values.size - 1).bit_length(), 1)
    lo, span = values.min(), values.max() - values.min()
    scale = 2.0 ** (63 - bits) / span if span > 0 else 0.0
    key = np.empty(values.size, np.uint64)  # few temporaries: at 1e7 cells each costs faults
    np.multiply(values - lo, scale, out=key, casting="unsafe")
    key <<= np.uint64(bits)
    key |= np.arange(values.size, dtype=np.uint64)
    key.sort()
    order = np.bitwise_and(key, np.uint64((1 << bits) - 1), out=key).view(np.intp)
    values, probs = values[order], probs[order]
    if (values[1:] < values[:-1]).any():
        fix = np.argsort(values, kind="stable")
        values, probs = values[fix], probs[fix]
    return values, probs


def merge_values(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and the total probability of each; only bitwise-equal values merge.

    Each value equal to its predecessor (the j-th such, at position d) adds its probability to
    distinct value number d - j - 1; they are few, so this beats a bincount over all values.
    Strictly monotone values (a one-count metric's, in the order of its count) need no sort.

    Examples
    --------
    >>> merge_values(np.array([0.5, 0.2, 0.5]), np.array([0.25, 0.5, 0.25]))
    (array([0.2, 0.5]), array([0.5, 0.5]))
    """
    if values.size <= 1 or (values[1:] > values[:-1]).all():  # e.g. a one-count metric's
        return values, probs
    if (values[1:] < values[:-1]).all():
        return values[::-1].copy(), probs[::-1].copy()
    values, probs = _sort(values, probs)
    dup = np.flatnonzero(values[1:] == values[:-1]) + 1
    keep = np.ones(values.size, bool)
    keep[dup] = False
    merged = probs[keep]
    np.add.at(merged, dup - np.arange(1, dup.size + 1), probs[dup])
    return values[keep], merged


class GridLaw:
    r"""The law of a two-count metric on the truncated TP x FN grid, without enumerating it.

    Row :math:`i` is the TP count :math:`t_i` (probability :math:`a_i`), column :math:`j` the
    FN count :math:`f_j` (:math:`b_j`); cell (i, j) has value :math:`g_{ij}=g(t_i, f_j)` and
    probability :math:`a_ib_j`. With :math:`FP=N_{pp}-t`, :math:`TN=N_{pn}-f`, the number of
    actual positives :math:`s=t+f` and :math:`n=N_{pp}+N_{pn}`, every two-count metric is

    .. math:: \text{recall}=\frac ts,\quad F_\beta=\frac{(1+\beta^2)\,t}{\beta^2s+N_{pp}},\quad
              \text{specificity}=\frac{N_{pn}-s+t}{n-s},\quad
              \text{MCC}=\frac{nt-N_{pp}s}{\sqrt{N_{pp}N_{pn}\,s(n-s)}}

    (balanced accuracy: the mean of recall and specificity). Hence:

    * **Affine on diagonals.** For fixed :math:`s` each metric is affine in :math:`t`, so with
      :math:`u=i-\bar\imath` and :math:`m_k(s)=\sum_{i}u^k\,a_i\,b_{s-i}` (three convolutions)
      the moments are :math:`O(w\log w)` sums over :math:`s` (:meth:`moments`).
    * **Monotone in rows.** For fixed :math:`t` each metric is non-increasing in :math:`f`
      (for MCC, :math:`\partial/\partial s` has the sign of :math:`-(s\,FP+t\,(n-s))\le0`), and
      so are the doubles of :func:`~bayeval.metrics.from_counts`: correctly rounded quotients of
      exact integers (MCC's rounded products move it far less than one step in :math:`f`). The
      cells of row :math:`i` with :math:`g\le v` are then a suffix :math:`[c_i(v), e_i)` of its
      defined cells :math:`[l_i, e_i)`, found by bisection in :math:`O(\log w)` evaluations of
      the row.

    So with the FN tail sums :math:`B[\cdot,\cdot)`, each from its own end (:meth:`tail`),

    .. math:: P(g\le v)=\sum_i a_i\,B[c_i(v), e_i),\qquad P(g>v)=\sum_i a_i\,B[l_i, c_i(v)).

    The undefined cells (a zero denominator) have :math:`s=0`, :math:`s=n`, or are whole rows
    (no predicted positives or negatives), so they sit at the ends of the rows.

    Examples
    --------
    Recall with two predicted positives and one predicted negative, :math:`TP` of probabilities
    1/4, 1/2, 1/4 and :math:`FN` of 1/2, 1/2: the cell (0, 0) is undefined (mass 1/8, counted
    as ``zero_division`` 0), recall is 0 w.p. 1/8 more, 1/2 and 2/3 w.p. 1/4 and 1/8, and 1 w.p.
    3/8:

    >>> a, b = np.array([0.25, 0.5, 0.25]), np.array([0.5, 0.5])
    >>> g = GridLaw("recall", 2, 1, np.arange(3.0), a, np.arange(2.0), b, np.ones(1), 1.0,
    ...             0.0)
    >>> g.p_undefined, g.mass(0.5, 1.0)
    (0.125, 0.75)
    >>> g.quantile(0.25, False), g.quantile(0.25, True)
    (0.0, 1.0)
    """

    def __init__(self, metric: str, n_pos: int, n_neg: int, tp: np.ndarray, a: np.ndarray,
                 fn: np.ndarray, b: np.ndarray, weights: np.ndarray, beta: float,
                 zero_division: float) -> None:
        self.n_pos, self.n_neg = n_pos, n_neg
        self.tp, self.fn = tp, fn
        self.a, self.b = np.atleast_2d(a), np.atleast_2d(b)  # (component, count)
        self.weights = np.asarray(weights, float)
        self.wa = self.weights[:, None] * self.a
        # left[:, j] = P(FN column < j) and right[:, j] = P(FN column >= j), each from its end
        zero = np.zeros((self.b.shape[0], 1))
        self.left = np.concatenate([zero, np.cumsum(self.b, axis=1)], axis=1)
        self.right = np.concatenate([np.cumsum(self.b[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
        self._of_metric(metric, beta, zero_division)

    def _of_metric(self, metric: str, beta: float, zero_division: float) -> None:
        """What depends on the metric: its defined columns, undefined mass and cached cuts."""
        self.metric, self.beta, self.zero_division = metric, beta, zero_division
        self.start, self.end = self._defined_columns()
        # the FN tails before each row's first and from its last defined column
        self._left_start, self._right_end = self.left[:, self.start], self.right[:, self.end]
        self.p_undefined = self._sum(self._left_start + self._right_end)
        self.defined = bool((self.start < self.end).any())
        self._cuts: dict[tuple[float, bool], np.ndarray] = {}  # first(v, strict) of quantiles

    def for_metric(self, metric: str, beta: float, zero_division: float) -> GridLaw:
        """The law of another metric of the same two counts, sharing their tail sums and the
        convolutions of :meth:`moments` (computed here if they are not yet).

        Examples
        --------
        >>> a, b = np.array([0.25, 0.5, 0.25]), np.array([0.5, 0.5])
        >>> g = GridLaw("recall", 2, 1, np.arange(3.0), a, np.arange(2.0), b, np.ones(1), 1.0,
        ...             0.0)
        >>> f1 = g.for_metric("f1", 1.0, 0.0)
        >>> f1.moments == GridLaw("f1", 2, 1, np.arange(3.0), a, np.arange(2.0), b,
        ...                       np.ones(1), 1.0, 0.0).moments
        True
        """
        self._diagonal_sums  # noqa: B018  (computed once, then shared by the copy)
        law = copy.copy(self)
        law.__dict__.pop("moments", None)
        law.__dict__.pop("_range", None)
        law._of_metric(metric, beta, zero_division)
        return law

    def _sum(self, per_cell: np.ndarray) -> float:
        """sum_j w_j sum_i a_j(i) x_j(i) of a (component, row) array."""
        return float(np.sum(self.wa * per_cell))

    def value(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """The metric at cells (i, j), NaN where undefined; bitwise as on the whole grid."""
        tp, fn = self.tp[i], self.fn[j]
        return metric_value(self.metric, tp, self.n_pos - tp, fn, self.n_neg - fn, self.beta,
                            np.nan)

    def _defined_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the defined columns [start, end): all but undefined ends, none if both are."""
        rows, width = np.arange(self.tp.size), self.fn.size
        first = np.isnan(self.value(rows, np.zeros_like(rows)))
        last = np.isnan(self.value(rows, np.full_like(rows, width - 1)))
        none = first & last
        return np.where(none, width, first), np.where(none, width, width - last)

    @property
    def size(self) -> int:
        """Cells of the grid."""
        return self.tp.size * self.fn.size

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Value and probability of every cell of the grid (the materialised law)."""
        values = self.value(np.arange(self.tp.size)[:, None], np.arange(self.fn.size)[None, :])
        return values.ravel(), (self.wa.T @ self.b).ravel()

    def _scaled(self, defined: float, undefined: bool) -> float:
        """A probability from its defined part: conditioned on "defined" if zero_division is NaN."""
        if np.isnan(self.zero_division):
            return float(defined / (1.0 - self.p_undefined))
        return float(defined + self.p_undefined * undefined)

    @cached_property
    def moments(self) -> tuple[float, float]:
        r"""Mean and standard deviation from the diagonals :math:`s` of the grid.

        On diagonal :math:`s`, :math:`g=\ell(s)+\gamma(s)\,u` with the slope :math:`\gamma`
        from its two end cells, so with :math:`\mu` the mean and :math:`d=\ell-\mu`

        .. math:: \mu=\sum_s\ell\,m_0+\gamma\,m_1,\qquad
                  \sigma^2=\sum_s d^2m_0+2d\gamma\,m_1+\gamma^2m_2,

        over the defined diagonals (:math:`m_k` summed over the components), plus the undefined
        mass at ``zero_division`` (or divided by the defined mass for NaN).
        """
        rows, width = self.tp.size, self.fn.size
        centre, m0, m1, m2 = self._diagonal_sums
        s = np.arange(rows + width - 1)
        i1, i2 = np.maximum(s - (width - 1), 0), np.minimum(s, rows - 1)
        g1, g2 = self.value(i1, s - i1), self.value(i2, s - i2)
        slope = (g2 - g1) / np.maximum(i2 - i1, 1)
        level = g1 + slope * (centre - i1)
        ok = ~np.isnan(g1)
        level, slope, m0, m1, m2 = (x[ok] for x in (level, slope, m0, m1, m2))
        zd, pu = self.zero_division, self.p_undefined
        mean = level @ m0 + slope @ m1
        mean = mean / (1.0 - pu) if np.isnan(zd) else mean + zd * pu
        d = level - mean
        var = d**2 @ m0 + 2 * (d * slope) @ m1 + slope**2 @ m2
        var = var / (1.0 - pu) if np.isnan(zd) else var + (zd - mean) ** 2 * pu
        return float(mean), float(np.sqrt(max(var, 0.0)))

    @cached_property
    def _diagonal_sums(self) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        r"""The centre row :math:`\bar\imath` and :math:`m_0, m_1, m_2` of :meth:`moments` on
        every diagonal: three convolutions by one real FFT."""
        rows, width = self.tp.size, self.fn.size
        centre = (self.weights @ self.a) @ np.arange(rows)
        u = np.arange(rows) - centre
        diagonals = rows + width - 1
        size = fft.next_fast_len(diagonals, real=True)
        m0, m1, m2 = fft.irfft(fft.rfft(np.stack([self.wa, u * self.wa, u * u * self.wa]), size)
                               * fft.rfft(self.b, size), size)[..., :diagonals].sum(axis=1)
        return float(centre), m0, m1, m2

    def _guess(self, v: float) -> np.ndarray | None:
        r"""Per row, the FN count where a linear-fractional metric crosses ``v``.

        :math:`g(t,f)\le v` solved for :math:`f`: recall :math:`f\ge t(1-v)/v`,
        :math:`F_\beta` :math:`f\ge((1+\beta^2)t-v\beta^2t-vN_{pp})/(v\beta^2)`, specificity
        :math:`f\ge N_{pn}-v(N_{pp}-t)/(1-v)`; None for the other metrics.
        """
        t, b2 = self.tp, 1.0 if self.metric == "f1" else self.beta**2
        if not 0.0 < v < 1.0:
            return None
        if self.metric == "recall":
            return t * (1.0 - v) / v
        if self.metric in ("f1", "fbeta") and 0.0 < b2 < np.inf:
            return ((1.0 + b2) * t - v * b2 * t - v * self.n_pos) / (v * b2)
        if self.metric == "specificity":
            return self.n_neg - v * (self.n_pos - t) / (1.0 - v)
        return None

    def _ok(self, i: np.ndarray, j: np.ndarray, v: float, strict: bool) -> np.ndarray:
        g = self.value(i, j)
        return g < v if strict else g <= v

    def first(self, v: float, strict: bool = False, lo: np.ndarray | None = None,
              hi: np.ndarray | None = None) -> np.ndarray:
        """Per row, the first column in [lo, hi) with g <= v (g < v if ``strict``), else hi.

        Defaults to the row's defined columns; rows with lo = hi are left alone. For the
        linear-fractional metrics the solved crossing is confirmed (or corrected by one) from
        the four cells around it, and the bisection is left for the rows where it is not.
        """
        if lo is None and hi is None and (v, strict) in self._cuts:
            return self._cuts[v, strict].copy()
        lo = self.start.copy() if lo is None else lo.copy()
        hi = self.end.copy() if hi is None else hi.copy()
        guess = self._guess(v)
        if guess is not None:  # cells c - 1 .. c + 2 around the solved column c + 1
            col = np.ceil(np.clip(guess - self.fn[0], -1.0, self.fn.size)).astype(np.int64)
            c = np.clip(col - 1, lo, hi)
            cells = c + np.arange(-1, 3)[:, None]
            inside = (cells >= lo) & (cells < hi)
            g = metric_value(self.metric, self.tp, self.n_pos - self.tp, self.fn[0] + cells,
                             self.n_neg - self.fn[0] - cells, self.beta, np.nan)
            ok = np.where(inside, g < v if strict else g <= v, cells >= hi)  # past hi: found
            # the first ok column is in [c, c + 2] if column c - 1 is not ok (or c = lo) and
            # column c + 2 is
            confirmed = ((c == lo) | ~ok[0]) & ok[3]
            found = c + ~ok[1] + (~ok[1] & ~ok[2])
            lo, hi = np.where(confirmed, found, lo), np.where(confirmed, found, hi)
        while (active := np.flatnonzero(lo < hi)).size:
            mid = (lo[active] + hi[active]) // 2
            ok = self._ok(active, mid, v, strict)
            hi[active] = np.where(ok, mid, hi[active])
            lo[active] = np.where(ok, lo[active], mid + 1)
        return lo

    def tail(self, cut: np.ndarray, v: float, upper: bool) -> float:
        """P(g <= v), or P(g > v) if ``upper``, from the rows' first columns ``cut`` with g <= v."""
        if upper:
            defined = self._sum(self.left[:, cut] - self._left_start)
            return self._scaled(defined, self.zero_division > v)
        defined = self._sum(self.right[:, cut] - self._right_end)
        return self._scaled(defined, self.zero_division <= v)

    def mass(self, lower: float, upper: float) -> float:
        """P(lower <= g <= upper): the columns from the first g <= upper to the first g < lower."""
        inside, beyond = self.first(upper), self.first(lower, strict=True)
        defined = self._sum(self.left[:, np.maximum(beyond, inside)] - self.left[:, inside])
        return self._scaled(defined, lower <= self.zero_division <= upper)

    @cached_property
    def _range(self) -> tuple[float, float]:
        """Smallest and largest support value (``zero_division`` included if it has mass)."""
        rows = np.flatnonzero(self.start < self.end)
        lo = float(self.value(rows, self.end[rows] - 1).min())
        hi = float(self.value(rows, self.start[rows]).max())
        if self.p_undefined > 0 and not np.isnan(self.zero_division):
            lo, hi = min(lo, self.zero_division), max(hi, self.zero_division)
        return lo, hi

    def quantile(self, level: float, upper: bool) -> float:
        r"""Lower: :math:`\min\{v: P(g\le v)\ge q\}`; ``upper``: :math:`\min\{v: P(g>v)\le q\}`.

        A bracket :math:`(v_0, v_1]` holding the answer is narrowed, keeping per row the columns
        :math:`[c_i(v_1), c_i(v_0))` of its cells (each search looks only there), until it holds
        at most 2,048 cells. The tail :math:`T(v)` at each point tried is put on the
        normal scale, :math:`z=\Phi^{-1}(T)` (:math:`-\Phi^{-1}` for the upper tail), where it
        is nearly linear in :math:`v`; the first point is the normal quantile
        :math:`\mu+\sigma z_q`, the next ones a secant step to :math:`z_q`. Those
        cells are sorted and merged, and their masses cumulated from the tail beyond the
        bracket's end, so the answer is a support value, chosen as in
        :meth:`MetricDistribution.interval`.
        """
        mean, sd = self.moments
        lo, hi = self._range
        lo = float(np.nextafter(lo, -np.inf))
        cut_lo, cut_hi = self.end, self.start  # no cell <= lo, every cell <= hi
        target = -special.ndtri(level) if upper else special.ndtri(level)
        mid, tried, spread, fails, aimed = mean + sd * target, [], 1.0, 0, False
        while (cells := int((cut_lo - cut_hi).sum())) > _ENUMERATE:
            if not lo < mid < hi:
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:
                    break
            cut = self.first(mid, lo=cut_hi, hi=cut_lo)
            tail = self.tail(cut, mid, upper)
            now = bool(tail <= level if upper else tail >= level)  # the answer is <= mid
            if now:
                hi, cut_hi = mid, cut
            else:
                lo, cut_lo = mid, cut
            left = int((cut_lo - cut_hi).sum())
            spread = 4.0 * spread if aimed and tried[-1][2] == now else 1.0  # short: wider
            fails = 0 if 2 * left <= cells else fails + 1
            tried.append((mid, -special.ndtri(tail) if upper else special.ndtri(tail), now,
                          int(cut.sum())))
            (v0, _, _, n0), (v1, _, _, n1) = tried[-2:] if len(tried) > 1 else ((lo, 0, 0, 0),
                                                                                 (hi, 0, 0, left))
            width = spread * _ENUMERATE / 4 * abs(v1 - v0) / max(abs(n1 - n0), 1)  # ~1/4 full
            mid, aimed = self._aim(tried, target, sd, width, (lo, hi), fails < 2)
        return self._enumerate(level, upper, (lo, hi), cut_lo, cut_hi)

    @staticmethod
    def _aim(tried: list[tuple[float, float, bool, int]], target: float, sd: float,
             width: float, bracket: tuple[float, float], trust: bool) -> tuple[float, bool]:
        r"""The next point of :meth:`quantile` (and whether it was aimed, not bisected).

        From the last point :math:`(v, z)` and the secant slope :math:`s` through the last two
        (:math:`1/\sigma` until there are two, or if it is not positive), the answer is near
        :math:`\hat v=v+(z_q-z)/s`; the step aims ``width`` beyond it, on the other side of
        the answer than :math:`v`, so that the bracket closes from both sides. Without
        ``trust`` (two steps in a row that did not halve the bracket's cells), for an infinite
        :math:`z` (a tail of 0 or 1) or an aim outside the bracket, the step bisects it, so the
        search ends.
        """
        lo, hi = bracket
        v, z, now, _ = tried[-1]
        slope = 1.0 / sd
        if len(tried) > 1 and tried[-2][0] != v:
            secant = (z - tried[-2][1]) / (v - tried[-2][0])
            slope = secant if secant > 0.0 else slope
        aim = v + (target - z) / slope + (-width if now else width)
        if trust and np.isfinite(aim) and lo < aim < hi:
            return float(aim), True
        return 0.5 * (lo + hi), False

    def _enumerate(self, level: float, upper: bool, bracket: tuple[float, float],
                   cut_lo: np.ndarray, cut_hi: np.ndarray) -> float:
        """The quantile among the support values in the bracket (lo, hi], from their masses.

        The rows' first columns at the answer (:meth:`first`, strict or not) are counted from
        the cells listed, and kept for :meth:`mass`.
        """
        lo, hi = bracket
        runs = cut_lo - cut_hi
        i = np.repeat(np.arange(runs.size), runs)
        j = np.arange(runs.sum()) - np.repeat(np.cumsum(runs) - runs - cut_hi, runs)
        cell = self.value(i, j)
        values, probs = cell, (self.wa[:, i] * self.b[:, j]).sum(axis=0)
        if self.p_undefined > 0 and lo < self.zero_division <= hi:
            values, probs = np.r_[values, self.zero_division], np.r_[probs, self.p_undefined]
        values, probs = merge_values(values, probs)
        scale = 1.0 / (1.0 - self.p_undefined) if np.isnan(self.zero_division) else 1.0
        if upper:  # P(g > v_k) = P(g > hi) + mass of the values above v_k
            above = np.r_[np.cumsum(probs[:0:-1])[::-1], 0.0]
            tails = self.tail(cut_hi, hi, True) + scale * above
            k = np.argmax(tails <= level) if (tails <= level).any() else values.size - 1
        else:  # P(g <= v_k) = P(g <= lo) + mass of the values up to v_k
            tails = self.tail(cut_lo, lo, False) + scale * np.cumsum(probs)
            k = np.argmax(tails >= level) if (tails >= level).any() else values.size - 1
        v = float(values[k])  # the cells in (lo, hi] above v (from v on if strict) lead the rows
        for strict in (False, True):
            above = cell >= v if strict else cell > v
            self._cuts[v, strict] = cut_hi + np.bincount(i, above, runs.size).astype(np.int64)
        return v
