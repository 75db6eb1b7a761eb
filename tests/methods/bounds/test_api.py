"""Fréchet bounds (issue 7): exact and entropic fast paths, PyMC models M1-M3, selection helpers.

The synthetic generator follows spec §8.6: Y ~ Cat(pi), one-coin Dawid–Skene labelling functions
(so the oracle P(Y | Z) is known by Bayes' rule), features X = s e_Y + gamma share(Z) + noise (a
dependence of X on Y beyond Z, and on Z itself), and h = argmax X. Tolerances are 4 sigma of the
Monte-Carlo or sampling error unless the quantity is an exact identity (1e-12).
"""

from __future__ import annotations

import doctest
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.utils import Bunch

from bayeval.methods.bounds import api as bounds_module
from bayeval.methods.bounds.api import (
    bounds,
    compare_labelling_functions,
    entropic_bounds,
    exact_bounds,
    m1_posterior_bounds,
    metric_bounds,
    rank_classifiers,
)
from bayeval.methods.bounds.label_models import weak_label_patterns

ROOT = Path(__file__).resolve().parents[1]
ACCURACY, PROPENSITY, SEPARATION, Z_EFFECT = (0.8, 0.7, 0.65), (0.8, 0.6, 0.5), 1.5, 1.0
FAST = {"draws": 400, "tune": 400}


# ------------------------------------------------------------------------------ generator
def _vote_likelihood(patterns, prior):
    """P(Z = z, Y = y) of the one-coin model, shape (n_patterns, K)."""
    k = len(prior)
    joint = np.tile(np.asarray(prior, float), (len(patterns), 1))
    for j, (acc, prop) in enumerate(zip(ACCURACY, PROPENSITY, strict=True)):
        vote = patterns[:, j][:, None]
        hit = np.where(vote == np.arange(k), prop * acc, prop * (1 - acc) / (k - 1))
        joint *= np.where(vote == -1, 1 - prop, hit)
    return joint


def _share(patterns, k):
    votes = np.stack([(patterns == c).sum(axis=1) for c in range(k)], axis=1)
    return votes / votes.sum(axis=1, keepdims=True)


def simulate(n, seed, n_classes=2):
    """Items with at least one vote (the population is conditional on coverage)."""
    rng = np.random.default_rng(seed)
    prior = np.array([0.4, 0.6]) if n_classes == 2 else np.full(n_classes, 1 / n_classes)
    m = 2 * n
    y = rng.choice(n_classes, size=m, p=prior)
    votes = rng.random((m, 3)) < PROPENSITY
    right = rng.random((m, 3)) < ACCURACY
    other = (y[:, None] + rng.integers(1, n_classes, size=(m, 3))) % n_classes
    weak = np.where(votes, np.where(right, y[:, None], other), -1)
    keep = np.flatnonzero((weak != -1).any(axis=1))[:n]
    y, weak = y[keep], weak[keep]
    x = (SEPARATION * np.eye(n_classes)[y] + Z_EFFECT * _share(weak, n_classes)
         + rng.normal(size=(n, n_classes)))
    joint = _vote_likelihood(weak, prior)
    return Bunch(y=y, h=np.argmax(x, axis=1), weak=weak, prior=prior,
                 oracle=joint / joint.sum(axis=1, keepdims=True))


def population(prior):
    """Exact p_z, alpha_z, beta_z of the binary generator over every covered pattern."""
    patterns = np.array(list(itertools.product((-1, 0, 1), repeat=3)))
    patterns = patterns[(patterns != -1).any(axis=1)]
    joint = _vote_likelihood(patterns, prior)
    p = joint.sum(axis=1) / joint.sum()
    beta = joint / joint.sum(axis=1, keepdims=True)
    share = _share(patterns, 2)
    drift = Z_EFFECT * (share[:, 1] - share[:, 0])
    h1 = stats.norm.cdf((SEPARATION * np.array([-1.0, 1.0])[None] + drift[:, None]) / np.sqrt(2))
    a1 = (beta * h1).sum(axis=1)
    return patterns, p, np.stack([1 - a1, a1], axis=1), beta


