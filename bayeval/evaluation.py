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

:meth:`Evaluation.plot` and :meth:`Evaluation.report` dispatch through the display registry of
:mod:`bayeval.display`, which :mod:`bayeval.plots` and :mod:`bayeval.report` fill when
``import bayeval`` imports them: this module imports neither.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayeval import files
from bayeval.check import ESS_MIN, RHAT_MAX, compare, sampler_tests
from bayeval.display import DISPLAYS
from bayeval.sampling import (
    SAMPLE_DIMS,
    add_log_densities,
    draws_intervals,
    draws_summary,
    stage,
)
from bayeval.table import Table, table
from bayeval.validation import as_choice, as_ci_prob

__all__ = ["Evaluation", "draws_intervals", "load"]

CI_KINDS = ("eti", "hdi")
#: E-BFMI threshold of the MCMC diagnostics (Betancourt 2016); R-hat and ESS thresholds:
#: :data:`bayeval.check.RHAT_MAX`, :data:`bayeval.check.ESS_MIN` (Vehtari et al. 2021)
BFMI_MIN = 0.3
#: power-scaling sensitivity above this is flagged (Kallioinen et al. 2024)
PSENSE_THRESHOLD = 0.05
_VERSIONS = ("bayeval", "pymc", "pytensor", "arviz", "numpy", "scipy", "xarray")


@functools.cache
def _versions() -> dict[str, str]:
    return {pkg: version(pkg) for pkg in _VERSIONS}


