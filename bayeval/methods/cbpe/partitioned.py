r"""CBPE's exact fast path (noise ``"none"``) on scores split into dask partitions.

Each partition is reduced to a small summary per chunk, the summaries are combined up a tree
(:func:`bayeval.partitions.tree_reduce`), and the client finishes with the in-memory code of
:mod:`bayeval.methods.cbpe.api` and :mod:`bayeval.methods.cbpe.fast`; the results equal the
in-memory ones to 1e-12.

Per chunk :math:`c` and partition :math:`b`, the summary holds the windows of the PMFs of
:math:`TP_{c,b}` and :math:`FN_{c,b}` (Poisson-binomial over the rows predicted positive and
negative), the row counts, :math:`\sum p` over each side and the labelled rows' confusion
counts. Since :math:`TP_c=\sum_b TP_{c,b}` with independent terms, its PMF is the convolution of
the partitions' windows (:func:`bayeval.partitions.convolve_windows`); counts and sums add.
ROC-AUC's exact moments need the rows in score order: they come from sums over score ranges
(:class:`bayeval.partitions.RangeSums`), per chunk and for the whole period; the summary of a
chunk of at most :data:`~bayeval.methods.cbpe.auc.AUC_EXACT_ROWS` rows also holds its rows,
whose ROC-AUC law is exact (:func:`bayeval.methods.cbpe.auc.window_auc_law`). The reference
(calibrator, alert thresholds) is small and handled in memory.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval.calibration import Calibrator, SplitAtThreshold
from bayeval.calibration_map import (
    EXACT_MAP_ROWS,
    DrawPmfs,
    MapPosterior,
    MapSums,
    draw_pmfs,
    support_counts,
)
from bayeval.chunks import WHOLE, contiguous
from bayeval.confusion import TOL, MetricDistribution
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.cbpe.api import (
    add_support,
    alert_bounds,
    check_metrics,
    check_options,
    estimates,
    evaluation,
    map_uncertainty,
    without_reference,
)
from bayeval.methods.cbpe.auc import (
    AUC_EXACT_ROWS,
    auc_law,
    auc_map_shift,
    defined_probability,
    exact_auc_law,
    exact_auc_rows,
    nannyml_auc,
)
from bayeval.methods.cbpe.fast import (
    CountLaw,
    NormalLaw,
    map_laws,
    with_whole,
)
from bayeval.methods.cbpe.late_labels import add_realized, realized_metrics
from bayeval.methods.cbpe.reference import reference_period
from bayeval.metrics import counts_of
from bayeval.partitions import (
    RANGE_SAMPLE,
    RangeSums,
    block_chunking,
    block_labels,
    convolve_windows,
    dask_modules,
    merge_dicts,
    partitions,
    pmf_window,
    range_edges,
    range_ratio_moments,
    range_sums_by_chunk,
    score_profile,
    tree_reduce,
    trim_window,
)
from bayeval.validation import as_alert_thresholds, as_beta, as_choice, as_ci_prob, as_scores

__all__ = ["CBPE_TIE", "cbpe"]

CBPE_TIE = 0.5
"""Weight of a tied positive-negative pair in CBPE's ROC-AUC (scikit-learn's)."""


# ---------------------------------------------------------------------------------------------
# counts per chunk


class _ChunkCounts(NamedTuple):
    """What CBPE needs of one chunk's rows (in one partition, or summed over several)."""

    n_pos: int  # rows predicted positive
    n_neg: int
    expected_tp: float  # sum of p over the rows predicted positive
    expected_fn: float
    tp: tuple[int, np.ndarray]  # window of the PMF of TP (PB over the predicted positives)
    fn: tuple[int, np.ndarray]
    labelled: np.ndarray  # tp, fp, fn, tn of the rows with a known label (int64)
    map_sums: MapSums | None  # what the calibration map's draws need (None: no posterior)
    draws: DrawPmfs | None  # the counts' PMFs given each draw (None: no posterior, or long)
    support: np.ndarray  # rows per support bin of bayeval.calibration_map
    rows: tuple[np.ndarray, np.ndarray] | None = None  # (s, p) of a short chunk, for ROC-AUC

    def __add__(self, other: _ChunkCounts) -> _ChunkCounts:
        return _ChunkCounts(self.n_pos + other.n_pos, self.n_neg + other.n_neg,
                            self.expected_tp + other.expected_tp,
                            self.expected_fn + other.expected_fn,
                            convolve_windows(self.tp, other.tp),
                            convolve_windows(self.fn, other.fn),
                            self.labelled + other.labelled,
                            None if self.map_sums is None else self.map_sums + other.map_sums,
                            None if self.draws is None or other.draws is None
                            or self.n_pos + self.n_neg + other.n_pos + other.n_neg
                            > EXACT_MAP_ROWS else self.draws + other.draws,
                            self.support + other.support, _joined([self.rows, other.rows]))


