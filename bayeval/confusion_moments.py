r"""Metrics of a binary classifier when its labels are uncertain: their moments.

With the notation of :mod:`bayeval.confusion` (:math:`TP=TP_K+U`, :math:`FN=FN_K+V`, :math:`U`
and :math:`V` independent Poisson-binomials over the unknown labels):

* :func:`metric_moments`: PEMI-Gauss mean and variance of a confusion-matrix metric, exact for
  the linear metrics, second-order delta method for the others (Dervovic & Cashmore 2025);
  :func:`count_moments` the same from the moments of :math:`TP` and :math:`FN`;
* :func:`auc_numerator_moments`, :func:`auc_moments`: exact moments of the Mann–Whitney count and
  of :math:`N_+N_-` in :math:`O(n\log n)`, and the delta-method ROC-AUC moments
  (:func:`ratio_moments`).

The public functions check their arguments; :func:`moments_of_rows`, :func:`moments_of_counts` and
:func:`auc_count_moments` are their twins without checks, for arguments already checked.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from bayeval.confusion import LabelRows, label_rows
from bayeval.metrics import METRICS
from bayeval.validation import (
    as_array,
    as_beta,
    as_choice,
    as_labels,
    as_probabilities,
    as_zero_division,
    check_same_length,
)

__all__ = [
    "RatioMoments",
    "auc_count_moments",
    "auc_count_moments_rows",
    "auc_moments",
    "auc_numerator_moments",
    "count_moments",
    "metric_moments",
    "moments_of_counts",
    "moments_of_rows",
    "ratio_moments",
]


class _Affine(NamedTuple):
    """c0 + ct * TP + cf * FN."""

    c0: float
    ct: float
    cf: float


def _ratio_terms(metric: str, n_pos: int, n_neg: int, beta: float,
                 mean_tp: float, mean_fn: float) -> list[tuple[float, _Affine, _Affine]]:
    r"""The metric as :math:`\sum_k a_k Z_k/W_k` with :math:`Z_k, W_k` affine in (TP, FN).

    These are the definitions of :mod:`bayeval.metrics` with FP = N_pp - TP, TN = N_pn - FN.
    Balanced accuracy with one true class absent (its expected count is 0, so it is absent
    almost surely) is the recall of the other class, as in :func:`bayeval.metrics.from_counts`.
    """
    n = n_pos + n_neg
    recall = (1.0, _Affine(0, 1, 0), _Affine(0, 1, 1))
    specificity = (1.0, _Affine(n_neg, 0, -1), _Affine(n, -1, -1))
    b2 = 1.0 if metric == "f1" else beta**2
    if metric == "balanced_accuracy":
        if mean_tp + mean_fn == 0:
            return [specificity]
        if mean_tp + mean_fn == n:
            return [recall]
        return [(0.5, *recall[1:]), (0.5, *specificity[1:])]
    if metric in ("f1", "fbeta"):
        return [recall] if np.isinf(b2) else [(1.0, _Affine(0, 1 + b2, 0), _Affine(n_pos, b2, b2))]
    return [{
        "accuracy": (1.0, _Affine(n_neg, 1, -1), _Affine(n, 0, 0)),
        "precision": (1.0, _Affine(0, 1, 0), _Affine(n_pos, 0, 0)),
        "npv": (1.0, _Affine(n_neg, 0, -1), _Affine(n_neg, 0, 0)),
        "recall": recall,
        "specificity": specificity,
    }[metric]]


def _ratio_derivatives(terms: list[tuple[float, _Affine, _Affine]], t: float,
                       f: float) -> np.ndarray | None:
    r"""(g, g_t, g_f, g_tt, g_ff) of :math:`g=\sum a Z/W` at (t, f); None if some W is 0, or
    so close to 0 that the derivatives overflow (its expectation below about 1e-150: the
    metric is undefined with probability 1 to double precision).

    .. math:: g_t=\frac{z_t-(Z/W)w_t}{W},\qquad g_{tt}=-\frac{2w_t\,g_t}{W}
              \quad(\text{likewise in } f).
    """
    out = np.zeros(5)
    with np.errstate(over="ignore", invalid="ignore"):
        for a, z, w in terms:
            num, den = z.c0 + z.ct * t + z.cf * f, w.c0 + w.ct * t + w.cf * f
            if den == 0:
                return None
            g = num / den
            g_t, g_f = (z.ct - g * w.ct) / den, (z.cf - g * w.cf) / den
            out += a * np.array([g, g_t, g_f, -2 * w.ct * g_t / den, -2 * w.cf * g_f / den])
    return out if np.isfinite(out).all() else None


def _mcc_derivatives(n_pos: int, n_neg: int, t: float, f: float) -> np.ndarray | None:
    r"""(g, g_t, g_f, g_tt, g_ff) of MCC at (t, f); None where its denominator is 0 (below
    1e-100, where :math:`h^{-5/2}` overflows).

    With :math:`P=TP+FN`, :math:`MCC=L/\sqrt h`, :math:`L=N_{pn}TP-N_{pp}FN` and
    :math:`h=N_{pp}N_{pn}P(n-P)`; for :math:`x\in\{t,f\}` (:math:`\partial P/\partial x=1`)

    .. math:: g_x=L_xh^{-1/2}-\tfrac12Lh'h^{-3/2},\qquad
              g_{xx}=-L_xh'h^{-3/2}+\tfrac34Lh'^2h^{-5/2}-\tfrac12Lh''h^{-3/2}.
    """
    n, c, total = n_pos + n_neg, n_pos * n_neg, t + f
    h = c * total * (n - total)
    if h <= 1e-100:  # h^{-5/2} overflows: undefined with probability 1 to double precision
        return None
    lin = n_neg * t - n_pos * f
    h1, h2 = c * (n - 2 * total), -2.0 * c
    lx = np.array([n_neg, -n_pos], dtype=float)
    first = lx * h**-0.5 - 0.5 * lin * h1 * h**-1.5
    second = -lx * h1 * h**-1.5 + 0.75 * lin * h1**2 * h**-2.5 - 0.5 * lin * h2 * h**-1.5
    return np.r_[lin / np.sqrt(h), first, second]


def metric_moments(metric: str, y_pred: Any, p: Any, labels: Any = None, *, beta: float = 1.0,
                   zero_division: float = 0.0, second_order: bool = True) -> tuple[float, float]:
    r"""Mean and variance of a confusion-matrix metric (PEMI-Gauss).

    Parameters
    ----------
    metric, y_pred, p, labels, beta
        As in :func:`bayeval.confusion.metric_distribution`.
    zero_division : {0.0, 1.0, np.nan}
        Returned as the mean (variance 0; both NaN for NaN) when the metric's denominator is 0
        with probability 1. Otherwise the undefined event is ignored, as in the paper.
    second_order : bool
        Add the second-order term to the mean of the non-linear metrics; ``False`` gives the
        paper's first-order mean :math:`g(\mu)` (for recall and F1 the ratio of means).

    Returns
    -------
    mean, var : float

    Notes
    -----
    With :math:`T=TP`, :math:`F=FN` independent, :math:`\sigma_T^2=\sum_{\hat y=1}v_i` and
    :math:`\sigma_F^2=\sum_{\hat y=0}v_i` over the unknown rows (:math:`v_i=p_i(1-p_i)`),

    .. math:: \mathbb E\,g\approx g(\mu)+\tfrac12\big(g_{TT}\sigma_T^2+g_{FF}\sigma_F^2\big),
              \qquad \operatorname{Var}g\approx g_T^2\sigma_T^2+g_F^2\sigma_F^2 .

    Accuracy, precision and NPV are linear in (T, F), so both are exact. For a ratio
    :math:`Z/W` of affine functions this is Dervovic & Cashmore (2025): the variance is
    Theorem 2's :math:`(\mu_z^2\sigma_w^2+\mu_w^2\sigma_z^2-2\mu_z\mu_w\operatorname{Cov})/\mu_w^4`
    and the second-order mean is :math:`\mu_z/\mu_w-\operatorname{Cov}(Z,W)/\mu_w^2+
    \mu_z\sigma_w^2/\mu_w^3`, whose remaining bias is :math:`O(n^{-2})` instead of
    :math:`O(n^{-1})`. Balanced accuracy adds two ratios; MCC uses its own derivatives.

    Examples
    --------
    Accuracy is linear in the counts, so its moments are exact (those of
    :func:`bayeval.confusion.metric_distribution`); recall's are a delta-method approximation:

    >>> y_pred, p = [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1]
    >>> [round(x, 6) for x in metric_moments("accuracy", y_pred, p)]
    [0.775, 0.039375]
    >>> from bayeval.confusion import metric_distribution
    >>> d = metric_distribution("accuracy", y_pred, p)
    >>> round(d.mean, 6), round(d.sd**2, 6)
    (0.775, 0.039375)
    >>> [round(x, 4) for x in metric_moments("recall", y_pred, p, second_order=False)]
    [0.7895, 0.0558]
    """
    metric = as_choice(metric, "metric", METRICS)
    zero_division = as_zero_division(zero_division)
    rows = label_rows(y_pred, p, labels)
    return moments_of_rows(metric, rows, as_beta(beta), zero_division, second_order)


def moments_of_rows(metric: str, rows: LabelRows, beta: float, zero_division: float,
                    second_order: bool = True) -> tuple[float, float]:
    """:func:`metric_moments` without its checks, of rows split by
    :class:`~bayeval.confusion.LabelRows`.

    ``metric`` must be one of :data:`bayeval.metrics.METRICS`, ``beta`` a number >= 0,
    ``zero_division`` 0.0, 1.0 or NaN.

    Examples
    --------
    >>> rows = label_rows([1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1], None)
    >>> [round(x, 6) for x in moments_of_rows("accuracy", rows, 1.0, 0.0)]
    [0.775, 0.039375]
    """
    return moments_of_counts(metric, rows.n_pos, rows.n_neg,
                             rows.tp_known + float(rows.p_pos.sum()),
                             rows.fn_known + float(rows.p_neg.sum()),
                             float((rows.p_pos * (1 - rows.p_pos)).sum()),
                             float((rows.p_neg * (1 - rows.p_neg)).sum()), beta, zero_division,
                             second_order)


def count_moments(metric: str, n_pos: int, n_neg: int, *, mean_tp: float, mean_fn: float,
                  var_tp: float, var_fn: float, beta: float = 1.0, zero_division: float = 0.0,
                  second_order: bool = True) -> tuple[float, float]:
    r""":func:`metric_moments` from the first two moments of :math:`TP` and :math:`FN`.

    Parameters
    ----------
    metric, beta, zero_division, second_order
        As in :func:`metric_moments`.
    n_pos, n_neg : int
        Rows predicted positive and negative.
    mean_tp, mean_fn, var_tp, var_fn : float
        :math:`\mathbb E\,TP=TP_K+\sum_{\hat y=1}p_i`, :math:`\operatorname{Var}TP=
        \sum_{\hat y=1}p_i(1-p_i)` over the unknown rows, likewise :math:`FN`: sums over rows,
        so those of data split in partitions add (:func:`bayeval.scale.pemi_gauss`).

    Returns
    -------
    mean, var : float

    Examples
    --------
    The sums of :func:`metric_moments`'s example, :math:`\mathbb E\,TP=0.9+0.6`,
    :math:`\operatorname{Var}TP=0.09+0.24`, give its result:

    >>> m = count_moments("recall", 2, 2, mean_tp=1.5, mean_fn=0.4, var_tp=0.33, var_fn=0.3)
    >>> [round(x, 4) for x in m]
    [0.8358, 0.0558]
    >>> [round(x, 4) for x in metric_moments("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1])]
    [0.8358, 0.0558]
    """
    metric = as_choice(metric, "metric", METRICS)
    zero_division = as_zero_division(zero_division)
    return moments_of_counts(metric, n_pos, n_neg, mean_tp, mean_fn, var_tp, var_fn,
                             as_beta(beta), zero_division, second_order)


def moments_of_counts(metric: str, n_pos: int, n_neg: int, mean_tp: float, mean_fn: float,
                      var_tp: float, var_fn: float, beta: float, zero_division: float,
                      second_order: bool = True) -> tuple[float, float]:
    """:func:`count_moments` without its checks, for arguments already checked.

    ``metric`` must be one of :data:`bayeval.metrics.METRICS`, ``beta`` a number >= 0,
    ``zero_division`` 0.0, 1.0 or NaN.

    Examples
    --------
    >>> [round(x, 4) for x in moments_of_counts("recall", 2, 2, 1.5, 0.4, 0.33, 0.3, 1.0, 0.0)]
    [0.8358, 0.0558]
    """
    t, f, var_t, var_f = mean_tp, mean_fn, var_tp, var_fn
    if metric == "mcc":
        d = _mcc_derivatives(n_pos, n_neg, t, f)
    else:
        d = _ratio_derivatives(_ratio_terms(metric, n_pos, n_neg, beta, t, f), t, f)
    if d is None:
        return zero_division, np.nan if np.isnan(zero_division) else 0.0
    g, g_t, g_f, g_tt, g_ff = d
    mean = g + 0.5 * (g_tt * var_t + g_ff * var_f) if second_order else g
    return float(mean), float(g_t**2 * var_t + g_f**2 * var_f)


# ---------------------------------------------------------------------------------------------
# ROC-AUC


class RatioMoments(NamedTuple):
    r"""Exact moments of the Mann–Whitney count :math:`A` and of :math:`D=N_+N_-`.

    ROC-AUC is :math:`A/D`; :func:`auc_numerator_moments` computes these.

    Attributes
    ----------
    mean_num, var_num : float
        Mean and variance of :math:`A`.
    mean_den, var_den : float
        Mean and variance of :math:`D`.
    cov : float
        :math:`\operatorname{Cov}(A, D)`.

    Examples
    --------
    >>> m = auc_numerator_moments([0.9, 0.6, 0.3, 0.1], [0.9, 0.6, 0.3, 0.1])
    >>> round(m.mean_num / m.mean_den, 4)  # the first-order AUC
    0.9018
    """

    mean_num: float
    var_num: float
    mean_den: float
    var_den: float
    cov: float


def _auc_inputs(scores: Any, p: Any, labels: Any,
                ties: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Validated scores, label probabilities (known labels as 0/1) and the tie weight."""
    ties = as_choice(ties, "ties", ("half", "one"))
    s = as_array(scores, "scores")
    pp = as_probabilities(p, "p")
    y = None if labels is None else as_labels(labels, "labels", allow_missing=True)
    check_same_length(scores=s, p=pp, labels=y)
    if y is not None:
        pp = np.where(np.isnan(y), pp, y)
    return s, pp, 0.5 if ties == "half" else 1.0


def auc_count_moments(s: np.ndarray, p: np.ndarray, w: float) -> RatioMoments:
    r""":func:`auc_numerator_moments` without its checks: finite float scores ``s``,
    probabilities ``p`` (known labels as 0 or 1) of one length and the tie weight ``w``
    (1/2 or 1).

    Exact moments of :math:`A=\sum_{i\ne j}\xi_{ij}Y_i(1-Y_j)` and :math:`D=N_+N_-`.

    :math:`\xi_{ij}=\mathbb 1\{s_i>s_j\}+w\,\mathbb 1\{s_i=s_j\}`. Writing :math:`Y_i=p_i+e_i`,
    :math:`A-\mathbb EA=\sum_ie_ic_i-\sum_{i<j}(\xi_{ij}+\xi_{ji})e_ie_j` with uncorrelated
    linear and quadratic parts and
    :math:`c_i=\sum_{j\ne i}\xi_{ij}q_j-\sum_{j\ne i}\xi_{ji}p_j` (Dervovic & Cashmore
    2025). :math:`\xi_{ij}+\xi_{ji}` is 1, or :math:`2w` for a tie, so with
    :math:`\Pi=\sum_{i<j}v_iv_j` and :math:`\Pi_=` its sum over tied pairs

    .. math:: \operatorname{Var}A=\sum_iv_ic_i^2+\Pi+(4w^2-1)\Pi_=,\quad
              \operatorname{Cov}(A,D)=\sum_iv_ic_ic_i^D+2\Pi+2(2w-1)\Pi_=,\quad
              \operatorname{Var}D=\sum_iv_i(c_i^D)^2+4\Pi,

    :math:`c^D_i=\sum_{j\ne i}(1-2p_j)`. One sort (none if ``s`` is sorted) and cumulative sums
    over tie groups; without ties, row :math:`i` of the sorted scores has
    :math:`c_i=\sum_{j<i}q_j-\sum_{j>i}p_j` and :math:`\mathbb EA=\sum_ip_i\sum_{j<i}q_j`.
    :math:`\mathbb ED=\sum_ip_i\sum_jq_j-\sum_ip_iq_i` with :math:`q=1-p` summed apart, so
    that scores all near 0 or all near 1 keep their relative precision.

    Examples
    --------
    >>> p = np.array([0.9, 0.6, 0.3, 0.1])
    >>> auc_count_moments(p, p, 0.5) == auc_numerator_moments(p, p)
    True
    """
    if not (s[1:] >= s[:-1]).all():
        order = np.argsort(s)  # the order within tie groups does not matter
        s, p = s[order], p[order]
    return RatioMoments(*(float(x[0]) for x in auc_count_moments_rows(s, p[None, :], w)))


def auc_count_moments_rows(s: np.ndarray, p: np.ndarray, w: float) -> RatioMoments:
    r""":func:`auc_count_moments` of every row of ``p`` (S, n) over the same sorted scores
    ``s`` (n,): the fields of the result are arrays (S,). The tie groups are found once and the
    sums run along the rows (e.g. the draws of a calibration map completing the same rows).

    Examples
    --------
    >>> s = np.array([0.1, 0.3, 0.3, 0.9])
    >>> p = np.array([[0.1, 0.3, 0.4, 0.9], [0.2, 0.5, 0.5, 0.6]])
    >>> rows = auc_count_moments_rows(s, p, 0.5)
    >>> bool(np.isclose(rows.var_num[1], auc_count_moments(s, p[1], 0.5).var_num))
    True
    """
    tie = s[1:] == s[:-1]
    if not tie.any():
        return _untied_rows(p)
    q = 1.0 - p  # summed apart from p: n - sum(p) loses sum(q) when every p is near 1
    total_p, total_q = p.sum(-1), q.sum(-1)
    v = p * q
    first = np.flatnonzero(np.r_[True, ~tie])
    group = np.repeat(np.arange(first.size), np.diff(np.r_[first, s.size]))
    sum_q, sum_p, sum_v = (np.add.reduceat(x, first, axis=-1) for x in (q, p, v))
    q_below = (np.cumsum(sum_q, axis=-1) - sum_q)[:, group]  # sum of q_j over s_j < s_i
    p_above = (total_p[:, None] - np.cumsum(sum_p, axis=-1))[:, group]  # s_j > s_i
    forward = q_below + w * (sum_q[:, group] - q)  # sum_{j != i} xi_ij q_j
    backward = p_above + w * (sum_p[:, group] - p)  # sum_{j != i} xi_ji p_j
    mean_num = _row_dot(p, forward)
    c_num = forward - backward
    tied = ((sum_v**2 - np.add.reduceat(v**2, first, axis=-1)) / 2).sum(-1)
    c_den = 2.0 * p + (total_q - total_p - 1.0)[:, None]  # sum_{j != i} (q_j - p_j)
    v_sum = v.sum(-1)
    pairs = (v_sum**2 - _row_dot(v, v)) / 2
    v_num = v * c_num
    return RatioMoments(
        mean_num=mean_num,
        var_num=_row_dot(v_num, c_num) + pairs + (4 * w * w - 1) * tied,
        mean_den=total_p * total_q - v_sum,
        var_den=_row_dot(v, c_den**2) + 4 * pairs,
        cov=_row_dot(v_num, c_den) + 2 * pairs + 2 * (2 * w - 1) * tied)


#: elements per block of the tie-free sums over long rows, so that a block's temporaries stay
#: in the cache (an array of one block, or of many rows, is summed in one)
_BLOCK = 1 << 15


def _untied_rows(p: np.ndarray) -> RatioMoments:
    r""":func:`auc_count_moments_rows` of distinct sorted scores, in column blocks.

    Row :math:`i` (from 0) has the rows :math:`j<i` below it, so with the running sum
    :math:`F_i=\sum_{j<i}q_j`, carried from block to block,
    :math:`c_i=F_i-\sum_{j>i}p_j=i+p_i-P` (as :math:`p_j+q_j=1`), and every moment is a sum
    over the rows.
    """
    q = 1.0 - p  # summed apart from p: n - sum(p) loses sum(q) when every p is near 1
    total_p, total_q = p.sum(-1), q.sum(-1)
    offset = (total_q - total_p - 1.0)[:, None]  # c_den = 2 p + offset
    rows = p.shape[0]
    width = p.shape[1] if p.size <= _BLOCK or rows > 32 else _BLOCK // rows
    carry = np.zeros((rows, 1))
    sums = np.zeros((6, rows))  # of p F, v c^2, v c_den^2, v c c_den, v and v^2
    for start in range(0, p.shape[1], width):
        pb, qb = p[:, start:start + width], q[:, start:start + width]
        below = _running_sums(qb) + carry
        carry = below[:, -1:].copy()
        below -= qb  # F_i
        v = pb * qb
        c_num = np.arange(start, start + pb.shape[1]) - total_p[:, None]
        c_num += pb
        c_den = 2.0 * pb + offset
        v_num = v * c_num
        sums += (_row_dot(pb, below), _row_dot(v_num, c_num), _row_dot(v, c_den * c_den),
                 _row_dot(v_num, c_den), v.sum(-1), _row_dot(v, v))
    mean_num, vcc, vdd, vcd, v_sum, vv = sums
    pairs = (v_sum**2 - vv) / 2
    return RatioMoments(mean_num=mean_num, var_num=vcc + pairs,
                        mean_den=total_p * total_q - v_sum, var_den=vdd + 4 * pairs,
                        cov=vcd + 2 * pairs)


#: columns added as vectors by :func:`_running_sums`
_LANES = 8


def _running_sums(x: np.ndarray) -> np.ndarray:
    """``np.cumsum(x, axis=-1)`` of a 2-D float array in groups of :data:`_LANES` columns:
    the running sums inside every group at once, column by column, then the groups' totals
    cumulated and added (NumPy's cumsum adds one element at a time; about twice as fast, equal
    to rounding).

    Examples
    --------
    >>> x = np.arange(20.0).reshape(2, 10)
    >>> bool((_running_sums(x) == np.cumsum(x, axis=-1)).all())
    True
    """
    rows, n = x.shape
    m = n - n % _LANES
    out = np.empty_like(x)
    groups = out[:, :m].reshape(rows, -1, _LANES)
    groups[...] = x[:, :m].reshape(rows, -1, _LANES)
    for k in range(1, _LANES):
        groups[..., k] += groups[..., k - 1]
    totals = np.cumsum(groups[..., -1], axis=-1)
    groups[:, 1:] += totals[:, :-1, None]
    if m < n:
        out[:, m:] = np.cumsum(x[:, m:], axis=-1) + (totals[:, -1:] if m else 0.0)
    return out


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of each row of ``a`` with the same row of ``b``."""
    return np.einsum("ij,ij->i", a, b)


def auc_numerator_moments(scores: Any, p: Any, labels: Any = None, *,
                          ties: str = "half") -> RatioMoments:
    r"""Exact mean, variance and covariance of ROC-AUC's numerator and denominator.

    Parameters
    ----------
    scores : array-like, shape (n,)
        Finite real scores (only their order matters).
    p : array-like, shape (n,)
        :math:`P(Y_i=1)`, ignored (but checked) where ``labels`` is known.
    labels : array-like, shape (n,), optional
        Known labels 0/1, NaN where unknown.
    ties : {"half", "one"}
        A tied positive–negative pair counts 1/2 (scikit-learn) or 1 (the PEMI paper's
        :math:`\ge`).

    Returns
    -------
    RatioMoments
        ``mean_num, var_num`` of :math:`A=\sum_{i\ne j}\xi_{ij}Y_i(1-Y_j)`, ``mean_den,
        var_den`` of :math:`D=N_+N_-` and ``cov`` :math:`=\operatorname{Cov}(A,D)`; exact, in
        :math:`O(n\log n)` (the paper's Lemma 13 is :math:`O(n^4)`).

    Examples
    --------
    >>> m = auc_numerator_moments([0.9, 0.6, 0.3, 0.1], [0.9, 0.6, 0.3, 0.1])
    >>> [round(x, 4) for x in m]
    [3.03, 0.9843, 3.36, 0.7272, 0.6486]
    """
    return auc_count_moments(*_auc_inputs(scores, p, labels, ties))


def auc_moments(scores: Any, p: Any, labels: Any = None, *, ties: str = "half",
                second_order: bool = True) -> tuple[float, float]:
    r"""Mean and variance of ROC-AUC :math:`=A/D` by the delta method (PEMI-Gauss).

    Parameters
    ----------
    scores, p, labels, ties
        As in :func:`auc_numerator_moments`.
    second_order : bool
        Add the second-order term to the mean; ``False`` gives the paper's :math:`\mu_A/\mu_D`.

    Returns
    -------
    mean, var : float
        From the exact moments of :math:`A` and :math:`D`:

        .. math:: \mathbb E\approx\frac{\mu_A}{\mu_D}-\frac{\operatorname{Cov}(A,D)}{\mu_D^2}
                  +\frac{\mu_A\sigma_D^2}{\mu_D^3},\qquad
                  \operatorname{Var}\approx\frac{\mu_A^2\sigma_D^2+\mu_D^2\sigma_A^2
                  -2\mu_A\mu_D\operatorname{Cov}(A,D)}{\mu_D^4}.

    Raises
    ------
    ValueError
        If every completion of the labels has a single class (:math:`\mu_D=0`).

    Examples
    --------
    Scores that are calibrated probabilities (Monte Carlo over the labels gives mean 0.902, var
    0.0350); knowing two labels shrinks the variance:

    >>> scores = [0.9, 0.6, 0.3, 0.1]
    >>> [round(x, 4) for x in auc_moments(scores, scores)]
    [0.9024, 0.036]
    >>> [round(x, 4) for x in auc_moments(scores, scores, labels=[1, np.nan, 0, np.nan])]
    [0.9601, 0.0157]
    """
    return ratio_moments(auc_numerator_moments(scores, p, labels, ties=ties), second_order)


def ratio_moments(m: RatioMoments, second_order: bool = True,
                  defined: float = 1.0) -> tuple[float, float]:
    r"""Mean and variance of :math:`A/D` by the delta method, from :class:`RatioMoments`;
    with ``defined`` :math:`=\pi=P(D>0)<1`, given :math:`D>0`.

    The formulas of :func:`auc_moments`, which this finishes. :math:`A=0` where :math:`D=0`, so
    the moments given :math:`D>0` are the moments over :math:`\pi` (e.g.
    :math:`\mathbb E[D\mid D>0]=\mu_D/\pi`): the ratio :math:`\mu_A/\mu_D` is unchanged, and
    the second-order term and the variance are :math:`\pi` times those of :func:`auc_moments`.
    Both are taken as :math:`(x/\mu_D)(\pi/\mu_D)`, finite when :math:`\mu_D` is tiny (scores
    all near 0 or 1), where :math:`\pi/\mu_D` is of order 1.

    Parameters
    ----------
    m : RatioMoments
        Moments of the numerator :math:`A` and denominator :math:`D`.
    second_order : bool
        Add the second-order term to the mean.
    defined : float
        :math:`P(D>0)`; 1 gives the unconditional delta method (PEMI-Gauss).

    Returns
    -------
    mean, var : float

    Raises
    ------
    ValueError
        If :math:`\mu_D=0` (every completion of the labels has a single class).

    Examples
    --------
    >>> m = auc_numerator_moments([0.1, 0.4, 0.35, 0.8], [0.1, 0.4, 0.35, 0.8])
    >>> [round(x, 6) for x in ratio_moments(m)] == [round(x, 6) for x in auc_moments(
    ...     [0.1, 0.4, 0.35, 0.8], [0.1, 0.4, 0.35, 0.8])]
    True

    Two rows with :math:`p=(0.2, 0.9)` are ranked right (ROC-AUC 1) with probability 0.72 and
    wrong (0) with 0.02; given two classes (:math:`\pi=0.74`) the mean is 36/37:

    >>> m = auc_numerator_moments([0.2, 0.9], [0.2, 0.9])
    >>> round(ratio_moments(m, second_order=False, defined=0.74)[0], 6), round(36 / 37, 6)
    (0.972973, 0.972973)
    """
    if m.mean_den <= 0:
        raise ValueError("ROC-AUC is undefined: with these labels and p every completion has a "
                         "single class; both classes must be possible.")
    ratio = m.mean_num / m.mean_den
    scale = defined / m.mean_den
    var = (ratio**2 * m.var_den + m.var_num - 2 * ratio * m.cov) / m.mean_den * scale
    mean = ratio + (ratio * m.var_den - m.cov) / m.mean_den * scale
    return float(mean if second_order else ratio), max(float(var), 0.0)
