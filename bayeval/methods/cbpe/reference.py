"""CBPE's reference period: the labelled rows that calibrate the scores and set the alerts.

The reference is split once into chunks (:class:`Reference`); those chunks give the alert
thresholds (their realized metrics, :func:`bayeval.methods.cbpe.api.alert_bounds`) and are
estimated as analysis chunks are, so that the results show the reference period before the
analysis, each chunk with its estimate and its realized metric (:func:`period_chunks`), as
NannyML's results keep ``period="reference"`` beside ``period="analysis"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayeval.calibration import (
    Calibrator,
    Identity,
    binned_error,
    cross_fitted,
    make_calibrator,
    select_calibrator,
)
from bayeval.chunks import Chunking, make_chunks, score_order
from bayeval.methods.cbpe.late_labels import add_realized, realized
from bayeval.validation import aligned, as_predictions, as_reference

__all__ = ["PERIODS", "Reference", "period_chunks", "reference_period"]

PERIODS = ("analysis", "reference", "all")
"""The values of ``period``: the analysis chunks (and the whole period), the reference chunks,
or both, the reference first (NannyML's ``filter(period=...)``)."""


def _reference_rows(reference: Any, threshold: float, chunks: Any) -> tuple[Any, ...]:
    """(scores, labels, y_pred) of the reference, with both classes, and its chunk keys, paired
    with its rows by index as its parts are (:func:`~bayeval.validation.aligned`)."""
    if chunks is not None and isinstance(reference, (tuple, list)):
        parts = dict(zip(("reference scores", "reference labels", "reference y_pred"),
                         reference, strict=False))
        chunks = aligned(**parts, reference_chunks=chunks, keys=("reference_chunks",))[-1]
    scores, labels, y_pred = as_reference(reference, with_y_pred=True, both_classes=True)
    y_pred = as_predictions(y_pred, scores, threshold, name="reference y_pred",
                            thresholded=True)
    return scores, labels, y_pred, chunks


def _calibrate(reference, order: np.ndarray, calibration, class_conditional: bool,
               threshold: float, random_seed) -> tuple[Calibrator, np.ndarray, xr.Dataset]:
    """The fitted calibrator, cross-fitted reference probabilities and a report of the errors.

    The cross-fitted (out-of-fold) probabilities estimate the calibration error honestly and
    give V2b's reference bins centres that were not fitted to their own labels. The built-in
    calibrators are fitted on the rows sorted by score (``order``, a stable argsort), which
    spares their own sorts; their fit does not depend on the rows' order.
    """
    scores, labels = reference
    ranked = scores[order], labels[order]
    split = threshold if class_conditional else None
    report = xr.Dataset({"ace_raw": binned_error(*ranked, 20)})
    if isinstance(calibration, Calibrator):
        cal = calibration if calibration.fitted else calibration.fit(scores, labels)
        oof = cal.predict(scores)
    elif calibration == "auto":
        cal, errors, oof = select_calibrator(scores, labels, threshold=split,
                                             random_seed=random_seed)
        report["heldout_error"] = ("calibrator", errors["heldout_error"].to_numpy())
        report = report.assign_coords(calibrator=list(errors.index))
    else:
        cal = make_calibrator(calibration, split).fit(*ranked)
        oof = cross_fitted(calibration, scores, labels, threshold=split,
                           random_seed=random_seed, order=order)
    report["ace_calibrated_heldout"] = binned_error(oof, labels, 20)
    return cal, oof, report


@dataclass(frozen=True, eq=False)
class Reference:
    """The labelled reference: rows, cross-fitted probabilities, chunks and realized metrics,
    and the rows' order by score (a stable argsort; None without calibration).

    Examples
    --------
    >>> from bayeval import datasets
    >>> ref = datasets.calibrated_scores(400, random_seed=0)
    >>> reference, cal, data = reference_period((ref.scores, ref.labels), 0.5, "none", True,
    ...                                         0, None, 100, (["accuracy"], 0.0, 1.0), [], None)
    >>> reference.chunking.labels[:2], reference.realized.round(2).ravel().tolist()
    (('[0:99]', '[100:199]'), [0.61, 0.69, 0.7, 0.72])
    """

    scores: np.ndarray
    labels: np.ndarray
    y_pred: np.ndarray
    p: np.ndarray
    chunking: Chunking
    realized: np.ndarray
    order: np.ndarray | None = None


def reference_period(reference, threshold, calibration, class_conditional, random_seed,
                     reference_chunks, size, metric_args, notes, alert_thresholds,
                     chunk_period=None) -> tuple[Reference, Calibrator, xr.Dataset]:
    """Validate the reference, calibrate on it and compute its chunks' realized metrics.

    Returns the :class:`Reference`, the fitted calibrator and the calibration report (appending
    to ``notes`` when the reference has too few chunks of ``size`` rows for thresholds). Given
    ``reference_chunks``, they are the chunk keys (timestamps grouped by ``chunk_period``).

    Examples
    --------
    400 labelled rows in chunks of 100, the scores taken as calibrated:

    >>> from bayeval import datasets
    >>> ref = datasets.calibrated_scores(400, random_seed=0)
    >>> notes = []
    >>> reference, cal, data = reference_period((ref.scores, ref.labels), 0.5, "none", True,
    ...                                         0, None, 100, (["accuracy"], 0.0, 1.0), notes,
    ...                                         None)
    >>> cal.name, list(data.data_vars), int(data["reference_chunks"]), notes
    ('none', ['ace_raw', 'reference_chunks', 'reference_realized'], 4, [])
    >>> reference.realized.shape  # chunk x metric: what the alert thresholds are made of
    (4, 1)
    """
    scores, labels, y_pred, reference_chunks = _reference_rows(reference, threshold,
                                                               reference_chunks)
    order = None
    if calibration == "none":
        cal, p = Identity().fit(scores, labels), scores
        data = xr.Dataset({"ace_raw": binned_error(scores, labels, 20)})
    else:
        order = score_order(scores)
        cal, p, data = _calibrate((scores, labels), order, calibration, class_conditional,
                                  threshold, random_seed)
    # near-equal chunks of about ``size`` rows: no short tail chunk, whose realized metrics
    # (e.g. a precision of 0 or 1 over two rows) would widen the thresholds to nothing
    chunking = (make_chunks(scores.size, chunks=reference_chunks, chunk_period=chunk_period)
                if reference_chunks is not None else
                make_chunks(scores.size, n_chunks=max(1, round(scores.size / size))))
    realized_ref, _ = realized(labels.astype(float), y_pred, scores, chunking, *metric_args,
                               whole=False, order=order)
    data["reference_chunks"] = len(chunking.labels)
    data["reference_realized"] = xr.DataArray(
        realized_ref, dims=("reference_chunk", "metric"),
        coords={"reference_chunk": list(chunking.labels), "metric": list(metric_args[0])})
    if len(chunking.labels) < 2 and not alert_thresholds:
        notes.append(f"alert thresholds need at least 2 reference chunks of {size} rows; the "
                     f"reference has {scores.size} rows. Give reference_chunks= or "
                     "alert_thresholds=.")
    return Reference(scores, labels, y_pred, p, chunking, realized_ref, order), cal, data



def period_chunks(closed: xr.Dataset, realized_values: np.ndarray) -> xr.Dataset:
    """The reference chunks' closed form: ``closed`` (the reference's chunks estimated as
    analysis chunks are, without a whole period) without the PMFs, with their realized metrics
    (``realized_values``, chunk x metric: those that gave the thresholds,
    :attr:`Reference.realized`), their alerts and the coordinate ``period`` (``"reference"``)
    along ``chunk``.

    Examples
    --------
    >>> closed = xr.Dataset({"lower_threshold": (("chunk", "metric"), [[0.7], [0.7]]),
    ...                      "upper_threshold": (("chunk", "metric"), [[0.9], [0.9]]),
    ...                      "n": ("chunk", [100, 100])},
    ...                     coords={"chunk": ["[0:99]", "[100:199]"], "metric": ["accuracy"]})
    >>> ds = period_chunks(closed, np.array([[0.8], [0.65]]))
    >>> ds["period"].values.tolist(), ds["alert_realized"].values.ravel().tolist()
    (['reference', 'reference'], [False, True])
    """
    chunks = closed.drop_dims("support", errors="ignore")
    add_realized(chunks, realized_values, chunks["n"].values)
    return chunks.assign_coords(period=("chunk", ["reference"] * chunks.sizes["chunk"]))
