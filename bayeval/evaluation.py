"""`Evaluation`: the one result type of bayeval, an ``xr.DataTree`` with methods.

Groups of the tree:

* ``closed_form``: the fast path, a Dataset over the estimand's dimensions (``metric``, ``chunk``,
  ``estimator``, ``instance``...) with variables ``mean``, ``sd``, ``lower``, ``upper`` and
  method-specific extras (``p_undefined``, ``interval_mass``, the PMF as ``pmf_value``/``pmf_prob``
  over a ``support`` dimension where the law is discrete and exact);
* ``posterior``, ``posterior_predictive``, ``prior``, ``sample_stats``, ``observed_data``,
  ``log_likelihood``, ``log_prior``: as PyMC writes them, where a model was sampled.

The root attribute ``bayeval`` holds the metadata as JSON (method, variant, interval level and
kind, the estimand's draws, seed, versions, warnings), so that the tree is always writable to
netCDF and reads back identical.
"""

from __future__ import annotations

import functools
import json
import warnings
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from bayeval.check import compare
from bayeval.table import Table, table
from bayeval.validation import as_choice, as_ci_prob

__all__ = ["Evaluation", "load"]

SAMPLE_DIMS = ("chain", "draw")
CI_KINDS = ("eti", "hdi")
#: thresholds of the MCMC diagnostics (Vehtari et al. 2021; Betancourt 2016)
RHAT_MAX, ESS_MIN, BFMI_MIN = 1.01, 400.0, 0.3
#: power-scaling sensitivity above this is flagged (Kallioinen et al. 2024)
PSENSE_THRESHOLD = 0.05
_VERSIONS = ("bayeval", "pymc", "pytensor", "arviz", "numpy", "scipy", "xarray")


@functools.cache
def _versions() -> dict[str, str]:
    return {pkg: version(pkg) for pkg in _VERSIONS}


def _interval_label(ci_prob: float, ci_kind: str) -> str:
    kind = "equal-tailed" if ci_kind == "eti" else "highest-density"
    return f"{100 * ci_prob:g}% {kind} intervals ({ci_kind})"


_CLASSES: dict[str, type[Evaluation]] = {}
"""Subclasses by method name, so that :func:`load` gives back the class that was saved."""


