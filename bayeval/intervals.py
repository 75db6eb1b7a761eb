"""Intervals of continuous closed-form laws (Beta, normal), equal-tailed or highest-density."""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

__all__ = ["beta_interval", "normal_interval"]


def _shortest(ppf, ci_prob: float) -> tuple[float, float]:
    """Shortest [ppf(q), ppf(q + ci_prob)] over q: the HDI of a unimodal or monotone density."""
    width = lambda q: ppf(q + ci_prob) - ppf(q)  # noqa: E731
    res = optimize.minimize_scalar(width, bounds=(0.0, 1.0 - ci_prob), method="bounded",
                                   options={"xatol": 1e-12})
    q = min((0.0, 1.0 - ci_prob, float(res.x)), key=width)
    return float(ppf(q)), float(ppf(q + ci_prob))


def beta_interval(a: float, b: float, ci_prob: float, kind: str = "eti") -> tuple[float, float]:
    r"""Interval of :math:`\mathrm{Beta}(a, b)` holding ``ci_prob`` of its mass.

    ``kind="eti"``: quantiles :math:`(1-p)/2` and :math:`(1+p)/2`; ``kind="hdi"``: the shortest
    interval :math:`[F^{-1}(q), F^{-1}(q+p)]` over :math:`q\in[0,1-p]` (the highest-density one
    for :math:`a, b \ge 1`).

    Parameters
    ----------
    a, b : float
        Positive shape parameters.
    ci_prob : float
        Probability :math:`p` inside the interval, in (0, 1).
    kind : {"eti", "hdi"}
        Equal-tailed or shortest interval.

    Returns
    -------
    (float, float)
        Lower and upper end.

    Examples
    --------
    >>> [round(x, 4) for x in beta_interval(3, 7, 0.95)]
    [0.0749, 0.6001]
    >>> [round(x, 4) for x in beta_interval(3, 7, 0.95, kind="hdi")]
    [0.0542, 0.5676]
    """
    law = stats.beta(a, b)
    if kind == "eti" or (a == 1 and b == 1):
        tail = (1 - ci_prob) / 2
        return float(law.ppf(tail)), float(law.ppf(1 - tail))
    return _shortest(law.ppf, ci_prob)


def normal_interval(mean, sd, ci_prob: float):
    r"""Equal-tailed (= highest-density) normal interval :math:`\mu \pm z_{(1+p)/2}\,\sigma`.

    Parameters
    ----------
    mean, sd : array-like
        Means :math:`\mu` and standard deviations :math:`\sigma`, broadcast together.
    ci_prob : float
        Probability :math:`p` inside the interval, in (0, 1).

    Returns
    -------
    lower, upper : numpy.ndarray
        Arrays of the broadcast shape (0-d for scalar input).

    Examples
    --------
    >>> lower, upper = normal_interval([0.5, 0.2], [0.1, 0.01], 0.95)
    >>> lower.round(4), upper.round(4)
    (array([0.304 , 0.1804]), array([0.696 , 0.2196]))
    """
    z = stats.norm.ppf((1 + ci_prob) / 2)
    return np.asarray(mean) - z * np.asarray(sd), np.asarray(mean) + z * np.asarray(sd)
