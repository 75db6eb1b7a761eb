"""MVU estimators: conditional Gaussian, Dirichlet fits, heuristics, DMV."""

import numpy as np
import pytest
from scipy import optimize, special
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bayeval.methods.mvu.estimators import (
    CLIP,
    DMV,
    GaussianImputer,
    LinearClassifier,
    alpha_max_variance,
    alpha_scale_probability,
    as_classifier,
    dirichlet_mle,
    dirichlet_moments,
    linear_parts,
    mcar_mask,
    sensor_groups,
)
from bayeval.methods.mvu.fast import hard_confidence

SIGMA = np.array([[0.3, 0.383406], [0.383406, 1.0]])  # the paper's synthetic Gaussian


@pytest.fixture(scope="module")
def gaussian():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 5))
    return GaussianImputer(rng.normal(size=5), a @ a.T + np.eye(5)), rng


def textbook(mean, cov, x, miss):
    o = ~miss
    gain = cov[np.ix_(miss, o)] @ np.linalg.inv(cov[np.ix_(o, o)])
    return (mean[miss] + gain @ (x[o] - mean[o]),
            cov[np.ix_(miss, miss)] - gain @ cov[np.ix_(o, miss)])


def test_conditional_gaussian_matches_the_textbook_formula(gaussian):
    imp, rng = gaussian
    x = rng.normal(size=(4, 5))
    mask = np.array([[1, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 0, 1]], bool)
    x_hat, cov = imp.conditional(np.where(mask, np.nan, x), mask)
    for i in (0, 3):
        mean_m, cov_m = textbook(imp.mean, imp.cov, x[i], mask[i])
        np.testing.assert_allclose(x_hat[i, mask[i]], mean_m, atol=1e-12)
        np.testing.assert_allclose(cov[i][np.ix_(mask[i], mask[i])], cov_m, atol=1e-12)
    np.testing.assert_array_equal(x_hat[1], x[1])  # nothing missing: no change, no variance
    assert not cov[1].any()
    np.testing.assert_allclose(x_hat[2], imp.mean, atol=1e-12)  # all missing: the marginal
    np.testing.assert_allclose(cov[2], imp.cov, atol=1e-12)


