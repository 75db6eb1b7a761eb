"""Sampling weights, p-values, posterior probabilities and budget planning of the judge; ppi_py
parity of the weighted means, p-values and power (a stored fixture, ppi_py itself when
installed, and an independent transcription)."""

import json
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeval.methods.judge import (
    judge,
    plan_budget,
    ppi_mean_ci,
    ppi_mean_pointestimate,
    ppi_mean_power,
    ppi_mean_pval,
)
from benchmarks.coverage_judge_weights import ESTIMATORS, coverage, run

FIXTURE = json.loads((pathlib.Path(__file__).parent / "data" / "ppi_py_mean.json").read_text())
ALTERNATIVES = ("two-sided", "larger", "smaller")


# ============================================================================ ppi_py parity
def _arrays(case):
    return [np.array(case[k]) for k in ("Y", "Yhat", "Yhat_unlabeled", "w", "w_unlabeled")]


def _ours(y, yhat, yhat_u, lam, w, w_u):
    """Point, intervals and p-values of the shim, keyed as in the fixture."""
    out = {"point": ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam, w=w, w_unlabeled=w_u)[0]}
    for alt in ALTERNATIVES:
        lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, alternative=alt, lam=lam, w=w,
                             w_unlabeled=w_u)
        out[f"ci_{alt}"] = [lo[0], hi[0]]
        out[f"pval_{alt}"] = ppi_mean_pval(y, yhat, yhat_u, null=0.1, alternative=alt, lam=lam,
                                           w=w, w_unlabeled=w_u)[0]
    return out


def _compare(ours, theirs, lam):
    for key, value in theirs.items():
        if key in ("lam", "weighted") or (lam is None and key in ("ci_larger", "ci_smaller")):
            continue  # ppi_py 0.2.3 drops `alternative` when it tunes lam (two-sided instead)
        np.testing.assert_allclose(ours[key], value, rtol=0, atol=1e-10, err_msg=key)


def test_the_shim_gives_ppi_py_s_numbers_with_and_without_weights():
    """The fixture (ppi_py 0.2.3, tests/methods/judge/data/make_ppi_py_fixture.py): 6 datasets
    (real and 0/1), lam tuned / 1 / 0.3, weighted or not; to 1e-10."""
    assert len(FIXTURE["cases"]) == 6
    for case in FIXTURE["cases"]:
        y, yhat, yhat_u, w, w_u = _arrays(case)
        for row in case["results"]:
            kw = (w, w_u) if row["weighted"] else (None, None)
            _compare(_ours(y, yhat, yhat_u, row["lam"], *kw), row, row["lam"])


def test_ppi_mean_power_gives_ppi_py_s_plans():
    for case in FIXTURE["cases"]:
        y, yhat, _, w, _ = _arrays(case)
        for row in case["power"]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ours = ppi_mean_power(y, yhat, 1.0, 0.02, w=w if row["weighted"] else None,
                                      **row["kwargs"])
            assert (ours["n"], ours["N"], ours["effective_n"]) == (row["n"], row["N"],
                                                                   row["effective_n"])
            assert abs(ours["cost"] - row["cost"]) < 1e-10
            assert abs(ours["ppi_corr"] - row["ppi_corr"]) < 1e-10


def test_the_shim_equals_ppi_py_itself_where_installed():
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(7)
    for binary in (False, True):
        y = rng.normal(size=90)
        yhat = 0.7 * y + rng.normal(size=90)
        yhat_u = rng.normal(size=700)
        if binary:
            y, yhat, yhat_u = ((a > 0).astype(float) for a in (y, yhat, yhat_u))
        w, w_u = rng.uniform(0.3, 4, 90), rng.uniform(0.5, 2, 700)
        for lam in (None, 1.0, 0.6):
            theirs = {"point": ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam, w=w,
                                                             w_unlabeled=w_u)[0]}
            for alt in ALTERNATIVES:
                lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, alternative=alt,
                                            lam=lam, w=w, w_unlabeled=w_u)
                theirs[f"ci_{alt}"] = [np.ravel(lo)[0], np.ravel(hi)[0]]
                theirs[f"pval_{alt}"] = np.ravel(ppi_py.ppi_mean_pval(
                    y, yhat, yhat_u, null=0.1, alternative=alt, lam=lam, w=w,
                    w_unlabeled=w_u))[0]
            _compare(_ours(y, yhat, yhat_u, lam, w, w_u), theirs, lam)


