r"""CBPE: performance of a binary classifier estimated without labels, chunk by chunk.

In a monitored period no label is known; the classifier's calibrated score :math:`p_i` is taken
as :math:`P(Y_i=1)`. With :math:`\hat y_i` fixed, a window's confusion matrix is fixed by
:math:`TP=\sum_{\hat y_i=1}Y_i` and :math:`FN=\sum_{\hat y_i=0}Y_i`, so every metric
:math:`g(TP, FN)` has an exact predictive law: the law of the window's **realized** metric given
its scores (Kivimäki et al., ``specs/cbpe.md``). Noise models (§5):

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
the exact moments of :func:`bayeval.confusion.auc_moments` (normal interval). Generative models
(``method="pymc"``): :mod:`bayeval.methods.cbpe.models`; ``"both"`` runs the two and
:meth:`Evaluation.check` compares them.

Workflow (NannyML's): a labelled **reference** period calibrates the scores (held-out folds
decide whether and how), and its realized metrics per chunk give alert thresholds
(mean :math:`\pm3` sd); the **analysis** period is estimated per chunk and as a whole; where its
labels arrive, the realized metrics are reported beside the estimates.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval import calibration as C
from bayeval import metrics as M
from bayeval.chunks import WHOLE, Chunking, make_chunks
from bayeval.confusion import MetricDistribution, auc_numerator_moments, ratio_moments
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.cbpe.fast import CountLaw, NormalLaw
from bayeval.methods.cbpe.models import (
    KAPPA_PRIOR,
    auc_of_draws,
    bin_cells,
    bin_edges,
    forward,
    kappa_posterior,
    metric_draws,
    model_v0,
    model_v2,
    model_v2b,
    posterior_predictive,
    predictive_v2b,
)
from bayeval.sampling import sample
from bayeval.validation import (
    as_binary,
    as_choice,
    as_ci_prob,
    as_labels,
    as_scores,
    check_same_length,
)

__all__ = ["ALERT_SD", "METRICS", "NOISES", "cbpe", "kappa_posterior", "model_v0", "model_v2",
           "model_v2b", "predictive_v2b"]

METRICS = (*M.METRICS, "roc_auc")
METHODS = ("exact", "pymc", "both")
NOISES = ("none", "beta", "learned", "binning")
CALIBRATIONS = ("auto", *C.CALIBRATORS)
ALERT_SD = 3.0
"""Alert thresholds: mean +- ALERT_SD sd of the realized metric over reference chunks."""
PMF_CELLS = 2_000_000
"""The exact PMFs are kept in the result (NaN for the other laws: ROC-AUC, large windows) when,
padded to the widest, they have at most this many values in all."""
#: NUTS settings of V2b: with chunk-to-chunk drift the posterior of log kappa has a steep left
#: flank (small kappa is excluded quickly), which a larger step size crosses with divergences;
#: the pooled bins of noise="binning" sample cleanly with the defaults (and smaller steps halve
#: the ESS)
V2B_SAMPLE_KWARGS = {"learned": {"target_accept": 0.99}, "binning": {}}
ASSUMPTIONS = (
    "The calibrated scores are the probabilities that the labels of the monitored period are 1 "
    "(the calibration learned on the reference still holds there: no concept shift, no drift "
    "into regions the reference never saw), and the labels are independent given the scores. "
    "noise='beta' or 'learned' relaxes calibration: each score bin of a chunk shares a random "
    "calibration error; noise='binning' keeps one calibration map, uncertain, learned from the "
    "reference's bins. Intervals are predictive intervals for each chunk's realized metric, "
    "not confidence intervals for a population rate.")


# ---------------------------------------------------------------------------------------------
# inputs


def _predictions(scores: np.ndarray, y_pred: Any, threshold: float, name: str) -> np.ndarray:
    """y_pred, checked against scores >= threshold (CBPE needs the threshold rule)."""
    rule = (scores >= threshold).astype(np.int8)
    if y_pred is None:
        return rule
    y_pred = as_binary(y_pred, name)
    check_same_length(**{name.replace(" ", "_"): y_pred, "scores": scores})
    bad = y_pred != rule
    if bad.any():
        neg, pos = scores[y_pred == 0], scores[y_pred == 1]
        hint = ""
        if neg.size and pos.size and neg.max() < pos.min():
            hint = (f" They follow a threshold in ({neg.max():.6g}, {pos.min():.6g}]; pass "
                    "that threshold.")
        raise ValueError(f"{name} disagrees with scores >= threshold ({threshold:g}) on "
                         f"{int(bad.sum())} row(s) (first at index {int(np.flatnonzero(bad)[0])})"
                         f"; CBPE needs predictions made by thresholding the scores.{hint}")
    return y_pred


def _reference_rows(reference: Any, threshold: float) -> tuple[np.ndarray, ...]:
    """(scores, labels, y_pred) of the reference, with both classes."""
    if (not isinstance(reference, (tuple, list)) or len(reference) not in (2, 3)
            or any(np.ndim(part) == 0 for part in reference)):
        raise ValueError("reference must be a tuple (scores, labels) or (scores, labels, "
                         f"y_pred) of arrays of labelled data; got {type(reference).__name__} "
                         f"{str(reference)[:40]}.")
    scores = as_scores(reference[0], "reference scores")
    labels = as_binary(reference[1], "reference labels")
    check_same_length(reference_scores=scores, reference_labels=labels)
    if np.unique(labels).size < 2:
        raise ValueError(f"reference labels hold only class {int(labels[0])}; calibration and "
                         "alert thresholds need both classes (0 and 1) in the reference.")
    y_pred = _predictions(scores, reference[2] if len(reference) == 3 else None, threshold,
                          "reference y_pred")
    return scores, labels, y_pred


def _metrics(metrics: Any, noise: str) -> tuple[str, ...]:
    if metrics is None:
        return METRICS if noise == "none" else M.METRICS
    names = tuple(as_choice(m, "metrics", METRICS) for m in np.atleast_1d(metrics))
    if "roc_auc" in names and noise != "none":
        raise ValueError("metrics: roc_auc is estimated with noise='none' only (its moments "
                         "assume independent labels); drop it or use noise='none'.")
    if len(set(names)) < len(names):
        raise ValueError(f"metrics lists a metric twice: {list(names)}.")
    return names


def _calibrate(reference, calibration, class_conditional: bool, threshold: float,
               random_seed) -> tuple[C.Calibrator, np.ndarray, xr.Dataset]:
    """The fitted calibrator, cross-fitted reference probabilities and a report of the errors.

    The cross-fitted (out-of-fold) probabilities estimate the calibration error honestly and
    give V2b's reference bins centres that were not fitted to their own labels.
    """
    scores, labels = reference
    split = threshold if class_conditional else None
    report = xr.Dataset({"ace_raw": C.ace(scores, labels)})
    if isinstance(calibration, C.Calibrator):
        cal = calibration if calibration.fitted else calibration.fit(scores, labels)
        oof = cal.predict(scores)
    elif calibration == "auto":
        cal, errors, oof = C.select_calibrator(scores, labels, threshold=split,
                                               random_seed=random_seed)
        report["heldout_error"] = ("calibrator", errors["heldout_error"].to_numpy())
        report = report.assign_coords(calibrator=list(errors.index))
    else:
        cal = C.make_calibrator(calibration, split).fit(scores, labels)
        oof = C.cross_fitted(calibration, scores, labels, threshold=split,
                             random_seed=random_seed)
    report["ace_calibrated_heldout"] = C.ace(oof, labels)
    return cal, oof, report


# ---------------------------------------------------------------------------------------------
# laws per chunk


class _Window(NamedTuple):
    """A window's rows sorted by score: scores, calibrated probabilities, predictions."""

    s: np.ndarray
    p: np.ndarray
    y_pred: np.ndarray


