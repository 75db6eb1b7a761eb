r"""CBPE's other outputs: confusion-matrix cells, business value and average precision.

Given the predictions, a window's confusion matrix is fixed by :math:`(TP, FN)`, independent
given a component :math:`j` of the count law (:class:`~bayeval.methods.cbpe.fast.CountLaw`):
:math:`FP=n_+-TP`, :math:`TN=n_--FN`. Hence exact laws for

* the **cells** (``metrics=["confusion_matrix"]``, rows ``true_positive``, ``true_negative``,
  ``false_positive``, ``false_negative``): the counts, or normalised as scikit-learn's
  ``confusion_matrix(normalize=...)``: by ``"all"`` (count / n), ``"true"`` (by the actual
  class: :math:`TP/(TP+FN)` is recall, :math:`FN/(TP+FN)=1-\text{recall}`,
  :math:`TN/(TN+FP)` specificity) or ``"pred"`` (by the predicted class: :math:`TP/n_+` is
  precision, :math:`TN/n_-` the NPV). All but ``"true"`` are one count rescaled;
* the **business value** of a value matrix :math:`V=[[v_{tn}, v_{fp}], [v_{fn}, v_{tp}]]`
  (rows the actual class, columns the predicted one, as scikit-learn's confusion matrix):

  .. math:: B=v_{tp}TP+v_{fp}FP+v_{fn}FN+v_{tn}TN=c+a\,TP+b\,FN,\quad
            c=v_{fp}n_++v_{tn}n_-,\ a=v_{tp}-v_{fp},\ b=v_{fn}-v_{tn},

  or ``"per_prediction"`` (as NannyML: each predicted class's cells divided by its number of
  predictions, :math:`c=v_{fp}+v_{tn}`, :math:`a=(v_{tp}-v_{fp})/n_+`,
  :math:`b=(v_{fn}-v_{tn})/n_-`, a class without predictions adding 0). Its exact CDF is a sum
  over :math:`TP`, :math:`P(B\le v)=\sum_jw_j\sum_ta_j(t)\,P_j(FN\le (v-c-at)/b)`
  (:class:`LinearLaw`), its equal-tailed interval found by bisection;
* **average precision**, scikit-learn's
  :math:`\mathrm{AP}=\frac1{T}\sum_iY_i\,C_{e(i)}/e(i)` over the rows by decreasing raw score,
  with :math:`T=\sum_iY_i`, :math:`e(i)` the last rank of row :math:`i`'s tie and :math:`C_k`
  the positives among the first :math:`k` rows. It depends on every label, not on two counts:
  its law is Monte Carlo over :data:`AP_DRAWS` draws of the labels (with, when the
  calibration map is uncertain, a draw of the map per draw of the labels), an empirical PMF
  whose mean has Monte-Carlo standard error :math:`\mathrm{sd}/\sqrt{R}` and whose interval
  ends are the draws' quantiles.

``plugin`` is NannyML's estimate (Kivimäki et al., 2025): the cells and business value of the
expected confusion matrix :math:`(\mathbb E\,TP, \mathbb E\,FP, \mathbb E\,FN, \mathbb E\,TN)`,
and AP with the expected positives as :math:`C_k` (rounded to 5 decimals) and no ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayeval.calibration_map import MapPosterior
from bayeval.chunks import Chunking
from bayeval.confusion import MetricDistribution
from bayeval.methods.cbpe.fast import CountLaw, Window, threshold_grid, window_labels
from bayeval.validation import as_array, as_choice, describe

__all__ = ["AP_DRAWS", "CELLS", "NORMALIZATIONS", "OUTPUTS", "LinearLaw", "Outputs", "Reflected",
           "ap_draws", "as_outputs", "average_precision", "nannyml_ap", "output_table",
           "realized_outputs", "reference_outputs", "with_outputs"]

OUTPUTS = ("confusion_matrix", "business_value", "average_precision")
"""The names that ask for these outputs in ``metrics``."""
CELLS = ("true_positive", "true_negative", "false_positive", "false_negative")
"""The rows of ``confusion_matrix`` (NannyML's names and order)."""
NORMALIZATIONS = ("all", "true", "pred")
AP_DRAWS = 2000
"""Draws of the labels behind the law of average precision."""
_BLOCK = 512  # rows of a window drawn at once (by AP_DRAWS)
_TOL = 1e-9  # values of the business value within this many FN steps of a bound count as on it


@dataclass(frozen=True)
class Outputs:
    """The outputs asked for, checked (:func:`as_outputs`).

    Examples
    --------
    >>> out = Outputs(cells=True, normalize="pred", value_matrix=None, per_prediction=False,
    ...               average_precision=True)
    >>> out.names[::4], out.limits[::4]
    (('true_positive', 'average_precision'), ((0.0, 1.0), (0.0, 1.0)))
    """

    cells: bool
    normalize: str | None
    value_matrix: np.ndarray | None
    per_prediction: bool
    average_precision: bool

    @property
    def names(self) -> tuple[str, ...]:
        """The rows of the summary, in order."""
        return ((*CELLS,) * self.cells + ("business_value",) * (self.value_matrix is not None)
                + ("average_precision",) * self.average_precision)

    @property
    def limits(self) -> tuple[tuple[float, float], ...]:
        """Range of each output, where alert thresholds are clipped."""
        cell = (0.0, np.inf if self.normalize is None else 1.0)
        return tuple(cell if n in CELLS else (-np.inf, np.inf) if n == "business_value"
                     else (0.0, 1.0) for n in self.names)

    def coefficients(self, n_pos: int, n_neg: int) -> tuple[float, float, float]:
        """(c, a, b) of the business value :math:`c + a\\,TP + b\\,FN`."""
        (v_tn, v_fp), (v_fn, v_tp) = self.value_matrix
        if not self.per_prediction:
            return v_fp * n_pos + v_tn * n_neg, v_tp - v_fp, v_fn - v_tn
        pos, neg = (1.0 / n if n else 0.0 for n in (n_pos, n_neg))
        return v_fp * (n_pos > 0) + v_tn * (n_neg > 0), (v_tp - v_fp) * pos, (v_fn - v_tn) * neg

    def values(self, tp, fp, fn, tn, zero_division: float) -> dict[str, np.ndarray]:
        """Cells and business value of confusion matrices (counts, realized or expected),
        each a division of the counts (``zero_division`` where its denominator is 0).

        Examples
        --------
        >>> out = Outputs(True, "true", np.array([[0, -1], [-5, 2]]), False, False)
        >>> [round(float(v), 4) for v in out.values(3.0, 1.0, 1.0, 5.0, 0.0).values()]
        [0.75, 0.8333, 0.1667, 0.25, 0.0]
        """
        tp, fp, fn, tn = (np.asarray(v, float) for v in (tp, fp, fn, tn))
        out = {}
        if self.cells:
            den = {None: (1.0,) * 4, "all": (tp + fp + fn + tn,) * 4,
                   "true": (tp + fn, tn + fp, tn + fp, tp + fn),
                   "pred": (tp + fp, tn + fn, tp + fp, tn + fn)}[self.normalize]
            for name, num, d in zip(CELLS, (tp, tn, fp, fn), den, strict=True):
                out[name] = np.where(d > 0, num / np.where(d > 0, d, 1.0), zero_division)
        if self.value_matrix is not None:
            (v_tn, v_fp), (v_fn, v_tp) = self.value_matrix
            pos, neg = tp + fp, tn + fn
            if self.per_prediction:  # the columns normalised; an empty one adds 0
                pos, neg = np.where(pos > 0, pos, np.inf), np.where(neg > 0, neg, np.inf)
                out["business_value"] = ((v_tp * tp + v_fp * fp) / pos
                                         + (v_fn * fn + v_tn * tn) / neg)
            else:
                out["business_value"] = v_tp * tp + v_fp * fp + v_fn * fn + v_tn * tn
        return out


def as_outputs(metrics: Any, normalize_confusion_matrix: Any, business_value_matrix: Any,
               normalize_business_value: Any, noise: str, method: Any,
               late_labels: str) -> tuple[Any, Outputs | None]:
    """The metrics other than these outputs (None stays None) and the outputs asked for.

    Raises
    ------
    ValueError
        A name given twice; ``business_value`` without a 2 x 2 ``business_value_matrix`` of
        finite numbers; a normalisation not among the accepted ones or given without its
        output; these outputs with ``method`` other than ``"exact"``; ``average_precision``
        with a noise model or ``late_labels="estimate"``.

    Examples
    --------
    >>> others, out = as_outputs(["f1", "confusion_matrix"], "all", None, None, "none", "exact",
    ...                          "report")
    >>> others, out.names[:2]
    (('f1',), ('true_positive', 'true_negative'))
    >>> as_outputs(["business_value"], None, None, None, "none", "exact", "report")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: business_value needs business_value_matrix=[[tn, fp], [fn, tp]], ...
    """
    given = [] if metrics is None else np.atleast_1d(np.asarray(metrics, dtype=object)).tolist()
    asked = [m for m in given if isinstance(m, str) and m in OUTPUTS]
    others = None if metrics is None else tuple(m for m in given if m not in asked)
    if len(set(asked)) < len(asked):
        raise ValueError(f"metrics lists a metric twice: {given}.")
    for option, value, output, accepted in (
            ("normalize_confusion_matrix", normalize_confusion_matrix, "confusion_matrix",
             NORMALIZATIONS),
            ("normalize_business_value", normalize_business_value, "business_value",
             ("per_prediction",))):
        if value is None:
            continue
        as_choice(value, option, accepted)
        if output not in asked:
            raise ValueError(f"{option}={value!r} normalises the {output} output: add "
                             f"{output!r} to metrics, or leave {option} out.")
    matrix = None
    if "business_value" in asked:
        shape_text = ("business_value needs business_value_matrix=[[tn, fp], [fn, tp]], the "
                      "value of each cell of the confusion matrix (rows the actual class, "
                      f"columns the predicted one); got {describe(business_value_matrix)}.")
        if business_value_matrix is None:
            raise ValueError(shape_text)
        matrix = as_array(business_value_matrix, "business_value_matrix", ndim=None)
        if matrix.shape != (2, 2):
            raise ValueError(shape_text)
    elif business_value_matrix is not None:
        raise ValueError("business_value_matrix is the value of the business_value output: add "
                         "'business_value' to metrics, or leave business_value_matrix out.")
    if not asked:
        return others, None
    if method != "exact":
        raise ValueError(f"metrics {asked} are computed by the fast path only: use "
                         "method='exact', or leave them out of metrics.")
    if "average_precision" in asked and (noise != "none" or late_labels == "estimate"):
        raise ValueError("average_precision is drawn from independent labels given the scores: "
                         "use noise='none' and late_labels='report', or leave it out of "
                         f"metrics (got noise={noise!r}, late_labels={late_labels!r}).")
    return others, Outputs("confusion_matrix" in asked, normalize_confusion_matrix, matrix,
                           normalize_business_value == "per_prediction",
                           "average_precision" in asked)


# ---------------------------------------------------------------------------------------------
# laws


class Reflected:
    r"""The law of :math:`1-X` for a law of :math:`X` (mean, sd, masses and intervals).

    Examples
    --------
    >>> from bayeval.confusion import metric_distribution
    >>> law = Reflected(metric_distribution("recall", [1, 1, 0], [0.9, 0.6, 0.3]))
    >>> round(law.mean, 4), law.interval_ends(0.9, "eti"), round(law.mass(0.0, 0.4), 4)
    (0.157, (0.0, 0.5), 0.834)
    """

    def __init__(self, law: MetricDistribution) -> None:
        self.law, self.p_undefined = law, law.p_undefined
        self.mean, self.sd = 1.0 - law.mean, law.sd

    def mass(self, lower: float, upper: float) -> float:
        return self.law.mass(1.0 - upper, 1.0 - lower)

    def interval_ends(self, ci_prob: float, kind: str) -> tuple[float, float]:
        lower, upper = self.law.interval_ends(ci_prob, kind)
        return 1.0 - upper, 1.0 - lower


def _marginal(start: int, pmf: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts and probabilities of a count mixed over the components."""
    return start + np.arange(pmf.shape[1], dtype=float), weights @ pmf


class LinearLaw:
    r"""Exact law of :math:`B=c+a\,TP+b\,FN` (:math:`a, b\ne0`) for a :class:`CountLaw`.

    Mean and variance from the components' moments; :math:`P(B\le v)` a sum over :math:`TP`
    of the FN CDF, in :math:`O(Jw)`; the equal-tailed interval's ends by bisection, then the
    support value they reach; the shortest interval from the whole grid's PMF.

    Examples
    --------
    Value 2 per TP, -1 per FN, two positives and one negative predicted:

    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.6, 0.3]), np.array([1, 1, 0]))
    >>> bv = LinearLaw("business_value", 0.0, 2.0, -1.0, law)
    >>> round(bv.mean, 6), round(bv.mass(2.0, 4.0), 6)  # E = 2 * 1.5 - 0.3
    (2.7, 0.834)
    >>> bv.interval_ends(0.9, "eti")
    (1.0, 4.0)
    """

    def __init__(self, name: str, const: float, a: float, b: float, law: CountLaw) -> None:
        self.name, self.const, self.a, self.b, self.law = name, const, a, b, law
        self.p_undefined = 0.0
        t, f = (s + np.arange(p.shape[1], dtype=float) for s, p in
                ((law.tp_start, law.tp), (law.fn_start, law.fn)))
        self.t, self.f = t, f
        mt, mf = law.tp @ t, law.fn @ f
        means = const + a * mt + b * mf
        var = a * a * (law.tp @ t**2 - mt**2) + b * b * (law.fn @ f**2 - mf**2)
        self.mean = float(law.weights @ means)
        self.sd = float(np.sqrt(max(law.weights @ (var + means**2) - self.mean**2, 0.0)))
        self.wa = law.weights[:, None] * law.tp
        self.cum = np.concatenate([np.zeros((law.fn.shape[0], 1)), np.cumsum(law.fn, axis=1)],
                                  axis=1)

    def _fn_at_most(self, k: np.ndarray) -> np.ndarray:
        """P(FN <= k | component), per component and TP row."""
        idx = np.clip(k - self.law.fn_start + 1, 0, self.f.size).astype(np.int64)
        return self.cum[:, idx]

    def _below(self, v: float, strict: bool) -> float:
        """:math:`P(B<v)` (``strict``) or :math:`P(B\\le v)`."""
        x = (v - self.const - self.a * self.t) / self.b
        at_most, below = np.floor(x + _TOL), np.ceil(x - _TOL) - 1  # FN <= x, FN < x
        if self.b > 0:
            tail = self._fn_at_most(below if strict else at_most)
        else:  # FN >= x (or > x)
            tail = 1.0 - self._fn_at_most(at_most if strict else below)
        return float(np.sum(self.wa * tail))

    def mass(self, lower: float, upper: float) -> float:
        upper_part = 1.0 if upper == np.inf else self._below(upper, strict=False)
        return upper_part - (0.0 if lower == -np.inf else self._below(lower, strict=True))

    def _quantile(self, level: float) -> float:
        r""":math:`\min\{v: P(B\le v)\ge q\}` over the support: bisection to the step of
        :math:`P(B\le v)`, then the least support value near it that reaches ``level``."""
        ends = self.const + self.a * self.t[[0, -1], None] + self.b * self.f[None, [0, -1]]
        lo, hi = float(ends.min()), float(ends.max())
        if self._below(lo, strict=False) >= level:
            return lo
        for _ in range(200):  # P(B <= lo) < q <= P(B <= hi)
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            lo, hi = (lo, mid) if self._below(mid, strict=False) >= level else (mid, hi)
        near = 4 * abs(self.b) * _TOL + 4 * np.spacing(abs(hi))
        x = (hi - self.const - self.a * self.t) / self.b
        f = np.clip(np.floor(x)[:, None] + [-1, 0, 1, 2], self.f[0], self.f[-1])
        values = np.unique(self.const + self.a * self.t[:, None] + self.b * f)
        for v in values[np.abs(values - hi) <= near]:
            if self._below(v, strict=False) >= level:
                return float(v)
        return hi

    def interval_ends(self, ci_prob: float, kind: str) -> tuple[float, float]:
        if kind != "eti":
            return self.grid().interval_ends(ci_prob, kind)
        alpha = 1.0 - ci_prob
        return self._quantile(alpha / 2), self._quantile(1.0 - alpha / 2)

    def grid(self) -> MetricDistribution:
        """The whole PMF, from every cell of the (TP, FN) grid."""
        law = self.law
        probs = np.einsum("j,jt,jf->tf", law.weights, law.tp, law.fn).ravel()
        values = (self.const + self.a * self.t[:, None] + self.b * self.f[None, :]).ravel()
        return MetricDistribution.from_cells(self.name, values, probs, 0.0)


def _one_count(name: str, law: CountLaw, positive: bool, value, zero_division: float):
    """The law of ``value(count)`` of TP (``positive``) or FN: NaN values are undefined."""
    counts, probs = (_marginal(law.tp_start, law.tp, law.weights) if positive else
                     _marginal(law.fn_start, law.fn, law.weights))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = value(counts)
    return MetricDistribution.from_cells(name, values, probs, zero_division)


def cell_laws(law: CountLaw, outputs: Outputs, zero_division: float) -> list:
    """The laws of the four cells, in :data:`CELLS` order, as ``outputs.normalize`` asks."""
    n_pos, n_neg = law.n_pos, law.n_neg
    if outputs.normalize == "true":  # recall and specificity, and 1 - each
        other = 1.0 - zero_division if zero_division in (0.0, 1.0) else zero_division
        return [law.law("recall", zero_division), law.law("specificity", zero_division),
                Reflected(law.law("specificity", other)), Reflected(law.law("recall", other))]
    den = {None: (1, 1), "all": (n_pos + n_neg,) * 2, "pred": (n_pos, n_neg)}[outputs.normalize]
    pos, neg = (d if d else np.nan for d in den)
    return [_one_count("true_positive", law, True, lambda t: t / pos, zero_division),
            _one_count("true_negative", law, False, lambda f: (n_neg - f) / neg, zero_division),
            _one_count("false_positive", law, True, lambda t: (n_pos - t) / pos, zero_division),
            _one_count("false_negative", law, False, lambda f: f / neg, zero_division)]


def value_law(law: CountLaw, outputs: Outputs):
    """The law of the business value (:class:`LinearLaw`, or one count's where a coefficient is
    0)."""
    c, a, b = outputs.coefficients(law.n_pos, law.n_neg)
    if a and b:
        return LinearLaw("business_value", c, a, b, law)
    return _one_count("business_value", law, bool(a), lambda k: c + (a or b) * k, 0.0)


# ---------------------------------------------------------------------------------------------
# average precision


def _tie_ends(s: np.ndarray) -> np.ndarray:
    """For scores in decreasing order, the 1-based rank of the last row of each row's tie."""
    last = np.r_[np.flatnonzero(s[1:] != s[:-1]), s.size - 1]
    return np.repeat(last + 1, np.diff(np.r_[-1, last])).astype(float)


