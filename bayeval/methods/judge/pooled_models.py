r"""The latent-class model of several judges in PyMC, and its posterior by importance sampling.

:math:`J` judges give 0/1 verdicts on every item; humans label :math:`m` of them. The model is
Dawid and Skene's (1979) with a hierarchical prior on the judges' error rates:

.. math::
    Y_i \sim \mathrm{Bernoulli}(\theta),\qquad
    \hat Y_{ij} \mid Y_i \sim \mathrm{Bernoulli}\big(Y_i s_j + (1 - Y_i)(1 - c_j)\big)
    \text{ independently over } j,

with sensitivity :math:`s_j` and specificity :math:`c_j` of judge :math:`j`, their logits
partially pooled across judges,

.. math::
    \mathrm{logit}\,s_j \sim N(\mu_s, \sigma_s),\; \mathrm{logit}\,c_j \sim N(\mu_c, \sigma_c),
    \quad \mu_\cdot \sim N(\mu_0, \tau_0),\; \log\sigma_\cdot \sim N(\nu_0, \omega_0),
    \quad \theta \sim \mathrm{Beta}(a, b).

The lognormal prior of the spread vanishes at :math:`\sigma = 0` faster than any power (a
boundary-avoiding prior, Chung et al. 2013): with two or three judges a half-normal or gamma
prior gives the judges' rates a prior density with a cusp or a spike where they are all equal,
which pulls them together and gives NUTS a funnel to fall into. The data
enter through their sufficient statistics: the labelled items per (label, verdict pattern)
:math:`n_{ak}`, and the unlabelled items per pattern :math:`u_k`, whose hidden labels are summed
out: with :math:`\pi_{ak} = P(Y = a)\prod_j P(\hat Y_j = k_j \mid Y = a)`,

.. math::
    (n_{ak}) \sim \mathrm{Multinomial}(m, \pi), \qquad
    (u_k) \sim \mathrm{Multinomial}(n, \textstyle\sum_a \pi_{ak}),

so NUTS runs on continuous parameters only and its cost does not grow with :math:`N`.

**The conditional-independence assumption.** Given the true label, the judges' verdicts are
independent. LLM judges often share errors (the same training data, the same blind spots), and
then the model counts two judges agreeing as two pieces of evidence where there is about one: its
posterior is too sure and can be biased. The labelled items test it
(:func:`~bayeval.methods.judge.pooled.error_dependence`), and the pooled EIF of
:func:`~bayeval.methods.judge.pooled.pool_judges` does not need it.

:func:`exact_posterior` computes the same posterior by another route: the hyperparameters
summed out by quadrature, importance sampling on the rest.

References
----------
Dawid, Skene (1979), Maximum likelihood estimation of observer error-rates using the EM
algorithm, JRSS C 28. Chung, Rabe-Hesketh, Dorie, Gelman, Liu (2013), A nondegenerate penalized
likelihood estimator for variance parameters in multilevel models, Psychometrika 78.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from scipy import optimize, special, stats

from bayeval.sampling import sample
from bayeval.validation import as_prior, as_seed

__all__ = ["DEFAULT_PRIOR", "exact_posterior", "log_density", "patterns", "pooled_model",
           "pooled_prior", "sample_pooled"]

#: Beta (a, b) of theta; normal (mean, sd) of the judges' mean logit rate and of the log of
#: their sd (median 0.7, 95 % within 0.22-2.3)
DEFAULT_PRIOR = {"theta": (1.0, 1.0), "logit_mean": (1.0, 1.5), "logit_sd": (np.log(0.7), 0.6)}
#: NUTS's target acceptance rate
TARGET_ACCEPT = 0.95
#: proposal draws of the importance sampler; degrees of freedom of its Student-t proposal
PROPOSALS, PROPOSAL_DF = 40_000, 7
#: nodes of the quadrature over the judges' log sd, in prior sd from its mean
_NODES = np.linspace(-7.0, 7.0, 141)


def pooled_prior(prior: Mapping | None) -> dict[str, tuple[float, float]]:
    """The priors with defaults filled in, checked.

    Raises
    ------
    ValueError
        An unknown key, or parameters out of their family's range.

    Examples
    --------
    >>> pooled_prior({"logit_sd": (0.0, 0.5)})["logit_sd"]
    (0.0, 0.5)
    """
    prior = dict(prior or {})
    unknown = set(prior) - set(DEFAULT_PRIOR)
    if unknown:
        raise ValueError(f"prior has unknown key(s) {sorted(unknown)}; the latent-class model "
                         f"takes {', '.join(DEFAULT_PRIOR)}.")
    out = {**DEFAULT_PRIOR, **prior}
    return {k: as_prior(v, f"prior[{k!r}]", kind="beta" if k == "theta" else "normal")
            for k, v in out.items()}


def patterns(n_judges: int) -> np.ndarray:
    """The :math:`2^J` verdict patterns, pattern :math:`k` having verdict ``(k >> j) & 1`` from
    judge :math:`j`; shape (2^J, J).

    Examples
    --------
    >>> patterns(2)
    array([[0, 0],
           [1, 0],
           [0, 1],
           [1, 1]])
    """
    return (np.arange(1 << n_judges)[:, None] >> np.arange(n_judges)) & 1


def pooled_model(labelled_counts, unlabelled_counts, judges, *, prior: Mapping | None = None):
    r"""The latent-class model of the module docstring.

    Parameters
    ----------
    labelled_counts : array of int, shape (2, 2^J)
        Labelled items per human label (rows 0, 1) and verdict pattern (:func:`patterns`).
    unlabelled_counts : array of int, shape (2^J,)
        Unlabelled items per verdict pattern.
    judges : list of str
        The judges' names.
    prior : dict, optional
        ``theta``: Beta (a, b) (default (1, 1)); ``logit_mean``: normal (mean, sd) of the
        judges' mean logit sensitivity and mean logit specificity (default (1, 1.5): rates
        near 0.73, from 0.1 to 0.98 within two sd); ``logit_sd``: normal (mean, sd) of the log
        of the judges' spread around it (default (log 0.7, 0.6): 0.22 to 2.3 within two sd).

    Returns
    -------
    pymc.Model
        Free ``theta``, ``logit_mean`` and ``logit_sd`` (dim ``rate``: sensitivity,
        specificity), ``logit_rate`` (``judge``, ``rate``); deterministic ``sensitivity`` and
        ``specificity`` (``judge``).

    Examples
    --------
    >>> labelled = np.array([[40, 3, 4, 3], [2, 3, 2, 23]])  # patterns 00, 10, 01, 11
    >>> m = pooled_model(labelled, np.array([600, 60, 70, 270]), ["a", "b"])
    >>> sorted(v.name for v in m.free_RVs)
    ['logit_mean', 'logit_rate', 'logit_sd', 'theta']
    """
    import pymc as pm
    import pytensor.tensor as pt

    prior = pooled_prior(prior)
    labelled = np.asarray(labelled_counts, dtype=np.int64)
    unlabelled = np.asarray(unlabelled_counts, dtype=np.int64)
    x = patterns(len(judges)).astype(float)
    coords = {"judge": list(judges), "rate": ["sensitivity", "specificity"]}
    with pm.Model(coords=coords) as pm_model:
        theta = pm.Beta("theta", *prior["theta"])
        loc = pm.Normal("logit_mean", *prior["logit_mean"], dims="rate")
        scale = pm.LogNormal("logit_sd", *prior["logit_sd"], dims="rate")
        logit = pm.Normal("logit_rate", loc, scale, dims=("judge", "rate"))
        pm.Deterministic("sensitivity", pm.math.sigmoid(logit[:, 0]), dims="judge")
        pm.Deterministic("specificity", pm.math.sigmoid(logit[:, 1]), dims="judge")
        # log P(pattern | Y = 1) and log P(pattern | Y = 0); log sigmoid(z) = -softplus(-z)
        log_pos = -(x @ pt.softplus(-logit[:, 0]) + (1 - x) @ pt.softplus(logit[:, 0]))
        log_neg = -(x @ pt.softplus(logit[:, 1]) + (1 - x) @ pt.softplus(-logit[:, 1]))
        joint = pt.stack([pt.log1p(-theta) + log_neg, pt.log(theta) + log_pos])
        pm.Multinomial("labelled", n=int(labelled.sum()), p=pt.exp(joint).ravel(),
                       observed=labelled.ravel())
        pm.Multinomial("unlabelled", n=int(unlabelled.sum()),
                       p=pt.exp(pt.logsumexp(joint, axis=0)), observed=unlabelled)
    return pm_model


def sample_pooled(labelled_counts, unlabelled_counts, judges, prior, random_seed,
                  sample_kwargs) -> tuple[xr.DataTree, object]:
    r"""Sample :func:`pooled_model`; add ``theta_finite``, the mean of all :math:`N` true labels.

    ``theta_finite`` :math:`= (m_1 + \sum_k S_k)/N` with the hidden positives of pattern
    :math:`k` drawn per posterior draw, :math:`S_k \sim \mathrm{Bin}(u_k, P(Y = 1 \mid k))`.

    Returns
    -------
    draws : xarray.DataTree
    model : pymc.Model

    Examples
    --------
    >>> labelled = np.array([[40, 3, 4, 3], [2, 3, 2, 23]])
    >>> draws, _ = sample_pooled(labelled, np.array([600, 60, 70, 270]), ["a", "b"], None, 0,
    ...                          {"draws": 100, "tune": 100, "chains": 1})
    >>> sorted(draws["posterior"].data_vars)[-2:]
    ['theta', 'theta_finite']
    """
    labelled = np.asarray(labelled_counts, dtype=np.int64)
    unlabelled = np.asarray(unlabelled_counts, dtype=np.int64)
    pm_model = pooled_model(labelled, unlabelled, judges, prior=prior)
    draws = sample(pm_model, random_seed, {"target_accept": TARGET_ACCEPT, **sample_kwargs})
    post = draws["posterior"].to_dataset()
    theta = post["theta"].values[..., None]
    log_pos, log_neg = _verdict_logliks(
        special.logit(post["sensitivity"].transpose(..., "judge").values),
        special.logit(post["specificity"].transpose(..., "judge").values), len(judges))
    odds = special.logit(theta) + log_pos - log_neg  # of Y = 1 given each verdict pattern
    hidden = as_seed(random_seed).binomial(unlabelled, special.expit(odds))
    finite = (labelled[1].sum() + hidden.sum(-1)) / (labelled.sum() + unlabelled.sum())
    draws["posterior"] = xr.DataTree(post.assign(theta_finite=post["theta"].copy(data=finite)))
    return draws, pm_model


def _verdict_logliks(sens: np.ndarray, spec: np.ndarray, n_judges: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\log P(\text{pattern} \mid Y = 1)` and :math:`\log P(\text{pattern} \mid Y = 0)`
    of every verdict pattern (:func:`patterns`), shape (..., 2^J) each, from the judges' logit
    sensitivities and specificities (..., J): judges independent given :math:`Y`."""
    x = patterns(n_judges)
    return (-(np.logaddexp(0, -sens) @ x.T + np.logaddexp(0, sens) @ (1 - x).T),
            -(np.logaddexp(0, spec) @ x.T + np.logaddexp(0, -spec) @ (1 - x).T))


