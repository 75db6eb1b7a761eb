"""rank_systems and bradley_terry: exact identities, brute-force oracles, coverage, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy

from bayeval.methods.judge import bradley_terry, compare_systems, rank_systems
from bayeval.methods.judge.compare import difference_posterior
from bayeval.methods.judge.fast import moments, ppi_pp, ppi_pp_lambda
from bayeval.methods.judge.graded import eif_graded_cells
from bayeval.methods.judge.ranking import influence_functions, score_posterior
from benchmarks.coverage_judge_ranking import coverage, reliability, run


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def systems(seed: int, k: int = 3, n_total: int = 1500, m: int = 150, levels: int = 2):
    """Paired 0/1 grades of k systems and a judge with `levels` grades."""
    rng = np.random.default_rng(seed)
    easy = rng.random(n_total) < 0.3
    right = easy[:, None] | (rng.random((n_total, k)) < np.linspace(0.5, 0.3, k))
    noise = rng.random((n_total, k))
    said = np.where(right, noise < 0.85, noise < 0.25) * 1.0
    if levels > 2:
        said = np.clip(said * (levels - 1) - rng.integers(0, 2, (n_total, k)), 0, None)
    names = [f"s{j}" for j in range(k)]
    h, j = pd.DataFrame(right * 1.0, columns=names), pd.DataFrame(said, columns=names)
    return h[:m], j[:m], j[m:]


# ===================================================================== two systems: compare
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("method,mu_model", [("eif", "cell"), ("eif", "linear"),
                                             ("classical", None), ("naive", None),
                                             ("ppi", None)])
def test_two_paired_systems_are_compare_systems(seed, method, mu_model):
    y, yh, yu = systems(seed, k=2, levels=3)
    ev = rank_systems(y, yh, yu, method=method, mu_model=mu_model, random_seed=0)
    ref = compare_systems(y, yh, yu, method=method, mu_model=mu_model).summary()
    diff = ev.differences().loc["s0 - s1"]
    assert diff["mean"] == pytest.approx(ref["mean"].iloc[0], abs=1e-12)
    assert diff["sd"] == pytest.approx(ref["sd"].iloc[0], abs=1e-12)
    assert diff["lower"] == pytest.approx(ref["lower"].iloc[0], abs=1e-12)
    assert diff["p_value"] == pytest.approx(ref["p_value"].iloc[0], abs=1e-12)
    # two systems: P(A > B) and the ranks are exact, Phi(delta / se)
    phi = scipy.stats.norm.cdf(diff["mean"] / diff["sd"])
    assert diff["prob_greater"] == pytest.approx(phi, abs=1e-12)
    assert ev.ranks().loc["s0", 1] == pytest.approx(phi, abs=1e-12)
    assert diff["lower_adjusted"] == pytest.approx(diff["lower"], abs=1e-12)


def test_two_paired_systems_bayes_is_compare_systems():
    y, yh, yu = systems(3, k=2)
    ev = rank_systems(y, yh, yu, method="bayes", random_seed=5)
    ref = compare_systems(y, yh, yu, method="bayes", random_seed=5)
    delta = ev.draws.sel(system="s0") - ev.draws.sel(system="s1")
    np.testing.assert_allclose(delta.values, ref.draws.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ev.draws.values, ref.tree["posterior"]["theta_system"].values,
                               rtol=0, atol=1e-12)
    diff = ev.differences().loc["s0 - s1"]
    bayes = ref.summary().loc["bayes"]
    assert diff["mean"] == pytest.approx(bayes["mean"], abs=1e-12)
    assert diff["sd"] == pytest.approx(bayes["sd"], abs=1e-12)
    assert diff["prob_greater"] == bayes["prob_greater"]
    assert np.isnan(diff["p_value"])


def test_score_posterior_of_two_systems_is_difference_posterior():
    rng = np.random.default_rng(2)
    t, u = rng.integers(0, 30, (4, 5)), rng.integers(100, 900, 5)
    alpha = rng.uniform(0.2, 2, (4, 5))
    mean, cov = score_posterior(t, u, alpha)
    exact = difference_posterior(t, u, alpha)
    assert mean[0] - mean[1] == pytest.approx(exact.estimate, abs=1e-14)
    assert np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]) == pytest.approx(exact.se, abs=1e-14)


def test_score_posterior_moments_match_the_draws():
    """Exact moments of K = 3 rates against 200,000 posterior draws (4-sigma MC)."""
    y, yh, yu = systems(4, k=3)
    ev = rank_systems(y, yh, yu, method="bayes", random_seed=1)
    draws = ev.draws.values.reshape(-1, 3)
    cf = ev.closed_form
    mcse = cf["sd"].values / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(0) - cf["mean"].values) < 4 * mcse)
    emp = np.cov(draws.T)
    # the sd of a sample covariance of near-normal draws: sqrt((s_kk s_ll + s_kl^2) / D)
    s = cf["cov"].values
    tol = 4 * np.sqrt((np.outer(np.diag(s), np.diag(s)) + s**2) / len(draws))
    assert np.all(np.abs(emp - s) < tol)


# ========================================================== joint covariance, brute force
def brute_force_eif(y, x_l, x_u):
    """Per-prompt influence functions of the cell EIF, one prompt at a time."""
    y, x_l, x_u = (np.asarray(a, float) for a in (y, x_l, x_u))
    m, n = len(y), len(x_u)
    big_n = m + n
    cells = [tuple(r) for r in np.vstack([x_l, x_u])]
    labelled = [tuple(r) for r in x_l]
    theta = np.zeros(y.shape[1])
    mu, share, count = {}, {}, {}
    for c in set(cells):
        rows = [i for i in range(m) if labelled[i] == c]
        count[c] = len(rows)
        share[c] = sum(cc == c for cc in cells) / big_n
        mu[c] = y[rows].mean(0)
        theta += share[c] * mu[c]
    phi = np.zeros((big_n, y.shape[1]))
    for i, c in enumerate(cells):
        phi[i] = mu[c] - theta
        if i < m:
            phi[i] += big_n * share[c] / count[c] * (y[i] - mu[c])
    return theta, phi.T @ phi / big_n**2


@pytest.mark.parametrize("seed", [0, 7])
def test_paired_covariance_is_the_per_prompt_influence_functions(seed):
    y, yh, yu = systems(seed, k=3, m=300)
    assert set(map(tuple, yu.to_numpy())) <= set(map(tuple, yh.to_numpy()))  # no empty cell
    ev = rank_systems(y, yh, yu, random_seed=0)
    theta, cov = brute_force_eif(y, yh, yu)
    np.testing.assert_allclose(ev.closed_form["mean"].values, theta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ev.closed_form["cov"].values, cov, rtol=0, atol=1e-12)
    assert abs(cov[0, 1]) > 1e-5  # pairing matters: the scores are correlated
    # each system's variance is its EIF delta-method variance with cells of the judge vector
    k_l = pd.factorize(pd.MultiIndex.from_frame(pd.concat([yh, yu])))[0]
    c, u = np.bincount(k_l[:300]), np.bincount(k_l[300:], minlength=k_l.max() + 1)
    for j, s in enumerate(y.columns):
        v = y[s].to_numpy()
        est = eif_graded_cells(c, np.bincount(k_l[:300], v), np.bincount(k_l[:300], v**2), u)
        assert np.sqrt(cov[j, j]) == pytest.approx(est.se, abs=1e-12)


def test_ppi_pp_influence_functions_give_ppi_py_per_system():
    y, yh, yu = systems(5, k=3, levels=4)
    theta, phi = influence_functions(y, yh, yu, "ppi_pp")
    cov = phi.T @ phi / len(phi) ** 2
    for j, s in enumerate(y.columns):
        mo = moments(y[s], yh[s], yu[s])
        est = ppi_pp(mo, np.clip(ppi_pp_lambda(mo), 0, 1))
        assert theta[j] == pytest.approx(float(est.estimate), abs=1e-12)
        assert np.sqrt(cov[j, j]) == pytest.approx(float(est.se), abs=1e-12)
    assert np.abs(phi.sum(0)).max() < 1e-9


def test_unpaired_systems_are_independent_judge_estimates():
    y, yh, yu = systems(6, k=3, levels=3)
    sizes = {"s0": (150, 900), "s1": (100, 1200), "s2": (120, 700)}
    yd = {s: y[s].to_numpy()[:a] for s, (a, _) in sizes.items()}
    yhd = {s: yh[s].to_numpy()[:a] for s, (a, _) in sizes.items()}
    yud = {s: yu[s].to_numpy()[:b] for s, (_, b) in sizes.items()}
    ev = rank_systems(yd, yhd, yud, paired=False, random_seed=0)
    cov = ev.closed_form["cov"].values
    assert np.all(cov[~np.eye(3, dtype=bool)] == 0)
    for j, s in enumerate(sizes):
        values = np.unique(np.concatenate([yhd[s], yud[s]]))
        k_l, k_u = np.searchsorted(values, yhd[s]), np.searchsorted(values, yud[s])
        size = values.size
        est = eif_graded_cells(np.bincount(k_l, minlength=size), np.bincount(k_l, yd[s], size),
                               np.bincount(k_l, yd[s] ** 2, size), np.bincount(k_u, minlength=size))
        assert ev.closed_form["mean"].values[j] == pytest.approx(float(est.estimate), abs=1e-12)
        assert np.sqrt(cov[j, j]) == pytest.approx(est.se, abs=1e-12)
    data = ev.tree["data"].to_dataset()
    assert data["m"].values.tolist() == [150, 100, 120]


# ============================================================================= rank laws
@pytest.mark.parametrize("method", ["eif", "bayes"])
def test_rank_probabilities_sum_to_one(method):
    y, yh, yu = systems(8, k=4)
    ev = rank_systems(y, yh, yu, method=method, random_seed=3)
    ranks = ev.ranks()
    probs = ranks[[1, 2, 3, 4]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(probs.sum(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(ranks["expected_rank"], probs @ [1, 2, 3, 4], atol=1e-12)
    assert ev.summary()["expected_rank"].sum() == pytest.approx(10, abs=1e-12)


def test_rank_probabilities_of_independent_scores_against_quadrature():
    """Unpaired, three systems: P(rank = 1) = int phi_k prod_{l != k} Phi_l, to 4 MC SEs."""
    y, yh, yu = systems(9, k=3, levels=3)
    split = {s: slice(50 * j, 50 * j + 100) for j, s in enumerate(y.columns)}
    ev = rank_systems({s: y[s][v] for s, v in split.items()},
                      {s: yh[s][v] for s, v in split.items()},
                      {s: yu[s].iloc[400 * j:400 * j + 400] for j, s in enumerate(y.columns)},
                      paired=False, random_seed=11)
    mean, sd = ev.closed_form["mean"].values, ev.closed_form["sd"].values
    mcse = float(ev.tree["data"]["rank_mcse"])
    for k in range(3):
        others = [j for j in range(3) if j != k]
        exact = scipy.integrate.quad(
            lambda t, k=k, others=others: scipy.stats.norm.pdf(t, mean[k], sd[k])
            * np.prod([scipy.stats.norm.cdf(t, mean[j], sd[j]) for j in others]),
            mean[k] - 10 * sd[k], mean[k] + 10 * sd[k])[0]
        assert abs(ev.ranks().iloc[k][1] - exact) < 4 * mcse


def test_holm_and_max_t_adjustments():
    y, yh, yu = systems(10, k=4)
    evs = {a: rank_systems(y, yh, yu, adjust=a, random_seed=0).differences()
           for a in ("none", "holm", "max_t")}
    p = evs["none"]["p_value"].to_numpy()
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (6 - np.arange(6)) * p[order]))
    np.testing.assert_allclose(evs["holm"]["p_value_adjusted"].to_numpy()[order], holm,
                               atol=1e-15)
    z_bonf = scipy.stats.norm.ppf(1 - 0.05 / 12)
    d = evs["holm"]
    np.testing.assert_allclose(d["upper_adjusted"] - d["mean"], z_bonf * d["sd"], atol=1e-12)
    m = evs["max_t"]
    c = (m["upper_adjusted"] - m["mean"]) / m["sd"]
    # max-|t| lies between the marginal and the Bonferroni quantiles; its p-values too
    assert 1.96 < c.iloc[0] < z_bonf and np.allclose(c, c.iloc[0])
    assert np.all(m["p_value_adjusted"] >= p - 1e-12)
    assert np.all(m["p_value_adjusted"] <= d["p_value_adjusted"] + 0.01)
    np.testing.assert_allclose(evs["none"]["lower_adjusted"], evs["none"]["lower"])


# ========================================================================= Bradley-Terry
def comparisons(seed: int, k: int = 4, n_pairs: int = 1500, m: int = 300):
    rng = np.random.default_rng(seed)
    beta = np.linspace(0.5, -0.5, k)
    ab = np.argsort(rng.random((n_pairs, k)), axis=1)[:, :2]
    s = 1 / (1 + np.exp(beta[ab[:, 1]] - beta[ab[:, 0]]))
    u = rng.random(n_pairs)
    v = np.where(u < s - 0.05, 1.0, np.where(u < s + 0.05, 0.5, 0.0))
    vhat = np.where(rng.random(n_pairs) < 0.7, v, (rng.random(n_pairs) < 0.6) * 1.0)
    names = np.array([f"m{j}" for j in range(k)])[ab]
    return names[:m], v[:m], vhat[:m], names[m:], vhat[m:]


def bt_mle(pairs, v, names):
    """Bradley-Terry by a direct scipy minimisation of the written-out likelihood (sum 0)."""
    idx = {s: j for j, s in enumerate(names)}
    a = np.array([idx[s] for s in pairs[:, 0]])
    b = np.array([idx[s] for s in pairs[:, 1]])

    def nll(free):
        beta = np.append(free, -free.sum())
        p = 1 / (1 + np.exp(-(beta[a] - beta[b])))
        return -np.sum(v * np.log(p) + (1 - v) * np.log(1 - p))

    res = scipy.optimize.minimize(nll, np.zeros(len(names) - 1), method="BFGS",
                                  options={"gtol": 1e-10})
    return np.append(res.x, -res.x.sum())


def test_bt_lambda_zero_is_the_mle_of_the_human_verdicts():
    p, v, vh, pu, vhu = comparisons(0)
    ev = bradley_terry(p, v, vh, pu, vhu, method="ppi_pp", lam=0.0, random_seed=0)
    names = ev.summary().index.tolist()
    np.testing.assert_allclose(ev.summary()["mean"], bt_mle(p, v, names), atol=1e-6)
    classical = bradley_terry(p, v, vh, pu, vhu, method="classical", random_seed=0)
    np.testing.assert_allclose(classical.summary()["mean"], ev.summary()["mean"], atol=1e-9)


def test_bt_lambda_one_with_a_perfect_audit_is_the_mle_of_the_judge():
    """yhat = y on the audited comparisons: PPI is the judge's MLE on the other ones."""
    p, v, _, pu, vhu = comparisons(1)
    ev = bradley_terry(p, v, v, pu, vhu, method="ppi", random_seed=0)
    names = ev.summary().index.tolist()
    np.testing.assert_allclose(ev.summary()["mean"], bt_mle(pu, vhu, names), atol=1e-6)
    naive = bradley_terry(p, v, v, pu, vhu, method="naive", random_seed=0)
    np.testing.assert_allclose(naive.summary()["mean"], ev.summary()["mean"], atol=1e-9)