def average_precision(labels: np.ndarray, scores: np.ndarray,
                      zero_division: float = 0.0) -> float:
    r"""scikit-learn's average precision :math:`\frac1T\sum_iY_iC_{e(i)}/e(i)` (ties grouped),
    ``zero_division`` without a positive label.

    Examples
    --------
    Ranks 2 and 3 tie: both are cut at rank 3, precision 2/3.

    >>> y, s = np.array([1, 0, 1, 1]), np.array([0.9, 0.8, 0.8, 0.1])
    >>> round(average_precision(y, s), 6), round((1 + 2 / 3 + 3 / 4) / 3, 6)
    (0.805556, 0.805556)
    """
    order = np.argsort(-scores, kind="stable")
    y, s = labels[order].astype(float), scores[order]
    ends = _tie_ends(s)
    positives = np.cumsum(y)
    total = positives[-1] if y.size else 0.0
    if total == 0:
        return float(zero_division)
    return float(y @ (positives[ends.astype(np.int64) - 1] / ends) / total)


def nannyml_ap(p: np.ndarray, scores: np.ndarray) -> float:
    r"""NannyML's estimate of average precision: with the rows by decreasing raw score,
    :math:`\hat C_k=\sum_{i\le k}p_i` rounded to 5 decimals, precision :math:`\hat C_k/k` and
    recall :math:`\hat C_k/\hat C_n`, :math:`\sum_k(\text{recall}_k-\text{recall}_{k-1})
    \,\text{precision}_k`.

    Examples
    --------
    >>> round(nannyml_ap(np.array([0.2, 0.9, 0.5]), np.array([0.1, 0.8, 0.4])), 6)
    0.791667
    """
    order = np.argsort(scores)[::-1]  # NannyML's order
    tps = np.round(np.cumsum(p[order]), 5)
    if tps[-1] == 0:  # no expected positive
        return np.nan
    precision = tps / np.arange(1, tps.size + 1)
    recall = np.r_[0.0, tps] / tps[-1]
    return float(np.sum(np.diff(recall) * precision))


