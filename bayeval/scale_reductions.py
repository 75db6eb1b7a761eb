r"""Partitioned fast paths: the methods' closed forms on data split into dask partitions.

Each fast path reduces every partition (a block of rows) to a small summary, combines the
summaries :data:`SPLIT_EVERY` at a time up a tree (:func:`tree_reduce`), and finishes on the
client with the in-memory engine. The summaries are exact, so the results equal the in-memory
ones (to rounding, 1e-12):

=============================  ==========================================  ====================
fast path                      summary of a partition :math:`b`            combined by
=============================  ==========================================  ====================
:func:`poisson_binomial`       the PMF window of :math:`K_b`                convolution
:func:`cbpe`                   per chunk: windows of :math:`TP_b, FN_b`,    convolution, sums
                               row counts, :math:`\sum p`, the labelled
                               rows' confusion counts
:func:`auc_numerator_moments`  its rows, cut into score ranges (also for   concatenation of
                               CBPE's and PEMI's ROC-AUC); each range       score ranges
                               reduced to 13 sums
:func:`pemi_sums`              known counts; :math:`\sum p`,                sums
                               :math:`\sum p(1-p)`, :math:`\sum\log p`...
:func:`judge_counts`           the labelled 2x2 table, :math:`T_1, T_0`     sums
:func:`bounds_cells`           items per (weak-label pattern, prediction)   sums on the union
:func:`mvu_hard_confidence`    the rows' :math:`(y_\mathrm{hard},           none (a row map)
                               c_\mathrm{hard})`
=============================  ==========================================  ====================

A count over independent rows is the sum of its partitions' counts,
:math:`K=\sum_b K_b` with independent :math:`K_b`, so its PMF is the convolution
:math:`f_K=f_{K_1}*\dots*f_{K_B}` (:func:`bayeval.poibin.convolve`); sufficient statistics are
sums. Only the windows of the PMFs travel between workers: :math:`O(\sigma_b)` numbers each.
ROC-AUC's moments are sums over pairs of rows in score order: a first pass places score
ranges at quantiles of the scores, the rows travel once to their range's task (equal scores
share a range), and the ranges' sums concatenate in score order (:func:`auc_numerator_moments`).
The calibrators (CBPE's reference, PEMI's labelled rows) are fitted in memory, as the in-memory
methods fit them, and applied to every partition.

Inputs are dask arrays or columns of one dask DataFrame (see :func:`partitions`); numpy and
pandas inputs are one partition; empty partitions (e.g. left by a filter) add nothing. The
reductions run on dask's current scheduler: a
``distributed.Client`` registers itself as that scheduler when it is created.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval import metrics as M
from bayeval.calibration import CALIBRATORS, Calibrator, make_calibrator
from bayeval.chunks import WHOLE, Chunking, make_chunks
from bayeval.confusion import TOL, RatioMoments, count_moments, ratio_moments
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods import cbpe as cbpe_method
from bayeval.methods import judge_estimators as E
from bayeval.methods import label_models as lm
from bayeval.methods import pemi as pemi_method
from bayeval.methods.bounds import METRICS as BOUNDS_METRICS
from bayeval.methods.bounds import default_metrics, exact_bounds
from bayeval.methods.cbpe_exact import CountLaw, NormalLaw
from bayeval.methods.mvu_confidence import gaussian_vote_probs
from bayeval.methods.pemi import as_mnar
from bayeval.methods.pemi_fast import (
    Rows,
    closed_form,
    delta_nodes,
    mixture,
    shift,
    undefined_probability,
)
from bayeval.metrics import METRICS
from bayeval.poibin import convolve, truncated_pmf
from bayeval.validation import (
    as_array,
    as_beta,
    as_binary,
    as_choice,
    as_ci_prob,
    as_labels,
    as_probabilities,
    as_scores,
    as_zero_division,
    check_same_length,
)

if TYPE_CHECKING:
    import dask.array as da

__all__ = [
    "CALIBRATION_ROWS",
    "RANGE_ROWS",
    "SPLIT_EVERY",
    "BoundsCells",
    "LabelSums",
    "auc_moments",
    "auc_numerator_moments",
    "bounds_cells",
    "bounds_exact",
    "cbpe",
    "judge_counts",
    "judge_estimates",
    "mvu_hard_confidence",
    "partitions",
    "pemi_gauss",
    "pemi_sums",
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

CALIBRATION_ROWS = 10**7
"""PEMI: at most this many labelled rows are gathered on the client to fit the calibrator
(9 bytes each)."""

CBPE_TIE = 0.5
"""Weight of a tied positive-negative pair in CBPE's ROC-AUC (scikit-learn's)."""


# ---------------------------------------------------------------------------------------------
# partitions and the tree


@functools.cache
def _dask() -> tuple[ModuleType, ModuleType, ModuleType]:
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
    dd = _dask()[2]
    return isinstance(x, dd.Series | dd.DataFrame)


def _as_dask_array(x: Any, rows: tuple[int, ...] | None) -> da.Array:
    """``x`` as a dask array with row chunks ``rows`` (its own if None), one chunk across."""
    da = _dask()[1]
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
        rows = next((v.chunks[0] for v in given.values() if isinstance(v, _dask()[1].Array)),
                    None)
        arrays = {k: _as_dask_array(v, rows) for k, v in given.items()}
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
    dask, parts = _dask()[0], list(parts)
    while len(parts) > 1:
        parts = [dask.delayed(_fold)(combine, *parts[i : i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def _reduce(block_fn: Callable[..., Any], combine: Callable[[Any, Any], Any],
            columns: dict[str, Any], **kwargs: Any) -> Any:
    """The delayed tree reduction of ``block_fn(**block, **kwargs)`` over the partitions."""
    dask = _dask()[0]
    return tree_reduce([dask.delayed(block_fn)(**block, **kwargs)
                        for block in partitions(**columns)], combine)


def _merge(a: dict, b: dict, add: Callable[[Any, Any], Any]) -> dict:
    """Keyed summaries: ``a``'s keys in order, then ``b``'s new ones; shared keys added."""
    out = dict(a)
    for key, value in b.items():
        out[key] = add(out[key], value) if key in out else value
    return out


def _add_tuples(a: NamedTuple, b: NamedTuple) -> NamedTuple:
    return type(a)(*(x + y for x, y in zip(a, b, strict=True)))


# ---------------------------------------------------------------------------------------------
# Poisson-binomial


def _pb_window(p: Any) -> tuple[int, np.ndarray]:
    """(start, probs): the PMF of PB(p) where it is not 0 (its Bernstein window)."""
    return truncated_pmf(np.asarray(p, dtype=float), tol=0.0)


def _convolve(a: tuple[int, np.ndarray], b: tuple[int, np.ndarray]) -> tuple[int, np.ndarray]:
    """The window of the sum of two independent counts given by their windows."""
    return a[0] + b[0], convolve(a[1], b[1])


def _window(start: int, probs: np.ndarray, tol: float) -> tuple[int, np.ndarray]:
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
    start, probs = _reduce(_pb_window, _convolve, {"p": p}).compute()
    return _window(start, probs, tol)


# ---------------------------------------------------------------------------------------------
# CBPE: counts per chunk


class _ChunkCounts(NamedTuple):
    """What CBPE needs of one chunk's rows (in one partition, or summed over several)."""

    n_pos: int  # rows predicted positive
    n_neg: int
    expected_tp: float  # sum of p over the rows predicted positive
    expected_fn: float
    tp: tuple[int, np.ndarray]  # window of the PMF of TP (PB over the predicted positives)
    fn: tuple[int, np.ndarray]
    labelled: np.ndarray  # tp, fp, fn, tn of the rows with a known label (int64)

    def __add__(self, other: _ChunkCounts) -> _ChunkCounts:
        return _ChunkCounts(self.n_pos + other.n_pos, self.n_neg + other.n_neg,
                            self.expected_tp + other.expected_tp,
                            self.expected_fn + other.expected_fn,
                            _convolve(self.tp, other.tp), _convolve(self.fn, other.fn),
                            self.labelled + other.labelled)


