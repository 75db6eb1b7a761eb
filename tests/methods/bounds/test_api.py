"""The entry function of the Fréchet bounds: it equals the closed forms on the cell counts, its
bounds hold the true metric, the selection helpers, and bad input. Tolerances are 4 sigma of
the sampling error unless the quantity is an exact identity (1e-12)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from bayeval.datasets import weak_labels as simulate_weak_labels
from bayeval.methods.bounds import api
from bayeval.methods.bounds.api import bounds, compare_labelling_functions, rank_classifiers
from bayeval.methods.bounds.fast import exact_bounds, metric_bounds
from bayeval.methods.bounds.label_models import (
    dawid_skene,
    label_model_delta,
    weak_label_patterns,
)


def true_metrics(y, h, n_classes):
    tp = np.array([np.sum((h == k) & (y == k)) for k in range(n_classes)])
    fp = np.array([np.sum((h == k) & (y != k)) for k in range(n_classes)])
    fn = np.array([np.sum((h != k) & (y == k)) for k in range(n_classes)])
    out = {"accuracy": np.mean(y == h), "macro_f1": np.mean(2 * tp / (2 * tp + fp + fn))}
    if n_classes == 2:
        out |= {"precision": tp[1] / (tp[1] + fp[1]), "recall": tp[1] / (tp[1] + fn[1]),
                "f1": 2 * tp[1] / (2 * tp[1] + fp[1] + fn[1])}
    return out


def test_doctests_run():
    assert doctest.testmod(api).failed == 0


def test_entry_matches_counts_and_label_model_average(simulate):
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
def test_bounds_contain_the_true_metric(n_classes, label_model, simulate):
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


def test_oracle_label_model_gives_the_true_bounds(simulate, population):
    sim = simulate(200000, seed=7)
    _, p, alpha, beta = population(sim.prior)
    s = bounds(sim.h, sim.weak, label_model=sim.oracle).summary()
    for metric in ("accuracy", "precision", "recall", "f1"):
        lower, upper = metric_bounds(p, alpha, beta, metric)
        assert abs(s.loc[metric, "lower_bound"] - lower) <= 4 * s.loc[metric, "lower_bound_sd"]
        assert abs(s.loc[metric, "upper_bound"] - upper) <= 4 * s.loc[metric, "upper_bound_sd"]


# ------------------------------------------------------------------------------ selection
def test_rank_classifiers_prefers_the_better_one(simulate):
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


def test_more_informative_labelling_functions_narrow_the_bounds(simulate):
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
     r"hold 3 class codes \(e.g. \[0, 1, 2\]\) for 2 classes"),
    ({"weak_labels": [[0, -2], [1, -1], [1, 1], [0, 0]]}, "weak_labels must hold integers"),
    ({"weak_labels": [[0, 0.5], [1, -1], [1, 1], [0, 0]]}, "weak_labels must hold integers"),
    ({"label_model": np.full((4, 2), 0.6)}, "label_model rows must be distributions"),
    ({"label_model": [[1.2, -0.2]] * 4}, "label_model must hold probabilities"),
    ({"label_model": np.full((3, 2), 0.5)}, "length mismatch: y_pred has 4, label_model has 3"),
    ({"label_model": "snorkel"}, "label_model must be one of"),
    ({"y_pred": [0, 1, 1]}, "length mismatch: y_pred has 3"),
    ({"y_pred": [0, 1, 2, 0], "n_classes": 2}, "hold 3 class codes"),
    ({"n_classes": 10**9}, "n_classes must be an integer from 2 to 1000"),
    ({"y_pred": [7, 7, 7, 7], "weak_labels": [[7], [-1], [7], [7]]}, "hold one class code, 7"),
    ({"weak_labels": [[0, 0.7], [1, -1], [1, 1], [0, 0]]}, r"weak_labels must hold integers"),
    ({"y_pred": [0, 1, 2, 0], "metrics": ["f1[3]"]}, r"metrics must be one of .*f1\[2\]"),
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
    y_pred = rng.integers(0, 2, 300)
    ev = bounds(y_pred, weak, label_model="majority_vote")
    assert any("were pooled by label-model bin" in w for w in ev.warnings)
    data = ev.tree["data"]
    assert int(data["n_cells_after_pooling"]) < int(data["n_cells"])
    plug = bounds(y_pred, weak, label_model="majority_vote", small_pattern_correction=False)
    assert any("biased inward" in w for w in plug.warnings)
    assert any("small_pattern_correction=False" in w for w in plug.warnings)


def test_items_without_votes_are_their_own_pattern():
    # Items on which every function abstains form one pattern, evaluated, not refused; their
    # share is reported. With votes independent of the class, Dawid-Skene's P(Y | no vote) =
    # pi_y prod_j P(abstain_j | y) / ... is the class prior (0.4, 0.6): its error is the class
    # balance's (sd sqrt(.24/5000) = 0.007) plus the spurious class dependence of the three
    # fitted abstention rates (each sd ~0.01, ~0.015 on the probability together), so 4 sd of
    # the sum is ~0.07.
    sim = simulate_weak_labels(5000, prior=(0.4, 0.6), random_seed=0)
    weak, y_pred = sim.weak_labels, sim.y_pred
    silent = (weak == -1).all(axis=1)
    assert 0.05 < silent.mean() < 0.15
    ev = bounds(y_pred, weak)
    data = ev.tree["data"]
    assert float(data["share_without_votes"]) == pytest.approx(silent.mean(), abs=1e-12)
    assert any("have no vote" in w for w in ev.warnings)
    cell, patterns, counts = weak_label_patterns(weak, 2)
    beta = dawid_skene(patterns, counts, 2)
    none = (patterns == -1).all(axis=1)
    assert np.abs(beta[none][0] - [0.4, 0.6]).max() < 0.07
    table = np.zeros((len(counts), 2), dtype=int)
    np.add.at(table, (cell, y_pred), 1)
    delta = label_model_delta("dawid_skene", patterns, counts, beta)
    direct = exact_bounds(table, beta, ["accuracy"], label_model_pullback=delta.pullback,
                          label_model_sd=delta.pooled_sd)["accuracy"]
    assert abs(ev.summary().loc["accuracy", "upper_bound"] - direct["upper_bound"]) < 1e-12
    mv = bounds(y_pred, weak, label_model="majority_vote").tree["data"]
    assert float(mv["share_without_votes"]) == float(data["share_without_votes"])
    # the truth lies in the identified-set interval with the silent items included
    s = ev.summary()
    assert s.loc["accuracy", "lower"] <= np.mean(sim.labels == y_pred) <= s.loc["accuracy",
                                                                                "upper"]
