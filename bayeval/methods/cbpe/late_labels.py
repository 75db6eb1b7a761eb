r"""Labels that arrive late in CBPE: the realized metrics beside the estimates, or in them.

Where some labels of an analysis chunk are known, :func:`realized` gives the metrics of its
labelled rows (``realized``, beside the estimates). With ``late_labels="estimate"``
(:func:`fold_labels`) they also enter the estimate: the chunk's law becomes that of its
**realized metric over all its rows** given the known labels. With the predictions fixed,

.. math:: TP=TP_K+\sum_{i\in U,\hat y_i=1}Y_i,\qquad FN=FN_K+\sum_{i\in U,\hat y_i=0}Y_i,

:math:`TP_K, FN_K` the counts of the labelled rows and :math:`U` the unlabelled ones, whose
labels are :math:`Y_i\sim\mathrm{Bernoulli}(q_i)` independently given the map. As in PEMI
(Dervovic & Cashmore, "Model Evaluation in the Dark", AISTATS 2025), :math:`q_i` is a Platt map
:math:`\sigma(a\,\mathrm{logit}\,s_i+b)` of the raw score learned from the chunk's labelled rows
(labels missing at random given the score), with the posterior of :math:`(a, b)` mixed in
(:func:`bayeval.calibration_map.map_posterior`), and shifted on the log-odds scale,
:math:`\sigma(\mathrm{logit}\,q_i+\delta)`, by ``mnar=``: a number fixes :math:`\delta`,
``(mean, sd)`` puts a normal prior on it.

A chunk whose labelled rows hold fewer than :data:`MIN_CLASS_LABELS` of either class learns no
map: its labelled rows are fixed and its other rows take the reference's map, as the chunks
without labels do. The whole period is one window whose law mixes over joint draws: draw
:math:`m` takes the :math:`m`-th draw of the reference's map, of every chunk's map (their
posteriors are independent, so pairing them by index is a draw of the joint) and of
:math:`\delta` (one shift for the period, as one missingness mechanism); given it the unknown
labels are independent, and the counts' laws are those of CBPE
(:meth:`~bayeval.methods.cbpe.fast.CountLaw.from_draws` up to
:data:`~bayeval.calibration_map.EXACT_MAP_ROWS` unlabelled rows,
:meth:`~bayeval.methods.cbpe.fast.CountLaw.with_map` beyond).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import xarray as xr
from scipy import special

from bayeval.calibration import Platt
from bayeval.calibration_map import DRAWS, EXACT_MAP_ROWS, MapPosterior, draw_pmfs, map_posterior
from bayeval.chunks import Chunking
from bayeval.confusion import MetricDistribution
from bayeval.confusion_moments import auc_count_moments
from bayeval.methods.cbpe.auc import (
    auc_cells,
    auc_law,
    defined_probability,
    exact_auc_rows,
    nannyml_auc,
    window_auc_law,
)
from bayeval.methods.cbpe.fast import CountLaw, NormalLaw, Window
from bayeval.metrics import auc_value, metric_value
from bayeval.validation import as_choice, as_prior

__all__ = ["AUC_DRAWS", "LATE_LABELS", "MIN_CLASS_LABELS", "RowDraws", "add_realized",
           "as_late_labels", "fold_labels", "realized", "realized_metrics", "window_law"]

LATE_LABELS = ("report", "estimate")
MIN_CLASS_LABELS = 10
"""A chunk learns its own map when its labelled rows hold at least this many of each class
(a logistic map of two coefficients; with fewer, one class or none, the reference's map)."""
AUC_DRAWS = 100
"""ROC-AUC's normal law in a long window with late labels mixes the exact moments under this
many of the joint draws (evenly spaced)."""
_BLOCK = 2000  # rows whose probabilities under every draw are held at once
_KNOWN, _REFERENCE = -2, -1  # sources of a row's label; a chunk's map is its index


# ---------------------------------------------------------------------------------------------
# realized metrics



def realized_metrics(confusion: np.ndarray, auc: list[float] | None, metrics,
                     zero_division: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (group x metric) from the labelled rows' confusion counts.

    Parameters
    ----------
    confusion : ndarray, shape (G, 4)
        TP, FP, FN, TN of the labelled rows of each group (chunks, then the whole period).
    auc : list of float, optional
        The realized ROC-AUC of each group, when ``metrics`` has ``roc_auc``.
    metrics : sequence of str
    zero_division, beta : float

    Returns
    -------
    realized : ndarray, shape (G, len(metrics))
        :func:`bayeval.metrics.from_counts` of the counts; NaN for a group without a labelled
        row.
    n_labelled : ndarray, shape (G,)

    Examples
    --------
    >>> out, n = realized_metrics(np.array([[3, 1, 1, 5], [0, 0, 0, 0]]), None,
    ...                           ["accuracy", "recall"], 0.0, 1.0)
    >>> out.tolist(), n.tolist()
    ([[0.8, 0.75], [nan, nan]], [10.0, 0.0])
    """
    tp, fp, fn, tn = np.asarray(confusion, float).T
    n = tp + fp + fn + tn
    out = np.full((n.size, len(metrics)), np.nan)
    for j, metric in enumerate(metrics):
        out[:, j] = (auc if metric == "roc_auc" else
                     metric_value(metric, tp, fp, fn, tn, beta, zero_division))
    out[n == 0] = np.nan
    return out, n


def realized(labels, y_pred, scores, chunking: Chunking, metrics, zero_division, beta,
             whole: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (chunk[, whole] x metric) on the labelled rows (:func:`realized_metrics`)
    and the labelled rows per chunk; NaN with no label.

    Examples
    --------
    Two chunks of three rows, one label missing; every labelled positive outranks every
    labelled negative (ROC-AUC 1), and one positive of the second chunk is predicted 0:

    >>> from bayeval.chunks import make_chunks
    >>> labels = np.array([1, 0, np.nan, 1, 1, 0])
    >>> scores = np.array([0.9, 0.2, 0.6, 0.7, 0.4, 0.3])
    >>> out, n = realized(labels, (scores >= 0.5).astype(int), scores,
    ...                   make_chunks(6, n_chunks=2), ["accuracy", "roc_auc"], 0.0, 1.0)
    >>> out.round(4).tolist(), n.tolist()
    ([[1.0, 1.0], [0.6667, 1.0], [0.8, 1.0]], [2.0, 3.0, 5.0])
    """
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
    auc = None
    if "roc_auc" in metrics:
        groups = [*chunking.rows(), np.arange(codes.size)] if whole else chunking.rows()
        auc = [_realized_auc(labels[r][known[r]], scores[r][known[r]], zero_division)
               for r in groups]
    return realized_metrics(np.column_stack([tp, fp, fn, tn]), auc, metrics, zero_division,
                            beta)


def _realized_auc(labels, scores, zero_division) -> float:
    if labels.size == 0:
        return np.nan
    if np.unique(labels).size < 2:
        return zero_division
    return float(auc_value(labels.astype(np.int8), scores))


def add_realized(closed: xr.Dataset, realized_values: np.ndarray,
                 n_labelled: np.ndarray) -> None:
    """Realized metrics (:func:`realized_metrics`), their alerts against the thresholds of
    ``closed`` and the labelled rows per chunk, into ``closed``.

    Examples
    --------
    >>> closed = xr.Dataset({"lower_threshold": (("chunk", "metric"), [[0.7], [np.nan]]),
    ...                      "upper_threshold": (("chunk", "metric"), [[1.0], [np.nan]])})
    >>> add_realized(closed, np.array([[0.6], [0.8]]), np.array([5, 9]))
    >>> closed["alert_realized"].values.ravel().tolist(), closed["n_labelled"].values.tolist()
    ([True, False], [5, 9])
    """
    dims = ("chunk", "metric")
    closed["realized"] = (dims, realized_values)
    closed["alert_realized"] = (dims, (realized_values < closed["lower_threshold"].values)
                                | (realized_values > closed["upper_threshold"].values))
    closed["n_labelled"] = ("chunk", n_labelled.astype(np.int64))


# ---------------------------------------------------------------------------------------------
# labels in the estimate


def as_late_labels(late_labels: Any, mnar: Any, labels: Any, noise: str, method: str,
                   binary: bool) -> tuple[str, float, float]:
    """The checked ``late_labels`` and ``mnar`` of :func:`~bayeval.methods.cbpe.api.cbpe`: the
    choice and :math:`\\delta`'s mean and sd (0, 0: missing at random given the score).

    Raises
    ------
    ValueError
        An unknown choice; ``"estimate"`` with K classes, a noise model or a PyMC method;
        ``mnar`` that is not None, a number or (mean, sd > 0), or given without
        ``late_labels="estimate"`` and ``labels``.

    Examples
    --------
    >>> as_late_labels("estimate", (0.5, 1.0), [1, None], "none", "exact", True)
    ('estimate', 0.5, 1.0)
    >>> as_late_labels("estimate", None, None, "beta", "exact", True)
    Traceback (most recent call last):
        ...
    ValueError: late_labels='estimate' draws the unlabelled rows of a chunk from its map under \
noise='none' with method='exact' (binary scores); got noise='beta', method='exact'. Use \
late_labels='report' to report the labels beside the estimates.
    """
    late_labels = as_choice(late_labels, "late_labels", LATE_LABELS)
    if late_labels == "estimate" and (noise != "none" or method != "exact" or not binary):
        classes = "" if binary else ", K classes"
        raise ValueError("late_labels='estimate' draws the unlabelled rows of a chunk from its "
                         "map under noise='none' with method='exact' (binary scores); got "
                         f"noise={noise!r}, method={method!r}{classes}. Use "
                         "late_labels='report' to report the labels beside the estimates.")
    if mnar is None:
        return late_labels, 0.0, 0.0
    if late_labels != "estimate" or labels is None:
        raise ValueError("mnar= shifts the labels of the unlabelled rows of chunks that learn a "
                         "map from their late labels: give labels= with late_labels='estimate'.")
    if isinstance(mnar, (int, float, np.number)) and not isinstance(mnar, bool):
        if np.isfinite(mnar):
            return late_labels, float(mnar), 0.0
        mnar = (mnar,)  # refused below, naming mnar
    try:
        return (late_labels, *as_prior(mnar, "mnar", kind="normal"))
    except ValueError:
        raise ValueError("mnar must be None (labels missing at random given the score), a "
                         "finite number (a fixed shift delta of the log-odds of an unlabelled "
                         f"row) or (mean, sd) with sd > 0 (a normal prior on delta); got "
                         f"{mnar!r}.") from None


def _shift(q: np.ndarray, delta: Any) -> np.ndarray:
    r""":math:`\sigma(\mathrm{logit}\,q+\delta)`; probabilities 0 and 1 stay."""
    with np.errstate(divide="ignore"):
        return special.expit(special.logit(q) + delta)


@dataclass(frozen=True, eq=False)
class RowDraws:
    r"""The probability that each row's label is 1, plug-in and under each joint draw.

    Attributes
    ----------
    scores : ndarray, shape (n,)
    plugin : ndarray, shape (n,)
        The label of a labelled row; else the plug-in probability (the fitted map, shifted by
        :math:`\delta`'s mean).
    source : ndarray of int, shape (n,)
        -2 for a labelled row, -1 for the reference's map, :math:`c\ge0` for chunk
        :math:`c`'s map.
    reference : MapPosterior, optional
        The posterior of the reference's map (None: taken as exact).
    maps : dict
        Chunk :math:`c`'s map: its :class:`~bayeval.calibration_map.MapPosterior`, or the
        fitted :class:`~bayeval.calibration.Platt` map alone.
    delta : float
        :math:`\delta`'s mean.
    deltas : ndarray, optional
        :math:`\delta_m` of each draw, with a prior on :math:`\delta`.
    draws : int
        The number of joint draws :math:`M`.

    Examples
    --------
    Four labelled rows and two from a map fitted on them (1/2 at 0.5), shifted by
    :math:`\delta=\ln 4`:

    >>> s = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.5])
    >>> y = np.array([0.0, 1.0, 0.0, 1.0])
    >>> cal = Platt().fit(s[:4], y)
    >>> rows = RowDraws(s, np.r_[y, _shift(cal.predict(s[4:]), np.log(4.0))],
    ...                 np.array([-2, -2, -2, -2, 0, 0]), None, {0: cal}, float(np.log(4.0)),
    ...                 None, 0)
    >>> rows.plugin.round(4).tolist(), rows.varies(np.arange(6))
    ([0.0, 1.0, 0.0, 1.0, 0.8, 0.8], False)
    """

    scores: np.ndarray
    plugin: np.ndarray
    source: np.ndarray
    reference: MapPosterior | None
    maps: dict[int, Any]
    delta: float
    deltas: np.ndarray | None
    draws: int

    def varies(self, rows: np.ndarray) -> bool:
        """Whether the probabilities of ``rows`` differ between draws."""
        source = self.source[rows]
        chunks = np.unique(source[source >= 0])
        learned = any(isinstance(self.maps[c], MapPosterior) for c in chunks)
        return bool((self.reference is not None and (source == _REFERENCE).any()) or learned
                    or (chunks.size and self.deltas is not None))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Probabilities of ``rows`` under each draw, shape (draws, rows): a labelled row's
        label, the reference's draw, or the chunk map's draw shifted by the draw's
        :math:`\\delta`."""
        out = np.broadcast_to(self.plugin[rows], (self.draws, rows.size)).copy()
        source, s = self.source[rows], self.scores[rows]
        mine = source == _REFERENCE
        if self.reference is not None and mine.any():
            out[:, mine] = self.reference.predict(s[mine])
        for c in np.unique(source[source >= 0]):
            mine = source == c
            q = self.maps[c].predict(s[mine])
            delta = self.delta if self.deltas is None else self.deltas[:, None]
            out[:, mine] = _shift(q, delta) if np.any(delta) else q
        return out

    def expected(self, rows: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, ...]:
        """The expected TP and FN among ``rows`` (predicted ``positive``) under each draw."""
        tp, fn = np.zeros(self.draws), np.zeros(self.draws)
        for start in range(0, rows.size, _BLOCK):
            q, pos = self.predict(rows[start:start + _BLOCK]), positive[start:start + _BLOCK]
            tp += q[:, pos].sum(axis=1)
            fn += q[:, ~pos].sum(axis=1)
        return tp, fn


def window_law(rows: RowDraws, window: np.ndarray, positive: np.ndarray,
               split: bool) -> tuple[CountLaw, tuple[float, float]]:
    r"""The law of a window's :math:`(TP, FN)` with its labelled rows fixed, and the plug-in
    :math:`(\mathbb E\,TP, \mathbb E\,FN)` (NannyML's estimate's counts).

    The unlabelled rows' counts are Poisson-binomial given a draw and mixed over the draws
    (:meth:`~bayeval.methods.cbpe.fast.CountLaw.from_draws`, or
    :meth:`~bayeval.methods.cbpe.fast.CountLaw.with_map` with each draw's expected counts
    beyond :data:`~bayeval.calibration_map.EXACT_MAP_ROWS` rows); the labelled rows add
    :math:`TP_K` and :math:`FN_K`. ``split``: the draws of the two predicted classes are
    independent (a reference map split at the threshold, and no chunk map).

    Examples
    --------
    Three labelled rows (TP 1, FN 1) and two at 0.5 predicted positive:

    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.7])
    >>> rows = RowDraws(s, np.r_[1.0, 0.0, 1.0, 0.5, 0.5], np.array([-2, -2, -2, -1, -1]),
    ...                 None, {}, 0.0, None, 0)
    >>> law, expected = window_law(rows, np.arange(5), s >= 0.5, split=True)
    >>> law.tp_start, law.tp.round(2).tolist(), law.fn_start, expected
    (1, [[0.25, 0.5, 0.25]], 1, (2.0, 1.0))
    """
    pos = positive[window]
    known = rows.source[window] == _KNOWN
    labels = rows.plugin[window]
    tp_k, fn_k = int(labels[known & pos].sum()), int(labels[known & ~pos].sum())
    unknown = window[~known]
    up, p = pos[~known], rows.plugin[unknown]
    law = CountLaw.poisson_binomial(p, up)
    if unknown.size and rows.varies(unknown):
        if unknown.size <= EXACT_MAP_ROWS:
            law = law.from_draws(draw_pmfs(rows.predict(unknown), up), split)
        else:
            tp, fn = rows.expected(unknown, up)
            law = law.with_map(tp - p[up].sum(), fn - p[~up].sum(), split)
    law = replace(law, n_pos=int(pos.sum()), n_neg=int((~pos).sum()),
                  tp_start=law.tp_start + tp_k, fn_start=law.fn_start + fn_k)
    return law, (float(tp_k + p[up].sum()), float(fn_k + p[~up].sum()))


def window_auc(rows: RowDraws, window: np.ndarray,
               zero_division: float) -> tuple[NormalLaw | MetricDistribution, float]:
    r"""ROC-AUC's law in a window (``window`` in score order) with its labelled rows fixed,
    and NannyML's estimate at the plug-in probabilities.

    Exact in short windows (:func:`~bayeval.methods.cbpe.auc.exact_auc_rows`, mixed over the
    draws); else the normal law with the mean and variance of the mixture over
    :data:`AUC_DRAWS` draws of the normal laws from each draw's exact moments
    (:func:`~bayeval.methods.cbpe.auc.auc_law`).

    Examples
    --------
    A labelled negative at the bottom, a positive at the top and two rows at 1/2 in between:
    ROC-AUC is 3/4 when the lower of the two is the only other positive (one pair misordered),
    else 1:

    >>> s = np.array([0.1, 0.4, 0.6, 0.9])
    >>> rows = RowDraws(s, np.r_[0.0, 0.5, 0.5, 1.0], np.array([-2, -1, -1, -2]), None, {},
    ...                 0.0, None, 0)
    >>> law, plugin = window_auc(rows, np.arange(4), 0.0)
    >>> law.values.tolist(), law.probs.round(4).tolist(), round(law.mean, 4)
    ([0.75, 1.0], [0.25, 0.75], 0.9375)
    """
    s, p = rows.scores[window], rows.plugin[window]
    if not rows.varies(window):
        return window_auc_law(Window(s, p, s), zero_division)
    plugin = nannyml_auc(auc_count_moments(s, p, 0.5), float(p.sum()), float((1 - p).sum()),
                         zero_division)
    if window.size <= exact_auc_rows(rows.draws):
        cells = auc_cells(s, rows.predict(window))
        return MetricDistribution.from_cells("roc_auc", *cells, zero_division), plugin
    pick = np.unique(np.linspace(0, rows.draws - 1, AUC_DRAWS).astype(np.int64))
    probs = np.hstack([rows.predict(window[start:start + _BLOCK])[pick]
                       for start in range(0, window.size, _BLOCK)])
    laws = []
    for q in probs:
        with np.errstate(divide="ignore"):  # p of 0 or 1: a product of 0
            defined = defined_probability(float(np.log1p(-q).sum()), float(np.log(q).sum()))
        laws.append(auc_law(auc_count_moments(s, q, 0.5), float(q.sum()),
                            float((1 - q).sum()), defined, zero_division)[0])
    means = np.array([law.mean for law in laws])
    var = np.mean([law.sd**2 for law in laws]) + means.var()
    return NormalLaw(float(means.mean()), float(np.sqrt(var)),
                     float(np.mean([law.p_undefined for law in laws]))), plugin


def fold_labels(scores: np.ndarray, positive: np.ndarray, labels: np.ndarray,
                chunking: Chunking, p: np.ndarray, posterior: MapPosterior | None, split: bool,
                delta: tuple[float, float], uncertainty: bool, random_seed,
                ) -> tuple[RowDraws, list[str]]:
    """The rows' sources of probability and what each chunk gets (``"none"``: no label, CBPE's
    law; ``"fixed"``: its labels fixed, the reference's map for the others; ``"learned"``: its
    labels fixed, its own map for the others), then the whole period (``"combined"`` when a
    chunk has labels).

    ``p`` are the reference's calibrated probabilities and ``posterior`` its map's posterior;
    a chunk's Platt map is fitted on its labelled raw scores, with its posterior (seeded from
    ``random_seed`` and the chunk) when ``uncertainty``.

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(200)
    >>> y = np.where(np.arange(200) < 100, np.nan, (rng.random(200) < s ** 2).astype(float))
    >>> y[150:] = np.nan  # the second chunk: 50 labels
    >>> rows, used = fold_labels(s, s >= 0.5, y, make_chunks(200, n_chunks=2), s, None, True,
    ...                          (0.0, 0.0), True, 0)
    >>> used, rows.draws, int((rows.source == 1).sum())
    (['none', 'learned', 'combined'], 400, 50)
    """
    known = ~np.isnan(labels)
    plugin = np.where(known, labels, p)
    source = np.where(known, _KNOWN, _REFERENCE)
    draws = DRAWS if posterior is None else posterior.draws
    maps, used = {}, []
    for c, rows in enumerate(chunking.rows()):
        mine = rows[known[rows]]
        y = labels[mine].astype(np.int8)
        if not mine.size:
            used.append("none")
            continue
        if min(int(y.sum()), int(y.size - y.sum())) < MIN_CLASS_LABELS:
            used.append("fixed")
            continue
        used.append("learned")
        cal = Platt().fit(scores[mine], y)
        seed = None if random_seed is None else np.random.default_rng([int(random_seed), 18, c])
        maps[c] = (map_posterior(cal, scores[mine], y, draws=draws, random_seed=seed)
                   if uncertainty else cal)
        unknown = rows[~known[rows]]
        source[unknown] = c
        plugin[unknown] = _shift(cal.predict(scores[unknown]), delta[0])
    deltas = None
    if delta[1] > 0:  # stratified quantiles of N(mean, sd^2), in random order
        rng = np.random.default_rng(None if random_seed is None else [int(random_seed), 19])
        deltas = delta[0] + delta[1] * special.ndtri((rng.permutation(draws) + 0.5) / draws)
    used.append("combined" if known.any() else "none")
    rows = RowDraws(scores, plugin, source, posterior, maps, delta[0], deltas, draws)
    return rows, used


def folded_laws(rows: RowDraws, used: list[str], chunking: Chunking, positive: np.ndarray,
                split: bool, laws: list[CountLaw], expected: list[tuple[float, float]],
                auc: list | None, zero_division: float) -> tuple[list, list, list | None]:
    """The count laws, plug-in counts and ROC-AUC laws (``auc``, when asked) of every chunk,
    then of the whole period, with the late labels in: those of a chunk without labels are
    kept, the others replaced (:func:`window_law`, :func:`window_auc`).

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> s = np.linspace(0.05, 0.95, 40)
    >>> y = np.where(np.arange(40) < 20, np.nan, (s > 0.5).astype(float))
    >>> chunking = make_chunks(40, n_chunks=2)
    >>> rows, used = fold_labels(s, s >= 0.5, y, chunking, s, None, True, (0.0, 0.0), True, 0)
    >>> laws = [CountLaw.poisson_binomial(s[r], s[r] >= 0.5) for r in chunking.rows()]
    >>> laws, expected, _ = folded_laws(rows, used, chunking, s >= 0.5, True, laws + [None],
    ...                                 [None] * 3, None, 0.0)
    >>> used, [law.cells for law in laws[1:]], expected[1]  # chunk 2: all known, one class
    (['none', 'fixed', 'combined'], [1, 21], (20.0, 0.0))
    """
    laws, expected = list(laws), list(expected)
    auc = None if auc is None else list(auc)
    learned = "learned" in used
    order = np.argsort(rows.scores, kind="stable")
    windows = [*chunking.rows(order), order]
    for i, (window, kind) in enumerate(zip(windows, used, strict=True)):
        if kind == "none":
            continue
        laws[i], expected[i] = window_law(rows, window, positive, split and not learned)
        if auc is not None:
            auc[i] = window_auc(rows, window, zero_division)
    return laws, expected, auc


def late_label_notes(used: list[str], chunk_labels, delta: tuple[float, float]) -> list[str]:
    """What the late labels did, for the result's warnings.

    Examples
    --------
    >>> late_label_notes(["none", "learned", "fixed", "combined"], ["a", "b", "c"],
    ...                  (0.0, 0.0))  # doctest: +ELLIPSIS
    ["late_labels='estimate': the estimates ... chunk(s) 'c' had fewer than 10 labels of a ..."]
    """
    def named(kind):
        return ", ".join(repr(str(c)) for c, k in zip(chunk_labels, used, strict=False)
                         if k == kind)

    if used[-1] == "none":
        return []
    shift = (f"; their log-odds shifted by delta ~ N({delta[0]:g}, {delta[1]:g}^2)" if delta[1]
             else f"; their log-odds shifted by delta = {delta[0]:g}" if delta[0] else
             " (labels missing at random given the score)")
    text = ("late_labels='estimate': the estimates are laws of each chunk's realized metric "
            "over all its rows given its known labels (realized is that of the labelled rows "
            "only)")
    if "learned" in used:
        text += (f"; chunk(s) {named('learned')}: the unlabelled rows' labels from a Platt map "
                 f"learned on the chunk's labels, its posterior mixed in{shift}")
    if "fixed" in used:
        text += (f"; chunk(s) {named('fixed')} had fewer than {MIN_CLASS_LABELS} labels of a "
                 "class to learn a map: their other rows take the reference's map")
    return [text + "."]
