r"""The exact posterior of the judge's Model B (conjugate Beta priors), no sampling.

Model B (:func:`bayeval.methods.judge.models.model`, ``variant="b"``) has independent Beta
priors on the judge's rate :math:`p = P(\hat Y = 1)` and the calibration cells :math:`\mu_k =
P(Y = 1 \mid \hat Y = k)`, each with its own binomial likelihood, so the posterior is three
independent Beta laws and :math:`\theta = p\mu_1 + (1 - p)\mu_0` has exact moments and a CDF
computed by quadrature. With priors from one Dirichlet on the 2×2 table (the default) it is
also Model A's posterior: :func:`conjugate_posterior` is the exact check of NUTS on both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy
from scipy import special

from bayeval.methods.judge.fast import Counts

__all__ = ["Posterior", "conjugate_posterior"]


class Posterior(NamedTuple):
    """Exact posterior summaries of the rate and of the finite-sample mean.

    Returned by :func:`conjugate_posterior`.

    Attributes
    ----------
    mean, sd, lower, upper : numpy.ndarray
        Posterior mean, sd and equal-tailed interval of :math:`\\theta`.
    finite_mean, finite_sd : numpy.ndarray
        Posterior mean and sd of the finite-sample mean :math:`\\theta_{FP}`.

    Examples
    --------
    >>> uniform = {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}
    >>> post = conjugate_posterior(Counts(36, 14, 29, 121, t1=627, t0=1173), uniform, 0.95)
    >>> round(float(post.mean), 4), round(float(post.finite_sd), 4)
    (0.2628, 0.0258)
    """

    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    finite_mean: np.ndarray
    finite_sd: np.ndarray


def _beta_moments(a, b):
    """E[x], E[x^2], E[x(1-x)], E[(1-x)^2] of Beta(a, b)."""
    s = a + b
    return a / s, a * (a + 1) / (s * (s + 1)), a * b / (s * (s + 1)), b * (b + 1) / (s * (s + 1))


def _theta_cdf(t: float, p_ab, mu1_ab, mu0_ab, nodes) -> float:
    r""":math:`P(p\mu_1 + (1-p)\mu_0 \le t) = E_{p,\mu_0} F_{\mu_1}((t - (1-p)\mu_0)/p)`, by
    Gauss–Legendre quadrature over the quantiles of :math:`p` and :math:`\mu_0`."""
    u, w = nodes
    p = special.betaincinv(*p_ab, u)[:, None]
    mu0 = special.betaincinv(*mu0_ab, u)[None, :]
    x = np.clip((t - (1 - p) * mu0) / p, 0.0, 1.0)
    return float(w @ special.betainc(*mu1_ab, x) @ w)


def _quantile(q: float, p_ab, mu1_ab, mu0_ab, nodes) -> float:
    return scipy.optimize.brentq(lambda t: _theta_cdf(t, p_ab, mu1_ab, mu0_ab, nodes) - q, 0.0, 1.0,
                                 xtol=1e-12)


def conjugate_posterior(c: Counts, prior: dict, ci_prob: float,
                        nodes: int = 128) -> Posterior:
    r"""Exact posterior of :math:`\theta` and of the finite-sample mean under Model B.

    With Beta priors ``prior = {"p": (a_p, b_p), "mu1": (a_1, b_1), "mu0": (a_0, b_0)}``,

    .. math::
        p \sim \mathrm{Beta}(a_p + T_1 + c_1, b_p + T_0 + c_0),\;
        \mu_1 \sim \mathrm{Beta}(a_1 + n_{11}, b_1 + n_{01}),\;
        \mu_0 \sim \mathrm{Beta}(a_0 + n_{10}, b_0 + n_{00}),

    independent, and :math:`\theta = p\mu_1 + (1-p)\mu_0`. Mean and sd are exact from Beta
    moments; the equal-tailed interval of level ``ci_prob`` inverts the CDF computed by
    Gauss–Legendre quadrature with ``nodes`` × ``nodes`` points (error about 1e-6 in probability).
    The finite-sample mean :math:`\theta_{FP} = (m_1 + S_1 + S_0)/N`, with the hidden positives
    :math:`S_1 \mid \mu_1 \sim \mathrm{Bin}(T_1, \mu_1)`, :math:`S_0 \mid \mu_0 \sim
    \mathrm{Bin}(T_0, \mu_0)`, has exact mean and sd (beta-binomial laws). Works element-wise
    on arrays of counts.

    Parameters
    ----------
    c : Counts
        Counts, or arrays of them.
    prior : dict
        Beta ``(a, b)`` of ``p``, ``mu1`` and ``mu0``.
    ci_prob : float
        Level of the equal-tailed interval.
    nodes : int
        Gauss–Legendre nodes per dimension.

    Returns
    -------
    Posterior

    Examples
    --------
    >>> uniform = {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}
    >>> post = conjugate_posterior(Counts(36, 14, 29, 121, t1=627, t0=1173), uniform, 0.95)
    >>> [round(float(v), 4) for v in post]
    [0.2628, 0.0276, 0.21, 0.3181, 0.2623, 0.0258]
    """
    c = Counts(*(np.asarray(v, dtype=float) for v in c))
    c1, c0 = c.n11 + c.n01, c.n10 + c.n00
    p_ab = (prior["p"][0] + c.t1 + c1, prior["p"][1] + c.t0 + c0)
    mu1_ab = (prior["mu1"][0] + c.n11, prior["mu1"][1] + c.n01)
    mu0_ab = (prior["mu0"][0] + c.n10, prior["mu0"][1] + c.n00)
    (p1, p2, pq, q2), (m1, m12, m1v, _), (m0, m02, m0v, _) = (
        _beta_moments(*ab) for ab in (p_ab, mu1_ab, mu0_ab))
    mean = p1 * m1 + (1 - p1) * m0
    sd = np.sqrt(p2 * m12 + 2 * pq * m1 * m0 + q2 * m02 - mean**2)
    x, w = np.polynomial.legendre.leggauss(nodes)
    grid = ((x + 1) / 2, w / 2)
    tail = (1 - ci_prob) / 2
    bounds = np.empty((2, *mean.shape))
    for idx in np.ndindex(mean.shape):
        args = [tuple(np.asarray(v)[idx] for v in ab) for ab in (p_ab, mu1_ab, mu0_ab)]
        bounds[(0, *idx)] = _quantile(tail, *args, grid)
        bounds[(1, *idx)] = _quantile(1 - tail, *args, grid)
    n_total = c.m + c.n
    finite_mean = (c.n11 + c.n10 + c.t1 * m1 + c.t0 * m0) / n_total
    finite_var = (c.t1 * m1v + c.t1**2 * (m12 - m1**2) + c.t0 * m0v
                  + c.t0**2 * (m02 - m0**2)) / n_total**2
    return Posterior(mean, sd, bounds[0], bounds[1], finite_mean, np.sqrt(finite_var))
