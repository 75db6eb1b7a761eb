r"""PEMI's K-class calibration model: multinomial Platt scaling with a posterior, and MNAR shifts.

The calibration map of K classes is Platt scaling on the log class probabilities,

.. math:: p_{ik}(a,b)=\frac{\exp(a_k+b\log s_{ik})}{\sum_j\exp(a_j+b\log s_{ij})},
          \qquad a_0=0,\ b>0,

the restriction :math:`W=bI` of Dirichlet calibration (Kull et al., NeurIPS 2019); with K = 2 it
is the binary Platt map :math:`\sigma(a_1+b\operatorname{logit}s_{i1})`. Its priors are those of
the binary model M1, :math:`a_k\sim\mathcal N(\mu_a,s_a^2)` for :math:`k\ge1` and
:math:`\log b\sim\mathcal N(\mu_b,s_b^2)`, and the labelled rows are observed as
:math:`y_j\sim\mathrm{Cat}(p_j(a,b))`.

A missing label is :math:`Y_i\sim\mathrm{Cat}(p^{\mathrm{mis}}_i)` with
:math:`p^{\mathrm{mis}}_{ik}\propto p_{ik}e^{\delta_k}`. When a label is missing with a
probability that depends on its class (and possibly on the row through a common factor),
:math:`P(M=1\mid Y=k,x)=r_k\,h(x)`, Bayes' rule gives this form exactly with
:math:`\delta_k=\log(r_k/r_0)+\mathrm{const}` for a map fitted on data that represent the whole
population; :math:`\delta=0` is missingness at random given the scores. Only differences of the
:math:`\delta_k` matter. No observed variable depends on :math:`\delta`, so a prior on it is its
posterior (pattern-mixture sensitivity, as the binary model M3).

The missing labels enter no likelihood: summed over their K values each contributes 1, so the
model holds continuous parameters only (NUTS) and the labels are drawn in the posterior
predictive. :func:`posterior` draws the same posterior without MCMC (Laplace approximation,
then importance sampling), for the fast paths and for checking the NUTS draws.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import special

from bayeval.methods.pemi.models import PRIOR_A, PRIOR_LOG_B

__all__ = ["PlattPosterior", "class_model", "log_scores", "platt_probabilities", "posterior"]

#: importance draws of :func:`posterior`
DRAWS = 400
#: degrees of freedom of the multivariate t proposal
PROPOSAL_DF = 4
_ROWS = 1 << 20  # cells (draws x rows x classes) per chunk of the log likelihood


def log_scores(scores: np.ndarray) -> np.ndarray:
    r""":math:`\log\max(s,10^{-12})`, the input of the map.

    Examples
    --------
    >>> log_scores(np.array([[1.0, 0.0]])).round(2).tolist()
    [[0.0, -27.63]]
    """
    return np.log(np.maximum(scores, 1e-12))


def platt_probabilities(x: np.ndarray, a: np.ndarray, b: np.ndarray,
                        delta: np.ndarray | None = None) -> np.ndarray:
    r""":math:`p_{ik}\propto\exp(a_k+b\,x_{ik}+\delta_k)` for draws of the map.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, K)
        Log scores (:func:`log_scores`).
    a : numpy.ndarray, shape (S, K)
        Intercepts, :math:`a_0=0`.
    b : numpy.ndarray, shape (S,)
        Slopes.
    delta : numpy.ndarray, shape (S, K), optional
        MNAR shifts.

    Returns
    -------
    numpy.ndarray, shape (S, n, K)

    Examples
    --------
    >>> x = log_scores(np.array([[0.2, 0.8]]))
    >>> platt_probabilities(x, np.zeros((1, 2)), np.ones(1)).round(3).tolist()
    [[[0.2, 0.8]]]
    >>> platt_probabilities(x, np.zeros((1, 2)), np.ones(1), np.log([[1.0, 4.0]])).round(3)[0]
    array([[0.059, 0.941]])
    """
    z = a[:, None, :] + b[:, None, None] * x[None]
    if delta is not None:
        z = z + delta[:, None, :]
    return special.softmax(z, axis=-1)


class PlattPosterior(NamedTuple):
    r"""Weighted draws of the map's posterior (:func:`posterior`).

    Attributes
    ----------
    a : numpy.ndarray, shape (S, K)
        Intercepts (:math:`a_0=0`).
    b : numpy.ndarray, shape (S,)
        Slopes.
    weights : numpy.ndarray, shape (S,)
        Self-normalised importance weights, summing to 1.
    mode : (numpy.ndarray, float)
        The posterior mode :math:`(a, b)`: the fitted map.

    Examples
    --------
    >>> post = PlattPosterior(np.zeros((2, 2)), np.ones(2), np.full(2, 0.5), (np.zeros(2), 1.0))
    >>> post.size, post.ess
    (2, 2.0)
    """

    a: np.ndarray
    b: np.ndarray
    weights: np.ndarray
    mode: tuple[np.ndarray, float]

    @property
    def size(self) -> int:
        """Number of draws :math:`S`."""
        return self.b.size

    @property
    def ess(self) -> float:
        r"""Kish's effective sample size :math:`1/\sum_s w_s^2`."""
        return float(1.0 / np.sum(self.weights**2))


