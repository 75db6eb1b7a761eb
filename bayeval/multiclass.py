r"""Metrics of K classes from a K x K confusion matrix, vectorised over leading (draw) axes.

The confusion matrix :math:`C` has one row per true class and one column per predicted class
(scikit-learn's ``confusion_matrix``): :math:`C_{kj}=\#\{i: y_i=k,\ \hat y_i=j\}`, with
:math:`n_k=\sum_j C_{kj}` rows of class :math:`k`, :math:`\hat n_j=\sum_k C_{kj}` predictions of
class :math:`j` and :math:`n=\sum_{kj}C_{kj}`. Class :math:`k` against the rest gives the
one-vs-rest counts :math:`TP_k=C_{kk}`, :math:`FP_k=\hat n_k-C_{kk}`, :math:`FN_k=n_k-C_{kk}`,
:math:`TN_k=n-n_k-\hat n_k+C_{kk}`. The metrics:

==================  ==================================================================
metric              definition
==================  ==================================================================
precision (k)       :math:`TP_k/(TP_k+FP_k)`
recall (k)          :math:`TP_k/(TP_k+FN_k)`
f1 (k)              :math:`2TP_k/(2TP_k+FP_k+FN_k)`
specificity (k)     :math:`TN_k/(TN_k+FP_k)`
macro_<m>           :math:`\tfrac1K\sum_k m_k`
weighted_<m>        :math:`\sum_k \tfrac{n_k}{n} m_k`
accuracy, micro_f1  :math:`t/n`, :math:`t=\sum_k C_{kk}`
balanced_accuracy   the mean recall over the classes with :math:`n_k>0`
cohen_kappa         :math:`(n\,t-s)/(n^2-s)`, :math:`s=\sum_k n_k\hat n_k`
mcc                 :math:`(n\,t-s)/\sqrt{(n^2-\sum_k\hat n_k^2)(n^2-\sum_k n_k^2)}`
roc_auc (k)         ROC-AUC of the scores of class k, k against the rest
macro_roc_auc       :math:`\tfrac1K\sum_k\mathrm{AUC}_k`
==================  ==================================================================

In scikit-learn: the per-class metrics are ``precision_score`` (``recall_score``, ``f1_score``)
with ``average=None``, ``macro_<m>`` and ``weighted_<m>`` the same with ``average="macro"`` and
``"weighted"``, ``micro_f1`` with ``average="micro"``, specificity the recall of "not k";
``balanced_accuracy_score``, ``cohen_kappa_score``, ``matthews_corrcoef``, and
``roc_auc_score(..., multi_class="ovr", average=None)`` (or ``"macro"``).

``mcc`` is Gorodkin's :math:`R_K` (Gorodkin 2004), the binary MCC when K = 2; ``cohen_kappa`` is
Cohen's (1960) unweighted kappa. Every metric is homogeneous of degree 0 in :math:`C`, so it is
also the population metric of a matrix of cell probabilities (:mod:`bayeval.methods.labelled`).

Undefined values follow ``zero_division`` as in :mod:`bayeval.metrics`: a per-class ratio with
denominator 0 (a class never predicted has no precision, a class absent from the labels no
recall), ``cohen_kappa`` where :math:`n^2=s` (labels and predictions all of one class), ``mcc``
where a factor of its denominator is 0, a class's ROC-AUC where it or the rest is absent from
the labels, anything with :math:`n=0`. The averages take the per-class values with their
``zero_division`` values, as scikit-learn's ``precision_score(..., labels=range(K))`` does; with
``zero_division=nan`` the undefined classes are left out of the average (scikit-learn's
``_nanaverage``, which averages the defined values unweighted where their weights are all 0),
NaN if all are undefined. ``balanced_accuracy`` leaves out the classes absent
from the labels whatever ``zero_division`` is, as scikit-learn does. ``macro_roc_auc`` with a
class absent from the labels is the average over the others with ``zero_division=nan``;
scikit-learn returns NaN there.

Every ratio is one division of products of the counts, taken in float64 (exact while below
:math:`2^{53}`, counts up to about :math:`10^4` for ``mcc``, whose terms are of degree 4).

References
----------
J. Gorodkin (2004). Comparing two K-category assignments by a K-category correlation
coefficient. Computational Biology and Chemistry 28, 367-374.
J. Cohen (1960). A coefficient of agreement for nominal scales. Educational and Psychological
Measurement 20, 37-46.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.classes import as_class_scores, column_classes, encode
from bayeval.metrics import REGISTRY, auc_value, metric_value
from bayeval.validation import as_array, as_choice, as_zero_division

__all__ = [
    "CLASS_METRICS",
    "MULTICLASS_METRICS",
    "confusion_matrix",
    "counts_value",
    "from_matrix",
    "matrix_of",
    "matrix_value",
    "one_vs_rest",
    "ovr_auc_value",
    "roc_auc_ovr",
]

CLASS_METRICS = tuple(name for name, m in REGISTRY.items()
                      if m.classes == "per_class" and m.count_ratio)
"""Per-class metrics of the confusion matrix (one-vs-rest): a value per class."""

MULTICLASS_METRICS = tuple(name for name, m in REGISTRY.items()
                           if m.classes == "overall" and not m.ranking)
"""Metrics of the whole K x K confusion matrix: one value."""


def confusion_matrix(labels: Any, y_pred: Any, *, classes: Any = None) -> tuple[np.ndarray, ...]:
    """The K x K confusion matrix of class labels against predictions, and the classes.

    Parameters
    ----------
    labels, y_pred : array-like, shape (n,)
        Class labels of any hashable type (:func:`bayeval.classes.encode`).
    classes : sequence, optional
        The classes in order; by default those of the inputs.

    Returns
    -------
    matrix : numpy.ndarray
        int64 (K, K): rows true classes, columns predicted classes.
    classes : numpy.ndarray
        The classes, in the order of the rows and columns.

    Examples
    --------
    >>> cm, classes = confusion_matrix(["a", "b", "c", "a"], ["a", "c", "c", "b"])
    >>> cm.tolist(), classes.tolist()
    ([[1, 1, 0], [0, 0, 1], [0, 0, 1]], ['a', 'b', 'c'])
    """
    y, yp, classes = encode(labels, y_pred, classes=classes)
    return matrix_of(y, yp, len(classes)), classes


def matrix_of(labels: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    """:func:`confusion_matrix` of codes, without checks, one matrix per leading index.

    ``labels`` and ``y_pred`` are int codes in ``0..n_classes-1`` of shapes (..., n) that
    broadcast; the result has shape (..., K, K).

    Examples
    --------
    >>> matrix_of(np.array([[0, 1, 1], [1, 1, 1]]), np.array([0, 1, 0]), 2).tolist()
    [[[1, 0], [1, 1]], [[0, 0], [2, 1]]]
    """
    y, yp = np.broadcast_arrays(labels, y_pred)
    k2 = n_classes * n_classes
    flat = (y * n_classes + yp).reshape(-1, y.shape[-1])
    cells = flat + k2 * np.arange(flat.shape[0])[:, None]
    counts = np.bincount(cells.ravel(), minlength=flat.shape[0] * k2)
    return counts.reshape(*y.shape[:-1], n_classes, n_classes)


def one_vs_rest(matrix: np.ndarray) -> tuple[np.ndarray, ...]:
    r"""(TP, FP, FN, TN) of each class against the rest, shape (..., K) each.

    :math:`TP_k=C_{kk}`, :math:`FP_k=\hat n_k-C_{kk}`, :math:`FN_k=n_k-C_{kk}`,
    :math:`TN_k=n-n_k-\hat n_k+C_{kk}` (module docstring), in float64.

    Examples
    --------
    >>> [c.tolist() for c in one_vs_rest(np.array([[3, 1], [2, 4]]))]
    [[3.0, 4.0], [2.0, 1.0], [1.0, 2.0], [4.0, 3.0]]
    """
    c = np.asarray(matrix, dtype=float)
    tp = np.diagonal(c, axis1=-2, axis2=-1)
    true, pred = c.sum(axis=-1), c.sum(axis=-2)
    n = true.sum(axis=-1, keepdims=True)
    return tp, pred - tp, true - tp, n - true - pred + tp


def _average(values: np.ndarray, weights: np.ndarray, zero_division: float) -> np.ndarray:
    """Weighted mean over the last axis; NaN values (undefined, zero_division=nan) left out,
    and where the others weigh 0 their plain mean (scikit-learn's ``_nanaverage``)."""
    defined = ~np.isnan(values)
    w = np.where(defined, weights, 0.0)
    w = np.where((w.sum(axis=-1) > 0)[..., None], w, defined)
    num, den = (w * np.nan_to_num(values)).sum(axis=-1), w.sum(axis=-1)
    out = np.full(np.shape(num), zero_division)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float) -> np.ndarray:
    out = np.full(np.broadcast_shapes(np.shape(num), np.shape(den)), zero_division)
    np.divide(num, den, out=out, where=den > 0)
    return out


