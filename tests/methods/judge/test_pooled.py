"""pool_judges: several judges' verdicts on every item and human labels on a few."""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import special

import bayeval as be
from bayeval.methods.judge.compare import eif_least_squares
from bayeval.methods.judge.fast import eif_cells, eif_linear, moments
from bayeval.methods.judge.pooled import (
    JudgePooled,
    eif_linear_loo,
    error_dependence,
    pattern_cells,
    pattern_eif,
    pool_judges,
)
from bayeval.methods.judge.pooled_models import (
    exact_posterior,
    log_density,
    patterns,
    pooled_model,
)
from benchmarks.coverage_judge_pooled import DESIGNS, simulate


def quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pool_judges(*args, **kwargs)


@pytest.fixture(scope="module")
def correlated():
    """N = 3000 items, m = 200 labelled, three judges, the first two sharing errors."""
    y, v = simulate(DESIGNS["two correlated"], 0.3, 3000, np.random.default_rng(11))
    return y[:200], v[:200], v[200:]


# ------------------------------------------------------------------------------ reductions
def test_each_judge_alone_is_the_single_judge_eif(correlated):
    y, v, vu = correlated
    ours = quiet(y, v, vu).summary()
    for j, name in enumerate(["judge_1", "judge_2", "judge_3"]):
        theirs = be.judge(y, v[:, j], vu[:, j]).summary().loc["eif"]
        for col in ("mean", "sd", "lower", "upper"):
            assert ours.loc[name, col] == pytest.approx(theirs[col], abs=1e-12), (name, col)


def test_linear_pooled_estimate_is_the_least_squares_eif_and_ppi_pp_for_one_column(correlated):
    y, v, vu = correlated
    est = eif_linear_loo(y, v, vu)
    assert est.estimate == pytest.approx(eif_least_squares(y, v, vu).estimate, abs=1e-12)
    one = eif_linear_loo(y, v[:, :1], vu[:, :1])
    assert one.estimate == pytest.approx(float(eif_linear(moments(y, v[:, 0], vu[:, 0]))
                                               .estimate), abs=1e-12)


def test_leave_one_out_variance_equals_refitting_without_each_item(correlated):
    y, v, vu = correlated
    y, v = y[:60].astype(float), v[:60].astype(float)
    design = np.column_stack([np.ones(60), v])
    loo = np.empty(60)
    for j in range(60):
        keep = np.arange(60) != j
        coef = np.linalg.lstsq(design[keep], y[keep], rcond=None)[0]
        loo[j] = y[j] - design[j] @ coef
    full = np.linalg.lstsq(design, y, rcond=None)[0]
    fit = np.concatenate([design @ full, np.column_stack([np.ones(len(vu)), vu]) @ full])
    expected = np.sqrt(fit.var() / fit.size + np.mean(loo**2) / 60)
    assert eif_linear_loo(y, v, vu).se == pytest.approx(expected, rel=1e-10)


def test_one_judges_pattern_cells_give_the_binary_eif(sim):
    c = sim.RUNNING_EXAMPLE
    y, yhat, yu = sim.items(c)
    cells, size = pattern_cells(np.concatenate([yhat, yu])[:, None], y.size, 10)
    est = pattern_eif(y, cells[:y.size], cells[y.size:], size)
    exact = eif_cells(*c.cells())
    assert (est.estimate, est.se) == pytest.approx((float(exact.estimate), float(exact.se)),
                                                   abs=1e-12)


def test_pattern_cells_pool_sparse_patterns_by_verdicts_only():
    rng = np.random.default_rng(4)
    v = (rng.random((2000, 4)) < [0.3, 0.4, 0.5, 0.2]).astype(np.int8)
    cells, size = pattern_cells(v, 80, 10)
    per_cell = np.bincount(cells[:80], minlength=size)
    assert per_cell.min() >= 10  # every cell, pooled or not, has enough labelled items
    codes = v @ (1 << np.arange(4))
    for k in range(size):  # a cell is a union of whole patterns
        inside = np.unique(codes[cells == k])
        assert np.isin(codes, inside).sum() == np.count_nonzero(cells == k)


