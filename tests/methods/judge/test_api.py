"""be.judge: the identities of llm_judge.md §9, the paper's simulation grid (§3.1), the exact
check of NUTS (§5), the ppi_py shim, groups, scored judges, planning, warnings and bad input.

Simulated replicates draw the sufficient statistics directly: a random split of N i.i.d. items
into m labelled and n unlabelled ones gives a multinomial 2x2 table and an independent binomial
count of judge positives, so thousands of replicates cost one vectorised call.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

from bayeval.check import compare
from bayeval.evaluation import Evaluation
from bayeval.methods.judge import fast
from bayeval.methods.judge.api import (
    eif_agreement,
    judge,
    labels_needed,
    ppi_mean_ci,
    ppi_mean_pointestimate,
)
from bayeval.methods.judge.conjugate import conjugate_posterior
from bayeval.methods.judge.models import model

PYMC = pytest.mark.xdist_group("judge_pymc")  # one worker compiles and reuses the models
# spec §5.6, first row: m = 200, theta = .3, q0 = .8, q1 = .7; 627 of 1800 unlabelled judged 1
SPEC_COUNTS = fast.Counts(36, 14, 29, 121, t1=627, t0=1173)


def simulate(theta, q0, q1, m, n, size, rng) -> fast.Counts:
    """``size`` replicates of the counts of m labelled and n unlabelled items."""
    cells = [theta * q1, theta * (1 - q1), (1 - theta) * (1 - q0), (1 - theta) * q0]
    table = rng.multinomial(m, cells, size=size)
    t1 = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0), size=size)
    return fast.Counts(*table.T, t1=t1, t0=n - t1)


def usable(c: fast.Counts) -> np.ndarray:
    """The paper's code keeps replicates with >= 2 labelled items of each class; the EIF and the
    MLE also need both judge labels among them, Rogan–Gladen a nonzero kappa."""
    m1, m0 = c.n11 + c.n10, c.n01 + c.n00
    c1, c0 = c.n11 + c.n01, c.n10 + c.n00
    keep = (np.minimum(m1, m0) >= 2) & (np.minimum(c1, c0) >= 1)
    return keep & (c.n11 * c.n00 != c.n10 * c.n01)


def subset(c: fast.Counts, keep) -> fast.Counts:
    return fast.Counts(*(np.asarray(a)[keep] for a in c))


def items(c: fast.Counts):
    """Item-level arrays (y, yhat, yhat_unlabeled) with the given counts."""
    y = np.repeat([1, 1, 0, 0], [c.n11, c.n10, c.n01, c.n00])
    yhat = np.repeat([1, 0, 1, 0], [c.n11, c.n10, c.n01, c.n00])
    return y, yhat, np.repeat([1, 0], [c.t1, c.t0])


def expected_counts(theta, q0, q1, m, n) -> fast.Counts:
    """Counts equal to their expectations: estimators then return population values."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    return fast.Counts(m * theta * q1, m * theta * (1 - q1), m * (1 - theta) * (1 - q0),
                       m * (1 - theta) * q0, n * p, n * (1 - p))


def random_parameters(size, rng, kappa_positive=True):
    theta, q0, q1 = rng.uniform(0.05, 0.95, (3, size))
    if kappa_positive:
        keep = q0 + q1 > 1.02
        theta, q0, q1 = theta[keep], q0[keep], q1[keep]
    return theta, q0, q1


# ============================================================== §9.1-9.5: exact identities
def negative_loglik(eta, c):
    theta, q0, q1 = special.expit(eta)
    p = theta * q1 + (1 - theta) * (1 - q0)
    return -(c.t1 * np.log(p) + c.t0 * np.log(1 - p) + c.n11 * np.log(theta * q1)
             + c.n10 * np.log(theta * (1 - q1)) + c.n01 * np.log((1 - theta) * (1 - q0))
             + c.n00 * np.log((1 - theta) * q0))


@pytest.mark.parametrize("seed", range(4))
def test_mle_closed_form_is_the_numerical_maximum(seed):
    """§9.1: an unconstrained numerical maximiser finds the closed form."""
    rng = np.random.default_rng(seed)
    theta, q0, q1 = rng.uniform(0.2, 0.85, 3)
    c = subset(simulate(theta, q0, q1, 300, 2700, 1, rng), 0)
    assert min(c[:4]) > 0
    res = optimize.minimize(negative_loglik, np.zeros(3), args=(c,), method="BFGS",
                            options={"gtol": 1e-10})
    np.testing.assert_allclose(special.expit(res.x), fast.mle_parameters(c), rtol=0, atol=1e-6)


def numerical_hessian(f, x, h=1e-5):
    k = len(x)
    hess = np.empty((k, k))
    for i, j in itertools.product(range(k), repeat=2):
        ei, ej = np.eye(k)[i] * h, np.eye(k)[j] * h
        hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej)
                      + f(x - ei - ej)) / (4 * h**2)
    return hess


