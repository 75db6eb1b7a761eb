r"""Calibrators of binary-classifier scores and their calibration error.

A calibrator maps a raw positive-class score :math:`s` to :math:`\hat p(s)\approx P(Y=1\mid s)`.
All share one small interface, ``fit(scores, labels) -> self`` and ``predict(scores)``:

* :class:`Isotonic`: the non-decreasing least-squares fit (pool-adjacent-violators), linearly
  interpolated between its steps and clipped outside them, as scikit-learn (and NannyML) do;
* :class:`Platt`: :math:`\hat p=\sigma(a\,\mathrm{logit}\,s+b)` by maximum likelihood
  (Platt 1999);
* :class:`BetaCalibration`: :math:`\mathrm{logit}\,\hat p=a\ln s-b\ln(1-s)+c` with
  :math:`a,b\ge0` (Kull, Silva Filho & Flach 2017), which contains the identity and Platt's
  family on the logit scale;
* :class:`ScalingBinning`: Platt, then the mean Platt output of equal-mass bins (Kumar, Liang &
  Ma 2019; used by Dervovic & Cashmore 2025), at most ``n_bins`` distinct values;
* :class:`Identity`: no calibration;
* :class:`SplitAtThreshold`: one calibrator per side of the decision threshold, so that a
  calibrated value never mixes predicted classes (class-conditional calibration,
  Kivimäki et al. 2025).

:func:`select_calibrator` fits candidates on held-out folds of labelled data and keeps the one
with the lowest out-of-fold calibration error, the identity unless another is strictly better
(NannyML's rule, generalised to several candidates). :func:`calibration_error` is the binned
calibration error: :func:`ece` with equal-width bins, :func:`ace` with equal-count ("adaptive")
bins as in the CBPE paper.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from bayeval.validation import (
    as_array,
    as_binary,
    as_choice,
    as_positive_int,
    as_scores,
    as_seed,
    check_same_length,
)

__all__ = [
    "CALIBRATORS",
    "SIMPLICITY",
    "BetaCalibration",
    "Calibrator",
    "Identity",
    "Isotonic",
    "Platt",
    "ScalingBinning",
    "SplitAtThreshold",
    "ace",
    "binned_error",
    "calibration_error",
    "cross_fitted",
    "ece",
    "make_calibrator",
    "select_calibrator",
    "stratified_folds",
]

#: scores are clipped to [_EPS, 1 - _EPS] inside logarithms and logits only
_EPS = 1e-12
#: ridge on the logistic coefficients, relative to the number of rows: a finite optimum on
#: separable data, and no visible shrinkage otherwise (scikit-learn's C = 1e10 in Kumar et al.)
_RIDGE = 1e-10


def _labelled(scores: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    s, y = as_scores(scores, "scores"), as_binary(labels, "labels")
    check_same_length(scores=s, labels=y)
    return s, y


def _split_sizes(n: int, parts: int) -> np.ndarray:
    """Sizes of ``np.array_split`` of n items into min(parts, n) near-equal contiguous groups."""
    parts = min(parts, n)
    sizes = np.full(parts, n // parts)
    sizes[: n % parts] += 1
    return sizes


def _logit(s: np.ndarray) -> np.ndarray:
    return special.logit(np.clip(s, _EPS, 1 - _EPS))


def _newton(features: np.ndarray, y: np.ndarray, start: np.ndarray,
            weights: np.ndarray | None = None) -> np.ndarray:
    """Minimise the (weighted) mean log-loss plus the ridge by Newton's method with step
    halving."""
    n, k = features.shape
    w_row = np.full(n, 1.0 / n) if weights is None else weights / weights.sum()

    def loss(w):
        z = features @ w
        return w_row @ (np.logaddexp(0.0, z) - y * z) + 0.5 * _RIDGE * (w @ w)

    w, value = start.astype(float), loss(start)
    for _ in range(200):
        p = special.expit(features @ w)
        grad = features.T @ (w_row * (p - y)) + _RIDGE * w
        hess = (features.T * (w_row * p * (1 - p))) @ features + _RIDGE * np.eye(k)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while (new := loss(w - t * step)) > value and t > 1e-12:
            t /= 2
        w, value = w - t * step, min(new, value)
        if np.max(np.abs(t * step)) <= 1e-12 * (1.0 + np.max(np.abs(w))):
            break
    return w


def _logistic_mle(features: np.ndarray, labels: np.ndarray, start: list[float],
                  nonnegative: tuple[int, ...] = (),
                  weights: np.ndarray | None = None) -> np.ndarray:
    r"""Coefficients :math:`w` of :math:`P(Y=1)=\sigma(Xw)`, maximum likelihood (tiny ridge).

    ``features`` holds the intercept column; Newton's method starts at ``start`` (the identity
    map). Coefficients listed in ``nonnegative`` that come out negative are fixed at 0 and the
    others refitted, the most negative first (Kull et al.'s procedure for beta calibration).
    ``weights`` weight the rows' log-likelihoods.
    """
    y = labels.astype(float)
    start = np.asarray(start, dtype=float)
    free = list(range(features.shape[1]))
    while True:
        w = np.zeros(start.size)
        w[free] = _newton(features[:, free], y, start[free], weights)
        negative = [j for j in nonnegative if j in free and w[j] < 0]
        if not negative:
            return w
        free.remove(min(negative, key=lambda j: w[j]))


class Calibrator(ABC):
    """Base class: ``fit(scores, labels)`` returns the calibrator, ``predict(scores)`` maps.

    Subclasses implement ``_fit(s, y)`` and ``_predict(s)`` on validated numpy arrays.

    Attributes
    ----------
    name : str
        Key of the calibrator in :data:`CALIBRATORS`.
    fitted : bool
        Whether :meth:`fit` has run.

    Examples
    --------
    A calibrator that shrinks every score halfway to the base rate:

    >>> class Shrink(Calibrator):
    ...     name = "shrink"
    ...     def _fit(self, s, y):
    ...         self.rate_ = y.mean()
    ...     def _predict(self, s):
    ...         return (s + self.rate_) / 2
    >>> Shrink().fit([0.2, 0.4, 0.9], [0, 1, 1]).predict([0.2, 0.9])
    array([0.43333333, 0.78333333])
    """

    name = "calibrator"

    def __init__(self) -> None:
        self.fitted = False

    def fit(self, scores: Any, labels: Any, sample_weight: Any = None) -> Calibrator:
        """Fit on scores in [0, 1] and binary labels (one per score).

        Parameters
        ----------
        scores : array-like, shape (n,)
            Raw positive-class scores in [0, 1].
        labels : array-like, shape (n,)
            Binary labels.
        sample_weight : array-like, shape (n,), optional
            Non-negative row weights (the built-in calibrators).

        Returns
        -------
        Calibrator
            ``self``, fitted.

        Raises
        ------
        ValueError
            For scores outside [0, 1], non-binary labels, weights that are negative or not
            finite, or a length mismatch.

        Examples
        --------
        >>> Platt().fit([0.2, 0.3, 0.6, 0.8, 0.4, 0.7], [0, 0, 1, 1, 1, 0]).fitted
        True
        """
        s, y = _labelled(scores, labels)
        if sample_weight is None:
            return self._fitted(s, y)
        w = as_array(sample_weight, "sample_weight", dtype=float)
        check_same_length(scores=s, sample_weight=w)
        if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
            raise ValueError("sample_weight must be finite and non-negative with a positive "
                             "sum.")
        return self._fitted(s, y, w)

    def _fitted(self, s: np.ndarray, y: np.ndarray,
                weights: np.ndarray | None = None) -> Calibrator:
        """``self`` fitted on validated scores and labels (rows weighted by ``weights``, which
        the built-in calibrators accept)."""
        if weights is None:
            self._fit(s, y)
        else:
            self._fit(s, y, weights)
        self.fitted = True
        return self

    def predict(self, scores: Any) -> np.ndarray:
        r"""Calibrated probabilities :math:`\hat p(s)` of the positive class, one per score.

        Parameters
        ----------
        scores : array-like, shape (n,)
            Raw scores in [0, 1].

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValueError
            If the calibrator is not fitted, or for scores outside [0, 1].

        Examples
        --------
        >>> cal = Isotonic().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1])
        >>> cal.predict([0.05, 0.5, 0.95])  # clipped outside the fitted range
        array([0. , 0.5, 1. ])
        """
        if not self.fitted:
            raise ValueError(f"this {type(self).__name__} is not fitted; call fit(scores, "
                             "labels) first.")
        return self._predict(as_scores(scores, "scores"))

    def calibrated(self, s: np.ndarray) -> np.ndarray:
        """:meth:`predict` without its checks, for a fitted calibrator and a validated float
        array of scores in [0, 1].

        Examples
        --------
        >>> Isotonic().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1]).calibrated(np.array([0.5]))
        array([0.5])
        """
        return self._predict(s)

    @abstractmethod
    def _fit(self, s: np.ndarray, y: np.ndarray) -> None:
        """Fit on validated scores and labels (built-ins also take row ``weights``)."""

    @abstractmethod
    def _predict(self, s: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of validated scores."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Identity(Calibrator):
    """No calibration: :math:`\\hat p(s)=s`.

    Examples
    --------
    >>> Identity().fit([0.1, 0.9], [0, 1]).predict([0.3, 0.7])
    array([0.3, 0.7])
    """

    name = "none"

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        pass

    def _predict(self, s: np.ndarray) -> np.ndarray:
        return s.copy()


class Isotonic(Calibrator):
    r"""Isotonic regression of the labels on the scores.

    The fit is :math:`\min_{\hat p\ \text{non-decreasing}}\sum_i(y_i-\hat p(s_i))^2`; between
    its steps it is linearly interpolated, outside them clipped (scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")``, the calibrator of NannyML).

    Examples
    --------
    >>> Isotonic().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1]).predict([0.1, 0.5, 0.9])
    array([0. , 0.5, 1. ])
    """

    name = "isotonic"

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Pool-adjacent-violators on the distinct scores, weighted by their counts (or summed
        row weights; distinct scores of zero weight are left out)."""
        from scipy.optimize import isotonic_regression

        if not (s[1:] >= s[:-1]).all():
            order = np.argsort(s)
            s, y = s[order], y[order]
            weights = None if weights is None else weights[order]
        y = y.astype(float)
        if weights is None and (s[1:] > s[:-1]).all():  # distinct scores: each is its own row
            x, rates, counts = s, y, np.ones(s.size)
        else:
            first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
            if weights is None:
                counts = np.diff(np.r_[first, s.size]).astype(float)
                sums = np.add.reduceat(y, first)
            else:
                counts = np.add.reduceat(weights, first)
                sums = np.add.reduceat(weights * y, first)
                first, sums, counts = first[counts > 0], sums[counts > 0], counts[counts > 0]
            x, rates = s[first], sums / counts
        fitted = isotonic_regression(rates, weights=counts).x  # rates: in [0, 1]
        step = fitted[1:] != fitted[:-1]  # the ends of each constant run define the map
        keep = np.r_[True, step] | np.r_[step, True]
        self.x_, self.y_ = x[keep], fitted[keep]

    def _predict(self, s: np.ndarray) -> np.ndarray:
        return np.interp(s, self.x_, self.y_)


