r"""Comparing two systems with a noisy judge and a few human labels, on the same prompts.

Systems A and B answer the same :math:`N` prompts. Humans grade both answers on :math:`m` of
them, chosen at random (:math:`Y_A, Y_B`: 0/1, or ratings on a declared scale); the judge grades
both answers on all :math:`N` (:math:`\hat Y_A, \hat Y_B`). The estimand is the difference of
the two systems' rates (win rates, pass rates, mean ratings)

.. math:: \Delta = \theta_A - \theta_B = E[D], \qquad D = Y_A - Y_B .

The estimators work on the per-prompt differences :math:`D` and :math:`\hat D = \hat Y_A -
\hat Y_B`, which keeps the pairing: what the two answers to one prompt share (its difficulty,
the judge's mood on it) cancels in :math:`D` instead of adding to the variance.

================  ==========================================================================
estimator         definition
================  ==========================================================================
naive             mean of :math:`\hat D` over the prompts without human labels
classical         mean of :math:`D` over the labelled prompts (the paired human-only estimate)
ppi               :math:`\bar D_L + (\bar{\hat D}_U - \bar{\hat D}_L)` (Angelopoulos et al. 2023)
ppi_pp            :math:`\bar D_L + \hat\lambda(\bar{\hat D}_U - \bar{\hat D}_L)`, ppi_py's
                  power-tuned :math:`\hat\lambda` of the differences, clipped to [0, 1]
ppi_pp_unclipped  the same :math:`\hat\lambda`, not clipped
eif               :math:`\frac1N\sum_i\hat\mu(\hat Y_{A,i}, \hat Y_{B,i}) + \frac1m\sum_{j \in L}
                  \{D_j - \hat\mu(\hat Y_{A,j}, \hat Y_{B,j})\}` (Chen et al. 2026, eq. 19)
                  with :math:`\hat\mu \approx E[D \mid \hat Y_A, \hat Y_B]`
bayes             the exact posterior of the Dirichlet model of the joint table (0/1 outcomes)
================  ==========================================================================

The EIF conditions on both verdicts, not only on their difference: a prompt both answers pass
and one both fail have :math:`\hat D = 0` but may differ in :math:`E[D]`. Its calibration curve
:math:`\hat\mu` is the labelled mean of :math:`D` per pair of judge values (``mu_model="cell"``,
post-stratification, :func:`~bayeval.methods.judge.graded.eif_graded_cells`) or the least-squares
plane :math:`a + b_A\hat Y_A + b_B\hat Y_B` (``"linear"``, :func:`eif_least_squares`).

When the labelled prompts are drawn with known probabilities :math:`\pi_i` (a stratified
design, more labels where the judge's verdicts differ), ``sample_weight`` :math:`w_i \propto
1/\pi_i` and ``sample_weight_unlabeled`` :math:`v_i \propto 1/(1 - \pi_i)` turn every
frequentist estimator into the weighted one of :mod:`bayeval.methods.judge.weighted` applied to
:math:`D`: Hájek means :math:`\sum_iw_iD_i/\sum_iw_i`, the EIF's weighted cell means per pair
of judge values (or weighted least squares), with their sandwich (linearised) variances.

References
----------
Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), Prediction-powered inference, Science 382.
Angelopoulos, Duchi, Zrnic (2023), PPI++: efficient prediction-powered inference,
arXiv:2311.01453. Chen, Lu, Li, Guo, Li (2026), Efficient inference for noisy LLM-as-a-judge
evaluation.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from bayeval.check import compare
from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.methods.judge.categories import ClassCounts, posterior_draws
from bayeval.methods.judge.fast import (
    Estimate,
    by_name,
    moments,
    ppi_pp_lambda,
    reported,
    z_value,
)
from bayeval.methods.judge.graded import efficiency, eif_graded_cells
from bayeval.methods.judge.weighted import Sample
from bayeval.methods.judge.weighted import by_name as weighted_by_name
from bayeval.methods.judge.weighted import ppi_pp_lambda as weighted_ppi_lambda
from bayeval.table import Table, table
from bayeval.validation import aligned, as_array, as_choice, as_ci_prob, as_seed, describe

__all__ = ["COMPARE_ESTIMATORS", "JudgeCompare", "compare_systems", "difference_posterior",
           "eif_least_squares", "p_value"]

COMPARE_ESTIMATORS = ("naive", "classical", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif", "bayes")
METHODS = (*COMPARE_ESTIMATORS, "all")
ALTERNATIVES = ("two-sided", "larger", "smaller")
MU_MODELS = ("cell", "linear")
#: ``mu_model=None`` uses cells up to this many distinct pairs of judge values (a 5-point judge
#: on both systems), else the least-squares plane; ``bayes`` needs at most this many
MAX_CELLS = 25
#: exact posterior draws of ``bayes``
POSTERIOR_DRAWS = 20_000
#: the posterior agrees with the EIF: mean within 0.25 SE, sd within 10 % (Bernstein–von Mises)
AGREEMENT_MEAN, AGREEMENT_SD = 0.25, 0.10
#: the truth pairs (Y_A, Y_B) of the Dirichlet model, in this order, and their difference
PAIRS = ((0, 0), (0, 1), (1, 0), (1, 1))
PAIR_DIFFERENCE = np.array([a - b for a, b in PAIRS], dtype=float)
ASSUMPTIONS = (
    "Both systems answer the same prompts; the human-labelled prompts are a random subset of all "
    "prompts (missing completely at random; with sampling weights, drawn with the known "
    "probabilities the weights invert), the human grades are the truth, the judge grades "
    "every answer the same way, and prompts are independent. The estimators other than naive then "
    "estimate the difference of the two systems' population rates; the judge may treat the two "
    "systems differently (its errors are estimated per pair of verdicts).")


# ============================================================================ input handling
def system_columns(x, name: str, count: int | None = None) -> tuple[list | None, list]:
    """(system names or None, one column per system) of a mapping, DataFrame or 2-D array.

    ``count`` systems exactly when given, else at least two.

    Examples
    --------
    >>> system_columns({"A": [1, 0], "B": [0, 0]}, "y")
    (['A', 'B'], [[1, 0], [0, 0]])
    >>> system_columns(np.zeros((3, 2)), "y")[0] is None
    True
    """
    if isinstance(x, Mapping):
        names, cols = list(x), list(x.values())
    elif isinstance(x, pd.DataFrame):
        names, cols = list(x.columns), [x[c] for c in x.columns]
    else:
        arr = np.asarray(x) if not isinstance(x, str) else np.empty(0)
        if arr.ndim != 2 or arr.shape[1] < 2 or count not in (None, arr.shape[1]):
            what, shape = (("the two systems", "(n, 2)") if count == 2 else
                           ("one column per system", "(n, K), K >= 2"))
            raise ValueError(f"{name} must hold {what}: a dict {{system: values}}, a DataFrame "
                             f"or an array of shape {shape}; got {describe(x)}.")
        names, cols = None, list(arr.T)
    if count is not None and len(cols) != count:
        raise ValueError(f"{name} must hold exactly {'two' if count == 2 else count} systems, "
                         f"got {len(cols)}: {names}.")
    if len(cols) < 2:
        raise ValueError(f"{name} must hold at least two systems, got {len(cols)}: {names}.")
    return names, cols


def _systems(y, yhat, yhat_unlabeled) -> tuple[list, list]:
    """The two systems' names and their (y, yhat, yhat_unlabeled) columns."""
    parts = [system_columns(x, n, 2) for x, n in ((y, "y"), (yhat, "yhat"),
                                          (yhat_unlabeled, "yhat_unlabeled"))]
    named = [(n, p[0]) for n, p in zip(("y", "yhat", "yhat_unlabeled"), parts, strict=True)
             if p[0] is not None]
    names = named[0][1] if named else ["A", "B"]
    for arg, keys in named:
        if keys != names:
            raise ValueError(f"{arg} names the systems {keys} but {named[0][0]} names them "
                             f"{names}; give the same two systems in the same order.")
    return [str(n) for n in names], [p[1] for p in parts]


