r"""Metrics of a binary classifier when its labels are uncertain: their exact laws.

Row :math:`i` has a prediction :math:`\hat y_i\in\{0,1\}` and a label that is either known or an
independent :math:`Y_i\sim\mathrm{Bernoulli}(p_i)`. With :math:`U=\sum Y_i` over the unknown rows
predicted positive and :math:`V` over those predicted negative (independent Poisson-binomials),

.. math:: TP=TP_K+U,\quad FN=FN_K+V,\quad FP=N_{pp}-TP,\quad TN=N_{pn}-FN,

where :math:`TP_K, FN_K` count the known rows and :math:`N_{pp}, N_{pn}` the predicted positives
and negatives. Every confusion-matrix metric is therefore a function :math:`g(TP, FN)`
(Kivimäki et al. 2025; Dervovic & Cashmore 2025).

* :func:`metric_distribution`: the exact law of :math:`g(TP, FN)`, pushed forward from the
  product of the two count PMFs, each cut to the counts whose probability exceeds
  :data:`TOL` (so the grid is :math:`O(\sigma_{TP}\sigma_{FN})`, not :math:`O(n^2)`). Its
  mean, sd, masses and equal-tailed interval never list the grid's support: on a diagonal
  :math:`TP+FN=s` the metric is affine in :math:`TP`, and along :math:`FN` monotone.
* :func:`count_distribution`: the same from the laws of the two counts (or a mixture of them).

Their moments alone (PEMI-Gauss, and ROC-AUC) are in :mod:`bayeval.confusion_moments`. ``p`` has
one value per row; where ``labels`` is known (0 or 1) ``p`` is ignored (but must be a probability).
The public functions check their arguments; each has a twin without checks for arguments already
checked (:func:`metric_law`, :func:`count_law`, :meth:`MetricDistribution.interval_ends`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from bayeval.confusion_grid import GridLaw, merge_values
from bayeval.intervals import pmf_interval
from bayeval.metrics import METRICS, REGISTRY, metric_value
from bayeval.poibin import pmf_above
from bayeval.validation import (
    as_beta,
    as_binary,
    as_choice,
    as_ci_prob,
    as_labels,
    as_probabilities,
    as_zero_division,
    check_same_length,
)

__all__ = [
    "INTERVAL_KINDS",
    "SUPPORT_CELLS",
    "TOL",
    "LabelRows",
    "MetricDistribution",
    "count_distribution",
    "count_law",
    "label_rows",
    "metric_distribution",
    "metric_law",
]

TOL = 1e-16
"""Counts whose probability is at most this are left out of the metric grids."""

SUPPORT_CELLS = 30_000_000
"""A lazy law builds its whole support (``values``, the shortest interval) from at most this
many grid cells (about 0.7 GB while sorting)."""

INTERVAL_KINDS = ("eti", "hdi", "paper_hdi")
"""Kinds of :meth:`MetricDistribution.interval`."""

_TWO_COUNTS = tuple(m for m in METRICS if not REGISTRY[m].one_count)  # the others: one PMF


# ---------------------------------------------------------------------------------------------
# input


@dataclass(frozen=True)
class LabelRows:
    """What the metrics depend on: the fixed counts and the p of the unknown labels.

    Attributes
    ----------
    n_pos, n_neg : int
        Rows predicted positive and negative.
    tp_known, fn_known, tn_known : int
        TP, FN and TN of the rows whose label is known.
    p_pos, p_neg : numpy.ndarray
        :math:`P(Y_i=1)` of the unknown labels predicted positive (their sum is :math:`U`) and
        negative (:math:`V`).

    Examples
    --------
    >>> LabelRows.split(np.array([True, False]), np.array([0.9, 0.2]), None).p_neg
    array([0.2])
    """

    n_pos: int
    n_neg: int
    tp_known: int
    fn_known: int
    tn_known: int
    p_pos: np.ndarray
    p_neg: np.ndarray

    @classmethod
    def split(cls, y_pred: np.ndarray, p: np.ndarray, labels: np.ndarray | None) -> LabelRows:
        """The rows of checked arrays: boolean ``y_pred``, ``p`` in [0, 1] and ``labels`` (0, 1
        or NaN; None: all unknown), of one length (:func:`label_rows` checks them)."""
        yp, pp, y = y_pred, p, labels
        if y is None:  # every label unknown
            n_pos = int(yp.sum())
            return cls(n_pos, yp.size - n_pos, 0, 0, 0, np.compress(yp, pp),
                       np.compress(~yp, pp))
        unknown = np.isnan(y)
        return cls(n_pos=int(yp.sum()), n_neg=int((~yp).sum()),
                   tp_known=int((yp & (y == 1)).sum()), fn_known=int((~yp & (y == 1)).sum()),
                   tn_known=int((~yp & (y == 0)).sum()),
                   p_pos=np.compress(unknown & yp, pp),
                   p_neg=np.compress(unknown & ~yp, pp))


def label_rows(y_pred: Any, p: Any, labels: Any) -> LabelRows:
    """Check one row per element of ``y_pred``, ``p`` and ``labels`` and split them.

    Parameters
    ----------
    y_pred, p, labels
        As in :func:`metric_distribution`.

    Returns
    -------
    LabelRows

    Raises
    ------
    ValueError
        Naming the argument that is not binary, not a probability, or of another length.

    Examples
    --------
    >>> label_rows([1, 1, 0], [0.9, 0.6, 0.2], [1, np.nan, np.nan]).tp_known
    1
    """
    yp = as_binary(y_pred, "y_pred").astype(bool)
    pp = as_probabilities(p, "p")
    y = None if labels is None else as_labels(labels, "labels", allow_missing=True)
    check_same_length(y_pred=yp, p=pp, labels=y)
    return LabelRows.split(yp, pp, y)


# ---------------------------------------------------------------------------------------------
# exact distributions


def _window(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counts, probs) of PB(p) on the counts with probability above TOL, renormalised."""
    start, probs = pmf_above(p, TOL)
    return start + np.arange(probs.size, dtype=float), probs / probs.sum()


