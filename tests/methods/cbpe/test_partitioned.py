"""CBPE's fast path on dask partitions (a LocalCluster of 2 worker processes) equals the
in-memory one to 1e-12: chunks by key and contiguous, a calibrator, the exact PMFs, ROC-AUC,
realized metrics and alerts, empty partitions, and the same errors."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask.array as da
import dask.dataframe as dd

from bayeval import scale
from bayeval.calibration import Platt
from bayeval.methods.cbpe import partitioned
from bayeval.methods.cbpe.api import cbpe
from tests.partitioned_checks import assert_same, tied_scores

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
SEED = 20261010


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def test_scale_serves_the_partitioned_path():
    assert scale.cbpe is partitioned.cbpe


@pytest.mark.parametrize("metrics", [["accuracy", "precision", "npv", "recall"],
                                     ["f1", "mcc", "balanced_accuracy", "specificity"]])
def test_cbpe_by_key_equals_in_memory(client, rng, metrics):
    n = 1_200  # small enough for the closed form to keep every PMF
    frame = pd.DataFrame({"score": rng.beta(2, 3, n),
                          "day": np.repeat(["mon", "tue", "wed", "thu"], n // 4)})
    lazy = dd.from_pandas(frame, npartitions=5)  # chunks straddle partitions
    ev = scale.cbpe(lazy["score"], chunks=lazy["day"], metrics=metrics)
    mem = cbpe(frame["score"], chunks=frame["day"], calibration="none", metrics=metrics)
    assert "pmf_prob" in mem.closed_form  # the exact PMFs too
    assert_same(mem.closed_form, ev.closed_form)
    assert ev.summary().index.equals(mem.summary().index)


def test_empty_partitions_add_nothing(client, rng):
    n = 1_200
    frame = pd.DataFrame({"score": rng.beta(2, 3, n), "judge": rng.integers(0, 2, n),
                          "day": np.repeat(["mon", "tue", "wed", "thu"], n // 4)})
    frame["label"] = np.where(rng.random(n) < 0.5, np.nan, frame["judge"])
    lazy = dd.from_pandas(frame, npartitions=6)
    kept, lazy = frame[frame["day"].isin(["mon", "thu"])], lazy[lazy["day"].isin(["mon", "thu"])]
    assert (lazy.map_partitions(len).compute() == 0).sum() == 2  # tue and wed only
    mem = cbpe(kept["score"], chunks=kept["day"], labels=kept["label"], calibration="none",
               metrics=["f1", "roc_auc"])
    assert_same(mem.closed_form, scale.cbpe(lazy["score"], chunks=lazy["day"],
                                            labels=lazy["label"], metrics=["f1", "roc_auc"],
                                            score_ranges=3).closed_form)


def test_cbpe_contiguous_chunks_and_calibrator_equal_in_memory(client, rng):
    ref_scores = rng.beta(2, 3, 3_000)
    ref_labels = (rng.random(3_000) < ref_scores**1.3).astype(int)
    cal = Platt().fit(ref_scores, ref_labels)
    scores = rng.beta(2, 3, 20_000)
    ev = scale.cbpe(da.from_array(scores, chunks=3_500), n_chunks=7, calibration=cal,
                    metrics=["accuracy", "f1"], ci_kind="hdi")
    mem = cbpe(scores, n_chunks=7, reference=(ref_scores, ref_labels), calibration=cal,
               metrics=["accuracy", "f1"], ci_kind="hdi")
    assert list(ev.closed_form["chunk"].values) == list(mem.closed_form["chunk"].values)
    fast = ["mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin", "n"]
    assert_same(mem.closed_form[fast], ev.closed_form[fast])
    assert ev.meta["calibration"] == "platt"


@pytest.mark.parametrize("score_ranges", [None, 9])
def test_cbpe_roc_auc_by_key_equals_in_memory(client, rng, score_ranges):
    n = 9_000
    frame = pd.DataFrame({"score": tied_scores(rng, n),
                          "day": np.repeat(["mon", "tue", "wed"], n // 3)})
    lazy = dd.from_pandas(frame, npartitions=5)  # chunks straddle partitions
    metrics = ["roc_auc", "accuracy"]
    ev = scale.cbpe(lazy["score"], chunks=lazy["day"], metrics=metrics,
                    score_ranges=score_ranges)
    mem = cbpe(frame["score"], chunks=frame["day"], calibration="none", metrics=metrics)
    assert_same(mem.closed_form, ev.closed_form)
    assert mem.closed_form["mean"].sel(metric="roc_auc").notnull().all()
    assert ev.warnings == mem.warnings


def test_cbpe_defaults_to_every_metric_as_in_memory(client, rng):
    scores = rng.beta(2, 3, 2_000)
    ev = scale.cbpe(da.from_array(scores, chunks=600), chunk_size=700)
    mem = cbpe(scores, chunk_size=700)
    assert list(ev.closed_form["metric"].values) == list(mem.closed_form["metric"].values)
    assert "roc_auc" in ev.closed_form["metric"].values
    assert_same(mem.closed_form, ev.closed_form)


def partly_labelled(rng, scores, chunk_of_row):
    """Labels drawn from the scores, 70 % missing; chunk 0 unlabelled, chunk 1 labelled with
    one class only (its ROC-AUC is zero_division), the rest partly labelled."""
    labels = (rng.random(scores.size) < scores).astype(float)
    labels[rng.random(scores.size) < 0.7] = np.nan
    labels[chunk_of_row == 0] = np.nan
    one = chunk_of_row == 1
    labels[one] = np.where(np.isnan(labels[one]), np.nan, 1.0)
    return labels


@pytest.mark.parametrize("calibration", ["auto", "isotonic"])
def test_cbpe_realized_and_alerts_equal_in_memory(client, rng, calibration):
    n, n_ref = 8_000, 3_000
    ref_scores = tied_scores(rng, n_ref)
    ref_labels = (rng.random(n_ref) < ref_scores**1.3).astype(int)
    scores = tied_scores(rng, n)
    scores[5_000:6_000] = rng.beta(5, 2, 1_000).round(2)  # a drifted chunk: alerts
    labels = partly_labelled(rng, scores, np.arange(n) // 1_000)
    common = dict(reference=(ref_scores, ref_labels), chunk_size=1_000, calibration=calibration,
                  random_seed=3, zero_division=np.nan)
    ev = scale.cbpe(da.from_array(scores, chunks=1_300), labels=da.from_array(labels, 1_300),
                    **common)
    mem = cbpe(scores, labels=labels, **common)
    closed = mem.closed_form
    assert {"realized", "alert_realized", "n_labelled", "p_alert"} <= set(ev.closed_form)
    assert_same(closed, ev.closed_form)
    assert ev.warnings == mem.warnings
    assert ev.meta["calibration"] == mem.meta["calibration"]
    assert_same(mem.tree["data"].to_dataset(), ev.tree["data"].to_dataset().drop_vars("chunk"))
    # the cases the comparison covers
    assert closed["alert"].sel(chunk="[5000:5999]").any()
    assert closed["alert_realized"].any()
    assert closed["realized"].sel(chunk="[0:999]").isnull().all()
    assert np.isnan(closed["realized"].sel(chunk="[1000:1999]", metric="roc_auc"))
    assert closed["n_labelled"].sel(chunk="[0:999]") == 0


def test_cbpe_realized_by_key_with_constant_thresholds(client, rng):
    n = 6_000
    frame = pd.DataFrame({"score": tied_scores(rng, n), "day": np.tile(["b", "a", "c"], n // 3)})
    frame["label"] = partly_labelled(rng, frame["score"].to_numpy(),
                                     pd.factorize(frame["day"])[0])
    lazy = dd.from_pandas(frame, npartitions=4)
    thresholds = {"roc_auc": (0.7, None), "f1": (0.5, 0.9)}
    metrics = ["roc_auc", "f1", "npv"]
    ev = scale.cbpe(lazy["score"], chunks=lazy["day"], labels=lazy["label"], metrics=metrics,
                    alert_thresholds=thresholds)
    mem = cbpe(frame["score"], chunks=frame["day"], labels=frame["label"], metrics=metrics,
               alert_thresholds=thresholds)
    assert_same(mem.closed_form, ev.closed_form)
    assert mem.closed_form["realized"].sel(chunk="a", metric="roc_auc") == 0.0  # zero_division


def test_cbpe_calibration_errors(rng):
    scores = rng.random(100)
    with pytest.raises(ValueError, match="needs reference"):
        scale.cbpe(scores, calibration="isotonic", metrics=["f1"])
    with pytest.raises(ValueError, match="not fitted"):
        scale.cbpe(scores, calibration=Platt(), metrics=["f1"])
    with pytest.raises(ValueError, match="labels must be 0, 1 or NaN"):
        scale.cbpe(scores, labels=np.full(100, 2.0), metrics=["f1"])
    with pytest.raises(ValueError, match="score_ranges must be a positive integer"):
        scale.cbpe(scores, score_ranges=0)
