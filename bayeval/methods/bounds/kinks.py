r"""The Jensen gaps of the Fréchet ends at their kinks, estimated by empirical Bayes.

Each end of a bound is a sum over (pattern, class) cells of a kinked term: the upper end
:math:`\min(\alpha, \kappa) = \alpha - d^+` and the lower end :math:`d^+`, with
:math:`d = \alpha - \kappa` and the kink :math:`\kappa = \beta` (upper) or :math:`1 - \beta`
(lower). With :math:`\hat d \approx N(d, \sigma^2)` the plug-in term is biased by
:math:`E\hat d^+ - d^+ = \sigma\psi(t)`, :math:`t = d/\sigma`,

.. math:: \psi(t) = \varphi(t) - |t|\,\Phi(-|t|)

(:math:`0.40\sigma` at the kink, :math:`0.08\sigma` at :math:`|t| = 1`). No estimator of
:math:`\psi(t)` from one cell is unbiased (Hirano & Porter, 2012): a correction
:math:`c(\hat t)` has mean :math:`\int c(s)\varphi(s - t)\,ds`, at most
:math:`\varphi(0)\int c` at the kink, while :math:`\int\psi = 1/2`; so a correction right for
cells spread over several sds from their kinks (e.g. the bias at the estimate,
:math:`\sigma\psi(\hat t)`) removes only 40 % of the gap where the cells sit at their kinks,
as they do when a classifier follows the label model.

What is estimable is the sum over many cells. Writing :math:`\omega_i` for cell :math:`i`'s
weight in a bound and :math:`G` for the :math:`\omega`-weighted distribution of the
:math:`t_i`, the compound estimator :math:`\sum_i \omega_i\sigma_i E_G[\psi(t) \mid \hat t_i]`
is unbiased for :math:`\sum_i \omega_i\sigma_i\psi(t_i)` (Robbins, 1956: its mean is
:math:`\int E_G[\psi \mid s]\,\sum_i\omega_i\varphi(s - t_i)\,ds = W E_G\psi`).
:func:`kink_gaps` estimates :math:`G` on a grid of :math:`t` by the EM of the nonparametric
maximum-likelihood mixing distribution (Kiefer & Wolfowitz, 1956; Jiang & Zhang, 2009),
started from the flat grid law and stopped after ``PRIOR_STEPS`` iterations (early stopping
regularises the deconvolution, as in Richardson–Lucy; the fully converged estimate is rougher
and its noise moves every cell's correction at once). Each cell's correction is
:math:`\sigma_i c_i`, :math:`c_i = E_{\hat G}[\psi(t) \mid \hat t_i]`.

Its derivative :math:`dC/d\hat t_i` of the total :math:`C = \sum_j \omega_j c_j` includes the
refitted prior (reverse-mode through the EM iterations): the standard errors then carry the
prior's sampling noise too.
"""

from __future__ import annotations

import numpy as np
import scipy

__all__ = ["PRIOR_STEPS", "TRUNCATE", "gaps_under", "jensen_gap", "kink_gaps"]

#: the grid of kink distances t on which the prior is estimated
GRID = np.linspace(-8.0, 8.0, 161)
#: EM iterations of the prior from its normal start
PRIOR_STEPS = 30
#: the start's least sd (the grid's spacing)
MIN_SPREAD = 0.1
#: the start's share of the flat grid law (no distance starts without mass)
FLAT = 0.01
#: cells farther than this many sds from their kink have no gap (psi < 1e-33)
TRUNCATE = 12.0
#: t-hats are binned at this width for the prior's EM (the posterior is smooth at that scale)
BIN = 0.01


def jensen_gap(t):
    r""":math:`\psi(t) = E(t + Z)^+ - t^+ = \varphi(t) - |t|\,\Phi(-|t|)`, :math:`Z \sim N(0, 1)`.

    Parameters
    ----------
    t : array-like

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> jensen_gap([0.0, 1.0]).round(4).tolist()
    [0.3989, 0.0833]
    """
    a = np.abs(np.asarray(t, dtype=float))
    return np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi) - a * scipy.special.ndtr(-a)


PSI = jensen_gap(GRID)


def _posterior(lik, prior):
    mix = lik @ prior
    return lik * prior / mix[:, None], mix


def gaps_under(t_hat, prior) -> tuple[np.ndarray, np.ndarray]:
    r"""The gaps :math:`c(\hat t) = E_G[\psi(t) \mid \hat t]` and their slopes
    :math:`c'(\hat t) = \mathrm{Cov}_G(\psi(t), t \mid \hat t)` under a fixed law ``prior``
    of the distances (on :data:`GRID`, from :func:`kink_gaps`), for any shape of ``t_hat``
    (0 beyond ``TRUNCATE``; :math:`\hat t` binned at ``BIN``).

    Examples
    --------
    >>> prior = np.exp(-0.5 * GRID**2); prior /= prior.sum()  # G = N(0, 1)
    >>> gap, slope = gaps_under(np.array([0.0, 1.0, 20.0]), prior)
    >>> gap.round(3).tolist(), slope.round(3).tolist()  # c(0) = (sqrt(1.5) - sqrt(.5)) phi(0)
    ([0.207, 0.179, 0.0], [0.0, -0.051, 0.0])
    """
    t_hat = np.asarray(t_hat, dtype=float)
    gap, slope = np.zeros(t_hat.shape), np.zeros(t_hat.shape)
    near = np.abs(t_hat) < TRUNCATE
    if prior is None or not near.any():
        return gap, slope
    # one posterior per bin between the least and the largest, looked up (no sort)
    where = np.rint(t_hat[near] / BIN).astype(np.int64)
    first = where.min()
    bins = np.arange(first, where.max() + 1) * BIN
    post, _ = _posterior(np.exp(-0.5 * (GRID[None, :] - bins[:, None]) ** 2), prior)
    c = post @ PSI
    where -= first
    gap[near], slope[near] = c[where], (post @ (PSI * GRID) - c * (post @ GRID))[where]
    return gap, slope


