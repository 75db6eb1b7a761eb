"""Intervals of closed-form laws: continuous (Beta, normal) and discrete (a PMF on sorted values),
equal-tailed or shortest."""

from __future__ import annotations

import numpy as np
import scipy

__all__ = ["beta_interval", "normal_interval", "pmf_interval"]


def _shortest(ppf, ci_prob: float) -> tuple[float, float]:
    """Shortest [ppf(q), ppf(q + ci_prob)] over q: the HDI of a unimodal or monotone density."""
    width = lambda q: ppf(q + ci_prob) - ppf(q)  # noqa: E731
    res = scipy.optimize.minimize_scalar(width, bounds=(0.0, 1.0 - ci_prob), method="bounded",
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
    law = scipy.stats.beta(a, b)
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
    z = scipy.stats.norm.ppf((1 + ci_prob) / 2)
    return np.asarray(mean) - z * np.asarray(sd), np.asarray(mean) + z * np.asarray(sd)


def pmf_interval(values: np.ndarray, probs: np.ndarray, alpha: float,
                 kind: str) -> tuple[int, int]:
    r"""Indices ``(i, j)`` of the interval :math:`[v_i, v_j]` of a PMF leaving out mass
    :math:`\le\alpha`.

    With :math:`Q(q)=\min\{v: F(v)\ge q\}`: ``"eti"`` is :math:`[Q(\alpha/2),\,Q(1-\alpha/2)]`
    (the upper end :math:`\min\{v: P(X>v)\le\alpha/2\}`); ``"hdi"`` the shortest
    :math:`[v_i, v_j]` with :math:`P(X<v_i)+P(X>v_j)\le\alpha` (ties: more mass, then lower);
    ``"paper_hdi"`` Algorithm 3 of Kivimäki et al. (2025): trim the smaller end (ties: the
    upper) while the trimmed mass stays below :math:`\alpha`. Masses are summed from the tails,
    so rounding is relative to :math:`\alpha`, not to 1.

    Parameters
    ----------
    values, probs : numpy.ndarray
        Sorted distinct support values and their probabilities (summing to 1).
    alpha : float
        Mass left out, in (0, 1).
    kind : {"eti", "hdi", "paper_hdi"}
        The interval's construction.

    Returns
    -------
    (int, int)

    Examples
    --------
    >>> values, probs = np.arange(4.0), np.array([0.1, 0.5, 0.3, 0.1])
    >>> pmf_interval(values, probs, 0.2, "eti"), pmf_interval(values, probs, 0.2, "hdi")
    ((0, 2), (1, 2))
    """
    below, above = _pmf_tails(probs)
    if kind == "eti":
        return _pmf_eti(below, above, alpha)
    if kind == "hdi":
        return _pmf_shortest(values, below, above, alpha)
    return _pmf_trimmed(probs, alpha)


def _pmf_tails(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """below[k] = P(X < v_k) and above[k] = P(X > v_k), each summed from its own end."""
    below = np.r_[0.0, np.cumsum(probs[:-1])]
    above = np.r_[np.cumsum(probs[:0:-1])[::-1], 0.0]
    return below, above


def _pmf_eti(below: np.ndarray, above: np.ndarray, alpha: float) -> tuple[int, int]:
    """First k with F(v_k) >= alpha/2 and first k with P(X > v_k) <= alpha/2."""
    cdf = np.r_[below[1:], 1.0]
    return int(np.argmax(cdf >= alpha / 2)), int(np.argmax(above <= alpha / 2))


def _pmf_shortest(values: np.ndarray, below: np.ndarray, above: np.ndarray,
              alpha: float) -> tuple[int, int]:
    """Shortest [v_i, v_j] with P(X < v_i) + P(X > v_j) <= alpha."""
    starts = np.flatnonzero(below <= alpha)
    # above is non-increasing: the first j with above[j] <= alpha - below[i]
    ends = np.searchsorted(-above, -(alpha - below[starts]), side="left")
    width = values[ends] - values[starts]
    left_out = below[starts] + above[ends]
    best = np.lexsort((starts, left_out, width))[0]
    return int(starts[best]), int(ends[best])


def _pmf_trimmed(probs: np.ndarray, alpha: float) -> tuple[int, int]:
    """Algorithm 3 (greedy tail trimming), vectorised.

    The loop compares the probabilities at the two ends and trims the smaller. This is a merge of
    the sequence read from the left with the one read from the right, and such a merge takes
    whole runs at once: a run starts at each new running maximum of its sequence and is taken
    when its first element is the smaller head. So the trimming order is a stable sort of the
    running maxima (upper end first on ties), and the loop stops at the first trim that would
    bring the trimmed mass to ``alpha``.
    """
    m = probs.size
    key_up = np.maximum.accumulate(probs[::-1])
    key_lo = np.maximum.accumulate(probs)
    order = np.argsort(np.r_[key_up, key_lo], kind="stable")
    trimmed = np.r_[probs[::-1], probs][order]
    n_trim = int(np.count_nonzero(np.cumsum(trimmed) < alpha))
    from_lower = int(np.count_nonzero(order[:n_trim] >= m))
    return from_lower, m - 1 - (n_trim - from_lower)
