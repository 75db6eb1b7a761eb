r"""Confusion-matrix metrics and ROC-AUC, vectorised over leading (draw) dimensions.

Definitions and ``zero_division`` follow scikit-learn. Every ratio is computed as one division
:math:`\mathrm{num}/\mathrm{den}` of integers, exact while they stay below :math:`2^{53}` (counts up
to about :math:`10^4` for ``mcc``, whose terms are of degree 4, and far beyond for the others), so
equal rationals such as 1/3 and 2/6 give bitwise equal doubles and PMF supports merge correctly.

* ``accuracy`` :math:`(TP+TN)/(TP+FP+FN+TN)`, undefined with no rows;
* ``precision`` :math:`TP/(TP+FP)`; ``recall`` :math:`TP/(TP+FN)`;
* ``specificity`` :math:`TN/(TN+FP)`; ``npv`` :math:`TN/(TN+FN)`;
* ``f1`` :math:`2TP/(2TP+FP+FN)`; ``fbeta`` :math:`(1+\beta^2)TP/((1+\beta^2)TP+\beta^2FN+FP)`;
* ``balanced_accuracy`` the mean of recall and specificity over the classes present, undefined
  with no rows;
* ``mcc`` :math:`(TP\,TN-FP\,FN)/\sqrt{(TP+FP)(TP+FN)(TN+FP)(TN+FN)}`, computed as
  :math:`\operatorname{sign}(c)\sqrt{c^2/d}` so that it too is one division.

The others are undefined where their denominator is 0. Where a metric is undefined it takes the
value ``zero_division`` (0.0, 1.0 or NaN); the default 0.0 is also what scikit-learn's
``matthews_corrcoef`` returns there. ``balanced_accuracy`` with one class absent is the recall of
the other class (scikit-learn drops the undefined class recall with a warning).

:data:`REGISTRY` lists every metric bayeval knows (these, ``roc_auc``, and the averages, Cohen's
kappa and ROC-AUC of K classes of :mod:`bayeval.multiclass`) with its definition and range; the
lists of names (:data:`METRICS`, :data:`BINARY_METRICS`, :data:`PROPORTIONS`) are read from it. The
public functions check their arguments; each has a twin without checks for arguments already
checked: :func:`metric_value`, :func:`is_undefined`, :func:`counts_of`, :func:`auc_value`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from bayeval.validation import as_array, as_beta, as_binary, as_choice, as_counts, as_zero_division

__all__ = [
    "BINARY_METRICS",
    "METRICS",
    "PROPORTIONS",
    "REGISTRY",
    "Metric",
    "auc_value",
    "confusion_counts",
    "counts_of",
    "from_counts",
    "is_undefined",
    "metric_value",
    "roc_auc",
    "undefined",
]


@dataclass(frozen=True)
class Metric:
    r"""One metric of the registry: its name, definition and range.

    Attributes
    ----------
    name : str
        The name used in arguments, summaries and plots.
    definition : str
        The formula, in LaTeX (as in the module docstring).
    low, high : float
        The range of its values.
    count_ratio : bool
        A ratio of the confusion counts of two classes, computed by :func:`from_counts`.
    ranking : bool
        A metric of how the scores rank the rows (ROC-AUC, :func:`roc_auc`).
    proportion : bool
        Successes over trials of the rows: a binomial proportion (its numerator counts rows of
        its denominator), so labelled data give it a Beta posterior.
    one_count : bool
        Given the predictions, a function of one count (TP, FN, or the correct predictions):
        its denominator is fixed by them.
    multiclass : bool
        Also defined for more than two classes (accuracy; macro F1 is defined for any number).
    classes : {"two", "per_class", "overall"}
        With K > 2 classes (:mod:`bayeval.multiclass`): not defined (``"two"``), one value per
        class, one-vs-rest, on a ``class`` dimension (``"per_class"``), or one value of the
        K x K confusion matrix or of the K columns of scores (``"overall"``).

    Examples
    --------
    >>> REGISTRY["mcc"].low, REGISTRY["recall"].proportion, REGISTRY["roc_auc"].count_ratio
    (-1.0, True, False)
    >>> REGISTRY["recall"].classes, REGISTRY["macro_recall"].classes
    ('per_class', 'overall')
    """

    name: str
    definition: str
    low: float = 0.0
    high: float = 1.0
    count_ratio: bool = True
    ranking: bool = False
    proportion: bool = False
    one_count: bool = False
    multiclass: bool = False
    classes: str = "two"


REGISTRY: dict[str, Metric] = {m.name: m for m in (
    Metric("accuracy", r"(TP+TN)/(TP+FP+FN+TN)", proportion=True, one_count=True,
           multiclass=True, classes="overall"),
    Metric("precision", r"TP/(TP+FP)", proportion=True, one_count=True, classes="per_class"),
    Metric("recall", r"TP/(TP+FN)", proportion=True, classes="per_class"),
    Metric("specificity", r"TN/(TN+FP)", proportion=True, classes="per_class"),
    Metric("npv", r"TN/(TN+FN)", proportion=True, one_count=True),
    Metric("f1", r"2TP/(2TP+FP+FN)", classes="per_class"),
    Metric("fbeta", r"(1+\beta^2)TP/((1+\beta^2)TP+\beta^2FN+FP)"),
    Metric("balanced_accuracy", r"\tfrac12\,(TP/(TP+FN)+TN/(TN+FP))", classes="overall"),
    Metric("mcc", r"(TP\,TN-FP\,FN)/\sqrt{(TP+FP)(TP+FN)(TN+FP)(TN+FN)}", low=-1.0,
           classes="overall"),
    Metric("roc_auc", r"P(S_+>S_-)+\tfrac12P(S_+=S_-)", count_ratio=False, ranking=True,
           classes="per_class"),
    Metric("macro_f1", r"\tfrac1K\sum_k F_1^{(k)}", count_ratio=False, multiclass=True,
           classes="overall"),
    Metric("macro_precision", r"\tfrac1K\sum_k TP_k/(TP_k+FP_k)", count_ratio=False,
           classes="overall"),
    Metric("macro_recall", r"\tfrac1K\sum_k TP_k/(TP_k+FN_k)", count_ratio=False,
           classes="overall"),
    Metric("macro_specificity", r"\tfrac1K\sum_k TN_k/(TN_k+FP_k)", count_ratio=False,
           classes="overall"),
    Metric("weighted_precision", r"\sum_k \tfrac{n_k}{n}\,TP_k/(TP_k+FP_k)", count_ratio=False,
           classes="overall"),
    Metric("weighted_recall", r"\sum_k \tfrac{n_k}{n}\,TP_k/(TP_k+FN_k)", count_ratio=False,
           classes="overall"),
    Metric("weighted_f1", r"\sum_k \tfrac{n_k}{n}\,F_1^{(k)}", count_ratio=False,
           classes="overall"),
    Metric("micro_f1", r"\sum_k TP_k/n", count_ratio=False, classes="overall"),
    Metric("cohen_kappa", r"(n\sum_k C_{kk}-\sum_k n_k\hat n_k)/(n^2-\sum_k n_k\hat n_k)",
           low=-1.0, count_ratio=False, classes="overall"),
    Metric("macro_roc_auc", r"\tfrac1K\sum_k \mathrm{AUC}_k", count_ratio=False, ranking=True,
           classes="overall"),
)}
"""Every metric bayeval knows, by name."""

METRICS = tuple(name for name, m in REGISTRY.items() if m.count_ratio)
"""The confusion-matrix metrics of two classes (:func:`from_counts`)."""

BINARY_METRICS = tuple(name for name, m in REGISTRY.items()
                       if m.count_ratio or (m.ranking and m.classes != "overall"))
"""The metrics of a binary classifier's predictions and scores: :data:`METRICS` and ``roc_auc``."""

