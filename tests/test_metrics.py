"""Metrics against scikit-learn, zero_division, one-division exactness, vectorised shapes."""

import itertools
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from bayeval.metrics import (
    BINARY_METRICS,
    METRICS,
    PROPORTIONS,
    REGISTRY,
    auc_value,
    confusion_counts,
    counts_of,
    from_counts,
    is_undefined,
    metric_value,
    roc_auc,
    undefined,
)

ZERO_DIVISIONS = [0.0, 1.0, np.nan]


def sklearn_metric(metric, y, yp, zero_division, beta=1.0):
    """The scikit-learn value; specificity and npv are recall and precision of class 0."""
    zd = {"zero_division": zero_division}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # balanced accuracy warns when a class is absent
        return {
            "accuracy": lambda: skm.accuracy_score(y, yp),
            "precision": lambda: skm.precision_score(y, yp, **zd),
            "recall": lambda: skm.recall_score(y, yp, **zd),
            "specificity": lambda: skm.recall_score(1 - y, 1 - yp, **zd),
            "npv": lambda: skm.precision_score(1 - y, 1 - yp, **zd),
            "f1": lambda: skm.f1_score(y, yp, **zd),
            "fbeta": lambda: skm.fbeta_score(y, yp, beta=beta, **zd),
            "balanced_accuracy": lambda: skm.balanced_accuracy_score(y, yp),
            "mcc": lambda: skm.matthews_corrcoef(y, yp),
        }[metric]()


def test_metric_names():
    assert METRICS == ("accuracy", "precision", "recall", "specificity", "npv", "f1", "fbeta",
                       "balanced_accuracy", "mcc")
    assert BINARY_METRICS == (*METRICS, "roc_auc")
    assert PROPORTIONS == ("accuracy", "precision", "recall", "specificity", "npv")


def test_registry_ranges_hold_the_values():
    """Every count ratio stays in its registry range over all 4-row confusion matrices."""
    counts = np.array([c for c in itertools.product(range(5), repeat=4) if sum(c) == 4]).T
    for name in METRICS:
        metric = REGISTRY[name]
        assert metric.name == name and metric.definition
        values = from_counts(name, *counts, beta=2.0)
        assert metric.low <= values.min() and values.max() <= metric.high
        assert values.min() == metric.low and values.max() == metric.high
    assert (REGISTRY["roc_auc"].low, REGISTRY["roc_auc"].high) == (0.0, 1.0)
    assert [m for m in REGISTRY if REGISTRY[m].one_count] == ["accuracy", "precision", "npv"]


def test_trusting_twins_equal_the_checked_functions():
    rng = np.random.default_rng(4)
    labels, y_pred = rng.integers(0, 2, (5, 40)), rng.integers(0, 2, 40)
    counts = confusion_counts(labels, y_pred)
    for twin, checked in zip(counts_of(labels, y_pred), counts, strict=True):
        np.testing.assert_array_equal(twin, checked)
    floats = [np.asarray(c, float) for c in counts]
    for metric in METRICS:
        for zd in (0.0, 1.0, np.nan):
            np.testing.assert_array_equal(metric_value(metric, *floats, 0.5, zd),
                                          from_counts(metric, *counts, beta=0.5,
                                                      zero_division=zd))
    for metric in BINARY_METRICS:
        np.testing.assert_array_equal(is_undefined(metric, *floats, 2.0),
                                      undefined(metric, *counts, beta=2.0))
    scores = np.round(rng.random(40), 1)
    for ties in ("half", "one"):
        np.testing.assert_array_equal(auc_value(labels, scores, ties, np.nan),
                                      roc_auc(labels, scores, ties=ties, zero_division=np.nan))
    assert auc_value(np.ones(3, np.int8), scores[:3]) == 0.0  # no raise: zero_division


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("metric", METRICS)
def test_equals_sklearn_on_random_data(metric, seed):
    rng = np.random.default_rng(seed)
    n = [40, 200, 1000, 7][seed]
    y, yp = rng.integers(0, 2, n), (rng.random(n) < rng.random()).astype(int)
    counts = confusion_counts(y, yp)
    for beta in [1.0, 0.5, 2.0, 0.3] if metric == "fbeta" else [1.0]:
        got = from_counts(metric, *counts, beta=beta)
        assert abs(got - sklearn_metric(metric, y, yp, 0.0, beta)) <= 1e-12


