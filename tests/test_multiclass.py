"""K-class metrics against scikit-learn on random cases, absent classes included."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from bayeval.metrics import BINARY_METRICS, METRICS, PROPORTIONS, REGISTRY, from_counts
from bayeval.multiclass import (
    CLASS_METRICS,
    MULTICLASS_METRICS,
    confusion_matrix,
    from_matrix,
    matrix_of,
    roc_auc_ovr,
)

ZERO_DIVISIONS = (0.0, 1.0, np.nan)


def sklearn_value(metric, y, yp, k, zd):
    """scikit-learn's value of ``metric`` on codes y, yp of k classes."""
    labels = list(range(k))
    kw = dict(labels=labels, zero_division=zd)
    if metric in ("precision", "recall", "f1"):
        fn = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}
        return fn[metric](y, yp, average=None, **kw)
    if metric == "specificity":  # recall of "not k"
        return np.array([skm.recall_score(y != c, yp != c, zero_division=zd) for c in labels])
    if metric.startswith(("macro_", "weighted_")) and not metric.endswith("specificity"):
        kind, base = metric.split("_", 1)
        fn = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}
        return fn[base](y, yp, average=kind, **kw)
    if metric == "macro_specificity":
        per = sklearn_value("specificity", y, yp, k, zd)
        return np.nanmean(per) if np.isnan(zd) and not np.isnan(per).all() else per.mean()
    if metric == "micro_f1":
        return skm.f1_score(y, yp, average="micro", **kw)
    if metric == "accuracy":
        return skm.accuracy_score(y, yp)
    if metric == "balanced_accuracy":
        return skm.balanced_accuracy_score(y, yp)
    if metric == "cohen_kappa":
        return skm.cohen_kappa_score(y, yp, labels=labels, replace_undefined_by=zd)
    value = skm.matthews_corrcoef(y, yp)  # mcc: scikit-learn's undefined value is 0
    undefined = len(set(y)) == 1 or len(set(yp)) == 1
    return zd if undefined else value


def random_case(rng):
    """Labels and predictions of k classes, some classes absent from one or both."""
    k = int(rng.integers(2, 7))
    n = int(rng.integers(1, 40))
    present = rng.choice(k, size=int(rng.integers(1, k + 1)), replace=False)
    y = rng.choice(present, size=n)
    yp = np.where(rng.random(n) < 0.5, y, rng.choice(k, size=n))
    if rng.random() < 0.2:
        yp[:] = yp[0]  # one predicted class: undefined precisions, kappa, mcc
    return y, yp, k


@pytest.mark.parametrize("zd", ZERO_DIVISIONS)
def test_metrics_equal_sklearn_on_random_cases(zd):
    rng = np.random.default_rng(20261201)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(25):
            y, yp, k = random_case(rng)
            cm = matrix_of(y, yp, k)
            np.testing.assert_array_equal(cm, skm.confusion_matrix(y, yp, labels=range(k)))
            for metric in CLASS_METRICS + MULTICLASS_METRICS:
                got = from_matrix(metric, cm, zero_division=zd)
                want = sklearn_value(metric, y, yp, k, zd)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                           err_msg=f"{metric} k={k} y={y} yp={yp}")


def test_draws_of_matrices_give_draws_of_metrics():
    rng = np.random.default_rng(3)
    cells = rng.dirichlet(np.ones(16), size=50).reshape(50, 4, 4)
    for metric in CLASS_METRICS + MULTICLASS_METRICS:
        batch = from_matrix(metric, cells)
        one_by_one = np.array([from_matrix(metric, c) for c in cells])
        np.testing.assert_allclose(batch, one_by_one, rtol=1e-13)
        # homogeneous of degree 0: counts and cell probabilities agree
        np.testing.assert_allclose(from_matrix(metric, 1000 * cells), batch, rtol=1e-12)


