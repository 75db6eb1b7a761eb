r"""The PyMC models of MVU, and their posteriors pushed to hard confidences.

* **Model A** (``variant="a"``): the imputer's posterior. :math:`\mu \sim N(0, \sigma_\mu^2 I)`,
  :math:`\Sigma = LL^\top`, :math:`L \sim \mathrm{LKJCholeskyCov}(\eta,
  \mathrm{HalfNormal}(\sigma_{sd}))` on the standardised training rows :math:`z_n \sim N(\mu,
  \Sigma)`, whose likelihood is computed from their mean and scatter matrix (:math:`O(d^3)` per
  gradient, whatever N); the missing entries of a test row follow :math:`x_M^* \mid \mu, \Sigma,
  x_O` and :math:`\phi^* = \pi(x_O, x_M^*)`. Parameter uncertainty of the imputer widens the
  MVU (the fast path is the plug-in).
* **Model B** (``variant="b"``): a Bayesian Dirichlet fitted to the MVU draws of each row,
  :math:`\mu_\alpha \sim \mathrm{Dir}(\mathbf 1)`, :math:`\kappa \sim \mathrm{LogNormal}(m, s^2)`,
  :math:`\phi^{(s)} \sim \mathrm{Dir}(\kappa\mu_\alpha)`.
* **Model C** (``variant="c"``): Bayesian DMV, the Dirichlet regression
  :math:`\mu = \mathrm{softmax}(0, \tilde h W_\eta)`, :math:`\log\kappa = \tilde h w_\kappa`,
  :math:`t \sim \mathrm{Dir}(\kappa\mu)` of the classifier's probabilities :math:`t = \pi(x)` on
  masked copies of training rows, with features :math:`h` from :func:`dmv_design`; Laplace
  approximation at the MAP by default, NUTS on request.

Models B and C score points :math:`t` of the simplex that may lie on its boundary: their
likelihood is the Dirichlet's with stick-breaking fractions within :math:`10^{-6}` of 0 or 1
censored (:mod:`bayeval.methods.mvu.censored`), a potential computed from sufficient statistics.

With a posterior, :math:`P(V = j) = \frac1S\sum_s P_j(\theta^{(s)})` (average, then maximise) and
``c_hard_lower``/``c_hard_upper`` are the interval of :math:`P_{y_\mathrm{hard}}(\theta^{(s)})`.
``independent_posterior_a``, ``_b`` and ``_c`` draw each model's posterior without MCMC
(importance sampling): the reference that ``method="both"`` checks the sampler against.
"""

from __future__ import annotations

import numpy as np
import scipy
import xarray as xr
from scipy import special

from bayeval.methods.mvu.censored import loglik, loglik_graph, simplex, sufficient
from bayeval.methods.mvu.estimators import (
    CLIP,
    conditional_draws,
    conditional_logits,
    dirichlet_mle,
    linear_parts,
    mcar_mask,
    pushforward,
)
from bayeval.methods.mvu.fast import (
    beta_mixture_law,
    gaussian_vote_probs,
    logitnormal_mixture_law,
    vote_probs,
    votes_from_draws,
)
from bayeval.methods.mvu.result import (
    check_reference,
    dirichlet_posterior,
    logit_posterior,
    predictive_draws,
)
from bayeval.sampling import DEFAULTS, sample, stage
from bayeval.validation import as_choice, as_seed

# posterior() is the engine of bayeval.methods.mvu.api.mvu(method="pymc"), not public API
__all__ = ["CHECK_DRAWS", "VARIANTS", "dmv_design", "independent_posterior_a",
           "independent_posterior_b", "independent_posterior_c", "model"]

VARIANTS = ("a", "b", "c")
#: posterior draws used for per-draw vote probabilities and predictive draws (evenly thinned)
MAX_DRAWS = 500
#: Model A's NUTS run: 2 x 2,000 draws (its d + d(d + 1)/2 scalars, 44 at d = 8, reached a
#: largest R-hat of 1.013 in one of four seeds of 2 x 1,000 on 150 rows; 1.0016-1.0037 now)
MODEL_A_SAMPLING = {"draws": 2000}
#: LogNormal (m, s) prior of a concentration: Model B's kappa, Model C's at the features' mean
KAPPA_PRIOR = (2.302585092994046, 3.0)
#: prior sd of Model C's weights but the concentration's intercept (standardised features)
SIGMA_W = 1.0
#: independent posterior draws of Model A behind the law that ``method="both"`` checks
CHECK_DRAWS = 2000