@pytest.mark.parametrize("seed", [2, 3])
def test_bt_two_systems_is_the_logit_of_the_ppi_pp_win_rate(seed):
    rng = np.random.default_rng(seed)
    v = (rng.random(1200) < 0.6) * 1.0
    v[rng.random(1200) < 0.1] = 0.5
    vh = np.where(rng.random(1200) < 0.7, v, (rng.random(1200) < 0.7) * 1.0)
    pairs = np.tile(["a", "b"], (1200, 1))
    ev = bradley_terry(pairs[:200], v[:200], vh[:200], pairs[200:], vh[200:], random_seed=0)
    mo = moments(v[:200], vh[:200], vh[200:])
    lam = np.clip(ppi_pp_lambda(mo), 0, 1)
    est = ppi_pp(mo, lam)
    theta = float(est.estimate)
    diff = ev.differences().loc["a - b"]
    assert float(ev.tree["data"]["lam"]) == pytest.approx(float(lam), abs=1e-9)
    assert diff["mean"] == pytest.approx(scipy.special.logit(theta), abs=1e-8)
    assert diff["sd"] == pytest.approx(float(est.se) / (theta * (1 - theta)), abs=1e-8)
    assert diff["win_prob"] == pytest.approx(theta, abs=1e-9)
    assert ev.summary()["mean"].sum() == pytest.approx(0, abs=1e-12)