PROPORTIONS = tuple(name for name, m in REGISTRY.items() if m.proportion)
"""The metrics that are binomial proportions of the rows."""


def _beta2(beta: Any) -> tuple[float, float]:
    """beta^2 as (m, d) with beta^2 = m/d, small integers when beta^2 is a short rational."""
    b2 = float(beta) ** 2
    if np.isinf(b2):
        return b2, 1.0
    frac = Fraction(b2).limit_denominator(1000)
    if abs(float(frac) - b2) <= 4 * np.finfo(float).eps * b2:
        return float(frac.numerator), float(frac.denominator)
    return b2, 1.0


def _ratio(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray,
           beta: Any) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) with value = num / den wherever den > 0 (mcc: num^2 / den)."""
    if metric == "accuracy":
        return tp + tn, tp + fp + fn + tn
    if metric == "precision":
        return tp, tp + fp
    if metric == "recall":
        return tp, tp + fn
    if metric == "specificity":
        return tn, tn + fp
    if metric == "npv":
        return tn, tn + fn
    if metric == "f1":
        return 2 * tp, 2 * tp + fp + fn
    if metric == "fbeta":
        m, d = _beta2(beta)
        if np.isinf(m):  # beta = inf: recall
            return tp, tp + fn
        return (m + d) * tp, (m + d) * tp + m * fn + d * fp
    if metric == "balanced_accuracy":
        pos, neg = tp + fn, tn + fp
        num = np.where(pos == 0, tn, np.where(neg == 0, tp, tp * neg + tn * pos))
        den = np.where(pos == 0, neg, np.where(neg == 0, pos, 2 * pos * neg))
        return num, den
    num = tp * tn - fp * fn  # mcc
    return num * np.abs(num), (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)


def from_counts(metric: str, tp: Any, fp: Any, fn: Any, tn: Any, *, beta: float = 1.0,
                zero_division: float = 0.0) -> np.ndarray | float:
    """A confusion-matrix metric from counts, broadcast over any leading dimensions.

    Checks its arguments; :func:`metric_value` is the same without checks.

    Parameters
    ----------
    metric : str
        One of :data:`METRICS` (formulas in the module docstring).
    tp, fp, fn, tn : array-like
        Non-negative counts (integers, or expected counts), broadcastable to one shape.
    beta : float
        Weight of recall in ``fbeta`` (>= 0; 0 gives precision, ``np.inf`` recall).
    zero_division : {0.0, 1.0, np.nan}
        Value where the metric is undefined (see :func:`undefined`).

    Returns
    -------
    numpy.ndarray or float
        The metric, shape of the broadcast counts.

    Examples
    --------
    >>> from_counts("f1", [3, 0], [1, 0], [2, 0], [4, 5])
    array([0.66666667, 0.        ])
    """
    metric = as_choice(metric, "metric", METRICS)
    zd = as_zero_division(zero_division)
    return metric_value(metric, *as_counts(tp, fp, fn, tn), as_beta(beta), zd)


def metric_value(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray,
                 beta: float, zero_division: float) -> np.ndarray | float:
    """:func:`from_counts` without its checks, for arguments already checked.

    ``metric`` must be one of :data:`METRICS`, the counts numpy arrays (or floats) of one
    broadcast shape, ``beta`` a number >= 0 and ``zero_division`` 0.0, 1.0 or NaN.

    Examples
    --------
    >>> metric_value("recall", np.array([3.0]), 1.0, np.array([1.0]), 5.0, 1.0, np.nan)
    array([0.75])
    """
    num, den = _ratio(metric, tp, fp, fn, tn, beta)
    out = np.full(np.broadcast_shapes(np.shape(num), np.shape(den)), zero_division)
    np.divide(num, den, out=out, where=den > 0)
    if metric == "mcc":
        np.copysign(np.sqrt(np.abs(out)), out, out=out)
    return out[()]


def undefined(metric: str, tp: Any, fp: Any, fn: Any, tn: Any, *,
              beta: float = 1.0) -> np.ndarray | bool:
    """Where ``metric`` is undefined (its denominator is 0), broadcast like :func:`from_counts`.

    ``metric`` may also be ``"roc_auc"``, undefined where one class is absent
    (TP + FN = 0 or FP + TN = 0). :func:`from_counts` and :func:`roc_auc` return
    ``zero_division`` exactly at these cells.

    Parameters
    ----------
    metric : str
        One of :data:`METRICS` or ``"roc_auc"``.
    tp, fp, fn, tn : array-like
        Non-negative counts, broadcastable to one shape.
    beta : float
        Weight of recall in ``fbeta``.

    Returns
    -------
    numpy.ndarray or bool
        True where the metric's denominator is 0.

    Examples
    --------
    Precision :math:`TP/(TP+FP)` is undefined when nothing is predicted positive:

    >>> undefined("precision", [3, 0], [1, 0], [2, 4], [4, 5])
    array([False,  True])
    >>> from_counts("precision", [3, 0], [1, 0], [2, 4], [4, 5])
    array([0.75, 0.  ])
    """
    metric = as_choice(metric, "metric", BINARY_METRICS)
    return is_undefined(metric, *as_counts(tp, fp, fn, tn), as_beta(beta))


def is_undefined(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray,
                 beta: float = 1.0) -> np.ndarray | bool:
    """:func:`undefined` without its checks, for arguments already checked.

    ``metric`` must be one of :data:`BINARY_METRICS`, the counts numpy arrays (or floats) of
    one broadcast shape, ``beta`` a number >= 0.

    Examples
    --------
    >>> is_undefined("roc_auc", np.array([0, 2]), 1.0, np.array([0, 1]), 3.0)
    array([ True, False])
    """
    if metric == "roc_auc":
        return np.asarray((tp + fn == 0) | (fp + tn == 0))[()]
    return np.asarray(_ratio(metric, tp, fp, fn, tn, beta)[1] == 0)[()]


def confusion_counts(labels: Any, y_pred: Any) -> tuple[np.ndarray, ...]:
    r"""(tp, fp, fn, tn) of binary ``labels`` against binary ``y_pred``, one matrix per draw.

    :math:`TP=\sum_i y_i\hat y_i`, :math:`FP=\sum_i(1-y_i)\hat y_i`,
    :math:`FN=\sum_i y_i(1-\hat y_i)`, :math:`TN=\sum_i(1-y_i)(1-\hat y_i)`.

    Parameters
    ----------
    labels : array-like, shape (n,) or (..., n)
        Binary labels; leading dimensions are draws.
    y_pred : array-like, shape (n,) or broadcasting with ``labels``
        Binary predictions, shared by all draws when 1-D.

    Returns
    -------
    tp, fp, fn, tn : numpy.ndarray
        int64 counts of the broadcast leading shape (0-d for one label vector).

    Raises
    ------
    ValueError
        If the inputs are not binary or their last dimensions differ.

    Examples
    --------
    >>> tp, fp, fn, tn = confusion_counts([1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 1, 0])
    >>> int(tp), int(fp), int(fn), int(tn)
    (2, 1, 1, 2)

    Two draws of the labels against one prediction vector:

    >>> confusion_counts([[1, 0, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0]], [1, 0, 0, 1, 1, 0])
    (array([2, 2]), array([1, 1]), array([1, 2]), array([2, 1]))
    """
    y = as_binary(labels, "labels", ndim=None)
    yp = as_binary(y_pred, "y_pred", ndim=None)
    try:
        if y.ndim == 0 or yp.ndim == 0 or y.shape[-1] != yp.shape[-1]:
            raise ValueError
        np.broadcast_shapes(y.shape, yp.shape)
    except ValueError:
        raise ValueError(f"labels (shape {y.shape}) and y_pred (shape {yp.shape}) must have "
                         "shapes (..., n) that broadcast, n rows each.") from None
    return counts_of(y, yp)


def counts_of(labels: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`confusion_counts` without its checks, for arrays already checked.

    ``labels`` and ``y_pred`` must be numpy arrays of 0 and 1 (any integer or boolean dtype)
    of shapes (..., n) that broadcast.

    Examples
    --------
    >>> [int(c) for c in counts_of(np.array([1, 0, 1]), np.array([1, 1, 0]))]
    [1, 1, 1, 0]
    """
    y, yp = labels.astype(np.int64, copy=False), y_pred.astype(np.int64, copy=False)
    tp = y @ yp if yp.ndim == 1 else (y * yp).sum(axis=-1)
    pos, pred = y.sum(axis=-1), yp.sum(axis=-1)
    fn, fp = pos - tp, pred - tp
    return tp, fp, fn, y.shape[-1] - pos - fp


