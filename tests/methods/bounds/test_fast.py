"""The closed forms of the Fréchet bounds: exact identities (against a linear programme and the
classic bounds), the paper's theorems, influence-function SEs against repeated sampling and the
entropic estimator's convergence. Tolerances are 4 sigma of the Monte-Carlo or sampling error
unless the quantity is an exact identity (1e-12)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from scipy import optimize, stats

from bayeval.methods.bounds import fast
from bayeval.methods.bounds.fast import (
    closed_form,
    entropic_bounds,
    exact_bounds,
    metric_bounds,
    metric_terms,
)
from bayeval.methods.bounds.label_models import weak_label_patterns


def test_doctests_run():
    assert doctest.testmod(fast).failed == 0


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
    # are the weighted per-class ends.
    rng = np.random.default_rng(n_classes)
    metrics = ["accuracy", "macro_f1"] + (["precision", "recall", "f1"] if n_classes == 2 else [])
    for _ in range(25):
        p = rng.dirichlet(np.ones(4))
        alpha, beta = rng.dirichlet(np.ones(n_classes), 4), rng.dirichlet(np.ones(n_classes), 4)
        for metric in metrics:
            classes, weights, (s_h, s_y, s_1) = metric_terms(metric, n_classes)
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
def test_entropic_bounds_converge_to_the_exact_ones(n_classes, simulate):
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
    exact = exact_bounds(table, beta, metrics, small_pattern_correction=False)  # the plug-in
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


def test_closed_form_is_the_midpoint_and_the_widened_bounds():
    results = exact_bounds(np.array([[300, 700], [500, 100]]), np.array([[0.6, 0.4], [0.2, 0.8]]),
                           ["accuracy", "f1"])
    ds = closed_form(results, 0.9)
    z = stats.norm.ppf(0.95)
    for metric, r in results.items():
        row = ds.sel(metric=metric)
        lo, hi = r["lower_bound"], r["upper_bound"]
        assert abs(float(row["mean"]) - (lo + hi) / 2) < 1e-15
        assert abs(float(row["sd"]) - np.sqrt((hi - lo) ** 2 / 12 + r["midpoint_sd"] ** 2)) < 1e-15
        assert abs(float(row["lower"]) - max(0.0, lo - z * r["lower_bound_sd"])) < 1e-15
        assert abs(float(row["upper"]) - min(1.0, hi + z * r["upper_bound_sd"])) < 1e-15