class Platt(Calibrator):
    r"""Platt scaling on the logit scale: :math:`\hat p(s)=\sigma(a\,\mathrm{logit}(s)+b)`.

    :math:`(a, b)` maximise the Bernoulli likelihood (a ridge of 1e-10 keeps separable data
    finite); scores are clipped to :math:`[10^{-12}, 1-10^{-12}]` inside the logit.
    Attributes ``a_``, ``b_``.

    Examples
    --------
    >>> cal = Platt().fit([0.2, 0.3, 0.6, 0.8, 0.4, 0.7], [0, 0, 1, 1, 1, 0])
    >>> round(cal.a_, 4)
    1.1413
    >>> cal.predict([0.2, 0.5, 0.8]).round(4)
    array([0.1705, 0.5   , 0.8295])
    """

    name = "platt"

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        coef = _logistic_mle(self.features(s), y, [1.0, 0.0], weights=weights)
        self.a_, self.b_ = (float(v) for v in coef)

    @staticmethod
    def features(s: np.ndarray) -> np.ndarray:
        r"""The columns :math:`(\mathrm{logit}\,s, 1)` of the logistic regression."""
        return np.column_stack([_logit(s), np.ones(s.size)])

    @property
    def coef_(self) -> np.ndarray:
        return np.array([self.a_, self.b_])

    def _predict(self, s: np.ndarray) -> np.ndarray:
        return special.expit(self.a_ * _logit(s) + self.b_)