class Evaluation:
    """Result of an evaluation: fast path and/or posterior draws, with checks and diagnostics.

    Build one with :meth:`Evaluation.create` (the methods do); read one back with :func:`load`.

    Attributes
    ----------
    tree : xr.DataTree
        Everything the evaluation holds; see the module docstring for its groups.
    model : pm.Model or None
        The PyMC model that was sampled, when there was one in this session (not saved).
    """

    def __init_subclass__(cls, *, method: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if method:
            _CLASSES[method] = cls

    def __init__(self, tree: xr.DataTree, model: Any = None):
        if "bayeval" not in tree.attrs:
            raise ValueError("tree is not a bayeval Evaluation: its root has no 'bayeval' "
                             "attribute.")
        self.tree = tree
        self.model = model

    @classmethod
    def create(cls, *, method: str, variant: str, closed_form: xr.Dataset | None = None,
               draws: xr.DataTree | None = None, estimand: str | None = None,
               ci_prob: float = 0.95, ci_kind: str = "eti", iid_draws: bool = False,
               random_seed: Any = None, description: str = "", assumptions: str = "",
               warnings: list[str] | tuple[str, ...] = (), data: xr.Dataset | None = None,
               model: Any = None, **extra: Any) -> Evaluation:
        """Assemble an Evaluation.

        Parameters
        ----------
        method, variant : str
            The method (``"cbpe"``, ``"judge"``...) and what ran (``"exact"``, ``"pymc"``,
            ``"both"``, an estimator's name...).
        closed_form : xr.Dataset, optional
            The fast path's results, with at least ``mean``, ``sd``, ``lower``, ``upper``.
        draws : xr.DataTree, optional
            What PyMC returned (posterior, posterior_predictive, prior, sample_stats...).
        estimand : str, optional
            ``"group/variable"`` of the draws that estimate the same quantity as the closed form
            (same dimensions plus ``chain`` and ``draw``), e.g. ``"posterior/theta"``.
        iid_draws : bool
            True when the draws are independent (forward sampling), so that Monte-Carlo errors
            use N instead of ArviZ's effective sample size.
        random_seed, description, assumptions, warnings, extra
            Kept in the metadata for the summary and the report.
        data : xr.Dataset, optional
            A summary of the input data (sizes, class balance...), kept as group ``data``.
        """
        ci_prob = as_ci_prob(ci_prob)
        ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
        if closed_form is None and draws is None:
            raise ValueError("an Evaluation needs a closed_form, draws or both.")
        if draws is not None and estimand is None:
            raise ValueError("estimand ('group/variable' of the draws) is required with draws.")
        groups: dict[str, Any] = {}
        if draws is not None:
            groups.update({k: v.to_dataset() for k, v in draws.children.items()})
        if closed_form is not None:
            groups["closed_form"] = closed_form
        if data is not None:
            groups["data"] = data
        meta = {
            "method": method, "variant": variant, "ci_prob": ci_prob, "ci_kind": ci_kind,
            "estimand": estimand, "iid_draws": bool(iid_draws),
            "random_seed": (int(random_seed) if isinstance(random_seed, int | np.integer)
                            else None if random_seed is None else repr(random_seed)),
            "description": description, "assumptions": assumptions,
            "warnings": list(warnings), "versions": _versions(),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"), **extra,
        }
        tree = xr.DataTree.from_dict(groups)
        tree.attrs["bayeval"] = json.dumps(meta)
        return cls(tree, model=model)

    # ----------------------------------------------------------------------------- metadata
    @property
    def meta(self) -> dict[str, Any]:
        """The metadata: method, variant, ci_prob, ci_kind, estimand, seed, versions, warnings."""
        return json.loads(self.tree.attrs["bayeval"])

    @property
    def ci_prob(self) -> float:
        return self.meta["ci_prob"]

    @property
    def ci_kind(self) -> str:
        return self.meta["ci_kind"]

    @property
    def warnings(self) -> list[str]:
        return self.meta["warnings"]

    def _group(self, name: str) -> xr.Dataset | None:
        return self.tree[name].to_dataset() if name in self.tree.children else None

    @property
    def closed_form(self) -> xr.Dataset | None:
        """The fast path's Dataset, or None if only a model was sampled."""
        return self._group("closed_form")

    @property
    def draws(self) -> xr.DataArray | None:
        """Draws of the estimand, dims ``(chain, draw, ...)``, or None if no model was sampled."""
        estimand = self.meta["estimand"]
        if estimand is None:
            return None
        group, var = estimand.split("/")
        return self.tree[group][var]

    @property
    def has_mcmc(self) -> bool:
        return "sample_stats" in self.tree.children

    # ------------------------------------------------------------------------------ summary
    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """One row per estimand coordinate: ``mean``, ``sd``, ``lower``, ``upper`` and extras.

        Parameters
        ----------
        source : {"closed_form", "draws"}, optional
            Where the numbers come from; by default the draws where a model was sampled, else
            the closed form.
        ci_prob, ci_kind : optional
            Interval level and kind for draws (the closed form's are fixed when it is computed).
        """
        default = "draws" if self.draws is not None else "closed_form"
        source = as_choice(source or default, "source", ("closed_form", "draws"))
        if source == "closed_form":
            cf = self.closed_form
            if cf is None:
                raise ValueError("source='closed_form' but this evaluation has no fast path; "
                                 "run the method with method='both' or a fast path.")
            if ci_prob not in (None, self.ci_prob) or ci_kind not in (None, self.ci_kind):
                raise ValueError("ci_prob and ci_kind of the closed form are fixed when it is "
                                 "computed; rerun the method with the ones you want.")
            dims = cf["mean"].dims
            cols = [v for v in ("mean", "sd", "lower", "upper") if v in cf]
            cols += [v for v in cf.data_vars if v not in cols and cf[v].dims == dims]
            frame = (cf[cols].to_dataframe()[cols] if dims else
                     pd.DataFrame({c: [cf[c].item()] for c in cols},
                                  index=pd.Index([self.meta["method"]], name="quantity")))
            ci_prob, ci_kind = self.ci_prob, self.ci_kind
        else:
            if self.draws is None:
                raise ValueError("source='draws' but no model was sampled; run the method with "
                                 "method='pymc' or 'both'.")
            ci_prob = as_ci_prob(self.ci_prob if ci_prob is None else ci_prob)
            ci_kind = as_choice(ci_kind or self.ci_kind, "ci_kind", CI_KINDS)
            frame = _draws_summary(self.draws, ci_prob, ci_kind)
        caption = (f"{self.meta['method']} ({self.meta['variant']}), {source.replace('_', ' ')}:"
                   f" {_interval_label(ci_prob, ci_kind)}")
        return table(frame, caption, ci_prob=ci_prob, ci_kind=ci_kind, source=source)

    # -------------------------------------------------------------------------------- check
    def check(self) -> Table:
        """Compare the fast path with the draws (see :mod:`bayeval.check`), per coordinate.

        Returns a Table indexed by the estimand's coordinates and ``test`` with columns ``fast``,
        ``draws``, ``statistic``, ``tolerance``, ``n_eff``, ``passed``; ``attrs["passed"]`` is
        True when every test passed.
        """
        cf, draws = self.closed_form, self.draws
        if cf is None or draws is None:
            raise ValueError("check() needs both a fast path and draws; run the method with "
                             "method='both'.")
        dims = [d for d in draws.dims if d not in SAMPLE_DIMS]
        stacked = draws.stack(_item=dims) if dims else draws.expand_dims(_item=[0])
        iid = self.meta["iid_draws"]
        frames = []
        for key in stacked["_item"].values:
            sel = (dict(zip(dims, key if isinstance(key, tuple) else (key,), strict=True))
                   if dims else {})
            x = stacked.sel(_item=key).transpose(*SAMPLE_DIMS).values
            point = cf.sel(sel) if sel else cf
            if np.isnan(x).any() or not np.isfinite(float(point["mean"])):
                continue  # an undefined metric (zero_division=nan): nothing to compare
            pmf = None
            if "pmf_prob" in point and np.isfinite(point["pmf_prob"].values).any():
                keep = np.isfinite(point["pmf_prob"].values)
                pmf = (point["pmf_value"].values[keep], point["pmf_prob"].values[keep])
            mass = float(point["interval_mass"]) if "interval_mass" in point else self.ci_prob
            rows = compare(x, mean=float(point["mean"]), sd=float(point["sd"]),
                           interval=(float(point["lower"]), float(point["upper"])),
                           interval_mass=mass, pmf=pmf, iid=iid)
            frames.append(rows.assign(**sel).set_index(dims, append=True) if dims else rows)
        if not frames:
            raise ValueError("check(): every coordinate of the estimand is undefined (NaN).")
        frame = pd.concat(frames)
        if dims:
            frame = frame.reorder_levels([*dims, "test"])
        passed = bool(frame["passed"].all())
        caption = (f"fast path vs {'independent' if iid else 'MCMC'} draws, 4-sigma Monte-Carlo "
                   f"tolerances: {'all passed' if passed else 'FAILED'}")
        return table(frame, caption, passed=passed)

    # -------------------------------------------------------------------------- diagnostics
    def diagnostics(self) -> Table:
        """MCMC diagnostics: R-hat, bulk/tail ESS per posterior quantity, divergences, BFMI.

        Returns a Table indexed by ``(diagnostic, quantity)`` with columns ``value``,
        ``threshold`` and ``ok``; ``attrs["ok"]`` is True when all are within thresholds.
        """
        if not self.has_mcmc:
            raise ValueError(f"diagnostics() needs MCMC draws; this evaluation ran "
                             f"variant={self.meta['variant']!r} without MCMC.")
        post = self.tree["posterior"].to_dataset()
        rows = []
        for name, fn, thr, ok in (
            ("r_hat", lambda d: az.rhat(d), f"<= {RHAT_MAX}", lambda v: v <= RHAT_MAX),
            ("ess_bulk", lambda d: az.ess(d, method="bulk"), f">= {ESS_MIN:g}",
             lambda v: v >= ESS_MIN),
            ("ess_tail", lambda d: az.ess(d, method="tail"), f">= {ESS_MIN:g}",
             lambda v: v >= ESS_MIN),
        ):
            for var, da in post.data_vars.items():
                values = fn(da)
                for label, v in _flatten(var, values):
                    rows.append((name, label, v, thr, bool(ok(v))))
        stats = self.tree["sample_stats"].to_dataset()
        if "diverging" in stats:
            n_div = int(stats["diverging"].sum())
            rows.append(("divergences", "sampler", float(n_div), "== 0", n_div == 0))
        if "energy" in stats:
            bfmi = np.atleast_1d(az.bfmi(self.tree)["energy"].values)
            for c, v in enumerate(bfmi):
                rows.append(("bfmi", f"chain {c}", float(v), f">= {BFMI_MIN}",
                             bool(v >= BFMI_MIN)))
        frame = pd.DataFrame(rows, columns=["diagnostic", "quantity", "value", "threshold", "ok"])
        frame = frame.set_index(["diagnostic", "quantity"])
        all_ok = bool(frame["ok"].all())
        caption = ("MCMC diagnostics: " + ("all within thresholds" if all_ok else
                                           "SOME OUTSIDE THRESHOLDS, do not trust the draws"))
        return table(frame, caption, ok=all_ok)

    # -------------------------------------------------------------------------- sensitivity
    def sensitivity(self, var_names: list[str] | None = None) -> Table:
        """Power-scaling prior and likelihood sensitivity (ArviZ ``psense``).

        Computes the ``log_likelihood`` and ``log_prior`` groups from the model if they are
        missing. A component whose log density is constant over the draws (a flat prior) cannot
        move the posterior under power scaling: its sensitivity is 0.
        """
        if not self.has_mcmc:
            raise ValueError("sensitivity() needs posterior draws from MCMC; this evaluation "
                             f"ran variant={self.meta['variant']!r}.")
        self._add_log_densities()
        post = self.tree["posterior"].to_dataset()
        var_names = var_names or [v for v in post.data_vars if post[v].dtype.kind == "f"]
        parts = {}
        for component, group in (("prior", "log_prior"), ("likelihood", "log_likelihood")):
            total = sum(da.sum([d for d in da.dims if d not in SAMPLE_DIMS])
                        for da in self.tree[group].to_dataset().data_vars.values())
            if float(np.ptp(np.asarray(total))) == 0.0:
                parts[component] = xr.zeros_like(post[var_names].isel(chain=0, draw=0, drop=True))
            else:
                parts[component] = az.psense(self.tree, var_names=var_names, group=component)
        rows = []
        for var in var_names:
            prior = dict(_flatten(var, parts["prior"][var]))
            like = dict(_flatten(var, parts["likelihood"][var]))
            for label in prior:
                rows.append((label, prior[label], like[label]))
        frame = pd.DataFrame(rows, columns=["quantity", "prior", "likelihood"]).set_index(
            "quantity")
        frame["diagnosis"] = [_diagnose(p, lk) for p, lk in zip(frame["prior"],
                                                                frame["likelihood"], strict=True)]
        caption = (f"power-scaling sensitivity (threshold {PSENSE_THRESHOLD}): "
                   "prior above it = informative prior; likelihood below it = weak data")
        return table(frame, caption, threshold=PSENSE_THRESHOLD)

    # ------------------------------------------------------------------ figures and report
    def plot(self, kind: str | None = None, **kwargs):
        """One figure of this evaluation; see :func:`bayeval.plots.plot` for the kinds."""
        from bayeval.plots import plot

        return plot(self, kind, **kwargs)

    def report(self, path, **kwargs):
        """Write a self-contained HTML report; see :func:`bayeval.report.report`."""
        from bayeval.report import report

        return report(self, path, **kwargs)

    def _add_log_densities(self) -> None:
        missing = [g for g in ("log_prior", "log_likelihood") if g not in self.tree.children]
        if not missing:
            return
        if self.model is None:
            raise ValueError("sensitivity() needs the log_prior and log_likelihood groups; they "
                             "were not saved and the PyMC model is not attached (an evaluation "
                             "read from disk). Rerun the method to get them.")
        import pymc as pm

        tree = self.tree.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            if "log_likelihood" in missing:
                pm.compute_log_likelihood(tree, model=self.model, progressbar=False)
            if "log_prior" in missing:
                pm.stats.compute_log_prior(tree, model=self.model, progressbar=False)
        self.tree = tree

    # ------------------------------------------------------------------------------ storage
    def to_netcdf(self, path) -> str:
        """Write the whole tree (every group and attribute) to ``path`` with h5netcdf."""
        self.tree.to_netcdf(path, engine="h5netcdf")
        return str(path)

    def equals(self, other: Evaluation) -> bool:
        """True when both trees hold identical groups, values and attributes."""
        return isinstance(other, Evaluation) and self.tree.identical(other.tree)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Evaluation) and self.equals(other)

    __hash__ = None

    def __repr__(self) -> str:
        meta = self.meta
        groups = ", ".join(self.tree.children)
        lines = [f"<bayeval.Evaluation {meta['method']} ({meta['variant']}); groups: {groups}>",
                 repr(self.summary())]
        lines += [f"warning: {w}" for w in meta["warnings"]]
        return "\n".join(lines)


