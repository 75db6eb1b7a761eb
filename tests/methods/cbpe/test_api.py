"""CBPE's entry function: NannyML's point estimates, the fast paths checked against PyMC,
chunking, calibration, alerts, realized metrics, output and bad input."""

import arviz as az
import numpy as np
import pytest
import xarray as xr
from scipy import special
from threadpoolctl import threadpool_limits

from bayeval import datasets
from bayeval.calibration import Platt
from bayeval.evaluation import Evaluation, load
from bayeval.methods.cbpe.api import cbpe


@pytest.fixture(autouse=True)
def one_blas_thread():
    """OpenBLAS threads oversubscribe a loaded 2-core machine (a 1e5 dot: 25 ms, not 0.1)."""
    with threadpool_limits(1, "blas"):
        yield


@pytest.fixture(scope="module")
def window():
    rng = np.random.default_rng(7)
    s = rng.beta(2, 2, 300)
    return s, (s >= 0.5).astype(np.int8)


@pytest.fixture(scope="module")
def reference():
    return datasets.calibrated_scores(4000, random_seed=11)


# ------------------------------------------------------------------------- point estimates


def test_point_estimates_are_nannymls(window):
    s, y_pred = window
    ev = cbpe(s, metrics=["accuracy", "precision", "recall", "f1", "roc_auc"])
    plugin = ev.closed_form["plugin"].sel(chunk="all").to_series()
    pos, neg = s[y_pred == 1], s[y_pred == 0]
    assert plugin["accuracy"] == pytest.approx((pos.sum() + (1 - neg).sum()) / 300,
                                                          abs=1e-14)
    assert plugin["precision"] == pytest.approx(pos.mean(), abs=1e-14)
    assert plugin["recall"] == pytest.approx(pos.sum() / s.sum(), abs=1e-14)
    assert plugin["f1"] == pytest.approx(2 * pos.sum() / (s.sum() + pos.size),
                                                    abs=1e-14)
    # ROC-AUC: the area under the ROC curve of the expected counts (no ties here)
    order = np.argsort(-s)
    tpr = np.r_[0, np.cumsum(s[order])] / s.sum()
    fpr = np.r_[0, np.cumsum(1 - s[order])] / (1 - s).sum()
    area = np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2)
    assert plugin["roc_auc"] == pytest.approx(area, abs=1e-12)
    # the exact expectations of accuracy and precision are the same numbers
    mean = ev.closed_form["mean"].sel(chunk="all").to_series()
    for metric in ("accuracy", "precision"):
        assert mean[metric] == pytest.approx(plugin[metric], abs=1e-12)


# ----------------------------------------------------------------- fast paths against PyMC


@pytest.fixture(scope="module")
def small():
    return datasets.calibrated_scores(240, random_seed=12)


def test_v0_check_passes_and_a_wrong_fast_path_fails(small):
    with threadpool_limits(1, "blas"):
        ev = cbpe(small.scores, n_chunks=2, metrics=["accuracy", "recall", "f1", "mcc"],
                  method="both", draws=4000, random_seed=3)
    result = ev.check()
    assert result.attrs["passed"], result[~result["passed"]]
    assert set(result.index.get_level_values("test")) == {"mean", "variance_ratio", "ks",
                                                          "interval_mass"}
    assert ev.meta["iid_draws"] and "value" in ev.tree["prior"]
    wrong = ev.closed_form.copy()
    shifted = (wrong["chunk"] == "[0:119]") & (wrong["metric"] == "recall")
    wrong["mean"] = wrong["mean"] + xr.where(shifted, 0.01, 0.0)
    groups = {k: v.to_dataset() for k, v in ev.tree.children.items()}
    groups["closed_form"] = wrong
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = ev.tree.attrs
    failed = Evaluation(tree).check()
    assert failed[~failed["passed"]].index.tolist() == [("[0:119]", "recall", "mean")]


def test_v0_roc_auc_moments_agree_with_simulated_labels(small):
    with threadpool_limits(1, "blas"):
        ev = cbpe(small.scores, metrics=["roc_auc", "f1"], method="both", random_seed=4)
    result = ev.check()
    assert result.attrs["passed"], result
    tests = result.index.droplevel("chunk").unique().tolist()  # no PMF, no KS, for ROC-AUC
    assert ("roc_auc", "ks") not in tests and ("f1", "ks") in tests


