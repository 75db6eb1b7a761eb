"""SBC simulators of the bounds' models (one copy of the model per simulation, batched)."""

from __future__ import annotations

import numpy as np

from bayeval.methods.bounds.models import model
from benchmarks.sbc.batch import batched

#: the plug-in label model P(Y = k | z) of four weak-label patterns (M1)
BETA = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.05, 0.95]])


def bounds_m1(n_sims: int, rng, items: int = 80):
    r"""Builder's default priors: :math:`w \sim \mathrm{Dir}(\mathbf 1)` (4 patterns),
    :math:`\alpha_z \sim \mathrm{Dir}(1, 1)`, :math:`u \sim \mathrm{Beta}(1, 1)`; ``items``
    items, :math:`(n_z) \sim \mathrm{Mult}(n, w)`, :math:`(n_{zk}) \sim \mathrm{Mult}(n_z,
    \alpha_z)`. Ranked: :math:`w_0, w_1, w_2`, :math:`\alpha_z(1)` and :math:`u`."""
    cells = len(BETA)
    w = rng.dirichlet(np.ones(cells), n_sims)
    alpha1 = rng.beta(1.0, 1.0, (n_sims, cells))
    u = rng.beta(1.0, 1.0, n_sims)
    totals = np.stack([rng.multinomial(items, wi) for wi in w])
    ones = rng.binomial(totals, alpha1)
    counts = np.stack([totals - ones, ones], axis=-1)
    models = [model(ci, BETA, metrics=["accuracy"]) for ci in counts]
    truth = {f"w[{z}]": w[:, z] for z in range(cells - 1)}
    truth |= {f"alpha[{z},1]": alpha1[:, z] for z in range(cells)}
    return truth | {"u": u}, batched(models, ["w", "alpha", "u"])
