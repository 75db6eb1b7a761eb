r"""CBPE: performance of a binary classifier estimated without labels, chunk by chunk.

In a monitored period no label is known; the classifier's calibrated score :math:`p_i` is taken
as :math:`P(Y_i=1)`. With :math:`\hat y_i` fixed, a window's confusion matrix is fixed by
:math:`TP=\sum_{\hat y_i=1}Y_i` and :math:`FN=\sum_{\hat y_i=0}Y_i`, so every metric
:math:`g(TP, FN)` has an exact predictive law: the law of the window's **realized** metric given
its scores (Kivimäki et al., 2025, "Performance estimation in binary classification using
calibrated confidence", arXiv:2505.05295). Noise models:

=============  ====================================================================  ===========
``noise``      latent labels                                                         model
=============  ====================================================================  ===========
``"none"``     :math:`Y_i\sim\mathrm{Bernoulli}(p_i)` (the paper's model)            V0
``"beta"``     per score bin :math:`g` of a chunk (split at the threshold),          V2
               :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))`,
               :math:`K_g\sim\mathrm{Binomial}(n_g,\pi_g)`, :math:`\kappa` given
``"learned"``  V2 with :math:`\log\kappa\sim N(\mu,\sigma^2)` learned from how the bins of  V2b (b)
               the labelled reference's chunks scatter (marginal Beta-binomial
               likelihood): calibration drifts from chunk to chunk
``"binning"``  one rate :math:`\pi_b` per bin, shared by the reference and every        V2b (a)
               analysis chunk, :math:`\pi_b\sim\mathrm{Beta}(\kappa c_b,\kappa(1-c_b))`,
               learned from the reference's pooled bins (Bayesian histogram
               binning): uncertainty about a stable calibration map, which shrinks as
               the reference grows
=============  ====================================================================  ===========

Fast path (``method="exact"``): the laws of TP and FN (Poisson-binomial, Beta-binomial
convolutions, their mixture over the grid posterior of :math:`\kappa`) pushed through each
metric (:mod:`bayeval.methods.cbpe.fast`), with NannyML's ratio of expected counts
:math:`g(\mathbb E\,TP, \mathbb E\,FN)` alongside (``plugin``), and ROC-AUC's mean and sd from
the exact moments of :func:`bayeval.confusion_moments.auc_moments` (normal interval). Generative
models (``method="pymc"``): :func:`bayeval.methods.cbpe.models.model`; ``"both"`` runs the two and
:meth:`Evaluation.check` compares them. The same fast path on dask partitions:
:mod:`bayeval.methods.cbpe.partitioned`.

The calibration map learned on the reference is uncertain, and every row shares its error: by
default the laws are mixed over its posterior (:mod:`bayeval.calibration_map`, the weighted
likelihood bootstrap of the calibrator's family;
:meth:`~bayeval.methods.cbpe.fast.CountLaw.with_map`), and ``calibration_uncertainty=False``
gives the plug-in answer, conditional on the fitted map.

Workflow (NannyML's): a labelled **reference** period calibrates the scores (held-out folds
decide whether and how), and its realized metrics per chunk give alert thresholds
(mean :math:`\pm3` sd); the **analysis** period is estimated per chunk and as a whole; where its
labels arrive, the realized metrics are reported beside the estimates, and with
``late_labels="estimate"`` they enter them (:mod:`bayeval.methods.cbpe.late_labels`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import xarray as xr

from bayeval.calibration import CALIBRATORS, Calibrator, Identity, SplitAtThreshold
from bayeval.calibration_map import (
    EXACT_MAP_ROWS,
    SPARSE_ROWS,
    MapPosterior,
    draw_pmfs,
    map_posterior,
    sparse_bins,
    support_counts,
)
from bayeval.chunks import WHOLE, make_chunks
from bayeval.classes import binary_input
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.cbpe.auc import window_auc_law
from bayeval.methods.cbpe.fast import (
    CountLaw,
    NormalLaw,
    closed_form,
    count_laws,
    map_laws,
    threshold_grid,
    windows,
)
from bayeval.methods.cbpe.kappa import (
    KAPPA_PRIOR,
    beta_grid,
    kappa_mixture,
    kappa_posterior,
    reference_bins,
)
from bayeval.methods.cbpe.late_labels import (
    add_realized,
    as_late_labels,
    fold_labels,
    folded_laws,
    late_label_notes,
    realized,
)
from bayeval.methods.cbpe.models import (
    auc_of_draws,
    bin_cells,
    bin_edges,
    forward,
    metric_draws,
    model,
    posterior_predictive,
    predictive_v2b,
)
from bayeval.methods.cbpe.outputs import as_outputs, reference_outputs, with_outputs
from bayeval.methods.cbpe.reference import Reference, period_chunks, reference_period
from bayeval.methods.cbpe.result import CBPEEvaluation
from bayeval.metrics import BINARY_METRICS, REGISTRY
from bayeval.metrics import METRICS as CONFUSION_METRICS
from bayeval.sampling import sample, stage
from bayeval.validation import (
    aligned,
    as_alert_thresholds,
    as_beta,
    as_calibration,
    as_choice,
    as_ci_prob,
    as_labels,
    as_metrics,
    as_positive_int,
    as_predictions,
    as_prior,
    as_sample_kwargs,
    as_scores,
    as_threshold,
    as_zero_division,
    check_label_draws,
    named_columns,
)

__all__ = ["ALERT_SD", "ASSUMPTIONS", "METRICS", "NOISES", "SHIFT_WARN", "add_support",
           "alert_bounds", "cbpe", "check_metrics", "check_options", "estimates", "evaluation",
           "map_uncertainty", "size_notes", "without_reference"]

METRICS = BINARY_METRICS
METHODS = ("exact", "pymc", "both")
NOISES = ("none", "beta", "learned", "binning")
CALIBRATIONS = ("auto", *CALIBRATORS)
SHIFT_WARN = 0.1
"""A chunk with a larger share of rows where the reference is sparse gets a warning."""
ALERT_SD = 3.0
"""Alert thresholds: mean +- ALERT_SD sd of the realized metric over reference chunks."""
#: NUTS settings of V2b. The posterior of log kappa has a steep left flank (small kappa is
#: excluded quickly) and a long right tail: target_accept=0.9 crosses the flank without
#: divergences, and 2 x 2000 draws give a bulk ESS above 800 (0.99 gave 300-490 of 2 x 1000 and
#: failed the diagnostics in half of the runs; 0.8 drops it to about 600). The pooled bins of
#: noise="binning" sample cleanly with PyMC's defaults.
V2B_SAMPLE_KWARGS = {"learned": {"target_accept": 0.9, "draws": 2000}, "binning": {}}
ASSUMPTIONS = (
    "The calibrated scores are the probabilities that the labels of the monitored period are 1 "
    "(P(Y | score) learned on the reference still holds there: no concept shift; the map's own "
    "estimation error is integrated unless calibration_uncertainty=False, and sparse_share "
    "tells where it is extrapolated), and the labels are independent given the scores. "
    "noise='beta' or 'learned' relaxes calibration: each score bin of a chunk shares a random "
    "calibration error; noise='binning' keeps one calibration map, uncertain, learned from the "
    "reference's bins. Intervals are predictive intervals for each chunk's realized metric, "
    "not confidence intervals for a population rate.")


# ---------------------------------------------------------------------------------------------
# inputs


def check_metrics(metrics: Any, noise: str) -> tuple[str, ...]:
    """The metric names, checked (default: all of them; no ROC-AUC with a noise model).

    Examples
    --------
    >>> check_metrics(None, "beta")[-2:], [str(m) for m in check_metrics("f1", "none")]
    (('balanced_accuracy', 'mcc'), ['f1'])
    """
    names = as_metrics(metrics, METRICS, METRICS if noise == "none" else CONFUSION_METRICS)
    if "roc_auc" in names and noise != "none":
        raise ValueError("metrics: roc_auc is estimated with noise='none' only (its moments "
                         "assume independent labels); drop it or use noise='none'.")
    return names


def check_options(calibration, threshold, zero_division, noise, kappa, kappa_prior, n_bins):
    """Checked calibration, threshold and zero_division (and kappa, its prior, n_bins).

    Examples
    --------
    >>> check_options("auto", 0.5, 0, "none", None, (4.6, 2.0), 10)
    ('auto', 0.5, 0.0)
    """
    calibration = as_calibration(calibration, CALIBRATIONS, kind=Calibrator)
    threshold = as_threshold(threshold)
    zero_division = as_zero_division(zero_division)
    if noise == "beta" and not (isinstance(kappa, (int, float, np.number)) and kappa > 0):
        raise ValueError(f"noise='beta' needs kappa, a positive number; got {kappa!r}.")
    as_positive_int(n_bins, "n_bins")
    if noise in ("learned", "binning"):
        as_prior(kappa_prior, "kappa_prior", kind="normal")
    return calibration, float(threshold), float(zero_division)


def size_notes(sizes: np.ndarray) -> list[str]:
    """A warning when the chunks' sizes differ by more than a factor 2.

    Examples
    --------
    >>> size_notes(np.array([100, 100, 40]))  # doctest: +ELLIPSIS
    ['chunk sizes vary from 40 to 100 rows: interval widths and alerts are not comparable...']
    """
    if sizes.min() < sizes.max() / 2:
        return [f"chunk sizes vary from {sizes.min()} to {sizes.max()} rows: interval widths "
                "and alerts are not comparable across chunks."]
    return []


def without_reference(calibration: Any, noise: str) -> tuple[Calibrator | None, list[str]]:
    """The calibrator when no reference is given, and the note to report.

    A fitted :class:`~bayeval.calibration.Calibrator` is applied as given; ``"auto"`` and
    ``"none"`` take the scores as calibrated (``None``); the other calibrations and the noise
    models that learn :math:`\\kappa` need labelled data.

    Raises
    ------
    ValueError
        For a calibration to fit, an unfitted Calibrator, or ``noise="learned"``/``"binning"``.

    Examples
    --------
    >>> without_reference("auto", "none")
    (None, ['no reference: the scores are taken as calibrated probabilities.'])
    """
    if not isinstance(calibration, Calibrator) and calibration not in ("auto", "none"):
        raise ValueError(f"calibration={calibration!r} needs reference=(scores, labels).")
    if isinstance(calibration, Calibrator) and not calibration.fitted:
        raise ValueError(f"calibration: the {type(calibration).__name__} calibrator is not "
                         "fitted; fit it, or give reference=(scores, labels) to fit it on.")
    if noise in ("learned", "binning"):
        raise ValueError(f"noise={noise!r} learns kappa from labelled data: give "
                         "reference=(scores, labels).")
    if isinstance(calibration, Calibrator):
        return calibration, []
    return None, ["no reference: the scores are taken as calibrated probabilities."]


# ---------------------------------------------------------------------------------------------
# alert thresholds


def _limits(metric: str) -> tuple[float, float]:
    return REGISTRY[metric].low, REGISTRY[metric].high


def alert_bounds(realized_ref: np.ndarray, metrics, alert_thresholds,
                 limits=None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper thresholds per metric: the mean of the realized metric over the reference
    chunks +- :data:`ALERT_SD` sd (clipped to the metric's range, or to ``limits``, one pair
    per metric; NaN with fewer than two chunks), or the user's constants (checked by
    :func:`bayeval.validation.as_alert_thresholds`; those of other metrics are left out).

    Examples
    --------
    >>> lower, upper = alert_bounds(np.array([[0.8], [0.9]]), ["f1"], {})
    >>> lower.round(6).tolist(), upper.round(6).tolist()
    ([0.7], [1.0])
    """
    lower, upper = np.full(len(metrics), np.nan), np.full(len(metrics), np.nan)
    for j, metric in enumerate(metrics):
        values = realized_ref[:, j][np.isfinite(realized_ref[:, j])]
        if values.size >= 2:
            lo, hi = _limits(metric) if limits is None else limits[j]
            centre, spread = values.mean(), values.std()
            lower[j] = max(centre - ALERT_SD * spread, lo)
            upper[j] = min(centre + ALERT_SD * spread, hi)
    for metric, (lo, hi) in alert_thresholds.items():
        if metric in metrics:
            j = metrics.index(metric)
            lower[j], upper[j] = lo, hi
    return lower, upper