class BetaCalibration(Calibrator):
    r"""Beta calibration: :math:`\mathrm{logit}\,\hat p(s)=a\ln s-b\ln(1-s)+c`, :math:`a,b\ge0`.

    The calibration map of two Beta class-conditional score densities (Kull et al. 2017). It
    contains the identity (:math:`a=b=1, c=0`) and, with :math:`a=b`, Platt scaling of the
    logit; :math:`a,b\ge0` keeps it non-decreasing. Maximum likelihood; a coefficient that
    comes out negative is fixed at 0 and the others refitted, as the authors do.
    Attributes ``a_``, ``b_``, ``c_``.

    Examples
    --------
    Scores that overstate :math:`P(Y=1\mid s)=s^2`:

    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(1000)
    >>> cal = BetaCalibration().fit(s, rng.random(1000) < s**2)
    >>> round(cal.a_, 2), round(cal.b_, 2), round(cal.c_, 2)
    (1.14, 1.34, -1.2)
    >>> cal.predict([0.25, 0.5, 0.75]).round(2)  # truth 0.06, 0.25, 0.56
    array([0.08, 0.26, 0.58])
    """

    name = "beta"

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        coef = _logistic_mle(self.features(s), y, [1.0, 1.0, 0.0], nonnegative=(0, 1),
                             weights=weights)
        self.a_, self.b_, self.c_ = (float(v) for v in coef)

    @staticmethod
    def features(s: np.ndarray) -> np.ndarray:
        r"""The columns :math:`(\ln s, -\ln(1-s), 1)` of the logistic regression."""
        c = np.clip(s, _EPS, 1 - _EPS)
        return np.column_stack([np.log(c), -np.log1p(-c), np.ones(s.size)])

    @property
    def coef_(self) -> np.ndarray:
        return np.array([self.a_, self.b_, self.c_])

    def _predict(self, s: np.ndarray) -> np.ndarray:
        return special.expit(self.features(s) @ self.coef_)


