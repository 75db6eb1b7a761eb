"""Calibrators and calibration error: each behaves per its definition (fixed seeds, 4-sigma)."""

import itertools

import numpy as np
import pytest
from scipy import special

from bayeval import calibration


def _fisher_sd(features, p):
    """Asymptotic sd of logistic-regression coefficients at the true probabilities."""
    info = (features.T * (p * (1 - p))) @ features
    return np.sqrt(np.diag(np.linalg.inv(info)))


def test_platt_recovers_the_parameters_of_logistic_data():
    rng = np.random.default_rng(1)
    s = rng.uniform(0.02, 0.98, 20_000)
    a, b = 1.7, -0.4
    p = special.expit(a * special.logit(s) + b)
    y = (rng.random(s.size) < p).astype(int)
    cal = calibration.Platt().fit(s, y)
    sd = _fisher_sd(np.column_stack([special.logit(s), np.ones(s.size)]), p)
    assert abs(cal.a_ - a) <= 4 * sd[0] and abs(cal.b_ - b) <= 4 * sd[1]
    np.testing.assert_allclose(cal.predict([0.5]), special.expit(cal.b_), rtol=1e-12)


def test_beta_calibration_recovers_its_parameters_and_keeps_them_nonnegative():
    rng = np.random.default_rng(2)
    s = rng.uniform(0.01, 0.99, 20_000)
    x = np.column_stack([np.log(s), -np.log1p(-s), np.ones(s.size)])
    coef = np.array([2.0, 0.5, 0.3])
    p = special.expit(x @ coef)
    y = (rng.random(s.size) < p).astype(int)
    cal = calibration.BetaCalibration().fit(s, y)
    sd = _fisher_sd(x, p)
    assert np.all(np.abs(np.array([cal.a_, cal.b_, cal.c_]) - coef) <= 4 * sd)
    # a decreasing truth: the constrained fit puts a at its bound 0 and stays non-decreasing
    y_down = (rng.random(s.size) < special.expit(-1.0 * np.log(s))).astype(int)
    down = calibration.BetaCalibration().fit(s, y_down)
    assert down.a_ == 0.0 and down.b_ >= 0.0
    assert np.all(np.diff(down.predict(np.sort(s))) >= 0)