def map_uncertainty(cal: Calibrator | None, ref: Reference | None, learned: bool, wanted: bool,
                    noise: str, random_seed, notes: list[str]) -> MapPosterior | None:
    """The posterior of the calibration map (:func:`bayeval.calibration_map.map_posterior`)
    when it is learned from the reference, wanted and used (``noise="none"``); otherwise
    None, with a note in ``notes`` saying what the intervals are conditional on.

    Examples
    --------
    >>> notes = []
    >>> map_uncertainty(Identity(), None, True, True, "none", 0, notes), notes
    (None, [])
    """
    sides = cal.sides_ if isinstance(cal, SplitAtThreshold) else [cal]
    if cal is None or all(isinstance(side, Identity) for side in sides):
        return None
    if ref is None or not learned:
        notes.append("the calibration map was given fitted: the intervals are conditional on "
                     "it (its own error is not in them).")
        return None
    if not wanted:
        notes.append("calibration_uncertainty=False: the intervals are conditional on the "
                      "calibration map fitted on the reference; its error, shared by every row, "
                      "is not in them, so they undercover, the more the longer the window.")
        return None
    if noise != "none":
        notes.append(f"noise={noise!r} models calibration noise its own way; the error of the "
                     "calibration map fitted on the reference is integrated with noise='none' "
                     "only.")
        return None
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 16])
    return map_posterior(cal, ref.scores[ref.order], ref.labels[ref.order], random_seed=seed)