def _interval_label(ci_prob: float, ci_kind: str, named: str | None = None) -> str:
    """The caption's intervals: equal-tailed or highest-density (of a law, or of draws), or a
    frequentist kind that a closed form names (``named``: e.g. ``"wald"``)."""
    if named is not None:
        return f"{100 * ci_prob:g}% {'Wald' if named == 'wald' else named} confidence intervals"
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

    Examples
    --------
    The methods build Evaluations; here one is assembled by hand from the conjugate posterior
    of an accuracy (45 of 60 rows right, Beta(2, 2) prior: Beta(47, 17)) and independent draws
    of it standing in for MCMC draws:

    >>> import numpy as np, xarray as xr
    >>> from scipy import stats
    >>> from bayeval.methods.labelled import posterior
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.beta(47, 17, size=(2, 1000, 1))  # 45 of 60 right, Beta(2, 2) prior
    >>> dims = ("chain", "draw", "metric")
    >>> draws = xr.DataTree.from_dict({
    ...     "posterior": xr.Dataset({"theta": (dims, theta)}, coords={"metric": ["accuracy"]}),
    ...     "sample_stats": xr.Dataset({"diverging": (dims[:2], np.zeros((2, 1000), bool)),
    ...                                 "energy": (dims[:2], rng.normal(size=(2, 1000)))}),
    ...     "log_prior": xr.Dataset({"theta": (dims, stats.beta(2, 2).logpdf(theta))}),
    ...     "log_likelihood": xr.Dataset({"k": (dims, stats.binom(60, theta).logpmf(45))}),
    ... })
    >>> closed = posterior([45], [60], metrics=["accuracy"], prior=(2, 2))
    >>> ev = Evaluation.create(method="labelled", variant="both", closed_form=closed,
    ...                        draws=draws, estimand="posterior/theta", iid_draws=True)
    >>> ev.summary()[["mean", "sd", "lower", "upper"]].round(4)  # doctest: +NORMALIZE_WHITESPACE
    labelled (both), draws: 95% equal-tailed intervals (eti)
                mean      sd   lower   upper
    metric
    accuracy  0.7309  0.0547  0.6164  0.8293
    >>> bool(ev.check().attrs["passed"]), bool(ev.diagnostics().attrs["ok"])
    (True, True)
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
            Kept in the metadata for the summary and the report; an ``interval_kind`` among
            ``extra`` (e.g. ``"wald"``) names a frequentist closed form's intervals in the
            summary's caption.
        data : xr.Dataset, optional
            A summary of the input data (sizes, class balance...), kept as group ``data``.
        ci_prob, ci_kind
            Interval level and kind of the closed form, and the default of :meth:`summary`.
        model : pm.Model, optional
            The sampled model, kept in the session for :meth:`sensitivity` (not saved).

        Returns
        -------
        Evaluation
            Of the class ``create`` is called on.

        Raises
        ------
        ValueError
            Without ``closed_form`` and ``draws`` (unless ``failed`` lists the groups of a
            gathered evaluation, all failed), or with ``draws`` but no ``estimand``.

        Examples
        --------
        >>> import xarray as xr
        >>> cf = xr.Dataset({"mean": 0.75, "sd": 0.05, "lower": 0.64, "upper": 0.84})
        >>> ev = Evaluation.create(method="custom", variant="exact", closed_form=cf)
        >>> ev.summary()  # doctest: +NORMALIZE_WHITESPACE
        custom (exact), closed form: 95% equal-tailed intervals (eti)
                  mean    sd  lower  upper
        quantity
        custom    0.75  0.05   0.64   0.84
        """
        ci_prob = as_ci_prob(ci_prob)
        ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
        if closed_form is None and draws is None and not extra.get("failed"):
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
        """The metadata: method, variant, ci_prob, ci_kind, estimand, seed, versions, warnings.

        A new dict on every access, read from the tree's ``bayeval`` attribute (JSON).

        Examples
        --------
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> ev.meta["method"], ev.meta["variant"], ev.meta["estimand"]
        ('labelled', 'exact', None)
        """
        return json.loads(self.tree.attrs["bayeval"])

    @property
    def ci_prob(self) -> float:
        """Probability of the intervals (``ci_prob`` of the method that ran).

        Examples
        --------
        >>> import bayeval as be
        >>> be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1], ci_prob=0.9).ci_prob
        0.9
        """
        return self.meta["ci_prob"]

    @property
    def ci_kind(self) -> str:
        """Kind of the intervals: ``"eti"`` (equal-tailed) or ``"hdi"`` (highest-density).

        Examples
        --------
        >>> import bayeval as be
        >>> be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1], ci_kind="hdi").ci_kind
        'hdi'
        """
        return self.meta["ci_kind"]

    @property
    def warnings(self) -> list[str]:
        """What the method warned about (assumptions in doubt, undefined metrics...).

        Examples
        --------
        >>> import xarray as xr
        >>> cf = xr.Dataset({"mean": 0.5, "sd": 0.1, "lower": 0.3, "upper": 0.7})
        >>> Evaluation.create(method="custom", variant="exact", closed_form=cf,
        ...                   warnings=["only 12 rows"]).warnings
        ['only 12 rows']
        """
        return self.meta["warnings"]

    def _group(self, name: str) -> xr.Dataset | None:
        return self.tree[name].to_dataset() if name in self.tree.children else None

    @property
    def closed_form(self) -> xr.Dataset | None:
        """The fast path's Dataset, or None if only a model was sampled.

        Examples
        --------
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> ev.closed_form["mean"].sel(metric="accuracy").item()  # Beta(1 + 5, 1 + 1)
        0.75
        """
        return self._group("closed_form")

    @property
    def draws(self) -> xr.DataArray | None:
        """Draws of the estimand, dims ``(chain, draw, ...)``, or None if no model was sampled.

        Examples
        --------
        The fast path alone has no draws (see the class docstring for an Evaluation with some):

        >>> import bayeval as be
        >>> be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1]).draws is None
        True
        """
        estimand = self.meta["estimand"]
        if estimand is None:
            return None
        group, var = estimand.split("/")
        return self.tree[group][var]

    @property
    def has_mcmc(self) -> bool:
        """Whether MCMC ran (the tree has ``sample_stats``): :meth:`diagnostics` and
        :meth:`sensitivity` need it.

        Examples
        --------
        >>> import bayeval as be
        >>> be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1]).has_mcmc
        False
        """
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

        Returns
        -------
        Table
            A pandas DataFrame indexed by the estimand's coordinates (``metric``...); from draws
            also ``mcse_mean``, ``ess_bulk``, ``ess_tail`` and ``r_hat`` (several chains). Its
            caption and ``attrs`` state the source and the interval level and kind.

        Raises
        ------
        ValueError
            If the source is missing, or ``ci_prob``/``ci_kind`` are changed for the closed form.

        Examples
        --------
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> ev.summary().round(4)  # doctest: +NORMALIZE_WHITESPACE
        labelled (exact), closed form: 95% equal-tailed intervals (eti)
                       mean      sd   lower   upper  alpha  beta  successes  trials
        metric
        accuracy     0.7500  0.1443  0.4213  0.9633    6.0   2.0          5       6
        precision    0.8000  0.1633  0.3976  0.9937    4.0   1.0          3       3
        recall       0.6667  0.1782  0.2836  0.9473    4.0   2.0          3       4
        specificity  0.7500  0.1936  0.2924  0.9916    3.0   1.0          2       2
        npv          0.6000  0.2000  0.1941  0.9324    3.0   2.0          2       3
        """
        if self.draws is None and self.closed_form is None:
            raise ValueError("this evaluation holds no result: every group failed ("
                             + "; ".join(self.warnings) + ").")
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
            frame = draws_summary(self.draws, ci_prob, ci_kind)
        named = self.meta.get("interval_kind") if source == "closed_form" else None
        caption = (f"{self.meta['method']} ({self.meta['variant']}), {source.replace('_', ' ')}:"
                   f" {_interval_label(ci_prob, ci_kind, named)}")
        return table(frame, caption, ci_prob=ci_prob, ci_kind=ci_kind, source=source)

    # -------------------------------------------------------------------------------- check
    def check(self) -> Table:
        """Compare the fast path with the draws (see :mod:`bayeval.check`), per coordinate.

        After an MCMC run the sampler's own tests follow (:func:`bayeval.check.sampler_tests`:
        worst R-hat, bulk and tail ESS over the whole posterior, divergences), under the
        coordinate ``"sampler"``: the Monte-Carlo tolerances assume converged chains, so a run
        that fails them fails the check, and the caption names what failed.

        Returns
        -------
        Table
            Indexed by the estimand's coordinates and ``test``, with columns ``fast``,
            ``draws``, ``statistic``, ``tolerance``, ``n_eff``, ``passed``; ``attrs["passed"]``
            is True when every test passed. Coordinates where the metric is undefined are left
            out.

        Raises
        ------
        ValueError
            Without both a fast path and draws, or if every coordinate is undefined.

        Examples
        --------
        The conjugate posterior of an accuracy against independent draws of it:

        >>> import numpy as np, xarray as xr
        >>> from scipy import stats
        >>> from bayeval.methods.labelled import posterior
        >>> rng = np.random.default_rng(0)
        >>> theta = rng.beta(47, 17, size=(2, 1000, 1))  # 45 of 60 right, Beta(2, 2) prior
        >>> dims = ("chain", "draw", "metric")
        >>> draws = xr.DataTree.from_dict({
        ...     "posterior": xr.Dataset({"theta": (dims, theta)}, coords={"metric": ["accuracy"]}),
        ... })
        >>> closed = posterior([45], [60], metrics=["accuracy"], prior=(2, 2))
        >>> ev = Evaluation.create(method="labelled", variant="both", closed_form=closed,
        ...                        draws=draws, estimand="posterior/theta", iid_draws=True)
        >>> ev.check()[["fast", "draws", "tolerance", "passed"]].round(4)
        ... # doctest: +NORMALIZE_WHITESPACE
        fast path vs independent draws, 4-sigma Monte-Carlo tolerances: all passed
                                   fast   draws  tolerance  passed
        metric   test
        accuracy mean            0.7344  0.7309     0.0049    True
                 variance_ratio  1.0000  0.9970     0.1265    True
                 interval_mass   0.9500  0.9530     0.0195    True
        """
        cf, draws = self.closed_form, self.draws
        if cf is None or draws is None:
            raise ValueError("check() needs both a fast path and draws; run the method with "
                             "method='both'.")
        dims = [d for d in draws.dims if d not in SAMPLE_DIMS]
        stacked = draws.stack(_item=dims) if dims else draws.expand_dims(_item=[0])
        iid = self.meta["iid_draws"]
        frames, items = [], stacked["_item"].values
        with stage(f"check: the fast path against the draws at {len(items):,} coordinate(s)"):
            for key in items:
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
        failed = []
        if self.has_mcmc:
            with stage("check: R-hat and ESS of every scalar of the posterior"):
                sampler = sampler_tests(self.tree["posterior"].to_dataset(),
                                        self.tree["sample_stats"].to_dataset())
            failed = [f"{t} {row.draws:.4g} (threshold {row.tolerance:g})"
                      for t, row in sampler.iterrows() if not row.passed]
            if dims:
                sampler = sampler.assign(**dict.fromkeys(dims, "sampler")).set_index(
                    dims, append=True).reorder_levels([*dims, "test"])
            frame = pd.concat([frame, sampler])
        passed = bool(frame["passed"].all())
        verdict = "all passed" if passed else "FAILED"
        if failed:
            verdict += "; the sampler did not converge: " + ", ".join(failed)
        caption = (f"fast path vs {'independent' if iid else 'MCMC'} draws, 4-sigma Monte-Carlo "
                   f"tolerances: {verdict}")
        return table(frame, caption, passed=passed)

    # -------------------------------------------------------------------------- diagnostics
    def diagnostics(self) -> Table:
        r"""MCMC diagnostics: R-hat, bulk/tail ESS per posterior quantity, divergences, BFMI.

        Thresholds: R-hat :math:`\le` 1.01, ESS :math:`\ge` 400 (Vehtari et al. 2021), no
        divergences, E-BFMI :math:`\ge` 0.3 (Betancourt 2016), where
        :math:`\text{E-BFMI}=\sum_t(E_t-E_{t-1})^2/\sum_t(E_t-\bar E)^2` of the energy :math:`E`.

        Returns
        -------
        Table
            Indexed by ``(diagnostic, quantity)`` with columns ``value``, ``threshold`` and
            ``ok``; ``attrs["ok"]`` is True when all are within thresholds.

        Raises
        ------
        ValueError
            If no MCMC ran.

        Examples
        --------
        Independent draws standing in for MCMC draws (a real run comes from
        ``method="pymc"``):

        >>> import numpy as np, xarray as xr
        >>> from scipy import stats
        >>> from bayeval.methods.labelled import posterior
        >>> rng = np.random.default_rng(0)
        >>> theta = rng.beta(47, 17, size=(2, 1000, 1))  # 45 of 60 right, Beta(2, 2) prior
        >>> dims = ("chain", "draw", "metric")
        >>> draws = xr.DataTree.from_dict({
        ...     "posterior": xr.Dataset({"theta": (dims, theta)}, coords={"metric": ["accuracy"]}),
        ...     "sample_stats": xr.Dataset({"diverging": (dims[:2], np.zeros((2, 1000), bool)),
        ...                                 "energy": (dims[:2], rng.normal(size=(2, 1000)))}),
        ... })
        >>> closed = posterior([45], [60], metrics=["accuracy"], prior=(2, 2))
        >>> ev = Evaluation.create(method="labelled", variant="both", closed_form=closed,
        ...                        draws=draws, estimand="posterior/theta", iid_draws=True)
        >>> ev.diagnostics().round(3)  # doctest: +NORMALIZE_WHITESPACE
        MCMC diagnostics: all within thresholds
                                     value  threshold    ok
        diagnostic  quantity
        r_hat       theta[accuracy]  1.000    <= 1.01  True
        ess_bulk    theta[accuracy]   2190     >= 400  True
        ess_tail    theta[accuracy]   2075     >= 400  True
        divergences sampler          0.000       == 0  True
        bfmi        chain 0          1.920     >= 0.3  True
                    chain 1          2.036     >= 0.3  True
        """
        if not self.has_mcmc:
            raise ValueError(f"diagnostics() needs MCMC draws; this evaluation ran "
                             f"variant={self.meta['variant']!r} without MCMC.")
        import arviz as az

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
        r"""Power-scaling prior and likelihood sensitivity (ArviZ ``psense``).

        Computes the ``log_likelihood`` and ``log_prior`` groups from the model if they are
        missing. A component whose log density is constant over the draws (a flat prior) cannot
        move the posterior under power scaling: its sensitivity is 0.

        The posterior is reweighted as if the prior (or likelihood) were raised to a power
        :math:`\alpha` near 1,
        :math:`p_\alpha(\theta\mid y)\propto p(\theta)^\alpha p(y\mid\theta)`,
        and the sensitivity is the derivative of the cumulative Jensen–Shannon distance
        between :math:`p_\alpha` and the posterior (Kallioinen et al. 2024). Prior sensitivity
        of :data:`PSENSE_THRESHOLD` or more flags an informative prior; both at once, a
        prior–data conflict.

        Parameters
        ----------
        var_names : list of str, optional
            Posterior variables to analyse (default: all float ones).

        Returns
        -------
        Table
            Indexed by ``quantity`` (``theta[accuracy]``...) with columns ``prior``,
            ``likelihood`` and ``diagnosis``.

        Raises
        ------
        ValueError
            If no MCMC ran, or the log densities are missing and no model is attached.

        Examples
        --------
        Independent draws of a Beta(2, 2)-binomial posterior, with its log densities:

        >>> import numpy as np, xarray as xr
        >>> from scipy import stats
        >>> from bayeval.methods.labelled import posterior
        >>> rng = np.random.default_rng(0)
        >>> theta = rng.beta(47, 17, size=(2, 1000, 1))  # 45 of 60 right, Beta(2, 2) prior
        >>> dims = ("chain", "draw", "metric")
        >>> draws = xr.DataTree.from_dict({
        ...     "posterior": xr.Dataset({"theta": (dims, theta)}, coords={"metric": ["accuracy"]}),
        ...     "sample_stats": xr.Dataset({"diverging": (dims[:2], np.zeros((2, 1000), bool)),
        ...                                 "energy": (dims[:2], rng.normal(size=(2, 1000)))}),
        ...     "log_prior": xr.Dataset({"theta": (dims, stats.beta(2, 2).logpdf(theta))}),
        ...     "log_likelihood": xr.Dataset({"k": (dims, stats.binom(60, theta).logpmf(45))}),
        ... })
        >>> closed = posterior([45], [60], metrics=["accuracy"], prior=(2, 2))
        >>> ev = Evaluation.create(method="labelled", variant="both", closed_form=closed,
        ...                        draws=draws, estimand="posterior/theta", iid_draws=True)
        >>> ev.sensitivity().round(3)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        power-scaling sensitivity (threshold 0.05): ...
                         prior  likelihood diagnosis
        quantity
        theta[accuracy]  0.021       0.122        ok
        """
        if not self.has_mcmc:
            raise ValueError("sensitivity() needs posterior draws from MCMC; this evaluation "
                             f"ran variant={self.meta['variant']!r}.")
        import arviz as az

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
        """One figure of this evaluation, drawn by the registered display ``"plot"``.

        ``import bayeval`` registers :func:`bayeval.plots.plot` (see it for the kinds).

        Parameters
        ----------
        kind : str, optional
            The figure; by default the kind that suits this evaluation.
        **kwargs
            Options of the kind.

        Returns
        -------
        matplotlib.figure.Figure

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> fig = ev.plot("intervals")
        >>> len(fig.axes[0].get_yticklabels())  # one row per metric
        5
        >>> plt.close(fig)
        """
        return _display("plot")(self, kind, **kwargs)

    def report(self, path, **kwargs):
        """Write a self-contained HTML report with the registered display ``"report"``.

        ``import bayeval`` registers :func:`bayeval.report.report`.

        Parameters
        ----------
        path : str or path-like
            The HTML file.
        **kwargs
            Passed to :func:`bayeval.report.report`: ``title``, and for MVU ``costs`` and
            ``groups`` (the plan of the measurements in the answer).

        Returns
        -------
        pathlib.Path
            ``path``.

        Examples
        --------
        >>> import tempfile
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     html = ev.report(f"{tmp}/accuracy.html", title="Classifier A").read_text()
        >>> "<title>Classifier A</title>" in html
        True
        """
        return _display("report")(self, path, **kwargs)

    def _add_log_densities(self) -> None:
        if self.model is None and not {"log_prior", "log_likelihood"} <= set(self.tree.children):
            raise ValueError("sensitivity() needs the log_prior and log_likelihood groups; they "
                             "were not saved and the PyMC model is not attached (an evaluation "
                             "read from disk). Rerun the method to get them.")
        self.tree = add_log_densities(self.tree, self.model)

    # ------------------------------------------------------------------------------ storage
    def to_netcdf(self, path) -> str:
        """Write the whole tree (every group and attribute) to ``path`` with h5netcdf, followed
        by the SHA-256 of those bytes (:func:`bayeval.files.write`).

        :func:`load` checks them and reads the tree back identical (the PyMC model is not
        saved).

        Parameters
        ----------
        path : str or path-like
            The file to write.

        Returns
        -------
        str
            ``path``.

        Examples
        --------
        >>> import tempfile
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     back = be.load(ev.to_netcdf(f"{tmp}/ev.nc"))
        >>> back.equals(ev), back.summary().loc["accuracy", "mean"]
        (True, np.float64(0.75))
        """
        return files.write(self.tree, path)

    def equals(self, other: Evaluation) -> bool:
        """True when both trees hold identical groups, values and attributes (also ``==``),
        but for the time each was created.

        Parameters
        ----------
        other : Evaluation

        Returns
        -------
        bool

        Examples
        --------
        >>> import bayeval as be
        >>> a = be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1])
        >>> b = be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1], ci_prob=0.9)
        >>> a.equals(a), a.equals(b)
        (True, False)
        """
        if not isinstance(other, Evaluation):
            return False
        trees = []
        for ev in (self, other):
            tree = ev.tree.copy(deep=False)
            meta = ev.meta
            meta.pop("created_at", None)
            tree.attrs = {**tree.attrs, "bayeval": json.dumps(meta, sort_keys=True)}
            trees.append(tree)
        return trees[0].identical(trees[1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Evaluation) and self.equals(other)

    __hash__ = None

    def __repr__(self) -> str:
        meta = self.meta
        groups = ", ".join(self.tree.children)
        lines = [f"<bayeval.Evaluation {meta['method']} ({meta['variant']}); groups: {groups}>"]
        if self.draws is not None or self.closed_form is not None:
            lines.append(repr(self.summary()))
        lines += [f"warning: {w}" for w in meta["warnings"]]
        return "\n".join(lines)


def load(path) -> Evaluation:
    """Read an Evaluation written by :meth:`Evaluation.to_netcdf`, as the class that wrote it.

    The file's SHA-256 is checked before it is parsed (:func:`bayeval.files.read`), then its
    metadata: the method that wrote it must be a name (its class rebuilds it; a method without
    a class of its own gives an :class:`Evaluation`), and the bayeval version no newer.

    Parameters
    ----------
    path : str or path-like
        A netCDF file written by :meth:`Evaluation.to_netcdf`.

    Returns
    -------
    Evaluation
        Or the subclass of its method (e.g. the judge's); without the PyMC model.

    Raises
    ------
    ValueError
        One, naming the file and the reason: missing or unreadable, damaged, not a bayeval
        Evaluation, written by a newer bayeval, or a tree that its method's class refuses.

    Examples
    --------
    >>> import tempfile, bayeval as be
    >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = be.load(ev.to_netcdf(f"{tmp}/ev.nc"))
    >>> type(back).__name__, back == ev
    ('Evaluation', True)
    >>> be.load("no/such/file.nc")
    Traceback (most recent call last):
        ...
    ValueError: cannot load no/such/file.nc: No such file or directory.
    """
    tree = files.read(path)
    where = f"cannot load {path}"
    try:
        meta = json.loads(tree.attrs["bayeval"])
        method, written = meta["method"], meta["versions"]["bayeval"]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: not a bayeval Evaluation (its root has no valid 'bayeval' "
                         "attribute).") from None
    if _newer(str(written), version("bayeval")):
        raise ValueError(f"{where}: written by bayeval {written}, newer than this "
                         f"{version('bayeval')}; upgrade bayeval to read it.")
    if not (isinstance(method, str) and method.isidentifier()):
        raise ValueError(f"{where}: its method {str(method)[:40]!r} is not a method's name.")
    try:
        return _CLASSES.get(method, Evaluation)(tree)
    except Exception as err:  # a tree that does not fit its class
        raise ValueError(f"{where}: its {method} evaluation cannot be rebuilt "
                         f"({type(err).__name__}: {err}).") from None


def _newer(written: str, installed: str) -> bool:
    """Whether version ``written`` is newer than ``installed`` (release numbers compared)."""
    def release(v: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", v.split("+")[0])[:3])
    return release(written) > release(installed)


def _display(name: str) -> Callable[..., Any]:
    if name not in DISPLAYS:
        raise RuntimeError(f"no {name!r} display is registered; `import bayeval` registers it.")
    return DISPLAYS[name]


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
