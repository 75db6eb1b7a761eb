r"""PEMI's generative models: a posterior for the calibration map (M1) and an MNAR shift (M3).

They extend PEMI (Dervovic & Cashmore, AISTATS 2025), whose calibration map is fixed and whose
labels are missing at random given the score. The calibration map is Platt's logistic map on the
logit of the raw score, :math:`p(s)=\sigma(a+b\,\operatorname{logit}s)`, and the labels of the
missing rows are :math:`Y_i\sim\mathcal B(\sigma(a+b\,\operatorname{logit}s_i+\delta))`.
:func:`model` builds either, ``variant="m1"`` or ``"m3"``.

* **M1** (``variant="m1"``): :math:`a\sim\mathcal N(\mu_a,s_a^2)`,
  :math:`\log b\sim\mathcal N(\mu_b,s_b^2)` (so the map increases), and the calibration rows
  :math:`(s^c_j,y^c_j)` (the labelled test rows by default) observed as
  :math:`y^c_j\sim\mathcal B(\sigma(a+b\,\operatorname{logit}s^c_j))`, grouped into one binomial
  per distinct score. :math:`\delta=0`.
* **M3** (``variant="m3"``): M1 and :math:`\delta\sim\mathcal N(\mu_\delta,s_\delta^2)`, the
  shift of the log-odds of a missing label (pattern mixture). The data say nothing about
  :math:`\delta`: its posterior is its prior, and the result is as credible as that prior (see
  ``delta_sensitivity``). Under label-dependent missingness (:math:`M\perp X\mid Y`) with the map
  fitted on the labelled rows, Bayes' rule gives :math:`\delta` exactly: the log odds ratio of
  a label being missing for a positive against a negative,
  :math:`\log\frac{r_1/(1-r_1)}{r_0/(1-r_0)}` with :math:`r_y=P(M=1\mid Y=y)`; with the map fitted
  on data that represent the whole population, :math:`\delta=\log(r_1/r_0)`. :math:`\delta=0` is
  MAR given the score.

The models hold continuous parameters only (NUTS); the missing labels are drawn in the posterior
predictive (:func:`predictive`), one completion per posterior draw, so the metric's predictive
law mixes PEMI's law over the map's posterior and is wider than PEMI's with a fixed map.

Fast paths: :func:`map_posterior` draws the map's posterior from a 2-D grid (quadrature, no
MCMC), :func:`posterior_nodes` gives weighted nodes of a Gauss-Hermite rule around its
Laplace approximation; :func:`mixture_closed_form` is the law of the metric mixed over weighted
nodes of the map (exact PMFs of the confusion-matrix metrics, a normal mixture for ROC-AUC).
Over those (crossed with Gauss-Hermite nodes of a prior on :math:`\delta`) it is the model's
predictive law computed without MCMC, so :meth:`Evaluation.check` of ``method="both"`` compares
the NUTS predictive draws with something they did not produce.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import special

from bayeval.methods.pemi.fast import (
    DEFAULT,
    Options,
    Rows,
    closed_form,
    logit_scores,
    mixture,
    simulate,
)
from bayeval.methods.pemi.mixture import Components, component_moments, exact_mixture
from bayeval.multiclass_calibration import PRIOR_A, PRIOR_LOG_B  # the map's default priors
from bayeval.validation import as_choice, as_seed

__all__ = ["PRIOR_A", "PRIOR_LOG_B", "VARIANTS", "map_posterior", "mixture_closed_form", "model",
           "platt_map", "posterior_nodes", "predictive"]

#: the models of :func:`model`
VARIANTS = ("m1", "m3")
_GRID = 96  # points per axis of the quadrature grid
_HALF_WIDTH = 6.0  # Laplace standard deviations each side of the mode
_NODES = 16  # Gauss-Hermite nodes per axis of posterior_nodes


def link(a: Any, b: Any, x: Any, delta: Any = 0.0) -> Any:
    r"""Log-odds of a label, :math:`a+b\,x+\delta` with :math:`x=\operatorname{logit}s`.

    Shared by the PyMC models (tensors) and the predictive (numpy arrays).
    """
    return a + b * x + delta


def platt_map(scores: np.ndarray, a: float, b: float) -> np.ndarray:
    r"""A fixed map :math:`\sigma(a+b\,\operatorname{logit}s)` at every score.

    Parameters
    ----------
    scores : numpy.ndarray
        Raw scores in [0, 1] (clipped to :math:`[10^{-12}, 1-10^{-12}]` inside the logit).
    a, b : float
        Intercept and slope of the map.

    Returns
    -------
    numpy.ndarray
        :math:`p(s)` at every score.

    Examples
    --------
    >>> platt_map(np.array([0.1, 0.5, 0.9]), 1.0, 2.0).round(4)
    array([0.0325, 0.7311, 0.9955])
    """
    return special.expit(link(a, b, logit_scores(scores)))


def sufficient(cal_scores: Any, cal_labels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct logit-scores of the calibration rows, rows and positives at each."""
    x = logit_scores(np.asarray(cal_scores, dtype=float))
    ux, index = np.unique(x, return_inverse=True)
    trials = np.bincount(index, minlength=ux.size)
    positives = np.bincount(index, weights=np.asarray(cal_labels, dtype=float), minlength=ux.size)
    return ux, trials, positives.astype(np.int64)