class ScalingBinning(Calibrator):
    r"""Scaling-binning (Kumar et al. 2019): Platt scaling, then equal-mass bins of its outputs.

    On the fitting data, the Platt outputs :math:`g_j` are sorted and split into ``n_bins``
    near-equal contiguous groups; an edge lies midway between the last value of a group and the
    first of the next, the last edge is 1 (duplicates removed). A bin's value is the **mean of
    the Platt outputs** in it (not of the labels); an empty bin takes the midpoint of its edges.
    :math:`\hat p(s)=\text{value}[\min\{m: g(s)\le e_m\}]`, so at most ``n_bins`` values.

    Parameters
    ----------
    n_bins : int
        Number of bins (10 in the paper and the reference library).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(500)
    >>> cal = ScalingBinning(n_bins=5).fit(s, rng.random(500) < s)
    >>> np.unique(cal.predict(s)).size
    5
    """

    name = "scaling_binning"

    def __init__(self, n_bins: int = 10) -> None:
        super().__init__()
        self.n_bins = as_positive_int(n_bins, "n_bins")

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        """With row weights, the groups are equal-weight instead of equal-count."""
        self.platt_ = Platt()._fitted(s, y, weights)
        order = np.argsort(self.platt_._predict(s), kind="stable")
        g = self.platt_._predict(s)[order]
        if weights is None:
            weights = np.ones(g.size)
            firsts = np.cumsum(_split_sizes(g.size, self.n_bins))[:-1]  # first of groups 2..
        else:
            weights = weights[order]
            cum = np.cumsum(weights)
            firsts = np.searchsorted(cum, cum[-1] * np.arange(1, self.n_bins) / self.n_bins,
                                     side="right")
            firsts = np.unique(firsts[(firsts > 0) & (firsts < g.size)])
        self.edges_ = np.unique(np.r_[(g[firsts - 1] + g[firsts]) / 2, 1.0])
        which = np.searchsorted(self.edges_, g, side="left")
        sums = np.bincount(which, weights=weights * g, minlength=self.edges_.size)
        counts = np.bincount(which, weights=weights, minlength=self.edges_.size)
        midpoints = (self.edges_ + np.r_[0.0, self.edges_[:-1]]) / 2
        self.values_ = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), midpoints)

    def _predict(self, s: np.ndarray) -> np.ndarray:
        return self.values_[np.searchsorted(self.edges_, self.platt_._predict(s), side="left")]

    def __repr__(self) -> str:
        return f"ScalingBinning(n_bins={self.n_bins})"