def _windows(scores: np.ndarray, chunking: Chunking, calibrate, threshold: float) -> list[_Window]:
    """Every chunk's rows, then the whole period's, sorted by score.

    The exact laws and NannyML's estimates depend on a window's rows only through its multiset
    of scores (``p`` and ``y_pred`` are functions of the score), and sorted rows spare the
    ROC-AUC moments their argsort.
    """
    def window(rows):
        s = np.sort(scores if rows is None else scores[rows])
        return _Window(s, calibrate(s), s >= threshold)

    return [window(rows) for rows in [*chunking.rows(), None]]


def _count_laws(windows: list[_Window], noise: str, cells, beta_grid) -> list[CountLaw]:
    """The CountLaw of every chunk, then of the whole period.

    The whole period's is the sum of the chunks' where they are independent; with
    ``noise="binning"`` they share each bin's calibration rate, so the whole period is the bins'
    cells pooled over the chunks (a sum of Binomials with one rate is Binomial).
    """
    if noise == "none":
        laws = [CountLaw.poisson_binomial(w.p, w.y_pred) for w in windows[:-1]]
    else:
        a, b, weights = beta_grid
        laws = []
        for c in range(len(windows) - 1):
            mine = cells["chunk"] == c
            laws.append(CountLaw.beta_binomial(cells["n"][mine], a[:, mine], b[:, mine],
                                               cells["y_pred"][mine], weights))
        if noise == "binning":
            _, first, where = np.unique(cells["bin"], return_index=True, return_inverse=True)
            n = np.bincount(where, weights=cells["n"]).astype(np.int64)
            return [*laws, CountLaw.beta_binomial(n, a[:, first], b[:, first],
                                                  cells["y_pred"][first], weights)]
    whole = laws[0]
    for law in laws[1:]:
        whole = whole + law
    return [*laws, whole]