@pytest.mark.parametrize("seed", range(4))
def test_mle_observed_information_se_is_the_eif_delta_se(seed):
    """§9.2: the observed-information se of the MLE is the EIF's delta-method se; the analytic
    information matches a finite-difference Hessian of the log-likelihood."""
    rng = np.random.default_rng(10 + seed)
    c = subset(simulate(*rng.uniform(0.2, 0.85, 3), 200, 1800, 1, rng), 0)
    assert min(c[:4]) > 0
    mle, eif = fast.mle(c), fast.eif_cells(*c.cells())
    assert float(mle.se) == pytest.approx(float(eif.se), rel=1e-12)
    params = np.array(fast.mle_parameters(c), dtype=float)
    nll = lambda x: negative_loglik(special.logit(x), c)  # noqa: E731
    numeric = numerical_hessian(nll, params)
    se_numeric = np.sqrt(np.linalg.inv(numeric)[0, 0])
    assert se_numeric == pytest.approx(float(mle.se), rel=1e-5)
    np.testing.assert_allclose(fast.observed_information(c, *params), numeric, rtol=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_eif_mle_and_ppi_pp_at_the_optimal_lambda_are_one_number(seed):
    """§9.3-9.4: MLE = pooled EIF = PPI++((n/N)(mu1 - mu0)); the OLS slope of Y on a binary
    judge is mu1 - mu0; PPI and the classical mean are PPI++ at lambda = 1 and 0."""
    rng = np.random.default_rng(20 + seed)
    c = subset(simulate(*rng.uniform(0.15, 0.85, 3), 150, 3000, 1, rng), 0)
    y, yhat, yhat_u = items(c)
    mo = fast.moments(y, yhat, yhat_u)
    mu1, mu0 = y[yhat == 1].mean(), y[yhat == 0].mean()
    assert np.polyfit(yhat, y, 1)[0] == pytest.approx(mu1 - mu0, abs=1e-12)
    eif = fast.eif_cells(*c.cells())
    lam_star = c.n / (c.m + c.n) * (mu1 - mu0)
    assert float(fast.ppi_pp(mo, lam_star).estimate) == pytest.approx(float(eif.estimate),
                                                                     abs=1e-12)
    assert float(fast.mle(c).estimate) == pytest.approx(float(eif.estimate), abs=1e-12)
    assert float(fast.eif_linear(mo).estimate) == pytest.approx(float(eif.estimate), abs=1e-12)
    ppi_direct = yhat_u.mean() - (yhat - y).mean()
    assert float(fast.ppi(mo).estimate) == pytest.approx(ppi_direct, abs=1e-12)
    assert fast.ppi_pp(mo, 1.0) == fast.ppi(mo)
    assert float(fast.ppi_pp(mo, 0.0).estimate) == pytest.approx(y.mean(), abs=1e-12)
    assert float(fast.ppi_pp(mo, 0.0).se) == pytest.approx(float(fast.classical(mo).se), abs=1e-12)


def test_eif_is_equation_15_and_cell_residuals_sum_to_zero():
    """§9.5 and eq. (15) item by item, for an ordinal judge with five scores."""
    rng = np.random.default_rng(3)
    score = rng.integers(1, 6, 2400)
    y = (rng.random(2400) < np.array([0.05, 0.1, 0.3, 0.7, 0.9])[score - 1]).astype(int)
    m = 300
    c, s, u = (np.bincount(k, weights=w, minlength=6)[1:] for k, w in
               ((score[:m], None), (score[:m], y[:m]), (score[m:], None)))
    mu = s / c
    residual = y[:m] - mu[score[:m] - 1]
    assert abs(residual.sum()) < 1e-12
    theta_15 = mu[score - 1].mean() + residual.mean()
    assert float(fast.eif_cells(c, s, u).estimate) == pytest.approx(theta_15, abs=1e-12)
    ev = judge(y[:m], score[:m], score[m:], method="eif")
    assert ev.summary().loc["eif", "mean"] == pytest.approx(theta_15, abs=1e-12)


# ============================================================ §9.6-9.9: population values
def population_variances(theta, q0, q1, gamma):
    """The spec's closed forms (√N scale) of V_EIF (17), V_MLE (Prop. 4), V_PPI, V_RG (7),
    V_PPI++(lambda*) (12) and the compact form, written here from the spec, not the package."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    kappa = q0 + q1 - 1
    big_b = (1 - theta) * q0 * (1 - q0) + theta * q1 * (1 - q1)
    big_c = kappa**2 * theta * (1 - theta)
    rho2 = theta * (1 - theta) * kappa**2 / (p * (1 - p))
    cov = theta * (q1 - p)
    lam = gamma * cov / ((1 + gamma) * p * (1 - p))
    var_y_minus_yhat = (1 - theta) * (1 - q0) + theta * (1 - q1) - (theta - p) ** 2
    return {
        "eif": theta * (1 - theta) / (p * (1 - p)) * (
            theta * (1 - theta) * kappa**2
            + (1 + gamma) * (q1 * (1 - q1) * theta + q0 * (1 - q0) * (1 - theta))),
        "compact": theta * (1 - theta) * ((1 + gamma) - gamma * rho2),
        "mle": (1 + gamma) * theta * (1 - theta) * (p * (1 - p) + gamma * big_b)
        / (p * (1 - p) + gamma * (big_c + big_b)),
        "ppi_pp": (1 + gamma) / gamma * (gamma * theta * (1 - theta)
                                         + lam**2 * (1 + gamma) * p * (1 - p)
                                         - 2 * lam * gamma * cov),
        "ppi": (1 + gamma) / gamma * (p * (1 - p) + gamma * var_y_minus_yhat),
        "rogan_gladen": (1 + gamma) / gamma / kappa**2 * (p * (1 - p) + gamma * big_b),
        "lam": lam, "p": p, "kappa": kappa, "B": big_b, "C": big_c,
    }


def information_inverse_11(theta, q0, q1, gamma):
    """[I_gamma^-1]_11 from the information matrices of Prop. 4."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    g = np.array([q0 + q1 - 1, -(1 - theta), theta])
    i_test = np.outer(g, g) / (p * (1 - p))
    i_cal = np.diag([1 / (theta * (1 - theta)), (1 - theta) / (q0 * (1 - q0)),
                     theta / (q1 * (1 - q1))])
    info = gamma / (1 + gamma) * i_test + 1 / (1 + gamma) * i_cal
    return np.linalg.inv(info)[0, 0]


def test_population_variances_agree_and_the_package_reproduces_them():
    """§9.6, 9.8, 9.9: V_EIF = V_MLE = [I^-1]_11 = V_PPI++(lambda*) = compact form; at counts
    equal to their expectations the package's N se^2 are the spec's V's, RG returns theta and
    the MLE returns (theta, q0, q1); the naive bias formula."""
    rng = np.random.default_rng(6)
    for theta, q0, q1 in zip(*random_parameters(60, rng), strict=True):
        m, n = rng.uniform(50, 500), rng.uniform(100, 20_000)
        gamma, n_total = n / m, m + n
        v = population_variances(theta, q0, q1, gamma)
        for key in ("compact", "mle", "ppi_pp"):
            assert v[key] == pytest.approx(v["eif"], rel=1e-12)
        assert information_inverse_11(theta, q0, q1, gamma) == pytest.approx(v["eif"], rel=1e-10)
        assert v["p"] * (1 - v["p"]) == pytest.approx(v["C"] + v["B"], rel=1e-12)
        c = expected_counts(theta, q0, q1, m, n)
        mo = fast.Moments.from_counts(c)
        package = {"eif": fast.eif_cells(*c.cells()), "mle": fast.mle(c), "ppi": fast.ppi(mo),
                   "ppi_pp": fast.ppi_pp(mo, v["lam"]), "rogan_gladen": fast.rogan_gladen(c)}
        for key, est in package.items():
            assert n_total * float(est.se) ** 2 == pytest.approx(v[key], rel=1e-10), key
        assert float(package["rogan_gladen"].estimate) == pytest.approx(theta, abs=1e-12)
        np.testing.assert_allclose(fast.mle_parameters(c), (theta, q0, q1), rtol=0, atol=1e-12)
        mu1, mu0 = c.n11 / (c.n11 + c.n01), c.n10 / (c.n10 + c.n00)
        assert mu1 - mu0 == pytest.approx(
            theta * (1 - theta) * v["kappa"] / (v["p"] * (1 - v["p"])), abs=1e-12)
        bias = float(fast.naive(mo).estimate) - theta
        assert bias == pytest.approx((1 - q0) - theta * (2 - q0 - q1), abs=1e-12)


def test_eif_ppi_rogan_gladen_ordering_needs_kappa_positive():
    """§9.7 / Prop. 7: V_EIF <= V_PPI <= V_RG on 20,000 random draws with kappa > 0 and
    gamma in [e^-3, e^6]; for kappa < 0, PPI is worse than RG in some draws (spec: ~13 %)."""
    rng = np.random.default_rng(7)
    theta, q0, q1 = rng.uniform(0.02, 0.98, (3, 20_000))
    gamma = np.exp(rng.uniform(-3, 6, theta.size))
    c = expected_counts(theta, q0, q1, 1.0, gamma)
    mo = fast.Moments.from_counts(c)
    v_eif, v_ppi = fast.eif_cells(*c.cells()).se ** 2, fast.ppi(mo).se ** 2
    v_rg = fast.rogan_gladen(c).se ** 2
    pos = q0 + q1 > 1
    assert (v_eif <= v_ppi * (1 + 1e-12)).all()
    assert (v_ppi[pos] <= v_rg[pos] * (1 + 1e-12)).all()
    share = np.mean(v_ppi[~pos] > v_rg[~pos])
    assert 0.08 < share < 0.2


# ====================================================== §9.10-9.11: Monte-Carlo properties
def test_ppi_finite_sample_variances_are_exact():
    """§9.10: eqs. (9) and (11) are the exact variances of PPI and PPI++(fixed lambda), which
    are unbiased; 40,000 replicates, 4-sigma tolerances (sd of a variance ~ var sqrt(2/R))."""
    rng = np.random.default_rng(8)
    theta, q0, q1, m, n, reps = 0.3, 0.8, 0.7, 100, 900, 40_000
    mo = fast.Moments.from_counts(simulate(theta, q0, q1, m, n, reps, rng))
    p = theta * q1 + (1 - theta) * (1 - q0)
    var_9 = p * (1 - p) / n + ((1 - theta) * (1 - q0) + theta * (1 - q1) - (theta - p) ** 2) / m
    for lam in (1.0, 0.6):
        est = fast.ppi_pp(mo, lam).estimate
        var_11 = (theta * (1 - theta) / m + lam**2 * (p * (1 - p) / n + p * (1 - p) / m)
                  - 2 * lam / m * theta * (q1 - p))
        if lam == 1.0:
            assert var_11 == pytest.approx(var_9, rel=1e-12)
        assert abs(est.mean() - theta) <= 4 * np.sqrt(var_11 / reps)
        assert abs(est.var(ddof=1) / var_11 - 1) <= 4 * np.sqrt(2 / reps)


def test_model_b_credible_intervals_have_frequentist_coverage():
    """§5.6 T3: 90 % equal-tailed intervals of the exact posterior cover theta in 0.87-0.93 of
    2,000 data sets (m = 200, theta in [0.2, 0.8]); 4,000 independent draws per data set."""
    rng = np.random.default_rng(9)
    reps, draws = 2000, 4000
    theta = rng.uniform(0.2, 0.8, reps)
    q0, q1 = rng.uniform(0.6, 0.9, (2, reps))
    c = fast.Counts(*(np.concatenate(v) for v in zip(*(
        simulate(t, a, b, 200, 1800, 1, rng) for t, a, b in zip(theta, q0, q1, strict=True)),
        strict=True)))
    size = (draws, reps)
    p = rng.beta(2 + c.t1 + c.n11 + c.n01, 2 + c.t0 + c.n10 + c.n00, size)
    mu1, mu0 = rng.beta(1 + c.n11, 1 + c.n01, size), rng.beta(1 + c.n10, 1 + c.n00, size)
    lo, hi = np.quantile(p * mu1 + (1 - p) * mu0, [0.05, 0.95], axis=0)
    assert 0.87 <= np.mean((lo <= theta) & (theta <= hi)) <= 0.93


def test_hausman_z_of_rogan_gladen_against_eif():
    """§5.4 / T4: (RG - EIF)/sqrt(se_RG^2 - se_EIF^2) is about N(0, 1) (efficiency of the EIF)."""
    rng = np.random.default_rng(11)
    c = simulate(0.4, 0.75, 0.8, 300, 2700, 2000, rng)
    c = subset(c, usable(c))
    rg, eif = fast.rogan_gladen(c), fast.eif_cells(*c.cells())
    z = (rg.estimate - eif.estimate) / np.sqrt(rg.se**2 - eif.se**2)
    assert abs(z.mean()) < 0.15
    assert 0.85 <= z.std() <= 1.15


# ======================================================================= §3.1 simulation grid
def test_binary_simulation_grid_coverage_and_widths():
    """The paper's grid (N = 2000, theta = .1..., .9, q0, q1 in {.6, .7, .8}; 4,000 replicates
    per cell, the paper's filter): EIF and MLE 90 % logit intervals cover in 0.87-0.93 in every
    cell with 5, 10 and 20 % labelled (MC sd 0.005); with 1 % (m = 20) the large-sample
    intervals undercover in some cells (down to 0.84) and are not tested. In every cell (all
    have kappa > 0) the median interval width orders RG > PPI > EIF."""
    rng = np.random.default_rng(2026)
    z = fast.z_value(0.9)
    for m, theta, q0, q1 in itertools.product((20, 100, 200, 400), np.arange(1, 10) / 10,
                                              (0.6, 0.7, 0.8), (0.6, 0.7, 0.8)):
        c = simulate(theta, q0, q1, m, 2000 - m, 4000, rng)
        c = subset(c, usable(c))
        mo = fast.Moments.from_counts(c)
        est = {"eif": fast.eif_cells(*c.cells()), "mle": fast.mle(c), "ppi": fast.ppi(mo),
               "rogan_gladen": fast.rogan_gladen(c)}
        width = {}
        for name, e in est.items():
            lo, hi = fast.interval(e, z, "logit")
            width[name] = np.median(hi - lo)
            if name in ("eif", "mle") and m >= 100:
                coverage = np.mean((lo <= theta) & (theta <= hi))
                assert 0.87 <= coverage <= 0.93, (name, m, theta, q0, q1, coverage)
        assert width["rogan_gladen"] > width["ppi"] > width["eif"], (m, theta, q0, q1, width)


# ======================================================================= scored (ordinal) judge
def test_scored_judge_eif_cells_cover_and_beat_ppi():
    """§2.7 / §3.2 with a binary label: a 5-point judge score with a nonlinear calibration
    curve. EIF with cell means covers (90 %, 4,000 replicates) and is narrower than PPI++
    (a line), itself narrower than PPI (scores on the wrong scale)."""
    rng = np.random.default_rng(12)
    share = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    mu = np.array([0.1, 0.15, 0.2, 0.6, 0.95])
    values = np.arange(1.0, 6.0)
    theta, m, n, reps = share @ mu, 200, 1800, 4000
    c = rng.multinomial(m, share, size=reps)
    s = rng.binomial(c, mu)
    u = rng.multinomial(n, share, size=reps)
    eif = fast.eif_cells(c, s, u)
    y_mean, yh_mean, yhu_mean = s.sum(1) / m, c @ values / m, u @ values / n
    mo = fast.Moments(m=m, n=n, y_mean=y_mean, yhat_mean=yh_mean, yhat_u_mean=yhu_mean,
                      y_var=y_mean * (1 - y_mean), yhat_var=c @ values**2 / m - yh_mean**2,
                      yhat_u_var=u @ values**2 / n - yhu_mean**2,
                      cov=s @ values / m - y_mean * yh_mean)
    z = fast.z_value(0.9)
    lo, hi = fast.interval(eif, z, "logit")
    assert 0.87 <= np.mean((lo <= theta) & (theta <= hi)) <= 0.93
    widths = [np.median(e.se) for e in (eif, fast.ppi_pp(mo, fast.ppi_pp_lambda(mo, clip=False)),
                                           fast.ppi(mo))]
    assert widths[0] < widths[1] < widths[2]


def test_scored_judge_through_judge():
    """mu_model: cells, bins for continuous scores, a line (= PPI++ at lambda = (n/N) b);
    Rogan–Gladen and the MLE need a binary judge."""
    rng = np.random.default_rng(13)
    y = (rng.random(3000) < 0.4).astype(int)
    score = np.clip(0.5 * y + rng.normal(0.3, 0.2, 3000), 0, 1)
    args = (y[:300], score[:300], score[300:])
    ev = judge(*args, method="all")
    assert list(ev.summary().index) == ["naive", "classical", "ppi", "ppi_pp",
                                        "ppi_pp_unclipped", "eif"]
    assert "not computed: rogan_gladen, rogan_gladen_adjusted, mle" in ev.meta["description"]
    bins = judge(*args).summary().loc["eif"]
    assert abs(bins["mean"] - 0.4) < 4 * bins["sd"]
    line = judge(*args, mu_model="linear").summary().loc["eif", "mean"]
    mo = fast.moments(*args)
    lam = 2700 / 3000 * mo.cov / mo.yhat_var
    assert line == pytest.approx(float(fast.ppi_pp(mo, lam).estimate), abs=1e-12)
    with pytest.raises(ValueError, match="needs binary judge labels"):
        judge(*args, method="mle")


# ===================================================================== the generative models
@pytest.fixture(scope="module")
def both_a():
    y, yhat, yhat_u = items(SPEC_COUNTS)
    return judge(y, yhat, yhat_u, method="both", random_seed=1)


@PYMC
def test_model_a_nuts_matches_its_exact_posterior(both_a):
    """T1: with the default (Dirichlet) priors, Model A's posterior is the conjugate one."""
    check = both_a.check()
    assert check.attrs["passed"], check
    post = both_a.tree["posterior"].to_dataset()
    cf = both_a.closed_form
    finite = compare(post["theta_finite"].values, mean=float(cf["finite_mean"]),
                     sd=float(cf["finite_sd"]))
    assert finite["passed"].all(), finite
    assert both_a.diagnostics().attrs["ok"]
    np.testing.assert_allclose(post["kappa"], post["q0"] + post["q1"] - 1, atol=1e-12)


@PYMC
def test_model_a_agrees_with_eif(both_a):
    """T2 / §5.4 at m = 200: posterior mean within 0.25 SE, sd ratio within 0.9-1.1."""
    agreement = eif_agreement(both_a)
    assert agreement["expected"].all()
    assert agreement.attrs["passed"], agreement


@PYMC
def test_a_wrong_closed_form_fails_the_check(both_a):
    """The check has power: the exact posterior of a table with 6 more true positives fails."""
    wrong = conjugate_posterior(SPEC_COUNTS._replace(n11=SPEC_COUNTS.n11 + 6),
                                {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}, 0.95)
    tree = both_a.tree.copy()
    tree["closed_form"] = tree["closed_form"].to_dataset().assign(
        mean=wrong.mean, sd=wrong.sd, lower=wrong.lower, upper=wrong.upper)
    check = Evaluation(tree).check()
    assert not check.attrs["passed"]
    assert not check.loc["mean", "passed"]


@PYMC
def test_model_b_nuts_matches_its_exact_posterior_per_group():
    groups = {"system_a": SPEC_COUNTS, "system_b": fast.Counts(45, 9, 16, 30, t1=940, t0=960)}
    arrays = {g: items(c) for g, c in groups.items()}
    ev = judge(*({g: a[k] for g, a in arrays.items()} for k in range(3)), method="both",
               model="b", random_seed=2)
    check = ev.check()
    assert check.attrs["passed"], check
    assert list(ev.summary().index) == ["system_a", "system_b"]
    single = conjugate_posterior(groups["system_b"], {"p": (2, 2), "mu1": (1, 1),
                                                      "mu0": (1, 1)}, 0.95)
    assert float(ev.closed_form["mean"].sel(group="system_b")) == pytest.approx(
        float(single.mean), abs=1e-14)


@PYMC
def test_prior_sensitivity_flags_an_informative_prior(both_a):
    """Evaluation.sensitivity(): a confident, wrong sensitivity prior with 40 labels is flagged;
    the default prior with 200 labels is not."""
    assert both_a.sensitivity().loc["theta", "prior"] < 0.05
    d = pd.DataFrame(np.column_stack(items(SPEC_COUNTS)[:2]), columns=["y", "yhat"])
    small = d.sample(40, random_state=3)
    ev = judge(small.y, small.yhat, items(SPEC_COUNTS)[2], method="pymc",
               prior={"q1": (60, 3)}, random_seed=4)
    assert ev.sensitivity().loc["theta", "prior"] >= 0.05


def test_exact_posterior_interval_and_finite_mean():
    """The quadrature interval holds ci_prob of 10^6 independent draws (MC sd 2e-4); the
    finite-sample mean's moments match simulated hidden labels."""
    rng = np.random.default_rng(14)
    prior = {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}
    post = conjugate_posterior(SPEC_COUNTS, prior, 0.9)
    c, size = SPEC_COUNTS, 1_000_000
    p = rng.beta(2 + c.t1 + c.n11 + c.n01, 2 + c.t0 + c.n10 + c.n00, size)
    mu1, mu0 = rng.beta(1 + c.n11, 1 + c.n01, size), rng.beta(1 + c.n10, 1 + c.n00, size)
    theta = p * mu1 + (1 - p) * mu0
    assert np.mean(theta < post.lower) == pytest.approx(0.05, abs=4 * np.sqrt(0.05 * 0.95 / size))
    assert np.mean(theta > post.upper) == pytest.approx(0.05, abs=4 * np.sqrt(0.05 * 0.95 / size))
    assert theta.mean() == pytest.approx(float(post.mean), abs=4 * float(post.sd) / np.sqrt(size))
    finite = (c.n11 + c.n10 + rng.binomial(c.t1, mu1) + rng.binomial(c.t0, mu0)) / (c.m + c.n)
    assert finite.mean() == pytest.approx(float(post.finite_mean),
                                          abs=4 * float(post.finite_sd) / np.sqrt(size))
    assert finite.std() == pytest.approx(float(post.finite_sd), rel=4 * np.sqrt(2 / size))


@pytest.mark.parametrize("name", ["judge_model_a", "judge_model_b"])
def test_catalogue_references_are_the_exact_posterior(name):
    """The long-run references of models/judge_model_{a,b} (default priors) are the conjugate
    posterior: theta's mean and sd within 4 of their MCSEs."""
    import json
    from pathlib import Path

    spec = json.loads((Path(__file__).resolve().parents[3] / "models" / name /
                       "reference.json").read_text())
    counts = fast.Counts(*(spec["kwargs"][k] for k in fast.Counts._fields))
    exact = conjugate_posterior(counts, {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}, 0.95)
    ref = spec["reference"]["theta"]
    assert abs(ref["mean"] - float(exact.mean)) <= 4 * ref["mcse_mean"]
    assert abs(ref["sd"] - float(exact.sd)) <= 4 * ref["mcse_sd"]


def test_models_sum_the_labels_out():
    """The unlabelled items are one binomial count: no variable grows with n."""
    big = model(36, 14, 29, 121, t1=10**7, t0=2 * 10**7, variant="a")
    assert all(np.size(v.eval()) == 1 for v in big.data_vars)
    assert np.isfinite(big.compile_logp()(big.initial_point()))
    grouped = model([36, 45], [14, 9], [29, 16], [121, 30], [627, 940], [1173, 960], variant="b",
                    groups=["a", "b"])
    assert grouped.named_vars_to_dims["theta"] == ("group",)
    assert sorted(v.name for v in grouped.deterministics) == ["theta"]


def test_model_a_and_b_priors_are_the_same_dirichlet():
    """The default priors of A and B give the same prior law of theta, p, mu1, mu0 (checked on
    the prior predictive of theta: Beta(2, 2) in both)."""
    import pymc as pm

    a = pm.draw(model(*SPEC_COUNTS, variant="a")["theta"], draws=20_000, random_seed=1)
    b = pm.draw(model(*SPEC_COUNTS, variant="b")["theta"], draws=20_000, random_seed=2)
    for draws in (a, b):
        assert stats.kstest(draws, stats.beta(2, 2).cdf).pvalue > 1e-3


# ============================================================================ ppi_py shim
def ppi_py_transcription(Y, Yhat, Yhat_unlabeled, alpha, lam):
    """ppi_py 0.2.3's ppi_mean_ci for 1-D inputs, line by line (np.cov / np.std, ddof as there)."""
    n, N = Y.size, Yhat_unlabeled.size
    if lam is None:
        cov = np.mean((Y - Y.mean()) * (Yhat - Yhat.mean())) * 2
        var = np.cov(np.concatenate([Yhat, Yhat_unlabeled]))
        lam = float(np.clip(cov / (2 * (1 + n / N) * var), 0, 1))
    est = (lam * Yhat_unlabeled).mean() + (Y - lam * Yhat).mean()
    se = np.sqrt((lam * Yhat_unlabeled).std() ** 2 / N + (Y - lam * Yhat).std() ** 2 / n)
    z = stats.norm.ppf(1 - alpha / 2)
    return est - z * se, est + z * se


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
def test_ppi_shim_matches_ppi_py(lam):
    rng = np.random.default_rng(15)
    d = [simulate(0.35, 0.7, 0.85, 120, 5000, 1, rng), simulate(0.6, 0.55, 0.5, 80, 900, 1, rng)]
    for c in d:
        y, yhat, yhat_u = (a.astype(float) for a in items(subset(c, 0)))
        lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam)
        ref = ppi_py_transcription(y, yhat, yhat_u, 0.1, lam)
        np.testing.assert_allclose([lo[0], hi[0]], ref, rtol=0, atol=1e-12)
        assert lo.shape == hi.shape == (1,)
        ppi_py = pytest.importorskip("ppi_py")
        np.testing.assert_allclose(np.ravel(ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1,
                                                               lam=lam)), [lo[0], hi[0]],
                                   rtol=0, atol=1e-10)
        np.testing.assert_allclose(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam),
                                   ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam),
                                   rtol=0, atol=1e-10)


