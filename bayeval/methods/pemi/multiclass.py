r"""PEMI with K classes: the metrics of a test set whose missing labels are among K classes.

:func:`pemi_classes` is what :func:`bayeval.pemi` runs when the scores have one column per class
or the labels are not 0/1. Row :math:`i` has class probabilities :math:`s_{ik}`, a fixed
prediction :math:`\hat y_i` (the class of the largest score unless given) and a label known on
the rows :math:`\mathcal K` and missing on :math:`\overline{\mathcal K}`. As in PEMI (Dervovic &
Cashmore, AISTATS 2025) each missing label is imputed independently,
:math:`Y_i\sim\mathrm{Cat}(p_{i1},\dots,p_{iK})`, and the metric of the completed test set is
the random variable whose law is the answer. With :math:`Y_{ik}=\mathbb 1\{Y_i=k\}`:

* the number right is the known rows' plus
  :math:`\sum_{\overline{\mathcal K}}Y_{i\hat y_i}`, Poisson-binomial over
  :math:`p_{i\hat y_i}`: accuracy (and micro-F1, equal to it) has an exact law;
* class :math:`k` against the rest has :math:`TP_k=TP_{k,\mathcal K}+
  \sum_{\overline{\mathcal K},\hat y_i=k}Y_{ik}` and :math:`FN_k=FN_{k,\mathcal K}+
  \sum_{\overline{\mathcal K},\hat y_i\ne k}Y_{ik}`, independent Poisson-binomials: precision,
  recall, F1 and specificity of each class have the exact law of binary PEMI with
  probabilities :math:`p_{\cdot k}` (:mod:`bayeval.methods.pemi.mixture`);
* each class's one-vs-rest ROC-AUC and their macro average have normal laws from the exact
  moments of the completed rows' Mann-Whitney counts, the macro average's with the classes'
  delta-method covariances (:mod:`bayeval.methods.pemi.multiclass_auc`);
* every other metric of :mod:`bayeval.multiclass` (balanced accuracy, the macro and weighted
  averages, Cohen's kappa, MCC) is a function :math:`f` of :math:`x=(TP_1..TP_K,FN_1..FN_K)`
  (the predictions are fixed). It gets a normal law by the delta method:
  :math:`\mu=f(\mathbb Ex)+\tfrac12\operatorname{tr}(H\Sigma)`,
  :math:`\sigma^2=\nabla f^\top\Sigma\nabla f`, where the exact covariance of :math:`x` sums
  :math:`\operatorname{Cov}(Y_i)=\operatorname{diag}p_i-p_ip_i^\top` over the missing rows
  (:func:`count_moments`; derivatives by central differences).

**Where p comes from.** Given as an (n, K) array ``p``; the scores themselves
(``calibration="none"``); or (default ``"platt"``) the multinomial Platt map fitted on the
labelled rows, :math:`p_{ik}\propto\exp(a_k+b\log s_{ik})`
(:mod:`bayeval.methods.pemi.multiclass_models`), valid when the labels are missing at random
given the scores; with ``reference=`` (labelled data of the same classes, e.g. a held-out
split) the map is fitted on the reference instead, and the labelled test rows enter the
metrics exactly, as in binary PEMI. The map's error is shared by every missing row: by
default the laws are mixed over importance draws of its posterior,
:math:`P(\cdot)=\sum_sw_s\,P(\cdot\mid p^{(s)})` (the delta-method normals as a normal
mixture). **MNAR**: ``mnar={class: delta}`` gives the missing rows
:math:`p^{\mathrm{mis}}_{ik}\propto p_{ik}e^{\delta_k}` (class-dependent missingness; a value
``(mean, sd)`` is a normal prior, mixed over by Monte Carlo, one draw per component).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.class_results import ClassEvaluation
from bayeval.classes import as_class_scores, class_coordinate, column_classes, encode
from bayeval.evaluation import CI_KINDS, SAMPLE_DIMS
from bayeval.methods.pemi.fast import Options, Rows
from bayeval.methods.pemi.mixture import (
    Components,
    affordable,
    choose,
    component_moments,
    exact_mixture,
    imputed_summary,
    normal_of,
)
from bayeval.methods.pemi.models import PRIOR_A, PRIOR_LOG_B
from bayeval.methods.pemi.multiclass_auc import AUC_METRICS, auc_rows, auc_values
from bayeval.methods.pemi.multiclass_models import class_model
from bayeval.multiclass import (
    CLASS_METRICS,
    MULTICLASS_METRICS,
    counts_value,
    matrix_of,
    one_vs_rest,
)
from bayeval.multiclass_calibration import log_scores, platt_probabilities, posterior
from bayeval.sampling import sample
from bayeval.validation import (
    aligned,
    as_choice,
    as_ci_prob,
    as_metrics,
    as_mnar,
    as_positive_int,
    as_sample_kwargs,
    as_zero_division,
    describe,
)

__all__ = ["CLASS_PEMI_METRICS", "ClassComponents", "ClassRows", "PEMIClasses", "count_moments",
           "pemi_classes", "simulate_classes"]

EXACT = ("accuracy", "micro_f1", *CLASS_METRICS)
"""Metrics with an exact law (accuracy and micro-F1 share one)."""
CLASS_PEMI_METRICS = (EXACT + tuple(m for m in MULTICLASS_METRICS if m not in EXACT)
                      + AUC_METRICS)
"""The metrics :func:`pemi_classes` gives."""
DEFAULT_METRICS = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "macro_f1")
METHODS = ("auto", "gauss", "exact", "impute", "pymc", "both")
CALIBRATIONS = ("platt", "none")
#: draws of a prior on the MNAR shifts when no map posterior is mixed over
DELTA_DRAWS = 400
_CELLS = 1 << 22  # probabilities (components x rows x classes) held at once
MNAR_SHIFT = "the log-probability of class k of a missing label shifted"
ASSUMPTIONS = (
    "The metrics are those the whole test set would give with every label known. Missing labels "
    "are independent categoricals given the scores, with the class probabilities of the "
    "multinomial Platt map fitted on the labelled rows or the reference (mixed over its "
    "posterior), given p, or "
    "the scores: this needs the labels to be missing at random given the scores; mnar= shifts "
    "the log-probability of each class of a missing label (class-dependent missingness). "
    "Averages over classes, kappa and MCC have normal laws by the delta method.")


class PEMIClasses(ClassEvaluation, method="pemi_multiclass"):
    """The result of :func:`bayeval.pemi` with K classes: dims (``metric``, ``class``), a metric
    of the whole matrix (accuracy, the averages) at the first class.

    Examples
    --------
    >>> import bayeval as be
    >>> s = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]] * 4)
    >>> y = ["a", "b", "c", None] * 3
    >>> ev = be.pemi(pd.DataFrame(s, columns=["a", "b", "c"]), y, calibration="none",
    ...              metrics=["accuracy", "recall"])
    >>> type(ev).__name__, ev.summary().index.tolist()[:2]
    ('PEMIClasses', [('accuracy', ''), ('recall', 'a')])
    """


# ---------------------------------------------------------------------------------- the rows
class ClassRows:
    r"""Test rows of K classes: scores (n, K), prediction codes, label codes (-1: missing).

    ``mis`` lists the missing rows; :meth:`binary` gives the binary PEMI rows of one class
    against the rest, or of right against wrong.

    Examples
    --------
    >>> rows = ClassRows(np.full((4, 2), 0.5), np.array([0, 1, 1, 0]), np.array([0, -1, 0, 1]))
    >>> rows.n, rows.m, rows.mis.tolist(), rows.known.tolist()
    (4, 1, [1], [[1, 1], [1, 0]])
    """

    def __init__(self, scores: np.ndarray, y_pred: np.ndarray, labels: np.ndarray):
        self.scores, self.y_pred, self.labels = scores, y_pred, labels
        self.missing = labels < 0
        self.mis = np.flatnonzero(self.missing)
        self.k = scores.shape[1]
        self.known = (matrix_of(labels[~self.missing], y_pred[~self.missing], self.k)
                      if self.m < self.n else np.zeros((self.k, self.k), dtype=np.int64))

    @property
    def n(self) -> int:
        """Number of rows."""
        return self.labels.size

    @property
    def m(self) -> int:
        """Number of missing labels."""
        return self.mis.size

    def binary(self, k: int | None) -> tuple[Rows, np.ndarray, np.ndarray]:
        r"""Binary rows of class ``k`` against the rest (``None``: right against wrong, every
        row "predicted positive", so that binary accuracy is the share right), and for their
        missing rows (in ``Rows.order``) the positions in ``mis`` and the column of p to read.

        Examples
        --------
        >>> rows = ClassRows(np.full((3, 2), 0.5), np.array([0, 1, 1]), np.array([0, -1, 1]))
        >>> r, pos, col = rows.binary(None)
        >>> r.labels.tolist(), pos.tolist(), col.tolist()
        ([1.0, nan, 1.0], [0], [1])
        """
        if k is None:
            score = self.scores[np.arange(self.n), self.y_pred]
            yp, positive = np.ones(self.n, np.int8), self.labels == self.y_pred
        else:
            score, yp, positive = (self.scores[:, k], (self.y_pred == k).astype(np.int8),
                                   self.labels == k)
        rows = Rows(score, yp, np.where(self.missing, np.nan, positive.astype(float)))
        col = self.y_pred[rows.order] if k is None else np.full(rows.m, k)
        return rows, np.searchsorted(self.mis, rows.order), col


@dataclasses.dataclass(frozen=True)
class ClassComponents(Components):
    r"""Weighted draws :math:`p^{(s)}` of the class probabilities of the missing rows: the
    :class:`~bayeval.methods.pemi.mixture.Components` of K classes.

    Attributes
    ----------
    weights : numpy.ndarray, shape (S,)
        :math:`w_s`, summing to 1.
    p_of : callable
        ``p_of(index) -> (len(index), m, K)``, the components ``index``.

    Examples
    --------
    >>> comps = ClassComponents(np.ones(1), lambda i: np.full((i.size, 2, 3), 1 / 3))
    >>> comps.size, next(comps.chunks(6))[1].shape
    (1, (1, 2, 3))
    """

    def of(self, pos: np.ndarray, col: np.ndarray) -> Components:
        """The binary :class:`~bayeval.methods.pemi.mixture.Components` of one column per
        missing row (:meth:`ClassRows.binary`)."""
        return Components(self.weights, lambda index: self.p_of(index)[:, pos, col])


def _components(rows: ClassRows, base: np.ndarray | None, post, delta, rng) -> ClassComponents:
    """The mixture's components: the map's importance draws (``post``) or the fixed
    probabilities ``base`` of the missing rows, each with a draw of the MNAR shifts."""
    mean, sd = delta
    size = post.size if post is not None else (DELTA_DRAWS if (sd > 0).any() else 1)
    shifts = mean + sd * rng.standard_normal((size, rows.k))
    weights = post.weights if post is not None else np.full(size, 1.0 / size)
    if post is not None:
        x, a, b = log_scores(rows.scores[rows.mis]), post.a, post.b
    else:
        with np.errstate(divide="ignore"):
            x = np.log(base)
        a, b = np.zeros((size, rows.k)), np.ones(size)

    def p_of(i: np.ndarray) -> np.ndarray:
        return platt_probabilities(x, a[i], b[i], shifts[i])

    if size * rows.m * rows.k <= _CELLS:  # small enough to hold: computed once
        held = p_of(np.arange(size))
        return ClassComponents(weights, lambda i: held[i])
    return ClassComponents(weights, p_of)


# ------------------------------------------------------------------------------ the laws
def count_moments(rows: ClassRows, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean and covariance of :math:`x=(TP_1..TP_K,FN_1..FN_K)` given the missing rows'
    probabilities ``p`` (S, m, K), shapes (S, 2K) and (S, 2K, 2K).

    A missing row predicted :math:`j` adds :math:`Y_{ij}` to :math:`TP_j` and :math:`Y_{ik}` to
    :math:`FN_k` (:math:`k\ne j`); with :math:`\operatorname{Cov}(Y_i)=\operatorname{diag}p_i-
    p_ip_i^\top` the covariance is :math:`\sum_jB_jG_jB_j^\top`,
    :math:`G_j=\sum_{\hat y_i=j}\operatorname{Cov}(Y_i)` and :math:`B_j` the 2K x K map.

    Examples
    --------
    >>> rows = ClassRows(np.full((3, 2), 0.5), np.array([0, 1, 1]), np.array([0, -1, -1]))
    >>> mean, cov = count_moments(rows, np.array([[[0.3, 0.7], [0.4, 0.6]]]))
    >>> mean.round(2).tolist(), cov[0].diagonal().round(2).tolist()
    ([[1.0, 1.3, 0.7, 0.0]], [0.0, 0.45, 0.45, 0.0])
    """
    k, yp = rows.k, rows.y_pred[rows.mis]
    onehot = (yp[:, None] == np.arange(k)).astype(float)
    tp_k = np.diagonal(rows.known).astype(float)
    fn_k = rows.known.sum(axis=1) - tp_k
    tp = np.einsum("smk,mk->sk", p, onehot)
    mean = np.concatenate([tp_k + tp, fn_k + p.sum(axis=1) - tp], axis=1)
    pick = np.zeros((k, 2 * k, k))
    for j in range(k):
        pick[j, k + np.arange(k), np.arange(k)] = 1.0
        pick[j, k + j, j], pick[j, j, j] = 0.0, 1.0
    cov = np.zeros((p.shape[0], 2 * k, 2 * k))
    for j in range(k):
        pj = p[:, yp == j]
        g = pj.sum(axis=1)[:, :, None] * np.eye(k) - np.einsum("smk,sml->skl", pj, pj)
        cov += np.einsum("ak,skl,bl->sab", pick[j], g, pick[j])
    return mean, cov