def true_metrics(y, h, n_classes):
    tp = np.array([np.sum((h == k) & (y == k)) for k in range(n_classes)])
    fp = np.array([np.sum((h == k) & (y != k)) for k in range(n_classes)])
    fn = np.array([np.sum((h != k) & (y == k)) for k in range(n_classes)])
    out = {"accuracy": np.mean(y == h), "macro_f1": np.mean(2 * tp / (2 * tp + fp + fn))}
    if n_classes == 2:
        out |= {"precision": tp[1] / (tp[1] + fp[1]), "recall": tp[1] / (tp[1] + fn[1]),
                "f1": 2 * tp[1] / (2 * tp[1] + fp[1] + fn[1])}
    return out


# ------------------------------------------------------------------------- exact identities
def test_doctests_run():
    assert doctest.testmod(bounds_module).failed == 0


def _lp_bounds(p, alpha, beta, cost):
    """min and max of sum_z p_z <cost, pi_z> over couplings pi_z of alpha_z, beta_z (HiGHS)."""
    n_cells, k = alpha.shape
    n_var = n_cells * k * k
    rows, rhs = [], []
    for z in range(n_cells):
        for c in range(k):
            row = np.zeros((n_cells, k, k))
            row[z, c, :] = 1
            rows.append(row.ravel())
            rhs.append(p[z] * alpha[z, c])
            row = np.zeros((n_cells, k, k))
            row[z, :, c] = 1
            rows.append(row.ravel())
            rhs.append(p[z] * beta[z, c])
    obj = np.tile(cost.ravel(), n_cells)
    out = [optimize.linprog(s * obj, A_eq=np.array(rows), b_eq=rhs, bounds=(0, None),
                            method="highs") for s in (1, -1)]
    assert all(r.status == 0 for r in out) and len(obj) == n_var
    return out[0].fun, -out[1].fun


@pytest.mark.parametrize("n_classes", [2, 3, 4])
def test_closed_forms_equal_the_linear_programme(n_classes):
    # Includes macro-F1: one coupling attains every class's Fréchet end at once, so its bounds
    # are the weighted per-class ends (the spec's §3.3 remark that they are not is an erratum).
    rng = np.random.default_rng(n_classes)
    metrics = ["accuracy", "macro_f1"] + (["precision", "recall", "f1"] if n_classes == 2 else [])
    for _ in range(25):
        p = rng.dirichlet(np.ones(4))
        alpha, beta = rng.dirichlet(np.ones(n_classes), 4), rng.dirichlet(np.ones(n_classes), 4)
        for metric in metrics:
            classes, weights, (s_h, s_y, s_1) = bounds_module._terms(metric, n_classes)
            den = s_h * p @ alpha[:, classes] + s_y * p @ beta[:, classes] + s_1
            cost = np.zeros((n_classes, n_classes))
            cost[classes, classes] = weights / den
            lp = _lp_bounds(p, alpha, beta, cost)
            np.testing.assert_allclose(metric_bounds(p, alpha, beta, metric), lp, atol=1e-9)


def test_single_cell_gives_the_classic_frechet_bounds():
    for a, b in [(0.3, 0.6), (0.8, 0.7), (0.5, 0.5), (1.0, 0.2)]:
        p, alpha, beta = np.array([1.0]), np.array([[1 - a, a]]), np.array([[1 - b, b]])
        acc = metric_bounds(p, alpha, beta, "accuracy")
        np.testing.assert_allclose(acc, (abs(a + b - 1), 1 - abs(a - b)), rtol=0, atol=1e-12)
        prec = metric_bounds(p, alpha, beta, "precision")
        np.testing.assert_allclose(prec, (max(0, a + b - 1) / a, min(a, b) / a), atol=1e-12)


