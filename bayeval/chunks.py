"""Splitting rows into chunks (monitoring windows): by key, by time period, by size or by count.

A :class:`Chunking` holds one integer code per row and the chunks' labels in order of first
appearance. Labels are strings, so that any key (a date, a batch id, a number) and the
whole-period label :data:`WHOLE` live on one coordinate that netCDF can store. The windows' rows
are read in score order: :func:`score_order` and :func:`sorted_scores` sort scores by the faster
of NumPy's sorts on the machine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

import numpy as np
import pandas as pd

from bayeval.validation import as_positive_int

__all__ = ["MAX_CHUNKS", "WHOLE", "Chunking", "contiguous", "make_chunks", "score_order",
           "sorted_scores"]

WHOLE = "all"
"""Label of the whole period (all rows), reported besides the chunks."""

MAX_CHUNKS = 10_000
"""More chunks than this are refused: one chunk per timestamp or row id is a mistake, not a
monitoring window (a period per chunk is ``chunk_period``)."""


@dataclass(frozen=True, eq=False)
class Chunking:
    """Rows grouped into chunks.

    Attributes
    ----------
    labels : tuple of str
        One per chunk, in order of first appearance (``"[first:last]"`` row ranges for chunks
        made by size or count, like NannyML's keys).
    codes : ndarray of int
        The chunk of every row, an index into ``labels``.

    Examples
    --------
    >>> c = Chunking(("2024-01", "2024-02"), np.array([0, 1, 0, 1, 1]))
    >>> c.sizes
    array([2, 3])
    """

    labels: tuple[str, ...]
    codes: np.ndarray

    @cached_property
    def sizes(self) -> np.ndarray:
        """Rows per chunk, in the order of ``labels``.

        Examples
        --------
        >>> make_chunks(5, n_chunks=2).sizes
        array([3, 2])
        """
        return np.bincount(self.codes, minlength=len(self.labels))

    @cached_property
    def contiguous(self) -> bool:
        """Whether each chunk is one run of consecutive rows, in the order of ``labels``.

        Examples
        --------
        >>> make_chunks(5, n_chunks=2).contiguous, make_chunks(3, chunks=[1, 0, 1]).contiguous
        (True, False)
        """
        return bool((self.codes[1:] >= self.codes[:-1]).all())

    def parts(self, x: np.ndarray) -> list[np.ndarray]:
        """The rows of ``x`` in each chunk: views of ``x`` when the chunks are contiguous,
        else copies (as ``x[rows]`` for :meth:`rows`).

        Examples
        --------
        >>> make_chunks(5, n_chunks=2).parts(np.arange(5.0))
        [array([0., 1., 2.]), array([3., 4.])]
        """
        if self.contiguous:
            return np.split(x, np.cumsum(self.sizes)[:-1])
        return [x[rows] for rows in self.rows()]

    def rows(self, order: np.ndarray | None = None) -> list[np.ndarray]:
        """The row indices of each chunk, in row order or in the order of ``order``.

        Parameters
        ----------
        order : numpy.ndarray, optional
            A permutation of the rows (e.g. an argsort of the scores); the rows of each chunk
            come out in this order.

        Returns
        -------
        list of numpy.ndarray
            One array of row indices per chunk, in the order of ``labels``.

        Examples
        --------
        >>> c = make_chunks(5, chunks=["b", "a", "b", "a", "a"])
        >>> c.labels, c.rows()
        (('b', 'a'), [array([0, 2]), array([1, 3, 4])])
        >>> c.rows(order=np.array([4, 3, 2, 1, 0]))
        [array([2, 0]), array([4, 3, 1])]
        """
        if order is None and self.contiguous:
            return np.split(np.arange(self.codes.size), np.cumsum(self.sizes)[:-1])
        order = np.arange(self.codes.size) if order is None else order
        codes = self.codes[order]
        if len(self.labels) < 2**15:  # small integers: numpy's stable sort is a radix sort
            codes = codes.astype(np.int16)
        by_chunk = order[np.argsort(codes, kind="stable")]
        return np.split(by_chunk, np.cumsum(self.sizes)[:-1])


def contiguous(n: int, *, chunk_size: Any = None,
               n_chunks: Any = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """The first rows and labels of contiguous chunks by size or count, as :func:`make_chunks`
    makes them, without a code per row (for rows that do not fit in memory).

    Examples
    --------
    >>> contiguous(5, chunk_size=2)
    (array([0, 2, 4]), ('[0:1]', '[2:3]', '[4:4]'))
    >>> contiguous(5, n_chunks=2)
    (array([0, 3]), ('[0:2]', '[3:4]'))
    """
    if chunk_size is not None and n_chunks is not None:
        raise ValueError("give at most one of chunks, chunk_size and n_chunks; got chunk_size "
                         "and n_chunks.")
    if chunk_size is not None:
        starts = np.arange(0, n, as_positive_int(chunk_size, "chunk_size", most=n))
    else:
        count = 1 if n_chunks is None else as_positive_int(n_chunks, "n_chunks", most=n)
        sizes = np.full(count, n // count)
        sizes[: n % count] += 1
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
    ends = np.r_[starts[1:], n] - 1
    return starts, tuple(f"[{a}:{b}]" for a, b in zip(starts, ends, strict=True))


def _keys(keys: Any, n: int) -> np.ndarray:
    """One key per row, none missing."""
    if hasattr(keys, "to_numpy"):
        keys = keys.to_numpy()
    keys = np.asarray(keys)
    if keys.ndim != 1 or keys.size != n:
        raise ValueError(f"chunks must hold one key per row ({n} rows), got shape "
                         f"{keys.shape}.")
    missing = pd.isna(keys)
    if missing.any():
        raise ValueError(f"chunks has {int(missing.sum())} missing key(s) (NaN, None or NaT; "
                         f"first at row {int(np.flatnonzero(missing)[0])}); every row needs "
                         "a chunk key.")
    return keys


def _periods(keys: np.ndarray, period: Any) -> tuple[np.ndarray, tuple[str, ...]]:
    """The chunk of each timestamp: periods of ``period`` (a pandas period alias, optionally
    with a multiple, e.g. ``"2W"``, counted from the earliest timestamp's period), in time
    order, labelled by their first and last periods. Time-zone-aware timestamps are binned in
    their local time."""
    if keys.dtype.kind in "biufc":
        raise ValueError(f"chunks must be timestamps (datetime64, or date strings) with "
                         f"chunk_period; got {keys.dtype} keys.")
    try:
        times = pd.DatetimeIndex(pd.to_datetime(keys, format="mixed"))
    except (ValueError, TypeError) as err:
        raise ValueError(f"chunks must be timestamps (datetime64, or date strings) with "
                         f"chunk_period; {err}") from None
    if times.tz is not None:
        times = times.tz_localize(None)
    match = re.fullmatch(r"\s*(\d*)\s*([A-Za-z][\w-]*)\s*", str(period))
    try:
        step, alias = (int(match[1] or 1), match[2]) if match else (0, "")
        if step < 1:
            raise ValueError("a period of at least one unit is needed")
        periods = times.to_period(alias)
    except (ValueError, TypeError, AttributeError) as err:
        raise ValueError(f"chunk_period must be a pandas period alias such as 'D', 'W', "
                         f"'W-MON', 'M', 'Q', 'Y', 'h' or a multiple such as '2W'; got "
                         f"{period!r} ({err}).") from None
    origin = periods.asi8.min()
    codes, bins = pd.factorize((periods.asi8 - origin) // step, sort=True)
    first = pd.PeriodIndex.from_ordinals(origin + bins * step, freq=periods.freq)
    if step == 1:
        return codes, tuple(str(p) for p in first)
    last = pd.PeriodIndex.from_ordinals(origin + bins * step + step - 1, freq=periods.freq)
    return codes, tuple(f"{str(a).split('/')[0]}/{str(b).split('/')[-1]}"
                        for a, b in zip(first, last, strict=True))


def _from_keys(keys: Any, n: int, period: Any = None) -> Chunking:
    keys = _keys(keys, n)
    if period is None:
        codes, uniques = pd.factorize(keys, sort=False)
        labels = tuple(str(k) for k in uniques)
    else:
        codes, labels = _periods(keys, period)
    if len(labels) > MAX_CHUNKS:
        raise ValueError(f"chunks gives {len(labels):,} chunks, more than {MAX_CHUNKS:,}: a "
                         "monitoring window needs rows; group timestamps by period with "
                         "chunk_period (e.g. 'D', 'W', 'M'), or give chunk_size or n_chunks.")
    clash = [k for k in labels if k == WHOLE]
    if clash or len(set(labels)) < len(labels):
        raise ValueError(f"chunks keys must give distinct labels other than {WHOLE!r} (the "
                         "whole period); got keys that print alike or as that label.")
    return Chunking(labels, codes.astype(np.int64))


def make_chunks(n: int, *, chunks: Any = None, chunk_size: Any = None,
                n_chunks: Any = None, chunk_period: Any = None) -> Chunking:
    """Split ``n`` rows by keys, by time period, by size or into a number of chunks (at most
    one of keys, size and count).

    Parameters
    ----------
    n : int
        Number of rows.
    chunks : array-like, optional
        One key per row (dates, periods, batch ids...); a chunk per distinct key, in order of
        first appearance; rows of a chunk need not be contiguous. With ``chunk_period``, the
        rows' timestamps.
    chunk_size : int, optional
        Contiguous chunks of this many rows; the last one keeps the remainder (NannyML's
        ``incomplete="keep"``).
    n_chunks : int, optional
        This many contiguous chunks of near-equal size (sizes differ by at most one row).
    chunk_period : str, optional
        A pandas period alias (``"D"``, ``"W"`` (weeks ending on Sunday), ``"W-MON"``, ``"M"``,
        ``"Q"``, ``"Y"``, ``"h"``) with an optional multiple (``"2W"``, counted from the
        earliest timestamp's period): the timestamps in ``chunks`` are grouped by period,
        chunks in time order labelled by their period (``"2024-01-01/2024-01-07"`` for a
        week, ``"2024-01"`` for a month). Periods without rows have no chunk.

    Returns
    -------
    Chunking
        With none of the three, a single chunk of all rows.

    Raises
    ------
    ValueError
        If more than one of the three is given, keys are missing or do not match the rows,
        a size or count is not a positive integer at most ``n``, ``chunk_period`` comes without
        timestamps in ``chunks``, or the keys make more than :data:`MAX_CHUNKS` chunks.

    Examples
    --------
    >>> make_chunks(5, chunk_size=2).labels
    ('[0:1]', '[2:3]', '[4:4]')
    >>> c = make_chunks(4, chunks=["b", "a", "b", "c"])
    >>> c.labels, c.codes
    (('b', 'a', 'c'), array([0, 1, 0, 2]))
    >>> days = ["2024-01-09", "2024-01-01", "2024-01-03", "2024-01-15"]
    >>> c = make_chunks(4, chunks=days, chunk_period="W")
    >>> c.labels
    ('2024-01-01/2024-01-07', '2024-01-08/2024-01-14', '2024-01-15/2024-01-21')
    >>> c.codes
    array([1, 0, 0, 2])
    >>> make_chunks(4, chunks=days, chunk_period="2W").labels
    ('2024-01-01/2024-01-14', '2024-01-15/2024-01-28')
    """
    given = [k for k, v in (("chunks", chunks), ("chunk_size", chunk_size),
                            ("n_chunks", n_chunks)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give at most one of chunks, chunk_size and n_chunks; got "
                         f"{' and '.join(given)}.")
    if chunk_period is not None and chunks is None:
        raise ValueError("chunk_period groups timestamps: give the rows' timestamps as chunks.")
    if chunks is not None:
        return _from_keys(chunks, n, chunk_period)
    starts, labels = contiguous(n, chunk_size=chunk_size, n_chunks=n_chunks)
    sizes = np.diff(np.r_[starts, n])
    chunking = Chunking(labels, np.repeat(np.arange(starts.size), sizes))
    chunking.__dict__.update(sizes=sizes, contiguous=True)  # known: not counted, not checked
    return chunking


# ---------------------------------------------------------------------------------------------
# rows in score order


def _bits(scores: np.ndarray) -> np.ndarray:
    """The bit patterns of non-negative doubles as unsigned integers, which are in the order of
    the values (a -0.0 is taken as +0.0)."""
    return _positive_zeros(scores).view(np.uint64)


def _positive_zeros(scores: np.ndarray) -> np.ndarray:
    """``scores`` with -0.0 (the only negative sign among scores in [0, 1]) as +0.0."""
    return scores + 0.0 if np.signbit(scores).any() else scores


@cache
def _vector_sort() -> bool:
    """Whether NumPy's default sort of doubles beats its stable sort of their bit patterns on
    this machine (a merge sort, which compares integers faster than doubles).

    NumPy sorts doubles with SIMD instructions where the CPU has them (AVX-512: several times
    faster than the merge sort); elsewhere its introsort is slower than the merge sort. Timed
    once per process, best of three sorts of 16,384 values each way; either way gives the same
    order.
    """
    x = np.random.default_rng(0).random(1 << 14)
    bits = x.view(np.uint64)

    def best(sort: Callable[[], np.ndarray]) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            sort()
            times.append(time.perf_counter() - start)
        return min(times)

    return best(lambda: np.sort(x)) < best(lambda: np.sort(bits, kind="stable"))


def score_order(scores: np.ndarray) -> np.ndarray:
    """``np.argsort(scores, kind="stable")`` of scores in [0, 1] (validated): NumPy's default
    argsort with the rows of each run of equal scores put back in row order where NumPy sorts
    doubles with SIMD instructions (e.g. AVX-512; timed once per process), else a stable sort
    of their bit patterns.

    Examples
    --------
    >>> score_order(np.array([0.5, 0.0, 0.25, -0.0, 0.5]))
    array([1, 3, 2, 0, 4])
    """
    if not _vector_sort():
        return np.argsort(_bits(scores), kind="stable")
    scores = _positive_zeros(scores)
    order = np.argsort(scores)
    ranked = scores[order]
    tie = ranked[1:] == ranked[:-1]
    if tie.any():  # (run, row) as one key: runs stay in order, rows in row order inside each
        key = np.r_[0, np.cumsum(~tie)] * scores.size + order
        key.sort()
        order = key % scores.size
    return order


def sorted_scores(scores: np.ndarray) -> np.ndarray:
    """Scores in [0, 1] sorted (a copy; -0.0 as +0.0) by NumPy's default sort or a stable sort
    of their bit patterns, whichever is faster on the machine (timed once per process).

    Examples
    --------
    >>> sorted_scores(np.array([0.4, 0.1, -0.0, 0.4]))
    array([0. , 0.1, 0.4, 0.4])
    """
    if _vector_sort():
        return np.sort(_positive_zeros(scores))
    return np.sort(_bits(scores), kind="stable").view(np.float64)