def _count(p: np.ndarray, known: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts, probs) of ``known + PB(p)``; counts are floats, so products cannot overflow."""
    counts, probs = _window(p)
    return counts + known, probs


def _one_count(metric: str, rows: LabelRows) -> tuple[np.ndarray, np.ndarray]:
    r"""Value (NaN where undefined) and probability of every count of a one-count metric.

    Precision depends on TP only and NPV on FN only (their denominators are fixed); accuracy on
    the number of correct predictions TP + TN, one Poisson-binomial over
    :math:`\{p_i: \hat y_i=1\}\cup\{1-p_i: \hat y_i=0\}`.
    """
    if metric == "precision":
        tp, probs = _count(rows.p_pos, rows.tp_known)
        return metric_value(metric, tp, rows.n_pos - tp, 0.0, 0.0, 1.0, np.nan), probs
    if metric == "npv":
        fn, probs = _count(rows.p_neg, rows.fn_known)
        return metric_value(metric, 0.0, 0.0, fn, rows.n_neg - fn, 1.0, np.nan), probs
    correct, probs = _count(np.concatenate([rows.p_pos, 1.0 - rows.p_neg]),
                            rows.tp_known + rows.tn_known)
    wrong = rows.n_pos + rows.n_neg - correct
    return metric_value(metric, correct, wrong, 0.0, 0.0, 1.0, np.nan), probs


def _support(values: np.ndarray, probs: np.ndarray,
             zero_division: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(support, its probabilities, p_undefined) from every cell's value (NaN: undefined).

    Undefined cells take the value ``zero_division``; with NaN they are conditioned away.
    """
    undefined = np.isnan(values)
    p_undefined = float(probs[undefined].sum()) if undefined.any() else 0.0
    if not np.isnan(zero_division):
        values[undefined] = zero_division
    elif undefined.all():
        values, probs = np.full(1, np.nan), np.ones(1)
    elif p_undefined > 0.0:
        values, probs = values[~undefined], probs[~undefined] / (1.0 - p_undefined)
    values, probs = merge_values(values, probs)
    values.flags.writeable = probs.flags.writeable = False
    return values, probs, p_undefined


