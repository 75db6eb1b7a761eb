r"""The ordered-logistic model of human ratings given the judge's rating, in PyMC.

Human ratings take the levels :math:`v_1 < \dots < v_K` (1-5, say); the judge puts each item
in one of :math:`J` cells (its rating, or a quantile bin of its score). The labelled items form
the table :math:`n_{jk}` = #{judge cell j, human level k}; the judge puts :math:`u_j` of the
unlabelled items in cell :math:`j`. The model is written in the calibration parametrisation
(the judge's distribution, then the human rating given the judge), so the hidden ratings of the
unlabelled items are summed out exactly: their judge cells carry information on :math:`\pi`
only, and no discrete variable is left.

.. math::
    \pi \sim \mathrm{Dirichlet}(\alpha\mathbf 1_J),\quad
    (n_{j\cdot} + u_j)_j \sim \mathrm{Multinomial}(N, \pi),\\
    P(Y \le v_k \mid \text{cell } j) = \mathrm{logistic}(c_k - \eta_j),\quad
    n_{j\cdot} \sim \mathrm{Multinomial}(n_{j+}, P(Y = \cdot \mid j)),\\
    \theta = \sum_j \pi_j \sum_k v_k P(Y = v_k \mid j).

The cutpoints :math:`c_k = \mathrm{logit}(\sum_{l \le k} \beta_l)` come from the level shares
:math:`\beta \sim \mathrm{Dirichlet}(\mathbf 1_K)` of an average judge cell (an ordered vector
by construction; the prior puts equal mass on every baseline distribution of the levels), and
the per-judge-rating effects :math:`\eta \sim \mathrm{ZeroSumNormal}(\sigma_\eta)` shift it. The
effects leave each cell's mean rating free; the cutpoints shared by all cells (proportional
odds) pool the shape of the rating distribution, which helps sparse cells.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from bayeval.methods.judge.graded import judge_cells
from bayeval.sampling import sample
from bayeval.validation import as_seed

__all__ = ["DEFAULT_PRIOR", "ordinal_model", "sample_ordinal"]

#: Dirichlet concentration of the judge's cell shares, scale of the judge-rating effects
DEFAULT_PRIOR = {"judge_share": 0.5, "effect_sigma": 2.5}


def _prior(prior: Mapping | None) -> dict[str, float]:
    """The priors with defaults filled in, checked: positive finite numbers."""
    prior = dict(prior or {})
    unknown = set(prior) - set(DEFAULT_PRIOR)
    if unknown:
        raise ValueError(f"prior has unknown key(s) {sorted(unknown)}; the ordinal model takes "
                         f"{', '.join(DEFAULT_PRIOR)}.")
    out = {**DEFAULT_PRIOR, **prior}
    for key, value in out.items():
        if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
            raise ValueError(f"prior[{key!r}] must be a positive number, got {value!r}.")
    return {k: float(v) for k, v in out.items()}


def ordinal_model(table, unlabelled, levels, *, prior: Mapping | None = None):
    r"""The ordered-logistic model of the module docstring.

    Parameters
    ----------
    table : array of int, shape (J, K)
        Labelled items per judge cell (rows) and human level (columns).
    unlabelled : array of int, shape (J,)
        Unlabelled items per judge cell.
    levels : array, shape (K,)
        The values :math:`v_k` of the human levels, increasing.
    prior : dict, optional
        ``judge_share``: the Dirichlet concentration :math:`\alpha` of the judge's cell shares
        (default 1/2, Jeffreys'); ``effect_sigma``: the scale :math:`\sigma_\eta` of the
        judge-rating effects on the logit scale (default 2.5).

    Returns
    -------
    pymc.Model
        Free ``judge_share`` (:math:`\pi`), ``level_share`` (:math:`\beta`), ``effect``
        (:math:`\eta`); deterministic ``cutpoints``, ``level_probs`` (judge, level),
        ``cell_mean`` (judge) and ``theta``.

    Examples
    --------
    >>> m = ordinal_model([[8, 2, 0], [1, 6, 3]], [40, 50], [1, 2, 3])
    >>> sorted(v.name for v in m.free_RVs)
    ['effect', 'judge_share', 'level_share']
    """
    import pymc as pm

    prior = _prior(prior)
    table = np.asarray(table, dtype=np.int64)
    unlabelled = np.asarray(unlabelled, dtype=np.int64)
    levels = np.asarray(levels, dtype=float)
    n_judge, n_levels = table.shape
    coords = {"judge": np.arange(n_judge), "level": levels, "cut": np.arange(n_levels - 1)}
    with pm.Model(coords=coords) as pm_model:
        share = pm.Dirichlet("judge_share", a=np.full(n_judge, prior["judge_share"]),
                             dims="judge")
        pm.Multinomial("judge_counts", n=int(table.sum() + unlabelled.sum()), p=share,
                       observed=table.sum(1) + unlabelled, dims="judge")
        base = pm.Dirichlet("level_share", a=np.ones(n_levels), dims="level")
        cut = pm.Deterministic("cutpoints", pm.math.logit(pm.math.cumsum(base)[:-1]), dims="cut")
        effect = pm.ZeroSumNormal("effect", sigma=prior["effect_sigma"], dims="judge")
        below = pm.math.sigmoid(cut[None, :] - effect[:, None])
        ones = np.ones((n_judge, 1))
        cum = pm.math.concatenate([0 * ones, below, ones], axis=1)
        probs = pm.Deterministic("level_probs", cum[:, 1:] - cum[:, :-1],
                                 dims=("judge", "level"))
        pm.Multinomial("ratings", n=table.sum(1), p=probs, observed=table,
                       dims=("judge", "level"))
        cell_mean = pm.Deterministic("cell_mean", probs @ levels, dims="judge")
        pm.Deterministic("theta", pm.math.sum(share * cell_mean))
    return pm_model


def sample_ordinal(y, yhat, yhat_unlabeled, low: float, high: float, mu_model: str, prior,
                   random_seed, sample_kwargs) -> tuple[xr.DataTree, object]:
    r"""Sample :func:`ordinal_model` on checked ratings; add ``theta_finite``.

    ``theta_finite`` is the mean rating of all :math:`N` items, :math:`(\sum_{j \in L} Y_j +
    \sum_{i \in U} Y_i)/N`: the labelled ratings as observed, each unlabelled item's rating
    drawn from :math:`P(Y \mid \text{its judge cell})` of the posterior draw (its expected value
    plus its sampling noise).

    Returns
    -------
    draws : xarray.DataTree
    model : pymc.Model

    Examples
    --------
    >>> y = np.array([1, 1, 2, 2, 3, 3, 2, 1])
    >>> yhat = np.array([1, 2, 2, 2, 3, 3, 3, 1])
    >>> draws, _ = sample_ordinal(y, yhat, np.array([1, 2, 3] * 10), 1, 3, "cell", None, 0,
    ...                           {"draws": 100, "tune": 100, "chains": 1})
    >>> sorted(draws["posterior"].data_vars)[-2:]
    ['theta', 'theta_finite']
    """
    levels = np.arange(low, high + 1)
    k_l, k_u, size = judge_cells(yhat, yhat_unlabeled, mu_model)
    level = np.searchsorted(levels, y)
    table = np.zeros((size, levels.size), dtype=np.int64)
    np.add.at(table, (k_l, level), 1)
    unlabelled = np.bincount(k_u, minlength=size)
    pm_model = ordinal_model(table, unlabelled, levels, prior=prior)
    draws = sample(pm_model, random_seed, sample_kwargs)
    post = draws["posterior"].to_dataset()
    probs = post["level_probs"].transpose(*post["theta"].dims, "judge", "level").values
    rng = as_seed(random_seed)
    hidden = rng.multinomial(unlabelled, probs) @ levels  # (chain, draw, judge)
    finite = (y.sum() + hidden.sum(-1)) / (y.size + unlabelled.sum())
    draws["posterior"] = xr.DataTree(post.assign(theta_finite=post["theta"].copy(data=finite)))
    return draws, pm_model