CALIBRATORS: dict[str, type[Calibrator]] = {
    cls.name: cls for cls in (Identity, Isotonic, Platt, BetaCalibration, ScalingBinning)}
"""The calibrators by name: ``none``, ``isotonic``, ``platt``, ``beta``, ``scaling_binning``."""


class SplitAtThreshold(Calibrator):
    r"""One calibrator per predicted class: scores below and at-or-above ``threshold``.

    A calibrator pooled across the threshold can give the same value to rows of both predicted
    classes (an isotonic block straddling the threshold), so that
    :math:`P(Y=1\mid\hat Y, \hat p)\ne\hat p`; fitting each side on its own keeps class-conditional
    calibration (Kivimäki et al. 2025). A side whose labels hold a single class (or no row) is
    left uncalibrated.

    Parameters
    ----------
    name : str
        A key of :data:`CALIBRATORS`.
    threshold : float
        The decision threshold on the raw scores (:math:`\hat y=1` iff :math:`s\ge t`).

    Examples
    --------
    Pooled, isotonic regression gives 0.5 to the four middle rows, two on each side of the
    threshold; split, each side keeps its own order:

    >>> s, y = [0.2, 0.4, 0.45, 0.55, 0.6, 0.8], [0, 1, 1, 0, 0, 1]
    >>> Isotonic().fit(s, y).predict(s)
    array([0. , 0.5, 0.5, 0.5, 0.5, 1. ])
    >>> SplitAtThreshold("isotonic", threshold=0.5).fit(s, y).predict(s)
    array([0., 1., 1., 0., 0., 1.])
    """

    def __init__(self, name: str, threshold: float = 0.5) -> None:
        super().__init__()
        self.base = name if name in CALIBRATORS else as_choice(name, "name", CALIBRATORS)
        self.name = self.base
        self.threshold = float(threshold)

    def _sides(self, s: np.ndarray) -> tuple[slice | np.ndarray, slice | np.ndarray]:
        """The rows below and at or above the threshold: slices of sorted scores, else masks."""
        if (s[1:] >= s[:-1]).all():
            cut = int(np.searchsorted(s, self.threshold))
            return slice(0, cut), slice(cut, s.size)
        return s < self.threshold, s >= self.threshold

    def _fit(self, s: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        self.sides_ = []
        for side in self._sides(s):
            ys = y[side]
            two_classes = ys.size > 0 and ys.min() != ys.max()
            cal = CALIBRATORS[self.base]() if two_classes else Identity()
            self.sides_.append(cal._fitted(s[side], ys,
                                           None if weights is None else weights[side]))

    def _predict(self, s: np.ndarray) -> np.ndarray:
        out = np.empty_like(s)
        for cal, side in zip(self.sides_, self._sides(s), strict=True):
            part = s[side]
            if part.size:
                out[side] = cal._predict(part)
        return out

    def __repr__(self) -> str:
        return f"SplitAtThreshold({self.base!r}, threshold={self.threshold:g})"


def make_calibrator(name: str, threshold: float | None = None) -> Calibrator:
    """An unfitted calibrator by name; split at ``threshold`` unless it is None.

    Parameters
    ----------
    name : str
        A key of :data:`CALIBRATORS`.
    threshold : float, optional
        Decision threshold: one calibrator per side (:class:`SplitAtThreshold`); ignored for
        ``"none"``.

    Returns
    -------
    Calibrator
        Not fitted.

    Examples
    --------
    >>> make_calibrator("isotonic", threshold=0.5)
    SplitAtThreshold('isotonic', threshold=0.5)
    """
    return _make(as_choice(name, "calibration", CALIBRATORS), threshold)


def _make(name: str, threshold: float | None) -> Calibrator:
    """:func:`make_calibrator` of a valid name."""
    if threshold is None or name == "none":
        return CALIBRATORS[name]()
    return SplitAtThreshold(name, threshold)


# ---------------------------------------------------------------------------------------------
# calibration error


BINNINGS = ("equal_count", "equal_width")
KINDS = ("positive", "top_label")


def calibration_error(scores: Any, labels: Any, *, n_bins: int = 10,
                      binning: str = "equal_count", kind: str = "positive") -> float:
    r"""Binned calibration error :math:`\sum_m\frac{|B_m|}{n}\,|A_m-C_m|`.

    Parameters
    ----------
    scores : array-like of float in [0, 1]
        Positive-class probabilities.
    labels : array-like of 0/1
    n_bins : int
        Number of bins :math:`M`.
    binning : {"equal_count", "equal_width"}
        ``equal_count``: the rows sorted by score, split into :math:`M` near-equal groups (ACE,
        and NannyML's ECE); ``equal_width``: :math:`[0,\frac1M),\dots,[\frac{M-1}M,1]`, empty
        bins skipped (the classic ECE).
    kind : {"positive", "top_label"}
        ``positive``: :math:`A_m` the mean label and :math:`C_m` the mean score in bin
        :math:`m` (Definition 1 of Kivimäki et al. 2025); ``top_label``: :math:`A_m` the mean of
        :math:`\mathbb 1[y=\hat y]` with :math:`\hat y=\mathbb 1[s\ge\frac12]` and :math:`C_m`
        the mean of :math:`\max(s,1-s)`, binned by that confidence.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> calibration_error([0.25, 0.25, 0.75, 0.75], [0, 0, 1, 1], n_bins=2)
    0.25
    """
    s, y = _labelled(scores, labels)
    n_bins = as_positive_int(n_bins, "n_bins")
    binning = as_choice(binning, "binning", BINNINGS)
    return binned_error(s, y, n_bins, binning, as_choice(kind, "kind", KINDS))


def binned_error(s: np.ndarray, y: np.ndarray, n_bins: int = 10, binning: str = "equal_count",
                 kind: str = "positive") -> float:
    """:func:`calibration_error` without its checks, for arguments already checked.

    ``s`` must be a float numpy array in [0, 1], ``y`` 0/1 labels of its length, ``n_bins`` a
    positive int, ``binning`` one of :data:`BINNINGS` and ``kind`` one of :data:`KINDS`.
    ``binned_error(s, y, 20)`` is :func:`ace`.

    Examples
    --------
    >>> binned_error(np.array([0.25, 0.25, 0.75, 0.75]), np.array([0, 0, 1, 1]), 2)
    0.25
    """
    if kind == "top_label":
        y = (y == (s >= 0.5)).astype(np.int8)
        s = np.maximum(s, 1 - s)
    if binning == "equal_count":
        sizes = _split_sizes(s.size, int(n_bins))
        if (s[1:] >= s[:-1]).all():  # sorted: the bins are consecutive rows
            bins = np.repeat(np.arange(sizes.size), sizes)
        else:
            bins = np.empty(s.size, dtype=np.int64)
            order = np.argsort(s)
            ranked = s[order]
            # ties are split in row order (a stable sort's), which matters only for the runs
            # of equal scores that a bin edge cuts
            edges = np.cumsum(sizes)[:-1]
            for edge in edges[ranked[edges - 1] == ranked[edges]]:
                run = slice(np.searchsorted(ranked, ranked[edge], side="left"),
                            np.searchsorted(ranked, ranked[edge], side="right"))
                order[run] = np.sort(order[run])
            bins[order] = np.repeat(np.arange(sizes.size), sizes)
    else:
        bins = np.minimum((s * n_bins).astype(np.int64), int(n_bins) - 1)
    gap = np.bincount(bins, weights=y - s)
    return float(np.abs(gap).sum() / s.size)


def ece(scores: Any, labels: Any, *, n_bins: int = 10, kind: str = "positive") -> float:
    r"""Expected calibration error: :func:`calibration_error` with equal-width bins.

    :math:`\mathrm{ECE}=\sum_m\frac{|B_m|}{n}|A_m-C_m|` over the non-empty bins
    :math:`B_m=\{i: s_i\in[\frac{m-1}M,\frac mM)\}` (the last one closed).

    Parameters
    ----------
    scores, labels, n_bins, kind
        As in :func:`calibration_error`.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    Bin [0, 0.5) holds 0.1, 0.2, 0.3 with mean label 1/3 (gap 0.133), bin [0.5, 1] holds 0.9
    with label 1 (gap 0.1):

    >>> ece([0.1, 0.2, 0.3, 0.9], [0, 1, 0, 1], n_bins=2)
    0.125
    """
    return calibration_error(scores, labels, n_bins=n_bins, binning="equal_width", kind=kind)


def ace(scores: Any, labels: Any, *, n_bins: int = 20, kind: str = "positive") -> float:
    r"""Adaptive calibration error (the CBPE paper's Eq. 1, 20 bins): equal-count bins.

    :math:`\mathrm{ACE}=\sum_m\frac{|B_m|}{n}|A_m-C_m|` with the rows sorted by score and
    split into :math:`M` near-equal groups :math:`B_m`.

    Parameters
    ----------
    scores, labels, n_bins, kind
        As in :func:`calibration_error`.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    The bins are {0.1, 0.2} (mean label 1/2, mean score 0.15) and {0.3, 0.9} (1/2 and 0.6):

    >>> round(ace([0.1, 0.2, 0.3, 0.9], [0, 1, 0, 1], n_bins=2), 6)
    0.225
    """
    return calibration_error(scores, labels, n_bins=n_bins, binning="equal_count", kind=kind)


# ---------------------------------------------------------------------------------------------
# selection on held-out folds


def stratified_folds(y: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per row, stratified: each class's rows shuffled and dealt round-robin from a
    random fold.

    Examples
    --------
    >>> f = stratified_folds(np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]), 3, np.random.default_rng(0))
    >>> [sorted(f[3 * k:3 * k + 3].tolist()) for k in range(3)]
    [[0, 1, 2], [0, 1, 2], [0, 1, 2]]
    """
    fold = np.empty(y.size, dtype=np.int64)
    for cls in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == cls))
        fold[rows] = (np.arange(rows.size) + rng.integers(n_folds)) % n_folds
    return fold


def cross_fitted(name: str, scores: Any, labels: Any, *, threshold: float | None = None,
                 n_folds: int = 10, random_seed: Any = None,
                 order: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold predictions of a calibrator: each fold predicted by a fit on the others.

    Parameters are those of :func:`select_calibrator`; the folds are the same for the same
    ``random_seed``. Unlike in-sample predictions, these are not fitted to the very labels they
    are compared with.

    Parameters
    ----------
    name : str
        A key of :data:`CALIBRATORS`.
    scores, labels, threshold, n_folds, random_seed
        As in :func:`select_calibrator`.
    order : ndarray of int, optional
        The rows' order by score (``np.argsort(scores, kind="stable")``), if known: no sort.
        Isotonic regression ignores the order of ties; logistic families' sums may round apart.

    Returns
    -------
    numpy.ndarray
        One out-of-fold calibrated probability per row.

    Raises
    ------
    ValueError
        If a class has fewer than 2 rows.

    Examples
    --------
    In-sample isotonic regression looks perfectly calibrated; out of fold it does not:

    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(1000)
    >>> y = rng.random(1000) < s**2
    >>> round(ece(Isotonic().fit(s, y).predict(s), y), 4)
    0.0
    >>> round(ece(cross_fitted("isotonic", s, y, random_seed=0), y), 4)
    0.0192
    """
    return _out_of_fold([as_choice(name, "name", CALIBRATORS)], *_labelled(scores, labels),
                        threshold, n_folds, random_seed, order)[name]


