r"""Labels that arrive late in CBPE: the realized metrics beside the estimates, or in them.

Where some labels of an analysis chunk are known, :func:`realized` gives the metrics of its
labelled rows (``realized``, beside the estimates). With ``late_labels="estimate"``
(:func:`fold_labels`) they also enter the estimate: the chunk's law becomes that of its
**realized metric over all its rows** given the known labels. With the predictions fixed,

.. math:: TP=TP_K+\sum_{i\in U,\hat y_i=1}Y_i,\qquad FN=FN_K+\sum_{i\in U,\hat y_i=0}Y_i,

:math:`TP_K, FN_K` the counts of the labelled rows and :math:`U` the unlabelled ones, whose
labels are :math:`Y_i\sim\mathrm{Bernoulli}(q_i)` independently given the map, as in PEMI
(Dervovic & Cashmore, "Model Evaluation in the Dark", AISTATS 2025). :math:`q_i` is the
reference's map :math:`p` **recalibrated** by the chunk's labels (labels missing at random given
the score), :math:`\mathrm{logit}\,q_i=a+e^{\beta}\,\mathrm{logit}\,p(s_i)`, with the
posterior of :math:`(a,\beta)` under a prior centred on the reference's map
(:func:`recalibration`), and shifted on the log-odds scale,
:math:`\sigma(\mathrm{logit}\,q_i+\delta)`, by ``mnar=``: a number fixes :math:`\delta`,
``(mean, sd)`` puts a normal prior on it. Labels consistent with the reference leave the map
nearly the reference's, so the interval narrows by the variance of the labelled rows; a drift
of :math:`P(Y\mid s)` moves it. Any number of labels is recalibrated: the prior keeps a few
labels of one class from moving the map further than they show.

The whole period is one window whose law mixes over joint draws: draw :math:`m` takes the
:math:`m`-th draw of the reference's map, every chunk's recalibration drawn given it, and
:math:`\delta`'s draw (one shift for the period, as one missingness mechanism); given it the
unknown labels are independent, and the counts' laws are those of CBPE
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

from bayeval.calibration_map import DRAWS, EXACT_MAP_ROWS, MapPosterior, draw_pmfs
from bayeval.chunks import Chunking
from bayeval.confusion import MetricDistribution
from bayeval.confusion_moments import auc_count_moments
from bayeval.methods.cbpe.auc import (
    auc_cells,
    auc_law,
    both_classes_probability,
    exact_auc_rows,
    nannyml_auc,
    window_auc_law,
)
from bayeval.methods.cbpe.fast import CountLaw, NormalLaw, Window
from bayeval.metrics import auc_value, metric_value
from bayeval.validation import as_choice, as_mnar, as_seed

__all__ = ["AUC_DRAWS", "CANDIDATES", "LATE_LABELS", "POINTS", "SCALES", "Recalibration",
           "RowDraws", "add_realized", "as_late_labels", "fold_labels", "realized",
           "realized_metrics", "recalibration", "window_law"]

LATE_LABELS = ("report", "estimate")
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
             whole: bool = True, order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Realized metrics (chunk[, whole] x metric) on the labelled rows (:func:`realized_metrics`)
    and the labelled rows per chunk; NaN with no label. Given ``order``, a stable argsort of
    ``scores``, ROC-AUC reads each chunk's rows in score order (no sort).

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
        every = np.arange(codes.size) if order is None else order
        groups = [*chunking.rows(order), every] if whole else chunking.rows(order)
        auc = [_realized_auc(labels[r][known[r]], scores[r][known[r]], zero_division)
               for r in groups]
    return realized_metrics(np.column_stack([tp, fp, fn, tn]), auc, metrics, zero_division,
                            beta)


def _realized_auc(labels, scores, zero_division) -> float:
    if labels.size == 0:
        return np.nan
    if labels.min() == labels.max():
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
    closed.update({"realized": (dims, realized_values),
                   "alert_realized": (dims, (realized_values < closed["lower_threshold"].values)
                                      | (realized_values > closed["upper_threshold"].values)),
                   "n_labelled": ("chunk", n_labelled.astype(np.int64))})


# ---------------------------------------------------------------------------------------------
# the recalibration of the reference's map by a chunk's labels


SCALES = np.geomspace(0.001, 2.0, 16)
r"""The grid of the prior scale :math:`\tau` of the recalibration :math:`(a,\beta)`, with
equal prior mass on each point: log-uniform, the same mass on each decade of drift size, from
0.001 (no realistic number of labels tells such a drift from none) to 2 (a shift of two units
of log-odds, a slope :math:`e^{\beta}` between :math:`e^{-2}` and :math:`e^{2}`: beyond the
concept shifts of the coverage designs, :math:`a=-1.5` or :math:`e^{\beta}=0.625`). Half the
mass lies below 0.05, on drifts that a few hundred labels cannot see, so a chunk whose labels
agree with the reference keeps nearly its map; a drift they can see moves the scale's posterior
to its size."""
CANDIDATES = 64
"""Candidates per draw of the sampling-importance-resampling of the recalibration's posterior."""
POINTS = 500
"""Distinct labelled scores of a chunk above which they are pooled into this many equal-count
bins for the recalibration."""
_DF = 4  # degrees of freedom of the proposal's Student-t components
_CLIP = 1e-9  # the reference's probabilities enter the recalibration clipped to [_CLIP, 1-_CLIP]


