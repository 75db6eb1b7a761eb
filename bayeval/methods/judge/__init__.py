"""Judge: a rate from a noisy judge that labels everything plus human labels on a few items."""

from bayeval.deprecation import renamed_builders
from bayeval.methods.judge.api import (
    eif_agreement,
    judge,
    labels_needed,
    ppi_mean_ci,
    ppi_mean_pointestimate,
)
from bayeval.methods.judge.compare import compare_systems
from bayeval.methods.judge.models import VARIANTS, model

__all__ = ["compare_systems", "eif_agreement", "judge", "labels_needed", "model", "ppi_mean_ci",
           "ppi_mean_pointestimate"]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
