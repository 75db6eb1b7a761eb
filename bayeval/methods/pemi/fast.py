r"""PEMI's fast paths: imputation probabilities, PEMI draws, PEMI-Gauss and the exact laws.

Rows :math:`i\in\mathcal K` have known labels; the labels of the missing rows
:math:`i\in\overline{\mathcal K}` are independent :math:`Y_i\sim\mathcal B(p_i)`
(Dervovic & Cashmore, AISTATS 2025, Eq. 2). Every metric computed on the completed test set is
then a random variable :math:`\widehat Q_n^{(S)}`, the object of inference.

* :func:`imputation_probabilities`: :math:`p_i` from the user, from a calibration map fitted on
  labelled rows (:func:`fit_calibration`: Platt, isotonic, beta, scaling-binning;
  :mod:`bayeval.calibration`) or from a preset (``"half"``: :math:`\tfrac12`; ``"prevalence"``:
  the labelled rows' rate of positives);
* :func:`shift`: the MNAR shift :math:`\operatorname{logit}p_i^{\mathrm{mis}}=
  \operatorname{logit}p_i+\delta` (model M3 of :mod:`bayeval.methods.pemi.models`);
* :func:`simulate`: PEMI (Algorithm 1), :math:`B` completions drawn in chunks of whole matrices;
* :func:`gauss`: PEMI-Gauss (Algorithm 2) from the exact moments of :mod:`bayeval.confusion`,
  including the exact :math:`O(n\log n)` ROC-AUC moments; a normal mixture over :math:`\delta` when
  :math:`\delta` has a prior (:func:`normal_laws`, shared with the partitioned path);
* :func:`exact`: the exact PMFs of confusion-matrix metrics (PEMI as :math:`B\to\infty`);
* :func:`closed_form`: the ``closed_form`` Dataset of an Evaluation from those laws.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import scipy
import xarray as xr
from scipy import special

from bayeval.calibration import binned_error, make_calibrator
from bayeval.confusion import LabelRows, MetricDistribution, metric_law
from bayeval.confusion_moments import auc_count_moments, moments_of_rows, ratio_moments
from bayeval.deprecation import renamed_arguments
from bayeval.intervals import normal_interval
from bayeval.metrics import auc_value, is_undefined, metric_value

__all__ = [
    "DEFAULT",
    "PROBABILITY_SLACK",
    "FittedCalibration",
    "Options",
    "Rows",
    "closed_form",
    "delta_nodes",
    "exact",
    "fit_calibration",
    "gauss",
    "imputation_probabilities",
    "law",
    "logit_scores",
    "merge_laws",
    "mixture",
    "moments",
    "normal_laws",
    "p_undefined",
    "roc_auc_moments",
    "shift",
    "simulate",
    "undefined_probability",
]

#: label cells (draws x rows) per chunk of :func:`simulate`
CELLS = 1 << 22
#: Gauss-Hermite nodes of the normal mixture over a delta prior
N_NODES = 24
_EPS = 1e-12  # scores are clipped to [eps, 1 - eps] inside logits only


class Options(NamedTuple):
    r"""Metric conventions shared by every path.

    Attributes
    ----------
    ties : {"half", "one"}
        Weight of a tied positive-negative pair in ROC-AUC (scikit-learn's 1/2, or the paper's 1).
    zero_division : float
        Value of a metric whose denominator is 0 (0, 1 or NaN).
    beta : float
        :math:`\beta` of ``fbeta``.
    second_order : bool
        Second-order delta-method mean of the ratio metrics in PEMI-Gauss.

    Examples
    --------
    >>> Options(ties="one")
    Options(ties='one', zero_division=0.0, beta=1.0, second_order=True)
    """

    ties: str = "half"
    zero_division: float = 0.0
    beta: float = 1.0
    second_order: bool = True


DEFAULT = Options()


class Rows:
    r"""Validated test rows: raw ``scores``, ``y_pred`` (int8), ``labels`` (float, NaN: missing).

    ``order`` lists the missing rows, those predicted positive first: every matrix of imputed
    labels has its columns in this order, so that :math:`U` and :math:`V` are sums of slices.
    ``m1`` counts the missing rows predicted positive (:math:`m_1`; :math:`m_0=m-m_1`).

    Parameters
    ----------
    scores : numpy.ndarray of float, shape (n,)
        Raw scores (only ROC-AUC uses them).
    y_pred : numpy.ndarray of int8, shape (n,)
        0/1 predictions :math:`\psi_i`.
    labels : numpy.ndarray of float, shape (n,)
        0, 1 or NaN (missing). Not validated: :func:`bayeval.methods.pemi.api.pemi` checks inputs.

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> rows.n, rows.m, rows.m1, rows.order.tolist()
    (6, 2, 1, [1, 4])
    >>> rows.known_counts  # (TP_K, FP_K, FN_K, TN_K)
    (2, 1, 0, 1)
    >>> rows.split(np.array([0.8, 0.1])).p_neg  # p of the missing rows in order
    array([0.1])
    """

    def __init__(self, scores: np.ndarray, y_pred: np.ndarray, labels: np.ndarray):
        self.scores, self.y_pred, self.labels = scores, y_pred, labels
        self.missing = np.isnan(labels)
        pos = self.missing & (y_pred == 1)
        self.order = np.r_[np.flatnonzero(pos), np.flatnonzero(self.missing & (y_pred == 0))]
        self.m1 = int(pos.sum())

    @property
    def n(self) -> int:
        """Number of rows :math:`n`."""
        return self.labels.size

    @property
    def m(self) -> int:
        """Number of missing labels :math:`m`."""
        return self.order.size

    @cached_property
    def known_counts(self) -> tuple[int, int, int, int]:
        """(TP_K, FP_K, FN_K, TN_K) of the labelled rows (``labels == 1`` is False if missing)."""
        y, yp = self.labels == 1, self.y_pred == 1
        tp, pos, pred = (int(np.count_nonzero(x)) for x in (y & yp, y, yp))
        return tp, pred - tp - self.m1, pos - tp, self.n - self.m - pred + self.m1 - pos + tp

    def counts(self, u: Any, v: Any) -> tuple[Any, Any, Any, Any]:
        r"""Confusion counts of a completion with ``u`` positives among the missing rows
        predicted positive and ``v`` among those predicted negative (scalars or arrays).

        .. math:: TP=TP_K+U,\ FP=FP_K+m_1-U,\ FN=FN_K+V,\ TN=TN_K+m_0-V.

        Examples
        --------
        >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
        >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
        >>> rows.counts(1, 0)  # (TP, FP, FN, TN)
        (3, 1, 0, 2)
        """
        tp, fp, fn, tn = self.known_counts
        return tp + u, fp + self.m1 - u, fn + v, tn + self.m - self.m1 - v

    def split(self, q: np.ndarray) -> LabelRows:
        """The rows by prediction and label, ``q`` the p of the missing rows (in ``order``)."""
        (tp, fp, fn, tn), m1 = self.known_counts, self.m1
        return LabelRows(tp + fp + m1, fn + tn + self.m - m1, tp, fn, tn, q[:m1], q[m1:])

    def completed(self, p: np.ndarray) -> np.ndarray:
        """``p`` on the missing rows, the known labels elsewhere (the engine's input).

        Examples
        --------
        >>> s = np.array([0.9, 0.8, 0.3])
        >>> Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0])).completed(
        ...     np.full(3, 0.3))
        array([1. , 0.3, 0. ])
        """
        return np.where(self.missing, p, np.nan_to_num(self.labels))


# --------------------------------------------------------------------- imputation probabilities
def logit_scores(scores: np.ndarray) -> np.ndarray:
    r""":math:`\operatorname{logit}\operatorname{clip}(s,10^{-12},1-10^{-12})`.

    Examples
    --------
    >>> logit_scores(np.array([0.5, 1.0])).round(2)
    array([ 0.  , 27.63])
    """
    return special.logit(np.clip(scores, _EPS, 1.0 - _EPS))


def shift(p: Any, delta: Any) -> np.ndarray:
    r"""MNAR shift :math:`\sigma(\operatorname{logit}p+\delta)`; :math:`p\in\{0,1\}` stay fixed.

    Parameters
    ----------
    p : array-like of float in [0, 1]
        Imputation probabilities.
    delta : float or array-like
        Shift of the log-odds (broadcast against ``p``).

    Returns
    -------
    numpy.ndarray
        The shifted probabilities.

    Examples
    --------
    >>> shift([0.5, 0.2, 1.0], np.log(4.0)).round(4)
    array([0.8, 0.5, 1. ])
    """
    return special.expit(special.logit(np.asarray(p, dtype=float)) + delta)


#: how far outside [0, 1] a calibration map's prediction may round before it is refused
PROBABILITY_SLACK = 1e-9


class FittedCalibration(NamedTuple):
    r"""A calibration map fitted on labelled rows; its predictions must be probabilities.

    Attributes
    ----------
    calibrator : object
        The fitted map, with ``predict(scores)``.

    Examples
    --------
    >>> class Stretch:  # a map that leaves [0, 1]
    ...     def predict(self, scores):
    ...         return 2 * np.asarray(scores) - 0.5
    >>> FittedCalibration(Stretch()).predict(np.array([0.25, 0.5, 0.75])).tolist()
    [0.0, 0.5, 1.0]
    >>> FittedCalibration(Stretch()).predict(np.array([0.1, 0.9]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: calibration: Stretch.predict returned 2 value(s) outside [0, 1] (e.g. -0.3 ...
    """

    calibrator: Any

    def predict(self, scores: Any) -> np.ndarray:
        r""":math:`c(s)` at every score :math:`s`; a ValueError naming ``calibration`` for a
        value outside [0, 1] by more than :data:`PROBABILITY_SLACK` (clipped), NaN included."""
        p = np.asarray(self.calibrator.predict(scores), dtype=float).reshape(-1)
        size = np.size(scores)
        bad = ~((p >= -PROBABILITY_SLACK) & (p <= 1 + PROBABILITY_SLACK))
        if p.size != size or bad.any():
            name = type(self.calibrator).__name__
            what = (f"{p.size} values for {size} scores" if p.size != size else
                    f"{int(bad.sum())} value(s) outside [0, 1] (e.g. {p[bad][0]:.6g} at score "
                    f"{np.ravel(scores)[np.flatnonzero(bad)[0]]:.6g})")
            raise ValueError(f"calibration: {name}.predict returned {what}; a calibration map "
                             "must return one probability per score.")
        return np.clip(p, 0.0, 1.0)


def fit_calibration(calibration: Any, scores: np.ndarray, labels: np.ndarray
                    ) -> FittedCalibration:
    r"""The calibration map :math:`c` fitted on labelled rows (``scores``, 0/1 ``labels``).

    Parameters
    ----------
    calibration : str or object
        A name of :data:`bayeval.calibration.CALIBRATORS`, or an object with ``fit(scores,
        labels)`` (returning the fitted map) and ``predict(scores)``; checked by
        :func:`bayeval.methods.pemi.api.as_calibration`.
    scores, labels : numpy.ndarray
        The calibration rows.

    Returns
    -------
    FittedCalibration

    Examples
    --------
    >>> fitted = fit_calibration("platt", np.array([0.2, 0.4, 0.6, 0.8]), np.array([0, 1, 0, 1]))
    >>> fitted.predict(np.array([0.5])).round(3)
    array([0.5])
    """
    map_ = make_calibrator(calibration) if isinstance(calibration, str) else calibration
    return FittedCalibration(map_.fit(scores, labels))


@renamed_arguments(calibrator="calibration")
def imputation_probabilities(rows: Rows, *, p: Any = None, calibration: Any = "platt",
                             reference: tuple[np.ndarray, np.ndarray] | None = None,
                             fitted: FittedCalibration | None = None
                             ) -> tuple[np.ndarray, str, float]:
    r""":math:`p_i` for every row, where it came from, and the calibration error of the map.

    Parameters
    ----------
    rows : Rows
    p : array of float, "half" or "prevalence", optional
        Given probabilities (used as they are), or a preset: :math:`\tfrac12`, or the rate of
        positives of the calibration labels (the paper's MaxEnt choices).
    calibration : str or object
        A name of :data:`bayeval.calibration.CALIBRATORS` or an object with ``fit(scores,
        labels)`` and ``predict(scores)``; fitted on ``reference`` (scores, labels), else on the
        labelled test rows, and applied to the raw scores (:func:`fit_calibration`).
    reference : (scores, labels), optional
        Labelled calibration data.
    fitted : FittedCalibration, optional
        ``calibration`` already fitted on those rows (it is not refitted).

    Returns
    -------
    p, source, ece
        ``p`` (n,) in [0, 1]; ``source`` describes it; ``ece``:
        :func:`bayeval.calibration.ece` of the fitted map on its own calibration rows (in-sample,
        10 equal-width bins; NaN for given p and ``"half"``).

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> p, source, error = imputation_probabilities(rows, calibration="platt")
    >>> p[rows.order].round(3), source
    (array([0.763, 0.041]), 'platt calibrator fitted on 4 rows of the labelled test rows')
    >>> imputation_probabilities(rows, p="prevalence")[1]
    'p = prevalence of the calibration labels (0.5)'
    """
    if isinstance(p, np.ndarray):
        return p, "given p", np.nan
    if p == "half":
        return np.full(rows.n, 0.5), "p = 1/2", np.nan
    cal_scores, cal_labels = reference or (rows.scores[~rows.missing],
                                           rows.labels[~rows.missing].astype(np.int8))
    if p == "prevalence":
        rate = float(cal_labels.mean())
        return (np.full(rows.n, rate), f"p = prevalence of the calibration labels ({rate:.4g})",
                binned_error(np.full(cal_labels.size, rate), cal_labels, 10, "equal_width"))
    fitted = fitted or fit_calibration(calibration, cal_scores, cal_labels)
    name = calibration if isinstance(calibration, str) else type(calibration).__name__
    where = "reference data" if reference else "the labelled test rows"
    fitted_cal = fitted.predict(cal_scores)
    return (fitted.predict(rows.scores),
            f"{name} calibrator fitted on {len(cal_labels)} rows of {where}",
            binned_error(fitted_cal, cal_labels, 10, "equal_width"))


# ------------------------------------------------------------------------------- PEMI draws
@renamed_arguments(n_draws="draws")
def simulate(rows: Rows, metrics: tuple[str, ...], p_missing: Callable[[int, int], np.ndarray],
             draws: int, rng: np.random.Generator, opts: Options = DEFAULT) -> np.ndarray:
    r"""PEMI (Algorithm 1): metric values of ``draws`` completions, shape (draws, metrics).

    ``p_missing(start, stop)`` gives the :math:`p` of the missing rows (columns in
    ``rows.order``) for draws ``start:stop``: shape (m,) when shared, (stop - start, m) when each
    draw has its own (a posterior draw of the calibration map, or of :math:`\delta`). Each chunk
    draws a matrix :math:`\mathbf Y_{b,:}\sim\mathcal B(p)` at once; confusion-matrix metrics need
    only :math:`U_b=\sum_{\hat y=1}Y_{bi}` and :math:`V_b=\sum_{\hat y=0}Y_{bi}`, ROC-AUC the whole
    completed label vector (:func:`bayeval.metrics.roc_auc`, vectorised over the chunk).

    Parameters
    ----------
    rows : Rows
    metrics : tuple of str
        Metric names (``"roc_auc"`` included).
    p_missing : callable
        ``(start, stop) -> p`` of the missing rows, as above.
    draws : int
        Number of completions :math:`B`.
    rng : numpy.random.Generator
    opts : Options

    Returns
    -------
    numpy.ndarray, shape (draws, len(metrics))

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> p = np.array([0.5, 0.8, 0.5, 0.5, 0.1, 0.5])  # used on rows 1 and 4 only
    >>> values = simulate(rows, ("precision",), lambda start, stop: p[rows.order], 10_000,
    ...                   np.random.default_rng(0))
    >>> values.shape, round(float(values.mean()), 2)  # exact mean (2 + 0.8) / 4
    ((10000, 1), 0.7)
    """
    auc = "roc_auc" in metrics
    chunk = max(1, CELLS // max(rows.n if auc else rows.m, 1))
    template = np.nan_to_num(rows.labels).astype(np.int8)
    out = np.empty((draws, len(metrics)))
    for start in range(0, draws, chunk):
        stop = min(start + chunk, draws)
        y_mis = rng.random((stop - start, rows.m)) < p_missing(start, stop)
        u = np.count_nonzero(y_mis[:, : rows.m1], axis=1)
        v = np.count_nonzero(y_mis[:, rows.m1 :], axis=1)
        tp, fp, fn, tn = (np.asarray(c, float) for c in rows.counts(u, v))
        for j, metric in enumerate(metrics):
            if metric == "roc_auc":
                y = np.repeat(template[None, :], stop - start, axis=0)
                y[:, rows.order] = y_mis
                out[start:stop, j] = auc_value(y, rows.scores, opts.ties, opts.zero_division)
            else:
                out[start:stop, j] = metric_value(metric, tp, fp, fn, tn, opts.beta,
                                                  opts.zero_division)
    return out


# ------------------------------------------------------------------------------- PEMI-Gauss
def p_undefined(rows: Rows, p: np.ndarray, metric: str, beta: float = 1.0) -> float:
    r"""Probability that ``metric`` is undefined (denominator 0) on the completed test set.

    Every denominator is 0 only through :math:`N_{pp}=0`, :math:`N_{pn}=0` (fixed) or through no
    positive or no negative label at all, which needs every missing label 0 (probability
    :math:`\pi_0=\prod(1-p_i)`) or every one 1 (:math:`\pi_1=\prod p_i`); any other completion
    has both classes. So :math:`P=\pi_0u_0+\pi_1u_1+(1-\pi_0-\pi_1)u_{\mathrm{mix}}`, with
    :math:`u` whether the metric is undefined at each kind of completion.

    Parameters
    ----------
    rows : Rows
    p : numpy.ndarray, shape (n,)
        Imputation probabilities (read on the missing rows).
    metric : str
    beta : float
        :math:`\beta` of ``fbeta``.

    Returns
    -------
    float

    Examples
    --------
    No known positive: recall is undefined when both missing labels are 0,
    :math:`(1-0.5)(1-0.2)`:

    >>> s = np.array([0.9, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([0, np.nan, np.nan]))
    >>> round(p_undefined(rows, np.array([0.0, 0.5, 0.2]), "recall"), 12)
    0.4
    """
    q = p[rows.order]
    with np.errstate(divide="ignore"):
        pi0, pi1 = np.exp(np.log1p(-q).sum()), np.exp(np.log(q).sum())
    return undefined_probability(rows.known_counts, rows.m1, rows.m - rows.m1, pi0, pi1,
                                 metric, beta)


def undefined_probability(known_counts, m1: int, m0: int, pi0: float, pi1: float, metric: str,
                          beta: float = 1.0) -> float:
    r"""The :math:`\pi_0u_0+\pi_1u_1+(1-\pi_0-\pi_1)u_{\mathrm{mix}}` of :func:`p_undefined`,
    from counts.

    Parameters
    ----------
    known_counts : (TP, FP, FN, TN)
        Confusion counts of the labelled rows.
    m1, m0 : int
        Missing rows predicted positive and negative.
    pi0, pi1 : float
        Probabilities that every missing label is 0, or 1.
    metric : str
    beta : float
        :math:`\beta` of ``fbeta``.

    Returns
    -------
    float

    Examples
    --------
    :func:`p_undefined`'s example: recall is undefined when both missing labels are 0.

    >>> round(undefined_probability((0, 1, 0, 0), 1, 1, 0.4, 0.1, "recall"), 12)
    0.4
    """
    tp, fp, fn, tn = known_counts

    def undefined_at(u: int, v: int) -> bool:
        counts = np.array([tp + u, fp + m1 - u, fn + v, tn + m0 - v], float)
        return bool(is_undefined(metric, *counts, beta))

    if m1 + m0 == 0:
        return float(undefined_at(0, 0))
    mixed = (1, 0) if m1 else (0, 1)
    cases = [(pi0, (0, 0)), (pi1, (m1, m0)), (max(1.0 - pi0 - pi1, 0.0), mixed)]
    return float(sum(w * undefined_at(*uv) for w, uv in (cases[:2] if m1 + m0 == 1 else cases)))


def roc_auc_moments(p_undef: float, exact_moments: Callable[[], tuple[float, float]],
                    zero_division: float) -> tuple[float, float]:
    r"""ROC-AUC's PEMI-Gauss (mean, variance): ``exact_moments()``, unless every completion has
    a single class (``p_undef`` is 1), where ROC-AUC is ``zero_division`` with variance 0 (NaN
    for NaN).

    Parameters
    ----------
    p_undef : float
        Probability that ROC-AUC is undefined (:func:`p_undefined`).
    exact_moments : callable
        ``() -> (mean, variance)`` of ROC-AUC on the completed rows, evaluated only when needed.
    zero_division : float
        ROC-AUC's value with a single class.

    Returns
    -------
    mean, var : float

    Examples
    --------
    >>> roc_auc_moments(1.0, lambda: (0.8, 0.01), 0.0), roc_auc_moments(0.2, lambda: (0.8, 0.01),
    ...                                                                  0.0)
    ((0.0, 0.0), (0.8, 0.01))
    """
    if p_undef == 1.0:  # a single class in every completion
        return zero_division, np.nan if np.isnan(zero_division) else 0.0
    return exact_moments()


def moments(rows: Rows, p: np.ndarray, metric: str, opts: Options) -> tuple[float, float]:
    r"""PEMI-Gauss mean and variance of one metric at one p, from :mod:`bayeval.confusion`.

    Parameters
    ----------
    rows : Rows
    p : numpy.ndarray, shape (n,)
        Imputation probabilities (read on the missing rows).
    metric : str
    opts : Options

    Returns
    -------
    mean, var : float

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> p = np.array([0.5, 0.8, 0.5, 0.5, 0.1, 0.5])
    >>> [round(v, 4) for v in moments(rows, p, "precision", DEFAULT)]  # (2 + U) / 4
    [0.7, 0.01]
    """
    if metric == "roc_auc":
        tie, full = 0.5 if opts.ties == "half" else 1.0, rows.completed(p)
        return roc_auc_moments(
            p_undefined(rows, p, metric),
            lambda: ratio_moments(auc_count_moments(rows.scores, full, tie), opts.second_order),
            opts.zero_division)
    return moments_of_rows(metric, rows.split(p[rows.order]), opts.beta,
                           opts.zero_division, opts.second_order)


def delta_nodes(delta: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    r"""Gauss-Hermite rule for :math:`\int f(\delta)\,\mathcal N(\delta;\mu,s^2)\,d\delta`.

    One node with weight 1 when :math:`s=0` (a fixed shift); otherwise 24 probabilists'
    Gauss-Hermite nodes :math:`\mu+s\,x_k` with normalised weights, exact for polynomials in
    :math:`\delta` of degree up to 47.

    Parameters
    ----------
    delta : (mean, sd)
        :math:`(\mu, s)`, :math:`s\ge0`.

    Returns
    -------
    nodes, weights : numpy.ndarray

    Examples
    --------
    >>> nodes, weights = delta_nodes((1.0, 2.0))
    >>> round(float(weights @ nodes), 12), round(float(weights @ (nodes - 1) ** 2), 12)
    (1.0, 4.0)
    >>> delta_nodes((0.5, 0.0))
    (array([0.5]), array([1.]))
    """
    mu, sd = delta
    if sd == 0:
        return np.array([mu]), np.ones(1)
    x, w = special.roots_hermitenorm(N_NODES)
    return mu + sd * x, w / w.sum()


def mixture(means: np.ndarray, variances: np.ndarray, weights: np.ndarray,
            ci_prob: float) -> tuple[float, float, float, float]:
    r"""Mean, sd and equal-tailed interval of :math:`\sum_k w_k\,\mathcal N(\mu_k,\sigma_k^2)`.

    Mean :math:`\sum w_k\mu_k`, variance :math:`\sum w_k(\sigma_k^2+\mu_k^2)-\mu^2` (the law of
    total variance); the interval's ends solve :math:`F(t)=(1\mp p)/2` by Brent's method.

    Parameters
    ----------
    means, variances, weights : numpy.ndarray, shape (k,)
        Components :math:`\mu_k`, :math:`\sigma_k^2` and weights :math:`w_k` (summing to 1).
    ci_prob : float
        Interval level :math:`p`.

    Returns
    -------
    mean, sd, lower, upper : float

    Examples
    --------
    >>> [round(v, 4) for v in mixture(np.array([0.0, 1.0]), np.ones(2), np.full(2, 0.5), 0.95)]
    [0.5, 1.118, -1.6815, 2.6815]
    """
    mean = float(weights @ means)
    var = max(float(weights @ (variances + means**2)) - mean**2, 0.0)
    sds = np.maximum(np.sqrt(variances), np.finfo(float).tiny)  # sd 0: a step at the mean
    if means.size == 1 or var == 0.0:
        lo, hi = normal_interval(mean, np.sqrt(var), ci_prob)
        return mean, float(np.sqrt(var)), float(lo), float(hi)
    spread = means.min() - 10 * np.sqrt(var) - 1, means.max() + 10 * np.sqrt(var) + 1

    def cdf(t: float) -> float:
        with np.errstate(over="ignore", divide="ignore"):
            return float(weights @ special.ndtr((t - means) / sds))  # the normal CDF

    tail = (1 - ci_prob) / 2
    lo, hi = (scipy.optimize.brentq(lambda t, q=q: cdf(t) - q, *spread, xtol=1e-12)
              for q in (tail, 1 - tail))
    return mean, float(np.sqrt(var)), float(lo), float(hi)


def gauss(rows: Rows, p: np.ndarray, metrics: tuple[str, ...], *, delta: tuple[float, float],
          ci_prob: float, opts: Options) -> tuple[dict[str, tuple], list[str]]:
    r"""PEMI-Gauss (Algorithm 2): (mean, sd, lower, upper, p_undefined) per metric, and notes.

    :math:`\mathcal N(\mu,\sigma^2)` with :math:`\mu,\sigma^2` from :func:`metric_moments` and
    :func:`auc_moments` (the paper's §5, Theorems 2-3: exact for accuracy and precision, delta
    method for ratios);
    with a prior :math:`\delta\sim\mathcal N(\mu_\delta,s^2)` the normal mixture over
    :func:`delta_nodes`. ``p_undefined`` is at the prior mean of :math:`\delta`. For a ratio
    :math:`Z/W` of counts the delta method gives

    .. math:: \mu=\frac{\mu_Z}{\mu_W},\qquad
              \sigma^2=\frac{\mu_Z^2\sigma_W^2+\mu_W^2\sigma_Z^2-2\mu_Z\mu_W\,
              \mathrm{Cov}(Z,W)}{\mu_W^4},

    and the second-order mean adds :math:`-\mathrm{Cov}(Z,W)/\mu_W^2+\mu_Z\sigma_W^2/\mu_W^3`
    (``opts.second_order``).

    Parameters
    ----------
    rows : Rows
    p : numpy.ndarray, shape (n,)
        Imputation probabilities (read on the missing rows).
    metrics : tuple of str
    delta : (mean, sd)
        MNAR shift: fixed when ``sd`` is 0, else a normal prior.
    ci_prob : float
        Level of the equal-tailed interval.
    opts : Options

    Returns
    -------
    dict, list of str
        ``{metric: (mean, sd, lower, upper, p_undefined)}`` and warnings (a metric undefined
        with a probability strictly between 0 and 1).

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> p = np.array([0.5, 0.8, 0.5, 0.5, 0.1, 0.5])  # used on rows 1 and 4 only
    >>> out, notes = gauss(rows, p, ("precision", "roc_auc"), delta=(0.0, 0.0), ci_prob=0.95,
    ...                    opts=DEFAULT)
    >>> [round(v, 4) for v in out["precision"]]  # precision is exact: (2 + U) / 4
    [0.7, 0.1, 0.504, 0.896, 0.0]
    >>> [round(v, 4) for v in out["roc_auc"][:2]]
    [0.8341, 0.0973]
    """
    nodes, weights = delta_nodes(delta)
    ps = [shift(p, d) for d in nodes]
    return normal_laws(metrics, weights, lambda metric, k: moments(rows, ps[k], metric, opts),
                       lambda metric, k: p_undefined(rows, ps[k], metric, opts.beta), ci_prob)


def normal_laws(metrics: tuple[str, ...], weights: np.ndarray,
                moments_at: Callable[[str, int], tuple[float, float]],
                undefined_at: Callable[[str, int], float],
                ci_prob: float) -> tuple[dict[str, tuple], list[str]]:
    r"""PEMI-Gauss's laws from the moments at the nodes :math:`\delta_k` of :func:`delta_nodes`.

    Each metric's law is the mixture :math:`\sum_kw_k\mathcal N(\mu_k,\sigma_k^2)`
    (:func:`mixture`); its ``p_undefined`` is the one at the middle node (the prior mean of
    :math:`\delta`). The in-memory rows (:func:`gauss`) and the sums of partitioned rows give the
    moments; this assembles them.

    Parameters
    ----------
    metrics : tuple of str
    weights : numpy.ndarray, shape (k,)
        Weights of the nodes.
    moments_at : callable
        ``(metric, k) -> (mean, variance)`` at node ``k``.
    undefined_at : callable
        ``(metric, k) -> probability`` that the metric is undefined at node ``k``.
    ci_prob : float
        Level of the equal-tailed interval.

    Returns
    -------
    dict, list of str
        ``{metric: (mean, sd, lower, upper, p_undefined)}`` and warnings (a metric undefined
        with a probability strictly between 0 and 1).

    Examples
    --------
    >>> out, notes = normal_laws(("accuracy",), np.ones(1), lambda metric, k: (0.7, 0.01),
    ...                          lambda metric, k: 0.0, 0.95)
    >>> [round(v, 4) for v in out["accuracy"]], notes
    ([0.7, 0.1, 0.504, 0.896, 0.0], [])
    """
    out, notes = {}, []
    for metric in metrics:
        mv = np.array([moments_at(metric, k) for k in range(weights.size)])
        p_undef = undefined_at(metric, weights.size // 2)
        if 0.0 < p_undef < 1.0:
            notes.append(f"{metric} is undefined with probability {p_undef:.3g}; PEMI-Gauss "
                         "ignores that event: use method='exact' or 'impute' if it matters.")
        summary = (np.nan,) * 4 if np.isnan(mv).any() else mixture(mv[:, 0], mv[:, 1], weights,
                                                                   ci_prob)
        out[metric] = (*summary, p_undef)
    return out, notes


# ---------------------------------------------------------------------------------- exact
def merge_laws(metric: str, laws: list[MetricDistribution], weights: np.ndarray,
               zero_division: float) -> MetricDistribution:
    r"""The mixture :math:`\sum_kw_kP_k` of exact laws on the union of their supports.

    With ``zero_division`` NaN each law is conditioned on the metric being defined, so its
    weight becomes :math:`w_k(1-P_k(\text{undefined}))`.

    Parameters
    ----------
    metric : str
    laws : list of bayeval.confusion.MetricDistribution
        The laws :math:`P_k`.
    weights : numpy.ndarray
        Their weights :math:`w_k` (summing to 1).
    zero_division : float
        As in :class:`Options`.

    Returns
    -------
    bayeval.confusion.MetricDistribution

    Examples
    --------
    >>> from bayeval.confusion import metric_distribution
    >>> laws = [metric_distribution("accuracy", [1, 0], [q, 0.0]) for q in (0.2, 0.6)]
    >>> merged = merge_laws("accuracy", laws, np.array([0.5, 0.5]), 0.0)
    >>> merged.values.tolist(), merged.probs.round(12).tolist()
    ([0.5, 1.0], [0.6, 0.4])
    """
    undefined = np.array([law.p_undefined for law in laws])
    p_undef = float(weights @ undefined)
    if np.isnan(zero_division):
        weights = weights * (1.0 - undefined)
    keep = [k for k, law in enumerate(laws) if weights[k] > 0 and not np.isnan(law.values[0])]
    if not keep:
        return MetricDistribution(metric, np.full(1, np.nan), np.ones(1), p_undef, zero_division)
    values = np.concatenate([laws[k].values for k in keep])
    probs = np.concatenate([weights[k] * laws[k].probs for k in keep])
    support, index = np.unique(values, return_inverse=True)
    merged = np.bincount(index, weights=probs)
    return MetricDistribution(metric, support, merged / merged.sum(), p_undef, zero_division)


def law(rows: Rows, p: np.ndarray, metric: str, opts: Options) -> MetricDistribution:
    """The exact law of a confusion-matrix metric at one p.

    :func:`bayeval.confusion.metric_distribution` of the completed rows.

    Parameters
    ----------
    rows : Rows
    p : numpy.ndarray, shape (n,)
        Imputation probabilities (read on the missing rows).
    metric : str
    opts : Options

    Returns
    -------
    bayeval.confusion.MetricDistribution

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0]))
    >>> law(rows, np.full(3, 0.3), "precision", DEFAULT).probs.round(12).tolist()
    [0.7, 0.3]
    """
    return metric_law(metric, rows.split(p[rows.order]), opts.beta, opts.zero_division)


def exact(rows: Rows, p: np.ndarray, metrics: tuple[str, ...], *, delta: tuple[float, float],
          opts: Options) -> dict[str, MetricDistribution]:
    r"""Exact laws of confusion-matrix metrics (PEMI with :math:`B\to\infty`).

    Mixed over :func:`delta_nodes` when :math:`\delta` has a prior (one node: the engine's lazy
    law). :math:`U` and :math:`V` (the positives among the missing rows predicted positive and
    negative) are independent Poisson-binomials: the law of ``metric(rows.counts(U, V))``.

    Parameters
    ----------
    rows : Rows
    p : numpy.ndarray, shape (n,)
        Imputation probabilities (read on the missing rows).
    metrics : tuple of str
        Confusion-matrix metrics (not ``"roc_auc"``).
    delta : (mean, sd)
        MNAR shift: fixed when ``sd`` is 0, else a normal prior.
    opts : Options

    Returns
    -------
    dict of str to bayeval.confusion.MetricDistribution
        Support ``values``, ``probs``, ``mean``, ``sd``, ``p_undefined`` and ``interval()``.

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> p = np.array([0.5, 0.8, 0.5, 0.5, 0.1, 0.5])  # used on rows 1 and 4 only
    >>> law = exact(rows, p, ("precision",), delta=(0.0, 0.0), opts=DEFAULT)["precision"]
    >>> law.values.tolist(), law.probs.round(12).tolist()  # U ~ Bernoulli(0.8)
    ([0.5, 0.75], [0.2, 0.8])
    """
    nodes, weights = delta_nodes(delta)
    split = [rows.split(shift(p[rows.order], d)) for d in nodes]
    laws = {metric: [metric_law(metric, r, opts.beta, opts.zero_division) for r in split]
            for metric in metrics}  # merging one law would list its support
    return {metric: one[0] if nodes.size == 1 else merge_laws(metric, one, weights,
                                                              opts.zero_division)
            for metric, one in laws.items()}


def closed_form(metrics: tuple[str, ...], laws: dict[str, MetricDistribution],
                normal: dict[str, tuple], *, ci_prob: float, ci_kind: str) -> xr.Dataset:
    r"""The ``closed_form`` Dataset over ``metric``: exact laws and normal (mixture) laws.

    Variables ``mean``, ``sd``, ``lower``, ``upper``, ``interval_mass`` (the exact mass of the
    interval; ``ci_prob`` for normal laws), ``p_undefined``; when every metric has an exact law,
    its PMF as ``pmf_value``/``pmf_prob`` over ``support`` (NaN-padded). Exact intervals are of
    ``ci_kind`` and hold at least ``ci_prob``; normal ones are equal-tailed.

    Parameters
    ----------
    metrics : tuple of str
    laws : dict of str to bayeval.confusion.MetricDistribution
        Exact laws (:func:`exact`), for the metrics not in ``normal``.
    normal : dict of str to tuple
        ``(mean, sd, lower, upper, p_undefined)`` of normal laws (:func:`gauss`).
    ci_prob, ci_kind : float, {"eti", "hdi"}

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> cf = closed_form(("accuracy",), {}, {"accuracy": (0.7, 0.1, 0.5, 0.9, 0.0)},
    ...                  ci_prob=0.95, ci_kind="eti")
    >>> cf["interval_mass"].values.tolist()
    [0.95]
    """
    rows_out = []
    for metric in metrics:
        if metric in normal:
            rows_out.append((*normal[metric][:4], ci_prob, normal[metric][4]))
            continue
        d = laws[metric]
        if np.isnan(d.values).all():
            rows_out.append((np.nan,) * 5 + (d.p_undefined,))
            continue
        lo, hi = d.interval_ends(ci_prob, ci_kind)
        rows_out.append((d.mean, d.sd, lo, hi, d.mass(lo, hi), d.p_undefined))
    arr = np.array(rows_out, dtype=float)
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined")
    ds = xr.Dataset({k: ("metric", arr[:, j]) for j, k in enumerate(names)},
                    coords={"metric": list(metrics)})
    if normal:
        return ds
    size = max(laws[m].values.size for m in metrics)
    values, probs = np.full((len(metrics), size), np.nan), np.full((len(metrics), size), np.nan)
    for j, metric in enumerate(metrics):
        k = laws[metric].values.size
        values[j, :k], probs[j, :k] = laws[metric].values, laws[metric].probs
    return ds.assign(pmf_value=(("metric", "support"), values),
                     pmf_prob=(("metric", "support"), probs))
