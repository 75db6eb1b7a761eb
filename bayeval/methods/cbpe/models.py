r"""CBPE's generative models in PyMC: ``model(..., variant="v0" | "v2" | "v2b")``.

No label of the monitored window is observed, so the metrics' law is a forward simulation
(``pm.sample_prior_predictive``) of the latent labels; MCMC is needed only where the noise
concentration :math:`\kappa` is learned from labelled reference data.

* **V0** (``variant="v0"``, the model of Kivimäki et al.): :math:`Y_i\sim\mathrm{Bernoulli}(p_i)`
  independently, written as :math:`Y_i=\mathbb 1[u_i<p_i]` with :math:`u_i\sim U(0,1)`: the same
  law, and a model with continuous free variables only, which NUTS can also sample.
* **V2** (``variant="v2"``, shared Beta calibration noise): cells :math:`g` (score bins split at
  the threshold, per chunk) with :math:`n_g` rows, centre :math:`c_g` (mean calibrated score)
  and prediction :math:`\hat y_g`;
  :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))`,
  :math:`K_g\mid\pi_g\sim\mathrm{Binomial}(n_g,\pi_g)`. Singleton cells give V0 for any
  :math:`\kappa`; :math:`\kappa\to\infty` gives :math:`\mathrm{Binomial}(n_g, c_g)`.
* **V2b** (``variant="v2b"``): :math:`\log\kappa\sim N(\mu,\sigma^2)` and, on labelled
  reference cells (bins x reference chunks), the marginal
  :math:`k_g\sim\mathrm{BetaBinomial}(n_g,\kappa c_g,\kappa(1-c_g))`: NUTS on one parameter,
  whatever the number of rows. :func:`predictive_v2b` re-declares :math:`\log\kappa` and adds
  V2's cells of the analysis chunks, for ``pm.sample_posterior_predictive``: fresh
  :math:`\pi_g` per chunk (chunk-to-chunk calibration drift of the size seen between reference
  chunks).

Every model has deterministic ``tp`` and ``fn`` over ``chunk`` (the chunks, then the whole
period :data:`bayeval.chunks.WHOLE`); the metrics are :func:`bayeval.metrics.from_counts` of
them. Fast paths: :mod:`bayeval.methods.cbpe.fast`, with
:func:`~bayeval.methods.cbpe.kappa.kappa_posterior` for V2b.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import xarray as xr

from bayeval.chunks import WHOLE
from bayeval.methods.cbpe.kappa import KAPPA_PRIOR
from bayeval.metrics import auc_value, metric_value
from bayeval.sampling import DEFAULTS
from bayeval.validation import as_choice

__all__ = ["VARIANTS", "auc_of_draws", "bin_cells", "bin_edges", "forward", "metric_draws",
           "model", "posterior_predictive", "predictive_v2b"]

VARIANTS = ("v0", "v2", "v2b")
"""The variants of :func:`model`."""

CENTRE_EPS = 1e-6
"""Cell centres are kept in [CENTRE_EPS, 1 - CENTRE_EPS], so that Beta parameters are > 0."""


def bin_edges(scores: np.ndarray, y_pred: np.ndarray, n_bins: int) -> list[np.ndarray]:
    r"""Inner edges of ``n_bins`` equal-count score bins per predicted class (0, then 1).

    The cells of V2 are score bins split at the threshold , so that every
    cell has one prediction :math:`\hat y_g`. The edges of class :math:`j` are the quantiles
    :math:`q_{b/B}` (:math:`b=1,\dots,B-1`) of the scores of the rows predicted :math:`j`.

    Parameters
    ----------
    scores : ndarray
        Scores of the rows that define the bins (the reference rows when there are any).
    y_pred : ndarray of 0/1
        Their predictions.
    n_bins : int
        Bins per predicted class, B >= 1.

    Returns
    -------
    list of two ndarrays
        The ``n_bins - 1`` inner edges of the rows predicted 0, then 1 (empty where no row has
        that prediction).

    Examples
    --------
    >>> scores = np.array([0.1, 0.35, 0.3, 0.8, 0.6, 0.95])
    >>> [e.tolist() for e in bin_edges(scores, (scores > 0.5).astype(int), 2)]
    [[0.3], [0.8]]
    >>> [e.tolist() for e in bin_edges(np.array([0.2, 0.4]), np.array([0, 0]), 2)]
    [[0.30000000000000004], []]
    """
    qs = np.arange(1, n_bins) / n_bins
    return [np.quantile(scores[y_pred == cls], qs) if (y_pred == cls).any() else np.empty(0)
            for cls in (0, 1)]


def bin_cells(scores, p, y_pred, codes, edges, labels=None) -> dict[str, np.ndarray]:
    r"""The cells of V2 and V2b: the non-empty (chunk, score bin, predicted class) triples.

    Parameters
    ----------
    scores, p, y_pred : ndarray
        Raw scores (they pick the bin), calibrated probabilities and predictions per row.
    codes : ndarray of int
        The chunk of each row.
    edges : list of two ndarrays
        :func:`bin_edges` (bins of rows predicted 0, then 1).
    labels : ndarray of 0/1, optional
        Gives ``k``, the positives of each cell (reference data).

    Returns
    -------
    dict of ndarray
        ``n`` (rows :math:`n_g`), ``c`` (centre :math:`c_g = \frac1{n_g}\sum_{i\in g}p_i`,
        kept in :math:`[\epsilon, 1-\epsilon]`, :math:`\epsilon` = :data:`CENTRE_EPS`),
        ``y_pred``, ``chunk``, ``bin`` (the score bin, ``0..2B-1``, the rows predicted 1 from
        ``B``) and, with ``labels``, ``k`` (:math:`k_g=\sum_{i\in g}y_i`): one entry per cell,
        ordered by chunk, then predicted class, then bin.

    Examples
    --------
    Two chunks of three rows; calibrated probabilities equal to the scores:

    >>> scores = np.array([0.1, 0.35, 0.3, 0.8, 0.6, 0.95])
    >>> y_pred = (scores > 0.5).astype(int)
    >>> cells = bin_cells(scores, scores, y_pred, np.array([0, 0, 0, 1, 1, 1]),
    ...                   bin_edges(scores, y_pred, 2), labels=np.array([0, 1, 0, 1, 1, 1]))
    >>> {key: value.round(6).tolist() for key, value in cells.items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'n': [1, 2, 1, 2], 'chunk': [0, 0, 1, 1], 'y_pred': [0, 0, 1, 1],
     'c': [0.1, 0.325, 0.6, 0.875], 'bin': [0, 1, 2, 3], 'k': [0, 1, 1, 2]}
    """
    n_bins = max(e.size for e in edges) + 1
    bins = np.where(y_pred == 1, np.searchsorted(edges[1], scores, side="right") + n_bins,
                    np.searchsorted(edges[0], scores, side="right"))
    keys, where = np.unique(codes * 2 * n_bins + bins, return_inverse=True)
    n = np.bincount(where)
    out = {"n": n, "chunk": keys // (2 * n_bins),
           "y_pred": (keys % (2 * n_bins) >= n_bins).astype(np.int64),
           "c": np.clip(np.bincount(where, weights=p) / n, CENTRE_EPS, 1 - CENTRE_EPS)}
    out["bin"] = keys % (2 * n_bins)
    if labels is not None:
        out["k"] = np.bincount(where, weights=labels).astype(np.int64)
    return out


def _chunks(chunk: Any, chunk_labels: Any, size: int) -> tuple[np.ndarray, list[str]]:
    """Chunk codes (default: all 0) and labels (default: one chunk named by its rows)."""
    codes = np.zeros(size, dtype=np.int64) if chunk is None else np.asarray(chunk, np.int64)
    labels = ([f"[0:{size - 1}]"] if chunk_labels is None and codes.max(initial=0) == 0
              else [str(k) for k in chunk_labels] if chunk_labels is not None
              else [str(k) for k in range(codes.max() + 1)])
    return codes, labels


def _per_chunk(name: str, values, codes: np.ndarray, labels: list[str]) -> None:
    """Deterministic ``name`` over ``chunk``: sums of ``values`` per chunk, then their total."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.extra_ops import bincount

    sums = bincount(codes, weights=values, minlength=len(labels))
    pm.Deterministic(name, pt.concatenate([sums, sums.sum(keepdims=True)]), dims="chunk")


