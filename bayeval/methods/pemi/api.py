r"""PEMI: a classifier's metrics on a test set where some labels are missing (MCAR, MAR, MNAR).

Dervovic & Cashmore, "Model Evaluation in the Dark: Robust Classifier Metrics with Missing
Labels" (AISTATS 2025). The estimand is the metric
:math:`\widehat Q_n` that the full test set would give if every label were known. Each missing
label is imputed as :math:`Y_i\sim\mathcal B(p_i)` with
:math:`p_i=P(Y_i=1\mid x_i,M_i=1)`, so :math:`\widehat Q_n` becomes a random variable whose law is
the answer: the known rows enter exactly, the missing ones through :math:`p`.

Methods (``method=``):

* ``"auto"`` (default): PEMI-Gauss, unless it is poor for a metric (its interval leaves the
  metric's range, has zero width while the metric is not determined, or its exact mass is off
  ``ci_prob`` by more than 0.01: a mass at a bound, strong skew, few missing labels); then the
  exact law, or PEMI's imputation law where no exact law is affordable (ROC-AUC), and a note
  says so (:func:`bayeval.methods.pemi.mixture.choose`);
* ``"gauss"``, PEMI-Gauss (Algorithm 2): :math:`\mathcal N(\mu,\sigma^2)` from exact moments
  (:mod:`bayeval.confusion`; ROC-AUC's in :math:`O(n\log n)`), microseconds to milliseconds;
* ``"exact"``: the exact PMFs of the confusion-matrix metrics (PEMI with :math:`B\to\infty`);
* ``"impute"``, PEMI (Algorithm 1): :math:`B` completions of the labels, vectorised;
* ``"pymc"``: the generative models (:func:`bayeval.methods.pemi.models.model`): M1 puts a
  posterior on the calibration map, M3 adds the MNAR shift :math:`\delta`; ``"quadrature"`` is
  the same models with the map's posterior on a grid instead of NUTS; ``"both"`` runs NUTS and
  attaches the law of the metric mixed over M1's posterior on the quadrature grid, computed
  without the NUTS draws, for :meth:`Evaluation.check`.

Where :math:`p` comes from: given by the user; a calibration map fitted on the labelled rows (or
on ``reference`` data) and applied to the raw scores (``calibration=``, Platt scaling by
default); or the presets ``"half"`` and ``"prevalence"``. A map fitted on finite data is
uncertain, and its error is shared by every missing row: by default
(``calibration_uncertainty=True``) the fast paths mix PEMI's law over draws of the map's
posterior (:func:`bayeval.calibration_map.map_posterior`: Jeffreys' posterior for Platt and
beta calibration, the weighted likelihood bootstrap of the family otherwise;
:mod:`bayeval.methods.pemi.mixture`); ``False`` gives the plug-in
answer, conditional on the fitted map. MNAR: ``mnar=delta`` shifts the log-odds of every missing
label by :math:`\delta`; ``mnar=(mean, sd)`` puts a normal prior on it (model M3).
"""

from __future__ import annotations

import warnings as _warnings
from typing import Any

import numpy as np
import scipy
import xarray as xr
from scipy import special

from bayeval import validation
from bayeval.calibration import CALIBRATORS, Identity
from bayeval.calibration_map import map_posterior as map_draws
from bayeval.classes import binary_input
from bayeval.deprecation import renamed_arguments
from bayeval.evaluation import CI_KINDS, SAMPLE_DIMS, Evaluation
from bayeval.methods.pemi.fast import (
    FittedCalibration,
    Options,
    Rows,
    closed_form,
    delta_nodes,
    exact,
    fit_calibration,
    gauss,
    imputation_probabilities,
    shift,
    simulate,
)
from bayeval.methods.pemi.mixture import (
    Components,
    affordable,
    choose,
    component_moments,
    exact_mixture,
    imputed_summary,
    normal_of,
    subset,
)
from bayeval.methods.pemi.models import (
    PRIOR_A,
    PRIOR_LOG_B,
    map_posterior,
    mixture_closed_form,
    model,
    platt_map,
    posterior_nodes,
    predictive,
)
from bayeval.methods.pemi.multiclass import pemi_classes
from bayeval.methods.pemi.protocol import complete_case, definitional_bounds
from bayeval.metrics import BINARY_METRICS, metric_value
from bayeval.sampling import sample, stage
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_beta,
    as_choice,
    as_ci_prob,
    as_labels,
    as_mnar,
    as_positive_int,
    as_predictions,
    as_probabilities,
    as_sample_kwargs,
    as_scores,
    as_threshold,
    as_zero_division,
    named_columns,
)

__all__ = ["MNAR_SHIFT", "delta_sensitivity", "pemi"]

MNAR_SHIFT = "the log-odds of a missing label shifted"
"""What ``mnar=``'s delta shifts (for its error message)."""

