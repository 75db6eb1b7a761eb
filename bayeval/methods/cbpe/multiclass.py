r"""CBPE of K classes: the metrics of a chunk estimated from its class probabilities.

:func:`cbpe_classes` is what :func:`bayeval.cbpe` runs when the scores have several columns. Row
:math:`i` has raw scores :math:`s_{ik}` and a fixed prediction
:math:`\hat y_i` (the class of the largest raw score unless given); its label is taken as
:math:`Y_i\sim\mathrm{Cat}(p_{i1},\dots,p_{iK})` with :math:`p_i` the calibrated probabilities,
independently across rows. Then (:mod:`bayeval.multiclass_laws`):

* the number right :math:`\sum_i Y_{i\hat y_i}` is Poisson-binomial over :math:`p_{i\hat y_i}`:
  accuracy has an exact law;
* class :math:`k` against the rest has :math:`TP_k=\sum_{\hat y_i=k}Y_{ik}` and
  :math:`FN_k=\sum_{\hat y_i\ne k}Y_{ik}`, independent Poisson-binomials: each per-class
  precision, recall, F1 and specificity has the exact law of the binary metric with scores
  :math:`p_{\cdot k}` and predictions :math:`\mathbb 1\{\hat y=k\}` (as binary CBPE);
* a macro average :math:`\frac1K\sum_k m_k` gets a normal law with the mean of the per-class
  laws' means and the variance :math:`\frac1{K^2}\bigl(\sum_k\operatorname{Var}m_k
  +\sum_{k\ne l}\operatorname{Cov}(m_k,m_l)\bigr)`,
  the covariances by the delta method (:func:`bayeval.multiclass_laws.class_covariances`).

NannyML's estimates (Kivimäki et al. 2025; NannyML's multiclass CBPE) are the ``plugin``: the
mean of :math:`p_{i\hat y_i}` for accuracy, :math:`g_k(\mathbb E\,TP_k,\mathbb E\,FN_k)` per
class and their mean for a macro average.

**Calibration** (one-vs-rest, renormalised, as NannyML's): a map :math:`f_k` is fitted per class
on the reference's :math:`(s_{\cdot k},\mathbb 1\{y=k\})` and
:math:`p_{ik}=f_k(s_{ik})/\sum_j f_j(s_{ij})` (:math:`1/K` where the sum is 0). Each map's
posterior (:func:`bayeval.calibration_map.map_posterior`) is drawn independently and the draws
renormalised: draw :math:`m` gives :math:`p^{(m)}_{ik}`, and every law is mixed over the draws.
Windows of at most :data:`~bayeval.calibration_map.EXACT_MAP_ROWS` rows take each draw's
Poisson-binomials exactly; longer ones move the plug-in laws by each draw's shift of the expected
counts (:meth:`~bayeval.methods.cbpe.fast.CountLaw.with_map`), to first order in the maps'
deviations :math:`D^{(m)}_j`:

.. math:: \delta p_{ik}=\frac{D^{(m)}_k(s_{ik})-p_{ik}\sum_j D^{(m)}_j(s_{ij})}{\sum_j f_j(s_{ij})}.

A macro average adds the covariance over the draws of the classes' shifts
:math:`g_k(\mathbb E^{(m)}TP_k,\mathbb E^{(m)}FN_k)-g_k(\mathbb E\,TP_k,\mathbb E\,FN_k)`.
``calibration_uncertainty=False`` gives the plug-in answer, conditional on the fitted maps.

**Multinomial calibration** (``calibration="multinomial"``): one jointly normalised map instead,
multinomial Platt scaling on the log scores (:mod:`bayeval.multiclass_calibration`),

.. math:: p_{ik}=\frac{\exp(a_k+b\log s_{ik})}{\sum_j\exp(a_j+b\log s_{ij})},\qquad a_0=0,

the restriction :math:`W=bI` of Dirichlet calibration (Kull et al. 2019), fitted on the whole
reference by its posterior mode. Its posterior's importance draws
(:func:`bayeval.multiclass_calibration.posterior`) are resampled systematically to :math:`M`
equally weighted draws :math:`(a^{(m)},b^{(m)})`, and every law is mixed over them as over the
one-vs-rest maps' draws; beyond :data:`~bayeval.calibration_map.EXACT_MAP_ROWS` rows each draw's
shift of the expected counts moves the plug-in laws: summed exactly up to
:data:`~bayeval.multiclass_calibration.SHIFT_ROWS` rows, beyond as its first-order part plus
the remainder over a sample of rows
(:meth:`~bayeval.multiclass_calibration.MultinomialMap.count_shifts`). A row's probability of class
:math:`k` depends on all its scores, so where the true probabilities do, as when a model's
logits are scaled, the map can hold them where renormalised one-vs-rest maps cannot.

**Choosing** (``calibration="auto"``, :func:`select_class_map`): the identity, the multinomial
map and the one-vs-rest family (each class's map chosen as above) are compared by their
multiclass Brier score on held-out reference folds; the identity is kept only if it scores
lowest, otherwise the simpler map (the multinomial map's :math:`K` parameters before at least
:math:`2K`) unless the one-vs-rest maps' score is lower by more than one standard error.

**ROC-AUC** (:mod:`bayeval.methods.cbpe.multiclass_auc`): class :math:`k`'s one-vs-rest
ROC-AUC ranks the rows by the raw scores :math:`s_{\cdot k}` with labels
:math:`\mathbb 1\{Y_i=k\}\sim\mathrm{Bernoulli}(p_{ik})`, binary CBPE's law
(:mod:`bayeval.methods.cbpe.auc`); the macro average
:math:`\frac1K\sum_k\mathrm{AUC}_k` (scikit-learn's ``multi_class="ovr", average="macro"``)
is normal with the delta-method covariances of the classes' AUCs, which share every row's label
(:func:`bayeval.multiclass_laws.ovr_auc_moments`).

**The model** (``method="pymc"``, :mod:`bayeval.methods.cbpe.multiclass_models`) draws the
latent labels forward, with the maps' posterior draws as a mixture index; ``"both"`` runs it
beside the fast path for :meth:`~bayeval.evaluation.Evaluation.check`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.calibration import (
    CALIBRATORS,
    Calibrator,
    Identity,
    make_calibrator,
    select_calibrator,
)
from bayeval.calibration_map import EXACT_MAP_ROWS, MapPosterior, draw_pmfs, map_posterior
from bayeval.chunks import WHOLE, make_chunks
from bayeval.class_results import ClassEvaluation
from bayeval.classes import as_class_scores, class_coordinate, column_classes, encode
from bayeval.evaluation import CI_KINDS
from bayeval.methods.cbpe.api import alert_bounds, size_notes
from bayeval.methods.cbpe.fast import CountLaw, NormalLaw
from bayeval.methods.cbpe.multiclass_auc import (
    AUC_METRICS,
    ClassAucs,
    window_aucs,
)
from bayeval.methods.cbpe.multiclass_models import check_map_draws, model_draws
from bayeval.metrics import metric_value
from bayeval.multiclass import matrix_value, ovr_auc_value
from bayeval.multiclass_calibration import MultinomialMap, multinomial_map, select_map
from bayeval.multiclass_laws import MACRO_LAW_METRICS, class_covariances
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_alert_thresholds,
    as_calibration,
    as_choice,
    as_ci_prob,
    as_metrics,
    as_positive_int,
    as_seed,
    as_zero_division,
    describe,
)

__all__ = [
    "BY_CLASS",
    "CLASS_CBPE_METRICS",
    "PER_CLASS",
    "CBPEClasses",
    "cbpe_classes",
    "class_maps",
    "renormalised",
    "select_class_map",
]

PER_CLASS = ("precision", "recall", "f1", "specificity")
"""Per-class (one-vs-rest) metrics of the counts, each with an exact law."""
BY_CLASS = (*PER_CLASS, "roc_auc")
"""The metrics with a value per class."""
CLASS_CBPE_METRICS = ("accuracy", *PER_CLASS, "roc_auc", *MACRO_LAW_METRICS, "macro_roc_auc")
"""The metrics :func:`cbpe_classes` estimates."""
DEFAULT_METRICS = ("accuracy", *PER_CLASS, *MACRO_LAW_METRICS)
"""Its default metrics: the ROC-AUCs are asked for by name (with the maps' posterior, a long
window costs one pass of every draw of the maps over its rows per class,
:func:`~bayeval.methods.cbpe.multiclass_auc.mean_shifts`)."""
CALIBRATIONS = ("auto", *CALIBRATORS, "multinomial")
AUTO_CANDIDATES = ("none", "multinomial", "one-vs-rest")
"""The maps ``calibration="auto"`` compares, from the simplest (:func:`select_class_map`)."""
METHODS = ("exact", "pymc", "both")
ASSUMPTIONS = (
    "The calibrated class probabilities (the map learned on the reference: one-vs-rest maps "
    "renormalised, or the multinomial map) are the probabilities of the labels of the "
    "monitored period (no concept shift), and the labels are independent given the scores. "
    "The maps' own estimation error is integrated unless calibration_uncertainty=False (each "
    "class's map drawn from its own posterior, or the multinomial map's). Intervals are "
    "predictive intervals for each chunk's realized metric; the macro averages' are normal "
    "with delta-method covariances of the classes, and so is ROC-AUC's beyond a few dozen "
    "rows.")
#: ``calibration="auto"`` compares the maps on 10 held-out folds of the reference, fewer (at
#: least 2) beyond 20,000 rows, so that its refits see about this many rows in all
AUTO_ROWS = 200_000


class CBPEClasses(ClassEvaluation, method="cbpe_multiclass"):
    """The result of :func:`bayeval.cbpe` with K classes: dims (``chunk``, ``metric``,
    ``class``), a metric of the whole matrix (accuracy, the macro averages) at the first class.

    Examples
    --------
    >>> import bayeval as be
    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]] * 20)
    >>> ev = be.cbpe(p, metrics=["accuracy", "recall"], n_chunks=2)
    >>> type(ev).__name__, list(ev.summary().index.names)
    ('CBPEClasses', ['chunk', 'metric', 'class'])
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """:meth:`ClassEvaluation.summary` per chunk: a metric of the whole matrix once per
        chunk (class ``""``).

        Parameters
        ----------
        source, ci_prob, ci_kind
            As in :meth:`bayeval.evaluation.Evaluation.summary`.

        Returns
        -------
        Table
            Indexed by (``chunk``, ``metric``, ``class``).

        Examples
        --------
        >>> import bayeval as be
        >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]] * 20)
        >>> s = be.cbpe(p, metrics=["accuracy", "macro_f1"]).summary().loc["all"]
        >>> s.index.tolist(), s["mean"].round(3).tolist()
        ([('accuracy', ''), ('macro_f1', '')], [0.7, 0.697])
        """
        frame = super(ClassEvaluation, self).summary(source, ci_prob, ci_kind)
        if "class" not in frame.index.names:
            return frame
        names = ["chunk", "metric", "class"]
        if list(frame.index.names) != names:  # the draws' summary orders its dims its own way
            index = pd.MultiIndex.from_product([self.draws.indexes[d] for d in names],
                                               names=names)
            attrs = dict(frame.attrs)
            frame = table(frame.reorder_levels(names).reindex(index), attrs.pop("caption"),
                          **attrs)
        first = frame.index.get_level_values("class")[0]
        per = frame.index.get_level_values("metric").isin(BY_CLASS)
        keep = per | (frame.index.get_level_values("class") == first)
        out = frame[keep]
        index = [(c, m, k if m in BY_CLASS else "") for c, m, k in out.index]
        out = out.set_axis(pd.MultiIndex.from_tuples(index, names=["chunk", "metric", "class"]))
        attrs = dict(frame.attrs)
        return table(out, attrs.pop("caption"), **attrs)


