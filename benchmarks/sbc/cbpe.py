r"""SBC simulators of CBPE's models: V2b (one copy of the model per simulation, batched), and V0
and V2, which observe no data.

V0 and V2 have no likelihood: their "posterior" is the forward law of the latent labels, so
:math:`p(\theta \mid y) = p(\theta)` and SBC only asks whether NUTS, through the models'
construction of the labels from uniforms, draws that law. Their simulations are copies of the
catalogued data as chunks of one model (chunk :math:`2i + c` is chunk :math:`c` of simulation
:math:`i`); the true counts are drawn from their exact laws, computed without the model:
Poisson-binomial (V0) and convolutions of beta-binomials (V2). Counts are discrete, so their
ranks break ties at random.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pymc as pm

from bayeval.methods.cbpe.fast import beta_binomial_pmf
from bayeval.methods.cbpe.models import KAPPA_PRIOR, model
from bayeval.poibin import PoissonBinomial, convolve
from benchmarks.sbc.batch import batched

#: centres of the score bins of a reference chunk, and rows per cell
CENTRES, ROWS = np.array([0.1, 0.35, 0.65, 0.9]), 25
CATALOGUE = Path(__file__).resolve().parents[2] / "models"


def cbpe_v2b(n_sims: int, rng, chunks: int = 3):
    r""":math:`\log\kappa \sim N(\log 100, 2^2)`; ``chunks`` x 4 cells of 25 rows,
    :math:`\pi_g \sim \mathrm{Beta}(\kappa c_g, \kappa(1 - c_g))`,
    :math:`k_g \sim \mathrm{Binomial}(n_g, \pi_g)`."""
    c, n = np.tile(CENTRES, chunks), np.full(chunks * CENTRES.size, ROWS)
    log_kappa = rng.normal(*KAPPA_PRIOR, n_sims)
    kappa = np.exp(log_kappa)[:, None]
    k = rng.binomial(n, rng.beta(kappa * c, kappa * (1 - c)))
    models = [model(ki, n, c, variant="v2b") for ki in k]
    return {"log_kappa": log_kappa}, batched(models, ["log_kappa"])


def _catalogued(name: str) -> dict:
    return json.loads((CATALOGUE / name / "reference.json").read_text())["kwargs"]


def _counts(m, n_sims: int, n_chunks: int, names=("tp", "fn")) -> None:
    """Deterministics ``<name>_copy`` (simulation, chunk) of the copies' per-chunk counts."""
    with m:
        for name in names:
            pm.Deterministic(f"{name}_copy", m[name][:-1].reshape((n_sims, n_chunks)))


def _draw(pmf: np.ndarray, size: int, rng) -> np.ndarray:
    return rng.choice(pmf.size, size=size, p=pmf / pmf.sum())


def cbpe_v0(n_sims: int, rng):
    r"""The catalogued rows (24 calibrated probabilities, two chunks), one copy per simulation:
    free :math:`u_i \sim U(0, 1)`, :math:`Y_i = \mathbb 1[u_i < p_i]`. True counts per chunk
    :math:`c`: :math:`\mathrm{TP}_c \sim \mathrm{PB}(\{p_i : \hat y_i = 1, i \in c\})`,
    :math:`\mathrm{FN}_c \sim \mathrm{PB}(\{p_i : \hat y_i = 0, i \in c\})`. Ranked:
    :math:`\mathrm{TP}_c, \mathrm{FN}_c`."""
    data = _catalogued("cbpe_v0")
    p, y_pred, chunk = (np.asarray(data[k]) for k in ("p", "y_pred", "chunk"))
    n_chunks = chunk.max() + 1
    codes = (np.arange(n_sims)[:, None] * n_chunks + chunk).ravel()
    m = model(np.tile(p, n_sims), np.tile(y_pred, n_sims), codes,
              [str(k) for k in range(n_sims * n_chunks)], variant="v0")
    _counts(m, n_sims, n_chunks)
    truth = {}
    for name, side in (("tp", 1), ("fn", 0)):
        for c in range(n_chunks):
            law = PoissonBinomial(p[(y_pred == side) & (chunk == c)])
            truth[f"{name}_copy[{c}]"] = law.rvs(n_sims, random_state=rng)
    return truth, m


def cbpe_v2(n_sims: int, rng):
    r"""The catalogued cells (six cells in two chunks, :math:`\kappa = 20`, ``latent="uniform"``),
    one copy per simulation: free :math:`\pi_g \sim \mathrm{Beta}(\kappa c_g, \kappa(1 -
    c_g))` and :math:`u`, :math:`K_g = \sum_{i \in g} \mathbb 1[u_i < \pi_g]`. True
    :math:`\pi_g` from their Beta laws; true counts per chunk from the convolution of the
    cells' :math:`\mathrm{BetaBinomial}(n_g, \kappa c_g, \kappa(1 - c_g))`. Ranked:
    :math:`\pi_g`, :math:`\mathrm{TP}_c`, :math:`\mathrm{FN}_c`."""
    data = _catalogued("cbpe_v2")
    n, c, y_pred, chunk = (np.asarray(data[k]) for k in ("n", "c", "y_pred", "chunk"))
    kappa, n_chunks, cells = float(data["kappa"]), chunk.max() + 1, len(n)
    codes = (np.arange(n_sims)[:, None] * n_chunks + chunk).ravel()
    m = model(np.tile(n, n_sims), np.tile(c, n_sims), np.tile(y_pred, n_sims), kappa, codes,
              [str(k) for k in range(n_sims * n_chunks)], latent="uniform", variant="v2")
    _counts(m, n_sims, n_chunks)
    with m:
        pm.Deterministic("pi_copy", m["pi"].reshape((n_sims, cells)))
    truth = {f"pi_copy[{g}]": rng.beta(kappa * c[g], kappa * (1 - c[g]), n_sims)
             for g in range(cells)}
    for name, side in (("tp", 1), ("fn", 0)):
        for k in range(n_chunks):
            pmfs = [beta_binomial_pmf(int(n[g]), [kappa * c[g]], [kappa * (1 - c[g])])[0]
                    for g in np.flatnonzero((y_pred == side) & (chunk == k))]
            truth[f"{name}_copy[{k}]"] = _draw(convolve(*pmfs), n_sims, rng)
    return truth, m