def _joined(rows: list[tuple[np.ndarray, np.ndarray] | None]) -> tuple[np.ndarray, ...] | None:
    """The rows ``(s, p)`` of several windows together, while they are at most
    :data:`~bayeval.methods.cbpe.auc.AUC_EXACT_ROWS` (None beyond, or if one is missing)."""
    if any(r is None for r in rows) or sum(r[0].size for r in rows) > AUC_EXACT_ROWS:
        return None
    return tuple(np.concatenate(parts) for parts in zip(*rows, strict=True))


def _confusion(positive: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """tp, fp, fn, tn of the rows whose label ``y`` is known (NaN: missing)."""
    known = None if y is None else ~np.isnan(y)
    if known is None or not known.any():
        return np.zeros(4, np.int64)
    return np.array(counts_of(y[known].astype(np.int64), positive[known]), dtype=np.int64)


def _chunk_counts(s: np.ndarray, p: np.ndarray, positive: np.ndarray, y: np.ndarray | None,
                  posterior: MapPosterior | None, auc: bool) -> _ChunkCounts:
    pos, neg = p[positive], p[~positive]
    return _ChunkCounts(pos.size, neg.size, float(pos.sum()), float(neg.sum()), pmf_window(pos),
                        pmf_window(neg), _confusion(positive, y),
                        None if posterior is None else posterior.sums(s, p, positive),
                        None if posterior is None or s.size > EXACT_MAP_ROWS
                        else draw_pmfs(posterior.predict(s), positive),
                        support_counts(s), (s, p) if auc and s.size <= AUC_EXACT_ROWS else None)


def _block(scores: Any, keys: Any = None, labels: Any = None, *, threshold: float,
           calibrator: Any, posterior: MapPosterior | None = None, auc: bool = False,
           offset: int | None = None, starts: np.ndarray | None = None,
           names: tuple[str, ...] | None = None) -> dict[str, _ChunkCounts]:
    """The summaries of one partition's chunks (with the rows of the short ones if ``auc``)."""
    if len(scores) == 0:  # an empty partition (e.g. filtered out)
        return {}
    s = as_scores(scores, "scores")
    y = block_labels(labels, s.size)
    p = s if calibrator is None else np.asarray(calibrator.predict(s), dtype=float)
    positive = s >= threshold
    chunking = block_chunking(s.size, keys, offset, starts, names)
    return {label: _chunk_counts(s[rows], p[rows], positive[rows],
                                 None if y is None else y[rows], posterior, auc)
            for label, rows in zip(chunking.labels, chunking.rows(), strict=True)}


def _count_law(c: _ChunkCounts) -> CountLaw:
    """V0's law of a chunk: both windows cut to the counts above TOL, as
    :meth:`~bayeval.methods.cbpe.fast.CountLaw.poisson_binomial` has them."""
    return CountLaw.from_windows(c.n_pos, c.n_neg, trim_window(*c.tp, TOL),
                                 trim_window(*c.fn, TOL))


def _auc_law(sums: RangeSums, zero_division: float, posterior: MapPosterior | None,
             map_sums: MapSums | None,
             rows: tuple[np.ndarray, np.ndarray] | None) -> tuple[NormalLaw | MetricDistribution,
                                                                  float]:
    r"""ROC-AUC's law in a chunk, as :func:`~bayeval.methods.cbpe.auc.window_auc_law`: exact
    from its ``rows`` (s, p) when they are given and short enough, else
    :func:`~bayeval.methods.cbpe.auc.auc_law` from the sums of its rows, with
    :math:`P(\text{both classes})=1-\exp\sum\log q-\exp\sum\log p`."""
    moments = range_ratio_moments(sums, CBPE_TIE)
    if rows is not None and rows[0].size <= exact_auc_rows(0 if posterior is None
                                                           else posterior.draws):
        order = np.argsort(rows[0], kind="stable")
        return (exact_auc_law(rows[0][order], rows[1][order], zero_division, posterior),
                nannyml_auc(moments, sums.p, sums.q, zero_division))
    shift = (None if posterior is None or moments.mean_den <= 0 else
             auc_map_shift(moments, map_sums, posterior))
    return auc_law(moments, sums.p, sums.q, defined_probability(sums.log0, sums.log1),
                   zero_division, shift)


def _realized_auc(sums: RangeSums, zero_division: float) -> float:
    """ROC-AUC of the labelled rows, :func:`bayeval.metrics.roc_auc` (NaN without labels): the
    exact Mann-Whitney count over the score ranges."""
    if sums.npos + sums.nneg == 0:
        return np.nan
    if sums.npos == 0 or sums.nneg == 0:
        return zero_division
    return float(np.true_divide(np.int64(sums.num), np.int64(2 * sums.npos * sums.nneg)))


# ---------------------------------------------------------------------------------------------
# the plan and the entry point


class _Plan(NamedTuple):
    """CBPE's partitions and what a first pass over them learned."""

    blocks: list[dict[str, Any]]
    where: list[dict[str, Any]]  # per partition: how its rows fall into contiguous chunks
    chunk_sizes: np.ndarray | None  # rows per chunk (None: chunks by key, not counted)
    edges: np.ndarray | None  # ROC-AUC's score ranges


def _plan(scores: Any, chunks: Any, chunk_size: Any, n_chunks: Any, labels: Any, *,
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
    starts, names = contiguous(n, chunk_size=chunk_size, n_chunks=n_chunks)
    where = [{"offset": int(o), "starts": starts, "names": names}
             for o in np.r_[0, np.cumsum(rows)[:-1]]]
    return _Plan(blocks, where, np.diff(np.r_[starts, n]), edges)


def cbpe(scores: Any, *, threshold: float = 0.5, reference: Any = None, labels: Any = None,
         chunks: Any = None, chunk_size: Any = None, n_chunks: Any = None,
         reference_chunks: Any = None, calibration: Any = "auto", class_conditional: bool = True,
         calibration_uncertainty: bool = True, metrics: Any = None,
         zero_division: float = 0.0, beta: float = 1.0,
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
    reference_chunks, calibration, class_conditional, calibration_uncertainty
        As in :func:`bayeval.methods.cbpe.api.cbpe`. ``calibration`` may also be a fitted
        :class:`~bayeval.calibration.Calibrator` without a reference (applied as given);
        without either the scores are taken as calibrated.
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.cbpe.api.cbpe` (default all of them, ROC-AUC included).
    zero_division, beta, ci_prob, ci_kind
        As in :func:`bayeval.methods.cbpe.api.cbpe`.
    score_ranges : int, optional
        ROC-AUC only: the score ranges its rows are shuffled into (see
        :func:`bayeval.partitions.auc_numerator_moments`); a range's task holds about
        n / ``score_ranges`` rows. Default: one per :data:`bayeval.partitions.RANGE_ROWS` rows.

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
    windows (:func:`bayeval.partitions.poisson_binomial`); the metric laws then come from the
    two count laws (:class:`bayeval.methods.cbpe.fast.CountLaw`), and the whole period's law is
    the sum of the chunks' laws, as in memory. ROC-AUC's exact moments come from sums over score
    ranges, per chunk and for the whole period, in a second pass that also counts. The realized
    metrics add the labelled rows' confusion counts per chunk; the realized ROC-AUC is the
    Mann-Whitney count, concatenated over the score ranges like the moments.

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
    metrics = check_metrics(metrics, "none")
    alert_thresholds = as_alert_thresholds(alert_thresholds, metrics)
    calibration, threshold, zero_division = check_options(calibration, threshold, zero_division,
                                                          "none", None, None, 1)
    notes: list[str] = []
    learned = not (isinstance(calibration, Calibrator) and calibration.fitted)
    ref = None
    if reference is None:
        cal, notes = without_reference(calibration, "none")
    auc = "roc_auc" in metrics
    plan = _plan(scores, chunks, chunk_size, n_chunks, labels, auc=auc,
                 count_keys=reference is not None and chunks is not None,
                 score_ranges=score_ranges)
    realized_ref, data = np.empty((0, len(metrics))), xr.Dataset()
    if reference is not None:
        ref, cal, data = reference_period(
            reference, threshold, calibration, class_conditional, random_seed, reference_chunks,
            chunk_size or int(np.median(plan.chunk_sizes)), (metrics, zero_division, beta),
            notes, alert_thresholds)
        realized_ref = ref.realized
    thresholds = alert_bounds(realized_ref, metrics, alert_thresholds)
    posterior = map_uncertainty(cal, ref, learned, bool(calibration_uncertainty), "none",
                                random_seed, notes)

    dask = dask_modules()[0]
    cal_name = "none" if cal is None else cal.name
    cal = None if cal_name == "none" else cal  # the identity
    counts = [dask.delayed(_block)(**b, **w, threshold=threshold, calibrator=cal,
                                   posterior=posterior, auc=auc)
              for b, w in zip(plan.blocks, plan.where, strict=True)]
    todo = [tree_reduce(counts, functools.partial(merge_dicts, add=operator.add))]
    if auc:  # the labels travel with the rows only for the realized ROC-AUC
        todo.append(range_sums_by_chunk(plan.blocks, plan.where, plan.edges, calibrator=cal,
                                        tie=CBPE_TIE))
    per_chunk, *ranges = dask.compute(*todo)
    if not per_chunk:
        raise ValueError("scores is empty; at least one value is needed.")
    chunk_labels, summaries = list(per_chunk), list(per_chunk.values())
    groups = [*chunk_labels, WHOLE]
    laws = with_whole([_count_law(c) for c in summaries])
    sizes = np.array([c.n_pos + c.n_neg for c in summaries])
    map_sums = [None] * len(groups)
    if posterior is not None:
        map_sums = [c.map_sums for c in summaries]
        draws = [c.draws for c in summaries]
        whole = sum(draws[1:], draws[0]) if sizes.sum() <= EXACT_MAP_ROWS else None
        laws = map_laws(laws, map_sums, posterior, isinstance(cal, SplitAtThreshold),
                        [*draws, whole])
        map_sums.append(sum(map_sums[1:], map_sums[0]))
    expected = [(c.expected_tp, c.expected_fn) for c in summaries]
    expected.append(tuple(map(sum, zip(*expected, strict=True))))
    short = [c.rows for c in summaries]
    short.append(_joined(short))
    auc_laws = ([_auc_law(ranges[0][k], zero_division, posterior, s, r)
                 for k, s, r in zip(groups, map_sums, short, strict=True)] if auc else None)
    closed = estimates(laws, auc_laws, expected, chunk_labels, sizes, metrics, ci_prob, ci_kind,
                       zero_division, beta, thresholds)
    if labels is not None:
        confusion = np.array([c.labelled for c in summaries])
        confusion = np.vstack([confusion, confusion.sum(axis=0)])
        realized_auc = [_realized_auc(ranges[0][k], zero_division) for k in groups] if auc \
            else None
        add_realized(closed, *realized_metrics(confusion, realized_auc, metrics, zero_division,
                                               beta))
    if ref is not None:
        add_support(closed, [c.support for c in summaries], ref.scores, notes)
    return evaluation(chunk_labels=chunk_labels, sizes=sizes, noise="none",
                      calibration=cal_name,
                      split=class_conditional and not isinstance(calibration, Calibrator),
                      variant="exact",
                      ci_prob=ci_prob, ci_kind=ci_kind, random_seed=random_seed,
                      data=data.assign_coords(chunk=groups), notes=notes, partitioned=True,
                      map_draws=0 if posterior is None else posterior.draws, closed_form=closed)