def model(cal_scores, cal_labels, *, variant: str = "m1", delta=None, prior_a=PRIOR_A,
          prior_log_b=PRIOR_LOG_B):
    r"""PEMI's PyMC model: the posterior of Platt's calibration map (M1), and an MNAR shift (M3).

    M1 learns the map from labelled rows:

    .. math:: a\sim\mathcal N(\mu_a,s_a^2),\quad \log b\sim\mathcal N(\mu_b,s_b^2),\quad
              k_u\sim\mathrm{Binomial}\big(n_u,\sigma(a+b\,x_u)\big),

    with :math:`n_u` calibration rows and :math:`k_u` positives at each distinct
    :math:`x_u=\operatorname{logit}s^c`. M3 adds the MNAR shift
    :math:`\delta\sim\mathcal N(\mu_\delta,s_\delta^2)` of the log-odds of a missing label,
    :math:`Y_i\sim\mathcal B(\sigma(a+b\,\operatorname{logit}s_i+\delta))`; no observed variable
    depends on :math:`\delta` (module docstring), so its posterior is its prior. A fixed shift is
    M1 with the shift applied in the predictive (:func:`predictive`).

    Parameters
    ----------
    cal_scores, cal_labels : array-like
        Raw scores in [0, 1] and 0/1 labels of the calibration rows.
    variant : {"m1", "m3"}
        M1, or M3 (with ``delta``).
    delta : (mean, sd), optional
        M3's prior of :math:`\delta`, ``sd > 0``; default (0, 1). Not for M1.
    prior_a, prior_log_b : (mean, sd)
        Normal priors of the intercept and of the log slope.

    Returns
    -------
    pm.Model
        Free ``a``, ``log_b``, deterministic ``b`` and observed ``positives`` (dim ``score``);
        M3 adds free ``delta``.

    Raises
    ------
    ValueError
        An unknown ``variant``; ``delta`` given to M1; a prior sd of :math:`\delta` that is not
        positive.

    Examples
    --------
    >>> m = model([0.1, 0.4, 0.8, 0.9], [0, 1, 1, 1])
    >>> [v.name for v in m.free_RVs], [v.name for v in m.observed_RVs]
    (['a', 'log_b'], ['positives'])
    >>> m = model([0.1, 0.4, 0.8, 0.9], [0, 1, 1, 1], variant="m3", delta=(-1.0, 0.5))
    >>> [v.name for v in m.free_RVs], m.initial_point()["delta"]
    (['a', 'log_b', 'delta'], array(-1.))
    """
    import pymc as pm

    variant = as_choice(variant, "variant", VARIANTS)
    if variant == "m1" and delta is not None:
        raise ValueError("delta is M3's prior: use variant='m3' for a prior on delta (a fixed "
                         "delta is M1 with the shift applied in the predictive).")
    delta = (0.0, 1.0) if delta is None else delta
    if variant == "m3" and not delta[1] > 0:
        raise ValueError(f"variant 'm3' needs a prior sd of delta > 0, got {delta[1]!r}; a fixed "
                         "delta is variant 'm1' with the shift applied in the predictive.")
    x, trials, positives = sufficient(cal_scores, cal_labels)
    with pm.Model(coords={"score": np.arange(x.size)}) as m:
        a = pm.Normal("a", mu=prior_a[0], sigma=prior_a[1])
        log_b = pm.Normal("log_b", mu=prior_log_b[0], sigma=prior_log_b[1])
        b = pm.Deterministic("b", pm.math.exp(log_b))
        pm.Binomial("positives", n=trials, logit_p=link(a, b, x), observed=positives,
                    dims="score")
        if variant == "m3":
            pm.Normal("delta", mu=delta[0], sigma=delta[1])
    return m