def matrix_value(metric: str, matrix: np.ndarray, zero_division: float) -> np.ndarray | float:
    """:func:`from_matrix` without its checks, for arguments already checked.

    ``metric`` must be one of :data:`CLASS_METRICS` or :data:`MULTICLASS_METRICS`, ``matrix``
    an array (..., K, K) of non-negative counts or cell probabilities, ``zero_division`` 0.0,
    1.0 or NaN.

    Examples
    --------
    >>> float(matrix_value("cohen_kappa", np.array([[4.0, 1.0], [1.0, 4.0]]), 0.0))
    0.6
    """
    return counts_value(metric, *one_vs_rest(matrix), zero_division)


def counts_value(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray,
                 zero_division: float) -> np.ndarray | float:
    """:func:`matrix_value` from the one-vs-rest counts of :func:`one_vs_rest`, without checks.

    Every metric of the module docstring depends on the matrix through the counts
    :math:`(TP_k, FP_k, FN_k, TN_k)` only (shape (..., K) each, float), so it is a function of
    them, e.g. for the delta method.

    Examples
    --------
    >>> counts = [np.array(c) for c in ([4.0, 4.0], [1.0, 1.0], [1.0, 1.0], [4.0, 4.0])]
    >>> float(counts_value("cohen_kappa", *counts, 0.0))
    0.6
    """
    if metric in CLASS_METRICS:
        return metric_value(metric, tp, fp, fn, tn, 1.0, zero_division)
    true, pred = tp + fn, tp + fp
    n = true.sum(axis=-1)
    if metric in ("accuracy", "micro_f1"):
        return _ratio(tp.sum(axis=-1), n, zero_division)[()]
    if metric == "balanced_accuracy":
        return _average(_ratio(tp, true, np.nan), np.ones_like(tp), zero_division)[()]
    if metric.startswith(("macro_", "weighted_")):
        kind, base = metric.split("_", 1)
        per_class = metric_value(base, tp, fp, fn, tn, 1.0, zero_division)
        return _average(per_class, true if kind == "weighted" else np.ones_like(tp),
                        zero_division)[()]
    chance = (true * pred).sum(axis=-1)  # s = sum_k n_k nhat_k
    agree = n * tp.sum(axis=-1) - chance  # n t - s
    if metric == "cohen_kappa":
        return _ratio(agree, n * n - chance, zero_division)[()]
    den = (n * n - (pred * pred).sum(axis=-1)) * (n * n - (true * true).sum(axis=-1))  # mcc
    out = _ratio(agree * np.abs(agree), den, zero_division)
    return np.copysign(np.sqrt(np.abs(out)), out)[()]


