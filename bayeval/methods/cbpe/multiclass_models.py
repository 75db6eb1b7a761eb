r"""CBPE's generative model of K classes in PyMC, and the metrics of its draws.

The analysis labels are latent, :math:`Y_i\sim\mathrm{Cat}(p_{i1},\dots,p_{iK})` independently,
with :math:`p_i` the calibrated probabilities (:mod:`bayeval.methods.cbpe.multiclass`: the
renormalised one-vs-rest maps', or the multinomial Platt map's). It is written, as binary
CBPE's V0 (:mod:`bayeval.methods.cbpe.models`), with continuous free variables only:
:math:`u_i\sim U(0,1)` and :math:`Y_i=\#\{k<K-1:u_i>\sum_{j\le k}p_{ij}\}`, the inverse CDF of
the categorical, so that one forward draw costs :math:`O(nK)` vectorised operations.

**Calibration uncertainty.** Where the maps are learned on a reference with their posterior,
the model carries the same :math:`M` draws :math:`p^{(m)}` the fast path mixes over (each class's
map drawn from :func:`bayeval.calibration_map.map_posterior`, renormalised, or the multinomial
map's resampled posterior draws, :func:`bayeval.multiclass_calibration.multinomial_map`) as a
mixture index, :math:`m=\lfloor Mv\rfloor`, :math:`v\sim U(0,1)`: one map per forward draw,
shared by every row and chunk. This is the faithful construction for every calibrator the fast
path takes: isotonic maps have no parametric likelihood to put in the model, and for Platt and
beta calibration the draws already are the maps' (Jeffreys) posterior, as the multinomial map's
are its posterior, so re-sampling their parameters by NUTS would check the draws of the
posterior rather than the laws built on them.

No label of the analysis period is observed, so no likelihood needs the latent labels summed
out: the law of the metrics is the model's prior predictive, drawn forward
(``pm.sample_prior_predictive``, independent draws, no MCMC). Each draw keeps sufficient
statistics only, per chunk and class (then the whole period):
:math:`TP_k=\#\{\hat y_i=k, Y_i=k\}`, :math:`FN_k=\#\{\hat y_i\ne k, Y_i=k\}` and, with the
raw scores, the rank sum :math:`R_k=\sum_{Y_i=k}r_{ik}` of the rows of class :math:`k`, where
:math:`r_{ik}` is the mid-rank of :math:`s_{ik}` among the window's rows. Then
(:func:`class_metric_draws`) :math:`FP_k=\hat n_k-TP_k`, :math:`TN_k=n-\hat n_k-FN_k`,
accuracy :math:`\sum_kTP_k/n`, and the one-vs-rest ROC-AUC of class :math:`k` is the
Mann-Whitney statistic

.. math:: \mathrm{AUC}_k=\frac{R_k-n_{1k}(n_{1k}+1)/2}{n_{1k}\,n_{0k}},\qquad
          n_{1k}=TP_k+FN_k,\ n_{0k}=n-n_{1k},

ties counted 1/2, as scikit-learn's ``roc_auc_score``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from bayeval.chunks import WHOLE
from bayeval.methods.cbpe.models import forward
from bayeval.metrics import metric_value
from bayeval.validation.memory import check_memory

__all__ = ["check_map_draws", "class_metric_draws", "class_model", "midranks", "model_draws"]

OVERALL = ("accuracy", "macro_precision", "macro_recall", "macro_f1", "macro_specificity",
           "macro_roc_auc")
"""The metrics of the whole matrix (one value, stored at the first class)."""


def midranks(scores: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Mid-ranks (1-based, ties averaged) of each column of ``scores`` within each group of
    rows ``codes`` (0..n_groups-1), shape of ``scores``.

    Examples
    --------
    >>> midranks(np.array([[0.3, 0.7], [0.1, 0.9], [0.3, 0.7], [0.5, 0.5]]),
    ...          np.array([0, 0, 0, 1]), 2).tolist()
    [[2.5, 1.5], [1.0, 3.0], [2.5, 1.5], [1.0, 1.0]]
    """
    out = np.empty_like(scores, dtype=float)
    for g in range(n_groups):
        rows = codes == g
        if rows.any():
            out[rows] = stats.rankdata(scores[rows], axis=0)
    return out