def transcription(y, yhat, yhat_u, lam, w, w_u, null, clip=True):
    """ppi_py 0.2.3's weighted mean for 1-D inputs, written out: weights rescaled to sum to the
    sample size, lam from the weighted gradients at the PPI estimate, se from np.std (ddof=0) of
    the weighted values, p-value of the z statistic."""
    n, big_n = y.size, yhat_u.size
    w, w_u = w / w.sum() * n, w_u / w_u.sum() * big_n
    if lam is None:
        ppi = (w_u * yhat_u).mean() + (w * (y - yhat)).mean()
        g, h, h_u = w * (y - ppi), w * (yhat - ppi), w_u * (yhat_u - ppi)
        cov = 2 * np.mean((g - g.mean()) * (h - h.mean()))
        lam = cov / (2 * (1 + n / big_n) * np.cov(np.concatenate([h, h_u])))
        lam = float(np.clip(lam, 0, 1)) if clip else float(lam)
    est = (w_u * lam * yhat_u).mean() + (w * (y - lam * yhat)).mean()
    se = np.sqrt((w_u * lam * yhat_u).std() ** 2 / big_n + (w * (y - lam * yhat)).std() ** 2 / n)
    return est, se, 2 * stats.norm.sf(abs(est - null) / se)


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.45])
def test_the_shim_equals_a_transcription_of_ppi_py(lam):
    rng = np.random.default_rng(11)
    y = rng.normal(2, 1, 150)
    yhat = y + rng.normal(0.3, 1, 150)
    yhat_u = rng.normal(2.3, 1.4, 2000)
    w, w_u = rng.exponential(1, 150), rng.uniform(1, 3, 2000)
    est, se, _ = transcription(y, yhat, yhat_u, lam, w, w_u, 2.0)
    _, _, p = transcription(y, yhat, yhat_u, lam, w, w_u, 2.0, clip=False)
    z = stats.norm.ppf(0.95)
    lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam, w=w, w_unlabeled=w_u)
    assert abs(lo[0] - (est - z * se)) < 1e-12 and abs(hi[0] - (est + z * se)) < 1e-12
    assert abs(ppi_mean_pval(y, yhat, yhat_u, null=2.0, lam=lam, w=w, w_unlabeled=w_u)[0]
               - p) < 1e-12


def test_shim_weights_are_checked_under_ppi_py_s_names():
    with pytest.raises(ValueError, match="w_unlabeled must be finite and non-negative"):
        ppi_mean_ci([1, 0, 1], [1, 0, 0], [1, 0, 1, 1], w_unlabeled=[1, -1, 1, 1])
    with pytest.raises(ValueError, match=r"w must hold one weight per item \(3\)"):
        ppi_mean_pval([1, 0, 1], [1, 0, 0], [1, 0, 1, 1], w=[1, 2])


# ====================================================================== weights in judge
def _binary_data(seed=3, m=150, n=3000):
    rng = np.random.default_rng(seed)
    y = rng.random(m + n) < 0.4
    yhat = np.where(y, rng.random(m + n) < 0.8, rng.random(m + n) < 0.3).astype(int)
    return y[:m].astype(int), yhat[:m], yhat[m:], rng.uniform(0.5, 4, m), rng.uniform(1, 2, n)


