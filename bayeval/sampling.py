"""Sampling a method's PyMC model with bayeval's defaults; user settings pass through untouched."""

from __future__ import annotations

import logging
from typing import Any

import xarray as xr

__all__ = ["DEFAULTS", "sample"]

#: defaults of every NUTS run: 2 chains x 1000 draws, sequential (cheaper than processes for
#: models that marginalise the labels), no progress bar.
DEFAULTS: dict[str, Any] = {
    "draws": 1000, "tune": 1000, "chains": 2, "cores": 1, "progressbar": False,
    "compute_convergence_checks": False,
}


def sample(model, random_seed: int | None, sample_kwargs: dict[str, Any] | None = None
           ) -> xr.DataTree:
    """``pm.sample`` on ``model`` with :data:`DEFAULTS` updated by ``sample_kwargs``."""
    import pymc as pm

    kwargs = {**DEFAULTS, **(sample_kwargs or {})}
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return pm.sample(model=model, random_seed=random_seed, **kwargs)
    finally:
        logger.setLevel(level)