def _bins(rounded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rounded, return_inverse=True)`` of whole numbers, counted rather than
    sorted when their range is not much larger than their number."""
    low = rounded.min()
    if rounded.max() - low > 4 * rounded.size + 1024:
        binned, inverse = np.unique(rounded, return_inverse=True)
        return binned, inverse.ravel()
    index = (rounded - low).astype(np.int64)
    used = np.flatnonzero(np.bincount(index))
    lookup = np.zeros(used[-1] + 1, dtype=np.int64)
    lookup[used] = np.arange(used.size)
    return used + low, lookup[index]


def kink_gaps(t_hat, weight) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    r"""Empirical-Bayes Jensen gaps :math:`c_i = E_{\hat G}[\psi(t) \mid \hat t_i]` of cells
    :math:`\hat t_i \sim N(t_i, 1)`, and the derivative of their weighted total.

    Parameters
    ----------
    t_hat : float array
        :math:`\hat t_i = (\hat\alpha_i - \hat\kappa_i)/\sigma_i`; cells with
        :math:`|\hat t_i| \ge` ``TRUNCATE`` or no weight get 0.
    weight : float array, same shape
        :math:`\omega_i \ge 0`, each cell's weight in the bound (the prior is the
        :math:`\omega`-weighted law of the :math:`t_i`).

    Returns
    -------
    gap : float array, same shape
        :math:`c_i` (in units of :math:`\sigma_i`).
    slope : float array, same shape
        :math:`\omega_i^{-1}\,dC/d\hat t_i`, :math:`C = \sum_j\omega_j c_j/\sum_j\omega_j`:
        the derivative of cell :math:`i`'s share, the refitted prior's included (reverse
        mode through the EM steps).
    prior : float array (GRID.size,) or None
        :math:`\hat G` on :data:`GRID` (None when no cell is near its kink), for
        :func:`gaps_under`.

    Examples
    --------
    >>> gap, slope, prior = kink_gaps(np.zeros(50), np.ones(50))  # every cell at its kink
    >>> bool(abs(gap[0] - jensen_gap(0.0)) < 0.1)
    True
    """
    t_hat, weight = np.asarray(t_hat, dtype=float), np.asarray(weight, dtype=float)
    gap, slope = np.zeros(t_hat.shape), np.zeros(t_hat.shape)
    near = (np.abs(t_hat) < TRUNCATE) & (weight > 0)
    if not near.any():
        return gap, slope, None
    # cells share a likelihood row when their t-hats fall in one bin
    binned, cell_bin = _bins(np.rint(t_hat[near] / BIN))
    t_bin = binned * BIN
    w_bin = np.bincount(cell_bin, weight[near] / weight[near].sum())
    lik = np.exp(-0.5 * (GRID[None, :] - t_bin[:, None]) ** 2)
    # the start: the normal law whose convolution with N(0, 1) has the t-hats' mean and
    # variance, with a little of the flat law
    mean = w_bin @ t_bin
    spread = max(w_bin @ (t_bin - mean) ** 2 - 1.0, MIN_SPREAD**2)
    normal = -0.5 * (GRID - mean) ** 2 / spread
    normal = np.exp(normal - normal.max())
    normal /= normal.sum()
    priors = [(1 - FLAT) * normal + FLAT / GRID.size]
    for _ in range(PRIOR_STEPS):
        priors.append(w_bin @ _posterior(lik, priors[-1])[0])
    post, mix = _posterior(lik, priors[-1])
    c = post @ PSI
    # dC/dt_b / w_b: the last posterior's own, Cov(psi(t), t | t_hat) (d log lik / d t_hat =
    # t - t_hat), then each EM step's, d prior'_m / d t_b = w_b P_bm (u_m - E[u | t_b]),
    # with lam = dC/dprior carried back through the steps
    total = post @ (PSI * GRID) - c * (post @ GRID)
    lam = (w_bin[:, None] * lik / mix[:, None] * (PSI[None, :] - c[:, None])).sum(axis=0)
    for prior in reversed(priors[:-1]):
        post, mix = _posterior(lik, prior)
        lam_b = post @ lam
        total += post @ (lam * GRID) - lam_b * (post @ GRID)
        lam = (w_bin[:, None] * lik / mix[:, None] * (lam[None, :] - lam_b[:, None])).sum(axis=0)
    # and the start's: d start / d mean and d start / d spread, times d mean / d t_b = w_b and
    # d spread / d t_b = 2 w_b (t_b - mean) (0 at the floor)
    centred = GRID - mean
    d_mean = (1 - FLAT) * normal * (centred / spread - normal @ (centred / spread))
    d_spread = (1 - FLAT) * normal * (centred**2 - normal @ centred**2) / (2 * spread**2)
    floor = spread <= MIN_SPREAD**2
    total += lam @ d_mean + (0.0 if floor else 2 * (t_bin - mean) * (lam @ d_spread))
    gap[near], slope[near] = c[cell_bin], total[cell_bin]
    return gap, slope, priors[-1]