def _v0(p, y_pred, chunk=None, chunk_labels=None):
    r"""V0: latent labels :math:`Y_i=\mathbb 1[u_i<p_i]`, :math:`u_i\sim U(0,1)`.

    Parameters
    ----------
    p : array-like of float in [0, 1], shape (n,) or (draws, n)
        Calibrated probabilities of the positive class, one per row; or one row per draw of the
        calibration map (:meth:`bayeval.calibration_map.MapPosterior.predict`), of which
        :math:`\lfloor Mv\rfloor`, :math:`v\sim U(0,1)` (free ``map_u``), picks one for every
        forward draw.
    y_pred : sequence of 0/1
        The predictions.
    chunk : sequence of int, optional
        The chunk of each row, an index into ``chunk_labels`` (default: one chunk).
    chunk_labels : sequence of str, optional

    Returns
    -------
    pm.Model
        Free ``u`` (dim ``row``); deterministic ``y`` (row), ``tp`` and ``fn`` (dim ``chunk``:
        the chunks, then ``"all"``). Forward-simulate it with ``pm.sample_prior_predictive``;
        NUTS samples it too (the posterior is the prior).

    Examples
    --------
    >>> import pymc as pm
    >>> m = model([0.2, 0.9, 0.6], [0, 1, 1], variant="v0")
    >>> [v.name for v in m.free_RVs], m.coords["chunk"]
    (['u'], ('[0:2]', 'all'))

    At :math:`u = (0.5, 0.5, 0.5)` the labels are :math:`\mathbb 1[u_i < p_i] = (0, 1, 1)`,
    both positives are predicted positive (``tp`` 2, ``fn`` 0, per chunk and in all):

    >>> at = pm.do(m, {"u": [0.5, 0.5, 0.5]})
    >>> pm.draw(at["y"]).tolist(), pm.draw(at["tp"]).tolist(), pm.draw(at["fn"]).tolist()
    ([0, 1, 1], [2, 2], [0, 0])
    """
    import pymc as pm
    import pytensor.tensor as pt

    p, y_pred = np.asarray(p, float), np.asarray(y_pred, np.int64)
    codes, labels = _chunks(chunk, chunk_labels, y_pred.size)
    with pm.Model(coords={"row": np.arange(y_pred.size), "chunk": [*labels, WHOLE]}) as m:
        if p.ndim == 2:  # draw floor(M v) of the map, v ~ U(0, 1): continuous free variables
            v = pm.Uniform("map_u", 0.0, 1.0)
            p = pm.Data("map_p", p)[pt.floor(v * p.shape[0]).astype("int64")]
        u = pm.Uniform("u", 0.0, 1.0, dims="row")
        y = pm.Deterministic("y", pt.lt(u, p).astype("int64"), dims="row")
        _per_chunk("tp", y * y_pred, codes, labels)
        _per_chunk("fn", y * (1 - y_pred), codes, labels)
    return m


