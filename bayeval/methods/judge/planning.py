r"""Planning a judge study: how many human labels, and how many judge-only items.

With :math:`m` items labelled by humans (and by the judge) and :math:`n` more labelled by the
judge only, :math:`N = m + n`, the efficient estimators (EIF, PPI++ with its optimal
:math:`\lambda`) have the variance (Angelopoulos et al. 2023, "PPI++"; Chen et al. 2026)

.. math:: \mathrm{Var}(\hat\theta) \approx \sigma^2\Big[\frac{1-\rho^2}{m}
          + \frac{\rho^2}{N}\Big] = \frac{\sigma^2}{m_{\mathrm{eff}}},

where :math:`\sigma^2 = \mathrm{Var}(Y)` (:math:`\theta(1-\theta)` for a rate), :math:`\rho^2`
the share of it the judge explains (:math:`\mathrm{Corr}(Y, \hat Y)^2` for a linear fit) and
:math:`m_{\mathrm{eff}}` the number of human labels alone that would give the same precision.
A pilot run of :func:`bayeval.judge` reports :math:`\rho^2` as ``data["rho2"]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayeval.methods.judge.fast import z_value
from bayeval.validation import as_ci_prob

__all__ = ["BudgetPlan", "labels_needed", "optimal_split", "plan_budget"]


def _check_rate(theta, rho2, rho2_below_one: bool = False) -> None:
    if theta is not None and not 0 < theta < 1:
        raise ValueError(f"theta must lie in (0, 1), got {theta!r}.")
    top = "[0, 1)" if rho2_below_one else "[0, 1]"
    if not (0 <= rho2 < 1 if rho2_below_one else 0 <= rho2 <= 1):
        raise ValueError(f"rho2 must lie in {top}, got {rho2!r}.")


def labels_needed(half_width: float, *, theta: float, rho2: float, n_total: float | None = None,
                  ci_prob: float = 0.95) -> int:
    r"""Human labels needed for an EIF interval of a given half-width.

    With :math:`\mathrm{Var}(\hat\theta_{EIF}) \approx \theta(1-\theta)[\rho^2/N +
    (1-\rho^2)/m]` and half-width :math:`h = z\sqrt{\mathrm{Var}}`,

    .. math::
        m = \frac{z^2\theta(1-\theta)(1-\rho^2)}{h^2 - z^2\theta(1-\theta)\rho^2/N},

    where :math:`\rho^2` is the share of the variance of :math:`Y` that the judge explains
    (:math:`\mathrm{Corr}(Y, \hat Y)^2 = \theta(1-\theta)\kappa^2/(p(1-p))` for a binary judge;
    a pilot run of :func:`bayeval.judge` reports it as ``data["rho2"]``).

    Parameters
    ----------
    half_width : float
        Target half-width :math:`h` of the interval.
    theta, rho2 : float
        Guesses of the rate and of :math:`\rho^2`.
    n_total : float, optional
        Number of items :math:`N` (labelled + judge-only); default unlimited.
    ci_prob : float
        Interval level.

    Returns
    -------
    int, the smallest :math:`m` (rounded up).

    See Also
    --------
    plan_budget : the numbers of human and judge labels under a budget.

    Examples
    --------
    >>> labels_needed(0.03, theta=0.3, rho2=0.5, n_total=10_000)
    470
    >>> labels_needed(0.03, theta=0.3, rho2=0.0)  # a useless judge: classical sample size
    897
    """
    ci_prob = as_ci_prob(ci_prob)
    _check_rate(theta, rho2)
    if not half_width > 0:
        raise ValueError(f"half_width must be positive, got {half_width!r}.")
    if n_total is not None and not n_total >= 1:
        raise ValueError(f"n_total must be at least 1, got {n_total!r}.")
    z2v = z_value(ci_prob) ** 2 * theta * (1 - theta)
    n_inv = 0.0 if n_total is None else 1.0 / n_total
    room = half_width**2 - z2v * rho2 * n_inv
    m = z2v * (1 - rho2) / room if room > 0 else np.inf
    if n_total is not None and m > n_total:
        raise ValueError(f"half_width {half_width} is out of reach with n_total = {n_total:g} "
                         f"items: labelling all of them gives {np.sqrt(z2v * n_inv):.4f}.")
    return int(np.ceil(m - 1e-9))


def optimal_split(m_effective: float, rho2: float, cost_human: float, cost_judge: float
                  ) -> tuple[float, float, bool]:
    r"""The cheapest :math:`(m, n)` with :math:`m_{\mathrm{eff}}` effective human labels.

    Minimising :math:`m\,c_Y + (m + n)\,c_{\hat Y}` subject to :math:`(1-\rho^2)/m + \rho^2/(m +
    n) = 1/m_{\mathrm{eff}}` (Lagrange) gives, with :math:`\gamma = c_{\hat Y}/c_Y`,

    .. math::
        m = m_{\mathrm{eff}}\Big(1 - \rho^2 + \sqrt{\gamma\rho^2(1-\rho^2)}\Big),\qquad
        n = \frac{m(m_{\mathrm{eff}} - m)}{m - (1-\rho^2)m_{\mathrm{eff}}},

    at the cost :math:`m_{\mathrm{eff}}\big(\sqrt{(1-\rho^2)c_Y} + \sqrt{\rho^2 c_{\hat Y}}
    \big)^2` (ppi_py's ``ppi_power``). When that exceeds the human-only cost
    :math:`m_{\mathrm{eff}}c_Y` (a judge that costs too much for what it explains), the judge is
    not used: :math:`m = m_{\mathrm{eff}}`, :math:`n = 0`.

    Parameters
    ----------
    m_effective : float
        The target :math:`m_{\mathrm{eff}} = \sigma^2/\mathrm{Var}`.
    rho2 : float
        :math:`\rho^2` in [0, 1).
    cost_human, cost_judge : float
        Cost of one human label and of one judge label.

    Returns
    -------
    m, n : float
        Unrounded numbers of human-labelled and judge-only items.
    use_judge : bool
        Whether the judge is run (else the human labels alone are cheaper).

    Examples
    --------
    >>> [round(v, 2) for v in optimal_split(400, 0.5, 1.0, 0.01)[:2]]
    [220.0, 1980.0]
    """
    gamma = cost_judge / cost_human
    m = m_effective * (1 - rho2 + np.sqrt(gamma * rho2 * (1 - rho2)))
    per_label = (np.sqrt((1 - rho2) * cost_human) + np.sqrt(rho2 * cost_judge)) ** 2
    gain = m - (1 - rho2) * m_effective
    n = m * (m_effective - m) / gain if rho2 > 0 and gain > 0 else -1.0
    if per_label >= cost_human or n < 0:
        return float(m_effective), 0.0, False
    return float(m), float(n), True


class BudgetPlan(NamedTuple):
    """A labelling plan of :func:`plan_budget`.

    Attributes
    ----------
    m : int
        Items labelled by humans (and by the judge when ``n > 0``).
    n : int
        Items labelled by the judge only.
    cost : float
        :math:`m\\,c_Y + (m + n)\\,c_{\\hat Y}`, or :math:`m\\,c_Y` without the judge.
    m_effective : float
        Human labels alone that give the same variance, :math:`1/[(1-\\rho^2)/m + \\rho^2/(m +
        n)]`.
    half_width : float
        The interval's expected half-width :math:`z\\sigma/\\sqrt{m_{\\mathrm{eff}}}`; NaN
        without ``theta`` or ``sd``.

    Examples
    --------
    >>> BudgetPlan(240, 960, 249.6, 400.0, 0.0449).m_effective
    400.0
    """

    m: int
    n: int
    cost: float
    m_effective: float
    half_width: float


def plan_budget(rho2: float, *, cost_human: float, cost_judge: float, budget: float | None = None,
                half_width: float | None = None, theta: float | None = None,
                sd: float | None = None, n_total: float | None = None,
                ci_prob: float = 0.95) -> BudgetPlan:
    r"""The numbers of human and judge labels: the narrowest interval for a budget, or the
    cheapest plan for a half-width.

    Each human-labelled item costs :math:`c_Y + c_{\hat Y}` (a human label and the judge's),
    each judge-only item :math:`c_{\hat Y}`. The variance :math:`\sigma^2[(1-\rho^2)/m +
    \rho^2/(m + n)]` of the efficient estimators (EIF, tuned PPI++; Angelopoulos et al. 2023,
    "PPI++") is minimised by the split of :func:`optimal_split`: with a ``budget`` :math:`B`,
    :math:`m_{\mathrm{eff}} = B/(\sqrt{(1-\rho^2)c_Y} + \sqrt{\rho^2c_{\hat Y}})^2`; with a
    ``half_width`` :math:`h`, :math:`m_{\mathrm{eff}} = z^2\sigma^2/h^2`. With at most
    ``n_total`` items in all, a plan that needs more uses them all: under a budget
    :math:`m = (B - N c_{\hat Y})/c_Y` (or every item labelled by humans if the budget allows),
    for a half-width the :math:`m` with :math:`(1-\rho^2)/m + \rho^2/N = 1/m_{\mathrm{eff}}`.
    Counts are rounded so that the plan keeps its promise: down under a budget (the cost stays
    within it), up for a half-width (the half-width is reached).

    Parameters
    ----------
    rho2 : float
        :math:`\rho^2` in [0, 1): the judge's share of the variance of :math:`Y` (a pilot
        :func:`bayeval.judge` reports it as ``data["rho2"]``).
    cost_human, cost_judge : float
        Cost of one human label and of one judge label, both positive.
    budget : float, optional
        Total budget: the plan with the narrowest interval.
    half_width : float, optional
        Target half-width: the cheapest plan reaching it; needs ``theta`` or ``sd``.
    theta : float, optional
        Guess of the rate, :math:`\sigma^2 = \theta(1-\theta)`.
    sd : float, optional
        Guess of :math:`\sigma` for a graded outcome (instead of ``theta``).
    n_total : float, optional
        Most items available (human-labelled + judge-only); default unlimited.
    ci_prob : float
        Interval level of ``half_width``.

    Returns
    -------
    BudgetPlan

    Raises
    ------
    ValueError
        Neither or both of ``budget`` and ``half_width``; a half-width without ``theta`` or
        ``sd``, or out of reach with ``n_total`` items; costs or ``rho2`` out of range.

    See Also
    --------
    labels_needed : human labels for a half-width when all items are judged anyway.

    Examples
    --------
    A judge explaining half the variance, 100 times cheaper than a human label:

    >>> plan = plan_budget(0.5, cost_human=1.0, cost_judge=0.01, budget=500, theta=0.3)
    >>> plan.m, plan.n, plan.cost, round(plan.m_effective, 1), round(plan.half_width, 4)
    (454, 4091, 499.45, 825.5, 0.0313)

    The cheapest plan for a half-width of 0.03, and with at most 2,000 items:

    >>> plan_budget(0.5, cost_human=1.0, cost_judge=0.01, half_width=0.03, theta=0.3)[:3]
    (493, 4436, 542.29)
    >>> plan_budget(0.5, cost_human=1.0, cost_judge=0.01, half_width=0.03, theta=0.3,
    ...             n_total=2000)[:3]
    (578, 1418, 597.96)

    Human labels alone would need :math:`z^2\theta(1-\theta)/h^2 = 897` labels (cost 897).
    """
    ci_prob = as_ci_prob(ci_prob)
    _check_rate(theta, rho2, rho2_below_one=True)
    if not (cost_human > 0 and cost_judge > 0):
        raise ValueError(f"cost_human and cost_judge must be positive, got "
                         f"{cost_human!r} and {cost_judge!r}.")
    if (budget is None) == (half_width is None):
        raise ValueError("give exactly one of budget (the narrowest interval it buys) and "
                         "half_width (the cheapest plan reaching it).")
    if theta is not None and sd is not None:
        raise ValueError("give theta (a rate) or sd (a graded outcome), not both.")
    sigma = np.sqrt(theta * (1 - theta)) if theta is not None else sd
    if sigma is not None and not sigma > 0:
        raise ValueError(f"sd must be positive, got {sd!r}.")
    if n_total is not None and not n_total >= 1:
        raise ValueError(f"n_total must be at least 1, got {n_total!r}.")
    z = z_value(ci_prob)
    if budget is not None:
        if not budget > 0:
            raise ValueError(f"budget must be positive, got {budget!r}.")
        per_label = (np.sqrt((1 - rho2) * cost_human) + np.sqrt(rho2 * cost_judge)) ** 2
        m, n, judged = optimal_split(budget / min(per_label, cost_human), rho2, cost_human,
                                     cost_judge)
        if n_total is not None and m + n > n_total:
            m, judged = ((n_total, False) if n_total * cost_human <= budget else
                         ((budget - n_total * cost_judge) / cost_human, True))
            n = n_total - m if judged else 0.0
        m, total = np.floor(m + 1e-9), np.floor(m + n + 1e-9)
    else:
        if sigma is None:
            raise ValueError("half_width needs theta (a rate) or sd (a graded outcome): the "
                             "width scales with the outcome's standard deviation.")
        if not half_width > 0:
            raise ValueError(f"half_width must be positive, got {half_width!r}.")
        target = (z * sigma / half_width) ** 2
        m, n, judged = optimal_split(target, rho2, cost_human, cost_judge)
        if n_total is not None and m + n > n_total:
            if target > n_total:
                raise ValueError(f"half_width {half_width} is out of reach with n_total = "
                                 f"{n_total:g} items: labelling all of them gives "
                                 f"{z * sigma / np.sqrt(n_total):.4f}.")
            m = target * n_total * (1 - rho2) / (n_total - rho2 * target)
            n, judged = n_total - m, True
        m = np.ceil(m - 1e-9)
        total = m + (np.ceil(max(rho2 / (1 / target - (1 - rho2) / m) - m, 0.0) - 1e-9)
                     if judged and rho2 > 0 and 1 / target > (1 - rho2) / m else 0.0)
    m, n = int(m), int(total - m) if judged else 0
    cost = m * cost_human + ((m + n) * cost_judge if judged else 0.0)
    m_eff = 1 / ((1 - rho2) / m + rho2 / (m + n)) if judged else float(m)
    width = z * sigma / np.sqrt(m_eff) if sigma is not None else np.nan
    return BudgetPlan(m, n, float(cost), float(m_eff), float(width))
