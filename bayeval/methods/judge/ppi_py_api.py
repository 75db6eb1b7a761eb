r"""ppi_py's interface for a 1-D mean: the same numbers, without numba or statsmodels.

ppi_py's names: ``Y`` and ``Yhat`` are the :math:`n` labelled items, ``Yhat_unlabeled`` the
:math:`N` others (:func:`bayeval.judge` calls them :math:`m` and :math:`n`); ``w`` and
``w_unlabeled`` are sampling weights of each sample, rescaled to mean 1
(:func:`~bayeval.methods.judge.weighted.sampling_weights`). The estimate is PPI++
(Angelopoulos et al. 2023, "PPI++"),

.. math:: \hat\theta_\lambda = \frac1N\sum_{i \le N} w^U_i\lambda\hat Y^U_i
          + \frac1n\sum_{j \le n} w_j(Y_j - \lambda\hat Y_j),

``lam=None`` tunes :math:`\lambda` (:func:`~bayeval.methods.judge.weighted.ppi_pp_lambda`),
``lam=1`` is PPI, ``lam=0`` the classical mean. Its standard error is ppi_py's,

.. math:: \widehat{\mathrm{se}}^2 = \frac{s^2(w^U\lambda\hat Y^U)}{N}
          + \frac{s^2(w(Y - \lambda\hat Y))}{n}

(``ddof=0``): the spread of the weighted values :math:`w x` around their mean. It equals the
standard error of :func:`bayeval.judge` without weights; with weights :func:`bayeval.judge`
uses the linearised variance of the ratio mean, :math:`s^2(w(x - \bar x_w))/n`, which the
spread of the weights does not inflate.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy

from bayeval.methods.judge.compare import p_value
from bayeval.methods.judge.fast import Estimate
from bayeval.methods.judge.planning import optimal_split
from bayeval.methods.judge.weighted import Sample, ppi_pp, ppi_pp_lambda, sampling_weights
from bayeval.validation import aligned, as_array, as_choice

__all__ = ["ppi_mean_ci", "ppi_mean_pointestimate", "ppi_mean_power", "ppi_mean_pval"]

ALTERNATIVES = ("two-sided", "larger", "smaller")


def _sample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled) -> Sample:
    """The checked arrays and weights (rescaled to mean 1), ppi_py's names in the messages."""
    Y, Yhat = aligned(Y=Y, Yhat=Yhat)
    Y, Yhat = as_array(Y, "Y", dtype=float), as_array(Yhat, "Yhat", dtype=float)
    arrays = {"Y": Y, "Yhat": Yhat}
    if Yhat_unlabeled is not None:
        arrays["Yhat_unlabeled"] = as_array(Yhat_unlabeled, "Yhat_unlabeled", dtype=float)
    for name, a in arrays.items():
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array (one mean), got shape "
                             f"{a.shape}.")
    if Y.size != Yhat.size:
        raise ValueError(f"Y and Yhat must have the same length, got {Y.size} and {Yhat.size}.")
    u = arrays.get("Yhat_unlabeled", np.empty(0))
    return Sample(Y, Yhat, u, sampling_weights(w, Y.size, "w"),
                  sampling_weights(w_unlabeled, u.size, "w_unlabeled") if u.size else u)


def _lambda(s: Sample, lam, clip: bool) -> float:
    if lam is not None:
        return float(lam)
    if np.ptp(np.concatenate([s.yhat, s.yhat_u])) == 0:
        raise ValueError("Yhat and Yhat_unlabeled are constant: the power-tuning lam is "
                         "undefined; pass lam explicitly.")
    return ppi_pp_lambda(s, clip=clip)


def _estimate(s: Sample, lam: float) -> Estimate:
    """PPI++ with ppi_py's standard error (the spread of the weighted values)."""
    imputed, rectifier = lam * s.v * s.yhat_u, s.w * (s.y - lam * s.yhat)
    se = np.sqrt(imputed.var() / s.yhat_u.size + rectifier.var() / s.y.size)
    return Estimate(ppi_pp(s, lam).estimate, float(se))


def ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=None, w=None, w_unlabeled=None
                           ) -> np.ndarray:
    r"""ppi_py's ``ppi_mean_pointestimate`` for a 1-D mean: :math:`\hat\theta_\lambda`.

    Parameters
    ----------
    Y, Yhat : array-like, shape (n,)
        Labels and predictions of the labelled items.
    Yhat_unlabeled : array-like, shape (N,)
        Predictions of the unlabelled items.
    lam : float, optional
        Power-tuning parameter; None tunes it and clips it to [0, 1].
    w, w_unlabeled : array-like, optional
        Sampling weights of the labelled and unlabelled items (default uniform).

    Returns
    -------
    numpy.ndarray
        Shape (1,).

    Examples
    --------
    >>> ppi_mean_pointestimate([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], lam=1)
    array([0.91666667])
    >>> ppi_mean_pointestimate([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], lam=1,
    ...                        w=[1, 1, 2, 2])
    array([1.])
    """
    s = _sample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled)
    return np.atleast_1d(ppi_pp(s, _lambda(s, lam, clip=True)).estimate).astype(float)


def ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha: float = 0.1, alternative: str = "two-sided",
                lam=None, w=None, w_unlabeled=None) -> tuple[np.ndarray, np.ndarray]:
    r"""ppi_py's ``ppi_mean_ci`` for a 1-D mean.

    Wald interval :math:`\hat\theta_\lambda \pm z_{1-\alpha/2}\,\widehat{\mathrm{se}}`;
    ``alternative="larger"`` gives :math:`[\hat\theta - z_{1-\alpha}\,\mathrm{se}, \infty)`,
    ``"smaller"`` :math:`(-\infty, \hat\theta + z_{1-\alpha}\,\mathrm{se}]`.

    Parameters
    ----------
    Y, Yhat, Yhat_unlabeled, lam, w, w_unlabeled
        As in :func:`ppi_mean_pointestimate`.
    alpha : float
        One minus the interval's level.
    alternative : {"two-sided", "larger", "smaller"}

    Returns
    -------
    lower, upper : numpy.ndarray
        Shape (1,) each.

    Examples
    --------
    >>> lo, hi = ppi_mean_ci([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 1], [1, 1, 0, 1, 0, 1, 1, 0])
    >>> lo.round(4), hi.round(4)
    (array([0.4454]), array([0.9782]))
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    s = _sample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled)
    est = _estimate(s, _lambda(s, lam, clip=True))
    theta, se = np.atleast_1d(est.estimate).astype(float), np.atleast_1d(est.se).astype(float)
    if alternative == "two-sided":
        z = scipy.stats.norm.ppf(1 - alpha / 2)
        return theta - z * se, theta + z * se
    z = scipy.stats.norm.ppf(1 - alpha)
    if alternative == "larger":
        return theta - z * se, np.full_like(theta, np.inf)
    return np.full_like(theta, -np.inf), theta + z * se


def ppi_mean_pval(Y, Yhat, Yhat_unlabeled, null: float = 0.0, alternative: str = "two-sided",
                  lam=None, w=None, w_unlabeled=None) -> np.ndarray:
    r"""ppi_py's ``ppi_mean_pval`` for a 1-D mean: the z-test of :math:`H_0: \theta =
    \theta_0`.

    With :math:`z = (\hat\theta_\lambda - \theta_0)/\widehat{\mathrm{se}}` (the se floored at
    :math:`10^{-16}`): :math:`2\Phi(-|z|)` (``"two-sided"``), :math:`\Phi(-z)` (``"larger"``,
    :math:`H_1: \theta > \theta_0`) or :math:`\Phi(z)` (``"smaller"``). As ppi_py 0.2.3 does,
    ``lam=None`` tunes :math:`\lambda` without clipping it to [0, 1] here.

    Parameters
    ----------
    Y, Yhat, Yhat_unlabeled, lam, w, w_unlabeled
        As in :func:`ppi_mean_pointestimate`.
    null : float
        :math:`\theta_0`.
    alternative : {"two-sided", "larger", "smaller"}

    Returns
    -------
    numpy.ndarray
        Shape (1,).

    Examples
    --------
    >>> ppi_mean_pval([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 1], [1, 1, 0, 1, 0, 1, 1, 0],
    ...               null=0.5, alternative="larger").round(4)
    array([0.0955])
    """
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    s = _sample(Y, Yhat, Yhat_unlabeled, w, w_unlabeled)
    est = _estimate(s, _lambda(s, lam, clip=False))
    return np.atleast_1d(p_value(Estimate(est.estimate, max(est.se, 1e-16)), float(null),
                                 alternative))


def ppi_mean_power(Y, Yhat, cost_Y: float, cost_Yhat: float, budget: float | None = None,
                   effective_n: float | None = None, n_max: int | None = None, w=None) -> dict:
    r"""ppi_py's ``ppi_mean_power``: the numbers of labelled and unlabelled items for a budget
    or an effective sample size, from a labelled pilot.

    The PPI correlation :math:`\rho` of the pilot (the correlation of :math:`w(Y - \bar Y_w)`
    and :math:`w(\hat Y - \bar Y_w)`, at most :math:`1 - 1/n`) gives the split of
    :func:`~bayeval.methods.judge.planning.optimal_split`, rounded to the nearest integers as
    ppi_py rounds them (:func:`~bayeval.methods.judge.planning.plan_budget` rounds so that the
    plan keeps its budget or its width). ``budget`` wins when both are given.

    Parameters
    ----------
    Y, Yhat : array-like, shape (n,)
        Pilot labels and predictions.
    cost_Y, cost_Yhat : float
        Cost of one label and of one prediction.
    budget : float, optional
        Total budget: the most powerful pair.
    effective_n : float, optional
        Target effective sample size: the cheapest pair.
    n_max : int, optional
        Most items in all (labelled + unlabelled).
    w : array-like, optional
        Sampling weights of the pilot.

    Returns
    -------
    dict
        ``n`` (labelled items), ``N`` (unlabelled items), ``cost``, ``effective_n`` (rounded)
        and ``ppi_corr``.

    Warns
    -----
    UserWarning
        When ``effective_n`` exceeds ``n_max`` (then every item is labelled).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=200)
    >>> yhat = y + rng.normal(size=200)
    >>> ppi_mean_power(y, yhat, cost_Y=1.0, cost_Yhat=0.01, budget=500)
    ... # doctest: +ELLIPSIS
    {'n': 460, 'N': 3561, 'cost': 500.21, 'effective_n': 746, 'ppi_corr': 0.658...}
    """
    if budget is None and effective_n is None:
        raise ValueError("give budget (the most powerful pair) or effective_n (the cheapest "
                         "pair).")
    s = _sample(Y, Yhat, None, w, None)
    n = s.y.size
    theta = float(s.w @ s.y) / n
    g, h = s.w * (s.y - theta), s.w * (s.yhat - theta)
    g, h = g - g.mean(), h - h.mean()
    corr = float(min(np.mean(g * h) / np.sqrt(np.mean(g**2) * np.mean(h**2)), 1 - 1 / n))
    rho2 = corr**2

    def pair(m, big_n, judged=True):
        m, big_n = round(m), round(big_n)
        cost = m * cost_Y + (m + big_n) * cost_Yhat if judged else m * cost_Y
        eff = round(m * (m + big_n) / (m + (1 - rho2) * big_n)) if judged else m
        return {"n": m, "N": big_n, "cost": cost, "effective_n": eff, "ppi_corr": corr}

    if budget is not None:
        per_label = (np.sqrt((1 - rho2) * cost_Y) + np.sqrt(rho2 * cost_Yhat)) ** 2
        m, big_n, judged = optimal_split(budget / per_label, rho2, cost_Y, cost_Yhat)
        if not judged:
            m = budget / cost_Y
        out = pair(m, big_n, judged)
        if n_max is None or out["n"] + out["N"] <= n_max:
            return out
        if n_max * cost_Y <= budget:
            return pair(n_max, 0, judged=False)
        m = round(budget / cost_Y - n_max * cost_Yhat / cost_Y)
        return pair(m, n_max - m)
    m, big_n, judged = optimal_split(effective_n, rho2, cost_Y, cost_Yhat)
    out = pair(m, big_n, judged)
    if n_max is None or out["n"] + out["N"] <= n_max:
        return out
    if effective_n > n_max:
        warnings.warn(f"effective_n = {effective_n} needs more than n_max = {n_max} items: "
                      "returning n = n_max labelled items and N = 0.", UserWarning,
                      stacklevel=2)
        return pair(n_max, 0, judged=False)
    m = round(effective_n * n_max * (1 - rho2) / (n_max - rho2 * effective_n))
    return pair(m, n_max - m)