def test_bt_reference_system_changes_the_level_only():
    p, v, vh, pu, vhu = comparisons(4)
    zero = bradley_terry(p, v, vh, pu, vhu, random_seed=0)
    ref = bradley_terry(p, v, vh, pu, vhu, reference="m2", random_seed=0)
    assert ref.summary().loc["m2", "mean"] == 0 and ref.summary().loc["m2", "sd"] == 0
    shift = zero.summary()["mean"] - zero.summary().loc["m2", "mean"]
    np.testing.assert_allclose(ref.summary()["mean"], shift, atol=1e-8)
    for col in ("mean", "sd", "win_prob", "prob_greater"):
        np.testing.assert_allclose(ref.differences()[col], zero.differences()[col], atol=1e-8)


# ============================================================================== coverage
R = 200


@pytest.fixture(scope="module")
def simulated():
    return run(R, seed=11, estimators=("eif",), bt_estimators=("ppi_pp",))


def test_coverage_of_differences_scores_and_strengths(simulated):
    """95 % intervals: within 4 Monte-Carlo SEs of 0.95 (SE over replicates, R = 200)."""
    table = coverage(simulated)
    tol = 4 * np.sqrt(0.95 * 0.05 / R)
    for key in (("scores", "eif"), ("strengths", "ppi_pp")):
        row = table.loc[key]
        for col in ("covered", "simultaneous", "score_covered"):
            assert abs(row[col] - 0.95) <= tol, (key, col, row[col])
        assert row["width_adjusted"] > row["width"]


