r"""The judge with K categories: class prevalences and a weighted score (a win rate with ties).

:func:`judge_categories` is what :func:`bayeval.judge` runs when the human labels are not 0/1
(strings such as "A", "B", "tie", a pandas Categorical, integers beyond 0 and 1) or the judge's
labels are not numbers. The categories are the union of the human and judge labels
(:func:`bayeval.classes.encode`), kept as the ``class`` coordinate. The estimands are the
prevalences :math:`\pi_k = P(Y = k)` (metric ``prevalence``) and, with ``weights``, the score
:math:`\theta_w = \sum_kw_k\pi_k` (metric ``weighted``: a win rate counting a tie as half with
``weights={"A": 1, "tie": 0.5, "B": 0}``). The estimators are those of
:mod:`bayeval.methods.judge.categories`; the weighted score of each is :math:`w^\top\hat\pi` with
the variance :math:`w^\top\hat\Sigma w` from the covariance across classes. With sampling
weights of the labelled items (``sample_weight``, :math:`\propto 1/\pi_i`) and of the others,
and with a judge that gives a score instead of a label (``mu_model="isotonic"`` or
``"spline"``), they are those of :mod:`bayeval.methods.judge.categories_weighted`. ``null``
:math:`\theta_0` adds the p-values of the z-tests :math:`z = (\hat\pi_k - \theta_0)/
\widehat{\mathrm{se}}` of every prevalence and of the score
(:func:`~bayeval.methods.judge.compare.p_value`, as ppi_py's ``ppi_mean_pval``), two-sided or
one-sided by ``alternative``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayeval.class_results import ClassEvaluation
from bayeval.classes import binary_input, class_coordinate, encode
from bayeval.evaluation import SAMPLE_DIMS
from bayeval.methods.judge.categories import (
    CLASS_ESTIMATORS,
    MAX_CONDITION,
    ClassCounts,
    by_name,
    condition_number,
    misclassification,
    posterior_draws,
    posterior_moments,
    ppi_pp_lambda,
)
from bayeval.methods.judge.categories_models import class_model
from bayeval.methods.judge.categories_weighted import (
    curve_by_name,
    overall_lambda,
    weighted_by_name,
)
from bayeval.methods.judge.categories_weighted import misclassification as weighted_rates
from bayeval.methods.judge.compare import ALTERNATIVES, p_value
from bayeval.methods.judge.curves import CURVES, as_folds, fold_ids
from bayeval.methods.judge.fast import Estimate, reported, z_value
from bayeval.methods.judge.weighted import sampling_weights
from bayeval.sampling import draws_intervals, sample
from bayeval.validation import as_array, as_choice, as_seed, describe
from bayeval.validation.memory import check_classes

__all__ = ["JudgeClasses", "categorical_input", "judge_categories"]

#: exact posterior draws of the ``bayes`` estimator and of ``method="both"``'s closed form
POSTERIOR_DRAWS = 20_000
ASSUMPTIONS = (
    "The human-labelled items are a random subset of all items (missing completely at random), "
    "the human labels are the truth, the judge is run the same way on every item, and items are "
    "independent. The estimators other than naive then estimate the population's class "
    "prevalences; the generative models also assume the judge's misclassification matrix is the "
    "same for labelled and unlabelled items.")


class JudgeClasses(ClassEvaluation, method="judge_categories"):
    """The result of :func:`bayeval.judge` with K categories: dims (``estimator``,) ``metric``,
    ``class``; the ``weighted`` score is stored at the first class.

    Examples
    --------
    >>> import bayeval as be
    >>> y = ["A", "B", "tie", "A", "B", "A"] * 5
    >>> ev = be.judge(y, y[::-1], ["A", "B", "tie"] * 20, method="classical",
    ...               weights={"A": 1, "tie": 0.5, "B": 0})
    >>> type(ev).__name__, ev.summary().index.tolist()
    ... # doctest: +NORMALIZE_WHITESPACE
    ('JudgeClasses', [('classical', 'prevalence', 'A'), ('classical', 'prevalence', 'B'),
     ('classical', 'prevalence', 'tie'), ('classical', 'weighted', '')])
    """

    @staticmethod
    def per_class(metric: str) -> bool:
        """The prevalences have a value per class, the weighted score one.

        Examples
        --------
        >>> JudgeClasses.per_class("prevalence"), JudgeClasses.per_class("weighted")
        (True, False)
        """
        return metric == "prevalence"


# ============================================================================ input handling
def categorical_input(y, yhat, yhat_unlabeled) -> bool:
    """Whether the labels are K categories: human labels other than 0/1 (strings, a pandas
    Categorical, other numbers) or judge labels that are not numbers. Per-group inputs (a dict,
    DataFrame or 2-D array) are the binary judge's.

    Examples
    --------
    >>> categorical_input(["A", "B"], ["A", "A"], ["B"]), categorical_input([0, 1], [0, 2], [1])
    (True, False)
    """
    args = (y, yhat, yhat_unlabeled)
    if any(isinstance(a, (Mapping, pd.DataFrame)) or np.ndim(a) == 2 for a in args):
        return False

    def text(x) -> bool:
        if isinstance(getattr(x, "dtype", None), pd.CategoricalDtype):
            return True
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):
            return False
        return arr.dtype.kind in "USO" and any(
            isinstance(v, (str, bytes)) for v in pd.unique(arr.ravel()))

    return not binary_input(None, y) or text(yhat) or text(yhat_unlabeled)


def _codes(y, yhat, yhat_unlabeled):
    """Codes of the three label vectors on the union of their categories, and the classes."""
    _, _, base = encode(y, yhat, names=("y", "yhat"))
    _, _, extra = encode(yhat_unlabeled, names=("yhat_unlabeled", ""))
    known = set(base.tolist())
    classes = list(base) + [c for c in extra if c not in known]
    yy, yh, _ = encode(y, yhat, classes=classes, names=("y", "yhat"))
    yu, _, _ = encode(yhat_unlabeled, classes=classes, names=("yhat_unlabeled", ""))
    return yy, yh, yu, np.asarray(classes, dtype=object)


def _weights(weights, classes) -> np.ndarray | None:
    """The weight of every class, checked: a mapping naming each class once, finite numbers,
    not all equal."""
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise TypeError(f"weights must be a mapping from category to weight, e.g. {{'A': 1, "
                        f"'tie': 0.5, 'B': 0}}; got {type(weights).__name__} "
                        f"{describe(weights)}.")
    names = classes.tolist()
    unknown = [k for k in weights if k not in names]
    missing = [k for k in names if k not in weights]
    if unknown or missing:
        raise ValueError(f"weights must give one weight to each category {describe(names)}; "
                         + (f"unknown: {describe(unknown)}" if unknown else "")
                         + ("; " if unknown and missing else "")
                         + (f"missing: {describe(missing)}" if missing else "") + ".")
    try:
        w = np.array([float(weights[k]) for k in names])
    except (TypeError, ValueError):
        raise ValueError(f"weights must be numbers, got {describe(dict(weights))}.") from None
    if not np.isfinite(w).all() or w.min() == w.max():
        raise ValueError(f"weights must be finite and not all equal (the score would be a "
                         f"constant), got {describe(dict(weights))}.")
    return w


def _nulls(null, w) -> dict[str, float]:
    """The null of each metric: a number for both (prevalences and the weighted score), or a
    mapping ``{"prevalence": ..., "weighted": ...}`` naming one or both; each within its range
    ([0, 1]; the range of the category weights)."""
    if null is None:
        return {}
    ranges = {"prevalence": (0.0, 1.0)}
    if w is not None:
        ranges["weighted"] = (float(w.min()), float(w.max()))
    given = dict(null) if isinstance(null, Mapping) else dict.fromkeys(ranges, null)
    unknown = [k for k in given if k not in ranges]
    if unknown:
        raise ValueError(f"null must be a number or a mapping with the keys {list(ranges)} "
                         f"(the metrics), got the key(s) {describe(unknown)}.")
    out = {}
    for metric, value in given.items():
        low, high = ranges[metric]
        try:
            out[metric] = float(value)
        except (TypeError, ValueError):
            out[metric] = np.nan
        if not low <= out[metric] <= high:
            raise ValueError(f"null must lie in [{low:g}, {high:g}] for the {metric} (the "
                             f"theta_0 of its test), got {describe(value)}"
                             + ("; give each metric its own null as a mapping {'prevalence': "
                                "..., 'weighted': ...}." if not isinstance(null, Mapping)
                                and w is not None else "."))
    return out


def _alpha(prior, k: int) -> np.ndarray:
    """Dirichlet concentrations on the K×K table: None (Jeffreys' 1/2), a number or an array."""
    if prior is None:
        return np.full((k, k), 0.5)
    alpha = np.asarray(prior, dtype=float) if not isinstance(prior, Mapping) else np.array(np.nan)
    alpha = np.broadcast_to(alpha, (k, k)) if alpha.ndim == 0 else alpha
    if alpha.shape != (k, k) or not (np.isfinite(alpha).all() and (alpha > 0).all()):
        raise ValueError(f"prior must be a positive number or a {k} x {k} array of positive "
                         "Dirichlet concentrations on the table P(y = k, judge = j) (rows the "
                         f"human label); got {describe(prior)}.")
    return np.array(alpha)


def _refuse(c: ClassCounts, classes) -> None:
    """The frequentist estimators need 2 human labels of each category and a judge that is not
    constant on the labelled items."""
    rows, cols = c.table.sum(axis=1), c.table.sum(axis=0)
    if (cols > 0).sum() < 2:
        raise ValueError(f"yhat is {classes[int(np.argmax(cols))]!r} on every labelled item, so "
                         "the judge's errors cannot be estimated; label items the judge labels "
                         "differently, or use method='bayes'.")
    _refuse_rows(rows, classes)


def _refuse_rows(rows, classes) -> None:
    """The frequentist estimators need 2 human labels of each category (``rows`` the counts)."""
    if rows.min() < 2:
        short = np.flatnonzero(rows < 2)
        few = ", ".join(f"{classes[k]!r}: {int(rows[k])}" for k in short[:10])
        more = f" and {short.size - 10} more" if short.size > 10 else ""
        raise ValueError(f"y has fewer than 2 labelled items of {short.size} "
                         f"categor{'y' if short.size == 1 else 'ies'} ({few}{more}); the "
                         "frequentist estimators need at least 2 of each. Label more items, or "
                         "use method='bayes' (the exact posterior), defined for any counts.")


# ============================================================================= estimates
def _estimates(c: ClassCounts, names, classes, rng, alpha, fns=None, cond=None
               ) -> tuple[dict, list[str]]:
    """{name: ClassEstimate} of the estimators asked for, and the notes of those left out;
    ``fns`` and ``cond`` replace the estimators and the condition number of the judge's
    misclassification matrix (the weighted ones)."""
    notes: list[str] = []
    cond = float(condition_number(c)) if cond is None else cond
    if "rogan_gladen" in names and not cond <= MAX_CONDITION:
        reason = (f"the judge's misclassification matrix P(judge | y) estimated on the labelled "
                  f"items is ill-conditioned (2-norm condition number {cond:.4g} > "
                  f"{MAX_CONDITION:g}): inverting it would amplify the judge's label shares' "
                  "noise by as much")
        if len(names) == 1:
            raise ValueError(f"method='rogan_gladen' refused: {reason}. Use method='eif'.")
        notes.append(f"rogan_gladen left out: {reason}.")
        names = [n for n in names if n != "rogan_gladen"]
    fns = fns or by_name(c)
    out = {n: fns[n]() for n in names if n != "bayes"}
    if "bayes" in names:
        draws = posterior_draws(c, alpha, POSTERIOR_DRAWS, rng)
        out["bayes"] = (posterior_moments(c, alpha), draws)
    return out, notes


def _closed_form(out: dict, w, classes, ci_kind: str, ci_prob: float,
                 alternative: str = "two-sided", nulls: dict | None = None) -> xr.Dataset:
    """Over (estimator, metric, class): the reported estimates and intervals (one-sided ones
    open to the end of the range), and with ``nulls`` the p-values of the frequentist
    estimators (:func:`~bayeval.methods.judge.compare.p_value` of the raw estimate)."""
    metrics = ["prevalence"] + (["weighted"] if w is not None else [])
    ranges = [(0.0, 1.0)] + ([(float(w.min()), float(w.max()))] if w is not None else [])
    shape = (len(out), len(metrics), len(classes))
    arrays = {k: np.full(shape, np.nan) for k in ("mean", "sd", "lower", "upper")}
    if nulls:
        arrays["p_value"] = np.full(shape, np.nan)
    two = alternative == "two-sided"
    tail = (1 - ci_prob) / 2 if two else 1 - ci_prob
    z = z_value(ci_prob) if two else float(special.ndtri(ci_prob))
    for i, (name, est) in enumerate(out.items()):
        if name == "bayes":  # posterior mean and sd, equal-tailed interval of the exact draws
            moments, draws = est
            values = [(moments.estimate, moments.se(), draws)]
            if w is not None:
                values.append((*moments.weighted(w), draws @ w))
            for j, (mean, sd, x) in enumerate(values):
                lo, hi = np.quantile(x, [tail, 1 - tail], axis=0)
                lo, hi = _one_sided(lo, hi, alternative, *ranges[j])
                for key, v in zip(arrays, (mean, sd, lo, hi), strict=False):
                    arrays[key][i, j, :np.size(v)] = v
            continue
        values = [Estimate(est.estimate, est.se())]
        if w is not None:
            values.append(Estimate(*est.weighted(w)))
        for j, (e, metric) in enumerate(zip(values, metrics, strict=True)):
            mean, lo, hi = reported(e, z, ci_kind, *ranges[j])
            lo, hi = _one_sided(lo, hi, alternative, *ranges[j])
            for key, v in zip(arrays, (mean, e.se, lo, hi), strict=False):
                arrays[key][i, j, :np.size(v)] = v
            if metric in (nulls or {}):
                arrays["p_value"][i, j, :np.size(e.se)] = [
                    p_value(Estimate(a, b), nulls[metric], alternative) if b > 0 else np.nan
                    for a, b in zip(np.atleast_1d(e.estimate), np.atleast_1d(e.se),
                                    strict=True)]
    dims = ("estimator", "metric", "class")
    return xr.Dataset({k: (dims, v) for k, v in arrays.items()},
                      coords={"estimator": list(out), "metric": metrics,
                              "class": class_coordinate(classes)})


def _one_sided(lower, upper, alternative: str, low: float, high: float):
    """The interval opened to the end of the range [low, high] by a one-sided alternative."""
    if alternative == "larger":
        return lower, np.full(np.shape(upper), high)
    if alternative == "smaller":
        return np.full(np.shape(lower), low), upper
    return lower, upper


def _interval_kind(ci_kind: str, alternative: str) -> str:
    """The intervals' caption: the kind, one-sided where the alternative is."""
    return ci_kind if alternative == "two-sided" else (
        f"one-sided ({alternative}) {'Wald' if ci_kind == 'wald' else ci_kind}")


def _tests_note(alternative: str, null) -> str:
    """The description's account of the one-sided intervals and the tests."""
    return (("" if alternative == "two-sided" else f", one-sided: {alternative}")
            + ("" if null is None else f", null {null}"))


def _outside_notes(out: dict, classes) -> list[str]:
    notes = []
    for name, est in out.items():
        if name == "bayes":
            continue
        bad = [(classes[k], float(v)) for k, v in enumerate(est.estimate) if not 0 <= v <= 1]
        if bad:
            notes.append(f"{name}: prevalence(s) outside [0, 1] ("
                         + ", ".join(f"{k!r} {v:.4f}" for k, v in bad)
                         + "): reported at the nearest of 0 and 1, the intervals clipped to "
                           "[0, 1]")
    return notes


def _data(c: ClassCounts, classes, w) -> xr.Dataset:
    coord = class_coordinate(classes)
    ds = xr.Dataset(
        {"table": (("true", "judge"), c.table), "unlabelled": ("judge", c.unlabelled),
         "misclassification": (("true", "judge"), misclassification(c)),
         "condition_number": float(condition_number(c)), "m": int(c.m), "n": int(c.n),
         "lam": float(ppi_pp_lambda(c)), "lam_unclipped": float(ppi_pp_lambda(c, clip=False))},
        coords={"true": coord, "judge": coord})
    if w is not None:
        ds["weights"] = xr.DataArray(w, dims="class", coords={"class": coord})
    return ds


def _theta(pi: xr.DataArray, w, coord) -> xr.DataArray:
    """Draws of (metric, class) from draws of ``pi`` (dims chain, draw, class)."""
    values = pi.transpose(*SAMPLE_DIMS, "class").values
    rows = [values]
    if w is not None:
        score = np.full_like(values, np.nan)
        score[..., 0] = values @ w
        rows.append(score)
    return xr.DataArray(np.stack(rows, axis=2), dims=(*SAMPLE_DIMS, "metric", "class"),
                        coords={"metric": ["prevalence"] + (["weighted"] if w is not None else []),
                                "class": coord})


def _weighted_data(ds: xr.Dataset, w, v, lam: float) -> xr.Dataset:
    """The data summary with the weighted ppi_py ``lam`` and Kish's effective sizes."""
    return ds.assign(lam=float(np.clip(lam, 0.0, 1.0)), lam_unclipped=lam,
                     m_kish=float(w.size**2 / np.sum(w**2)),
                     n_kish=float(v.size**2 / np.sum(v**2)))


def _scored(y, s, s_u, method, ci_prob, ci_kind, weights, curve, folds, sample_weights,
            random_seed, tests: tuple) -> JudgeClasses:
    """``classical`` and the EIF with cross-fitted curves, from a judge's scores."""
    if method not in ("eif", "classical", "all"):
        raise ValueError(f"method={method!r} needs the judge's labels; with the judge's scores "
                         f"(mu_model={curve!r}) use method 'eif', 'classical' or 'all'.")
    y, _, classes = encode(y, names=("y", ""))
    s, s_u = as_array(s, "yhat"), as_array(s_u, "yhat_unlabeled")
    if len(classes) < 2:
        raise ValueError(f"y holds one category ({classes[0]!r}); a judge of categories needs "
                         "at least 2.")
    if s.size != y.size:
        raise ValueError(f"yhat must hold one score per labelled item ({y.size}), got {s.size}.")
    _refuse_rows(np.bincount(y, minlength=len(classes)), classes)
    if s.min() == s.max():
        raise ValueError(f"yhat is {s[0]:g} on every labelled item, so the curves cannot be "
                         "fitted; label items the judge scores differently.")
    w = _weights(weights, classes)
    nulls = _nulls(tests[1], w)
    fold = fold_ids(y.size, as_folds(folds, y.size), as_seed(random_seed))
    fns = curve_by_name(y, s, s_u, len(classes), fold, curve, *sample_weights)
    out = {n: fns[n]() for n in (("classical", "eif") if method == "all" else (method,))}
    notes = _outside_notes(out, classes)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=5)
    data = xr.Dataset({"m": y.size, "n": s_u.size, "folds": int(fold.max()) + 1,
                       "mu_model": curve})
    if w is not None:
        data["weights"] = xr.DataArray(w, dims="class", coords={"class": class_coordinate(classes)})
    weighted = "; sampling weights" if any(x is not None for x in sample_weights) else ""
    return JudgeClasses.create(
        closed_form=_closed_form(out, w, classes, ci_kind, ci_prob, tests[0], nulls),
        warnings=notes, interval_kind=_interval_kind(ci_kind, tests[0]),
        method="judge_categories", variant=method,
        ci_prob=ci_prob, ci_kind="eti", random_seed=random_seed, assumptions=ASSUMPTIONS,
        data=data, description=f"prevalences of {len(classes)} categories from {y.size} human "
                               f"labels and {s_u.size} judge-only items, the {curve} curves of "
                               f"the judge's score{weighted}; {ci_kind} intervals"
                               + _tests_note(*tests))


