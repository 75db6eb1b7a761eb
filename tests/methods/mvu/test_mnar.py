"""Missing not at random: the shifted Gaussian imputation (mnar=), exact and from draws, against
brute-force Monte Carlo, the missing-at-random answer at delta = 0, the mixture over the prior of
delta, a simulation whose true mechanism is the shift, and bad input."""

import numpy as np
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