def grade_scale(ys: list[np.ndarray], names: list, y_range) -> tuple[float, float, bool]:
    """(low, high, binary) of the human grades: 0/1, in [0, 1], or on ``y_range``.

    Examples
    --------
    >>> grade_scale([np.array([1.0, 0.0]), np.array([0.5, 1.0])], ["A", "B"], None)
    (0.0, 1.0, False)
    >>> grade_scale([np.array([1.0, 5.0])], ["A"], (1, 5))
    (1.0, 5.0, False)
    """
    if y_range is None:
        low, high = 0.0, 1.0
    else:
        try:
            low, high = (float(v) for v in y_range)
        except (TypeError, ValueError):
            raise ValueError(f"y_range must be (low, high), two finite numbers with low < high, "
                             f"such as (1, 5); got {describe(y_range)}.") from None
        if not (np.isfinite(low + high) and low < high):
            raise ValueError(f"y_range must be finite with low < high, got ({low:g}, {high:g}).")
    for values, name in zip(ys, names, strict=True):
        out = values[(values < low) | (values > high)]
        if out.size:
            raise ValueError(f"y[{name!r}] has {out.size} value(s) outside [{low:g}, {high:g}], "
                             f"such as {out[:3].tolist()}; give 0/1 grades, grades in [0, 1], "
                             "or declare the scale with y_range.")
    binary = (low, high) == (0.0, 1.0) and all(np.isin(v, (0.0, 1.0)).all() for v in ys)
    return low, high, binary


def joint_cells(yhat, yhat_u) -> tuple[np.ndarray, np.ndarray, int]:
    """The cell (distinct vector of the systems' judge values) of every labelled and unlabelled
    prompt, and the number of cells.

    Examples
    --------
    >>> joint_cells([np.array([1, 0]), np.array([1, 1])], [np.array([0, 1]), np.array([0, 1])])
    (array([2, 1]), array([0, 2]), 3)
    """
    pairs = np.concatenate([np.column_stack(yhat), np.column_stack(yhat_u)])
    _, codes = np.unique(pairs, axis=0, return_inverse=True)
    codes = codes.ravel()
    m = yhat[0].size
    return codes[:m], codes[m:], int(codes.max()) + 1


