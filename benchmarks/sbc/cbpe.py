"""SBC simulator of CBPE's V2b (one copy of the model per simulation, batched)."""

from __future__ import annotations

import numpy as np

from bayeval.methods.cbpe.models import KAPPA_PRIOR, model
from benchmarks.sbc.batch import batched

#: centres of the score bins of a reference chunk, and rows per cell
CENTRES, ROWS = np.array([0.1, 0.35, 0.65, 0.9]), 25


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
