r"""The judge on a graded outcome: human ratings on a bounded or ordinal scale.

Humans give :math:`Y \in [a, b]` on :math:`m` items (a score in [0, 1], a rating from 1 to 5);
the judge gives :math:`\hat Y` (a rating or a score) on all :math:`N = m + n` items. The estimand
is the outcome mean :math:`\theta = E[Y]` on the declared scale. The mean-type estimators of
:mod:`bayeval.methods.judge.fast` (naive, classical, PPI, PPI++) apply unchanged to real-valued
outcomes; the efficient-influence-function estimator (Chen et al. 2026, eq. 19)

.. math::
    \hat\theta_{EIF} = \frac1N\sum_{i=1}^N \hat\mu(\hat Y_i)
        + \frac1m\sum_{j \in L}\{Y_j - \hat\mu(\hat Y_j)\}

takes a calibration curve :math:`\hat\mu(\hat y) \approx E[Y \mid \hat Y = \hat y]`: cell means
per judge value or per quantile bin of the scores (:func:`eif_graded_cells`, where the residual
term vanishes) or a least-squares line (:func:`~bayeval.methods.judge.fast.eif_linear`).

The curve may also be cross-fitted (``mu_model="isotonic"`` or ``"spline"``,
:mod:`bayeval.methods.judge.curves`). With sampling weights of the labelled items (``w_i \propto
1/\pi_i``) and of the others, every fast path takes its weighted (Hájek) form of
:mod:`bayeval.methods.judge.weighted`, the mean of a rating being the same estimating equation
as the rate of a 0/1 label.

With integer ratings on an integer scale, ``method="pymc"`` samples the ordered-logistic model of
:mod:`bayeval.methods.judge.graded_models`; :class:`JudgeGraded` compares its posterior with the
EIF estimate.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayeval.check import sampler_tests
from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.methods.judge.curves import CURVES, as_folds, cross_fitted, eif_from_curve, fold_ids
from bayeval.methods.judge.fast import (
    Estimate,
    by_name,
    cell_variance,
    interval,
    moments,
    ppi_pp_lambda,
    reported,
    z_value,
)
from bayeval.methods.judge.weighted import Sample
from bayeval.methods.judge.weighted import by_name as weighted_by_name
from bayeval.methods.judge.weighted import ppi_pp_lambda as weighted_ppi_lambda
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_array,
    as_choice,
    as_ci_prob,
    as_sample_kwargs,
    as_seed,
    describe,
)

__all__ = ["GRADED_ESTIMATORS", "JudgeGraded", "eif_graded_cells", "graded_input",
           "judge_cells", "judge_graded"]

GRADED_ESTIMATORS = ("naive", "classical", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif")
METHODS = (*GRADED_ESTIMATORS, "all", "pymc", "both")
MU_MODELS = ("cell", "linear", "bins")
ALTERNATIVES = ("two-sided", "larger", "smaller")
#: quantile bins of the labelled judge scores for ``mu_model="bins"``
N_BINS = 10
#: ``mu_model=None`` uses cells up to this many distinct judge values, else bins
MAX_CELLS = 20
#: ... when the labelled items are at least this many per cell (or bin), else the line: with
#: fewer, the cells' within-cell variances are too noisy and their intervals undercover
MIN_PER_CELL = 20
#: the ordinal model takes scales of at most this many levels
MAX_LEVELS = 20
#: the posterior agrees with the EIF: mean within 0.25 SE (plus the Hausman and Monte-Carlo
#: terms of :meth:`JudgeGraded.check`), sd within 10 %
AGREEMENT_MEAN, AGREEMENT_SD = 0.25, 0.10
ASSUMPTIONS = (
    "The human-labelled items are a random subset of all items (missing completely at random), "
    "the human ratings are the truth on the declared scale, the judge is run the same way on "
    "every item, and items are independent. Estimators other than naive then estimate the mean "
    "rating of the population; the ordinal model also assumes proportional odds: the judge's "
    "rating shifts the human rating's latent logistic location, with cutpoints shared by all "
    "judge ratings.")


# ============================================================================ input handling
def graded_input(y) -> bool:
    """Whether ``y`` is a bounded outcome in [0, 1]: 1-D numbers (not booleans), all finite and
    in [0, 1], not only 0 and 1.

    Examples
    --------
    >>> graded_input([0.2, 1.0, 0.75]), graded_input([0, 1, 1]), graded_input(["a", "b"])
    (True, False, False)
    """
    if isinstance(y, dict | pd.DataFrame) or isinstance(getattr(y, "dtype", None),
                                                        pd.CategoricalDtype):
        return False
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError):
        return False
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
        return False
    arr = arr.astype(float)
    return bool(np.isfinite(arr).all() and arr.min() >= 0 and arr.max() <= 1
                and not np.isin(arr, (0.0, 1.0)).all())


def _as_range(y_range) -> tuple[float, float]:
    """``(low, high)``, numbers (infinite allowed) with ``low < high``."""
    try:
        low, high = (float(v) for v in y_range)
    except (TypeError, ValueError):
        raise ValueError(f"y_range must be (low, high), two numbers with low < high, such as "
                         f"(0, 1) or (1, 5); got {describe(y_range)}.") from None
    if not low < high:
        raise ValueError(f"y_range must have low < high, got ({low:g}, {high:g}).")
    return low, high


def _checked(y, yhat, yhat_u, low: float, high: float, bayes: bool):
    """Checked float arrays; refuses ratings outside the scale and a judge without variation."""
    y, yhat = aligned(y=y, yhat=yhat)
    y = as_array(y, "y")
    yhat, yhat_u = as_array(yhat, "yhat"), as_array(yhat_u, "yhat_unlabeled")
    out = y[(y < low) | (y > high)]
    if out.size:
        raise ValueError(f"y has {out.size} value(s) outside y_range = ({low:g}, {high:g}), "
                         f"such as {out[:3].tolist()}; declare the scale of the human ratings.")
    if min(yhat.min(), yhat_u.min()) == max(yhat.max(), yhat_u.max()):
        raise ValueError(f"yhat and yhat_unlabeled hold a single value ({yhat[0]:g}) for every "
                         "item: the judge carries no information; give a judge that varies.")
    if bayes:
        levels = np.arange(low, high + 1) if np.isfinite(low + high) else np.array([])
        if (low != np.round(low) or high != np.round(high) or levels.size > MAX_LEVELS
                or (y != np.round(y)).any()):
            raise ValueError(f"method='pymc' models ordinal ratings: integer y on an integer "
                             f"y_range of at most {MAX_LEVELS} levels; got y_range = "
                             f"({low:g}, {high:g}) and y such as {y[:3].tolist()}. Use a fast "
                             "path (method='eif') for a continuous outcome.")
    elif y.size < 2 or y.min() == y.max():
        raise ValueError(f"y takes one value ({y[0]:g}) on every labelled item: the standard "
                         "errors would be 0; label more items, or use method='pymc'.")
    elif yhat.min() == yhat.max():
        raise ValueError(f"yhat is {yhat[0]:g} on every labelled item, so the judge's "
                         "calibration cannot be estimated; label items the judge scores "
                         "differently.")
    return y, yhat, yhat_u


def judge_cells(yhat, yhat_unlabeled, mu_model: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The cell of every labelled and unlabelled item: its judge value (``"cell"``), or its
    quantile bin of the labelled scores (``"bins"``, :data:`N_BINS` bins).

    Returns
    -------
    k_labelled, k_unlabelled : numpy.ndarray of int
    size : int
        The number of cells.

    Examples
    --------
    >>> judge_cells(np.array([1.0, 3.0, 3.0]), np.array([2.0, 3.0]), "cell")
    (array([0, 2, 2]), array([1, 2]), 3)
    """
    if mu_model == "bins":
        edges = np.unique(np.quantile(yhat, np.linspace(0, 1, N_BINS + 1)[1:-1]))
        return (np.searchsorted(edges, yhat, side="right"),
                np.searchsorted(edges, yhat_unlabeled, side="right"), edges.size + 1)
    values = np.unique(np.concatenate([yhat, yhat_unlabeled]))
    return np.searchsorted(values, yhat), np.searchsorted(values, yhat_unlabeled), values.size


