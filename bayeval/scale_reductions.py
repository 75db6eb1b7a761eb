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
                               row counts, :math:`\sum p`
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

Inputs are dask arrays or columns of one dask DataFrame (see :func:`partitions`); numpy and
pandas inputs are one partition; empty partitions (e.g. left by a filter) add nothing. The
reductions run on dask's current scheduler: a
``distributed.Client`` registers itself as that scheduler when it is created.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval.chunks import WHOLE, Chunking, make_chunks
from bayeval.confusion import TOL, count_moments
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods import cbpe as cbpe_method
from bayeval.methods import judge_estimators as E
from bayeval.methods import label_models as lm
from bayeval.methods.bounds import METRICS as BOUNDS_METRICS
from bayeval.methods.bounds import default_metrics, exact_bounds
from bayeval.methods.cbpe_exact import CountLaw
from bayeval.methods.mvu_confidence import gaussian_vote_probs
from bayeval.methods.pemi import as_mnar
from bayeval.methods.pemi_fast import (
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
    "SPLIT_EVERY",
    "BoundsCells",
    "LabelSums",
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

    Raises
    ------
    ValueError
        If the columns have different lengths, or frames different numbers of partitions.
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
    """One delayed result: ``parts`` combined in order, ``split_every`` per task.

    ``combine(a, b)`` must be associative; it need not be commutative (the order of the parts
    is kept, so keyed summaries keep the order of first appearance).
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
    """
    start, probs = _reduce(_pb_window, _convolve, {"p": p}).compute()
    return _window(start, probs, tol)


# ---------------------------------------------------------------------------------------------
# CBPE


class _ChunkCounts(NamedTuple):
    """What CBPE needs of one chunk's rows (in one partition, or summed over several)."""

    n_pos: int  # rows predicted positive
    n_neg: int
    expected_tp: float  # sum of p over the rows predicted positive
    expected_fn: float
    tp: tuple[int, np.ndarray]  # window of the PMF of TP (PB over the predicted positives)
    fn: tuple[int, np.ndarray]

    def __add__(self, other: _ChunkCounts) -> _ChunkCounts:
        return _ChunkCounts(self.n_pos + other.n_pos, self.n_neg + other.n_neg,
                            self.expected_tp + other.expected_tp,
                            self.expected_fn + other.expected_fn,
                            _convolve(self.tp, other.tp), _convolve(self.fn, other.fn))


def _chunk_counts(p: np.ndarray, positive: np.ndarray) -> _ChunkCounts:
    pos, neg = p[positive], p[~positive]
    return _ChunkCounts(pos.size, neg.size, float(pos.sum()), float(neg.sum()), _pb_window(pos),
                        _pb_window(neg))


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
                    labels: tuple[str, ...] | None) -> Chunking:
    """The chunks of one partition: by its keys, or by its rows' global positions."""
    if keys is not None:
        return make_chunks(size, chunks=keys)
    codes = np.searchsorted(starts, offset + np.arange(size), side="right") - 1
    present, local = np.unique(codes, return_inverse=True)
    return Chunking(tuple(labels[i] for i in present), local)


def _cbpe_block(scores: Any, keys: Any = None, *, threshold: float, calibrator: Any,
                offset: int | None = None, starts: np.ndarray | None = None,
                labels: tuple[str, ...] | None = None) -> dict[str, _ChunkCounts]:
    if len(scores) == 0:  # an empty partition (e.g. filtered out)
        return {}
    s = as_scores(scores, "scores")
    p = s if calibrator is None else np.asarray(calibrator.predict(s), dtype=float)
    positive = s >= threshold
    chunking = _block_chunking(s.size, keys, offset, starts, labels)
    return {label: _chunk_counts(p[rows], positive[rows])
            for label, rows in zip(chunking.labels, chunking.rows(), strict=True)}


def _count_law(c: _ChunkCounts) -> CountLaw:
    """CBPE's V0 law of a chunk: both windows cut to the counts above TOL and renormalised, as
    :meth:`bayeval.methods.cbpe_exact.CountLaw.poisson_binomial` has them."""
    (ts, tp), (fs, fn) = (_window(*w, TOL) for w in (c.tp, c.fn))
    return CountLaw(c.n_pos, c.n_neg, ts, (tp / tp.sum())[None, :], fs, (fn / fn.sum())[None, :],
                    np.ones(1))


def _cbpe_parts(scores: Any, chunks: Any, chunk_size: Any, n_chunks: Any,
                **kwargs: Any) -> list[Any]:
    """One delayed summary per partition, its rows in chunks by key or by global position
    (then the rows of every partition are counted first)."""
    dask = _dask()[0]
    if chunks is not None:
        if chunk_size is not None or n_chunks is not None:
            raise ValueError("give at most one of chunks, chunk_size and n_chunks.")
        return [dask.delayed(_cbpe_block)(**b, **kwargs)
                for b in partitions(scores=scores, keys=chunks)]
    blocks = partitions(scores=scores)
    sizes = np.array(dask.compute(*[dask.delayed(len)(b["scores"]) for b in blocks]), dtype=int)
    starts, labels = _ranges(int(sizes.sum()), chunk_size, n_chunks)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    return [dask.delayed(_cbpe_block)(**b, offset=int(o), starts=starts, labels=labels, **kwargs)
            for b, o in zip(blocks, offsets, strict=True)]