def _log_spread_prior(logits: np.ndarray, loc: tuple[float, float], spread: tuple[float, float]
                      ) -> np.ndarray:
    r"""Log prior of the judges' logit rates (S, J), :math:`\mu` and :math:`\sigma` summed out.

    Given :math:`\sigma`, :math:`\mathrm{logit} \sim N(\mu_0\mathbf 1, \sigma^2 I +
    \tau_0^2\mathbf 1\mathbf 1^\top)` (:math:`\mu` integrated exactly; inverse and determinant by
    Sherman–Morrison); :math:`\log\sigma \sim N(\nu_0, \omega_0)` is integrated on a grid.
    """
    (m0, s0), (nu, omega) = loc, spread
    n = logits.shape[-1]
    d = logits - m0
    sq, total = np.sum(d**2, -1)[:, None], np.sum(d, -1)[:, None] ** 2
    sigma2 = np.exp(2 * (nu + omega * _NODES))[None, :]
    quad = (sq - s0**2 * total / (sigma2 + n * s0**2)) / sigma2
    log_det = (n - 1) * np.log(sigma2) + np.log(sigma2 + n * s0**2)
    log_normal = -0.5 * (n * np.log(2 * np.pi) + log_det + quad)
    log_weight = stats.norm.logpdf(_NODES) + np.log(_NODES[1] - _NODES[0])
    return special.logsumexp(log_normal + log_weight, axis=-1)


