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
import operator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval import metrics as M
from bayeval.calibration import CALIBRATORS, Calibrator, make_calibrator
from bayeval.chunks import WHOLE
from bayeval.confusion import TOL, count_moments, ratio_moments
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.bounds import label_models as lm
from bayeval.methods.bounds.api import METRICS as BOUNDS_METRICS
from bayeval.methods.bounds.api import default_metrics, exact_bounds
from bayeval.methods.cbpe import api as cbpe_method
from bayeval.methods.cbpe.fast import CountLaw, NormalLaw
from bayeval.methods.judge import fast as E
from bayeval.methods.mvu.fast import gaussian_vote_probs
from bayeval.methods.pemi import api as pemi_method
from bayeval.methods.pemi.api import as_mnar
from bayeval.methods.pemi.fast import (
    Rows,
    closed_form,
    delta_nodes,
    mixture,
    shift,
    undefined_probability,
)
from bayeval.metrics import METRICS
from bayeval.partitions import (
    RANGE_ROWS,
    RANGE_SAMPLE,
    SPLIT_EVERY,
    RangeSums,
    add_tuples,
    as_dask_array,
    auc_moments,
    auc_numerator_moments,
    block_chunking,
    block_labels,
    convolve_windows,
    dask_modules,
    merge_dicts,
    partitions,
    pmf_window,
    poisson_binomial,
    range_edges,
    range_ratio_moments,
    range_sums_by_chunk,
    reduce_blocks,
    score_profile,
    tree_reduce,
    trim_window,
)
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

CALIBRATION_ROWS = 10**7
"""PEMI: at most this many labelled rows are gathered on the client to fit the calibrator
(9 bytes each)."""

CBPE_TIE = 0.5
"""Weight of a tied positive-negative pair in CBPE's ROC-AUC (scikit-learn's)."""


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
                            convolve_windows(self.tp, other.tp),
                            convolve_windows(self.fn, other.fn),
                            self.labelled + other.labelled)


