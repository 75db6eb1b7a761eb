r"""PEMI-Gauss on rows split into dask partitions, equal to the in-memory one to 1e-12.

Every partition is reduced to :class:`LabelSums`: the confusion counts of its labelled rows and,
over its missing rows, :math:`\sum q`, :math:`\sum q(1-q)`, :math:`\sum\log q` and
:math:`\sum\log(1-q)` at each MNAR node :math:`\delta_k`
(:math:`q=\sigma(\operatorname{logit}p+\delta_k)`). Sums add, so the partitions' sums combine up a
tree (:func:`bayeval.partitions.tree_reduce`), and the client finishes with the in-memory code of
:mod:`bayeval.methods.pemi.fast`: the moments of
:func:`bayeval.confusion_moments.count_moments`, the probability that a metric is undefined
(:func:`~bayeval.methods.pemi.fast.undefined_probability`) and the normal mixture over the
nodes (:func:`~bayeval.methods.pemi.fast.normal_laws`,
:func:`~bayeval.methods.pemi.fast.closed_form`). ROC-AUC's exact moments come from sums over
score ranges (:func:`bayeval.partitions.auc_numerator_moments`).

With ``p=None`` the calibration map is fitted in memory as :func:`bayeval.methods.pemi.api.pemi`
fits it (same checks, same rows in the same order, :func:`~bayeval.methods.pemi.fast.
fit_calibration`) and applied to every partition.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval.confusion_moments import moments_of_counts, ratio_moments
from bayeval.deprecation import renamed_arguments
from bayeval.methods.pemi.api import (
    MNAR_SHIFT,
    PAPER_METRICS,
    as_calibration,
    as_metrics,
    as_reference,
    calibration_data,
)
from bayeval.methods.pemi.fast import (
    FittedCalibration,
    Rows,
    closed_form,
    delta_nodes,
    fit_calibration,
    normal_laws,
    roc_auc_moments,
    shift,
    undefined_probability,
)
from bayeval.metrics import REGISTRY
from bayeval.partitions import (
    RANGE_SAMPLE,
    add_tuples,
    dask_modules,
    partitions,
    range_edges,
    range_ratio_moments,
    range_sums_by_chunk,
    score_profile,
    tree_reduce,
)
from bayeval.validation import (
    as_beta,
    as_binary,
    as_choice,
    as_ci_prob,
    as_labels,
    as_mnar,
    as_probabilities,
    as_scores,
    as_zero_division,
    check_same_length,
)

__all__ = ["CALIBRATION_ROWS", "LabelSums", "pemi_gauss", "pemi_sums"]

CALIBRATION_ROWS = 10**7
"""At most this many labelled rows are gathered on the client to fit the calibration map
(9 bytes each)."""


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


def _shifts(nodes: np.ndarray) -> tuple:
    """PEMI's MNAR shifts of the log-odds at ``nodes``, as maps of the probabilities."""
    return tuple(functools.partial(shift, delta=d) for d in nodes)


def _block(y_pred: Any, p: Any, labels: Any, scores: Any = None, *, nodes: np.ndarray,
           calibration: FittedCalibration | None = None) -> LabelSums:
    """The :class:`LabelSums` of one partition."""
    if len(y_pred) == 0:
        return LabelSums(0, 0, 0, 0, 0, 0, *(np.zeros(nodes.size) for _ in range(6)))
    yp = as_binary(y_pred, "y_pred").astype(bool)
    y = as_labels(labels, "labels", allow_missing=True)
    s = None if scores is None else as_scores(scores, "scores")
    pp = calibration.predict(s) if p is None else as_probabilities(p, "p")
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


def _reduction(y_pred: Any, p: Any, labels: Any, scores: Any, nodes: np.ndarray,
               calibration: FittedCalibration | None) -> Any:
    """The delayed :class:`LabelSums`; ``p`` None: the calibration map on the scores."""
    if p is None and (scores is None or calibration is None):
        raise ValueError("p is None: give scores= and a calibration map (pemi_gauss fits one).")
    columns = {"y_pred": y_pred, "p": p, "labels": labels, "scores": scores}
    dask = dask_modules()[0]
    return tree_reduce([dask.delayed(_block)(**{"p": None, **block}, nodes=nodes,
                                             calibration=calibration)
                        for block in partitions(**columns)], add_tuples)


