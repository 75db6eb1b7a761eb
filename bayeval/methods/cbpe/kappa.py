r"""The calibration noise of CBPE's V2 and V2b: the concentration :math:`\kappa` of each score
bin's rate, :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))`.

V2b learns :math:`\log\kappa` from how the labelled reference's bins scatter around their
centres: its posterior on a grid (:func:`kappa_posterior`, the marginal Beta-binomial likelihood
of the bins), the mixture the count laws are taken over (:func:`kappa_mixture`) and the Beta
parameters of every bin at each grid point (:func:`beta_grid`; with ``noise="binning"`` the
reference's pooled bins, :func:`reference_bins`). :mod:`bayeval.methods.cbpe.fast` builds the
counts' laws from them; :func:`bayeval.methods.cbpe.models.model` samples the same posterior.
"""

from __future__ import annotations

import numpy as np
import scipy
from scipy import special

__all__ = ["KAPPA_PRIOR", "beta_grid", "kappa_mixture", "kappa_posterior", "reference_bins",
           "shifted_beta"]

KAPPA_PRIOR = (float(np.log(100.0)), 2.0)
r"""Default prior of V2b: :math:`\log\kappa\sim N(\ln 100, 2^2)`."""

_SPAN = 10.0  # the kappa grid covers the prior mean +- _SPAN prior sds
_DROP = 40.0  # and then the part within _DROP nats of the posterior's maximum
_NEGLIGIBLE = 1e-15  # kappa points below this fraction of the largest weight are dropped


def _log_likelihood(log_kappa: np.ndarray, k: np.ndarray, n: np.ndarray,
                    c: np.ndarray) -> np.ndarray:
    r""":math:`\sum_g\log B(k_g+\kappa c_g, n_g-k_g+\kappa(1-c_g))-\log B(\kappa c_g,
    \kappa(1-c_g))` at each grid point (the binomial coefficients are constant)."""
    kappa = np.exp(log_kappa)[:, None]
    a, b = kappa * c, kappa * (1 - c)
    return (special.betaln(k + a, n - k + b) - special.betaln(a, b)).sum(axis=1)


def kappa_posterior(k, n, c, prior=KAPPA_PRIOR, size: int = 61) -> tuple[np.ndarray, np.ndarray]:
    r"""Grid posterior of :math:`\log\kappa` given reference cells (V2b's fast path).

    The log posterior, the prior :math:`\log\kappa\sim N(\mu,\sigma^2)` plus V2b's marginal
    likelihood :math:`k_g\sim\mathrm{BetaBinomial}(n_g,\kappa c_g,\kappa(1-c_g))`, is
    evaluated on 801 points over :math:`\mu\pm10\sigma`, then on ``size`` equally spaced points
    over the range where it is within 40 nats of its maximum. Posterior expectations are sums
    over the grid with the returned weights; for a smooth posterior the equally weighted
    (trapezoid) rule converges geometrically in the spacing, far below Monte-Carlo error.

    Parameters
    ----------
    k, n : array-like of int
        Positives and rows of each reference cell (a score bin of a reference chunk).
    c : array-like of float in (0, 1)
        Centre of each cell (mean calibrated score).
    prior : (mu, sigma)
        Normal prior of :math:`\log\kappa`.
    size : int
        Points of the final grid.

    Returns
    -------
    log_kappa, weights : ndarray
        The grid and normalised posterior weights.

    Examples
    --------
    Three reference cells whose positives sit close to their centres (3 of 10 at 0.3, 8 of 12
    at 0.7, 5 of 10 at 0.5): little sign of calibration noise, so the posterior of
    :math:`\log\kappa` moves above the prior mean :math:`\ln 100 = 4.61`:

    >>> x, w = kappa_posterior([3, 8, 5], [10, 12, 10], [0.3, 0.7, 0.5])
    >>> x.size, round(float(w.sum()), 12)
    (61, 1.0)
    >>> mean = float(x @ w)
    >>> round(mean, 3), round(float(np.sqrt((x - mean) ** 2 @ w)), 3)
    (5.296, 1.665)
    """
    k, n, c = (np.asarray(v, float) for v in (k, n, c))
    mu, sigma = prior

    def log_post(x):
        return _log_likelihood(x, k, n, c) + scipy.stats.norm.logpdf(x, mu, sigma)

    coarse = np.linspace(mu - _SPAN * sigma, mu + _SPAN * sigma, 801)
    lp = log_post(coarse)
    near = np.flatnonzero(lp >= lp.max() - _DROP)
    lo, hi = coarse[max(near[0] - 1, 0)], coarse[min(near[-1] + 1, coarse.size - 1)]
    grid = np.linspace(lo, hi, size)
    lp = log_post(grid)
    weights = np.exp(lp - lp.max())
    return grid, weights / weights.sum()