def _out_of_fold(names: list[str], s: np.ndarray, y: np.ndarray, threshold: float | None,
                 n_folds: int, random_seed: Any,
                 order: np.ndarray | None = None) -> dict[str, np.ndarray]:
    smallest = int(min(np.sum(y == 0), np.sum(y == 1)))
    if smallest < 2:
        raise ValueError("labels need at least 2 rows of each class to fit calibrators on "
                         f"held-out folds; the smaller class has {smallest}.")
    n_folds = min(int(n_folds), smallest)
    fold = stratified_folds(y, n_folds, as_seed(random_seed))
    order = np.argsort(s) if order is None else order  # sorted once: so is every fold
    s, y, fold = s[order], y[order], fold[order]
    oof = {name: np.empty(s.size) for name in names}
    for k in range(n_folds):
        test = fold == k
        train, rows = ~test, np.flatnonzero(test)  # a fold's few rows: indices, not a mask
        for name in names:
            cal = _make(name, threshold)._fitted(s[train], y[train])
            oof[name][order[rows]] = cal._predict(s[rows])
    return oof


#: the fitted calibrators from the simplest to the most flexible: the one-standard-error rule
#: of :func:`select_calibrator` takes the first one as good as the best
SIMPLICITY = ("platt", "beta", "scaling_binning", "isotonic")


