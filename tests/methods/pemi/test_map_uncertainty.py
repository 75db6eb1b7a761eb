"""PEMI's default integrates over the calibration map's posterior; the default falls back to
the exact or imputation law where PEMI-Gauss is poor; the default calibrator; check() of
method="both" against a law computed without the NUTS draws."""

import inspect
import warnings

import numpy as np
import pytest
import xarray as xr

from bayeval import calibration
from bayeval.calibration_map import map_posterior as engine_posterior
from bayeval.check import compare
from bayeval.datasets import breast_cancer, calibrated_scores, mask_labels
from bayeval.evaluation import SAMPLE_DIMS
from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.fast import DEFAULT, Rows, law, merge_laws, moments
from bayeval.methods.pemi.mixture import MASS_TOL, Components, exact_mixture
from bayeval.methods.pemi.models import mixture_closed_form, predictive

NAN = np.nan
CM = ("precision", "recall", "accuracy", "f1")


def masked(n, p_m, seed):
    d = calibrated_scores(n, random_seed=seed)
    return d.scores, mask_labels(d.labels, p_m=p_m, random_seed=seed + 1).labels


def engine_draws(scores, labels, seed, name="platt"):
    """The map's draws as pemi draws them: the default calibrator fitted on the labelled rows,
    the engine's posterior on the stream [seed, 5]."""
    known = ~np.isnan(labels)
    fitted = calibration.make_calibrator(name).fit(scores[known], labels[known])
    post = engine_posterior(fitted, scores[known], labels[known],
                            random_seed=np.random.default_rng([seed, 5]))
    return fitted, post.predict(scores)


# --------------------------------------------------------------- the map's posterior, default
def test_default_is_the_mixture_of_pemi_over_the_engine_draws_of_the_map():
    """Mean and sd of the normal mixture are the law of total variance over the 400 draws of
    the engine, each draw's PEMI-Gauss moments computed by the one-p code path (exact for
    accuracy and precision); the interval solves the mixture's CDF."""
    scores, labels = masked(300, 0.6, 0)
    ev = pemi(scores, labels, metrics=("accuracy", "precision", "roc_auc"), method="gauss",
              random_seed=7)
    _, p = engine_draws(scores, labels, 7)
    rows = Rows(scores, (scores >= 0.5).astype(np.int8), labels)
    cf = ev.closed_form
    assert int(ev.tree["data"]["map_draws"]) == 400 and ev.meta["calibration_uncertainty"]
    for metric in ("accuracy", "precision", "roc_auc"):
        mv = np.array([moments(rows, q, metric, DEFAULT) for q in p])
        mean, var = mv[:, 0].mean(), mv[:, 1].mean() + mv[:, 0].var()
        row = cf.sel(metric=metric)
        assert float(row["mean"]) == pytest.approx(mean, abs=1e-12)
        assert float(row["sd"]) == pytest.approx(np.sqrt(var), abs=1e-12)
        from scipy import stats
        at = [np.mean(stats.norm.cdf((float(row[end]) - mv[:, 0]) / np.sqrt(mv[:, 1])))
              for end in ("lower", "upper")]
        np.testing.assert_allclose(at, [0.025, 0.975], atol=1e-9)


def test_default_exact_mixture_is_the_law_of_imputations_over_the_map():
    """The exact mixed PMF (one matrix product of Poisson-binomial PMFs) against 40,000
    completions, completion b drawn with map draw b mod 400 (the same draws: same seed):
    compare()'s 4-sigma tests of mean, variance, KS and interval mass."""
    scores, labels = masked(80, 0.5, 2)
    exact = pemi(scores, labels, metrics=CM, method="exact", random_seed=4).closed_form
    draws = pemi(scores, labels, metrics=CM, method="impute", draws=40_000,
                 random_seed=4).draws
    for metric in CM:
        ex = exact.sel(metric=metric)
        keep = np.isfinite(ex["pmf_prob"].values)
        rows = compare(draws.sel(metric=metric).values, mean=float(ex["mean"]),
                       sd=float(ex["sd"]), interval=(float(ex["lower"]), float(ex["upper"])),
                       interval_mass=float(ex["interval_mass"]),
                       pmf=(ex["pmf_value"].values[keep], ex["pmf_prob"].values[keep]),
                       iid=True)
        assert rows["passed"].all(), (metric, rows)


