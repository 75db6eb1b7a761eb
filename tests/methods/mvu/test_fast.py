"""MVU hard/soft confidence: exact Beta/Dirichlet/Gaussian vote probabilities against independent
references (adaptive quadrature, scipy's multivariate normal CDF, Monte Carlo at 4 sigma), and the
laws of the decided class's probability."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from bayeval.methods.mvu.fast import (
    _vote_prob_of,
    beta_law,
    beta_mixture_law,
    gaussian_hard_confidence,
    gaussian_vote_probs,
    hard_confidence,
    logitnormal_mixture_law,
    sample_votes,
    soft_confidence,
    vote_probs,
    votes_from_draws,
)


def quad_vote_prob(alpha, j):
    """P(vote = j) by adaptive quadrature over u = log g (a log-space reference)."""
    a_j, a_o = alpha[j], np.delete(alpha, j)

    def f(u):
        x = np.exp(u)
        with np.errstate(divide="ignore"):
            return np.exp(a_j * u - x - special.gammaln(a_j)
                          + np.log(special.gammainc(a_o, x)).sum())

    lo = special.digamma(a_j) - 40 * np.sqrt(special.polygamma(1, a_j)) - 40 / a_j
    hi, mode = np.log(a_j + 40 * np.sqrt(a_j) + 60), np.log(a_j)
    opts = dict(epsabs=1e-14, epsrel=1e-12, limit=500)
    return integrate.quad(f, lo, mode, **opts)[0] + integrate.quad(f, mode, hi, **opts)[0]


def se(p, n):
    return np.sqrt(p * (1 - p) / n)


def test_beta_closed_form_against_log_space_monte_carlo():
    alpha = np.array([[0.3, 0.7], [2.0, 5.0], [40.0, 38.0], [0.01, 0.02]])
    exact = vote_probs(alpha)[:, 1]
    np.testing.assert_allclose(exact, special.betainc(alpha[:, 0], alpha[:, 1], 0.5), atol=0)
    draws = sample_votes(alpha, draws=100_000, random_seed=1)[:, 1]
    assert np.all(np.abs(draws - exact) <= 4 * se(exact, 100_000) + 1e-9)


def test_integral_equals_betainc_for_two_classes():
    rng = np.random.default_rng(2)
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(2000), (200, 2)))
    via_integral = _vote_prob_of(alpha, np.ones(200, dtype=int), np.zeros(2))
    np.testing.assert_allclose(via_integral, special.betainc(alpha[:, 0], alpha[:, 1], 0.5),
                               atol=1e-10)


@pytest.mark.parametrize("k", [3, 5, 10])
def test_tanh_sinh_against_adaptive_quadrature(k):
    rng = np.random.default_rng(k)
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(2000), (8, k)))
    ours = vote_probs(alpha)
    ref = np.array([[quad_vote_prob(a, j) for j in range(k)] for a in alpha])
    np.testing.assert_allclose(ours, ref, atol=1e-8)


def test_sums_symmetry_and_scaling_limits():
    mu = np.array([0.2, 0.5, 0.3])
    probs = vote_probs(np.array([mu * 1e-3, mu, mu * 10, mu * 1e3, np.full(3, 0.7)]))
    np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-10)
    np.testing.assert_allclose(probs[0], mu, atol=1e-3)  # lambda -> 0: P(vote = j) -> mu_j
    assert probs[3, 1] > 0.99
    np.testing.assert_allclose(probs[4], 1 / 3, atol=1e-12)
    np.testing.assert_allclose(probs[2], [0.077, 0.718, 0.204], atol=1e-3)  # lambda = 10


def test_argmax_alpha_is_the_vote_and_the_shortcut_is_exact():  # likelihood-ratio order
    rng = np.random.default_rng(5)
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(300), (1000, 6)))
    probs = vote_probs(alpha)
    assert np.array_equal(probs.argmax(-1), alpha.argmax(-1))
    y, c = hard_confidence(alpha)
    assert np.array_equal(y, alpha.argmax(-1))
    np.testing.assert_allclose(c, probs.max(-1), atol=1e-13)
    soft = soft_confidence(alpha / alpha.sum(-1, keepdims=True))[1]
    assert np.all(c >= soft - 1e-12)  # a Dirichlet's hard confidence is at least its soft one


def test_log_space_sampler_has_no_underflow_at_tiny_alpha():
    alpha = np.array([[2e-4, 5e-4, 3e-4]])
    exact = vote_probs(alpha)[0]
    votes = sample_votes(alpha, draws=200_000, random_seed=3)[0]
    assert np.all(np.abs(votes - exact) <= 4 * se(exact, 200_000))


def test_cost_weights_shift_the_binary_threshold_and_the_dirichlet_votes():
    alpha = np.array([[3.0, 2.0], [1.0, 4.0]])
    t = 0.3  # class 1 when phi_1 > t: weights (t, 1 - t)
    p1 = vote_probs(alpha, weights=[t, 1 - t])[:, 1]
    np.testing.assert_allclose(p1, 1 - stats.beta(alpha[:, 1], alpha[:, 0]).cdf(t), atol=1e-12)
    a3, w = np.array([[2.0, 3.0, 1.5]]), np.array([1.0, 0.5, 2.0])
    exact = vote_probs(a3, weights=w)[0]
    votes = sample_votes(a3, draws=200_000, weights=w, random_seed=4)[0]
    assert np.all(np.abs(votes - exact) <= 4 * se(exact, 200_000))
    phi = stats.dirichlet(a3[0]).rvs(200_000, random_state=5)
    np.testing.assert_allclose(votes_from_draws(phi, weights=w), votes, atol=0.01)


def test_binary_gaussian_logits_are_a_normal_cdf():
    m, v = np.array([0.3, -1.0, 2.0]), np.array([0.5, 2.0, 0.0])
    p1 = gaussian_vote_probs(m, v)[:, 1]
    np.testing.assert_allclose(p1[:2], stats.norm.cdf(m[:2] / np.sqrt(v[:2])), atol=1e-15)
    assert p1[2] == 1.0  # no variance: a sure vote


def test_multiclass_gaussian_logits_are_orthant_probabilities():
    rng = np.random.default_rng(6)
    k = 4
    a = rng.normal(size=(5, k))
    f = rng.normal(size=(5, k, k))
    cov = f @ np.swapaxes(f, 1, 2)
    ours = gaussian_vote_probs(a, cov, n_points=8192, random_seed=0)
    for i in range(5):
        for j in range(k):
            d = np.zeros((k - 1, k))
            d[:, j] = 1.0
            d[np.arange(k - 1), [q for q in range(k) if q != j]] = -1.0
            ref = stats.multivariate_normal(cov=d @ cov[i] @ d.T).cdf(d @ a[i])
            assert abs(ours[i, j] - ref) < 1e-3


@pytest.mark.parametrize("rank", [1, 2, 4])
def test_gaussian_votes_against_monte_carlo_on_the_logits(rank):  # singular when rank < 3
    rng = np.random.default_rng(rank)
    n, k, s = 4, 4, 100_000
    a = rng.normal(size=(n, k))
    f = rng.normal(size=(n, k, rank))
    ours = gaussian_vote_probs(a, f @ np.swapaxes(f, 1, 2), random_seed=1)
    z = a[:, None, :] + np.einsum("nkr,nsr->nsk", f, rng.standard_normal((n, s, rank)))
    mc = votes_from_draws(z)
    assert np.all(np.abs(ours - mc) <= 4 * se(ours, s) + 1e-4)
    np.testing.assert_allclose(ours.sum(-1), 1.0, atol=2e-3)


def test_one_missing_feature_is_exact_for_multiclass():
    a, f = np.array([[0.0, 1.0, 0.5]]), np.array([[1.0, -1.0, 0.0]])
    ours = gaussian_vote_probs(a, f[:, :, None] * f[:, None, :])[0]
    # z = a + f t: class 0 wins for t > 0.5 (over 1) and t > 0.5 (over 2); class 1 for t < 0.5
    np.testing.assert_allclose(ours, [1 - stats.norm.cdf(0.5), stats.norm.cdf(0.5), 0.0],
                               atol=1e-15)


def test_laws_of_the_decided_class_probability():
    rng = np.random.default_rng(7)
    law = beta_law(np.array([2.0, 0.5]), np.array([3.0, 0.5]), 0.9)
    ref = stats.beta([2.0, 0.5], [3.0, 0.5])
    np.testing.assert_allclose(law[0], ref.mean(), atol=1e-15)
    np.testing.assert_allclose(law[1], ref.std(), atol=1e-15)
    np.testing.assert_allclose(ref.cdf(law[3]) - ref.cdf(law[2]), 0.9, atol=1e-10)
    hdi = beta_law(np.array([2.0]), np.array([3.0]), 0.9, "hdi")
    assert ref.pdf(hdi[2])[0] == pytest.approx(ref.pdf(hdi[3])[0], rel=1e-6)
    m, s = np.array([[0.4, -1.0]]), np.array([[0.7, 2.5]])
    x = special.expit(m[..., None] + s[..., None] * rng.standard_normal((1, 2, 200_000)))
    mean, sd, lo, hi = logitnormal_mixture_law(m, s, 0.9)
    flat = x.reshape(-1)
    assert abs(mean[0] - flat.mean()) <= 4 * sd[0] / np.sqrt(flat.size)
    for q, value in ((0.05, lo[0]), (0.95, hi[0])):
        frac = (flat <= value).mean()
        assert abs(frac - q) <= 4 * se(q, flat.size)


def test_mixture_quantiles_solve_the_mixture_cdf():
    a, b = np.array([[2.0, 30.0, 0.4]]), np.array([[5.0, 3.0, 0.9]])
    _, _, lo, hi = beta_mixture_law(a, b, 0.8)
    cdf = lambda q: special.betainc(a, b, q).mean()  # noqa: E731
    assert cdf(lo[0]) == pytest.approx(0.1, abs=1e-10)
    assert cdf(hi[0]) == pytest.approx(0.9, abs=1e-10)


@pytest.mark.parametrize("alpha", [[[1.0, 0.0]], [[1.0, -2.0, 3.0]], [[np.nan, 1.0]], [1.0]])
def test_alpha_must_be_positive(alpha):
    with pytest.raises(ValueError, match="alpha"):
        hard_confidence(alpha)


def test_old_n_draws_keyword_warns_and_gives_the_same_votes():
    alpha = [[2.0, 5.0, 3.0]]
    new = hard_confidence(alpha, method="mc", draws=300, random_seed=2)
    with pytest.warns(FutureWarning, match="n_draws"):
        old = hard_confidence(alpha, method="mc", n_draws=300, random_seed=2)
    np.testing.assert_array_equal(old, new)
    with pytest.warns(FutureWarning, match="n_draws"):
        old = sample_votes(alpha, n_draws=300, random_seed=2)
    np.testing.assert_array_equal(old, sample_votes(alpha, draws=300, random_seed=2))


def test_gaussian_hard_confidence_is_the_largest_vote_probability():
    rng = np.random.default_rng(9)
    mean, var = rng.normal(size=50), rng.uniform(0.1, 4.0, 50)
    y, c = gaussian_hard_confidence(mean, var, weights=[0.3, 0.7])
    probs = gaussian_vote_probs(mean, var, weights=[0.3, 0.7])
    np.testing.assert_array_equal(y, probs.argmax(1))
    np.testing.assert_array_equal(c, probs.max(1))