def _beta_grid(cells, kappa: np.ndarray, weights: np.ndarray,
               shared=None) -> tuple[np.ndarray, ...]:
    r"""Beta parameters (kappa point x cell) of the cells' rates, and the kappa weights.

    Without ``shared`` (``"beta"``, ``"learned"``):
    :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))` afresh in every chunk. With
    ``shared`` (``"binning"``, :func:`_reference_bins`): the rate of a bin is shared with the
    reference, so given :math:`\kappa` it has the reference's posterior
    :math:`\mathrm{Beta}(\kappa c_b+k_b,\kappa(1-c_b)+n_b-k_b)`.
    """
    kappa = np.asarray(kappa, float)[:, None]
    if shared is None:
        return kappa * cells["c"], kappa * (1 - cells["c"]), weights
    k, n, c = shared
    return kappa * c + k, kappa * (1 - c) + n - k, weights


def _reference_bins(cells, ref_bins) -> tuple[np.ndarray, ...]:
    """Reference positives, rows and centre of each analysis cell's bin (0, 0 and the pooled
    analysis centre for a bin without reference rows)."""
    k, n = np.zeros(cells["n"].size), np.zeros(cells["n"].size)
    c = np.empty(cells["n"].size)
    where = np.searchsorted(ref_bins["bin"], cells["bin"])
    seen = (where < ref_bins["bin"].size) & (
        ref_bins["bin"][np.minimum(where, ref_bins["bin"].size - 1)] == cells["bin"])
    k[seen], n[seen] = ref_bins["k"][where[seen]], ref_bins["n"][where[seen]]
    c[seen] = ref_bins["c"][where[seen]]
    for b in np.unique(cells["bin"][~seen]):
        mine = cells["bin"] == b
        c[mine] = cells["c"][mine] @ cells["n"][mine] / cells["n"][mine].sum()
    return k, n, c


def _single_class_probability(p: np.ndarray, total: float) -> float:
    r""":math:`P(\text{no positive})+P(\text{no negative})=\prod_i(1-p_i)+\prod_ip_i`.

    A product is skipped where its bound, :math:`e^{-\sum p_i}` or :math:`e^{-\sum(1-p_i)}`,
    rounds to 0 (``total`` is :math:`\sum p_i`).
    """
    out = 0.0
    with np.errstate(divide="ignore"):
        if total < 746.0:  # exp(-746) rounds to 0
            out += float(np.exp(np.log1p(-p).sum()))
        if p.size - total < 746.0:
            out += float(np.exp(np.log(p).sum()))
    return min(out, 1.0)


