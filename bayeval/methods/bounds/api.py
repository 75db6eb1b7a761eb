r"""Fréchet bounds: evaluating a classifier from weak labels only (Maia Polo et al., 2024).

Labelling functions vote on every item; their votes form one categorical variable :math:`Z`
(a *cell* per distinct pattern, :mod:`bayeval.methods.bounds.label_models`), and a label model
gives :math:`\beta_z(y) = P(Y = y \mid Z = z)`. No true label is seen, so the joint law of the
prediction :math:`H = h(X)` and :math:`Y` is not identified: only its margins
:math:`p_z = P(Z = z)`, :math:`\alpha_z(k) = P(H = k \mid z)` and :math:`\beta_z` are. A metric
:math:`\sum_k w_k\,P(H{=}k, Y{=}k) / D_k` (accuracy, precision, recall, f1, macro_f1) then has
sharp bounds :math:`[L, U]` over all couplings of :math:`\alpha_z` and :math:`\beta_z` in each
cell.

:func:`bounds` validates the inputs once, reduces them to the cell counts
:math:`n_{zk}` and fits the label model, then runs

* a fast path (:mod:`~bayeval.methods.bounds.fast`): the exact bounds with influence-function
  standard errors, or the paper's entropic estimator;
* and/or a PyMC model (:mod:`~bayeval.methods.bounds.models`): M1 (label model plugged in), M2
  (Bayesian Dawid–Skene), M3 (a few gold labels), whose posterior is over the bounds and a
  metric draw :math:`L + u\,(U - L)`.

The result is a :class:`~bayeval.methods.bounds.result.BoundsEvaluation` (bounds first).
:func:`rank_classifiers` and :func:`compare_labelling_functions` reuse the exact bounds for model
selection without labels and for choosing labelling functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from bayeval import validation
from bayeval.evaluation import CI_KINDS
from bayeval.methods.bounds import models
from bayeval.methods.bounds.fast import (
    BINARY_ONLY,
    METRICS,
    class_metrics,
    closed_form,
    default_metrics,
    entropic_bounds,
    exact_bounds,
    kink_corrections,
    pool_small_cells,
)
from bayeval.methods.bounds.label_models import (
    LABEL_MODELS,
    dawid_skene_concerns,
    fit_label_model,
    label_model_delta,
    label_model_diagnostics,
    majority_vote_concerns,
    weak_label_patterns,
)
from bayeval.methods.bounds.misfit import misfit_check
from bayeval.methods.bounds.result import BoundsEvaluation, check_reference
from bayeval.sampling import sample
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_array,
    as_choice,
    as_ci_prob,
    as_sample_kwargs,
    as_seed,
    check_same_length,
    named_columns,
)

__all__ = [
    "as_classes",
    "as_metrics",
    "bounds",
    "class_codes",
    "compare_labelling_functions",
    "no_vote_share",
    "rank_classifiers",
    "recode_classes",
    "sparse_priors",
]

METHODS = ("exact", "entropic", "pymc", "both")
#: at most this many classes (the cell counts hold patterns x classes numbers)
MAX_CLASSES = 1000
#: cells with fewer items than this are "small": plug-in bounds are biased inward there
SMALL_CELL, SMALL_SHARE = 10, 0.2
ROW_SUM_TOL = 1e-6
#: M1's sampler defaults (over :data:`bayeval.sampling.DEFAULTS`): its posterior has
#: 2 |Z| (K + 1) free scalars (|Z| patterns, K classes; 720 on 80 patterns and 2 classes, 960
#: on 80 and 3), and the largest R-hat of 2 x 1,000 draws reached 1.0086-1.013 on such sizes
#: with no divergence and bulk ESS above 700: 2,000 draws per chain keep it below 1.01
M1_SAMPLING = {"draws": 2000}
#: M3's: its coupling t = max(0, a + b - 1) + u min(a, b, 1 - a, 1 - b) has kinks, where NUTS's
#: default step (target_accept 0.8) left a divergence in some 2 x 1,000-draw runs; 0.9 none
M3_SAMPLING = {"target_accept": 0.9}
ASSUMPTIONS = ("The label model's P(Y | weak labels) is right (a wrong one moves each bound by up "
               "to the total-variation error, Thm 5.1; a label model fitted on these weak labels "
               "adds its estimation error to the intervals unless label_model_uncertainty=False); "
               "the items are a random sample of the "
               "population; the classifier was not trained on them. Nothing is assumed about how "
               "predictions and true labels are coupled within a weak-label pattern: the bounds "
               "are the best and worst case over all couplings. A metric's position inside the "
               "bounds is a prior (a uniform coupling position) unless gold labels are given.")


# ------------------------------------------------------------------------------ the inputs
def as_classes(x, name: str, *, ndim: int, minimum: int) -> np.ndarray:
    """Classes or votes as an int64 array: integers (or floats holding integers, or booleans).

    Parameters
    ----------
    x : array-like
        ``y_pred`` (``ndim=1``, ``minimum=0``) or ``weak_labels`` (``ndim=2``, ``minimum=-1``;
        a 1-D array is one labelling function).
    name : str
        The argument's name, for the error messages.
    ndim : int
    minimum : int
        The smallest allowed value (-1 = abstain).

    Returns
    -------
    int64 numpy.ndarray

    Raises
    ------
    ValueError
        For a wrong number of dimensions, non-integers or values below ``minimum``.

    Examples
    --------
    >>> as_classes([[1.0, -1.0], [0.0, 1.0]], "weak_labels", ndim=2, minimum=-1).tolist()
    [[1, -1], [0, 1]]
    """
    integral = getattr(getattr(x, "dtype", None), "kind", "f") in ("i", "u", "b")  # fast path
    arr = as_array(x, name, ndim=None, dtype=np.int64 if integral else float)
    if ndim == 2 and arr.ndim == 1:
        arr = arr[:, None]  # one labelling function
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    if (arr.min() < minimum) or not (integral or (arr == np.round(arr)).all()):
        bad = (arr != np.round(arr)) | (arr < minimum)
        vals = np.unique(arr[bad])[:5].tolist()
        allowed = "-1 (abstain) or a class 0, 1, ..." if minimum < 0 else "a class 0, 1, ..."
        raise ValueError(f"{name} must hold integers, each {allowed}; got values such as "
                         f"{vals}.")
    return arr.astype(np.int64)


def _as_label_model(label_model, n_items: int):
    """A label model name, or a validated (n_items, n_classes) array of distributions."""
    if isinstance(label_model, str):
        return as_choice(label_model, "label_model", LABEL_MODELS)
    probs = as_array(label_model, "label_model", ndim=2)
    if probs.shape[0] != n_items:
        raise ValueError(f"length mismatch: label_model has {probs.shape[0]} rows, weak_labels "
                         f"{n_items}; give P(Y | weak labels) for every item.")
    if probs.shape[1] < 2 or (probs < 0).any() or (probs > 1).any():
        raise ValueError("label_model must hold probabilities in [0, 1], one column per class "
                         f"(at least 2); got shape {probs.shape}, range [{probs.min():g}, "
                         f"{probs.max():g}].")
    worst = np.abs(probs.sum(axis=1) - 1.0)
    if (worst > ROW_SUM_TOL).any():
        i = int(np.argmax(worst))
        raise ValueError(f"label_model rows must be distributions summing to 1; row {i} sums to "
                         f"{probs[i].sum():.6g}.")
    return probs


def _label_model_by_cell(label_model, cell, patterns, counts, n_classes, warn) -> np.ndarray:
    """beta (n_cells, n_classes): the named label model, or the given rows averaged per cell."""
    if isinstance(label_model, str):
        return fit_label_model(label_model, patterns, counts, n_classes)
    beta = np.stack([np.bincount(cell, label_model[:, k], minlength=len(counts))
                     for k in range(n_classes)], axis=1) / counts[:, None]
    if np.abs(label_model - beta[cell]).max() > ROW_SUM_TOL:
        warn.append("label_model differs between items with the same weak labels; its mean per "
                    "pattern is used as P(Y | pattern) (right if the rows are P(Y | X, Z)).")
    return beta


def _label_model_error(cells, label_model, wanted: bool = True) -> dict[str, Any]:
    """A named label model's delta method (its derivative in the pattern counts and its sd)
    as :func:`~bayeval.methods.bounds.fast.exact_bounds`' arguments; none for a given one."""
    if not wanted or not isinstance(label_model, str):
        return {}
    return label_model_delta(label_model, cells.patterns, cells.counts,
                             cells.beta).error_terms()