def _refuse(d, d_hat, d_hat_u, names) -> None:
    """The frequentist estimators need a varying human difference and judge on the labelled
    prompts."""
    diff = f"y[{names[0]!r}] - y[{names[1]!r}]"
    if d.size < 2 or d.min() == d.max():
        raise ValueError(f"{diff} takes one value ({d[0]:g}) on every labelled prompt: the "
                         "standard errors would be 0; label more prompts, or use "
                         "method='bayes' (0/1 grades).")
    if d_hat.min() == d_hat.max():
        raise ValueError(f"yhat[{names[0]!r}] - yhat[{names[1]!r}] is {d_hat[0]:g} on every "
                         "labelled prompt, so the judge's errors on the difference cannot be "
                         "estimated; label prompts where the judge's verdicts differ.")


# ============================================================================= estimators
def eif_least_squares(d, x_labelled, x_unlabelled, w=None, v=None) -> Estimate:
    r"""EIF estimator of :math:`E[D]` with a least-squares calibration :math:`\hat\mu(x) = a +
    b^\top x` fitted on the labelled items.

    .. math::
        \hat\Delta = \frac1N\sum_{i=1}^N\omega_i\hat\mu(x_i)
            + \frac1m\sum_{j\in L}w_j(D_j - \hat\mu(x_j)),
        \qquad \widehat{\mathrm{se}}^2 = \frac{1}{N^2}\sum_{i=1}^N\omega_i^2\{\hat\mu(x_i)
            - \bar\mu_N\}^2 + \frac{1}{m^2}\sum_{j\in L}w_j^2(D_j - \hat\mu(x_j))^2,

    the influence-function (sandwich) variance, with sampling weights :math:`w` of the
    labelled and :math:`v` of the unlabelled items (:math:`\omega_i` the item's weight, each
    sample's rescaled to mean 1 by :func:`~bayeval.methods.judge.weighted.sampling_weights`;
    default 1), :math:`\bar\mu_N` the first term, and :math:`a, b` weighted least squares, so
    the weighted residual mean is 0. With one column :math:`x = \hat Y` this is
    :func:`~bayeval.methods.judge.fast.eif_linear` (weighted:
    :func:`~bayeval.methods.judge.weighted.eif_linear`). Collinear columns (a constant judge on
    one system) are fitted by the minimum-norm least squares: the fitted values are unchanged.

    Parameters
    ----------
    d : array-like, shape (m,)
        The outcome on the labelled items.
    x_labelled, x_unlabelled : array-like, shape (m, k) and (n, k)
        The judge's values on the labelled and unlabelled items.
    w, v : numpy.ndarray, optional
        Sampling weights of mean 1 of the labelled and unlabelled items (default uniform).

    Returns
    -------
    Estimate

    Examples
    --------
    >>> d = np.array([1.0, 0.0, 0.0, -1.0, 1.0, 0.0])
    >>> x = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
    >>> [round(float(v), 4) for v in eif_least_squares(d, x, np.array([[1.0, 0.0], [0.0, 1.0]]))]
    [0.125, 0.276]
    """
    d = np.asarray(d, float)
    x_l, x_u = np.asarray(x_labelled, float), np.asarray(x_unlabelled, float)
    w = np.ones(d.size) if w is None else np.asarray(w, float)
    v = np.ones(x_u.shape[0]) if v is None else np.asarray(v, float)
    design = np.column_stack([np.ones(d.size), x_l])
    root = np.sqrt(w)
    coef = np.linalg.lstsq(design * root[:, None], d * root, rcond=None)[0]
    fit_l = design @ coef
    fit_all = np.concatenate([fit_l, coef[0] + x_u @ coef[1:]])
    omega = np.concatenate([w, v])
    resid = d - fit_l
    mean = float(omega @ fit_all) / omega.size
    var = (np.sum((omega * (fit_all - mean)) ** 2) / omega.size**2
           + np.sum((w * resid) ** 2) / d.size**2)
    return Estimate(mean + float(w @ resid) / d.size, float(np.sqrt(var)))