def default_mu_model(yhat, yhat_unlabeled, notes: list[str]) -> str:
    """``mu_model=None``: cells (``"cell"``) when the judge gives at most :data:`MAX_CELLS`
    distinct values over all items, else quantile bins (``"bins"``), if the labelled items are
    at least :data:`MIN_PER_CELL` per cell; else the line (``"linear"``, with a note in
    ``notes``). Values are counted over all items: a continuous judge on few labelled items
    would otherwise get cells that no unlabelled item falls in. With 2-5 labelled items per
    cell, the cell EIF's within-cell variances are too small and its 95 % intervals cover
    0.74-0.91; the line's cover 0.93-0.95 there.

    Examples
    --------
    >>> notes = []
    >>> default_mu_model(np.arange(400.0) % 3, np.zeros(50), notes), notes
    ('cell', [])
    >>> default_mu_model(np.array([1.0, 2.0]), np.linspace(0, 1, 50), notes)
    'linear'
    >>> notes[0][:55]
    'mu_model: 2 labelled items for the 10 quantile bins of '
    """
    values = np.unique(np.concatenate([yhat, yhat_unlabeled]))
    name, size = ("cell", values.size) if values.size <= MAX_CELLS else ("bins", N_BINS)
    if yhat.size >= MIN_PER_CELL * size:
        return name
    what = (f"the {size} judge values" if name == "cell" else
            f"the {size} quantile bins of the scores")
    notes.append(f"mu_model: {yhat.size} labelled items for {what} are fewer than "
                 f"{MIN_PER_CELL} per cell, too few for the cell means' variances: the EIF "
                 "uses the least-squares line (mu_model='linear'); ask for 'cell' or 'bins' "
                 "with more labels, or 'isotonic' or 'spline' from about 50.")
    return "linear"