def test_exact_mixture_equals_the_mixture_of_the_engine_laws():
    scores, labels = masked(60, 0.5, 3)
    rows = Rows(scores, (scores >= 0.5).astype(np.int8), labels)
    rng = np.random.default_rng(0)
    p = rng.random((7, rows.m))
    w = rng.dirichlet(np.ones(7))
    ours = exact_mixture(rows, Components(w, lambda i: p[i]), (*CM, "mcc"), DEFAULT)
    for metric, d in ours.items():
        fulls = [np.zeros(rows.n) for _ in range(7)]
        for full, q in zip(fulls, p, strict=True):
            full[rows.order] = q
        ref = merge_laws(metric, [law(rows, f, metric, DEFAULT) for f in fulls], w, 0.0)
        np.testing.assert_allclose(d.values, ref.values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.probs, ref.probs, rtol=0, atol=1e-12)
        assert d.p_undefined == pytest.approx(ref.p_undefined, abs=1e-12)


def test_plug_in_is_conditional_on_the_map_and_narrower():
    scores, labels = masked(400, 0.7, 5)
    known = ~np.isnan(labels)
    fitted = calibration.make_calibrator("platt").fit(scores[known], labels[known])
    with pytest.warns(UserWarning, match="conditional on the fitted calibration map"):
        plug_in = pemi(scores, labels, calibration_uncertainty=False)
    assert "conditional on the fitted calibration map" in plug_in.meta["description"]
    assert not plug_in.meta["calibration_uncertainty"]
    assert plug_in.closed_form.identical(pemi(scores, labels,
                                              p=fitted.predict(scores)).closed_form)
    default = pemi(scores, labels, random_seed=1)
    assert "integrated over 400 draws of its posterior" in default.meta["description"]
    assert not any("conditional" in note for note in default.meta["warnings"])
    width = default.closed_form["upper"] - default.closed_form["lower"]
    assert (width > plug_in.closed_form["upper"] - plug_in.closed_form["lower"]).all()


@pytest.mark.parametrize("kwargs", [dict(p="prevalence"), dict(p="half"),
                                    dict(calibration="none"), dict(p=np.full(400, 0.3))])
