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

* one-vs-rest ROC-AUC (:func:`ovr_auc_moments`): class :math:`k` is the binary problem of the
  raw scores :math:`s_{\cdot k}` and labels :math:`Y_{\cdot k}` (ratio :math:`A_k/D_k` of the
  Mann-Whitney count and :math:`D_k=n_{1k}n_{0k}`, exact moments in
  :func:`bayeval.confusion_moments.auc_count_moments`). Writing :math:`Y_{ik}=p_{ik}+e_{ik}`,
  each of :math:`A_k, D_k` is a linear part :math:`\sum_ie_{ik}c_{ik}` plus a quadratic one,
  :math:`-\sum_{i<j}e_{ik}e_{jk}` times 1 (:math:`A_k`, ties counted 1/2) or 2 (:math:`D_k`),
  uncorrelated with every linear part. Rows are independent and
  :math:`\operatorname{Cov}(e_{ik},e_{il})=-p_{ik}p_{il}` for :math:`k\ne l`, so with
  :math:`u_i=p_{ik}p_{il}`, :math:`U_{kl}=\sum_{i<j}u_iu_j`, the delta method on the ratios
  (:math:`R_k=\mathbb EA_k/\mathbb ED_k`, :math:`\mu_k=\mathbb ED_k`) gives

  .. math:: \operatorname{Cov}(\mathrm{AUC}_k,\mathrm{AUC}_l)\approx-\sum_iu_ih_{ik}h_{il}
            +U_{kl}\frac{(1-2R_k)(1-2R_l)}{\mu_k\mu_l},\qquad
            h_{ik}=\frac{c^A_{ik}-R_kc^D_{ik}}{\mu_k},

  :math:`h_{ik}` the first-order change of :math:`\mathrm{AUC}_k` with :math:`Y_{ik}`
  (:func:`auc_gradients`); the macro average :math:`\frac1K\sum_k\mathrm{AUC}_k` takes them
  as the other macro averages do. Its error against simulation is measured in
  ``tests/methods/cbpe/test_multiclass_auc.py``.

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
from bayeval.confusion_moments import RatioMoments, auc_count_moments, ratio_moments
from bayeval.metrics import metric_value
from bayeval.poibin import PoissonBinomial
from bayeval.validation import as_choice, as_zero_division

__all__ = ["MACRO_LAW_METRICS", "ClassCounts", "OvrAuc", "accuracy_law", "auc_covariances",
           "auc_gradients", "class_counts", "class_covariances", "macro_moments",
           "ovr_auc_moments", "ovr_auc_terms"]

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


# ---------------------------------------------------------------------------------------------
# one-vs-rest ROC-AUC