class _Cells:
    """Weak-label patterns of the items and the label model per pattern (validated inputs)."""

    def __init__(self, weak_labels, label_model, n_classes, warn):
        self.n_classes, self.label_model = n_classes, label_model
        self.cell, self.patterns, self.counts = weak_label_patterns(weak_labels, n_classes)
        self.beta = _label_model_by_cell(label_model, self.cell, self.patterns, self.counts,
                                         n_classes, warn)

    def cell_counts(self, y_pred: np.ndarray) -> np.ndarray:
        """n_zk: items per pattern z and predicted class k."""
        k = self.n_classes
        flat = np.bincount(self.cell * k + y_pred, minlength=len(self.counts) * k)
        return flat.reshape(-1, k)


def class_codes(y_pred: np.ndarray, weak_labels: np.ndarray, n_classes: int | None = None,
                width: int | None = None) -> np.ndarray:
    """The class codes of the data, in the order of the classes 0, ..., K-1 the bounds use.

    Classes are coded by non-negative integers (-1 is an abstaining vote): ``0, ..., K-1`` as
    they are, or any other distinct codes (``{1, 2}``, ``{0, 10**9}``) in their sorted order,
    so that class 1 of a binary problem, whose precision, recall and F1 are bounded, is the
    larger code. Codes within {0, 1} are a binary problem.

    Parameters
    ----------
    y_pred : int array (n_items,)
    weak_labels : int array (n_items, n_lfs)
    n_classes : int, optional
        :math:`K`, when given by the user.
    width : int, optional
        The number of columns of a given label model (one per class, in the codes' order).

    Returns
    -------
    int array (K,): the code of each class.

    Raises
    ------
    ValueError
        For more than ``MAX_CLASSES`` classes, a single code, or codes that do not fit the
        given number of classes.

    Examples
    --------
    >>> class_codes(np.array([1, 2, 2]), np.array([[1, -1], [2, 2], [2, 1]])).tolist()
    [1, 2]
    >>> class_codes(np.array([0, 1]), np.array([[1], [-1]]), n_classes=3).tolist()
    [0, 1, 2]
    """
    top = max(int(y_pred.max()), int(weak_labels.max()))
    if top < 4 * y_pred.size + 1024:  # small codes: counted, not sorted
        flags = (np.bincount(y_pred, minlength=top + 1)
                 + np.bincount(weak_labels.ravel() + 1, minlength=top + 2)[1:])
        seen = np.flatnonzero(flags)
    else:
        seen = np.union1d(y_pred, weak_labels[weak_labels >= 0])
    if n_classes is not None and (isinstance(n_classes, bool) or not isinstance(
            n_classes, (int, np.integer)) or not 2 <= n_classes <= MAX_CLASSES):
        raise ValueError(f"n_classes must be an integer from 2 to {MAX_CLASSES}; got "
                         f"{n_classes!r}.")
    if n_classes is not None and width is not None and width != n_classes:
        raise ValueError(f"label_model has {width} columns but n_classes is {n_classes}.")
    k = n_classes if n_classes is not None else width
    if k is not None:
        if seen.max() < k:
            return np.arange(k)
        if seen.size == k:
            return seen
        raise ValueError(f"y_pred and weak_labels hold {seen.size} class codes (e.g. "
                         f"{seen[:5].tolist()}) for {k} classes: code the classes 0..{k - 1}, "
                         f"or use {k} distinct codes.")
    if seen.max() <= 1:
        return np.arange(2)
    if seen.size > MAX_CLASSES:
        raise ValueError(f"y_pred and weak_labels hold {seen.size} distinct class codes; at most "
                         f"{MAX_CLASSES} classes are supported (the bounds count items per "
                         "pattern and class).")
    if seen.size < 2:
        raise ValueError(f"y_pred and weak_labels hold one class code, {int(seen[0])}: give "
                         "n_classes, or code the classes 0..K-1.")
    return seen


