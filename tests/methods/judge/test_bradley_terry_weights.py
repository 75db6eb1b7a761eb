"""Sampling weights in bradley_terry: uniform weights give the unweighted fit, integer weights
duplicate comparisons, two systems give the weighted PPI++ win rate, a verdict-dependent audit
is corrected (unbiased strengths, calibrated standard errors), the sandwich against one built
by finite differences of the weighted estimating equations, and bad weights."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy

from bayeval.methods.judge import bradley_terry
from bayeval.methods.judge import weighted as wt
from bayeval.methods.judge.bradley_terry import _sandwich, bt_fit, bt_lambda

NAMES = np.array(["w", "x", "y", "z"])
BETA = np.array([0.6, 0.2, -0.2, -0.6])
NU = 0.5
BASIS = scipy.linalg.null_space(np.ones((1, 4)))


def simulate(rng, n=3000, ties=False, high=0.2, low=0.06):
    """Comparisons of four systems (Bradley-Terry, or Davidson's model with nu = 0.5 when
    ``ties``); the judge keeps the human verdict with probability 0.75, else says first wins
    with probability 0.7 (with ties: first, second, tie with 0.45, 0.35, 0.2). A comparison is
    audited with probability ``high`` when the judge names z the winner (or, with ties, calls a
    tie), else ``low``. Returns the audited and other comparisons and the weights 1/pi and
    1/(1 - pi)."""
    ab = np.argsort(rng.random((n, 4)), axis=1)[:, :2]
    pa, pb = np.exp(BETA[ab[:, 0]]), np.exp(BETA[ab[:, 1]])
    tie = NU * np.sqrt(pa * pb) if ties else np.zeros(n)
    u = rng.random(n)
    v = np.where(u < pa / (pa + pb + tie), 1.0, np.where(u < (pa + pb) / (pa + pb + tie), 0.0, 0.5))
    other = (rng.choice([1.0, 0.0, 0.5], n, p=[0.45, 0.35, 0.2]) if ties else
             (rng.random(n) < 0.7) * 1.0)
    vhat = np.where(rng.random(n) < 0.75, v, other)
    flagged = np.where(vhat == 1, ab[:, 0], ab[:, 1]) == 3
    if ties:
        flagged = vhat == 0.5
    pi = np.where(flagged, high, low)
    lab = rng.random(n) < pi
    p = NAMES[ab]
    return p[lab], v[lab], vhat[lab], p[~lab], vhat[~lab], 1 / pi[lab], 1 / (1 - pi[~lab])


def fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bradley_terry(*args, random_seed=0, **kw)


def rows(p):
    """Rows e_a - e_b of the comparisons."""
    x = np.zeros((len(p), 4))
    x[np.arange(len(p)), np.searchsorted(NAMES, p[:, 0])] = 1.0
    x[np.arange(len(p)), np.searchsorted(NAMES, p[:, 1])] = -1.0
    return x


@pytest.fixture(scope="module", params=["half", "davidson"])
def data(request):
    ties = request.param == "davidson"
    return request.param, simulate(np.random.default_rng(11 if ties else 12), n=2000, ties=ties)


# ------------------------------------------------------------------------ uniform weights
@pytest.mark.parametrize("method", ["ppi_pp", "ppi", "classical", "naive"])
def test_uniform_weights_give_the_unweighted_fit(data, method):
    ties, (p, v, vh, pu, vu, _, _) = data
    plain = fit(p, v, vh, pu, vu, method=method, ties=ties)
    ones = fit(p, v, vh, pu, vu, method=method, ties=ties, sample_weight=np.full(len(v), 3.0),
               sample_weight_unlabeled=np.ones(len(vu)))
    for var in ("mean", "sd", "cov", "pair_mean", "pair_sd", "pair_win_prob_lower"):
        np.testing.assert_allclose(ones.closed_form[var], plain.closed_form[var], rtol=0,
                                   atol=1e-10, err_msg=var)
    keys = ["lam"] + (["tie_nu", "tie_log_nu_sd"] if ties == "davidson" else [])
    for key in keys:
        assert float(ones.tree["data"][key]) == pytest.approx(float(plain.tree["data"][key]),
                                                              rel=0, abs=1e-10), key
    assert float(ones.tree["data"]["m_kish"]) == pytest.approx(len(v), rel=1e-12)


# ----------------------------------------------------------- integer weights, duplicates
@pytest.mark.parametrize("kw", [{"method": "classical"}, {"method": "ppi"},
                                {"method": "ppi_pp", "lam": 0.4}])
def test_integer_weights_are_duplicated_comparisons(data, kw):
    ties, (p, v, vh, pu, vu, _, _) = data
    rng = np.random.default_rng(3)
    k, k_u = rng.integers(1, 4, len(v)), rng.integers(1, 3, len(vu))
    weighted = fit(p, v, vh, pu, vu, ties=ties, sample_weight=k, sample_weight_unlabeled=k_u,
                   **kw)
    copies = fit(np.repeat(p, k, axis=0), np.repeat(v, k), np.repeat(vh, k),
                 np.repeat(pu, k_u, axis=0), np.repeat(vu, k_u), ties=ties, **kw)
    np.testing.assert_allclose(weighted.closed_form["mean"], copies.closed_form["mean"],
                               rtol=0, atol=1e-8)
    if ties == "davidson":
        assert float(weighted.tree["data"]["tie_nu"]) == pytest.approx(
            float(copies.tree["data"]["tie_nu"]), rel=0, abs=1e-8)


# ------------------------------------------------------------------------- two systems
def test_two_systems_give_the_logit_of_the_weighted_ppi_pp_win_rate():
    """d = logit(theta), theta the weighted PPI++ win rate at the same lambda (ppi_py's
    weighted lambda, clipped), and se(d) = se(theta) / (theta (1 - theta)) (delta method)."""
    rng = np.random.default_rng(4)
    y = (rng.random(900) < 0.62) * 1.0
    yh = np.where(rng.random(900) < 0.8, y, rng.random(900) < 0.5) * 1.0
    pi = np.where(yh == 0, 0.3, 0.08)
    lab = rng.random(900) < pi
    pairs = np.tile(["a", "b"], (900, 1))
    ev = fit(pairs[lab], y[lab], yh[lab], pairs[~lab], yh[~lab], sample_weight=1 / pi[lab],
             sample_weight_unlabeled=1 / (1 - pi[~lab]))
    s = wt.Sample.of(y[lab], yh[lab], yh[~lab], 1 / pi[lab], 1 / (1 - pi[~lab]))
    lam = wt.ppi_pp_lambda(s)
    assert 0 < lam < 1
    assert float(ev.tree["data"]["lam"]) == pytest.approx(lam, rel=1e-8)
    est = wt.ppi_pp(s, lam)
    d = ev.differences().loc["a - b"]
    assert d["mean"] == pytest.approx(scipy.special.logit(est.estimate), abs=1e-8)
    assert d["win_prob"] == pytest.approx(est.estimate, abs=1e-8)
    assert d["sd"] == pytest.approx(est.se / (est.estimate * (1 - est.estimate)), rel=1e-7)


# ------------------------------------------------------------------ stratified design
def _ppi_pp(p, v, vh, pu, vu, w=None, wu=None, ties="half"):
    """bradley_terry's default estimate and sandwich sds, without its rank draws."""
    args = (rows(p), v, vh, rows(pu), vu)
    kw = {} if w is None else {"w": wt.sampling_weights(w, len(v), ""),
                               "v": wt.sampling_weights(wu, len(vu), "")}
    lam = float(np.clip(bt_lambda(*args, bt_fit(*args, 1.0, BASIS, ties, **kw), ties, **kw),
                        0, 1))
    beta = bt_fit(*args, lam, BASIS, ties, **kw)
    return beta, np.sqrt(np.diag(_sandwich(*args, beta, lam, BASIS, ties, **kw)))


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_weights_remove_the_bias_of_a_verdict_dependent_audit(ties):
    """200 samples of 3,000 comparisons, about 260 audited: those the judge says z won (with
    Davidson's model: called a tie) with probability 0.2, the others 0.06. The weighted PPI++
    strengths (and log nu) are unbiased within 4 Monte-Carlo SEs and their mean sandwich sd is
    the spread of the estimates within 4 SEs of a sample sd (1/sqrt(2R) relative); unweighted,
    the bias is over 6 Monte-Carlo SEs (z's strength; with Davidson's model log nu)."""
    rng = np.random.default_rng(20261125)
    truth = np.append(BETA, np.log(NU)) if ties == "davidson" else BETA
    draws = {"weighted": [], "plain": [], "sd": []}
    for r in range(200):
        p, v, vh, pu, vu, w, wu = simulate(rng, ties=ties == "davidson")
        beta, sd = _ppi_pp(p, v, vh, pu, vu, w, wu, ties)
        if r == 0:  # the same numbers as the public function
            ev = fit(p, v, vh, pu, vu, ties=ties, sample_weight=w, sample_weight_unlabeled=wu)
            np.testing.assert_allclose(ev.closed_form["mean"], beta[:4], rtol=0, atol=1e-12)
            np.testing.assert_allclose(ev.closed_form["sd"], sd[:4], rtol=1e-12)
        draws["weighted"].append(beta - truth)
        draws["sd"].append(sd)
        draws["plain"].append(_ppi_pp(p, v, vh, pu, vu, ties=ties)[0] - truth)
    weighted, plain = np.array(draws["weighted"]), np.array(draws["plain"])
    mcse = weighted.std(0, ddof=1) / np.sqrt(len(weighted))
    assert (np.abs(weighted.mean(0)) < 4 * mcse).all(), weighted.mean(0) / mcse
    ratio = np.mean(draws["sd"], axis=0) / weighted.std(0, ddof=1)
    assert (np.abs(ratio - 1) < 4 / np.sqrt(2 * len(weighted))).all(), ratio
    z = np.abs(plain.mean(0)) / (plain.std(0, ddof=1) / np.sqrt(len(plain)))
    assert z.max() > 6, z