@pytest.mark.parametrize("scores", [False, True])
def test_uniform_weights_give_the_unweighted_estimates(scores):
    y, yhat, yhat_u, _, _ = _binary_data()
    if scores:
        rng = np.random.default_rng(4)
        yhat, yhat_u = yhat + rng.random(yhat.size), yhat_u + rng.random(yhat_u.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plain = judge(y, yhat, yhat_u, method="all").summary()
        for mu_model in ((None, "linear", "bins") if scores else (None,)):
            plain = judge(y, yhat, yhat_u, method="all", mu_model=mu_model).summary()
            ones = judge(y, yhat, yhat_u, method="all", mu_model=mu_model,
                         sample_weight=np.full(y.size, 3.0),
                         sample_weight_unlabeled=np.ones(yhat_u.size)).summary()
            plain = plain.drop(index=[e for e in plain.index if e not in ones.index])
            np.testing.assert_allclose(ones.to_numpy(float), plain.to_numpy(float), rtol=0,
                                       atol=1e-12)
    assert "rogan_gladen_adjusted" not in ones.index


def test_weighted_ppi_estimates_are_ppi_py_s_weighted_means():
    """ppi and ppi_pp of judge(sample_weight=...) are ppi_py's weighted point estimates; their
    standard errors are the linearised ones (ppi_py's spread of w x is larger here)."""
    y, yhat, yhat_u, w, v = _binary_data()
    s = judge(y, yhat, yhat_u, method="all", sample_weight=w, sample_weight_unlabeled=v,
              ci_kind="wald").summary()
    for name, lam in (("ppi", 1.0), ("ppi_pp", None)):
        point = ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam, w=w, w_unlabeled=v)[0]
        assert abs(s.loc[name, "mean"] - point) < 1e-12
    lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, w=w, w_unlabeled=v)
    assert s.loc["ppi_pp", "sd"] < (hi[0] - lo[0]) / (2 * stats.norm.ppf(0.975))


def test_the_weighted_eif_is_the_linearised_weighted_post_stratification():
    """By hand: weighted cell means, weighted shares over all N items, the delta variance of
    the Hajek means plus the spread of the cell means."""
    y, yhat, yhat_u, w, v = _binary_data()
    w, v = w / w.mean(), v / v.mean()
    big_n = y.size + yhat_u.size
    mu = np.array([np.sum(w * y * (yhat == k)) / np.sum(w * (yhat == k)) for k in (0, 1)])
    share = np.array([np.sum(w * (yhat == k)) + np.sum(v * (yhat_u == k)) for k in (0, 1)])
    share /= big_n
    theta = share @ mu
    phi = w * share[yhat] * (y - mu[yhat]) / np.array([np.sum(w * (yhat == k))
                                                       for k in (0, 1)])[yhat]
    var = (np.sum((w * (mu[yhat] - theta)) ** 2) + np.sum((v * (mu[yhat_u] - theta)) ** 2)
           ) / big_n**2 + np.sum(phi**2)
    s = judge(y, yhat, yhat_u, method="all", sample_weight=w, sample_weight_unlabeled=v,
              ci_kind="wald").summary()
    assert abs(s.loc["eif", "mean"] - theta) < 1e-12 and abs(s.loc["eif", "sd"] ** 2 - var) < 1e-14
    assert abs(s.loc["mle", "mean"] - theta) < 1e-12  # the pseudo-likelihood estimate


def test_weighted_intervals_cover_under_a_stratified_design_and_unweighted_ones_do_not():
    """benchmarks.coverage_judge_weights, R = 300: hard prompts labelled 7.5 times as often.
    Weighted classical, PPI, PPI++ and EIF cover theta at 95 % within 4 Monte-Carlo SEs
    (SE = 0.0126); the unweighted PPI++ and EIF are biased by about -0.15 (4 of their SEs) and
    cover under 20 %."""
    reps = 300
    cov = coverage(run(reps, seed=20261221))
    se = np.sqrt(0.95 * 0.05 / reps)
    for e in ESTIMATORS:
        assert abs(cov.loc[("weighted", e), "coverage"] - 0.95) <= 4 * se, e
        assert abs(cov.loc[("weighted", e), "bias"]) < 0.01, e
    for e in ("classical", "ppi_pp", "eif"):
        assert cov.loc[("none", e), "coverage"] < 0.2, e