def _metric_of(rows: ClassRows, metric: str, zd: float) -> Callable[[np.ndarray], np.ndarray]:
    """``f(x)``: the metric from :math:`x=(TP, FN)` (..., 2K), the predictions fixed."""
    k = rows.k
    predicted = np.bincount(rows.y_pred, minlength=k).astype(float)

    def f(x: np.ndarray) -> np.ndarray:
        tp, fn = x[..., :k], x[..., k:]
        return counts_value(metric, tp, predicted - tp, fn, rows.n - predicted - fn, zd)

    return f


def delta_moments(rows: ClassRows, comps: ClassComponents, metrics: tuple[str, ...],
                  opts: Options) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""Delta-method (means, variances) of metrics of :math:`x` for every component.

    :math:`\mu=f(\bar x)+\tfrac12\operatorname{tr}(H\Sigma)` (the second-order term with
    ``opts.second_order``) and :math:`\sigma^2=\nabla f^\top\Sigma\nabla f`, at
    :math:`(\bar x,\Sigma)` of :func:`count_moments`, derivatives by central differences.

    Examples
    --------
    Macro recall of two classes with one missing row predicted 1, :math:`P(Y=1)=0.6`: the
    recall of class 1 is 1 whatever the label, that of class 0 is 1 or 1/2, so the exact mean
    is 0.9 and the variance 0.015; the delta method, near them even for one row:

    >>> rows = ClassRows(np.full((3, 2), 0.5), np.array([0, 1, 1]), np.array([0, 1, -1]))
    >>> comps = ClassComponents(np.ones(1), lambda i: np.array([[[0.4, 0.6]]]))
    >>> out = delta_moments(rows, comps, ("macro_recall",), Options())
    >>> [v.round(3).tolist() for v in out["macro_recall"]]
    [[0.901], [0.016]]
    """
    out = {metric: (np.empty(comps.size), np.empty(comps.size)) for metric in metrics}
    eye = np.eye(2 * rows.k)
    for index, p in comps.chunks(rows.m * rows.k):
        x, cov = count_moments(rows, p)
        h = 1e-3 * np.maximum(1.0, np.abs(x))[:, :, None] * eye  # (c, a, 2K) steps
        step = np.diagonal(h, axis1=1, axis2=2)
        ha, hb, xs = h[:, :, None, :], h[:, None, :, :], x[:, None, None, :]
        for metric in metrics:
            f = _metric_of(rows, metric, opts.zero_division)
            grad = np.nan_to_num((f(x[:, None, :] + h) - f(x[:, None, :] - h)) / (2 * step))
            mean = f(x)
            if opts.second_order:
                hess = (f(xs + ha + hb) - f(xs + ha - hb) - f(xs - ha + hb)
                        + f(xs - ha - hb)) / (4 * np.einsum("sa,sb->sab", step, step))
                mean = mean + 0.5 * np.einsum("sab,sab->s", np.nan_to_num(hess), cov)
            out[metric][0][index] = mean
            out[metric][1][index] = np.maximum(np.einsum("sa,sab,sb->s", grad, cov, grad), 0.0)
    return out


def simulate_classes(rows: ClassRows, comps: ClassComponents, metrics: tuple[str, ...],
                     pick: np.ndarray, rng: np.random.Generator, zd: float) -> np.ndarray:
    r"""PEMI (Algorithm 1) with K classes: metric values of completions, shape
    (len(pick), metrics, K); completion :math:`b` draws the missing labels from component
    ``pick[b]``. A metric of the whole matrix is at class 0, NaN at the others.

    Examples
    --------
    >>> rows = ClassRows(np.full((3, 2), 0.5), np.array([0, 1, 1]), np.array([0, 1, -1]))
    >>> comps = ClassComponents(np.ones(1), lambda i: np.tile([[[0.4, 0.6]]], (i.size, 1, 1)))
    >>> v = simulate_classes(rows, comps, ("accuracy",), np.zeros(20_000, int),
    ...                      np.random.default_rng(0), 0.0)
    >>> round(float(v[:, 0, 0].mean()), 2)  # (2 + 0.6) / 3
    0.87
    """
    out = np.full((pick.size, len(metrics), rows.k), np.nan)
    yp = rows.y_pred[rows.mis]
    step = max(1, _CELLS // max(rows.m * rows.k, 1))
    for start in range(0, pick.size, step):
        stop = min(start + step, pick.size)
        cum = np.cumsum(comps.p_of(pick[start:stop]), axis=-1)
        u = rng.random((stop - start, rows.m, 1))
        codes = np.minimum((u >= cum).sum(axis=-1), rows.k - 1)
        mats = (matrix_of(codes, yp, rows.k) + rows.known).astype(float)
        full = np.repeat(rows.labels[None], stop - start, axis=0)
        full[:, rows.mis] = codes
        for j, metric in enumerate(metrics):
            value = (auc_values(full, rows.scores, metric, zd) if metric in AUC_METRICS else
                     counts_value(metric, *one_vs_rest(mats), zd))
            if metric in CLASS_METRICS or metric == "roc_auc":
                out[start:stop, j] = value
            else:
                out[start:stop, j, 0] = value
    return out



def _class_laws(rows: ClassRows, comps: ClassComponents, metrics, method: str, ci_prob: float,
                ci_kind: str, opts: Options, rng, classes) -> tuple[dict, list[str]]:
    """Rows (mean, sd, lower, upper, mass, p_undefined) and exact laws (or None) of accuracy
    and the per-class metrics, keyed by (metric, class code); binary PEMI's laws per class."""
    out, notes, replaced = {}, [], []
    wanted = [m for m in metrics if m in CLASS_METRICS]
    groups = ([(None, ("accuracy",))] if {"accuracy", "micro_f1"} & set(metrics) else []) + (
        [(k, tuple(wanted)) for k in range(rows.k)] if wanted else [])
    for key, names in groups:
        rows_b, pos, col = rows.binary(key)
        comps_b = comps.of(pos, col)
        laws = (exact_mixture(rows_b, comps_b, names, opts) if method == "exact" or (
            method == "auto" and affordable(rows_b, comps_b.size)) else {})
        moments = {} if method == "exact" else component_moments(rows_b, comps_b, names, opts)
        for name in names:
            if method == "exact":
                d = laws[name]
                lo, hi = d.interval_ends(ci_prob, ci_kind)
                row, law = (d.mean, d.sd, lo, hi, d.mass(lo, hi), d.p_undefined), d
            else:
                normal = normal_of(moments[name], comps_b.weights, ci_prob)
                row, note, kind = choose(name, normal, laws.get(name), ci_prob=ci_prob,
                                         ci_kind=ci_kind, fallback=method == "auto")
                if note and kind == "exact" and method == "auto":
                    replaced.append(name if key is None else f"{name} of {classes[key]}")
                elif note:
                    notes.append(note if key is None else f"class {classes[key]}: {note}")
                if row is None:
                    row = (*imputed_summary(rows_b, comps_b, (name,), ci_prob, rng, opts)[name],
                           normal[4])
                law = laws.get(name) if kind == "exact" else None
            for metric in ((name,) if key is not None else
                           [m for m in ("accuracy", "micro_f1") if m in metrics]):
                out[metric, 0 if key is None else key] = (row, law)
    if replaced:
        notes.append(f"the normal approximation is poor for {len(replaced)} metric(s) with an "
                     f"exact law ({', '.join(replaced[:4])}{', ...' if len(replaced) > 4 else ''}"
                     "; a mass at a bound, skew or few missing rows): their exact laws are "
                     "reported (column 'exact').")
    return out, notes