def test_ppi_shim_one_sided_and_its_link_to_judge():
    y, yhat, yhat_u = items(SPEC_COUNTS)
    lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, alternative="larger")
    two_lo, _ = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert lo[0] == pytest.approx(two_lo[0], abs=1e-14) and np.isinf(hi[0])
    with pytest.warns(UserWarning, match="does not help PPI"):
        s = judge(y, yhat, yhat_u, method="all", ci_kind="wald", ci_prob=0.9).summary()
    both = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert [s.loc["ppi_pp", "lower"], s.loc["ppi_pp", "upper"]] == pytest.approx(
        [both[0][0], both[1][0]], abs=1e-12)
    with pytest.raises(ValueError, match="length mismatch: Y has 200, Yhat has 199"):
        ppi_mean_ci(y, yhat[:-1], yhat_u)
    with pytest.raises(ValueError, match="lam is undefined"):
        ppi_mean_ci([1, 0, 1], [1, 1, 1], [1, 1])


# ================================================================================== groups
def test_groups_are_independent_fits():
    """Several judges on the same human labels (a DataFrame, shared y) equal one fit each."""
    rng = np.random.default_rng(16)
    y = (rng.random(2000) < 0.45).astype(int)
    judges = pd.DataFrame({name: np.where(y == 1, rng.random(2000) < q1, rng.random(2000) > q0)
                           .astype(int) for name, q0, q1 in
                           (("cheap", 0.65, 0.7), ("strong", 0.85, 0.9))})
    with pytest.warns(UserWarning, match=r"\[cheap\] the judge does not help PPI"):
        ev = judge(y[:250], judges.iloc[:250], judges.iloc[250:], method="all")
    s = ev.summary()
    assert s.index.names == ["estimator", "group"]
    for name in judges:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the cheap judge's, as above
            one = judge(y[:250], judges[name][:250], judges[name][250:],
                        method="all").summary()
        pd.testing.assert_frame_equal(s.xs(name, level="group"), one, check_names=False,
                                      rtol=0, atol=1e-15)
    data = ev.tree["data"].to_dataset()
    assert data["kappa"].sel(group="strong") > data["kappa"].sel(group="cheap")
    assert s.loc[("eif", "strong"), "sd"] < s.loc[("eif", "cheap"), "sd"]