def test_isotonic_is_the_pooled_adjacent_violators_fit_interpolated_and_clipped():
    cal = calibration.Isotonic().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    # blocks {0.1}: 0, {0.2, 0.3}: 1/2, {0.4}: 1
    np.testing.assert_allclose(cal.predict([0.1, 0.2, 0.3, 0.4]), [0.0, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(cal.predict([0.0, 0.15, 0.35, 1.0]), [0.0, 0.25, 0.75, 1.0])


def test_scaling_binning_follows_the_reference_algorithm():
    rng = np.random.default_rng(3)
    s = rng.uniform(0.05, 0.95, 997)
    y = (rng.random(s.size) < s**1.5).astype(int)
    cal = calibration.ScalingBinning(n_bins=10).fit(s, y)
    # the steps of the reference library (uncertainty-calibration 0.1.4's PlattBinnerCalibrator,
    # the scaling-binning of Kumar et al. 2019 that the PEMI paper uses), written out: Platt,
    # equal-mass groups, midpoints, mean Platt value
    g = np.sort(cal.platt_.predict(s))
    groups = np.array_split(g, 10)
    edges = [(a[-1] + b[0]) / 2 for a, b in itertools.pairwise(groups)] + [1.0]
    np.testing.assert_allclose(cal.edges_, edges, rtol=0, atol=1e-15)
    np.testing.assert_allclose(cal.values_, [grp.mean() for grp in groups], rtol=1e-13)
    out = cal.predict(s)
    assert np.unique(out).size == 10
    which = np.searchsorted(edges, cal.platt_.predict(s), side="left")
    np.testing.assert_array_equal(out, cal.values_[which])


def test_split_at_threshold_keeps_predicted_classes_apart():
    # labels depend on the side of 0.5 only: pooled isotonic needs one block across 0.5
    s = np.array([0.3, 0.4, 0.45, 0.55, 0.6, 0.7])
    y = np.array([0, 1, 1, 0, 0, 1])
    pooled = calibration.Isotonic().fit(s, y).predict(s)
    assert pooled[2] == pooled[3]  # one value on both sides of the threshold
    split = calibration.make_calibrator("isotonic", threshold=0.5).fit(s, y)
    below = calibration.Isotonic().fit(s[:3], y[:3]).predict(s[:3])
    above = calibration.Isotonic().fit(s[3:], y[3:]).predict(s[3:])
    np.testing.assert_array_equal(split.predict(s), np.r_[below, above])
    # a side with one class is left uncalibrated
    one = calibration.make_calibrator("platt", threshold=0.5).fit(s, [0, 0, 0, 1, 0, 1])
    np.testing.assert_array_equal(one.predict(s[:3]), s[:3])


def test_calibration_error_of_a_calibrated_simulator_is_its_sampling_noise():
    rng = np.random.default_rng(4)
    n, bins = 20_000, 10
    s = rng.beta(2, 2, n)
    y = (rng.random(n) < s).astype(int)
    # each bin's gap is N(0, V_m) / n_m under calibration: a sum of half-normals
    sizes = np.full(bins, n // bins)
    v = np.add.reduceat(np.sort(s) * (1 - np.sort(s)), np.r_[0, np.cumsum(sizes)[:-1]])
    mean = np.sum(np.sqrt(2 / np.pi * v)) / n
    sd = np.sqrt(np.sum((1 - 2 / np.pi) * v)) / n
    ace = calibration.calibration_error(s, y, n_bins=bins)
    assert abs(ace - mean) <= 4 * sd
    miscalibrated = (rng.random(n) < s**2).astype(int)
    assert calibration.calibration_error(s, miscalibrated, n_bins=bins) > mean + 20 * sd


def test_calibration_error_variants():
    s, y = [0.1, 0.3, 0.6, 0.9], [0, 1, 1, 1]
    # equal width, 2 bins: [0.1, 0.3] gap (1 - 0.4) and [0.6, 0.9] gap (2 - 1.5)
    assert calibration.ece(s, y, n_bins=2) == pytest.approx((0.6 + 0.5) / 4, abs=1e-15)
    # top label: confidences 0.9, 0.7, 0.6, 0.9 and correct 1, 0, 1, 1, one bin
    assert calibration.ace(s, y, n_bins=1, kind="top_label") == pytest.approx(abs(3 - 3.1) / 4,
                                                                             abs=1e-15)


def test_select_calibrator_uses_held_out_folds():
    rng = np.random.default_rng(5)
    s = rng.uniform(0, 1, 4000)
    y = (rng.random(s.size) < s**2).astype(int)
    cal, errors, oof = calibration.select_calibrator(s, y, random_seed=0)
    assert list(errors.index) == ["none", "isotonic", "platt", "beta"]
    lowest = errors["heldout_error"].idxmin()
    assert lowest != "none" and errors.loc[lowest, "brier_excess"] == 0
    # one standard error: the simplest fitted map whose held-out Brier score is as good
    good = errors.index[errors["brier_excess"] <= errors["brier_se"]]
    best = next(name for name in calibration.SIMPLICITY if name in good)
    assert cal.name == best and errors.loc[best, "chosen"] and errors["chosen"].sum() == 1
    assert errors.loc[best, "heldout_error"] == pytest.approx(
        calibration.calibration_error(oof, y, n_bins=10), abs=1e-15)
    np.testing.assert_array_equal(oof, calibration.cross_fitted(best, s, y, random_seed=0))
    brier = (calibration.cross_fitted(best, s, y, random_seed=0) - y) ** 2
    lowest_brier = (calibration.cross_fitted(lowest, s, y, random_seed=0) - y) ** 2
    assert errors.loc[best, "brier_excess"] == pytest.approx((brier - lowest_brier).mean(),
                                                             abs=1e-15)
    # out of fold: not the in-sample fit
    assert not np.allclose(oof, cal.predict(s))
    np.testing.assert_array_equal(calibration.cross_fitted("none", s, y), s)


def test_a_flexible_map_does_not_win_by_noise():
    """Platt scaling is the true map (scores over-confident in logit): on 5,000 rows the
    lowest held-out calibration error is beta calibration's or isotonic regression's in about
    half of the data sets (isotonic in 3 of 40); the one-standard-error rule keeps Platt
    scaling, or beta calibration where it is better beyond noise, and never isotonic."""
    chosen = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        p = rng.beta(2, 4, 5000)
        s = 1 / (1 + np.exp(-(2.5 * np.log(p / (1 - p)) + 0.8)))
        y = (rng.random(p.size) < p).astype(int)
        cal, errors, _ = calibration.select_calibrator(s, y, threshold=0.5, random_seed=seed)
        chosen.append((errors["heldout_error"].idxmin(), cal.base))
    assert sum(low != "platt" for low, _ in chosen) >= 5  # the rule has work to do
    assert sum(name == "platt" for _, name in chosen) >= 18
    assert not any(name == "isotonic" for _, name in chosen)


def test_binned_error_is_calibration_error_without_checks():
    rng = np.random.default_rng(3)
    s = rng.random(500)
    y = (rng.random(500) < s**2).astype(np.int8)
    assert calibration.binned_error(s, y, 20) == calibration.ace(s, y)
    for binning in calibration.BINNINGS:
        for kind in calibration.KINDS:
            assert calibration.binned_error(s, y, 7, binning, kind) == (
                calibration.calibration_error(s, y, n_bins=7, binning=binning, kind=kind))


@pytest.mark.parametrize("ordered", [False, True])  # sorted scores skip the sort
def test_equal_count_bins_split_tied_scores_in_row_order(ordered):
    """The bins of a stable sort by score (ties in row order), whatever runs of equal scores
    the bin edges cut: the errors summed bin by bin from that sort, exactly."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n, n_bins = int(rng.integers(1, 2000)), int(rng.integers(1, 40))
        s = np.round(rng.random(n), int(rng.integers(1, 4)))  # many ties
        s = np.sort(s) if ordered else s
        y = (rng.random(n) < s).astype(float)
        sizes = np.full(min(n_bins, n), n // min(n_bins, n))
        sizes[: n % sizes.size] += 1
        bins = np.empty(n, dtype=np.int64)
        bins[np.argsort(s, kind="stable")] = np.repeat(np.arange(sizes.size), sizes)
        by_hand = np.abs(np.bincount(bins, weights=y - s)).sum() / n
        assert calibration.binned_error(s, y, n_bins) == by_hand


@pytest.mark.parametrize(("call", "message"), [
    (lambda: calibration.Platt().fit([0.2, 1.5], [0, 1]), r"scores must lie in \[0, 1\]"),
    (lambda: calibration.Isotonic().fit([0.2, 0.5], [0, 2]), "labels must be binary"),
    (lambda: calibration.Isotonic().fit([0.2, 0.5], ["a", "b"]), "labels must hold numbers"),
    (lambda: calibration.Platt().predict([0.3]), "not fitted"),
    (lambda: calibration.make_calibrator("histogram"), "calibration must be one of"),
    (lambda: calibration.select_calibrator([0.1, 0.2, 0.9], [0, 0, 1]), "at least 2 rows of each"),
    (lambda: calibration.ScalingBinning(n_bins=0), "n_bins must be a positive integer"),
    (lambda: calibration.ece([0.2, 0.8], [0, 1], n_bins=1.5), "n_bins must be a positive"),
    (lambda: calibration.calibration_error([0.2, 0.8], [0, 1], binning="log"), "binning must"),
    (lambda: calibration.SplitAtThreshold("histogram"), "name must be one of"),
    (lambda: calibration.select_calibrator([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1],
                                           candidates=["platt", "histogram"]),
     "candidates must be one of"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_isotonic_on_distinct_scores_is_its_fit_on_the_reduced_rows():
    """Distinct scores skip the reduction to distinct scores (each row its own, count 1): the
    same map bit for bit as the reduction (rows weighted 1) gives."""
    rng = np.random.default_rng(8)
    s = np.sort(rng.beta(2, 2, 2000))
    assert np.unique(s).size == s.size
    y = (rng.random(s.size) < s).astype(np.int8)
    plain = calibration.Isotonic().fit(s, y)
    reduced = calibration.Isotonic()._fitted(s, y, np.ones(s.size))
    np.testing.assert_array_equal(plain.x_, reduced.x_)
    np.testing.assert_array_equal(plain.y_, reduced.y_)


@pytest.mark.parametrize("threshold", [0.5, None])
@pytest.mark.parametrize("ties", [True, False])
def test_cross_fitted_isotonic_is_each_fold_refitted_on_the_others(threshold, ties):
    """With or without ties, and with the rows' order given, the predictions of a fit on the
    other folds' rows, bit for bit (with a side of one class in a fold)."""
    rng = np.random.default_rng(6)
    s = rng.beta(2, 2, 3000)
    s = np.round(s, 3) if ties else s
    assert (np.unique(s).size < s.size) == ties
    y = (rng.random(s.size) < s).astype(np.int8)
    y[s >= 0.9] = 1  # few negatives at the top
    fold = calibration.stratified_folds(y, 10, np.random.default_rng(7))
    expected = np.empty(s.size)
    for k in range(10):
        test = fold == k
        cal = calibration.make_calibrator("isotonic", threshold).fit(s[~test], y[~test])
        expected[test] = cal.predict(s[test])
    oof = calibration.cross_fitted("isotonic", s, y, threshold=threshold, random_seed=7)
    np.testing.assert_array_equal(oof, expected)
    stable = np.argsort(s, kind="stable")
    np.testing.assert_array_equal(calibration.cross_fitted(
        "isotonic", s, y, threshold=threshold, random_seed=7, order=stable), expected)
    one_class = (s >= 0.5) & (s < 0.52)  # a split side whose training rows are all positive
    _, y_one = s[one_class], np.ones(one_class.sum(), dtype=np.int8)
    t = calibration.cross_fitted("isotonic", np.r_[s[s < 0.5], s[one_class]],
                                 np.r_[y[s < 0.5], y_one], threshold=0.5, random_seed=1)
    np.testing.assert_array_equal(t[-one_class.sum():], s[one_class])  # uncalibrated side