def roc_auc(labels: Any, scores: Any, *, ties: str = "half",
            zero_division: float = 0.0) -> np.ndarray | float:
    r"""ROC-AUC as the Mann–Whitney statistic, for one label vector or a batch of draws.

    .. math:: \mathrm{AUC}=\frac{1}{N_+N_-}\sum_{i:y_i=1}\sum_{j:y_j=0}
              \big(\mathbb 1\{s_i>s_j\}+w\,\mathbb 1\{s_i=s_j\}\big),

    with :math:`w=1/2` for ``ties="half"`` (scikit-learn's ``roc_auc_score``) and :math:`w=1` for
    ``ties="one"`` (the PEMI paper's :math:`\mathbb 1\{\hat y_i\ge\hat y_j\}`). The scores are
    sorted once; each draw then costs :math:`O(n)`.

    Parameters
    ----------
    labels : array-like, shape (n,) or (..., n)
        Binary labels; leading dimensions are draws.
    scores : array-like, shape (n,)
        Scores shared by all draws.
    ties : {"half", "one"}
        Weight of a tied positive-negative pair.
    zero_division : {0.0, 1.0, np.nan}
        Value for draws with one class absent (``undefined("roc_auc", ...)`` marks them). A single
        label vector with one class raises ``ValueError`` instead, like scikit-learn.

    Returns
    -------
    numpy.ndarray or float
        The AUC of each draw, of the leading shape of ``labels``.

    Raises
    ------
    ValueError
        If the shapes do not match, or one label vector holds a single class.

    Examples
    --------
    >>> labels, scores = [1, 0, 1, 1, 0, 0], [0.9, 0.2, 0.4, 0.8, 0.4, 0.1]
    >>> round(float(roc_auc(labels, scores)), 4)  # 8.5 of 9 pairs: one tie counts 1/2
    0.9444
    >>> float(roc_auc(labels, scores, ties="one"))
    1.0
    >>> roc_auc([labels, [1] * 6], scores)  # the second draw has no negatives
    array([0.94444444, 0.        ])
    """
    ties = as_choice(ties, "ties", ("half", "one"))
    zd = as_zero_division(zero_division)
    s = as_array(scores, "scores")
    y = as_binary(labels, "labels", ndim=None)
    if y.ndim == 0 or y.shape[-1] != s.size:
        raise ValueError(f"labels must have shape (..., n) with n = len(scores) = {s.size}; "
                         f"got shape {y.shape}.")
    if y.ndim == 1 and (y.min() == y.max()):
        raise ValueError(f"labels hold only class {int(y[0])}; ROC-AUC needs both classes "
                         "(0 and 1).")
    return auc_value(y, s, ties, zd)