# ============================================================================= fast paths
def eif_graded_cells(c, s, ss, u) -> Estimate:
    r"""The EIF estimator with cell means of a graded outcome, pooled over all items.

    With :math:`\hat\mu_k = s_k/c_k`, :math:`\hat\sigma_k^2 = ss_k/c_k - \hat\mu_k^2` (the
    within-cell variance, ``ddof=0``) and :math:`\bar p_k = (c_k + u_k)/N`,

    .. math::
        \hat\theta = \sum_k \bar p_k \hat\mu_k, \qquad
        \widehat{\mathrm{se}}^2 = \frac1N\sum_k \bar p_k(\hat\mu_k - \hat\theta)^2
            + \sum_k \bar p_k^2\,\frac{\hat\sigma_k^2}{c_k},

    the delta-method variance (Chen et al. 2026, eq. 15). For 0/1 outcomes
    :math:`\hat\sigma_k^2 = \hat\mu_k(1-\hat\mu_k)` and this is
    :func:`~bayeval.methods.judge.fast.eif_cells`. A cell without labelled items takes the
    labelled mean :math:`\bar Y`, and the second term is
    :func:`~bayeval.methods.judge.fast.cell_variance` (those cells share one :math:`\bar Y`).

    Parameters
    ----------
    c, s, ss, u : array-like, shape (K,)
        Per cell: labelled count, labelled sum of :math:`Y` and of :math:`Y^2`, unlabelled count.

    Returns
    -------
    Estimate

    Examples
    --------
    Two cells of two labelled items each (ratings 1, 2 and 4, 5) and 6 unlabelled items:

    >>> est = eif_graded_cells([2, 2], [3, 9], [5, 41], [2, 4])
    >>> [round(float(v), 4) for v in est]  # 0.4 * 1.5 + 0.6 * 4.5; 0.216 + 0.02 + 0.045
    [3.3, 0.5301]
    """
    c, s, ss, u = (np.asarray(a, dtype=float) for a in (c, s, ss, u))
    m, n_total = c.sum(), c.sum() + u.sum()
    seen = c > 0
    size = np.where(seen, c, 1.0)
    y_bar = s.sum() / m
    mu = np.where(seen, s / size, y_bar)
    sigma2 = np.maximum(np.where(seen, ss / size - mu**2, 0.0), 0.0)
    p_bar = (c + u) / n_total
    theta = np.sum(p_bar * mu)
    var = (np.sum(p_bar * (mu - theta) ** 2) / n_total
           + cell_variance(c, p_bar, sigma2, np.array([max(ss.sum() / m - y_bar**2, 0.0)])))
    return Estimate(theta, float(np.sqrt(var[0])))