def _confusion(positive: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """tp, fp, fn, tn of the rows whose label ``y`` is known (NaN: missing)."""
    known = None if y is None else ~np.isnan(y)
    if known is None or not known.any():
        return np.zeros(4, np.int64)
    return np.array(M.confusion_counts(y[known], positive[known]), dtype=np.int64)


def _chunk_counts(p: np.ndarray, positive: np.ndarray, y: np.ndarray | None) -> _ChunkCounts:
    pos, neg = p[positive], p[~positive]
    return _ChunkCounts(pos.size, neg.size, float(pos.sum()), float(neg.sum()), _pb_window(pos),
                        _pb_window(neg), _confusion(positive, y))


def _ranges(n: int, chunk_size: Any, n_chunks: Any) -> tuple[np.ndarray, tuple[str, ...]]:
    """First rows and labels of contiguous chunks, as :func:`bayeval.chunks.make_chunks` makes.

    Only the first rows are built (``make_chunks`` would hold a code for each of the n rows).
    """
    if chunk_size is not None and n_chunks is not None:
        raise ValueError("give at most one of chunks, chunk_size and n_chunks; got chunk_size "
                         "and n_chunks.")
    for name, value in (("chunk_size", chunk_size), ("n_chunks", n_chunks)):
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, int | np.integer) or not 1 <= value <= n):
            raise ValueError(f"{name} must be a positive integer at most the number of rows "
                             f"({n}), got {value!r}.")
    if chunk_size is not None:
        starts = np.arange(0, n, int(chunk_size))
    else:
        count = int(n_chunks or 1)
        sizes = np.full(count, n // count)
        sizes[: n % count] += 1
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
    ends = np.r_[starts[1:], n] - 1
    return starts, tuple(f"[{a}:{b}]" for a, b in zip(starts, ends, strict=True))


def _block_chunking(size: int, keys: Any, offset: int | None, starts: np.ndarray | None,
                    names: tuple[str, ...] | None) -> Chunking | None:
    """The chunks of one partition: by its keys, by its rows' global positions, or none."""
    if keys is not None:
        return make_chunks(size, chunks=keys)
    if starts is None:
        return None
    codes = np.searchsorted(starts, offset + np.arange(size), side="right") - 1
    present, local = np.unique(codes, return_inverse=True)
    return Chunking(tuple(names[i] for i in present), local)


def _block_labels(labels: Any, size: int) -> np.ndarray | None:
    if labels is None:
        return None
    y = as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=np.empty(size), labels=y)
    return y


def _cbpe_block(scores: Any, keys: Any = None, labels: Any = None, *, threshold: float,
                calibrator: Any, offset: int | None = None, starts: np.ndarray | None = None,
                names: tuple[str, ...] | None = None) -> dict[str, _ChunkCounts]:
    if len(scores) == 0:  # an empty partition (e.g. filtered out)
        return {}
    s = as_scores(scores, "scores")
    y = _block_labels(labels, s.size)
    p = s if calibrator is None else np.asarray(calibrator.predict(s), dtype=float)
    positive = s >= threshold
    chunking = _block_chunking(s.size, keys, offset, starts, names)
    return {label: _chunk_counts(p[rows], positive[rows], None if y is None else y[rows])
            for label, rows in zip(chunking.labels, chunking.rows(), strict=True)}


def _count_law(c: _ChunkCounts) -> CountLaw:
    """CBPE's V0 law of a chunk: both windows cut to the counts above TOL and renormalised, as
    :meth:`bayeval.methods.cbpe_exact.CountLaw.poisson_binomial` has them."""
    (ts, tp), (fs, fn) = (_window(*w, TOL) for w in (c.tp, c.fn))
    return CountLaw(c.n_pos, c.n_neg, ts, (tp / tp.sum())[None, :], fs, (fn / fn.sum())[None, :],
                    np.ones(1))


# ---------------------------------------------------------------------------------------------
# ROC-AUC: sums over score ranges