def test_prob_greater_is_calibrated(simulated):
    """Reliability bins: the observed share within 4 SEs (binomial, at the prediction) of the
    mean prediction."""
    for kind, est in (("scores", "eif"), ("strengths", "ppi_pp")):
        rel = reliability(simulated, kind, est)
        se = np.sqrt(rel["predicted"] * (1 - rel["predicted"]) / rel["n"])
        assert np.all(np.abs(rel["observed"] - rel["predicted"]) <= 4 * se + 1e-9), rel


# ============================================================================= bad input
GOOD = {"y": {"A": [1, 0, 1, 0], "B": [0, 1, 1, 0], "C": [1, 1, 0, 0]},
        "yhat": {"A": [1, 0, 0, 0], "B": [0, 1, 1, 1], "C": [1, 0, 0, 1]},
        "yhat_unlabeled": {"A": [1, 0, 1], "B": [0, 0, 1], "C": [1, 1, 0]}}


@pytest.mark.parametrize("kwargs,match", [
    ({"y": {"A": [1, 0, 1, 0]}}, "y names the systems|at least two"),
    ({"yhat": {"A": [1, 0, 0, 0], "C": [0, 1, 1, 1], "B": [1, 0, 0, 1]}}, "yhat names"),
    ({"y": {"A": [1, 0, 1], "B": [0, 1, 1, 0], "C": [1, 1, 0, 0]}}, "paired=False"),
    ({"y": {"A": [1, 0, 3, 0], "B": [0, 1, 1, 0], "C": [1, 1, 0, 0]}}, r"y\['A'\].*outside"),
    ({"method": "mle"}, "method must be one of"),
    ({"adjust": "bonferroni"}, "adjust must be one of"),
    ({"paired": "yes"}, "paired must be True or False"),
    ({"prior": -1}, "prior must be a positive"),
    ({"method": "bayes", "y_range": (0, 5)}, "needs 0/1 human grades"),
    ({"yhat_unlabeled": {"A": [1], "B": [0], "C": [1]}}, "at least two labelled and two"),
])
def test_rank_systems_refuses_bad_input(kwargs, match):
    args = {**GOOD, **kwargs}
    with pytest.raises(ValueError, match=match):
        quiet(rank_systems, args.pop("y"), args.pop("yhat"), args.pop("yhat_unlabeled"), **args)