# ========================================================================== p-values
def test_p_values_are_the_z_tests_of_the_estimates_and_match_the_wald_intervals():
    y, yhat, yhat_u, _, _ = _binary_data()
    for alt in ALTERNATIVES:
        ev = judge(y, yhat, yhat_u, method="all", ci_kind="wald", alternative=alt, null=0.42,
                   ci_prob=0.9)
        s = ev.summary()
        z = (s["mean"] - 0.42) / s["sd"]
        expected = {"two-sided": 2 * stats.norm.sf(np.abs(z)), "larger": stats.norm.sf(z),
                    "smaller": stats.norm.cdf(z)}[alt]
        np.testing.assert_allclose(s["p_value"], expected, rtol=1e-12)
        outside = (s["lower"] > 0.42) | (s["upper"] < 0.42)
        assert ((s["p_value"] < 0.1) == outside).all()
        if alt == "larger":
            assert (s["upper"] == 1.0).all()
        if alt == "smaller":
            assert (s["lower"] == 0.0).all()
    plain = judge(y, yhat, yhat_u).summary()
    assert "p_value" not in plain.columns


def test_the_p_value_of_ppi_pp_is_ppi_mean_pval_unclipped_lambda_aside():
    y, yhat, yhat_u, _, _ = _binary_data()
    s = judge(y, yhat, yhat_u, method="ppi", null=0.35, alternative="smaller").summary()
    p = ppi_mean_pval(y, yhat, yhat_u, null=0.35, alternative="smaller", lam=1.0)[0]
    assert abs(s.loc["ppi", "p_value"] - p) < 1e-12


def test_p_values_with_groups_and_a_left_out_estimator():
    y, yhat, yhat_u, _, _ = _binary_data()
    flipped = 1 - yhat  # kappa < 0: Rogan-Gladen left out in that group
    with pytest.warns(UserWarning):
        ev = judge(y, {"a": yhat, "b": flipped}, {"a": yhat_u, "b": 1 - yhat_u}, method="all",
                   null=0.5)
    cf = ev.closed_form
    assert np.isnan(cf["p_value"].sel(estimator="rogan_gladen", group="b"))
    assert np.isfinite(cf["p_value"].sel(estimator="eif")).all()


def test_posterior_probability_of_exceeding_null_in_the_draws_summary():
    """method='pymc' with null: prob_greater is the share of the draws of theta above null,
    and it agrees with the EIF's one-sided p-value (Bernstein-von Mises: P(theta > t) is about
    1 - p of H1: theta > t) within 0.05."""
    y, yhat, yhat_u, _, _ = _binary_data(m=300)
    ev = judge(y, yhat, yhat_u, method="pymc", null=0.4, random_seed=5,
               sample_kwargs={"draws": 1000, "tune": 500, "chains": 2})
    s = ev.summary()
    draws = ev.draws.values
    assert s.loc[:, "prob_greater"].iloc[0] == pytest.approx(np.mean(draws > 0.4), abs=1e-15)
    p = judge(y, yhat, yhat_u, null=0.4, alternative="larger").summary().loc["eif", "p_value"]
    assert abs(s["prob_greater"].iloc[0] - (1 - p)) < 0.05


# ========================================================================== planning
@pytest.mark.parametrize("rho2, cost_judge", [(0.5, 0.01), (0.8, 0.1), (0.2, 0.05)])
def test_plan_budget_is_the_best_integer_plan(rho2, cost_judge):
    """Against a search over every integer m: the plan's variance is the smallest (within
    the rounding of one label) of the plans within budget; the cheapest plan reaching a
    half-width costs no more than any integer plan reaching it (plus one label's cost)."""
    budget = 400.0
    plan = plan_budget(rho2, cost_human=1.0, cost_judge=cost_judge, budget=budget, theta=0.3)
    assert plan.cost <= budget + 1e-9

    def inv_var(m, total):
        return 1 / ((1 - rho2) / m + rho2 / total)

    best = max(max(inv_var(m, m + np.floor((budget - m * (1 + cost_judge)) / cost_judge)),
                   m if m * 1.0 <= budget else 0)
               for m in range(1, int(budget / (1 + cost_judge)) + 1))
    best = max(best, budget)  # humans only, the judge not run
    assert plan.m_effective >= best * (1 - 2e-3)
    target = plan_budget(rho2, cost_human=1.0, cost_judge=cost_judge, half_width=0.03,
                         theta=0.3)
    z2 = stats.norm.ppf(0.975) ** 2 * 0.21
    assert target.half_width <= 0.03 + 1e-12
    need = z2 / 0.03**2
    cheapest = min(m * (1 + cost_judge) + cost_judge * max(np.ceil(
        rho2 / (1 / need - (1 - rho2) / m)) - m, 0) if (1 - rho2) / m < 1 / need else np.inf
        for m in range(1, int(need) + 2))
    assert target.cost <= min(cheapest, np.ceil(need)) + 1 + cost_judge