def _logit(p: np.ndarray) -> np.ndarray:
    return special.logit(np.clip(p, _CLIP, 1.0 - _CLIP))


@dataclass(frozen=True)
class Recalibration:
    r"""A recalibration :math:`q=\sigma(a+e^{\beta}\,\mathrm{logit}\,p)` of the reference's
    probabilities :math:`p`: one :math:`(a,\beta)` (the plug-in) or one per draw.

    Attributes
    ----------
    a, beta : ndarray, shape () or (M,)
    scales : ndarray, shape (len(SCALES),)
        The posterior of :math:`\tau` on :data:`SCALES` (at the reference's plug-in map).

    Examples
    --------
    >>> Recalibration(np.array(0.0), np.array(0.0), np.ones(1)).predict(np.array([0.2, 0.7]))
    array([0.2, 0.7])
    >>> Recalibration(np.array([-1.0, 0.0]), np.array([0.0, np.log(2.0)]), np.ones(1)).predict(
    ...     np.array([[0.5], [0.5]])).round(4).tolist()
    [[0.2689], [0.5]]
    """

    a: np.ndarray
    beta: np.ndarray
    scales: np.ndarray

    def predict(self, p: np.ndarray) -> np.ndarray:
        """:math:`q` of probabilities ``p``: shape (n,) for the plug-in, (M, n) with draws (``p``
        of shape (n,) or one row per draw)."""
        if self.a.ndim == 0:
            return special.expit(self.a + np.exp(self.beta) * _logit(p))
        return special.expit(self.a[:, None] + np.exp(self.beta)[:, None] * _logit(p))


