"""Sampling a method's PyMC model with bayeval's defaults; user settings pass through untouched."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

import xarray as xr

__all__ = ["DEFAULTS", "progress", "sample"]

#: defaults of every NUTS run: 2 chains x 1000 draws, sequential (cheaper than processes for
#: models that marginalise the labels), no progress bar.
DEFAULTS: dict[str, Any] = {
    "draws": 1000, "tune": 1000, "chains": 2, "cores": 1, "progressbar": False,
    "compute_convergence_checks": False,
}


def sample(model, random_seed: int | None, sample_kwargs: dict[str, Any] | None = None
           ) -> xr.DataTree:
    """``pm.sample`` on ``model`` with :data:`DEFAULTS` updated by ``sample_kwargs``.

    PyMC's log messages are silenced below ERROR while it runs.

    Parameters
    ----------
    model : pymc.Model
        The model to sample (e.g. one of ``be.methods.<name>.model(...)``).
    random_seed : int or None
        Seed of ``pm.sample``; the same seed gives the same draws.
    sample_kwargs : dict, optional
        Any ``pm.sample`` argument (``draws``, ``tune``, ``chains``, ``target_accept``, ``step``,
        ...); it overrides :data:`DEFAULTS`.

    Returns
    -------
    xarray.DataTree
        What ``pm.sample`` returns: ``posterior``, ``sample_stats``, ``observed_data``, ...

    Examples
    --------
    A Beta(1, 1) prior and 7 successes in 10 trials (posterior Beta(8, 4), mean 2/3), sampled
    here with a slice sampler to keep the example fast:

    >>> import pymc as pm
    >>> with pm.Model() as model:
    ...     theta = pm.Beta("theta", 1, 1)
    ...     k = pm.Binomial("k", n=10, p=theta, observed=7)
    >>> tree = sample(model, 0, {"draws": 200, "tune": 100, "step": pm.Slice(model=model)})
    >>> dict(tree.posterior.sizes)
    {'chain': 2, 'draw': 200}
    >>> round(float(tree.posterior["theta"].mean()), 1)
    0.7
    """
    import pymc as pm

    kwargs = {**DEFAULTS, **(sample_kwargs or {})}
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return pm.sample(model=model, random_seed=random_seed, **kwargs)
    finally:
        logger.setLevel(level)


def progress(blocks: list[slice], total: int, label: str) -> Iterator[slice]:
    """``blocks`` (slices of an axis of length ``total``), with progress on stderr when
    :data:`DEFAULTS` has ``progressbar`` on: a bar redrawn after each block on a terminal, one
    line when the work is done otherwise (long work outside PyMC, e.g. MVU's imputation).

    Examples
    --------
    >>> [b.start for b in progress([slice(0, 2), slice(2, 4)], 4, "work")]  # progress off
    [0, 2]
    """
    if not DEFAULTS["progressbar"]:
        yield from blocks
        return
    start, live = time.perf_counter(), sys.stderr.isatty()

    def line(done: int) -> str:
        filled = 30 * done // max(total, 1)
        return (f"{label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} "
                f"{time.perf_counter() - start:.1f} s")

    for b in blocks:
        yield b
        if live:
            sys.stderr.write("\r" + line(min(b.stop, total)))
            sys.stderr.flush()
    sys.stderr.write(("\r" if live else "") + line(total) + "\n")
    sys.stderr.flush()