def load(path) -> Evaluation:
    """Read an Evaluation written by :meth:`Evaluation.to_netcdf`, as the class that wrote it."""
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree.close()
    if "bayeval" not in tree.attrs:
        raise ValueError(f"{path} is not a bayeval Evaluation: its root has no 'bayeval' "
                         "attribute.")
    return _CLASSES.get(json.loads(tree.attrs["bayeval"])["method"], Evaluation)(tree)


def _flatten(var: str, values: xr.DataArray):
    """(label, value) pairs of a DataArray, labels like ``theta[accuracy]``."""
    if values.ndim == 0:
        yield var, float(values)
        return
    stacked = values.stack(_i=values.dims)
    for key, v in zip(stacked["_i"].values, stacked.values, strict=True):
        key = key if isinstance(key, tuple) else (key,)
        yield f"{var}[{', '.join(map(str, key))}]", float(v)


def _diagnose(prior: float, likelihood: float) -> str:
    if prior >= PSENSE_THRESHOLD and likelihood >= PSENSE_THRESHOLD:
        return "prior-data conflict"
    if prior >= PSENSE_THRESHOLD:
        return "strong prior / weak likelihood"
    return "ok"


def _draws_summary(draws: xr.DataArray, ci_prob: float, ci_kind: str) -> pd.DataFrame:
    """mean, sd, interval, MCSE, ESS (and R-hat with several chains), one row per coordinate."""
    interval = (az.eti if ci_kind == "eti" else az.hdi)(draws, prob=ci_prob)
    ds = xr.Dataset({
        "mean": draws.mean(SAMPLE_DIMS), "sd": draws.std(SAMPLE_DIMS, ddof=1),
        "lower": interval.sel(ci_bound="lower", drop=True),
        "upper": interval.sel(ci_bound="upper", drop=True),
        "mcse_mean": az.mcse(draws), "ess_bulk": az.ess(draws, method="bulk"),
        "ess_tail": az.ess(draws, method="tail"),
    })
    if draws.sizes["chain"] > 1:  # R-hat compares chains; one chain of draws has none
        ds["r_hat"] = az.rhat(draws)
    if ds["mean"].ndim == 0:
        return pd.DataFrame({k: [float(v)] for k, v in ds.data_vars.items()},
                            index=pd.Index([draws.name], name="quantity"))
    return ds.to_dataframe()[list(ds.data_vars)]
