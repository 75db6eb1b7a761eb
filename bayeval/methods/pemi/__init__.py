"""PEMI: a classifier's metrics on a test set where some labels are missing (MCAR, MAR, MNAR)."""

from bayeval.methods.pemi.api import pemi

__all__ = ["pemi"]
