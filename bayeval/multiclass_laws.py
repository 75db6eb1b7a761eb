r"""Laws of the metrics of K classes when the labels are unknown but their probabilities known.

Each row's label is an independent categorical :math:`Y_i\sim\mathrm{Cat}(p_{i1},\dots,p_{iK})`
(calibrated class probabilities, the situation of CBPE) and the predictions :math:`\hat y_i` are
fixed. With :math:`Y_{ik}=\mathbb 1\{Y_i=k\}` and :math:`\hat n_k=\#\{i:\hat y_i=k\}`:

* the number of correct predictions :math:`\sum_i Y_{i\hat y_i}` is Poisson-binomial with
  probabilities :math:`p_{i\hat y_i}`, so accuracy's law is exact (:func:`accuracy_law`);
* class :math:`k` against the rest: :math:`TP_k=\sum_{\hat y_i=k}Y_{ik}` and
  :math:`FN_k=\sum_{\hat y_i\ne k}Y_{ik}` are independent Poisson-binomials (disjoint rows),
  :math:`FP_k=\hat n_k-TP_k`, :math:`TN_k=n-\hat n_k-FN_k` (:func:`class_counts`); so each
  per-class metric has the exact law of a binary metric with scores :math:`p_{ik}` and
  predictions :math:`\mathbb 1\{\hat y_i=k\}` (:func:`bayeval.confusion.metric_distribution`);
* a macro average :math:`\frac1K\sum_k m_k` (:func:`macro_moments`) has the exact mean
  :math:`\frac1K\sum_k\mathbb E m_k` and the variance
  :math:`\frac1{K^2}\big(\sum_k\operatorname{Var}m_k+\sum_{k\ne l}\operatorname{Cov}(m_k,m_l)\big)`
  with exact per-class variances. The classes are dependent only through rows (a row is of one
  class): :math:`\operatorname{Cov}(Y_{ik},Y_{il})=-p_{ik}p_{il}`, so

  .. math:: \operatorname{Cov}(TP_k,TP_l)=0,\quad
            \operatorname{Cov}(TP_k,FN_l)=-\sum_{\hat y_i=k}p_{ik}p_{il},\quad
            \operatorname{Cov}(FN_k,FN_l)=-\sum_{\hat y_i\notin\{k,l\}}p_{ik}p_{il},

  and :math:`\operatorname{Cov}(m_k,m_l)\approx g_k^\top\Sigma_{kl}g_l` by the delta method,
  :math:`g_k` the gradient of :math:`m_k` in :math:`(TP_k,FN_k)` at their means. Macro
  precision :math:`\frac1K\sum_k TP_k/\hat n_k` depends on the :math:`TP_k` alone, which are
  independent: its moments are exact. For recall, F1 and specificity the covariances are the
  approximation, and a normal law with these moments the approximate law; its error against
  simulation is measured in ``tests/test_multiclass_laws.py`` (mean exact to Monte-Carlo error,
  sd within 3 % at n = 300, K = 4).

References
----------
Kivimäki et al. (2025), "Performance estimation in binary classification using calibrated
confidence", arXiv:2505.05295 (the exact laws of the counts in the binary case).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from bayeval.classes import as_class_scores, column_classes, encode
from bayeval.confusion import label_rows, metric_law
from bayeval.metrics import metric_value
from bayeval.poibin import PoissonBinomial
from bayeval.validation import as_choice, as_zero_division

__all__ = ["MACRO_LAW_METRICS", "ClassCounts", "accuracy_law", "class_counts", "class_covariances",
           "macro_moments"]

MACRO_LAW_METRICS = ("macro_precision", "macro_recall", "macro_f1", "macro_specificity")
"""The macro averages with moments in :func:`macro_moments`."""


class ClassCounts(NamedTuple):
    r"""The one-vs-rest counts of every class: :math:`TP_k` and :math:`FN_k` laws and
    :math:`\hat n_k` (:func:`class_counts`).

    Examples
    --------
    >>> c = class_counts([[0.9, 0.1], [0.2, 0.8]], [0, 1])
    >>> round(c.tp[0].mean(), 2), round(c.fn[0].mean(), 2), c.predicted.tolist()
    (0.9, 0.2, [1, 1])
    """

    tp: list[PoissonBinomial]
    fn: list[PoissonBinomial]
    predicted: np.ndarray


def _inputs(p: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """(n, K) probabilities and the predictions' codes on their columns."""
    s, named = as_class_scores(p, "p")
    classes = column_classes(y_pred, named, s.shape[1], names=("y_pred", "p"))
    yp, _, _ = encode(y_pred, classes=classes, names=("y_pred", ""))
    if yp.size != s.shape[0]:
        raise ValueError(f"y_pred has {yp.size} rows and p {s.shape[0]}; one per row is needed.")
    return s, yp


def accuracy_law(p: Any, y_pred: Any) -> PoissonBinomial:
    r"""Exact law of the number of correct predictions: :math:`\mathrm{PB}(p_{i\hat y_i})`.

    Accuracy is this count over :math:`n`.

    Parameters
    ----------
    p : array-like or DataFrame (n, K)
        Class probabilities of the rows (a DataFrame's columns name the classes).
    y_pred : array-like (n,)
        Predicted classes: the columns' classes, or their positions 0..K-1.

    Returns
    -------
    PoissonBinomial

    Examples
    --------
    >>> law = accuracy_law([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]], [0, 2])
    >>> law.pmf().round(2).tolist()  # P(correct) 0.7 and 0.3
    [0.21, 0.58, 0.21]
    """
    s, yp = _inputs(p, y_pred)
    return PoissonBinomial(s[np.arange(yp.size), yp])