def class_model(p, y_pred, scores=None, chunk=None, chunk_labels=None, classes=None):
    r"""The latent-label model of K classes (module docstring).

    Parameters
    ----------
    p : array-like, shape (n, K) or (M, n, K)
        Calibrated class probabilities of the rows (rows summing to 1), or their value under
        each of :math:`M` draws of the calibration maps, of which :math:`\lfloor Mv\rfloor`,
        :math:`v\sim U(0,1)` (free ``map_u``), picks one per forward draw.
    y_pred : sequence of int
        The predicted classes' codes 0..K-1.
    scores : array-like, shape (n, K), optional
        Raw scores: they rank the rows for the rank sums ``rank_sum`` (ROC-AUC).
    chunk : sequence of int, optional
        The chunk of each row, an index into ``chunk_labels`` (default: one chunk).
    chunk_labels : sequence of str, optional
    classes : sequence, optional
        Names of the classes (coordinate ``class``; default 0..K-1).

    Returns
    -------
    pm.Model
        Free ``u`` (dim ``row``) and, with draws of the maps, ``map_u``; deterministic ``y``
        (row), ``tp`` and ``fn`` (dims ``chunk``, ``class``: the chunks, then ``"all"``) and,
        with ``scores``, ``rank_sum``. Draw it forward with :func:`model_draws`.

    Examples
    --------
    >>> import pymc as pm
    >>> p = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]]
    >>> m = class_model(p, [0, 1, 1], scores=p)
    >>> [v.name for v in m.free_RVs], m.coords["chunk"]
    (['u'], ('[0:2]', 'all'))

    At :math:`u=(0.5, 0.5, 0.5)` the labels are the inverse CDFs, (0, 1, 2): the first two are
    predicted right, the third (class 2) was predicted 1, and class 2's row ranks 3rd of 3:

    >>> at = pm.do(m, {"u": [0.5, 0.5, 0.5]})
    >>> pm.draw(at["y"]).tolist(), pm.draw(at["tp"])[0].tolist(), pm.draw(at["fn"])[0].tolist()
    ([0, 1, 2], [1, 1, 0], [0, 0, 1])
    >>> pm.draw(at["rank_sum"])[0].tolist()
    [3.0, 3.0, 3.0]
    """
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.extra_ops import bincount

    p = np.asarray(p, float)
    y_pred = np.asarray(y_pred, np.int64)
    n, k = y_pred.size, p.shape[-1]
    codes = np.zeros(n, np.int64) if chunk is None else np.asarray(chunk, np.int64)
    labels = ([str(c) for c in chunk_labels] if chunk_labels is not None
              else [f"[0:{n - 1}]"] if codes.max(initial=0) == 0
              else [str(c) for c in range(codes.max() + 1)])
    g = len(labels)
    names = list(range(k)) if classes is None else list(classes)
    cum = np.cumsum(p, axis=-1)[..., :-1]
    with pm.Model(coords={"row": np.arange(n), "chunk": [*labels, WHOLE],
                          "class": names}) as m:
        if p.ndim == 3:  # draw floor(M v) of the maps, v ~ U(0, 1)
            v = pm.Uniform("map_u", 0.0, 1.0)
            cum = pm.Data("map_cdf", cum)[pt.floor(v * cum.shape[0]).astype("int64")]
        u = pm.Uniform("u", 0.0, 1.0, dims="row")
        y = pm.Deterministic("y", pt.gt(u[:, None], cum).sum(axis=1).astype("int64"),
                            dims="row")
        cell = codes * k + y
        right = pt.eq(y, y_pred).astype("int64")

        def per_chunk(name, weights, whole):
            sums = bincount(cell, weights=weights, minlength=g * k).reshape((g, k))
            pm.Deterministic(name, pt.concatenate([sums, whole[None]]),
                             dims=("chunk", "class"))

        per_chunk("tp", right, bincount(y, weights=right, minlength=k))
        per_chunk("fn", 1 - right, bincount(y, weights=1 - right, minlength=k))
        if scores is not None:
            s = np.asarray(scores, float)
            rank_chunk = midranks(s, codes, g)
            rank_all = midranks(s, np.zeros(n, np.int64), 1)
            rows = pt.arange(n)
            per_chunk("rank_sum", pt.as_tensor(rank_chunk)[rows, y],
                      bincount(y, weights=pt.as_tensor(rank_all)[rows, y], minlength=k))
    return m


def check_map_draws(draws: int, rows: int, n_classes: int) -> None:
    """Refuse the maps' probabilities under ``draws`` draws for ``rows`` rows beyond the memory
    limit (:func:`bayeval.validation.memory.check_memory`).

    Examples
    --------
    >>> check_map_draws(400, 10_000, 3)
    """
    check_memory(16.0 * draws * rows * n_classes, "calibration_uncertainty",
                 f"{draws:,} draws of the calibration maps on {rows:,} rows",
                 "use calibration_uncertainty=False, fewer rows or method='exact'")