def log_density(u, labelled_counts, unlabelled_counts, prior: Mapping | None = None
                ) -> np.ndarray:
    r"""Log posterior density (up to a constant) of :math:`u = (\mathrm{logit}\,\theta,
    \mathrm{logit}\,s_1..s_J, \mathrm{logit}\,c_1..c_J)`, the hyperparameters summed out.

    .. math::
        \log p(u \mid \text{data}) = \log p(\theta) + \log\theta(1-\theta)
            + \log p(\mathrm{logit}\,s) + \log p(\mathrm{logit}\,c)
            + \sum_{a,k} n_{ak}\log\pi_{ak} + \sum_k u_k\log\sum_a\pi_{ak} + \text{const},

    the priors of the logit rates with their mean and sd integrated out
    (:math:`\mu` exactly, :math:`\sigma` by quadrature). A numpy twin of :func:`pooled_model`.

    Parameters
    ----------
    u : array, shape (S, 2J + 1) or (2J + 1,)
        Points of the parameter space.
    labelled_counts, unlabelled_counts : array of int
        As :func:`pooled_model`.
    prior : dict, optional
        As :func:`pooled_model`.

    Returns
    -------
    numpy.ndarray
        Shape (S,) (a float for one point).

    Examples
    --------
    >>> labelled = np.array([[40, 3, 4, 3], [2, 3, 2, 23]])
    >>> u = np.array([-0.8, 2.0, 1.5, 2.5, 2.0])
    >>> round(log_density(u, labelled, np.array([600, 60, 70, 270])), 2)
    -1159.27
    """
    prior = pooled_prior(prior)
    single = np.ndim(u) == 1
    u = np.atleast_2d(np.asarray(u, float))
    labelled = np.asarray(labelled_counts, float)
    unlabelled = np.asarray(unlabelled_counts, float)
    n_judges = (u.shape[1] - 1) // 2
    t, sens, spec = u[:, 0], u[:, 1:n_judges + 1], u[:, n_judges + 1:]
    log_theta, log_1m_theta = -np.logaddexp(0, -t), -np.logaddexp(0, t)
    log_pos, log_neg = _verdict_logliks(sens, spec, n_judges)
    joint_1, joint_0 = log_theta[:, None] + log_pos, log_1m_theta[:, None] + log_neg
    loglik = joint_0 @ labelled[0] + joint_1 @ labelled[1] + np.logaddexp(joint_0,
                                                                          joint_1) @ unlabelled
    a, b = prior["theta"]
    log_prior = (a * log_theta + b * log_1m_theta - special.betaln(a, b)
                 + _log_spread_prior(sens, prior["logit_mean"], prior["logit_sd"])
                 + _log_spread_prior(spec, prior["logit_mean"], prior["logit_sd"]))
    out = loglik + log_prior
    return float(out[0]) if single else out


