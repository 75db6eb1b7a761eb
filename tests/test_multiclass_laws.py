"""Laws of K-class metrics with unknown labels: enumeration for tiny n, simulation otherwise."""

import itertools

import numpy as np
import pytest

from bayeval.multiclass import matrix_of, matrix_value
from bayeval.multiclass_laws import MACRO_LAW_METRICS, accuracy_law, class_counts, macro_moments

RNG = np.random.default_rng(20261204)
P_SMALL = RNG.dirichlet(np.ones(3), size=6)
Y_PRED_SMALL = np.array([0, 1, 2, 0, 1, 1])


def enumerate_labels(p):
    """Every label vector of the rows and its probability."""
    n, k = p.shape
    ys = np.array(list(itertools.product(range(k), repeat=n)))
    return ys, p[np.arange(n), ys].prod(axis=1)


def test_accuracy_and_counts_are_exact():
    ys, w = enumerate_labels(P_SMALL)
    correct = (ys == Y_PRED_SMALL).sum(axis=1)
    want = np.bincount(correct, weights=w, minlength=7)
    np.testing.assert_allclose(accuracy_law(P_SMALL, Y_PRED_SMALL).pmf(), want, atol=1e-12)
    counts = class_counts(P_SMALL, Y_PRED_SMALL)
    for c in range(3):
        tp = ((ys == c) & (Y_PRED_SMALL == c)).sum(axis=1)
        fn = ((ys == c) & (Y_PRED_SMALL != c)).sum(axis=1)
        joint = np.zeros((7, 7))
        np.add.at(joint, (tp, fn), w)
        law = np.outer(np.pad(counts.tp[c].pmf(), (0, 7 - counts.tp[c].n - 1)),
                       np.pad(counts.fn[c].pmf(), (0, 7 - counts.fn[c].n - 1)))
        np.testing.assert_allclose(law, joint, atol=1e-12)  # independent, as documented
    assert counts.predicted.tolist() == [2, 3, 1]


@pytest.mark.parametrize("metric", MACRO_LAW_METRICS)
def test_macro_means_exact_by_enumeration(metric):
    ys, w = enumerate_labels(P_SMALL)
    values = matrix_value(metric, matrix_of(ys, Y_PRED_SMALL, 3), 0.0)
    mean, var = macro_moments(metric, P_SMALL, Y_PRED_SMALL)
    assert mean == pytest.approx(w @ values, abs=1e-12)
    exact_var = w @ (values - w @ values) ** 2
    if metric == "macro_precision":
        assert var == pytest.approx(exact_var, abs=1e-12)


def test_macro_moments_against_simulation():
    """n = 300, K = 4: the mean within 4 MC SE of the simulated one; the sd (exact terms plus
    delta-method covariances) within 3 % of the simulated sd, whose own MC error is 1.6 %
    (4 sigma of sqrt(1 / (2 R)), R = 2000)."""
    rng = np.random.default_rng(7)
    n, k, reps = 300, 4, 2000
    p = rng.dirichlet(np.full(k, 0.7), size=n)
    y_pred = p.argmax(axis=1)
    y = (rng.random((reps, n, 1)) > np.cumsum(p, axis=1)).sum(axis=-1)
    cm = matrix_of(y, y_pred, k)
    for metric in MACRO_LAW_METRICS:
        sim = matrix_value(metric, cm, 0.0)
        mean, var = macro_moments(metric, p, y_pred)
        assert abs(mean - sim.mean()) <= 4 * sim.std() / np.sqrt(reps), metric
        assert np.sqrt(var) == pytest.approx(sim.std(), rel=0.03), metric


def test_bad_input():
    with pytest.raises(ValueError, match="metric must be one of"):
        macro_moments("weighted_f1", P_SMALL, Y_PRED_SMALL)
    with pytest.raises(ValueError, match="y_pred hold 4 classes and p have 3 columns"):
        accuracy_law(P_SMALL, [0, 1, 2, 0, 1, 7])
    with pytest.raises(ValueError, match="y_pred has 5 rows and p 6"):
        accuracy_law(P_SMALL, [0, 1, 2, 0, 1])