class _RangeSums(NamedTuple):
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

    def then(self, upper: _RangeSums) -> _RangeSums:
        r"""The sums of this range followed by ``upper``, a range of higher scores.

        Below :math:`L` and above :math:`U`: a row of :math:`L` gains :math:`p_U` in
        :math:`b_i`, a row of :math:`U` gains :math:`q_L` in :math:`f_i`, so
        :math:`l_i\to l_i-p_U` on :math:`L` and :math:`l_i\to l_i+q_L` on :math:`U`; every
        other sum adds. Associative: ranges combine in any grouping, in score order.
        """
        lo, hi = self, upper
        pu, ql = hi.p, lo.q
        return _RangeSums(
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


def _range_sums(s: np.ndarray, p: np.ndarray, y: np.ndarray | None, tie: float) -> _RangeSums:
    """The sums of rows sorted by score ``s`` (:func:`bayeval.confusion.auc_numerator_moments`'
    terms, restricted to the range)."""
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
    return _RangeSums(
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
    chunking = _block_chunking(s.size, keys, offset, starts, names) if s.size else None
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
                shifts: tuple | None = None) -> dict[Any, _RangeSums]:
    """The sums of one score range's rows.

    Without ``shifts`` (CBPE): per chunk and over all rows (key :data:`WHOLE`), the known
    labels counted apart for the realized ROC-AUC. With ``shifts`` (PEMI): a known label is
    its own probability (0 or 1), and the sums over all rows at each MNAR shift of the
    log-odds (keys 0, 1, ...; None: no shift; a shift keeps 0 and 1).
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
    if shifts is not None:
        p = (p if y is None else np.where(np.isnan(y), p, y))[order]
        return {k: _range_sums(s[order], p if d is None else shift(p, d), None, tie)
                for k, d in enumerate(shifts)}
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


def _range_edges(profiles: list[tuple], score_ranges: int | None) -> np.ndarray:
    """Scores that cut the rows into ``score_ranges`` ranges (:func:`_n_ranges`) of near-equal
    counts, from every partition's evenly spaced order statistics (weighted by the
    partition's rows); none without rows."""
    samples = [(size, values) for size, values, _ in profiles if size]
    if not samples:
        return np.empty(0)
    n_ranges = _n_ranges(score_ranges, sum(size for size, _ in samples))
    values = np.concatenate([v for _, v in samples])
    weights = np.concatenate([np.full(v.size, size / v.size) for size, v in samples])
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    levels = cumulative[-1] * np.arange(1, n_ranges) / n_ranges
    at = np.minimum(np.searchsorted(cumulative, levels), values.size - 1)
    return np.unique(values[order][at])


def _range_sums_by_chunk(blocks: list[dict], where: list[dict], edges: np.ndarray,
                         **task: Any) -> Any:
    """Delayed :class:`_RangeSums` by the keys of :func:`_range_task` (``task`` its options):
    each partition is cut into the score ranges, each range's pieces meet in one task (a
    shuffle: rows of a range travel, at most about n / len(ranges) to a task), and the
    ranges' sums are concatenated in score order up a tree."""
    dask = _dask()[0]
    n_ranges = edges.size + 1
    splits = []
    for block, kwargs in zip(blocks, where, strict=True):
        out = dask.delayed(_range_split, nout=n_ranges)(**block, **kwargs, edges=edges)
        splits.append(out if n_ranges > 1 else (out[0],))  # nout=1: the tuple itself
    tasks = [dask.delayed(_range_task)([split[i] for split in splits], **task)
             for i in range(n_ranges)]
    return tree_reduce(tasks, functools.partial(_merge, add=_RangeSums.then))


def _ratio_moments(sums: _RangeSums, tie: float) -> RatioMoments:
    r""":func:`bayeval.confusion.auc_numerator_moments` from the sums of all the rows.

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


def _auc_law(sums: _RangeSums, zero_division: float) -> tuple[NormalLaw, float]:
    r"""CBPE's ROC-AUC law and NannyML's estimate, as ``bayeval.methods.cbpe`` has them.

    NannyML's estimate, the area under the ROC curve of the expected counts, is
    :math:`\sum_{i,j}p_iq_j\xi_{ij}/(PQ)=(\mathbb EA+\frac12\sum_iv_i)/(PQ)`, the pairs
    :math:`i=j` included.
    """
    moments = _ratio_moments(sums, CBPE_TIE)
    if moments.mean_den == 0:  # both classes impossible: undefined with probability 1
        return NormalLaw(zero_division, 0.0, 1.0), zero_division
    mean, var = ratio_moments(moments)
    p_undefined = min(float(np.exp(sums.log0) + np.exp(sums.log1)), 1.0)
    pq = sums.p * sums.q
    return NormalLaw(mean, float(np.sqrt(var)), p_undefined), (sums.pf + 0.5 * sums.v) / pq


def _realized_auc(sums: _RangeSums, zero_division: float) -> float:
    """ROC-AUC of the labelled rows, :func:`bayeval.metrics.roc_auc` (NaN without labels)."""
    if sums.npos + sums.nneg == 0:
        return np.nan
    if sums.npos == 0 or sums.nneg == 0:
        return zero_division
    return float(np.true_divide(np.int64(sums.num), np.int64(2 * sums.npos * sums.nneg)))


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
        :func:`bayeval.confusion.auc_numerator_moments`).
    score_ranges : int, optional
        Score ranges the rows are shuffled into (default: one per :data:`RANGE_ROWS` rows);
        a range's task holds its rows, and every partition sends one piece to every range.

    Returns
    -------
    bayeval.confusion.RatioMoments
        ``auc_numerator_moments(scores, p, labels, ties=ties)`` computed in memory, to 1e-12
        relative.

    Notes
    -----
    The moments are sums over pairs :math:`(i, j)` ordered by score
    (:func:`bayeval.confusion.auc_numerator_moments`): with
    :math:`c_i=\sum_{j\ne i}\xi_{ij}q_j-\sum_{j\ne i}\xi_{ji}p_j`,
    :math:`\operatorname{Var}A=\sum_iv_ic_i^2+\Pi+(4w^2-1)\Pi_=`. A first pass samples the
    scores of every partition and picks range edges at their quantiles; every partition
    sends the rows of each range to that range's task (equal scores share a range, so tied
    pairs never straddle two), which sorts them and reduces them to the sums of
    :class:`_RangeSums` (local :math:`c_i`, and :math:`\sum v c`, :math:`\sum vc^2`...).
    Ranges concatenate in score order: a lower range :math:`L` shifts the :math:`c_i` of a
    higher range :math:`U` by :math:`+\sum_L q`, :math:`U` shifts those of :math:`L` by
    :math:`-\sum_U p`, and the sums of powers of :math:`c` follow by the binomial formula.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.confusion import auc_numerator_moments as in_memory
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
    dask = _dask()[0]
    blocks = partitions(scores=scores, p=p, labels=labels)
    profiles = dask.compute(*[dask.delayed(_auc_profile)(**b, sample=RANGE_SAMPLE)
                              for b in blocks])
    if not any(size for size, _, _ in profiles):
        raise ValueError("scores is empty; at least one value is needed.")
    edges = _range_edges(profiles, score_ranges)
    sums = _range_sums_by_chunk(blocks, [{}] * len(blocks), edges, calibrator=None, tie=tie,
                                shifts=(None,))
    return _ratio_moments(sums.compute()[0], tie)


def auc_moments(scores: Any, p: Any, labels: Any = None, *, ties: str = "half",
                second_order: bool = True, score_ranges: int | None = None
                ) -> tuple[float, float]:
    r"""Mean and variance of ROC-AUC (delta method) from partitioned rows.

    Parameters
    ----------
    scores, p, labels, ties, score_ranges
        As in :func:`auc_numerator_moments`.
    second_order : bool
        As in :func:`bayeval.confusion.auc_moments`.

    Returns
    -------
    mean, var : float
        ``bayeval.confusion.auc_moments(scores, p, labels, ...)`` to 1e-12 relative.

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
    >>> from bayeval.confusion import auc_moments as in_memory
    >>> bool(np.allclose((mean, var), in_memory(scores, scores, labels), rtol=1e-12, atol=0))
    True
    """
    return ratio_moments(auc_numerator_moments(scores, p, labels, ties=ties,
                                               score_ranges=score_ranges), second_order)


def _auc_profile(scores: Any, p: Any, labels: Any = None, *, sample: int
                 ) -> tuple[int, np.ndarray | None, None]:
    """:func:`_profile` of one partition of :func:`auc_numerator_moments`, its columns checked."""
    if len(scores) == 0:
        return 0, None, None
    s = as_array(scores, "scores")
    y = None if labels is None else as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=s, p=as_probabilities(p, "p"), labels=y)
    return _profile(s, sample=sample)


def _profile(scores: Any, keys: Any = None, *, sample: int) -> tuple[int, np.ndarray | None,
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


def _n_ranges(score_ranges: Any, n: int) -> int:
    if score_ranges is None:
        return max(1, -(-n // RANGE_ROWS))
    if isinstance(score_ranges, bool) or not isinstance(score_ranges, int | np.integer) or \
            score_ranges < 1:
        raise ValueError(f"score_ranges must be a positive integer, got {score_ranges!r}.")
    return int(score_ranges)


# ---------------------------------------------------------------------------------------------
# CBPE


class _Plan(NamedTuple):
    """CBPE's partitions and what a first pass over them learned."""

    blocks: list[dict[str, Any]]
    where: list[dict[str, Any]]  # per partition: how its rows fall into contiguous chunks
    chunk_sizes: np.ndarray | None  # rows per chunk (None: chunks by key, not counted)
    edges: np.ndarray | None  # ROC-AUC's score ranges


def _cbpe_plan(scores: Any, chunks: Any, chunk_size: Any, n_chunks: Any, labels: Any, *,
               auc: bool, count_keys: bool, score_ranges: Any) -> _Plan:
    """The partitions, and a first pass where something needs it: the rows of every partition
    (contiguous chunks), a sample of the scores (ROC-AUC's score ranges) and the rows per
    chunk key (the reference's chunk size)."""
    dask = _dask()[0]
    if chunks is not None and (chunk_size is not None or n_chunks is not None):
        raise ValueError("give at most one of chunks, chunk_size and n_chunks.")
    blocks = partitions(scores=scores, keys=chunks, labels=labels)
    by_key = chunks is not None
    if by_key and not (auc or count_keys):
        return _Plan(blocks, [{}] * len(blocks), None, None)
    keys = [b.get("keys") if count_keys else None for b in blocks]
    profiles = dask.compute(*[dask.delayed(_profile)(b["scores"], k,
                                                     sample=RANGE_SAMPLE if auc else 0)
                              for b, k in zip(blocks, keys, strict=True)])
    rows = np.array([size for size, _, _ in profiles], dtype=np.int64)
    n = int(rows.sum())
    if n == 0:
        raise ValueError("scores is empty; at least one value is needed.")
    edges = _range_edges(profiles, score_ranges) if auc else None
    if by_key:
        counts = functools.reduce(functools.partial(_merge, add=operator.add),
                                  [c for _, _, c in profiles if c], {})
        sizes = np.array(list(counts.values())) if count_keys else None
        return _Plan(blocks, [{}] * len(blocks), sizes, edges)
    starts, names = _ranges(n, chunk_size, n_chunks)
    where = [{"offset": int(o), "starts": starts, "names": names}
             for o in np.r_[0, np.cumsum(rows)[:-1]]]
    return _Plan(blocks, where, np.diff(np.r_[starts, n]), edges)


def cbpe(scores: Any, *, threshold: float = 0.5, reference: Any = None, labels: Any = None,
         chunks: Any = None, chunk_size: Any = None, n_chunks: Any = None,
         reference_chunks: Any = None, calibration: Any = "auto", class_conditional: bool = True,
         metrics: Any = None, zero_division: float = 0.0, beta: float = 1.0,
         alert_thresholds: Any = None, ci_prob: float = 0.95, ci_kind: str = "eti",
         random_seed: int | None = None, score_ranges: int | None = None) -> Evaluation:
    r"""CBPE's exact fast path (noise ``"none"``) on partitioned scores, per chunk and whole.

    Parameters
    ----------
    scores : dask array, dask Series or array-like of float in [0, 1]
        Raw scores of the positive class; the predictions are ``scores >= threshold``.
    threshold : float
        The decision threshold.
    reference : (scores, labels) or (scores, labels, y_pred), optional
        The labelled reference period, in memory (it is small): it fits the calibration and
        gives the alert thresholds, as in :func:`bayeval.methods.cbpe.cbpe`.
    labels : dask array, dask Series or array-like of 0, 1 or NaN, optional
        Analysis labels where known (NaN: missing), aligned with ``scores``: the realized
        metrics of the labelled rows of each chunk (``realized``, ``alert_realized``,
        ``n_labelled``).
    chunks : dask array, dask Series or array-like, optional
        A chunk key per row (dates, batch ids), aligned with ``scores``; chunks in order of
        first appearance.
    chunk_size, n_chunks : int, optional
        Contiguous chunks, as in :func:`bayeval.chunks.make_chunks` (the rows of each
        partition are counted first). None of the three: one chunk.
    reference_chunks, calibration, class_conditional, alert_thresholds, random_seed
        As in :func:`bayeval.methods.cbpe.cbpe`. ``calibration`` may also be a fitted
        :class:`~bayeval.calibration.Calibrator` without a reference (applied as given);
        without either the scores are taken as calibrated.
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.cbpe.cbpe` (default all of them, ROC-AUC included).
    zero_division, beta, ci_prob, ci_kind
        As in :func:`bayeval.methods.cbpe.cbpe`.
    score_ranges : int, optional
        ROC-AUC only: the score ranges its rows are shuffled into (see
        :func:`auc_numerator_moments`); a range's task holds about n / ``score_ranges``
        rows. Default: one per :data:`RANGE_ROWS` rows.

    Returns
    -------
    Evaluation
        ``cbpe(scores, ..., method="exact")`` computed in memory with the same arguments
        (``closed_form`` over ``(chunk, metric)``, thresholds, alerts, realized metrics), to
        1e-12.

    Notes
    -----
    Per chunk :math:`c`, :math:`TP_c=\sum_b TP_{c,b}` and :math:`FN_c=\sum_b FN_{c,b}` over the
    partitions :math:`b` holding its rows, so their PMFs are convolutions of the partitions'
    windows (:func:`poisson_binomial`); the metric laws then come from the two count laws
    (:class:`bayeval.methods.cbpe_exact.CountLaw`), and the whole period's law is the sum of
    the chunks' laws, as in memory. ROC-AUC's exact moments need the rows in score order:
    they come from sums over score ranges (:func:`auc_numerator_moments`), per chunk and for
    the whole period, in a second pass that also counts. The realized metrics add the
    labelled rows' confusion counts per chunk; the realized ROC-AUC is the Mann-Whitney
    count, concatenated over the score ranges like the moments. The reference (calibrator,
    thresholds) is handled in memory by the functions of :mod:`bayeval.methods.cbpe`.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.cbpe import cbpe as in_memory
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.beta(2, 3, 3_000).round(2)  # tied scores
    >>> labels = np.where(rng.random(3_000) < 0.8, np.nan, rng.random(3_000) < scores)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     ev = cbpe(da.from_array(scores, chunks=700), labels=labels, n_chunks=3,
    ...               metrics=["f1", "roc_auc"])
    >>> mem = in_memory(scores, labels=labels, n_chunks=3, metrics=["f1", "roc_auc"])
    >>> whole = ev.closed_form.sel(chunk="all")  # estimates, and realized on the labelled rows
    >>> whole["mean"].round(3).values.tolist(), whole["realized"].round(3).values.tolist()
    ([0.568, 0.735], [0.565, 0.746])
    >>> gaps = [abs(ev.closed_form[v] - mem.closed_form[v]).max() for v in ("mean", "sd",
    ...                                                                   "realized")]
    >>> bool(max(gaps) < 1e-12)
    True
    """
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    beta = as_beta(beta)
    metrics = cbpe_method._metrics(metrics, "none")
    if reference is None and isinstance(calibration, Calibrator) and not calibration.fitted:
        raise ValueError(f"calibration: the {type(calibration).__name__} calibrator is not "
                         "fitted; fit it, or give reference=(scores, labels) to fit it on.")
    calibration, threshold, zero_division = cbpe_method._options(
        calibration, threshold, zero_division, "none", None, None, 1)
    if reference is None and not isinstance(calibration, Calibrator) and \
            calibration not in ("auto", "none"):
        raise ValueError(f"calibration={calibration!r} needs reference=(scores, labels).")
    auc = "roc_auc" in metrics
    plan = _cbpe_plan(scores, chunks, chunk_size, n_chunks, labels, auc=auc,
                      count_keys=reference is not None and chunks is not None,
                      score_ranges=score_ranges)
    notes: list[str] = []
    realized_ref, data, cal = np.empty((0, len(metrics))), xr.Dataset(), None
    if reference is not None:
        ref, cal, data = cbpe_method._reference_period(
            reference, threshold, calibration, class_conditional, random_seed, reference_chunks,
            chunk_size or int(np.median(plan.chunk_sizes)), (metrics, zero_division, beta),
            notes, alert_thresholds)
        realized_ref = ref.realized
    elif isinstance(calibration, Calibrator):
        cal = calibration
    else:
        notes.append("no reference: the scores are taken as calibrated probabilities.")
    thresholds = cbpe_method._thresholds(realized_ref, metrics, alert_thresholds)

    dask = _dask()[0]
    cal_name = "none" if cal is None else cal.name
    cal = None if cal_name == "none" else cal  # the identity
    counts = [dask.delayed(_cbpe_block)(**b, **w, threshold=threshold, calibrator=cal)
              for b, w in zip(plan.blocks, plan.where, strict=True)]
    todo = [tree_reduce(counts, functools.partial(_merge, add=operator.add))]
    if auc:  # the labels travel with the rows only for the realized ROC-AUC
        todo.append(_range_sums_by_chunk(plan.blocks, plan.where, plan.edges, calibrator=cal,
                                         tie=CBPE_TIE))
    per_chunk, *ranges = dask.compute(*todo)
    if not per_chunk:
        raise ValueError("scores is empty; at least one value is needed.")
    return _cbpe_evaluation(per_chunk, ranges[0] if auc else None, labelled=labels is not None,
                            metrics=metrics, thresholds=thresholds, zero_division=zero_division,
                            beta=beta, ci_prob=ci_prob, ci_kind=ci_kind, data=data,
                            notes=notes, calibration=cal_name, random_seed=random_seed)


def _realized(counts: list[_ChunkCounts], ranges: dict[str, _RangeSums] | None,
              labels: list[str], metrics: tuple[str, ...], zero_division: float,
              beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (chunk and whole x metric) of the labelled rows, NaN without a label,
    and the labelled rows per chunk (``bayeval.methods.cbpe._realized``)."""
    cells = np.array([c.labelled for c in counts])
    tp, fp, fn, tn = np.vstack([cells, cells.sum(axis=0)]).T.astype(float)
    n = tp + fp + fn + tn
    out = np.full((n.size, len(metrics)), np.nan)
    for j, metric in enumerate(metrics):
        if metric == "roc_auc":
            out[:, j] = [_realized_auc(ranges[k], zero_division) for k in [*labels, WHOLE]]
        else:
            out[:, j] = M.from_counts(metric, tp, fp, fn, tn, beta=beta,
                                      zero_division=zero_division)
    out[n == 0] = np.nan
    return out, n


def _cbpe_evaluation(per_chunk: dict[str, _ChunkCounts], ranges: dict[str, _RangeSums] | None,
                     *, labelled: bool, metrics: tuple[str, ...], thresholds: tuple,
                     zero_division: float, beta: float, ci_prob: float, ci_kind: str,
                     data: xr.Dataset, notes: list[str], calibration: str,
                     random_seed: Any) -> Evaluation:
    """The Evaluation of :func:`cbpe` from the combined summaries of every chunk."""
    labels, counts = list(per_chunk), list(per_chunk.values())
    laws = [_count_law(c) for c in counts]
    laws.append(functools.reduce(operator.add, laws))
    expected = [(c.expected_tp, c.expected_fn) for c in counts]
    expected.append(tuple(map(sum, zip(*expected, strict=True))))
    auc = (None if ranges is None else
           [_auc_law(ranges[k], zero_division) for k in [*labels, WHOLE]])
    closed = cbpe_method.closed_form(laws, auc, expected, labels, metrics, ci_prob, ci_kind,
                                     zero_division, beta, thresholds)
    sizes = np.array([c.n_pos + c.n_neg for c in counts])
    closed["n"] = ("chunk", np.r_[sizes, sizes.sum()])
    closed["n_predicted_positive"] = ("chunk", [law.n_pos for law in laws])
    if labelled:
        realized, n_labelled = _realized(counts, ranges, labels, metrics, zero_division, beta)
        dims = ("chunk", "metric")
        closed["realized"] = (dims, realized)
        closed["alert_realized"] = (dims, (realized < closed["lower_threshold"].values)
                                    | (realized > closed["upper_threshold"].values))
        closed["n_labelled"] = ("chunk", n_labelled.astype(np.int64))
    return Evaluation.create(
        method="cbpe", variant="exact", closed_form=closed, ci_prob=ci_prob, ci_kind=ci_kind,
        random_seed=random_seed, data=data.assign_coords(chunk=[*labels, WHOLE]),
        warnings=cbpe_method.size_notes(sizes) + notes, assumptions=cbpe_method.ASSUMPTIONS,
        noise="none", calibration=calibration,
        description=f"CBPE, noise=none, calibration={calibration}, partitioned: {len(labels)} "
                    f"chunk(s) of {sizes.sum()} rows and the whole period")


# ---------------------------------------------------------------------------------------------
# PEMI-Gauss


class LabelSums(NamedTuple):
    r"""Sufficient statistics of PEMI-Gauss, summed over rows.

    ``tp, fp, fn, tn`` count the labelled rows, ``m1`` and ``m0`` the missing ones predicted 1
    and 0. Per node :math:`\delta_k` of the MNAR shift, over the missing rows with
    :math:`q=\sigma(\operatorname{logit}p+\delta_k)`: ``p1``/``p0`` hold :math:`\sum q` and
    ``v1``/``v0`` :math:`\sum q(1-q)` (predicted 1 / 0), ``log0`` :math:`\sum\log(1-q)` and
    ``log1`` :math:`\sum\log q` (the probabilities that every missing label is 0 or 1).

    Examples
    --------
    >>> import numpy as np
    >>> sums = pemi_sums([1, 1, 0, 0, 1, 0], [0.9, 0.6, 0.3, 0.2, 0.7, 0.4],
    ...                  [1, np.nan, 0, np.nan, np.nan, 1])
    >>> sums.tp, sums.tn, sums.m1, sums.m0, sums.p1.round(4).tolist()
    (1, 1, 2, 1, [1.3])
    """

    tp: int
    fp: int
    fn: int
    tn: int
    m1: int
    m0: int
    p1: np.ndarray
    p0: np.ndarray
    v1: np.ndarray
    v0: np.ndarray
    log0: np.ndarray
    log1: np.ndarray


class _Clipped(NamedTuple):
    """A fitted calibrator whose outputs are clipped to [0, 1], as PEMI applies it."""

    calibrator: Any

    def predict(self, scores: Any) -> np.ndarray:
        return np.clip(np.asarray(self.calibrator.predict(scores), dtype=float), 0.0, 1.0)


def _pemi_block(y_pred: Any, p: Any, labels: Any, scores: Any = None, *, nodes: np.ndarray,
                calibrator: _Clipped | None = None) -> LabelSums:
    if len(y_pred) == 0:
        return LabelSums(0, 0, 0, 0, 0, 0, *(np.zeros(nodes.size) for _ in range(6)))
    yp = as_binary(y_pred, "y_pred").astype(bool)
    y = as_labels(labels, "labels", allow_missing=True)
    s = None if scores is None else as_scores(scores, "scores")
    pp = calibrator.predict(s) if p is None else as_probabilities(p, "p")
    check_same_length(y_pred=yp, p=pp, labels=y, scores=s)
    miss = np.isnan(y)
    pos = yp[miss]
    q = np.array([shift(pp[miss], d) for d in nodes]).reshape(nodes.size, -1)
    with np.errstate(divide="ignore"):
        logs = np.log1p(-q).sum(axis=1), np.log(q).sum(axis=1)
    y1 = y == 1
    return LabelSums(
        tp=int((yp & y1).sum()), fp=int((yp & (y == 0)).sum()),
        fn=int((~yp & y1).sum()), tn=int((~yp & (y == 0)).sum()), m1=int(pos.sum()),
        m0=int((~pos).sum()), p1=q[:, pos].sum(axis=1), p0=q[:, ~pos].sum(axis=1),
        v1=(q * (1 - q))[:, pos].sum(axis=1), v0=(q * (1 - q))[:, ~pos].sum(axis=1),
        log0=logs[0], log1=logs[1])


def _pemi_reduction(y_pred: Any, p: Any, labels: Any, scores: Any, nodes: np.ndarray,
                    calibrator: _Clipped | None) -> Any:
    """The delayed :class:`LabelSums`; ``p`` None: the calibrator on the scores."""
    if p is None and (scores is None or calibrator is None):
        raise ValueError("p is None: give scores= and a calibrator (pemi_gauss fits one).")
    columns = {"y_pred": y_pred, "p": p, "labels": labels, "scores": scores}
    dask = _dask()[0]
    return tree_reduce([dask.delayed(_pemi_block)(**{"p": None, **block}, nodes=nodes,
                                                  calibrator=calibrator)
                        for block in partitions(**columns)], _add_tuples)


def pemi_sums(y_pred: Any, p: Any, labels: Any, *, nodes: Any = (0.0,), scores: Any = None,
              calibrator: Any = None) -> LabelSums:
    r""":class:`LabelSums` of partitioned rows, at the MNAR shifts ``nodes``.

    Parameters
    ----------
    y_pred : dask array, dask Series or array-like of 0/1
        Predictions.
    p : same, float in [0, 1], or None
        :math:`P(Y_i=1)` of the missing labels (ignored, but checked, on labelled rows); None:
        ``calibrator`` applied to ``scores`` in each partition (clipped to [0, 1]).
    labels : same, 0, 1 or NaN
        NaN where the label is missing.
    nodes : sequence of float
        Shifts :math:`\delta_k` of the log-odds of the missing labels (0: MAR).
    scores : same, float in [0, 1], optional
        Raw scores, for ``calibrator``.
    calibrator : object with ``predict(scores)``, optional
        Fitted (e.g. a :class:`bayeval.calibration.Calibrator`).

    Returns
    -------
    LabelSums
        Sums over all rows; ``p1``... hold one value per node.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> y_pred = da.from_array(np.array([1, 1, 0, 0, 1, 0]), chunks=4)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     sums = pemi_sums(y_pred, [0.9, 0.6, 0.3, 0.2, 0.7, 0.4],
    ...                      [1, np.nan, 0, np.nan, np.nan, 1], nodes=[0.0, 1.0])
    >>> (sums.tp, sums.fp, sums.fn, sums.tn), (sums.m1, sums.m0)
    ((1, 0, 1, 1), (2, 1))
    >>> sums.p1.round(4).tolist()  # sum of q over the missing rows predicted 1, per shift
    [1.3, 1.6669]
    """
    nodes = np.atleast_1d(np.asarray(nodes, dtype=float))
    cal = None if calibrator is None else _Clipped(calibrator)
    return _pemi_reduction(y_pred, p, labels, scores, nodes, cal).compute()


def _moments(s: LabelSums, k: int, metric: str, beta: float, zero_division: float,
             second_order: bool) -> tuple[float, float]:
    r"""Mean and variance of ``metric`` at node k (:func:`bayeval.confusion.count_moments`):
    :math:`\mathbb E\,TP=TP_K+\sum_{\hat y=1}q`, :math:`\operatorname{Var}TP=\sum_{\hat y=1}
    q(1-q)`, likewise FN."""
    return count_moments(metric, s.tp + s.fp + s.m1, s.fn + s.tn + s.m0,
                         mean_tp=s.tp + float(s.p1[k]), mean_fn=s.fn + float(s.p0[k]),
                         var_tp=float(s.v1[k]), var_fn=float(s.v0[k]), beta=beta,
                         zero_division=zero_division, second_order=second_order)


def _undefined(s: LabelSums, k: int, metric: str, beta: float) -> float:
    """P(``metric`` undefined) at node k (:func:`bayeval.methods.pemi_fast.p_undefined`)."""
    return undefined_probability((s.tp, s.fp, s.fn, s.tn), s.m1, s.m0, np.exp(s.log0[k]),
                                 np.exp(s.log1[k]), metric, beta)


def _auc_node(sums: LabelSums, ranges: dict[int, _RangeSums], k: int, tie: float, beta: float,
              zero_division: float, second_order: bool) -> tuple[float, float]:
    """ROC-AUC's mean and variance at node k, as ``bayeval.methods.pemi_fast.moments``."""
    if _undefined(sums, k, "roc_auc", beta) == 1.0:  # a single class in every completion
        return zero_division, np.nan if np.isnan(zero_division) else 0.0
    return ratio_moments(_ratio_moments(ranges[k], tie), second_order)


def _known_count(labels: Any) -> int:
    return int((~np.isnan(np.asarray(labels, dtype=float))).sum()) if len(labels) else 0


def _known_rows(scores: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """The scores and labels of one partition's labelled rows."""
    if len(scores) == 0:
        return np.empty(0), np.empty(0)
    s, y = as_scores(scores, "scores"), as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=s, labels=y)
    known = ~np.isnan(y)
    return s[known], y[known]


def _fit_calibrator(scores: Any, labels: Any, calibrator: Any, reference: Any) -> _Clipped:
    """PEMI's calibrator (``bayeval.methods.pemi_fast.imputation_probabilities``), fitted on
    ``reference`` or on the labelled rows, gathered in row order (a first pass)."""
    if isinstance(calibrator, str):
        calibrator = as_choice(calibrator, "calibrator", tuple(CALIBRATORS))
    elif not (hasattr(calibrator, "fit") and hasattr(calibrator, "predict")):
        raise ValueError("calibrator must be a name ('scaling_binning', 'platt', 'isotonic', "
                         "'beta', 'none') or an object with fit(scores, labels) and "
                         f"predict(scores); got {type(calibrator).__name__}.")
    reference = pemi_method._reference(reference)
    rows = None
    if reference is None:
        dask = _dask()[0]
        blocks = partitions(scores=scores, labels=labels)
        known = sum(dask.compute(*[dask.delayed(_known_count)(b["labels"]) for b in blocks]))
        if known > CALIBRATION_ROWS:
            raise ValueError(f"labels: {known} labelled rows to fit the calibrator on, more than "
                             f"CALIBRATION_ROWS ({CALIBRATION_ROWS}) gathered in memory; pass "
                             "reference=(scores, labels) with a sample of them, or p.")
        parts = dask.compute(*[dask.delayed(_known_rows)(**b) for b in blocks])
        s = np.concatenate([s for s, _ in parts])
        y = np.concatenate([y for _, y in parts])
        rows = Rows(s, np.zeros(s.size, np.int8), y)
    cal_scores, cal_labels = pemi_method._calibration_data(rows, reference, needs_both=True)
    fitted = (make_calibrator(calibrator) if isinstance(calibrator, str)
              else calibrator).fit(cal_scores, cal_labels)
    return _Clipped(fitted)


def pemi_gauss(y_pred: Any, p: Any, labels: Any, *, scores: Any = None,
               calibrator: Any = "scaling_binning", reference: Any = None, metrics: Any = None,
               mnar: Any = None, ci_prob: float = 0.95, zero_division: float = 0.0,
               beta: float = 1.0, second_order: bool = True, ties: str = "half",
               score_ranges: int | None = None) -> xr.Dataset:
    r"""PEMI-Gauss (Algorithm 2) on partitioned rows, ROC-AUC included.

    Parameters
    ----------
    y_pred, labels
        As in :func:`pemi_sums`.
    p : dask array, dask Series or array-like of float in [0, 1], or None
        The imputation probabilities; None: ``calibrator`` fitted on the labelled rows (or
        on ``reference``) and applied to ``scores`` in every partition, as
        :func:`bayeval.methods.pemi.pemi` does by default.
    scores : same, float in [0, 1], optional
        Raw scores: the calibrator's input and ROC-AUC's ranking (needed for both).
    calibrator : str or object with ``fit``/``predict``
        As in :func:`bayeval.methods.pemi.pemi`. Fitted in memory: the labelled rows are
        gathered on the client (a first pass; at most :data:`CALIBRATION_ROWS` of them).
    reference : (scores, labels), optional
        Labelled calibration data, in memory, as in :func:`bayeval.methods.pemi.pemi`.
    metrics : sequence of str, optional
        Confusion-matrix metrics and ``roc_auc``; default precision, recall, accuracy, f1
        and, with ``scores``, roc_auc (:func:`bayeval.methods.pemi.pemi`'s).
    mnar : float or (mean, sd), optional
        The MNAR shift :math:`\delta`, fixed or with a normal prior (a mixture over
        :func:`bayeval.methods.pemi_fast.delta_nodes`).
    ci_prob, zero_division, beta, second_order, ties
        As in :func:`bayeval.methods.pemi.pemi`.
    score_ranges : int, optional
        ROC-AUC's score ranges (:func:`auc_numerator_moments`).

    Returns
    -------
    xr.Dataset
        The ``closed_form`` of ``pemi(scores, labels, p=p, method="gauss", ...)`` over
        ``metric`` (``mean``, ``sd``, ``lower``, ``upper``, ``interval_mass``,
        ``p_undefined``), to 1e-12.

    Raises
    ------
    ValueError
        Bad inputs, as in memory; ``p`` None or ROC-AUC without ``scores``; more labelled rows
        than :data:`CALIBRATION_ROWS` to fit on.

    Notes
    -----
    The confusion-matrix moments depend on the rows only through :class:`LabelSums`: with
    :math:`T=TP`, :math:`F=FN`, :math:`\mathbb E\,g\approx g(\mu)+\tfrac12(g_{TT}\sigma_T^2
    +g_{FF}\sigma_F^2)` and :math:`\operatorname{Var}g\approx g_T^2\sigma_T^2+g_F^2\sigma_F^2`
    (:func:`bayeval.confusion.metric_moments`). ROC-AUC's exact moments come from sums over
    score ranges (:func:`auc_numerator_moments`), a known label counting as a probability 0
    or 1, at every MNAR node in the same pass. The calibrator is fitted in memory exactly as
    :func:`bayeval.methods.pemi.pemi` fits it (same rows, same order), so the probabilities
    are the same.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.pemi import pemi
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.beta(2, 3, 2_000)
    >>> labels = np.where(rng.random(2_000) < 0.6, np.nan, rng.random(2_000) < scores)
    >>> y_pred = da.from_array((scores >= 0.5).astype(int), chunks=500)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     ours = pemi_gauss(y_pred, scores, labels, metrics=["accuracy", "f1"])
    >>> ours["mean"].round(4).values.tolist()
    [0.6837, 0.5705]
    >>> mem = pemi(scores, labels, p=scores, metrics=["accuracy", "f1"]).closed_form
    >>> float(abs(ours["sd"] - mem["sd"]).max()) < 1e-12
    True

    The calibrator fitted on the labelled rows, and ROC-AUC:

    >>> with dask.config.set(scheduler="synchronous"):
    ...     ours = pemi_gauss(y_pred, None, labels, scores=da.from_array(scores, chunks=500))
    >>> mem = pemi(scores, labels).closed_form  # scaling-binning on the labelled rows
    >>> ours["metric"].values.tolist()
    ['precision', 'recall', 'accuracy', 'f1', 'roc_auc']
    >>> float(abs(ours["mean"] - mem["mean"]).max()) < 1e-12
    True
    """
    ci_prob, beta = as_ci_prob(ci_prob), as_beta(beta)
    zero_division = as_zero_division(zero_division)
    tie = 0.5 if as_choice(ties, "ties", ("half", "one")) == "half" else 1.0
    if metrics is None:
        metrics = pemi_method.PAPER_METRICS[: 5 if scores is not None else 4]
    else:
        metrics = tuple(as_choice(m, "metrics", (*METRICS, "roc_auc"))
                        for m in np.atleast_1d(metrics))
    auc = "roc_auc" in metrics
    if scores is None and (auc or p is None):
        raise ValueError(f"scores is needed {'for roc_auc' if auc else 'with p=None'}: give "
                         "the raw scores (scores=), aligned with y_pred and labels.")
    calibrator = _fit_calibrator(scores, labels, calibrator, reference) if p is None else None
    nodes, weights = delta_nodes(as_mnar(mnar))
    dask = _dask()[0]
    todo = [_pemi_reduction(y_pred, p, labels, scores, nodes, calibrator)]
    if auc:
        blocks = partitions(scores=scores, labels=labels, p=p)
        profiles = dask.compute(*[dask.delayed(_profile)(b["scores"], sample=RANGE_SAMPLE)
                                  for b in blocks])
        edges = _range_edges(profiles, score_ranges)
        todo.append(_range_sums_by_chunk(blocks, [{}] * len(blocks), edges,
                                         calibrator=calibrator, tie=tie, shifts=tuple(nodes)))
    sums, *ranges = dask.compute(*todo)
    normal = {}
    for metric in metrics:
        if metric == "roc_auc":
            mv = np.array([_auc_node(sums, ranges[0], k, tie, beta, zero_division, second_order)
                           for k in range(nodes.size)])
        else:
            mv = np.array([_moments(sums, k, metric, beta, zero_division, second_order)
                           for k in range(nodes.size)])
        summary = (np.nan,) * 4 if np.isnan(mv).any() else mixture(mv[:, 0], mv[:, 1], weights,
                                                                   ci_prob)
        normal[metric] = (*summary, _undefined(sums, nodes.size // 2, metric, beta))
    return closed_form(metrics, {}, normal, ci_prob=ci_prob, ci_kind="eti")


# ---------------------------------------------------------------------------------------------
# judge


def _judge_labelled(y: Any, yhat: Any) -> E.Counts:
    if len(y) == 0:
        return E.Counts(0, 0, 0, 0, 0, 0)
    y, yhat = as_binary(y, "y"), as_binary(yhat, "yhat")
    check_same_length(y=y, yhat=yhat)
    return E.Counts.from_labels(y, yhat, np.empty(0, np.int8))


def _judge_unlabelled(yhat_unlabeled: Any) -> E.Counts:
    if len(yhat_unlabeled) == 0:
        return E.Counts(0, 0, 0, 0, 0, 0)
    yhat_u = as_binary(yhat_unlabeled, "yhat_unlabeled")
    return E.Counts(0, 0, 0, 0, int(yhat_u.sum()), int(yhat_u.size - yhat_u.sum()))


def judge_counts(y: Any, yhat: Any, yhat_unlabeled: Any) -> E.Counts:
    r"""The judge's sufficient statistics from partitioned labels: 2x2 table and :math:`T_1, T_0`.

    Parameters
    ----------
    y, yhat : dask array, dask Series or array-like of 0/1
        Human labels and the (binary) judge on the labelled items, aligned.
    yhat_unlabeled : same
        The judge on the unlabelled items (its own partitions).

    Returns
    -------
    bayeval.methods.judge_estimators.Counts
        Exactly ``Counts.from_labels(y, yhat, yhat_unlabeled)``: the input of every binary
        estimator (:func:`judge_estimates`) and of the models
        (``bayeval.methods.judge.model_a(*counts)``).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> y = da.from_array(np.array([1, 0, 1, 1, 0, 0]), chunks=4)
    >>> yhat_unlabeled = da.from_array(np.array([1, 1, 0, 1, 0, 0, 1, 1]), chunks=3)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     judge_counts(y, [1, 0, 0, 1, 1, 0], yhat_unlabeled)
    Counts(n11=2, n10=1, n01=1, n00=2, t1=5, t0=3)
    """
    labelled = _reduce(_judge_labelled, _add_tuples, {"y": y, "yhat": yhat})
    unlabelled = _reduce(_judge_unlabelled, _add_tuples, {"yhat_unlabeled": yhat_unlabeled})
    return _add_tuples(*_dask()[0].compute(labelled, unlabelled))


def judge_estimates(counts: E.Counts, *, ci_prob: float = 0.95, ci: str = "logit"
                    ) -> xr.Dataset:
    r"""Every estimator of a binary judge from its counts, with intervals.

    Parameters
    ----------
    counts : bayeval.methods.judge_estimators.Counts
        E.g. from :func:`judge_counts`.
    ci_prob : float
        Interval level.
    ci : {"logit", "wald"}
        Interval kind (:func:`bayeval.methods.judge_estimators.interval`).

    Returns
    -------
    xr.Dataset
        Over ``estimator``: ``mean`` (the estimate), ``sd`` (its standard error), ``lower``,
        ``upper``: those of ``judge(y, yhat, yhat_unlabeled, estimator="all")`` (Rogan–Gladen
        is left out for :math:`\hat\kappa\le0`, as there). The estimators depend on the items
        only through the counts (:class:`~bayeval.methods.judge_estimators.Moments` of a
        binary judge are functions of them).

    Examples
    --------
    >>> from bayeval.methods.judge_estimators import Counts
    >>> est = judge_estimates(Counts(n11=80, n10=10, n01=20, n00=190, t1=1700, t0=3300))
    >>> est["mean"].sel(estimator=["naive", "classical", "ppi", "eif"]).round(4).values.tolist()
    [0.34, 0.3, 0.3067, 0.3047]
    """
    ci_prob, ci = as_ci_prob(ci_prob), as_choice(ci, "ci", ("logit", "wald"))
    z = E.z_value(ci_prob)
    mo = E.Moments.from_counts(counts)
    fns = E.by_name(mo, counts, counts.cells(), z)
    names = [n for n in E.ESTIMATORS if not (n.startswith("rogan_gladen") and not E.youden(
        counts, adjust=n.endswith("adjusted"), z=z) > 0)]
    est = np.array([[float(v) for v in fns[n]()] for n in names])
    lower, upper = E.interval(E.Estimate(est[:, 0], est[:, 1]), z, ci)
    return xr.Dataset({"mean": ("estimator", est[:, 0]), "sd": ("estimator", est[:, 1]),
                       "lower": ("estimator", lower), "upper": ("estimator", upper)},
                      coords={"estimator": names})


# ---------------------------------------------------------------------------------------------
# bounds


class BoundsCells(NamedTuple):
    """Weak-label patterns and the items per (pattern, predicted class).

    ``patterns`` (n_cells, n_lfs) are the distinct rows of the weak labels, sorted
    lexicographically; ``cell_counts`` (n_cells, n_classes) counts the items of each pattern
    predicted as each class; ``counts`` are its row sums.

    Examples
    --------
    >>> import numpy as np
    >>> cells = BoundsCells(np.array([[0, 0], [1, -1]]), np.array([[3, 1], [0, 2]]))
    >>> cells.counts.tolist()
    [4, 2]
    """

    patterns: np.ndarray
    cell_counts: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        return self.cell_counts.sum(axis=1)


def _distinct(rows: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (sorted) and the summed counts of each."""
    unique, where = np.unique(rows, axis=0, return_inverse=True)
    return unique, np.bincount(where.ravel(), weights=counts, minlength=len(unique)).astype(
        np.int64)


def _bounds_block(y_pred: Any, weak_labels: Any) -> tuple[np.ndarray, np.ndarray]:
    if len(y_pred) == 0:
        return np.empty((0, np.shape(weak_labels)[1] + 1), np.int64), np.empty(0, np.int64)
    weak = as_array(weak_labels, "weak_labels", ndim=2, dtype=np.int64)
    yp = as_array(y_pred, "y_pred", dtype=np.int64)
    check_same_length(y_pred=yp, weak_labels=weak)
    if (weak < -1).any() or (yp < 0).any():
        raise ValueError("weak_labels must be classes 0, 1, ... or -1 (abstain), and y_pred "
                         "classes 0, 1, ...; got other values.")
    if (weak == -1).all(axis=1).any():
        raise ValueError("weak_labels: every labelling function abstains on some item; no weak "
                         "label informs it: drop those items.")
    return _distinct(np.column_stack([weak, yp]), np.ones(len(yp)))


def _stack_distinct(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    return _distinct(np.vstack([a[0], b[0]]), np.r_[a[1], b[1]])


def bounds_cells(y_pred: Any, weak_labels: Any, *, n_classes: int | None = None) -> BoundsCells:
    r"""Items per (weak-label pattern :math:`z`, predicted class :math:`k`) of partitioned data.

    Parameters
    ----------
    y_pred : dask array, dask Series or array-like of int, shape (n,)
        Predicted classes.
    weak_labels : dask array, dask DataFrame or array-like of int, shape (n, n_lfs)
        Labelling-function votes, -1 = abstain.
    n_classes : int, optional
        :math:`K`; by default the largest class seen plus one (at least 2).

    Returns
    -------
    BoundsCells
        :math:`n_{zk}`, the statistic of the exact bounds and of the models
        (``bayeval.methods.bounds.exact_bounds``, ``model_m1``): the in-memory cell counts of
        ``bounds(y_pred, weak_labels)`` up to the order of the patterns.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> weak = np.array([[1, 1, -1], [0, 0, 0], [1, -1, 1], [1, 1, -1], [0, 1, 0], [0, 0, 0]])
    >>> y_pred = np.array([1, 0, 1, 0, 0, 0])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     cells = bounds_cells(da.from_array(y_pred, chunks=4),
    ...                          da.from_array(weak, chunks=(4, 3)))
    >>> cells.patterns.tolist(), cells.cell_counts.tolist()
    ([[0, 0, 0], [0, 1, 0], [1, -1, 1], [1, 1, -1]], [[2, 0], [1, 0], [0, 1], [1, 1]])
    """
    rows, counts = _reduce(_bounds_block, _stack_distinct,
                           {"y_pred": y_pred, "weak_labels": weak_labels}).compute()
    k = n_classes or max(2, int(rows.max()) + 1)
    if rows.max() >= k:
        raise ValueError(f"weak_labels or y_pred hold class {int(rows.max())}, but n_classes is "
                         f"{k}.")
    patterns, cell = np.unique(rows[:, :-1], axis=0, return_inverse=True)
    cell_counts = np.zeros((len(patterns), k), dtype=np.int64)
    np.add.at(cell_counts, (cell.ravel(), rows[:, -1]), counts)
    return BoundsCells(patterns, cell_counts)


def bounds_exact(y_pred: Any, weak_labels: Any, *, label_model: str = "dawid_skene",
                 metrics: Any = None, n_classes: int | None = None) -> xr.Dataset:
    r"""Exact Fréchet bounds of the metrics on partitioned data.

    Parameters
    ----------
    y_pred, weak_labels, n_classes
        As in :func:`bounds_cells`.
    label_model : {"dawid_skene", "majority_vote"}
        Fitted on the pattern counts (:mod:`bayeval.methods.label_models`).
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.bounds.bounds`.

    Returns
    -------
    xr.Dataset
        Over ``metric``: ``lower_bound``, ``upper_bound``, their sds, ``midpoint_sd`` and
        ``label_model`` of :func:`bayeval.methods.bounds.exact_bounds`, as ``bounds(y_pred,
        weak_labels)`` computes them in memory.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.bounds import bounds
    >>> rng = np.random.default_rng(0)
    >>> weak = rng.integers(-1, 2, (3_000, 3))
    >>> weak[(weak == -1).all(axis=1), 0] = 1  # every item has a vote
    >>> y_pred = rng.integers(0, 2, 3_000)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     ours = bounds_exact(da.from_array(y_pred, chunks=1_000),
    ...                         da.from_array(weak, chunks=(1_000, 3)), metrics=["accuracy"])
    >>> [round(float(ours[b].item()), 4) for b in ("lower_bound", "upper_bound")]
    [0.3092, 0.6792]
    >>> mem = bounds(y_pred, weak, metrics=["accuracy"]).closed_form
    >>> float(abs(ours["upper_bound"] - mem["upper_bound"]).max()) < 1e-12
    True
    """
    label_model = as_choice(label_model, "label_model", lm.LABEL_MODELS)
    cells = bounds_cells(y_pred, weak_labels, n_classes=n_classes)
    k = cells.cell_counts.shape[1]
    metrics = (default_metrics(k) if metrics is None else
               tuple(as_choice(m, "metrics", BOUNDS_METRICS) for m in np.atleast_1d(metrics)))
    beta = (lm.majority_vote(cells.patterns, k) if label_model == "majority_vote" else
            lm.dawid_skene(cells.patterns, cells.counts, k))
    out = exact_bounds(cells.cell_counts, beta, metrics)
    keys = list(out[metrics[0]])
    return xr.Dataset({key: ("metric", [out[m][key] for m in metrics]) for key in keys},
                      coords={"metric": list(metrics)})


# ---------------------------------------------------------------------------------------------
# MVU


def _mvu_block(x: np.ndarray, imputer: Any, coef: np.ndarray, intercept: np.ndarray,
               weights: Any) -> np.ndarray:
    """(y_hard, c_hard) of each row, shape (rows, 2)."""
    if x.shape[0] == 0:
        return np.empty((0, 2))
    mean, cov = imputer.logits(x, np.isnan(x), coef, intercept)
    probs = gaussian_vote_probs(mean[:, 0], cov[:, 0, 0], weights=weights)
    return np.stack([np.argmax(probs, axis=1), np.max(probs, axis=1)], axis=1)


def mvu_hard_confidence(x: Any, imputer: Any, coef: Any, intercept: Any, *,
                        weights: Any = None) -> tuple[da.Array, da.Array]:
    r"""Exact hard confidence of a binary linear classifier under Gaussian imputation, row-wise.

    Parameters
    ----------
    x : dask array or array-like, shape (n, d)
        Rows with NaN for the missing features.
    imputer : bayeval.methods.mvu_estimators.GaussianImputer
        Fitted on complete training rows (in memory).
    coef, intercept : array-like, shapes (1, d) and (1,)
        The classifier :math:`\sigma(w^\top x+b)`.
    weights : two positive floats, optional
        Class weights of the decision (a threshold :math:`t` is :math:`(t, 1-t)`).

    Returns
    -------
    y_hard, c_hard : dask.array.Array, shape (n,)
        Lazy, one row at a time (``map_blocks``): :math:`z=w^\top x+b` given :math:`x_O` is
        :math:`N(w^\top\hat x+b,\;w_M^\top\Sigma_{M|O}w_M)`, so
        :math:`P(V=1)=\Phi_N((\mu_z-\log(w_0/w_1))/\sigma_z)` and :math:`c_\mathrm{hard}=
        \max(P(V=1), 1-P(V=1))` (:func:`bayeval.methods.mvu_confidence.gaussian_vote_probs`).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.mvu_estimators import GaussianImputer
    >>> rng = np.random.default_rng(0)
    >>> imputer = GaussianImputer.fit(rng.multivariate_normal([0, 1], [[1, 0.6], [0.6, 1]],
    ...                                                       500))
    >>> x = np.array([[0.5, np.nan], [np.nan, 2.0], [1.0, -1.0], [np.nan, np.nan]])
    >>> y_hard, c_hard = mvu_hard_confidence(da.from_array(x, chunks=(2, 2)), imputer,
    ...                                      [[1.0, -0.5]], [0.2])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     y_hard.compute().tolist(), c_hard.compute().round(3).tolist()
    ([1, 0, 1, 0], [0.537, 0.576, 1.0, 0.627])
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    intercept = np.atleast_1d(np.asarray(intercept, dtype=float))
    if coef.shape[0] != 1 or intercept.size != 1:
        raise ValueError(f"coef must have shape (1, d) and intercept (1,) (a binary linear "
                         f"classifier); got {coef.shape} and {intercept.shape}.")
    x = _as_dask_array(x, None)
    if x.ndim != 2 or x.shape[1] != coef.shape[1]:
        raise ValueError(f"x must have shape (n, {coef.shape[1]}) like coef; got {x.shape}.")
    out = x.map_blocks(_mvu_block, imputer, coef, intercept, weights, dtype=float,
                       chunks=(x.chunks[0], (2,)))
    return out[:, 0].astype(np.int64), out[:, 1]