def test_pattern_eif_with_a_unanimous_cell_keeps_a_positive_variance():
    y = np.array([0] * 20 + [1] * 10 + [0] * 10)
    cells_l = np.array([0] * 20 + [1] * 20)
    est = pattern_eif(y, cells_l, np.array([0] * 50 + [1] * 50), 2)
    smooth = 0.5 / 21
    expected = (0.5 * 0.25**2 + 0.5 * 0.25**2) / 140 + 0.25 * smooth * (1 - smooth) / 20 + (
        0.25 * 0.25 / 20)
    assert est.se == pytest.approx(np.sqrt(expected), rel=1e-12)


# ------------------------------------------------------------------------ against simulation
@pytest.mark.parametrize(("design", "mu_model"), [("two correlated", "linear"),
                                                  ("two correlated", "cell"),
                                                  ("independent", "linear")])
def test_pooled_eif_is_unbiased_with_honest_se_and_covers(design, mu_model):
    """R = 1500 datasets (m = 150, N = 3000): mean within 4 MC sd of theta, mean se^2 within
    4 MC sd of the variance of the estimates, 95 % coverage above 0.95 - 4 MC sd."""
    rng = np.random.default_rng(2026)
    reps, m, theta = 1500, 150, 0.3
    est, se = np.empty(reps), np.empty(reps)
    for r in range(reps):
        y, v = simulate(DESIGNS[design], theta, 3000, rng)
        if mu_model == "linear":
            e = eif_linear_loo(y[:m], v[:m], v[m:])
        else:
            cells, size = pattern_cells(v, m, 10)
            e = pattern_eif(y[:m], cells[:m], cells[m:], size)
        est[r], se[r] = e.estimate, e.se
    assert abs(est.mean() - theta) <= 4 * est.std() / np.sqrt(reps)
    ratio = np.mean(se**2) / est.var()
    assert abs(ratio - 1) <= 4 * np.sqrt(2 / (reps - 1))  # sd of a sample variance
    covered = np.mean(np.abs(est - theta) <= 1.96 * se)
    assert covered >= 0.95 - 4 * np.sqrt(0.95 * 0.05 / reps)


def test_pooling_independent_judges_beats_the_best_one():
    y, v = simulate(DESIGNS["independent"], 0.3, 10_000, np.random.default_rng(5))
    s = quiet(y[:300], v[:300], v[300:]).summary()
    assert s.loc["pooled", "sd"] < s.drop(index="pooled")["sd"].min()
    assert s.loc["pooled", "n_effective"] > s.drop(index="pooled")["n_effective"].max()


# ----------------------------------------------------------------- conditional independence
def test_mantel_haenszel_statistic_by_hand():
    y = np.array([1] * 6 + [0] * 6)
    v = np.array([[1, 1], [1, 1], [1, 0], [0, 1], [1, 1], [0, 0],
                  [0, 0], [0, 0], [1, 1], [0, 1], [0, 0], [1, 0]])
    # class 1: x=3, r=4, c=4, t=6; class 0: x=1, r=2, c=2, t=6
    dev = (3 - 16 / 6) + (1 - 4 / 6)
    var = 4 * 2 * 4 * 2 / (36 * 5) + 2 * 4 * 2 * 4 / (36 * 5)
    out = error_dependence(y, v, ["a", "b"])
    assert out.loc["a & b", "statistic"] == pytest.approx(dev**2 / var, rel=1e-12)
    assert out.loc["a & b", "p_value"] == pytest.approx(special.chdtrc(1, dev**2 / var))
    assert out.loc["a & b", "odds_ratio"] == pytest.approx((3 * 1 / 6 + 1 * 3 / 6)
                                                           / (1 * 1 / 6 + 1 * 1 / 6))


def test_dependence_test_holds_its_level_and_flags_shared_errors():
    rng = np.random.default_rng(8)
    p_values = []
    for _ in range(400):
        y, v = simulate(DESIGNS["independent"], 0.35, 200, rng)
        p_values.append(error_dependence(y, v, ["a", "b", "c"])["p_value"].to_numpy())
    rejected = np.mean(np.concatenate(p_values) < 0.05)
    assert abs(rejected - 0.05) <= 4 * np.sqrt(0.05 * 0.95 / 1200)
    y, v = simulate(DESIGNS["two correlated"], 0.35, 300, rng)
    flagged = error_dependence(y, v, ["a", "b", "c"])["dependent"]
    assert flagged.tolist() == [True, False, False]


