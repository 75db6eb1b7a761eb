"""Sampling a method's PyMC model with bayeval's defaults (user settings pass through
untouched; PyMC's NUTS or nutpie's), and the summaries of draws that
:class:`~bayeval.evaluation.Evaluation` shows.

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
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["DEFAULTS", "SAMPLERS", "SAMPLE_DIMS", "add_log_densities", "draws_intervals",
           "draws_summary", "progress", "sample", "stage"]

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


def sample(model, random_seed: int | None, sample_kwargs: dict[str, Any] | None = None, *,
           defaults: dict[str, Any] | None = None) -> xr.DataTree:
    """``pm.sample`` on ``model`` with :data:`DEFAULTS` updated by a model's own ``defaults``,
    then by the user's ``sample_kwargs``.

    Both samplers of :data:`SAMPLERS` run the No-U-Turn sampler (Hoffman & Gelman 2014) on
    the model's unconstrained parameters with a diagonal mass matrix adapted while tuning:
    PyMC's own, whose inverse mass matrix is the draws' variance, or nutpie's
    (``sample_kwargs={"nuts_sampler": "nutpie"}``), whose diagonal minimises the Fisher
    divergence to a standard normal, :math:`M^{-1}_{ii} = \\sqrt{\\mathrm{Var}(x_i) /
    \\mathrm{Var}(\\partial_i \\log p(x))}` over draws and their gradients (Seyboldt, Carlson
    & Carpenter 2026). Either leaves ``diverging`` in ``sample_stats``, and gives the same
    draws again for the same seed.

    nutpie compiles each model anew with numba (seconds, against its tens of milliseconds of
    sampling); here a model identical to one of the last 8 it sampled in the process (the same
    graphs of the log density, parameters and deterministics, data, names and coordinates)
    reuses that compiled model, with the draws ``pm.sample(nuts_sampler="nutpie")`` gives.
    PyMC's own NUTS compiles every model it is given.

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
        ``nuts_sampler``...); it overrides :data:`DEFAULTS` and ``defaults``.
    defaults : dict, optional
        The model's own settings (e.g. more draws or a higher ``target_accept`` where the
        package's defaults miss its diagnostics); they override :data:`DEFAULTS`.

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

    kwargs = {**DEFAULTS, **(defaults or {}), **(sample_kwargs or {})}
    _check_sampler(model, kwargs)
    with _QUIET:
        if kwargs["nuts_sampler"] == "nutpie" and not kwargs["progressbar"] and set(kwargs) <= {
                *DEFAULTS, "target_accept", "max_treedepth", "discard_tuned_samples"}:
            return _sample_nutpie(model, random_seed, kwargs)  # only with progress off
        with stage(_label("NUTS: compiling and sampling", model)):
            return pm.sample(model=model, random_seed=random_seed, **kwargs)


def _label(step: str, model) -> str:
    """A progress line naming the model by its free variables (only with progress on)."""
    if not DEFAULTS["progressbar"]:
        return step
    names = [v.name for v in model.free_RVs]
    if len(names) > 4:
        return f"{step} the model of {', '.join(names[:3])} and {len(names) - 3} more variables"
    return f"{step} the model of {', '.join(names)}"


def _sample_nutpie(model, random_seed, kwargs: dict[str, Any]) -> xr.DataTree:
    """What ``pm.sample(nuts_sampler="nutpie")`` does (the same seeds, settings and groups, so
    the same draws), on the compiled model of :func:`_compiled_nutpie`."""
    import nutpie
    from pymc.backends.arviz import patch_nutpie_idata
    from pymc.util import get_random_generator

    compiled = _compiled_nutpie(model)
    rngs = get_random_generator(random_seed).spawn(kwargs["chains"])
    seeds = [rng.integers(2**30) for rng in rngs]  # pm.sample's, of which nutpie takes the first
    nuts = {"target_accept": kwargs["target_accept"]} if "target_accept" in kwargs else {}
    if "max_treedepth" in kwargs:
        nuts["maxdepth"] = kwargs["max_treedepth"]
    start = time.time()
    tree = nutpie.sample(compiled, draws=kwargs["draws"], tune=max(kwargs["tune"], 1),
                         chains=kwargs["chains"], cores=kwargs["cores"], seed=int(seeds[0]),
                         save_warmup=not kwargs.get("discard_tuned_samples", True),
                         progress_bar=False, **nuts)
    patch_nutpie_idata(tree, model, sampling_time=time.time() - start)
    return tree