def add_support(closed: xr.Dataset, counts: list[np.ndarray], reference_scores: np.ndarray,
                notes: list[str]) -> None:
    """``sparse_share`` per chunk (then the whole period) into ``closed``: the share of the rows
    whose score lies where the reference had fewer than
    :data:`~bayeval.calibration_map.SPARSE_ROWS` rows per half unit of logit
    (:func:`~bayeval.calibration_map.sparse_bins`); a note when it exceeds :data:`SHIFT_WARN`.

    ``counts`` are the chunks' :func:`~bayeval.calibration_map.support_counts`.

    Examples
    --------
    >>> closed = xr.Dataset(coords={"chunk": ["c", "all"]})
    >>> notes = []
    >>> add_support(closed, [support_counts(np.array([0.3, 0.9]))], np.full(50, 0.3), notes)
    >>> closed["sparse_share"].values.tolist(), notes[0][:60]
    ([0.5, 0.5], "50% of the rows of chunk(s) 'c', 'all' have scores where the")
    """
    counts = [*counts, sum(counts[1:], counts[0])]
    sparse = sparse_bins(reference_scores)
    share = np.array([c[sparse].sum() / max(c.sum(), 1) for c in counts])
    closed["sparse_share"] = ("chunk", share)
    flagged = [str(c) for c, v in zip(closed["chunk"].values, share, strict=True)
               if v > SHIFT_WARN]
    if flagged:
        notes.append(
            f"{share.max():.0%} of the rows of chunk(s) {', '.join(map(repr, flagged))} have "
            f"scores where the reference had fewer than {SPARSE_ROWS} rows per half unit of "
            "logit (sparse_share): the calibration map is extrapolated there. Its posterior "
            "widens the intervals as far as the map's family allows; if P(Y | score) itself "
            "differs there, no interval can tell. Label some of those rows.")