def auc_gradients(s: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The linear parts' coefficients of the Mann-Whitney count :math:`A` and of
    :math:`D=N_+N_-` of one binary problem, in the rows' order.

    :math:`c^A_i=\sum_{j\ne i}\xi_{ij}q_j-\sum_{j\ne i}\xi_{ji}p_j` with
    :math:`\xi_{ij}=\mathbb 1\{s_i>s_j\}+\frac12\mathbb 1\{s_i=s_j\}`, and
    :math:`c^D_i=\sum_{j\ne i}(1-2p_j)` (as in
    :func:`bayeval.confusion_moments.auc_count_moments`).

    Parameters
    ----------
    s : ndarray (n,)
        Scores.
    p : ndarray (n,)
        :math:`P(Y_i=1)`.

    Returns
    -------
    c_num, c_den : ndarray (n,)

    Examples
    --------
    Three rows in score order with a tie at the top:

    >>> c_num, c_den = auc_gradients(np.array([0.2, 0.7, 0.7]), np.array([0.2, 0.6, 0.8]))
    >>> c_num.round(3).tolist(), c_den.round(3).tolist()
    ([-1.4, 0.5, 0.7], [-0.8, 0.0, 0.4])
    """
    order = np.argsort(s, kind="stable")
    s_o, p_o = s[order], p[order]
    q_o = 1.0 - p_o
    first = np.flatnonzero(np.r_[True, s_o[1:] != s_o[:-1]])
    group = np.repeat(np.arange(first.size), np.diff(np.r_[first, s_o.size]))
    sum_q, sum_p = np.add.reduceat(q_o, first), np.add.reduceat(p_o, first)
    q_below = (np.cumsum(sum_q) - sum_q)[group]
    p_above = (p_o.sum() - np.cumsum(sum_p))[group]
    c_num = np.empty_like(p_o)
    c_num[order] = (q_below + 0.5 * (sum_q[group] - q_o)) - (p_above + 0.5 * (sum_p[group] - p_o))
    c_den = 2.0 * p + (float(q_o.sum()) - float(p_o.sum()) - 1.0)
    return c_num, c_den


class OvrAuc(NamedTuple):
    r"""Every class's one-vs-rest ROC-AUC terms (:func:`ovr_auc_moments`).

    Attributes
    ----------
    moments : list of RatioMoments
        Exact moments of :math:`A_k` and :math:`D_k`.
    mean, var : ndarray (K,)
        Delta-method mean (second order) and variance of :math:`\mathrm{AUC}_k`
        (:func:`bayeval.confusion_moments.ratio_moments`; NaN where :math:`\mathbb ED_k=0`).
    gradient : ndarray (n, K)
        :math:`h_{ik}` (module docstring; 0 where :math:`\mathbb ED_k=0`).
    cov : ndarray (K, K)
        :math:`\operatorname{Cov}(\mathrm{AUC}_k,\mathrm{AUC}_l)` off the diagonal, the
        variances on it (0 for an undefined class).

    Examples
    --------
    >>> o = ovr_auc_moments(np.array([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]]),
    ...                     np.array([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]]))
    >>> o.gradient.shape, o.cov.shape
    ((3, 2), (2, 2))
    """

    moments: list[RatioMoments]
    mean: np.ndarray
    var: np.ndarray
    gradient: np.ndarray
    cov: np.ndarray


def auc_covariances(p: np.ndarray, gradient: np.ndarray, ratio: np.ndarray,
                    mean_den: np.ndarray) -> np.ndarray:
    r""":math:`\operatorname{Cov}(\mathrm{AUC}_k,\mathrm{AUC}_l)`, :math:`k\ne l`, by the delta
    method (module docstring); the diagonal is 0.

    Parameters
    ----------
    p : ndarray (n, K)
        Class probabilities of the rows.
    gradient : ndarray (n, K)
        :math:`h_{ik}`.
    ratio, mean_den : ndarray (K,)
        :math:`R_k` and :math:`\mu_k=\mathbb ED_k` (classes with :math:`\mu_k=0` get 0).

    Returns
    -------
    ndarray (K, K)

    Examples
    --------
    Two classes: :math:`\mathrm{AUC}_1` of :math:`s_{\cdot1}=1-s_{\cdot0}` and labels
    :math:`1-Y_{\cdot0}` equals :math:`\mathrm{AUC}_0`, so their covariance is the variance:

    >>> s = np.array([[0.9, 0.1], [0.6, 0.4], [0.35, 0.65], [0.2, 0.8], [0.7, 0.3]])
    >>> o = ovr_auc_moments(s, s)
    >>> bool(np.isclose(o.cov[0, 1], o.var[0], rtol=1e-3)), bool(np.isclose(*o.var))
    (True, True)
    """
    k = p.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = np.where(mean_den > 0, (1.0 - 2.0 * ratio) / mean_den, 0.0)
    out = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            u = p[:, a] * p[:, b]
            pairs = (u.sum() ** 2 - u @ u) / 2
            out[a, b] = out[b, a] = (-(u * gradient[:, a]) @ gradient[:, b]
                                     + pairs * quad[a] * quad[b])
    return out


def ovr_auc_moments(scores: Any, p: Any) -> OvrAuc:
    r"""Moments of every class's one-vs-rest ROC-AUC and their covariances, when the labels
    are independent :math:`\mathrm{Cat}(p_i)` and the raw scores rank the rows (module
    docstring).

    Parameters
    ----------
    scores : array-like or DataFrame (n, K)
        Raw class probabilities: column :math:`k` ranks the rows for class :math:`k`.
    p : array-like or DataFrame (n, K)
        Class probabilities of the rows' labels.

    Returns
    -------
    OvrAuc

    Raises
    ------
    ValueError
        For scores or p that are not (n, K) class probabilities of one shape.

    Examples
    --------
    The macro average's mean and sd, :math:`\frac1K\sum_k\mathbb E\,\mathrm{AUC}_k` and
    :math:`\frac1K\sqrt{\sum_{k,l}\operatorname{Cov}_{kl}}`:

    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1, 1], 500)
    >>> o = ovr_auc_moments(p, p)
    >>> round(float(o.mean.mean()), 3), round(float(np.sqrt(o.cov.sum()) / 3), 4)
    (0.801, 0.014)
    """
    s, _ = as_class_scores(scores, "scores")
    q, _ = as_class_scores(p, "p")
    if s.shape != q.shape:
        raise ValueError(f"scores have shape {s.shape} and p {q.shape}; both need (n, K).")
    return ovr_auc_terms(s, q)


def ovr_auc_terms(s: np.ndarray, p: np.ndarray) -> OvrAuc:
    """:func:`ovr_auc_moments` without its checks, for (n, K) arrays already validated; a
    class whose ROC-AUC is undefined in every labelling has NaN moments and no covariance.

    Examples
    --------
    >>> p = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])  # class 2 never occurs
    >>> o = ovr_auc_terms(p, p)
    >>> o.mean.round(4).tolist()[2], o.cov[2].tolist()
    (nan, [0.0, 0.0, 0.0])
    """
    n, k = p.shape
    moments, mean, var = [], np.full(k, np.nan), np.full(k, np.nan)
    gradient, ratio, mean_den = np.zeros((n, k)), np.zeros(k), np.zeros(k)
    for c in range(k):
        m = auc_count_moments(s[:, c], p[:, c], 0.5)
        moments.append(m)
        if m.mean_den <= 0:
            continue
        mean[c], var[c] = ratio_moments(m)
        ratio[c], mean_den[c] = m.mean_num / m.mean_den, m.mean_den
        c_num, c_den = auc_gradients(s[:, c], p[:, c])
        gradient[:, c] = (c_num - ratio[c] * c_den) / m.mean_den
    cov = auc_covariances(p, gradient, ratio, mean_den)
    cov[np.diag_indices(k)] = np.nan_to_num(var)
    return OvrAuc(moments, mean, var, gradient, cov)