def test_plan_budget_uses_humans_alone_when_the_judge_costs_too_much():
    plan = plan_budget(0.05, cost_human=1.0, cost_judge=0.2, budget=500, theta=0.3)
    assert (plan.m, plan.n, plan.cost, plan.m_effective) == (500, 0, 500.0, 500.0)


@pytest.mark.parametrize("kwargs, message", [
    ({"budget": 10, "half_width": 0.1, "theta": 0.3}, "exactly one of budget"),
    ({"half_width": 0.1}, "half_width needs theta"),
    ({"budget": 10, "cost_judge": 0.0}, "cost_human and cost_judge must be positive"),
    ({"half_width": 0.001, "theta": 0.3, "n_total": 500}, "out of reach"),
    ({"budget": 10, "rho2": 1.0}, r"rho2 must lie in \[0, 1\)"),
])
def test_plan_budget_refuses_bad_input(kwargs, message):
    args = {"rho2": 0.5, "cost_human": 1.0, "cost_judge": 0.01, **kwargs}
    with pytest.raises(ValueError, match=message):
        plan_budget(args.pop("rho2"), **args)


# ========================================================================= bad input
@pytest.mark.parametrize("kwargs, message", [
    ({"sample_weight": np.ones(3)}, r"sample_weight must hold one weight per item \(150\)"),
    ({"sample_weight": -np.ones(150)}, "sample_weight must be finite and non-negative"),
    ({"sample_weight": np.ones(150), "method": "pymc"}, "apply to the frequentist estimators"),
    ({"sample_weight": np.ones(150), "method": "rogan_gladen_adjusted"}, "no weighted form"),
    ({"null": 1.5}, r"null must be a rate in \[0, 1\]"),
    ({"alternative": "greater"}, "alternative"),
])
def test_judge_refuses_bad_decision_arguments(kwargs, message):
    y, yhat, yhat_u, _, _ = _binary_data()
    with pytest.raises(ValueError, match=message):
        judge(y, yhat, yhat_u, **kwargs)


def test_category_labels_refuse_null_with_the_posterior():
    """K categories test their prevalences with the frequentist estimators (see
    test_weights_compare); the generative models have no z-test."""
    with pytest.raises(ValueError, match="null and alternative give the z-tests"):
        judge(["A", "B", "tie", "A"], ["A", "B", "B", "A"], ["A", "tie"], null=0.5,
              method="pymc")


def test_pandas_sample_weights_pair_with_their_items_by_index():
    """Weights given as a Series in another row order than y are paired by index, not by
    position: the same estimates as the arrays in one order."""
    rng = np.random.default_rng(0)
    m, n = 60, 400
    y = (rng.random(m) < 0.4).astype(int)
    yhat = np.where(rng.random(m) < 0.8, y, 1 - y)
    yhat_u = (rng.random(n) < 0.45).astype(int)
    w = rng.uniform(0.5, 2.0, m)
    arrays = judge(y, yhat, yhat_u, sample_weight=w, method="ppi_pp").summary()
    index = [f"item-{i}" for i in range(m)]
    shuffled = pd.Series(w, index=index).iloc[rng.permutation(m)]
    series = judge(pd.Series(y, index=index), pd.Series(yhat, index=index), yhat_u,
                   sample_weight=shuffled, method="ppi_pp").summary()
    np.testing.assert_allclose(series[["mean", "sd"]].values, arrays[["mean", "sd"]].values,
                               rtol=0, atol=1e-12)