def test_v2_check_passes(small, reference):
    with threadpool_limits(1, "blas"):
        ev = cbpe(small.scores, reference=(reference.scores, reference.labels), n_chunks=2,
                  calibration="none", noise="beta", kappa=20.0, n_bins=4,
                  metrics=["accuracy", "precision", "recall", "f1"], method="both",
                  random_seed=5)
    result = ev.check()
    assert result.attrs["passed"], result[~result["passed"]]
    assert "ks" in set(result.index.get_level_values("test"))


@pytest.fixture(scope="module")
def v2b(small, reference):
    with threadpool_limits(1, "blas"):
        return cbpe(small.scores, reference=(reference.scores, reference.labels), n_chunks=2,
                    reference_chunks=np.repeat(np.arange(8), 500), calibration="none",
                    noise="learned", n_bins=5, metrics=["accuracy", "recall", "f1"],
                    method="both", random_seed=6)


def test_v2b_check_diagnostics_and_kappa_grid(v2b):
    result = v2b.check()
    assert result.attrs["passed"], result[~result["passed"]]
    assert not v2b.meta["iid_draws"]
    assert v2b.diagnostics().attrs["ok"]
    # the grid posterior of log kappa against NUTS: mean and quantiles within 4 sd / sqrt(ESS)
    draws = v2b.tree["posterior"]["log_kappa"]
    ess = float(az.ess(draws))
    x, w = v2b.tree["data"]["log_kappa_grid"].values, v2b.tree["data"]["kappa_weight"].values
    tol = 4 * float(draws.std()) / np.sqrt(ess)
    assert abs(float(draws.mean()) - x @ w) <= tol
    cdf = np.cumsum(w)
    for q in (0.05, 0.5, 0.95):
        grid_q = np.interp(q, cdf - w / 2, x)  # midpoint rule on the grid
        assert abs(float(draws.quantile(q)) - grid_q) <= tol


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_v2b_default_nuts_settings_pass_the_diagnostics(seed):
    """An over-confident model, 500 reference rows: target_accept=0.99 with 2 x 1000 draws gave
    R-hat 1.0115 and bulk ESS 327 at seed 1."""
    rng = np.random.default_rng(seed)
    p_ref = rng.beta(2, 4, 500)
    y_ref = rng.random(500) < p_ref
    s_ref, s = (special.expit(2.5 * special.logit(p) + 0.8) for p in (p_ref, rng.beta(2, 4, 5000)))
    with threadpool_limits(1, "blas"):
        ev = cbpe(s, reference=(s_ref, y_ref), n_chunks=5, noise="learned", method="pymc",
                  metrics=["accuracy"], random_seed=seed)
    assert ev.diagnostics().attrs["ok"], ev.diagnostics()


def test_v2b_prior_sensitivity(v2b):
    s = v2b.sensitivity()
    assert {"log_kappa", "kappa"} <= set(s.index)
    assert list(s.columns) == ["prior", "likelihood", "diagnosis"]


@pytest.fixture(scope="module")
def binning(small, reference):
    with threadpool_limits(1, "blas"):
        return cbpe(small.scores, reference=(reference.scores, reference.labels), n_chunks=2,
                    calibration="none", noise="binning", n_bins=5,
                    metrics=["accuracy", "recall", "f1"], method="both", random_seed=6)


def test_binning_check_diagnostics_and_sensitivity(binning):
    result = binning.check()
    assert result.attrs["passed"], result[~result["passed"]]
    assert binning.diagnostics().attrs["ok"]
    assert {"log_kappa", "kappa"} <= set(binning.sensitivity().index)
    # the reference's bins are pooled: 10 cells (5 bins per predicted class), not 10 per chunk
    assert binning.tree["observed_data"]["k"].size == 10


# ------------------------------------------------------------------- chunks, alerts, output


def test_chunks_keys_order_and_summary_levels():
    s = np.array([0.2, 0.7, 0.4, 0.9, 0.6, 0.1])
    ev = cbpe(s, chunks=["b", "a", "b", "c", "a", "c"], metrics=["accuracy"])
    summary = ev.summary()
    assert summary.index.names == ["chunk", "metric"]
    assert list(summary.index.get_level_values("chunk")) == ["b", "a", "c", "all"]
    np.testing.assert_array_equal(ev.closed_form["n"], [2, 2, 2, 6])
    acc = summary.loc[("b", "accuracy"), "mean"]
    assert acc == pytest.approx((0.8 + 0.6) / 2, abs=1e-14)
    by_size = cbpe(s, chunk_size=4, metrics=["accuracy"]).summary()
    assert list(by_size.index.get_level_values("chunk")) == ["[0:3]", "[4:5]", "all"]


