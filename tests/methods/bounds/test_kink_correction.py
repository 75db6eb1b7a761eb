"""The correction of the Fréchet ends at their kinks and the label model's noise there.

Each cell's end is kinked in its distance to the kink, d = alpha - kappa; with d-hat ~ N(d,
sigma^2) the plug-in end is biased by sigma psi(t), t = d / sigma. The correction is the
empirical-Bayes posterior mean of psi over many cells (bayeval.methods.bounds.kinks): over a set of
cells its mean must recover most of the summed bias whether the cells sit at their kinks or are
spread around them, where the bias at the estimate, sigma psi(t-hat), removes only 40 % of it
at the kinks. With a label model fitted on the same items, kappa = beta-hat is noisy too: its sd
(LabelModelDelta.pooled_sd) must equal the sd of refits over repeated samples, and without it
the corrected upper bound stays biased. Tolerances are 4 Monte-Carlo sds of the simulated means
and sds.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from bayeval.methods.bounds import kinks
from bayeval.methods.bounds.fast import exact_bounds
from bayeval.methods.bounds.kinks import jensen_gap, kink_gaps
from bayeval.methods.bounds.label_models import dawid_skene, label_model_delta
from benchmarks.coverage_bounds import Cell, population, population_bounds

SEED = 20261124


def test_jensen_gap_is_the_normal_expectation():
    for t in (-2.5, -0.3, 0.0, 0.7, 3.0):
        mean = integrate.quad(lambda z, t=t: max(t + z, 0.0) * stats.norm.pdf(z), -12, 12,
                              points=[-t])[0]
        assert abs(jensen_gap(t) - (mean - max(t, 0.0))) < 1e-10


def test_slope_is_the_derivative_of_the_total_with_the_refitted_prior(monkeypatch):
    monkeypatch.setattr(kinks, "BIN", 1e-12)  # one likelihood row per cell
    rng = np.random.default_rng(0)
    t = np.concatenate([rng.normal(0, 0.5, 30), rng.normal(3, 1, 10)])
    w = rng.uniform(0.5, 2, t.size)
    share = w / w.sum()
    _, slope, _ = kink_gaps(t, w)
    for i in (0, 5, 31, 39):
        step = np.zeros(t.size)
        step[i] = 1e-5
        fd = (share @ kink_gaps(t + step, w)[0] - share @ kink_gaps(t - step, w)[0]) / 2e-5
        assert abs(fd / share[i] - slope[i]) < 1e-6


def _summed_error(t, draws, rng):
    """Mean and MC sd over draws of sum_i (correction_i - psi(t_i)): the empirical-Bayes gap
    and the bias at the estimate."""
    truth = jensen_gap(t).sum()
    ours, at_estimate = [], []
    for _ in range(draws):
        t_hat = t + rng.normal(size=t.size)
        ours.append(kink_gaps(t_hat, np.ones(t.size))[0].sum() - truth)
        at_estimate.append(jensen_gap(t_hat).sum() - truth)
    return [(np.mean(e), np.std(e) / np.sqrt(draws)) for e in (ours, at_estimate)]


def test_the_summed_correction_adapts_to_where_the_cells_sit():
    # 200 cells at t = 0 (a classifier that follows the label model: a summed gap of 80 sigma)
    # or spread evenly over -3..3 (17 sigma). No correction is unbiased at every t (Hirano &
    # Porter, 2012); the empirical-Bayes sum must recover at least 3/4 of the gap at the kinks,
    # where the bias at the estimate recovers less than half, and at least 9/10 of the spread
    # one, within 4 MC sds.
    rng = np.random.default_rng(SEED)
    at_kinks, spread = np.zeros(200), np.linspace(-3, 3, 200)
    (ours, ours_sd), (plain, plain_sd) = _summed_error(at_kinks, 300, rng)
    gap = jensen_gap(at_kinks).sum()
    assert ours >= -0.25 * gap - 4 * ours_sd, (ours, gap)
    assert plain < -0.5 * gap + 4 * plain_sd, (plain, gap)
    (ours, ours_sd), _ = _summed_error(spread, 300, rng)
    assert abs(ours) <= 0.1 * jensen_gap(spread).sum() + 4 * ours_sd, ours


def _replications(cell, reps, **kwargs):
    """Default upper bound of accuracy, with the label model's noise at the kinks or not."""
    patterns, joint_zh, beta_true = population(cell.n_classes, cell.n_lfs)
    flat = joint_zh.ravel() / joint_zh.sum()
    out = []
    for r in range(reps):
        table = cell.rng(SEED, r).multinomial(cell.n, flat).reshape(joint_zh.shape)
        seen = table.sum(axis=1) > 0
        counts, pats = table[seen], patterns[seen]
        beta = dawid_skene(pats, counts.sum(axis=1), cell.n_classes)
        delta = label_model_delta("dawid_skene", pats, counts.sum(axis=1), beta)
        error = {"label_model_pullback": delta.pullback, "label_model_sd": delta.pooled_sd}
        error.update(kwargs)
        out.append(exact_bounds(counts, beta, ["accuracy"], **error)["accuracy"]["upper_bound"])
    target = population_bounds(joint_zh, beta_true, ["accuracy"])["accuracy"][1]
    return np.asarray(out) - target


@pytest.mark.slow
def test_the_label_models_noise_at_the_kinks_is_needed():
    # Four classes, four LFs, a fitted Dawid-Skene on 5,000 items: the default upper bound's
    # mean error over 80 samples is within 4 MC sds of 0; without the label model's sd at the
    # kinks (the binomial noise only) it is biased down by more than 4 MC sds.
    cell = Cell(4, 4, 5000, "dawid_skene")
    ours = _replications(cell, 80)
    without = _replications(cell, 80, label_model_sd=None)
    assert abs(ours.mean()) <= 4 * ours.std() / np.sqrt(80), (ours.mean(), ours.std())
    assert without.mean() < -4 * without.std() / np.sqrt(80), (without.mean(), without.std())


def test_pooled_label_model_sd_equals_the_sd_of_refits():
    # Dawid-Skene on 3 LFs (binary) at the population's expected counts: the delta-method sd
    # of pooled beta-hat (fixed weights) against the sd over 400 refits on multinomial samples;
    # the MC sd of an sd is sd / sqrt(2 R). The refits stop at tol=1e-8 (their sds move by
    # 1e-6 of themselves from tol=1e-10's, at half the cost).
    patterns, joint_zh, _ = population(2, 3)
    n, reps = 5000, 400
    p = joint_zh.sum(axis=1)
    counts = n * p
    beta = dawid_skene(patterns, counts, 2, tol=1e-12, max_iter=5000)
    group = np.arange(len(p)) % 7  # seven pooled patterns of mixed composition
    weight = counts / np.bincount(group, counts)[group]
    ours = label_model_delta("dawid_skene", patterns, counts, beta).pooled_sd(group)
    rng = np.random.default_rng(SEED)
    refits = []
    for _ in range(reps):
        c = rng.multinomial(n, p)
        b = dawid_skene(patterns, c, 2, start=beta, tol=1e-8, max_iter=2000)
        refits.append(np.stack([np.bincount(group, weight * b[:, k]) for k in range(2)], 1))
    sd = np.std(refits, axis=0)
    np.testing.assert_allclose(ours, sd, rtol=4 / np.sqrt(2 * reps))
