"""Sampling a method's PyMC model with bayeval's defaults (user settings pass through
untouched), and the summaries of draws that :class:`~bayeval.evaluation.Evaluation` shows.

PyMC and ArviZ are imported by the functions that use them.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pandas as pd
import xarray as xr

__all__ = ["DEFAULTS", "SAMPLERS", "SAMPLE_DIMS", "add_log_densities", "draws_intervals",
           "draws_summary", "progress", "sample"]

#: the dimensions of draws
SAMPLE_DIMS = ("chain", "draw")

#: defaults of every NUTS run: 2 chains x 1000 draws, sequential (cheaper than processes for
#: models that marginalise the labels), no progress bar, PyMC's own NUTS (PyMC would pick
#: nutpie whenever it is installed; the sampler stays the user's choice, see :data:`SAMPLERS`).
DEFAULTS: dict[str, Any] = {
    "draws": 1000, "tune": 1000, "chains": 2, "cores": 1, "progressbar": False,
    "compute_convergence_checks": False, "nuts_sampler": "pymc",
}

#: the NUTS implementations ``sample_kwargs["nuts_sampler"]`` chooses from: PyMC's own (the
#: default), or nutpie's (Rust, with the model compiled by numba; ``pip install
#: 'bayeval[nutpie]'``)
SAMPLERS = ("pymc", "nutpie")


def sample(model, random_seed: int | None, sample_kwargs: dict[str, Any] | None = None
           ) -> xr.DataTree:
    """``pm.sample`` on ``model`` with :data:`DEFAULTS` updated by ``sample_kwargs``.

    Both samplers of :data:`SAMPLERS` run the No-U-Turn sampler (Hoffman & Gelman 2014) on
    the model's unconstrained parameters with a diagonal mass matrix adapted while tuning:
    PyMC's own, whose inverse mass matrix is the draws' variance, or nutpie's
    (``sample_kwargs={"nuts_sampler": "nutpie"}``), whose diagonal minimises the Fisher
    divergence to a standard normal, :math:`M^{-1}_{ii} = \\sqrt{\\mathrm{Var}(x_i) /
    \\mathrm{Var}(\\partial_i \\log p(x))}` over draws and their gradients (Seyboldt, Carlson
    & Carpenter 2026). Either leaves ``diverging`` in ``sample_stats``, and gives the same
    draws again for the same seed.

    PyMC's log messages are silenced below ERROR while it runs (while any sampler runs, when
    several run in threads; the logger's level is restored when the last one ends).

    Parameters
    ----------
    model : pymc.Model
        The model to sample (e.g. one of ``be.methods.<name>.model(...)``).
    random_seed : int or None
        Seed of ``pm.sample``; the same seed gives the same draws.
    sample_kwargs : dict, optional
        Any ``pm.sample`` argument (``draws``, ``tune``, ``chains``, ``target_accept``, ``step``,
        ``nuts_sampler``...); it overrides :data:`DEFAULTS`.

    Returns
    -------
    xarray.DataTree
        What ``pm.sample`` returns: ``posterior``, ``sample_stats``, ``observed_data``, ...

    Raises
    ------
    ValueError
        ``nuts_sampler`` not in :data:`SAMPLERS`, or nutpie asked for with a ``step`` or for a
        model with discrete parameters (which only PyMC's compound steps sample).
    ImportError
        nutpie asked for and not installed.

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
    >>> sample(model, 0, {"nuts_sampler": "nutpie", "step": pm.Slice(model=model)})
    Traceback (most recent call last):
        ...
    ValueError: sample_kwargs['step'] cannot be combined with sample_kwargs['nuts_sampler'] = \
'nutpie': nutpie runs its own NUTS on every parameter; drop 'step', or use 'pymc'.
    """
    import pymc as pm

    kwargs = {**DEFAULTS, **(sample_kwargs or {})}
    _check_sampler(model, kwargs)
    with _QUIET:
        return pm.sample(model=model, random_seed=random_seed, **kwargs)


def _check_sampler(model, kwargs: dict[str, Any]) -> None:
    """``kwargs["nuts_sampler"]`` is one of :data:`SAMPLERS`, and nutpie can run here."""
    sampler = kwargs["nuts_sampler"]
    if sampler not in SAMPLERS:
        raise ValueError(f"sample_kwargs['nuts_sampler'] must be one of "
                         f"{', '.join(map(repr, SAMPLERS))}, got {sampler!r}.")
    if sampler == "pymc":
        return
    if kwargs.get("step") is not None:
        raise ValueError(f"sample_kwargs['step'] cannot be combined with "
                         f"sample_kwargs['nuts_sampler'] = {sampler!r}: nutpie runs its own NUTS "
                         "on every parameter; drop 'step', or use 'pymc'.")
    from pymc.vartypes import discrete_types

    discrete = [v.name for v in model.free_RVs if v.dtype in discrete_types]
    if discrete:
        raise ValueError(f"sample_kwargs['nuts_sampler'] = {sampler!r} samples continuous "
                         f"parameters only; this model has discrete ones ({', '.join(discrete)})"
                         ": use 'pymc'.")
    if importlib.util.find_spec("nutpie") is None:
        raise ImportError("sample_kwargs['nuts_sampler'] = 'nutpie' needs nutpie: pip install "
                          "'bayeval[nutpie]'.")


class _QuietPymc:
    """The ``pymc`` logger at ERROR while any sampler runs: the first to enter saves its level,
    the last to leave restores it, under a lock (samplers in threads overlap)."""

    def __init__(self):
        self.lock, self.running, self.level = threading.Lock(), 0, logging.NOTSET

    def __enter__(self):
        with self.lock:
            if not self.running:
                logger = logging.getLogger("pymc")
                self.level = logger.level
                logger.setLevel(logging.ERROR)
            self.running += 1

    def __exit__(self, *exc):
        with self.lock:
            self.running -= 1
            if not self.running:
                logging.getLogger("pymc").setLevel(self.level)


_QUIET = _QuietPymc()


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


def draws_intervals(draws: xr.DataArray, ci_prob: float, ci_kind: str) -> xr.Dataset:
    """Mean, sd and interval of draws (``chain``, ``draw``, ...) per coordinate.

    Parameters
    ----------
    draws : xarray.DataArray
        Dims ``chain``, ``draw`` and the estimand's.
    ci_prob : float
        Probability of the interval.
    ci_kind : {"eti", "hdi"}
        Equal-tailed or highest-density (ArviZ's ``eti``/``hdi``).

    Returns
    -------
    xarray.Dataset
        ``mean``, ``sd`` (ddof 1), ``lower`` and ``upper`` over the estimand's dims.

    Examples
    --------
    >>> import numpy as np
    >>> x = xr.DataArray(np.arange(8.0).reshape(2, 4), dims=("chain", "draw"))
    >>> {k: round(float(v), 3) for k, v in draws_intervals(x, 0.5, "eti").data_vars.items()}
    {'mean': 3.5, 'sd': 2.449, 'lower': 1.75, 'upper': 5.25}
    """
    import arviz as az

    interval = (az.eti if ci_kind == "eti" else az.hdi)(draws, prob=ci_prob)
    return xr.Dataset({
        "mean": draws.mean(SAMPLE_DIMS), "sd": draws.std(SAMPLE_DIMS, ddof=1),
        "lower": interval.sel(ci_bound="lower", drop=True),
        "upper": interval.sel(ci_bound="upper", drop=True)})


def draws_summary(draws: xr.DataArray, ci_prob: float, ci_kind: str) -> pd.DataFrame:
    """:func:`draws_intervals` with ArviZ's ``mcse_mean``, ``ess_bulk``, ``ess_tail`` (and
    ``r_hat`` with several chains), one row per coordinate (Vehtari et al. 2021).

    Examples
    --------
    >>> import numpy as np
    >>> x = xr.DataArray(np.arange(8.0).reshape(2, 4), dims=("chain", "draw"), name="theta")
    >>> list(draws_summary(x, 0.5, "eti").columns)
    ['mean', 'sd', 'lower', 'upper', 'mcse_mean', 'ess_bulk', 'ess_tail', 'r_hat']
    """
    import arviz as az

    ds = draws_intervals(draws, ci_prob, ci_kind)
    ds["mcse_mean"] = az.mcse(draws)
    ds["ess_bulk"] = az.ess(draws, method="bulk")
    ds["ess_tail"] = az.ess(draws, method="tail")
    if draws.sizes["chain"] > 1:  # R-hat compares chains; one chain of draws has none
        ds["r_hat"] = az.rhat(draws)
    if ds["mean"].ndim == 0:
        return pd.DataFrame({k: [float(v)] for k, v in ds.data_vars.items()},
                            index=pd.Index([draws.name], name="quantity"))
    order = [d for d in draws.dims if d in ds.dims]  # the estimand's order, not sorted
    return ds.to_dataframe(dim_order=order)[list(ds.data_vars)]


def add_log_densities(tree: xr.DataTree, model) -> xr.DataTree:
    """A copy of ``tree`` with the groups ``log_likelihood`` and ``log_prior`` that it lacks,
    computed by PyMC from ``model`` (for ArviZ's power-scaling sensitivity).

    Parameters
    ----------
    tree : xarray.DataTree
        What :func:`sample` returned, with a ``posterior``.
    model : pymc.Model
        The model that was sampled.

    Returns
    -------
    xarray.DataTree
        ``tree`` itself when it has both groups.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model() as model:
    ...     theta = pm.Beta("theta", 1, 1)
    ...     k = pm.Binomial("k", n=10, p=theta, observed=7)
    >>> tree = sample(model, 0, {"draws": 50, "tune": 50, "step": pm.Slice(model=model)})
    >>> sorted(set(add_log_densities(tree, model).children) - set(tree.children))
    ['log_likelihood', 'log_prior']
    """
    missing = [g for g in ("log_prior", "log_likelihood") if g not in tree.children]
    if not missing:
        return tree
    import pymc as pm

    tree = tree.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if "log_likelihood" in missing:
            pm.compute_log_likelihood(tree, model=model, progressbar=False)
        if "log_prior" in missing:
            pm.stats.compute_log_prior(tree, model=model, progressbar=False)
    return tree