def model(*args, variant: str, **kwargs):
    r"""The PyMC model of MVU ``variant`` (module docstring), built from plain arrays.

    .. math:: \text{A: } \mu \sim N(0, \sigma_\mu^2 I),\quad \Sigma = LL^\top,\quad
              L \sim \mathrm{LKJCholeskyCov}(\eta, \mathrm{HalfNormal}(\sigma_{sd})),\quad
              z_n \sim N(\mu, \Sigma)

    .. math:: \text{B: } \mu_\alpha \sim \mathrm{Dir}(\mathbf 1),\quad
              \kappa \sim \mathrm{LogNormal}(m, s^2),\quad
              \phi^{(s)} \sim \mathrm{Dir}(\kappa\mu_\alpha)

    .. math:: \text{C: } W_\eta, w_\kappa \sim N(0, \sigma_W^2),\quad
              \eta = [0, \tilde h W_\eta],\quad \kappa = \exp(\tilde h w_\kappa),\quad
              t_n \sim \mathrm{Dir}(\kappa_n\,\mathrm{softmax}(\eta_n))

    Parameters
    ----------
    *args, **kwargs
        The data and priors of the variant:

        * ``"a"``: ``train`` (N, d), complete training rows (the model works on them
          standardised by column means and sds); ``x`` (n, d) with NaN for missing, optional:
          adds ``x_miss_z`` (standard normals, one per missing entry) with :math:`x_M^* = \hat
          x_M + (L_A^{-\top}\varepsilon)_M`, the conditional law given :math:`\mu, \Sigma` and
          :math:`x_O` (non-centred); ``coef``, ``intercept`` (r, d) and (r,), optional: a linear
          classifier (r = 1: sigmoid, else softmax) adds the deterministic ``phi`` (``test``,
          ``class``) of the completed test rows; ``eta=2``, ``mu_sd=2``, ``sd_sd=2``: LKJ shape
          :math:`\eta`, prior sds :math:`\sigma_\mu` of the means and :math:`\sigma_{sd}` of the
          standard deviations (standardised units).
        * ``"b"``: ``phi`` (S, K) or (n, S, K), MVU draws (renormalised; censored near the
          simplex's boundary, :mod:`bayeval.methods.mvu.censored`);
          ``kappa_prior=(log 10, 3)``: the LogNormal :math:`(m, s)` of the concentration
          :math:`\kappa = \alpha_0`.
        * ``"c"``: ``features`` (N, F), standardised :func:`dmv_design` rows of masked training
          copies (no fully observed row), :math:`\tilde h = [1, h]`; ``targets`` (N, K), the
          classifier's probabilities on the complete rows (as ``phi``);
          ``sigma_w=1``: the prior sd :math:`\sigma_W` of the weights but one (standardised
          features), ``kappa_prior=(log 10, 3)``: the LogNormal :math:`(m, s)` of the
          concentration at the features' mean, :math:`w_{\kappa,0} \sim N(m, s^2)`. This
          "mean / concentration" parameterisation has a better conditioned posterior than
          :math:`\alpha = \exp(hW)`.
    variant : {"a", "b", "c"}

    Returns
    -------
    pm.Model
        A: free ``mu`` (``feature``), ``chol`` (packed Cholesky factor) and, with ``x``,
        ``x_miss_z``; observed ``x_train`` (the standardised rows; its log density is computed
        from their mean :math:`\bar z` and scatter matrix :math:`S`,
        :math:`-\frac N2\log|\Sigma| - \frac12\operatorname{tr}(\Sigma^{-1}S) - \frac N2(\bar z -
        \mu)^\top\Sigma^{-1}(\bar z - \mu)` + const). B: free ``mu`` (``instance``, ``class``;
        simplex) and ``kappa`` (``instance``), deterministic ``alpha``, the likelihood of the
        draws as the potential ``phi`` (``instance``). C: free ``w_eta`` (``feature``,
        ``logit``) and ``w_kappa`` (``feature``), the likelihood of the targets as the
        potential ``target``.

    Raises
    ------
    ValueError
        If ``variant`` is not one of ``VARIANTS``.

    References
    ----------
    "Missing Value Uncertainty: Could Collecting Missing Values Change the Prediction?"
    (anonymous, under review): Models B and C are Bayesian versions of its Dirichlet MVU and its
    Direct Missing Value (DMV) estimator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = model(rng.normal(size=(50, 2)), x=[[np.nan, 1.0], [0.5, 0.2]],
    ...           coef=[[1.0, 1.0]], intercept=[-1.0], variant="a")
    >>> [v.name for v in m.free_RVs], m.named_vars_to_dims["phi"]
    (['mu', 'chol', 'x_miss_z'], ('test', 'class'))
    >>> phi = rng.dirichlet([2.0, 5.0, 3.0], size=(2, 100))  # 2 instances
    >>> m = model(phi, variant="b")
    >>> [v.name for v in m.free_RVs], m.named_vars_to_dims["alpha"]
    (['mu', 'kappa'], ('instance', 'class'))
    >>> mask = [[False, True], [True, False], [False, True]]
    >>> h = dmv_design([[1.0, np.nan], [np.nan, 2.0], [0.5, np.nan]], mask)
    >>> m = model(h, [[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]], variant="c")
    >>> {v.name: m.initial_point()[v.name].shape for v in m.free_RVs}  # F + 1 = 7, K - 1 = 1
    {'w_eta': (7, 1), 'w_kappa': (7,)}
    """
    builder = {"a": _model_a, "b": _model_b, "c": _model_c}
    return builder[as_choice(variant, "variant", VARIANTS)](*args, **kwargs)