def _class_note(codes: np.ndarray) -> str:
    """How the class codes were read, when they are not 0..K-1."""
    if np.array_equal(codes, np.arange(codes.size)):
        return ""
    note = f"; classes coded {codes.tolist()} (in that order)"
    if codes.size == 2:
        return note + f", precision, recall and F1 of class {codes[1]}"
    return note + ', "precision[k]" of the k-th'


def recode_classes(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Class indices 0..K-1 of class codes (-1, an abstaining vote, is kept).

    Examples
    --------
    >>> recode_classes(np.array([[2, -1], [1, 2]]), np.array([1, 2])).tolist()
    [[1, -1], [0, 1]]
    """
    if np.array_equal(codes, np.arange(codes.size)):
        return values  # already 0..K-1
    return np.where(values == -1, -1, np.searchsorted(codes, values))


def _validate(y_pred, weak_labels, label_model, n_classes, metrics, warn, labels=None):
    """Validated (y_pred, cells, metrics, labels) from the raw inputs of the public
    functions: pandas inputs paired by index, classes recoded 0..K-1 (``cells.codes``)."""
    y_pred, weak_labels, label_model, labels = aligned(
        y_pred=y_pred, weak_labels=weak_labels, label_model=label_model, labels=labels)
    weak = as_classes(weak_labels, "weak_labels", ndim=2, minimum=-1)
    y_pred = as_classes(y_pred, "y_pred", ndim=1, minimum=0)
    check_same_length(y_pred=y_pred, weak_labels=weak)
    label_model = _as_label_model(label_model, len(weak))
    codes = class_codes(y_pred, weak, n_classes,
                        label_model.shape[1] if isinstance(label_model, np.ndarray) else None)
    metrics = as_metrics(metrics, len(codes))
    cells = _Cells(recode_classes(weak, codes), label_model, len(codes), warn)
    cells.codes = codes
    return recode_classes(y_pred, codes), cells, metrics, labels


def as_metrics(metrics, n_classes: int) -> tuple[str, ...]:
    """The metrics to bound: names among :data:`~bayeval.methods.bounds.fast.METRICS`, or a
    one-class metric of class k, ``"precision[k]"``.

    Precision, recall and f1 are of class 1 for two classes; for :math:`K > 2` each is expanded
    into one metric per class (:func:`~bayeval.methods.bounds.fast.class_metrics`).

    Parameters
    ----------
    metrics : str, sequence of str or None
        None gives :func:`~bayeval.methods.bounds.fast.default_metrics`.
    n_classes : int
        :math:`K`.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> as_metrics(None, 3)
    ('accuracy', 'macro_f1')
    >>> as_metrics(["accuracy", "f1"], 3)
    ('accuracy', 'f1[0]', 'f1[1]', 'f1[2]')
    >>> as_metrics(["recall[0]"], 2)
    ('recall[0]',)
    """
    one_class = tuple(key for m in BINARY_ONLY for key in class_metrics(m, n_classes))
    names = validation.as_metrics(metrics, METRICS + one_class, default_metrics(n_classes))
    if n_classes > 2:
        names = tuple(key for m in names
                      for key in (class_metrics(m, n_classes) if m in BINARY_ONLY else (m,)))
    if len(set(names)) < len(names):
        raise ValueError(f"metrics lists a metric twice once the classes are expanded: "
                         f"{list(names)}.")
    return names


def no_vote_share(patterns: np.ndarray, counts: np.ndarray) -> float:
    """The share of the items on which every labelling function abstains (-1).

    Those items form one weak-label pattern of their own: the label model gives them its
    :math:`P(Y \\mid \\text{no vote})` (the class prior when votes do not depend on the class)
    and the bounds treat them as any other pattern.

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
        Items per pattern.

    Examples
    --------
    >>> no_vote_share(np.array([[0, 1], [-1, -1]]), np.array([3, 1]))
    0.25
    """
    silent = (patterns == -1).all(axis=1)
    return float(counts[silent].sum() / counts.sum())


def _as_gold(labels, y_pred: np.ndarray, codes: np.ndarray) -> np.ndarray:
    gold = as_array(labels, "labels", allow_nan=True)
    check_same_length(labels=gold, y_pred=y_pred)
    known = ~np.isnan(gold)
    if not known.any() or not np.isin(gold[known], codes).all():
        raise ValueError(f"labels must be class codes {codes.tolist()} or NaN (no gold label), "
                         "with at least one gold label.")
    gold[known] = np.searchsorted(codes, gold[known])
    return gold


def _gold_counts(gold: np.ndarray, cells: _Cells, y_pred: np.ndarray) -> np.ndarray:
    known = ~np.isnan(gold)
    flat = cells.cell[known] * 4 + y_pred[known] * 2 + gold[known].astype(np.int64)
    return np.bincount(flat, minlength=4 * len(cells.counts)).reshape(-1, 2, 2)


def _fast_path(method, cell_counts, beta, metrics, epsilon, n_classes, correction,
               label_model_error):
    if method == "entropic":
        eps = 0.01 / np.log(n_classes) if epsilon is None else epsilon
        if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)
                                                   ) or not 0 < eps < np.inf:
            raise ValueError(f"epsilon must be a positive finite temperature, got {epsilon!r}.")
        return entropic_bounds(cell_counts, beta, metrics, epsilon=float(eps))
    if epsilon is not None:
        raise ValueError("epsilon is the temperature of method='entropic'; leave it None.")
    return exact_bounds(cell_counts, beta, metrics, small_pattern_correction=correction,
                        **label_model_error)


def _diagnose(results, cells: _Cells, warn: list[str], method: str, correction: bool
              ) -> dict[str, Any]:
    """Warnings for undefined metrics, sparse patterns and items without votes; data summary."""
    stopped = [m for m, r in results.items() if not r.get("converged", True)]
    if stopped:
        warn.append(f"entropic: L-BFGS reached its iteration limit for {stopped}; the bounds may "
                    "be slightly off (use method='exact').")
    undefined = [m for m, r in results.items() if np.isnan(r["lower_bound"])]
    if undefined:
        warn.append(f"undefined (a denominator is 0, e.g. no predicted positive): {undefined}.")
    small = cells.counts[cells.counts < SMALL_CELL].sum() / cells.counts.sum()
    corrected = correction and method != "entropic"
    if small > SMALL_SHARE:
        warn.append(
            f"{100 * small:.0f}% of the items are in weak-label patterns with fewer than "
            f"{SMALL_CELL} items: " + (
                "they were pooled by label-model bin and the bounds corrected at their kinks "
                "(the intervals hold; the bounds are those of the coarser weak labels, a little "
                "wider)." if corrected else
                "the plug-in bounds are biased inward there (one item pins its pattern's "
                "metric) and their intervals undercover; use small_pattern_correction=True, "
                "fewer labelling functions or merge patterns."))
    silent = no_vote_share(cells.patterns, cells.counts)
    if silent > 0:
        warn.append(f"{100 * silent:.1f}% of the items have no vote (every labelling function "
                    "abstains): they are evaluated as one pattern with the label model's "
                    "P(Y | no vote), so nothing but the class prior informs their labels and "
                    "their share of the bounds is wide.")
    pooled = (len(pool_small_cells(cells.counts[:, None], cells.beta)[0]) if corrected
              else len(cells.counts))
    return {"n_items": int(cells.counts.sum()), "n_labelling_functions": cells.patterns.shape[1],
            "n_classes": cells.n_classes, "n_cells": len(cells.counts),
            "n_cells_after_pooling": pooled, "share_in_small_cells": float(small),
            "share_without_votes": silent}


def _label_model_check(cells: _Cells, lm_name: str, cell_counts, metrics, results, ci_prob,
                       correction: bool, warn: list[str]) -> dict[str, Any]:
    """Agreement of the label model with the weak labels and the bounds under the other one.

    The other label model is Dawid-Skene for majority vote (and for a given label model), and
    majority vote for Dawid-Skene; a warning when the bounds move by more than the interval
    half-width (z x the larger sd).
    """
    diag = label_model_diagnostics(cells.patterns, cells.counts, cells.beta)
    other = "majority_vote" if lm_name == "dawid_skene" else "dawid_skene"
    ds_beta = (cells.beta if lm_name == "dawid_skene" else
               fit_label_model("dawid_skene", cells.patterns, cells.counts, cells.n_classes))
    if lm_name == "dawid_skene":
        why = dawid_skene_concerns(cells.patterns)
        if why:
            warn.append(why)
    if lm_name == "majority_vote":
        why = majority_vote_concerns(cells.patterns, cells.counts, ds_beta)
        if why:
            warn.append("majority vote is a crude label model here: " + "; ".join(why)
                        + ". It treats every vote as right and every function as independent,"
                          " so the bounds can exclude the true metric; prefer "
                          "label_model='dawid_skene' or your own label model.")
    other_beta = (fit_label_model(other, cells.patterns, cells.counts, cells.n_classes)
                  if other == "majority_vote" else ds_beta)
    alt = exact_bounds(cell_counts, other_beta, metrics, small_pattern_correction=correction)
    z = scipy.stats.norm.ppf((1 + ci_prob) / 2)
    moved = []
    for m in metrics:
        r, a = results[m], alt[m]
        for side in ("lower", "upper"):
            half = z * max(r[f"{side}_bound_sd"], a[f"{side}_bound_sd"])
            if abs(r[f"{side}_bound"] - a[f"{side}_bound"]) > half:
                moved.append(f"{m} {side}")
    if moved:
        warn.append(f"the bounds depend on the label model: with {other} instead of {lm_name} "
                    f"the {', '.join(moved)} bound(s) move by more than the interval half-width "
                    f"(see lower_bound_{other} and upper_bound_{other} in the data summary).")
    return {"lf_accuracy": ("lf", diag["lf_accuracy"]),
            "lf_agreement": ("lf", diag["lf_agreement"]),
            "label_model_agreement": diag["agreement"],
            "excess_agreement": diag["excess_agreement"],
            f"lower_bound_{other}": ("metric", [alt[m]["lower_bound"] for m in metrics]),
            f"upper_bound_{other}": ("metric", [alt[m]["upper_bound"] for m in metrics])}


def sparse_priors(cell_counts) -> dict[str, float]:
    r"""Dirichlet concentrations of total mass 1 on the (pattern, prediction) table.

    :math:`a_w = 1/|\mathcal Z|` for the pattern shares and :math:`a_\alpha = 1/(|\mathcal Z| K)`
    for the predictions per pattern (Perks, 1947): a flat prior would add one pseudo-item per
    pattern and class and pull sparse patterns.

    Examples
    --------
    >>> sparse_priors(np.zeros((25, 2)))
    {'prior_cells': 0.04, 'prior_predictions': 0.02}
    """
    n_cells, n_classes = np.shape(cell_counts)
    return {"prior_cells": 1.0 / n_cells, "prior_predictions": 1.0 / (n_cells * n_classes)}


def _pymc_model(variant, cell_counts, beta, cells, metrics, gold, y_pred, shift, spread):
    if variant == "m1":
        return models.model(cell_counts, beta, metrics=metrics, bound_shift=shift,
                            bound_sd=spread, **sparse_priors(cell_counts))
    if variant == "m2":
        return models.model(cell_counts, cells.patterns, variant="m2", metrics=metrics,
                            **sparse_priors(cell_counts))
    return models.model(cell_counts, cells.beta, _gold_counts(gold, cells, y_pred),
                        variant="m3", metrics=metrics, **sparse_priors(cell_counts))


def _as_flag(value, name: str) -> bool:
    """A bool (Python's or numpy's), else a TypeError naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _check_model_args(method, model, labels, n_classes):
    model = as_choice(model, "model", models.VARIANTS)
    if model != "m1" and method in ("exact", "entropic"):
        raise ValueError(f"model={model!r} is a PyMC model: use method='pymc' or 'both'.")
    if (labels is not None) != (model == "m3"):
        raise ValueError("labels (gold labels) go with model='m3', and model='m3' needs them.")
    if model == "m3" and n_classes != 2:
        raise ValueError(f"model='m3' is for two classes; got {n_classes}.")
    return model


# ------------------------------------------------------------------------------ entry point
def bounds(y_pred, weak_labels, *, data=None, label_model="dawid_skene", metrics=None,
           method: str = "exact", model: str = "m1", labels=None, n_classes: int | None = None,
           epsilon: float | None = None, small_pattern_correction: bool = True,
           label_model_uncertainty: bool = True, ci_prob: float = 0.95, ci_kind: str = "eti",
           random_seed: int | None = None,
           sample_kwargs: dict[str, Any] | None = None) -> BoundsEvaluation:
    r"""Sharp bounds on a classifier's metrics from weak labels only, with their uncertainty.

    Parameters
    ----------
    y_pred : array-like of int (n_items,)
        The classifier's predicted classes :math:`0, \dots, K-1` on held-out items, or a column
        name of ``data``.
    weak_labels : array-like of int (n_items, n_lfs)
        Votes of the labelling functions, -1 = abstain, or a list of column names of ``data``.
        Items without any vote form a pattern of their own (their share is
        ``share_without_votes`` in the data summary).
    data : table, optional
        A pandas DataFrame or pyarrow Table, one row per item, whose columns ``y_pred``,
        ``weak_labels``, ``labels`` and ``label_model`` name (:mod:`bayeval.validation.tables`).
    label_model : {"dawid_skene", "majority_vote"} or array (n_items, n_classes)
        How :math:`P(Y \mid \text{weak labels})` is obtained: Dawid–Skene EM, the soft majority
        vote (:mod:`bayeval.methods.bounds.label_models`), or your label model's output per item
        (averaged over the items of each weak-label pattern), or a list of column names of
        ``data`` holding it.
    metrics : sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``f1`` and ``macro_f1``; default
        :func:`~bayeval.methods.bounds.fast.default_metrics`. Precision, recall and f1 are of
        class 1 for two classes and of every class for more (``"precision[k]"``: class
        :math:`k`, which also picks one class).
    method : {"exact", "entropic", "pymc", "both"}
        Exact bounds with influence-function CIs; the paper's smoothed estimator (L-BFGS);
        NUTS on ``model``; or exact and NUTS (then :meth:`BoundsEvaluation.check`).
    model : {"m1", "m2", "m3"}
        The PyMC model (:func:`~bayeval.methods.bounds.models.model`): M1 (label model plugged
        in), M2 (Bayesian Dawid–Skene) or M3 (needs ``labels``).
    labels : array-like (n_items,), optional
        Gold labels, NaN where unknown (model M3, two classes), or a column name of ``data``.
    n_classes : int, optional
        :math:`K`; by default the label model's width or the largest class seen plus one.
    epsilon : float, optional
        Temperature of ``method="entropic"`` (default :math:`0.01/\log K`).
    small_pattern_correction : bool
        Pool the patterns with fewer than 10 items by label-model bin and correct the bounds
        at their kinks (:mod:`~bayeval.methods.bounds.fast`), so that the intervals hold with
        many small patterns; False gives the plug-in bounds (and pools nothing in the PyMC
        models). The entropic estimator is always the paper's plug-in.
    label_model_uncertainty : bool
        With a named label model (fitted on these items' weak labels), the exact bounds'
        standard errors include the label model's own sampling error: the delta method through
        the refitted label model (:mod:`~bayeval.methods.bounds.fast`). False treats the fitted
        label model as known (the paper's intervals); with True the data summary keeps those
        sds as ``lower_bound_sd_fixed_label_model`` and ``upper_bound_sd_fixed_label_model``.
        A label model given as an array is known: nothing changes. The entropic estimator and
        the PyMC model M1 plug the label model in (M2 puts its uncertainty in the posterior).
    ci_prob, ci_kind
        Interval level; kind (``"eti"``/``"hdi"``) for posterior draws.
    random_seed : int, optional
        A non-negative seed of the PyMC models' draws.
    sample_kwargs : dict, optional
        Passed to ``pm.sample`` (``draws`` >= 2, ``tune`` >= 0, ``chains`` and ``cores`` >= 1;
        M1 defaults to 2,000 draws per chain, M3 to ``target_accept=0.9``).
        M2 is sampled by NUTS on its label model and exact draws of the rest
        (:func:`~bayeval.methods.bounds.models.m2_posterior`).

    Returns
    -------
    BoundsEvaluation
        ``closed_form`` (fast path) and/or ``posterior`` with ``lower_bound``, ``upper_bound``
        and ``value`` (dim ``metric``); its summary's columns are described in
        :mod:`~bayeval.methods.bounds.result`.

    Examples
    --------
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 50
    >>> y_pred = [1, 1, 0, 0, 0, 1] * 50
    >>> ev = bounds(y_pred, weak, label_model="majority_vote", metrics=["accuracy"])
    >>> ev.summary()[["lower_bound", "upper_bound"]].round(4).values.tolist()
    [[0.6543, 1.0]]
    >>> import pandas as pd
    >>> df = pd.DataFrame(weak, columns=["lf1", "lf2"]).assign(pred=y_pred)
    >>> ev = bounds("pred", ["lf1", "lf2"], data=df, label_model="majority_vote",
    ...             metrics=["accuracy"])
    >>> ev.summary()[["lower_bound", "upper_bound"]].round(4).values.tolist()
    [[0.6543, 1.0]]
    """
    y_pred, weak_labels, label_model, labels = named_columns(
        data, y_pred=y_pred, weak_labels=weak_labels, label_model=label_model, labels=labels)
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    as_seed(random_seed)
    if method in ("pymc", "both"):
        sample_kwargs = as_sample_kwargs(sample_kwargs)
    small_pattern_correction = _as_flag(small_pattern_correction, "small_pattern_correction")
    label_model_uncertainty = _as_flag(label_model_uncertainty, "label_model_uncertainty")
    warn: list[str] = []
    y_pred, cells, metrics, labels = _validate(y_pred, weak_labels, label_model, n_classes,
                                               metrics, warn, labels)
    model = _check_model_args(method, model, labels, cells.n_classes)
    gold = None if labels is None else _as_gold(labels, y_pred, cells.codes)
    correction = small_pattern_correction
    cell_counts = cells.cell_counts(y_pred)
    fast = method if method in ("exact", "entropic") else "exact"
    error = _label_model_error(cells, label_model, label_model_uncertainty)
    results = _fast_path(fast, cell_counts, cells.beta, metrics, epsilon, cells.n_classes,
                         correction, error)
    data = _diagnose(results, cells, warn, fast, correction)
    if error and fast == "exact":
        for side in ("lower", "upper"):
            key = f"{side}_bound_sd_fixed_label_model"
            data[key] = ("metric", [results[m].get(key, np.nan) for m in metrics])
    lm_name = label_model if isinstance(label_model, str) else "given P(Y | Z)"
    data |= _label_model_check(cells, lm_name, cell_counts, metrics, results, ci_prob,
                               correction, warn)
    if lm_name == "dawid_skene" and fast == "exact":
        misfit, why = misfit_check(cells.patterns, cell_counts, cells.beta, results,
                                   ci_prob=ci_prob, small_pattern_correction=correction,
                                   label_model_uncertainty=label_model_uncertainty)
        data |= misfit
        warn.extend([why] if why else [])
    n_lfs = cells.patterns.shape[1]
    data["class_code"] = ("class", cells.codes)
    data = xr.Dataset(data, coords={"metric": list(metrics), "lf": np.arange(n_lfs),
                                    "lf_pair": np.arange(n_lfs),
                                    "class": np.arange(cells.n_classes)})
    if fast == "exact" and not correction:
        warn.append("small_pattern_correction=False: the plug-in bounds; with many small "
                    "weak-label patterns they are biased inward and their intervals undercover.")
    common = dict(method="bounds", variant=method, ci_prob=ci_prob, ci_kind=ci_kind,
                  random_seed=random_seed, data=data, assumptions=ASSUMPTIONS, warnings=warn,
                  description=f"Fréchet bounds from {len(y_pred)} items in {len(cells.counts)} "
                              f"weak-label patterns, label model: {lm_name}"
                              + _class_note(cells.codes))
    closed = closed_form(results, ci_prob)
    if method in ("exact", "entropic"):
        return BoundsEvaluation.create(closed_form=closed, **common)
    counts, beta, shift, spread = cell_counts, cells.beta, None, None
    if model == "m1":  # the cells and the quantity the fast path reports
        if correction:
            counts, beta, _ = pool_small_cells(cell_counts, cells.beta)
        # M1 alone is centred below the plug-in bounds on these cells (the posterior's Jensen
        # gap at the kinks) and spreads like them at the fixed label model: the shift moves it
        # to the reported bound (the fast path's kink correction, a fitted label model's noise
        # at the kinks included), a normal error adds the rest of the reported variance (a
        # fitted label model's sampling error, the correction's noise)
        prior = sparse_priors(counts)["prior_predictions"]
        plug = exact_bounds(counts, beta, metrics, small_pattern_correction=False)
        sides = ("lower", "upper")
        shift = (kink_corrections(counts, beta, metrics, posterior_prior=prior)
                 - kink_corrections(counts, beta, metrics) + np.nan_to_num(
                     [[results[m][f"{s}_bound"] - plug[m][f"{s}_bound"] for s in sides]
                      for m in metrics]))
        extra = [[results[m][f"{s}_bound_sd"] ** 2 - plug[m][f"{s}_bound_sd"] ** 2
                  for s in sides] for m in metrics]
        spread = np.sqrt(np.clip(np.nan_to_num(extra), 0.0, None))
    pm_model = _pymc_model(model, counts, beta, cells, metrics, gold, y_pred, shift, spread)
    if model == "m2":  # NUTS on the label model, exact draws of the rest: M2's posterior
        draws = models.m2_posterior(counts, cells.patterns, metrics, random_seed=random_seed,
                                    sample_kwargs=sample_kwargs, **sparse_priors(counts))
    else:
        draws = sample(pm_model, random_seed, sample_kwargs,
                       defaults=M1_SAMPLING if model == "m1" else M3_SAMPLING)
    if model == "m1":
        reference = models.m1_posterior_bounds(counts, beta, metrics, random_seed=random_seed,
                                               bound_shift=shift, bound_sd=spread,
                                               **sparse_priors(counts))
        draws["check_reference"] = xr.DataTree(check_reference(reference, metrics, ci_prob))
    return BoundsEvaluation.create(closed_form=closed if method == "both" else None,
                                   draws=draws, estimand="posterior/value", model=pm_model,
                                   **common)


# ------------------------------------------------------------------------------- selection
def rank_classifiers(candidates: Mapping[str, Any], weak_labels, *,
                     label_model="dawid_skene", metric: str = "accuracy",
                     n_classes: int | None = None, ci_prob: float = 0.95) -> Table:
    r"""Rank candidate classifiers by their lower bound and by their bounds' midpoint.

    The paper's model selection without labels (§4.3): the lower bound is the worst case over
    all couplings (a distributionally robust choice), the midpoint
    :math:`(\hat L + \hat U)/2` the mean under a uniform coupling position. A classifier that
    is constant within each weak-label pattern has :math:`L = U` (nothing is unknown about its
    coupling), so the lower bound favours it; look at both ranks.

    Parameters
    ----------
    candidates : mapping name -> y_pred
        Predictions of each candidate on the same items.
    weak_labels, label_model, n_classes
        As for :func:`bounds`; the label model is fitted once, and a fitted label model's
        sampling error is in the intervals (``label_model_uncertainty=True`` of :func:`bounds`).
    metric : str
        One metric of :func:`bounds`; a one-class metric of :math:`K > 2` classes names its
        class, ``"f1[k]"``.
    ci_prob : float

    Returns
    -------
    Table indexed by ``candidate``, sorted by lower bound (best first), with ``lower_bound``,
    ``upper_bound``, ``midpoint``, ``width``, ``lower``, ``upper``, ``label_model``,
    ``rank_lower`` and ``rank_midpoint`` (1 = best).

    Examples
    --------
    >>> weak = [[1, 1], [0, 0], [1, 0], [0, -1]] * 25
    >>> ranked = rank_classifiers({"votes": [1, 0, 1, 0] * 25, "ones": [1] * 100}, weak,
    ...                           label_model="majority_vote")
    >>> ranked.index.tolist(), ranked["rank_midpoint"].tolist()
    (['votes', 'ones'], [1, 2])
    """
    if not isinstance(candidates, Mapping) or not candidates:
        raise ValueError("candidates must be a non-empty mapping name -> y_pred.")
    names = list(candidates)
    warn: list[str] = []
    weak_labels, label_model, *columns = aligned(
        weak_labels=weak_labels, label_model=label_model,
        **{f"candidates[{name!r}]": candidates[name] for name in names})
    first, cells, metrics, _ = _validate(columns[0], weak_labels, label_model, n_classes,
                                         [metric], warn)
    metric = _one_metric(metrics, metric)
    ci_prob = as_ci_prob(ci_prob)
    rows = {}
    for name in names:
        y_pred = first if name == names[0] else _validated_candidate(columns[names.index(name)],
                                                                      first, cells, name)
        rows[name] = exact_bounds(cells.cell_counts(y_pred), cells.beta, metrics,
                                  **_label_model_error(cells, label_model))[metric]
    frame = closed_form(rows, ci_prob).to_dataframe().rename_axis("candidate")
    frame["midpoint"] = frame["mean"]
    frame["width"] = frame["upper_bound"] - frame["lower_bound"]
    frame["rank_lower"] = frame["lower_bound"].rank(ascending=False, method="min").astype(int)
    frame["rank_midpoint"] = frame["midpoint"].rank(ascending=False, method="min").astype(int)
    cols = ["lower_bound", "upper_bound", "midpoint", "width", "lower", "upper", "label_model",
            "rank_lower", "rank_midpoint"]
    frame = frame[cols].sort_values("lower_bound", ascending=False)
    return table(frame, f"candidates ranked by the exact lower bound of {metric} "
                        f"({100 * ci_prob:g}% interval of the identified set)")


def _one_metric(metrics: tuple[str, ...], metric: str) -> str:
    """The one metric of a ranking or comparison: a one-class metric of K > 2 classes names
    its class (``"f1[k]"``)."""
    if len(metrics) != 1:
        raise ValueError(f"metric={metric!r} is of one class; with {len(metrics)} classes give "
                         f"one of {', '.join(map(repr, metrics))}, or 'macro_f1'.")
    return metrics[0]


def _validated_candidate(y_pred, first, cells: _Cells, name: str) -> np.ndarray:
    arr = as_classes(y_pred, f"candidates[{name!r}]", ndim=1, minimum=0)
    check_same_length(**{"candidates[first]": first, f"candidates[{name!r}]": arr})
    if not np.isin(arr, cells.codes).all():
        vals = np.setdiff1d(arr, cells.codes)[:5].tolist()
        raise ValueError(f"candidates[{name!r}] has values {vals} outside the class codes "
                         f"{cells.codes.tolist()} of the first candidate and the weak labels.")
    return recode_classes(arr, cells.codes)


def compare_labelling_functions(y_pred, weak_labels, subsets: Mapping[str, Sequence[int]], *,
                                label_model="dawid_skene", metric: str = "accuracy",
                                n_classes: int | None = None, ci_prob: float = 0.95) -> Table:
    r"""Bound widths of one classifier when only some labelling functions are used.

    Finer weak labels can only narrow the population bounds, but every extra pattern adds
    estimation error: compare the widths :math:`\hat U - \hat L` (paper, Fig. 3).
    A named label model is refitted on each subset; a given ``label_model`` array is averaged
    over the coarser patterns (its conditional given the subset).

    Parameters
    ----------
    y_pred, weak_labels, label_model, metric, n_classes, ci_prob
        As for :func:`bounds` (a fitted label model's sampling error is in the intervals).
    subsets : mapping name -> column indices
        Labelling functions (columns of ``weak_labels``) of each subset.

    Returns
    -------
    Table indexed by ``subset`` with ``n_lfs``, ``n_cells``, ``lower_bound``, ``upper_bound``,
    ``width``, ``lower`` and ``upper``. Every subset is evaluated on the same items: those on
    which each subset has a vote (``attrs["n_items"]``).

    Examples
    --------
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, 1], [0, 0], [1, 1]] * 50
    >>> out = compare_labelling_functions([1, 1, 0, 0, 0, 1] * 50, weak,
    ...                                   {"first": [0], "both": [0, 1]})
    >>> out[["n_cells", "width"]].round(3).values.tolist()
    [[2.0, 0.383], [4.0, 0.075]]
    """
    if not isinstance(subsets, Mapping) or not subsets:
        raise ValueError("subsets must be a non-empty mapping name -> column indices.")
    y_pred, cells, metrics, _ = _validate(y_pred, weak_labels, label_model, n_classes,
                                          [metric], [])
    metric = _one_metric(metrics, metric)
    weak, label_model = cells.patterns[cells.cell], cells.label_model
    n_classes = cells.n_classes
    ci_prob = as_ci_prob(ci_prob)
    columns = {name: _subset_columns(cols, name, weak.shape[1]) for name, cols in subsets.items()}
    covered = np.logical_and.reduce([(weak[:, c] != -1).any(axis=1) for c in columns.values()])
    if not covered.any():
        raise ValueError("subsets: no item has a vote in every subset; compare subsets that "
                         "overlap in coverage.")
    if not isinstance(label_model, str):
        label_model = label_model[covered]
    rows = {}
    for name, idx in columns.items():
        y, cells, metrics, _ = _validate(y_pred[covered], weak[covered][:, idx], label_model,
                                         n_classes, [metric], [])  # the key of one class
        rows[name] = {**exact_bounds(cells.cell_counts(y), cells.beta, metrics,
                                     **_label_model_error(cells, label_model))[metric],
                      "n_lfs": idx.size, "n_cells": len(cells.counts)}
    frame = pd.DataFrame(rows).T
    closed = closed_form(rows, ci_prob).to_dataframe()
    frame = pd.concat([frame[["n_lfs", "n_cells"]].astype(int),
                       closed[["lower_bound", "upper_bound", "lower", "upper"]]], axis=1)
    frame.insert(4, "width", frame["upper_bound"] - frame["lower_bound"])
    return table(frame.rename_axis("subset"),
                 f"exact bounds of {metric} per subset of labelling functions, on the "
                 f"{int(covered.sum())} items every subset votes on", n_items=int(covered.sum()))


def _subset_columns(cols, name: str, n_lfs: int) -> np.ndarray:
    idx = np.asarray(cols, dtype=np.int64).ravel()
    if idx.size == 0 or (idx < 0).any() or (idx >= n_lfs).any():
        raise ValueError(f"subsets[{name!r}] must list columns of weak_labels (0..{n_lfs - 1}); "
                         f"got {idx.tolist()}.")
    return idx