def _closed_form(rows: ClassRows, comps: ClassComponents, metrics, method: str, ci_prob: float,
                 ci_kind: str, opts: Options, rng, classes) -> tuple[xr.Dataset, list[str]]:
    """The ``closed_form`` Dataset over (``metric``, ``class``) and its notes."""
    laws, notes = _class_laws(rows, comps, metrics, method, ci_prob, ci_kind, opts, rng,
                              classes)
    others = tuple(m for m in metrics if m not in EXACT + AUC_METRICS)
    aucs, more = auc_rows(rows, comps, metrics, ci_prob, ci_kind, opts)
    laws.update({key: (row, None) for key, row in aucs.items()})
    notes += more
    for metric, (means, variances) in delta_moments(rows, comps, others, opts).items():
        normal = normal_of((means, variances, np.full(comps.size, np.nan)), comps.weights,
                           ci_prob)
        row, note, _ = choose(metric, normal, None, ci_prob=ci_prob, ci_kind=ci_kind,
                              fallback=False)
        notes += [note] if note else []
        laws[metric, 0] = (row, None)
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined")
    shape = (len(metrics), rows.k)
    arr = np.full((*shape, len(names)), np.nan)
    exact = np.zeros(shape, dtype=bool)
    size = max([law.values.size for _, law in laws.values() if law is not None], default=0)
    values, probs = np.full((*shape, size), np.nan), np.full((*shape, size), np.nan)
    for (metric, c), (row, law) in laws.items():
        j = metrics.index(metric)
        arr[j, c] = row
        if law is not None:
            exact[j, c] = True
            values[j, c, : law.values.size], probs[j, c, : law.values.size] = law.values, law.probs
    dims = ("metric", "class")
    ds = xr.Dataset({name: (dims, arr[..., i]) for i, name in enumerate(names)},
                    coords={"metric": list(metrics), "class": class_coordinate(classes)})
    ds["exact"] = (dims, exact)
    if size:
        ds["pmf_value"] = ((*dims, "support"), values)
        ds["pmf_prob"] = ((*dims, "support"), probs)
    return ds, notes


