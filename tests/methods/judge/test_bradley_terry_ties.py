"""Davidson's (1970) ties in bradley_terry: against direct maximum-likelihood fits (scipy) of the
written-out likelihood, the two-system closed form, and coverage of the PPI++ strengths."""

import warnings

import numpy as np
import pytest
import scipy

from bayeval.methods.judge import bradley_terry

BETA = np.array([0.6, 0.2, -0.2, -0.6])
NU = 0.5
NAMES = np.array(["m0", "m1", "m2", "m3"])


def davidson_data(seed, n_pairs=3000, m=400):
    """Davidson comparisons of four systems; the judge keeps the human verdict with probability
    0.7, else says first wins / second wins / tie with probabilities 0.45, 0.35, 0.2."""
    rng = np.random.default_rng(seed)
    ab = np.argsort(rng.random((n_pairs, 4)), axis=1)[:, :2]
    pa, pb = np.exp(BETA[ab[:, 0]]), np.exp(BETA[ab[:, 1]])
    tie = NU * np.sqrt(pa * pb)
    cum = np.stack([pa, pa + pb], axis=1) / (pa + pb + tie)[:, None]
    u = rng.random(n_pairs)
    v = np.where(u < cum[:, 0], 1.0, np.where(u < cum[:, 1], 0.0, 0.5))
    other = rng.choice([1.0, 0.0, 0.5], n_pairs, p=[0.45, 0.35, 0.2])
    vhat = np.where(rng.random(n_pairs) < 0.7, v, other)
    pairs = NAMES[ab]
    return pairs[:m], v[:m], vhat[:m], pairs[m:], vhat[m:]


def davidson_mle(pairs, v):
    """Strengths (sum 0) and nu maximising Davidson's likelihood, written from its definition
    P(a) = pi_a / D, P(tie) = nu sqrt(pi_a pi_b) / D, D = pi_a + pi_b + nu sqrt(pi_a pi_b)."""
    idx = {s: j for j, s in enumerate(NAMES)}
    a = np.array([idx[s] for s in pairs[:, 0]])
    b = np.array([idx[s] for s in pairs[:, 1]])

    def nll(free):
        beta = np.append(free[:3], -free[:3].sum())
        pa, pb, nu = np.exp(beta[a]), np.exp(beta[b]), np.exp(free[3])
        tie = nu * np.sqrt(pa * pb)
        p = np.where(v == 1, pa, np.where(v == 0, pb, tie)) / (pa + pb + tie)
        return -np.sum(np.log(p))

    res = scipy.optimize.minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    return np.append(res.x[:3], -res.x[:3].sum()), float(np.exp(res.x[3]))


def _fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bradley_terry(*args, ties="davidson", random_seed=0, **kw)


def test_classical_is_the_maximum_likelihood_fit_of_the_human_verdicts():
    p, v, vh, pu, vhu = davidson_data(0)
    ev = _fit(p, v, vh, pu, vhu, method="classical")
    beta, nu = davidson_mle(p, v)
    np.testing.assert_allclose(ev.summary()["mean"], beta, rtol=0, atol=1e-6)
    assert abs(float(ev.tree["data"]["tie_nu"]) - nu) < 1e-6
    lam0 = _fit(p, v, vh, pu, vhu, method="ppi_pp", lam=0.0)
    np.testing.assert_allclose(lam0.summary()["mean"], beta, rtol=0, atol=1e-6)


def test_naive_and_ppi_with_a_perfect_audit_are_the_fit_of_the_judge_s_verdicts():
    p, v, _, pu, vhu = davidson_data(1)
    beta, nu = davidson_mle(pu, vhu)
    for method in ("naive", "ppi"):
        ev = _fit(p, v, v, pu, vhu, method=method)
        np.testing.assert_allclose(ev.summary()["mean"], beta, rtol=0, atol=1e-6)
        assert abs(float(ev.tree["data"]["tie_nu"]) - nu) < 1e-6


def test_two_systems_have_the_closed_form_of_the_saturated_model():
    """Two systems: d = log(n_a / n_b), nu = n_tie / sqrt(n_a n_b), and the sandwich variance
    of d that of the log-ratio of the multinomial shares, 1/n_a + 1/n_b."""
    rng = np.random.default_rng(2)
    v = rng.choice([1.0, 0.0, 0.5], 600, p=[0.5, 0.3, 0.2])
    pairs = np.tile(["a", "b"], (600, 1))
    ev = _fit(pairs[:300], v[:300], v[:300], pairs[300:], v[300:], method="classical")
    n_a, n_b, n_t = (np.sum(v[:300] == x) for x in (1.0, 0.0, 0.5))
    d = ev.differences().loc["a - b"]
    assert d["mean"] == pytest.approx(np.log(n_a / n_b), abs=1e-8)
    assert d["sd"] == pytest.approx(np.sqrt(1 / n_a + 1 / n_b), abs=1e-8)
    assert float(ev.tree["data"]["tie_nu"]) == pytest.approx(n_t / np.sqrt(n_a * n_b), abs=1e-8)


def test_ppi_pp_strengths_and_nu_cover_under_davidson_s_model():
    """R = 120 replicates, 400 audited of 3,000 comparisons: the 95 % intervals of the
    strengths (each system) and of log nu cover within 4 Monte-Carlo SEs (0.02) of 0.95."""
    reps = 120
    hits, nu_hits = [], []
    for r in range(reps):
        ev = _fit(*davidson_data(100 + r), adjust="none")
        s = ev.summary()
        hits.append(((s["lower"] <= BETA) & (BETA <= s["upper"])).to_numpy())
        data = ev.tree["data"]
        log_nu, sd = np.log(float(data["tie_nu"])), float(data["tie_log_nu_sd"])
        nu_hits.append(abs(log_nu - np.log(NU)) <= 1.959964 * sd)
    se = np.sqrt(0.95 * 0.05 / reps)
    assert (np.abs(np.mean(hits, axis=0) - 0.95) <= 4 * se).all(), np.mean(hits, axis=0)
    assert abs(np.mean(nu_hits) - 0.95) <= 4 * se


def test_davidson_refuses_bad_input():
    p, v, vh, pu, vhu = davidson_data(3)
    with pytest.raises(ValueError, match="ties must be one of"):
        bradley_terry(p, v, vh, pu, vhu, ties="rao_kupper")
    no_tie = np.where(v == 0.5, 1.0, v)
    with pytest.raises(ValueError, match="tie parameter diverges"):
        bradley_terry(p, no_tie, vh, pu, vhu, method="classical", ties="davidson")