def _cbpe_metrics(metrics: Any) -> tuple[str, ...]:
    if metrics is None:
        return METRICS
    names = tuple(as_choice(m, "metrics", (*METRICS, "roc_auc")) for m in np.atleast_1d(metrics))
    if "roc_auc" in names:
        raise ValueError("metrics: roc_auc needs all scores sorted together and has no "
                         "partitioned fast path; drop it, or run bayeval.methods.cbpe.cbpe in "
                         "memory.")
    return names


def cbpe(scores: Any, *, threshold: float = 0.5, chunks: Any = None, chunk_size: Any = None,
         n_chunks: Any = None, calibrator: Any = None, metrics: Any = None,
         zero_division: float = 0.0, beta: float = 1.0, ci_prob: float = 0.95,
         ci_kind: str = "eti") -> Evaluation:
    r"""CBPE's exact fast path (noise ``"none"``) on partitioned scores, per chunk and whole.

    Parameters
    ----------
    scores : dask array, dask Series or array-like of float in [0, 1]
        Raw scores of the positive class; the predictions are ``scores >= threshold``.
    threshold : float
        The decision threshold.
    chunks : dask array, dask Series or array-like, optional
        A chunk key per row (dates, batch ids), aligned with ``scores``; chunks in order of
        first appearance.
    chunk_size, n_chunks : int, optional
        Contiguous chunks, as in :func:`bayeval.chunks.make_chunks` (the rows of each
        partition are counted first). None of the three: one chunk.
    calibrator : bayeval.calibration.Calibrator, optional
        A fitted calibrator, applied to every partition (e.g. fitted on the reference in
        memory); None takes the scores as calibrated.
    metrics : sequence of str, optional
        Confusion-matrix metrics (default all of them); ROC-AUC has no partitioned path.
    zero_division, beta, ci_prob, ci_kind
        As in :func:`bayeval.methods.cbpe.cbpe`.

    Returns
    -------
    Evaluation
        The ``closed_form`` of ``cbpe(scores, chunks=..., calibration="none", metrics=...)``
        over ``(chunk, metric)``, to 1e-12, without alert thresholds.

    Notes
    -----
    Per chunk :math:`c`, :math:`TP_c=\sum_b TP_{c,b}` and :math:`FN_c=\sum_b FN_{c,b}` over the
    partitions :math:`b` holding its rows, so their PMFs are convolutions of the partitions'
    windows (:func:`poisson_binomial`); the metric laws then come from the two count laws
    (:class:`bayeval.methods.cbpe_exact.CountLaw`), and the whole period's law is the sum of
    the chunks' laws, as in memory.
    """
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    zero_division, beta = as_zero_division(zero_division), as_beta(beta)
    metrics = _cbpe_metrics(metrics)
    if not (isinstance(threshold, int | float | np.number) and 0.0 < threshold <= 1.0):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}.")
    parts = _cbpe_parts(scores, chunks, chunk_size, n_chunks, threshold=float(threshold),
                        calibrator=calibrator)
    per_chunk = tree_reduce(parts, functools.partial(_merge, add=operator.add)).compute()
    if not per_chunk:
        raise ValueError("scores is empty; at least one value is needed.")
    return _cbpe_evaluation(per_chunk, metrics, zero_division, beta, ci_prob, ci_kind,
                            getattr(calibrator, "name", "none"))