# ----------------------------------------------------------------------- quadrature posterior
def _log_posterior(a, c, x, trials, positives, prior_a, prior_log_b):
    r"""Log posterior of (a, c = log b) up to a constant, broadcast over a and c.

    :math:`\sum_uk_u\eta_u-n_u\log(1+e^{\eta_u})` with :math:`\eta_u=a+e^cx_u`; the linear
    part is :math:`a\sum k+e^c\sum kx`, and :math:`\log(1+e^\eta)=\max(\eta,0)+
    \log(1+e^{-|\eta|})`.
    """
    a, c = np.asarray(a, dtype=float), np.asarray(c, dtype=float)
    b = np.exp(c)
    eta = link(a[..., None], b[..., None], x)
    softplus = np.maximum(eta, 0.0) + np.log1p(np.exp(-np.abs(eta)))
    loglik = a * positives.sum() + b * (positives @ x) - softplus @ trials
    return (loglik - 0.5 * ((a - prior_a[0]) / prior_a[1]) ** 2
            - 0.5 * ((c - prior_log_b[0]) / prior_log_b[1]) ** 2)


def _laplace(x, trials, positives, prior_a, prior_log_b) -> tuple[np.ndarray, np.ndarray]:
    r"""Mode and inverse negative Hessian of the log posterior of :math:`(a, \log b)`.

    Damped Newton with the analytic gradient and Hessian: with :math:`b=e^c`,
    :math:`\pi_u=\sigma(a+bx_u)`, :math:`r_u=k_u-n_u\pi_u`, :math:`w_u=n_u\pi_u(1-\pi_u)`,
    :math:`g=(\sum r-\frac{a-\mu_a}{s_a^2},\ \sum rbx-\frac{c-\mu_b}{s_b^2})` and
    :math:`H=-\begin{pmatrix}\sum w+s_a^{-2}&\sum wbx\\ \sum wbx&\sum w(bx)^2-\sum rbx+s_b^{-2}
    \end{pmatrix}`.
    """
    theta = np.array([prior_a[0], prior_log_b[0]], dtype=float)

    def lp(t):
        return float(_log_posterior(t[0], t[1], x, trials, positives, prior_a, prior_log_b))

    def derivatives(t):
        b = np.exp(t[1])
        pi = special.expit(link(t[0], b, x))
        r, w, bx = positives - trials * pi, trials * pi * (1 - pi), b * x
        g = np.array([r.sum() - (t[0] - prior_a[0]) / prior_a[1] ** 2,
                      r @ bx - (t[1] - prior_log_b[0]) / prior_log_b[1] ** 2])
        h = np.array([[w.sum() + prior_a[1] ** -2, w @ bx],
                      [w @ bx, w @ bx**2 - r @ bx + prior_log_b[1] ** -2]])
        return g, h

    for _ in range(100):
        g, h = derivatives(theta)
        step = np.linalg.solve(h, g) if np.all(np.linalg.eigvalsh(h) > 0) else g / np.abs(
            np.diag(h))
        current = lp(theta)
        while lp(theta + step) < current and np.abs(step).max() > 1e-12:
            step /= 2
        theta = theta + step
        if np.abs(step).max() < 1e-10:
            break
    h = derivatives(theta)[1]
    cov = np.linalg.inv(h) if np.all(np.linalg.eigvalsh(h) > 0) else np.diag(
        [prior_a[1] ** 2, prior_log_b[1] ** 2])
    return theta, cov