@pytest.mark.parametrize("metric", METRICS)
def test_equals_sklearn_on_every_length_3_case_and_zero_division(metric):
    """All 64 (labels, predictions) pairs of length 3 include every undefined case."""
    cases = list(itertools.product(itertools.product([0, 1], repeat=3), repeat=2))
    y, yp = (np.array([c[i] for c in cases]) for i in (0, 1))
    counts = confusion_counts(y, yp)  # batched: one row per case
    for zd in ZERO_DIVISIONS if metric != "mcc" else [0.0]:
        got = from_counts(metric, *counts, beta=2.0, zero_division=zd)
        want = [sklearn_metric(metric, a, b, zd, beta=2.0) for a, b in zip(y, yp, strict=True)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    hit = undefined(metric, *counts, beta=2.0)
    assert hit.shape == (64,) and (hit.any() or metric in ("accuracy", "balanced_accuracy"))
    for zd in ZERO_DIVISIONS:  # undefined cells are exactly those that take zero_division
        got = from_counts(metric, *counts, beta=2.0, zero_division=zd)
        np.testing.assert_array_equal(got[hit], zd)
        assert not np.isnan(got[~hit]).any()


def test_undefined_cells_by_metric():
    tp, fp, fn, tn = np.array([[0, 0, 0, 0], [0, 0, 3, 4], [2, 0, 0, 0], [0, 5, 0, 0]]).T
    want = {
        "accuracy": [1, 0, 0, 0], "balanced_accuracy": [1, 0, 0, 0],
        "precision": [1, 1, 0, 0], "recall": [1, 0, 0, 1], "specificity": [1, 0, 1, 0],
        "npv": [1, 0, 1, 1], "f1": [1, 0, 0, 0], "fbeta": [1, 0, 0, 0], "mcc": [1, 1, 1, 1],
        "roc_auc": [1, 0, 1, 1],
    }
    for metric, mask in want.items():
        np.testing.assert_array_equal(undefined(metric, tp, fp, fn, tn), np.array(mask, bool))
    assert undefined("roc_auc", 1, 0, 0, 1) == np.False_


@pytest.mark.parametrize("metric", METRICS)
def test_equal_rationals_are_bitwise_equal(metric):
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 50, size=(4, 500))
    for beta in (0.5, 2.0, 0.3, 1.0):
        base = from_counts(metric, *counts, beta=beta)
        for k in (2, 3, 7) if metric == "mcc" else (2, 3, 7, 1000):  # products below 2^53
            np.testing.assert_array_equal(from_counts(metric, *(k * counts), beta=beta), base)


def test_fbeta_limits_and_beta_one():
    counts = np.random.default_rng(0).integers(0, 9, size=(4, 300))
    np.testing.assert_array_equal(from_counts("fbeta", *counts, beta=1), from_counts("f1", *counts))
    np.testing.assert_array_equal(from_counts("fbeta", *counts, beta=0),
                                  from_counts("precision", *counts))
    np.testing.assert_array_equal(from_counts("fbeta", *counts, beta=np.inf),
                                  from_counts("recall", *counts))


def test_vectorised_over_leading_dims_with_broadcasting():
    rng = np.random.default_rng(1)
    tp, fp, fn = rng.integers(0, 20, (3, 4, 5))
    tn = 7  # a scalar broadcasts
    for metric in METRICS:
        got = from_counts(metric, tp, fp, fn, tn)
        assert got.shape == (4, 5)
        want = [from_counts(metric, a, b, c, tn) for a, b, c in zip(tp.ravel(), fp.ravel(),
                                                                      fn.ravel(), strict=True)]
        np.testing.assert_array_equal(got.ravel(), want)
    assert isinstance(from_counts("f1", 1, 2, 3, 4), float)


def test_expected_counts_are_accepted():
    assert from_counts("precision", 2.5, 1.5, 0.25, 4.0) == 2.5 / 4.0


