"""SBC simulators of MVU's Models A (one copy of the model per simulation, batched), B (one
``instance`` per simulation) and C (one copy per simulation, ``group`` copies per NUTS run)."""

from __future__ import annotations

import numpy as np
from scipy import special

from bayeval.methods.mvu.models import KAPPA_PRIOR, SIGMA_W, dmv_design, model
from benchmarks.sbc.batch import batched, grouped


def mvu_model_a(n_sims: int, rng, rows: int = 20):
    r"""Defaults :math:`\mu \sim N(0, 2^2 I)`, :math:`L \sim \mathrm{LKJCholeskyCov}(2,
    \mathrm{HalfNormal}(2))`, two features: standard deviations :math:`\sigma_j \sim
    \mathrm{HalfNormal}(2)`, correlation :math:`(1 + r)/2 \sim \mathrm{Beta}(2, 2)` (the LKJ law
    with :math:`\eta = 2` for :math:`d = 2`); ``rows`` training rows :math:`N(\mu, \Sigma)`.

    The builder standardises the rows by their own means and sds; the simulated rows replace
    the standardised ones, so that the prior and likelihood are those of the rows."""
    mu = rng.normal(0.0, 2.0, (n_sims, 2))
    sd = np.abs(rng.normal(0.0, 2.0, (n_sims, 2)))
    r = 2 * rng.beta(2.0, 2.0, n_sims) - 1
    chol = np.stack([sd[:, 0], r * sd[:, 1], np.sqrt(1 - r**2) * sd[:, 1]], axis=1)
    x = mu[:, None] + rng.standard_normal((n_sims, rows, 2)) @ np.stack(
        [np.array([[c[0], c[1]], [0.0, c[2]]]) for c in chol])
    models = [model(xi, variant="a") for xi in x]
    truth = {f"mu[{j}]": mu[:, j] for j in range(2)} | {f"chol[{j}]": chol[:, j]
                                                         for j in range(3)}
    return truth, batched(models, ["mu", "chol"], observed={"x_train": x})


def mvu_model_b(n_sims: int, rng, draws: int = 50):
    r""":math:`\mu_\alpha \sim \mathrm{Dir}(1, 1)`, :math:`\kappa \sim \mathrm{LogNormal}(\log 10,
    3)` (the defaults), ``draws`` MVU draws per instance."""
    mu1 = rng.beta(1.0, 1.0, n_sims)
    kappa = rng.lognormal(np.log(10.0), 3.0, n_sims)
    alpha = kappa[:, None] * np.column_stack([1 - mu1, mu1])
    phi = np.stack([rng.dirichlet(a, size=draws) for a in alpha])
    return {"mu[1]": mu1, "kappa": kappa}, model(phi, variant="b")


def mvu_model_c(n_sims: int, rng, rows: int = 40, sigma_w: float = SIGMA_W, group: int = 1):
    r"""Default prior :math:`W_\eta \sim N(0, 1)`, :math:`w_{\kappa,0} \sim N(\log 10, 3^2)`
    (the concentration at the features' mean), the slopes :math:`w_{\kappa,j} \sim N(0, 1)`;
    two classes; the features are one
    fixed design of ``rows`` masked copies of two Gaussian features (one feature missing in each,
    at random): the standardised :math:`\tilde x_1, \tilde x_2, m_1` of :func:`dmv_design` and an
    intercept; targets :math:`t_n \sim \mathrm{Dir}(\kappa_n \mu_n)`, passed as drawn (about
    half fall within :math:`10^{-6}` of a vertex: the likelihood censors them). The copies are
    sampled ``group`` at a time (:func:`~benchmarks.sbc.batch.grouped`)."""
    x = rng.standard_normal((rows, 2))
    first = rng.random(rows) < 0.5
    h = dmv_design(x, np.column_stack([first, ~first]))[:, :3]
    h = (h - h.mean(0)) / h.std(0)
    design = np.column_stack([np.ones(rows), h])
    w_eta = rng.normal(0.0, sigma_w, (n_sims, design.shape[1]))
    w_kappa = rng.normal(0.0, sigma_w, (n_sims, design.shape[1]))
    w_kappa[:, 0] = rng.normal(*KAPPA_PRIOR, n_sims)
    kappa, eta = np.exp(w_kappa @ design.T), w_eta @ design.T
    t1 = rng.beta(kappa * special.expit(eta), kappa * special.expit(-eta))
    models = [model(h, np.stack([1 - t, t], axis=1), sigma_w=sigma_w, variant="c") for t in t1]
    truth = {f"w_eta[{j},0]": w_eta[:, j] for j in range(design.shape[1])}
    truth |= {f"w_kappa[{j}]": w_kappa[:, j] for j in range(design.shape[1])}
    return truth, grouped(models, ["w_eta", "w_kappa"], group)

