r"""Shared plumbing of the partitioned fast paths: dask partitions, the tree, score ranges.

Each partitioned fast path (``bayeval.methods.<name>.partitioned``, public through
:mod:`bayeval.scale`) reduces every partition (a block of rows) to a small summary, combines
the summaries :data:`SPLIT_EVERY` at a time up a tree (:func:`tree_reduce`), and finishes on
the client with the in-memory engine. The summaries are exact, so the results equal the
in-memory ones (to rounding, 1e-12).

A count over independent rows is the sum of its partitions' counts,
:math:`K=\sum_b K_b` with independent :math:`K_b`, so its PMF is the convolution
:math:`f_K=f_{K_1}*\dots*f_{K_B}` (:func:`bayeval.poibin.convolve`); sufficient statistics are
sums. Only the windows of the PMFs travel between workers: :math:`O(\sigma_b)` numbers each.
ROC-AUC's moments are sums over pairs of rows in score order: a first pass places score
ranges at quantiles of the scores, the rows travel once to their range's task (equal scores
share a range), and the ranges' sums (:class:`RangeSums`) concatenate in score order
(:func:`auc_numerator_moments`).

Inputs are dask arrays or columns of one dask DataFrame (see :func:`partitions`); numpy and
pandas inputs are one partition; empty partitions (e.g. left by a filter) add nothing. The
reductions run on dask's current scheduler: a ``distributed.Client`` registers itself as that
scheduler when it is created.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from bayeval.chunks import WHOLE, Chunking, make_chunks
from bayeval.confusion_moments import RatioMoments, ratio_moments
from bayeval.poibin import convolve_pmfs, pmf_above
from bayeval.validation import (
    as_array,
    as_choice,
    as_labels,
    as_positive_int,
    as_probabilities,
    check_same_length,
)

if TYPE_CHECKING:
    import dask.array as da

__all__ = [
    "RANGE_ROWS",
    "RANGE_SAMPLE",
    "SPLIT_EVERY",
    "RangeSums",
    "auc_moments",
    "auc_numerator_moments",
    "partitions",
    "poisson_binomial",
    "tree_reduce",
]

SPLIT_EVERY = 8
"""Summaries combined per task of :func:`tree_reduce`: depth :math:`\\lceil\\log_8 B\\rceil`."""

RANGE_ROWS = 2**21
"""ROC-AUC: rows per score range by default (a range's task sorts its rows and holds a few
arrays of them: about 200 bytes a row)."""

RANGE_SAMPLE = 1024
"""ROC-AUC: order statistics of its scores that every partition sends to place the ranges."""

# ---------------------------------------------------------------------------------------------
# partitions and the tree


@functools.cache
def dask_modules() -> tuple[ModuleType, ModuleType, ModuleType]:
    """dask, dask.array and dask.dataframe: the ``scale`` extra, imported on first use."""
    try:
        import dask
        import dask.array
        import dask.dataframe
    except ImportError as err:
        raise ImportError("the partitioned fast paths need dask: pip install "
                          "'bayeval[scale]'.") from err
    return dask, dask.array, dask.dataframe


def _is_frame(x: Any) -> bool:
    dd = dask_modules()[2]
    return isinstance(x, dd.Series | dd.DataFrame)


def as_dask_array(x: Any, rows: tuple[int, ...] | None) -> da.Array:
    """``x`` as a dask array with row chunks ``rows`` (its own if None), one chunk across."""
    da = dask_modules()[1]
    if _is_frame(x):
        x = x.to_dask_array(lengths=True)
    elif not isinstance(x, da.Array):
        x = np.asarray(x.to_numpy() if hasattr(x, "to_numpy") else x)
        x = da.from_array(x, chunks=(rows or -1,) + (-1,) * (x.ndim - 1))
    return x.rechunk((rows or x.chunks[0],) + (-1,) * (x.ndim - 1))


def partitions(**columns: Any) -> list[dict[str, Any]]:
    """Aligned row blocks of the columns: one dict ``{name: delayed block}`` per partition.

    Parameters
    ----------
    **columns
        Dask arrays (1-D, or 2-D with rows first), columns of a dask DataFrame, or array-likes;
        ``None`` columns are left out. Columns of one dask DataFrame keep its partitions (each
        read lazily); otherwise every column follows the row chunks of the first dask input
        (a frame is turned into an array, which counts its rows once), and array-likes alone
        make one block.

    Returns
    -------
    list of dict
        One per partition, in row order: ``{name: dask.delayed block}``.

    Raises
    ------
    ValueError
        If the columns have different lengths, or frames different numbers of partitions.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> blocks = partitions(scores=da.from_array(np.arange(5.0), chunks=2),
    ...                     labels=[1, 0, 1, 1, 0], chunks=None)
    >>> len(blocks), sorted(blocks[0])
    (3, ['labels', 'scores'])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     [b["labels"].compute().tolist() for b in blocks]  # the array-like follows
    [[1, 0], [1, 1], [0]]
    """
    given = {k: v for k, v in columns.items() if v is not None}
    if all(_is_frame(v) for v in given.values()):
        counts = {k: v.npartitions for k, v in given.items()}
        if len(set(counts.values())) > 1:
            raise ValueError(f"the dask columns must come from one DataFrame (same partitions); "
                             f"got partition counts {counts}.")
        blocks = {k: v.to_delayed() for k, v in given.items()}
    else:
        given = {k: v.to_dask_array(lengths=True) if _is_frame(v) else v
                 for k, v in given.items()}
        rows = next((v.chunks[0] for v in given.values() if isinstance(v, dask_modules()[1].Array)),
                    None)
        arrays = {k: as_dask_array(v, rows) for k, v in given.items()}
        check_same_length(**{k: np.empty(a.shape[0], bool) for k, a in arrays.items()})
        blocks = {k: list(a.to_delayed().reshape(len(a.chunks[0]), -1)[:, 0])
                  for k, a in arrays.items()}
    return [dict(zip(blocks, block, strict=True)) for block in zip(*blocks.values(), strict=True)]


def _fold(combine: Callable[[Any, Any], Any], *parts: Any) -> Any:
    return functools.reduce(combine, parts)


def tree_reduce(parts: Sequence[Any], combine: Callable[[Any, Any], Any],
                split_every: int = SPLIT_EVERY) -> Any:
    r"""One delayed result: ``parts`` combined in order, ``split_every`` per task.

    Parameters
    ----------
    parts : sequence
        Delayed summaries (or values), in order.
    combine : callable
        ``combine(a, b)``, associative; it need not be commutative (the order of the parts
        is kept, so keyed summaries keep the order of first appearance, and summaries of
        score ranges are concatenated in score order).
    split_every : int
        Parts combined per task.

    Returns
    -------
    dask.delayed.Delayed
        The combination of all parts, by a tree of depth :math:`\lceil\log_s B\rceil`
        (:math:`s` = ``split_every``).

    Examples
    --------
    >>> import dask
    >>> import operator
    >>> parts = [dask.delayed(letter) for letter in "abcdefghij"]
    >>> with dask.config.set(scheduler="synchronous"):
    ...     tree_reduce(parts, operator.add, split_every=3).compute()
    'abcdefghij'
    """
    dask, parts = dask_modules()[0], list(parts)
    while len(parts) > 1:
        parts = [dask.delayed(_fold)(combine, *parts[i : i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def reduce_blocks(block_fn: Callable[..., Any], combine: Callable[[Any, Any], Any],
            columns: dict[str, Any], **kwargs: Any) -> Any:
    """The delayed tree reduction of ``block_fn(**block, **kwargs)`` over the partitions."""
    dask = dask_modules()[0]
    return tree_reduce([dask.delayed(block_fn)(**block, **kwargs)
                        for block in partitions(**columns)], combine)


def merge_dicts(a: dict, b: dict, add: Callable[[Any, Any], Any]) -> dict:
    """Keyed summaries: ``a``'s keys in order, then ``b``'s new ones; shared keys added."""
    out = dict(a)
    for key, value in b.items():
        out[key] = add(out[key], value) if key in out else value
    return out


def add_tuples(a: NamedTuple, b: NamedTuple) -> NamedTuple:
    return type(a)(*(x + y for x, y in zip(a, b, strict=True)))


# ---------------------------------------------------------------------------------------------
# Poisson-binomial


def pmf_window(p: Any) -> tuple[int, np.ndarray]:
    """(start, probs): the PMF of PB(p) where it is not 0 (its Bernstein window)."""
    return pmf_above(np.asarray(p, dtype=float), 0.0)


def convolve_windows(a: tuple[int, np.ndarray], b: tuple[int, np.ndarray]
                     ) -> tuple[int, np.ndarray]:
    """The window of the sum of two independent counts given by their windows."""
    return a[0] + b[0], convolve_pmfs(a[1], b[1])


def trim_window(start: int, probs: np.ndarray, tol: float) -> tuple[int, np.ndarray]:
    """The contiguous window of the counts whose probability exceeds ``tol``."""
    keep = np.flatnonzero(probs > tol)
    lo, hi = (keep[0], keep[-1]) if keep.size else (int(np.argmax(probs)),) * 2
    return start + int(lo), probs[lo : hi + 1]


def poisson_binomial(p: Any, *, tol: float = 0.0) -> tuple[int, np.ndarray]:
    r"""PMF of :math:`K=\sum_i Y_i`, :math:`Y_i\sim\mathrm{Bernoulli}(p_i)`, from partitions of p.

    Parameters
    ----------
    p : dask array, dask Series or array-like, shape (n,)
        Success probabilities in [0, 1].
    tol : float
        Counts of probability at most ``tol`` are cut from both ends.

    Returns
    -------
    start : int
        The count of ``probs[0]``.
    probs : numpy.ndarray
        ``PoissonBinomial(p).pmf()[start : start + len(probs)]`` to 1e-12 absolute; every count
        outside has probability at most ``tol`` (plus 1e-20 cut by the Bernstein windows).

    Notes
    -----
    With :math:`K_b` the count of partition :math:`b`,
    :math:`P(K=k)=(f_{K_1}*\cdots*f_{K_B})(k)`: each partition computes the window of its PMF
    (:func:`bayeval.poibin.truncated_pmf`) and the windows are convolved up a tree
    (:func:`bayeval.poibin.convolve`, each product within 1e-12 absolute).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> p = da.from_array(np.array([0.1, 0.5, 0.9, 1.0]), chunks=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     start, probs = poisson_binomial(p)
    >>> start, probs.round(4).tolist()  # K >= 1: the last row is sure
    (1, [0.045, 0.455, 0.455, 0.045])
    """
    start, probs = reduce_blocks(pmf_window, convolve_windows, {"p": p}).compute()
    return trim_window(start, probs, tol)


def block_chunking(size: int, keys: Any, offset: int | None, starts: np.ndarray | None,
                    names: tuple[str, ...] | None) -> Chunking | None:
    """The chunks of one partition: by its keys, by its rows' global positions, or none."""
    if keys is not None:
        return make_chunks(size, chunks=keys)
    if starts is None:
        return None
    codes = np.searchsorted(starts, offset + np.arange(size), side="right") - 1
    present, local = np.unique(codes, return_inverse=True)
    return Chunking(tuple(names[i] for i in present), local)


def block_labels(labels: Any, size: int) -> np.ndarray | None:
    if labels is None:
        return None
    y = as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=np.empty(size), labels=y)
    return y