def ap_draws(window: Window, rng: np.random.Generator, draws: int = AP_DRAWS,
             posterior: MapPosterior | None = None) -> np.ndarray:
    r"""Average precision of ``draws`` draws of the window's labels, NaN where no label is 1.

    :math:`Y_i\sim\mathrm{Bernoulli}(p_i)` independently; with the calibration map's
    ``posterior`` each draw of the labels takes the probabilities of one of its draws, drawn
    at random (:meth:`bayeval.calibration_map.MapPosterior.predict`). Rows are drawn in
    blocks, by decreasing score, carrying the positives so far.

    Examples
    --------
    >>> w = Window(np.array([0.2, 0.9]), np.array([0.0, 1.0]), np.array([False, True]))
    >>> ap_draws(w, np.random.default_rng(0), 3).tolist()  # the positive ranks first
    [1.0, 1.0, 1.0]
    """
    s, p = window.s[::-1], window.p[::-1]
    ends = _tie_ends(s)
    maps = None if posterior is None else rng.integers(posterior.draws, size=draws)
    carry, total = np.zeros(draws, np.int32), np.zeros(draws)
    start = 0
    while start < s.size:  # blocks end at the end of a tie
        stop = int(ends[min(start + _BLOCK, s.size) - 1])
        probs = p[start:stop] if maps is None else posterior.predict(s[start:stop])[maps]
        # single precision halves the cost: no probability moves by more than 6e-8, and the
        # block's sums of at most _BLOCK terms keep 7 digits
        y = rng.random((draws, stop - start), dtype=np.float32) < probs.astype(np.float32)
        positives = np.cumsum(y, axis=1, dtype=np.int32)
        positives += carry[:, None]
        carry = positives[:, -1].copy()
        last = ends[start:stop].astype(np.int64) - 1 - start
        at_end = positives if (last == np.arange(last.size)).all() else positives[:, last]
        at_end *= y
        total += at_end.astype(np.float32) @ (1.0 / ends[start:stop]).astype(np.float32)
        start = stop
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(carry > 0, total / carry, np.nan)


