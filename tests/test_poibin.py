"""Poisson binomial: exact oracles (float DP, 50-digit mpmath), identities and bad input."""

import mpmath
import numpy as np
import pytest

from bayeval import poibin
from bayeval.poibin import (
    UNDERFLOW,
    PoissonBinomial,
    convolve,
    convolve_pmfs,
    log_ends,
    pmf_above,
    pmf_rows,
    truncated_pmf,
)


def dp_pmf(p):
    r"""The O(n^2) recursion :math:`P_k(j) = p_k P_{k-1}(j-1) + (1-p_k) P_{k-1}(j)`, in float64."""
    pmf = np.ones(1)
    for pi in p:
        pmf = np.r_[pmf * (1 - pi), 0.0] + np.r_[0.0, pmf * pi]
    return pmf


def mp_pmf(p):
    """The same recursion in 50-digit arithmetic on the exact binary values of p."""
    with mpmath.workdps(50):
        pmf = [mpmath.mpf(1)]
        for pi in p:
            pi = mpmath.mpf(float(pi))
            qi = 1 - pi
            pmf = [a * qi + b * pi for a, b in zip([*pmf, 0], [0, *pmf], strict=True)]
        return np.array([float(x) for x in pmf])


def scores(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.random(n)
    if kind == "extreme":  # half near 1, half near 0, plus exact 0s and 1s at random places
        p = np.where(rng.random(n) < 0.5, rng.uniform(0.95, 1, n), rng.uniform(0, 0.05, n))
        p[rng.random(n) < 0.1] = 0.0
        p[rng.random(n) < 0.1] = 1.0
        return p
    return rng.uniform(0, 2e-3, n)  # "rare": sd << n, the windows are cut hardest


@pytest.mark.parametrize("n", [1, 7, 64, 65, 200, 400])
@pytest.mark.parametrize("kind", ["uniform", "extreme"])
def test_pmf_matches_50_digit_arithmetic(n, kind):
    p = scores(kind, n, seed=n)
    pmf = PoissonBinomial(p).pmf()
    assert pmf.shape == (n + 1,)
    assert pmf.min() >= 0.0
    np.testing.assert_allclose(pmf, mp_pmf(p), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [1000, 3000])
@pytest.mark.parametrize("kind", ["uniform", "extreme", "rare"])
def test_pmf_matches_dp_through_fft_levels(n, kind):
    p = scores(kind, n, seed=7 + n)
    pmf = PoissonBinomial(p).pmf()
    assert pmf.min() >= 0.0
    np.testing.assert_allclose(pmf, dp_pmf(p), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [2, 500, 4000])
def test_sum_mean_and_variance_identities(n):
    p = scores("uniform", n, seed=3)
    dist = PoissonBinomial(p)
    pmf, k = dist.pmf(), np.arange(n + 1)
    assert abs(pmf.sum() - 1) <= 1e-12
    mean = (k * pmf).sum()
    np.testing.assert_allclose([mean, dist.mean()], p.sum(), rtol=1e-9)
    np.testing.assert_allclose([((k - mean) ** 2 * pmf).sum(), dist.var()],
                               (p * (1 - p)).sum(), rtol=1e-9)


def test_small_and_degenerate_cases_are_exact():
    np.testing.assert_array_equal(PoissonBinomial([]).pmf(), [1.0])
    np.testing.assert_array_equal(PoissonBinomial([0.3]).pmf(), [0.7, 0.3])
    np.testing.assert_array_equal(PoissonBinomial([1, 1, 0, 1]).pmf(), [0, 0, 0, 1, 0])
    p = [0.0, 0.2, 1.0, 0.5, 1.0]  # = 2 + PB(0.2, 0.5)
    np.testing.assert_allclose(PoissonBinomial(p).pmf(), [0, 0, 0.4, 0.5, 0.1, 0], atol=1e-15)
    assert PoissonBinomial(p).pmf()[[0, 1, 5]].tolist() == [0.0, 0.0, 0.0]
    empty = PoissonBinomial(np.array([]))
    assert (empty.mean(), empty.var(), empty.ppf(0.5), empty.rvs(random_state=0)) == (0, 0, 0, 0)


def test_pmf_at_points_cdf_sf_ppf_are_consistent():
    p = np.r_[scores("uniform", 150, seed=11), 1.0, 1.0, 0.0]
    dist = PoissonBinomial(p)
    n, pmf, k = p.size, dist.pmf(), np.arange(p.size + 1)
    np.testing.assert_array_equal(dist.pmf(k), pmf)
    assert dist.pmf(2.5) == 0 and dist.pmf(-1) == 0 and dist.pmf(n + 1) == 0
    assert dist.pmf(70) == pmf[70]
    np.testing.assert_allclose(dist.cdf(k), np.cumsum(pmf), rtol=0, atol=1e-13)
    np.testing.assert_allclose(dist.cdf(k) + dist.sf(k), 1, rtol=0, atol=1e-13)
    np.testing.assert_allclose(dist.sf(k), pmf[::-1].cumsum()[::-1] - pmf, rtol=0, atol=1e-13)
    assert dist.cdf(-0.5) == 0 and dist.cdf(n) == 1 and dist.sf(-1) == 1 and dist.sf(n) == 0
    assert dist.cdf(70.9) == dist.cdf(70)
    live = k[pmf > 1e-9]
    np.testing.assert_array_equal(dist.ppf(dist.cdf(live)), live)
    np.testing.assert_array_equal(dist.ppf(dist.cdf(live) + 1e-12), live + 1)
    assert (dist.ppf(0), dist.ppf(1)) == (2, n - 1)  # the support is 2 .. n - 1
    assert isinstance(dist.cdf(3), float) and dist.ppf([0.5]).shape == (1,)


def test_tails_are_accurate_relatively_below_the_fft_sizes():
    """n = 60 is multiplied out directly: every entry, and sf in the upper tail, to 1e-12
    relative (1 - cdf would be 0 or round-off there)."""
    p = scores("uniform", 60, seed=8)
    dist, exact = PoissonBinomial(p), mp_pmf(p)
    np.testing.assert_allclose(dist.pmf(), exact, rtol=1e-12, atol=0)
    k = np.arange(40, 60)
    np.testing.assert_allclose(dist.sf(k), [exact[j + 1 :].sum() for j in k], rtol=1e-12)
    np.testing.assert_allclose(dist.cdf(np.arange(15)), np.cumsum(exact)[:15], rtol=1e-12)


def test_rvs_follow_the_pmf_and_the_seed():
    p = scores("uniform", 300, seed=5)
    dist = PoissonBinomial(p)
    n_draws = 20_000
    draws = dist.rvs(n_draws, random_state=42)
    ecdf = np.searchsorted(np.sort(draws), np.arange(p.size + 1), side="right") / n_draws
    assert np.abs(ecdf - dist.cdf(np.arange(p.size + 1))).max() <= 1.95 / np.sqrt(n_draws)
    np.testing.assert_array_equal(draws, dist.rvs(n_draws, random_state=42))
    rng = np.random.default_rng(42)
    np.testing.assert_array_equal(dist.rvs((4, 5), random_state=rng).shape, (4, 5))
    assert np.ndim(dist.rvs(random_state=1)) == 0
    assert PoissonBinomial([1, 1, 0]).rvs(50, random_state=0).tolist() == [2] * 50


@pytest.mark.parametrize("sizes", [(5, 9), (150, 400), (2000, 3)])
def test_convolve_of_pb_pmfs_is_pb_of_concatenation(sizes):
    rng = np.random.default_rng(sum(sizes))
    a, b = rng.random(sizes[0]), rng.random(sizes[1])
    got = convolve(PoissonBinomial(a).pmf(), PoissonBinomial(b).pmf())
    np.testing.assert_allclose(got, dp_pmf(np.r_[a, b]), rtol=0, atol=1e-12)
    assert got.min() >= 0


def test_convolve_many_and_edge_arities():
    rng = np.random.default_rng(0)
    parts = [rng.random(m) for m in (3, 120, 1, 250, 40)]
    got = convolve(*(PoissonBinomial(x).pmf() for x in parts))
    np.testing.assert_allclose(got, dp_pmf(np.concatenate(parts)), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(convolve(), [1.0])
    np.testing.assert_array_equal(convolve([0.25, 0.75]), [0.25, 0.75])


def test_convolve_avoids_fft_when_its_error_could_exceed_tolerance():
    rng = np.random.default_rng(1)
    a, b = rng.random(3000) * 1e3, rng.random(2000) * 1e3  # FFT error here ~ 1e-7 absolute
    np.testing.assert_array_equal(convolve(a, b), np.convolve(a, b))


@pytest.mark.parametrize(("kind", "n"), [("uniform", 100_000), ("extreme", 3000), ("rare", 3000)])
def test_truncated_pmf_is_the_pmf_on_its_window(kind, n):
    p = scores(kind, n, seed=2)
    full = PoissonBinomial(p).pmf()
    start, probs = truncated_pmf(p)
    np.testing.assert_array_equal(probs, full[start : start + probs.size])
    assert probs[0] > 1e-16 and probs[-1] > 1e-16
    outside = np.r_[full[:start], full[start + probs.size :]]
    assert outside.max(initial=0) <= 1e-16 and outside.sum() < 1e-14 * n
    if kind == "uniform":  # the window is O(sd) long, not O(n)
        assert probs.size < 20 * np.sqrt((p * (1 - p)).sum())
    start, probs = truncated_pmf(p, tol=1e-6)
    assert probs.min() > 1e-6 and full[start - 1] <= 1e-6 and full[start + probs.size] <= 1e-6


def test_truncated_pmf_of_a_point_mass():
    assert truncated_pmf([1, 0, 1]) == (2, np.ones(1))
    start, probs = truncated_pmf([0.5, 0.5], tol=0.9)  # nothing above tol: the mode alone
    assert start in (0, 1) and probs.size == 1


@pytest.mark.parametrize("bad", [[0.2, 1.5], [-0.1], [0.3, np.nan], [[0.1, 0.2], [0.3, 0.4]],
                                 "0.5", [0.1, np.inf]])
def test_bad_p_is_rejected_naming_p(bad):
    with pytest.raises(ValueError, match=r"\bp\b"):
        PoissonBinomial(bad)
    with pytest.raises(ValueError, match=r"\bp\b"):
        truncated_pmf(bad)


def test_other_bad_arguments_are_named():
    dist = PoissonBinomial([0.2, 0.4])
    with pytest.raises(ValueError, match=r"\bq\b"):
        dist.ppf(1.2)
    with pytest.raises(ValueError, match=r"\bk\b"):
        dist.cdf(np.nan)
    with pytest.raises(ValueError, match="random_state"):
        dist.rvs(3, random_state="seed")
    with pytest.raises(ValueError, match=r"pmfs\[1\]"):
        convolve([0.5, 0.5], [0.5, -0.1, 0.6])
    with pytest.raises(ValueError, match="tol"):
        truncated_pmf([0.5], tol=-1)


@pytest.mark.parametrize(("kind", "n"), [("uniform", 5000), ("half", 6000), ("confident", 6000),
                                         ("rare", 6000), ("uniform", 200_000)])
def test_characteristic_function_path_matches_the_convolutions(kind, n):
    """Large variances take the characteristic-function path (centre 1/2, 1 and 0 here): it
    equals the float DP (n <= 6000) and the divide-and-conquer convolutions to 1e-15."""
    rng = np.random.default_rng(n)
    p = {"uniform": rng.random(n), "half": rng.uniform(0.5, 1, n),
         "confident": rng.uniform(0.8, 1, n), "rare": rng.uniform(0, 0.2, n)}[kind]
    assert poibin._window_cf(p, p.sum(), (p * (1 - p)).sum()) is not None
    full = PoissonBinomial(p).pmf()
    start, probs = poibin._window_convolved(p)
    convolved = np.zeros(n + 1)
    convolved[start : start + probs.size] = probs
    np.testing.assert_allclose(full, convolved, rtol=0, atol=1e-15)
    if n <= 6000:
        np.testing.assert_allclose(full, dp_pmf(p), rtol=0, atol=1e-15)


def test_small_or_spread_out_variances_keep_the_convolutions():
    rng = np.random.default_rng(3)
    # var < 163; then p on both sides far from 1/2: no centre converges in 30 terms
    for p in (rng.random(900), np.r_[rng.uniform(0, 0.1, 5000), rng.uniform(0.9, 1, 5000)]):
        assert poibin._window_cf(p, p.sum(), (p * (1 - p)).sum()) is None


def test_trusting_twins_equal_the_checked_functions():
    rng = np.random.default_rng(9)
    p = rng.beta(0.5, 0.5, 300)
    for tol in (0.0, 1e-16, 1e-6):
        start, probs = truncated_pmf(p.tolist(), tol=tol)
        twin_start, twin_probs = pmf_above(p, tol)
        assert start == twin_start
        np.testing.assert_array_equal(probs, twin_probs)
    pmfs = [PoissonBinomial(rng.random(k)).pmf() for k in (3, 80, 200)]
    np.testing.assert_array_equal(convolve_pmfs(*pmfs), convolve(*[f.tolist() for f in pmfs]))
    np.testing.assert_array_equal(convolve_pmfs(), [1.0])



@pytest.mark.parametrize("n", [1, 16, 17, 300, 2000])
def test_pmf_rows_equal_pmf_above_row_by_row(n):
    rng = np.random.default_rng(n)
    p = rng.beta(2, 2, (40, n))
    p[0] = rng.random(n) ** 8  # near 0
    p[1, : min(3, n)] = 1.0  # certain trials
    p[2, : min(2, n)] = 0.0
    starts, probs = pmf_rows(p)
    for row, start, pmf in zip(p, starts, probs, strict=True):
        first, expected = pmf_above(row, 0.0)
        full, mine = np.zeros(n + 1), np.zeros(n + 1)
        full[first : first + expected.size] = expected
        width = min(pmf.size, n + 1 - start)
        mine[start : start + width] = pmf[:width]
        np.testing.assert_allclose(mine, full, rtol=0, atol=1e-14)


def test_log_ends_skip_only_logarithms_whose_exponential_is_0():
    """P(K = 0) and P(K = n) skip their logarithms only where the exponential is 0 anyway: the
    same values as exp(sum(log)) everywhere, near the threshold included."""
    rng = np.random.default_rng(7)
    m = 2000
    p = rng.random((6, m)) ** 8  # sums of p about 220: logarithms taken
    p[0] = rng.random(m)  # sums of p and of 1 - p about 1000: both skipped
    p[1] = UNDERFLOW / m * (1 - 1e-9)  # just below it: logarithms taken
    p[2] = UNDERFLOW / m * (1 + 1e-9)  # just above: skipped
    p[3] = 1.0 - p[1]
    p[4, :5] = 0.0
    p[5, :5] = 1.0
    p[5, 5:] = 0.999
    with np.errstate(divide="ignore"):
        pi0, pi1 = np.exp(np.log1p(-p).sum(1)), np.exp(np.log(p).sum(1))
    out = np.exp(log_ends(p, p.sum(1)))
    np.testing.assert_array_equal(out[0], pi0)
    np.testing.assert_array_equal(out[1], pi1)
    assert pi0[4] > 0 and pi1[5] > 0  # the test reaches positive products