def _standardisation(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sd = train.std(axis=0)
    return train.mean(axis=0), np.where(sd > 0, sd, 1.0)


def _rows_logp(value, mu, chol):
    r"""Log density of N rows :math:`z_n \sim N(\mu, LL^\top)` from their sufficient statistics,
    :math:`\bar z` and :math:`S = \sum_n (z_n - \bar z)(z_n - \bar z)^\top`:

    .. math:: -\tfrac{Nd}2\log 2\pi - N\sum_i\log L_{ii}
              - \tfrac12\operatorname{tr}(L^{-1}SL^{-\top})
              - \tfrac N2\lVert L^{-1}(\bar z - \mu)\rVert^2.

    The rows are constants, so the statistics are computed once, when the graph is compiled:
    each evaluation costs :math:`O(d^3)`, not :math:`O(Nd^2)`."""
    import pytensor.tensor as pt

    n, d = value.shape[-2], value.shape[-1]
    mean = value.mean(-2)
    resid = value - mean[..., None, :]
    scatter = pt.swapaxes(resid, -1, -2) @ resid
    inv = pt.linalg.solve_triangular(chol, pt.eye(d), lower=True)
    diff = inv @ (mean - mu)
    return (-0.5 * n * d * np.log(2 * np.pi) - n * pt.log(pt.diagonal(chol)).sum()
            - 0.5 * ((inv @ scatter) * inv).sum() - 0.5 * n * (diff**2).sum())


def _model_a(train, *, x=None, coef=None, intercept=None, eta: float = 2.0, mu_sd: float = 2.0,
             sd_sd: float = 2.0):
    """Model A: Gaussian imputation posterior, pushed through a linear classifier."""
    import pymc as pm
    import pytensor.tensor as pt

    train = np.asarray(train, dtype=float)
    d = train.shape[1]
    center, scale = _standardisation(train)
    coords = {"feature": [f"x{i}" for i in range(d)]}
    with pm.Model(coords=coords) as m:
        mu = pm.Normal("mu", 0.0, mu_sd, dims="feature", shape=(d,))
        packed = pm.LKJCholeskyCov("chol", eta=eta, n=d, sd_dist=pm.HalfNormal.dist(sd_sd),
                                   compute_corr=False)
        chol = pm.math.expand_packed_triangular(d, packed)
        z = (train - center) / scale
        pm.CustomDist("x_train", mu, chol, logp=_rows_logp, signature="(d),(d,d)->(n,d)",
                      dist=lambda mu, chol, size: pm.MvNormal.dist(mu, chol=chol, shape=z.shape),
                      observed=z)
        if x is None:
            return m
        x = np.atleast_2d(np.asarray(x, dtype=float))
        miss = np.isnan(x)
        mf = miss.astype(float)
        xz = np.where(miss, 0.0, (x - center) / scale)
        prec = pt.linalg.inv(chol @ chol.T)
        a = mf[:, :, None] * prec[None] * mf[:, None, :] + np.eye(d) * (1 - mf)[:, None, :]
        rhs = -mf * (pt.where(miss, 0.0, xz - mu) @ prec)
        x_hat = pt.where(miss, mu + pt.linalg.solve(a, rhs[..., None], b_ndim=2)[..., 0], xz)
        eps = pm.Normal("x_miss_z", 0.0, 1.0, shape=int(miss.sum()))
        eps_full = pt.set_subtensor(pt.zeros(x.shape)[np.nonzero(miss)], eps)
        y = pt.linalg.solve_triangular(pt.swapaxes(pt.linalg.cholesky(a), -1, -2),
                                       eps_full[..., None], lower=False, b_ndim=2)[..., 0]
        x_full = center + scale * (x_hat + y * mf)
        if coef is not None:
            w, b = np.atleast_2d(coef).astype(float), np.atleast_1d(intercept).astype(float)
            z = x_full @ w.T + b
            phi = (pt.concatenate([1 - pm.math.sigmoid(z), pm.math.sigmoid(z)], axis=1)
                   if len(w) == 1 else pt.special.softmax(z, axis=1))
            m.add_coords({"test": np.arange(len(x)), "class": np.arange(max(2, len(w)))})
            pm.Deterministic("phi", phi, dims=("test", "class"))
    return m


def _model_b(phi, *, kappa_prior=KAPPA_PRIOR):
    """Model B: a Bayesian Dirichlet fitted to MVU draws, one per instance."""
    import pymc as pm

    # shape= next to dims: PyTensor 3.3's numba backend fails on length-1 dims given by coords
    phi = simplex(phi)
    n, _, k = phi.shape
    with pm.Model(coords={"instance": np.arange(n), "class": np.arange(k)}) as m:
        mu = pm.Dirichlet("mu", a=np.ones((n, k)), dims=("instance", "class"), shape=(n, k))
        kappa = pm.LogNormal("kappa", mu=kappa_prior[0], sigma=kappa_prior[1], dims="instance",
                             shape=(n,))
        alpha = pm.Deterministic("alpha", kappa[:, None] * mu, dims=("instance", "class"))
        pm.Potential("phi", loglik_graph(alpha, sufficient(phi)), dims="instance")
    return m


def dmv_design(x, mask, center=None, scale=None) -> np.ndarray:
    r"""Features of Model C: :math:`[\tilde x, m, (m_i \tilde x_j)_{i \ne j}]`.

    :math:`\tilde x` are the standardised features (``center``/``scale``) with missing entries set
    to 0. The interactions let "feature j observed while i is missing" differ from "both observed"
    (without them the MVCE of the synthetic case with X2 missing rises several-fold). No
    intercept: the model adds one.

    Parameters
    ----------
    x : array (n, d)
        Rows (missing entries ignored).
    mask : array (n, d) of bool
        True where missing.
    center, scale : arrays (d,), optional
        Standardisation (default 0 and 1).

    Returns
    -------
    numpy.ndarray, shape (n, 2d + d(d-1))
        :math:`\tilde x`, :math:`m`, then :math:`m_i \tilde x_j` for the pairs
        :math:`i \ne j` in row-major order.

    Examples
    --------
    >>> dmv_design([[2.0, np.nan]], [[False, True]]).tolist()
    [[2.0, 0.0, 0.0, 1.0, 0.0, 2.0]]
    """
    x, m = np.asarray(x, dtype=float), np.asarray(mask, dtype=bool)
    center = np.zeros(x.shape[1]) if center is None else center
    scale = np.ones(x.shape[1]) if scale is None else scale
    xt = np.where(m, 0.0, (np.nan_to_num(x) - center) / scale)
    d = x.shape[1]
    i, j = np.nonzero(~np.eye(d, dtype=bool))
    return np.hstack([xt, m.astype(float), m[:, i] * xt[:, j]])


def _model_c(features, targets, *, sigma_w: float = SIGMA_W, kappa_prior=KAPPA_PRIOR):
    """Model C: Bayesian DMV, a Dirichlet regression of the classifier's probabilities."""
    import pymc as pm
    import pytensor.tensor as pt

    h = np.asarray(features, dtype=float)
    h = np.hstack([np.ones((len(h), 1)), h])
    t = simplex(targets)[0]
    k = t.shape[1]
    coords = {"feature": ["1"] + [f"h{i}" for i in range(h.shape[1] - 1)],
              "logit": np.arange(1, k)}
    with pm.Model(coords=coords) as m:
        w_eta = pm.Normal("w_eta", 0.0, sigma_w, dims=("feature", "logit"),
                          shape=(h.shape[1], k - 1))
        mean, sd = _kappa_prior(h.shape[1], sigma_w, kappa_prior)
        w_kappa = pm.Normal("w_kappa", mean, sd, dims="feature", shape=(h.shape[1],))
        eta = pt.concatenate([pt.zeros((len(h), 1)), h @ w_eta], axis=1)
        alpha = pt.exp(h @ w_kappa)[:, None] * pt.special.softmax(eta, axis=1)
        pm.Potential("target", loglik_graph(alpha, sufficient(t[:, None])))
    return m


def _kappa_prior(n_weights: int, sigma_w: float, kappa_prior) -> tuple[np.ndarray, np.ndarray]:
    """Prior means and sds of Model C's ``w_kappa``: the intercept's from ``kappa_prior``,
    the slopes' :math:`N(0, \\sigma_W^2)`."""
    mean, sd = np.zeros(n_weights), np.full(n_weights, float(sigma_w))
    mean[0], sd[0] = kappa_prior
    return mean, sd


class _Design:
    """Model C's features: :func:`dmv_design`, standardised on the training copies, without
    constant or linearly dependent columns (pivoted QR), so the posterior is identified."""

    def __init__(self, x: np.ndarray, mask: np.ndarray):
        self.center, self.scale = _standardisation(x)
        raw = dmv_design(x, mask, self.center, self.scale)
        self.mean, sd = raw.mean(0), raw.std(0)
        varying = np.flatnonzero(sd > 1e-12)
        z = (raw[:, varying] - self.mean[varying]) / sd[varying]
        _, r, piv = scipy.linalg.qr(z, pivoting=True, mode="economic")
        rank = int((np.abs(np.diag(r)) > 1e-8 * np.abs(r[0, 0])).sum())
        self.columns = varying[np.sort(piv[:rank])]
        self.sd = sd

    def __call__(self, x, mask) -> np.ndarray:
        raw = dmv_design(x, mask, self.center, self.scale)[:, self.columns]
        return (raw - self.mean[self.columns]) / self.sd[self.columns]


# ------------------------------------------------------------------------------ posteriors
def _thin(post: xr.Dataset) -> xr.Dataset:
    step = max(1, -(-post.sizes["chain"] * post.sizes["draw"] // MAX_DRAWS))
    return post.isel(draw=slice(None, None, step))


def _mode(pm_model) -> tuple[np.ndarray, np.ndarray]:
    """The MAP of Model C's (unconstrained) parameters, flattened, and the inverse Hessian there."""
    import pymc as pm

    fit = pm.find_MAP(model=pm_model, compute_hessian=True, return_inferencedata=True,
                      jitter=False, progressbar=DEFAULTS["progressbar"], backend="c")["fit"]
    return fit["mean_vector"].values, fit["covariance_matrix"].values


def _split(pm_model, theta: np.ndarray) -> dict:
    """Flat parameter vectors (S, P) as ``{name: (S, *shape)}`` of the model's free variables."""
    point = pm_model.initial_point()
    shapes = [point[v.name].shape for v in pm_model.value_vars]
    sizes = np.cumsum([int(np.prod(shape)) for shape in shapes])[:-1]
    return {rv.name: part.reshape(len(theta), *shape) for rv, shape, part in
            zip(pm_model.free_RVs, shapes, np.split(theta, sizes, axis=1), strict=True)}


def _laplace(pm_model, draws: int, rng) -> xr.DataTree:
    r"""Laplace approximation at the MAP: iid draws of :math:`N(\hat\theta, H^{-1})` on the
    unconstrained parameters (Model C's are all unconstrained)."""
    import arviz as az

    theta = rng.multivariate_normal(*_mode(pm_model), size=draws)
    posterior = {name: value[None] for name, value in _split(pm_model, theta).items()}
    dims = {rv.name: list(pm_model.named_vars_to_dims.get(rv.name, ()))
            for rv in pm_model.free_RVs}
    coords = {k: np.asarray(v) for k, v in pm_model.coords.items()}
    return az.from_dict({"posterior": posterior}, dims=dims, coords=coords)


def _gaussian_draws(post: xr.Dataset, train: np.ndarray):
    """Means (S, d) and precisions (S, d, d) of Model A's draws, in the units of the data."""
    center, scale = _standardisation(train)
    d = train.shape[1]
    mu = post["mu"].values.reshape(-1, d)
    chol = np.zeros((len(mu), d, d))
    chol[:, *np.tril_indices(d)] = post["chol"].values.reshape(len(mu), -1)
    cov = scale[:, None] * (chol @ np.swapaxes(chol, 1, 2)) * scale[None, :]
    return center + scale * mu, np.linalg.inv(cov)


def independent_posterior_a(train, draws: int, random_seed=None, *, eta: float = 2.0,
                            mu_sd: float = 2.0, sd_sd: float = 2.0
                            ) -> tuple[np.ndarray, np.ndarray, float]:
    r"""Independent draws of Model A's posterior of :math:`(\mu, \Sigma)`, without MCMC.

    Sampling-importance-resampling on the standardised training rows :math:`z_1, \dots, z_N`:
    the proposal is the posterior under the prior :math:`p_0 \propto |\Sigma|^{-(d+1)/2}`,
    :math:`\Sigma \sim \mathrm{IW}(S, N - 1)`, :math:`\mu \mid \Sigma \sim N(\bar z, \Sigma/N)`
    with :math:`S = \sum_n (z_n - \bar z)(z_n - \bar z)^\top`; its importance weight is Model A's
    prior over :math:`p_0`. With :math:`\Sigma = D R D`, :math:`D = \mathrm{diag}(\sigma)`, the
    prior is :math:`\sigma_i \sim \mathrm{HalfNormal}(\sigma_{sd})`, :math:`R \sim
    \mathrm{LKJ}(\eta)` and, by the Jacobian :math:`2^d\prod_i\sigma_i^d` of :math:`(\sigma, R)
    \mapsto \Sigma`,

    .. math:: \log w = \log N(\mu; 0, \sigma_\mu^2 I) + \sum_i \log
              \mathrm{HalfNormal}(\sigma_i; \sigma_{sd}) + \sum_i \log\sigma_i +
              \left(\eta - 1 + \tfrac{d + 1}{2}\right)\log\det R + \text{const}.

    ``4 * draws`` proposals are weighted and ``draws`` of them resampled (multinomial).

    Parameters
    ----------
    train : array (N, d)
        Complete training rows, as :func:`model` (``variant="a"``).
    draws : int
        Posterior draws returned.
    random_seed : int or numpy.random.Generator, optional
    eta, mu_sd, sd_sd : float
        Model A's priors.

    Returns
    -------
    mean : numpy.ndarray, shape (draws, d)
    precision : numpy.ndarray, shape (draws, d, d)
        In the units of ``train``.
    ess : float
        Kish's effective sample size :math:`(\sum w)^2/\sum w^2` of the proposals.

    Examples
    --------
    With 2,000 rows the prior hardly matters: the draws centre on the sample mean.

    >>> rng = np.random.default_rng(0)
    >>> train = rng.multivariate_normal([1.0, -1.0], [[1.0, 0.5], [0.5, 2.0]], size=2000)
    >>> mean, precision, ess = independent_posterior_a(train, 2000, random_seed=1)
    >>> np.round(mean.mean(0) - train.mean(0), 2), ess > 7000
    (array([0., 0.]), True)
    """
    rng = as_seed(random_seed)
    train = np.asarray(train, dtype=float)
    center, scale = _standardisation(train)
    z = (train - center) / scale
    n, d = z.shape
    resid = z - z.mean(0)
    proposals = 4 * draws
    cov = np.atleast_3d(scipy.stats.invwishart(df=n - 1, scale=resid.T @ resid).rvs(
        proposals, random_state=rng)).reshape(proposals, d, d)
    mu = z.mean(0) + np.einsum("sij,sj->si", np.linalg.cholesky(cov / n),
                               rng.standard_normal((proposals, d)))
    sigma = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    log_det_r = np.linalg.slogdet(cov / (sigma[:, :, None] * sigma[:, None, :]))[1]
    log_w = (scipy.stats.norm(0.0, mu_sd).logpdf(mu).sum(1)
             + scipy.stats.halfnorm(scale=sd_sd).logpdf(sigma).sum(1) + np.log(sigma).sum(1)
             + (eta - 1 + (d + 1) / 2) * log_det_r)
    w = np.exp(log_w - log_w.max())
    keep = rng.choice(proposals, size=draws, p=w / w.sum())
    cov_x = scale[:, None] * cov[keep] * scale[None, :]
    return center + scale * mu[keep], np.linalg.inv(cov_x), float(w.sum() ** 2 / (w**2).sum())


def independent_posterior_b(phi, draws: int, random_seed=None, *, kappa_prior=KAPPA_PRIOR
                            ) -> tuple[np.ndarray, np.ndarray]:
    r"""Independent draws of Model B's posterior of :math:`\alpha = \kappa\mu_\alpha`, per
    instance, without MCMC.

    Importance sampling on :math:`\ell = \log\alpha` from a multivariate :math:`t_5` centred at
    the maximum-likelihood :math:`\hat\alpha`
    (:func:`~bayeval.methods.mvu.estimators.dirichlet_mle`) with 1.5² times the inverse Fisher
    information :math:`S\,D(\mathrm{diag}\,\psi'(\hat\alpha) - \psi'(\hat\alpha_0)\mathbf 1
    \mathbf 1^\top)D`, :math:`D = \mathrm{diag}(\hat\alpha)`;
    the target is the censored likelihood of the draws
    (:mod:`bayeval.methods.mvu.censored`) times the prior, which for
    :math:`\mu_\alpha \sim \mathrm{Dir}(\mathbf 1)`, :math:`\kappa \sim
    \mathrm{LogNormal}(m, s^2)` is :math:`p(\ell) \propto p_\kappa(\alpha_0)\,
    \alpha_0^{-(K-1)}\prod_k\alpha_k`; ``4 * draws`` proposals per instance are weighted and
    ``draws`` resampled.

    Parameters
    ----------
    phi : array (n, S, K) or (S, K)
        MVU draws, as :func:`model` (``variant="b"``).
    draws : int
    random_seed : int or numpy.random.Generator, optional
    kappa_prior : (m, s)

    Returns
    -------
    alpha : numpy.ndarray, shape (n, draws, K)
        NaN for a row whose draws do not vary (no maximum-likelihood Dirichlet).
    ess : numpy.ndarray, shape (n,)
        Kish's effective sample size of each instance's proposals (0 for such a row).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> phi = rng.dirichlet([2.0, 6.0], size=(1, 400))
    >>> alpha, ess = independent_posterior_b(phi, 2000, random_seed=1)
    >>> alpha.mean(1).round(1), bool(ess[0] > 4000)
    (array([[2.2, 6.9]]), True)
    """
    rng = as_seed(random_seed)
    phi = simplex(phi)
    n, _, k = phi.shape
    alpha, ess = np.full((n, draws, k), np.nan), np.zeros(n)
    rows = np.flatnonzero(np.ptp(phi, axis=1).max(-1) > 0)
    step = max(1, 2_000_000 // (4 * draws * k))  # about 2e6 proposals' numbers per block
    for start in range(0, rows.size, step):
        block = rows[start:start + step]
        alpha[block], ess[block] = _importance_b(phi[block], draws, rng, kappa_prior)
    return alpha, ess


def _importance_b(phi, draws: int, rng, kappa_prior) -> tuple[np.ndarray, np.ndarray]:
    """:func:`independent_posterior_b` on rows whose draws vary."""
    n, size, k = phi.shape
    stats = {key: value[:, None] for key, value in sufficient(phi).items()}
    floored = np.clip(phi, CLIP, 1.0)  # the proposal's centre: the floored draws' MLE
    a_hat = dirichlet_mle(floored / floored.sum(-1, keepdims=True))
    info = size * (special.polygamma(1, a_hat)[:, :, None] * np.eye(k)
                   - special.polygamma(1, a_hat.sum(-1))[:, None, None])
    chol = np.linalg.cholesky(1.5**2 * np.linalg.inv(a_hat[:, :, None] * info * a_hat[:, None, :]))
    proposals, df = 4 * draws, 5.0
    t = (rng.standard_normal((n, proposals, k))
         / np.sqrt(rng.chisquare(df, (n, proposals, 1)) / df))
    log_alpha = np.log(a_hat)[:, None, :] + np.einsum("nkl,npl->npk", chol, t)
    alpha = np.exp(log_alpha)
    a0 = alpha.sum(-1)
    log_lik = loglik(alpha, stats)
    log_prior = (scipy.stats.norm(*kappa_prior).logpdf(np.log(a0)) - k * np.log(a0)
                 + log_alpha.sum(-1))
    log_q = -(df + k) / 2 * np.log1p((t**2).sum(-1) / df)
    log_w = log_lik + log_prior - log_q
    w = np.exp(log_w - log_w.max(1, keepdims=True))
    keep = np.stack([rng.choice(proposals, size=draws, p=wi / wi.sum()) for wi in w])
    return (np.take_along_axis(alpha, keep[:, :, None], 1),
            w.sum(1) ** 2 / (w**2).sum(1))


def independent_posterior_c(features, targets, draws: int, random_seed=None, *,
                            sigma_w: float = SIGMA_W, kappa_prior=KAPPA_PRIOR
                            ) -> tuple[dict, float]:
    r"""Independent draws of Model C's posterior of the weights, without MCMC.

    Importance sampling on :math:`\theta = (W_\eta, w_\kappa)` from a multivariate
    :math:`t_{10}` centred at the posterior mode with 1.2² times the inverse Hessian there; the
    target is Model C's posterior, computed here in numpy: with :math:`\tilde h_n = [1, h_n]`,
    :math:`\kappa_n = \exp(\tilde h_n w_\kappa)` and :math:`\mu_n =
    \mathrm{softmax}(0, \tilde h_n W_\eta)`,

    .. math:: \log p(\theta \mid t) = \sum_n \log L(\kappa_n\mu_n; t_n)
              - \sum_j \frac{(\theta_j - m_j)^2}{2 s_j^2} + \text{const},

    with :math:`L` the censored Dirichlet likelihood of the module docstring (the Dirichlet
    density where no fraction is censored) and :math:`N(m_j, s_j^2)` the prior of each weight
    (:func:`model`);

    ``4 * draws`` proposals are weighted and ``draws`` of them resampled (multinomial).

    Parameters
    ----------
    features, targets, sigma_w, kappa_prior
        As :func:`model` (``variant="c"``).
    draws : int
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    weights : dict
        ``w_eta`` (draws, F + 1, K - 1) and ``w_kappa`` (draws, F + 1).
    ess : float
        Kish's effective sample size :math:`(\sum w)^2/\sum w^2` of the proposals.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> h = rng.normal(size=(300, 1))
    >>> targets = rng.dirichlet([4.0, 6.0], size=300)  # kappa = 10, mu = (0.4, 0.6), no slope
    >>> w, ess = independent_posterior_c(h, targets, 1000, random_seed=1)
    >>> np.exp(w["w_kappa"][:, 0].mean()).round(0), ess > 2000
    (np.float64(10.0), True)
    """
    rng = as_seed(random_seed)
    pm_model = _model_c(features, targets, sigma_w=sigma_w, kappa_prior=kappa_prior)
    h = np.hstack([np.ones((len(features), 1)), np.asarray(features, dtype=float)])
    k_mean, k_sd = _kappa_prior(h.shape[1], sigma_w, kappa_prior)
    n_eta = h.shape[1] * (simplex(targets)[0].shape[1] - 1)
    prior_mean = np.concatenate([np.zeros(n_eta), k_mean])  # theta = (W_eta.ravel(), w_kappa)
    prior_sd = np.concatenate([np.full(n_eta, float(sigma_w)), k_sd])
    stats = sufficient(simplex(targets)[0][:, None])
    mode, cov = _mode(pm_model)
    proposals, df = 4 * draws, 10.0
    t = (rng.standard_normal((proposals, len(mode)))
         / np.sqrt(rng.chisquare(df, (proposals, 1)) / df))
    theta = mode + t @ np.linalg.cholesky(1.2**2 * cov).T
    log_w = (-(((theta - prior_mean) / prior_sd) ** 2).sum(1) / 2
             + (df + len(mode)) / 2 * np.log1p((t**2).sum(1) / df))
    step = max(1, 2_000_000 // (len(h) * stats["log_v"].shape[1]))
    for start in range(0, proposals, step):
        part = _split(pm_model, theta[start:start + step])
        alpha = _model_c_alpha(xr.Dataset({"w_eta": (("chain", "draw", "f", "k"),
                                                     part["w_eta"][None]),
                                           "w_kappa": (("chain", "draw", "f"),
                                                       part["w_kappa"][None])}), h)[0]
        log_w[start:start + step] += loglik(alpha, stats).sum(-1)
    log_w = np.where(np.isfinite(log_w), log_w, -np.inf)  # alpha overflowed: no mass
    w = np.exp(log_w - log_w.max())
    keep = rng.choice(proposals, size=draws, p=w / w.sum())
    return _split(pm_model, theta[keep]), float(w.sum() ** 2 / (w**2).sum())


def _per_draw(x, m, mean, prec) -> tuple[np.ndarray, ...]:
    """The rows, masks, means and precisions broadcast to (S, n, ...) for S draws."""
    s, n = len(mean), len(x)
    return (np.broadcast_to(x, (s, *x.shape)), np.broadcast_to(m, (s, *m.shape)),
            np.broadcast_to(mean[:, None], (s, *x.shape)),
            np.broadcast_to(prec[:, None], (s, n, *prec.shape[1:])))


def _logit_moments(x, m, mean, prec, linear) -> tuple[np.ndarray, np.ndarray]:
    """Means and variances (S, n) of the binary logit of every row under each of S draws."""
    a, v = conditional_logits(*_per_draw(x, m, mean, prec), *linear)
    return a[..., 0], v[..., 0, 0]


def _n_reference(ess) -> np.ndarray:
    """Effective number of independent draws after resampling :data:`CHECK_DRAWS` of proposals
    whose importance weights have Kish's effective sample size ``ess``."""
    with np.errstate(divide="ignore"):  # no proposal (ess 0): no draw
        return 1 / (1 / CHECK_DRAWS + 1 / np.asarray(ess, dtype=float))


def _posterior_a(predict, x, m, train, opts):
    """Model A: exact per-draw laws for a binary linear classifier, else predictive draws; with
    ``method="both"``, the same from independent posterior draws (:func:`independent_posterior_a`),
    the reference of the check."""
    linear = linear_parts(opts["classifier"], opts["probe"])
    exact = linear is not None and len(linear[0]) == 1
    pm_model = _model_a(train)
    tree = sample(pm_model, opts["seed"], opts["sample_kwargs"], defaults=MODEL_A_SAMPLING)
    post = _thin(tree["posterior"].to_dataset())
    c, d, n = post.sizes["chain"], post.sizes["draw"], len(x)
    draws = [_gaussian_draws(post, train)]
    if opts["method"] == "both":
        with stage(f"MVU Model A: {CHECK_DRAWS:,} independent posterior draws for check()"):
            *independent, ess = independent_posterior_a(train, CHECK_DRAWS, opts["rng"])
        draws.append(independent)
    notes, parts = [], []
    if not exact:
        notes.append("Model A gives exact per-draw vote probabilities (and an interval of "
                      "c_hard) only for a binary linear classifier; c_hard is the vote frequency "
                      "of the predictive draws")
    for mean, prec in draws:
        if exact:
            a, v = _logit_moments(x, m, mean, prec, linear)
            parts.append((a, v))
        else:
            imputed = conditional_draws(*_per_draw(x, m, mean, prec), 1, opts["rng"])[:, :, 0]
            parts.append(np.swapaxes(pushforward(predict, np.swapaxes(imputed, 0, 1)), 0, 1))
    if exact:
        a, v = parts[0]
        out = logit_posterior(a.reshape(c, d, n), v.reshape(c, d, n), weights=opts["weights"],
                              random_seed=opts["rng"], ci_prob=opts["ci_prob"])
    else:
        out = predictive_draws(parts[0].reshape(c, d, n, -1), weights=opts["weights"],
                               ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"])
    if len(parts) == 1:
        return out, pm_model, tree, post, notes, False
    y = out["y_hard"]
    if exact:
        a, v = parts[1]
        sd = np.sqrt(np.maximum(v, 1e-300))
        phi = logitnormal_mixture_law(np.where(y == 1, a, -a).T, sd.T, opts["ci_prob"])
        vote = gaussian_vote_probs(a.ravel(), v.ravel(), weights=opts["weights"]).reshape(
            (*a.shape, 2))
    else:
        phi, vote = parts[1], votes_from_draws(parts[1][..., None, :], weights=opts["weights"])
        phi = np.take_along_axis(phi, y[None, :, None], -1)[..., 0]
    vote = np.take_along_axis(vote, y[None, :, None], -1)[..., 0]
    out["reference"] = check_reference(phi, vote, np.full(n, _n_reference(ess)),
                                       opts["ci_prob"])
    notes += _ess_note(ess)
    return out, pm_model, tree, post, notes, False


def _ess_note(ess) -> list[str]:
    """A note where the reference's importance sampler is less efficient than its draws."""
    ess = np.asarray(ess, dtype=float)
    if not (ess[ess > 0] < CHECK_DRAWS).any():
        return []
    return [f"the independent posterior draws behind check() have an effective sample size of "
            f"{ess[ess > 0].min():.0f} (< {CHECK_DRAWS}) for some row: its tolerances widen "
            "with it, so check() is less sensitive there"]


def _model_c_alpha(post: xr.Dataset, h: np.ndarray) -> np.ndarray:
    """alpha (chain, draw, n, K) of Model C's draws at features h (n, F+1)."""
    eta = np.einsum("nf,cdfk->cdnk", h, post["w_eta"].values)
    eta = np.concatenate([np.zeros((*eta.shape[:3], 1)), eta], axis=-1)
    kappa = np.exp(np.einsum("nf,cdf->cdn", h, post["w_kappa"].values))
    return kappa[..., None] * special.softmax(eta, axis=-1)


def posterior(predict, x, m, train, imputer, opts):
    """(results, model, draws tree, thinned posterior, warnings, iid) of ``method="pymc"``.

    Model A for the Gaussian imputer, C for ``"dmv"``, B for a sampler object; ``opts`` are the
    options of :func:`bayeval.methods.mvu.api.mvu`. With ``method="both"`` the results hold
    ``reference``, the :func:`~bayeval.methods.mvu.result.check_reference` of independent
    posterior draws.
    """
    rng = opts["rng"]
    if opts["model_a"]:
        return _posterior_a(predict, x, m, train, opts)
    if imputer == "dmv":
        groups = np.arange(x.shape[1]) if opts["groups"] is None else opts["groups"]
        masks = mcar_mask(len(train), groups, 0.5, rng)
        keep = masks.any(axis=1)
        design = _Design(train[keep], masks[keep])
        features, targets = design(train[keep], masks[keep]), predict(train[keep])
        pm_model = _model_c(features, targets)
        if opts["inference"] == "nuts":
            tree, iid = sample(pm_model, opts["seed"], opts["sample_kwargs"]), False
        else:
            with stage("MVU Model C: Laplace approximation at the posterior mode"):
                tree, iid = _laplace(pm_model, MAX_DRAWS, rng), True
        post = _thin(tree["posterior"].to_dataset())
        h = np.hstack([np.ones((len(x), 1)), design(x, m)])
        alpha = opts["scale"] * _model_c_alpha(post, h)
    else:
        phi = pushforward(predict, imputer.sample(x, m, opts["draws"], rng))
        pm_model = _model_b(phi)
        tree, iid = sample(pm_model, opts["seed"], opts["sample_kwargs"]), False
        post = _thin(tree["posterior"].to_dataset())
        alpha = opts["scale"] * post["alpha"].values
    part = dirichlet_posterior(alpha, weights=opts["weights"], random_seed=rng,
                               ci_prob=opts["ci_prob"])
    if opts["method"] != "both":
        return part, pm_model, tree, post, [], iid
    notes = []
    if imputer == "dmv":
        with stage(f"MVU Model C: {CHECK_DRAWS:,} independent posterior draws for check()"):
            weights, ess = independent_posterior_c(features, targets, CHECK_DRAWS, rng)
        independent = _model_c_alpha(xr.Dataset(
            {"w_eta": (("chain", "draw", "f", "k"), weights["w_eta"][None]),
             "w_kappa": (("chain", "draw", "f"), weights["w_kappa"][None])}), h)[0]
        independent, ess = np.swapaxes(independent, 0, 1), np.full(len(x), ess)
    else:
        with stage(f"MVU Model B: {CHECK_DRAWS:,} independent posterior draws for check()"):
            independent, ess = independent_posterior_b(phi, CHECK_DRAWS, rng)
        if (ess == 0).any():
            notes.append(f"{int((ess == 0).sum())} row(s) whose MVU draws do not vary have no "
                         "maximum-likelihood Dirichlet, hence no independent posterior: check() "
                         "leaves them out")
    rows = np.flatnonzero(ess > 0)  # the others stay NaN: left out of the check
    a = opts["scale"] * independent[rows]  # (rows, S, K)
    y = part["y_hard"][rows, None, None]
    a_y = np.take_along_axis(a, y, -1)[..., 0]
    phi_law = np.full((4, len(x)), np.nan)
    phi_law[:, rows] = beta_mixture_law(a_y, a.sum(-1) - a_y, opts["ci_prob"])
    vote = np.full((CHECK_DRAWS, len(x)), np.nan)
    vote[:, rows] = np.take_along_axis(vote_probs(a, weights=opts["weights"]), y, -1)[..., 0].T
    part["reference"] = check_reference(tuple(phi_law), vote, _n_reference(ess),
                                        opts["ci_prob"])
    return part, pm_model, tree, post, notes + _ess_note(ess), iid
