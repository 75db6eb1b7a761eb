"""Judge: a rate from a noisy judge that labels everything plus human labels on a few items."""

import functools

from bayeval.deprecation import renamed_names
from bayeval.methods.judge.api import (
    eif_agreement,
    judge,
    labels_needed,
    ppi_mean_ci,
    ppi_mean_pointestimate,
)
from bayeval.methods.judge.models import model

__all__ = ["eif_agreement", "judge", "labels_needed", "model", "ppi_mean_ci",
           "ppi_mean_pointestimate"]

__getattr__ = renamed_names(__name__, {
    "model_a": ("model(..., variant='a')", lambda: functools.partial(model, variant="a")),
    "model_b": ("model(..., variant='b')", lambda: functools.partial(model, variant="b")),
})
