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
  (Jensen), so ``bounds()`` also passes ``bound_shift``, the fast path's kink correction plus
  that posterior gap (:func:`~bayeval.methods.bounds.fast.kink_corrections`), on the fast path's
  pooled patterns: the posterior of each bound is then centred on the reported one.
* **M2** (``variant="m2"``): M1 with a Bayesian Dawid–Skene label model, one accuracy per
  labelling function,

  .. math::
      \pi \sim \mathrm{Dir}(\mathbf 1),\ \rho_j \sim \mathrm{Beta}(1, 1),\
      \mathrm{acc}_j = \tfrac1K + (1 - \tfrac1K)\,\mathrm{Beta}(2, 2),\qquad
      P(\lambda_j = v \mid y) = \begin{cases} 1 - \rho_j & v = -1\\ \rho_j\,\mathrm{acc}_j
      & v = y\\ \rho_j (1 - \mathrm{acc}_j)/(K - 1) & \text{else}\end{cases}

  The votes enter through :math:`\sum_z n_z \log\sum_y \pi_y\prod_j P(\lambda_j = z_j\mid y)`
  (latent :math:`Y` summed out, one term per pattern) and ``beta`` :math:`=P(Y\mid z)` is a
  deterministic. The constraint :math:`\mathrm{acc}_j > 1/K` removes label switching.
* **M3** (``variant="m3"``, two classes): a few gold labels update the label model and the
  coupling. M1 with a random label model centred on the given one,
  :math:`b_z = \beta_z(1) \sim \mathrm{Beta}(1 + \kappa\hat b_z, 1 + \kappa(1 - \hat b_z))`,
  and, for the gold items (whose prediction and pattern are already in the cell counts), the
  label given prediction and pattern under the coupling
  :math:`t_z = P(H{=}1, Y{=}1 \mid z) = \mathrm{lo}_z + u\,(\mathrm{hi}_z - \mathrm{lo}_z)`:

  .. math:: m_{z1\cdot 1} \sim \mathrm{Bin}(m_{z1\cdot}, t_z / a_z),\qquad
            m_{z0\cdot 1} \sim \mathrm{Bin}(m_{z0\cdot}, (b_z - t_z) / (1 - a_z)),

  with :math:`a_z = \alpha_z(1)`. Gold labels are the only data that move :math:`u`.