def test_confusion_counts_match_sklearn_batched():
    rng = np.random.default_rng(2)
    labels, yp = rng.integers(0, 2, (3, 4, 60)), rng.integers(0, 2, 60)
    tp, fp, fn, tn = confusion_counts(labels, yp)
    assert tp.shape == (3, 4)
    for idx in np.ndindex(3, 4):
        want = skm.confusion_matrix(labels[idx], yp, labels=[0, 1]).ravel()  # tn fp fn tp
        assert [tn[idx], fp[idx], fn[idx], tp[idx]] == want.tolist()


def brute_auc(y, s, w):
    pos, neg = s[y == 1], s[y == 0]
    d = pos[:, None] - neg[None, :]
    return ((d > 0) + w * (d == 0)).mean()


@pytest.mark.parametrize(("n", "levels"), [(30, 5), (500, 0), (2000, 40), (2, 0)])
def test_roc_auc_equals_sklearn_and_brute_force(n, levels):
    rng = np.random.default_rng(n)
    s = rng.random(n)
    if levels:  # heavy ties
        s = np.round(s * levels) / levels
    labels = rng.integers(0, 2, (6, n))
    labels[:, :2] = [0, 1]  # both classes in every draw
    half, one = roc_auc(labels, s), roc_auc(labels, s, ties="one")
    assert half.shape == one.shape == (6,)
    for b in range(6):
        assert abs(half[b] - skm.roc_auc_score(labels[b], s)) <= 1e-12
        assert abs(one[b] - brute_auc(labels[b], s, 1.0)) <= 1e-12
        assert roc_auc(labels[b], s) == half[b]
    assert (one >= half).all() and ((one > half).any() == bool(levels))


def test_roc_auc_one_class():
    s = np.array([0.1, 0.4, 0.4, 0.9])
    with pytest.raises(ValueError, match=r"labels.*both classes"):
        roc_auc([1, 1, 1, 1], s)
    labels = np.array([[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]])
    counts = confusion_counts(labels, [0, 1, 1, 1])
    np.testing.assert_array_equal(undefined("roc_auc", *counts), [True, False, True])
    got = roc_auc(labels, s, zero_division=np.nan)
    assert np.isnan(got[[0, 2]]).all() and got[1] == 0.875
    np.testing.assert_array_equal(roc_auc(labels, s), [0.0, 0.875, 0.0])


@pytest.mark.parametrize(("call", "name"), [
    (lambda: from_counts("auc", 1, 1, 1, 1), "metric"),
    (lambda: from_counts("f1", 1, 1, 1, 1, zero_division=0.5), "zero_division"),
    (lambda: from_counts("f1", 1, -1, 1, 1), "fp"),
    (lambda: from_counts("f1", [1, 2], [1, 2, 3], 1, 1), "broadcast"),
    (lambda: from_counts("f1", 1, np.nan, 1, 1), "fp"),
    (lambda: from_counts("fbeta", 1, 1, 1, 1, beta=-1), "beta"),
    (lambda: undefined("f2", 1, 1, 1, 1), "metric"),
    (lambda: confusion_counts([0, 2, 1], [0, 1, 1]), "labels"),
    (lambda: confusion_counts([0, 1, 1], [0, 1]), "labels"),
    (lambda: confusion_counts([[0, 1], [1, 1]], [[0, 1], [1, 1], [0, 0]]), "broadcast"),
    (lambda: confusion_counts([0, 1], [0.5, 1]), "y_pred"),
    (lambda: roc_auc([0, 1], [0.2, 0.3], ties="ge"), "ties"),
    (lambda: roc_auc([0, 1, 1], [0.2, 0.3]), "labels"),
    (lambda: roc_auc([0, 1], [0.2, np.nan]), "scores"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_auc_value_of_sorted_scores_skips_the_sort_and_agrees():
    """Sorted scores (ties included) are read as they are; the same AUC as shuffled rows."""
    rng = np.random.default_rng(8)
    scores = np.sort(np.round(rng.random(500), 1))
    labels = (rng.random((3, 500)) < scores).astype(np.int8)
    shuffle = rng.permutation(500)
    for ties in ("half", "one"):
        np.testing.assert_array_equal(auc_value(labels, scores, ties),
                                      auc_value(labels[:, shuffle], scores[shuffle], ties))
    assert auc_value(labels[0], scores) == pytest.approx(skm.roc_auc_score(labels[0], scores),
                                                        abs=1e-15)