# ---------------------------------------------------------------------------------------------
# ROC-AUC: sums over score ranges


class RangeSums(NamedTuple):
    r"""ROC-AUC's sums over the rows of one score range (of one chunk, or of all rows).

    With the rows of the range sorted by score, :math:`q=1-p`, :math:`v=pq`, :math:`r=p-q`,
    and, counting only rows of the range, :math:`f_i=\sum_{j\ne i}\xi_{ij}q_j` (``forward``),
    :math:`b_i=\sum_{j\ne i}\xi_{ji}p_j` and :math:`l_i=f_i-b_i`:
    ``p, q, v, vv`` are :math:`\sum p,\sum q,\sum v,\sum v^2`; ``tied`` the sum over tied
    pairs of :math:`v_iv_j`; ``pf`` :math:`\sum p_if_i`; ``vl, vll, vr, vrr, vlr``
    :math:`\sum v_il_i,\sum v_il_i^2,\sum v_ir_i,\sum v_ir_i^2,\sum v_il_ir_i`;
    ``log0, log1`` :math:`\sum\log q,\sum\log p`.
    ``npos, nneg, num`` are the positives, the negatives and twice the Mann-Whitney count of
    the rows with a known label (exact integers).

    Examples
    --------
    The sums of two adjacent ranges, concatenated in score order, are those of all their rows:

    >>> import numpy as np
    >>> s, p = np.array([0.1, 0.4, 0.4, 0.8]), np.array([0.2, 0.5, 0.3, 0.9])
    >>> low, high = _range_sums(s[:1], p[:1], None, 0.5), _range_sums(s[1:], p[1:], None, 0.5)
    >>> bool(np.allclose(low.then(high), _range_sums(s, p, None, 0.5), rtol=1e-12))
    True
    """

    p: float
    q: float
    v: float
    vv: float
    tied: float
    pf: float
    vl: float
    vll: float
    vr: float
    vrr: float
    vlr: float
    log0: float
    log1: float
    npos: int
    nneg: int
    num: int

    def then(self, upper: RangeSums) -> RangeSums:
        r"""The sums of this range followed by ``upper``, a range of higher scores.

        Below :math:`L` and above :math:`U`: a row of :math:`L` gains :math:`p_U` in
        :math:`b_i`, a row of :math:`U` gains :math:`q_L` in :math:`f_i`, so
        :math:`l_i\to l_i-p_U` on :math:`L` and :math:`l_i\to l_i+q_L` on :math:`U`; every
        other sum adds. Associative: ranges combine in any grouping, in score order.
        """
        lo, hi = self, upper
        pu, ql = hi.p, lo.q
        return RangeSums(
            p=lo.p + hi.p, q=lo.q + hi.q, v=lo.v + hi.v, vv=lo.vv + hi.vv,
            tied=lo.tied + hi.tied, pf=lo.pf + hi.pf + pu * ql,
            vl=lo.vl - pu * lo.v + hi.vl + ql * hi.v,
            vll=(lo.vll - 2 * pu * lo.vl + pu * pu * lo.v
                 + hi.vll + 2 * ql * hi.vl + ql * ql * hi.v),
            vr=lo.vr + hi.vr, vrr=lo.vrr + hi.vrr,
            vlr=lo.vlr - pu * lo.vr + hi.vlr + ql * hi.vr,
            log0=lo.log0 + hi.log0, log1=lo.log1 + hi.log1,
            npos=lo.npos + hi.npos, nneg=lo.nneg + hi.nneg,
            num=lo.num + hi.num + 2 * hi.npos * lo.nneg)