def kappa_mixture(log_kappa: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The points :math:`\kappa_j` of the grid posterior that the count laws mix over, and their
    weights: points below 1e-15 of the largest weight dropped, the rest renormalised.

    Examples
    --------
    >>> kappa, w = kappa_mixture(np.log([10.0, 100.0, 1000.0]), np.array([0.5, 0.5, 1e-20]))
    >>> kappa.round(6).tolist(), w.tolist()
    ([10.0, 100.0], [0.5, 0.5])
    """
    keep = weights > _NEGLIGIBLE * weights.max()
    return np.exp(log_kappa[keep]), weights[keep] / weights[keep].sum()


def beta_grid(cells: dict[str, np.ndarray], kappa, weights: np.ndarray,
              shared: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, ...]:
    r"""Beta parameters (kappa point x cell) of the cells' rates, and the kappa weights.

    Without ``shared`` (``"beta"``, ``"learned"``):
    :math:`\pi_g\sim\mathrm{Beta}(\kappa c_g,\kappa(1-c_g))` afresh in every chunk. With
    ``shared`` (``"binning"``, :func:`reference_bins`): the calibration error of a bin is
    shared with the reference. Given :math:`\kappa` the bin's rate on the reference has the
    posterior :math:`\pi_b\sim\mathrm{Beta}(\kappa c_b+k_b,\kappa(1-c_b)+n_b-k_b)`, and an
    analysis cell of the bin, whose rows have mean calibrated score :math:`c_g`, has the rate
    :math:`\pi_b+c_g-c_b`: its law is taken as the Beta with that mean and
    :math:`\mathrm{Var}\,\pi_b` (so a shift of the scores inside a bin moves the cell's rate,
    instead of giving it the reference bin's).

    Examples
    --------
    >>> a, b, w = beta_grid({"c": np.array([0.2, 0.5])}, [10.0], np.ones(1))
    >>> a.tolist(), b.tolist()
    ([[2.0, 5.0]], [[8.0, 5.0]])

    A cell whose rows sit 0.1 above their reference bin's centre, and one on it:

    >>> shared = (np.array([30.0, 30.0]), np.array([100.0, 100.0]), np.array([0.3, 0.3]))
    >>> a, b, w = beta_grid({"c": np.array([0.4, 0.3])}, [10.0], np.ones(1), shared)
    >>> (a / (a + b)).round(4).tolist(), (a + b).round(1).tolist()
    ([[0.4, 0.3]], [[125.9, 110.0]])
    """
    kappa = np.asarray(kappa, float)[:, None]
    if shared is None:
        return kappa * cells["c"], kappa * (1 - cells["c"]), weights
    k, n, c = shared
    a, b = kappa * c + k, kappa * (1 - c) + n - k
    return (*shifted_beta(a, b, cells["c"] - c), weights)


def shifted_beta(a: np.ndarray, b: np.ndarray, shift: np.ndarray) -> tuple[np.ndarray, ...]:
    r"""Beta parameters with the mean of :math:`\mathrm{Beta}(a, b)` moved by ``shift`` (kept in
    :math:`[10^{-6}, 1-10^{-6}]`) and its variance kept (its concentration bounded below by
    :math:`10^{-3}`).

    Examples
    --------
    >>> [v.round(3).tolist() for v in shifted_beta(np.array([2.0]), np.array([8.0]),
    ...                                            np.array([0.0]))]
    [[2.0], [8.0]]
    """
    total = a + b
    var = a * b / (total**2 * (total + 1))
    mean = np.clip(a / total + shift, 1e-6, 1 - 1e-6)
    concentration = np.maximum(mean * (1 - mean) / var - 1, 1e-3)
    return mean * concentration, (1 - mean) * concentration


def reference_bins(cells: dict[str, np.ndarray],
                   ref_bins: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """Reference positives, rows and centre of each analysis cell's bin (0, 0 and the pooled
    analysis centre for a bin without reference rows).

    Examples
    --------
    >>> cells = {"bin": np.array([0, 1, 1]), "n": np.array([2, 1, 3]),
    ...          "c": np.array([0.2, 0.6, 0.8])}
    >>> ref = {"bin": np.array([0]), "k": np.array([3]), "n": np.array([9]),
    ...        "c": np.array([0.3])}
    >>> [v.round(12).tolist() for v in reference_bins(cells, ref)]
    [[3.0, 0.0, 0.0], [9.0, 0.0, 0.0], [0.3, 0.75, 0.75]]
    """
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