def auc_value(labels: np.ndarray, scores: np.ndarray, ties: str = "half",
              zero_division: float = 0.0) -> np.ndarray | float:
    """:func:`roc_auc` without its checks, for arrays already checked.

    ``labels`` must be a numpy array of 0 and 1 of shape (..., n), ``scores`` a finite float
    array of shape (n,), ``ties`` "half" or "one"; every draw with one class, a single label
    vector included, gives ``zero_division``.

    Examples
    --------
    >>> auc_value(np.array([[1, 0, 1], [1, 1, 1]]), np.array([0.9, 0.2, 0.4]))
    array([1., 0.])
    """
    s, y = scores, labels
    # the order within a tie group does not matter; sorted scores need no sort
    order = slice(None) if (s[1:] >= s[:-1]).all() else np.argsort(s)
    starts = np.flatnonzero(np.r_[True, np.diff(s[order]) != 0])
    size = np.diff(np.r_[starts, s.size])
    pos = np.add.reduceat(y[..., order].astype(np.int64), starts, axis=-1)  # positives per tie
    neg = size - pos
    below = np.cumsum(neg, axis=-1) - neg  # negatives with a strictly smaller score
    npos, nneg = pos.sum(axis=-1), neg.sum(axis=-1)
    if ties == "half":
        num, den = (pos * (2 * below + neg)).sum(axis=-1), 2 * npos * nneg
    else:
        num, den = (pos * (below + neg)).sum(axis=-1), npos * nneg
    out = np.full(np.shape(num), zero_division)
    np.divide(num, den, out=out, where=den > 0)
    return out[()]