# ------------------------------------------------------------------------- input handling
def test_pandas_inputs_pair_by_index(correlated):
    y, v, vu = correlated
    names = ["gpt", "claude", "llama"]
    frame = pd.DataFrame(v, columns=names, index=[f"i{k}" for k in range(len(y))])
    shuffled = pd.Series(y, index=frame.index).sample(frac=1.0, random_state=0)
    ours = quiet(shuffled, frame, pd.DataFrame(vu, columns=names)).summary()
    plain = quiet(y, v, vu).summary()
    np.testing.assert_allclose(ours["mean"].to_numpy(), plain["mean"].to_numpy(), rtol=1e-12)
    assert ours.index.tolist() == [*names, "pooled"]
    as_dict = {n: frame[n].sample(frac=1.0, random_state=j) for j, n in enumerate(names)}
    again = quiet(shuffled, as_dict, {n: vu[:, j] for j, n in enumerate(names)}).summary()
    np.testing.assert_allclose(again["sd"].to_numpy(), plain["sd"].to_numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="paired by their pandas index"):
        quiet(shuffled.set_axis([f"j{k}" for k in range(len(y))]), frame, vu)


@pytest.mark.parametrize(("change", "match"), [
    ({"yhat": "one"}, "yhat must hold one column of 0/1 verdicts per judge"),
    ({"yhat": "single"}, "between 2 and 10 judges"),
    ({"yhat_unlabeled": "fewer"}, "yhat has 3 judges but yhat_unlabeled has 2"),
    ({"yhat": "renamed"}, "same judges in the same order"),
    ({"yhat": "pooled"}, "distinct and not 'pooled'"),
    ({"yhat": "scores"}, r"yhat\['b'\] must be binary"),
    ({"y": "short"}, "length mismatch"),
    ({"yhat": "constant"}, r"judge\(s\) \['c'\] give the same verdict"),
    ({"y": "one_class"}, "at least 2 of each class"),
    ({"method": "mle"}, "method"),
    ({"mu_model": "spline"}, "mu_model"),
    ({"min_labelled": 5}, "min_labelled applies to mu_model='cell'"),
    ({"mu_model": "cell", "min_labelled": 0}, "min_labelled must be a positive integer"),
    ({"prior": {"theta": (1, 1)}}, "prior applies to method='pymc'"),
])
def test_bad_input_is_refused_naming_the_argument(correlated, change, match):
    y, v, vu = correlated
    named = lambda a, cols="abc": {c: a[:, j] for j, c in enumerate(cols)}  # noqa: E731
    args = {"y": y, "yhat": named(v), "yhat_unlabeled": named(vu)}
    options = {k: val for k, val in change.items() if k not in args}
    variants = {
        "one": v[:, 0], "single": {"a": v[:, 0]}, "fewer": named(vu[:, :2], "ab"),
        "renamed": named(v, "abd"), "pooled": named(v, ["a", "b", "pooled"]),
        "scores": {**named(v), "b": v[:, 1] * 0.5}, "short": y[:-1],
        "constant": {**named(v), "c": np.zeros(len(y))}, "one_class": np.r_[1, np.zeros(199)],
    }
    for k, val in change.items():
        if k in args:
            args[k] = variants[val]
    if change.get("yhat") == "constant":
        args["yhat_unlabeled"] = {**named(vu), "c": np.zeros(len(vu))}
    if change.get("yhat") == "pooled":
        args["yhat_unlabeled"] = named(vu, ["a", "b", "pooled"])
    with pytest.raises(ValueError, match=match):
        quiet(args["y"], args["yhat"], args["yhat_unlabeled"], **options)


def test_prior_is_checked():
    with pytest.raises(ValueError, match="unknown key"):
        log_density(np.zeros(5), np.ones((2, 4)), np.ones(4), {"sensitivity": (1, 1)})
    with pytest.raises(ValueError, match=r"prior\['logit_sd'\]"):
        log_density(np.zeros(5), np.ones((2, 4)), np.ones(4), {"logit_sd": (0, -1)})


def test_results_hold_pattern_counts_and_round_trip(correlated, tmp_path):
    y, v, vu = correlated
    ev = quiet(y, v, vu, mu_model="cell")
    data = ev.tree["data"].to_dataset()
    assert int(data["labelled_counts"].sum()) == len(y)
    assert int(data["unlabelled_counts"].sum()) == len(vu)
    code = v @ (1 << np.arange(3))
    assert data["labelled_counts"].sel(label=1).values.tolist() == np.bincount(
        code[y == 1], minlength=8).tolist()
    assert data["pattern"].values.tolist()[:3] == ["000", "100", "010"]
    back = be.load(ev.to_netcdf(tmp_path / "pooled.nc"))
    assert isinstance(back, JudgePooled) and back.equals(ev)
    assert back.dependence().equals(ev.dependence())
    with pytest.raises(ValueError, match="check\\(\\) needs the posterior"):
        ev.check()