# ================================================================================ planning
def test_labels_needed_delivers_the_half_width():
    """The planned m gives the target half-width: z times the sd of 4,000 simulated EIF
    estimates matches it within 4 sigma plus the O(1/m) asymptotic error (3 %)."""
    theta, q0, q1, n_total, h = 0.3, 0.85, 0.8, 20_000, 0.025
    p = theta * q1 + (1 - theta) * (1 - q0)
    rho2 = theta * (1 - theta) * (q0 + q1 - 1) ** 2 / (p * (1 - p))
    m = labels_needed(h, theta=theta, rho2=rho2, n_total=n_total)
    z = fast.z_value(0.95)
    assert z**2 * theta * (1 - theta) * (rho2 / n_total + (1 - rho2) / m) <= h**2
    assert 200 < m < labels_needed(h, theta=theta, rho2=0.0)
    rng = np.random.default_rng(17)
    c = subset(c := simulate(theta, q0, q1, m, n_total - m, 4000, rng), usable(c))
    sd = fast.eif_cells(*c.cells()).estimate.std(ddof=1)
    assert z * sd == pytest.approx(h, rel=4 / np.sqrt(2 * 4000) + 0.03)
    with pytest.raises(ValueError, match="out of reach"):
        labels_needed(0.001, theta=0.3, rho2=0.5, n_total=10_000)
    with pytest.raises(ValueError, match="rho2 must lie in"):
        labels_needed(0.03, theta=0.3, rho2=1.5)