def test_realized_thresholds_and_alerts(reference):
    rng = np.random.default_rng(13)
    good = rng.beta(2, 2, 1000)
    drift = rng.beta(0.3, 0.3, 500)  # more confident scores: accuracy jumps
    scores = np.r_[good, drift]
    labels = (rng.random(scores.size) < scores).astype(float)
    labels[:250] = np.nan  # labels arrive late: the first chunk has none
    ev = cbpe(scores, reference=(reference.scores, reference.labels), labels=labels,
              chunk_size=250, calibration="none", metrics=["accuracy", "recall"],
              alert_thresholds={"recall": (0.5, None)})
    cf = ev.closed_form
    # thresholds: mean +- 3 sd (ddof 0) of the realized accuracy of 16 reference chunks of 250
    ref_pred = (reference.scores >= 0.5).astype(int)
    acc = [np.mean(reference.labels[i:i + 250] == ref_pred[i:i + 250])
           for i in range(0, 4000, 250)]
    lower = float(cf["lower_threshold"].sel(chunk="[0:249]", metric="accuracy"))
    assert lower == pytest.approx(np.mean(acc) - 3 * np.std(acc), abs=1e-12)
    assert cf["upper_threshold"].sel(chunk="[0:249]", metric="recall") == np.inf
    assert cf["lower_threshold"].sel(chunk="[0:249]", metric="recall") == 0.5
    alerts = cf["alert"].sel(metric="accuracy").values
    np.testing.assert_array_equal(alerts, [False] * 4 + [True] * 2 + [False])
    assert np.isnan(cf["realized"].sel(chunk="[0:249]")).all()
    np.testing.assert_array_equal(cf["n_labelled"], [0, 250, 250, 250, 250, 250, 1250])
    rows = slice(1000, 1250)
    expected = np.mean(labels[rows] == (scores[rows] >= 0.5))
    assert cf["realized"].sel(chunk="[1000:1249]", metric="accuracy") == expected
    assert cf["alert_realized"].sel(chunk="[1000:1249]", metric="accuracy")
    # p_alert: the law's mass outside the thresholds
    p = cf["p_alert"].sel(chunk="[1000:1249]", metric="accuracy")
    assert float(p) > 0.99


def test_realized_metrics_without_fast_path_go_with_the_data(reference):
    """method="pymc" alone keeps the analysis labels: realized metrics, alerts and thresholds
    are the same as beside the fast path, in the data group."""
    rng = np.random.default_rng(14)
    scores = rng.beta(2, 2, 600)
    labels = (rng.random(scores.size) < scores).astype(float)
    labels[::3] = np.nan
    kwargs = dict(reference=(reference.scores, reference.labels), labels=labels, chunk_size=200,
                  calibration="none", metrics=["accuracy", "f1"], random_seed=1)
    exact = cbpe(scores, **kwargs).closed_form
    ev = cbpe(scores, method="pymc", draws=200, **kwargs)
    assert ev.closed_form is None
    data = ev.tree["data"].to_dataset()
    for var in ("realized", "alert_realized", "n_labelled", "lower_threshold", "upper_threshold"):
        xr.testing.assert_identical(data[var], exact[var])


def test_calibration_auto_corrects_miscalibrated_scores():
    rng = np.random.default_rng(14)
    n = 20_000
    truth_ref, truth = rng.beta(2, 2, n), rng.beta(2, 2, n)
    y_ref = (rng.random(n) < truth_ref).astype(int)
    y = (rng.random(n) < truth).astype(float)
    reported_ref, reported = truth_ref**0.5, truth**0.5  # overconfident positive scores
    kwargs = dict(reference=(reported_ref, y_ref), labels=y, metrics=["accuracy", "precision"],
                  threshold=0.5**0.5, random_seed=0)
    auto = cbpe(reported, **kwargs)
    raw = cbpe(reported, calibration="none", **kwargs).closed_form.sel(chunk="all")
    assert auto.meta["calibration"] != "none"
    cf = auto.closed_form.sel(chunk="all")
    # the estimate errs by the label noise (sd) and the calibrator's own error (a reference
    # mean: sd at most 0.5 / sqrt(n))
    tol = 4 * np.hypot(cf["sd"], 0.5 / np.sqrt(n))
    assert (abs(cf["mean"] - cf["realized"]) <= tol).all()
    assert (abs(raw["mean"] - raw["realized"]) > tol).all()


