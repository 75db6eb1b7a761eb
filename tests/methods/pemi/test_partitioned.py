"""PEMI-Gauss on dask partitions (a LocalCluster of 2 worker processes) equals the in-memory
closed form to 1e-12: given p, the calibration map fitted on the labelled rows or on reference
data, MNAR shifts, ROC-AUC, empty partitions, and the same errors."""

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask.array as da
import dask.dataframe as dd

from bayeval import scale
from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.mixture import MASS_TOL
from bayeval.methods.pemi.partitioned import pemi_gauss, pemi_sums
from tests import partitioned_checks
from tests.partitioned_checks import tied_scores

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
SEED = 20261010


def assert_same(a, b):
    """PEMI-Gauss results hold normal laws only (no PMF), equal to the in-memory ones; the
    interval's mass is the normal's (``ci_prob``) where the in-memory path gives the exact one,
    within its tolerance of ``ci_prob`` (PEMI-Gauss is not poor on these data)."""
    assert "pmf_prob" not in b
    partitioned_checks.assert_same(a.drop_vars("interval_mass"), b.drop_vars("interval_mass"))
    assert (b["interval_mass"] == 0.95).all()
    assert (abs(a["interval_mass"] - 0.95) <= MASS_TOL).all()


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def test_scale_serves_the_partitioned_path():
    assert (scale.pemi_gauss, scale.pemi_sums) == (pemi_gauss, pemi_sums)


@pytest.mark.parametrize("mnar", [None, 0.7, (0.3, 0.5)])
def test_pemi_gauss_sums_equal_in_memory(client, rng, mnar):
    n = 30_000
    scores = rng.beta(2, 3, n)
    labels = (rng.random(n) < scores).astype(float)
    labels[rng.random(n) < 0.7] = np.nan
    metrics = ["precision", "recall", "accuracy", "f1", "mcc", "balanced_accuracy"]
    mem = pemi(scores, labels, p=scores, mnar=mnar, metrics=metrics, method="gauss").closed_form
    chunked = (da.from_array(x, chunks=4_000) for x in ((scores >= 0.5).astype(int), scores,
                                                         labels))
    assert_same(mem, scale.pemi_gauss(*chunked, mnar=mnar, metrics=metrics))


@pytest.mark.parametrize(("calibration", "mnar"), [("scaling_binning", None),
                                                    ("isotonic", (0.3, 0.5)), ("platt", 0.7)])
def test_pemi_gauss_fits_the_calibration_and_roc_auc_as_in_memory(client, rng, calibration,
                                                                   mnar):
    n = 12_000
    frame = pd.DataFrame({"score": tied_scores(rng, n)})
    frame["label"] = np.where(rng.random(n) < 0.7, np.nan,
                              (rng.random(n) < frame["score"] ** 1.4).astype(float))
    frame["y_pred"] = (frame["score"] >= 0.5).astype(int)
    lazy = dd.from_pandas(frame, npartitions=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mem = pemi(frame["score"], frame["label"], calibration=calibration, mnar=mnar,
                   method="gauss", calibration_uncertainty=False)
    ours = scale.pemi_gauss(lazy["y_pred"], None, lazy["label"], scores=lazy["score"],
                            calibration=calibration, mnar=mnar, score_ranges=6)
    assert list(ours["metric"].values) == ["precision", "recall", "accuracy", "f1", "roc_auc"]
    assert_same(mem.closed_form, ours)


def test_pemi_gauss_with_reference_or_p_and_errors(client, rng):
    n = 5_000
    scores = tied_scores(rng, n)
    labels = np.where(rng.random(n) < 0.5, np.nan, (rng.random(n) < scores).astype(float))
    y_pred = da.from_array((scores >= 0.5).astype(int), chunks=1_200)
    lazy = (da.from_array(x, chunks=1_200) for x in (scores, labels))
    s, y = next(lazy), next(lazy)
    reference = (rng.random(400), (rng.random(400) < 0.4).astype(int))
    with pytest.warns(UserWarning, match="conditional on the fitted calibration map"):
        mem = pemi(scores, labels, reference=reference, calibration="platt", method="gauss",
                   calibration_uncertainty=False).closed_form
    assert_same(mem, scale.pemi_gauss(y_pred, None, y, scores=s, reference=reference,
                                      calibration="platt"))
    with pytest.warns(FutureWarning, match=r"pemi_gauss\(calibrator=\)"):
        old = scale.pemi_gauss(y_pred, None, y, scores=s, reference=reference,
                               calibrator="platt")
    assert_same(mem, old)
    metrics = ["roc_auc", "npv"]  # given p, ties counted 1
    mem = pemi(scores, labels, p=scores**2, metrics=metrics, ties="one",
               method="gauss").closed_form
    assert_same(mem, scale.pemi_gauss(y_pred, s**2, y, scores=s, metrics=metrics, ties="one"))
    with pytest.raises(ValueError, match="scores is needed for roc_auc"):
        scale.pemi_gauss(y_pred, s, y, metrics=["roc_auc"])
    with pytest.raises(ValueError, match="scores is needed with p=None"):
        scale.pemi_gauss(y_pred, None, y)
    with pytest.raises(ValueError, match="no known value"):
        scale.pemi_gauss(y_pred, None, da.full(n, np.nan, chunks=1_200), scores=s)
    with pytest.raises(ValueError, match="only class 1"):
        scale.pemi_gauss(y_pred, None, da.where(da.isnan(y), y, 1.0), scores=s)
    with pytest.raises(ValueError, match="calibration must be one of"):
        scale.pemi_gauss(y_pred, None, y, scores=s, calibration="magic")


def test_empty_partitions_add_nothing(client, rng):
    n = 1_200
    frame = pd.DataFrame({"score": rng.beta(2, 3, n), "y_pred": rng.integers(0, 2, n),
                          "day": np.repeat(["mon", "tue", "wed", "thu"], n // 4)})
    frame["label"] = np.where(rng.random(n) < 0.5, np.nan, frame["y_pred"])
    lazy = dd.from_pandas(frame, npartitions=6)
    kept, lazy = frame[frame["day"].isin(["mon", "thu"])], lazy[lazy["day"].isin(["mon", "thu"])]
    assert (lazy.map_partitions(len).compute() == 0).sum() == 2  # tue and wed only
    sums = scale.pemi_sums(lazy["y_pred"], lazy["score"], lazy["label"])
    assert (sums.m1 + sums.m0, sums.tp + sums.fp) == (kept["label"].isna().sum(),
                                                      (kept["label"].notna()
                                                       & (kept["y_pred"] == 1)).sum())
    mem = pemi(kept["score"], kept["label"], y_pred=kept["y_pred"], p=kept["score"],
               metrics=["accuracy", "f1"], method="gauss").closed_form
    assert_same(mem, scale.pemi_gauss(lazy["y_pred"], lazy["score"], lazy["label"],
                                      metrics=["accuracy", "f1"]))