def _unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a with a_0 = 0, b) from rows of (a_1..a_{K-1}, log b)."""
    theta = np.atleast_2d(theta)
    return np.column_stack([np.zeros(theta.shape[0]), theta[:, :-1]]), np.exp(theta[:, -1])


def _log_posterior(theta: np.ndarray, x: np.ndarray, y: np.ndarray, prior_a, prior_log_b
                   ) -> np.ndarray:
    r"""Log posterior of rows of :math:`\theta=(a_1..a_{K-1},\log b)`, up to a constant."""
    from scipy import stats

    a, b = _unpack(theta)
    own = x[np.arange(y.size), y]
    counts = np.bincount(y, minlength=x.shape[1])
    out = a @ counts + b * own.sum()
    step = max(1, _ROWS // max(x.size, 1))
    for start in range(0, b.size, step):
        z = a[start:start + step, None, :] + b[start:start + step, None, None] * x[None]
        out[start:start + step] -= special.logsumexp(z, axis=-1).sum(axis=1)
    prior = (stats.norm.logpdf(theta[..., :-1], *prior_a).sum(axis=-1)
             + stats.norm.logpdf(theta[..., -1], *prior_log_b))
    return out + prior


def _gradient(theta: np.ndarray, x: np.ndarray, y: np.ndarray, prior_a, prior_log_b
              ) -> np.ndarray:
    """Gradient of :func:`_log_posterior` at one theta."""
    a, b = _unpack(theta)
    p = special.softmax(a[0] + b[0] * x, axis=-1)
    resid = -p
    resid[np.arange(y.size), y] += 1.0
    grad_a = resid.sum(axis=0)[1:] - (theta[:-1] - prior_a[0]) / prior_a[1] ** 2
    grad_c = b[0] * np.sum(resid * x) - (theta[-1] - prior_log_b[0]) / prior_log_b[1] ** 2
    return np.r_[grad_a, grad_c]


def _mode(x, y, prior_a, prior_log_b) -> tuple[np.ndarray, np.ndarray]:
    """The posterior mode and the Hessian there (central differences of the gradient)."""
    from scipy import optimize

    k = x.shape[1]
    res = optimize.minimize(lambda t: -_log_posterior(t, x, y, prior_a, prior_log_b)[0],
                            np.zeros(k), jac=lambda t: -_gradient(t, x, y, prior_a, prior_log_b),
                            method="BFGS", options={"gtol": 1e-9})
    h = 1e-5
    hess = np.array([(_gradient(res.x + h * e, x, y, prior_a, prior_log_b)
                      - _gradient(res.x - h * e, x, y, prior_a, prior_log_b)) / (2 * h)
                     for e in np.eye(k)])
    return res.x, (hess + hess.T) / 2


def posterior(cal_scores: np.ndarray, cal_labels: np.ndarray, *, draws: int = DRAWS,
              prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B, random_seed: Any = None
              ) -> PlattPosterior:
    r"""Importance draws of the posterior of the multinomial Platt map (module docstring).

    The proposal is a multivariate :math:`t_4` centred at the posterior mode of
    :math:`\theta=(a_1,\dots,a_{K-1},\log b)` with the inverse of the negative Hessian there
    (the Laplace approximation, with heavier tails); the draws' weights are
    :math:`w_s\propto\pi(\theta_s\mid\text{data})/q(\theta_s)`, self-normalised, so expectations
    under the weighted draws converge to those of the exact posterior.

    Parameters
    ----------
    cal_scores : numpy.ndarray, shape (n, K)
        Class probabilities of the labelled rows.
    cal_labels : numpy.ndarray, shape (n,)
        Their classes' codes 0..K-1.
    draws : int
        Number of importance draws :math:`S`.
    prior_a, prior_log_b : (mean, sd)
        Normal priors of every intercept :math:`a_k` (:math:`k\ge1`) and of :math:`\log b`.
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    PlattPosterior

    Examples
    --------
    Scores that are too confident (the labels follow :math:`s^{1/2}`) get a slope below 1:

    >>> rng = np.random.default_rng(0)
    >>> s = rng.dirichlet([1, 1, 1], 2000)
    >>> true = s**0.5 / (s**0.5).sum(axis=1, keepdims=True)
    >>> y = (rng.random(2000)[:, None] > true.cumsum(axis=1)).sum(axis=1)
    >>> post = posterior(s, y, random_seed=1)
    >>> round(float(post.weights @ post.b), 1), post.ess > 300
    (0.5, True)
    """
    from scipy import stats

    x = log_scores(cal_scores)
    mode, hess = _mode(x, cal_labels, prior_a, prior_log_b)
    cov = np.linalg.inv(-hess)
    proposal = stats.multivariate_t(loc=mode, shape=cov, df=PROPOSAL_DF)
    theta = np.atleast_2d(proposal.rvs(size=draws, random_state=np.random.default_rng(
        random_seed)))
    log_w = _log_posterior(theta, x, cal_labels, prior_a, prior_log_b) - proposal.logpdf(theta)
    weights = np.exp(log_w - log_w.max())
    a, b = _unpack(theta)
    mode_a, mode_b = _unpack(mode)
    return PlattPosterior(a, b, weights / weights.sum(), (mode_a[0], float(mode_b[0])))


def class_model(cal_scores: Any, cal_labels: Any, *, classes: Any = None, delta=None,
                prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B):
    r"""PEMI's PyMC model of K classes: the multinomial Platt map's posterior, MNAR shifts.

    .. math:: a_k\sim\mathcal N(\mu_a,s_a^2)\ (k\ge1),\quad \log b\sim\mathcal N(\mu_b,s_b^2),
              \quad y_j\sim\mathrm{Cat}\big(\operatorname{softmax}(a+b\log s_j)\big),

    and, with a prior on the MNAR shifts, :math:`\delta_k\sim\mathcal N(\mu_k,s_k^2)` for the
    classes with :math:`s_k>0` (module docstring). The missing labels are summed out; they are
    drawn given the posterior draws in the predictive.

    Parameters
    ----------
    cal_scores : array-like, shape (n, K)
        Class probabilities of the labelled rows.
    cal_labels : array-like of int, shape (n,)
        Their classes' codes 0..K-1.
    classes : sequence, optional
        The names of the K classes (coordinate ``class``); default 0..K-1.
    delta : (numpy.ndarray, numpy.ndarray), optional
        Means and sds of the K shifts; a free ``delta`` (dim ``class``) when an sd is positive
        (the classes with sd 0 are fixed at their means).
    prior_a, prior_log_b : (mean, sd)
        Normal priors of the intercepts and of the log slope.

    Returns
    -------
    pm.Model
        Free ``a`` (dim ``free_class``, the classes after the first) and ``log_b``,
        deterministic ``b``, observed ``labels``; free ``delta_free`` and deterministic
        ``delta`` with a prior on the shifts.

    Examples
    --------
    >>> m = class_model([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], [0, 1, 2],
    ...                 classes=["x", "y", "z"])
    >>> [v.name for v in m.free_RVs], m.coords["free_class"]
    (['a', 'log_b'], ('y', 'z'))
    """
    import pymc as pm
    import pytensor.tensor as pt

    x = log_scores(np.asarray(cal_scores, dtype=float))
    y = np.asarray(cal_labels, dtype=np.int64)
    k = x.shape[1]
    names = list(range(k)) if classes is None else list(classes)
    with pm.Model(coords={"class": names, "free_class": names[1:],
                          "row": np.arange(y.size)}) as m:
        a_free = pm.Normal("a", mu=prior_a[0], sigma=prior_a[1], dims="free_class")
        log_b = pm.Normal("log_b", mu=prior_log_b[0], sigma=prior_log_b[1])
        b = pm.Deterministic("b", pm.math.exp(log_b))
        a = pm.math.concatenate([pm.math.zeros(1), a_free])
        pm.Categorical("labels", logit_p=a[None, :] + b * x, observed=y, dims="row")
        if delta is not None and np.any(delta[1] > 0):
            free = np.flatnonzero(delta[1] > 0)
            d = pm.Normal("delta_free", mu=delta[0][free], sigma=delta[1][free],
                          shape=free.size)
            pm.Deterministic("delta", pt.set_subtensor(
                pt.as_tensor(np.asarray(delta[0], dtype=float))[free], d), dims="class")
    return m