# --------------------------------------------------------------------------- latent classes
def test_numpy_density_matches_the_pymc_model_in_theta():
    """Moving theta only, the numpy density (hyperparameters summed out) and the PyMC model's
    log density (hyperparameters explicit) change by the same amount."""
    labelled = np.array([[40, 3, 4, 3], [2, 3, 2, 23]])
    unlabelled = np.array([600, 60, 70, 270])
    model = pooled_model(labelled, unlabelled, ["a", "b"])
    logp = model.compile_logp()
    point = model.initial_point()
    rates = np.array([[2.0, 2.5], [1.5, 2.0]])
    point.update(logit_rate=rates, logit_mean=np.array([1.2, 1.8]),
                 logit_sd_log__=np.log([0.5, 0.6]))
    u = np.r_[0.0, rates[:, 0], rates[:, 1]]
    diffs = []
    for t in (-1.2, -0.4):
        point["theta_logodds__"] = np.array(t)
        u[0] = t
        diffs.append((logp(point), log_density(u, labelled, unlabelled)))
    assert diffs[1][0] - diffs[0][0] == pytest.approx(diffs[1][1] - diffs[0][1], abs=1e-8)


def test_pattern_probabilities_sum_to_one():
    x = patterns(3)
    sens, spec = np.array([0.9, 0.7, 0.6]), np.array([0.8, 0.85, 0.7])
    pos = np.prod(np.where(x, sens, 1 - sens), axis=1)
    neg = np.prod(np.where(x, 1 - spec, spec), axis=1)
    assert pos.sum() == pytest.approx(1, abs=1e-12) and neg.sum() == pytest.approx(1, abs=1e-12)


@pytest.fixture(scope="module")
def latent_fit():
    """method='both' on 120 labelled and 1500 unlabelled items, two conditionally independent
    judges."""
    y, v = simulate(DESIGNS["independent"], 0.35, 1620, np.random.default_rng(3))
    return quiet(y[:120], v[:120, :2], v[120:, :2], method="both", random_seed=4)


@pytest.mark.slow
def test_latent_class_posterior_agrees_with_importance_sampling(latent_fit):
    table = latent_fit.check()
    assert table.attrs["passed"], table
    post = latent_fit.tree["posterior"].to_dataset()
    assert set(post["sensitivity"].dims) == {"chain", "draw", "judge"}
    assert post["judge"].values.tolist() == ["judge_1", "judge_2"]
    assert 0 < float(post["theta_finite"].mean()) < 1
    assert latent_fit.closed_form["exact_ess"] > 10_000


@pytest.mark.slow
def test_check_fails_when_the_exact_side_is_perturbed(latent_fit):
    data = latent_fit.tree["data"].to_dataset()
    labelled = data["labelled_counts"].values.copy()
    labelled[:, 0] += [-12, 12]  # 12 negatives judged 0 by both become positives
    exact = exact_posterior(labelled, data["unlabelled_counts"].values, None, 0.95, 4)
    closed = latent_fit.closed_form.assign({f"exact_{k}": v for k, v in exact.items()})
    draws = xr.DataTree.from_dict({g: latent_fit.tree[g].to_dataset()
                                   for g in ("posterior", "sample_stats")})
    perturbed = JudgePooled.create(method="pool_judges", variant="both", closed_form=closed,
                                   draws=draws, estimand="posterior/theta")
    table = perturbed.check()
    assert not table.attrs["passed"]
    assert not table.loc["mean", "passed"]


def test_correlated_judges_warn_for_the_latent_class_model(correlated, monkeypatch):
    import bayeval.methods.judge.pooled_models as models

    def refuse(*args):
        raise RuntimeError("not sampled")

    monkeypatch.setattr(models, "sample_pooled", refuse)
    y, v, vu = correlated
    with pytest.warns(UserWarning, match="erring together"), pytest.raises(RuntimeError):
        pool_judges(y, v, vu, method="pymc")

