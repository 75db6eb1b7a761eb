"""SBC simulator of the labelled rates (one ``metric`` per simulation)."""

from __future__ import annotations

import numpy as np

from bayeval.methods.labelled.models import model


def labelled_beta_binomial(n_sims: int, rng, trials: int = 20):
    r""":math:`\theta \sim \mathrm{Beta}(1, 1)`, ``trials`` binomial trials per simulation."""
    theta = rng.beta(1.0, 1.0, n_sims)
    counts = rng.binomial(trials, theta)
    return {"theta": theta}, model(counts, np.full(n_sims, trials),
                                   metrics=[f"s{i}" for i in range(n_sims)])
