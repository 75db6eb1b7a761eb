r"""The PyMC models of the Fréchet bounds, on cell counts only: ``model(..., variant=...)``.

The identified parameters are :math:`\phi = (w, \alpha, \beta)`: the share :math:`w_z` of each
weak-label pattern, the predictions :math:`\alpha_z(k) = P(H{=}k \mid z)` and the label model
:math:`\beta_z(y) = P(Y{=}y \mid z)`. Their bounds :math:`L(\phi)`, :math:`U(\phi)`
(:func:`~bayeval.methods.bounds.fast.metric_bounds`) are the headline posterior
(``lower_bound``, ``upper_bound``). A metric draw places one coupling position
:math:`u \sim \mathrm{Beta}(c, c)`, shared by all cells, in the identified set:
``value`` :math:`= L + u\,(U - L)`; a shared :math:`u` makes the metric given :math:`\phi`
uniform on :math:`[L, U]` for :math:`c = 1`, where independent per-cell positions would
concentrate it artificially. Only gold labels (M3) inform :math:`u`.

* **M1** (``variant="m1"``): the label model plugged in,

  .. math::
      w \sim \mathrm{Dir}(a_w\mathbf 1),\quad \alpha_z \sim \mathrm{Dir}(a_\alpha\mathbf 1),
      \quad u \sim \mathrm{Beta}(c, c),\qquad
      (n_z)_z \sim \mathrm{Mult}(n, w),\quad (n_{zk})_k \sim \mathrm{Mult}(n_z, \alpha_z),

  with :math:`\beta` fixed. Its posterior is conjugate (:func:`m1_posterior_bounds`).
  :func:`~bayeval.methods.bounds.api.bounds` sets :math:`a_w = 1/|\mathcal Z|` and
  :math:`a_\alpha = 1/(|\mathcal Z| K)`: by Dirichlet aggregation the Perks prior of total mass 1
  on the (pattern, prediction) table (Perks, 1947). A flat :math:`a = 1` adds one pseudo-item
  per pattern and per prediction, which dominates sparse patterns (e.g. 27 patterns of 274
  items) and drags the posterior of the bounds away from the data. Near a kink the posterior
  mean of :math:`\min(\alpha, \beta)` still lies below :math:`\min(\hat\alpha, \beta)`
  (Jensen), so ``bounds()`` also passes ``bound_shift``, the fast path's correction of the
  plug-in bound (its kink correction, a fitted label model's noise at the kinks included) plus
  that posterior gap (:func:`~bayeval.methods.bounds.fast.kink_corrections`), on the fast path's
  pooled patterns: the posterior of each bound is then centred on the reported one. Its spread
  would be that of the plug-in bounds at the fixed label model, less than the reported bound's
  (whose variance adds a fitted label model's sampling error and the correction's noise: at
  300 items with Dawid–Skene, 0.43-0.47 of the bounds' sd across data sets), so ``bounds()``
  also passes ``bound_sd``, :math:`s^2 = \mathrm{SE}^2 - \mathrm{SE}^2_{\text{plug-in}}`,
  a normal error of each bound that gives the posterior the reported standard error.
* **M2** (``variant="m2"``): M1 with a Bayesian Dawid–Skene label model, one accuracy per
  labelling function,

  .. math::
      \pi \sim \mathrm{Dir}(\mathbf 1),\ \rho_j \sim \mathrm{Beta}(1, 1),\
      \mathrm{acc}_j = \tfrac1K + (1 - \tfrac1K)\,\mathrm{Beta}(2, 2),\qquad
      P(\lambda_j = v \mid y) = \begin{cases} 1 - \rho_j & v = -1\\ \rho_j\,\mathrm{acc}_j
      & v = y\\ \rho_j (1 - \mathrm{acc}_j)/(K - 1) & \text{else}\end{cases}

  The votes enter through :math:`\sum_z n_z \log\sum_y \pi_y\prod_j P(\lambda_j = z_j\mid y)`
  (latent :math:`Y` summed out, one term per pattern) and ``beta`` :math:`=P(Y\mid z)` is a
  deterministic. The constraint :math:`\mathrm{acc}_j > 1/K` removes label switching. The
  votes inform only the label model, so :func:`m2_posterior` samples it by NUTS and draws
  :math:`w`, :math:`\alpha`, :math:`u` exactly.
* **M3** (``variant="m3"``, two classes): a few gold labels update the label model and the
  coupling. M1 with a random label model centred on the given one,
  :math:`b_z = \beta_z(1) \sim \mathrm{Beta}(1 + \kappa\hat b_z, 1 + \kappa(1 - \hat b_z))`,
  and, for the gold items (whose prediction and pattern are already in the cell counts), the
  label given prediction and pattern under the coupling
  :math:`t_z = P(H{=}1, Y{=}1 \mid z) = \mathrm{lo}_z + u\,(\mathrm{hi}_z - \mathrm{lo}_z)`:

  .. math:: m_{z1\cdot 1} \sim \mathrm{Bin}(m_{z1\cdot}, t_z / a_z),\qquad
            m_{z0\cdot 1} \sim \mathrm{Bin}(m_{z0\cdot}, (b_z - t_z) / (1 - a_z)),

  with :math:`a_z = \alpha_z(1)`. Gold labels are the only data that move :math:`u`.

**How NUTS sees the Dirichlets.** Each Dirichlet vector :math:`x \sim \mathrm{Dir}(a\mathbf 1)`
observed through :math:`\mathrm{Mult}(N, x)` (:math:`w`, and each :math:`\alpha_z` with
:math:`N = n_z`) is the normalised vector :math:`x = g / S`, :math:`S = \sum_k g_k`, of

.. math:: g_k = G_k\,e^{-E_k/a},\qquad G_k \sim \mathrm{Gamma}(a + 1, 1),\quad
          E_k \sim \mathrm{Exp}(1):

:math:`G\,U^{1/a}` with :math:`U = e^{-E}` uniform is :math:`\mathrm{Gamma}(a, 1)` (Marsaglia &
Tsang, 2000), and independent :math:`\mathrm{Gamma}(a, 1)` normalised are
:math:`\mathrm{Dir}(a\mathbf 1)`, independent of their total :math:`S \sim \mathrm{Gamma}(da)`
(:math:`d` entries).
Nothing depends on :math:`S`: the factor :math:`S^N` (the potential ``<name>_scale``) gives it
the law :math:`\mathrm{Gamma}(da + N)` and leaves :math:`x \sim \mathrm{Dir}(a\mathbf 1)`,
independent of :math:`S`, so the model of :math:`x` and the counts is unchanged. The posterior
then factorises over the entries, :math:`G_k \mid n \sim \mathrm{Gamma}(a + 1 + n_k)` and
:math:`E_k \mid n \sim \mathrm{Exp}(1 + n_k / a)`, so that :math:`g_k \mid n \sim
\mathrm{Gamma}(a + n_k)` and :math:`x \mid n \sim \mathrm{Dir}(a + n)`, the conjugate posterior
(without gold labels); on NUTS' log scale each is smooth with a spread of order one whatever
:math:`a`. PyMC's ``Dirichlet`` (a simplex transform) gives :math:`\log x_k` of an entry with
:math:`n_k = 0` a tail of scale :math:`1/a` (:math:`1/a_\alpha = 240` on 80 patterns and 3
classes), and NUTS then ran every iteration to its maximum tree depth and missed the sampler's
tests.

References: F. Maia Polo, S. Maity, M. Yurochkin, M. Banerjee, Y. Sun, "Weak Supervision
Performance Evaluation via Partial Identification", NeurIPS 2024 (the bounds); A. P. Dawid,
A. M. Skene, "Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm",
Applied Statistics 28 (1979) (the label model of M2); G. Marsaglia, W. W. Tsang, "A Simple
Method for Generating Gamma Variables", ACM Transactions on Mathematical Software 26 (2000)
(the Gamma of shape below 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.deprecation import renamed_arguments
from bayeval.methods.bounds.fast import default_metrics, metric_bounds
from bayeval.validation import as_choice

__all__ = ["VARIANTS", "dawid_skene_model", "m1_posterior_bounds", "m2_posterior",
           "model"]

VARIANTS = ("m1", "m2", "m3")


def model(*args: Any, variant: str = "m1", **kwargs: Any):
    r"""The PyMC model M1, M2 or M3 of the bounds (module docstring), on cell counts.

    ``model(cell_counts, beta, ...)`` builds M1, ``model(cell_counts, patterns, ...,
    variant="m2")`` M2 and ``model(cell_counts, beta, gold_counts, ..., variant="m3")`` M3.

    Parameters
    ----------
    *args, **kwargs
        The data and priors of the variant, by position or by name:

        * ``cell_counts``, int array-like (n_cells, n_classes): :math:`n_{zk}`, items per
          weak-label pattern :math:`z` and predicted class :math:`k`; for M2 the patterns'
          totals are also the vote counts.
        * ``beta``, float array-like (n_cells, n_classes), M1 and M3: the label model
          :math:`P(Y = k \mid z)` (two classes for M3).
        * ``patterns``, int array-like (n_cells, n_lfs), M2: the weak-label pattern of each cell
          (-1 = abstain).
        * ``gold_counts``, int array-like (n_cells, 2, 2), M3: :math:`m_{zhy}`, gold items of
          pattern :math:`z` with prediction :math:`h` and label :math:`y`.
        * ``metrics``, sequence of str, optional: default
          :func:`~bayeval.methods.bounds.fast.default_metrics`.
        * ``prior_cells``, ``prior_predictions``, ``prior_coupling``, float: :math:`a_w`,
          :math:`a_\alpha` and :math:`c` (default 1).
        * ``label_model_strength``, float, M3: :math:`\kappa`, how many gold labels the label
          model is worth in each cell (default 10).
        * ``bound_shift``, float array-like (n_metrics, 2), M1: constants added to the lower and
          upper bound of every draw (the kink correction of
          :func:`~bayeval.methods.bounds.fast.kink_corrections`; default none).
        * ``bound_sd``, float array-like (n_metrics, 2), M1: sds :math:`s_L, s_U` of a normal
          error added to the lower and upper bound of every draw, :math:`s_L\epsilon` and
          :math:`s_U\epsilon` with one free ``bound_noise`` :math:`\epsilon \sim N(0, 1)` per
          metric (the variance of the reported bound that the plug-in posterior lacks; default
          none).
    variant : {"m1", "m2", "m3"}
        The model.

    Returns
    -------
    pm.Model
        Free ``w_gamma`` and ``w_exponential`` (none with a single pattern), ``alpha_gamma``,
        ``alpha_exponential`` and ``u``, with the deterministics ``w`` and ``alpha`` they give
        (module docstring); M2 adds ``pi``, ``propensity`` and ``accuracy_raw`` (dim ``lf``),
        M3 adds ``b`` (dim ``cell``) and the observed ``gold_labels`` (cell, class = h).
        Deterministics ``lower_bound``, ``upper_bound`` and ``value`` (dim ``metric``); dims
        ``cell``, ``class``, ``metric``.

    Examples
    --------
    >>> counts, beta = [[30, 70], [60, 40]], [[0.6, 0.4], [0.9, 0.1]]
    >>> m = model(counts, beta, metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha_exponential', 'alpha_gamma', 'u', 'w_exponential', 'w_gamma']
    >>> m = model(counts, [[1, 1], [0, -1]], variant="m2", metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs if not v.name.startswith(("w_", "alpha_")))
    ['accuracy_raw', 'pi', 'propensity', 'u']
    >>> m = model(counts, beta, [[[2, 1], [0, 3]], [[4, 0], [1, 0]]], variant="m3",
    ...           metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs if not v.name.startswith(("w_", "alpha_")))
    ['b', 'u']
    """
    builders = {"m1": _model_m1, "m2": _model_m2, "m3": _model_m3}
    return builders[as_choice(variant, "variant", VARIANTS)](*args, **kwargs)


def _coords(n_cells: int, n_classes: int, metrics) -> dict[str, Any]:
    return {"cell": np.arange(n_cells), "class": np.arange(n_classes), "metric": list(metrics)}


def _identified_margins(cell_counts: np.ndarray, prior_cells: float, prior_predictions: float):
    r"""``w`` :math:`\sim\mathrm{Dir}`, ``alpha`` :math:`\sim\mathrm{Dir}` per cell (as
    :func:`_dirichlet`), and their multinomial likelihoods on the cell totals and the predictions
    per cell."""
    import pymc as pm
    import pytensor.tensor as pt

    n_cells = len(cell_counts)
    totals = cell_counts.sum(axis=1)
    if n_cells == 1:  # one pattern: P(Z = z) = 1, nothing to learn
        w = pt.ones(1)
    else:
        w = _dirichlet("w", prior_cells, totals, "cell")
        pm.Multinomial("cell_totals", n=int(totals.sum()), p=w, observed=totals, dims="cell")
    alpha = _dirichlet("alpha", prior_predictions, cell_counts, ("cell", "class"))
    pm.Multinomial("predictions", n=totals, p=alpha, observed=cell_counts,
                   dims=("cell", "class"))
    return w, alpha


def _dirichlet(name: str, concentration: float, counts: np.ndarray, dims):
    r"""The deterministic ``name`` :math:`\sim\mathrm{Dir}(a\mathbf 1)` along the last axis of
    ``counts``, as normalised Gammas that NUTS samples well for any :math:`a` (module
    docstring): free ``{name}_gamma`` :math:`G_k \sim \mathrm{Gamma}(a + 1, 1)` and
    ``{name}_exponential`` :math:`E_k \sim \mathrm{Exp}(1)`,
    :math:`\log g_k = \log G_k - E_k / a`, and the potential ``{name}_scale``,
    :math:`N \log\sum_k g_k` with :math:`N` the vector's count total; started at the modes of
    :math:`G_k` and :math:`E_k` on the log scale, :math:`a + 1 + n_k` and :math:`a / (a + n_k)`."""
    import pymc as pm
    import pytensor.tensor as pt

    # started at the modes of the factorised posterior (the conjugate Dir(a + n)): from the
    # prior's (E = 1, x_k ~ exp(-1/a)), gold labels (M3) can find a probability 0 of their data
    gamma = pm.Gamma(f"{name}_gamma", alpha=concentration + 1.0, beta=1.0, dims=dims,
                     initval=concentration + 1.0 + counts)
    exponential = pm.Exponential(f"{name}_exponential", 1.0, dims=dims,
                                 initval=concentration / (concentration + counts))
    log_g = pt.log(gamma) - exponential / concentration
    log_total = pt.logsumexp(log_g, axis=-1)
    pm.Potential(f"{name}_scale", (counts.sum(axis=-1) * log_total).sum())
    return pm.Deterministic(name, pt.exp(log_g - pt.shape_padright(log_total)), dims=dims)


def _bounds_and_value(w, alpha, beta, u, metrics, n_classes: int, bound_shift=None,
                      bound_sd=None) -> None:
    """Deterministics ``lower_bound``, ``upper_bound`` and ``value = L + u (U - L)`` (metric);
    with ``bound_sd`` the free ``bound_noise`` (metric) of M1."""
    import pymc as pm
    import pytensor.tensor as pt

    lowers, uppers = zip(*(metric_bounds(w, alpha, beta, m, n_classes) for m in metrics),
                             strict=True)
    lower, upper = pt.stack(lowers), pt.stack(uppers)
    if bound_sd is not None:
        sd = np.asarray(bound_sd, dtype=float).reshape(len(metrics), 2)
        noise = pm.Normal("bound_noise", 0.0, 1.0, dims="metric")
        lower, upper = lower + sd[:, 0] * noise, upper + sd[:, 1] * noise
        lower, upper = pt.minimum(lower, upper), pt.maximum(lower, upper)
    if bound_shift is not None or bound_sd is not None:
        shift = np.zeros((len(metrics), 2)) if bound_shift is None else np.asarray(
            bound_shift, dtype=float).reshape(len(metrics), 2)
        lower = pt.clip(lower + shift[:, 0], 0.0, 1.0)
        upper = pt.clip(upper + shift[:, 1], 0.0, 1.0)
    lower = pm.Deterministic("lower_bound", lower, dims="metric")
    upper = pm.Deterministic("upper_bound", upper, dims="metric")
    pm.Deterministic("value", lower + u * (upper - lower), dims="metric")


def _model_m1(cell_counts, beta, *, metrics=None, prior_cells: float = 1.0,
              prior_predictions: float = 1.0, prior_coupling: float = 1.0, bound_shift=None,
              bound_sd=None):
    """M1: the identified margins with the label model plugged in (module docstring)."""
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts, beta = np.asarray(cell_counts, dtype=np.int64), np.asarray(beta, dtype=float)
    metrics = list(metrics or default_metrics(beta.shape[1]))
    with pm.Model(coords=_coords(*cell_counts.shape, metrics)) as m:
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, pt.as_tensor(beta), u, metrics, beta.shape[1], bound_shift,
                          bound_sd)
    return m


def _model_m2(cell_counts, patterns, *, metrics=None, prior_cells: float = 1.0,
              prior_predictions: float = 1.0, prior_coupling: float = 1.0):
    """M2: M1 with a Bayesian Dawid–Skene label model (module docstring)."""
    import pymc as pm

    cell_counts, patterns = np.asarray(cell_counts, dtype=np.int64), np.asarray(patterns)
    metrics = list(metrics or default_metrics(cell_counts.shape[1]))
    with pm.Model(coords=_m2_coords(cell_counts, patterns, metrics)) as m:
        beta = _dawid_skene(cell_counts, patterns)
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, beta, u, metrics, cell_counts.shape[1])
    return m


def _m2_coords(cell_counts: np.ndarray, patterns: np.ndarray, metrics) -> dict[str, Any]:
    return {**_coords(*cell_counts.shape, metrics), "lf": np.arange(patterns.shape[1])}


def _dawid_skene(cell_counts: np.ndarray, patterns: np.ndarray):
    """M2's label model in the current model: ``pi``, ``propensity``, ``accuracy_raw``, the
    votes' likelihood (a ``Potential``) and the deterministic ``beta``, which it returns."""
    import pymc as pm
    import pytensor.tensor as pt

    n_cells, n_classes = cell_counts.shape
    n_lfs = patterns.shape[1]
    outcome = np.eye(n_classes + 1)[patterns + 1].reshape(n_cells, n_lfs * (n_classes + 1))
    pi = pm.Dirichlet("pi", a=np.ones(n_classes), dims="class")
    rho = pm.Beta("propensity", 1.0, 1.0, dims="lf")
    raw = pm.Beta("accuracy_raw", 2.0, 2.0, dims="lf")
    acc = pm.Deterministic("lf_accuracy", 1 / n_classes + (1 - 1 / n_classes) * raw, dims="lf")
    same = np.eye(n_classes)[None]
    log_vote = pt.log(rho)[:, None, None] + pt.log(
        same * acc[:, None, None] + (1 - same) * ((1 - acc) / (n_classes - 1))[:, None, None])
    log_abstain = pt.log1p(-rho)[:, None, None] * pt.ones((n_lfs, 1, n_classes))
    table_ = pt.concatenate([log_abstain, log_vote], axis=1)  # (lf, vote, y)
    log_joint = pt.log(pi)[None, :] + pt.dot(outcome, table_.reshape(
        (n_lfs * (n_classes + 1), n_classes)))
    log_marginal = pt.logsumexp(log_joint, axis=1)
    pm.Potential("weak_labels", (cell_counts.sum(axis=1) * log_marginal).sum())
    return pm.Deterministic("beta", pt.exp(log_joint - log_marginal[:, None]),
                            dims=("cell", "class"))


def dawid_skene_model(cell_counts, patterns):
    r"""M2's label model alone: the part of M2 that :func:`m2_posterior` samples with NUTS.

    Its posterior is M2's posterior of ``pi``, ``propensity``, ``accuracy_raw`` and ``beta``:
    the votes inform only these, and the margins :math:`w, \alpha` and the coupling position
    :math:`u` of M2 are independent of them a posteriori.

    Parameters
    ----------
    cell_counts : int array-like (n_cells, n_classes)
        Items per weak-label pattern and predicted class (their totals count the votes).
    patterns : int array-like (n_cells, n_lfs)
        The weak-label pattern of each cell (-1 = abstain).

    Returns
    -------
    pm.Model
        Free ``pi``, ``propensity`` and ``accuracy_raw``; deterministics ``lf_accuracy`` and
        ``beta`` (cell, class).

    Examples
    --------
    >>> m = dawid_skene_model([[30, 70], [60, 40]], [[1, 1], [0, -1]])
    >>> sorted(v.name for v in m.free_RVs), sorted(v.name for v in m.deterministics)
    (['accuracy_raw', 'pi', 'propensity'], ['beta', 'lf_accuracy'])
    """
    import pymc as pm

    cell_counts, patterns = np.asarray(cell_counts, dtype=np.int64), np.asarray(patterns)
    with pm.Model(coords=_m2_coords(cell_counts, patterns, [])) as m:
        _dawid_skene(cell_counts, patterns)
    return m


def m2_posterior(cell_counts, patterns, metrics=None, *, random_seed=None, sample_kwargs=None,
                 prior_cells: float = 1.0, prior_predictions: float = 1.0,
                 prior_coupling: float = 1.0):
    r"""Draws of M2's posterior: NUTS on its label model, exact draws of everything else.

    M2's posterior factorises: the votes inform only the label model
    (:func:`dawid_skene_model`), the counts only the margins, and nothing the coupling
    position, so

    .. math:: w \mid n \sim \mathrm{Dir}(a_w + n_z),\quad
              \alpha_z \mid n \sim \mathrm{Dir}(a_\alpha + n_{z\cdot}),\quad
              u \sim \mathrm{Beta}(c, c)

    are drawn independently and joined to each NUTS draw of :math:`\beta`, whose bounds and
    metric draw follow as in :func:`model`. NUTS on the whole of M2 samples the same posterior
    with :math:`2|\mathcal Z|(K + 1)` more dimensions, whose posterior is known exactly.

    Parameters
    ----------
    cell_counts, patterns, metrics, prior_cells, prior_predictions, prior_coupling
        As for ``model(..., variant="m2")``.
    random_seed : int, optional
        Seed of NUTS and of the exact draws.
    sample_kwargs : dict, optional
        ``pm.sample`` settings (:func:`bayeval.sampling.sample`).

    Returns
    -------
    xarray.DataTree
        What ``pm.sample`` returns for the label model (``sample_stats`` included), with
        ``w`` (none with a single pattern), ``alpha``, ``u``, ``lower_bound``, ``upper_bound``
        and ``value`` added to the posterior: draws of M2's posterior.

    Examples
    --------
    >>> tree = m2_posterior([[30, 70], [60, 40]], [[1, 1], [0, -1]], ["accuracy"],
    ...                     random_seed=0, sample_kwargs={"draws": 100, "tune": 100})
    >>> post = tree["posterior"]
    >>> bool(((post["lower_bound"] <= post["value"]) & (post["value"] <= post["upper_bound"])
    ...       ).all())
    True
    """
    import xarray as xr

    from bayeval.sampling import sample

    cell_counts, patterns = np.asarray(cell_counts, dtype=np.int64), np.asarray(patterns)
    metrics = list(metrics or default_metrics(cell_counts.shape[1]))
    tree = sample(dawid_skene_model(cell_counts, patterns), random_seed, sample_kwargs)
    post = tree["posterior"].to_dataset()
    beta = post["beta"].transpose("chain", "draw", "cell", "class").values
    shape = beta.shape[:2]
    rng = np.random.default_rng(random_seed)
    w, alpha = _margin_draws(rng, cell_counts, int(np.prod(shape)), prior_cells,
                             prior_predictions)
    w, alpha = w.reshape(*shape, -1), alpha.reshape(*shape, *cell_counts.shape)
    u = rng.beta(prior_coupling, prior_coupling, size=shape)
    lower, upper = (np.stack(b, axis=-1) for b in zip(
        *(metric_bounds(w, alpha, beta, m) for m in metrics), strict=True))
    dims = ("chain", "draw")
    added = {"alpha": ((*dims, "cell", "class"), alpha), "u": (dims, u),
             "lower_bound": ((*dims, "metric"), lower),
             "upper_bound": ((*dims, "metric"), upper),
             "value": ((*dims, "metric"), lower + u[..., None] * (upper - lower))}
    if len(cell_counts) > 1:
        added["w"] = ((*dims, "cell"), w)
    tree["posterior"] = xr.DataTree(post.assign(added).assign_coords(metric=metrics))
    return tree


def _model_m3(cell_counts, beta, gold_counts, *, metrics=None,
               label_model_strength: float = 10.0, prior_cells: float = 1.0,
               prior_predictions: float = 1.0, prior_coupling: float = 1.0):
    """M3 (two classes): gold labels update the label model and the coupling."""
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts = np.asarray(cell_counts, dtype=np.int64)
    b_hat = np.asarray(beta, dtype=float)[:, 1]
    gold = np.asarray(gold_counts, dtype=np.int64)
    metrics = list(metrics or default_metrics(2))
    with pm.Model(coords=_coords(len(b_hat), 2, metrics)) as m:
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        b = pm.Beta("b", 1 + label_model_strength * b_hat,
                    1 + label_model_strength * (1 - b_hat), dims="cell")
        a = alpha[:, 1]
        width = pt.minimum(pt.minimum(a, b), pt.minimum(1 - a, 1 - b))  # hi - lo, >= 0 exactly
        t = pt.maximum(0.0, a + b - 1) + u * width
        # P(Y = 1 | H = h, z); a share that underflows to 0 has no gold item (m_zh <= n_zh)
        shares = alpha.T  # (1 - a, a)
        safe = pt.switch(shares > 0, shares, 1.0)
        p_gold = pt.switch(shares > 0, pt.stack([pt.maximum(0.0, b - a) + (1 - u) * width, t])
                           / safe, 0.0).T
        pm.Binomial("gold_labels", n=gold.sum(axis=2), p=pt.clip(p_gold, 0.0, 1.0),
                    observed=gold[:, :, 1], dims=("cell", "class"))
        _bounds_and_value(w, alpha, pt.stack([1 - b, b], axis=1), u, metrics, 2)
    return m


@renamed_arguments(n_draws="draws")
def m1_posterior_bounds(cell_counts, beta, metrics, *, draws: int = 20000,
                        random_seed=None, prior_cells: float = 1.0,
                        prior_predictions: float = 1.0, bound_shift=None,
                        bound_sd=None) -> np.ndarray:
    r"""Independent draws of M1's bounds from its conjugate posterior (the check of NUTS).

    :math:`w \mid n \sim \mathrm{Dir}(a_w + n_z)`,
    :math:`\alpha_z \mid n \sim \mathrm{Dir}(a_\alpha + n_{z\cdot})`, pushed through
    :func:`~bayeval.methods.bounds.fast.metric_bounds`.

    Parameters
    ----------
    cell_counts : array-like of int, shape (n_cells, n_classes)
        Predictions of each class per weak-label cell :math:`z`.
    beta : array-like, shape (n_cells, n_classes)
        The label model :math:`P(Y\mid z)` per cell.
    metrics : sequence of str
        Metric names (:data:`~bayeval.methods.bounds.fast.METRICS`).
    draws : int
        Number of draws.
    random_seed : None, int or numpy.random.Generator
    prior_cells, prior_predictions : float
        Dirichlet concentrations :math:`a_w` and :math:`a_\alpha`.
    bound_shift : array-like (n_metrics, 2), optional
        Added to each draw's lower and upper bound (then clipped to [0, 1]), as in M1.
    bound_sd : array-like (n_metrics, 2), optional
        Sds of M1's normal error of the lower and upper bound (one standard normal per draw
        and metric), added before the shift.

    Returns
    -------
    numpy.ndarray
        Shape (draws, n_metrics, 2): lower and upper bound per draw and metric.

    Examples
    --------
    >>> d = m1_posterior_bounds([[300, 700]], [[0.6, 0.4]], ["accuracy"], random_seed=0)
    >>> d.shape, bool((d[..., 0] <= d[..., 1]).all())
    ((20000, 1, 2), True)
    """
    rng = np.random.default_rng(random_seed)
    cell_counts, beta = np.asarray(cell_counts), np.asarray(beta, dtype=float)
    chunk = max(1, int(2e6 // cell_counts.size))
    out = []
    for start in range(0, draws, chunk):
        w, alpha = _margin_draws(rng, cell_counts, min(chunk, draws - start), prior_cells,
                                 prior_predictions)
        out.append(np.stack([np.stack(metric_bounds(w, alpha, beta, m), axis=-1)
                             for m in metrics], axis=1))
    out = np.concatenate(out)
    if bound_sd is not None:
        sd = np.asarray(bound_sd, dtype=float).reshape(len(metrics), 2)
        out = np.sort(out + sd * rng.standard_normal((draws, len(metrics), 1)), axis=-1)
    if bound_shift is not None or bound_sd is not None:
        out = np.clip(out + (0.0 if bound_shift is None else np.asarray(
            bound_shift, dtype=float).reshape(len(metrics), 2)), 0.0, 1.0)
    return out


def _margin_draws(rng, cell_counts: np.ndarray, size: int, prior_cells: float,
                  prior_predictions: float):
    r"""``size`` draws of :math:`w \mid n \sim \mathrm{Dir}(a_w + n_z)` and
    :math:`\alpha_z \mid n \sim \mathrm{Dir}(a_\alpha + n_{z\cdot})` (normalised Gammas)."""
    w = rng.dirichlet(prior_cells + cell_counts.sum(axis=1), size=size)
    alpha = rng.gamma(prior_predictions + cell_counts, size=(size, *cell_counts.shape))
    return w, alpha / alpha.sum(axis=2, keepdims=True)