def _auc_law(w: _Window, zero_division: float) -> tuple[NormalLaw, float]:
    r"""ROC-AUC's normal law from its exact moments, and NannyML's estimate.

    NannyML's estimate is the area under the ROC curve of the expected counts: with
    :math:`\xi_{ij}=\mathbb 1[s_i>s_j]+\frac12\mathbb 1[s_i=s_j]`, :math:`q=1-p`,
    :math:`P=\sum p`, :math:`Q=\sum q`, it is :math:`\sum_{i,j}p_iq_j\xi_{ij}/(PQ)
    =(\mathbb E A+\frac12\sum_ip_iq_i)/(PQ)`, the pairs :math:`i=j` included, where
    :math:`\mathbb E A` and :math:`\mathbb E D=PQ-\sum_ip_iq_i` are the exact moments.
    """
    total = float(w.p.sum())
    m = auc_numerator_moments(w.s, w.p)
    if m.mean_den == 0:  # both classes impossible: undefined with probability 1
        return NormalLaw(zero_division, 0.0, 1.0), zero_division
    mean, var = ratio_moments(m)
    pq = total * (w.p.size - total)
    law = NormalLaw(mean, float(np.sqrt(var)), _single_class_probability(w.p, total))
    return law, (m.mean_num + 0.5 * (pq - m.mean_den)) / pq