def test_a_fitted_calibrator_applies_without_reference(reference):
    cal = Platt().fit(reference.scores, reference.labels)
    scores = reference.scores[:600] ** 1.2
    alone = cbpe(scores, calibration=cal, n_chunks=2, metrics=["accuracy", "f1"])
    with_ref = cbpe(scores, reference=(reference.scores, reference.labels), calibration=cal,
                    n_chunks=2, metrics=["accuracy", "f1"])
    fast = ["mean", "sd", "lower", "upper", "plugin"]
    xr.testing.assert_identical(alone.closed_form[fast], with_ref.closed_form[fast])
    assert alone.meta["calibration"] == "platt"
    assert alone.warnings == with_ref.warnings == [
        "the calibration map was given fitted: the intervals are conditional on it (its own "
        "error is not in them)."]


def test_single_class_chunk_has_a_defined_result():
    s = np.r_[np.zeros(5), np.full(5, 0.8)]  # chunk 1: all predicted negative, all p = 0
    ev = cbpe(s, n_chunks=2, metrics=["precision", "recall", "f1", "mcc", "roc_auc"])
    cf = ev.closed_form.sel(chunk="[0:4]")
    assert not np.isnan(cf[["mean", "sd", "lower", "upper"]].to_array()).any()
    np.testing.assert_array_equal(cf["p_undefined"], [1.0, 1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(cf["mean"], [0.0, 0.0, 0.0, 0.0, 0.0])
    nan = cbpe(s, n_chunks=2, metrics=["recall"], zero_division=np.nan).closed_form
    assert np.isnan(nan["mean"].sel(chunk="[0:4]", metric="recall"))
    assert nan["p_undefined"].sel(chunk="[0:4]", metric="recall") == 1.0


def test_round_trip_through_netcdf(tmp_path, reference):
    ev = cbpe(reference.scores[:500], reference=(reference.scores, reference.labels),
              n_chunks=2, metrics=["accuracy", "f1"], random_seed=1)
    back = load(ev.to_netcdf(tmp_path / "cbpe.nc"))
    assert back.equals(ev)
    assert back.summary().equals(ev.summary())


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(scores=[0.2, 1.3]), r"scores must lie in \[0, 1\]"),
    (dict(scores=[0.2, np.nan]), "scores has 1 NaN"),
    (dict(scores=[]), "scores is empty"),
    (dict(scores=[0.2, 0.8], reference=([0.2, 0.3], [0, 0])),
     "reference labels hold only class 0"),
    (dict(scores=[0.2, 0.8], reference=([0.2, 0.3], ["a", "b"])), "reference labels must"),
    (dict(scores=[0.2, 0.8], labels=["no", "yes"]), "labels must"),
    (dict(scores=[0.2, 0.8], n_chunks=3), "n_chunks=3 exceeds the number of rows"),
    (dict(scores=[0.2, 0.8], chunk_size=0), "chunk_size must be a positive integer"),
    (dict(scores=[0.2, 0.8], chunks=["a"]), "chunks must hold one key per row"),
    (dict(scores=[0.2, 0.8], chunks=["a", None]), "chunks has 1 missing key"),
    (dict(scores=[0.2, 0.8], chunk_size=1, n_chunks=2), "at most one of chunks"),
    (dict(scores=[0.2, 0.6, 0.8], y_pred=[0, 0, 1]),
     r"y_pred disagrees with scores >= threshold \(0.5\) on 1 row.*threshold in \(0.6, 0.8\]"),
    (dict(scores=[0.2, 0.8], noise="beta"), "noise='beta' needs kappa"),
    (dict(scores=[0.2, 0.8], noise="learned"), "noise='learned' learns kappa"),
    (dict(scores=[0.2, 0.8], noise="binning"), "noise='binning' learns kappa"),
    (dict(scores=[0.2, 0.8], noise="learned", kappa_prior=(4.6, 0.0)),
     "kappa_prior must be"),
    (dict(scores=[0.2, 0.8], noise="beta", kappa=5.0, metrics="roc_auc"),
     "roc_auc is estimated with noise='none' only"),
    (dict(scores=[0.2, 0.8], calibration="isotonic"), "needs reference"),
    (dict(scores=[0.2, 0.8], calibration=Platt()), "Platt calibrator is not fitted"),
    (dict(scores=[0.2, 0.8], metrics="auc"), "metrics must be one of"),
    (dict(scores=[0.2, 0.8], method="mcmc"), "method must be one of"),
    (dict(scores=[0.2, 0.8], zero_division=0.5), "zero_division must be"),
    (dict(scores=[0.2, 0.8], reference=[0.2, 0.3]), "reference must be a tuple"),
    (dict(scores=[0.2, 0.8], alert_thresholds={"accuracy": 0.7}, metrics="accuracy"),
     r"alert_thresholds\['accuracy'\] must be \(lower, upper\)"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cbpe(**kwargs)


def test_a_chunk_predicted_all_positive_has_zero_expected_negatives():
    """No predicted negative: the expected FN is exactly 0 (a rounding residue would make the
    expected TN negative and be refused)."""
    scores = np.random.default_rng(21).uniform(0.5, 1.0, 200 * 20)  # 200 chunks of 20
    ev = cbpe(scores, chunk_size=20, metrics=["accuracy", "f1"])
    accuracy = ev.closed_form["plugin"].sel(metric="accuracy").values[:-1]
    np.testing.assert_allclose(accuracy, scores.reshape(200, 20).mean(axis=1), atol=1e-15)


def _enumerated_auc(p: np.ndarray, s: np.ndarray, zero_division: float = 0.0):
    """Mean and sd of ROC-AUC (ties 1/2) over every labelling of the rows, Y_i ~ Bern(p_i)."""
    import itertools

    values, weights = [], []
    for y in itertools.product((0, 1), repeat=p.size):
        y = np.array(y)
        weights.append(np.prod(np.where(y == 1, p, 1 - p)))
        pos, neg = s[y == 1], s[y == 0]
        values.append(zero_division if not (pos.size and neg.size) else
                      ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum())
                      / (pos.size * neg.size))
    values, weights = np.array(values), np.array(weights)
    mean = weights @ values
    return mean, np.sqrt(weights @ (values - mean) ** 2)


@pytest.mark.parametrize("scores", [
    np.full(4, 1 - 1e-9), np.full(4, 1 - 1.1e-16), np.array([1.0, 1 - 1e-16]),
    np.array([1e-200, 1e-170]), np.full(3, 1e-12), np.array([0.0, 1.0, 1.0]),
])
def test_roc_auc_of_extreme_scores_is_in_range_and_equals_scale(scores):
    """Scores all near 0 or 1 gave ROC-AUC -4.08 or a ZeroDivisionError: the moments lost
    sum(1 - p) in n - sum(p), and the delta method used moments that include the single-class
    labellings."""
    from bayeval import scale

    row = cbpe(scores, metrics=["roc_auc"]).summary().loc[("all", "roc_auc")]
    mean, sd = _enumerated_auc(scores, scores)
    # an exact law's interval can leave out its mean: [0, 0] (mass 1 - 4e-9), mean 2e-9
    assert 0 <= row["lower"] <= row["upper"] <= 1 and 0 <= row["mean"] <= 1
    assert abs(row["mean"] - mean) < 1e-12 and abs(row["sd"] - sd) < 1e-9
    other = scale.cbpe(scores, metrics=["roc_auc"]).summary().loc[("all", "roc_auc")]
    assert abs(other["mean"] - row["mean"]) < 1e-12 and abs(other["sd"] - row["sd"]) < 1e-12


def test_roc_auc_of_a_chunk_near_1_inside_a_period():
    from bayeval import scale

    s = np.random.default_rng(1).uniform(size=200)
    s[80:120] = 1 - 1e-10
    mine = cbpe(s, metrics=["roc_auc"], chunk_size=40).summary()
    theirs = scale.cbpe(s, metrics=["roc_auc"], chunk_size=40).summary()
    assert mine["mean"].between(0, 1).all()
    assert abs(mine.loc[("[80:119]", "roc_auc"), "mean"]) < 1e-6  # undefined but 4e-9
    np.testing.assert_allclose(mine["mean"], theirs["mean"], atol=1e-12)


def test_roc_auc_of_two_rows_is_exact():
    """Given both classes, two rows have D = 1: the delta method given D > 0 is exact."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        s = rng.uniform(size=2)
        row = cbpe(s, metrics=["roc_auc"]).summary().loc[("all", "roc_auc")]
        mean, sd = _enumerated_auc(s, s)
        assert abs(row["mean"] - mean) < 1e-12 and abs(row["sd"] - sd) < 1e-12