def test_point_identified_cases_have_equal_bounds():
    rng = np.random.default_rng(1)
    p, alpha = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(3), 6)
    one_hot = np.eye(3)[rng.integers(0, 3, 6)]
    for a, b in [(alpha, one_hot), (one_hot, alpha)]:  # Y a function of Z; H a function of Z
        for metric in ("accuracy", "macro_f1"):
            lower, upper = metric_bounds(p, a, b, metric)
            assert abs(upper - lower) < 1e-12


@pytest.mark.parametrize("n_classes", [2, 3])
def test_width_obeys_theorem_5_2(n_classes):
    # U - L <= sqrt(8 ||g||^2 min{H(H|Z), H(Y|Z)}) in nats, on 2000 random tables.
    rng = np.random.default_rng(52)
    ent = lambda q: -(q * np.log(np.where(q > 0, q, 1))).sum(axis=-1)  # noqa: E731
    for _ in range(2000):
        conc = rng.choice([0.2, 1.0, 5.0])
        p = rng.dirichlet(np.ones(5))
        alpha = rng.dirichlet(np.full(n_classes, conc), 5)
        beta = rng.dirichlet(np.full(n_classes, conc), 5)
        lower, upper = metric_bounds(p, alpha, beta, "accuracy")
        assert upper - lower <= np.sqrt(8 * min(p @ ent(alpha), p @ ent(beta))) + 1e-12


def test_misspecified_label_model_moves_bounds_by_at_most_the_tv_distance():
    rng = np.random.default_rng(3)
    for _ in range(500):
        p, alpha = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(3), 5)
        beta, other = rng.dirichlet(np.ones(3), 5), rng.dirichlet(np.ones(3), 5)
        tv = p @ (np.abs(beta - other).sum(axis=1) / 2)
        moved = np.subtract(metric_bounds(p, alpha, beta, "accuracy"),
                            metric_bounds(p, alpha, other, "accuracy"))
        assert np.abs(moved).max() <= tv + 1e-12


def test_entry_matches_counts_and_label_model_average():
    sim = simulate(3000, seed=4)
    ev = bounds(sim.h, sim.weak, label_model=sim.oracle)
    cell, _, counts = weak_label_patterns(sim.weak, 2)
    table = np.zeros((len(counts), 2))
    np.add.at(table, (cell, sim.h), 1)
    beta = np.zeros((len(counts), 2))
    np.add.at(beta, cell, sim.oracle)
    direct = exact_bounds(table.astype(int), beta / counts[:, None], ["accuracy", "f1"])
    summary = ev.summary()
    for metric in ("accuracy", "f1"):
        for key in ("lower_bound", "upper_bound", "lower_bound_sd", "label_model"):
            assert abs(summary.loc[metric, key] - direct[metric][key]) < 1e-12
        assert summary.loc[metric, "mean"] == pytest.approx(
            (direct[metric]["lower_bound"] + direct[metric]["upper_bound"]) / 2, abs=1e-12)


# -------------------------------------------------------------------- statistical behaviour
@pytest.mark.parametrize(("n_classes", "label_model"),
                         [(2, "oracle"), (2, "dawid_skene"), (3, "oracle"), (3, "dawid_skene")])
def test_bounds_contain_the_true_metric(n_classes, label_model):
    # The identified-set interval at 4 sigma, lower end of L to upper end of U, must hold the
    # metric computed from the simulated labels, for every metric and seed.
    z4 = 4.0
    for seed in range(5):
        sim = simulate(20000, seed=seed, n_classes=n_classes)
        truth = true_metrics(sim.y, sim.h, n_classes)
        ev = bounds(sim.h, sim.weak, label_model=sim.oracle if label_model == "oracle"
                    else label_model, metrics=list(truth))
        s = ev.summary()
        for metric, value in truth.items():
            lo = s.loc[metric, "lower_bound"] - z4 * s.loc[metric, "lower_bound_sd"]
            hi = s.loc[metric, "upper_bound"] + z4 * s.loc[metric, "upper_bound_sd"]
            assert lo <= value <= hi, (seed, metric, lo, value, hi)
            assert s.loc[metric, "lower_bound"] <= s.loc[metric, "label_model"] <= s.loc[
                metric, "upper_bound"]