# ====================================================================== warnings, bad input
def test_warnings_name_what_is_wrong():
    y, yhat, yhat_u = items(fast.Counts(30, 0, 20, 40, t1=500, t0=700))  # empty (Y=1, judge=0)
    with pytest.warns(UserWarning, match=r"empty labelled cell\(s\) \(Y=1, judge=0\)"):
        ev = judge(y, yhat, yhat_u, method="all")
    assert any("empty labelled cell" in w for w in ev.warnings)
    weak = items(fast.Counts(30, 25, 25, 30, t1=500, t0=500))  # kappa ~ 0.09
    with pytest.warns(UserWarning, match="weak judge"):
        judge(*weak)
    outside = items(fast.Counts(10, 2, 30, 60, t1=100, t0=900))  # RG raw < 0
    with pytest.warns(UserWarning, match="rogan_gladen = -0.4667 lies outside"):
        judge(*outside, method="rogan_gladen")


def test_a_judge_no_better_than_chance():
    """kappa <= 0: Rogan–Gladen is left out of "all" (it divides by kappa) and refused alone;
    the EIF still answers (close to the human labels' mean)."""
    y, yhat, yhat_u = items(fast.Counts(20, 30, 35, 25, t1=600, t0=400))
    with pytest.warns(UserWarning) as caught:
        ev = judge(y, yhat, yhat_u, method="all")
    said = " ".join(str(w.message) for w in caught)
    assert "no better than chance" in said and "rogan_gladen_adjusted left out" in said
    assert "rogan_gladen" not in ev.summary().index
    assert "mle" in ev.summary().index
    assert ev.summary().loc["eif", "mean"] == pytest.approx(50 / 110, abs=0.02)
    with pytest.raises(ValueError, match=r"kappa = q0 \+ q1 - 1, which is -0\.1"):
        judge(y, yhat, yhat_u, method="rogan_gladen")