def class_metric_draws(group: xr.Dataset, predicted: np.ndarray, sizes: np.ndarray, metrics,
                       zero_division: float) -> xr.DataArray:
    r"""The metrics (chain, draw, chunk, metric, class) of draws of the sufficient statistics.

    Per class (module docstring): :func:`bayeval.metrics.metric_value` of :math:`TP_k`,
    :math:`FP_k=\hat n_k-TP_k`, :math:`FN_k`, :math:`TN_k=n-\hat n_k-FN_k`, and
    :math:`\mathrm{AUC}_k` from the rank sums (``zero_division`` with one class); a macro
    average is the mean of its classes' values (with ``zero_division=nan``, of the defined
    ones); accuracy :math:`\sum_kTP_k/n`. A metric of the whole matrix is at the first class,
    NaN at the others.

    Parameters
    ----------
    group : xarray.Dataset
        Draws of ``tp``, ``fn`` (and ``rank_sum`` for ROC-AUC) over (chain, draw, chunk, class).
    predicted : ndarray (chunks + 1, K)
        :math:`\hat n_k` per chunk, then the whole period.
    sizes : ndarray (chunks + 1,)
        Rows per chunk, then the whole period.
    metrics : sequence of str
    zero_division : float

    Returns
    -------
    xarray.DataArray

    Examples
    --------
    One chunk of 4 rows predicted (0, 0, 1, 2) and one draw of labels (0, 1, 1, 2): class 0
    has TP 1 and FP 1, class 1 TP 1 and FN 1; with scores ranking class 1's rows 3rd and 4th of
    its column, its ROC-AUC is :math:`(7-3)/(2\cdot2)=1`:

    >>> dims = ("chain", "draw", "chunk", "class")
    >>> group = xr.Dataset({"tp": (dims, [[[[1, 1, 1]]]]), "fn": (dims, [[[[0, 1, 0]]]]),
    ...                     "rank_sum": (dims, [[[[4.0, 7.0, 4.0]]]])})
    >>> v = class_metric_draws(group, np.array([[2, 1, 1]]), np.array([4]),
    ...                        ["accuracy", "precision", "roc_auc", "macro_recall"], 0.0)
    >>> v.isel(chain=0, draw=0, chunk=0).round(3).values.tolist()
    [[0.75, nan, nan], [0.5, 1.0, 1.0], [1.0, 1.0, 1.0], [0.833, nan, nan]]
    """
    tp, fn = group["tp"].values.astype(float), group["fn"].values.astype(float)
    n_pred = np.asarray(predicted, float)
    n = np.asarray(sizes, float)[:, None]
    cols = {}

    def per_class(metric):
        if metric not in cols:
            if metric == "roc_auc":
                n1 = tp + fn
                n0 = n - n1
                with np.errstate(divide="ignore", invalid="ignore"):
                    auc = (group["rank_sum"].values - n1 * (n1 + 1) / 2) / (n1 * n0)
                cols[metric] = np.where((n1 > 0) & (n0 > 0), auc, zero_division)
            else:
                cols[metric] = metric_value(metric, tp, n_pred - tp, fn, n - n_pred - fn, 1.0,
                                            zero_division)
        return cols[metric]

    out = []
    for metric in metrics:
        if metric not in OVERALL:
            out.append(per_class(metric))
            continue
        whole = np.full(tp.shape, np.nan)
        if metric == "accuracy":
            whole[..., 0] = tp.sum(axis=-1) / n[:, 0]
        else:
            values = per_class(metric.removeprefix("macro_"))
            defined = ~np.isnan(values)
            with np.errstate(invalid="ignore"):
                whole[..., 0] = np.where(defined.any(axis=-1),
                                         np.nansum(values, axis=-1) / defined.sum(axis=-1),
                                         np.nan)
        out.append(whole)
    dims = group["tp"].dims
    return xr.DataArray(np.stack(out, axis=dims.index("class")), dims=(*dims[:-1], "metric",
                                                                        "class"),
                        coords={**group["tp"].coords, "metric": list(metrics)})


def model_draws(p, y_pred, scores, codes, chunk_labels, classes, metrics, zero_division: float,
                draws: int, random_seed: Any) -> tuple[Any, xr.Dataset]:
    """Build :func:`class_model`, draw it forward (``draws`` independent draws) and add the
    metrics' draws ``value`` (:func:`class_metric_draws`).

    Parameters
    ----------
    p : ndarray (n, K) or (M, n, K)
        Calibrated probabilities, or their draws under the maps' posterior.
    y_pred, scores, codes, chunk_labels, classes
        As in :func:`class_model` (``scores`` used when ``metrics`` has a ROC-AUC).
    metrics : sequence of str
    zero_division : float
    draws : int
    random_seed : None, int or Generator

    Returns
    -------
    pm.Model, xarray.Dataset
        The model, and the draws of ``tp``, ``fn``, (``rank_sum``) and ``value`` over
        (chain, draw, chunk[, metric], class).

    Examples
    --------
    >>> p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]] * 10)
    >>> _, group = model_draws(p, p.argmax(axis=1), p, np.zeros(30, int), ["w"], ["a", "b", "c"],
    ...                        ["accuracy"], 0.0, 2000, 0)
    >>> acc = group["value"].sel(chunk="all", metric="accuracy", **{"class": "a"})
    >>> round(float(acc.mean()), 3), round(float(acc.std()), 3)  # exact: 0.633 and 0.088
    (0.637, 0.088)
    """
    p = np.asarray(p, float)
    auc = any(m in ("roc_auc", "macro_roc_auc") for m in metrics)
    m = class_model(p, y_pred, scores if auc else None, codes, chunk_labels, classes)
    names = ["tp", "fn", "rank_sum"] if auc else ["tp", "fn"]
    group = forward(m, names, draws, random_seed)
    k = p.shape[-1]
    g = len(chunk_labels)
    predicted = np.bincount(np.asarray(codes) * k + np.asarray(y_pred),
                            minlength=g * k).reshape(g, k)
    predicted = np.vstack([predicted, predicted.sum(axis=0)])
    group["value"] = class_metric_draws(group, predicted, predicted.sum(axis=1), metrics,
                                        zero_division)
    return m, group