def _cbpe_evaluation(per_chunk: dict[str, _ChunkCounts], metrics, zero_division, beta, ci_prob,
                     ci_kind, calibration: str) -> Evaluation:
    """The Evaluation of :func:`cbpe` from the combined counts of every chunk."""
    labels, counts = list(per_chunk), list(per_chunk.values())
    laws = [_count_law(c) for c in counts]
    laws.append(functools.reduce(operator.add, laws))
    expected = [(c.expected_tp, c.expected_fn) for c in counts]
    expected.append(tuple(map(sum, zip(*expected, strict=True))))
    no_thresholds = (np.full(len(metrics), np.nan),) * 2
    closed = cbpe_method.closed_form(laws, None, expected, labels, metrics, ci_prob, ci_kind,
                                     zero_division, beta, no_thresholds)
    sizes = np.array([c.n_pos + c.n_neg for c in counts])
    closed["n"] = ("chunk", np.r_[sizes, sizes.sum()])
    closed["n_predicted_positive"] = ("chunk", [law.n_pos for law in laws])
    notes = cbpe_method.size_notes(sizes)
    if calibration == "none":
        notes.append("no calibrator: the scores are taken as calibrated probabilities.")
    return Evaluation.create(
        method="cbpe", variant="exact", closed_form=closed, ci_prob=ci_prob, ci_kind=ci_kind,
        data=xr.Dataset(coords={"chunk": [*labels, WHOLE]}), warnings=notes,
        assumptions=cbpe_method.ASSUMPTIONS, noise="none", calibration=calibration,
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


def _pemi_block(y_pred: Any, p: Any, labels: Any, *, nodes: np.ndarray) -> LabelSums:
    if len(y_pred) == 0:
        return LabelSums(0, 0, 0, 0, 0, 0, *(np.zeros(nodes.size) for _ in range(6)))
    yp = as_binary(y_pred, "y_pred").astype(bool)
    pp, y = as_probabilities(p, "p"), as_labels(labels, "labels", allow_missing=True)
    check_same_length(y_pred=yp, p=pp, labels=y)
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


def pemi_sums(y_pred: Any, p: Any, labels: Any, *, nodes: Any = (0.0,)) -> LabelSums:
    r""":class:`LabelSums` of partitioned rows, at the MNAR shifts ``nodes``.

    Parameters
    ----------
    y_pred : dask array, dask Series or array-like of 0/1
        Predictions.
    p : same, float in [0, 1]
        :math:`P(Y_i=1)` of the missing labels (ignored, but checked, on labelled rows).
    labels : same, 0, 1 or NaN
        NaN where the label is missing.
    nodes : sequence of float
        Shifts :math:`\delta_k` of the log-odds of the missing labels (0: MAR).
    """
    nodes = np.atleast_1d(np.asarray(nodes, dtype=float))
    columns = {"y_pred": y_pred, "p": p, "labels": labels}
    return _reduce(_pemi_block, _add_tuples, columns, nodes=nodes).compute()


def _moments(s: LabelSums, k: int, metric: str, beta: float, zero_division: float,
             second_order: bool) -> tuple[float, float]:
    r"""Mean and variance of ``metric`` at node k (:func:`bayeval.confusion.count_moments`):
    :math:`\mathbb E\,TP=TP_K+\sum_{\hat y=1}q`, :math:`\operatorname{Var}TP=\sum_{\hat y=1}
    q(1-q)`, likewise FN."""
    return count_moments(metric, s.tp + s.fp + s.m1, s.fn + s.tn + s.m0,
                         mean_tp=s.tp + float(s.p1[k]), mean_fn=s.fn + float(s.p0[k]),
                         var_tp=float(s.v1[k]), var_fn=float(s.v0[k]), beta=beta,
                         zero_division=zero_division, second_order=second_order)


def pemi_gauss(y_pred: Any, p: Any, labels: Any, *, metrics: Any = None, mnar: Any = None,
               ci_prob: float = 0.95, zero_division: float = 0.0, beta: float = 1.0,
               second_order: bool = True) -> xr.Dataset:
    r"""PEMI-Gauss (Algorithm 2) of the confusion-matrix metrics on partitioned rows.

    Parameters
    ----------
    y_pred, p, labels
        As in :func:`pemi_sums`; ``p`` is the imputation probability (e.g. a calibrator
        fitted in memory on labelled rows, mapped over the partitions).
    metrics : sequence of str, optional
        Confusion-matrix metrics (default precision, recall, accuracy, f1); ROC-AUC needs
        all scores sorted together and has no partitioned path.
    mnar : float or (mean, sd), optional
        The MNAR shift :math:`\delta`, fixed or with a normal prior (a mixture over
        :func:`bayeval.methods.pemi_fast.delta_nodes`).
    ci_prob, zero_division, beta, second_order
        As in :func:`bayeval.methods.pemi.pemi`.

    Returns
    -------
    xr.Dataset
        The ``closed_form`` of ``pemi(..., p=p, method="gauss")`` over ``metric`` (``mean``,
        ``sd``, ``lower``, ``upper``, ``interval_mass``, ``p_undefined``), to 1e-12.

    Notes
    -----
    The moments depend on the rows only through :class:`LabelSums`: with
    :math:`T=TP`, :math:`F=FN`, :math:`\mathbb E\,g\approx g(\mu)+\tfrac12(g_{TT}\sigma_T^2
    +g_{FF}\sigma_F^2)` and :math:`\operatorname{Var}g\approx g_T^2\sigma_T^2+g_F^2\sigma_F^2`
    (:func:`bayeval.confusion.metric_moments`).
    """
    ci_prob, beta = as_ci_prob(ci_prob), as_beta(beta)
    zero_division = as_zero_division(zero_division)
    metrics = (("precision", "recall", "accuracy", "f1") if metrics is None else
               tuple(as_choice(m, "metrics", METRICS) for m in np.atleast_1d(metrics)))
    nodes, weights = delta_nodes(as_mnar(mnar))
    sums = pemi_sums(y_pred, p, labels, nodes=nodes)
    normal = {}
    for metric in metrics:
        mv = np.array([_moments(sums, k, metric, beta, zero_division, second_order)
                       for k in range(nodes.size)])
        summary = (np.nan,) * 4 if np.isnan(mv).any() else mixture(mv[:, 0], mv[:, 1], weights,
                                                                   ci_prob)
        normal[metric] = (*summary, undefined_probability(
            (sums.tp, sums.fp, sums.fn, sums.tn), sums.m1, sums.m0,
            np.exp(sums.log0[nodes.size // 2]), np.exp(sums.log1[nodes.size // 2]), metric,
            beta))
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