# ---------------------------------------------------------------------------- input handling
def _known(arr: np.ndarray) -> list:
    """The known values of object labels, integral floats as ints (a column that held NaN)."""
    return [int(v) if isinstance(v, (float, np.floating)) and float(v).is_integer() else v
            for v in arr[~pd.isna(arr)].tolist()]


def _labels(labels: Any, named, n_columns: int, ref_labels: list | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """The classes of the score columns (the DataFrame's columns, a Categorical's K categories,
    else the classes of the labels and of the reference's labels) and the labels' codes (-1
    where missing)."""
    if isinstance(getattr(labels, "dtype", None), pd.CategoricalDtype):
        categories = np.asarray(list(labels.dtype.categories), dtype=object)
        named = categories if named is None and categories.size == n_columns else named
    if isinstance(labels, (pd.Series, pd.Index, pd.Categorical)):
        labels = np.asarray(labels, dtype=object)
    arr = np.asarray(labels, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-dimensional class labels with None or NaN where "
                         f"missing, got shape {arr.shape}.")
    missing = pd.isna(arr)
    known = _known(arr)
    every = known + (ref_labels or [])
    if not every and named is None:
        classes = np.arange(n_columns).astype(object)
    else:
        names = ("labels" if ref_labels is None else "labels and reference labels", "scores")
        classes = column_classes(every, named, n_columns, names=names) if every else named
    codes = np.full(arr.size, -1, dtype=np.int64)
    if known:
        codes[~missing] = encode(known, classes=classes)[0]
    return classes, codes


def _reference(reference: Any, n_columns: int, named
               ) -> tuple[np.ndarray, list, np.ndarray | None]:
    """The reference's scores (n_ref, K), its labels (every one known) and its scores'
    columns, checked against the test scores' K columns and their names."""
    if (not isinstance(reference, (tuple, list)) or len(reference) != 2
            or any(np.ndim(part) == 0 for part in reference)):
        raise ValueError("reference must be (scores, labels) of labelled data, scores of shape "
                         f"(n, {n_columns}) (one column per class), or a table with the columns "
                         f"that scores and labels name; got {describe(reference)}.")
    ref_scores, ref_labels = aligned(**{"reference scores": reference[0],
                                        "reference labels": reference[1]})
    s, ref_named = as_class_scores(ref_scores, "reference scores")
    if s.shape[1] != n_columns:
        raise ValueError(f"reference scores have {s.shape[1]} columns and scores {n_columns}; "
                         "both need one column per class, in the same order.")
    if named is not None and ref_named is not None and list(named) != list(ref_named):
        raise ValueError(f"reference scores' columns {describe(list(ref_named))} differ from "
                         f"the scores' {describe(list(named))}: the reference must have the "
                         "test set's classes, in the same order.")
    arr = np.asarray(ref_labels.to_numpy() if isinstance(ref_labels, pd.Series)
                     else ref_labels, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"reference labels must be 1-dimensional class labels, got shape "
                         f"{arr.shape}.")
    if (n_missing := int(pd.isna(arr).sum())):
        raise ValueError(f"reference labels has {n_missing} missing value(s); the reference is "
                         "labelled data: drop its unlabelled rows.")
    # C order, as the labelled test rows are: the map's mode does not depend on the layout
    return np.ascontiguousarray(s), _known(arr), ref_named


def as_class_mnar(mnar: Any, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The ``mnar`` argument with K classes: means and sds of the shifts :math:`\delta_k`.

    Parameters
    ----------
    mnar : None, dict or sequence
        None: missing at random (all 0). ``{class: delta}`` or ``{class: (mean, sd)}`` (classes
        not named get 0), or a sequence of K such values in the classes' order.
    classes : numpy.ndarray
        The K classes.

    Returns
    -------
    mean, sd : numpy.ndarray, shape (K,)

    Raises
    ------
    ValueError
        A class that is not among ``classes``, a sequence of another length, a value that is
        not a number or (mean, sd) with sd >= 0.

    Examples
    --------
    >>> classes = np.array(["a", "b", "c"], dtype=object)
    >>> [v.tolist() for v in as_class_mnar({"b": 0.5, "c": (1.0, 0.2)}, classes)]
    [[0.0, 0.5, 1.0], [0.0, 0.0, 0.2]]
    """
    k = len(classes)
    if mnar is None:
        return np.zeros(k), np.zeros(k)
    if isinstance(mnar, dict):
        index = pd.Index(list(classes), dtype=object)
        pos = index.get_indexer(pd.Index(list(mnar), dtype=object))
        if (pos < 0).any():
            raise ValueError(f"mnar's keys must be classes among {describe(list(classes))}; got "
                             f"{describe([c for c, i in zip(mnar, pos, strict=True) if i < 0])}.")
        items = dict(zip(pos.tolist(), mnar.values(), strict=True))
    elif isinstance(mnar, (list, tuple, np.ndarray)) and len(mnar) == k:
        items = dict(enumerate(mnar))
    else:
        raise ValueError(f"mnar with {k} classes must be a dict {{class: delta or (mean, sd)}} or "
                         f"a sequence of {k} such values (the shift of each class's "
                         f"log-probability of a missing label); got {describe(mnar)}.")
    out = np.zeros((2, k))
    for c, value in items.items():
        out[:, c] = as_mnar(value, MNAR_SHIFT)
    return out[0], out[1]


def _calibration_rows(rows: ClassRows, reference) -> tuple[np.ndarray, np.ndarray, str]:
    """The scores and label codes the map learns from, and what they are: the reference's
    rows when given, else the labelled test rows."""
    if reference is not None:
        return (*reference, f"the reference's {reference[1].size} rows")
    known = ~rows.missing
    if not known.any():
        raise ValueError("labels has no known value (all missing): no calibration map can be "
                         "fitted. Pass p (class probabilities), calibration='none' or "
                         "reference=(scores, labels) with labelled data.")
    return rows.scores[known], rows.labels[known], f"{int(known.sum())} labelled rows"


def _calibrated(rows: ClassRows, p, calibration: str, uncertainty: bool, method: str,
                prior_a, prior_log_b, random_seed, notes: list[str], reference=None):
    """(fixed probabilities of the missing rows or None, map posterior or None, source);
    ``reference``: the (scores, label codes) the map learns from instead of the labelled
    rows."""
    models = method in ("pymc", "both")
    if p is not None or calibration == "none":
        if models:
            raise ValueError(f"method={method!r} learns the calibration map from the labelled "
                             "rows: p must be None and calibration 'platt'.")
        if p is None:
            return rows.scores[rows.mis], None, "the scores (calibration='none')"
        given, _ = as_class_scores(p, "p")
        if given.shape != rows.scores.shape:
            raise ValueError(f"p must have the shape of scores, {rows.scores.shape}; got "
                             f"{given.shape}.")
        return given[rows.mis], None, "given p"
    cal_scores, cal_labels, fitted_on = _calibration_rows(rows, reference)
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 5])
    post = posterior(cal_scores, cal_labels, prior_a=prior_a, prior_log_b=prior_log_b,
                     random_seed=seed)
    source = f"multinomial Platt map fitted on {fitted_on}"
    if uncertainty or models:
        if post.ess < 100:
            notes.append(f"the importance draws of the calibration map's posterior have an "
                         f"effective size of {post.ess:.0f} (of {post.size}): its mixture is "
                         "rough; method='pymc' samples it with NUTS.")
        return None, post, source + f", integrated over {post.size} draws of its posterior"
    notes.append("calibration_uncertainty=False: the intervals are conditional on the fitted "
                 "calibration map; its error, shared by every missing row, is not in them, so "
                 "they undercover, the more the fewer the labelled rows.")
    a, b = post.mode
    x = log_scores(rows.scores[rows.mis])
    return platt_probabilities(x, a[None], np.array([b]))[0], None, source


def _complete_case(rows: ClassRows, metrics, zd: float) -> np.ndarray:
    """The metrics of the labelled rows alone, (metric, class)."""
    out = np.full((len(metrics), rows.k), np.nan)
    if rows.known.sum() == 0:
        return out
    known = ~rows.missing
    for j, metric in enumerate(metrics):
        value = (auc_values(rows.labels[known], rows.scores[known], metric, zd)
                 if metric in AUC_METRICS else
                 counts_value(metric, *one_vs_rest(rows.known.astype(float)), zd))
        if metric in CLASS_METRICS or metric == "roc_auc":
            out[j] = value
        else:
            out[j, 0] = value
    return out


def _predictive(values: np.ndarray, metrics, coord, shape, tree=None) -> xr.DataTree:
    """``posterior_predictive/value`` (chain, draw, metric, class)."""
    value = xr.DataArray(values.reshape(*shape, *values.shape[1:]),
                         dims=(*SAMPLE_DIMS, "metric", "class"),
                         coords={"metric": list(metrics), "class": coord})
    tree = tree if tree is not None else xr.DataTree()
    tree["posterior_predictive"] = xr.DataTree(xr.Dataset({"value": value}))
    return tree


def _model_draws(rows: ClassRows, delta, coord, prior_a, prior_log_b, random_seed,
                 sample_kwargs, reference=None):
    """NUTS draws of the multinomial Platt model (fitted on ``reference``, else on the
    labelled rows) and the components of its draws."""
    cal_scores, cal_labels, _ = _calibration_rows(rows, reference)
    m3 = bool((delta[1] > 0).any())
    pm_model = class_model(cal_scores, cal_labels, classes=list(coord),
                           delta=delta if m3 else None, prior_a=prior_a,
                           prior_log_b=prior_log_b)
    tree = sample(pm_model, random_seed, sample_kwargs)
    post = tree["posterior"].to_dataset()
    shape = post["b"].shape
    a_free = post["a"].values.reshape(-1, rows.k - 1)
    a = np.column_stack([np.zeros(a_free.shape[0]), a_free])
    b = post["b"].values.reshape(-1)
    d = (post["delta"].values.reshape(-1, rows.k) if m3 else
         np.broadcast_to(delta[0], (b.size, rows.k)))
    x = log_scores(rows.scores[rows.mis])
    comps = ClassComponents(np.full(b.size, 1.0 / b.size),
                            lambda i: platt_probabilities(x, a[i], b[i], d[i]))
    return tree, comps, shape, pm_model


# ------------------------------------------------------------------------------ entry point
def pemi_classes(scores, labels, *, y_pred=None, p=None, calibration: str = "platt",
                 calibration_uncertainty: bool = True, reference=None, mnar=None, metrics=None,
                 method: str = "auto", ci_prob: float = 0.95, ci_kind: str = "eti",
                 draws: int = 10_000, zero_division: float = 0.0, second_order: bool = True,
                 prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B, random_seed: int | None = None,
                 sample_kwargs: dict[str, Any] | None = None) -> PEMIClasses:
    r"""Distribution of a K-class classifier's metrics on a test set with missing labels.

    Parameters
    ----------
    scores : array-like or DataFrame, shape (n, K)
        Class probabilities of every test row (rows summing to 1); a DataFrame's columns are
        the classes. They give the predictions (largest score) and the calibration map's input.
    labels : array-like, shape (n,)
        Class labels of any hashable type, None or NaN where missing.
    y_pred : array-like, shape (n,), optional
        Predicted classes, if not the class of the largest score.
    p : array-like, shape (n, K), optional
        Class probabilities of the missing labels, used as given (read on the missing rows).
    calibration : {"platt", "none"}
        The multinomial Platt map fitted on the labelled rows or on ``reference`` (module
        docstring), or the scores as they are.
    calibration_uncertainty : bool
        Mix the laws over the map's posterior (default) or condition on the fitted map.
    reference : (scores, labels), optional
        Labelled calibration data of the same classes: class probabilities (n_ref, K) (a
        DataFrame's columns must be those of ``scores``) and their class labels, paired by
        index where both are pandas objects. The map and its posterior (and the models') are
        learned on it instead of on the labelled test rows, which enter the metrics exactly.
        Not used with ``p`` or ``calibration="none"``.
    mnar : dict or sequence, optional
        Shifts :math:`\delta_k` of the log-probability of class :math:`k` of a missing label:
        ``{class: delta}`` or ``{class: (mean, sd)}`` (a normal prior), or a sequence of K of
        them (:func:`as_class_mnar`).
    metrics : str or sequence of str, optional
        Among :data:`CLASS_PEMI_METRICS`; default accuracy, balanced accuracy, per-class
        precision, recall and F1, and macro-F1.
    method : {"auto", "gauss", "exact", "impute", "pymc", "both"}
        ``"auto"``: exact laws of accuracy and the per-class metrics (a normal mixture where the
        exact one is too costly and fits), normal delta-method laws of the others;
        ``"gauss"``: normal laws throughout; ``"exact"``: the exact laws only (no averages);
        ``"impute"``: ``draws`` completions (PEMI's Algorithm 1); ``"pymc"``: NUTS on the
        map's model (:func:`~bayeval.methods.pemi.multiclass_models.class_model`) and one
        completion per posterior draw; ``"both"``: that and the fast path, for
        :meth:`~bayeval.evaluation.Evaluation.check`.
    ci_prob, ci_kind : float, {"eti", "hdi"}
    draws : int
        Completions of ``"impute"``.
    zero_division : {0.0, 1.0, np.nan}
        A per-class metric's value where its denominator is 0.
    second_order : bool
        Second-order delta-method means.
    prior_a, prior_log_b : (mean, sd)
        Normal priors of the map's intercepts and log slope.
    random_seed : int, optional
    sample_kwargs : dict, optional
        Passed to ``pm.sample``.

    Returns
    -------
    PEMIClasses
        ``closed_form`` over (``metric``, ``class``): ``mean``, ``sd``, ``lower``, ``upper``,
        ``interval_mass``, ``p_undefined`` (NaN for the delta-method laws), ``exact`` (whether
        the row is of an exact law) and the exact PMFs; draws
        ``posterior_predictive/value`` for ``"impute"`` and the models. Group ``data``: sizes,
        ``complete_case``, ``map_draws`` and ``importance_ess``.

    Raises
    ------
    ValueError
        Scores that are not class probabilities, labels or predictions outside the classes,
        rows that differ in number, no labelled row to fit the map on, a bad ``mnar``; a
        ``reference`` whose columns or classes are not the test set's, or with missing
        labels.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.dirichlet([2, 2, 2], 300)
    >>> y = (rng.random(300)[:, None] > s.cumsum(axis=1)).sum(axis=1).astype(object)
    >>> y[rng.random(300) < 0.3] = None
    >>> ev = pemi_classes(s, y, metrics=["accuracy", "macro_f1"], random_seed=0)
    >>> ev.summary()[["mean", "lower", "upper"]].round(2)  # doctest: +NORMALIZE_WHITESPACE
    pemi_multiclass (auto), closed form: 95% equal-tailed intervals (eti)
                    mean  lower  upper
    metric   class
    accuracy        0.55   0.52   0.58
    macro_f1        0.55   0.52   0.58
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = as_metrics(metrics, CLASS_PEMI_METRICS, DEFAULT_METRICS)
    if method == "exact" and (other := [m for m in metrics if m not in EXACT]):
        raise ValueError(f"method='exact' gives the exact laws of {', '.join(EXACT)}; "
                         f"{', '.join(other)} have normal laws: use method='auto'.")
    calibration = as_choice(calibration, "calibration", CALIBRATIONS)
    opts = Options(zero_division=as_zero_division(zero_division),
                   second_order=bool(second_order))
    draws = as_positive_int(draws, "draws", least=2)
    if method in ("pymc", "both"):
        sample_kwargs = as_sample_kwargs(sample_kwargs)
    s, named = as_class_scores(scores, "scores")
    ref_s, ref_labels, ref_named = (None, None, None) if reference is None else _reference(
        reference, s.shape[1], named)
    classes, codes = _labels(labels, named if named is not None else ref_named, s.shape[1],
                             ref_labels)
    cal = None if reference is None else (
        ref_s, encode(ref_labels, classes=classes, names=("reference labels", ""))[0])
    yp = s.argmax(axis=1) if y_pred is None else encode(y_pred, classes=classes,
                                                         names=("y_pred", ""))[0]
    if not codes.size == yp.size == s.shape[0]:
        raise ValueError(f"scores, labels and y_pred must have one value per row; got "
                         f"{s.shape[0]}, {codes.size} and {yp.size} rows.")
    delta = as_class_mnar(mnar, classes)
    rows = ClassRows(s, yp, codes)
    coord = class_coordinate(classes)
    notes: list[str] = []
    if rows.m == 0:
        notes.append("no label is missing: the metrics are known exactly (zero width).")
        base, post, source = np.empty((0, rows.k)), None, "none needed"
        method = "exact" if method in ("pymc", "both") else method
    else:
        base, post, source = _calibrated(rows, p, calibration, calibration_uncertainty, method,
                                         prior_a, prior_log_b, random_seed, notes, cal)
    rng = np.random.default_rng(None if random_seed is None else [int(random_seed), 7])
    comps = _components(rows, base, post, delta, rng)
    mnar_note = "" if not delta[0].any() and not delta[1].any() else (
        "; MNAR shifts delta: " + ", ".join(
            f"{c} ~ N({m:g}, {sd:g}^2)" if sd else f"{c} = {m:g}"
            for c, m, sd in zip(coord.tolist(), *delta, strict=True) if m or sd))
    described = (f"{', '.join(metrics)} of {rows.k} classes on {rows.n} rows, {rows.m} labels "
                 f"missing; p: {source}{mnar_note}")
    data = xr.Dataset({"complete_case": (("metric", "class"),
                                         _complete_case(rows, metrics, opts.zero_division)),
                       "n": rows.n, "n_missing": rows.m,
                       "map_draws": 0 if post is None else post.size,
                       "importance_ess": np.nan if post is None else post.ess},
                      coords={"metric": list(metrics), "class": coord},
                      attrs={"p_source": source})
    closed, tree, pm_model = None, None, None
    if method in ("pymc", "both"):
        tree, model_comps, shape, pm_model = _model_draws(rows, delta, coord, prior_a,
                                                          prior_log_b, random_seed,
                                                          sample_kwargs, cal)
        values = simulate_classes(rows, model_comps, metrics, np.arange(model_comps.size), rng,
                                  opts.zero_division)
        tree = _predictive(values, metrics, coord, shape, tree)
    elif method == "impute":
        pick = rng.choice(comps.size, size=draws, p=comps.weights)
        values = simulate_classes(rows, comps, metrics, pick, rng, opts.zero_division)
        tree = _predictive(values, metrics, coord, (1, draws))
    if method not in ("pymc", "impute"):
        closed, more = _closed_form(rows, comps, metrics, "auto" if method == "both" else method,
                                    ci_prob, ci_kind, opts, rng, classes)
        notes += more
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=5)  # the caller of be.pemi
    return PEMIClasses.create(
        method="pemi_multiclass", variant=method, closed_form=closed, draws=tree,
        estimand="posterior_predictive/value" if tree is not None else None,
        iid_draws=method == "impute", model=pm_model, data=data, warnings=notes,
        description=described, ci_prob=ci_prob, ci_kind=ci_kind, random_seed=random_seed,
        assumptions=ASSUMPTIONS, calibration_uncertainty=post is not None)