# ---------------------------------------------------------------------------------------------
# the table


def realized_outputs(labels: np.ndarray, y_pred: np.ndarray, scores: np.ndarray,
                     chunking: Chunking, outputs: Outputs, zero_division: float,
                     whole: bool = True) -> np.ndarray:
    """The outputs (chunk[, whole] x output) on the labelled rows; NaN without a label.

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> out = Outputs(True, None, None, False, True)
    >>> realized_outputs(np.array([1, 0, np.nan, 1]), np.array([1, 1, 0, 0]),
    ...                  np.array([0.9, 0.7, 0.2, 0.3]), make_chunks(4, n_chunks=1), out,
    ...                  0.0).round(4).tolist()
    [[1.0, 0.0, 1.0, 1.0, 0.8333], [1.0, 0.0, 1.0, 1.0, 0.8333]]
    """
    known = ~np.isnan(labels)
    groups = [*chunking.rows(), np.arange(labels.size)] if whole else list(chunking.rows())
    rows = []
    for r in groups:
        r = r[known[r]]
        y, pred = labels[r], y_pred[r].astype(bool)
        tp, fn = float(y[pred].sum()), float(y[~pred].sum())
        values = outputs.values(tp, pred.sum() - tp, fn, (~pred).sum() - fn, zero_division)
        row = [float(values[n]) for n in outputs.names if n != "average_precision"]
        if outputs.average_precision:
            row.append(average_precision(y, scores[r], zero_division))
        rows.append(row if r.size else [np.nan] * len(row))
    return np.array(rows).reshape(len(groups), len(outputs.names))