def difference_posterior(table_, unlabelled, alpha) -> Estimate:
    r"""Exact posterior mean and sd of :math:`\Delta = \theta_A - \theta_B` under the Dirichlet
    model of the joint table of 0/1 grades.

    The cells are :math:`(Y_A, Y_B, J)`, :math:`J` the pair of judge values. A Dirichlet prior
    :math:`\alpha` on them is, by aggregation, :math:`\rho = P(J) \sim
    \mathrm{Dirichlet}(\sum_k\alpha_{kj})` and independent :math:`P(Y_A, Y_B \mid J = j) \sim
    \mathrm{Dirichlet}(\alpha_{\cdot j})`; the judge values of all :math:`N` prompts inform
    :math:`\rho`, the labelled ones the columns, the hidden grades of the others summed out
    (:func:`~bayeval.methods.judge.categories.posterior_draws`). With :math:`a` and :math:`b` the
    posterior concentrations, :math:`A = \sum_j a_j`, :math:`B_j = \sum_k b_{kj}`, the difference
    :math:`d_k = y_A - y_B` of truth pair :math:`k` and :math:`\nu_j = \sum_k d_k\mu_{kj}`:

    .. math::
        E\nu_j = \sum_k d_k\frac{b_{kj}}{B_j},\quad
        \mathrm{Var}\,\nu_j = \frac{\sum_k d_k^2 b_{kj}/B_j - (E\nu_j)^2}{B_j + 1},\quad
        E\Delta = \sum_j\frac{a_j}{A}E\nu_j,

    .. math::
        E\Delta^2 = \sum_{i,j}\frac{a_i\delta_{ij} + a_ia_j}{A(A+1)}
            (E\nu_iE\nu_j + \delta_{ij}\mathrm{Var}\,\nu_j).

    Parameters
    ----------
    table_ : array (4, J)
        Labelled prompts per truth pair (rows in the order of :data:`PAIRS`) and judge cell.
    unlabelled : array (J,)
        Unlabelled prompts per judge cell.
    alpha : array (4, J)
        Prior concentrations.

    Returns
    -------
    Estimate
        Posterior mean and sd.

    Examples
    --------
    >>> t = np.array([[20, 5, 4, 6], [3, 10, 2, 5], [4, 2, 12, 5], [8, 4, 5, 60]])
    >>> post = difference_posterior(t, np.array([900, 700, 800, 4000]), np.full((4, 4), 0.5))
    >>> [round(float(v), 4) for v in post]
    [0.0158, 0.0361]
    """
    b = np.asarray(alpha, float) + np.asarray(table_, float)
    a = b.sum(axis=0) + np.asarray(unlabelled, float)
    big_a, big_b = a.sum(), b.sum(axis=0)
    e_nu = PAIR_DIFFERENCE @ b / big_b
    var_nu = (PAIR_DIFFERENCE**2 @ b / big_b - e_nu**2) / (big_b + 1)
    rho2 = (np.diag(a) + np.outer(a, a)) / (big_a * (big_a + 1))
    mean = a @ e_nu / big_a
    second = e_nu @ rho2 @ e_nu + np.diag(rho2) @ var_nu
    return Estimate(float(mean), float(np.sqrt(max(second - mean**2, 0.0))))


def p_value(est: Estimate, null: float = 0.0, alternative: str = "two-sided") -> float:
    r"""p-value of the z-test of :math:`H_0: \Delta = \Delta_0`, as ppi_py's ``ppi_mean_pval``.

    With :math:`z = (\hat\Delta - \Delta_0)/\widehat{\mathrm{se}}`: :math:`2\Phi(-|z|)`
    (``"two-sided"``), :math:`\Phi(-z)` (``"larger"``: :math:`H_1: \Delta > \Delta_0`) or
    :math:`\Phi(z)` (``"smaller"``).

    Examples
    --------
    >>> est = Estimate(0.05, 0.025)
    >>> round(p_value(est), 4), round(p_value(est, 0.0, "larger"), 4)
    (0.0455, 0.0228)
    """
    z = (float(est.estimate) - null) / float(est.se)
    if alternative == "two-sided":
        return float(2 * scipy.special.ndtr(-abs(z)))
    return float(scipy.special.ndtr(-z if alternative == "larger" else z))


def _interval(est: Estimate, ci_prob: float, kind: str, alternative: str, width: float):
    """Reported estimate and interval on [-width, width]; one-sided ones open to the range end."""
    z = z_value(ci_prob) if alternative == "two-sided" else float(scipy.special.ndtri(ci_prob))
    mean, lower, upper = (float(v) for v in reported(est, z, kind, -width, width))
    if alternative == "larger":
        upper = width
    elif alternative == "smaller":
        lower = -width
    return mean, lower, upper


def _fast(d, d_hat, d_hat_u, x_l, x_u, cells, names, mu_model, s: Sample | None = None
          ) -> dict[str, Estimate]:
    """The frequentist estimates of ``names`` on the differences; with the sample ``s`` of
    the differences and their sampling weights, the weighted ones (``cells`` then the cell
    of every labelled and unlabelled prompt and their number)."""
    if s is not None:
        fns = weighted_by_name(s, cells if mu_model == "cell" else None)
        if mu_model == "linear":
            fns["eif"] = lambda: eif_least_squares(d, x_l, x_u, s.w, s.v)
    else:
        fns = by_name(moments(d, d_hat, d_hat_u), None, None, 0.0)
        fns["eif"] = ((lambda: eif_least_squares(d, x_l, x_u)) if mu_model == "linear" else
                      (lambda: eif_graded_cells(*cells)))
    return {k: Estimate(*(float(v) for v in fns[k]())) for k in names}


def _bayes(y, k_l, k_u, size, prior, rng, ci_prob, alternative, null):
    """Posterior draws (theta, theta_system) and the ``bayes`` row of the closed form."""
    pair = (2 * y[0] + y[1]).astype(np.int64)
    counts = np.bincount(pair * size + k_l, minlength=4 * size).reshape(4, size)
    unlabelled = np.bincount(k_u, minlength=size)
    alpha = np.full((4, size), prior)
    exact = difference_posterior(counts, unlabelled, alpha)
    pi = posterior_draws(ClassCounts(counts, unlabelled), alpha, POSTERIOR_DRAWS, rng)
    delta = pi @ PAIR_DIFFERENCE
    rates = np.stack([pi[:, 2] + pi[:, 3], pi[:, 1] + pi[:, 3]], axis=-1)
    tail = 1 - ci_prob
    if alternative == "two-sided":
        lower, upper = np.quantile(delta, [tail / 2, 1 - tail / 2])
    else:
        lower, upper = ((np.quantile(delta, tail), 1.0) if alternative == "larger"
                        else (-1.0, np.quantile(delta, ci_prob)))
    row = {"mean": exact.estimate, "sd": exact.se, "lower": float(lower), "upper": float(upper),
           "p_value": np.nan, "prob_greater": float(np.mean(delta > null))}
    return delta, rates, row, exact


