"""Exact Dirichlet hard confidence (log-space panels) against independent references: mpmath at
30 digits, a fine trapezoidal rule in u = log x with scipy's incomplete gamma, the tanh-sinh
integral and the closed forms; and DMV's folded forward pass against its training-time one."""

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, special

from bayeval.methods.mvu.estimators import DMV, LinearClassifier, mcar_mask
from bayeval.methods.mvu.fast import _vote_prob_of, hard_confidence, vote_probs
from benchmarks.bench_mvu import fine_rule


def mp_win(alpha):
    """The same integral with mpmath at 30 digits (adaptive tanh-sinh, split at the mode)."""
    mp.mp.dps = 30
    j = int(np.argmax(alpha))
    a = [mp.mpf(float(v)) for v in alpha]
    a_j, a_o, lg = a[j], a[:j] + a[j + 1:], mp.loggamma(a[j])

    def f(u):
        x = mp.exp(u)
        return mp.exp(a_j * u - x - lg) * mp.fprod(mp.gammainc(v, 0, x, regularized=True)
                                                    for v in a_o)

    mode, sd = float(np.log(alpha[j])), 1 / np.sqrt(alpha[j])
    lo = mode - 40 * sd - 60 / float(np.sum(alpha))
    hi = float(np.log(alpha[j] + 40 * np.sqrt(alpha[j]) + 60))
    return float(mp.quad(f, [lo, mode - 2 * sd, mode, mode + 2 * sd, hi]))


@pytest.mark.parametrize("alpha", [[0.3, 0.2, 0.25], [5.0, 4.9, 0.5], [1e3, 999.0, 990.0],
                                   [1.2, 0.1, 0.15, 0.3, 0.12, 0.2]])
def test_against_mpmath(alpha):
    assert abs(hard_confidence([alpha])[1][0] - mp_win(alpha)) < 1e-11  # seen: <= 2e-15


def _cases():
    rng = np.random.default_rng(20261125)
    cases = {}
    for k, n in ((3, 40), (10, 20), (100, 4)):
        cases[f"log-uniform 0.05-2000, K={k}"] = np.exp(rng.uniform(np.log(0.05), np.log(2000),
                                                                    (n, k)))
        cases[f"small 0.05-1, K={k}"] = np.exp(rng.uniform(np.log(0.05), 0.0, (n, k)))
        ties = np.exp(rng.uniform(0, np.log(1e5), (n, 1)) + rng.uniform(-0.1, 0, (n, k)))
        ties[:, 1] = ties[:, 0] * (1 - 1e-7)
        cases[f"near ties, K={k}"] = ties
    return cases


@pytest.mark.parametrize("name", list(_cases()))
def test_against_a_fine_log_space_rule(name):
    alpha = _cases()[name]
    y, c = hard_confidence(alpha)
    assert np.array_equal(y, alpha.argmax(-1))
    ref = np.array([fine_rule(a) for a in alpha])
    np.testing.assert_allclose(c, ref, rtol=0, atol=1e-10)  # seen: <= 1e-11 (the rule's own)


def test_agrees_with_the_tanh_sinh_integral_on_ten_classes():
    rng = np.random.default_rng(3)
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(300), (2000, 10)))
    tanh_sinh = _vote_prob_of(alpha, alpha.argmax(-1), np.zeros(10))
    np.testing.assert_allclose(hard_confidence(alpha)[1], tanh_sinh, rtol=0, atol=1e-10)


def test_one_rival_left_is_the_incomplete_beta_and_none_is_a_sure_vote():
    alpha = np.array([[60.0, 45.0, 0.01], [400.0, 0.5, 0.2]])  # class 2 / classes 1, 2 left out
    c = hard_confidence(alpha)[1]
    assert c[0] == special.betainc(45.0, 60.0, 0.5)  # P(G_1 < G_0) = I_{1/2}(45, 60)
    assert c[1] == 1.0
    np.testing.assert_allclose(c, vote_probs(alpha).max(-1), rtol=0, atol=1e-13)


def test_tiny_concentrations_keep_the_tanh_sinh_integral():
    alpha = np.array([[1e-3, 2e-3, 3e-3], [0.01, 0.005, 0.008]])  # alpha_0 < 1
    c = hard_confidence(alpha)[1]
    np.testing.assert_array_equal(c, _vote_prob_of(alpha, alpha.argmax(-1), np.zeros(3)))
    assert abs(c[0] - 0.5) < 2e-3  # alpha -> 0: the votes tend to alpha / alpha_0


def test_huge_concentrations_need_no_cancellation():
    alpha = np.array([[1e8, 1e8 * (1 - 1e-4), 5e7], [1e9, 1e9 - 3e4, 1e9 - 6e4],
                      [1e15, 1e15 * (1 - 1e-7), 1e15 * (1 - 2e-7)]])
    c = hard_confidence(alpha)[1]
    # normal limit of the Gamma differences: P(G_0 > G_1) = Phi((a0 - a1) / sqrt(a0 + a1))
    np.testing.assert_allclose(c[0], special.ndtr(1e4 / np.sqrt(2e8 - 1e4)), atol=1e-4)
    np.testing.assert_allclose(c[:2], _vote_prob_of(alpha[:2], np.zeros(2, int), np.zeros(3)),
                               atol=1e-9)
    a, s = alpha[2], np.sqrt(alpha[2])  # G_i ~ N(a_i, a_i) up to a skewness of 6e-8
    normal = integrate.quad(lambda z: special.ndtr((a[0] + s[0] * z - a[1]) / s[1])
                            * special.ndtr((a[0] + s[0] * z - a[2]) / s[2])
                            * np.exp(-z * z / 2) / np.sqrt(2 * np.pi), -12, 12, epsabs=1e-13)[0]
    assert abs(c[2] - normal) < 1e-6  # seen: 9e-8


@pytest.mark.parametrize("groups", [None, np.repeat(np.arange(3), 2)])
def test_dmv_alpha_is_the_training_forward_pass(groups):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 6)) * [1, 2, 3, 1, 1, 0.5] + 2
    dmv = DMV(hidden=4, max_iter=30, groups=groups, random_seed=0).fit(
        x, LinearClassifier(rng.normal(size=(3, 6)), np.zeros(3)))
    m = mcar_mask(200, np.arange(6) if groups is None else groups, 0.4, rng)
    xm = np.where(m, np.nan, x[:200])
    unfolded = np.exp(dmv._forward(dmv.params_, dmv._inputs(xm, m))[0])
    np.testing.assert_allclose(dmv.alpha(xm), unfolded, rtol=1e-12)
    np.testing.assert_allclose(dmv.alpha(np.where(m, 7.0, xm), m), unfolded, rtol=1e-12)