# ---------------------------------------------------------------------------------------------
# calibration


def renormalised(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Rows of one-vs-rest probabilities :math:`f_{ik}` divided by their sums (:math:`1/K`
    where a row sums to 0), and the sums :math:`\sum_j f_{ij}`.

    Examples
    --------
    >>> p, total = renormalised(np.array([[0.5, 0.3, 0.2], [0.4, 0.4, 0.4], [0.0, 0.0, 0.0]]))
    >>> p.round(3).tolist(), total.round(3).tolist()
    ([[0.5, 0.3, 0.2], [0.333, 0.333, 0.333], [0.333, 0.333, 0.333]], [1.0, 1.2, 0.0])
    """
    total = f.sum(axis=-1)
    out = f / np.where(total > 0, total, 1.0)[..., None]
    out[total <= 0] = 1.0 / f.shape[-1]
    return out, total


def class_maps(scores: np.ndarray, labels: np.ndarray, calibration: Any,
               random_seed: Any = None) -> list[Calibrator]:
    """One calibrator per class, fitted on the reference's class-vs-rest rows.

    Parameters
    ----------
    scores : ndarray (n, K)
        Raw class probabilities of the reference (validated).
    labels : ndarray (n,)
        Their classes' codes 0..K-1.
    calibration : str
        ``"auto"`` (per class, the calibrator among none, isotonic, Platt and beta calibration
        with the lowest held-out calibration error, :func:`bayeval.calibration.select_calibrator`)
        or a key of :data:`bayeval.calibration.CALIBRATORS`.
    random_seed : None, int or Generator
        Seeds the held-out folds of ``"auto"``.

    Returns
    -------
    list of Calibrator

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.dirichlet([1, 1, 1], 300)
    >>> y = (rng.random(300)[:, None] > s.cumsum(axis=1)).sum(axis=1)
    >>> [m.name for m in class_maps(s, y, "isotonic")]
    ['isotonic', 'isotonic', 'isotonic']
    """
    rng = as_seed(random_seed)
    maps = []
    for k in range(scores.shape[1]):
        y = (labels == k).astype(float)
        if calibration == "auto":
            maps.append(select_calibrator(scores[:, k], y, random_seed=rng)[0])
        else:
            maps.append(make_calibrator(calibration).fit(scores[:, k], y))
    return maps


def _ovr_fit(maps: list[Calibrator]):
    """Fit each class's calibrator of ``maps`` again on labelled rows: a function of scores."""
    def fit(scores: np.ndarray, labels: np.ndarray, rng):
        refit = [make_calibrator(m.name).fit(scores[:, k], (labels == k).astype(float))
                 for k, m in enumerate(maps)]
        return lambda s: renormalised(np.column_stack([m.predict(s[:, k])
                                                       for k, m in enumerate(refit)]))[0]
    return fit


def select_class_map(scores: np.ndarray, labels: np.ndarray, *, maps=None, n_folds: int = 10,
                     random_seed: Any = None):
    r"""The map ``calibration="auto"`` fits, chosen on held-out folds by the multiclass Brier
    score (:func:`bayeval.multiclass_calibration.select_map`, its parameters and returns).

    The candidates (:data:`AUTO_CANDIDATES`), from the simplest: ``"none"`` (the scores),
    ``"multinomial"`` (the multinomial Platt map at its mode, :math:`K` parameters) and
    ``"one-vs-rest"`` (``maps``, each class's map chosen among none, isotonic, Platt and beta
    on the whole of the rows by :func:`class_maps`, refitted on every fold, renormalised:
    :math:`2K` parameters or more). Preferring the multinomial map within one standard error
    is also what covers: where a row's probabilities depend on all its scores, renormalised
    one-vs-rest maps are biased however large the reference.

    Examples
    --------
    Logits too confident by a factor 2: the multinomial map.

    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(0, 1.5, (1000, 3))
    >>> true = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    >>> s = np.exp(2 * z) / np.exp(2 * z).sum(axis=1, keepdims=True)
    >>> y = (rng.random(1000)[:, None] > true.cumsum(axis=1)).sum(axis=1).clip(max=2)
    >>> name, table, _, _ = select_class_map(s, y, random_seed=0)
    >>> name, table["heldout_brier"].round(3).tolist()
    ('multinomial', [0.44, 0.41, 0.411])
    """
    rng = as_seed(random_seed)
    maps = class_maps(scores, labels, "auto", rng) if maps is None else maps
    whole = multinomial_map(scores, labels, uncertainty=False)  # starts every fold's search
    fits = {"none": lambda s, y, rng: lambda t: t,
            "multinomial": lambda s, y, rng: multinomial_map(s, y, uncertainty=False,
                                                             start=whole).predict,
            "one-vs-rest": _ovr_fit(maps)}
    return select_map(scores, labels, fits, n_folds=n_folds, random_seed=rng)


def _multinomial(scores, labels, uncertainty: bool, random_seed) -> MultinomialMap:
    """The multinomial map of ``calibration="multinomial"``, its posterior seeded from
    ``random_seed``."""
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 17])
    return multinomial_map(scores, labels, uncertainty=uncertainty, random_seed=seed)


