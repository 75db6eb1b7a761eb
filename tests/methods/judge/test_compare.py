"""compare_systems: two systems graded on the same prompts by a judge and a few humans."""

import warnings

import numpy as np
import pytest
import scipy
import xarray as xr

import bayeval as be
from bayeval.methods.judge.categories import ClassCounts, posterior_draws
from bayeval.methods.judge.compare import (
    PAIR_DIFFERENCE,
    JudgeCompare,
    compare_systems,
    difference_posterior,
)
from benchmarks.coverage_judge_compare import simulate

FREQUENTIST = ("naive", "classical", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif")


def quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare_systems(*args, **kwargs)


def one_judge(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return be.judge(*args, **kwargs)


@pytest.fixture(scope="module")
def paired():
    """m = 200 of N = 3000 prompts, theta_A = 0.65, theta_B = 0.58."""
    return simulate(200, 3000, 0.65, 0.58, np.random.default_rng(7))


# ------------------------------------------------------------------------------ reductions
def test_a_constant_system_b_gives_the_single_system_estimators(paired):
    y, yhat, yhat_u = paired
    zero_l, zero_u = np.zeros(len(y)), np.zeros(len(yhat_u))
    ev = quiet({"A": y[:, 0], "B": zero_l}, {"A": yhat[:, 0], "B": zero_l},
               {"A": yhat_u[:, 0], "B": zero_u}, method="all")
    ours = ev.summary()
    theirs = one_judge(y[:, 0], yhat[:, 0], yhat_u[:, 0], method="all", ci_kind="wald").summary()
    for name in FREQUENTIST:
        for col in ("mean", "sd", "lower", "upper"):
            assert ours.loc[name, col] == pytest.approx(theirs.loc[name, col], abs=1e-12), (
                name, col)


def test_a_constant_system_b_with_scores_and_ratings_gives_the_graded_judge(paired):
    rng = np.random.default_rng(3)
    y = rng.integers(1, 6, 400).astype(float)
    judged = np.clip(y + rng.integers(-1, 2, 400), 1, 5)
    ones_l, ones_u = np.ones(100), np.ones(300)
    ev = quiet({"A": y[:100], "B": ones_l}, {"A": judged[:100], "B": ones_l},
               {"A": judged[100:], "B": ones_u}, method="all", y_range=(1, 5))
    theirs = one_judge(y[:100], judged[:100], judged[100:], method="all", y_range=(1, 5),
                       ci_kind="wald").summary()
    for name in FREQUENTIST:  # the difference is the mean rating minus 1
        assert ev.summary().loc[name, "mean"] + 1 == pytest.approx(theirs.loc[name, "mean"],
                                                                   abs=1e-12)
        assert ev.summary().loc[name, "sd"] == pytest.approx(theirs.loc[name, "sd"], abs=1e-12)
    scores = rng.random(400) + y / 5  # a continuous judge: the least-squares EIF is EIF-linear
    ev = quiet({"A": y[:100], "B": ones_l}, {"A": scores[:100], "B": ones_l},
               {"A": scores[100:], "B": ones_u}, method="eif", y_range=(1, 5))
    theirs = one_judge(y[:100], scores[:100], scores[100:], y_range=(1, 5), mu_model="linear",
                       ci_kind="wald").summary()
    assert ev.tree["data"]["mu_model"].item() == "linear"
    assert ev.summary().loc["eif", "mean"] + 1 == pytest.approx(theirs.loc["eif", "mean"],
                                                                abs=1e-12)
    assert ev.summary().loc["eif", "sd"] == pytest.approx(theirs.loc["eif", "sd"], abs=1e-12)


def test_swapping_the_systems_negates_the_difference(paired):
    y, yhat, yhat_u = paired
    ab = quiet(y, yhat, yhat_u, method="all", random_seed=1).summary()
    ba = quiet(y[:, ::-1], yhat[:, ::-1], yhat_u[:, ::-1], method="all",
               random_seed=1).summary()
    assert np.allclose(ab["mean"], -ba["mean"], atol=1e-12)
    assert np.allclose(ab["sd"], ba["sd"], atol=1e-12)
    assert np.allclose(ab.loc[list(FREQUENTIST), "p_value"], ba.loc[list(FREQUENTIST), "p_value"],
                       atol=1e-12)
    assert np.allclose(ab.loc[list(FREQUENTIST), "lower"], -ba.loc[list(FREQUENTIST), "upper"],
                       atol=1e-12)


def test_exact_posterior_moments_equal_monte_carlo():
    t = np.array([[20, 5, 4], [3, 10, 2], [4, 2, 12], [8, 4, 5]])
    u, alpha = np.array([900, 700, 800]), np.full((4, 3), 0.5)
    exact = difference_posterior(t, u, alpha)
    x = posterior_draws(ClassCounts(t, u), alpha, 200_000, np.random.default_rng(0)) @ (
        PAIR_DIFFERENCE)
    se = x.std() / np.sqrt(x.size)
    assert abs(x.mean() - exact.estimate) < 4 * se
    assert abs(x.var() / exact.se**2 - 1) < 4 * np.sqrt(2 / x.size)


def test_p_values_follow_ppi_py_and_match_the_wald_interval(paired):
    y, yhat, yhat_u = paired
    two = quiet(y, yhat, yhat_u, method="all").summary()
    larger = quiet(y, yhat, yhat_u, method="all", alternative="larger").summary()
    smaller = quiet(y, yhat, yhat_u, method="all", alternative="smaller").summary()
    for name in FREQUENTIST:
        z = two.loc[name, "mean"] / two.loc[name, "sd"]
        assert two.loc[name, "p_value"] == pytest.approx(2 * scipy.stats.norm.sf(abs(z)),
                                                         abs=1e-12)
        assert larger.loc[name, "p_value"] == pytest.approx(scipy.stats.norm.sf(z), abs=1e-12)
        assert larger.loc[name, "p_value"] + smaller.loc[name, "p_value"] == pytest.approx(1)
        assert larger.loc[name, "upper"] == 1 and smaller.loc[name, "lower"] == -1
        assert (two.loc[name, "lower"] > 0) == (two.loc[name, "p_value"] < 0.05)
    assert two.loc["bayes", "prob_greater"] > 0.9  # theta_A - theta_B = 0.07


# ----------------------------------------------------------------- coverage, p-values (H0)
@pytest.fixture(scope="module")
def null_replicates():
    """400 datasets with theta_A = theta_B = 0.6, m = 150 of N = 2000: per estimator the
    interval covers 0 and the p-value."""
    rng = np.random.default_rng(20261219)
    covered, p = {}, {}
    for _ in range(400):
        s = quiet(*simulate(150, 2000, 0.6, 0.6, rng), method="all",
                  random_seed=int(rng.integers(2**31))).summary()
        for name in ("ppi", "ppi_pp", "eif", "bayes"):
            covered.setdefault(name, []).append(s.loc[name, "lower"] <= 0 <= s.loc[name, "upper"])
        p.setdefault("eif", []).append(s.loc["eif", "p_value"])
        p.setdefault("ppi_pp", []).append(s.loc["ppi_pp", "p_value"])
    return covered, p


@pytest.mark.parametrize("name", ["ppi", "ppi_pp", "eif", "bayes"])
def test_95_percent_intervals_cover_within_4_monte_carlo_ses(null_replicates, name):
    cov = np.mean(null_replicates[0][name])
    assert abs(cov - 0.95) <= 4 * np.sqrt(0.95 * 0.05 / 400), cov


@pytest.mark.parametrize("name", ["ppi_pp", "eif"])
def test_p_values_are_uniform_under_no_difference(null_replicates, name):
    assert scipy.stats.kstest(null_replicates[1][name], "uniform").pvalue > 0.001


# ------------------------------------------------------------------------------- check()
def test_check_passes_where_the_posterior_should_agree_with_the_eif(paired):
    table = quiet(*paired, method="bayes", random_seed=3).check()
    assert table.attrs["passed"], table
    assert list(table.index) == ["mean", "variance_ratio", "eif_mean", "eif_sd_ratio"]


def test_check_fails_when_one_side_is_perturbed(paired):
    ev = quiet(*paired, method="all", random_seed=3)
    se = float(ev.tree["data"]["eif_sd"])
    tree = ev.tree.copy()  # the EIF estimate moved by half its SE
    tree["data"] = xr.DataTree(ev.tree["data"].to_dataset().assign(
        eif_mean=float(ev.tree["data"]["eif_mean"]) + 0.5 * se))
    table = JudgeCompare(tree).check()
    assert not table.attrs["passed"] and not table.loc["eif_mean", "passed"]
    assert table.loc["mean", "passed"]
    tree = ev.tree.copy()  # the draws shifted by 0.1 posterior sd: no longer the exact law
    post = ev.tree["posterior"].to_dataset()
    tree["posterior"] = xr.DataTree(post.assign(theta=post["theta"] + 0.1 * se))
    table = JudgeCompare(tree).check()
    assert not table.loc["mean", "passed"] and table.loc["eif_mean", "passed"]
    strong = quiet(*paired, method="bayes", prior=30.0, random_seed=3).check()  # prior dominates
    assert not strong.attrs["passed"]


def test_check_needs_the_posterior(paired):
    with pytest.raises(ValueError, match="method='bayes' or 'all'"):
        quiet(*paired).check()


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(("kwargs", "match"), [
    ({"y": np.zeros(5)}, "y must hold the two systems"),
    ({"y": {"A": [1, 0], "B": [0, 1], "C": [1, 1]}}, "exactly two systems"),
    ({"y": {"A": [1, 0, 1, 0], "C": [0, 1, 1, 0]}}, "yhat names the systems"),
    ({"yhat": {"A": [1, 0, 1], "B": [0, 1, 1]}}, "length|lengths"),
    ({"y": {"A": [2, 0, 1, 0], "B": [0, 1, 1, 0]}}, r"y\['A'\] has 1 value\(s\) outside"),
    ({"method": "mle"}, "method must be one of"),
    ({"alternative": "greater"}, "alternative must be one of"),
    ({"ci_kind": "eti"}, "ci_kind must be one of"),
    ({"null": 1.5}, "null must lie in"),
    ({"prior": -1}, "prior must be a positive"),
    ({"y_range": (5, 1)}, "y_range must be finite with low < high"),
    ({"yhat_unlabeled": {"A": [1, 1], "B": [0, 0]},
      "yhat": {"A": [1, 1, 1, 1], "B": [0, 0, 0, 0]}}, "carries no information"),
    ({"y": {"A": [1, 1, 0, 0], "B": [1, 1, 0, 0]}}, "one value"),
])
def test_bad_input_is_refused_naming_the_argument(kwargs, match):
    args = {"y": {"A": [1, 0, 1, 0], "B": [0, 1, 1, 0]},
            "yhat": {"A": [1, 0, 0, 0], "B": [0, 1, 1, 1]},
            "yhat_unlabeled": {"A": [1, 0, 1], "B": [0, 0, 1]}, **kwargs}
    with pytest.raises(ValueError, match=match):
        quiet(args.pop("y"), args.pop("yhat"), args.pop("yhat_unlabeled"), **args)


def test_bayes_needs_binary_grades():
    with pytest.raises(ValueError, match="method='bayes' needs 0/1 human grades"):
        compare_systems({"A": [0.5, 1, 0, 0.2], "B": [0, 1, 1, 0]},
                        {"A": [1, 0, 0, 0], "B": [0, 1, 1, 1]},
                        {"A": [1, 0, 1], "B": [0, 0, 1]}, method="bayes")