def test_two_classes_equal_the_binary_metrics():
    rng = np.random.default_rng(4)
    for _ in range(50):
        cm = rng.integers(0, 20, size=(2, 2))
        tp, fn, fp, tn = cm[1, 1], cm[1, 0], cm[0, 1], cm[0, 0]
        for metric in ("accuracy", "mcc", "balanced_accuracy"):
            assert from_matrix(metric, cm) == pytest.approx(
                from_counts(metric, tp, fp, fn, tn), abs=1e-14)
        assert from_matrix("recall", cm)[1] == pytest.approx(from_counts("recall", tp, fp, fn, tn))


def test_roc_auc_ovr_equals_sklearn():
    rng = np.random.default_rng(5)
    for _ in range(25):
        k = int(rng.integers(3, 6))
        n = int(rng.integers(k + 2, 60))
        y = np.r_[np.arange(k), rng.choice(k, size=n - k)]
        s = rng.dirichlet(np.ones(k), size=n).round(2)  # ties
        s = s / s.sum(axis=1, keepdims=True)
        want = skm.roc_auc_score(y, s, multi_class="ovr", average=None)
        np.testing.assert_allclose(roc_auc_ovr(y, s, average=None), want, rtol=1e-12)
        assert roc_auc_ovr(y, s) == pytest.approx(
            skm.roc_auc_score(y, s, multi_class="ovr"), rel=1e-12)


def test_roc_auc_ovr_absent_class_follows_zero_division():
    s = np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.5, 0.2, 0.3], [0.1, 0.8, 0.1]])
    y = [0, 1, 0, 1]  # class 2 absent: its AUC is undefined
    per = roc_auc_ovr(y, s, classes=[0, 1, 2], average=None, zero_division=np.nan)
    assert np.isnan(per[2]) and per[:2].tolist() == [1.0, 1.0]
    assert roc_auc_ovr(y, s, classes=[0, 1, 2], zero_division=np.nan) == 1.0
    assert roc_auc_ovr(y, s, classes=[0, 1, 2], zero_division=0.0) == pytest.approx(2 / 3)


def test_string_and_categorical_classes():
    cm, classes = confusion_matrix(["b", "a", "c", "b"], ["b", "b", "c", "a"])
    assert classes.tolist() == ["a", "b", "c"]
    assert cm.tolist() == [[0, 1, 0], [1, 1, 0], [0, 0, 1]]
    cat = pd.Categorical(["lo", "hi"], categories=["lo", "mid", "hi"])
    cm, classes = confusion_matrix(cat, ["lo", "lo"])
    assert classes.tolist() == ["lo", "mid", "hi"] and cm.tolist() == [[1, 0, 0], [0] * 3,
                                                                        [1, 0, 0]]
    frame = pd.DataFrame({"x": [0.9, 0.2, 0.3], "y": [0.05, 0.7, 0.3], "z": [0.05, 0.1, 0.4]})
    assert roc_auc_ovr(["x", "y", "z"], frame, average=None).tolist() == [1.0, 1.0, 1.0]


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="matrix must have shape"):
        from_matrix("accuracy", [[1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        from_matrix("accuracy", [[1, -2], [0, 1]])
    with pytest.raises(ValueError, match="metric must be one of"):
        from_matrix("npv", [[1, 2], [0, 1]])
    with pytest.raises(ValueError, match="labels hold 2 classes and scores have 3 columns"):
        roc_auc_ovr(["a", "b"], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    with pytest.raises(ValueError, match="missing value"):
        confusion_matrix([0, None], [0, 1])


def test_registry_lists_the_binary_metrics_as_before():
    assert METRICS == ("accuracy", "precision", "recall", "specificity", "npv", "f1", "fbeta",
                       "balanced_accuracy", "mcc")
    assert BINARY_METRICS == (*METRICS, "roc_auc")
    assert PROPORTIONS == ("accuracy", "precision", "recall", "specificity", "npv")
    assert CLASS_METRICS == ("precision", "recall", "specificity", "f1")
    assert all(REGISTRY[m].classes == "overall" for m in MULTICLASS_METRICS)