def test_a_group_with_a_chance_judge_leaves_rogan_gladen_out_there_only():
    """Several groups: Rogan–Gladen is NaN for the group whose kappa <= 0 (its warning says
    so) and estimated for the others."""
    bad_counts = fast.Counts(20, 30, 35, 25, t1=600, t0=400)
    good_counts = fast.Counts(45, 5, 8, 52, t1=600, t0=400)
    (y_bad, bad, bad_u), (y_good, good, good_u) = items(bad_counts), items(good_counts)
    with pytest.warns(UserWarning) as caught:
        ev = judge({"bad": y_bad, "good": y_good}, {"bad": bad, "good": good},
                   {"bad": bad_u, "good": good_u}, method="all")
    said = [str(w.message) for w in caught]
    assert any(m.startswith("[bad] rogan_gladen, rogan_gladen_adjusted left out") for m in said)
    assert not any(m.startswith("[good]") for m in said)
    rg = ev.closed_form["mean"].sel(estimator="rogan_gladen")
    assert np.isnan(float(rg.sel(group="bad"))) and np.isfinite(float(rg.sel(group="good")))
    alone = judge(y_good, good, good_u, method="rogan_gladen").closed_form["mean"]
    assert float(rg.sel(group="good")) == pytest.approx(alone.item(), abs=1e-12)
    assert "NaN where not" in ev.meta["description"]