def reference_outputs(data: xr.Dataset, reference: Any, outputs: Outputs,
                      zero_division: float) -> np.ndarray:
    """The outputs' realized values on the reference's chunks (reference chunk x output), also
    appended to ``data["reference_realized"]``; empty without a reference.

    ``reference`` has the reference's ``scores``, ``labels``, ``y_pred`` and ``chunking``
    (:class:`bayeval.methods.cbpe.api.Reference`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from bayeval.chunks import make_chunks
    >>> ref = SimpleNamespace(scores=np.array([0.9, 0.2, 0.7, 0.4]),
    ...                       labels=np.array([1, 0, 0, 0]), y_pred=np.array([1, 0, 1, 0]),
    ...                       chunking=make_chunks(4, n_chunks=2))
    >>> data = xr.Dataset({"reference_realized": (("reference_chunk", "metric"), [[1.0], [0.5]])},
    ...                   coords={"reference_chunk": ["r0", "r1"], "metric": ["accuracy"]})
    >>> reference_outputs(data, ref, Outputs(True, None, None, False, False), 0.0).tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]]
    >>> data["metric"].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['accuracy', 'true_positive', 'true_negative', 'false_positive', 'false_negative']
    """
    if reference is None:
        return np.empty((0, len(outputs.names)))
    values = realized_outputs(reference.labels.astype(float), reference.y_pred,
                              reference.scores, reference.chunking, outputs, zero_division,
                              whole=False)
    realized = data["reference_realized"]
    extra = xr.DataArray(values, dims=realized.dims,
                         coords={realized.dims[0]: realized[realized.dims[0]].values,
                                 "metric": list(outputs.names)})
    joined = xr.concat([realized, extra], dim="metric")
    del data["reference_realized"], data.coords["metric"]  # else assigning aligns to the old
    data["reference_realized"] = joined
    return values