def _limits(metric: str) -> tuple[float, float]:
    return (-1.0, 1.0) if metric == "mcc" else (0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# realized metrics and thresholds


def _realized(labels, y_pred, scores, chunking: Chunking, metrics, zero_division, beta,
              whole: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (chunk[, whole] x metric) on the labelled rows; NaN with no label."""
    known = ~np.isnan(labels)
    codes = chunking.codes
    size = len(chunking.labels)
    y = np.where(known, labels, 0.0)

    def per_chunk(w):
        sums = np.bincount(codes, weights=w, minlength=size)
        return np.r_[sums, sums.sum()] if whole else sums

    tp, pos = per_chunk(y * y_pred), per_chunk(y)
    pred, n = per_chunk(known * y_pred), per_chunk(known.astype(float))
    fp, fn = pred - tp, pos - tp
    tn = n - tp - fp - fn
    out = np.full((n.size, len(metrics)), np.nan)
    groups = [*chunking.rows(), np.arange(codes.size)] if whole else chunking.rows()
    for j, metric in enumerate(metrics):
        if metric == "roc_auc":
            out[:, j] = [_realized_auc(labels[r][known[r]], scores[r][known[r]], zero_division)
                         for r in groups]
        else:
            out[:, j] = M.from_counts(metric, tp, fp, fn, tn, beta=beta,
                                      zero_division=zero_division)
    out[n == 0] = np.nan
    return out, n


def _realized_auc(labels, scores, zero_division) -> float:
    if labels.size == 0:
        return np.nan
    if np.unique(labels).size < 2:
        return zero_division
    return float(M.roc_auc(labels.astype(np.int8), scores))


def _thresholds(realized_ref: np.ndarray, metrics, alert_thresholds) -> tuple[np.ndarray, ...]:
    """Lower and upper thresholds per metric: reference mean +- 3 sd, or the user's constants."""
    lower, upper = np.full(len(metrics), np.nan), np.full(len(metrics), np.nan)
    for j, metric in enumerate(metrics):
        values = realized_ref[:, j][np.isfinite(realized_ref[:, j])]
        if values.size >= 2:
            lo, hi = _limits(metric)
            centre, spread = values.mean(), values.std()
            lower[j] = max(centre - ALERT_SD * spread, lo)
            upper[j] = min(centre + ALERT_SD * spread, hi)
    for metric, bounds in (alert_thresholds or {}).items():
        j = metrics.index(as_choice(metric, "alert_thresholds", metrics))
        if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
            raise ValueError(f"alert_thresholds[{metric!r}] must be (lower, upper), each a "
                             f"number or None; got {bounds!r}.")
        lower[j] = -np.inf if bounds[0] is None else float(bounds[0])
        upper[j] = np.inf if bounds[1] is None else float(bounds[1])
    return lower, upper


# ---------------------------------------------------------------------------------------------
# the closed form


def _threshold_grid(thresholds, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper thresholds per (chunk, metric); NaN for the whole period, which the
    reference chunks do not compare to."""
    lower, upper = (np.tile(t, (size, 1)) for t in thresholds)
    lower[-1] = upper[-1] = np.nan
    return lower, upper


def closed_form(laws, auc, expected, chunk_labels, metrics, ci_prob, ci_kind, zero_division,
                 beta, thresholds) -> xr.Dataset:
    """mean, sd, interval, its mass, p_undefined, plugin, exact, thresholds, p_alert, PMFs."""
    size, k = len(laws), len(metrics)
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin",
             "p_alert")
    out = {v: np.full((size, k), np.nan) for v in names}
    lower_thr, upper_thr = _threshold_grid(thresholds, size)

    def cell(i, j):
        metric, count_law, (tp, fn) = metrics[j], laws[i], expected[i]
        if metric == "roc_auc":
            law, plugin = auc[i]
        else:
            law = count_law.law(metric, zero_division, beta)
            plugin = M.from_counts(metric, tp, count_law.n_pos - tp, fn, count_law.n_neg - fn,
                                   beta=beta, zero_division=zero_division)
        lo, hi = law.interval(ci_prob, ci_kind)
        mass = law.mass(lo, hi) if metric != "roc_auc" else ci_prob
        alert = (1.0 - law.mass(lower_thr[i, j], upper_thr[i, j])
                 if np.isfinite(lower_thr[i, j]) or np.isfinite(upper_thr[i, j]) else np.nan)
        return law, (law.mean, law.sd, lo, hi, mass, law.p_undefined, plugin, alert)

    pmfs = {}
    for i, j in product(range(size), range(k)):
        law, values = cell(i, j)
        for name, value in zip(names, values, strict=True):
            out[name][i, j] = value
        if isinstance(law, MetricDistribution) and not law.lazy:
            pmfs[i, j] = law
    dims = ("chunk", "metric")
    ds = xr.Dataset({v: (dims, out[v]) for v in names[:-1]},
                    coords={"chunk": [*chunk_labels, WHOLE], "metric": list(metrics)})
    ds["exact"] = (dims, np.tile([m != "roc_auc" for m in metrics], (size, 1)))
    ds["lower_threshold"], ds["upper_threshold"] = (dims, lower_thr), (dims, upper_thr)
    ds["alert"] = (dims, (out["mean"] < lower_thr) | (out["mean"] > upper_thr))
    ds["p_alert"] = (dims, out["p_alert"])
    widest = max((d.values.size for d in pmfs.values()), default=0)
    if pmfs and size * k * widest <= PMF_CELLS:
        values, probs = np.full((size, k, widest), np.nan), np.full((size, k, widest), np.nan)
        for (i, j), d in pmfs.items():
            values[i, j, : d.values.size], probs[i, j, : d.values.size] = d.values, d.probs
        ds["pmf_value"] = ((*dims, "support"), values)
        ds["pmf_prob"] = ((*dims, "support"), probs)
    return ds


# ---------------------------------------------------------------------------------------------
# steps of the entry point


def _options(calibration, threshold, zero_division, noise, kappa, kappa_prior, n_bins):
    """Checked calibration, threshold and zero_division (and kappa, its prior, n_bins)."""
    if not isinstance(calibration, C.Calibrator):
        calibration = as_choice(calibration, "calibration", CALIBRATIONS)
    if not (isinstance(threshold, (int, float, np.number)) and 0.0 < threshold <= 1.0):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}.")
    if not (isinstance(zero_division, (int, float, np.number))
            and (zero_division in (0, 1) or np.isnan(zero_division))):
        raise ValueError(f"zero_division must be 0.0, 1.0 or np.nan, got {zero_division!r}.")
    if noise == "beta" and not (isinstance(kappa, (int, float, np.number)) and kappa > 0):
        raise ValueError(f"noise='beta' needs kappa, a positive number; got {kappa!r}.")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    if noise in ("learned", "binning") and not (
            len(kappa_prior) == 2 and np.isfinite(kappa_prior[0]) and kappa_prior[1] > 0):
        raise ValueError("kappa_prior must be (mu, sigma) of the normal prior of log kappa, "
                         f"sigma > 0; got {kappa_prior!r}.")
    return calibration, float(threshold), float(zero_division)


def size_notes(sizes: np.ndarray) -> list[str]:
    if sizes.min() < sizes.max() / 2:
        return [f"chunk sizes vary from {sizes.min()} to {sizes.max()} rows: interval widths "
                "and alerts are not comparable across chunks."]
    return []


@dataclass(frozen=True, eq=False)
class _Reference:
    """The labelled reference: rows, cross-fitted probabilities, chunks and realized metrics."""

    scores: np.ndarray
    labels: np.ndarray
    y_pred: np.ndarray
    p: np.ndarray
    chunking: Chunking
    realized: np.ndarray


def _reference_period(reference, threshold, calibration, class_conditional, random_seed,
                      reference_chunks, size, metric_args, notes, alert_thresholds):
    """Validate the reference, calibrate on it and compute its chunks' realized metrics."""
    scores, labels, y_pred = _reference_rows(reference, threshold)
    if calibration == "none":
        cal, p = C.Identity().fit(scores, labels), scores
        data = xr.Dataset({"ace_raw": C.ace(scores, labels)})
    else:
        cal, p, data = _calibrate((scores, labels), calibration, class_conditional, threshold,
                                  random_seed)
    chunking = make_chunks(scores.size, chunks=reference_chunks,
                           chunk_size=None if reference_chunks is not None else
                           min(size, scores.size))
    realized, _ = _realized(labels.astype(float), y_pred, scores, chunking, *metric_args,
                            whole=False)
    data["reference_chunks"] = len(chunking.labels)
    if len(chunking.labels) < 2 and not alert_thresholds:
        notes.append(f"alert thresholds need at least 2 reference chunks of {size} rows; the "
                     f"reference has {scores.size} rows. Give reference_chunks= or "
                     "alert_thresholds=.")
    return _Reference(scores, labels, y_pred, p, chunking, realized), cal, data


def _kappa_grid(ref_cells, kappa_prior, data: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The grid posterior of kappa (kept in ``data``), its negligible points dropped."""
    log_kappa, weights = kappa_posterior(ref_cells["k"], ref_cells["n"], ref_cells["c"],
                                         kappa_prior)
    data["log_kappa_grid"] = ("kappa_point", log_kappa)
    data["kappa_weight"] = ("kappa_point", weights)
    keep = weights > 1e-15 * weights.max()
    return np.exp(log_kappa[keep]), weights[keep] / weights[keep].sum()


def _estimates(windows: list[_Window], chunking, laws, metrics, ci_prob, ci_kind, zero_division,
               beta, thresholds) -> xr.Dataset:
    """The closed form of every chunk and of the whole period, with the chunks' sizes."""
    expected = [(float(np.compress(w.y_pred, w.p).sum()), float(np.compress(~w.y_pred, w.p).sum()))
                for w in windows]
    auc = [_auc_law(w, zero_division) for w in windows] if "roc_auc" in metrics else None
    closed = closed_form(laws, auc, expected, chunking.labels, metrics, ci_prob, ci_kind,
                          zero_division, beta, thresholds)
    closed["n"] = ("chunk", [w.s.size for w in windows])
    closed["n_predicted_positive"] = ("chunk", [law.n_pos for law in laws])
    return closed


def _add_realized(closed, labels, y_pred, scores, chunking, metrics, zero_division,
                  beta) -> None:
    """Realized metrics, their alerts and the labelled rows per chunk, into ``closed``."""
    realized, n_labelled = _realized(labels, y_pred, scores, chunking, metrics, zero_division,
                                     beta)
    dims = ("chunk", "metric")
    closed["realized"] = (dims, realized)
    closed["alert_realized"] = (dims, (realized < closed["lower_threshold"].values)
                                | (realized > closed["upper_threshold"].values))
    closed["n_labelled"] = ("chunk", n_labelled.astype(np.int64))


# ---------------------------------------------------------------------------------------------
# the entry point


def cbpe(scores, *, y_pred=None, threshold: float = 0.5, reference=None, labels=None,
         chunks=None, chunk_size=None, n_chunks=None, reference_chunks=None,
         calibration="auto", class_conditional: bool = True, noise: str = "none",
         kappa: float | None = None, kappa_prior=KAPPA_PRIOR, n_bins: int = 10, metrics=None,
         zero_division: float = 0.0, beta: float = 1.0, alert_thresholds=None,
         method: str = "exact", ci_prob: float = 0.95, ci_kind: str = "eti",
         draws: int = 4000, random_seed: int | None = None,
         sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""Estimate a classifier's performance per chunk of an unlabelled period (CBPE).

    Parameters
    ----------
    scores : array-like of float in [0, 1]
        Raw scores of the positive class in the analysis period, one per row.
    y_pred : array-like of 0/1, optional
        The predictions; they must equal ``scores >= threshold`` (default: computed so).
    threshold : float
        The decision threshold of the deployed model.
    reference : (scores, labels) or (scores, labels, y_pred), optional
        A labelled reference period (not the training data): it fits the calibration, gives
        the alert thresholds and, for ``noise="learned"`` or ``"binning"``, :math:`\kappa`.
        Without it the scores are taken as calibrated.
    labels : array-like of 0/1 with NaN, optional
        Analysis labels where they are known: the realized metrics are reported beside the
        estimates of the fast path (``realized``, over the labelled rows of each chunk, with
        ``alert_realized`` and ``n_labelled``); with ``method="pymc"`` they go with the data
        (``ev.tree["data"]``), beside the alert thresholds.
    chunks : array-like, optional
        A chunk key per row (dates, periods, batch ids); chunks in order of first appearance.
    chunk_size, n_chunks : int, optional
        Contiguous chunks of ``chunk_size`` rows, or ``n_chunks`` near-equal ones. At most one of
        ``chunks``, ``chunk_size``, ``n_chunks``; none gives a single chunk. The whole period
        (chunk ``"all"``) is always estimated too.
    reference_chunks : array-like, optional
        Chunk keys of the reference rows; default: contiguous chunks of the analysis chunk size
        (``chunk_size``, or the median analysis chunk), so that thresholds compare like with
        like.
    calibration : {"auto", "none", "isotonic", "platt", "beta", "scaling_binning"} or Calibrator
        ``"auto"``: the calibrator among none, isotonic, Platt and beta calibration with the
        lowest calibration error on held-out reference folds (none unless another is strictly
        better). A :class:`bayeval.calibration.Calibrator` is used as given (fitted on the
        reference if it is not fitted yet).
    class_conditional : bool
        Fit the calibration separately below and above the threshold.
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
        (default: all of them).
    zero_division : {0.0, 1.0, np.nan}
        Value of a metric where its denominator is 0; its probability is ``p_undefined``.
    beta : float
        Weight of recall in ``fbeta``.
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
    """
    method = as_choice(method, "method", METHODS)
    noise = as_choice(noise, "noise", NOISES)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = _metrics(metrics, noise)
    calibration, threshold, zero_division = _options(calibration, threshold, zero_division,
                                                     noise, kappa, kappa_prior, n_bins)
    scores = as_scores(scores, "scores")
    y_pred = _predictions(scores, y_pred, threshold, "y_pred")
    if labels is not None:
        labels = as_labels(labels, "labels", allow_missing=True)
        check_same_length(scores=scores, labels=labels)
    chunking = make_chunks(scores.size, chunks=chunks, chunk_size=chunk_size,
                           n_chunks=n_chunks)
    notes = size_notes(chunking.sizes)
    if reference is None:
        if calibration not in ("auto", "none"):
            raise ValueError(f"calibration={calibration!r} needs reference=(scores, labels).")
        if noise in ("learned", "binning"):
            raise ValueError(f"noise={noise!r} learns kappa from labelled data: give "
                             "reference=(scores, labels).")
        notes.append("no reference: the scores are taken as calibrated probabilities.")
        ref, calibrate, data, cal_name = None, np.asarray, xr.Dataset(), "none"
    else:
        ref, cal, data = _reference_period(
            reference, threshold, calibration, class_conditional, random_seed,
            reference_chunks, chunk_size or int(np.median(chunking.sizes)),
            (metrics, zero_division, beta), notes, alert_thresholds)
        calibrate, cal_name = cal.predict, cal.name
    thresholds = _thresholds(ref.realized if ref else np.empty((0, len(metrics))), metrics,
                             alert_thresholds)

    p = calibrate(scores) if noise != "none" or method != "exact" else None
    cells, ref_cells, beta_grid, shared = None, None, None, None
    if noise != "none":
        edges = bin_edges(*((ref.scores, ref.y_pred) if ref else (scores, y_pred)), n_bins)
        cells = bin_cells(scores, p, y_pred, chunking.codes, edges)
        if noise == "beta":
            beta_grid = _beta_grid(cells, [float(kappa)], np.ones(1))
        else:  # binning: the reference's bins pooled; learned: per reference chunk
            codes = ref.chunking.codes if noise == "learned" else np.zeros_like(ref.y_pred)
            ref_cells = bin_cells(ref.scores, ref.p, ref.y_pred, codes, edges, labels=ref.labels)
            shared = _reference_bins(cells, ref_cells) if noise == "binning" else None
            beta_grid = _beta_grid(cells, *_kappa_grid(ref_cells, kappa_prior, data), shared)
    closed = None
    if method != "pymc":
        windows = _windows(scores, chunking, calibrate, threshold)
        laws = _count_laws(windows, noise, cells, beta_grid)
        closed = _estimates(windows, chunking, laws, metrics, ci_prob, ci_kind, zero_division,
                            beta, thresholds)
        if labels is not None:
            _add_realized(closed, labels, y_pred, scores, chunking, metrics, zero_division,
                          beta)
    elif labels is not None:  # no fast path: the realized metrics and thresholds go with the data
        dims = ("chunk", "metric")
        lower, upper = _threshold_grid(thresholds, len(chunking.labels) + 1)
        observed = xr.Dataset({"lower_threshold": (dims, lower), "upper_threshold": (dims, upper)},
                              coords={"chunk": [*chunking.labels, WHOLE], "metric": list(metrics)})
        _add_realized(observed, labels, y_pred, scores, chunking, metrics, zero_division, beta)
        data = data.merge(observed)

    split = " split at the threshold" if class_conditional and cal_name != "none" else ""
    description = (f"CBPE, noise={noise}, calibration={cal_name}{split}: "
                   f"{len(chunking.labels)} chunk(s) of {scores.size} rows and the whole period")
    common = dict(method="cbpe", variant=method, ci_prob=ci_prob, ci_kind=ci_kind,
                  random_seed=random_seed, data=data, assumptions=ASSUMPTIONS,
                  description=description, warnings=notes, noise=noise, calibration=cal_name)
    if method == "exact":
        return Evaluation.create(closed_form=closed, **common)
    n_pos = np.bincount(chunking.codes, weights=y_pred, minlength=len(chunking.labels))
    n_pos = np.r_[n_pos, n_pos.sum()]
    value_args = (n_pos, np.r_[chunking.sizes, scores.size] - n_pos, metrics, zero_division,
                  beta)
    if noise in ("learned", "binning"):
        nuts = model_v2b(ref_cells["k"], ref_cells["n"], ref_cells["c"], kappa_prior)
        tree = sample(nuts, random_seed, {**V2B_SAMPLE_KWARGS[noise], **(sample_kwargs or {})})
        bins = dict(bins=cells["bin"], reference=shared) if noise == "binning" else {}
        pred = predictive_v2b(cells["n"], cells["c"], cells["y_pred"], cells["chunk"],
                              chunking.labels, kappa_prior, **bins)
        group = posterior_predictive(tree, pred, random_seed)
        group["value"] = metric_draws(group, *value_args)
        tree["posterior_predictive"] = xr.DataTree(group)
        return Evaluation.create(closed_form=closed, draws=tree,
                                 estimand="posterior_predictive/value", model=nuts, **common)
    if noise == "none":
        model = model_v0(p, y_pred, chunking.codes, chunking.labels)
        names = ["tp", "fn", "y"] if "roc_auc" in metrics else ["tp", "fn"]
    else:
        model = model_v2(cells["n"], cells["c"], cells["y_pred"], float(kappa), cells["chunk"],
                         chunking.labels)
        names = ["tp", "fn"]
    group = forward(model, names, draws, random_seed)
    auc = (auc_of_draws(group["y"].values, scores, [*chunking.rows(), np.arange(scores.size)],
                        zero_division) if "y" in group else None)
    group["value"] = metric_draws(group, *value_args, auc=auc)
    draws_tree = xr.DataTree.from_dict({"prior": group.drop_vars("y", errors="ignore")
                                        .drop_dims("row", errors="ignore")})
    return Evaluation.create(closed_form=closed, draws=draws_tree, estimand="prior/value",
                             iid_draws=True, model=model, **common)