class _Compiled:
    """A model compiled by nutpie, with what decides whether another model is the same: the
    graphs of its log density, parameters and deterministics in terms of the values nutpie
    samples (the unconstrained parameters), their non-constant inputs by name, those inputs'
    values (data, dimension lengths), the variables' names, dimensions and coordinates, and
    their initial values where the model gives numbers."""

    def __init__(self, model):
        from pytensor.compile.sharedvalue import SharedVariable
        from pytensor.graph.basic import Constant, clone
        from pytensor.graph.traversal import graph_inputs

        outputs = [model.logp(), *model.replace_rvs_by_values(
            [*model.free_RVs, *model.deterministics])]
        roots = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
        # a copy: compiling rewrites some of the model's graphs in place
        self.outputs = clone(roots, outputs, copy_inputs=False)[1]
        self.inputs = {v.name: v for v in roots}
        given = {rv.name: v for rv, v in model.rvs_to_initial_values.items() if v is not None}
        # initial values that are numbers (compared as data); strategies or graphs are not
        self.initvals = {k: np.asarray(v) for k, v in given.items()
                         if isinstance(v, np.ndarray | float | int)}
        self.cacheable = (len(self.inputs) == len(roots) and None not in self.inputs
                          and len(self.initvals) == len(given))
        self.values = {k: v.get_value() for k, v in self.inputs.items()
                       if isinstance(v, SharedVariable)}
        self.names = tuple(tuple(v.name for v in group) for group in (
            model.free_RVs, model.deterministics, model.observed_RVs, model.data_vars))
        self.layout = (model.named_vars_to_dims, {k: tuple(v) if v is not None else None
                                                  for k, v in model.coords.items()},
                       [model.rvs_to_transforms[v] is None for v in model.free_RVs])
        self.compiled = None

    def same(self, other: _Compiled) -> bool:
        from pytensor.graph.basic import equal_computations

        if not (self.cacheable and other.cacheable and self.names == other.names
                and self.inputs.keys() == other.inputs.keys() and self.layout == other.layout
                and _same_arrays(self.values, other.values)
                and _same_arrays(self.initvals, other.initvals)):
            return False
        names = list(self.inputs)
        return equal_computations(self.outputs, other.outputs,
                                  in_xs=[self.inputs[k] for k in names],
                                  in_ys=[other.inputs[k] for k in names])


def _same_arrays(a: dict, b: dict) -> bool:
    """Whether two dicts of arrays have the same keys, shapes, dtypes and values (NaN equal)."""
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        v, w = np.asarray(v), np.asarray(b[k])
        if v.shape != w.shape or v.dtype != w.dtype or not np.array_equal(
                v, w, equal_nan=v.dtype.kind in "fc"):
            return False
    return True


#: nutpie's compiled models of the last models sampled with it in this process (nutpie builds
#: its numba functions anew for every model, seconds against its tens of milliseconds of
#: sampling): a model with the same graphs, data and coordinates reuses one
_NUTPIE_CACHE: list[_Compiled] = []
_NUTPIE_CACHE_SIZE = 8
_NUTPIE_LOCK = threading.Lock()


def _compiled_nutpie(model):
    """nutpie's compiled ``model``: a cached one of an identical model, else compiled now."""
    import nutpie

    entry = _Compiled(model)
    with _NUTPIE_LOCK:
        for i, cached in enumerate(_NUTPIE_CACHE):
            if entry.same(cached):
                _NUTPIE_CACHE.append(_NUTPIE_CACHE.pop(i))  # the most recently used last
                return cached.compiled
    entry.compiled = nutpie.compile_pymc_model(model, backend="numba")
    if entry.cacheable:
        with _NUTPIE_LOCK:
            _NUTPIE_CACHE.append(entry)
            del _NUTPIE_CACHE[:-_NUTPIE_CACHE_SIZE]
    return entry.compiled


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


@contextmanager
def stage(label: str) -> Iterator[None]:
    """One step of long work (a compilation, a check's reference posterior), reported on stderr
    when :data:`DEFAULTS` has ``progressbar`` on: ``label ...`` when it starts, its wall time
    when it ends.

    Examples
    --------
    >>> with stage("work"):  # progress off: nothing is written
    ...     total = sum(range(10))
    >>> total
    45
    """
    if not DEFAULTS["progressbar"]:
        yield
        return
    start = time.perf_counter()
    sys.stderr.write(f"{label} ...\n")
    sys.stderr.flush()
    yield
    sys.stderr.write(f"{label}: done in {time.perf_counter() - start:.1f} s\n")
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