def _cells(n, c, y_pred, kappa, codes, labels, latent: str) -> None:
    """V2's cells inside the current model: pi, k (latent ``binomial`` or ``uniform``), tp, fn."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.extra_ops import bincount

    n, c, y_pred = np.asarray(n, np.int64), np.asarray(c, float), np.asarray(y_pred, np.int64)
    pi = pm.Beta("pi", alpha=kappa * c, beta=kappa * (1 - c), dims="cell")
    if latent == "binomial":
        k = pm.Binomial("k", n=n, p=pi, dims="cell")
    else:
        cell = np.repeat(np.arange(n.size), n)
        u = pm.Uniform("u", 0.0, 1.0, shape=int(n.sum()))
        hits = pt.lt(u, pi[cell]).astype("int64")
        k = pm.Deterministic("k", bincount(cell, weights=hits, minlength=n.size), dims="cell")
    _per_chunk("tp", k * y_pred, codes, labels)
    _per_chunk("fn", k * (1 - y_pred), codes, labels)


def _v2(n, c, y_pred, kappa, chunk=None, chunk_labels=None, latent="binomial"):
    r"""V2: shared Beta calibration noise per cell, :math:`\kappa` given.

    Parameters
    ----------
    n : sequence of int
        Rows of each cell (a score bin of one chunk, on one side of the threshold).
    c : sequence of float in (0, 1)
        Centre of each cell: the mean calibrated score of its rows.
    y_pred : sequence of 0/1
        The prediction of each cell's rows.
    kappa : float
        Concentration: :math:`\mathrm{Var}\,\pi_g=c_g(1-c_g)/(\kappa+1)`.
    chunk : sequence of int, optional
        The chunk of each cell (default: one chunk).
    chunk_labels : sequence of str, optional
    latent : {"binomial", "uniform"}
        ``binomial``: :math:`K_g\sim\mathrm{Binomial}(n_g,\pi_g)`, for forward simulation (cost
        independent of the rows); ``uniform``: :math:`K_g=\sum_{i\in g}\mathbb 1[u_i<\pi_g]`,
        the same law with continuous free variables only, so that NUTS can sample it.

    Returns
    -------
    pm.Model
        ``pi`` (cell), ``k`` (cell; latent ``uniform``: ``u`` per row and a deterministic ``k``),
        deterministic ``tp`` :math:`=\sum_{g:\hat y_g=1}K_g` and ``fn``
        :math:`=\sum_{g:\hat y_g=0}K_g` (chunk).

    Examples
    --------
    With :math:`\kappa = 10` the cells' probabilities are :math:`\mathrm{Beta}(3, 7)` and
    :math:`\mathrm{Beta}(8, 2)`:

    >>> import pymc as pm
    >>> from scipy import stats
    >>> m = model([3, 4], [0.3, 0.8], [0, 1], 10.0, variant="v2")
    >>> [v.name for v in m.free_RVs]
    ['pi', 'k']
    >>> logp = pm.logp(m["pi"], [0.3, 0.8]).eval()
    >>> direct = stats.beta.logpdf([0.3, 0.8], [3, 8], [7, 2])
    >>> logp.round(4).tolist(), bool(np.allclose(logp, direct, rtol=1e-12))
    ([0.9814, 1.1052], True)

    One positive in the cell predicted 0 and three in the cell predicted 1:

    >>> at = pm.do(m, {"k": [1, 3]})
    >>> pm.draw(at["tp"]).tolist(), pm.draw(at["fn"]).tolist()
    ([3, 3], [1, 1])
    """
    import pymc as pm

    codes, labels = _chunks(chunk, chunk_labels, len(n))
    with pm.Model(coords={"cell": np.arange(len(n)), "chunk": [*labels, WHOLE]}) as m:
        _cells(n, c, y_pred, float(kappa), codes, labels, latent)
    return m


def _v2b(k, n, c, prior=KAPPA_PRIOR):
    r"""V2b: :math:`\kappa` learned from labelled reference cells (NUTS on :math:`\log\kappa`).

    .. math:: \log\kappa\sim N(\mu,\sigma^2),\qquad
              k_g\sim\mathrm{BetaBinomial}(n_g,\kappa c_g,\kappa(1-c_g))\ \text{(observed)}.

    Parameters
    ----------
    k, n : sequence of int
        Positives and rows of each reference cell (a score bin of a reference chunk).
    c : sequence of float in (0, 1)
        Centre of each cell (mean calibrated score).
    prior : (mu, sigma)
        Normal prior of :math:`\log\kappa`.

    Returns
    -------
    pm.Model
        Free ``log_kappa``, deterministic ``kappa`` and observed ``k`` (dim ``cell``).

    Examples
    --------
    >>> from scipy import stats
    >>> m = model([3, 8], [10, 12], [0.3, 0.7], variant="v2b")
    >>> [v.name for v in m.free_RVs]
    ['log_kappa']

    Its log density at :math:`\kappa = 10` (Beta-binomials with parameters (3, 7) and (7, 3)):

    >>> logp = float(m.compile_logp()({"log_kappa": np.log(10.0)}))
    >>> direct = (stats.norm.logpdf(np.log(10.0), *KAPPA_PRIOR)
    ...           + stats.betabinom.logpmf([3, 8], [10, 12], [3, 7], [7, 3]).sum())
    >>> round(logp, 6), bool(np.isclose(logp, direct, rtol=1e-8))
    (-5.83381, True)
    """
    import pymc as pm
    import pytensor.tensor as pt

    c = np.asarray(c, float)
    with pm.Model(coords={"cell": np.arange(c.size)}) as m:
        log_kappa = pm.Normal("log_kappa", mu=prior[0], sigma=prior[1])
        kappa = pm.Deterministic("kappa", pt.exp(log_kappa))
        pm.BetaBinomial("k", n=np.asarray(n, np.int64), alpha=kappa * c,
                        beta=kappa * (1 - c), observed=np.asarray(k, np.int64), dims="cell")
    return m


def model(*args: Any, variant: str, **kwargs: Any):
    r"""CBPE's PyMC model ``variant``, built from the data of its cells or rows.

    Parameters
    ----------
    *args, **kwargs
        The data of the variant, by position or by name:

        * ``"v0"``: ``p, y_pred, chunk=None, chunk_labels=None``: calibrated probabilities and
          predictions per row, the chunk of each row (an index into ``chunk_labels``; default
          one chunk). Free ``u`` (dim ``row``); deterministic ``y`` (row), ``tp`` and ``fn``
          (dim ``chunk``: the chunks, then ``"all"``).
        * ``"v2"``: ``n, c, y_pred, kappa, chunk=None, chunk_labels=None,
          latent="binomial"``: rows, centre (mean calibrated score) and prediction per cell,
          the concentration :math:`\kappa`, the chunk of each cell; ``latent="uniform"`` writes
          :math:`K_g=\sum_{i\in g}\mathbb 1[u_i<\pi_g]` (continuous free variables only, for
          NUTS) instead of :math:`K_g\sim\mathrm{Binomial}(n_g,\pi_g)`. ``pi`` and ``k``
          (cell), deterministic ``tp`` and ``fn`` (chunk).
        * ``"v2b"``: ``k, n, c, prior=KAPPA_PRIOR``: positives, rows and centre of each labelled
          reference cell, the normal prior ``(mu, sigma)`` of :math:`\log\kappa`. Free
          ``log_kappa``, deterministic ``kappa``, observed ``k`` (cell).
    variant : {"v0", "v2", "v2b"}
        The model (see the module docstring for the math).

    Returns
    -------
    pm.Model
        V0 and V2 are forward-simulated (:func:`forward`); V2b is sampled by NUTS, then its
        analysis chunks by :func:`predictive_v2b` and :func:`posterior_predictive`.

    Examples
    --------
    >>> m = model([0.2, 0.9, 0.6], [0, 1, 1], variant="v0")
    >>> [v.name for v in m.free_RVs], m.coords["chunk"]
    (['u'], ('[0:2]', 'all'))
    >>> [v.name for v in model(k=[3, 8], n=[10, 12], c=[0.3, 0.7], variant="v2b").free_RVs]
    ['log_kappa']
    """
    build = {"v0": _v0, "v2": _v2, "v2b": _v2b}[as_choice(variant, "variant", VARIANTS)]
    return build(*args, **kwargs)


def predictive_v2b(n, c, y_pred, chunk=None, chunk_labels=None, prior=KAPPA_PRIOR, bins=None,
                   reference=None):
    r"""The analysis chunks of V2b, for ``pm.sample_posterior_predictive``.

    Re-declares ``log_kappa`` (its draws come from the posterior of V2b) and adds
    V2's cells (arguments as in V2):
    :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))`,
    :math:`K_g\sim\mathrm{Binomial}(n_g,\pi_g)`: fresh rates in every chunk (semantics (b),
    ``noise="learned"``). With ``bins`` and ``reference`` (semantics (a),
    ``noise="binning"``) the cells of one bin share its calibration error: the bin's rate is
    drawn from its posterior given the reference,
    :math:`\pi_b\sim\mathrm{Beta}(\kappa c_b+k_b,\kappa(1-c_b)+n_b-k_b)`, and a cell's rate
    is :math:`\pi_b+c_g-c_b` (its rows' mean calibrated score :math:`c_g` against the bin's
    reference centre :math:`c_b`).
    Never give it to ``pm.sample``: ``k`` is an unobserved discrete variable.

    Parameters
    ----------
    n, c, y_pred, chunk, chunk_labels
        The analysis cells, as in V2.
    prior : (mu, sigma)
        Normal prior of :math:`\log\kappa` (the same as V2b's).
    bins : sequence of int, optional
        The score bin of each cell.
    reference : (k, n, c), optional
        Per cell: the positives, rows and centre of the reference rows in its bin.

    Returns
    -------
    pm.Model
        Free ``log_kappa``, ``pi`` (cell, or ``bin`` with ``bins``) and the discrete ``k``
        (cell); deterministic ``tp`` and ``fn`` (chunk). See :func:`posterior_predictive` for
        its use.

    Examples
    --------
    >>> m = predictive_v2b([3, 4], [0.3, 0.8], [0, 1], chunk=[0, 1], chunk_labels=["mon", "tue"])
    >>> [(v.name, v.dtype) for v in m.free_RVs]
    [('log_kappa', 'float64'), ('pi', 'float64'), ('k', 'int64')]
    >>> m.coords["chunk"]
    ('mon', 'tue', 'all')
    """
    import pymc as pm
    import pytensor.tensor as pt

    codes, labels = _chunks(chunk, chunk_labels, len(n))
    with pm.Model(coords={"cell": np.arange(len(n)), "chunk": [*labels, WHOLE]}) as m:
        log_kappa = pm.Normal("log_kappa", mu=prior[0], sigma=prior[1])
        if bins is None:
            _cells(n, c, y_pred, pt.exp(log_kappa), codes, labels, "binomial")
        else:
            kappa = pt.exp(log_kappa)
            names, first, where = np.unique(bins, return_index=True, return_inverse=True)
            m.add_coord("bin", names)
            k_ref, n_ref, c_ref = (np.asarray(v, float)[first] for v in reference)
            pi = pm.Beta("pi", alpha=kappa * c_ref + k_ref,
                         beta=kappa * (1 - c_ref) + n_ref - k_ref, dims="bin")
            y_pred = np.asarray(y_pred, np.int64)
            rate = pt.clip(pi[where] + np.asarray(c, float) - c_ref[where], CENTRE_EPS,
                           1 - CENTRE_EPS)  # the bin's calibration error, at the cell's centre
            k = pm.Binomial("k", n=np.asarray(n, np.int64), p=rate, dims="cell")
            _per_chunk("tp", k * y_pred, codes, labels)
            _per_chunk("fn", k * (1 - y_pred), codes, labels)
    return m


@contextmanager
def _quiet() -> Iterator[None]:
    """PyMC's logger at ERROR (no "Sampling: [...]" lines)."""
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def forward(model, var_names: list[str], draws: int, random_seed) -> xr.Dataset:
    r"""Independent forward draws of ``var_names`` (``pm.sample_prior_predictive``).

    With no label observed, the law of the monitored window's counts is the model's prior
    predictive: no MCMC.

    Parameters
    ----------
    model : pm.Model
        ``model(..., variant="v0")`` or ``"v2"``.
    var_names : list of str
        Variables to draw (e.g. ``["tp", "fn"]``; ``"y"`` for the labels of V0).
    draws : int
        Number of draws.
    random_seed : int, Generator or None
        The same seed gives the same draws.

    Returns
    -------
    xarray.Dataset
        ``var_names`` over ``chain`` (one), ``draw`` and their own dimensions.

    Examples
    --------
    V0 with probabilities 0.2 (predicted 0), 0.9 and 0.6 (predicted 1):
    :math:`\mathrm E\,TP = 0.9 + 0.6`, :math:`\mathrm E\,FN = 0.2`:

    >>> v0 = model([0.2, 0.9, 0.6], [0, 1, 1], variant="v0")
    >>> group = forward(v0, ["tp", "fn"], 4000, 0)
    >>> dict(group["tp"].sizes)
    {'chain': 1, 'draw': 4000, 'chunk': 2}
    >>> group["tp"].mean(("chain", "draw")).round(2).values.tolist()
    [1.5, 1.5]
    >>> round(float(group["fn"].sel(chunk="all").mean()), 1)
    0.2
    """
    import pymc as pm

    with _quiet():
        tree = pm.sample_prior_predictive(draws=draws, model=model, var_names=var_names,
                                          random_seed=random_seed)
    return tree["prior"].to_dataset()


def posterior_predictive(tree: xr.DataTree, model, random_seed) -> xr.Dataset:
    r"""Draws of ``tp`` and ``fn`` from ``model`` at the posterior draws in ``tree``.

    ``pm.sample_posterior_predictive`` of :func:`predictive_v2b`: for each draw of
    :math:`\log\kappa`, fresh :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))` and
    :math:`K_g\sim\mathrm{Binomial}(n_g,\pi_g)`. PyMC's progress bar shows when
    :data:`bayeval.sampling.DEFAULTS` has ``progressbar`` on (the command line's ``--progress``).

    Parameters
    ----------
    tree : xarray.DataTree
        Has a ``posterior`` group with ``log_kappa`` (``chain``, ``draw``), e.g. from sampling
        V2b.
    model : pm.Model
        :func:`predictive_v2b` of the analysis cells.
    random_seed : int, Generator or None

    Returns
    -------
    xarray.Dataset
        ``tp`` and ``fn`` over ``chain``, ``draw`` and ``chunk``.

    Examples
    --------
    Draws of :math:`\log\kappa` from the grid posterior (:func:`kappa_posterior`) stand in for
    NUTS here. Whatever :math:`\kappa`, :math:`\mathrm E\,TP = \sum_{g:\hat y_g=1}n_gc_g
    = 4\times0.8`:

    >>> rng = np.random.default_rng(0)
    >>> from bayeval.methods.cbpe.kappa import kappa_posterior
    >>> x, w = kappa_posterior([3, 8, 5], [10, 12, 10], [0.3, 0.7, 0.5])
    >>> posterior = xr.Dataset({"log_kappa": (("chain", "draw"), rng.choice(x, (1, 2000), p=w))})
    >>> tree = xr.DataTree.from_dict({"posterior": posterior})
    >>> group = posterior_predictive(tree, predictive_v2b([3, 4], [0.3, 0.8], [0, 1]), 1)
    >>> dict(group["tp"].sizes)
    {'chain': 1, 'draw': 2000, 'chunk': 2}
    >>> round(float(group["tp"].sel(chunk="all").mean()), 1)
    3.2
    """
    import pymc as pm

    with _quiet():
        out = pm.sample_posterior_predictive(tree, model=model, var_names=["tp", "fn"],
                                             random_seed=random_seed,
                                             progressbar=DEFAULTS["progressbar"])
    return out["posterior_predictive"].to_dataset()


def metric_draws(group: xr.Dataset, n_pos, n_neg, metrics, zero_division: float, beta: float,
                 auc: np.ndarray | None = None) -> xr.DataArray:
    r"""Metric draws (chain, draw, chunk, metric) from the draws of ``tp`` and ``fn``.

    Every metric is :func:`bayeval.metrics.from_counts` of :math:`TP`,
    :math:`FP = n_+ - TP`, :math:`FN` and :math:`TN = n_- - FN`.

    Parameters
    ----------
    group : xarray.Dataset
        ``tp`` and ``fn`` draws (chain, draw, chunk).
    n_pos, n_neg : array-like
        Predicted positives and negatives per chunk.
    metrics : list of str
        Metric names (:data:`bayeval.metrics`).
    zero_division : float
        Value of an undefined ratio.
    beta : float
        :math:`\beta` of ``fbeta``.
    auc : ndarray, optional
        The ROC-AUC draws (:func:`auc_of_draws`), needed when ``metrics`` has ``roc_auc``.

    Returns
    -------
    xarray.DataArray
        Dimensions of ``tp`` plus ``metric``.

    Examples
    --------
    One chunk with 2 predicted positives and 1 predicted negative; two draws:
    (TP, FN) = (2, 0), all right, and (1, 1), one of three right:

    >>> group = xr.Dataset({"tp": (("chain", "draw", "chunk"), [[[2], [1]]]),
    ...                     "fn": (("chain", "draw", "chunk"), [[[0], [1]]])})
    >>> value = metric_draws(group, [2], [1], ["accuracy", "recall"], 0.0, 1.0)
    >>> value.dims
    ('chain', 'draw', 'chunk', 'metric')
    >>> value.sel(chunk=0, metric="accuracy").round(4).values.tolist()
    [[1.0, 0.3333]]
    >>> value.sel(chunk=0, metric="recall").values.tolist()
    [[1.0, 0.5]]
    """
    tp, fn = group["tp"].values.astype(float), group["fn"].values.astype(float)
    cols = [auc if m == "roc_auc" else
            metric_value(m, tp, n_pos - tp, fn, n_neg - fn, beta, zero_division)
            for m in metrics]
    return xr.DataArray(np.stack(cols, axis=-1), dims=(*group["tp"].dims, "metric"),
                        coords={**group["tp"].coords, "metric": list(metrics)})


def auc_of_draws(y: np.ndarray, scores: np.ndarray, rows: list[np.ndarray],
                 zero_division: float) -> np.ndarray:
    r"""ROC-AUC of every draw of the labels ``y`` (..., row) over each set of ``rows``.

    For each draw, :math:`\mathrm{AUC} = \frac1{n_1n_0}\sum_{i:y_i=1}\sum_{j:y_j=0}
    \big(\mathbb 1[s_i>s_j]+\tfrac12\mathbb 1[s_i=s_j]\big)` (:func:`bayeval.metrics.roc_auc`).

    Parameters
    ----------
    y : ndarray (..., row) of 0/1
        Label draws, e.g. ``y`` of V0 from :func:`forward`.
    scores : ndarray (row,)
        The scores that rank the rows.
    rows : list of index arrays
        The rows of each chunk (then, usually, all rows).
    zero_division : float
        Value when a draw has a single class.

    Returns
    -------
    ndarray (..., len(rows))

    Examples
    --------
    Two draws of four labels; the first ranks both positives (0.9, 0.6) above both negatives,
    the second has one ordered pair in four (0.6 above 0.4):

    >>> y = np.array([[1, 0, 1, 0], [0, 1, 1, 0]])
    >>> scores = np.array([0.9, 0.2, 0.6, 0.4])
    >>> auc_of_draws(y, scores, [np.arange(4), np.array([0, 1])], 0.0).tolist()
    [[1.0, 1.0], [0.25, 0.0]]
    """
    flat = y.reshape(-1, y.shape[-1])
    cols = [auc_value(flat[:, r], scores[r], "half", zero_division) for r in rows]
    return np.stack(cols, axis=-1).reshape(*y.shape[:-1], len(cols))