class MetricDistribution:
    r"""Exact law of a metric: ``values`` (sorted, distinct) with probabilities ``probs``.

    Parameters
    ----------
    metric : str
        The metric's name.
    values, probs : numpy.ndarray
        Support (sorted, distinct) and its probabilities, summing to 1.
    p_undefined : float
        Probability that the metric's denominator is 0.
    zero_division : float
        The convention used (see ``p_undefined`` below).

    Attributes
    ----------
    metric : str
        The metric's name.
    values, probs : numpy.ndarray
        Support and probabilities (read-only); ``probs`` sums to 1.
    p_undefined : float
        Probability that the metric's denominator is 0. That event is the value
        ``zero_division`` when it is 0.0 or 1.0 (included in ``values``); with ``np.nan`` the law is
        conditioned on the metric being defined (``values``/``probs`` renormalised; ``[nan]`` with
        probability 1 if it never is).
    zero_division : float
        The convention used.
    mean, sd : float
        Mean and standard deviation of the law (conditional on "defined" for ``np.nan``).

    Notes
    -----
    :func:`metric_distribution` returns the two-count metrics (all but accuracy, precision and
    NPV) *lazily*: ``mean``, ``sd``, ``p_undefined``, ``mass`` and ``interval(kind="eti")`` are
    computed from the TP x FN grid without listing its support (``GridLaw``), and ``values``,
    ``probs`` and the other intervals build and sort the support on first use (cached). Both
    routes give the same law: the moments and masses agree to rounding, and the ETI is the same
    pair of support values (the two routes sum the tail masses in different orders, so they
    could part only where a tail mass equals :math:`\alpha/2` to within rounding; exact ties,
    such as dyadic masses, are reproduced).

    Examples
    --------
    Recall of four predictions whose labels are unknown, :math:`Y_i\sim\mathrm{Bernoulli}(p_i)`
    (no actual positive, probability 0.0252, gives ``zero_division``):

    >>> d = metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1])
    >>> d  # doctest: +NORMALIZE_WHITESPACE
    MetricDistribution(metric='recall', mean=0.8109, sd=0.265, p_undefined=0.0252,
                       zero_division=0.0)
    >>> d.values.round(4)
    array([0.    , 0.3333, 0.5   , 0.6667, 1.    ])
    >>> d.probs.round(4)
    array([0.04  , 0.0126, 0.159 , 0.1836, 0.6048])
    """

    def __init__(self, metric: str, values: np.ndarray, probs: np.ndarray, p_undefined: float,
                 zero_division: float) -> None:
        self.metric, self.p_undefined, self.zero_division = metric, p_undefined, zero_division
        self._support = None if values is None else (values, probs)
        self._grid: GridLaw | None = None

    @classmethod
    def from_cells(cls, metric: str, values: np.ndarray, probs: np.ndarray,
                   zero_division: float) -> MetricDistribution:
        """The law of a metric from the value (NaN where undefined) and probability of every
        cell of its counts' grid: equal values merged, undefined cells at ``zero_division``.

        Examples
        --------
        >>> d = MetricDistribution.from_cells("recall", np.array([0.5, np.nan, 0.5, 1.0]),
        ...                                   np.array([0.25, 0.25, 0.25, 0.25]), 0.0)
        >>> d.values, d.probs, d.p_undefined
        (array([0. , 0.5, 1. ]), array([0.25, 0.5 , 0.25]), 0.25)
        """
        return cls(metric, *_support(np.array(values, float), probs, zero_division),
                   zero_division)

    @classmethod
    def from_grid(cls, grid: GridLaw) -> MetricDistribution:
        """The law of a :class:`~bayeval.confusion_grid.GridLaw`, its support built only when
        asked for; the point mass at ``zero_division`` if the metric is never defined.

        Examples
        --------
        >>> from bayeval.confusion_grid import GridLaw
        >>> a, t = np.array([0.5, 0.5]), np.arange(2.0)
        >>> grid = GridLaw("recall", 1, 1, t, a, t, a, np.ones(1), 1.0, 0.0)
        >>> d = MetricDistribution.from_grid(grid)
        >>> d.lazy, d.p_undefined, d.values
        (True, 0.25, array([0. , 0.5, 1. ]))
        """
        if not grid.defined:
            values, probs = np.full(1, grid.zero_division), np.ones(1)
            values.flags.writeable = probs.flags.writeable = False
            return cls(grid.metric, values, probs, 1.0, grid.zero_division)
        dist = cls(grid.metric, None, None, grid.p_undefined, grid.zero_division)
        dist._grid = grid
        return dist

    def __repr__(self) -> str:
        return (f"MetricDistribution(metric={self.metric!r}, mean={self.mean:.6g}, "
                f"sd={self.sd:.3g}, p_undefined={self.p_undefined:.3g}, "
                f"zero_division={self.zero_division})")

    @property
    def lazy(self) -> bool:
        """Whether the support is still to be built (from a grid of ``grid_cells`` cells).

        Examples
        --------
        >>> d = metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1])
        >>> d.lazy, d.interval(0.9, kind="hdi"), d.lazy
        (True, (0.5, 1.0), False)
        """
        return self._support is None

    def _materialised(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, probs), listed and sorted from the grid on first use if lazy."""
        if self._support is None:
            if self._grid.size > SUPPORT_CELLS:
                raise ValueError(
                    f"the support of this {self.metric} law would be sorted from "
                    f"{self._grid.size:.2g} grid cells (limit {SUPPORT_CELLS:.0e}); its mean, "
                    "sd, masses and equal-tailed interval need no support: use "
                    "interval(kind='eti') (ci_kind='eti'), or smaller windows.")
            values, probs, _ = _support(*self._grid.cells(), self.zero_division)
            self._support = values, probs
        return self._support

    @property
    def values(self) -> np.ndarray:
        """Support, sorted and distinct (read-only).

        Examples
        --------
        >>> metric_distribution("precision", [1, 1, 0], [0.5, 0.5, 0.2]).values
        array([0. , 0.5, 1. ])
        """
        return self._materialised()[0]

    @property
    def probs(self) -> np.ndarray:
        """Probabilities of ``values`` (read-only), summing to 1.

        Examples
        --------
        >>> metric_distribution("precision", [1, 1, 0], [0.5, 0.5, 0.2]).probs
        array([0.25, 0.5 , 0.25])
        """
        return self._materialised()[1]

    @cached_property
    def _moments(self) -> tuple[float, float]:
        if self._grid is not None:
            return self._grid.moments
        mean = float(self.values @ self.probs)
        return mean, float(np.sqrt((self.values - mean) ** 2 @ self.probs))

    @property
    def mean(self) -> float:
        r"""The mean :math:`\mu=\sum_k v_k\,P(v_k)`.

        Examples
        --------
        >>> round(metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1]).mean, 4)
        0.8109
        """
        return self._moments[0]

    @property
    def sd(self) -> float:
        r"""The standard deviation :math:`\big(\sum_k (v_k-\mu)^2 P(v_k)\big)^{1/2}`.

        Examples
        --------
        >>> round(metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1]).sd, 4)
        0.2646
        """
        return self._moments[1]

    def mass(self, lower: float, upper: float) -> float:
        r"""The probability :math:`P(\text{lower}\le g\le\text{upper})` of a closed interval.

        Parameters
        ----------
        lower, upper : float
            Ends of the interval, included.

        Returns
        -------
        float

        Examples
        --------
        >>> d = metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1])
        >>> round(d.mass(0.5, 1.0), 4)  # 0.159 + 0.1836 + 0.6048
        0.9474
        """
        if self._grid is not None:
            return self._grid.mass(lower, upper)
        inside = (self.values >= lower) & (self.values <= upper)
        return float(self.probs[inside].sum())

    def interval(self, ci_prob: float = 0.95, kind: str = "eti") -> tuple[float, float]:
        r"""Interval ``(lower, upper)`` of support values holding at least ``ci_prob`` of the mass.

        With :math:`\alpha=1-p` for ``ci_prob`` :math:`p`: equal-tailed (``"eti"``), shortest
        (``"hdi"``) or Algorithm 3 of the CBPE paper (``"paper_hdi"``: valid but not always the
        shortest, kept to reproduce the paper), as :func:`bayeval.intervals.pmf_interval`. For a
        unimodal law (accuracy, precision, NPV) the shortest interval is the highest-density one;
        recall, F1 and the others have spiky, multimodal PMFs, whose highest-density *region* is
        a useless union of spikes. A lazy law finds the ETI without its support
        (:meth:`GridLaw.quantile`); the others build it.

        Parameters
        ----------
        ci_prob : float
            Probability :math:`p` in (0, 1).
        kind : {"eti", "hdi", "paper_hdi"}
            The interval's construction, above.

        Returns
        -------
        (float, float)
            Lower and upper end, both support values; :meth:`mass` gives the exact mass.

        Examples
        --------
        >>> d = metric_distribution("recall", [1, 1, 0, 0], [0.9, 0.6, 0.3, 0.1])
        >>> d.interval(0.9)  # F(0) = 0.04 < 0.05 <= F(1/3) = 0.0526
        (0.3333333333333333, 1.0)
        >>> d.interval(0.9, kind="hdi")  # [1/2, 1] holds 0.9474
        (0.5, 1.0)
        """
        return self.interval_ends(as_ci_prob(ci_prob), as_choice(kind, "kind", INTERVAL_KINDS))

    def interval_ends(self, ci_prob: float, kind: str) -> tuple[float, float]:
        """:meth:`interval` without its checks: ``ci_prob`` in (0, 1), ``kind`` one of
        :data:`INTERVAL_KINDS`.

        Examples
        --------
        >>> metric_distribution("precision", [1, 1], [0.9, 0.6]).interval_ends(0.9, "hdi")
        (0.5, 1.0)
        """
        alpha = 1.0 - ci_prob
        if kind == "eti" and self._grid is not None:
            return self._grid.quantile(alpha / 2, False), self._grid.quantile(alpha / 2, True)
        i, j = pmf_interval(self.values, self.probs, alpha, kind)
        return float(self.values[i]), float(self.values[j])


def metric_distribution(metric: str, y_pred: Any, p: Any, labels: Any = None, *,
                        zero_division: float = 0.0, beta: float = 1.0) -> MetricDistribution:
    r"""Exact distribution of a confusion-matrix metric when unknown labels are Bernoulli(p).

    Parameters
    ----------
    metric : str
        One of :data:`bayeval.metrics.METRICS`.
    y_pred : array-like of {0, 1}, shape (n,)
        Predictions.
    p : array-like, shape (n,)
        :math:`P(Y_i=1)` for every row, in [0, 1]; ignored (but checked) where ``labels`` is known.
    labels : array-like, shape (n,), optional
        Known labels 0/1, NaN where unknown. ``None``: all unknown (CBPE).
    zero_division : {0.0, 1.0, np.nan}
        Value of the metric where its denominator is 0 (scikit-learn's convention). With
        ``np.nan`` the law is conditioned on the metric being defined.
    beta : float
        Weight of recall in ``fbeta``.

    Returns
    -------
    MetricDistribution
        ``values``, ``probs``, ``mean``, ``sd``, ``p_undefined``, ``interval(ci_prob, kind)``,
        ``mass(lower, upper)``; lazy for the two-count metrics (see its Notes).

    Notes
    -----
    Over the unknown rows, :math:`U\sim\mathrm{PB}(\{p_i\}_{\hat y_i=1})` and
    :math:`V\sim\mathrm{PB}(\{p_i\}_{\hat y_i=0})` are independent, so

    .. math:: P(g=v)=\sum_{u,w:\,g(TP_K+u,\,FN_K+w)=v}P(U=u)\,P(V=w).

    Each PMF is cut to the counts with probability above :data:`TOL` and renormalised; by
    log-concavity the mass cut from a tail is about :math:`10^{-16}\sigma/8`, below 1e-13 for
    :math:`n\le10^8`. Precision, NPV and accuracy need one count only. The others need the grid,
    of about :math:`270\,\sigma_U\sigma_V` cells (2.4e7 for :math:`n=10^6`,
    :math:`p\sim\mathrm{Beta}(2,2)`, mostly distinct values). Their mean, sd, ``p_undefined``,
    masses and equal-tailed interval are computed without the grid's support, in
    :math:`O(w\log w)` and :math:`O(w\log^2 w)` for counts of window :math:`w`
    (``GridLaw``); ``values`` and ``probs`` (and so the other intervals) sort the whole grid
    on first use. Values are one division of exact integers
    (:func:`bayeval.metrics.from_counts`), so equal rationals are equal doubles and merge
    exactly; for MCC beyond about :math:`n=2\cdot10^4` its squared numerator and denominator
    exceed :math:`2^{53}`, and equal values may then differ in the last bit and stay apart.

    References
    ----------
    Kivimäki et al. (2025), "Performance estimation in binary classification using calibrated
    confidence", arXiv:2505.05295 (the grid algorithm); Dervovic & Cashmore (2025), "Model
    Evaluation in the Dark", AISTATS (the exact limit distribution of PEMI).

    Examples
    --------
    >>> d = metric_distribution("precision", [1, 1, 0], [0.5, 0.5, 0.2])
    >>> d.values, d.probs
    (array([0. , 0.5, 1. ]), array([0.25, 0.5 , 0.25]))
    """
    metric = as_choice(metric, "metric", METRICS)
    zero_division = as_zero_division(zero_division)
    return metric_law(metric, label_rows(y_pred, p, labels), as_beta(beta), zero_division)


def _grid_of_rows(metric: str, rows: LabelRows, beta: float, zero_division: float) -> GridLaw:
    """The grid law of independent labels: one component, the two counts' Poisson-binomials."""
    tp, a = _count(rows.p_pos, rows.tp_known)
    fn, b = _count(rows.p_neg, rows.fn_known)
    return GridLaw(metric, rows.n_pos, rows.n_neg, tp, a, fn, b, np.ones(1), beta, zero_division)


def metric_law(metric: str, rows: LabelRows, beta: float,
               zero_division: float) -> MetricDistribution:
    """:func:`metric_distribution` without its checks, of rows split by :class:`LabelRows`.

    ``metric`` must be one of :data:`bayeval.metrics.METRICS`, ``beta`` a number >= 0,
    ``zero_division`` 0.0, 1.0 or NaN.

    Examples
    --------
    >>> rows = label_rows([1, 1, 0], [0.5, 0.5, 0.2], None)
    >>> metric_law("precision", rows, 1.0, 0.0).probs
    array([0.25, 0.5 , 0.25])
    """
    if REGISTRY[metric].one_count:
        return MetricDistribution.from_cells(metric, *_one_count(metric, rows), zero_division)
    return MetricDistribution.from_grid(_grid_of_rows(metric, rows, beta, zero_division))


def count_distribution(metric: str, n_pos: int, n_neg: int, tp: Any, a: Any, fn: Any, b: Any,
                       weights: Any = None, *, beta: float = 1.0,
                       zero_division: float = 0.0) -> MetricDistribution:
    r"""Exact law of a two-count metric from the laws of :math:`TP` and :math:`FN`.

    The counts are independent given a component :math:`j` of a mixture,
    :math:`P(TP=t, FN=f)=\sum_jw_j\,a_j(t)\,b_j(f)` (one component for independent labels;
    CBPE's noise models mix over their concentration). The law is lazy, as
    :func:`metric_distribution`'s: mean, sd, masses and the equal-tailed interval come from the
    grid without listing its support.

    Parameters
    ----------
    metric : str
        A metric of :data:`bayeval.metrics.METRICS` that depends on both counts (not accuracy,
        precision or NPV: their laws are one-dimensional).
    n_pos, n_neg : int
        Rows predicted positive and negative.
    tp, fn : array-like of int, shapes (r,) and (c,)
        The counts with probability (consecutive).
    a, b : array-like, shapes (J, r) and (J, c)
        Their probabilities per component (each row sums to 1); 1-D for one component.
    weights : array-like, shape (J,), optional
        Mixture weights, summing to 1 (default: one component).
    beta, zero_division
        As in :func:`metric_distribution`.

    Returns
    -------
    MetricDistribution

    Examples
    --------
    Two predicted positives with :math:`TP\in\{1, 2\}`, one predicted negative with
    :math:`FN\in\{0, 1\}`, equally likely: recall is 1/2, 2/3 or 1.

    >>> d = count_distribution("recall", 2, 1, [1, 2], [0.5, 0.5], [0, 1], [0.5, 0.5])
    >>> round(d.mean, 6), d.interval(0.5)
    (0.791667, (0.5, 1.0))
    >>> d.values.round(4), d.probs
    (array([0.5   , 0.6667, 1.    ]), array([0.25, 0.25, 0.5 ]))
    """
    metric = as_choice(metric, "metric", _TWO_COUNTS)
    return count_law(metric, n_pos, n_neg, tp, a, fn, b, weights, as_beta(beta),
                     as_zero_division(zero_division))


def count_law(metric: str, n_pos: int, n_neg: int, tp: Any, a: Any, fn: Any, b: Any,
              weights: Any, beta: float, zero_division: float) -> MetricDistribution:
    """:func:`count_distribution` without its checks, for arguments already checked.

    ``metric`` must be a two-count metric of :data:`bayeval.metrics.METRICS` (not one of
    accuracy, precision, NPV), ``beta`` a number >= 0, ``zero_division`` 0.0, 1.0 or NaN;
    ``weights`` may be None (one component).

    Examples
    --------
    >>> d = count_law("recall", 2, 1, [1, 2], [0.5, 0.5], [0, 1], [0.5, 0.5], None, 1.0, 0.0)
    >>> round(d.mean, 6)
    0.791667
    """
    a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
    weights = np.ones(1) if weights is None else np.asarray(weights, float)
    return MetricDistribution.from_grid(GridLaw(metric, int(n_pos), int(n_neg),
                                                np.asarray(tp, float), a, np.asarray(fn, float),
                                                b, weights, beta, zero_division))
