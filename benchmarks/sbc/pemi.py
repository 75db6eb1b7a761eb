"""SBC simulators of PEMI's M1 and M3 (one copy of the model per simulation, batched)."""

from __future__ import annotations

import numpy as np
from scipy import special

from bayeval.methods.pemi.models import PRIOR_A, PRIOR_LOG_B, model
from benchmarks.sbc.batch import batched

#: M3's prior of delta (that of the catalogued reference)
DELTA = (1.0, 0.5)


def _pemi(n_sims: int, rng, variant: str, rows: int = 30):
    """Prior draws of the map and ``rows`` calibration labels at fixed distinct scores."""
    scores = rng.uniform(0.02, 0.98, rows)
    truth = {"a": rng.normal(*PRIOR_A, n_sims), "log_b": rng.normal(*PRIOR_LOG_B, n_sims)}
    logits = truth["a"][:, None] + np.exp(truth["log_b"])[:, None] * special.logit(scores)
    labels = (rng.random((n_sims, rows)) < special.expit(logits)).astype(int)
    delta = {}
    if variant == "m3":
        truth["delta"] = rng.normal(*DELTA, n_sims)
        delta = {"delta": DELTA}
    models = [model(scores, y, variant=variant, **delta) for y in labels]
    return truth, batched(models, list(truth))


def pemi_m1(n_sims: int, rng):
    r""":math:`a \sim N(0, 1.5^2)`, :math:`\log b \sim N(0, 0.5^2)`, 30 labels."""
    return _pemi(n_sims, rng, "m1")


def pemi_m3(n_sims: int, rng):
    r"""M1 and :math:`\delta \sim N(1, 0.5^2)`, which no data inform."""
    return _pemi(n_sims, rng, "m3")
