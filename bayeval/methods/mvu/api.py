r"""Missing value uncertainty (MVU): would collecting the missing features change the prediction?

A test row has observed features :math:`x_O` and missing :math:`x_M`. Its **MVU distribution** is
the law of the classifier's probabilities :math:`\Phi = \pi(x_O, X_M)`,
:math:`X_M \sim p(x_M \mid x_O)`. The **hard confidence** :math:`c_\mathrm{hard} = \max_j
P(\arg\max_j \Phi_j = j)` is the probability that the decision does not change once the missing
features are collected; the **soft confidence** :math:`c_\mathrm{soft} = \max_j \mathrm{E}\Phi_j`
is the usual Bayes-rule confidence (see :mod:`bayeval.methods.mvu.fast`).

Estimators of the MVU (``imputer`` of :func:`mvu`):

* ``"gaussian"``: the push-forward of the conditional Gaussian :math:`N(\mu_{M|O}, \Sigma_{M|O})`
  fitted to complete training rows. For a linear classifier the logits
  :math:`z = W x + b` are Gaussian, so :math:`c_\mathrm{hard}` is exact: a normal CDF (binary) or a
  Gaussian orthant probability (multiclass). Otherwise ``n_draws`` imputations per row are pushed
  through the classifier;
* ``"mean"``, ``"zero"``, ``"conditional_mean"``: single imputation plus a variance heuristic
  (point mass, s-max-variance or scale-probability Dirichlet; the paper's baselines);
* ``"dmv"``: Direct Missing Value, a network trained to output the Dirichlet MVU directly;
* any object with ``sample(X, mask, n_draws, random_seed) -> (n, S, d)`` (e.g. an inpainting
  model): its imputations are pushed through the classifier.

Generative models (``method="pymc"``):

* **Model A** (:func:`model_a`): :math:`\mu \sim N(0, 2^2)`, :math:`\Sigma = LL^\top`,
  :math:`L \sim \mathrm{LKJCholeskyCov}(\eta = 2, \sigma \sim \mathrm{HalfNormal}(2))` on the
  standardised training rows :math:`x_n \sim N(\mu, \Sigma)`; the test row's missing entries
  :math:`x_M^* \mid \mu, \Sigma, x_O` and :math:`\phi^* = \pi(x_O, x_M^*)`. Parameter uncertainty of
  the imputer widens the MVU (the paper keeps it separate: the fast path is the plug-in).
* **Model B** (:func:`model_b`): :math:`\mu_\alpha \sim \mathrm{Dir}(\mathbf 1)`,
  :math:`\kappa \sim \mathrm{LogNormal}(\log 10, 3)`, :math:`\phi^{(s)} \sim
  \mathrm{Dir}(\kappa\mu_\alpha)`: a Bayesian Dirichlet fitted to the MVU draws of one row.
* **Model C** (:func:`model_c`): Bayesian DMV, the Dirichlet regression
  :math:`\mu = \mathrm{softmax}(0, h W_\eta)`, :math:`\log\kappa = h w_\kappa`,
  :math:`t \sim \mathrm{Dir}(\kappa\mu)` of the classifier's probabilities :math:`t = \pi(x)` on
  masked copies of training rows, with features :math:`h` from :func:`dmv_design`; Laplace
  approximation at the MAP by default, NUTS on request.

With a posterior, :math:`P(V = j) = \frac1S\sum_s P_j(\theta^{(s)})` (average, then maximise) and
``c_hard_lower``/``c_hard_upper`` are the interval of :math:`P_{y_\mathrm{hard}}(\theta^{(s)})`.

``summary()`` is indexed by ``instance``. ``mean``, ``sd``, ``lower``, ``upper`` describe
:math:`\Phi_{\hat y}`, the probability the classifier will give the decided class
:math:`\hat y = y_\mathrm{hard}` once the missing features are collected (a point mass at
:math:`\pi_{\hat y}(x)` for a complete row); ``check()`` compares that law with the
posterior-predictive draws ``phi_hat``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import linalg, special

from bayeval.evaluation import CI_KINDS
from bayeval.methods.mvu import result as R
from bayeval.methods.mvu.estimators import (
    CLIP,
    DMV,
    GaussianImputer,
    as_classifier,
    conditional_draws,
    conditional_logits,
    linear_parts,
    mcar_mask,
    pushforward,
)
from bayeval.methods.mvu.result import DECISION, MVUEvaluation
from bayeval.sampling import DEFAULTS, sample
from bayeval.validation import as_array, as_choice, as_ci_prob, as_seed

__all__ = ["MVUEvaluation", "dmv_design", "model_a", "model_b", "model_c", "mvu"]

METHODS = ("exact", "mc", "pymc", "both")
IMPUTERS = ("gaussian", "mean", "zero", "conditional_mean", "dmv")
HEURISTICS = ("zero_var", "max_var", "scale_prob")
DIRICHLET_FITS = ("mle", "moments")
INFERENCE = ("laplace", "nuts")
#: posterior draws used for per-draw vote probabilities and predictive draws (evenly thinned)
MAX_DRAWS = 500
ASSUMPTIONS = ("Missingness is completely at random (MCAR) and the training rows are complete and "
               "from the same population. The classifier is fixed: c_hard is the probability that "
               "its decision stays the same once the missing features are collected, under the "
               "chosen model of the missing features (it is only as good as that model).")


# ------------------------------------------------------------------------------ PyMC models
def _standardisation(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sd = train.std(axis=0)
    return train.mean(axis=0), np.where(sd > 0, sd, 1.0)


def model_a(train, *, x=None, coef=None, intercept=None, eta: float = 2.0, mu_sd: float = 2.0,
            sd_sd: float = 2.0):
    r"""Model A: Gaussian imputation posterior, pushed through a linear classifier.

    .. math:: \mu \sim N(0, \sigma_\mu^2 I),\quad \Sigma = LL^\top,\quad
              L \sim \mathrm{LKJCholeskyCov}(\eta, \mathrm{HalfNormal}(\sigma_{sd})),\quad
              z_n \sim N(\mu, \Sigma)

    on the standardised training rows :math:`z_n`; the missing entries of a test row follow
    :math:`x_M^* \mid \mu, \Sigma, x_O` and :math:`\phi^* = \pi(x_O, x_M^*)`.

    Parameters
    ----------
    train : array (N, d)
        Complete training rows; the model works on them standardised (column means and sds).
    x : array (n, d) with NaN for missing, optional
        Test rows: adds ``x_miss_z`` (standard normals, one per missing entry) with
        :math:`x_M^* = \hat x_M + (L_A^{-\top}\varepsilon)_M`, the conditional law given
        :math:`\mu, \Sigma` and :math:`x_O` (non-centred; see
        :func:`bayeval.methods.mvu.estimators.conditional_draws`).
    coef, intercept : arrays (r, d) and (r,), optional
        A linear classifier (r = 1: sigmoid, else softmax): adds the deterministic ``phi``
        (``test``, ``class``) of the completed test rows.
    eta, mu_sd, sd_sd : float
        LKJ shape :math:`\eta`, prior sd :math:`\sigma_\mu` of the means and
        :math:`\sigma_{sd}` of the standard deviations (standardised units).

    Returns
    -------
    pm.Model
        Free ``mu`` (``feature``), ``chol`` (packed Cholesky factor) and, with ``x``,
        ``x_miss_z``; observed ``x_train``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = model_a(rng.normal(size=(50, 2)), x=[[np.nan, 1.0], [0.5, 0.2]],
    ...             coef=[[1.0, 1.0]], intercept=[-1.0])
    >>> [v.name for v in m.free_RVs], m.named_vars_to_dims["phi"]
    (['mu', 'chol', 'x_miss_z'], ('test', 'class'))
    """
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
        pm.MvNormal("x_train", mu=mu, chol=chol, observed=(train - center) / scale)
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


def model_b(phi, *, kappa_prior=(2.302585092994046, 3.0)):
    r"""Model B: a Bayesian Dirichlet fitted to MVU draws, one per instance.

    .. math:: \mu_\alpha \sim \mathrm{Dir}(\mathbf 1),\quad
              \kappa \sim \mathrm{LogNormal}(m, s^2),\quad
              \phi^{(s)} \sim \mathrm{Dir}(\kappa\mu_\alpha).

    Parameters
    ----------
    phi : array (S, K) or (n, S, K)
        MVU draws (probability vectors), floored at 1e-6 and renormalised.
    kappa_prior : (m, s)
        LogNormal prior of the concentration :math:`\kappa = \alpha_0` (default
        :math:`(\log 10, 3)`).

    Returns
    -------
    pm.Model
        Free ``mu`` (``instance``, ``class``; simplex) and ``kappa`` (``instance``),
        deterministic ``alpha`` and observed ``phi``.

    Examples
    --------
    >>> phi = np.random.default_rng(0).dirichlet([2.0, 5.0, 3.0], size=(2, 100))  # 2 instances
    >>> m = model_b(phi)
    >>> [v.name for v in m.free_RVs], m.named_vars_to_dims["alpha"]
    (['mu', 'kappa'], ('instance', 'class'))
    """
    import pymc as pm

    # shape= next to dims: PyTensor 3.3's numba backend fails on length-1 dims given by coords
    phi = np.asarray(phi, dtype=float)
    phi = np.clip(phi[None] if phi.ndim == 2 else phi, CLIP, 1.0)
    phi /= phi.sum(-1, keepdims=True)
    n, _, k = phi.shape
    with pm.Model(coords={"instance": np.arange(n), "class": np.arange(k)}) as m:
        mu = pm.Dirichlet("mu", a=np.ones((n, k)), dims=("instance", "class"), shape=(n, k))
        kappa = pm.LogNormal("kappa", mu=kappa_prior[0], sigma=kappa_prior[1], dims="instance",
                             shape=(n,))
        alpha = pm.Deterministic("alpha", kappa[:, None] * mu, dims=("instance", "class"))
        pm.Dirichlet("phi", a=alpha, observed=np.swapaxes(phi, 0, 1))
    return m


def dmv_design(x, mask, center=None, scale=None) -> np.ndarray:
    r"""Features of Model C: :math:`[\tilde x, m, (m_i \tilde x_j)_{i \ne j}]`.

    :math:`\tilde x` are the standardised features (``center``/``scale``) with missing entries set
    to 0. The interactions let "feature j observed while i is missing" differ from "both observed"
    (without them the MVCE of the spec's X2-missing case rises several-fold). No intercept: the
    model adds one.

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


def model_c(features, targets, *, sigma_w: float = 3.0):
    r"""Model C: Bayesian DMV, a Dirichlet regression of the classifier's probabilities.

    :math:`W_\eta \sim N(0, \sigma_W^2)` (F+1, K-1), :math:`w_\kappa \sim N(0, \sigma_W^2)` (F+1),
    :math:`\eta = [0, \tilde h W_\eta]`, :math:`\mu = \mathrm{softmax}(\eta)`,
    :math:`\kappa = \exp(\tilde h w_\kappa)`, :math:`t_n \sim \mathrm{Dir}(\kappa_n\mu_n)` with
    :math:`\tilde h = [1, h]` (the "mean / concentration" parameterisation C2 of the spec, whose
    posterior is better conditioned than :math:`\alpha = \exp(hW)`).

    Parameters
    ----------
    features : array (N, F)
        Standardised :func:`dmv_design` rows of masked training copies (no fully observed row).
    targets : array (N, K)
        The classifier's probabilities on the complete rows, floored at 1e-6 and renormalised.
    sigma_w : float
        Prior sd :math:`\sigma_W` of the weights.

    Returns
    -------
    pm.Model
        Free ``w_eta`` (``feature``, ``logit``) and ``w_kappa`` (``feature``), observed
        ``target``.

    Examples
    --------
    >>> mask = [[False, True], [True, False], [False, True]]
    >>> h = dmv_design([[1.0, np.nan], [np.nan, 2.0], [0.5, np.nan]], mask)
    >>> m = model_c(h, [[0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    >>> {v.name: m.initial_point()[v.name].shape for v in m.free_RVs}  # F + 1 = 7, K - 1 = 1
    {'w_eta': (7, 1), 'w_kappa': (7,)}
    """
    import pymc as pm
    import pytensor.tensor as pt

    h = np.asarray(features, dtype=float)
    h = np.hstack([np.ones((len(h), 1)), h])
    t = np.clip(np.asarray(targets, dtype=float), CLIP, 1.0)
    t /= t.sum(-1, keepdims=True)
    k = t.shape[1]
    coords = {"feature": ["1"] + [f"h{i}" for i in range(h.shape[1] - 1)],
              "logit": np.arange(1, k)}
    with pm.Model(coords=coords) as m:
        w_eta = pm.Normal("w_eta", 0.0, sigma_w, dims=("feature", "logit"),
                          shape=(h.shape[1], k - 1))
        w_kappa = pm.Normal("w_kappa", 0.0, sigma_w, dims="feature", shape=(h.shape[1],))
        eta = pt.concatenate([pt.zeros((len(h), 1)), h @ w_eta], axis=1)
        alpha = pt.exp(h @ w_kappa)[:, None] * pt.special.softmax(eta, axis=1)
        pm.Dirichlet("target", a=alpha, observed=t)
    return m


class _Design:
    """Model C's features: :func:`dmv_design`, standardised on the training copies, without
    constant or linearly dependent columns (pivoted QR), so the posterior is identified."""

    def __init__(self, x: np.ndarray, mask: np.ndarray):
        self.center, self.scale = _standardisation(x)
        raw = dmv_design(x, mask, self.center, self.scale)
        self.mean, sd = raw.mean(0), raw.std(0)
        varying = np.flatnonzero(sd > 1e-12)
        z = (raw[:, varying] - self.mean[varying]) / sd[varying]
        _, r, piv = linalg.qr(z, pivoting=True, mode="economic")
        rank = int((np.abs(np.diag(r)) > 1e-8 * np.abs(r[0, 0])).sum())
        self.columns = varying[np.sort(piv[:rank])]
        self.sd = sd

    def __call__(self, x, mask) -> np.ndarray:
        raw = dmv_design(x, mask, self.center, self.scale)[:, self.columns]
        return (raw - self.mean[self.columns]) / self.sd[self.columns]


# ------------------------------------------------------------------------------------ entry
def _inputs(predict_proba, X, mask, train, groups):
    """Validated (predict, x, m, train, groups, probe rows)."""
    predict = as_classifier(predict_proba)
    x = as_array(X, "X", ndim=2, allow_nan=True)
    m = np.isnan(x)
    if mask is not None:
        given = as_array(mask, "mask", ndim=2)
        if given.shape != x.shape or ((given != 0) & (given != 1)).any():
            raise ValueError(f"mask must be 0/1 (1 = missing) with the shape of X {x.shape}; got "
                             f"shape {given.shape}.")
        if (m & (given == 0)).any():
            raise ValueError("X has NaN where mask says the value is observed; mark every NaN "
                             "as missing in mask.")
        m = given.astype(bool)
    d = x.shape[1]
    if train is not None:
        train = as_array(train, "train", ndim=2)
        if train.shape[1] != d:
            raise ValueError(f"X has {d} features but train has {train.shape[1]}; they must "
                             "describe the same features.")
    expected = getattr(predict_proba, "n_features_in_", None)
    if expected is not None and expected != d:
        raise ValueError(f"X has {d} features but the classifier (predict_proba) was fitted on "
                         f"{expected}.")
    if groups is not None and np.shape(groups) != (d,):
        raise ValueError(f"groups must give the sensor of each of the {d} features, got shape "
                         f"{np.shape(groups)}.")
    probe = train[:20] if train is not None else np.where(m, 0.0, np.nan_to_num(x))[:20]
    return predict, x, m, train, probe


def _weights(weights, threshold, k: int):
    if threshold is not None:
        if weights is not None:
            raise ValueError("give threshold (binary) or weights, not both.")
        if k != 2 or not 0 < threshold < 1:
            raise ValueError(f"threshold must lie in (0, 1) and needs a binary classifier; got "
                             f"{threshold} with {k} classes.")
        return np.array([threshold, 1 - threshold])
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (k,) or not np.isfinite(w).all() or (w <= 0).any():
        raise ValueError(f"weights must be {k} positive class weights, got {weights!r}.")
    return w


def _thin(post: xr.Dataset) -> xr.Dataset:
    step = max(1, -(-post.sizes["chain"] * post.sizes["draw"] // MAX_DRAWS))
    return post.isel(draw=slice(None, None, step))


def _laplace(model, n_draws: int, rng) -> xr.DataTree:
    r"""Laplace approximation at the MAP: iid draws of :math:`N(\hat\theta, H^{-1})` on the
    unconstrained parameters (Model C's are all unconstrained)."""
    import arviz as az
    import pymc as pm

    fit = pm.find_MAP(model=model, compute_hessian=True, return_inferencedata=True,
                      jitter=False, progressbar=DEFAULTS["progressbar"], backend="c")["fit"]
    theta = rng.multivariate_normal(fit["mean_vector"].values, fit["covariance_matrix"].values,
                                    size=n_draws)
    point = model.initial_point()
    sizes = np.cumsum([point[v.name].size for v in model.value_vars])[:-1]
    posterior = {rv.name: part.reshape(1, n_draws, *point[v.name].shape) for rv, v, part in
                 zip(model.free_RVs, model.value_vars, np.split(theta, sizes, axis=1),
                     strict=True)}
    dims = {rv.name: list(model.named_vars_to_dims.get(rv.name, ())) for rv in model.free_RVs}
    coords = {k: np.asarray(v) for k, v in model.coords.items()}
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


def _model_a(predict, x, m, train, opts):
    pm_model = model_a(train)
    tree = sample(pm_model, opts["seed"], opts["sample_kwargs"])
    post = _thin(tree["posterior"].to_dataset())
    c, d, n = post.sizes["chain"], post.sizes["draw"], len(x)
    mean, prec = _gaussian_draws(post, train)
    args = (np.broadcast_to(x, (c * d, *x.shape)), np.broadcast_to(m, (c * d, *m.shape)),
            np.broadcast_to(mean[:, None], (c * d, *x.shape)),
            np.broadcast_to(prec[:, None], (c * d, n, *prec.shape[1:])))
    linear = linear_parts(opts["classifier"], opts["probe"])
    if linear is not None and len(linear[0]) == 1:
        a, v = conditional_logits(*args, *linear)
        return R.logit_posterior(a[..., 0].reshape(c, d, n), v[..., 0, 0].reshape(c, d, n),
                                 weights=opts["weights"], random_seed=opts["rng"],
                                 ci_prob=opts["ci_prob"]), pm_model, tree, post, [], False
    if opts["method"] == "both":
        raise ValueError("method='both' with imputer='gaussian' needs a binary linear classifier "
                         "(its exact per-draw law is the fast path to check); use method='pymc'.")
    imputed = conditional_draws(*args, 1, opts["rng"])[:, :, 0]
    phi = pushforward(predict, np.swapaxes(imputed, 0, 1))
    part = R.predictive_draws(np.moveaxis(phi, 0, 1).reshape(c, d, n, -1), weights=opts["weights"],
                              ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"])
    note = ("Model A gives exact per-draw vote probabilities (and an interval of c_hard) only "
            "for a binary linear classifier; c_hard is the vote frequency of the predictive draws")
    return part, pm_model, tree, post, [note], False


def _model_c_alpha(post: xr.Dataset, h: np.ndarray) -> np.ndarray:
    """alpha (chain, draw, n, K) of Model C's draws at features h (n, F+1)."""
    eta = np.einsum("nf,cdfk->cdnk", h, post["w_eta"].values)
    eta = np.concatenate([np.zeros((*eta.shape[:3], 1)), eta], axis=-1)
    kappa = np.exp(np.einsum("nf,cdf->cdn", h, post["w_kappa"].values))
    return kappa[..., None] * special.softmax(eta, axis=-1)


def _posterior(predict, x, m, train, imputer, opts):
    """(results, model, draws tree, thinned posterior, warnings, iid) of method='pymc'."""
    rng = opts["rng"]
    if opts["model_a"]:
        return _model_a(predict, x, m, train, opts)
    if imputer == "dmv":
        groups = np.arange(x.shape[1]) if opts["groups"] is None else opts["groups"]
        masks = mcar_mask(len(train), groups, 0.5, rng)
        keep = masks.any(axis=1)
        design = _Design(train[keep], masks[keep])
        pm_model = model_c(design(train[keep], masks[keep]), predict(train[keep]))
        if opts["inference"] == "nuts":
            tree, iid = sample(pm_model, opts["seed"], opts["sample_kwargs"]), False
        else:
            tree, iid = _laplace(pm_model, MAX_DRAWS, rng), True
        post = _thin(tree["posterior"].to_dataset())
        h = np.hstack([np.ones((len(x), 1)), design(x, m)])
        alpha = opts["scale"] * _model_c_alpha(post, h)
    else:
        pm_model = model_b(pushforward(predict, imputer.sample(x, m, opts["n_draws"], rng)))
        tree, iid = sample(pm_model, opts["seed"], opts["sample_kwargs"]), False
        post = _thin(tree["posterior"].to_dataset())
        alpha = opts["scale"] * post["alpha"].values
    part = R.dirichlet_posterior(alpha, weights=opts["weights"], random_seed=rng,
                                 ci_prob=opts["ci_prob"])
    return part, pm_model, tree, post, [], iid


def _check_options(imputer, method, train, opts) -> None:
    """Combinations that cannot run, with what to do instead."""
    if isinstance(imputer, str):
        as_choice(imputer, "imputer", IMPUTERS)
    elif not callable(getattr(imputer, "sample", None)):
        raise ValueError("imputer must be one of " + ", ".join(map(repr, IMPUTERS)) + " or an "
                         "object with sample(X, mask, n_draws, random_seed); got "
                         f"{type(imputer).__name__}.")
    needs_train = (imputer in ("gaussian", "mean", "conditional_mean")
                   or (imputer == "dmv" and (opts["dmv"] is None or method in ("pymc", "both"))))
    if needs_train and train is None:
        raise ValueError(f"imputer={imputer!r} with method={method!r} needs train: complete "
                         "training rows (no NaN) of the same features.")
    if method in ("pymc", "both"):
        if imputer in ("mean", "zero", "conditional_mean"):
            raise ValueError(f"imputer={imputer!r} has no generative model (its Dirichlet is "
                             "fixed by a heuristic); use method='exact' or 'mc'.")
        if opts["ci_kind"] != "eti":
            raise ValueError("ci_kind='hdi' needs method='exact' or 'mc'; the posterior-"
                             "predictive intervals are equal-tailed (ev.summary(ci_kind='hdi') "
                             "gives the HDI of the draws).")
    as_choice(opts["heuristic"], "heuristic", HEURISTICS)
    if opts["dirichlet"] is not None:
        as_choice(opts["dirichlet"], "dirichlet", DIRICHLET_FITS)
    as_choice(opts["inference"], "inference", INFERENCE)
    if int(opts["n_draws"]) != opts["n_draws"] or opts["n_draws"] < 2:
        raise ValueError(f"n_draws must be an integer >= 2, got {opts['n_draws']!r}.")
    if not (np.isfinite(opts["scale"]) and opts["scale"] > 0):
        raise ValueError(f"scale (the calibration factor of alpha) must be positive, got "
                         f"{opts['scale']!r}.")


def _tree(tree: xr.DataTree, post: xr.Dataset, phi_hat: np.ndarray) -> xr.DataTree:
    """The sampler's groups plus ``posterior_predictive/phi_hat`` on the thinned draws."""
    groups = {k: v.to_dataset() for k, v in tree.children.items()}
    groups["posterior_predictive"] = xr.Dataset(
        {"phi_hat": (("chain", "draw", "instance"), phi_hat)},
        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                "instance": np.arange(phi_hat.shape[-1])})
    return xr.DataTree.from_dict(groups)


def mvu(predict_proba, X, *, mask=None, groups=None, imputer="gaussian", method: str = "exact",
        train=None, heuristic: str = "max_var", heuristic_param: float | None = None,
        dirichlet: str | None = None, n_draws: int = 1000, weights=None,
        threshold: float | None = None, scale: float = 1.0, dmv: DMV | None = None,
        inference: str = "laplace", ci_prob: float = 0.95, ci_kind: str = "eti",
        random_seed=None, sample_kwargs: dict[str, Any] | None = None) -> MVUEvaluation:
    r"""Would collecting the missing features change the prediction? Hard confidence per row.

    Parameters
    ----------
    predict_proba : classifier or callable
        A fitted classifier with ``predict_proba`` (scikit-learn style) or a function
        ``X -> (n, K)`` probabilities (or the positive-class probability, shape (n,)).
    X : array (n, d)
        The rows to decide on, NaN where a feature is missing.
    mask : array (n, d) of 0/1, optional
        1 marks a missing feature (overrides NaN; every NaN must be marked).
    groups : array (d,), optional
        Sensor of each feature: DMV masks and flags sensors as a whole.
    imputer : {"gaussian", "mean", "zero", "conditional_mean", "dmv"} or object
        The model of the missing features (module docstring); a :class:`GaussianImputer` with
        fixed parameters, or any object with ``sample(X, mask, n_draws, random_seed)``.
    method : {"exact", "mc", "pymc", "both"}
        ``"exact"``: exact hard confidence of the estimator's MVU (normal CDF / orthant
        probability for a linear classifier under Gaussian imputation, Beta/Dirichlet otherwise;
        a nonlinear classifier's Gaussian MVU draws are summarised by a Dirichlet). ``"mc"``:
        vote frequencies of ``n_draws`` MVU (or Dirichlet) draws. ``"pymc"``: Model A
        (Gaussian), B (sampler objects) or C (``"dmv"``). ``"both"``: the same, for
        :meth:`~bayeval.evaluation.Evaluation.check`.
    train : array (N, d), optional
        Complete training rows (fits the imputer, the training means, DMV and Models A and C).
    heuristic : {"zero_var", "max_var", "scale_prob"}
        Variance heuristic of the single imputers; ``heuristic_param`` is s (default 0.5) or c
        (default 10).
    dirichlet : {"mle", "moments"}, optional
        Summarise MVU draws by this Dirichlet fit even when an exact path exists.
    weights, threshold : optional
        Cost-sensitive decisions: class weights, or the binary threshold t (class 1 when
        :math:`\phi_1 > t`, i.e. weights (t, 1 - t)).
    scale : float
        Post-hoc calibration :math:`\alpha \to \lambda\alpha` of Dirichlet MVUs (see
        :func:`bayeval.methods.mvu.calibration.fit_scale`).
    dmv : DMV, optional
        A fitted :class:`DMV` to reuse (else one is trained on ``train``).
    inference : {"laplace", "nuts"}
        Model C's posterior: Laplace approximation at the MAP, or NUTS.
    sample_kwargs : dict, optional
        Passed to ``pm.sample``.

    Returns
    -------
    MVUEvaluation
        ``summary()`` per ``instance``: ``mean``, ``sd``, ``lower``, ``upper`` of
        :math:`\Phi_{\hat y}` (the classifier's probability of the decided class once everything
        is collected), ``y_hard``, ``c_hard`` (with ``c_hard_lower``/``c_hard_upper`` under a
        posterior, ``c_hard_se`` for Monte Carlo), ``y_soft``, ``c_soft``, ``n_missing``. A row
        with nothing missing has ``c_hard = 1``; a row with everything missing gets the prior MVU
        (the same for all such rows). ``decide()`` says where to collect.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> rng = np.random.default_rng(0)
    >>> train = rng.multivariate_normal([0, 0], [[0.3, 0.383406], [0.383406, 1]], size=20000)
    >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])  # pi(x) = sigmoid(x1 + x2 - 1)
    >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], train=train)
    >>> ev.summary()[["y_hard", "c_hard", "y_soft", "c_soft"]].round(2)
    ... # doctest: +NORMALIZE_WHITESPACE
    mvu (exact), closed form: 95% equal-tailed intervals (eti)
              y_hard  c_hard  y_soft  c_soft
    instance
    0              1    0.73       1    0.56
    1              1    1.00       1    0.97
    2              0    1.00       0    0.62
    >>> ev.decide(0.9)["collect"].tolist()  # only the first row is worth completing
    [True, False, False]
    """
    method = as_choice(method, "method", METHODS)
    opts = {"heuristic": heuristic, "heuristic_param": heuristic_param, "dirichlet": dirichlet,
            "n_draws": n_draws, "scale": scale, "dmv": dmv, "inference": inference,
            "ci_prob": as_ci_prob(ci_prob), "ci_kind": as_choice(ci_kind, "ci_kind", CI_KINDS),
            "groups": groups, "sample_kwargs": sample_kwargs, "classifier": predict_proba}
    predict, x, m, train, probe = _inputs(predict_proba, X, mask, train, groups)
    _check_options(imputer, method, train, opts)
    k = predict(probe).shape[1]
    rng = as_seed(random_seed)
    opts.update(weights=_weights(weights, threshold, k), probe=probe, rng=rng, method=method,
                how="mc" if method == "mc" else "exact",
                seed=random_seed if isinstance(random_seed, (int, np.integer)) else None)
    name = imputer if isinstance(imputer, str) else type(imputer).__name__
    opts["model_a"] = name == "gaussian"
    if opts["model_a"]:
        imputer = GaussianImputer.fit(train)
    missing = m.any(axis=1)
    rows, complete = np.flatnonzero(missing), np.flatnonzero(~missing)
    dirac = R.point_mass(predict(x[complete]) if complete.size else np.zeros((0, k)),
                         opts["weights"])
    notes, draws, model, iid = [], None, None, False
    if not rows.size:
        part = R.point_mass(np.zeros((0, k)))
        notes.append("no feature is missing: every decision is final (c_hard = 1); no model "
                     "was needed")
    elif method in ("pymc", "both"):
        part, model, tree, post, notes, iid = _posterior(predict, x[rows], m[rows], train,
                                                         imputer, opts)
        n_draw = post.sizes["chain"] * post.sizes["draw"]
        phi_hat = np.empty((post.sizes["chain"], post.sizes["draw"], len(x)))
        phi_hat[..., rows] = part["phi_hat"]
        phi_hat[..., complete] = dirac["mean"]
        # a point mass's mean, summed in the order check() sums the draws
        dirac["mean"] = np.full((complete.size, n_draw), dirac["mean"][:, None]).mean(axis=1)
        draws = _tree(tree, post, phi_hat)
    else:
        part, notes = R.fast_path(predict, x[rows], m[rows], train, imputer, method, opts)
    res = R.merge(len(x), rows, part, complete, dirac)
    res["n_missing"] = m.sum(axis=1)
    classes = getattr(predict_proba, "classes_", None)
    if classes is not None and len(classes) == k:
        for key in ("y_hard", "y_soft"):
            res[key] = np.asarray(classes)[res[key]]
    order = ["mean", "sd", "lower", "upper", *DECISION, "interval_mass"]
    closed = xr.Dataset({v: ("instance", res[v]) for v in order if v in res},
                        coords={"instance": np.arange(len(x)), "class": np.arange(k)})
    if "alpha" in res and not (imputer in ("mean", "zero", "conditional_mean")
                               and heuristic == "zero_var"):
        closed["alpha"] = (("instance", "class"), res["alpha"])
    data = xr.Dataset({"n_instances": len(x), "n_features": x.shape[1], "n_classes": k,
                       "n_train": 0 if train is None else len(train),
                       "fraction_missing": float(m.mean())})
    return MVUEvaluation.create(
        method="mvu", variant=method, closed_form=closed, draws=draws,
        estimand=None if draws is None else "posterior_predictive/phi_hat",
        ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"], iid_draws=iid, random_seed=opts["seed"],
        description=f"hard confidence of {len(x)} rows ({rows.size} with missing features), "
                    f"imputer {name}, scale {scale:g}",
        assumptions=ASSUMPTIONS, warnings=notes, data=data, model=model, imputer=name,
        hard_confidence=opts["how"], scale=float(scale), n_draws=int(n_draws),
        weights=None if opts["weights"] is None else opts["weights"].tolist())