References: F. Maia Polo, S. Maity, M. Yurochkin, M. Banerjee, Y. Sun, "Weak Supervision
Performance Evaluation via Partial Identification", NeurIPS 2024 (the bounds); A. P. Dawid,
A. M. Skene, "Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm",
Applied Statistics 28 (1979) (the label model of M2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.deprecation import renamed_arguments
from bayeval.methods.bounds.fast import default_metrics, metric_bounds
from bayeval.validation import as_choice

__all__ = ["VARIANTS", "m1_posterior_bounds", "model"]

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
    variant : {"m1", "m2", "m3"}
        The model.

    Returns
    -------
    pm.Model
        Free ``w`` (none with a single pattern), ``alpha`` and ``u``; M2 adds ``pi``,
        ``propensity`` and ``accuracy_raw`` (dim ``lf``), M3 adds ``b`` (dim ``cell``) and the
        observed ``gold_labels`` (cell, class = h). Deterministics ``lower_bound``,
        ``upper_bound`` and ``value`` (dim ``metric``); dims ``cell``, ``class``, ``metric``.

    Examples
    --------
    >>> counts, beta = [[30, 70], [60, 40]], [[0.6, 0.4], [0.9, 0.1]]
    >>> m = model(counts, beta, metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha', 'u', 'w']
    >>> m = model(counts, [[1, 1], [0, -1]], variant="m2", metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['accuracy_raw', 'alpha', 'pi', 'propensity', 'u', 'w']
    >>> m = model(counts, beta, [[[2, 1], [0, 3]], [[4, 0], [1, 0]]], variant="m3",
    ...           metrics=["accuracy"])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha', 'b', 'u', 'w']
    """
    builders = {"m1": _model_m1, "m2": _model_m2, "m3": _model_m3}
    return builders[as_choice(variant, "variant", VARIANTS)](*args, **kwargs)


def _coords(n_cells: int, n_classes: int, metrics) -> dict[str, Any]:
    return {"cell": np.arange(n_cells), "class": np.arange(n_classes), "metric": list(metrics)}


def _identified_margins(cell_counts: np.ndarray, prior_cells: float, prior_predictions: float):
    r"""``w`` :math:`\sim\mathrm{Dir}`, ``alpha`` :math:`\sim\mathrm{Dir}` per cell, and their
    multinomial likelihoods on the cell totals and the predictions per cell."""
    import pymc as pm
    import pytensor.tensor as pt

    n_cells, n_classes = cell_counts.shape
    totals = cell_counts.sum(axis=1)
    if n_cells == 1:  # one pattern: P(Z = z) = 1, nothing to learn
        w = pt.ones(1)
    else:
        w = pm.Dirichlet("w", a=np.full(n_cells, prior_cells), dims="cell")
        pm.Multinomial("cell_totals", n=int(totals.sum()), p=w, observed=totals, dims="cell")
    alpha = pm.Dirichlet("alpha", a=np.full((n_cells, n_classes), prior_predictions),
                         dims=("cell", "class"))
    pm.Multinomial("predictions", n=totals, p=alpha, observed=cell_counts,
                   dims=("cell", "class"))
    return w, alpha


def _bounds_and_value(w, alpha, beta, u, metrics, n_classes: int, bound_shift=None) -> None:
    """Deterministics ``lower_bound``, ``upper_bound`` and ``value = L + u (U - L)`` (metric)."""
    import pymc as pm
    import pytensor.tensor as pt

    lowers, uppers = zip(*(metric_bounds(w, alpha, beta, m, n_classes) for m in metrics),
                             strict=True)
    lower, upper = pt.stack(lowers), pt.stack(uppers)
    if bound_shift is not None:
        shift = np.asarray(bound_shift, dtype=float).reshape(len(metrics), 2)
        lower = pt.clip(lower + shift[:, 0], 0.0, 1.0)
        upper = pt.clip(upper + shift[:, 1], 0.0, 1.0)
    lower = pm.Deterministic("lower_bound", lower, dims="metric")
    upper = pm.Deterministic("upper_bound", upper, dims="metric")
    pm.Deterministic("value", lower + u * (upper - lower), dims="metric")


def _model_m1(cell_counts, beta, *, metrics=None, prior_cells: float = 1.0,
              prior_predictions: float = 1.0, prior_coupling: float = 1.0, bound_shift=None):
    """M1: the identified margins with the label model plugged in (module docstring)."""
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts, beta = np.asarray(cell_counts, dtype=np.int64), np.asarray(beta, dtype=float)
    metrics = list(metrics or default_metrics(beta.shape[1]))
    with pm.Model(coords=_coords(*cell_counts.shape, metrics)) as m:
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, pt.as_tensor(beta), u, metrics, beta.shape[1], bound_shift)
    return m


def _model_m2(cell_counts, patterns, *, metrics=None, prior_cells: float = 1.0,
              prior_predictions: float = 1.0, prior_coupling: float = 1.0):
    """M2: M1 with a Bayesian Dawid–Skene label model (module docstring)."""
    import pymc as pm
    import pytensor.tensor as pt

    cell_counts, patterns = np.asarray(cell_counts, dtype=np.int64), np.asarray(patterns)
    n_cells, n_classes = cell_counts.shape
    n_lfs = patterns.shape[1]
    metrics = list(metrics or default_metrics(n_classes))
    outcome = np.eye(n_classes + 1)[patterns + 1].reshape(n_cells, n_lfs * (n_classes + 1))
    coords = {**_coords(n_cells, n_classes, metrics), "lf": np.arange(n_lfs)}
    with pm.Model(coords=coords) as m:
        pi = pm.Dirichlet("pi", a=np.ones(n_classes), dims="class")
        rho = pm.Beta("propensity", 1.0, 1.0, dims="lf")
        raw = pm.Beta("accuracy_raw", 2.0, 2.0, dims="lf")
        acc = pm.Deterministic("lf_accuracy", 1 / n_classes + (1 - 1 / n_classes) * raw,
                               dims="lf")
        same = np.eye(n_classes)[None]
        log_vote = pt.log(rho)[:, None, None] + pt.log(
            same * acc[:, None, None] + (1 - same) * ((1 - acc) / (n_classes - 1))[:, None, None])
        log_abstain = pt.log1p(-rho)[:, None, None] * pt.ones((n_lfs, 1, n_classes))
        table_ = pt.concatenate([log_abstain, log_vote], axis=1)  # (lf, vote, y)
        log_joint = pt.log(pi)[None, :] + pt.dot(outcome, table_.reshape(
            (n_lfs * (n_classes + 1), n_classes)))
        log_marginal = pt.logsumexp(log_joint, axis=1)
        pm.Potential("weak_labels", (cell_counts.sum(axis=1) * log_marginal).sum())
        beta = pm.Deterministic("beta", pt.exp(log_joint - log_marginal[:, None]),
                                dims=("cell", "class"))
        w, alpha = _identified_margins(cell_counts, prior_cells, prior_predictions)
        u = pm.Beta("u", prior_coupling, prior_coupling)
        _bounds_and_value(w, alpha, beta, u, metrics, n_classes)
    return m


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
        p_gold = pt.stack([(pt.maximum(0.0, b - a) + (1 - u) * width) / (1 - a), t / a], axis=1)
        pm.Binomial("gold_labels", n=gold.sum(axis=2), p=pt.clip(p_gold, 0.0, 1.0),
                    observed=gold[:, :, 1], dims=("cell", "class"))
        _bounds_and_value(w, alpha, pt.stack([1 - b, b], axis=1), u, metrics, 2)
    return m


@renamed_arguments(n_draws="draws")
def m1_posterior_bounds(cell_counts, beta, metrics, *, draws: int = 20000,
                        random_seed=None, prior_cells: float = 1.0,
                        prior_predictions: float = 1.0, bound_shift=None) -> np.ndarray:
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
    totals = cell_counts.sum(axis=1)
    chunk = max(1, int(2e6 // cell_counts.size))
    out = []
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        w = rng.dirichlet(prior_cells + totals, size=size)
        alpha = rng.gamma(prior_predictions + cell_counts, size=(size, *cell_counts.shape))
        alpha /= alpha.sum(axis=2, keepdims=True)
        out.append(np.stack([np.stack(metric_bounds(w, alpha, beta, m), axis=-1)
                             for m in metrics], axis=1))
    out = np.concatenate(out)
    if bound_shift is not None:
        shift = np.asarray(bound_shift, dtype=float).reshape(len(metrics), 2)
        out = np.clip(out + shift, 0.0, 1.0)
    return out