# ============================================================================ entry point
def compare_systems(y, yhat, yhat_unlabeled, *, method: str = "eif", ci_prob: float = 0.95,
                    ci_kind: str = "wald", alternative: str = "two-sided", null: float = 0.0,
                    mu_model: str | None = None, y_range=None, prior: float = 0.5,
                    sample_weight=None, sample_weight_unlabeled=None,
                    random_seed: int | None = None) -> JudgeCompare:
    r"""The difference between two systems graded on the same prompts by a judge and a few humans.

    Estimates :math:`\Delta = \theta_A - \theta_B` (win, pass or mean rating of A minus that of
    B) from the per-prompt differences; see :mod:`bayeval.methods.judge.compare` for the
    estimators.

    Parameters
    ----------
    y : dict, DataFrame or array of shape (m, 2)
        Human grades of both systems' answers on the labelled prompts, one column per system
        (the names of a dict or DataFrame name the systems, else ``"A"`` and ``"B"``): 0/1,
        numbers in [0, 1], or ratings on ``y_range``.
    yhat : dict, DataFrame or array of shape (m, 2)
        The judge's grades of the same answers (0/1, ratings or scores), same systems; rows pair
        with ``y`` by pandas index where both have one, else by position.
    yhat_unlabeled : dict, DataFrame or array of shape (n, 2)
        The judge's grades on the prompts without human grades.
    method : str
        ``"eif"`` (default), ``"ppi_pp"``, ``"ppi_pp_unclipped"``, ``"ppi"``, ``"classical"``,
        ``"naive"``, ``"bayes"`` (0/1 grades: the exact posterior, :math:`P(A > B)`) or
        ``"all"``.
    ci_prob : float
        Interval level (default 0.95).
    ci_kind : {"wald", "logit"}
        Interval of the frequentist estimators: Wald (the default: it excludes ``null`` exactly
        when the p-value is below ``1 - ci_prob``) or logit-Wald on the range of the difference.
    alternative : {"two-sided", "larger", "smaller"}
        As ppi_py: the p-value's alternative :math:`\Delta \ne, >, < \Delta_0`; a one-sided
        alternative makes the intervals one-sided (open to the end of the range).
    null : float
        :math:`\Delta_0` of the test, and of ``prob_greater`` :math:`= P(\Delta > \Delta_0)`.
    mu_model : {"cell", "linear"}, optional
        The EIF's calibration curve of :math:`D` on the pair of judge values; default cells up to
        :data:`MAX_CELLS` distinct pairs, else the least-squares plane.
    y_range : (low, high), optional
        The scale of graded human ratings, e.g. ``(1, 5)``; the difference lies in
        :math:`[low - high, high - low]`.
    prior : float
        ``bayes``: Dirichlet concentration of each cell :math:`(Y_A, Y_B, \hat Y_A, \hat Y_B)`
        (default 1/2, Jeffreys').
    sample_weight : array-like, optional
        Frequentist estimators: a sampling weight per labelled prompt, :math:`w_i \propto
        1/\pi_i` when prompt :math:`i` was sent to the humans with probability :math:`\pi_i`
        (a stratified or verdict-dependent design); relative (rescaled to mean 1). The
        estimators become the weighted (Hájek) estimators of the mean of :math:`D`
        (:mod:`bayeval.methods.judge.weighted`) with their sandwich variances, the EIF with
        the weighted cell means of :math:`D` per pair of judge values or the weighted
        least-squares plane (:func:`eif_least_squares`). A pandas Series pairs with ``y``'s
        rows by index. ``bayes`` has no weighted form (``method="all"`` leaves it out).
    sample_weight_unlabeled : array-like, optional
        The same for the unlabelled prompts, :math:`\propto 1/(1 - \pi_i)` (default uniform).
    random_seed : int, optional
        Seed of the exact posterior draws.

    Returns
    -------
    JudgeCompare
        ``closed_form`` over ``estimator``: ``mean`` (the estimate of :math:`\Delta`), ``sd``,
        ``lower``, ``upper``, ``p_value`` (frequentist) and ``prob_greater`` (``bayes``). The
        ``data`` group holds ``m``, ``n``, ``lam``, ``n_effective`` (the human-labelled prompts
        the EIF estimate is worth) and the EIF estimate; with ``bayes`` the posterior group holds
        ``theta`` (:math:`\Delta`) and ``theta_system`` (:math:`\theta_A, \theta_B`), and
        :meth:`JudgeCompare.check` compares the posterior with the EIF.

    Warns
    -----
    UserWarning
        Unlabelled prompts whose pair of judge values no labelled prompt has (their cell mean
        falls back to the labelled mean), PPI less precise than the human labels alone, an
        estimate outside the range.

    Raises
    ------
    ValueError
        Not two systems, or different system names across arguments; lengths that differ;
        grades outside the scale; a judge difference that is the same on every prompt; for the
        frequentist estimators a human or judge difference constant on the labelled prompts;
        ``bayes`` on grades other than 0/1 or on more than :data:`MAX_CELLS` pairs of judge
        values, or with sampling weights; sampling weights of the wrong length, negative or not
        finite.

    See Also
    --------
    bayeval.judge : the rate of one system.

    Examples
    --------
    3,000 prompts; A and B are both right on the easy ones, A more often on the others
    (:math:`\theta_A - \theta_B = 0.07`); the judge passes 90 % of the right answers, and 15 %
    of A's wrong ones but 40 % of B's (it is lenient with B):

    >>> rng = np.random.default_rng(3)
    >>> easy = rng.random(3000) < 0.4
    >>> right = easy[:, None] | (rng.random((3000, 2)) < [0.37, 0.25])
    >>> said = np.where(right, rng.random((3000, 2)) < 0.9,
    ...                 rng.random((3000, 2)) < [0.15, 0.4])
    >>> ev = compare_systems(right[:200], said[:200], said[200:], method="all", random_seed=1)
    >>> ev.summary()[["mean", "sd", "p_value", "prob_greater"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_compare (all), closed form: 95% Wald confidence intervals
                        mean     sd  p_value  prob_greater
    estimator
    naive             -0.049  0.011    0.000           NaN
    classical          0.085  0.034    0.012           NaN
    ppi                0.041  0.042    0.327           NaN
    ppi_pp             0.071  0.031    0.020           NaN
    ppi_pp_unclipped   0.071  0.031    0.020           NaN
    eif                0.076  0.031    0.014           NaN
    bayes              0.074  0.031      NaN         0.992

    The judge alone (naive) says B is better; 200 human-graded prompts correct it, and the
    judge's verdicts on the 2,800 others narrow the human-only interval (classical) by about
    10 %. Humans grading the prompts where the judge's verdicts differ with probability 0.15
    and the others with 0.03, the weights :math:`1/\pi` and :math:`1/(1 - \pi)`:

    >>> pi = np.where(said[:, 0] != said[:, 1], 0.15, 0.03)
    >>> lab = rng.random(3000) < pi
    >>> ev = compare_systems(right[lab], said[lab], said[~lab], sample_weight=1 / pi[lab],
    ...                      sample_weight_unlabeled=1 / (1 - pi[~lab]))
    >>> ev.summary().loc["eif", ["mean", "sd"]].round(3).tolist()
    [0.047, 0.031]
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", ("wald", "logit"))
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    if mu_model is not None:
        mu_model = as_choice(mu_model, "mu_model", MU_MODELS)
    try:
        null = float(null)
        prior = float(prior)
    except (TypeError, ValueError):
        raise ValueError(f"null and prior must be numbers, got {describe(null)} and "
                         f"{describe(prior)}.") from None
    if not (np.isfinite(prior) and prior > 0):
        raise ValueError(f"prior must be a positive Dirichlet concentration, got {prior:g}.")
    names, (ys, yhats, yhats_u) = _systems(y, yhat, yhat_unlabeled)
    tags = [f"[{n!r}]" for n in names]
    y_a, y_b, yh_a, yh_b, w = aligned(**{"y" + tags[0]: ys[0], "y" + tags[1]: ys[1],
                                         "yhat" + tags[0]: yhats[0], "yhat" + tags[1]: yhats[1],
                                         "sample_weight": sample_weight})
    y2 = [as_array(v, "y" + t) for v, t in zip((y_a, y_b), tags, strict=True)]
    yh2 = [as_array(v, "yhat" + t) for v, t in zip((yh_a, yh_b), tags, strict=True)]
    u_a, u_b, v = aligned(**{"yhat_unlabeled" + tags[0]: yhats_u[0],
                             "yhat_unlabeled" + tags[1]: yhats_u[1],
                             "sample_weight_unlabeled": sample_weight_unlabeled})
    yu2 = [as_array(v, "yhat_unlabeled" + t) for v, t in zip((u_a, u_b), tags, strict=True)]
    low, high, binary = grade_scale(y2, names, y_range)
    width = high - low
    if not np.isfinite(null) or abs(null) > width:
        raise ValueError(f"null must lie in [{-width:g}, {width:g}], the range of the "
                         f"difference; got {null:g}.")
    d, d_hat, d_hat_u = y2[0] - y2[1], yh2[0] - yh2[1], yu2[0] - yu2[1]
    if min(d_hat.min(), d_hat_u.min()) == max(d_hat.max(), d_hat_u.max()):
        raise ValueError(f"yhat{tags[0]} - yhat{tags[1]} is {d_hat[0]:g} on every prompt: the "
                         "judge carries no information on the difference; give a judge that "
                         "tells the systems apart.")
    k_l, k_u, size = joint_cells(yh2, yu2)
    names_asked = list(COMPARE_ESTIMATORS) if method == "all" else [method]
    notes: list[str] = []
    s = None
    if sample_weight is not None or sample_weight_unlabeled is not None:
        if method == "bayes":
            raise ValueError("sample_weight and sample_weight_unlabeled apply to the frequentist "
                             "estimators; method='bayes' is a Dirichlet model of a random subset "
                             "of the prompts and has no sampling weights. Use method='eif'.")
        names_asked = [n for n in names_asked if n != "bayes"]
        s = Sample.of(d, d_hat, d_hat_u, w, v)
    if "bayes" in names_asked and (not binary or size > MAX_CELLS):
        why = ("0/1 human grades" if not binary else
               f"at most {MAX_CELLS} distinct pairs of judge values (got {size})")
        if method == "bayes":
            raise ValueError(f"method='bayes' needs {why}; use a frequentist estimator "
                             "(method='eif').")
        notes.append(f"bayes left out: it needs {why}.")
        names_asked.remove("bayes")
    freq = [n for n in names_asked if n != "bayes"]
    mu_model = mu_model or ("cell" if size <= MAX_CELLS else "linear")
    cells = ((k_l, k_u, size) if s is not None else  # the weighted EIF sums its own cells
             (np.bincount(k_l, minlength=size), np.bincount(k_l, d, size),
              np.bincount(k_l, d**2, size), np.bincount(k_u, minlength=size)))
    x_l, x_u = np.column_stack(yh2), np.column_stack(yu2)
    try:
        _refuse(d, d_hat, d_hat_u, names)
    except ValueError:
        if freq:
            raise
        eif = Estimate(np.nan, np.nan)  # bayes alone: the check has no EIF to compare with
    else:
        eif = _fast(d, d_hat, d_hat_u, x_l, x_u, cells, ["eif"], mu_model, s)["eif"]
    out = _fast(d, d_hat, d_hat_u, x_l, x_u, cells, freq, mu_model, s)
    rows = {}
    for name, est in out.items():
        mean, lower, upper = _interval(est, ci_prob, ci_kind, alternative, width)
        rows[name] = {"mean": mean, "sd": est.se, "lower": lower, "upper": upper,
                      "p_value": p_value(est, null, alternative) if est.se > 0 else np.nan,
                      "prob_greater": np.nan}
    empty = np.bincount(k_l, minlength=size) == 0
    if mu_model == "cell" and empty.any() and ("eif" in out or "bayes" in names_asked):
        notes.append(f"{np.isin(k_u, np.flatnonzero(empty)).mean():.1%} of the unlabelled "
                     "prompts have a pair of judge values that no labelled prompt has; their "
                     "cell mean falls back to the labelled mean (use mu_model='linear').")
    if "ppi" in out and "classical" in out and out["ppi"].se > out["classical"].se:
        notes.append(f"the judge does not help PPI: its se {out['ppi'].se:.4f} exceeds the "
                     f"human-labels-only se {out['classical'].se:.4f}; use eif or ppi_pp.")
    notes += [f"{k} = {e.estimate:.4f} lies outside [{-width:g}, {width:g}]: reported at the "
              "nearest end, its interval clipped" for k, e in out.items()
              if not -width <= e.estimate <= width]
    mo = moments(d, d_hat, d_hat_u)
    lam = float(ppi_pp_lambda(mo, clip=False) if s is None else weighted_ppi_lambda(s, False))
    info = {"m": d.size, "n": d_hat_u.size, "lam": float(np.clip(lam, 0, 1)),
            "lam_unclipped": lam, "mu_model": mu_model, "eif_mean": float(eif.estimate),
            "eif_sd": float(eif.se), "null": null, "alternative": alternative,
            "y_low": low, "y_high": high}
    var_d = float(mo.y_var)
    if s is not None:  # Kish's effective sizes; the weighted spread of D
        info.update(m_kish=float(d.size**2 / np.sum(s.w**2)),
                    n_kish=float(d_hat_u.size**2 / np.sum(s.v**2)))
        var_d = float(s.w @ (d - s.w @ d / d.size) ** 2) / d.size
    if np.isfinite(eif.se):
        info.update(efficiency(eif, var_d, d.size, d_hat_u.size))
    draws = None
    if "bayes" in names_asked:
        delta, rates, rows["bayes"], _ = _bayes(y2, k_l, k_u, size, prior, as_seed(random_seed),
                                                ci_prob, alternative, null)
        draws = xr.DataTree.from_dict({"posterior": xr.Dataset(
            {"theta": (SAMPLE_DIMS, delta[None]),
             "theta_system": ((*SAMPLE_DIMS, "system"), rates[None])},
            coords={"system": names})})
        info["prior"] = prior
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    frame = pd.DataFrame(rows).T
    closed = xr.Dataset({k: ("estimator", frame[k].to_numpy(float)) for k in frame.columns},
                        coords={"estimator": list(rows)})
    scale = "rates" if (low, high) == (0.0, 1.0) else f"mean ratings on [{low:g}, {high:g}]"
    return JudgeCompare.create(
        method="judge_compare", variant=method, closed_form=closed, draws=draws,
        estimand=None if draws is None else "posterior/theta", iid_draws=True, ci_prob=ci_prob,
        ci_kind="eti", random_seed=random_seed, assumptions=ASSUMPTIONS, warnings=notes,
        data=xr.Dataset(info), systems=names, interval_kind=ci_kind,
        description=(f"difference of the {scale} of {names[0]} and {names[1]} from {d.size} "
                     f"prompts graded by humans and {d_hat_u.size} by the judge only "
                     f"({ci_kind} intervals, {alternative}, null {null:g}"
                     + ("" if s is None else ", sampling weights"
                        + ("; bayes has no weighted form" if method == "all" else "")) + ")"))


class JudgeCompare(Evaluation, method="judge_compare"):
    """The result of :func:`compare_systems`: the estimators of :math:`\\theta_A - \\theta_B`;
    :meth:`check` compares the posterior with the EIF.

    Examples
    --------
    >>> y = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [1, 1]])
    >>> yhat = np.array([[1, 0], [1, 0], [0, 0], [1, 1], [1, 1], [1, 1]])
    >>> ev = compare_systems(y, yhat, np.array([[1, 0], [0, 1], [1, 1]]), method="classical")
    >>> type(ev).__name__, round(float(ev.summary().loc["classical", "mean"]), 4)
    ('JudgeCompare', 0.1667)
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """:meth:`Evaluation.summary` of the closed form by default (every estimator, ``bayes``
        included); ``source="draws"`` summarises the posterior draws of the difference.

        Examples
        --------
        >>> y = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [1, 1]])
        >>> ev = compare_systems(y, y, np.array([[1, 0], [0, 1], [1, 1]]), method="bayes",
        ...                      random_seed=0)
        >>> ev.summary().index.tolist(), ev.summary(source="draws").index.tolist()
        (['bayes'], ['theta'])
        """
        return super().summary(source or "closed_form", ci_prob, ci_kind)

    def check(self) -> Table:
        r"""The posterior of :math:`\Delta` against its exact law and against the EIF estimate.

        ``mean`` and ``variance_ratio`` test the posterior draws against the exact posterior
        mean and sd (:func:`difference_posterior`; 4σ Monte-Carlo tolerances of
        :func:`bayeval.check.compare`). ``eif_mean`` tests :math:`|E[\Delta \mid \text{data}] -
        \hat\Delta_{EIF}| \le 0.25\,\mathrm{SE}_{EIF}` and ``eif_sd_ratio``
        :math:`|\mathrm{sd}/\mathrm{SE}_{EIF} - 1| \le 0.10`: the posterior is the Bayesian twin
        of the EIF with cell means, and the two agree to :math:`O(1/m)` (Bernstein–von Mises),
        so expect agreement with :math:`m \ge 100` labelled prompts and no pair of judge values
        with fewer than about 10 of them; elsewhere a failure says the prior still matters.

        Returns
        -------
        Table
            Indexed by ``test``, columns ``fast``, ``draws``, ``statistic``, ``tolerance``,
            ``n_eff``, ``passed``; ``attrs["passed"]`` is True when every test passed.

        Raises
        ------
        ValueError
            Without the posterior (``method`` other than ``"bayes"`` or ``"all"``), or without an
            EIF estimate (the labelled human or judge difference is constant).

        Examples
        --------
        >>> rng = np.random.default_rng(3)
        >>> easy = rng.random(3000) < 0.4
        >>> right = easy[:, None] | (rng.random((3000, 2)) < [0.37, 0.25])
        >>> said = np.where(right, rng.random((3000, 2)) < 0.9,
        ...                 rng.random((3000, 2)) < [0.15, 0.4])
        >>> ev = compare_systems(right[:200], said[:200], said[200:], method="bayes",
        ...                      random_seed=1)
        >>> ev.check()[["fast", "draws", "tolerance", "passed"]].round(4)
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        posterior draws vs exact posterior (4-sigma Monte-Carlo), posterior vs EIF (...): agree
                          fast   draws  tolerance  passed
        test
        mean            0.0735  0.0736     0.0009    True
        variance_ratio  1.0000  1.0035     0.0400    True
        eif_mean        0.0757  0.0735     0.0077    True
        eif_sd_ratio    1.0000  1.0036     0.1000    True
        """
        if self.draws is None:
            raise ValueError("check() needs the posterior: run compare_systems(..., "
                             "method='bayes' or 'all').")
        data = self.tree["data"].to_dataset()
        eif, se = float(data["eif_mean"]), float(data["eif_sd"])
        if not np.isfinite(se) or se == 0:
            raise ValueError("check() needs the EIF estimate, undefined here: the human or the "
                             "judge difference is constant on the labelled prompts.")
        post = self.closed_form.sel(estimator="bayes")
        mean, sd = float(post["mean"]), float(post["sd"])
        x = self.draws.transpose(*SAMPLE_DIMS).values
        frame = compare(x, mean=mean, sd=sd, iid=True)
        agreement = pd.DataFrame(
            {"fast": [eif, 1.0], "draws": [mean, sd / se],
             "statistic": [abs(mean - eif), abs(sd / se - 1)],
             "tolerance": [AGREEMENT_MEAN * se, AGREEMENT_SD], "n_eff": np.nan},
            index=pd.Index(["eif_mean", "eif_sd_ratio"], name="test"))
        agreement["passed"] = agreement["statistic"] <= agreement["tolerance"]
        frame = pd.concat([frame, agreement])
        passed = bool(frame["passed"].all())
        caption = ("posterior draws vs exact posterior (4-sigma Monte-Carlo), posterior vs EIF "
                   f"(mean within {AGREEMENT_MEAN} SE, sd ratio within 1 ± {AGREEMENT_SD}): "
                   + ("agree" if passed else "FAILED: " + ", ".join(
                       frame.index[~frame["passed"]])))
        return table(frame, caption, passed=passed)
