"""Missing not at random: the shifted Gaussian imputation (mnar=), exact and from draws, against
brute-force Monte Carlo, the missing-at-random answer at delta = 0, the mixture over the prior of
delta, a simulation whose true mechanism is the shift, and bad input."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
from bayeval.methods.mvu.mnar import MNARGaussianImputer, delta_sensitivity
from tests.methods.mvu.four_features import BINARY, COV, IMPUTER, THREE, rows


def brute_force_votes(clf, x, mnar, n, seed):
    """Vote frequencies (rows, K) of n imputations per row drawn as the model says: the
    missing-at-random conditional Gaussian, then every missing feature moved by delta times its
    conditional sd, one delta ~ N(mean, sd^2) per imputation."""
    rng = np.random.default_rng(seed)
    m = np.isnan(x)
    x_hat, cov = IMPUTER.conditional(x, m)
    out = []
    for r in range(len(x)):
        idx = np.flatnonzero(m[r])
        sd = np.sqrt(np.diag(cov[r])[idx])
        delta = mnar[0] + mnar[1] * rng.standard_normal(n)
        draws = np.repeat(x_hat[r][None], n, axis=0)
        draws[:, idx] = (rng.multivariate_normal(x_hat[r, idx], cov[r][np.ix_(idx, idx)], size=n)
                         + delta[:, None] * sd)
        votes = clf.predict_proba(draws).argmax(1)
        out.append(np.bincount(votes, minlength=clf.predict_proba(draws[:1]).shape[1]) / n)
    return np.array(out)


@pytest.mark.parametrize("clf", [BINARY, THREE], ids=["binary", "three_classes"])
def test_exact_c_hard_under_the_shift_matches_monte_carlo(clf):
    x = rows(9, 0)
    mnar, n = (0.7, 0.4), 20000
    ev = mvu(clf, x, imputer=IMPUTER, mnar=mnar, random_seed=1)
    votes = brute_force_votes(clf, x, mnar, n, seed=2)
    y, c = ev.closed_form["y_hard"].values, ev.closed_form["c_hard"].values
    freq = votes[np.arange(len(x)), y]
    se = np.sqrt(c * (1 - c) / n)
    assert (np.abs(freq - c) <= 4 * se + 2e-4).all()  # 2e-4: Genz's QMC error (3 classes)
    assert (votes.argmax(1) == y)[np.abs(c - 0.5) > 4 * se.max()].all()
    # the shift matters here: missing at random is more than 4 SE away in some rows
    mar = ev.closed_form["c_hard_mar"].values
    assert (np.abs(freq - mar) > 4 * se + 2e-4).any()


def test_draws_path_of_an_unrecognised_classifier_matches_the_exact_path():
    x = rows(6, 3)
    mnar = (-0.8, 0.6)
    exact = mvu(BINARY, x, imputer=IMPUTER, mnar=mnar).closed_form
    drawn = mvu(lambda z: BINARY.predict_proba(z), x, imputer=IMPUTER, mnar=mnar, draws=4000,
                random_seed=4).closed_form
    se = np.maximum(drawn["c_hard_se"].values, np.sqrt(0.25 / 4000) / 10)
    assert (np.abs(drawn["c_hard"].values - exact["c_hard"].values) <= 4 * se).all()
    assert (np.abs(drawn["c_hard_mar"].values - exact["c_hard_mar"].values)
            <= 4 * np.maximum(drawn["c_hard_se"].values, 1e-3)).all()


@pytest.mark.parametrize("mnar", [0.0, (0.0, 0.0)])
def test_no_shift_is_missing_at_random_to_1e12(mnar):
    x = rows(8, 5)
    for clf, kwargs in ((BINARY, {}), (THREE, {"random_seed": 6}),
                        (lambda z: BINARY.predict_proba(z), {"random_seed": 7, "draws": 300})):
        mar = mvu(clf, x, imputer=IMPUTER, **kwargs).closed_form
        shifted = mvu(clf, x, imputer=IMPUTER, mnar=mnar, **kwargs).closed_form
        for var in ("c_hard", "c_soft", "mean", "sd", "lower", "upper", "proba"):
            np.testing.assert_allclose(shifted[var].values, mar[var].values, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(shifted["y_hard"].values, mar["y_hard"].values)
        np.testing.assert_array_equal(shifted["c_hard_mar"].values, mar["c_hard"].values)


def test_the_prior_on_delta_is_the_average_over_delta():
    """tau > 0: P(V = 1) of the integrated law equals the Gauss-Hermite average over delta of
    the fixed-delta exact P(V = 1) (and so does E Phi)."""
    x = rows(12, 8)
    m = np.isnan(x)
    delta0, tau = 0.4, 0.9
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    p_fixed, e_fixed = [], []
    for z in nodes:
        mean, var = MNARGaussianImputer.shifting(IMPUTER, delta0 + tau * z).logits(
            x, m, BINARY.coef_, BINARY.intercept_)
        p_fixed.append(special.ndtr(mean[:, 0] / np.sqrt(var[:, 0, 0])))
        e_fixed.append(mvu(BINARY, x, imputer=IMPUTER, mnar=delta0 + tau * z)
                       .closed_form["proba"].values[:, 1])
    ev = mvu(BINARY, x, imputer=IMPUTER, mnar=(delta0, tau)).closed_form
    p1 = np.where(ev["y_hard"].values == 1, ev["c_hard"].values, 1 - ev["c_hard"].values)
    np.testing.assert_allclose(p1, weights @ np.array(p_fixed), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ev["proba"].values[:, 1], weights @ np.array(e_fixed), rtol=0,
                               atol=1e-8)


def test_mnar_c_hard_is_calibrated_when_the_mechanism_is_the_shift():
    """The paper's Gaussian and pi(x) = sigmoid(x1 + x2 - 1); x1 missing. The true mechanism is
    the pattern mixture: x2 from its marginal, then x1 from its conditional moved by delta times
    its conditional sd, delta ~ N(1, 0.5^2) per row. The decisions on the complete rows agree with
    y_hard as often as the MNAR-aware c_hard says (within 4 SE of the sum of Bernoulli(c)
    indicators); the missing-at-random c_hard is off by far more."""
    rng = np.random.default_rng(9)
    n, delta0, tau = 3000, 1.0, 0.5
    cov = np.array([[0.3, 0.383406], [0.383406, 1.0]])
    x2 = rng.normal(0, 1, n)
    cond_mean, cond_sd = cov[0, 1] * x2, np.sqrt(cov[0, 0] - cov[0, 1] ** 2)
    x1 = cond_mean + cond_sd * (rng.standard_normal(n) + delta0 + tau * rng.standard_normal(n))
    clf = LinearClassifier([[1.0, 1.0]], [-1.0])
    full = clf.predict_proba(np.column_stack([x1, x2])).argmax(1)
    x = np.column_stack([np.full(n, np.nan), x2])
    ev = mvu(clf, x, imputer=GaussianImputer([0.0, 0.0], cov), mnar=(delta0, tau)).closed_form
    for y, c, calibrated in ((ev["y_hard"].values, ev["c_hard"].values, True),
                             (ev["y_hard_mar"].values, ev["c_hard_mar"].values, False)):
        gap = abs(np.sum((y == full) - c))
        assert (gap <= 4 * np.sqrt(np.sum(c * (1 - c)))) == calibrated


def test_delta_sensitivity_columns_are_runs_at_fixed_delta():
    x = rows(6, 10)
    ev = mvu(BINARY, x, imputer=IMPUTER, mnar=(0.5, 1.0))
    tab = delta_sensitivity(ev)
    expected = np.round(0.5 + 1.0 * np.array([-1.959964, -0.67449, 0.0, 0.67449, 1.959964]), 4)
    np.testing.assert_allclose(tab.columns.values, np.unique(np.r_[0.0, expected]), atol=1e-4)
    for d in tab.columns:
        fixed = mvu(BINARY, x, imputer=IMPUTER, mnar=float(d)).closed_form
        np.testing.assert_allclose(tab[d].values, fixed["c_hard"].values, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(tab.attrs["y_hard"][d].values, fixed["y_hard"].values)
    np.testing.assert_allclose(tab[0.0].values, ev.closed_form["c_hard_mar"].values, atol=1e-12)


def test_decide_reports_the_missing_at_random_rule_beside():
    x = rows(10, 11)
    ev = mvu(BINARY, x, imputer=IMPUTER, mnar=(1.5, 0.3))
    plan = ev.decide(0.9)
    np.testing.assert_array_equal(plan["collect_mar"].values,
                                  ev.closed_form["c_hard_mar"].values < 0.9)
    assert "at random" in plan.caption


@pytest.mark.parametrize("mnar", ["big", (1.0, -0.5), (1.0, 2.0, 3.0), np.nan, [[1.0]]])
def test_bad_mnar_is_refused(mnar):
    with pytest.raises(ValueError, match="mnar must be"):
        mvu(BINARY, rows(3, 0), imputer=IMPUTER, mnar=mnar)


def test_mnar_needs_the_gaussian_imputer_and_a_fast_path():
    train = np.random.default_rng(0).multivariate_normal(np.zeros(4), COV, size=200)
    for imputer in ("mean", "zero", "conditional_mean", "dmv"):
        with pytest.raises(ValueError, match="mnar= shifts the conditional Gaussian"):
            mvu(BINARY, rows(3, 0), imputer=imputer, train=train, mnar=0.5)

    class Sampler:
        def sample(self, X, mask, draws, random_seed=None):
            return np.repeat(np.nan_to_num(np.asarray(X))[:, None], draws, axis=1)

    with pytest.raises(ValueError, match="Sampler"):
        mvu(BINARY, rows(3, 0), imputer=Sampler(), mnar=0.5)
    with pytest.raises(ValueError, match="not part of the generative models"):
        mvu(BINARY, rows(3, 0), train=train, method="pymc", mnar=0.5)


def test_delta_sensitivity_bad_input():
    train = np.random.default_rng(0).multivariate_normal(np.zeros(4), COV, size=200)
    ev = mvu(BINARY, rows(3, 0), imputer="mean", train=train)
    with pytest.raises(ValueError, match="needs the classifier and the Gaussian imputer"):
        delta_sensitivity(ev)
    ev = mvu(BINARY, rows(3, 0), imputer=IMPUTER, mnar=0.5)
    with pytest.raises(ValueError, match="deltas must be finite"):
        delta_sensitivity(ev, [0.0, np.inf])


# ------------------------------------------------------------------------------ per feature
def brute_force_feature_votes(clf, x, mean, sd, n, seed):
    """As brute_force_votes with feature i moved by (mean_i + sd_i eps) times its conditional
    sd, one eps ~ N(0, 1) per imputation shared by the features."""
    rng = np.random.default_rng(seed)
    m = np.isnan(x)
    x_hat, cov = IMPUTER.conditional(x, m)
    k = clf.predict_proba(np.zeros((1, 4))).shape[1]
    out = []
    for r in range(len(x)):
        idx = np.flatnonzero(m[r])
        eps = rng.standard_normal(n)
        draws = np.repeat(x_hat[r][None], n, axis=0)
        draws[:, idx] = (rng.multivariate_normal(x_hat[r, idx], cov[r][np.ix_(idx, idx)], size=n)
                         + (mean[idx] + sd[idx] * eps[:, None]) * np.sqrt(np.diag(cov[r])[idx]))
        out.append(np.bincount(clf.predict_proba(draws).argmax(1), minlength=k) / n)
    return np.array(out)


#: features 0 and 2 shifted (0 with a prior), 1 and 3 at random
BY_FEATURE = {"a": (0.9, 0.6), "c": -1.2}
MEAN, SD = np.array([0.9, 0.0, -1.2, 0.0]), np.array([0.6, 0.0, 0.0, 0.0])


def frame(x):
    return pd.DataFrame(x, columns=list("abcd"), index=[f"r{i}" for i in range(len(x))])


@pytest.mark.parametrize("clf", [BINARY, THREE], ids=["binary", "three_classes"])
def test_per_feature_exact_c_hard_matches_shifting_the_revealed_values(clf):
    x = rows(9, 12)
    n = 20000
    ev = mvu(clf, frame(x), imputer=IMPUTER, mnar=BY_FEATURE, random_seed=1)
    votes = brute_force_feature_votes(clf, x, MEAN, SD, n, seed=2)
    cf = ev.closed_form
    y, c = cf["y_hard"].values, cf["c_hard"].values
    se = np.sqrt(c * (1 - c) / n)
    assert (np.abs(votes[np.arange(len(x)), y] - c) <= 4 * se + 2e-4).all()
    # the shifts matter: at random, and with every feature shifted, c_hard is off in some rows
    assert (np.abs(votes[np.arange(len(x)), y] - cf["c_hard_mar"].values) > 4 * se + 2e-4).any()
    joint = mvu(clf, x, imputer=IMPUTER, mnar=(0.9, 0.6), random_seed=1).closed_form["c_hard"]
    assert (np.abs(votes[np.arange(len(x)), y] - joint.values) > 4 * se + 2e-4).any()
    assert ev.meta["mnar"] == {"a": [0.9, 0.6], "c": [-1.2, 0.0]}
    assert "a: N(0.9, 0.6^2)" in ev.meta["description"]


def test_per_feature_pushforward_matches_shifting_the_revealed_values():
    """An unrecognised classifier: quasi-Monte-Carlo imputations of the shifted law; errors of
    both sides (the imputations' spread over random shifts, the brute force's binomial)."""
    x = rows(8, 13)
    n = 20000
    ev = mvu(lambda z: BINARY.predict_proba(z), x, imputer=IMPUTER,
             mnar={0: (0.9, 0.6), 2: -1.2}, draws=4000, random_seed=3)
    votes = brute_force_feature_votes(BINARY, x, MEAN, SD, n, seed=4)
    cf = ev.closed_form
    y, c = cf["y_hard"].values, cf["c_hard"].values
    truth = votes[np.arange(len(x)), y]
    se = np.sqrt(cf["c_hard_se"].values ** 2 + truth * (1 - truth) / n)
    assert (np.abs(truth - c) <= 4 * se + 1e-12).all()
    assert (np.abs(truth - cf["c_hard_mar"].values) > 4 * se).any()


@pytest.mark.parametrize("mnar", [0.7, (0.7, 0.4), (-0.3, 1.1)])
def test_scalar_form_is_the_mapping_naming_every_feature_alike(mnar):
    x = rows(8, 14)
    for clf, kwargs in ((BINARY, {}), (THREE, {"random_seed": 5}),
                        (lambda z: THREE.predict_proba(z), {"random_seed": 6, "draws": 300})):
        scalar = mvu(clf, frame(x), imputer=IMPUTER, mnar=mnar, **kwargs)
        mapped = mvu(clf, frame(x), imputer=IMPUTER, mnar=dict.fromkeys("abcd", mnar), **kwargs)
        by_position = mvu(clf, x, imputer=IMPUTER, mnar=dict.fromkeys(range(4), mnar), **kwargs)
        for other in (mapped.closed_form, by_position.closed_form):
            for var in ("c_hard", "c_hard_mar", "c_soft", "mean", "sd", "lower", "upper",
                        "proba"):
                np.testing.assert_allclose(other[var].values, scalar.closed_form[var].values,
                                           rtol=0, atol=1e-12)
            np.testing.assert_array_equal(other["y_hard"].values,
                                          scalar.closed_form["y_hard"].values)


def test_a_series_aligns_on_feature_names():
    x = rows(6, 15)
    by_dict = mvu(BINARY, frame(x), imputer=IMPUTER, mnar={"d": 0.8, "b": -0.4}).closed_form
    series = pd.Series([-0.4, 0.8], index=["b", "d"])
    by_series = mvu(BINARY, frame(x), imputer=IMPUTER, mnar=series).closed_form
    np.testing.assert_array_equal(by_series["c_hard"].values, by_dict["c_hard"].values)


def test_delta_sensitivity_per_feature_columns_are_runs_shifting_that_feature():
    x = rows(7, 16)
    ev = mvu(BINARY, frame(x), imputer=IMPUTER, mnar=BY_FEATURE)
    tab = delta_sensitivity(ev)
    assert tab.columns.names == ["feature", "delta"]
    assert sorted(set(tab.columns.get_level_values("feature"))) == ["a", "c"]
    quantiles = np.round(0.9 + 0.6 * np.array([-1.959964, -0.67449, 0.0, 0.67449, 1.959964]), 4)
    np.testing.assert_allclose(tab["a"].columns.values, np.unique(np.r_[0.0, quantiles]),
                               atol=1e-4)
    np.testing.assert_allclose(tab["c"].columns.values, [-1.2, 0.0])
    for feature, d in tab.columns:
        fixed = mvu(BINARY, frame(x), imputer=IMPUTER, mnar={feature: d}).closed_form
        np.testing.assert_allclose(tab[(feature, d)].values, fixed["c_hard"].values, rtol=0,
                                   atol=1e-12)
        np.testing.assert_array_equal(tab.attrs["y_hard"][(feature, d)].values,
                                      fixed["y_hard"].values)
    np.testing.assert_allclose(tab[("c", 0.0)].values, ev.closed_form["c_hard_mar"].values,
                               atol=1e-12)
    # any feature on request, also after a scalar mnar=, at given shifts
    scalar = mvu(BINARY, frame(x), imputer=IMPUTER, mnar=0.5)
    tab = delta_sensitivity(scalar, [-1.0, 1.0], features=["b", 3])
    assert tab.columns.tolist() == [("b", -1.0), ("b", 1.0), ("d", -1.0), ("d", 1.0)]
    fixed = mvu(BINARY, frame(x), imputer=IMPUTER, mnar={"d": 1.0}).closed_form
    np.testing.assert_allclose(tab[("d", 1.0)].values, fixed["c_hard"].values, atol=1e-12)


@pytest.mark.parametrize("mnar, match", [
    ({"zz": 1.0}, "mnar's keys must name features: a name among"),
    ({7: 1.0}, "mnar's keys must name features"),
    ({True: 1.0}, "mnar's keys must name features"),
    ({0: 1.0, "a": 2.0}, "mnar names feature 'a' twice"),
    ({"b": (1.0, -0.5)}, r"mnar\['b'\]: mnar must be"),
    ({"b": "big"}, r"mnar\['b'\]"),
])
def test_bad_per_feature_mnar_is_refused(mnar, match):
    with pytest.raises(ValueError, match=match):
        mvu(BINARY, frame(rows(3, 0)), imputer=IMPUTER, mnar=mnar)


def test_delta_sensitivity_refuses_unknown_features():
    ev = mvu(BINARY, frame(rows(3, 0)), imputer=IMPUTER, mnar=0.5)
    with pytest.raises(ValueError, match="features must name features"):
        delta_sensitivity(ev, features=["zz"])
