"""The bounds' standard errors with a label model fitted on the same weak labels.

The label model's derivative in the pattern counts (implicit differentiation of the EM fixed
point) must equal finite differences of refits; the standard error of the whole pipeline (counts
-> label-model fit -> bounds) must equal the delta method computed by brute force, one finite
difference of the refitted bound per cell of the (pattern, prediction) table; and it must match
the sd of the bound over repeated samples (4 Monte-Carlo sigma), where the label model taken as
known does not.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from bayeval.methods.bounds import bounds
from bayeval.methods.bounds.fast import exact_bounds, metric_bounds, pool_small_cells
from bayeval.methods.bounds.label_models import (
    dawid_skene,
    dawid_skene_concerns,
    label_model_delta,
    label_model_pullback,
    majority_vote,
)
from benchmarks.coverage_bounds import population

TIGHT = {"tol": 1e-12, "max_iter": 20_000}  # refits converged far below the differences


def _table(n_classes, n_lfs, n, seed):
    """A (pattern, prediction) table drawn from the benchmark's population, seen patterns only."""
    patterns, joint_zh, _ = population(n_classes, n_lfs)
    rng = np.random.default_rng(seed)
    table = rng.multinomial(n, joint_zh.ravel() / joint_zh.sum()).reshape(joint_zh.shape)
    seen = table.sum(axis=1) > 0
    return patterns[seen], table[seen].astype(float)


@pytest.mark.parametrize(("n_classes", "n_lfs"), [(2, 3), (3, 3)])
def test_pullback_equals_finite_differences_of_refits(n_classes, n_lfs):
    patterns, table = _table(n_classes, n_lfs, 800, n_classes)
    counts = table.sum(axis=1)
    rng = np.random.default_rng(5)
    start = dawid_skene(patterns, counts, n_classes, **TIGHT)
    for name, fit in (("dawid_skene",
                       lambda c: dawid_skene(patterns, c, n_classes, start=start, **TIGHT)),
                      ("majority_vote", lambda c: majority_vote(patterns, n_classes, c))):
        beta = fit(counts)
        grad = rng.normal(size=(3, *beta.shape))
        ours = label_model_pullback(name, patterns, counts, beta, grad)
        h = 1e-2
        for u in range(len(counts)):
            step = np.zeros(len(counts))
            step[u] = h
            fd = (grad * (fit(counts + step) - fit(counts - step))).sum(axis=(1, 2)) / (2 * h)
            # the refits stop within ~1e-9 of their fixed point: 1e-6 after dividing by 2h
            np.testing.assert_allclose(ours[:, u], fd, rtol=1e-4, atol=1e-6)


def _brute_force_sd(table, patterns, n_classes, metric, side, group, refit):
    """The delta-method sd of a pooled plug-in bound with the label model refitted on the
    counts (or, refit=False, the pooled label model fixed), by central differences in every
    cell of the table."""
    n = table.sum()
    n_groups = group.max() + 1

    def pooled_beta(c, beta):
        mass = np.zeros((n_groups, n_classes))
        np.add.at(mass, group, c[:, None] * beta)
        return mass / np.bincount(group, c)[:, None]

    start = dawid_skene(patterns, table.sum(axis=1), n_classes, **TIGHT)
    refits = {}  # the label model depends on the pattern totals only: one refit per pattern

    def bound(t):
        c = t.sum(axis=1)
        beta = pooled_beta(c, start)  # the pooled pattern's own weights move with the counts
        if refit:
            key = c.tobytes()
            if key not in refits:
                refits[key] = pooled_beta(c, dawid_skene(patterns, c, n_classes, start=start,
                                                         **TIGHT))
            beta = refits[key]
        pooled = np.zeros((n_groups, n_classes))
        np.add.at(pooled, group, t)
        sizes = pooled.sum(axis=1)
        return metric_bounds(sizes / n, pooled / sizes[:, None], beta, metric)[side]

    slope = np.zeros_like(table)
    h = 1e-4
    for idx in zip(*np.nonzero(table), strict=True):
        step = np.zeros_like(table)
        step[idx] = h
        slope[idx] = (bound(table + step) - bound(table - step)) / (2 * h) * n
    p = table / n
    influence = slope - (p * slope).sum()
    return np.sqrt((p * influence**2).sum() / (n - 1))


@pytest.mark.parametrize(("n_classes", "metric"), [(2, "f1"), (3, "macro_f1")])
def test_standard_errors_are_the_delta_method(n_classes, metric, monkeypatch):
    # Both standard errors of the pooled bounds, the label model refitted on the counts and
    # fixed (its pooled weights still move with them), must equal the brute force; 3
    # labelling functions and few items, so that small patterns are pooled. The kink
    # correction is switched off: the brute force differentiates the plug-in ends.
    from bayeval.methods.bounds import fast

    monkeypatch.setattr(fast, "kink_gaps",
                        lambda t, w: (np.zeros(t.shape), np.zeros(t.shape), None))
    patterns, table = _table(n_classes, 3, 300 * n_classes, 11)
    beta = dawid_skene(patterns, table.sum(axis=1), n_classes, **TIGHT)
    pullback = partial(label_model_pullback, "dawid_skene", patterns, table.sum(axis=1), beta)
    out = exact_bounds(table.astype(int), beta, [metric], label_model_pullback=pullback)[metric]
    off = exact_bounds(table.astype(int), beta, [metric],  # a derivative 10 % off
                       label_model_pullback=lambda g: 0.9 * pullback(g))[metric]
    group = pool_small_cells(table.astype(int), beta)[2]
    assert group.max() + 1 < len(group)  # some patterns were pooled
    for i, side in enumerate(("lower", "upper")):
        fitted = _brute_force_sd(table, patterns, n_classes, metric, i, group, refit=True)
        known = _brute_force_sd(table, patterns, n_classes, metric, i, group, refit=False)
        np.testing.assert_allclose(out[f"{side}_bound_sd"], fitted, rtol=1e-4)
        np.testing.assert_allclose(out[f"{side}_bound_sd_fixed_label_model"], known, rtol=1e-4)
        assert fitted > 1.1 * known  # the label model's error is not negligible here
        assert abs(off[f"{side}_bound_sd"] / fitted - 1) > 1e-3  # the check can fail