def test_no_silent_nan_on_small_random_data():
    """200 small data sets: every estimate, se and bound is finite, or the call is refused."""
    rng = np.random.default_rng(18)
    refused = 0
    for _ in range(200):
        m = int(rng.integers(6, 40))
        c = subset(simulate(*rng.uniform(0.05, 0.95, 3), m, int(rng.integers(5, 500)), 1, rng), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                cf = judge(*items(c), method="all").closed_form
            except ValueError:
                refused += 1
                continue
        assert all(np.isfinite(cf[v]).all() for v in ("mean", "sd", "lower", "upper"))
    assert refused < 100


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (([0, 1, 2, 1], [0, 1, 1, 1], [0, 1]), {}, "y must be binary"),
    (([0, 1, 1, 0], [0, 1, 1], [0, 1]), {}, "length mismatch: y has 4, yhat has 3"),
    (([0, 1, 1, 1, 1], [0, 1, 0, 1, 1], [0, 1]), {}, "1 negative label"),
    (([0, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1]), {}, "single value"),
    (([0, 0, 1, 1], [1, 1, 1, 1], [1, 0, 1]), {}, "every labelled item"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "best"}, "method must be one of"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"ci_kind": "exact"}, "ci_kind must be one of"),
    (([0, 0, 1, 1], [0, 1, 0, 1], []), {}, "yhat_unlabeled is empty"),
    (([0, 0, 1, 1], [0, 0.5, 0, 1], [0, 1]), {"method": "pymc"}, "needs binary judge"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "pymc", "prior": {"eta": (1, 1)}},
     "prior has unknown key"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "pymc", "prior": {"q1": (0, 1)}},
     "prior\\['q1'\\] must be two positive"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "both", "prior": {"q1": (5, 1)}},
     "no exact closed form"),
    (({"a": [0, 0, 1, 1]}, {"b": [0, 1, 0, 1]}, [0, 1]), {}, "yhat has groups \\['b'\\]"),
    (({"a": [0, 0, 1, 1, 1]}, [0, 1, 0, 1], [0, 1]), {}, "y\\['a'\\] has 5, yhat\\['a'\\] has 4"),
])
def test_bad_input_is_refused_with_a_clear_message(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        judge(*args, **kwargs)


def test_old_argument_and_builder_names_still_work_with_a_warning():
    """estimator= and ci= are method= and ci_kind=; model_a, model_b are model(variant=)."""
    import bayeval.methods.judge as judge_package

    y, yhat, yhat_u = items(SPEC_COUNTS)
    new = judge(y, yhat, yhat_u, method="ppi_pp", ci_kind="wald")
    with pytest.warns(FutureWarning, match=r"judge\(estimator=\) is now judge\(method=\)"):
        old = judge(y, yhat, yhat_u, estimator="ppi_pp", ci_kind="wald")
    assert old.tree.equals(new.tree) and old.meta["variant"] == "ppi_pp"
    with pytest.warns(FutureWarning, match=r"judge\(ci=\) is now judge\(ci_kind=\)"):
        old = judge(y, yhat, yhat_u, method="ppi_pp", ci="wald")
    assert old.tree.equals(new.tree)
    with pytest.raises(TypeError, match="both estimator= and its new name method="):
        judge(y, yhat, yhat_u, method="eif", estimator="eif")
    for variant, free in (("a", ["rates"]), ("b", ["p", "mu1", "mu0"])):
        with pytest.warns(FutureWarning, match=f"model_{variant} is now .*variant='{variant}'"):
            builder = getattr(judge_package, f"model_{variant}")
        assert [v.name for v in builder(*SPEC_COUNTS).free_RVs] == free
