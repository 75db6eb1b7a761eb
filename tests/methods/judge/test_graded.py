"""The judge on graded outcomes: bounded scores and ordinal ratings (methods.judge.graded)."""

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.special import expit

import bayeval as be
from bayeval.methods.judge import ppi_mean_ci
from bayeval.methods.judge.fast import eif_cells
from bayeval.methods.judge.graded import JudgeGraded, eif_graded_cells

#: proportional-odds ratings 1-5 given the judge's rating 1-5 (cutpoints, effects, judge shares)
CUTS, EFFECTS = np.array([-2.0, -0.7, 0.5, 1.8]), np.linspace(-2.0, 2.0, 5)
SHARES = np.array([0.15, 0.2, 0.3, 0.2, 0.15])


def level_probs() -> np.ndarray:
    """P(Y = k | judge rating j), shape (5, 5)."""
    below = expit(CUTS[None, :] - EFFECTS[:, None])
    return np.diff(np.concatenate([np.zeros((5, 1)), below, np.ones((5, 1))], axis=1), axis=1)


TRUE_MEAN = float(SHARES @ level_probs() @ np.arange(1, 6))


def ratings(n_items: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(human rating, judge rating) of ``n_items`` items, both on 1-5."""
    judge = rng.choice(5, n_items, p=SHARES)
    cum = np.cumsum(level_probs()[judge], axis=1)
    human = 1 + (rng.random(n_items)[:, None] > cum[:, :-1]).sum(1)
    return human, judge + 1


def test_bad_graded_input_is_refused_naming_the_argument():
    rng = np.random.default_rng(0)
    y, j = ratings(200, rng)
    cases = [
        (dict(y_range=(1, 4)), "y has .* outside y_range = \\(1, 4\\)"),
        (dict(y_range=(5, 1)), "y_range must have low < high"),
        (dict(y_range="1-5"), "y_range must be \\(low, high\\)"),
        (dict(y_range=3), "y_range must be \\(low, high\\)"),
        (dict(y_range=(-np.inf, np.inf)), "ci_kind='logit' needs a bounded y_range"),
        (dict(y_range=(1, 5), method="rogan_gladen"), "method must be one of"),
        (dict(y_range=(1, 5), mu_model="splines"), "mu_model must be one of"),
        (dict(y_range=(1, 5), method="pymc", sample_weight=np.ones(100)),
         "apply to the fast paths"),
        (dict(y_range=(1, 5), null=6), r"null must be a mean rating on y_range = \[1, 5\]"),
        (dict(y_range=(1, 5), sample_weight=np.ones(99)),
         r"sample_weight must hold one weight per item \(100\)"),
        (dict(y_range=(1, 5), folds=5), "folds applies to the cross-fitted curves"),
        (dict(y_range=(1, 5), method="pymc", mu_model="linear"), "mu_model must be 'cell'"),
        (dict(y_range=(1, 5), prior={"effect_sigma": 1}), "prior applies to method='pymc'"),
        (dict(y_range=(1, 5), weights={1: 1}), "weights apply to labels in K categories"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            be.judge(y[:100], j[:100], j[100:], **kwargs)
    with pytest.raises(ValueError, match="method='pymc' models ordinal ratings"):
        be.judge(y[:100] / 5, j[:100], j[100:], method="pymc")  # bounded, not ordinal
    with pytest.raises(ValueError, match="method='pymc' models ordinal ratings"):
        be.judge(y[:100], j[:100], j[100:], y_range=(0.5, 5.5), method="pymc")
    with pytest.raises(ValueError, match="y takes one value"):
        be.judge(np.full(100, 3), j[:100], j[100:], y_range=(1, 5))
    with pytest.raises(ValueError, match="yhat is 2 on every labelled item"):
        be.judge(y[:100], np.full(100, 2), j[100:], y_range=(1, 5))
    with pytest.raises(ValueError, match="hold a single value"):
        be.judge(y[:100], np.full(100, 2), np.full(100, 2), y_range=(1, 5))
    with pytest.raises(ValueError, match="length mismatch: y has 100, yhat has 99"):
        be.judge(y[:100], j[:99], j[100:], y_range=(1, 5))
    with pytest.raises(ValueError, match="y has 1 NaN"):
        be.judge(np.r_[np.nan, y[1:100]], j[:100], j[100:], y_range=(1, 5))
    with pytest.raises(ValueError, match="prior has unknown key"):
        be.judge(y[:100], j[:100], j[100:], y_range=(1, 5), method="pymc", prior={"cut": 1})


def test_ppi_and_ppi_pp_equal_ppi_mean_ci_on_bounded_and_rating_scales():
    rng = np.random.default_rng(1)
    score = rng.beta(2, 3, 3000)
    y = np.clip(score + rng.normal(0, 0.15, 3000), 0, 1)  # in [0, 1]: detected as bounded
    human, judged = ratings(3000, rng)
    for yy, yh, y_range in ((y, score, None), (human, judged, (1, 5))):
        for method, lam in (("ppi_pp", None), ("ppi", 1.0), ("classical", 0.0)):
            ev = be.judge(yy[:300], yh[:300], yh[300:], y_range=y_range, method=method,
                          ci_kind="wald", ci_prob=0.9)
            lo, hi = ppi_mean_ci(yy[:300], yh[:300], yh[300:], alpha=0.1, lam=lam)
            cf = ev.closed_form.sel(estimator=method)
            assert float(cf["lower"]) == pytest.approx(lo[0], abs=1e-12)
            assert float(cf["upper"]) == pytest.approx(hi[0], abs=1e-12)
            assert float(cf["mean"]) == pytest.approx((lo[0] + hi[0]) / 2, abs=1e-12)


def test_binary_outcomes_on_a_declared_scale_give_the_binary_judge_numbers():
    rng = np.random.default_rng(2)
    for _ in range(20):
        y = (rng.random(1200) < 0.3).astype(int)
        yhat = np.where(rng.random(1200) < 0.8, y, 1 - y)
        binary = be.judge(y[:150], yhat[:150], yhat[150:], method="all").closed_form
        graded = be.judge(y[:150], yhat[:150], yhat[150:], method="all",
                          y_range=(0, 1)).closed_form
        names = list(graded["estimator"].values)
        assert names == ["naive", "classical", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif"]
        for var in ("mean", "sd", "lower", "upper"):
            np.testing.assert_allclose(graded[var].values, binary[var].sel(estimator=names).values,
                                       rtol=0, atol=1e-12)


def test_eif_cells_with_within_cell_variances_reduce_to_the_bernoulli_cells():
    rng = np.random.default_rng(3)
    c = rng.integers(1, 60, (50, 4))
    s = rng.binomial(c, 0.4)
    u = rng.integers(0, 500, (50, 4))
    for row in range(50):  # sum of y^2 = sum of y for 0/1 outcomes
        ours = eif_graded_cells(c[row], s[row], s[row], u[row])
        ref = eif_cells(c[row], s[row], u[row])
        assert float(ours.estimate) == pytest.approx(float(ref.estimate), abs=1e-12)
        assert float(ours.se) == pytest.approx(float(ref.se), abs=1e-12)


def test_graded_fast_path_data_summary_and_saved_class():
    rng = np.random.default_rng(4)
    human, judged = ratings(2000, rng)
    ev = be.judge(human[:200], judged[:200], judged[200:], y_range=(1, 5), method="all")
    data = ev.tree["data"].to_dataset()
    se = float(ev.closed_form["sd"].sel(estimator="eif"))
    assert float(data["n_effective"]) == pytest.approx(np.var(human[:200]) / se**2, rel=1e-12)
    assert str(data["mu_model"].values) == "cell" and int(data["m"]) == 200
    # the judge predicts the ratings: EIF narrower than the human ratings alone
    assert se < float(ev.closed_form["sd"].sel(estimator="classical"))
    assert isinstance(be.load(ev.to_netcdf(_tmp_nc())), JudgeGraded)


def test_the_default_curve_needs_twenty_labels_per_cell():
    """Cells, bins, or the line when the labelled items are fewer than 20 per cell (the cells'
    intervals undercover there, the line's do not: docs/judge.md's table)."""
    rng = np.random.default_rng(8)
    judged = rng.integers(1, 6, 3000).astype(float)  # five judge values
    y = np.clip(judged + rng.normal(0, 1, judged.size), 1, 5)
    for m, expected in ((99, "linear"), (100, "cell")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ev = be.judge(y[:m], judged[:m], judged[m:], y_range=(1, 5))
        assert str(ev.tree["data"].to_dataset()["mu_model"].values) == expected
        assert any("fewer than 20 per cell" in str(w.message) for w in caught) == (m == 99)
    scores = judged + rng.normal(0, 0.3, judged.size)  # continuous: 10 bins need 200 labels
    for m, expected in ((199, "linear"), (200, "bins")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = be.judge(y[:m], scores[:m], scores[m:], y_range=(1, 5))
        assert str(ev.tree["data"].to_dataset()["mu_model"].values) == expected


def test_a_continuous_judge_on_few_labelled_items_gets_a_curve_not_empty_cells():
    # 15 labelled scores are 15 distinct values, but the 3,000 unlabelled ones are all new:
    # cells counted on the labelled items alone would leave every unlabelled item without one
    rng = np.random.default_rng(5)
    truth = rng.random(3015)
    score = np.clip(truth + rng.normal(0, 0.1, truth.size), 0, 1)
    y = (rng.random(truth.size) < truth).astype(float) * 0.8 + 0.1  # a bounded outcome
    ev = be.judge(y[:15], score[:15], score[15:], method="all")
    assert str(ev.tree["data"].to_dataset()["mu_model"].values) == "linear"
    sd = ev.closed_form["sd"]  # the judge helps: cells would have left the labelled mean
    assert float(sd.sel(estimator="eif")) < 0.8 * float(sd.sel(estimator="classical"))
    # asked for, such cells fall back to the labelled mean, whose error is one error shared by
    # every empty cell: the se is about the labelled mean's, not the sum of 3,000 small ones
    for outcome in (y, np.round(y)):  # graded and 0/1
        ev = be.judge(outcome[:15], score[:15], score[15:], method="all", mu_model="cell")
        sd = ev.closed_form["sd"]
        assert float(sd.sel(estimator="eif")) > 0.8 * float(sd.sel(estimator="classical"))


def _tmp_nc() -> str:
    import tempfile

    return tempfile.NamedTemporaryFile(suffix=".nc", delete=False).name


def test_ppi_ppi_pp_and_eif_cover_the_mean_rating():
    """R = 1,000 datasets of m = 100 labelled and 900 judge-only ratings: coverage of the 90 %
    intervals within 4 Monte-Carlo SEs (0.038) of 0.90; the EIF's cells, line and bins."""
    rng = np.random.default_rng(5)
    n_rep = 1000
    hits = {k: 0 for k in ("ppi", "ppi_pp", "eif", "eif_linear", "eif_bins")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n_rep):
            human, judged = ratings(1000, rng)
            args = (human[:100], judged[:100], judged[100:])
            cf = be.judge(*args, y_range=(1, 5), method="all", ci_prob=0.9).closed_form
            for k in ("ppi", "ppi_pp", "eif"):
                row = cf.sel(estimator=k)
                hits[k] += float(row["lower"]) <= TRUE_MEAN <= float(row["upper"])
            for mu_model in ("linear", "bins"):
                scores = judged + rng.normal(0, 0.01, 1000) if mu_model == "bins" else judged
                row = be.judge(human[:100], scores[:100], scores[100:], y_range=(1, 5),
                               mu_model=mu_model, ci_prob=0.9).closed_form
                hits[f"eif_{mu_model}"] += (float(row["lower"][0]) <= TRUE_MEAN
                                            <= float(row["upper"][0]))
    tolerance = 4 * np.sqrt(0.9 * 0.1 / n_rep)
    for name, k in hits.items():
        assert abs(k / n_rep - 0.9) <= tolerance, (name, k / n_rep)


@pytest.fixture(scope="module")
def ordinal_fit():
    rng = np.random.default_rng(6)
    human, judged = ratings(3300, rng)
    return be.judge(human[:300], judged[:300], judged[300:], y_range=(1, 5), method="pymc",
                    random_seed=7)


@pytest.mark.xdist_group("judge_pymc")
def test_ordinal_posterior_agrees_with_the_eif(ordinal_fit):
    out = ordinal_fit.check()
    assert out.attrs["passed"], out
    post = ordinal_fit.tree["posterior"].to_dataset()
    assert {"theta", "theta_finite", "cell_mean", "level_probs"} <= set(post.data_vars)
    assert post["level_probs"].sizes == {"chain": 2, "draw": 1000, "judge": 5, "level": 5}
    # the finite-population mean: the observed ratings and drawn ones, on the scale
    finite = post["theta_finite"].values
    assert 1 < finite.min() and finite.max() < 5
    assert abs(finite.mean() - float(post["theta"].mean())) < 2 * float(post["theta"].std())


@pytest.mark.xdist_group("judge_pymc")
def test_ordinal_check_fails_when_either_side_is_perturbed(ordinal_fit):
    tree = ordinal_fit.tree.copy(deep=True)
    eif = tree["closed_form"].to_dataset()
    se = float(eif["sd"].sel(estimator="eif"))
    tree["closed_form"] = xr.DataTree(eif.assign(mean=eif["mean"] + 3 * se))
    shifted = JudgeGraded(tree).check()
    assert not shifted.attrs["passed"] and not shifted.loc["mean", "passed"]
    tree = ordinal_fit.tree.copy(deep=True)
    post = tree["posterior"].to_dataset()
    theta = post["theta"]
    tree["posterior"] = xr.DataTree(post.assign(theta=theta.mean() + 1.3 * (theta - theta.mean())))
    widened = JudgeGraded(tree).check()
    assert not widened.attrs["passed"] and not widened.loc["sd_ratio", "passed"]