# ------------------------------------------------------------- numerical sandwich
def _scores(x, verdicts, theta, davidson):
    """Per-comparison gradients of the loss in theta = (strengths, log nu), written from the
    model's probabilities: half-win logistic, or Davidson's P(a), P(b), P(tie)."""
    d = x @ theta[:4]
    if not davidson:
        return (1 / (1 + np.exp(-d)) - verdicts)[:, None] * x
    nu = np.exp(theta[4])
    z = np.exp(d / 2) + np.exp(-d / 2) + nu
    p_a, p_b, p_t = np.exp(d / 2) / z, np.exp(-d / 2) / z, nu / z
    dd = (p_a - p_b) / 2 - (verdicts - 0.5)
    return np.column_stack([dd[:, None] * x, p_t - (verdicts == 0.5)])


def test_the_sandwich_is_the_numerical_one_of_the_weighted_estimating_equations(data):
    """Psi(theta; omega) = sum_L omega_i (g_i - lam ghat_i) / sum_L omega + lam sum_U omega_j
    ghat_j / sum_U omega; bread J = dPsi/dtheta and influence psi_i = omega_i dPsi/domega_i by
    central differences; Cov = J^-1 (sum psi psi') J^-T in the sum-zero coordinates."""
    ties, (p, v, vh, pu, vu, w, wu) = data
    davidson = ties == "davidson"
    ev = fit(p, v, vh, pu, vu, ties=ties, sample_weight=w, sample_weight_unlabeled=wu)
    info = ev.tree["data"]
    lam = float(info["lam"])
    assert 0 < lam < 1
    x_l, x_u, m = rows(p), rows(pu), len(v)
    basis = scipy.linalg.block_diag(BASIS, [[1.0]]) if davidson else BASIS

    def psi(coords, omega):
        theta = basis @ coords
        a, b = omega[:m], omega[m:]
        r = _scores(x_l, v, theta, davidson) - lam * _scores(x_l, vh, theta, davidson)
        return basis.T @ (a @ r / a.sum() + lam * b @ _scores(x_u, vu, theta, davidson) / b.sum())

    theta = ev.closed_form["mean"].values.astype(float)
    if davidson:
        theta = np.append(theta, np.log(float(info["tie_nu"])))
    coords, omega = basis.T @ theta, np.concatenate([w, wu])
    assert np.abs(psi(coords, omega)).max() < 1e-9  # the fit solves the equations
    step = 1e-5
    bread = np.column_stack([(psi(coords + step * e, omega) - psi(coords - step * e, omega))
                             / (2 * step) for e in np.eye(len(coords))])
    influence = []
    for i in range(omega.size):
        hi, lo = omega.copy(), omega.copy()
        hi[i] *= 1 + 1e-6
        lo[i] *= 1 - 1e-6
        influence.append((psi(coords, hi) - psi(coords, lo)) / 2e-6)
    influence = np.array(influence)
    inv = np.linalg.inv(bread)
    cov = basis @ inv @ influence.T @ influence @ inv.T @ basis.T
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(ev.closed_form["sd"], sd[:4], rtol=1e-5)
    if davidson:
        assert float(info["tie_log_nu_sd"]) == pytest.approx(sd[4], rel=1e-5)


