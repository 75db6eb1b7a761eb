"""Intervals of Beta and normal laws against scipy: equal-tailed quantiles, the shortest (HDI)
interval found by brute force, and the broadcasting of the normal interval."""

import numpy as np
import pytest
from scipy import stats

from bayeval.intervals import beta_interval, normal_interval


@pytest.mark.parametrize(("a", "b"), [(3, 7), (1, 1), (0.5, 0.5), (40, 2), (1, 5), (276, 11)])
@pytest.mark.parametrize("ci_prob", [0.5, 0.9, 0.95])
def test_beta_eti_is_scipy_s_quantiles(a, b, ci_prob):
    lower, upper = beta_interval(a, b, ci_prob)
    tail = (1 - ci_prob) / 2
    assert lower == pytest.approx(stats.beta.ppf(tail, a, b), abs=1e-14)
    assert upper == pytest.approx(stats.beta.isf(tail, a, b), abs=1e-12)
    assert stats.beta.cdf(upper, a, b) - stats.beta.cdf(lower, a, b) == pytest.approx(
        ci_prob, abs=1e-12)


@pytest.mark.parametrize(("a", "b"), [(3, 7), (40, 2), (1, 5), (5, 1), (2, 2), (276, 11)])
@pytest.mark.parametrize("ci_prob", [0.5, 0.95])
def test_beta_hdi_is_the_shortest_interval_with_equal_density_at_its_ends(a, b, ci_prob):
    lower, upper = beta_interval(a, b, ci_prob, kind="hdi")
    law = stats.beta(a, b)
    assert law.cdf(upper) - law.cdf(lower) == pytest.approx(ci_prob, abs=1e-9)
    # no interval of the same mass on a fine grid of lower tails is shorter
    q = np.linspace(0, 1 - ci_prob, 20001)
    assert upper - lower <= (law.ppf(q + ci_prob) - law.ppf(q)).min() + 1e-9
    if lower > 0 and upper < 1:  # an interior HDI: the density is the same at both ends
        assert law.pdf(lower) == pytest.approx(law.pdf(upper), rel=1e-4)
    eti = beta_interval(a, b, ci_prob)
    assert upper - lower <= eti[1] - eti[0] + 1e-12


def test_beta_hdi_of_a_monotone_density_starts_at_its_mode():
    assert beta_interval(1, 5, 0.9, kind="hdi") == pytest.approx(
        (0.0, stats.beta.ppf(0.9, 1, 5)), abs=1e-9)
    assert beta_interval(5, 1, 0.9, kind="hdi") == pytest.approx(
        (stats.beta.ppf(0.1, 5, 1), 1.0), abs=1e-9)


def test_beta_hdi_of_a_symmetric_law_is_its_eti():
    np.testing.assert_allclose(beta_interval(4, 4, 0.9, kind="hdi"), beta_interval(4, 4, 0.9),
                               atol=1e-8)
    assert beta_interval(1, 1, 0.8, kind="hdi") == pytest.approx((0.1, 0.9), abs=1e-15)


def test_normal_interval_is_scipy_s_and_broadcasts():
    mean, sd = np.array([[0.5], [0.2]]), np.array([0.1, 0.01, 0.0])
    lower, upper = normal_interval(mean, sd, 0.9)
    assert lower.shape == upper.shape == (2, 3)
    # scipy's quantiles where sd > 0; a zero sd gives the point itself
    np.testing.assert_allclose(lower[:, :2], stats.norm.ppf(0.05, mean, sd[:2]), rtol=1e-14)
    np.testing.assert_allclose(upper[:, :2], stats.norm.ppf(0.95, mean, sd[:2]), rtol=1e-14)
    np.testing.assert_array_equal(lower[:, 2], mean[:, 0])
    np.testing.assert_array_equal(upper[:, 2], mean[:, 0])
    np.testing.assert_allclose(upper - mean, mean - lower, rtol=1e-14)  # symmetric
    lo, up = normal_interval(0.3, 0.05, 0.95)
    assert np.ndim(lo) == np.ndim(up) == 0
    assert (float(lo), float(up)) == pytest.approx((0.3 - 1.959963984540054 * 0.05,
                                                    0.3 + 1.959963984540054 * 0.05), abs=1e-15)
