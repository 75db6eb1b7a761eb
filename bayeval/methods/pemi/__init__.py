"""PEMI: a classifier's metrics on a test set where some labels are missing (MCAR, MAR, MNAR)."""

import functools

from bayeval.deprecation import renamed_names
from bayeval.methods.pemi.api import delta_sensitivity, pemi
from bayeval.methods.pemi.models import model

__all__ = ["delta_sensitivity", "model", "pemi"]

__getattr__ = renamed_names(__name__, {
    "model_m1": ("model(..., variant='m1')", lambda: functools.partial(model, variant="m1")),
    "model_m3": ("model(..., variant='m3')", lambda: functools.partial(model, variant="m3")),
})