# ============================================================================ entry point
def judge_categories(y, yhat, yhat_unlabeled, *, method: str = "eif", ci_prob: float = 0.95,
                     ci_kind: str = "logit", prior=None, model: str = "a", weights=None,
                     mu_model: str | None = None, folds: int | None = None,
                     sample_weight=None, sample_weight_unlabeled=None,
                     alternative: str = "two-sided", null=None,
                     random_seed=None, sample_kwargs: dict[str, Any] | None = None
                     ) -> JudgeClasses:
    r"""Class prevalences (and a weighted score) from a judge of K categories and a few humans.

    Called by :func:`bayeval.judge` (which checks ``method``, ``ci_prob``, ``ci_kind``,
    ``model`` and ``sample_kwargs``) when the labels are categories; see the module docstring.

    Parameters
    ----------
    y, yhat, yhat_unlabeled : array-like of category labels
        Human and judge labels of the labelled items (paired by pandas index where they have
        one), the judge's labels of the others.
    method : str
        An estimator of :data:`~bayeval.methods.judge.categories.CLASS_ESTIMATORS`, ``"all"``,
        ``"pymc"`` or ``"both"``.
    ci_prob, ci_kind
        Interval level and the fast paths' kind (``"logit"``, ``"wald"``).
    prior : float or array (K, K), optional
        Dirichlet concentrations on the table P(y = k, judge = j); default Jeffreys' 1/2.
    model : {"a", "b"}
        :func:`~bayeval.methods.judge.categories_models.class_model`'s variant.
    weights : mapping, optional
        A weight per category: adds the metric ``weighted``, :math:`\sum_kw_k\pi_k`.
    mu_model : {"isotonic", "spline"}, optional
        ``yhat`` and ``yhat_unlabeled`` are the judge's scores (numbers), not labels: the EIF
        uses the cross-fitted curve :math:`E[1\{Y = k\} \mid \text{score}]` of each class
        (:func:`~bayeval.methods.judge.categories_weighted.curve_by_name`), on ``folds`` folds
        (default 5); ``method`` is then ``"eif"``, ``"classical"`` or ``"all"`` (both).
    folds : int, optional
        The number of cross-fitting folds of ``mu_model``.
    sample_weight, sample_weight_unlabeled : array-like, optional
        Sampling weights of the labelled items, :math:`\propto 1/\pi_i` with :math:`\pi_i`
        the item's probability of a human label, and of the others (:math:`\propto 1/(1 -
        \pi_i)`): the weighted estimators of
        :mod:`~bayeval.methods.judge.categories_weighted` (the Bayesian ones have none).
    alternative : {"two-sided", "larger", "smaller"}
        Frequentist estimators: as ppi_py, the p-value's alternative :math:`\pi_k \ne, >, <
        \theta_0`; a one-sided alternative makes the intervals one-sided (open to the end of
        the range).
    null : float or mapping, optional
        :math:`\theta_0` of the z-tests :math:`z = (\hat\pi_k - \theta_0)/\widehat{\mathrm{se}}`
        of every prevalence and of the weighted score (a number for both, or ``{"prevalence":
        ..., "weighted": ...}``): adds ``p_value`` (:func:`~bayeval.methods.judge.compare.p_value`;
        NaN for ``bayes``, whose interval is that of its exact draws).
    random_seed, sample_kwargs
        Seed of the exact draws and of the sampler; ``pm.sample``'s settings.

    Returns
    -------
    JudgeClasses

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> truth = rng.choice(["A", "tie", "B"], size=3000, p=[0.45, 0.2, 0.35])
    >>> said = np.where(rng.random(3000) < 0.8, truth, rng.choice(["A", "tie", "B"], 3000))
    >>> ev = judge_categories(truth[:200], said[:200], said[200:],
    ...                       weights={"A": 1, "tie": 0.5, "B": 0})
    >>> ev.summary()["mean"].round(3).tolist()  # A, B, tie, and the win rate of A
    [0.453, 0.346, 0.201, 0.554]

    Ties labelled four times as often as the judge's other verdicts, with weights
    :math:`1/\pi`:

    >>> pi = np.where(said == "tie", 0.2, 0.05)
    >>> lab = rng.random(3000) < pi
    >>> ev = judge_categories(truth[lab], said[lab], said[~lab], sample_weight=1 / pi[lab],
    ...                       sample_weight_unlabeled=1 / (1 - pi[~lab]),
    ...                       weights={"A": 1, "tie": 0.5, "B": 0})
    >>> ev.summary()["mean"].round(3).tolist()
    [0.459, 0.355, 0.186, 0.552]

    Is A's win rate above one half? The z-test of :math:`\theta_w = 0.5` against
    :math:`\theta_w > 0.5`, beside the one-sided interval:

    >>> ev = judge_categories(truth[:200], said[:200], said[200:], null={"weighted": 0.5},
    ...                       alternative="larger", weights={"A": 1, "tie": 0.5, "B": 0})
    >>> ev.summary().loc[("eif", "weighted", ""), ["lower", "upper", "p_value"]].round(4).tolist()
    [0.5201, 1.0, 0.004]
    """
    weighted = sample_weight is not None or sample_weight_unlabeled is not None
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    tests = (alternative, null)
    if method in ("pymc", "both") and (null is not None or alternative != "two-sided"):
        raise ValueError("null and alternative give the z-tests of the frequentist estimators; "
                         f"method={method!r} samples a posterior: leave them at their defaults "
                         "(or use method='eif').")
    if (weighted or mu_model is not None) and method in ("pymc", "both", "bayes"):
        raise ValueError(f"method={method!r} is a Dirichlet model of the judge's labels of a "
                         "random subset: it has no sampling weights nor score curves. Use "
                         "method='eif' (or another frequentist estimator).")
    if mu_model is not None:
        return _scored(y, yhat, yhat_unlabeled, method, ci_prob, ci_kind, weights,
                       as_choice(mu_model, "mu_model", CURVES), folds,
                       (sample_weight, sample_weight_unlabeled), random_seed, tests)
    y, yhat, yhat_u, classes = _codes(y, yhat, yhat_unlabeled)
    if len(classes) < 2:
        raise ValueError(f"y, yhat and yhat_unlabeled hold one category ({classes[0]!r}); a "
                         "judge of categories needs at least 2.")
    w = _weights(weights, classes)
    nulls = _nulls(null, w)
    alpha = _alpha(prior, len(classes))
    c = ClassCounts.from_codes(y, yhat, yhat_u, len(classes))
    bayes = method in ("pymc", "both")
    names = [n for n in CLASS_ESTIMATORS if not (weighted and n == "bayes")
             ] if method == "all" else [method]
    if bayes or "bayes" in names:  # a K x K table of P(Y | judge) per exact draw
        check_classes(len(classes), POSTERIOR_DRAWS, "y",
                      "merge rare categories, or use a frequentist estimator (method='eif')")
    if not bayes and names != ["bayes"]:
        _refuse(c, classes)
    rng = as_seed(random_seed)
    named = None if w is None else dict(zip(classes.tolist(), w.tolist(), strict=True))
    ci_note = "; " if w is None else f"; weights {named}; "
    common = dict(method="judge_categories", variant=method, ci_prob=ci_prob, ci_kind="eti",
                  random_seed=random_seed, assumptions=ASSUMPTIONS, data=_data(c, classes, w))
    what = (f"prevalences of {len(classes)} categories from {int(c.m)} human labels and "
            f"{int(c.n)} judge-only items{ci_note}")
    fns = cond = None
    if weighted:
        fns = weighted_by_name(y, yhat, yhat_u, len(classes), sample_weight,
                               sample_weight_unlabeled)
        w_l, w_u = (sampling_weights(a, b.size, "") for a, b in ((sample_weight, y),
                                                              (sample_weight_unlabeled, yhat_u)))
        rates = weighted_rates(y, yhat, len(classes), w_l)
        cond = float(np.linalg.cond(rates)) if np.isfinite(rates).all() else np.inf
        common["data"] = _weighted_data(common["data"], w_l, w_u, overall_lambda(
            y, yhat, yhat_u, len(classes), w_l, w_u))
        what += "sampling weights; "
    if not bayes:
        out, notes = _estimates(c, names, classes, rng, alpha, fns, cond)
        notes += _outside_notes(out, classes)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=4)
        return JudgeClasses.create(
            closed_form=_closed_form(out, w, classes, ci_kind, ci_prob, alternative, nulls),
            warnings=notes, description=what + f"{ci_kind} intervals" + _tests_note(*tests),
            interval_kind=_interval_kind(ci_kind, alternative), **common)
    pm_model = class_model(c.table, c.unlabelled, class_coordinate(classes), alpha=alpha,
                           variant=model)
    tree = sample(pm_model, random_seed, sample_kwargs, defaults={"target_accept": 0.95})
    post = tree["posterior"].to_dataset()
    coord = class_coordinate(classes)
    post["theta"] = _theta(post["pi"], w, coord)
    tree["posterior"] = xr.DataTree(post)
    closed = None
    if method == "both":
        exact = posterior_draws(c, alpha, POSTERIOR_DRAWS, rng)[None]
        closed = draws_intervals(_theta(xr.DataArray(exact, dims=(*SAMPLE_DIMS, "class")), w,
                                        coord), ci_prob, "eti")
        moments = posterior_moments(c, alpha)
        closed["mean"][0] = moments.estimate
        closed["sd"][0] = moments.se()
        if w is not None:
            mean, sd = moments.weighted(w)
            closed["mean"][1, 0], closed["sd"][1, 0] = mean, sd
    return JudgeClasses.create(
        closed_form=closed, draws=tree, estimand="posterior/theta", model=pm_model,
        description=f"model {model.upper()} posterior of the " + what + "Dirichlet prior on the "
                    "table", **common)