def _estimates(y, yhat, yhat_u, names, mu_model: str | None, weights=None, folds=None,
               rng=None):
    """Estimates by name, the data summary and the notes, for one dataset; ``weights`` (the
    labelled and unlabelled items' sampling weights) runs the weighted estimators, a curve
    ``mu_model`` is cross-fitted on ``folds`` folds drawn from ``rng``."""
    mo = moments(y, yhat, yhat_u)
    notes: list[str] = []
    mu_model = mu_model or default_mu_model(yhat, yhat_u, notes)
    s = None if weights is None else Sample.of(y, yhat, yhat_u, *weights)
    celled = mu_model not in ("linear", *CURVES)
    cell_index = judge_cells(yhat, yhat_u, mu_model) if celled else None
    # the weighted "eif" is eif_linear with cell_index None, eif_cells with cells
    fns = by_name(mo, None, None, 0.0) if s is None else weighted_by_name(s, cell_index)
    info: dict[str, Any] = {}
    if celled:
        k_l, k_u, size = cell_index
        c = np.bincount(k_l, minlength=size)
        u = np.bincount(k_u, minlength=size)
        if s is None:
            cells = (c, np.bincount(k_l, y, size), np.bincount(k_l, y**2, size), u)
            fns["eif"] = lambda: eif_graded_cells(*cells)
        if (c == 0).any():
            notes.append(f"{u[c == 0].sum() / yhat_u.size:.1%} of the unlabelled items have a "
                         "judge value that no labelled item has; their cell mean falls back to "
                         "the labelled mean (bin the scores or use mu_model='linear').")
    elif mu_model in CURVES:
        fold = fold_ids(y.size, as_folds(folds, y.size), rng)
        curve = eif_from_curve(y, *cross_fitted(y, yhat, yhat_u, fold, mu_model),
                               *((None, None) if s is None else (s.w, s.v)))
        fns["eif"] = lambda: curve
        info["folds"] = int(fold.max()) + 1
    out = {k: Estimate(*(float(v) for v in fns[k]())) for k in names}
    eif = out.get("eif") or Estimate(*(float(v) for v in fns["eif"]()))
    lam = float(ppi_pp_lambda(mo, clip=False) if s is None else weighted_ppi_lambda(s, False))
    var_y = float(mo.y_var) if s is None else float(s.w @ (y - s.w @ y / y.size) ** 2) / y.size
    info.update({"m": y.size, "n": yhat_u.size, "lam": float(np.clip(lam, 0, 1)),
                 "lam_unclipped": lam, "mu_model": mu_model,
                 **efficiency(eif, var_y, y.size, yhat_u.size)})
    if s is not None:  # Kish's effective sizes of the weighted samples
        info.update(m_kish=float(y.size**2 / np.sum(s.w**2)),
                    n_kish=float(yhat_u.size**2 / np.sum(s.v**2)))
    if "ppi" in out and "classical" in out and out["ppi"].se > out["classical"].se:
        notes.append(f"the judge does not help PPI: its se {out['ppi'].se:.4f} exceeds the "
                     f"human-labels-only se {out['classical'].se:.4f}; use eif or ppi_pp.")
    return out, info, notes


def efficiency(eif: Estimate, var_y: float, m: int, n: int) -> dict[str, float]:
    r"""``n_effective`` :math:`= s^2(Y)/\mathrm{se}^2`, the human labels the judge-aided
    estimate is worth, and the implied ``rho2`` in :math:`\mathrm{se}^2 = s^2(Y)[\rho^2/N +
    (1-\rho^2)/m]` (for 0/1 outcomes :math:`s^2(Y) = \hat\theta(1-\hat\theta)`).

    Examples
    --------
    >>> out = efficiency(Estimate(3.0, 0.1), 2.0, 100, 900)  # rho2 = (1/100 - 1/200) / (9/1000)
    >>> {k: round(v, 4) for k, v in out.items()}
    {'n_effective': 200.0, 'rho2': 0.5556}
    """
    if eif.se == 0 or var_y == 0:
        return {"n_effective": float("inf"), "rho2": 1.0}
    rho2 = (1 / m - eif.se**2 / var_y) / (1 / m - 1 / (m + n))
    return {"n_effective": var_y / eif.se**2, "rho2": float(np.clip(rho2, 0.0, 1.0))}


