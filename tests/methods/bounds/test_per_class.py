"""Precision, recall and F1 of each class (one vs the rest) for K > 2 classes: the closed forms
against a linear programme over the couplings with costs written from the metrics' definitions,
the K-class bounds of class c against the binary problem "c or not c", the true per-class
metrics (scikit-learn's) inside the bounds of the population, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from sklearn.metrics import f1_score, precision_score, recall_score

from bayeval.methods.bounds import bounds, compare_labelling_functions, rank_classifiers
from bayeval.methods.bounds.api import as_metrics
from bayeval.methods.bounds.fast import exact_bounds, metric_bounds
from tests.methods.bounds.conftest import simulate_items


def _lp(p, alpha, beta, numerator):
    """min and max over the couplings pi_z of alpha_z and beta_z of sum_z p_z pi_z[c, c]."""
    n_cells, k = alpha.shape
    rows, rhs = [], []
    for z in range(n_cells):
        for c in range(k):
            for axis, margin in ((1, alpha), (0, beta)):
                row = np.zeros((n_cells, k, k))
                if axis == 1:
                    row[z, c, :] = 1
                else:
                    row[z, :, c] = 1
                rows.append(row.ravel())
                rhs.append(p[z] * margin[z, c])
    out = [optimize.linprog(s * np.tile(numerator.ravel(), n_cells), A_eq=np.array(rows),
                            b_eq=rhs, bounds=(0, None), method="highs") for s in (1, -1)]
    assert all(r.status == 0 for r in out)
    return out[0].fun, -out[1].fun


def test_one_class_bounds_equal_the_linear_programme():
    rng = np.random.default_rng(3)
    k = 4
    for _ in range(10):
        p = rng.dirichlet(np.ones(5))
        alpha, beta = rng.dirichlet(np.ones(k), 5), rng.dirichlet(np.ones(k), 5)
        predicted, actual = p @ alpha, p @ beta  # P(H = c), P(Y = c)
        for c in range(k):
            hit = np.zeros((k, k))
            hit[c, c] = 1.0
            low, high = _lp(p, alpha, beta, hit)  # the range of P(H = c, Y = c)
            expected = {"precision": (low / predicted[c], high / predicted[c]),
                        "recall": (low / actual[c], high / actual[c]),
                        "f1": (2 * low / (predicted[c] + actual[c]),
                               2 * high / (predicted[c] + actual[c]))}
            for metric, ends in expected.items():
                np.testing.assert_allclose(metric_bounds(p, alpha, beta, f"{metric}[{c}]"),
                                           ends, atol=1e-9)


@pytest.mark.parametrize("correction", [False, True])
def test_each_class_is_the_binary_problem_of_that_class(correction):
    """Bounds and standard errors of class c's metrics equal those of the binary problem
    "c or not c" on the same weak-label patterns (the label model's P(Y = c | z) against the
    rest), plug-in or kink-corrected (no pattern is small enough to be pooled: pooling goes by
    the most probable class, which the two problems do not share)."""
    rng = np.random.default_rng(5)
    counts = rng.integers(5, 60, size=(30, 3))  # items per pattern and predicted class
    beta = rng.dirichlet(np.ones(3), 30)
    metrics = ["precision", "recall", "f1"]
    ours = exact_bounds(counts, beta, [f"{m}[{c}]" for m in metrics for c in range(3)],
                        small_pattern_correction=correction)
    keys = ["lower_bound", "upper_bound", "lower_bound_sd", "upper_bound_sd"]
    for c in range(3):
        binary = exact_bounds(np.stack([counts.sum(axis=1) - counts[:, c], counts[:, c]], 1),
                              np.stack([1 - beta[:, c], beta[:, c]], 1), metrics,
                              small_pattern_correction=correction)
        for m in metrics:
            np.testing.assert_allclose([ours[f"{m}[{c}]"][key] for key in keys],
                                       [binary[m][key] for key in keys], rtol=1e-10)


def test_true_metrics_lie_in_the_population_bounds():
    """With the oracle label model on many items the bounds hold scikit-learn's per-class
    metrics of the items' true labels (the identified set contains the truth)."""
    items = simulate_items(20_000, seed=11, n_classes=3)
    out = bounds(items.h, items.weak, label_model=items.oracle,
                 metrics=["precision", "recall", "f1"]).closed_form
    truth = {"precision": precision_score(items.y, items.h, average=None),
             "recall": recall_score(items.y, items.h, average=None),
             "f1": f1_score(items.y, items.h, average=None)}
    for metric, values in truth.items():
        for c, value in enumerate(values):
            row = out.sel(metric=f"{metric}[{c}]")
            assert float(row["lower"]) <= value <= float(row["upper"]), (metric, c)
            assert float(row["upper_bound"]) - float(row["lower_bound"]) > 0.01


def test_metric_names_expand_per_class():
    assert as_metrics(["precision", "accuracy"], 3) == ("precision[0]", "precision[1]",
                                                        "precision[2]", "accuracy")
    assert as_metrics("precision", 2) == ("precision",)  # class 1 of two
    assert as_metrics(["precision[0]", "precision"], 2) == ("precision[0]", "precision")
    with pytest.raises(ValueError, match="precision\\[3\\]"):
        as_metrics(["precision[3]"], 3)
    with pytest.raises(ValueError, match="twice once the classes are expanded"):
        as_metrics(["f1", "f1[1]"], 3)


def test_ranking_and_comparison_take_one_class():
    items = simulate_items(2000, seed=2, n_classes=3)
    candidates = {"h": items.h, "votes": np.maximum(items.weak[:, 0], 0)}
    with pytest.raises(ValueError, match="metric='f1' is of one class; with 3 classes give one "
                                         "of 'f1\\[0\\]', 'f1\\[1\\]', 'f1\\[2\\]'"):
        rank_classifiers(candidates, items.weak, metric="f1")
    ranked = rank_classifiers(candidates, items.weak, metric="f1[2]")
    direct = bounds(items.h, items.weak, metrics=["f1[2]"]).closed_form.sel(metric="f1[2]")
    assert ranked.loc["h", "lower_bound"] == pytest.approx(float(direct["lower_bound"]), abs=1e-12)
    with pytest.raises(ValueError, match="is of one class"):
        compare_labelling_functions(items.h, items.weak, {"all": [0, 1, 2]}, metric="recall")
    widths = compare_labelling_functions(items.h, items.weak, {"all": [0, 1, 2], "one": [0]},
                                         metric="recall[0]")
    assert widths.loc["all", "width"] < widths.loc["one", "width"]