@renamed_arguments(calibrator="calibration")
def pemi_sums(y_pred: Any, p: Any, labels: Any, *, nodes: Any = (0.0,), scores: Any = None,
              calibration: Any = None) -> LabelSums:
    r""":class:`LabelSums` of partitioned rows, at the MNAR shifts ``nodes``.

    Parameters
    ----------
    y_pred : dask array, dask Series or array-like of 0/1
        Predictions.
    p : same, float in [0, 1], or None
        :math:`P(Y_i=1)` of the missing labels (ignored, but checked, on labelled rows); None:
        ``calibration`` applied to ``scores`` in each partition (clipped to [0, 1]).
    labels : same, 0, 1 or NaN
        NaN where the label is missing.
    nodes : sequence of float
        Shifts :math:`\delta_k` of the log-odds of the missing labels (0: MAR).
    scores : same, float in [0, 1], optional
        Raw scores, for ``calibration``.
    calibration : object with ``predict(scores)``, optional
        A fitted map (e.g. a :class:`bayeval.calibration.Calibrator`). ``calibrator=`` is a
        deprecated alias.

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
    fitted = None if calibration is None else FittedCalibration(calibration)
    return _reduction(y_pred, p, labels, scores, nodes, fitted).compute()


def _moments(s: LabelSums, k: int, metric: str, beta: float, zero_division: float,
             second_order: bool) -> tuple[float, float]:
    r"""Mean and variance of ``metric`` at node k
    (:func:`bayeval.confusion_moments.count_moments`):
    :math:`\mathbb E\,TP=TP_K+\sum_{\hat y=1}q`, :math:`\operatorname{Var}TP=\sum_{\hat y=1}
    q(1-q)`, likewise FN."""
    return moments_of_counts(metric, s.tp + s.fp + s.m1, s.fn + s.tn + s.m0,
                             s.tp + float(s.p1[k]), s.fn + float(s.p0[k]), float(s.v1[k]),
                             float(s.v0[k]), beta, zero_division, second_order)


def _undefined(s: LabelSums, k: int, metric: str, beta: float) -> float:
    """P(``metric`` undefined) at node k (:func:`bayeval.methods.pemi.fast.p_undefined`)."""
    return undefined_probability((s.tp, s.fp, s.fn, s.tn), s.m1, s.m0, np.exp(s.log0[k]),
                                 np.exp(s.log1[k]), metric, beta)


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


def _fitted(scores: Any, labels: Any, calibration: Any, reference: Any) -> FittedCalibration:
    """The calibration map of :func:`bayeval.methods.pemi.api.pemi`, fitted on ``reference``
    or on the labelled rows, gathered in row order (a first pass)."""
    calibration = as_calibration(calibration)
    reference = as_reference(reference)
    rows = None
    if reference is None:
        dask = dask_modules()[0]
        blocks = partitions(scores=scores, labels=labels)
        known = sum(dask.compute(*[dask.delayed(_known_count)(b["labels"]) for b in blocks]))
        if known > CALIBRATION_ROWS:
            raise ValueError(f"labels: {known} labelled rows to fit the calibration map on, more "
                             f"than CALIBRATION_ROWS ({CALIBRATION_ROWS}) gathered in memory; "
                             "pass reference=(scores, labels) with a sample of them, or p.")
        parts = dask.compute(*[dask.delayed(_known_rows)(**b) for b in blocks])
        s = np.concatenate([s for s, _ in parts])
        y = np.concatenate([y for _, y in parts])
        rows = Rows(s, np.zeros(s.size, np.int8), y)
    return fit_calibration(calibration, *calibration_data(rows, reference, needs_both=True))


@renamed_arguments(calibrator="calibration")
def pemi_gauss(y_pred: Any, p: Any, labels: Any, *, scores: Any = None,
               calibration: Any = "platt", reference: Any = None, metrics: Any = None,
               mnar: Any = None, ci_prob: float = 0.95, zero_division: float = 0.0,
               beta: float = 1.0, second_order: bool = True, ties: str = "half",
               score_ranges: int | None = None) -> xr.Dataset:
    r"""PEMI-Gauss (Algorithm 2) on partitioned rows, ROC-AUC included.

    Parameters
    ----------
    y_pred, labels
        As in :func:`pemi_sums`.
    p : dask array, dask Series or array-like of float in [0, 1], or None
        The imputation probabilities; None: ``calibration`` fitted on the labelled rows (or
        on ``reference``) and applied to ``scores`` in every partition, as
        :func:`bayeval.methods.pemi.api.pemi` does with ``calibration_uncertainty=False``:
        the result is conditional on the fitted map (its own error is not in the intervals).
    scores : same, float in [0, 1], optional
        Raw scores: the calibration map's input and ROC-AUC's ranking (needed for both).
    calibration : str or object with ``fit``/``predict``
        As in :func:`bayeval.methods.pemi.api.pemi`. Fitted in memory: the labelled rows are
        gathered on the client (a first pass; at most :data:`CALIBRATION_ROWS` of them).
        ``calibrator=`` is a deprecated alias.
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
        ROC-AUC's score ranges (:func:`bayeval.partitions.auc_numerator_moments`).

    Returns
    -------
    xr.Dataset
        The ``closed_form`` of ``pemi(scores, labels, p=p, method="gauss",
        calibration_uncertainty=False, ...)`` over
        ``metric`` (``mean``, ``sd``, ``lower``, ``upper``, ``interval_mass``,
        ``p_undefined``), to 1e-12, but for ``interval_mass``: ``ci_prob``, the normal's
        (in memory, the exact mass of the interval where it can be computed). Intervals are
        clipped to the metric's range.

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
    (:func:`bayeval.confusion_moments.metric_moments`). ROC-AUC's exact moments come from sums over
    score ranges (:func:`bayeval.partitions.auc_numerator_moments`), a known label counting as a
    probability 0 or 1, at every MNAR node in the same pass. The calibration map is fitted in
    memory exactly as :func:`bayeval.methods.pemi.api.pemi` fits it (same rows, same order), so
    the probabilities are the same.

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
    >>> mem = pemi(scores, labels, p=scores, metrics=["accuracy", "f1"],
    ...            method="gauss").closed_form
    >>> float(abs(ours["sd"] - mem["sd"]).max()) < 1e-12
    True

    The calibration map fitted on the labelled rows, and ROC-AUC:

    >>> with dask.config.set(scheduler="synchronous"):
    ...     ours = pemi_gauss(y_pred, None, labels, scores=da.from_array(scores, chunks=500))
    >>> import warnings
    >>> with warnings.catch_warnings():  # "conditional on the fitted calibration map"
    ...     warnings.simplefilter("ignore")
    ...     mem = pemi(scores, labels, method="gauss", calibration_uncertainty=False).closed_form
    >>> ours["metric"].values.tolist()
    ['precision', 'recall', 'accuracy', 'f1', 'roc_auc']
    >>> float(abs(ours["mean"] - mem["mean"]).max()) < 1e-12
    True
    """
    ci_prob, beta = as_ci_prob(ci_prob), as_beta(beta)
    zero_division = as_zero_division(zero_division)
    tie = 0.5 if as_choice(ties, "ties", ("half", "one")) == "half" else 1.0
    if metrics is None:
        metrics = PAPER_METRICS[: 5 if scores is not None else 4]
    else:
        metrics = as_metrics(metrics, "gauss")
    auc = "roc_auc" in metrics
    if scores is None and (auc or p is None):
        raise ValueError(f"scores is needed {'for roc_auc' if auc else 'with p=None'}: give "
                         "the raw scores (scores=), aligned with y_pred and labels.")
    fitted = _fitted(scores, labels, calibration, reference) if p is None else None
    nodes, weights = delta_nodes(as_mnar(mnar, MNAR_SHIFT))
    dask = dask_modules()[0]
    todo = [_reduction(y_pred, p, labels, scores, nodes, fitted)]
    if auc:
        blocks = partitions(scores=scores, labels=labels, p=p)
        profiles = dask.compute(*[dask.delayed(score_profile)(b["scores"], sample=RANGE_SAMPLE)
                                  for b in blocks])
        edges = range_edges(profiles, score_ranges)
        todo.append(range_sums_by_chunk(blocks, [{}] * len(blocks), edges, calibrator=fitted,
                                         tie=tie, transforms=_shifts(nodes)))
    sums, *ranges = dask.compute(*todo)

    def moments_at(metric: str, k: int) -> tuple[float, float]:
        if metric == "roc_auc":
            return roc_auc_moments(
                _undefined(sums, k, metric, beta),
                lambda: ratio_moments(range_ratio_moments(ranges[0][k], tie), second_order),
                zero_division)
        return _moments(sums, k, metric, beta, zero_division, second_order)

    normal, _ = normal_laws(metrics, weights, moments_at,
                            lambda metric, k: _undefined(sums, k, metric, beta), ci_prob)
    for metric, (mean, sd, lower, upper, undefined) in normal.items():  # inside the range
        low, high = REGISTRY[metric].low, REGISTRY[metric].high
        normal[metric] = (mean, sd, max(lower, low), min(upper, high), undefined)
    return closed_form(metrics, {}, normal, ci_prob=ci_prob, ci_kind="eti")