def test_given_p_presets_and_the_identity_have_no_map_uncertainty(kwargs):
    scores, labels = masked(400, 0.7, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # and no note about the map
        ev = pemi(scores, labels, metrics="accuracy", **kwargs)
    assert int(ev.tree["data"]["map_draws"]) == 0
    assert ev.closed_form.identical(pemi(scores, labels, metrics="accuracy",
                                         calibration_uncertainty=False, **kwargs).closed_form)


# ------------------------------------------------------------- a poor normal approximation
def few_missing():
    """20 predicted positives, 16 labelled positive, 4 missing with p = 1/2."""
    scores = np.full(20, 0.9)
    return scores, np.r_[np.ones(16), np.full(4, NAN)], np.full(20, 0.5)


def test_four_missing_labels_give_the_exact_law_by_default():
    scores, labels, p = few_missing()
    with pytest.warns(UserWarning, match="holds 0.875 of the exact law"):
        gauss = pemi(scores, labels, p=p, metrics="precision", method="gauss").closed_form
    np.testing.assert_allclose([float(gauss["lower"][0]), float(gauss["upper"][0])],
                               [0.802, 0.998], atol=5e-4)
    assert float(gauss["interval_mass"][0]) == pytest.approx(0.875, abs=1e-12)  # 14/16
    with pytest.warns(UserWarning, match="exact law of the metric is reported instead"):
        ev = pemi(scores, labels, p=p, metrics="precision")
    row = ev.closed_form.sel(metric="precision")
    assert (float(row["lower"]), float(row["upper"])) == (0.8, 1.0)
    assert float(row["interval_mass"]) == 1.0
    assert any("normal approximation is poor" in note for note in ev.meta["warnings"])


@pytest.mark.parametrize(("q", "lower"), [(0.02, 20 / 23), (1e-4, 20 / 21)])
def test_intervals_stay_in_range_and_have_width_unless_determined(q, lower):
    """Recall of 20 labelled positives (all predicted positive) and 50 missing rows predicted
    negative with p = q: PEMI-Gauss's interval leaves [0, 1]; the default's is the exact law's
    (with p = 1e-4 its equal-tailed interval is [1, 1] though the law is not a point mass:
    it takes in 20/21). With p = 0 recall is determined: zero width."""
    scores = np.r_[np.full(20, 0.9), np.full(50, 0.3)]
    labels = np.r_[np.ones(20), np.full(50, NAN)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        gauss = pemi(scores, labels, p=np.full(70, q), metrics="recall", method="gauss")
        ev = pemi(scores, labels, p=np.full(70, q), metrics="recall")
    assert float(gauss.closed_form["upper"][0]) == 1.0  # clipped
    row = ev.closed_form.sel(metric="recall")
    assert float(row["lower"]) == pytest.approx(lower, abs=1e-12) and float(row["upper"]) == 1.0
    exact = pemi(scores, labels, p=np.full(70, q), metrics="recall", method="exact")
    d = exact.closed_form.sel(metric="recall")
    keep = np.isfinite(d["pmf_prob"].values)
    values, probs = d["pmf_value"].values[keep], d["pmf_prob"].values[keep]
    inside = (values >= float(row["lower"])) & (values <= float(row["upper"]))
    assert float(row["interval_mass"]) == pytest.approx(probs[inside].sum(), abs=1e-12)
    assert float(row["interval_mass"]) >= 0.95
    determined = pemi(scores, labels, p=np.zeros(70), metrics="recall").closed_form
    assert float(determined["lower"][0]) == float(determined["upper"][0]) == 1.0


def test_roc_auc_falls_back_to_the_imputation_law():
    scores = np.linspace(0.05, 0.95, 12)
    labels = (scores > 0.5).astype(float)
    labels[[5, 6]] = NAN
    p = np.full(12, 0.5)
    with pytest.warns(UserWarning, match="law of PEMI's imputations is reported instead"):
        ev = pemi(scores, labels, p=p, metrics="roc_auc", random_seed=0)
    row = ev.closed_form.sel(metric="roc_auc")
    # the four completions of the two middle labels give AUC 1, 35/36 (twice) or 34/36... as
    # enumerated by the imputations: every value lies in [0, 1]
    assert 0.0 <= float(row["lower"]) <= float(row["upper"]) == 1.0
    assert float(row["interval_mass"]) >= 0.95


def test_honest_mass_of_the_normal_interval_when_it_is_good():
    scores, labels = masked(2000, 0.3, 8)
    cf = pemi(scores, labels, metrics=CM, method="gauss", random_seed=0).closed_form
    exact = pemi(scores, labels, metrics=CM, method="exact", random_seed=0).closed_form
    for metric in CM:  # the exact mass, not the nominal level
        mass = float(cf["interval_mass"].sel(metric=metric))
        assert abs(mass - 0.95) <= MASS_TOL and mass != 0.95
        assert float(exact["sd"].sel(metric=metric)) > 0


# ----------------------------------------------------------------------- default calibrator
def test_scaling_binning_is_biased_under_mar_given_the_score_and_platt_is_not():
    """Missingness increases with the score (MAR given the score); Platt's family holds the
    truth. Scaling-binning gives a bin's missing rows the mean Platt output of its *labelled*
    rows, which sit lower in the bin: the missing rows' mean probability is biased down by a
    bin-width effect that does not shrink with n. With 10^6 rows the Platt fit's own error on
    that mean is about sqrt(p(1-p)/k)~0.0007 (k ~ 5e5 labelled rows): 4 sd = 0.003."""
    rng = np.random.default_rng(11)
    n = 1_000_000
    p = rng.beta(2, 4, n)
    s = 1 / (1 + np.exp(-(2.5 * np.log(p / (1 - p)) + 0.8)))
    y = (rng.random(n) < p).astype(float)
    missing = rng.random(n) < 1 / (1 + np.exp(-(3 * s - 2)))
    err = {}
    for name in ("platt", "scaling_binning"):
        fitted = calibration.make_calibrator(name).fit(s[~missing], y[~missing])
        positive = missing & (s >= 0.5)
        err[name] = float(np.mean(fitted.predict(s[positive]) - p[positive]))
    assert abs(err["platt"]) <= 0.003, err
    assert err["scaling_binning"] < -0.004, err
    assert inspect.signature(pemi).parameters["calibration"].default == "platt"


# ------------------------------------------------------------------------- check() of "both"
def test_check_of_both_fails_when_the_posterior_draws_are_moved():
    """check() compares the NUTS predictive draws with M1's predictive law on the quadrature
    grid, which no NUTS draw enters: the draws pass, and the same draws with the intercept
    moved by +1 fail."""
    d = breast_cancer(random_seed=0)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=1).labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = pemi(d.scores, labels, method="both", random_seed=3)
    assert ev.check().attrs["passed"], ev.check()
    post = ev.tree["posterior"].to_dataset()
    rows = Rows(d.scores, d.y_pred, labels)
    metrics = tuple(ev.closed_form["metric"].values)
    moved = predictive(rows, metrics, post["a"].values + 1.0, post["b"].values, 0.0,
                       random_seed=4)
    value = xr.DataArray(moved.reshape(*post["a"].shape, len(metrics)),
                         dims=(*SAMPLE_DIMS, "metric"), coords={"metric": list(metrics)})
    ev.tree["posterior_predictive"] = xr.DataTree(xr.Dataset({"value": value}))
    check = ev.check()
    assert not check.attrs["passed"]
    assert not check.loc["precision"]["passed"].all()


def test_mixture_closed_form_of_many_draws_is_the_per_draw_mixture():
    """The vectorised closed form equals the mixture of the engine's per-draw laws (exact
    PMFs) and of per-draw PEMI-Gauss moments (ROC-AUC), with weights."""
    scores, labels = masked(120, 0.4, 9)
    rows = Rows(scores, (scores >= 0.5).astype(np.int8), labels)
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 0.3, 5), np.exp(rng.normal(0, 0.2, 5))
    w = rng.dirichlet(np.ones(5))
    cf = mixture_closed_form(rows, ("f1", "roc_auc"), a, b, 0.0, weights=w, ci_prob=0.9,
                             ci_kind="eti")
    x = np.log(scores / (1 - scores))
    ps = [1 / (1 + np.exp(-(ai + bi * x))) for ai, bi in zip(a, b, strict=True)]
    ref = merge_laws("f1", [law(rows, q, "f1", DEFAULT) for q in ps], w, 0.0)
    assert float(cf["mean"].sel(metric="f1")) == pytest.approx(ref.mean, abs=1e-12)
    assert float(cf["sd"].sel(metric="f1")) == pytest.approx(ref.sd, abs=1e-12)
    mv = np.array([moments(rows, q, "roc_auc", DEFAULT) for q in ps])
    mean = w @ mv[:, 0]
    assert float(cf["mean"].sel(metric="roc_auc")) == pytest.approx(mean, abs=1e-12)
    var = w @ mv[:, 1] + w @ (mv[:, 0] - mean) ** 2
    assert float(cf["sd"].sel(metric="roc_auc")) == pytest.approx(np.sqrt(var), abs=1e-12)


def test_exact_mixture_sums_components_in_blocks_whose_pmf_windows_differ(monkeypatch):
    """Components summed a few at a time (as for many draws of a long test set) give the law of
    all at once, though the Poisson-binomial windows of the blocks end at different counts
    (small probabilities: the PMFs vanish long before the number of rows)."""
    from bayeval.methods.pemi import mixture

    scores, labels = masked(3000, 0.8, 6)
    rows = Rows(scores, (scores >= 0.5).astype(np.int8), labels)
    rng = np.random.default_rng(1)
    p = rng.uniform(0.0, 0.02, (12, rows.m)) * rng.uniform(0.2, 5.0, (12, 1))
    w = rng.dirichlet(np.ones(12))
    whole = exact_mixture(rows, Components(w, lambda i: p[i]), CM, DEFAULT)
    monkeypatch.setattr(mixture, "CELLS", 3 * rows.m)  # blocks of three components
    blocks = exact_mixture(rows, Components(w, lambda i: p[i]), CM, DEFAULT)
    for metric in CM:
        np.testing.assert_allclose(blocks[metric].probs, whole[metric].probs, rtol=0,
                                   atol=1e-14)