# ------------------------------------------------------------------------- bad weights
@pytest.mark.parametrize(("kwargs", "match"), [
    ({"sample_weight": np.ones(5)}, "length mismatch: pairs has 6, sample_weight has 5"),
    ({"sample_weight": [1, 1, -1, 1, 1, 1]}, "sample_weight must be finite and non-negative"),
    ({"sample_weight": np.zeros(6)}, "sample_weight must be .* with a positive sum"),
    ({"sample_weight_unlabeled": [1, np.nan, 1, 1]}, "sample_weight_unlabeled has 1 NaN"),
    ({"sample_weight_unlabeled": [1, 2, 1]}, "sample_weight_unlabeled has 3"),
])
def test_bad_weights_are_refused_naming_the_argument(kwargs, match):
    p = [["A", "B"], ["B", "C"], ["A", "C"], ["C", "A"], ["B", "A"], ["C", "B"]]
    with pytest.raises(ValueError, match=match):
        fit(p, [1, 0.5, 0, 0, 1, 1], [1, 1, 1, 0, 0, 1], p[:4], [1, 0, 1, 0], **kwargs)


def test_pandas_weights_pair_with_the_comparisons_by_index(data):
    ties, (p, v, vh, pu, vu, w, wu) = data
    frame = pd.DataFrame(p, columns=["first", "second"], index=[f"c{i}" for i in range(len(v))])
    shuffled = pd.Series(w, index=frame.index).sample(frac=1, random_state=0)
    a = fit(frame, pd.Series(v, frame.index), vh, pu, vu, ties=ties, sample_weight=shuffled,
            sample_weight_unlabeled=wu)
    b = fit(p, v, vh, pu, vu, ties=ties, sample_weight=w, sample_weight_unlabeled=wu)
    np.testing.assert_array_equal(a.closed_form["mean"], b.closed_form["mean"])
    np.testing.assert_array_equal(a.closed_form["sd"], b.closed_form["sd"])
    with pytest.raises(ValueError, match="pairs and sample_weight are paired by their pandas"):
        fit(frame, v, vh, pu, vu, sample_weight=shuffled.set_axis(range(len(v))))