def _start(labelled: np.ndarray, n_judges: int) -> np.ndarray:
    """Starting point: smoothed labelled rates on the logit scale."""
    x = patterns(n_judges)
    m1, m0 = labelled[1].sum(), labelled[0].sum()
    sens = (labelled[1] @ x + 0.5) / (m1 + 1)
    spec = (labelled[0] @ (1 - x) + 0.5) / (m0 + 1)
    return special.logit(np.concatenate([[(m1 + 0.5) / (m1 + m0 + 1)], sens, spec]))


def exact_posterior(labelled_counts, unlabelled_counts, prior, ci_prob: float, random_seed
                    ) -> dict[str, float]:
    r"""Posterior mean, sd and equal-tailed interval of :math:`\theta` by importance sampling.

    The hyperparameters are summed out (:func:`log_density`); the proposal is a multivariate
    Student-t (:data:`PROPOSAL_DF` degrees of freedom) at the posterior mode with the inverse
    Hessian as its scale, :data:`PROPOSALS` draws; the weights :math:`w \propto p(u \mid
    \text{data})/q(u)` are self-normalised, and the effective sample size is Kish's
    :math:`(\sum w)^2/\sum w^2`. Independent of the PyMC model and of NUTS, so it checks both.

    Parameters
    ----------
    labelled_counts, unlabelled_counts, prior
        As :func:`pooled_model`.
    ci_prob : float
        Level of the interval.
    random_seed : int or None
        Seed of the proposal draws.

    Returns
    -------
    dict
        ``mean``, ``sd``, ``lower``, ``upper`` and ``ess``.

    Examples
    --------
    >>> labelled = np.array([[40, 3, 4, 3], [2, 3, 2, 23]])
    >>> post = exact_posterior(labelled, np.array([600, 60, 70, 270]), None, 0.95, 0)
    >>> {k: round(v, 3) for k, v in post.items() if k != "ess"}
    {'mean': 0.328, 'sd': 0.02, 'lower': 0.289, 'upper': 0.369}
    >>> post["ess"] > 20_000
    True
    """
    labelled = np.asarray(labelled_counts, float)
    unlabelled = np.asarray(unlabelled_counts, float)
    n_judges = int(np.log2(labelled.shape[1]))
    target = lambda v: -log_density(v, labelled, unlabelled, prior)  # noqa: E731
    mode = optimize.minimize(target, _start(labelled, n_judges), method="BFGS").x
    hessian = _hessian(target, mode)
    scale = np.linalg.inv(hessian)
    proposal = stats.multivariate_t(loc=mode, shape=scale, df=PROPOSAL_DF, seed=as_seed(
        random_seed))
    u = proposal.rvs(PROPOSALS)
    log_w = log_density(u, labelled, unlabelled, prior) - proposal.logpdf(u)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    theta = special.expit(u[:, 0])
    mean = float(w @ theta)
    order = np.argsort(theta)
    cdf = np.cumsum(w[order])
    tail = (1 - ci_prob) / 2
    lower, upper = np.interp([tail, 1 - tail], cdf, theta[order])
    return {"mean": mean, "sd": float(np.sqrt(w @ (theta - mean) ** 2)), "lower": float(lower),
            "upper": float(upper), "ess": float(1 / np.sum(w**2))}


def _hessian(f, x: np.ndarray, step: float = 1e-4) -> np.ndarray:
    """Central finite-difference Hessian of the scalar function ``f`` at ``x``."""
    d = x.size
    h = np.eye(d) * step
    out = np.empty((d, d))
    for i in range(d):
        for j in range(i, d):
            out[i, j] = out[j, i] = (f(x + h[i] + h[j]) - f(x + h[i] - h[j])
                                     - f(x - h[i] + h[j]) + f(x - h[i] - h[j])) / (4 * step**2)
    return out