def class_counts(p: Any, y_pred: Any) -> ClassCounts:
    r"""Exact laws of :math:`TP_k` and :math:`FN_k` of every class (module docstring).

    Parameters
    ----------
    p : array-like or DataFrame (n, K)
        Class probabilities.
    y_pred : array-like (n,)
        Predicted classes.

    Returns
    -------
    ClassCounts
        ``tp[k]`` :math:`=\mathrm{PB}(\{p_{ik}\}_{\hat y_i=k})`, ``fn[k]``
        :math:`=\mathrm{PB}(\{p_{ik}\}_{\hat y_i\ne k})`, ``predicted`` :math:`\hat n_k`;
        :math:`FP_k=\hat n_k-TP_k`, :math:`TN_k=n-\hat n_k-FN_k`.

    Examples
    --------
    >>> c = class_counts([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]], [0, 1, 0])
    >>> c.tp[0].pmf().round(2).tolist(), c.fn[0].pmf().tolist(), c.predicted.tolist()
    ([0.15, 0.5, 0.35], [0.6, 0.4], [2, 1])
    """
    s, yp = _inputs(p, y_pred)
    k = s.shape[1]
    return ClassCounts([PoissonBinomial(s[yp == c, c]) for c in range(k)],
                       [PoissonBinomial(s[yp != c, c]) for c in range(k)],
                       np.bincount(yp, minlength=k))


def _gradients(base: str, tp: np.ndarray, fn: np.ndarray, predicted: np.ndarray,
               n: int) -> np.ndarray:
    """d m_k / d(TP_k, FN_k) at the means, by central differences, shape (K, 2)."""
    def value(t, f):
        return metric_value(base, t, predicted - t, f, n - predicted - f, 1.0, np.nan)

    h = 1e-4 * np.maximum(1.0, tp + fn)
    return np.stack([(value(tp + h, fn) - value(tp - h, fn)) / (2 * h),
                     (value(tp, fn + h) - value(tp, fn - h)) / (2 * h)], axis=-1)


def macro_moments(metric: str, p: Any, y_pred: Any, *,
                  zero_division: float = 0.0) -> tuple[float, float]:
    r"""Mean and variance of a macro average when the labels are unknown (module docstring).

    Parameters
    ----------
    metric : str
        One of :data:`MACRO_LAW_METRICS`.
    p : array-like or DataFrame (n, K)
        Class probabilities.
    y_pred : array-like (n,)
        Predicted classes.
    zero_division : {0.0, 1.0, np.nan}
        A class's value where its metric is undefined; with NaN each class's law is conditioned
        on being defined (:func:`bayeval.confusion.metric_distribution`).

    Returns
    -------
    mean, variance : float
        The mean is exact; the variance is exact for ``macro_precision`` and adds the
        delta-method covariances of the classes for the others.

    Examples
    --------
    >>> p = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.5, 0.3, 0.2]]
    >>> [round(v, 4) for v in macro_moments("macro_precision", p, [0, 1, 2, 0])]
    [0.6, 0.0661]
    """
    metric = as_choice(metric, "metric", MACRO_LAW_METRICS)
    zd = as_zero_division(zero_division)
    s, yp = _inputs(p, y_pred)
    k = s.shape[1]
    base = metric.removeprefix("macro_")
    laws = [metric_law(base, label_rows((yp == c).astype(np.int8), s[:, c], None), 1.0, zd)
            for c in range(k)]
    mean = float(np.mean([law.mean for law in laws]))
    var = float(np.sum([law.sd**2 for law in laws])) + float(class_covariances(base, s, yp).sum())
    return mean, var / k**2


def class_covariances(metric: str, p: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    r"""Delta-method covariances :math:`\operatorname{Cov}(m_k,m_l)`, :math:`k\ne l`, of a
    per-class metric (module docstring); the diagonal is 0.

    Parameters
    ----------
    metric : {"precision", "recall", "f1", "specificity"}
    p : ndarray (n, K)
        Class probabilities (validated).
    y_pred : ndarray (n,)
        Codes 0..K-1 of the predicted classes.

    Returns
    -------
    ndarray (K, K)

    Examples
    --------
    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.5, 0.3, 0.2]])
    >>> cov = class_covariances("recall", p, np.array([0, 1, 2, 0]))
    >>> bool(np.allclose(cov, cov.T)), float(np.trace(cov))
    (True, 0.0)
    """
    n, k = p.shape
    predicted = np.bincount(y_pred, minlength=k).astype(float)
    own = p[np.arange(n), y_pred]
    tp = np.bincount(y_pred, weights=own, minlength=k)
    fn = p.sum(axis=0) - tp
    g = np.nan_to_num(_gradients(metric, tp, fn, predicted, n))
    by_pred = np.stack([p[y_pred == j].T @ p[y_pred == j] for j in range(k)])  # M_j[k, l]
    total = by_pred.sum(axis=0)
    out = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            if a != b:
                mine, other = by_pred[a, a, b], by_pred[b, a, b]
                cov = -np.array([[0.0, mine], [other, total[a, b] - mine - other]])
                out[a, b] = g[a] @ cov @ g[b]
    return out