METHODS = ("auto", "gauss", "exact", "impute", "quadrature", "pymc", "both")
MODELS = ("quadrature", "pymc", "both")
ALL_METRICS = BINARY_METRICS
#: the default metrics, in the paper's order
PAPER_METRICS = ("precision", "recall", "accuracy", "f1", "roc_auc")
PRESETS = ("half", "prevalence")
#: prior quantiles of delta at which ``delta_sensitivity`` reports PEMI-Gauss
SENSITIVITY_QUANTILES = (0.025, 0.25, 0.5, 0.75, 0.975)
ASSUMPTIONS = (
    "The metric is the one the whole test set would give with every label known. Missing labels "
    "are independent Bernoulli(p_i) given the scores. With a calibrator fitted on the labelled "
    "rows this needs the labels to be missing at random given the score (M independent of Y "
    "given the score), which holds under MCAR; under MNAR the shift delta (mnar=) says how much "
    "more likely, in log-odds, a missing label is to be positive, and the result is only as "
    "good as that choice.")


# ---------------------------------------------------------------------------- input handling
def _as_prior(prior: Any, name: str) -> tuple[float, float]:
    """(mean, sd) of a normal prior, sd > 0."""
    try:
        mean, sd = (float(v) for v in prior)
    except (TypeError, ValueError):
        mean, sd = np.nan, np.nan
    if not (np.isfinite(mean) and np.isfinite(sd) and sd > 0):
        raise ValueError(f"{name} must be (mean, sd) of a normal prior with sd > 0, got "
                         f"{prior!r}.")
    return mean, sd


def as_metrics(metrics: Any, method: str) -> tuple[str, ...]:
    """The ``metrics`` argument of :func:`pemi` with ``method``, as a tuple of names.

    Parameters
    ----------
    metrics : str, sequence of str or None
        Metric names; None: precision, recall, accuracy, F1 and ROC-AUC (not ROC-AUC with
        ``"exact"`` and ``"both"``).
    method : str
        :func:`pemi`'s ``method``.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        An unknown name; ROC-AUC with ``"exact"``.

    Examples
    --------
    >>> as_metrics(None, "exact"), as_metrics("f1", "gauss")
    (('precision', 'recall', 'accuracy', 'f1'), ('f1',))
    """
    # the check of "both" is exact for confusion-matrix metrics only
    default = PAPER_METRICS[:4] if method in ("exact", "both") else PAPER_METRICS
    names = validation.as_metrics(metrics, ALL_METRICS, default)
    if method == "exact" and "roc_auc" in names:
        raise ValueError("method='exact' gives PMFs of confusion-matrix metrics only; ROC-AUC has "
                         "none: use method='gauss' (exact moments) or 'impute' for it.")
    return names


def _rows(scores, labels, y_pred, threshold) -> Rows:
    threshold = as_threshold(threshold)
    s = as_scores(scores, "scores")
    y = as_labels(labels, "labels", allow_missing=True)
    yp = as_predictions(y_pred, s, threshold)
    return Rows(s, yp, y)


def as_reference(reference) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``reference`` argument: (scores, labels) of labelled calibration data, checked.

    Parameters
    ----------
    reference : (scores, labels) or None
        Scores in [0, 1] and 0/1 labels of the same length.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray) or None

    Raises
    ------
    ValueError
        Not a pair, bad scores or labels, different lengths.

    Examples
    --------
    >>> as_reference(([0.2, 0.9], [0, 1]))[1].tolist()
    [0, 1]
    """
    return None if reference is None else validation.as_reference(reference)


def calibration_data(rows: Rows, reference, needs_both: bool) -> tuple[np.ndarray, np.ndarray]:
    """The rows a calibration map (or M1) learns from, with clear errors when there are none.

    Parameters
    ----------
    rows : bayeval.methods.pemi.fast.Rows
        The test rows (their labelled rows are used without ``reference``).
    reference : (scores, labels) or None
        Checked by :func:`as_reference`.
    needs_both : bool
        Whether the labels must hold both classes.

    Returns
    -------
    scores, labels : numpy.ndarray

    Raises
    ------
    ValueError
        No labelled row; labels of one class when ``needs_both``.

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0]))
    >>> [x.tolist() for x in calibration_data(rows, None, needs_both=True)]
    [[0.9, 0.3], [1, 0]]
    """
    if reference is not None:
        s, y = reference
    else:
        if rows.m == rows.n:
            raise ValueError(
                "labels has no known value (all NaN): no calibrator can be fitted on the test "
                "set. Pass p (an array of probabilities, or 'half') or reference=(scores, "
                "labels) with labelled calibration data.")
        s, y = rows.scores[~rows.missing], rows.labels[~rows.missing].astype(np.int8)
    if needs_both and np.unique(y).size < 2:
        raise ValueError(f"the calibration labels hold only class {int(y[0])}; a calibration map "
                         "needs both classes. Pass p, or reference=(scores, labels) with both.")
    return s, y


def as_calibration(calibration: Any) -> Any:
    """The ``calibration`` argument: a name of :data:`bayeval.calibration.CALIBRATORS` or a map.

    Parameters
    ----------
    calibration : str or object
        A name, or an object with ``fit(scores, labels)`` and ``predict(scores)``.

    Returns
    -------
    str or object
        ``calibration`` unchanged.

    Raises
    ------
    ValueError
        An unknown name, or an object without ``fit`` and ``predict``.

    Examples
    --------
    >>> as_calibration("platt")
    'platt'
    """
    return validation.as_calibration(calibration, CALIBRATORS)


def _p(rows: Rows, p, calibration, reference, method: str
       ) -> tuple[np.ndarray | None, str, float, FittedCalibration | None]:
    """Imputation probabilities of the fast paths (None for the models, which learn the map),
    their source, the map's calibration error and the map fitted on labelled rows (if any)."""
    if method in MODELS:
        if p is not None:
            raise ValueError(f"method={method!r} learns the calibration map from labelled rows; "
                             "p must be None (a given p is a fixed map: use method='auto', "
                             "'gauss', 'exact' or 'impute').")
        return None, "Platt map with a posterior (M1)", np.nan, None
    if isinstance(p, str):
        as_choice(p, "p", PRESETS)
    elif p is not None:
        return (*imputation_probabilities(rows, p=as_probabilities(p, "p")), None)
    as_calibration(calibration)
    if p == "half":
        return (*imputation_probabilities(rows, p=p), None)
    cal = calibration_data(rows, reference, needs_both=p is None)  # raises if nothing to fit on
    if p == "prevalence":
        return (*imputation_probabilities(rows, p=p, reference=reference), None)
    fitted = fit_calibration(calibration, *cal)
    return (*imputation_probabilities(rows, calibration=calibration, reference=reference,
                                      fitted=fitted), fitted)