def output_table(laws: list[CountLaw], windows: list[Window],
                 expected: list[tuple[float, float]], chunk_labels: Sequence[str],
                 outputs: Outputs, ci_prob: float, ci_kind: str, zero_division: float,
                 thresholds: tuple[np.ndarray, np.ndarray],
                 posterior: MapPosterior | None = None, random_seed: Any = None) -> xr.Dataset:
    """The laws of the outputs per chunk, then for the whole period, tabulated as
    :func:`bayeval.methods.cbpe.fast.closed_form` tabulates the metrics (no PMFs kept;
    ``exact`` False for average precision's Monte Carlo).

    Examples
    --------
    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.8, 0.3]), np.array([1, 1, 0]))
    >>> out = Outputs(True, None, None, False, False)
    >>> none = (np.full(4, np.nan),) * 2
    >>> ds = output_table([law, law], [], [(1.7, 0.3)] * 2, ["c"], out, 0.95, "eti", 0.0, none)
    >>> ds["mean"].sel(chunk="c").round(4).values.tolist()
    [1.7, 0.7, 0.3, 0.3]
    """
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin",
             "p_alert")
    size, k = len(laws), len(outputs.names)
    out = {v: np.full((size, k), np.nan) for v in names}
    lower_thr, upper_thr = threshold_grid(thresholds, len(chunk_labels), size)
    rng = np.random.default_rng(None if random_seed is None else [int(random_seed), 18])
    for i, law in enumerate(laws):
        found = []
        if outputs.cells:
            found += cell_laws(law, outputs, zero_division)
        if outputs.value_matrix is not None:
            found.append(value_law(law, outputs))
        tp, fn = expected[i]
        plugin = outputs.values(tp, law.n_pos - tp, fn, law.n_neg - fn, zero_division)
        plugin = [plugin[n] for n in outputs.names if n != "average_precision"]
        if outputs.average_precision:
            w = windows[i]
            draws = ap_draws(w, rng, posterior=posterior)
            found.append(MetricDistribution.from_cells("average_precision", draws,
                                                       np.full(draws.size, 1 / draws.size),
                                                       zero_division))
            plugin.append(nannyml_ap(w.p, w.s))
        for j, (d, estimate) in enumerate(zip(found, plugin, strict=True)):
            lo, hi = d.interval_ends(ci_prob, ci_kind)
            alert = (1.0 - d.mass(lower_thr[i, j], upper_thr[i, j])
                     if np.isfinite(lower_thr[i, j]) or np.isfinite(upper_thr[i, j]) else np.nan)
            for name, value in zip(names, (d.mean, d.sd, lo, hi, min(d.mass(lo, hi), 1.0),
                                           d.p_undefined, estimate, alert), strict=True):
                out[name][i, j] = value
    dims = ("chunk", "metric")
    ds = xr.Dataset({v: (dims, out[v]) for v in names},
                    coords={"chunk": window_labels(chunk_labels, size),
                            "metric": list(outputs.names)})
    ds["exact"] = (dims, np.broadcast_to([n != "average_precision" for n in outputs.names],
                                         (size, k)).copy())
    ds["lower_threshold"], ds["upper_threshold"] = (dims, lower_thr), (dims, upper_thr)
    ds["alert"] = (dims, (out["mean"] < lower_thr) | (out["mean"] > upper_thr))
    return ds