def _kappa_grid(ref_cells, kappa_prior, data: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The grid posterior of kappa (kept in ``data``), as the count laws mix over it."""
    log_kappa, weights = kappa_posterior(ref_cells["k"], ref_cells["n"], ref_cells["c"],
                                         kappa_prior)
    data["log_kappa_grid"] = ("kappa_point", log_kappa)
    data["kappa_weight"] = ("kappa_point", weights)
    return kappa_mixture(log_kappa, weights)


# ---------------------------------------------------------------------------------------------
# the result, shared with the partitioned path


def estimates(laws: list[CountLaw], auc: list[tuple[NormalLaw, float]] | None,
              expected: list[tuple[float, float]], chunk_labels, sizes: np.ndarray, metrics,
              ci_prob, ci_kind, zero_division, beta, thresholds) -> xr.Dataset:
    """The closed form of every chunk and (when ``laws`` has its law) of the whole period
    (:func:`bayeval.methods.cbpe.fast.closed_form`), with their rows ``n`` (``sizes`` are the
    chunks') and predicted positives.

    Examples
    --------
    One chunk of three rows (so the whole period is the same window):

    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.8, 0.3]), np.array([1, 1, 0]))
    >>> none = (np.array([np.nan]), np.array([np.nan]))
    >>> ds = estimates([law, law], None, [(1.7, 0.3)] * 2, ["c"], np.array([3]), ["accuracy"],
    ...                0.95, "eti", 0.0, 1.0, none)
    >>> ds["n"].values.tolist(), ds["n_predicted_positive"].values.tolist()
    ([3, 3], [2, 2])
    """
    closed = closed_form(laws, auc, expected, chunk_labels, metrics, ci_prob, ci_kind,
                         zero_division, beta, thresholds)
    return closed.assign(n=("chunk", np.r_[sizes, sizes.sum()][:len(laws)]),
                         n_predicted_positive=("chunk", [law.n_pos for law in laws]))


def evaluation(*, chunk_labels, sizes: np.ndarray, noise: str, calibration: str, split: bool,
               variant: str, ci_prob: float, ci_kind: str, random_seed, data: xr.Dataset,
               notes: list[str], partitioned: bool = False, map_draws: int = 0,
               reference: xr.Dataset | None = None, **result: Any) -> CBPEEvaluation:
    """CBPE's Evaluation, in memory or partitioned: metadata, description and warnings (the
    chunk sizes' first, then ``notes``) around ``result`` (``closed_form``, draws...), with
    the reference period's chunks (:func:`~bayeval.methods.cbpe.reference.period_chunks`) as
    its group ``reference`` where they were estimated.

    Examples
    --------
    >>> law = CountLaw.poisson_binomial(np.array([0.9, 0.8, 0.3]), np.array([1, 1, 0]))
    >>> closed = estimates([law, law], None, [(1.7, 0.3)] * 2, ["c"], np.array([3]),
    ...                    ["accuracy"], 0.95, "eti", 0.0, 1.0, (np.full(1, np.nan),) * 2)
    >>> ev = evaluation(chunk_labels=["c"], sizes=np.array([3]), noise="none",
    ...                 calibration="none", split=True, variant="exact", ci_prob=0.95,
    ...                 ci_kind="eti", random_seed=None, data=xr.Dataset(), notes=[],
    ...                 closed_form=closed)
    >>> ev.meta["description"]
    'CBPE, noise=none, calibration=none: 1 chunk(s) of 3 rows and the whole period'
    >>> ev.summary().loc[("all", "accuracy"), "mean"].round(4)
    np.float64(0.8)
    """
    split_text = " split at the threshold" if split and calibration != "none" else ""
    if map_draws:
        split_text += f" (integrated over {map_draws} draws of its posterior)"
    where = ", partitioned" if partitioned else ""
    description = (f"CBPE, noise={noise}, calibration={calibration}{split_text}{where}: "
                   f"{len(chunk_labels)} chunk(s) of {sizes.sum()} rows and the whole period")
    ev = CBPEEvaluation.create(method="cbpe", variant=variant, ci_prob=ci_prob,
                               ci_kind=ci_kind, random_seed=random_seed, data=data,
                               assumptions=ASSUMPTIONS, description=description,
                               warnings=size_notes(sizes) + notes, noise=noise,
                               calibration=calibration, calibration_uncertainty=bool(map_draws),
                               **result)
    if reference is not None:
        ev.tree["reference"] = xr.DataTree(reference)
    return ev


# ---------------------------------------------------------------------------------------------
# the entry point


def cbpe(scores, *, y_pred=None, data=None, threshold: float = 0.5, reference=None,
         labels=None,
         late_labels: str = "report", mnar=None, chunks=None, chunk_size=None, n_chunks=None,
         chunk_period=None, reference_chunks=None,
         calibration="auto", class_conditional: bool = True,
         calibration_uncertainty: bool = True, noise: str = "none",
         kappa: float | None = None, kappa_prior=KAPPA_PRIOR, n_bins: int = 10, metrics=None,
         zero_division: float = 0.0, beta: float = 1.0, normalize_confusion_matrix=None,
         business_value_matrix=None, normalize_business_value=None, alert_thresholds=None,
         method: str = "exact", ci_prob: float = 0.95, ci_kind: str = "eti",
         draws: int = 4000, random_seed: int | None = None,
         sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""Estimate a classifier's performance per chunk of an unlabelled period (CBPE).

    Parameters
    ----------
    scores : array-like of float in [0, 1]
        Raw scores of the positive class in the analysis period, one per row. Scores of K
        classes, an (n, K) array or DataFrame of class probabilities, run
        :func:`~bayeval.methods.cbpe.multiclass.cbpe_classes` with the arguments that
        apply to K classes. Or a column name of ``data`` (a list of names, or a dict
        ``{class: column}``, for K classes). The per-row
        arguments (``scores``, ``y_pred``, ``labels``, ``chunks``; the reference's parts and
        ``reference_chunks``) pair by index where they are pandas Series, else by position
        (:func:`bayeval.validation.aligned`).
    y_pred : array-like of 0/1, optional
        The predictions; they must equal ``scores >= threshold`` (default: computed so). Or a
        column name of ``data``.
    data : table, optional
        A pandas DataFrame or pyarrow Table of the analysis period whose columns the per-row
        arguments name (:mod:`bayeval.validation.tables`).
    threshold : float
        The decision threshold of the deployed model.
    reference : (scores, labels) or (scores, labels, y_pred) or table, optional
        A labelled reference period (not the training data): it fits the calibration, gives
        the alert thresholds and, for ``noise="learned"`` or ``"binning"``, :math:`\kappa`.
        Without it the scores are taken as calibrated. A table has its columns under the
        names given to ``scores``, ``labels`` (and ``y_pred``, ``chunks``).
    labels : array-like of 0/1 with NaN, optional
        Analysis labels where they are known, or a column name of ``data`` (which may lack it
        when a table ``reference`` has it: no analysis label is known). The realized metrics
        are reported beside the
        estimates of the fast path (``realized``, over the labelled rows of each chunk, with
        ``alert_realized`` and ``n_labelled``); with ``method="pymc"`` they go with the data
        (``ev.tree["data"]``), beside the alert thresholds.
    late_labels : {"report", "estimate"}
        ``"report"``: the labels are reported beside the estimates. ``"estimate"``: they enter
        them (noise ``"none"``, ``method="exact"``): a chunk with labels gets the law of its
        realized metric over all its rows given them, its unlabelled rows' labels drawn from
        the reference's map recalibrated by its labels,
        :math:`\mathrm{logit}\,q=a+b\,\mathrm{logit}\,p` (with the posterior of
        :math:`(a, b)`); the whole period mixes over joint draws of every map; the variable
        ``late_labels`` says what each chunk got (:mod:`bayeval.methods.cbpe.late_labels`).
    mnar : float or (mean, sd), optional
        With ``late_labels="estimate"``: the shift :math:`\delta` of the log-odds of the
        unlabelled rows of chunks with labels (labels missing not at random given the
        score; a number fixes it, ``(mean, sd)`` is a normal prior), as in :func:`bayeval.pemi`.
    chunks : array-like, optional
        A chunk key per row (dates, periods, batch ids); chunks in order of first appearance;
        with ``chunk_period``, the rows' timestamps. Or a column name of ``data``.
    chunk_size, n_chunks : int, optional
        Contiguous chunks of ``chunk_size`` rows, or ``n_chunks`` near-equal ones. At most one of
        ``chunks``, ``chunk_size``, ``n_chunks``; none gives a single chunk. The whole period
        (chunk ``"all"``) is always estimated too. More than
        :data:`~bayeval.chunks.MAX_CHUNKS` chunks are refused.
    chunk_period : str, optional
        Chunks by time period: ``"D"``, ``"W"``, ``"M"``, ``"Q"``, ``"h"``, any pandas period
        alias, with an optional multiple (``"2W"``); the timestamps in ``chunks`` (and in
        ``reference_chunks``) are grouped by period, in time order
        (:func:`bayeval.chunks.make_chunks`).
    reference_chunks : array-like, optional
        Chunk keys of the reference rows (timestamps with ``chunk_period``); default:
        near-equal contiguous chunks of about the analysis chunk size (``chunk_size``, or the
        median analysis chunk; no short tail chunk), so that thresholds compare like with
        like. Or a column name of a table ``reference``; by default that table's column named
        by ``chunks``, if it has one.
    calibration : {"auto", "none", "isotonic", "platt", "beta", "scaling_binning"} or Calibrator
        ``"auto"``: the calibrator among none, isotonic, Platt and beta calibration with the
        lowest calibration error on held-out reference folds (none unless another is strictly
        better). A :class:`bayeval.calibration.Calibrator` is used as given (fitted on the
        reference if it is not fitted yet; without a reference it must be fitted).
    class_conditional : bool
        Fit the calibration separately below and above the threshold.
    calibration_uncertainty : bool
        Integrate over the posterior of a calibration map fitted on the reference
        (:func:`bayeval.calibration_map.map_posterior`: Jeffreys' posterior for Platt and beta
        calibration, the weighted likelihood bootstrap of the family otherwise): every count's law
        is mixed over the map's draws, so the intervals hold the map's own error, which every row
        shares and which does not average out over a long window. ``False``: the plug-in answer,
        conditional on the fitted map (and said so in the warnings). With ``noise="none"``; no
        effect when the scores are kept uncalibrated.
    noise : {"none", "beta", "learned", "binning"}
        Calibration noise model: V0, V2 with ``kappa``, or V2b with chunk-to-chunk drift
        (``"learned"``) or one uncertain calibration map (``"binning"``); see the module
        docstring.
    kappa : float, optional
        The concentration of V2 (required with ``noise="beta"``).
    kappa_prior : (mu, sigma)
        Normal prior of :math:`\log\kappa` for ``noise="learned"`` and ``"binning"``.
    n_bins : int
        Score bins per predicted class for the noise models (equal-count on the reference).
    metrics : sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``specificity``, ``npv``, ``f1``,
        ``fbeta``, ``balanced_accuracy``, ``mcc`` and (``noise="none"``) ``roc_auc``
        (default: all of them); and, with ``method="exact"``, NannyML's other outputs
        (:mod:`bayeval.methods.cbpe.outputs`): ``confusion_matrix`` (rows ``true_positive``,
        ``true_negative``, ``false_positive``, ``false_negative``), ``business_value`` and
        (``noise="none"``) ``average_precision`` (Monte Carlo over draws of the labels).
    zero_division : {0.0, 1.0, np.nan}
        Value of a metric where its denominator is 0; its probability is ``p_undefined``.
    beta : float
        Weight of recall in ``fbeta``.
    normalize_confusion_matrix : {None, "all", "true", "pred"}
        The cells as counts, or divided by the rows, the actual class or the predicted class.
    business_value_matrix : 2 x 2 array-like, optional
        ``[[tn, fp], [fn, tp]]``, the value of each cell (required by ``business_value``).
    normalize_business_value : {None, "per_prediction"}
        The total value, or each predicted class's cells divided by its predictions.
    alert_thresholds : dict, optional
        ``{metric: (lower, upper)}`` constant thresholds (``None`` for no bound) replacing the
        reference ones.
    method : {"exact", "pymc", "both"}
        The fast path, the generative model, or both with :meth:`Evaluation.check`.
    ci_prob, ci_kind : float, {"eti", "hdi"}
        Interval level and kind. ``eti`` is exact at any size; ``hdi``, the shortest interval,
        needs the whole PMF of the two-count metrics (slow beyond ~10^5 rows per chunk).
    draws : int
        Forward-simulation draws of ``method="pymc"`` for noise ``none`` and ``beta``.
    random_seed : int, optional
        Seeds the held-out folds of the calibration and the PyMC draws.
    sample_kwargs : dict, optional
        Passed to ``pm.sample`` (``noise="learned"`` or ``"binning"``).

    Returns
    -------
    Evaluation
        ``closed_form`` over ``(chunk, metric)``: ``mean``, ``sd``, ``lower``, ``upper``,
        ``interval_mass``, ``p_undefined``, ``plugin`` (NannyML's estimate), ``exact``,
        thresholds, ``alert`` (the estimate outside them), ``p_alert`` (probability that the
        realized metric is), ``realized`` and ``alert_realized`` with labels, the PMFs where
        small; with a model, the draws of ``value`` (``prior`` group, or
        ``posterior_predictive`` for V2b beside the posterior of ``log_kappa``).

    Examples
    --------
    >>> from bayeval import datasets
    >>> ref = datasets.calibrated_scores(2000, random_seed=0)
    >>> new = datasets.calibrated_scores(3000, random_seed=1)
    >>> ev = cbpe(new.scores, reference=(ref.scores, ref.labels), n_chunks=3,
    ...           metrics=["accuracy", "f1"], calibration="none")
    >>> s = ev.summary()
    >>> list(s.index.get_level_values("chunk").unique())
    ['[0:999]', '[1000:1999]', '[2000:2999]', 'all']
    >>> bool(abs(s.loc[("all", "accuracy"), "mean"] - s.loc[("all", "accuracy"), "plugin"])
    ...      < 1e-12)
    True

    The same with DataFrames, the reference's columns under the same names:

    >>> import pandas as pd
    >>> ref_df = pd.DataFrame({"score": ref.scores, "y": ref.labels})
    >>> ev = cbpe("score", data=pd.DataFrame({"score": new.scores}), reference=ref_df,
    ...           labels="y", n_chunks=3, metrics=["accuracy", "f1"], calibration="none")
    >>> bool((ev.summary()["mean"] == s["mean"]).all())
    True
    """
    scores, y_pred, labels, chunks, reference, reference_chunks = named_columns(
        data, scores=scores, y_pred=y_pred, labels=labels, chunks=chunks, reference=reference,
        reference_chunks=reference_chunks)
    binary = binary_input(scores, None)
    late_labels, *delta = as_late_labels(late_labels, mnar, labels, noise, method, binary)
    if not binary:  # scores of K columns: K classes
        from bayeval.methods.cbpe.multiclass import cbpe_classes  # it builds on this module

        if noise != "none":
            raise ValueError(f"noise={noise!r} models the calibration of two classes; with K "
                             "classes use noise='none'.")
        return cbpe_classes(scores, y_pred=y_pred, reference=reference, labels=labels,
                            chunks=chunks, chunk_size=chunk_size, n_chunks=n_chunks,
                            chunk_period=chunk_period, reference_chunks=reference_chunks,
                            calibration=calibration,
                            calibration_uncertainty=calibration_uncertainty, metrics=metrics,
                            zero_division=zero_division, alert_thresholds=alert_thresholds,
                            method=method, ci_prob=ci_prob, ci_kind=ci_kind, draws=draws,
                            random_seed=random_seed)
    method = as_choice(method, "method", METHODS)
    noise = as_choice(noise, "noise", NOISES)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics, outputs = as_outputs(metrics, normalize_confusion_matrix, business_value_matrix,
                                  normalize_business_value, noise, method, late_labels)
    metrics = check_metrics(metrics, noise) if metrics != () else ()
    calibration, threshold, zero_division = check_options(calibration, threshold, zero_division,
                                                          noise, kappa, kappa_prior, n_bins)
    beta = as_beta(beta)
    alert_thresholds = as_alert_thresholds(alert_thresholds,
                                           metrics + (outputs.names if outputs else ()))
    if method != "exact":
        draws = as_positive_int(draws, "draws", least=2)
        sample_kwargs = as_sample_kwargs(sample_kwargs)
    scores, y_pred, labels, chunks = aligned(scores=scores, y_pred=y_pred, labels=labels,
                                             chunks=chunks, keys=("chunks",))
    scores = as_scores(scores, "scores")
    if method != "exact" and noise == "none" and "roc_auc" in metrics:  # V0 draws every label
        check_label_draws(draws, scores.size, "draws",
                          "use fewer draws, leave roc_auc out of metrics, or method='exact'")
    y_pred = as_predictions(y_pred, scores, threshold, thresholded=True)
    if labels is not None:
        labels = as_labels(labels, "labels", allow_missing=True)
    chunking = make_chunks(scores.size, chunks=chunks, chunk_size=chunk_size,
                           n_chunks=n_chunks, chunk_period=chunk_period)
    learned = not (isinstance(calibration, Calibrator) and calibration.fitted)
    if reference is None:
        cal, notes = without_reference(calibration, noise)
        ref, data = None, xr.Dataset()
    else:
        notes = []
        ref, cal, data = reference_period(
            reference, threshold, calibration, class_conditional, random_seed,
            reference_chunks, chunk_size or int(np.median(chunking.sizes)),
            (metrics, zero_division, beta), notes, alert_thresholds, chunk_period)
    posterior = map_uncertainty(cal, ref, learned, bool(calibration_uncertainty), noise,
                                random_seed, notes)
    calibrate, cal_name = (np.asarray, "none") if cal is None else (cal.calibrated, cal.name)
    thresholds = alert_bounds(ref.realized if ref else np.empty((0, len(metrics))), metrics,
                              alert_thresholds)
    realized_ref = ref.realized if ref else None
    if outputs is not None:  # the same from the outputs' realized values on the reference
        out_realized = reference_outputs(data, ref, outputs, zero_division)
        out_thresholds = alert_bounds(out_realized, outputs.names, alert_thresholds,
                                      outputs.limits)
        realized_ref = np.hstack([realized_ref, out_realized]) if ref else None

    p = calibrate(scores) if noise != "none" or method != "exact" else None
    cells, ref_cells, grid, shared = None, None, None, None
    if noise != "none":
        edges = bin_edges(*((ref.scores, ref.y_pred) if ref else (scores, y_pred)), n_bins)
        if noise == "beta":
            kappas = [float(kappa)], np.ones(1)
        else:  # binning: the reference's bins pooled; learned: per reference chunk
            codes = ref.chunking.codes if noise == "learned" else np.zeros_like(ref.y_pred)
            ref_cells = bin_cells(ref.scores, ref.p, ref.y_pred, codes, edges, labels=ref.labels)
            kappas = _kappa_grid(ref_cells, kappa_prior, data)

        def noise_grid(s, p, pred, codes):  # the cells of rows and their rates' Beta grid
            found = bin_cells(s, p, pred, codes, edges)
            bins = reference_bins(found, ref_cells) if noise == "binning" else None
            return found, beta_grid(found, *kappas, bins), bins

        cells, grid, shared = noise_grid(scores, p, y_pred, chunking.codes)

    def fast_path(scores, y_pred, labels, chunking, cells, grid, analysis=True,
                  order=None) -> xr.Dataset:
        """The closed form of the chunks of ``scores`` (rows in ``order`` by score, if known),
        then of the analysis' whole period (the reference's is not shown), with the analysis'
        late labels and its support on the reference."""
        late = analysis and late_labels == "estimate"
        # only ROC-AUC, the map's sums and the outputs read rows in score order or the whole
        # period's rows; the count laws and expected counts add over the chunks
        ordered = "roc_auc" in metrics or posterior is not None or outputs is not None
        rows = windows(scores, chunking, calibrate, threshold, whole=analysis and ordered,
                       ordered=ordered, order=order)
        chunk_rows = rows[:len(chunking.labels)]
        expected = [(float(pos.sum()), float(neg.sum()))
                    for neg, pos in (w.sides() for w in rows)]
        if analysis and not ordered:
            expected.append(tuple(float(sum(side)) for side in zip(*expected, strict=True)))
            rows.append(None)
        laws = count_laws(rows, noise, cells, grid, whole=analysis)
        sums = [None] * len(rows)
        if posterior is not None:
            sums = [posterior.sums(*w) for w in chunk_rows]
            # a chunk's laws per draw (draws x its support) are made as its law is: held all at
            # once they took 530 MB for 150 chunks of 2,000 rows
            by_draw = (draw_pmfs(posterior.predict(w.s), w.y_pred)
                       if w.s.size <= EXACT_MAP_ROWS else None for w in chunk_rows)
            if analysis:
                sums.append(sum(sums[1:], sums[0]))
                if scores.size <= EXACT_MAP_ROWS:  # a short period: the whole's laws too
                    by_draw = list(by_draw)
                    by_draw.append(sum(by_draw[1:], by_draw[0]))
                else:
                    by_draw = itertools.chain(by_draw, [None])
            laws = map_laws(laws, sums[:len(chunk_rows)], posterior,
                            isinstance(cal, SplitAtThreshold), by_draw)
        auc = ([window_auc_law(w, zero_division, posterior, s) for w, s in
                zip(rows, sums, strict=True)]
               if "roc_auc" in metrics else None)
        if late and labels is not None:
            drawn, used = fold_labels(scores, labels, chunking, calibrate(scores), posterior,
                                      delta, bool(calibration_uncertainty), random_seed)
            laws, expected, auc = folded_laws(drawn, used, chunking, y_pred == 1,
                                              isinstance(cal, SplitAtThreshold), laws, expected,
                                              auc, zero_division)
            notes.extend(late_label_notes(used, chunking.labels, delta))
        closed = estimates(laws, auc, expected, chunking.labels,
                           chunking.sizes, metrics, ci_prob, ci_kind, zero_division, beta,
                           thresholds)
        if labels is not None:
            add_realized(closed, *realized(labels, y_pred, scores, chunking, metrics,
                                           zero_division, beta))
            if late:
                closed["late_labels"] = ("chunk", used)
        if ref is not None and analysis:
            add_support(closed, [support_counts(w.s) for w in chunk_rows],
                        ref.scores if ref.order is None else ref.scores[ref.order], notes)
        if outputs is not None:
            closed = with_outputs(closed, outputs, laws, rows, expected, chunking, labels,
                                  y_pred, scores, (ci_prob, ci_kind, zero_division),
                                  out_thresholds, posterior, random_seed)
        return closed

    closed = period = None
    if method != "pymc":
        closed = fast_path(scores, y_pred, labels, chunking, cells, grid)
    elif labels is not None:  # no fast path: the realized metrics and thresholds go with the data
        dims = ("chunk", "metric")
        lower, upper = threshold_grid(thresholds, len(chunking.labels),
                                      len(chunking.labels) + 1)
        observed = xr.Dataset({"lower_threshold": (dims, lower), "upper_threshold": (dims, upper)},
                              coords={"chunk": [*chunking.labels, WHOLE], "metric": list(metrics)})
        add_realized(observed, *realized(labels, y_pred, scores, chunking, metrics, zero_division,
                                         beta))
        data = data.merge(observed)
    if ref is not None:  # its chunks estimated as analysis chunks are, beside their realized
        found = (noise_grid(ref.scores, calibrate(ref.scores), ref.y_pred, ref.chunking.codes)[:2]
                 if noise != "none" else (None, None))
        period = period_chunks(fast_path(ref.scores, ref.y_pred, None, ref.chunking, *found,
                                         analysis=False, order=ref.order), realized_ref)

    def result(**parts):  # a Calibrator is used as given: split only when fitted here
        split = class_conditional and not isinstance(calibration, Calibrator)
        return evaluation(chunk_labels=chunking.labels, sizes=chunking.sizes, noise=noise,
                          calibration=cal_name, split=split, variant=method, ci_prob=ci_prob,
                          ci_kind=ci_kind, random_seed=random_seed, data=data, notes=notes,
                          map_draws=0 if posterior is None else posterior.draws,
                          closed_form=closed, reference=period, **parts)

    if method == "exact":
        return result()
    n_pos = np.bincount(chunking.codes, weights=y_pred, minlength=len(chunking.labels))
    n_pos = np.r_[n_pos, n_pos.sum()]
    value_args = (n_pos, np.r_[chunking.sizes, scores.size] - n_pos, metrics, zero_division,
                  beta)
    if noise in ("learned", "binning"):
        nuts = model(ref_cells["k"], ref_cells["n"], ref_cells["c"], kappa_prior, variant="v2b")
        tree = sample(nuts, random_seed, sample_kwargs, defaults=V2B_SAMPLE_KWARGS[noise])
        bins = dict(bins=cells["bin"], reference=shared) if noise == "binning" else {}
        pred = predictive_v2b(cells["n"], cells["c"], cells["y_pred"], cells["chunk"],
                              chunking.labels, kappa_prior, **bins)
        group = posterior_predictive(tree, pred, random_seed)
        group["value"] = metric_draws(group, *value_args)
        tree["posterior_predictive"] = xr.DataTree(group)
        return result(draws=tree, estimand="posterior_predictive/value", model=nuts)
    if noise == "none":
        generative = model(p if posterior is None else posterior.predict(scores), y_pred,
                           chunking.codes, chunking.labels, variant="v0")
        names = ["tp", "fn", "y"] if "roc_auc" in metrics else ["tp", "fn"]
    else:
        generative = model(cells["n"], cells["c"], cells["y_pred"], float(kappa), cells["chunk"],
                           chunking.labels, variant="v2")
        names = ["tp", "fn"]
    with stage(f"CBPE {'V0' if noise == 'none' else 'V2'}: {draws:,} independent draws of the "
               "window's labels"):
        group = forward(generative, names, draws, random_seed)
        auc = (auc_of_draws(group["y"].values, scores, [*chunking.rows(),
                                                         np.arange(scores.size)], zero_division)
               if "y" in group else None)
    group["value"] = metric_draws(group, *value_args, auc=auc)
    draws_tree = xr.DataTree.from_dict({"prior": group.drop_vars("y", errors="ignore")
                                        .drop_dims("row", errors="ignore")})
    return result(draws=draws_tree, estimand="prior/value", iid_draws=True, model=generative)