def select_calibrator(scores: Any, labels: Any, *,
                      candidates=("none", "isotonic", "platt", "beta"),
                      threshold: float | None = None, n_folds: int = 10, n_bins: int = 10,
                      random_seed: Any = None) -> tuple[Calibrator, pd.DataFrame, np.ndarray]:
    r"""Pick the calibrator with the lowest calibration error on held-out folds, or a simpler
    one as good, and fit it.

    Each candidate is fitted on all folds but one and predicts the held-out fold (stratified
    folds, :func:`cross_fitted`); the out-of-fold predictions of all rows are scored with
    :func:`calibration_error` (``n_bins`` equal-count bins, NannyML's criterion). The identity
    (``"none"``) is kept unless a candidate is strictly better. Among the fitted candidates the
    one-standard-error rule (Breiman et al. 1984, §3.4.3) then takes the simplest
    (:data:`SIMPLICITY`: Platt, beta, scaling-binning, isotonic) whose held-out Brier score is
    within one standard error of the best one's: with :math:`d_i=(\hat p_{ci}-y_i)^2-
    (\hat p_{bi}-y_i)^2` over the :math:`n` rows, :math:`\bar d\le\mathrm{sd}(d)/\sqrt n`.
    A flexible map that wins by noise is otherwise chosen often on a large reference, and an
    isotonic map's flat steps extrapolate where the analysis scores move past the reference's.

    Parameters
    ----------
    scores, labels : array-like
        Labelled data with at least 2 rows of each class (e.g. the reference period).
    candidates : sequence of str
        Keys of :data:`CALIBRATORS`; ``"none"`` is always added.
    threshold : float, optional
        Split every calibrator at this decision threshold (:class:`SplitAtThreshold`).
    n_folds : int
        Folds (fewer if a class has fewer rows).
    random_seed : None, int or Generator

    Returns
    -------
    calibrator : Calibrator
        The chosen one, fitted on all rows.
    errors : DataFrame
        Indexed by candidate: ``heldout_error``, ``brier_excess`` (the mean held-out Brier
        score over that of the lowest error), ``brier_se`` (its standard error) and
        ``chosen``.
    oof : ndarray
        The chosen calibrator's out-of-fold predictions.

    Examples
    --------
    Scores too high: beta calibration has the lowest error, Platt scaling is as good within one
    standard error:

    >>> rng = np.random.default_rng(1)
    >>> s = rng.random(2000)
    >>> y = rng.random(2000) < s**2
    >>> cal, errors, _ = select_calibrator(s, y, random_seed=0)
    >>> cal
    Platt()
    >>> errors.round(4)  # doctest: +NORMALIZE_WHITESPACE
                heldout_error  brier_excess  brier_se  chosen
    calibrator
    none               0.1593        0.0296    0.0032   False
    isotonic           0.0140        0.0025    0.0006   False
    platt              0.0211        0.0001    0.0003    True
    beta               0.0140        0.0000    0.0000   False
    """
    s, y = _labelled(scores, labels)
    names = ["none", *(c if c in CALIBRATORS else as_choice(c, "candidates", CALIBRATORS)
                       for c in candidates if c != "none")]
    oof = _out_of_fold(names, s, y, threshold, n_folds, random_seed)
    n_bins = as_positive_int(n_bins, "n_bins")
    error = np.array([binned_error(oof[name], y, n_bins) for name in names])
    lowest = int(np.argmin(error))
    brier = np.array([(oof[name] - y) ** 2 for name in names])
    excess = brier - brier[lowest]
    se = excess.std(axis=1, ddof=1) / np.sqrt(y.size)
    best = names[lowest]
    if best != "none":
        fitted = sorted((n for n in names if n != "none"),
                        key=lambda n: SIMPLICITY.index(n) if n in SIMPLICITY else len(SIMPLICITY))
        best = next(n for n in fitted if excess[names.index(n)].mean() <= se[names.index(n)])
    errors = pd.DataFrame({"heldout_error": error, "brier_excess": excess.mean(axis=1),
                           "brier_se": se}, index=pd.Index(names, name="calibrator"))
    errors["chosen"] = errors.index == best
    return _make(best, threshold)._fitted(s, y), errors, oof[best]