def _dataset(out: dict[str, Estimate], z: float, ci_kind: str, low: float, high: float,
             alternative: str = "two-sided", null: float | None = None) -> xr.Dataset:
    """``mean``, ``sd``, ``lower``, ``upper`` (and ``p_value`` with ``null``: the z-test of
    :func:`~bayeval.methods.judge.compare.p_value`) over ``estimator``, on the scale [low, high];
    a one-sided ``alternative`` opens the interval to ``high`` ("larger") or ``low``."""
    names = list(out)
    est = Estimate(np.array([out[k].estimate for k in names]), np.array([out[k].se for k in names]))
    if np.isfinite(low + high):
        mean, lower, upper = reported(est, z, ci_kind, low, high)
    else:
        mean, (lower, upper) = est.estimate, interval(est, z, "wald")
    if alternative == "larger":
        upper = np.full(len(names), high)
    elif alternative == "smaller":
        lower = np.full(len(names), low)
    columns = {"mean": mean, "sd": est.se, "lower": lower, "upper": upper}
    if null is not None:
        from bayeval.methods.judge.compare import p_value  # compare imports this module

        columns["p_value"] = np.array([p_value(out[k], null, alternative) if out[k].se > 0
                                       else np.nan for k in names])
    return xr.Dataset({k: ("estimator", v) for k, v in columns.items()},
                      coords={"estimator": names})


def as_null(null, low: float, high: float, what: str | None = None) -> float | None:
    """``null`` as a float in [low, high], or None; ``what`` names the scale in the error
    (default: a mean rating on ``y_range``)."""
    if null is None:
        return None
    try:
        value = float(null)
    except (TypeError, ValueError):
        value = np.nan
    if not low <= value <= high:
        what = what or f"a mean rating on y_range = [{low:g}, {high:g}]"
        raise ValueError(f"null must be {what} (the theta_0 of the test), got "
                         f"{describe(null)}.")
    return value


