"""PEMI: a classifier's metrics on a test set where some labels are missing (MCAR, MAR, MNAR)."""

from bayeval.deprecation import renamed_builders
from bayeval.methods.pemi.api import delta_sensitivity, pemi
from bayeval.methods.pemi.models import VARIANTS, model

__all__ = ["delta_sensitivity", "model", "pemi"]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