def _confusion(positive: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """tp, fp, fn, tn of the rows whose label ``y`` is known (NaN: missing)."""
    known = None if y is None else ~np.isnan(y)
    if known is None or not known.any():
        return np.zeros(4, np.int64)
    return np.array(M.confusion_counts(y[known], positive[known]), dtype=np.int64)


def _chunk_counts(p: np.ndarray, positive: np.ndarray, y: np.ndarray | None) -> _ChunkCounts:
    pos, neg = p[positive], p[~positive]
    return _ChunkCounts(pos.size, neg.size, float(pos.sum()), float(neg.sum()), pmf_window(pos),
                        pmf_window(neg), _confusion(positive, y))


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


def _cbpe_block(scores: Any, keys: Any = None, labels: Any = None, *, threshold: float,
                calibrator: Any, offset: int | None = None, starts: np.ndarray | None = None,
                names: tuple[str, ...] | None = None) -> dict[str, _ChunkCounts]:
    if len(scores) == 0:  # an empty partition (e.g. filtered out)
        return {}
    s = as_scores(scores, "scores")
    y = block_labels(labels, s.size)
    p = s if calibrator is None else np.asarray(calibrator.predict(s), dtype=float)
    positive = s >= threshold
    chunking = block_chunking(s.size, keys, offset, starts, names)
    return {label: _chunk_counts(p[rows], positive[rows], None if y is None else y[rows])
            for label, rows in zip(chunking.labels, chunking.rows(), strict=True)}


def _count_law(c: _ChunkCounts) -> CountLaw:
    """CBPE's V0 law of a chunk: both windows cut to the counts above TOL and renormalised, as
    :meth:`bayeval.methods.cbpe.fast.CountLaw.poisson_binomial` has them."""
    (ts, tp), (fs, fn) = (trim_window(*w, TOL) for w in (c.tp, c.fn))
    return CountLaw(c.n_pos, c.n_neg, ts, (tp / tp.sum())[None, :], fs, (fn / fn.sum())[None, :],
                    np.ones(1))


def _auc_law(sums: RangeSums, zero_division: float) -> tuple[NormalLaw, float]:
    r"""CBPE's ROC-AUC law and NannyML's estimate, as ``bayeval.methods.cbpe.api`` has them.

    NannyML's estimate, the area under the ROC curve of the expected counts, is
    :math:`\sum_{i,j}p_iq_j\xi_{ij}/(PQ)=(\mathbb EA+\frac12\sum_iv_i)/(PQ)`, the pairs
    :math:`i=j` included.
    """
    moments = range_ratio_moments(sums, CBPE_TIE)
    if moments.mean_den == 0:  # both classes impossible: undefined with probability 1
        return NormalLaw(zero_division, 0.0, 1.0), zero_division
    mean, var = ratio_moments(moments)
    p_undefined = min(float(np.exp(sums.log0) + np.exp(sums.log1)), 1.0)
    pq = sums.p * sums.q
    return NormalLaw(mean, float(np.sqrt(var)), p_undefined), (sums.pf + 0.5 * sums.v) / pq


def _realized_auc(sums: RangeSums, zero_division: float) -> float:
    """ROC-AUC of the labelled rows, :func:`bayeval.metrics.roc_auc` (NaN without labels)."""
    if sums.npos + sums.nneg == 0:
        return np.nan
    if sums.npos == 0 or sums.nneg == 0:
        return zero_division
    return float(np.true_divide(np.int64(sums.num), np.int64(2 * sums.npos * sums.nneg)))


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
    dask = dask_modules()[0]
    if chunks is not None and (chunk_size is not None or n_chunks is not None):
        raise ValueError("give at most one of chunks, chunk_size and n_chunks.")
    blocks = partitions(scores=scores, keys=chunks, labels=labels)
    by_key = chunks is not None
    if by_key and not (auc or count_keys):
        return _Plan(blocks, [{}] * len(blocks), None, None)
    keys = [b.get("keys") if count_keys else None for b in blocks]
    profiles = dask.compute(*[dask.delayed(score_profile)(b["scores"], k,
                                                     sample=RANGE_SAMPLE if auc else 0)
                              for b, k in zip(blocks, keys, strict=True)])
    rows = np.array([size for size, _, _ in profiles], dtype=np.int64)
    n = int(rows.sum())
    if n == 0:
        raise ValueError("scores is empty; at least one value is needed.")
    edges = range_edges(profiles, score_ranges) if auc else None
    if by_key:
        counts = functools.reduce(functools.partial(merge_dicts, add=operator.add),
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
        gives the alert thresholds, as in :func:`bayeval.methods.cbpe.api.cbpe`.
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
        As in :func:`bayeval.methods.cbpe.api.cbpe`. ``calibration`` may also be a fitted
        :class:`~bayeval.calibration.Calibrator` without a reference (applied as given);
        without either the scores are taken as calibrated.
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.cbpe.api.cbpe` (default all of them, ROC-AUC included).
    zero_division, beta, ci_prob, ci_kind
        As in :func:`bayeval.methods.cbpe.api.cbpe`.
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
    (:class:`bayeval.methods.cbpe.fast.CountLaw`), and the whole period's law is the sum of
    the chunks' laws, as in memory. ROC-AUC's exact moments need the rows in score order:
    they come from sums over score ranges (:func:`auc_numerator_moments`), per chunk and for
    the whole period, in a second pass that also counts. The realized metrics add the
    labelled rows' confusion counts per chunk; the realized ROC-AUC is the Mann-Whitney
    count, concatenated over the score ranges like the moments. The reference (calibrator,
    thresholds) is handled in memory by the functions of :mod:`bayeval.methods.cbpe.api`.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.cbpe.api import cbpe as in_memory
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

    dask = dask_modules()[0]
    cal_name = "none" if cal is None else cal.name
    cal = None if cal_name == "none" else cal  # the identity
    counts = [dask.delayed(_cbpe_block)(**b, **w, threshold=threshold, calibrator=cal)
              for b, w in zip(plan.blocks, plan.where, strict=True)]
    todo = [tree_reduce(counts, functools.partial(merge_dicts, add=operator.add))]
    if auc:  # the labels travel with the rows only for the realized ROC-AUC
        todo.append(range_sums_by_chunk(plan.blocks, plan.where, plan.edges, calibrator=cal,
                                         tie=CBPE_TIE))
    per_chunk, *ranges = dask.compute(*todo)
    if not per_chunk:
        raise ValueError("scores is empty; at least one value is needed.")
    return _cbpe_evaluation(per_chunk, ranges[0] if auc else None, labelled=labels is not None,
                            metrics=metrics, thresholds=thresholds, zero_division=zero_division,
                            beta=beta, ci_prob=ci_prob, ci_kind=ci_kind, data=data,
                            notes=notes, calibration=cal_name, random_seed=random_seed)


def _realized(counts: list[_ChunkCounts], ranges: dict[str, RangeSums] | None,
              labels: list[str], metrics: tuple[str, ...], zero_division: float,
              beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (chunk and whole x metric) of the labelled rows, NaN without a label,
    and the labelled rows per chunk (``bayeval.methods.cbpe.api._realized``)."""
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


def _cbpe_evaluation(per_chunk: dict[str, _ChunkCounts], ranges: dict[str, RangeSums] | None,
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


def _shifts(nodes: np.ndarray) -> tuple:
    """PEMI's MNAR shifts of the log-odds at ``nodes``, as maps of the probabilities."""
    return tuple(functools.partial(shift, delta=d) for d in nodes)


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
    dask = dask_modules()[0]
    return tree_reduce([dask.delayed(_pemi_block)(**{"p": None, **block}, nodes=nodes,
                                                  calibrator=calibrator)
                        for block in partitions(**columns)], add_tuples)


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
    """P(``metric`` undefined) at node k (:func:`bayeval.methods.pemi.fast.p_undefined`)."""
    return undefined_probability((s.tp, s.fp, s.fn, s.tn), s.m1, s.m0, np.exp(s.log0[k]),
                                 np.exp(s.log1[k]), metric, beta)


def _auc_node(sums: LabelSums, ranges: dict[int, RangeSums], k: int, tie: float, beta: float,
              zero_division: float, second_order: bool) -> tuple[float, float]:
    """ROC-AUC's mean and variance at node k, as ``bayeval.methods.pemi.fast.moments``."""
    if _undefined(sums, k, "roc_auc", beta) == 1.0:  # a single class in every completion
        return zero_division, np.nan if np.isnan(zero_division) else 0.0
    return ratio_moments(range_ratio_moments(ranges[k], tie), second_order)


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
    """PEMI's calibrator (``bayeval.methods.pemi.fast.imputation_probabilities``), fitted on
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
        dask = dask_modules()[0]
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
        :func:`bayeval.methods.pemi.api.pemi` does by default.
    scores : same, float in [0, 1], optional
        Raw scores: the calibrator's input and ROC-AUC's ranking (needed for both).
    calibrator : str or object with ``fit``/``predict``
        As in :func:`bayeval.methods.pemi.api.pemi`. Fitted in memory: the labelled rows are
        gathered on the client (a first pass; at most :data:`CALIBRATION_ROWS` of them).
    reference : (scores, labels), optional
        Labelled calibration data, in memory, as in :func:`bayeval.methods.pemi.api.pemi`.
    metrics : sequence of str, optional
        Confusion-matrix metrics and ``roc_auc``; default precision, recall, accuracy, f1
        and, with ``scores``, roc_auc (:func:`bayeval.methods.pemi.api.pemi`'s).
    mnar : float or (mean, sd), optional
        The MNAR shift :math:`\delta`, fixed or with a normal prior (a mixture over
        :func:`bayeval.methods.pemi.fast.delta_nodes`).
    ci_prob, zero_division, beta, second_order, ties
        As in :func:`bayeval.methods.pemi.api.pemi`.
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
    :func:`bayeval.methods.pemi.api.pemi` fits it (same rows, same order), so the probabilities
    are the same.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.pemi.api import pemi
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
    dask = dask_modules()[0]
    todo = [_pemi_reduction(y_pred, p, labels, scores, nodes, calibrator)]
    if auc:
        blocks = partitions(scores=scores, labels=labels, p=p)
        profiles = dask.compute(*[dask.delayed(score_profile)(b["scores"], sample=RANGE_SAMPLE)
                                  for b in blocks])
        edges = range_edges(profiles, score_ranges)
        todo.append(range_sums_by_chunk(blocks, [{}] * len(blocks), edges,
                                         calibrator=calibrator, tie=tie, transforms=_shifts(nodes)))
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
    bayeval.methods.judge.fast.Counts
        Exactly ``Counts.from_labels(y, yhat, yhat_unlabeled)``: the input of every binary
        estimator (:func:`judge_estimates`) and of the models
        (``bayeval.methods.judge.api.model_a(*counts)``).

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
    labelled = reduce_blocks(_judge_labelled, add_tuples, {"y": y, "yhat": yhat})
    unlabelled = reduce_blocks(_judge_unlabelled, add_tuples, {"yhat_unlabeled": yhat_unlabeled})
    return add_tuples(*dask_modules()[0].compute(labelled, unlabelled))


def judge_estimates(counts: E.Counts, *, ci_prob: float = 0.95, ci: str = "logit"
                    ) -> xr.Dataset:
    r"""Every estimator of a binary judge from its counts, with intervals.

    Parameters
    ----------
    counts : bayeval.methods.judge.fast.Counts
        E.g. from :func:`judge_counts`.
    ci_prob : float
        Interval level.
    ci : {"logit", "wald"}
        Interval kind (:func:`bayeval.methods.judge.fast.interval`).

    Returns
    -------
    xr.Dataset
        Over ``estimator``: ``mean`` (the estimate), ``sd`` (its standard error), ``lower``,
        ``upper``: those of ``judge(y, yhat, yhat_unlabeled, estimator="all")`` (Rogan–Gladen
        is left out for :math:`\hat\kappa\le0`, as there). The estimators depend on the items
        only through the counts (:class:`~bayeval.methods.judge.fast.Moments` of a
        binary judge are functions of them).

    Examples
    --------
    >>> from bayeval.methods.judge.fast import Counts
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
        (``bayeval.methods.bounds.api.exact_bounds``, ``model_m1``): the in-memory cell counts of
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
    rows, counts = reduce_blocks(_bounds_block, _stack_distinct,
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
        Fitted on the pattern counts (:mod:`bayeval.methods.bounds.label_models`).
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.bounds.api.bounds`.

    Returns
    -------
    xr.Dataset
        Over ``metric``: ``lower_bound``, ``upper_bound``, their sds, ``midpoint_sd`` and
        ``label_model`` of :func:`bayeval.methods.bounds.api.exact_bounds`, as ``bounds(y_pred,
        weak_labels)`` computes them in memory.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.bounds.api import bounds
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
    imputer : bayeval.methods.mvu.estimators.GaussianImputer
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
        \max(P(V=1), 1-P(V=1))` (:func:`bayeval.methods.mvu.fast.gaussian_vote_probs`).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.mvu.estimators import GaussianImputer
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
    x = as_dask_array(x, None)
    if x.ndim != 2 or x.shape[1] != coef.shape[1]:
        raise ValueError(f"x must have shape (n, {coef.shape[1]}) like coef; got {x.shape}.")
    out = x.map_blocks(_mvu_block, imputer, coef, intercept, weights, dtype=float,
                       chunks=(x.chunks[0], (2,)))
    return out[:, 0].astype(np.int64), out[:, 1]