def _pooled(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by score pooled by distinct score (or :data:`POINTS` equal-count bins): the
    index of each row's pool, its positives and its rows."""
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    if first.size > POINTS:
        first = first[np.unique(np.linspace(0, first.size, POINTS, endpoint=False)
                                .astype(np.int64))]
    pool = np.repeat(np.arange(first.size), np.diff(np.r_[first, s.size]))
    return pool, np.bincount(pool, weights=y), np.bincount(pool).astype(float)


def _loglik(a, beta, x, k, n) -> np.ndarray:
    """Binomial log-likelihood of ``k`` positives of ``n`` at reference log-odds ``x`` (last
    axis), for coefficients broadcast against ``x[..., 0]``."""
    eta = a[..., None] + np.exp(beta)[..., None] * x
    return (k * eta - n * np.logaddexp(0.0, eta)).sum(axis=-1)


def _laplace(x: np.ndarray, k: np.ndarray, n: np.ndarray):
    r"""The posterior mode of :math:`(a,\beta)` at every prior scale of :data:`SCALES`, by
    Fisher scoring, with the information there and the Laplace approximation of the log
    evidence; ``x`` has one row per reference draw. Shapes (D, G, 2), (D, G, 2, 2), (D, G)."""
    prec = 1.0 / SCALES**2
    theta = np.zeros((x.shape[0], SCALES.size, 2))
    xs = x[:, None, :]
    for _ in range(100):
        b = np.exp(theta[..., 1])[..., None]
        q = special.expit(theta[..., :1] + b * xs)
        resid, weight, bx = k - n * q, n * q * (1.0 - q), b * xs
        grad = np.stack([resid.sum(-1), (resid * bx).sum(-1)], axis=-1) - prec[:, None] * theta
        info = np.stack([weight.sum(-1), (weight * bx).sum(-1), (weight * bx).sum(-1),
                         (weight * bx * bx).sum(-1)], axis=-1).reshape(*theta.shape, 2)
        info += prec[:, None, None] * np.eye(2)
        step = np.linalg.solve(info, grad[..., None])[..., 0]
        step = np.clip(step, -1.0, 1.0)  # damped: beta enters through exp
        theta += step
        if np.abs(step).max() <= 1e-10:
            break
    _, logdet = np.linalg.slogdet(info)
    evidence = (_loglik(theta[..., 0], theta[..., 1], xs, k, n) - 2.0 * np.log(SCALES)
                - (theta**2).sum(-1) / (2.0 * SCALES**2) - 0.5 * logdet)
    return theta, info, evidence


def _normalised(logw: np.ndarray) -> np.ndarray:
    w = np.exp(logw - logw.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def recalibration(scores: np.ndarray, labels: np.ndarray, p: np.ndarray,
                  reference: MapPosterior | None = None, *, draws: int = 0,
                  random_seed=None) -> Recalibration:
    r"""The posterior of the recalibration of the reference's map by a chunk's labels.

    The labelled rows' labels are :math:`Y_i\sim\mathrm{Bernoulli}(q_i)` with

    .. math:: \mathrm{logit}\,q_i=a+e^{\beta}\,\mathrm{logit}\,p(s_i),\qquad
       (a,\beta)\mid\tau\sim N(0,\tau^2 I),\qquad \log\tau\sim\mathrm{Uniform}
       \text{ on the grid } \texttt{SCALES},

    :math:`p` the reference's map: logistic recalibration of a prediction model by its
    calibration intercept and slope (Cox 1958; Steyerberg et al. 2004) with a positive slope
    (a temperature, Guo et al. 2017) and a scale-mixture prior centred on the reference's map
    :math:`(a,\beta)=(0,0)`. The data choose the scale, as the closed testing procedure of
    Vergouwe et al. (2017) chooses between keeping and updating a model, but by averaging:
    labels consistent with the reference put the posterior of :math:`\tau` on its small values
    and leave the map nearly the reference's, a drift of the log-odds moves it to the scale of
    the drift. Given each :math:`\tau` the posterior is approximated by Laplace's method (the
    mode by Fisher scoring, the expected information), :math:`\tau`'s posterior by the Laplace
    evidence, and the mixture of these normals, as Student-t with 4 degrees of freedom (the
    posterior of the slope has a heavier tail), is the proposal of
    sampling-importance-resampling (Rubin 1988) with :data:`CANDIDATES` candidates per draw,
    weighted by the exact posterior of :math:`(a,\beta)` (:math:`\tau` summed out).

    With the reference's map posterior, draw :math:`m` is drawn given the reference's draw
    :math:`m`, so that the pair is a draw of the joint posterior in which the chunk's labels
    update the recalibration and not the reference's map (a cut, Plummer 2015: the
    reference's map is learned from the reference alone, as for the chunks without labels).

    Parameters
    ----------
    scores, labels : ndarray
        The chunk's labelled rows.
    p : ndarray
        The reference's plug-in probabilities of those rows.
    reference : MapPosterior, optional
        The posterior of the reference's map (None: the map is taken as exact).
    draws : int
        0: the plug-in, the posterior mean of :math:`(a,\beta)` under the Laplace mixture at the
        reference's plug-in map; else the number of draws (the reference's, when given).
    random_seed : None, int or Generator

    Returns
    -------
    Recalibration

    References
    ----------
    Cox, D. R. (1958). Two further applications of a model for binary regression. Biometrika
    45, 562-565. Steyerberg, E. W. et al. (2004). Validation and updating of predictive
    logistic regression models. Statistics in Medicine 23, 2567-2586. Guo, C. et al. (2017). On
    calibration of modern neural networks. ICML. Vergouwe, Y. et al. (2017). A closed testing
    procedure to select an appropriate method for updating prediction models. Statistics in
    Medicine 36, 4529-4539. Rubin, D. B. (1988). Using the SIR algorithm to simulate posterior
    distributions. Bayesian Statistics 3. Plummer, M. (2015). Cuts in Bayesian graphical
    models. Statistics and Computing 25, 37-43.

    Examples
    --------
    Labels drawn from the reference's map (a calibrated score) and from a map one unit of
    log-odds lower:

    >>> rng = np.random.default_rng(0)
    >>> s = rng.beta(2, 2, 300)
    >>> same = recalibration(s, (rng.random(300) < s).astype(float), s)
    >>> drift = recalibration(s, (rng.random(300) < special.expit(special.logit(s) - 1))
    ...                       .astype(float), s)
    >>> bool(abs(same.a) < 0.05), round(float(drift.a), 2)
    (True, -0.73)
    >>> round(float(SCALES @ same.scales), 2), round(float(SCALES @ drift.scales), 2)  # E tau
    (0.06, 0.77)
    >>> post = recalibration(s, (rng.random(300) < s).astype(float), s, draws=400,
    ...                      random_seed=1)
    >>> post.a.shape, bool(post.a.std() < 0.15)
    ((400,), True)
    """
    order = np.argsort(scores, kind="stable")
    s, y, p = scores[order], np.asarray(labels, float)[order], p[order]
    pool, k, n = _pooled(s, y)
    x = (np.bincount(pool, weights=_logit(p)) / n)[None]
    theta, info, evidence = _laplace(x, k, n)
    w = _normalised(evidence)
    if not draws:
        mean = np.einsum("dg,dgj->j", w, theta)
        return Recalibration(mean[0], mean[1], w[0])
    rng = as_seed(random_seed)
    if reference is not None:  # the draws of the reference's map at the pools' mean scores
        x = _logit(reference.predict(np.bincount(pool, weights=s) / n))
        theta, info, evidence = _laplace(x, k, n)
    chol = np.linalg.cholesky(np.linalg.inv(info))
    with np.errstate(divide="ignore"):
        log_weights = np.log(_normalised(evidence)) + 0.5 * np.linalg.slogdet(info)[1]
    out = np.empty((draws, 2))
    for start in range(0, draws, 100):
        m = np.arange(start, min(start + 100, draws))
        d = m if x.shape[0] > 1 else np.zeros(m.size, np.int64)
        pick = (rng.random((m.size, CANDIDATES, 1))
                > np.cumsum(_normalised(evidence[d]), axis=1)[:, None]
                ).sum(-1).clip(max=SCALES.size - 1)  # a scale per candidate
        rows = d[:, None]
        z = rng.standard_normal((m.size, CANDIDATES, 2))
        z *= np.sqrt(_DF / rng.chisquare(_DF, (m.size, CANDIDATES, 1)))  # Student-t
        cand = theta[rows, pick] + np.einsum("mcij,mcj->mci", chol[rows, pick], z)
        # the mixture proposal's log density and the posterior's (tau summed out), + constants
        diff = cand[:, :, None, :] - theta[d][:, None]
        maha = np.einsum("mcgi,mcgij,mcgj->mcg", diff, info[d][:, None], diff)
        proposal = special.logsumexp(log_weights[d][:, None]
                                     - (_DF + 2) / 2 * np.log1p(maha / _DF), axis=-1)
        prior = special.logsumexp(-2.0 * np.log(SCALES) - (cand**2).sum(-1)[..., None]
                                  / (2.0 * SCALES**2), axis=-1)
        target = _loglik(cand[..., 0], cand[..., 1], x[d][:, None, :], k, n) + prior
        chosen = (rng.random((m.size, 1)) > np.cumsum(_normalised(target - proposal), axis=1)
                  ).sum(-1).clip(max=CANDIDATES - 1)
        out[m] = cand[np.arange(m.size), chosen]
    return Recalibration(out[:, 0], out[:, 1], w[0])


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
        ``mnar`` that is not None, a number or (mean, sd >= 0), or given without
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
        raise ValueError("mnar= shifts the labels of the unlabelled rows of chunks with late "
                         "labels: give labels= with late_labels='estimate'.")
    return (late_labels, *as_mnar(mnar, "the log-odds of an unlabelled row shifted"))


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
    p : ndarray, shape (n,)
        The reference's plug-in probabilities.
    plugin : ndarray, shape (n,)
        The label of a labelled row; else the plug-in probability (the reference's map, or a
        chunk's recalibration of it shifted by :math:`\delta`'s mean).
    source : ndarray of int, shape (n,)
        -2 for a labelled row, -1 for the reference's map, :math:`c\ge0` for chunk
        :math:`c`'s recalibration.
    reference : MapPosterior, optional
        The posterior of the reference's map (None: taken as exact).
    maps : dict
        Chunk :math:`c`'s :class:`Recalibration` (its draws, or the plug-in alone).
    delta : float
        :math:`\delta`'s mean.
    deltas : ndarray, optional
        :math:`\delta_m` of each draw, with a prior on :math:`\delta`.
    draws : int
        The number of joint draws :math:`M`.

    Examples
    --------
    Four labelled rows and two recalibrated by :math:`a=\ln 2` (and slope 1), shifted by
    :math:`\delta=\ln 2`:

    >>> s = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.5])
    >>> recal = Recalibration(np.array(np.log(2.0)), np.array(0.0), SCALES)
    >>> q = _shift(recal.predict(s[4:]), np.log(2.0))
    >>> rows = RowDraws(s, s, np.r_[0.0, 1.0, 0.0, 1.0, q], np.array([-2, -2, -2, -2, 0, 0]),
    ...                 None, {0: recal}, float(np.log(2.0)), None, 0)
    >>> rows.plugin.round(4).tolist(), rows.varies(np.arange(6))
    ([0.0, 1.0, 0.0, 1.0, 0.8, 0.8], False)
    """

    scores: np.ndarray
    p: np.ndarray
    plugin: np.ndarray
    source: np.ndarray
    reference: MapPosterior | None
    maps: dict[int, Recalibration]
    delta: float
    deltas: np.ndarray | None
    draws: int

    def varies(self, rows: np.ndarray) -> bool:
        """Whether the probabilities of ``rows`` differ between draws."""
        source = self.source[rows]
        chunks = np.unique(source[source >= 0])
        drawn = any(self.maps[c].a.ndim for c in chunks)
        return bool((self.reference is not None and (source >= _REFERENCE).any()) or drawn
                    or (chunks.size and self.deltas is not None))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        r"""Probabilities of ``rows`` under each draw, shape (draws, rows): a labelled row's
        label, the reference's draw, or the chunk's recalibration of it shifted by the draw's
        :math:`\delta`."""
        out = np.broadcast_to(self.plugin[rows], (self.draws, rows.size)).copy()
        source, s = self.source[rows], self.scores[rows]
        mine = source == _REFERENCE
        if self.reference is not None and mine.any():
            out[:, mine] = self.reference.predict(s[mine])
        for c in np.unique(source[source >= 0]):
            mine = source == c
            p = (self.p[rows][mine] if self.reference is None else
                 self.reference.predict(s[mine]))
            q = self.maps[c].predict(p)
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
    >>> rows = RowDraws(s, s, np.r_[1.0, 0.0, 1.0, 0.5, 0.5], np.array([-2, -2, -2, -1, -1]),
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
    >>> rows = RowDraws(s, s, np.r_[0.0, 0.5, 0.5, 1.0], np.array([-2, -1, -1, -2]), None,
    ...                 {}, 0.0, None, 0)
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
        laws.append(auc_law(auc_count_moments(s, q, 0.5), float(q.sum()),
                            float((1 - q).sum()), both_classes_probability(q),
                            zero_division)[0])
    means = np.array([law.mean for law in laws])
    var = np.mean([law.sd**2 for law in laws]) + means.var()
    return NormalLaw(float(means.mean()), float(np.sqrt(var)),
                     float(np.mean([law.p_undefined for law in laws]))), plugin


def fold_labels(scores: np.ndarray, labels: np.ndarray, chunking: Chunking, p: np.ndarray,
                posterior: MapPosterior | None, delta: tuple[float, float], uncertainty: bool,
                random_seed) -> tuple[RowDraws, list[str]]:
    """The rows' sources of probability and what each chunk gets (``"none"``: no label, CBPE's
    law; ``"recalibrated"``: its labels fixed, the reference's map recalibrated by them for
    the others; ``"known"``: every label known), then the whole period (``"combined"`` when a
    chunk has labels).

    ``p`` are the reference's calibrated probabilities and ``posterior`` its map's posterior;
    a chunk's :func:`recalibration` is drawn (seeded from ``random_seed`` and the chunk) when
    ``uncertainty``, else its plug-in.

    Examples
    --------
    >>> from bayeval.chunks import make_chunks
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(200)
    >>> y = np.where(np.arange(200) < 100, np.nan, (rng.random(200) < s ** 2).astype(float))
    >>> y[150:] = np.nan  # the second chunk: 50 labels
    >>> rows, used = fold_labels(s, y, make_chunks(200, n_chunks=2), s, None, (0.0, 0.0),
    ...                          True, 0)
    >>> used, rows.draws, int((rows.source == 1).sum())
    (['none', 'recalibrated', 'combined'], 400, 50)
    """
    known = ~np.isnan(labels)
    plugin = np.where(known, labels, p)
    source = np.where(known, _KNOWN, _REFERENCE)
    draws = DRAWS if posterior is None else posterior.draws
    maps, used = {}, []
    for c, rows in enumerate(chunking.rows()):
        mine, unknown = rows[known[rows]], rows[~known[rows]]
        if not mine.size or not unknown.size:
            used.append("known" if mine.size else "none")
            continue
        used.append("recalibrated")
        seed = None if random_seed is None else np.random.default_rng([int(random_seed), 18, c])
        plug = recalibration(scores[mine], labels[mine], p[mine])
        maps[c] = (recalibration(scores[mine], labels[mine], p[mine], posterior, draws=draws,
                                 random_seed=seed) if uncertainty else plug)
        source[unknown] = c
        plugin[unknown] = _shift(plug.predict(p[unknown]), delta[0])
    deltas = None
    if delta[1] > 0:  # stratified quantiles of N(mean, sd^2), in random order
        rng = np.random.default_rng(None if random_seed is None else [int(random_seed), 19])
        deltas = delta[0] + delta[1] * special.ndtri((rng.permutation(draws) + 0.5) / draws)
    used.append("combined" if known.any() else "none")
    rows = RowDraws(scores, p, plugin, source, posterior, maps, delta[0], deltas, draws)
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
    >>> rows, used = fold_labels(s, y, chunking, s, None, (0.0, 0.0), True, 0)
    >>> laws = [CountLaw.poisson_binomial(s[r], s[r] >= 0.5) for r in chunking.rows()]
    >>> laws, expected, _ = folded_laws(rows, used, chunking, s >= 0.5, True, laws + [None],
    ...                                 [None] * 3, None, 0.0)
    >>> used, [law.cells for law in laws[1:]], expected[1]  # chunk 2: all known, one class
    (['none', 'known', 'combined'], [1, 21], (20.0, 0.0))
    """
    laws, expected = list(laws), list(expected)
    auc = None if auc is None else list(auc)
    recalibrated = "recalibrated" in used
    order = np.argsort(rows.scores, kind="stable")
    windows = [*chunking.rows(order), order]
    for i, (window, kind) in enumerate(zip(windows, used, strict=True)):
        if kind == "none":
            continue
        laws[i], expected[i] = window_law(rows, window, positive, split and not recalibrated)
        if auc is not None:
            auc[i] = window_auc(rows, window, zero_division)
    return laws, expected, auc


def late_label_notes(used: list[str], chunk_labels, delta: tuple[float, float]) -> list[str]:
    """What the late labels did, for the result's warnings.

    Examples
    --------
    >>> late_label_notes(["none", "recalibrated", "known", "combined"], ["a", "b", "c"],
    ...                  (0.0, 0.0))  # doctest: +ELLIPSIS
    ["late_labels='estimate': the estimates ... chunk(s) 'b': the unlabelled rows' labels ..."]
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
    if "recalibrated" in used:
        text += (f"; chunk(s) {named('recalibrated')}: the unlabelled rows' labels from the "
                 "reference's map recalibrated by the chunk's labels (logit q = a + b logit p), "
                 f"its posterior mixed in{shift}")
    return [text + "."]