def test_unpaired_needs_dicts():
    with pytest.raises(ValueError, match="paired=False takes y as a dict"):
        rank_systems(np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((3, 2)), paired=False)


BT = {"pairs": [["A", "B"], ["B", "C"], ["A", "C"]], "y": [1, 0, 0.5], "yhat": [1, 1, 0.5],
      "pairs_unlabeled": [["A", "B"], ["C", "B"], ["A", "C"], ["B", "A"]],
      "yhat_unlabeled": [1, 0, 1, 0]}


@pytest.mark.parametrize("kwargs,match", [
    ({"pairs": [["A", "A"], ["B", "C"], ["A", "C"]]}, "compares 'A' with itself"),
    ({"pairs": ["A", "B", "C"]}, "pairs must list the two systems"),
    ({"y": [1, 0, 2]}, "y has 1 verdict"),
    ({"yhat": [1, 0]}, "yhat"),
    ({"lam": 1.5}, r"lam must lie in \[0, 1\]"),
    ({"method": "ppi", "lam": 0.5}, "lam fixes PPI\\+\\+'s lambda"),
    ({"reference": "Z"}, "reference must be one of"),
    ({"pairs_unlabeled": [["A", "B"], ["B", "A"]], "yhat_unlabeled": [1, 0]},
     r"never compared.*'C'|\['C'\]"),
    ({"method": "classical", "y": [1, 1, 1]}, "diverge"),
])
def test_bradley_terry_refuses_bad_input(kwargs, match):
    args = {**BT, **kwargs}
    with pytest.raises(ValueError, match=match):
        quiet(bradley_terry, args.pop("pairs"), args.pop("y"), args.pop("yhat"),
              args.pop("pairs_unlabeled"), args.pop("yhat_unlabeled"), **args)