def test_conditional_draws_have_the_conditional_moments(gaussian):
    imp, rng = gaussian
    x = rng.normal(size=(2, 5))
    mask = np.array([[1, 0, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    s = 40_000
    draws = imp.sample(np.where(mask, np.nan, x), mask, s, random_seed=1)
    x_hat, cov = imp.conditional(np.where(mask, np.nan, x), mask)
    np.testing.assert_array_equal(draws[0][:, ~mask[0]], np.broadcast_to(x[0, ~mask[0]],
                                                                       (s, 3)))
    for i in range(2):
        sd = np.sqrt(np.diag(cov[i]))[mask[i]]
        assert np.all(np.abs(draws[i].mean(0)[mask[i]] - x_hat[i, mask[i]]) <= 4 * sd / np.sqrt(s))
        # variance ratio of a normal: sd(s^2 / sigma^2) = sqrt(2 / (s - 1))
        ratio = draws[i].var(0, ddof=1)[mask[i]] / sd**2
        assert np.all(np.abs(ratio - 1) <= 4 * np.sqrt(2 / (s - 1)))


def test_logit_law_is_w_times_the_conditional(gaussian):
    imp, rng = gaussian
    x, mask = rng.normal(size=(3, 5)), rng.random((3, 5)) < 0.5
    w, b = rng.normal(size=(3, 5)), rng.normal(size=3)
    a, cov = imp.logits(np.where(mask, np.nan, x), mask, w, b)
    x_hat, cx = imp.conditional(np.where(mask, np.nan, x), mask)
    np.testing.assert_allclose(a, x_hat @ w.T + b, atol=1e-12)
    np.testing.assert_allclose(cov, w @ cx @ w.T, atol=1e-12)


def test_dirichlet_mle_is_the_likelihood_maximum():
    rng = np.random.default_rng(1)
    phi = rng.dirichlet([0.5, 3.0, 20.0], size=(2, 3000))
    alpha = dirichlet_mle(phi)
    mean_log = np.log(np.clip(phi, CLIP, 1)).mean(1)
    for i in range(2):
        def nll(log_a, mean_log=mean_log[i]):
            a = np.exp(log_a)
            return -(special.gammaln(a.sum()) - special.gammaln(a).sum()
                     + ((a - 1) * mean_log).sum())

        ref = np.exp(optimize.minimize(nll, np.zeros(3), method="Nelder-Mead",
                                       options=dict(xatol=1e-10, fatol=1e-14, maxiter=20000)).x)
        np.testing.assert_allclose(alpha[i], ref, rtol=1e-5)


def test_moments_pool_the_concentration_and_flag_point_masses():
    phi = np.array([[[0.2, 0.5, 0.3], [0.3, 0.4, 0.3], [0.1, 0.6, 0.3]],
                    [[0.2, 0.8, 0.0]] * 3])
    mu, kappa = dirichlet_moments(phi)
    per_class = mu[0, :2] * (1 - mu[0, :2]) / phi[0, :, :2].var(0, ddof=1) - 1
    assert kappa[0] == pytest.approx(np.median(per_class))  # class 3 has no spread: skipped
    assert kappa[1] == np.inf


def test_heuristic_identities():
    phi = np.array([[0.1, 0.6, 0.3], [0.7, 0.2, 0.1]])
    np.testing.assert_allclose(0.1 * alpha_scale_probability(phi, 10.0),
                               alpha_max_variance(phi, 0.5), rtol=1e-15)
    alpha = alpha_max_variance(phi, 0.2)
    var = alpha * (alpha.sum(1, keepdims=True) - alpha) / (
        alpha.sum(1, keepdims=True) ** 2 * (alpha.sum(1, keepdims=True) + 1))
    np.testing.assert_allclose(var, 0.2 * phi * (1 - phi), atol=1e-15)


def test_linear_parts_of_a_pipeline_and_their_absence():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(200, 4)) * [1, 5, 0.1, 2] + 3, rng.integers(0, 3, 200)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y)
    w, b = linear_parts(pipe, x[:20])
    np.testing.assert_allclose(LinearClassifier(w, b).predict_proba(x), pipe.predict_proba(x),
                               atol=1e-12)
    assert linear_parts(lambda z: np.full((len(z), 2), 0.5), x[:5]) is None


def test_classifier_checks():
    with pytest.raises(ValueError, match="predict_proba"):
        as_classifier(object())
    predict = as_classifier(lambda z: np.full(len(z), 0.25))  # binary: P(class 1)
    np.testing.assert_array_equal(predict(np.zeros((2, 3))), [[0.75, 0.25]] * 2)
    with pytest.raises(ValueError, match="rows summing to 1"):
        as_classifier(lambda z: np.ones((len(z), 2)))(np.zeros((2, 3)))


def test_sensor_masks_drop_whole_sensors():
    groups = sensor_groups((8, 8), (4, 4))
    masks = mcar_mask(2000, groups, 0.3, random_seed=3)
    per_sensor = masks[:, np.unique(groups, return_index=True)[1]]
    np.testing.assert_array_equal(masks, per_sensor[:, groups])
    assert abs(per_sensor.mean() - 0.3) <= 4 * np.sqrt(0.3 * 0.7 / per_sensor.size)


def test_dmv_learns_the_synthetic_mvu():
    """A log-linear DMV on the paper's synthetic problem: its c_hard is close to the exact one
    (mean error about 0.005 / 0.015 over seeds; Model C, the Bayesian DMV with interaction
    features, 0.003 / 0.008) and far closer than the 0.5-max-variance heuristic's."""
    rng = np.random.default_rng(4)
    clf = LinearClassifier([[1.0, 1.0]], [-1.0])
    dmv = DMV(hidden=0, n_masks=8, random_seed=0).fit(
        rng.multivariate_normal([0, 0], SIGMA, 3000), clf)
    x = rng.multivariate_normal([0, 0], SIGMA, 4000)
    imputer = GaussianImputer([0, 0], SIGMA)
    for j, cond_sd in ((0, np.sqrt(0.153)), (1, np.sqrt(0.51))):
        x_obs = x[:, 1 - j]
        cond_mean = (0.383406 if j == 0 else 0.383406 / 0.3) * x_obs
        exact = special.ndtr(np.abs(x_obs + cond_mean - 1) / cond_sd)
        xm = x.copy()
        xm[:, j] = np.nan
        error = np.abs(hard_confidence(dmv.alpha(xm))[1] - exact).mean()
        phi = clf.predict_proba(imputer.conditional(xm, np.isnan(xm))[0])
        baseline = np.abs(hard_confidence(alpha_max_variance(phi))[1] - exact).mean()
        assert error < 0.02 and error < baseline / 5, (error, baseline)