def test_oracle_label_model_gives_the_true_bounds():
    sim = simulate(200000, seed=7)
    _, p, alpha, beta = population(sim.prior)
    s = bounds(sim.h, sim.weak, label_model=sim.oracle).summary()
    for metric in ("accuracy", "precision", "recall", "f1"):
        lower, upper = metric_bounds(p, alpha, beta, metric)
        assert abs(s.loc[metric, "lower_bound"] - lower) <= 4 * s.loc[metric, "lower_bound_sd"]
        assert abs(s.loc[metric, "upper_bound"] - upper) <= 4 * s.loc[metric, "upper_bound_sd"]


def test_standard_error_and_coverage_match_repeated_sampling():
    # Away from kinks (|a - b| and |a + b - 1| >= 0.1 in every cell) the influence-function SE
    # must equal the sd of the bound over 300 samples (4 sigma of a sample sd: 4/sqrt(2 R)) and
    # the 95% Wald interval of each bound must cover it 95% +- 4 sqrt(.95 .05 / R) of the time.
    p = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    a = np.array([0.2, 0.7, 0.5, 0.9, 0.35])
    b = np.array([0.05, 0.45, 0.8, 0.6, 0.1])
    alpha, beta = np.stack([1 - a, a], 1), np.stack([1 - b, b], 1)
    metrics, reps, n = ["accuracy", "precision", "recall", "f1"], 300, 20000
    truth = {m: metric_bounds(p, alpha, beta, m) for m in metrics}
    rng = np.random.default_rng(8)
    draws = rng.multinomial(n, (p[:, None] * alpha).ravel(), size=reps).reshape(reps, 5, 2)
    runs = [exact_bounds(t, beta, metrics) for t in draws]
    z = stats.norm.ppf(0.975)
    for metric in metrics:
        for side, index in (("lower", 0), ("upper", 1)):
            est = np.array([r[metric][f"{side}_bound"] for r in runs])
            se = np.array([r[metric][f"{side}_bound_sd"] for r in runs])
            assert abs(est.std(ddof=1) / se.mean() - 1) <= 4 / np.sqrt(2 * (reps - 1))
            cover = np.mean(np.abs(est - truth[metric][index]) <= z * se)
            assert abs(cover - 0.95) <= 4 * np.sqrt(0.95 * 0.05 / reps)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_entropic_bounds_converge_to_the_exact_ones(n_classes):
    # Paper's normalisation: L <= L_eps <= L + eps log K and U - eps log K <= U_eps <= U (on the
    # metric's scale), so the error vanishes with eps; 1e-7 absorbs the L-BFGS stopping error.
    sim = simulate(4000, seed=2, n_classes=n_classes)
    cell, _, counts = weak_label_patterns(sim.weak, n_classes)
    table = np.zeros((len(counts), n_classes), dtype=int)
    np.add.at(table, (cell, sim.h), 1)
    beta = np.zeros((len(counts), n_classes))
    np.add.at(beta, cell, sim.oracle)
    beta /= counts[:, None]
    metrics = ["accuracy", "macro_f1"] + (["precision", "recall", "f1"] if n_classes == 2 else [])
    exact = exact_bounds(table, beta, metrics)
    errors = []
    for eps in (0.1, 0.01, 0.001):
        smooth = entropic_bounds(table, beta, metrics, epsilon=eps)
        gap = eps * np.log(n_classes)
        for m in metrics:
            lo, up = exact[m]["lower_bound"], exact[m]["upper_bound"]
            assert lo - 1e-7 <= smooth[m]["lower_bound"] <= lo + gap + 1e-7
            assert up - gap - 1e-7 <= smooth[m]["upper_bound"] <= up + 1e-7
            assert abs(smooth[m]["upper_bound_sd"] / exact[m]["upper_bound_sd"] - 1) < 0.5
        errors.append(max(abs(smooth[m][k] - exact[m][k]) for m in metrics
                          for k in ("lower_bound", "upper_bound")))
    assert errors[0] > errors[1] > errors[2]