def with_outputs(closed: xr.Dataset, outputs: Outputs, laws: list[CountLaw],
                 windows: list[Window], expected: list[tuple[float, float]],
                 chunking: Chunking, labels: np.ndarray | None, y_pred: np.ndarray,
                 scores: np.ndarray, options: tuple[float, str, float], thresholds,
                 posterior: MapPosterior | None = None, random_seed: Any = None) -> xr.Dataset:
    """``closed`` (the metrics' table) with the outputs' rows appended along ``metric``: their
    laws (:func:`output_table`), and with ``labels`` their realized values and alerts.

    ``options`` are ``(ci_prob, ci_kind, zero_division)``; variables of ``closed`` over
    ``metric`` that the outputs lack (the PMFs) are NaN for them.

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.8, 0.3]), np.array([1, 1, 0]))
    >>> chunking = make_chunks(3, n_chunks=1)
    >>> closed = xr.Dataset({"mean": (("chunk", "metric"), [[0.8], [0.8]])},
    ...                     coords={"chunk": [*chunking.labels, "all"], "metric": ["accuracy"]})
    >>> none = (np.full(4, np.nan),) * 2
    >>> ds = with_outputs(closed, Outputs(True, None, None, False, False), [law, law], [],
    ...                   [(1.7, 0.3)] * 2, chunking, None, np.array([1, 1, 0]),
    ...                   np.array([0.9, 0.8, 0.3]), (0.95, "eti", 0.0), none)
    >>> ds["mean"].isel(chunk=0).round(4).values.tolist()  # accuracy, then TP, TN, FP, FN
    [0.8, 1.7, 0.7, 0.3, 0.3]
    """
    ci_prob, ci_kind, zero_division = options
    extra = output_table(laws, windows, expected, chunking.labels, outputs, ci_prob, ci_kind,
                         zero_division, thresholds, posterior, random_seed)
    if labels is not None:
        values = realized_outputs(labels, y_pred, scores, chunking, outputs, zero_division)
        extra["realized"] = (("chunk", "metric"), values)
        low, high = extra["lower_threshold"].values, extra["upper_threshold"].values
        extra["alert_realized"] = (("chunk", "metric"), (values < low) | (values > high))
    for name, var in closed.data_vars.items():
        if "metric" in var.dims and name not in extra:
            shape = {d: (extra.sizes[d] if d in extra.sizes else closed.sizes[d])
                     for d in var.dims}
            extra[name] = (var.dims, np.full(tuple(shape.values()), np.nan))
    metric_vars = [n for n, v in closed.data_vars.items() if "metric" in v.dims]
    joined = xr.concat([closed[metric_vars], extra[metric_vars]], dim="metric")
    return closed.drop_vars(metric_vars).drop_dims("metric").merge(joined)
