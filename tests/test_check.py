"""check.compare: passes on draws from the fast path's own law, fails on a wrong fast path."""

import numpy as np
import pytest
from scipy import stats

from bayeval.check import compare

N_TRIALS, P = 40, 0.3
LAW = stats.binom(N_TRIALS, P)
SUPPORT = np.arange(N_TRIALS + 1)


def law_args(p=P, mean_shift=0.0, sd_scale=1.0):
    law = stats.binom(N_TRIALS, p)
    lo, hi = law.ppf(0.025), law.ppf(0.975)
    return dict(mean=law.mean() + mean_shift, sd=law.std() * sd_scale, interval=(lo, hi),
                interval_mass=law.cdf(hi) - law.cdf(lo - 1), pmf=(SUPPORT, law.pmf(SUPPORT)))


@pytest.fixture(scope="module")
def draws():
    return LAW.rvs(size=(1, 20000), random_state=np.random.default_rng(7)).astype(float)


def test_draws_from_the_fast_path_law_pass(draws):
    rows = compare(draws, iid=True, **law_args())
    assert list(rows.index) == ["mean", "variance_ratio", "ks", "interval_mass"]
    assert rows["passed"].all(), rows


@pytest.mark.parametrize(("args", "fails"), [
    (dict(mean_shift=0.15), "mean"),           # 0.15 / (sd / sqrt(N)) = 7.3 sigma
    (dict(sd_scale=1.05), "variance_ratio"),
    (dict(p=0.31), "ks"),
])
def test_a_wrong_fast_path_fails(draws, args, fails):
    rows = compare(draws, iid=True, **law_args(**args))
    assert not rows.loc[fails, "passed"], rows


def test_a_wrong_interval_mass_fails(draws):
    args = law_args()
    args["interval_mass"] -= 0.02
    assert not compare(draws, iid=True, **args).loc["interval_mass", "passed"]


def test_autocorrelated_draws_use_the_effective_sample_size():
    rng = np.random.default_rng(3)
    phi, n = 0.9, 4000
    x = np.empty((2, n))
    x[:, 0] = rng.normal(size=2)
    noise = rng.normal(scale=np.sqrt(1 - phi**2), size=(2, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    mcmc = compare(x, mean=0.0, sd=1.0, interval=(-1.96, 1.96), interval_mass=0.95, iid=False)
    iid = compare(x, mean=0.0, sd=1.0, interval=(-1.96, 1.96), interval_mass=0.95, iid=True)
    assert mcmc["passed"].all(), mcmc
    # ESS of an AR(1) with phi = 0.9 is about N (1 - phi) / (1 + phi) = N / 19
    assert 0.02 < mcmc.loc["mean", "n_eff"] / x.size < 0.1
    assert mcmc.loc["mean", "tolerance"] > 3 * iid.loc["mean", "tolerance"]


def test_draws_must_be_chain_by_draw():
    with pytest.raises(ValueError, match=r"draws must have shape \(chain, draw\)"):
        compare(np.zeros(10), mean=0.0, sd=1.0)