def _ties(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First row of every run of equal scores (``s`` sorted) and the run of every row."""
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return first, np.repeat(np.arange(first.size), np.diff(np.r_[first, s.size]))


def _rank_sums(s: np.ndarray, y: np.ndarray | None) -> tuple[int, int, int]:
    """Positives, negatives and :math:`\\sum_{runs}pos(2\\,neg_{below}+neg)` of the rows with a
    known label, ``s`` sorted: :func:`bayeval.metrics.roc_auc`'s integers."""
    if y is None:
        return 0, 0, 0
    known = ~np.isnan(y)
    s, y = s[known], y[known]
    if s.size == 0:
        return 0, 0, 0
    first, _ = _ties(s)
    pos = np.add.reduceat(y.astype(np.int64), first)
    neg = np.diff(np.r_[first, s.size]) - pos
    below = np.cumsum(neg) - neg
    return int(pos.sum()), int(neg.sum()), int((pos * (2 * below + neg)).sum())


def _range_sums(s: np.ndarray, p: np.ndarray, y: np.ndarray | None, tie: float) -> RangeSums:
    """The sums of rows sorted by score ``s``
    (:func:`bayeval.confusion_moments.auc_numerator_moments`' terms, restricted to the range)."""
    q, v = 1.0 - p, p * (1.0 - p)
    first, group = _ties(s)
    sum_q, sum_p, sum_v = (np.add.reduceat(x, first) for x in (q, p, v))
    q_below = np.cumsum(sum_q) - sum_q  # per run: q of the lower runs
    p_above = p.sum() - np.cumsum(sum_p)
    forward = q_below[group] + tie * (sum_q[group] - q)
    backward = p_above[group] + tie * (sum_p[group] - p)
    lin, r = forward - backward, p - q
    with np.errstate(divide="ignore"):
        log0, log1 = float(np.log1p(-p).sum()), float(np.log(p).sum())
    npos, nneg, num = _rank_sums(s, y)
    return RangeSums(
        p=float(p.sum()), q=float(q.sum()), v=float(v.sum()), vv=float(v @ v),
        tied=float(((sum_v**2 - np.add.reduceat(v**2, first)) / 2).sum()),
        pf=float(p @ forward), vl=float(v @ lin), vll=float(v @ lin**2), vr=float(v @ r),
        vrr=float(v @ r**2), vlr=float(v @ (lin * r)), log0=log0, log1=log1, npos=npos,
        nneg=nneg, num=num)


class _Piece(NamedTuple):
    """The rows of one partition in one score range."""

    names: tuple[str, ...]  # the partition's chunks (empty: no chunks)
    codes: np.ndarray | None  # chunk of each row, an index into names
    s: np.ndarray
    p: np.ndarray | None  # None: computed from s in the range's task
    y: np.ndarray | None  # int8 labels, -1 = missing


def _range_split(scores: Any, keys: Any = None, labels: Any = None, p: Any = None, *,
                 edges: np.ndarray, offset: int | None = None, starts: np.ndarray | None = None,
                 names: tuple[str, ...] | None = None) -> tuple[_Piece, ...]:
    """One partition's rows cut into the score ranges ``(-inf, e_0), [e_0, e_1), ...``: equal
    scores fall in one range. The values were checked by the first pass or are checked by the
    reduction run beside."""
    s = np.asarray(scores, dtype=float).ravel()
    chunking = block_chunking(s.size, keys, offset, starts, names) if s.size else None
    codes = None
    if chunking is not None:
        codes = chunking.codes.astype(np.int16 if len(chunking.labels) < 2**15 else np.int64)
    y = None
    if labels is not None:  # labels travel as int8, -1 = missing
        y = np.asarray(labels, dtype=float).ravel()
        y = np.where(np.isnan(y), -1, y).astype(np.int8)
    pp = None if p is None else np.asarray(p, dtype=float).ravel()
    where = np.searchsorted(edges, s, side="right")
    order = np.argsort(where, kind="stable")
    cuts = np.searchsorted(where[order], np.arange(edges.size + 2))
    out = []
    for lo, hi in itertools.pairwise(cuts):
        rows = order[lo:hi]
        out.append(_Piece(chunking.labels if chunking else (),
                          None if codes is None else codes[rows], s[rows],
                          None if pp is None else pp[rows], None if y is None else y[rows]))
    return tuple(out)


def _range_task(pieces: list[_Piece], *, calibrator: Any, tie: float,
                transforms: tuple | None = None) -> dict[Any, RangeSums]:
    """The sums of one score range's rows.

    Without ``transforms`` (CBPE): per chunk and over all rows (key :data:`WHOLE`), the known
    labels counted apart for the realized ROC-AUC. With ``transforms`` (PEMI): a known label is
    its own probability (0 or 1), and the sums over all rows after each map of the
    probabilities (keys 0, 1, ...; None: unchanged), e.g. PEMI's MNAR shifts of the log-odds.
    """
    pieces = [pc for pc in pieces if pc.s.size]
    if not pieces:
        return {}
    s = np.concatenate([pc.s for pc in pieces])
    if pieces[0].p is not None:
        p = np.concatenate([pc.p for pc in pieces])
    else:
        p = s if calibrator is None else np.asarray(calibrator.predict(s), dtype=float)
    y = None
    if pieces[0].y is not None:
        y = np.concatenate([pc.y for pc in pieces]).astype(float)
        y[y < 0] = np.nan
    order = np.argsort(s, kind="stable")
    if transforms is not None:
        p = (p if y is None else np.where(np.isnan(y), p, y))[order]
        return {k: _range_sums(s[order], p if f is None else f(p), None, tie)
                for k, f in enumerate(transforms)}
    out = {}
    if pieces[0].codes is not None:
        names = list(dict.fromkeys(n for pc in pieces for n in pc.names))
        index = {n: i for i, n in enumerate(names)}
        codes = np.concatenate([np.array([index[n] for n in pc.names], dtype=np.int64)[pc.codes]
                                for pc in pieces])
        rows = Chunking(tuple(names), codes).rows(order)  # each chunk's rows, sorted by score
        out = {names[c]: _range_sums(s[r], p[r], None if y is None else y[r], tie)
               for c, r in enumerate(rows) if r.size}
    out[WHOLE] = _range_sums(s[order], p[order], None if y is None else y[order], tie)
    return out


def range_edges(profiles: list[tuple], score_ranges: int | None) -> np.ndarray:
    """Scores that cut the rows into ``score_ranges`` ranges (:func:`count_ranges`) of near-equal
    counts, from every partition's evenly spaced order statistics (weighted by the
    partition's rows); none without rows."""
    samples = [(size, values) for size, values, _ in profiles if size]
    if not samples:
        return np.empty(0)
    n_ranges = count_ranges(score_ranges, sum(size for size, _ in samples))
    values = np.concatenate([v for _, v in samples])
    weights = np.concatenate([np.full(v.size, size / v.size) for size, v in samples])
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    levels = cumulative[-1] * np.arange(1, n_ranges) / n_ranges
    at = np.minimum(np.searchsorted(cumulative, levels), values.size - 1)
    return np.unique(values[order][at])


def range_sums_by_chunk(blocks: list[dict], where: list[dict], edges: np.ndarray,
                         **task: Any) -> Any:
    """Delayed :class:`RangeSums` by the keys of :func:`_range_task` (``task`` its options):
    each partition is cut into the score ranges, each range's pieces meet in one task (a
    shuffle: rows of a range travel, at most about n / len(ranges) to a task), and the
    ranges' sums are concatenated in score order up a tree."""
    dask = dask_modules()[0]
    n_ranges = edges.size + 1
    splits = []
    for block, kwargs in zip(blocks, where, strict=True):
        out = dask.delayed(_range_split, nout=n_ranges)(**block, **kwargs, edges=edges)
        splits.append(out if n_ranges > 1 else (out[0],))  # nout=1: the tuple itself
    tasks = [dask.delayed(_range_task)([split[i] for split in splits], **task)
             for i in range(n_ranges)]
    return tree_reduce(tasks, functools.partial(merge_dicts, add=RangeSums.then))


def range_ratio_moments(sums: RangeSums, tie: float) -> RatioMoments:
    r""":func:`bayeval.confusion_moments.auc_numerator_moments` from the sums of all the rows.

    Over all rows :math:`l_i=c_i` and :math:`c^D_i=D_0+r_i` with :math:`D_0=\sum q-\sum p`, so
    :math:`\sum v(c^D)^2=D_0^2\sum v+2D_0\sum vr+\sum vr^2` and
    :math:`\sum vcc^D=D_0\sum vl+\sum vlr`.
    """
    d0 = sums.q - sums.p
    pairs = (sums.v**2 - sums.vv) / 2
    return RatioMoments(
        mean_num=sums.pf, var_num=sums.vll + pairs + (4 * tie * tie - 1) * sums.tied,
        mean_den=sums.p * sums.q - sums.v,
        var_den=d0 * d0 * sums.v + 2 * d0 * sums.vr + sums.vrr + 4 * pairs,
        cov=d0 * sums.vl + sums.vlr + 2 * pairs + 2 * (2 * tie - 1) * sums.tied)


def auc_numerator_moments(scores: Any, p: Any, labels: Any = None, *, ties: str = "half",
                          score_ranges: int | None = None) -> RatioMoments:
    r"""Exact moments of ROC-AUC's numerator and denominator from partitioned rows.

    Parameters
    ----------
    scores : dask array, dask Series or array-like, shape (n,)
        Finite real scores (only their order matters).
    p : same, float in [0, 1]
        :math:`P(Y_i=1)`, ignored (but checked) where ``labels`` is known.
    labels : same, 0, 1 or NaN, optional
        Known labels, NaN where unknown.
    ties : {"half", "one"}
        Weight of a tied positive-negative pair (as in
        :func:`bayeval.confusion_moments.auc_numerator_moments`).
    score_ranges : int, optional
        Score ranges the rows are shuffled into (default: one per :data:`RANGE_ROWS` rows);
        a range's task holds its rows, and every partition sends one piece to every range.

    Returns
    -------
    bayeval.confusion_moments.RatioMoments
        ``auc_numerator_moments(scores, p, labels, ties=ties)`` computed in memory, to 1e-12
        relative.

    Notes
    -----
    The moments are sums over pairs :math:`(i, j)` ordered by score
    (:func:`bayeval.confusion_moments.auc_numerator_moments`): with
    :math:`c_i=\sum_{j\ne i}\xi_{ij}q_j-\sum_{j\ne i}\xi_{ji}p_j`,
    :math:`\operatorname{Var}A=\sum_iv_ic_i^2+\Pi+(4w^2-1)\Pi_=`. A first pass samples the
    scores of every partition and picks range edges at their quantiles; every partition
    sends the rows of each range to that range's task (equal scores share a range, so tied
    pairs never straddle two), which sorts them and reduces them to the sums of
    :class:`RangeSums` (local :math:`c_i`, and :math:`\sum v c`, :math:`\sum vc^2`...).
    Ranges concatenate in score order: a lower range :math:`L` shifts the :math:`c_i` of a
    higher range :math:`U` by :math:`+\sum_L q`, :math:`U` shifts those of :math:`L` by
    :math:`-\sum_U p`, and the sums of powers of :math:`c` follow by the binomial formula.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.confusion_moments import auc_numerator_moments as in_memory
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.integers(0, 50, 2_000) / 50  # many ties
    >>> p = rng.beta(2, 3, 2_000)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     m = auc_numerator_moments(da.from_array(scores, chunks=500), p, score_ranges=7)
    >>> ref = in_memory(scores, p)
    >>> bool(np.allclose(m, ref, rtol=1e-12, atol=0))
    True
    """
    tie = 0.5 if as_choice(ties, "ties", ("half", "one")) == "half" else 1.0
    dask = dask_modules()[0]
    blocks = partitions(scores=scores, p=p, labels=labels)
    profiles = dask.compute(*[dask.delayed(_auc_profile)(**b, sample=RANGE_SAMPLE)
                              for b in blocks])
    if not any(size for size, _, _ in profiles):
        raise ValueError("scores is empty; at least one value is needed.")
    edges = range_edges(profiles, score_ranges)
    sums = range_sums_by_chunk(blocks, [{}] * len(blocks), edges, calibrator=None, tie=tie,
                                transforms=(None,))
    return range_ratio_moments(sums.compute()[0], tie)


def auc_moments(scores: Any, p: Any, labels: Any = None, *, ties: str = "half",
                second_order: bool = True, score_ranges: int | None = None
                ) -> tuple[float, float]:
    r"""Mean and variance of ROC-AUC (delta method) from partitioned rows.

    Parameters
    ----------
    scores, p, labels, ties, score_ranges
        As in :func:`auc_numerator_moments`.
    second_order : bool
        As in :func:`bayeval.confusion_moments.auc_moments`.

    Returns
    -------
    mean, var : float
        ``bayeval.confusion_moments.auc_moments(scores, p, labels, ...)`` to 1e-12 relative.

    Raises
    ------
    ValueError
        If every completion of the labels has a single class.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> scores = rng.random(1_000)
    >>> labels = np.where(rng.random(1_000) < 0.5, np.nan, rng.random(1_000) < scores)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     mean, var = auc_moments(da.from_array(scores, chunks=300), scores, labels)
    >>> from bayeval.confusion_moments import auc_moments as in_memory
    >>> bool(np.allclose((mean, var), in_memory(scores, scores, labels), rtol=1e-12, atol=0))
    True
    """
    return ratio_moments(auc_numerator_moments(scores, p, labels, ties=ties,
                                               score_ranges=score_ranges), second_order)


def _auc_profile(scores: Any, p: Any, labels: Any = None, *, sample: int
                 ) -> tuple[int, np.ndarray | None, None]:
    """:func:`score_profile` of a partition of :func:`auc_numerator_moments`, columns checked."""
    if len(scores) == 0:
        return 0, None, None
    s = as_array(scores, "scores")
    y = None if labels is None else as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=s, p=as_probabilities(p, "p"), labels=y)
    return score_profile(s, sample=sample)


def score_profile(scores: Any, keys: Any = None, *, sample: int) -> tuple[int, np.ndarray | None,
                                                                      dict[str, int] | None]:
    """(rows, evenly spaced order statistics of the scores if ``sample``, rows per chunk key
    if ``keys``) of one partition."""
    size = len(scores)
    values = counts = None
    if size and sample:
        s = np.sort(as_array(scores, "scores"))
        values = s[np.linspace(0, size - 1, min(size, sample)).round().astype(np.int64)]
    if size and keys is not None:
        chunking = make_chunks(size, chunks=keys)
        counts = dict(zip(chunking.labels, chunking.sizes.tolist(), strict=True))
    return size, values, counts


def count_ranges(score_ranges: Any, n: int) -> int:
    if score_ranges is None:
        return max(1, -(-n // RANGE_ROWS))
    return as_positive_int(score_ranges, "score_ranges")