# -------------------------------------------------------------------------- PyMC models
def _inside(ev):
    post = ev.tree["posterior"]
    return bool(((post["lower_bound"] <= post["value"])
                 & (post["value"] <= post["upper_bound"])).all())


def test_m1_draws_lie_inside_their_bounds_and_match_the_conjugate_posterior():
    sim = simulate(4000, seed=5)
    ev = bounds(sim.h, sim.weak, label_model=sim.oracle, method="both", random_seed=1,
                sample_kwargs=FAST)
    assert _inside(ev)
    check = ev.check()
    assert check.attrs["passed"], check
    s, closed = ev.summary(), ev.summary("closed_form")
    assert (s["lower"] <= s["lower_bound"]).all() and (s["upper_bound"] <= s["upper"]).all()
    # The posterior sd of each bound and the analytic SE agree to first order (spec §7.6).
    ratio = s["lower_bound_sd"] / closed["lower_bound_sd"]
    assert ((ratio > 0.75) & (ratio < 1.33)).all(), ratio


def test_conjugate_draws_are_ordered():
    d = m1_posterior_bounds([[30, 70], [5, 1], [40, 10]], [[0.6, 0.4], [0.1, 0.9], [0.5, 0.5]],
                            ["accuracy", "precision", "recall", "f1"], n_draws=5000,
                            random_seed=2)
    assert (d[..., 0] <= d[..., 1]).all() and (d >= 0).all() and (d <= 1).all()


def test_m2_draws_lie_inside_their_bounds():
    sim = simulate(1500, seed=6, n_classes=3)
    ev = bounds(sim.h, sim.weak, method="pymc", model="m2", random_seed=2,
                sample_kwargs={"draws": 200, "tune": 300})
    assert _inside(ev)
    acc = ev.tree["posterior"]["lf_accuracy"].mean(("chain", "draw")).values
    assert np.all(acc > 1 / 3)
    with pytest.raises(ValueError, match="conjugate"):
        ev.check()


def test_m3_gold_labels_inform_the_coupling():
    sim = simulate(4000, seed=9)
    gold = np.full(len(sim.y), np.nan)
    picked = np.random.default_rng(0).choice(len(sim.y), 300, replace=False)
    gold[picked] = sim.y[picked]
    ev = bounds(sim.h, sim.weak, label_model=sim.oracle, method="pymc", model="m3",
                labels=gold, random_seed=3, sample_kwargs=FAST)
    assert _inside(ev)
    # u is uniform a priori (sd 0.289); 300 gold triples must shrink it.
    assert float(ev.tree["posterior"]["u"].std()) < 0.2


# ------------------------------------------------------------------------------ selection
def test_rank_classifiers_prefers_the_better_one():
    sim = simulate(20000, seed=10)
    rng = np.random.default_rng(10)
    candidates = {"model": sim.h, "coin": rng.integers(0, 2, len(sim.h)),
                  "ones": np.ones(len(sim.h), dtype=int)}
    ranked = rank_classifiers(candidates, sim.weak, label_model=sim.oracle)
    assert ranked.loc["model", "rank_midpoint"] == 1
    assert ranked.loc["coin", "rank_midpoint"] == ranked.loc["coin", "rank_lower"] == 3
    # A constant classifier is point-identified (L = U = P(Y = 1) = 0.6): the robust lower
    # bound prefers it to the model, whose coupling is unknown.
    assert ranked.loc["ones", "lower_bound"] == pytest.approx(ranked.loc["ones", "upper_bound"])
    assert list(ranked.index) == ["ones", "model", "coin"]
    s = bounds(sim.h, sim.weak, label_model=sim.oracle, metrics=["accuracy"]).summary()
    assert ranked.loc["model", "midpoint"] == pytest.approx(s.loc["accuracy", "mean"], abs=1e-12)