def from_matrix(metric: str, matrix: Any, *, zero_division: float = 0.0) -> np.ndarray | float:
    """A metric of K classes from confusion matrices, broadcast over leading (draw) axes.

    Checks its arguments; :func:`matrix_value` is the same without checks.

    Parameters
    ----------
    metric : str
        One of :data:`CLASS_METRICS` (a value per class) or :data:`MULTICLASS_METRICS`
        (definitions in the module docstring).
    matrix : array-like, shape (..., K, K)
        Confusion matrices (rows true classes, columns predictions): counts, or cell
        probabilities of a population.
    zero_division : {0.0, 1.0, np.nan}
        Value where the metric is undefined (module docstring).

    Returns
    -------
    numpy.ndarray or float
        Shape (..., K) for a per-class metric, (...) otherwise.

    Raises
    ------
    ValueError
        An unknown metric, a matrix that is not (..., K, K) with K >= 2, or negative or
        non-finite entries.

    Examples
    --------
    >>> cm = [[5, 1, 0], [2, 3, 1], [0, 0, 4]]
    >>> from_matrix("recall", cm).round(4).tolist(), round(float(from_matrix("mcc", cm)), 4)
    ([0.8333, 0.5, 1.0], 0.6347)

    Posterior draws of the matrix give draws of the metric:

    >>> draws = np.random.default_rng(0).dirichlet(np.ones(9), size=4).reshape(4, 3, 3)
    >>> from_matrix("macro_f1", draws).shape
    (4,)
    """
    metric = as_choice(metric, "metric", CLASS_METRICS + MULTICLASS_METRICS)
    zd = as_zero_division(zero_division)
    c = as_array(matrix, "matrix", ndim=None)
    if c.ndim < 2 or c.shape[-1] != c.shape[-2] or c.shape[-1] < 2:
        raise ValueError(f"matrix must have shape (..., K, K) with K >= 2 classes, got shape "
                         f"{c.shape}.")
    if (c < 0).any():
        raise ValueError("matrix must hold non-negative counts or probabilities.")
    return matrix_value(metric, c, zd)