def _map_posterior(fitted: FittedCalibration | None, cal: tuple[np.ndarray, np.ndarray],
                   wanted: bool, random_seed, notes: list[str]):
    """The posterior of the calibration map fitted on ``cal``
    (:func:`bayeval.calibration_map.map_posterior`), or None: no map learned from data, the
    identity, or not ``wanted`` (then a note says what the intervals are conditional on)."""
    if fitted is None:
        return None
    cal_map = fitted.calibrator
    sides = getattr(cal_map, "sides_", [cal_map])
    if all(isinstance(side, Identity) for side in sides):
        return None
    if not wanted:
        notes.append("calibration_uncertainty=False: the intervals are conditional on the "
                     "fitted calibration map; its error, shared by every missing row, is not in "
                     "them, so they undercover, the more the fewer the labelled rows.")
        return None
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 5])
    return map_draws(cal_map, *cal, random_seed=seed)


def _components(rows: Rows, p: np.ndarray, posterior, delta) -> Components:
    """The mixture's components: draws of the map (or the plug-in p) times the nodes of the
    MNAR shift (:func:`bayeval.methods.pemi.fast.delta_nodes`)."""
    nodes, weights = delta_nodes(delta)
    if posterior is None:
        base = p[rows.order]
        if nodes.size == 1:  # one array, shared by the moments and the exact law
            one = shift(base, nodes[0]) if delta != (0.0, 0.0) else base  # as with a posterior
            return Components(weights, lambda i: np.broadcast_to(one, (i.size, one.size)))
        return Components(weights, lambda i: shift(base, nodes[i][:, None]))
    s_mis, k = rows.scores[rows.order], nodes.size
    shifted = delta != (0.0, 0.0)

    def p_of(index: np.ndarray) -> np.ndarray:
        q = subset(posterior, index // k).predict(s_mis)
        return shift(q, nodes[index % k][:, None]) if shifted else q

    return Components(np.tile(weights, posterior.draws) / posterior.draws, p_of)


def _fast(rows: Rows, p: np.ndarray, posterior, metrics, method: str, delta, ci_prob: float,
          ci_kind: str, opts: Options, random_seed) -> tuple[xr.Dataset, list[str]]:
    """The closed form of ``"auto"``, ``"gauss"`` and ``"exact"``, mixed over the map's draws
    (``posterior``) and the MNAR nodes, and its notes."""
    comps = _components(rows, p, posterior, delta)
    cm = tuple(m for m in metrics if m != "roc_auc")
    # merged over the MNAR nodes of a plug-in p; else the components' (one: the engine's law)
    merged = posterior is None and comps.size > 1
    if method == "exact":
        laws = exact(rows, p, cm, delta=delta, opts=opts) if merged else exact_mixture(
            rows, comps, cm, opts)
        return closed_form(metrics, laws, {}, ci_prob=ci_prob, ci_kind=ci_kind), []
    laws = {}
    if cm and (posterior is None or affordable(rows, comps.size)):
        laws = exact(rows, p, cm, delta=delta, opts=opts) if merged else exact_mixture(
            rows, comps, cm, opts)
    moments = component_moments(rows, comps, metrics, opts)
    out, notes, poor = {}, [], []
    for metric in metrics:
        normal = normal_of(moments[metric], comps.weights, ci_prob)
        row, note, kind = choose(metric, normal, laws.get(metric), ci_prob=ci_prob,
                                 ci_kind=ci_kind, fallback=method == "auto")
        notes += [note] if note else []
        if row is None:
            poor.append(metric)
            out[metric] = normal[4]
            continue
        out[metric] = row
        if kind == "normal" and 0.0 < row[5] < 1.0:
            notes.append(f"{metric} is undefined with probability {row[5]:.3g}; PEMI-Gauss "
                         "ignores that event: use method='exact' or 'impute' if it matters.")
    if poor:
        rng = np.random.default_rng(None if random_seed is None else [int(random_seed), 6])
        imputed = imputed_summary(rows, comps, tuple(poor), ci_prob, rng, opts)
        out.update({metric: (*imputed[metric], out[metric]) for metric in poor})
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined")
    arr = np.array([out[metric] for metric in metrics], dtype=float)
    return xr.Dataset({k: ("metric", arr[:, j]) for j, k in enumerate(names)},
                      coords={"metric": list(metrics)}), notes


# --------------------------------------------------------------------------- result pieces
def _data(rows: Rows, metrics, opts: Options, source: str) -> xr.Dataset:
    """Sizes, and the complete-case estimate and the paper's definitional bounds per metric:
    the confusion-matrix metrics from the labelled rows' counts, with the missing labels as the
    predictions (optimistic) or their opposites (pessimistic); ROC-AUC from the ranking."""
    (tp, fp, fn, tn), m1, m0 = rows.known_counts, rows.m1, rows.m - rows.m1
    cases = ((tp, fp, fn, tn), (tp + m1, fp, fn, tn + m0), (tp, fp + m1, fn + m0, tn))
    cc, optimistic, pessimistic = (np.array([float(metric_value(
        metric, *(float(c) for c in counts), opts.beta, opts.zero_division))
        if metric != "roc_auc" else np.nan for metric in metrics]) for counts in cases)
    if "roc_auc" in metrics:
        j, args = metrics.index("roc_auc"), (rows.scores, rows.labels, rows.y_pred, ("roc_auc",),
                                             opts)
        cc[j] = complete_case(*args)[0] if rows.m < rows.n else np.nan
        optimistic[j], pessimistic[j] = (b[0] for b in definitional_bounds(*args))
    if rows.m == rows.n:
        cc[:] = np.nan
    return xr.Dataset(
        {"complete_case": ("metric", cc), "optimistic": ("metric", optimistic),
         "pessimistic": ("metric", pessimistic), "n": rows.n, "n_missing": rows.m,
         "n_missing_predicted_positive": rows.m1,
         "n_predicted_positive": int(rows.y_pred.sum())},
        coords={"metric": list(metrics)}, attrs={"p_source": source})


def _predictive_tree(values: np.ndarray, metrics, shape: tuple[int, int],
                     tree: xr.DataTree | None = None) -> xr.DataTree:
    """Add the metric draws as ``posterior_predictive/value`` (chain, draw, metric)."""
    value = xr.DataArray(values.reshape(*shape, len(metrics)), dims=(*SAMPLE_DIMS, "metric"),
                         coords={"metric": list(metrics)})
    tree = tree if tree is not None else xr.DataTree()
    tree["posterior_predictive"] = xr.DataTree(xr.Dataset({"value": value}))
    return tree


def _sensitivity(rows: Rows, p: np.ndarray, metrics, delta, ci_prob, opts) -> xr.Dataset:
    """PEMI-Gauss at fixed delta: 0 (MAR) and quantiles of delta's prior."""
    grid = np.unique(np.r_[0.0, scipy.stats.norm.ppf(SENSITIVITY_QUANTILES, *delta)])
    parts = np.array([[gauss(rows, p, metrics, delta=(d, 0.0), ci_prob=ci_prob, opts=opts)[0][m]
                       for m in metrics] for d in grid])
    return xr.Dataset({k: (("delta", "metric"), parts[..., j]) for j, k in
                       enumerate(("mean", "sd", "lower", "upper"))},
                      coords={"delta": grid, "metric": list(metrics)})


def delta_sensitivity(ev: Evaluation) -> Table:
    r"""How the metrics move with the MNAR shift: PEMI-Gauss at fixed values of delta.

    Each row is PEMI-Gauss with :math:`p_i` replaced by
    :math:`\sigma(\operatorname{logit}p_i+\delta)` on the missing rows, at :math:`\delta` = 0
    (MAR) and at the 2.5, 25, 50, 75 and 97.5 % quantiles of the prior given as
    ``mnar=(mean, sd)``. For the models the map is fixed at its posterior mean.

    Parameters
    ----------
    ev : Evaluation
        A result of :func:`pemi` run with ``mnar=(mean, sd)``, ``sd > 0``.

    Returns
    -------
    Table
        Indexed by ``delta``; columns ``mean``, ``sd``, ``lower``, ``upper`` per metric
        (equal-tailed intervals at ``ev.ci_prob``).

    Raises
    ------
    ValueError
        If ``ev`` has no prior on the MNAR shift.

    Examples
    --------
    >>> ev = pemi([0.9, 0.8, 0.3, 0.6, 0.2, 0.7], [1, np.nan, 0, 1, np.nan, 0],
    ...           p=[0.5, 0.8, 0.5, 0.5, 0.1, 0.5], metrics="precision", mnar=(0.0, 1.0))
    >>> tab = delta_sensitivity(ev)
    >>> tab.index.values.round(2).tolist()
    [-1.96, -0.67, 0.0, 0.67, 1.96]
    >>> tab["mean"]["precision"].round(3).tolist()  # (2 + sigma(logit 0.8 + delta)) / 4
    [0.59, 0.668, 0.7, 0.722, 0.741]
    """
    if "delta_sensitivity" not in ev.tree.children:
        raise ValueError("this evaluation has no delta sensitivity; run pemi with a prior on the "
                         "MNAR shift, mnar=(mean, sd) with sd > 0.")
    ds = ev.tree["delta_sensitivity"].to_dataset()
    frame = ds.to_dataframe().unstack("metric")
    return table(frame, f"PEMI-Gauss at fixed MNAR shifts delta ({ev.ci_prob:g} intervals): "
                        "delta = 0 is MAR", ci_prob=ev.ci_prob)


def _warn(notes: list[str]) -> None:
    for note in notes:
        _warnings.warn(note, UserWarning, stacklevel=3)


# ---------------------------------------------------------------------------- the models
def _models(rows, cal, metrics, method, delta, prior_a, prior_log_b, draws, ci_prob, ci_kind,
            opts, random_seed, sample_kwargs):
    """Draws of M1 (fixed delta) or M3 (delta prior), and for 'both' the closed form of their
    predictive law on the quadrature grid (independent of the NUTS draws)."""
    m3 = delta[1] > 0
    seed = None if random_seed is None else [int(random_seed), 1]
    if method == "quadrature":
        rng = np.random.default_rng(seed)
        a, b = map_posterior(*cal, size=draws, prior_a=prior_a, prior_log_b=prior_log_b,
                             random_seed=rng)
        d = rng.normal(*delta, size=draws) if m3 else np.full(draws, delta[0])
        post = {"a": a, "b": b, "delta": d}
        tree = xr.DataTree.from_dict({"posterior": xr.Dataset(
            {k: (SAMPLE_DIMS, v[None, :]) for k, v in post.items()})})
        pm_model = None
    else:
        kwargs = {"variant": "m3", "delta": delta} if m3 else {"variant": "m1"}
        pm_model = model(*cal, prior_a=prior_a, prior_log_b=prior_log_b, **kwargs)
        tree = sample(pm_model, random_seed, sample_kwargs)
        posterior = tree["posterior"].to_dataset()
        post = {k: posterior[k].values for k in ("a", "b")}
        post["delta"] = posterior["delta"].values if m3 else np.full(post["a"].shape, delta[0])
    shape = post["a"].shape if post["a"].ndim == 2 else (1, post["a"].size)
    values = predictive(rows, metrics, post["a"], post["b"], post["delta"],
                        np.random.default_rng(None if seed is None else [*seed, 2]), opts)
    tree = _predictive_tree(values, metrics, shape, tree)
    closed = None
    if method == "both":  # M1's predictive law on the quadrature grid: no NUTS draw enters
        a, b, w = posterior_nodes(*cal, prior_a=prior_a, prior_log_b=prior_log_b)
        nodes, node_weights = delta_nodes(delta)
        with stage(f"PEMI: the exact predictive law over {a.size * nodes.size:,} posterior "
                   "nodes for check()"):
            closed = mixture_closed_form(rows, metrics, np.repeat(a, nodes.size),
                                         np.repeat(b, nodes.size), np.tile(nodes, a.size),
                                         weights=np.outer(w, node_weights).ravel(),
                                         ci_prob=ci_prob, ci_kind=ci_kind, opts=opts)
    plug_in = platt_map(rows.scores, float(np.mean(post["a"])), float(np.mean(post["b"])))
    return tree, closed, pm_model, plug_in


def _impute(rows: Rows, p: np.ndarray, metrics, delta, n: int, random_seed, opts,
            posterior=None) -> np.ndarray:
    """PEMI draws; with a prior on delta each imputation draws its own delta, with the map's
    posterior imputation b uses draw b mod M of the map."""
    rng = np.random.default_rng(random_seed)
    if posterior is not None:
        s_mis, which = rows.scores[rows.order], np.arange(n) % posterior.draws
        d = rng.normal(*delta, size=n) if delta[1] > 0 else np.full(n, delta[0])

        def p_missing(start: int, stop: int) -> np.ndarray:
            q = subset(posterior, which[start:stop]).predict(s_mis)
            return shift(q, d[start:stop, None]) if delta != (0.0, 0.0) else q

        return simulate(rows, metrics, p_missing, n, rng, opts)
    if delta[1] == 0:
        p_mis = shift(p[rows.order], delta[0])
        return simulate(rows, metrics, lambda start, stop: p_mis, n, rng, opts)
    logit = special.logit(p[rows.order])
    d = rng.normal(*delta, size=n)
    return simulate(rows, metrics,
                    lambda start, stop: special.expit(logit + d[start:stop, None]), n, rng, opts)


# ---------------------------------------------------------------------------- entry point
@renamed_arguments(calibrator="calibration", n_imputations="draws")
def pemi(scores, labels, *, y_pred=None, data=None, threshold: float = 0.5, p=None,
         calibration: Any = "platt", calibration_uncertainty: bool = True, reference=None,
         mnar=None, metrics=None, method: str = "auto", ci_prob: float = 0.95,
         ci_kind: str = "eti",
         draws: int = 10_000, ties: str = "half", zero_division: float = 0.0,
         beta: float = 1.0, second_order: bool = True, prior_a=PRIOR_A,
         prior_log_b=PRIOR_LOG_B, random_seed: int | None = None,
         sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""Distribution of a classifier's metrics on a test set with missing labels.

    Parameters
    ----------
    scores : array-like of float in [0, 1], shape (n,)
        Raw scores of the positive class for every test row: they give the predictions
        (``scores >= threshold``), the ranking of ROC-AUC and the calibrator's input; or a
        column name of ``data``. Scores of one column per class, an (n, K) array or DataFrame
        of class probabilities, evaluate K classes (labels of any hashable type, None or NaN
        where missing): :func:`bayeval.methods.pemi.multiclass.pemi_classes`, which describes
        the options it takes. With ``data``, a list of K column names gives them (the
        columns' names are the classes, as in :func:`bayeval.cbpe`), a mapping
        ``{class: column}`` renames them. The per-row arguments (``scores``, ``labels``, ``y_pred``,
        ``p``; the two parts of ``reference``) pair by index where they are pandas Series, else
        by position (:func:`bayeval.validation.aligned`).
    labels : array-like, shape (n,)
        0, 1, or NaN where the label is missing; or a column name of ``data`` (with a table
        ``reference`` holding that column, ``data`` may lack it: no test label is known).
    y_pred : array-like of 0/1, optional
        Predictions, if not ``scores >= threshold``; or a column name of ``data``.
    data : table, optional
        A pandas DataFrame or pyarrow Table whose columns the per-row arguments name
        (:mod:`bayeval.validation.tables`).
    p : array-like, "half" or "prevalence", optional
        :math:`P(Y_i=1)` of the missing labels, one value per row (ignored on labelled rows),
        used as given, or a column name of ``data``; or a preset: :math:`\tfrac12`, or the
        rate of positives of the calibration labels. Default: from ``calibration``.
    calibration : {"platt", "beta", "isotonic", "scaling_binning", "none"} or object
        The calibration map: a name, or an object with ``fit(scores, labels)`` and
        ``predict(scores)``. Fitted on ``reference``, else on the labelled test rows (valid when
        labels are missing at random given the score), and applied to the raw scores. Default:
        Platt scaling, the first step of the paper's scaling-binning calibrator (Kumar et al.
        2019). Its second step, the bins, gives every row of a bin the mean Platt output of
        the *labelled* rows in that bin: when missingness depends on the score, the missing
        rows sit elsewhere in their bins than the labelled ones, and their probabilities are
        biased by an amount that does not shrink with more data. (``calibrator=`` is a
        deprecated alias.)
    calibration_uncertainty : bool
        Integrate over the posterior of a calibration map fitted on labelled rows (the
        labelled test rows or ``reference``): :func:`bayeval.calibration_map.map_posterior`,
        400 draws (Platt and beta calibration: their coefficients' posterior under Jeffreys'
        prior; otherwise the weighted likelihood bootstrap of the family, Newton & Raftery
        1994). The metric's law is the mixture of PEMI's law over the draws (normal
        mixture, exact PMFs, or one draw of the map per imputation), so the intervals hold the
        map's own error, which every missing row shares. ``False``: the plug-in answer,
        conditional on the fitted map (said so in the warnings). No effect with ``p`` given or
        a preset, ``calibration="none"`` or the models (which have their own posterior).
    reference : (scores, labels) or table, optional
        Labelled calibration data (e.g. a held-out split of the training data); a table has
        its columns under the names given to ``scores`` and ``labels``. With K classes: scores
        of shape (n_ref, K) and class labels among the test set's classes.
    mnar : float or (mean, sd), optional
        MNAR shift :math:`\delta`: every missing label gets
        :math:`\operatorname{logit}p_i+\delta`. A number fixes it; ``(mean, sd)`` is a normal
        prior (model M3; the fast paths mix over it). For missingness that depends on the label
        only, with the map fitted on the labelled rows, :math:`\delta` is the log odds ratio of
        a label being missing for a positive against a negative (0: MAR).
    metrics : str or sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``specificity``, ``npv``, ``f1``,
        ``fbeta``, ``balanced_accuracy``, ``mcc``, ``roc_auc``. Default: precision, recall,
        accuracy, F1 and ROC-AUC (not ROC-AUC with ``"exact"``).
    method : {"auto", "gauss", "exact", "impute", "quadrature", "pymc", "both"}
        See the module docstring. ``"auto"`` is PEMI-Gauss with the exact (or imputation) law
        where PEMI-Gauss is poor; ``"gauss"`` keeps PEMI-Gauss and says where it is poor.
    ci_prob, ci_kind : float, {"eti", "hdi"}
        Interval level and kind (``"hdi"``: the shortest interval of an exact PMF; normal laws
        and mixtures are equal-tailed).
    draws : int
        :math:`B` of ``"impute"``; draws of the map for ``"quadrature"``. (``n_imputations=``
        is a deprecated alias.)
    ties : {"half", "one"}
        A tied positive-negative pair counts 1/2 in ROC-AUC (scikit-learn) or 1 (the paper).
    zero_division : {0.0, 1.0, np.nan}
        The value of a metric whose denominator is 0 (scikit-learn's convention); the
        probability of that event is reported as ``p_undefined``.
    beta : float
        :math:`\beta` of ``fbeta``.
    second_order : bool
        Second-order delta-method mean of the ratio metrics in PEMI-Gauss (``False``: the
        paper's ratio of means).
    prior_a, prior_log_b : (mean, sd)
        Normal priors of the map's intercept and log slope (M1, M3).
    random_seed : int, optional
        Seed of the imputations, the sampler and the predictive draws.
    sample_kwargs : dict, optional
        Passed to ``pm.sample``.

    Returns
    -------
    Evaluation
        ``"auto"``/``"gauss"``/``"exact"``: ``closed_form`` over ``metric`` (``mean``, ``sd``,
        ``lower``, ``upper``, ``interval_mass``, ``p_undefined``; the PMF for ``"exact"``).
        ``interval_mass`` is the exact mass of the interval where the exact law is known (every
        confusion-matrix metric unless the missing rows are many), else the normal mixture's.
        The others: draws ``posterior_predictive/value`` (chain, draw, metric) and, for the
        models, the map's posterior ``a``, ``b`` (and ``delta``). Group ``data``: sizes, the
        complete-case estimate, the paper's optimistic/pessimistic imputations and
        ``map_draws`` (0: no map posterior). With a prior on :math:`\delta`, group
        ``delta_sensitivity`` (see :func:`delta_sensitivity`).

    Raises
    ------
    ValueError
        Labels other than 0, 1 and NaN; inputs of different lengths or pandas indexes that
        differ; no labelled row and no ``p`` or ``reference`` (nothing to calibrate on);
        calibration labels of one class; ``p`` with a model method; ROC-AUC with ``"exact"``.

    Notes
    -----
    With no missing label every method returns the plain metric with zero width (and a
    warning); otherwise an interval has zero width only when the metric is determined by the
    known labels. Intervals lie in the metric's range. A metric undefined in some completions
    (e.g. recall when no positive may exist) takes ``zero_division`` there; PEMI-Gauss ignores
    that event and says so in a warning.

    Examples
    --------
    >>> ev = pemi([0.9, 0.8, 0.3, 0.6, 0.2, 0.7], [1, np.nan, 0, 1, np.nan, 0],
    ...           p=[0.5, 0.8, 0.5, 0.5, 0.1, 0.5], metrics="precision")
    >>> ev.summary().loc["precision", ["mean", "sd"]].round(4).tolist()  # (2 + 0.8) / 4
    [0.7, 0.1]

    The same rows as columns of a DataFrame:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"score": [0.9, 0.8, 0.3, 0.6, 0.2, 0.7],
    ...                    "label": [1, np.nan, 0, 1, np.nan, 0],
    ...                    "p": [0.5, 0.8, 0.5, 0.5, 0.1, 0.5]})
    >>> ev = pemi("score", "label", p="p", data=df, metrics="precision")
    >>> ev.summary().loc["precision", ["mean", "sd"]].round(4).tolist()
    [0.7, 0.1]
    """
    scores, labels, y_pred, p, reference = named_columns(
        data, scores=scores, labels=labels, y_pred=y_pred, p=p, reference=reference,
        absent_labels=np.nan, reference_parts=("scores", "labels"))
    if random_seed is not None and not (isinstance(random_seed, (int, np.integer))
                                        and random_seed >= 0):
        raise ValueError(f"random_seed must be None or a non-negative int, got {random_seed!r}.")
    if not binary_input(scores, None):  # scores of K columns (1-D scores: binary checks)
        return _classes(scores, labels, y_pred=y_pred, p=p, reference=reference,
                        threshold=threshold, calibration=calibration,
                        calibration_uncertainty=calibration_uncertainty, mnar=mnar,
                        metrics=metrics, method=method, ci_prob=ci_prob, ci_kind=ci_kind,
                        draws=draws, zero_division=zero_division, second_order=second_order,
                        prior_a=prior_a, prior_log_b=prior_log_b, random_seed=random_seed,
                        sample_kwargs=sample_kwargs)
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = as_metrics(metrics, method)
    delta = as_mnar(mnar, MNAR_SHIFT)
    prior_a, prior_log_b = _as_prior(prior_a, "prior_a"), _as_prior(prior_log_b, "prior_log_b")
    draws = as_positive_int(draws, "draws", least=2)
    if method in MODELS:
        sample_kwargs = as_sample_kwargs(sample_kwargs)
    opts = Options(as_choice(ties, "ties", ("half", "one")), as_zero_division(zero_division),
                   as_beta(beta), second_order)
    scores, labels, y_pred, p = aligned(scores=scores, labels=labels, y_pred=y_pred, p=p)
    rows = _rows(scores, labels, y_pred, threshold)
    reference = as_reference(reference)
    common = dict(method="pemi", variant=method, ci_prob=ci_prob, ci_kind=ci_kind,
                  random_seed=random_seed, assumptions=ASSUMPTIONS)
    if rows.m == 0:
        return _nothing_missing(rows, metrics, opts, ci_prob, common)
    p, source, ece, fitted = _p(rows, p, calibration, reference, method)
    notes: list[str] = []
    posterior = _map_posterior(fitted, calibration_data(rows, reference, False) if fitted else
                               None, bool(calibration_uncertainty), random_seed, notes)
    if posterior is not None:
        source += f", integrated over {posterior.draws} draws of its posterior"
    elif fitted is not None and notes:
        source += ", conditional on the fitted calibration map"
    data = _data(rows, metrics, opts, source).assign(
        calibration_ece=ece, map_draws=0 if posterior is None else posterior.draws)
    common["calibration_uncertainty"] = posterior is not None
    described = (f"{', '.join(metrics)} on {rows.n} rows, {rows.m} labels missing; p: {source}"
                 + (f"; MNAR shift delta ~ N({delta[0]:g}, {delta[1]:g}^2)" if delta[1] else
                    f"; MNAR shift delta = {delta[0]:g}" if delta[0] else ""))
    if method in MODELS:
        cal = calibration_data(rows, reference, needs_both=True)
        tree, closed, pm_model, p = _models(rows, cal, metrics, method, delta, prior_a,
                                            prior_log_b, int(draws), ci_prob,
                                            ci_kind, opts, random_seed, sample_kwargs)
        ev = Evaluation.create(closed_form=closed, draws=tree,
                               estimand="posterior_predictive/value",
                               iid_draws=method == "quadrature", model=pm_model, data=data,
                               description=described, **common)
    elif method == "impute":
        values = _impute(rows, p, metrics, delta, int(draws), random_seed, opts, posterior)
        _warn(notes)
        ev = Evaluation.create(draws=_predictive_tree(values, metrics, (1, int(draws))),
                               estimand="posterior_predictive/value", iid_draws=True, data=data,
                               warnings=notes, description=described, **common)
    else:
        closed, more = _fast(rows, p, posterior, metrics, method, delta, ci_prob, ci_kind, opts,
                             random_seed)
        notes += more
        _warn(notes)
        ev = Evaluation.create(closed_form=closed, data=data, warnings=notes,
                               description=described, **common)
    if delta[1] > 0:
        ev.tree["delta_sensitivity"] = xr.DataTree(_sensitivity(rows, p, metrics, delta,
                                                                ci_prob, opts))
    return ev


def _classes(scores, labels, *, y_pred, p, reference, threshold, calibration, prior_a,
             prior_log_b, random_seed, **options) -> Evaluation:
    """K classes (:func:`bayeval.methods.pemi.multiclass.pemi_classes`), with the threshold of
    two classes refused."""
    if threshold != 0.5:
        raise ValueError("threshold is for scores of one class; with K classes the prediction "
                         "is the class of the largest score (or y_pred).")
    scores, labels, y_pred, p = aligned(scores=scores, labels=labels, y_pred=y_pred, p=p)
    return pemi_classes(scores, labels, y_pred=y_pred, p=p, reference=reference,
                        calibration=calibration,
                        prior_a=_as_prior(prior_a, "prior_a"),
                        prior_log_b=_as_prior(prior_log_b, "prior_log_b"),
                        random_seed=random_seed, **options)


def _nothing_missing(rows: Rows, metrics, opts: Options, ci_prob: float, common) -> Evaluation:
    """Every label is known: the plain metrics, with zero width."""
    note = "no label is missing: the metrics are known exactly (zero width)."
    _warn([note])
    normal, _ = gauss(rows, np.zeros(rows.n), metrics, delta=(0.0, 0.0), ci_prob=ci_prob,
                      opts=opts)
    closed = closed_form(metrics, {}, normal, ci_prob=ci_prob, ci_kind="eti")
    closed["interval_mass"] = ("metric", np.ones(len(metrics)))
    return Evaluation.create(closed_form=closed, data=_data(rows, metrics, opts, "none needed"),
                             warnings=[note], description=note, **common)