def test_more_informative_labelling_functions_narrow_the_bounds():
    sim = simulate(50000, seed=12)
    # Population bounds can only narrow as Z gets finer (the oracle is averaged over coarser
    # patterns); the gap here is ~8 SEs of a width. (Dawid-Skene is not identified with one LF.)
    out = compare_labelling_functions(sim.h, sim.weak, {"all": [0, 1, 2], "best": [0]},
                                      label_model=sim.oracle)
    assert out.loc["all", "width"] < out.loc["best", "width"]
    assert out.loc["all", "n_cells"] > out.loc["best", "n_cells"]


# ------------------------------------------------------------------------------ bad input
WEAK = np.array([[0, 1], [1, -1], [1, 1], [0, 0]])
Y_PRED = np.array([0, 1, 1, 0])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"weak_labels": [[0, 2], [1, -1], [1, 1], [0, 0]], "label_model": np.full((4, 2), 0.5)},
     "weak_labels has values"),
    ({"weak_labels": [[0, -2], [1, -1], [1, 1], [0, 0]]}, "weak_labels must hold integers"),
    ({"weak_labels": [[0, 0.5], [1, -1], [1, 1], [0, 0]]}, "weak_labels must hold integers"),
    ({"weak_labels": [[0, 1], [-1, -1], [1, 1], [0, 0]]}, "weak_labels: every labelling"),
    ({"label_model": np.full((4, 2), 0.6)}, "label_model rows must be distributions"),
    ({"label_model": [[1.2, -0.2]] * 4}, "label_model must hold probabilities"),
    ({"label_model": np.full((3, 2), 0.5)}, "length mismatch: label_model"),
    ({"label_model": "snorkel"}, "label_model must be one of"),
    ({"y_pred": [0, 1, 1]}, "length mismatch: y_pred has 3"),
    ({"y_pred": [0, 1, 2, 0], "n_classes": 2}, "y_pred has values"),
    ({"y_pred": [0, 1, 2, 0], "metrics": ["f1"]}, "metrics .* are for two classes"),
    ({"metrics": ["auc"]}, "metrics must be one of"),
    ({"method": "pymc", "model": "m3"}, "labels"),
    ({"labels": [1, 0, np.nan, np.nan]}, "labels"),
    ({"epsilon": 0.1}, "epsilon is the temperature"),
    ({"method": "entropic", "epsilon": -1.0}, "epsilon must be a positive"),
])
def test_bad_input_names_the_argument(kwargs, match):
    args = {"y_pred": Y_PRED, "weak_labels": WEAK, "label_model": "majority_vote", **kwargs}
    with pytest.raises(ValueError, match=match):
        bounds(args.pop("y_pred"), args.pop("weak_labels"), **args)


def test_undefined_precision_is_nan_with_a_warning():
    ev = bounds(np.zeros(4, dtype=int), WEAK, label_model="majority_vote")
    assert np.isnan(ev.summary().loc["precision", "lower_bound"])
    assert any("undefined" in w for w in ev.warnings)


def test_sparse_patterns_are_flagged():
    rng = np.random.default_rng(0)
    weak = rng.integers(-1, 2, size=(300, 12))
    weak[:, 0] = rng.integers(0, 2, 300)
    ev = bounds(rng.integers(0, 2, 300), weak, label_model="majority_vote")
    assert any("biased inward" in w for w in ev.warnings)


def test_m1_reference_posterior_is_the_conjugate_one():
    spec = json.loads((ROOT / "models" / "bounds_m1" / "reference.json").read_text())
    kw = spec["kwargs"]
    draws = m1_posterior_bounds(kw["cell_counts"], kw["beta"], kw["metrics"], n_draws=100000,
                                random_seed=4)
    for i, metric in enumerate(kw["metrics"]):
        for j, side in enumerate(("lower", "upper")):
            ref = spec["reference"][f"{side}_bound[{metric}]"]
            conj = draws[:, i, j]
            se = np.hypot(ref["mcse_mean"], conj.std() / np.sqrt(len(conj)))
            assert abs(ref["mean"] - conj.mean()) <= 4 * se, (metric, side)