# ============================================================================ entry point
def judge_graded(y, yhat, yhat_unlabeled, *, y_range=None, method: str = "eif",
                 ci_prob: float = 0.95, ci_kind: str = "logit", mu_model: str | None = None,
                 folds: int | None = None, sample_weight=None, sample_weight_unlabeled=None,
                 alternative: str = "two-sided", null: float | None = None, prior=None,
                 random_seed: int | None = None,
                 sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""The mean human rating from a judge on all items and human ratings on a few.

    What :func:`bayeval.judge` runs when ``y_range`` is given or ``y`` holds numbers in [0, 1]
    other than only 0 and 1. Arguments as :func:`bayeval.judge`, and:

    Parameters
    ----------
    y_range : (low, high), optional
        The scale of the human ratings, e.g. ``(1, 5)``; default ``(0, 1)``. Estimates outside it
        (PPI, PPI++) are reported at its nearest end, and logit intervals are computed on it
        rescaled to [0, 1]. An infinite end declares an unbounded outcome (Wald intervals only).
    method : str
        ``"naive"``, ``"classical"``, ``"ppi"``, ``"ppi_pp"``, ``"ppi_pp_unclipped"``, ``"eif"``
        (default), ``"all"``; ``"pymc"`` (or ``"both"``) samples the ordered-logistic model of
        integer ratings (:func:`~bayeval.methods.judge.graded_models.ordinal_model`) and keeps
        the EIF estimate as the closed form, which :meth:`JudgeGraded.check` compares it with.
    mu_model : {"cell", "linear", "bins", "isotonic", "spline"}, optional
        The EIF's calibration curve; default cells up to 20 distinct judge values over all
        items, else 10 quantile bins. ``"isotonic"`` and ``"spline"`` are cross-fitted on
        ``folds`` folds (:mod:`bayeval.methods.judge.curves`). For ``"pymc"`` the cells are the
        judge ratings of the model.
    folds : int, optional
        The number of cross-fitting folds of a curve (default 5), drawn from ``random_seed``.
    sample_weight, sample_weight_unlabeled : array-like, optional
        Sampling weights of the labelled items, :math:`w_i \propto 1/\pi_i` with
        :math:`\pi_i` the item's probability of a human rating, and of the others
        (:math:`\propto 1/(1 - \pi_i)`; default uniform). Every fast path becomes its weighted
        Hájek form (:mod:`bayeval.methods.judge.weighted`): the labelled mean
        :math:`\bar Y_{L,w} = \sum w_iY_i/\sum w_i`, PPI/PPI++ :math:`\lambda\bar{\hat
        Y}_{U,v} + \overline{(Y - \lambda\hat Y)}_{L,w}` with ppi_py's weighted
        :math:`\hat\lambda`, the EIF with weighted cells, line or cross-fitted curve
        (:func:`~bayeval.methods.judge.curves.eif_from_curve`), with their linearised
        (sandwich) variances. The ordinal model has no weighted form.
    alternative : {"two-sided", "larger", "smaller"}
        The alternative of the p-values; one-sided intervals open to the end of the scale.
    null : float, optional
        :math:`\theta_0` on the scale: adds ``p_value``, the z-test of every estimate.
    prior : dict, optional
        ``"pymc"`` only: the ordinal model's priors
        (:func:`~bayeval.methods.judge.graded_models.ordinal_model`).

    Returns
    -------
    JudgeGraded
        Fast paths: ``closed_form`` over ``estimator`` (with ``p_value`` given ``null``);
        ``data`` holds ``m``, ``n``, ``lam``, ``n_effective`` (:func:`efficiency`), ``rho2``
        (with weights also Kish's effective sizes ``m_kish``, ``n_kish``). Model: posterior
        ``theta`` (the population mean rating), ``theta_finite`` (the mean rating of the
        :math:`N` items: the observed ratings of the labelled ones, ratings drawn from the
        posterior for the others), ``cell_mean`` and ``level_probs`` per judge rating.

    Examples
    --------
    Human ratings on 1-5, the judge's on 1-5, one point too generous where humans give 1-3:

    >>> rng = np.random.default_rng(0)
    >>> human = rng.integers(1, 6, 3000)
    >>> judged = np.minimum(human + (human <= 3) + (rng.random(3000) < 0.2), 5)
    >>> ev = judge_graded(human[:300], judged[:300], judged[300:], y_range=(1, 5), method="all")
    >>> ev.summary()["mean"].round(3).to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'naive': 3.791, 'classical': 3.15, 'ppi': 3.074, 'ppi_pp': 3.074, 'ppi_pp_unclipped': 3.063,
     'eif': 3.067}
    >>> round(float(ev.tree["data"]["n_effective"]))  # the 300 ratings count as 1,261
    1261

    Ratings asked for three times as often where the judge gives 4 or 5 (weights
    :math:`1/\pi`), and the test of :math:`H_0: \theta = 3`:

    >>> pi = np.where(judged >= 4, 0.15, 0.05)
    >>> rated = rng.random(3000) < pi
    >>> ev = judge_graded(human[rated], judged[rated], judged[~rated], y_range=(1, 5),
    ...                   method="all", sample_weight=1 / pi[rated],
    ...                   sample_weight_unlabeled=1 / (1 - pi[~rated]), null=3)
    >>> ev.summary().loc[["classical", "ppi_pp", "eif"], ["mean", "sd", "p_value"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_graded (all), closed form: 95% logit confidence intervals
                mean     sd  p_value
    estimator
    classical  3.068  0.094    0.471
    ppi_pp     3.070  0.040    0.080
    eif        3.064  0.038    0.092
    """
    low, high = (0.0, 1.0) if y_range is None else _as_range(y_range)
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", ("logit", "wald"))
    if ci_kind == "logit" and not np.isfinite(low + high):
        raise ValueError(f"ci_kind='logit' needs a bounded y_range, got ({low:g}, {high:g}); "
                         "pass ci_kind='wald'.")
    if mu_model is not None:
        mu_model = as_choice(mu_model, "mu_model", (*MU_MODELS, *CURVES))
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    null = as_null(null, low, high)
    bayes = method in ("pymc", "both")
    weighted = sample_weight is not None or sample_weight_unlabeled is not None
    if bayes and mu_model not in (None, "cell", "bins"):
        raise ValueError("method='pymc' models the human rating per judge rating (or score "
                         "bin): mu_model must be 'cell', 'bins' or None.")
    if bayes and (weighted or null is not None or alternative != "two-sided"):
        raise ValueError("sample_weight, sample_weight_unlabeled, null and alternative apply to "
                         "the fast paths; the ordinal model assumes the rated items are a random "
                         "subset. Use method='eif' (or another fast path) with weights.")
    if folds is not None and mu_model not in CURVES:
        raise ValueError(f"folds applies to the cross-fitted curves, mu_model='isotonic' or "
                         f"'spline'; mu_model is {mu_model!r}: leave folds None.")
    if prior is not None and not bayes:
        raise ValueError("prior applies to method='pymc'; the fast paths have none.")
    y, yhat, yhat_u = _checked(y, yhat, yhat_unlabeled, low, high, bayes)
    weights = (sample_weight, sample_weight_unlabeled) if weighted else None
    z = z_value(ci_prob) if alternative == "two-sided" else float(special.ndtri(ci_prob))
    common = dict(method="judge_graded", variant=method, ci_prob=ci_prob, ci_kind="eti",
                  random_seed=random_seed, assumptions=ASSUMPTIONS)
    scale = f"the mean rating on [{low:g}, {high:g}]"
    names = GRADED_ESTIMATORS if method == "all" else ("eif",) if bayes else (method,)
    out, info, notes = _estimates(y, yhat, yhat_u, names, mu_model, weights, folds,
                                  as_seed(random_seed) if mu_model in CURVES else None)
    notes += [f"{k} = {e.estimate:.4f} lies outside [{low:g}, {high:g}]: reported at the nearest "
              "end, its interval clipped" for k, e in out.items() if not low <= e.estimate <= high]
    closed = _dataset(out, z, ci_kind, low, high, alternative, null)
    info.update(y_low=low, y_high=high)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=4)  # the user's call of judge()
    if not bayes:
        return JudgeGraded.create(
            closed_form=closed, data=xr.Dataset(info), warnings=notes,
            interval_kind=ci_kind if alternative == "two-sided" else
            f"one-sided ({alternative}) {'Wald' if ci_kind == 'wald' else ci_kind}",
            **common,
            description=f"{scale} from {y.size} human ratings and {yhat_u.size} judge-only "
                        f"items ({ci_kind} intervals"
                        + ("" if alternative == "two-sided" else f", one-sided: {alternative}")
                        + ("" if null is None else f", null {null:g}")
                        + (", sampling weights" if weighted else "") + ")")
    from bayeval.methods.judge.graded_models import sample_ordinal

    draws, pm_model = sample_ordinal(y, yhat, yhat_u, low, high, info["mu_model"], prior,
                                     random_seed, as_sample_kwargs(sample_kwargs))
    return JudgeGraded.create(
        closed_form=closed, draws=draws, estimand="posterior/theta", model=pm_model,
        data=xr.Dataset(info), warnings=notes, **common,
        description=f"ordered-logistic posterior of {scale} from {y.size} human ratings and "
                    f"{yhat_u.size} judge-only items; closed form: the EIF estimate")


class JudgeGraded(Evaluation, method="judge_graded"):
    """The result of :func:`bayeval.judge` on a graded outcome; :meth:`check` compares the
    ordinal model's posterior with the EIF estimate.

    Examples
    --------
    >>> ev = judge_graded([1, 3, 2, 5], [2, 3, 2, 4], [2, 3, 4], y_range=(1, 5))
    >>> type(ev).__name__, ev.meta["method"]
    ('JudgeGraded', 'judge_graded')
    """

    def check(self) -> Table:
        r"""Posterior of ``theta`` vs the EIF estimate (Bernstein–von Mises, Hausman).

        The ordinal model, when right, is at least as efficient as the EIF estimator, which
        assumes nothing about :math:`Y \mid \hat Y`; so the posterior mean :math:`\bar\theta`
        and the estimate differ by about :math:`\sqrt{\mathrm{SE}^2 - \mathrm{sd}^2}` (Hausman
        1978). ``mean`` tests :math:`|\bar\theta - \hat\theta_{EIF}| \le 0.25\,\mathrm{SE} +
        4\sqrt{\max(\mathrm{SE}^2 - \mathrm{sd}^2, 0) + \mathrm{MCSE}^2}` and ``sd_ratio`` tests
        :math:`|\mathrm{sd}/\mathrm{SE} - 1| \le 0.10`; the sampler's own tests follow
        (:func:`bayeval.check.sampler_tests`). A failure means the model does not fit (the
        proportional-odds shape is wrong, or the prior dominates few labels) or the sampler did
        not converge.

        Returns
        -------
        Table
            Indexed by ``test``, columns ``fast``, ``draws``, ``statistic``, ``tolerance``,
            ``n_eff``, ``passed``; ``attrs["passed"]`` is True when every test passed.

        Raises
        ------
        ValueError
            Without posterior draws (a fast path ran).

        Examples
        --------
        Independent draws centred 0.1 SE from the EIF estimate, standing in for the sampler:

        >>> cf = xr.Dataset({k: ("estimator", [v]) for k, v in (("mean", 3.07), ("sd", 0.04),
        ...                  ("lower", 2.99), ("upper", 3.15))}, coords={"estimator": ["eif"]})
        >>> rng = np.random.default_rng(0)
        >>> theta = rng.normal(3.074, 0.039, size=(2, 1000))
        >>> draws = xr.DataTree.from_dict({
        ...     "posterior": xr.Dataset({"theta": (("chain", "draw"), theta)}),
        ...     "sample_stats": xr.Dataset({"diverging": (("chain", "draw"),
        ...                                               np.zeros((2, 1000), bool))})})
        >>> ev = JudgeGraded.create(method="judge_graded", variant="pymc", closed_form=cf,
        ...                         draws=draws, estimand="posterior/theta")
        >>> ev.check().loc[["mean", "sd_ratio"], ["statistic", "tolerance", "passed"]].round(4)
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        ordinal posterior vs EIF (...): agree
                  statistic  tolerance  passed
        test
        mean         0.0029     0.0454    True
        sd_ratio     0.0246     0.1000    True
        """
        if self.draws is None:
            raise ValueError("check() needs draws: run judge(..., method='pymc') on integer "
                             "ratings.")
        import arviz as az

        eif = self.closed_form.sel(estimator="eif")
        est, se = float(eif["mean"]), float(eif["sd"])
        x = self.draws.transpose(*SAMPLE_DIMS).values
        mean, sd = float(x.mean()), float(x.std(ddof=1))
        mcse = float(az.mcse(x, method="mean"))
        ess = float(az.ess(x, method="bulk"))
        hausman = np.sqrt(max(se**2 - sd**2, 0.0) + mcse**2)
        frame = pd.DataFrame(
            {"fast": [est, 1.0], "draws": [mean, sd / se],
             "statistic": [abs(mean - est), abs(sd / se - 1)],
             "tolerance": [AGREEMENT_MEAN * se + 4 * hausman, AGREEMENT_SD], "n_eff": ess},
            index=pd.Index(["mean", "sd_ratio"], name="test"))
        frame["passed"] = frame["statistic"] <= frame["tolerance"]
        sampler = sampler_tests(self.tree["posterior"].to_dataset(),
                                self.tree["sample_stats"].to_dataset())
        frame = pd.concat([frame, sampler])
        passed = bool(frame["passed"].all())
        caption = ("ordinal posterior vs EIF (mean within 0.25 SE + 4 Hausman sd, sd ratio "
                   f"within 1 ± {AGREEMENT_SD}; sampler converged): "
                   + ("agree" if passed else "FAILED: " + ", ".join(
                       frame.index[~frame["passed"]])))
        return table(frame, caption, passed=passed)