def _grid(cal_scores, cal_labels, prior_a, prior_log_b):
    """The quadrature grid: node coordinates (a, log b), normalised weights, cell widths."""
    x, trials, positives = sufficient(cal_scores, cal_labels)
    mode, cov = _laplace(x, trials, positives, prior_a, prior_log_b)
    half = _HALF_WIDTH * np.sqrt(np.diag(cov))
    axes = [np.linspace(c - h, c + h, _GRID) for c, h in zip(mode, half, strict=True)]
    grid_a, grid_c = np.meshgrid(*axes, indexing="ij")
    lp = _log_posterior(grid_a, grid_c, x, trials, positives, prior_a, prior_log_b).ravel()
    weights = np.exp(lp - lp.max())
    return grid_a.ravel(), grid_c.ravel(), weights / weights.sum(), 2 * half / (_GRID - 1)


def posterior_nodes(cal_scores, cal_labels, *, prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B,
                    tail: float = 1e-7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""M1's posterior of :math:`(a, b)` as weighted nodes, no MCMC: a product Gauss-Hermite
    rule around the Laplace approximation, reweighted by the exact posterior.

    With the mode :math:`m` and covariance :math:`\Sigma=LL^\top` of the Laplace approximation
    of :math:`\theta=(a,\log b)`, the nodes are :math:`\theta_{jk}=m+L(z_j,z_k)^\top` for the
    :data:`_NODES` probabilists' Gauss-Hermite nodes :math:`z` with weights :math:`\omega`, and
    their weights :math:`w_{jk}\propto\omega_j\omega_k\,e^{\ell(\theta_{jk})-\ell(m)+
    (z_j^2+z_k^2)/2}` (:math:`\ell` the log posterior): the rule integrates
    :math:`f\,p(\theta\mid\text{data})/\mathcal N(\theta; m,\Sigma)` against the normal,
    exactly for polynomials of degree below :math:`2\cdot` :data:`_NODES` in each whitened
    coordinate. An expectation over the posterior is :math:`\sum w_{jk}f(a_{jk},b_{jk})`,
    deterministic; the nodes that together hold at most ``tail`` are left out.

    Parameters
    ----------
    cal_scores, cal_labels, prior_a, prior_log_b
        As in :func:`model`.
    tail : float
        Mass of the nodes left out.

    Returns
    -------
    a, b, weights : numpy.ndarray
        Nodes and weights (summing to 1).

    Examples
    --------
    >>> a, b, w = posterior_nodes([0.1, 0.3, 0.6, 0.9] * 20, [0, 0, 1, 1] * 20)
    >>> round(float(w @ a), 2), round(float(w @ b), 2), bool(a.size <= _NODES**2)
    (0.84, 5.07, True)
    """
    x, trials, positives = sufficient(cal_scores, cal_labels)
    mode, cov = _laplace(x, trials, positives, prior_a, prior_log_b)
    z, omega = special.roots_hermitenorm(_NODES)
    zz = np.stack(np.meshgrid(z, z, indexing="ij")).reshape(2, -1)
    a, c = mode[:, None] + np.linalg.cholesky(cov) @ zz
    lp = _log_posterior(np.r_[a, mode[0]], np.r_[c, mode[1]], x, trials, positives, prior_a,
                        prior_log_b)
    log_w = (np.log(np.outer(omega, omega)).ravel() + lp[:-1] - lp[-1]
             + 0.5 * (zz**2).sum(axis=0))
    weights = np.exp(log_w - log_w.max())
    weights /= weights.sum()
    order = np.argsort(weights)
    keep = np.sort(order[np.cumsum(weights[order]) > tail])
    return a[keep], np.exp(c[keep]), weights[keep] / weights[keep].sum()


def map_posterior(cal_scores, cal_labels, *, size: int = 4000, prior_a=PRIOR_A,
                  prior_log_b=PRIOR_LOG_B, random_seed=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Draws of M1's :math:`(a, b)` by quadrature on a grid: M1's posterior without MCMC.

    The log posterior is evaluated on a :math:`96\times96` grid over :math:`(a,\log b)`
    spanning 6 Laplace standard deviations each side of the mode; draws pick a cell with its
    posterior mass and a uniform point inside it (the cell's width is 0.13 sd, so the variance is
    inflated by about :math:`0.13^2/12\approx0.15\%`).

    Parameters
    ----------
    cal_scores, cal_labels, prior_a, prior_log_b
        As in :func:`model`.
    size : int
        Number of draws.
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    a, b : numpy.ndarray, shape (size,)

    Examples
    --------
    Labels that separate at 0.5 give a steep map:

    >>> a, b = map_posterior([0.1, 0.3, 0.6, 0.9] * 20, [0, 0, 1, 1] * 20, random_seed=0)
    >>> round(float(a.mean()), 1), round(float(b.mean()), 1)
    (0.8, 5.0)
    """
    grid_a, grid_c, weights, width = _grid(cal_scores, cal_labels, prior_a, prior_log_b)
    rng = as_seed(random_seed)
    cell = rng.choice(weights.size, size=size, p=weights)
    a = grid_a[cell] + width[0] * (rng.random(size) - 0.5)
    c = grid_c[cell] + width[1] * (rng.random(size) - 0.5)
    return a, np.exp(c)


# ------------------------------------------------------------------------ posterior predictive
def _p_draws(rows: Rows, a: np.ndarray, b: np.ndarray, delta: np.ndarray):
    """p of the missing rows (columns in ``rows.order``) for draws start:stop."""
    x = logit_scores(rows.scores[rows.order])

    def p_missing(start: int, stop: int) -> np.ndarray:
        sl = slice(start, stop)
        return special.expit(link(a[sl, None], b[sl, None], x, delta[sl, None]))

    return p_missing


def predictive(rows: Rows, metrics: tuple[str, ...], a, b, delta, random_seed=None,
               opts: Options = DEFAULT) -> np.ndarray:
    r"""One completion of the missing labels per draw of the map: metric values (draws, metric).

    :math:`Y_i^{(s)}\sim\mathcal B(\sigma(a_s+b_s\operatorname{logit}s_i+\delta_s))`, drawn by
    :func:`~bayeval.methods.pemi.fast.simulate` in chunks.

    Parameters
    ----------
    rows : bayeval.methods.pemi.fast.Rows
    metrics : tuple of str
    a, b : array-like
        Draws of the map (any shape; flattened).
    delta : float or array-like
        MNAR shift, one per draw or shared.
    random_seed : int or numpy.random.Generator, optional
    opts : bayeval.methods.pemi.fast.Options

    Returns
    -------
    numpy.ndarray, shape (draws, len(metrics))

    Examples
    --------
    With the identity map (:math:`a=0, b=1`) the missing rows' :math:`p` are their scores,
    0.8 and 0.2; precision's exact mean is (2 + 0.8) / 4:

    >>> from bayeval.methods.pemi.fast import Rows
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> values = predictive(rows, ("precision",), np.zeros(4000), np.ones(4000), 0.0,
    ...                     random_seed=0)
    >>> values.shape, round(float(values.mean()), 2)
    ((4000, 1), 0.7)
    """
    a, b = np.ravel(a), np.ravel(b)
    delta = np.broadcast_to(np.asarray(delta, dtype=float).ravel(), a.shape)
    return simulate(rows, metrics, _p_draws(rows, a, b, delta), a.size, as_seed(random_seed),
                    opts)


def mixture_closed_form(rows: Rows, metrics: tuple[str, ...], a, b, delta, *, weights=None,
                        ci_prob: float, ci_kind: str, opts: Options = DEFAULT) -> xr.Dataset:
    r"""The predictive law given weighted draws (or quadrature nodes) of the map, as a
    ``closed_form``.

    Confusion-matrix metrics: the exact mixture :math:`\sum_sw_sP(\cdot\mid\theta_s)` of
    PEMI's laws at each :math:`\theta_s=(a_s,b_s,\delta_s)`
    (:func:`bayeval.methods.pemi.mixture.exact_mixture`: one matrix product of the
    Poisson-binomial PMFs of every component, vectorised). ROC-AUC: the normal mixture
    :math:`F(t)=\sum_sw_s\Phi((t-\mu_s)/\sigma_s)`, with mean :math:`\sum_sw_s\mu_s` and
    variance :math:`\sum_sw_s\sigma_s^2+\operatorname{Var}_w\mu_s` (law of total variance).
    With the nodes of :func:`posterior_nodes` it is the predictive law of M1 computed without
    MCMC, which :meth:`Evaluation.check` compares with the NUTS predictive draws; with a fixed
    map it is PEMI's exact law and PEMI-Gauss.

    Parameters
    ----------
    rows : bayeval.methods.pemi.fast.Rows
    metrics : tuple of str
    a, b, delta : array-like
        Nodes of the map and of the shift (``delta`` broadcast to ``a``).
    weights : array-like, optional
        Their weights (summing to 1); default equal.
    ci_prob, ci_kind : float, {"eti", "hdi"}
        Interval level and kind (ROC-AUC's normal mixture is always equal-tailed).
    opts : bayeval.methods.pemi.fast.Options

    Returns
    -------
    xarray.Dataset
        Over ``metric``: ``mean``, ``sd``, ``lower``, ``upper``, ``interval_mass``,
        ``p_undefined`` (and the PMF without ROC-AUC), as
        :func:`bayeval.methods.pemi.fast.closed_form`.

    Examples
    --------
    Two draws of the map, the identity and :math:`\sigma(1+\operatorname{logit}s)`:

    >>> from bayeval.methods.pemi.fast import Rows
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> cf = mixture_closed_form(rows, ("precision",), [0.0, 1.0], [1.0, 1.0], [0.0, 0.0],
    ...                          ci_prob=0.95, ci_kind="eti")
    >>> cf["pmf_value"].values.tolist(), cf["pmf_prob"].values.round(4).tolist()
    ([[0.5, 0.75]], [[0.1421, 0.8579]])
    """
    a, b = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float))
    delta = np.broadcast_to(np.asarray(delta, dtype=float).ravel(), a.shape)
    w = (np.full(a.size, 1.0 / a.size) if weights is None else
         np.ravel(np.asarray(weights, dtype=float)))
    x = logit_scores(rows.scores[rows.order])
    comps = Components(w, lambda i: special.expit(link(a[i, None], b[i, None], x,
                                                       delta[i, None])))
    cm = tuple(m for m in metrics if m != "roc_auc")
    laws = exact_mixture(rows, comps, cm, opts) if cm else {}
    normal = {}
    if "roc_auc" in metrics:
        means, variances, undefined = component_moments(rows, comps, ("roc_auc",),
                                                        opts)["roc_auc"]
        normal["roc_auc"] = (*mixture(means, variances, w, ci_prob), float(w @ undefined))
    return closed_form(metrics, laws, normal, ci_prob=ci_prob, ci_kind=ci_kind)