def _auto(scores, labels, uncertainty: bool, random_seed, notes: list[str]):
    """The maps of ``calibration="auto"`` (None for the identity) and the held-out scores."""
    if np.bincount(labels, minlength=scores.shape[1]).min() < 4:
        notes.append("calibration='auto': a class has fewer than 4 reference rows to compare "
                     "maps on held-out folds; each class's one-vs-rest map was chosen.")
        return class_maps(scores, labels, "auto", random_seed), None
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 29])
    maps = class_maps(scores, labels, "auto", random_seed)
    n_folds = int(np.clip(AUTO_ROWS // labels.size, 2, 10))
    name, table, _, folds = select_class_map(scores, labels, maps=maps, n_folds=n_folds,
                                             random_seed=seed)
    brier = ", ".join(f"{c} {v:.4f}" for c, v in table["heldout_brier"].items())
    notes.append(f"calibration='auto' chose {name} on {folds.max() + 1} held-out reference "
                 f"folds (mean multiclass Brier score {brier}; the one-standard-error rule "
                 "prefers none, then multinomial, then one-vs-rest).")
    if name != "one-vs-rest":
        maps = None if name == "none" else _multinomial(scores, labels, uncertainty, random_seed)
    return maps, table


def _posteriors(maps: list[Calibrator], scores: np.ndarray, labels: np.ndarray,
                random_seed: Any) -> list[MapPosterior | None]:
    """Each class's map posterior (None for a map left uncalibrated)."""
    seed = None if random_seed is None else np.random.default_rng([int(random_seed), 17])
    return [None if isinstance(m, Identity) else
            map_posterior(m, scores[:, k], (labels == k).astype(float), random_seed=seed)
            for k, m in enumerate(maps)]


# ---------------------------------------------------------------------------------------------
# the laws of a window


class _Window(NamedTuple):
    """A window's plug-in laws (accuracy's, each class's), its expected counts (plug-in and per
    draw of the maps), its laws mixed over the draws (``mixed``, None without them) and its
    ROC-AUC laws (``auc``, where asked for)."""

    accuracy: CountLaw
    classes: list[CountLaw]
    tp: np.ndarray  # (K,) expected TP_k
    total: np.ndarray  # (K,) expected rows of class k
    tp_draws: np.ndarray | None = None  # (M, K)
    total_draws: np.ndarray | None = None
    mixed: tuple[CountLaw, list[CountLaw]] | None = None
    auc: ClassAucs | None = None

    def laws(self) -> tuple[CountLaw, list[CountLaw]]:
        return self.mixed or (self.accuracy, self.classes)


def _n_draws(posteriors) -> int:
    """Number of draws of the maps' posterior (a multinomial map's, or the one-vs-rest maps')."""
    if isinstance(posteriors, MultinomialMap):
        return posteriors.draws
    return next(post.draws for post in posteriors if post is not None)


def _draw_probs(posteriors, maps, s: np.ndarray) -> np.ndarray:
    """Probabilities of every draw of the maps (renormalised one-vs-rest), (M, n, K)."""
    if isinstance(posteriors, MultinomialMap):
        return posteriors.predict_draws(s)
    draws = _n_draws(posteriors)
    cols = [np.broadcast_to(m.predict(s[:, k]), (draws, s.shape[0])) if post is None else
            post.predict(s[:, k]) for k, (m, post) in enumerate(zip(maps, posteriors, strict=True))]
    return renormalised(np.stack(cols, axis=-1))[0]


def _linear_shifts(posteriors, s: np.ndarray, p: np.ndarray, total: np.ndarray,
                   yp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First-order shifts of the expected TP_k and class-k rows per draw (module docstring)."""
    k = p.shape[1]
    scale = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
    d_tp, d_total = np.zeros((_n_draws(posteriors), k)), np.zeros((_n_draws(posteriors), k))
    for j, post in enumerate(posteriors):
        if post is None:
            continue
        for c in range(k):
            w = ((j == c) - p[:, c]) * scale
            d_total[:, c] += post.shifts(s[:, j], w)
            d_tp[:, c] += post.shifts(s[:, j], np.where(yp == c, w, 0.0))
    return d_tp, d_total


def _moved(w: _Window) -> _Window:
    """``w`` with its plug-in laws moved by its draws' shifts of the expected counts."""
    d_tp, d_fn = w.tp_draws - w.tp, (w.total_draws - w.tp_draws) - (w.total - w.tp)
    acc = w.accuracy.with_map(d_tp.sum(axis=1), np.zeros(d_tp.shape[0]), split=True)
    laws = [law.with_map(d_tp[:, c], d_fn[:, c], split=False) for c, law in enumerate(w.classes)]
    return w._replace(mixed=(acc, laws))


def _window(s: np.ndarray, p: np.ndarray, total: np.ndarray, yp: np.ndarray, maps,
            posteriors, auc_zd: float | None = None) -> _Window:
    """The laws of one window, mixed over the maps' draws when ``posteriors`` has any, with
    the ROC-AUC laws unless ``auc_zd`` (their ``zero_division``) is None."""
    k = p.shape[1]
    own = p[np.arange(yp.size), yp]
    acc = CountLaw.poisson_binomial(own, np.ones(yp.size, np.int8))
    laws = [CountLaw.poisson_binomial(p[:, c], (yp == c).astype(np.int8)) for c in range(k)]
    w = _Window(acc, laws, np.bincount(yp, weights=own, minlength=k), p.sum(axis=0))
    if posteriors is None:
        return w if auc_zd is None else w._replace(auc=window_aucs(s, p, None, auc_zd))
    if yp.size <= EXACT_MAP_ROWS:
        pm = _draw_probs(posteriors, maps, s)
        own = pm[:, np.arange(yp.size), yp]
        mixed = (acc.from_draws(draw_pmfs(own, np.ones(yp.size)), split=True),
                 [law.from_draws(draw_pmfs(pm[:, :, c], yp == c), split=False)
                  for c, law in enumerate(laws)])
        tp_draws = np.stack([own[:, yp == c].sum(axis=1) for c in range(k)], axis=1)
        auc = None if auc_zd is None else window_aucs(s, p, pm, auc_zd)
        return w._replace(tp_draws=tp_draws, total_draws=pm.sum(axis=1), mixed=mixed, auc=auc)
    d_tp, d_total = (posteriors.count_shifts(s, p, yp) if isinstance(posteriors, MultinomialMap)
                     else _linear_shifts(posteriors, s, p, total, yp))
    tp_draws, total_draws = w.tp + d_tp, w.total + d_total
    return _moved(w._replace(tp_draws=tp_draws, total_draws=total_draws,
                             auc=_long_aucs(s, p, maps, posteriors, auc_zd)))


def _long_aucs(s: np.ndarray, p: np.ndarray, maps, posteriors,
               auc_zd: float | None) -> ClassAucs | None:
    """The ROC-AUC laws of a window longer than ``EXACT_MAP_ROWS``, the maps' draws computed a
    block of rows at a time."""
    if auc_zd is None:
        return None
    return window_aucs(s, p, None if posteriors is None else (
        lambda rows: _draw_probs(posteriors, maps, s[rows])), auc_zd)


def _whole(parts: list[_Window]) -> _Window:
    """The whole period from its chunks: the plug-in laws convolve and, the draws being shared
    by the chunks, their shifts add before the sum is mixed."""
    acc, laws = parts[0].accuracy, list(parts[0].classes)
    for w in parts[1:]:
        acc, laws = acc + w.accuracy, [a + b for a, b in zip(laws, w.classes, strict=True)]
    whole = _Window(acc, laws, sum(w.tp for w in parts), sum(w.total for w in parts))
    if parts[0].tp_draws is None:
        return whole
    return _moved(whole._replace(tp_draws=sum(w.tp_draws for w in parts),
                                 total_draws=sum(w.total_draws for w in parts)))


# ---------------------------------------------------------------------------------------------
# the closed form


def _macro(w: _Window, base: str, cov: np.ndarray, zd: float) -> tuple[NormalLaw, float]:
    """A macro average's normal law (module docstring) and NannyML's estimate."""
    laws = w.laws()[1]
    per = [law.law(base, zd) for law in laws]
    n_pos = np.array([law.n_pos for law in w.classes], float)
    n = n_pos + np.array([law.n_neg for law in w.classes], float)

    def value(tp, total):
        return metric_value(base, tp, n_pos - tp, total - tp, n - n_pos - (total - tp), 1.0, zd)

    plugin = value(w.tp, w.total)
    between = cov.copy()
    if w.tp_draws is not None:
        shifts = value(w.tp_draws, w.total_draws) - plugin
        between += np.cov(np.nan_to_num(shifts), rowvar=False) * (1 - np.eye(len(per)))
    k = len(per)
    var = (sum(d.sd**2 for d in per) + between.sum()) / k**2
    return (NormalLaw(float(np.nanmean([d.mean for d in per])), float(np.sqrt(max(var, 0.0))),
                      np.nan), float(np.mean(plugin)))


def _closed_form(wins: list[_Window], covs: list[dict[str, np.ndarray]], metrics, labels,
                 coord, ci_prob: float, ci_kind: str, zd: float, thresholds) -> xr.Dataset:
    """The laws of every chunk (then the whole period), metric and class, tabulated as binary
    CBPE's :func:`~bayeval.methods.cbpe.fast.closed_form`."""
    g, m, k = len(wins), len(metrics), len(coord)
    names = ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin", "p_alert")
    out = {v: np.full((g, m, k), np.nan) for v in names}
    lower_thr = np.repeat(thresholds[0][None], g, axis=0)
    upper_thr = np.repeat(thresholds[1][None], g, axis=0)
    lower_thr[-1] = upper_thr[-1] = np.nan
    for i, w in enumerate(wins):
        acc, laws = w.laws()
        for j, metric in enumerate(metrics):
            if metric in PER_CLASS:
                cells = []
                for c, law in enumerate(laws):
                    tp, fn = w.tp[c], w.total[c] - w.tp[c]
                    plugin = metric_value(metric, tp, law.n_pos - tp, fn, law.n_neg - fn, 1.0, zd)
                    cells.append((c, law.law(metric, zd), plugin))
            elif metric == "accuracy":
                cells = [(0, acc.law("accuracy", zd), float(w.tp.sum() / acc.n_pos))]
            elif metric == "roc_auc":
                cells = [(c, law, plugin) for c, (law, plugin) in enumerate(w.auc.classes)]
            elif metric == "macro_roc_auc":
                cells = [(0, *w.auc.macro)]
            else:
                base = metric.removeprefix("macro_")
                cells = [(0, *_macro(w, base, covs[i][base], zd))]
            for c, law, plugin in cells:
                normal = isinstance(law, NormalLaw)
                lo, hi = law.interval(ci_prob, ci_kind) if normal else law.interval_ends(
                    ci_prob, ci_kind)
                lt, ut = lower_thr[i, j, c], upper_thr[i, j, c]
                alert = 1.0 - law.mass(lt, ut) if np.isfinite(lt) or np.isfinite(ut) else np.nan
                values = (law.mean, law.sd, lo, hi, ci_prob if normal else law.mass(lo, hi),
                          law.p_undefined, plugin, alert)
                for name, value in zip(names, values, strict=True):
                    out[name][i, j, c] = value
    dims = ("chunk", "metric", "class")
    ds = xr.Dataset({v: (dims, out[v]) for v in names},
                    coords={"chunk": [*labels, WHOLE], "metric": list(metrics), "class": coord})
    exact = np.array([[metric not in MACRO_LAW_METRICS and (metric in PER_CLASS or c == 0)
                       for c in range(k)] for metric in metrics])
    exact = np.broadcast_to(exact, (g, m, k)).copy()
    for j, metric in enumerate(metrics):
        if metric in AUC_METRICS:
            exact[:, j] = [[metric == "roc_auc" and not isinstance(law, NormalLaw)
                            for law, _ in w.auc.classes] for w in wins]
    ds["exact"] = (dims, exact)
    ds["lower_threshold"], ds["upper_threshold"] = (dims, lower_thr), (dims, upper_thr)
    ds["alert"] = (dims, (out["mean"] < lower_thr) | (out["mean"] > upper_thr))
    return ds


# ---------------------------------------------------------------------------------------------
# realized metrics and thresholds


def _codes(labels: Any, classes: np.ndarray, name: str) -> np.ndarray:
    """Codes of labels on ``classes``, -1 where missing (None or NaN)."""
    if isinstance(labels, (pd.Series, pd.Index)):
        labels = labels.to_numpy(dtype=object)
    arr = np.asarray(labels, dtype=object).reshape(-1)
    known = ~pd.isna(arr)
    codes = np.full(arr.size, -1, dtype=np.int64)
    if known.any():
        codes[known] = encode(arr[known], classes=classes, names=(name, ""))[0]
    return codes


def realized_classes(labels: np.ndarray, y_pred: np.ndarray, groups: np.ndarray, n_groups: int,
                     metrics, n_classes: int, zero_division: float, whole: bool = True,
                     scores: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (group[, whole] x metric x class) of the labelled rows, and their
    number per group; NaN for a group without a label.

    ``labels`` are codes with -1 where unknown, ``groups`` each row's group 0..n_groups-1;
    ``scores`` (n, K) rank the rows for the ROC-AUCs (scikit-learn's
    ``roc_auc_score(y, s, multi_class="ovr")``, :func:`bayeval.multiclass.ovr_auc_value`).

    Examples
    --------
    >>> out, n = realized_classes(np.array([0, 1, 2, -1, 2]), np.array([0, 1, 1, 2, 2]),
    ...                           np.array([0, 0, 0, 1, 1]), 2, ["accuracy", "recall"], 3, 0.0)
    >>> out[:, 0, 0].round(3).tolist(), out[-1, 1].tolist(), n.tolist()
    ([0.667, 1.0, 0.75], [1.0, 1.0, 0.5], [3, 1, 4])
    """
    known = labels >= 0
    k2 = n_classes * n_classes
    cells = groups[known] * k2 + labels[known] * n_classes + y_pred[known]
    matrices = np.bincount(cells, minlength=n_groups * k2).reshape(n_groups, n_classes,
                                                                   n_classes)
    if whole:
        matrices = np.concatenate([matrices, matrices.sum(axis=0, keepdims=True)])
    out = np.full((matrices.shape[0], len(metrics), n_classes), np.nan)
    rows = [known & (groups == g) for g in range(n_groups)] + ([known] if whole else [])
    for j, metric in enumerate(metrics):
        if metric in AUC_METRICS:
            aucs = np.array([ovr_auc_value(labels[r], scores[r], zero_division) if r.any()
                             else np.full(n_classes, np.nan) for r in rows])
            if metric == "roc_auc":
                out[:, j] = aucs
            else:
                with np.errstate(invalid="ignore"):
                    out[:, j, 0] = np.nanmean(aucs, axis=1) if np.isnan(zero_division) \
                        else aucs.mean(axis=1)
            continue
        value = matrix_value(metric, matrices.astype(float), zero_division)
        if metric in PER_CLASS:
            out[:, j] = value
        else:
            out[:, j, 0] = value
    n = matrices.sum(axis=(1, 2))
    out[n == 0] = np.nan
    return out, n


def _thresholds(realized_ref: np.ndarray, metrics, alert_thresholds) -> tuple[np.ndarray, ...]:
    """Alert thresholds (metric x class): the mean of the reference chunks' realized metric
    +- :data:`~bayeval.methods.cbpe.api.ALERT_SD` sd, or the user's constants for every
    class."""
    c, m, k = realized_ref.shape
    names = [metric for metric in metrics for _ in range(k)]
    lower, upper = (t.reshape(m, k) for t in alert_bounds(realized_ref.reshape(c, m * k),
                                                          names, {}))
    for metric, (lo, hi) in alert_thresholds.items():
        j = list(metrics).index(metric)
        cols = slice(None) if metric in BY_CLASS else slice(0, 1)
        lower[j, cols], upper[j, cols] = lo, hi
    return lower, upper


# ---------------------------------------------------------------------------------------------
# the entry point


def _enough_rows(labels: np.ndarray, k: int) -> None:
    """Raise unless the reference has 2 rows of every class and of the rest."""
    counts = np.bincount(labels, minlength=k)
    if counts.min() < 2 or (labels.size - counts).min() < 2:
        raise ValueError("calibration needs at least 2 reference rows of every class and "
                         f"of the rest; the classes have {counts.tolist()} rows. Use "
                         "calibration='none' or a larger reference.")


def _reference(reference: Any, n_columns: int, named) -> tuple[np.ndarray, ...]:
    """The reference's (scores, label codes, prediction codes, classes), checked."""
    if not isinstance(reference, (tuple, list)) or len(reference) not in (2, 3):
        raise ValueError("reference must be (scores, labels) or (scores, labels, y_pred) with "
                         f"scores of shape (n, K); got {describe(reference)}.")
    parts = aligned(**dict(zip(("reference scores", "reference labels", "reference y_pred"),
                               reference, strict=False)))
    s, ref_named = as_class_scores(parts[0], "reference scores")
    if s.shape[1] != n_columns:
        raise ValueError(f"reference scores have {s.shape[1]} columns and scores {n_columns}; "
                         "both need one column per class.")
    if named is not None and ref_named is not None and list(named) != list(ref_named):
        raise ValueError(f"reference scores' columns {describe(list(ref_named))} differ from "
                         f"the scores' {describe(list(named))}.")
    classes = column_classes(parts[1], named if named is not None else ref_named, n_columns,
                             names=("reference labels", "reference scores"))
    y, _, _ = encode(parts[1], classes=classes, names=("reference labels", ""))
    if y.size != s.shape[0]:
        raise ValueError(f"reference labels have {y.size} rows and reference scores "
                         f"{s.shape[0]}; one label per row is needed.")
    yp = (s.argmax(axis=1) if len(parts) < 3 or parts[2] is None else
          encode(parts[2], classes=classes, names=("reference y_pred", ""))[0])
    return s, y, yp, classes


def cbpe_classes(scores, *, y_pred=None, reference=None, labels=None, chunks=None,
                 chunk_size=None, n_chunks=None, chunk_period=None, reference_chunks=None,
                 calibration="auto",
                 calibration_uncertainty: bool = True, metrics=None,
                 zero_division: float = 0.0, alert_thresholds=None, method: str = "exact",
                 ci_prob: float = 0.95, ci_kind: str = "eti", draws: int = 4000,
                 random_seed: int | None = None) -> CBPEClasses:
    r"""Estimate a K-class classifier's performance per chunk of an unlabelled period (CBPE).

    Parameters
    ----------
    scores : array-like or DataFrame (n, K)
        Raw class probabilities of the analysis period (rows summing to 1); a DataFrame's
        columns are the classes.
    y_pred : array-like (n,), optional
        The predicted classes (default: the class of the largest score).
    reference : (scores, labels) or (scores, labels, y_pred), optional
        A labelled reference period: it fits the calibration map(s) and gives the alert
        thresholds. Without it the scores are taken as calibrated.
    labels : array-like (n,), optional
        Analysis labels where known (None/NaN elsewhere): ``realized`` metrics beside the
        estimates, with ``alert_realized`` and ``n_labelled``.
    chunks, chunk_size, n_chunks, chunk_period, reference_chunks
        As in :func:`bayeval.cbpe`.
    calibration : {"auto", "none", "isotonic", "platt", "beta", "scaling_binning", "multinomial"}
        One map per class, renormalised (module docstring), or ``"multinomial"``: one jointly
        normalised map, :math:`p_{ik}\propto\exp(a_k+b\log s_{ik})` (Dirichlet calibration
        with :math:`W=bI`, :func:`~bayeval.multiclass_calibration.multinomial_map`).
        ``"auto"`` chooses among none, the multinomial map and the one-vs-rest maps (each
        class's chosen on its own folds) by their multiclass Brier score on held-out reference
        folds (:func:`select_class_map`); the scores are in ``ev.tree["data"]``
        (``heldout_brier``, ``brier_excess``, ``brier_se``, ``chosen`` over ``calibrator``)
        and the choice in the notes.
    calibration_uncertainty : bool
        Mix the laws over the maps' posterior draws (default) or condition on the fitted maps.
    metrics : sequence of str, optional
        Among :data:`CLASS_CBPE_METRICS` (default: all but the ROC-AUCs,
        :data:`DEFAULT_METRICS`).
    zero_division : {0.0, 1.0, np.nan}
        A class's metric where its denominator is 0.
    alert_thresholds : dict, optional
        ``{metric: (lower, upper)}`` constants for every class of the metric.
    method : {"exact", "pymc", "both"}
        The fast path, the generative model
        (:func:`~bayeval.methods.cbpe.multiclass_models.class_model`, drawn forward), or both
        with :meth:`~bayeval.evaluation.Evaluation.check`.
    ci_prob, ci_kind : float, {"eti", "hdi"}
    draws : int
        Forward draws of the model (``method="pymc"`` or ``"both"``).
    random_seed : int, optional
        Seeds the held-out folds of ``"auto"``, the maps' posterior draws and the model's.

    Returns
    -------
    CBPEClasses
        ``closed_form`` over (``chunk``, ``metric``, ``class``): ``mean``, ``sd``, ``lower``,
        ``upper``, ``interval_mass``, ``p_undefined`` (NaN for the macro averages),
        ``plugin`` (NannyML's estimate), ``exact``, thresholds, ``alert``, ``p_alert``,
        ``realized`` with labels. With the model, its draws ``prior/value`` over (``chain``,
        ``draw``, ``chunk``, ``metric``, ``class``) beside those of ``tp``, ``fn`` (and
        ``rank_sum``); with ``method="pymc"`` the realized metrics and thresholds are in
        ``ev.tree["data"]``.

    Raises
    ------
    ValueError
        For scores that are not (n, K) class probabilities, labels or predictions outside the
        classes, a reference that does not match, or an unknown option.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([2, 2, 2], 600)
    >>> ev = cbpe_classes(p, n_chunks=2, metrics=["accuracy", "macro_f1"])
    >>> s = ev.summary()
    >>> bool(abs(s.loc[("all", "accuracy", ""), "mean"] - p.max(axis=1).mean()) < 1e-12)
    True
    """
    method = as_choice(method, "method", METHODS)
    if method != "exact":
        draws = as_positive_int(draws, "draws", least=2)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = as_metrics(metrics, CLASS_CBPE_METRICS, DEFAULT_METRICS)
    calibration = as_calibration(calibration, CALIBRATIONS, kind=str)
    zd = float(as_zero_division(zero_division))
    alert_thresholds = as_alert_thresholds(alert_thresholds, metrics)
    scores, y_pred, labels, chunks = aligned(scores=scores, y_pred=y_pred, labels=labels,
                                             chunks=chunks, keys=("chunks",))
    s, named = as_class_scores(scores, "scores")
    n, k = s.shape
    chunking = make_chunks(n, chunks=chunks, chunk_size=chunk_size, n_chunks=n_chunks,
                           chunk_period=chunk_period)
    notes: list[str] = []
    data = xr.Dataset()
    if reference is None:
        if calibration not in ("auto", "none"):
            raise ValueError(f"calibration={calibration!r} needs reference=(scores, labels).")
        classes = (named if named is not None else
                   column_classes(labels if labels is not None else y_pred, None, k)
                   if labels is not None or y_pred is not None else np.arange(k).astype(object))
        maps, posteriors, realized_ref = None, None, np.empty((0, len(metrics), k))
        notes.append("no reference: the scores are taken as calibrated probabilities.")
    else:
        ref_s, ref_y, ref_yp, classes = _reference(reference, k, named)
        if calibration != "none":
            _enough_rows(ref_y, k)
        if calibration == "none":
            maps = None
        elif calibration == "multinomial":
            maps = _multinomial(ref_s, ref_y, calibration_uncertainty, random_seed)
        elif calibration == "auto":
            maps, heldout = _auto(ref_s, ref_y, calibration_uncertainty, random_seed, notes)
            if heldout is not None:
                data = xr.Dataset({v: ("calibrator", heldout[v].to_numpy()) for v in heldout},
                                  coords={"calibrator": list(heldout.index)})
        else:
            maps = class_maps(ref_s, ref_y, calibration, random_seed)
        if isinstance(maps, MultinomialMap):
            posteriors = maps if maps.draws else None
        else:
            posteriors = (_posteriors(maps, ref_s, ref_y, random_seed)
                          if maps is not None and calibration_uncertainty else None)
            if posteriors is not None and all(post is None for post in posteriors):
                posteriors = None
        if maps is not None and not calibration_uncertainty:
            notes.append("calibration_uncertainty=False: the intervals are conditional on the "
                         "calibration maps fitted on the reference; their error, shared by "
                         "every row, is not in them.")
        size = chunk_size or int(np.median(chunking.sizes))
        ref_chunking = (make_chunks(ref_y.size, chunks=reference_chunks,
                                    chunk_period=chunk_period)
                        if reference_chunks is not None else
                        make_chunks(ref_y.size, n_chunks=max(1, round(ref_y.size / size))))
        realized_ref, _ = realized_classes(ref_y, ref_yp, ref_chunking.codes,
                                           len(ref_chunking.labels), metrics, k, zd, whole=False,
                                           scores=ref_s)
        data["reference_chunks"] = len(ref_chunking.labels)
        if len(ref_chunking.labels) < 2 and not alert_thresholds:
            notes.append(f"alert thresholds need at least 2 reference chunks of {size} rows; "
                         f"the reference has {ref_y.size} rows.")
    yp = s.argmax(axis=1) if y_pred is None else encode(y_pred, classes=classes,
                                                         names=("y_pred", ""))[0]
    if yp.size != n:
        raise ValueError(f"y_pred has {yp.size} rows and scores {n}; one per row is needed.")
    if isinstance(maps, MultinomialMap):
        p, total = maps.predict(s), np.ones(n)
    else:
        p, total = renormalised(s if maps is None else
                                np.column_stack([m.predict(s[:, c]) for c, m in enumerate(maps)]))
    groups = [*chunking.rows(), np.arange(n)]
    g = len(groups)
    coord = class_coordinate(classes)
    thresholds = _thresholds(realized_ref, metrics, alert_thresholds)
    closed, tree, pm_model = None, None, None
    if method != "pymc":
        closed = _fast_path(s, p, total, yp, maps, posteriors, groups, metrics, chunking, coord,
                            (ci_prob, ci_kind, zd), thresholds)
    else:
        dims = ("chunk", "metric", "class")
        closed = xr.Dataset({"lower_threshold": (dims, np.repeat(thresholds[0][None], g, 0)),
                             "upper_threshold": (dims, np.repeat(thresholds[1][None], g, 0))},
                            coords={"chunk": [*chunking.labels, WHOLE],
                                    "metric": list(metrics), "class": coord})
        closed["lower_threshold"][-1] = closed["upper_threshold"][-1] = np.nan
    if labels is not None:
        real, n_labelled = realized_classes(_codes(labels, classes, "labels"), yp,
                                            chunking.codes, len(chunking.labels), metrics, k, zd,
                                            scores=s)
        closed["realized"] = (("chunk", "metric", "class"), real)
        closed["alert_realized"] = (("chunk", "metric", "class"),
                                    (real < closed["lower_threshold"].values)
                                    | (real > closed["upper_threshold"].values))
        closed["n_labelled"] = ("chunk", n_labelled.astype(np.int64))
    if method != "exact":
        if posteriors is not None:
            check_map_draws(_n_draws(posteriors), n, k)
        probs = p if posteriors is None else _draw_probs(posteriors, maps, s)
        pm_model, group = model_draws(probs, yp, s, chunking.codes, chunking.labels, coord,
                                      metrics, zd, draws, random_seed)
        tree = xr.DataTree.from_dict({"prior": group})
    if method == "pymc":
        data = data.merge(closed)
        closed = None
    cal_name = ("none" if maps is None else
                "multinomial Platt (Dirichlet, W = bI), jointly normalised"
                if isinstance(maps, MultinomialMap) else
                "/".join(dict.fromkeys(m.name for m in maps)) + " one-vs-rest, renormalised")
    if posteriors is not None:
        cal_name += f" (integrated over {_n_draws(posteriors)} draws of their posterior)"
    description = (f"CBPE of {k} classes, calibration={cal_name}: {len(chunking.labels)} "
                   f"chunk(s) of {n} rows and the whole period")
    return CBPEClasses.create(method="cbpe_multiclass", variant=method, ci_prob=ci_prob,
                              ci_kind=ci_kind, random_seed=random_seed, data=data,
                              assumptions=ASSUMPTIONS, description=description,
                              warnings=size_notes(chunking.sizes) + notes, closed_form=closed,
                              draws=tree, estimand=None if tree is None else "prior/value",
                              iid_draws=True, model=pm_model)


def _fast_path(s, p, total, yp, maps, posteriors, groups, metrics, chunking, coord, opts,
               thresholds) -> xr.Dataset:
    """The closed form of every chunk, then the whole period."""
    ci_prob, ci_kind, zd = opts
    n = yp.size
    auc_zd = zd if any(metric in AUC_METRICS for metric in metrics) else None
    wins = [_window(s[r], p[r], total[r], yp[r], maps, posteriors, auc_zd)
            for r in groups[:-1]]
    if n <= EXACT_MAP_ROWS:
        wins.append(_window(s, p, total, yp, maps, posteriors, auc_zd))
    else:  # the ROC-AUCs of the whole period from its rows: they do not add over chunks
        wins.append(_whole(wins)._replace(auc=_long_aucs(s, p, maps, posteriors, auc_zd)))
    bases = {metric.removeprefix("macro_") for metric in metrics if metric in MACRO_LAW_METRICS}
    covs = [{b: class_covariances(b, p[r], yp[r]) for b in bases} for r in groups]
    closed = _closed_form(wins, covs, metrics, chunking.labels, coord, ci_prob, ci_kind, zd,
                          thresholds)
    closed["n"] = ("chunk", np.r_[chunking.sizes, n])
    return closed
