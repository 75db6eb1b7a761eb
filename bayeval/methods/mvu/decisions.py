r"""Decisions with costs: the Bayes action now, and the value of collecting the missing features.

A loss matrix :math:`L[a, y]` gives the cost of action :math:`a` (each class, and others such as
"abstain" or "refer" with their own row) when the class is :math:`y`. Given what is observed, the
class probabilities are :math:`\mathrm{E}\,\Phi` (the mean of the MVU distribution), so the Bayes
action now and its expected loss are

.. math::

    a^* = \arg\min_a \sum_y L[a, y]\,\mathrm{E}\,\Phi_y, \qquad
    R_\mathrm{now} = \min_a \sum_y L[a, y]\,\mathrm{E}\,\Phi_y .

Once the missing features are collected the action is chosen knowing :math:`\Phi`, so the expected
loss is :math:`R_\mathrm{after} = \mathrm{E}\min_a \sum_y L[a, y]\,\Phi_y \le R_\mathrm{now}`
(Jensen), and the expected value of the information (Raiffa & Schlaifer 1961) is
:math:`\mathrm{EVI} = R_\mathrm{now} - R_\mathrm{after}`: collecting pays off when it exceeds the
cost of collecting. :math:`p_\mathrm{change} = P(\arg\min_a \sum_y L[a, y]\Phi_y \ne a^*)` is
the probability that the complete row calls for another action.

* **Two classes, exactly**: with :math:`\phi = \Phi_1`, the loss of each action is linear in
  :math:`\phi` and :math:`g(\phi) = \min_a (L[a, 0] + (L[a, 1] - L[a, 0])\phi)` is their lower
  envelope, linear on the intervals :math:`[u_i, u_{i+1}]` between its kinks, so
  :math:`R_\mathrm{after} = \sum_i L[a_i, 0]\,(F(u_{i+1}) - F(u_i)) + (L[a_i, 1] - L[a_i, 0])
  (G(u_{i+1}) - G(u_i))` with :math:`F(u) = P(\phi \le u)` and :math:`G(u) =
  \mathrm{E}[\phi\,1(\phi \le u)]`. A Beta MVU, :math:`\phi \sim \mathrm{Beta}(\alpha_1,
  \alpha_0)`, has :math:`F(u) = I_u(\alpha_1, \alpha_0)` and :math:`G(u) =
  \frac{\alpha_1}{\alpha_0 + \alpha_1} I_u(\alpha_1 + 1, \alpha_0)`; a linear classifier under
  Gaussian imputation, :math:`\phi = \sigma(z)`, :math:`z \sim N(m, s^2)`, has
  :math:`F(u) = \Phi_N((\mathrm{logit}\,u - m)/s)` and :math:`G(u)` by 128-node Gauss-Legendre
  quadrature of :math:`\sigma(m + s\xi)\varphi(\xi)` over :math:`\xi \in [-12, (\mathrm{logit}\,u
  - m)/s]` (an analytic integrand: error far below 1e-10).
* **Otherwise, from draws**: :math:`R_\mathrm{after}` and :math:`p_\mathrm{change}` are averages
  over MVU draws :math:`\phi^{(s)}` (imputations pushed through the classifier: Gaussian
  quasi-Monte-Carlo points, or independent draws of the copula imputer for mixed data; softmax
  of Gaussian logits; Dirichlet draws), with their standard error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from bayeval.methods.mvu.estimators import pushforward
from bayeval.methods.mvu.fast import sample_dirichlet
from bayeval.validation import as_seed

__all__ = ["as_loss", "bayes_actions", "binary_envelope"]

#: Gauss-Legendre nodes of the logit-normal partial means, and the lower end in sds
NODES, LOWEST = 128, -12.0
#: imputer names whose MVU is a point mass when they store no Dirichlet (zero-variance heuristic)
SINGLE_IMPUTATION = ("mean", "zero", "conditional_mean")


def as_loss(loss, classes, actions=None) -> tuple[np.ndarray, list]:
    """The loss matrix (A, K) and the names of its actions.

    Parameters
    ----------
    loss : array (A, K) or DataFrame
        ``loss[a, y]``: the cost of action ``a`` when the class is ``y``. A DataFrame's index
        names the actions and its columns are the classes (any order).
    classes : array (K,)
        The classifier's classes.
    actions : sequence of A names, optional
        Names of the rows of an array; default the classes when A = K.

    Returns
    -------
    loss : numpy.ndarray, shape (A, K)
    actions : list

    Raises
    ------
    ValueError
        A shape that does not match the classes, non-finite costs, missing or repeated names.

    Examples
    --------
    >>> as_loss([[0, 1], [1, 0], [0.3, 0.3]], [0, 1], ["no", "yes", "refer"])[1]
    ['no', 'yes', 'refer']
    """
    classes = list(classes)
    if isinstance(loss, pd.DataFrame):
        unknown = [c for c in loss.columns if c not in classes]
        lacking = [c for c in classes if c not in loss.columns]
        if unknown or lacking:
            raise ValueError(f"loss's columns must be the classes {classes}; unknown {unknown}, "
                             f"missing {lacking}.")
        if actions is not None:
            raise ValueError("give the actions as loss's index or as actions=, not both.")
        columns = list(loss.columns)  # by position: boolean classes are not a mask
        actions, loss = list(loss.index), loss.iloc[:, [columns.index(c) for c in classes]]
        loss = loss.to_numpy()
    try:
        values = np.asarray(loss, dtype=float)
    except (TypeError, ValueError):
        values = np.empty((0, 0))
    if values.ndim != 2 or values.shape[1] != len(classes) or not len(values) or not np.isfinite(
            values).all():
        raise ValueError(f"loss must be a finite (actions x classes) matrix with {len(classes)} "
                         f"columns (the classes {classes}); got {np.shape(loss)}.")
    if actions is None:
        if len(values) != len(classes):
            raise ValueError(f"loss has {len(values)} rows (actions) and {len(classes)} classes: "
                             "name the actions (actions=[...], or a DataFrame indexed by them).")
        actions = classes
    actions = list(actions)
    if len(actions) != len(values) or len(set(map(str, actions))) != len(actions):
        raise ValueError(f"actions must name the {len(values)} rows of loss once each; got "
                         f"{actions}.")
    return values, actions


def binary_envelope(loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Kinks :math:`0 = u_0 < \dots < u_I = 1` of :math:`g(\phi) = \min_a (L[a, 0] +
    (L[a, 1] - L[a, 0])\phi)` and the action active on each interval (the first of tied ones).

    Examples
    --------
    >>> u, a = binary_envelope(np.array([[0.0, 1.0], [1.0, 0.0], [0.3, 0.3]]))
    >>> u.round(2).tolist(), a.tolist()  # class 0 below 0.3, abstain to 0.7, then class 1
    ([0.0, 0.3, 0.7, 1.0], [0, 2, 1])
    """
    a0, slope = loss[:, 0], loss[:, 1] - loss[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (a0[:, None] - a0[None, :]) / (slope[None, :] - slope[:, None])
    cuts = np.unique(np.r_[0.0, cross[np.isfinite(cross) & (cross > 0) & (cross < 1)], 1.0])
    mid = (cuts[:-1] + cuts[1:]) / 2
    active = np.argmin(a0[:, None] + slope[:, None] * mid[None, :], axis=0)
    keep = np.r_[True, active[1:] != active[:-1]]  # merge equal neighbours
    return np.r_[cuts[:-1][keep], 1.0], active[keep]


def _logitnormal_parts(m: np.ndarray, s: np.ndarray, u: np.ndarray):
    r""":math:`F(u)` and :math:`G(u)` of :math:`\sigma(z)`, :math:`z \sim N(m, s^2)`, rows (n,)
    by kinks (I,)."""
    with np.errstate(divide="ignore"):
        t = (special.logit(u)[None, :] - m[:, None]) / s[:, None]
    x, w = np.polynomial.legendre.leggauss(NODES)
    hi = np.clip(t, LOWEST, -LOWEST)
    half = (hi - LOWEST) / 2  # xi = LOWEST + half (x + 1)
    xi = LOWEST + half[..., None] * (x + 1)
    f = special.expit(m[:, None, None] + s[:, None, None] * xi) * np.exp(-xi**2 / 2) / np.sqrt(
        2 * np.pi)
    return special.ndtr(t), (f @ w) * half


def _binary_exact(loss, parts, proba_now_action):
    """R_after and p_change from F, G at the kinks (rows (n, I+1))."""
    cuts, active = binary_envelope(loss)
    f, g = parts(cuts)
    mass, first = np.diff(f, axis=1), np.diff(g, axis=1)
    after = mass @ loss[active, 0] + first @ (loss[active, 1] - loss[active, 0])
    same = (mass * (active[None, :] == proba_now_action[:, None])).sum(1)
    return after, np.clip(1 - same, 0.0, 1.0)


def _from_draws(loss, phi, now):
    """R_after, its standard error and p_change from MVU draws (n, S, K)."""
    risk = phi @ loss.T  # (n, S, A)
    best = risk.min(-1)
    change = (risk.argmin(-1) != now[:, None]).mean(1)
    return best.mean(1), best.std(1, ddof=1) / np.sqrt(phi.shape[1]), change


def bayes_actions(ev, loss, actions=None, *, collect_cost=None, draws=None,
                  random_seed=None, classifier=None) -> pd.DataFrame:
    r"""Per-row Bayes action, expected loss now and after collecting (module docstring).

    The engine of :meth:`~bayeval.methods.mvu.result.MVUEvaluation.bayes_actions`, which
    documents the arguments and columns; a DataFrame with ``attrs["exact"]``.

    Examples
    --------
    A uniform :math:`\Phi_1` (a Beta(1, 1) MVU) and an abstain action at 0.3: abstain now; once
    collected, :math:`\mathrm{E}\min(\phi, 1 - \phi, 0.3) = 0.21`:

    >>> from bayeval.methods.mvu.api import mvu
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> ev = mvu(LinearClassifier([[1.0, 1.0]], [0.0]), [[np.nan, 0.0]], imputer="mean",
    ...          heuristic="scale_prob", heuristic_param=2.0, train=[[1.0, 1.0], [-1.0, -1.0]])
    >>> out = bayes_actions(ev, [[0, 1], [1, 0], [0.3, 0.3]], ["0", "1", "abstain"])
    >>> out[["action", "loss_now", "loss_after", "p_change"]].round(4).to_dict("records")
    [{'action': 'abstain', 'loss_now': 0.3, 'loss_after': 0.21, 'p_change': 0.6}]
    """
    cf = ev.closed_form
    k = cf.sizes["class"]
    planner = (ev.feature_planner(classifier, "bayes_actions")
               if ev.meta["variant"] in ("exact", "mc") else None)
    classes = np.asarray(planner.classes if planner is not None and
                         planner.classes is not None else np.arange(k))
    loss, names = as_loss(loss, classes, actions)
    if collect_cost is not None and not (np.isfinite(collect_cost) and collect_cost >= 0):
        raise ValueError(f"collect_cost must be a non-negative number, got {collect_cost}.")
    proba = cf["proba"].values
    risk_now = proba @ loss.T
    now = risk_now.argmin(1)
    frame = pd.DataFrame({"action": np.asarray(names, dtype=object)[now],
                          "loss_now": risk_now.min(1)}, index=cf["instance"].to_index())
    after, se, change = frame["loss_now"].to_numpy().copy(), np.zeros(len(frame)), np.zeros(
        len(frame))
    exact, how = _laws(ev, cf, planner)
    rng = as_seed(random_seed)
    draws = int(ev.meta["n_draws"]) if draws is None else draws
    for kind, idx, law in how:
        if kind == "beta":  # law: alpha (r, 2) = (alpha_neg, alpha_pos)
            a1, a0 = law[:, 1], law[:, 0]
            parts = lambda u, a1=a1, a0=a0: (  # noqa: E731
                special.betainc(a1[:, None], a0[:, None], u[None]),
                (a1 / (a0 + a1))[:, None] * special.betainc(a1[:, None] + 1, a0[:, None], u[None]))
            after[idx], change[idx] = _binary_exact(loss, parts, now[idx])
        elif kind == "logit":  # law: (m, s)
            parts = lambda u, m=law[0], s=law[1]: _logitnormal_parts(m, s, u)  # noqa: E731
            after[idx], change[idx] = _binary_exact(loss, parts, now[idx])
        else:
            after[idx], se[idx], change[idx] = _from_draws(loss, law(draws, rng), now[idx])
    frame["loss_after"], frame["loss_after_se"] = after, se
    frame["value"] = frame["loss_now"] - frame["loss_after"]
    frame["p_change"] = change
    if collect_cost is not None:
        frame["collect"] = frame["value"] > collect_cost
        frame["expected_cost"] = np.where(frame["collect"], frame["loss_after"] + collect_cost,
                                          frame["loss_now"])
    frame.attrs["exact"] = exact
    return frame


def _laws(ev, cf, planner):
    """Which rows have an exact law and the laws of the rows with something missing: a list of
    (kind, row positions, law), kind "beta" (alpha), "logit" ((m, s)) or "draws" (a function
    (draws, rng) -> MVU draws (r, S, K)); and whether every row is exact."""
    if ev.meta["variant"] in ("pymc", "both"):
        raise ValueError("bayes_actions needs the law of the MVU, which a posterior run mixes "
                         "over its draws; run mvu() with method='exact' or 'mc'.")
    missing = cf["n_missing"].values > 0
    k = cf.sizes["class"]
    if planner is not None:
        idx = np.flatnonzero(missing & planner.mask.any(1))
        x, m = planner.x[idx], planner.mask[idx]
        parts = planner.logit_parts
        if not idx.size:
            return True, []
        if parts is not None:
            mean, cov = planner.imputer.logits(x, m, *parts)
            if mean.shape[-1] == 1:
                return True, [("logit", idx, (mean[:, 0], np.sqrt(cov[:, 0, 0])))]

            def logits(draws, rng):
                chol = np.linalg.cholesky(cov + 1e-12 * np.eye(k) * (1 + np.trace(
                    cov, axis1=-2, axis2=-1))[:, None, None])
                z = mean[:, None] + rng.standard_normal((len(idx), draws, k)) @ np.swapaxes(
                    chol, 1, 2)
                return special.softmax(z, axis=-1)

            return False, [("draws", idx, logits)]
        return False, [("draws", idx, lambda draws, rng: pushforward(
            planner.predict, planner.sample(x, m, draws, rng)))]
    if "alpha" in cf:
        alpha = cf["alpha"].values
        idx = np.flatnonzero(missing & np.isfinite(alpha).all(1))
        if not idx.size:
            return True, []
        if k == 2:
            return True, [("beta", idx, alpha[idx])]
        return False, [("draws", idx, lambda draws, rng: sample_dirichlet(
            np.repeat(alpha[idx][:, None], draws, axis=1), rng))]
    if ev.meta.get("imputer") in SINGLE_IMPUTATION or not missing.any():
        return True, []  # point masses: nothing to learn by collecting
    raise ValueError("bayes_actions needs the law of the MVU: a Gaussian-imputation run "
                     "(imputer='gaussian' or a GaussianImputer, method='exact' or 'mc'), a "
                     "copula run in the session that ran it (its imputer is not saved), or a "
                     "Dirichlet MVU (heuristics, DMV, dirichlet=); posterior and sampler-object "
                     "runs are not supported.")