def ovr_auc_value(labels: np.ndarray, scores: np.ndarray,
                  zero_division: float) -> np.ndarray:
    """:func:`roc_auc_ovr` per class, without checks, for codes and scores already checked.

    ``labels`` are int codes of shape (..., n), ``scores`` a float array (n, K); returns the
    one-vs-rest ROC-AUC of each class, shape (..., K) (:func:`bayeval.metrics.auc_value`).

    Examples
    --------
    >>> s = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...               [0.3, 0.3, 0.4]])
    >>> ovr_auc_value(np.array([0, 1, 2, 1, 0]), s, 0.0).round(4).tolist()
    [0.8333, 1.0, 1.0]
    """
    return np.stack([auc_value((labels == k).astype(np.int8), scores[:, k], "half",
                               zero_division) for k in range(scores.shape[1])], axis=-1)


def roc_auc_ovr(labels: Any, scores: Any, *, classes: Any = None, average: str | None = "macro",
                zero_division: float = 0.0) -> np.ndarray | float:
    r"""One-vs-rest ROC-AUC of class probabilities: per class, or their macro average.

    :math:`\mathrm{AUC}_k` is the binary ROC-AUC (:func:`bayeval.metrics.roc_auc`, ties count
    1/2) of the labels :math:`\mathbb 1\{y_i=k\}` against the scores :math:`s_{ik}`; the macro
    average is :math:`\tfrac1K\sum_k\mathrm{AUC}_k`, scikit-learn's
    ``roc_auc_score(y, s, multi_class="ovr", average="macro")``.

    Parameters
    ----------
    labels : array-like, shape (n,)
        Class labels of any hashable type.
    scores : array-like or DataFrame, shape (n, K)
        Class probabilities (:func:`bayeval.classes.as_class_scores`); a DataFrame's columns
        name the classes.
    classes : sequence, optional
        The classes of the columns, in order; by default the DataFrame's columns, else the
        sorted classes of the labels (there must be K of them).
    average : {"macro", None}
        The macro average, or one value per class.
    zero_division : {0.0, 1.0, np.nan}
        Value of a class absent from the labels, or with no other class (module docstring).

    Returns
    -------
    float or numpy.ndarray
        The macro average, or shape (K,).

    Raises
    ------
    ValueError
        Invalid scores, labels not among the classes, or K classes not known.

    Examples
    --------
    >>> s = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1], [0.3, 0.3, 0.4]]
    >>> round(float(roc_auc_ovr(["a", "b", "c", "b", "a"], s)), 4)
    0.9444
    """
    average = as_choice("none" if average is None else average, "average", ("macro", "none"))
    zd = as_zero_division(zero_division)
    s, named = as_class_scores(scores)
    if classes is None:
        classes = column_classes(labels, named, s.shape[1])
    y, _, classes = encode(labels, classes=classes)
    if len(classes) != s.shape[1]:
        raise ValueError(f"classes has {len(classes)} classes and scores {s.shape[1]} columns.")
    per_class = ovr_auc_value(y, s, zd)
    if average == "none":
        return per_class
    return _average(per_class, np.ones_like(per_class), zd)[()]