def test_standard_error_matches_the_sd_over_repeated_samples():
    # 4 conditionally independent labelling functions (Dawid-Skene correctly specified and
    # identified), binary, n = 5,000: over R = 200 samples the sd of the accuracy's lower bound
    # must be the mean reported SE within 4 sigma of a sample sd (4 / sqrt(2 (R - 1)) = 0.20 in
    # ratio). The upper bound's cells sit near their kinks, where the one-sided slopes of the
    # influence function overstate the spread (docs/bounds.md): its SE must not be below the
    # sd (same tolerance) nor above 1.5 times it. The SEs with the label model fixed are about
    # half of the sds and must fail the first bar.
    patterns_all, joint_zh, _ = population(2, 4)
    flat = joint_zh.ravel() / joint_zh.sum()
    rng = np.random.default_rng(20261124)
    reps = 200
    rows = []
    for _ in range(reps):
        table = rng.multinomial(5000, flat).reshape(joint_zh.shape)
        seen = table.sum(axis=1) > 0
        counts, patterns = table[seen], patterns_all[seen]
        beta = dawid_skene(patterns, counts.sum(axis=1), 2)
        delta = label_model_delta("dawid_skene", patterns, counts.sum(axis=1), beta)
        out = exact_bounds(counts, beta, ["accuracy"], label_model_pullback=delta.pullback,
                           label_model_sd=delta.pooled_sd)
        r = out["accuracy"]
        rows.append([r["lower_bound"], r["upper_bound"], r["lower_bound_sd"],
                     r["upper_bound_sd"], r["lower_bound_sd_fixed_label_model"],
                     r["upper_bound_sd_fixed_label_model"]])
    rows = np.array(rows)
    tolerance = 4 / np.sqrt(2 * (reps - 1))
    ratios = rows[:, :2].std(axis=0, ddof=1) / rows[:, 2:4].mean(axis=0)
    fixed = rows[:, :2].std(axis=0, ddof=1) / rows[:, 4:].mean(axis=0)
    assert abs(ratios[0] - 1) <= tolerance, ratios
    assert 1 / 1.5 - tolerance <= ratios[1] <= 1 + tolerance, ratios
    assert (np.abs(fixed - 1) > tolerance).all(), fixed


def test_a_given_label_model_keeps_its_standard_errors(simulate):
    sim = simulate(2000, 3)
    with_term = bounds(sim.h, sim.weak, label_model=sim.oracle).closed_form
    without = bounds(sim.h, sim.weak, label_model=sim.oracle,
                     label_model_uncertainty=False).closed_form
    assert with_term.identical(without)


def test_fitted_label_model_reports_both_standard_errors(simulate):
    # With the label model's error, the sds are larger than at the fixed label model (kept in
    # the data), and its noise at the kinks moves both bounds outward.
    sim = simulate(3000, 4)
    ev = bounds(sim.h, sim.weak)
    known = bounds(sim.h, sim.weak, label_model_uncertainty=False)
    data, ours, theirs = ev.tree["data"], ev.closed_form, known.closed_form
    for side in ("lower", "upper"):
        assert (ours[f"{side}_bound_sd"] > data[f"{side}_bound_sd_fixed_label_model"]).all()
        assert f"{side}_bound_sd_fixed_label_model" not in known.tree["data"]
    assert (ours["lower_bound"] < theirs["lower_bound"]).all()
    assert (ours["upper_bound"] >= theirs["upper_bound"]).all()


def test_dawid_skene_with_two_labelling_functions_is_flagged():
    rng = np.random.default_rng(2)
    weak = rng.integers(-1, 2, (600, 3))
    y_pred = rng.integers(0, 2, 600)
    two = bounds(y_pred, weak[:, :2])
    assert any("Dawid-Skene is not identified with 2 labelling functions" in w
               for w in two.meta["warnings"]), two.meta["warnings"]
    three = bounds(y_pred, weak)
    assert not any("not identified" in w for w in three.meta["warnings"])
    assert dawid_skene_concerns(np.array([[0, -1, -1], [1, -1, -1]])).startswith(
        "Dawid-Skene is not identified with 1 labelling function that")


def test_iterative_solve_equals_the_direct_one(monkeypatch):
    # Many labelling functions and classes make Dawid-Skene's system too large to solve
    # directly; GMRES must give the same derivatives.
    from bayeval.methods.bounds import label_models

    patterns, table = _table(3, 4, 2000, 4)
    counts = table.sum(axis=1)
    beta = dawid_skene(patterns, counts, 3)
    grad = np.random.default_rng(1).normal(size=(4, *beta.shape))
    direct = label_model_pullback("dawid_skene", patterns, counts, beta, grad)
    monkeypatch.setattr(label_models, "DENSE_SOLVE", 10)
    iterative = label_model_pullback("dawid_skene", patterns, counts, beta, grad)
    np.testing.assert_allclose(iterative, direct, rtol=0, atol=1e-10 * np.abs(direct).max())
