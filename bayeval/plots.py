"""Figures of an :class:`~bayeval.evaluation.Evaluation`, one function per kind.

:func:`plot` dispatches on ``kind`` through the registry :data:`KINDS` (the core's
:data:`bayeval.display.PLOT_KINDS`); importing this module registers :func:`plot` as the
display behind ``Evaluation.plot()``. Generic kinds work for every evaluation: ``distribution``
and ``intervals`` for any fast path or draws, ``trace``, ``rank`` and ``sensitivity`` where MCMC
ran; ``chunks`` (CBPE) and ``bounds`` are drawn from the evaluation alone. A method adds its own
kind with one decorated function in its package, and :func:`plot` and the HTML report pick it
up (``bayeval/methods/mvu/plots.py`` draws MVU's ``confidence``)::

    from bayeval.display import for_methods, register_plot

    @register_plot("confidence", "hard confidence and its reliability",
                   applies=for_methods("mvu"))
    def confidence(ev: Evaluation, n_bins: int = 10) -> Figure:
        ...

Every kind returns its matplotlib figure (made with pyplot, so ``plt.show()`` shows it; close it
with ``plt.close(fig)`` when done). Colours: posterior draws in blue, the fast path in orange.
Matplotlib and ArviZ are imported when a figure is drawn, not with this module.
"""

from __future__ import annotations

from itertools import product
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from bayeval.chunk_axis import chunk_axis, reference_period, threshold_steps, time_ticks
from bayeval.display import (
    ALERT_COLOR,
    DEFAULT_PLOT_KINDS,
    DRAWS_COLOR,
    FAST_COLOR,
    PLOT_KINDS,
    PlotKind,
    for_methods,
    register_display,
    register_plot,
)
from bayeval.evaluation import PSENSE_THRESHOLD, Evaluation
from bayeval.metrics import REGISTRY
from bayeval.sampling import SAMPLE_DIMS, draws_intervals

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_KINDS", "KINDS", "Kind", "available", "default_kind", "for_methods", "plot",
           "register", "tipping_points"]

#: at most this many panels (estimand coordinates) per figure; pass ``coords`` to choose others
MAX_PANELS = 12
STYLE = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "figure.titlesize": 11,
    "legend.fontsize": 8.5, "legend.frameon": False, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": False, "figure.dpi": 100,
}

#: a registered plot kind (``draw``, ``description``, ``applies``)
Kind = PlotKind
#: every plot kind, in the order the report shows them
KINDS: dict[str, Kind] = PLOT_KINDS
#: the default kind of a method, where it is not the generic one (see :func:`default_kind`)
DEFAULT_KINDS: dict[str, str] = DEFAULT_PLOT_KINDS
#: decorator adding a drawing function as a kind: ``register(name, description, applies)``
register = register_plot


def _needs_mcmc(ev: Evaluation) -> str | None:
    if ev.has_mcmc:
        return None
    return f"it needs MCMC draws; this evaluation ran variant={ev.meta['variant']!r}, without MCMC"


def available(ev: Evaluation) -> list[str]:
    """The kinds that apply to ``ev``, in registry order.

    Parameters
    ----------
    ev : Evaluation

    Returns
    -------
    list of str
        Keys of :data:`KINDS`, for :func:`plot`.

    Examples
    --------
    >>> import bayeval as be
    >>> available(be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1]))  # no MCMC
    ['distribution', 'intervals']
    """
    return [name for name, kind in KINDS.items() if kind.applies(ev) is None]


def default_kind(ev: Evaluation) -> str:
    """The kind :func:`plot` draws when none is given.

    Parameters
    ----------
    ev : Evaluation

    Returns
    -------
    str
        The method's entry of :data:`DEFAULT_KINDS`, else ``"distribution"`` when there are
        draws or an exact PMF to show, else ``"intervals"``.

    Examples
    --------
    >>> import bayeval as be
    >>> default_kind(be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1]))
    'intervals'
    >>> default_kind(be.bounds([1, 0, 1, 0], [[1, 1], [0, 0], [1, 0], [0, -1]],
    ...                        label_model="majority_vote"))
    'bounds'
    """
    if ev.meta["method"] in DEFAULT_KINDS:
        return DEFAULT_KINDS[ev.meta["method"]]
    cf = ev.closed_form
    return "distribution" if ev.draws is not None or "pmf_prob" in cf else "intervals"


def plot(ev: Evaluation, kind: str | None = None, **kwargs) -> Figure:
    """Draw one figure of an evaluation.

    Parameters
    ----------
    ev : Evaluation
    kind : str, optional
        A key of :data:`KINDS` that applies to ``ev`` (:func:`available`); by default
        :func:`default_kind`. Generic kinds:

        * ``"distribution"``: per estimand coordinate, the draws' histogram with the fast path's
          law overlaid (its PMF as bars, its Beta density where it is a conjugate Beta, its
          normal density where its interval is the normal one; else its interval only) and
          both intervals;
        * ``"intervals"``: mean and interval per coordinate, fast path and draws side by side;
        * ``"trace"``, ``"rank"``: ArviZ trace and rank plots (MCMC only);
        * ``"sensitivity"``: power-scaling prior and likelihood sensitivity (MCMC only).
    **kwargs
        Options of the kind (``coords`` to select estimand coordinates, e.g.
        ``{"metric": ["recall"]}``; ``trace``/``rank`` pass the rest to ArviZ).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        An unknown kind, or one that does not apply to ``ev``; the message lists those that do.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import bayeval as be
    >>> from bayeval.plots import plot
    >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    >>> fig = plot(ev, "intervals")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()][:2]
    ['accuracy', 'precision']
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    kind = default_kind(ev) if kind is None else kind
    valid = ", ".join(available(ev))
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is not a plot kind; valid kinds for this evaluation: "
                         f"{valid}.")
    reason = KINDS[kind].applies(ev)
    if reason is not None:
        raise ValueError(f"kind={kind!r} does not apply to this evaluation "
                         f"({ev.meta['method']}, {ev.meta['variant']}): {reason}; valid kinds "
                         f"for it: {valid}.")
    with plt.rc_context(STYLE):
        return KINDS[kind].draw(ev, **kwargs)


# ------------------------------------------------------------------------------ helpers
def _level(ev: Evaluation) -> str:
    return f"{100 * ev.ci_prob:g}% {ev.ci_kind.upper()}"


def _estimand(ev: Evaluation) -> xr.DataArray:
    """The draws of the estimand, else the fast path's means: they carry its coordinates."""
    return ev.draws if ev.draws is not None else ev.closed_form["mean"]


def _limited_coords(da: xr.DataArray, limit: int = MAX_PANELS) -> dict[str, list]:
    """Coordinates of at most ``limit`` items of ``da``, keeping its last dimensions whole."""
    coords, room = {}, limit
    for dim in reversed([d for d in da.dims if d not in SAMPLE_DIMS]):
        n = max(1, min(da.sizes[dim], room))
        coords[dim] = da[dim].values[:n].tolist()
        room //= n
    return coords


def _items(ev: Evaluation, coords: dict | None, limit: int = MAX_PANELS
           ) -> tuple[list[tuple[str, dict]], int]:
    """(label, selection) of the estimand coordinates shown, and how many there are in all."""
    da = _estimand(ev)
    dims = [d for d in da.dims if d not in SAMPLE_DIMS]
    total = int(np.prod([da.sizes[d] for d in dims]))
    coords = {**_limited_coords(da, limit), **(coords or {})}
    keys = list(product(*(np.atleast_1d(coords[d]).tolist() for d in dims)))
    name = da.name or "estimate"
    return [(", ".join(map(str, key)) or str(name), dict(zip(dims, key, strict=True)))
            for key in keys], total


def _closed_at(ev: Evaluation, sel: dict) -> xr.Dataset | None:
    """The fast path at one estimand coordinate, None if there is none or it is not finite."""
    cf = ev.closed_form
    if cf is None:
        return None
    point = cf.sel({d: v for d, v in sel.items() if d in cf.dims})
    if point["mean"].ndim or not np.isfinite(float(point["mean"])):
        return None
    return point


def _draws_stats(ev: Evaluation) -> xr.Dataset | None:
    """Mean and interval (the evaluation's level and kind) of the estimand's draws."""
    import arviz as az

    draws = ev.draws
    if draws is None:
        return None
    interval = (az.eti if ev.ci_kind == "eti" else az.hdi)(draws, prob=ev.ci_prob)
    return xr.Dataset({"mean": draws.mean(SAMPLE_DIMS),
                       "lower": interval.sel(ci_bound="lower", drop=True),
                       "upper": interval.sel(ci_bound="upper", drop=True)})


def _finite_draws(ev: Evaluation, sel: dict) -> np.ndarray | None:
    if ev.draws is None:
        return None
    x = ev.draws.sel(sel).values.ravel()
    x = x[np.isfinite(x)]
    return x if x.size else None


def _grid(n: int, width: float = 10.0, height: float = 2.4, max_cols: int = 3):
    """A figure with ``n`` panels in rows of at most ``max_cols``; unused panels removed."""
    import matplotlib.pyplot as plt

    cols = min(n, max_cols)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width, 0.9 + height * rows),
                             layout="constrained", squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.remove()
    return fig, list(axes.ravel()[:n])


def _legend(fig: Figure, ncols: int = 4) -> None:
    """One legend for the figure, from the labelled artists of all its axes, below them."""
    handles = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="outside lower center",
                   ncols=min(ncols, len(handles)))


# ------------------------------------------------------------------------- distribution
def _pmf(ax: Axes, point: xr.Dataset, x: np.ndarray | None) -> tuple[float, float]:
    """The fast path's PMF as bars, the draws as their frequencies on its support; x-range."""
    values, probs = point["pmf_value"].values, point["pmf_prob"].values
    keep = np.isfinite(probs) & (probs > 0)
    values, probs = values[keep], probs[keep]
    ax.vlines(values, 0, probs, color=FAST_COLOR, lw=1.5, label="fast path PMF")
    if x is not None:
        middles = (values[1:] + values[:-1]) / 2
        freq = np.bincount(np.searchsorted(middles, x), minlength=values.size) / x.size
        shown = freq > 0
        ax.plot(values[shown], freq[shown], "o", ms=4, mfc="none", color=DRAWS_COLOR,
                label="draws: frequencies on the support")
    cdf = np.cumsum(probs)
    return (float(values[np.searchsorted(cdf, 5e-4)]),
            float(values[min(np.searchsorted(cdf, 1 - 5e-4), values.size - 1)]))


def _fast_law(point: xr.Dataset, ci_prob: float):
    """The fast path's continuous law at one coordinate (a frozen scipy distribution): the
    exact Beta where it stores ``alpha`` and ``beta`` (the conjugate posterior of
    :func:`~bayeval.methods.labelled.api.labelled`), the normal of its ``mean`` and ``sd`` where
    its interval is that normal's, else None (its interval is all it gives)."""
    if "alpha" in point and "beta" in point and point["alpha"].ndim == 0:
        return scipy.stats.beta(float(point["alpha"]), float(point["beta"]))
    mean, sd = float(point["mean"]), float(point["sd"])
    if not sd > 0:
        return None
    law = scipy.stats.norm(mean, sd)
    gaussian = np.allclose(law.ppf([(1 - ci_prob) / 2, (1 + ci_prob) / 2]),
                           [float(point["lower"]), float(point["upper"])], rtol=0, atol=1e-9)
    return law if gaussian else None


def _density(ax: Axes, point: xr.Dataset | None, x: np.ndarray | None, draws_label: str,
             ci_prob: float) -> tuple[float, float]:
    """The draws' histogram and the fast path's density (:func:`_fast_law`) over its central
    99.9 %; x-range of both."""
    lo, hi = np.inf, -np.inf
    if x is not None:
        ax.hist(x, bins="auto", density=True, histtype="stepfilled", color=DRAWS_COLOR,
                alpha=0.3, label=draws_label)
        lo, hi = np.quantile(x, [5e-4, 1 - 5e-4])
    law = None if point is None else _fast_law(point, ci_prob)
    if law is not None:
        grid = np.linspace(*law.ppf([5e-4, 1 - 5e-4]), 300)
        name = "exact Beta" if law.dist.name == "beta" else "normal"
        ax.plot(grid, law.pdf(grid), color=FAST_COLOR, lw=1.6, ls="--",
                label=f"fast path: {name} density")
        lo, hi = min(lo, grid[0]), max(hi, grid[-1])
    return float(lo), float(hi)


def _draws_label(ev: Evaluation) -> str:
    group = (ev.meta["estimand"] or "posterior/").split("/")[0]
    return "predictive draws" if group.endswith("predictive") else "posterior draws"


def _interval_marks(ax: Axes, rows: list[tuple[str, str, float, float, float]]) -> None:
    """Intervals (label, colour, mean, lower, upper) as bars under the distribution's baseline."""
    top = ax.get_ylim()[1]
    for i, (label, color, mean, lower, upper) in enumerate(rows, start=1):
        y = -0.09 * top * i
        ax.plot([lower, upper], [y, y], color=color, lw=3, solid_capstyle="butt", label=label)
        ax.plot([mean], [y], "o", color="white", mec=color, mew=1.5, ms=5)
    ax.set_ylim(-0.09 * top * (len(rows) + 0.7), top)
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)


def _has_law(ev: Evaluation, sel: dict) -> bool:
    """Whether there is a distribution to draw at one coordinate: draws, an exact PMF, or the
    fast path's continuous law (:func:`_fast_law`)."""
    if _finite_draws(ev, sel) is not None:
        return True
    point = _closed_at(ev, sel)
    if point is None:
        return False
    if "pmf_prob" in point and np.isfinite(point["pmf_prob"]).any():
        return True
    return _fast_law(point, ev.ci_prob) is not None


def _has_distribution(ev: Evaluation) -> str | None:
    """None where some coordinate has a distribution to draw (:func:`_has_law`), else why not."""
    items, _ = _items(ev, None, limit=10**6)
    if any(_has_law(ev, sel) for _, sel in items):
        return None
    return "it has no draws and no exact law to draw, only intervals"


@register("distribution", "the distribution of each estimated quantity: posterior draws with "
                          "the fast path overlaid, intervals as bars below",
          applies=_has_distribution)
def distribution(ev: Evaluation, coords: dict | None = None) -> Figure:
    """Per estimand coordinate: the draws' histogram, the fast path's exact law (PMF bars, Beta
    density, or normal density where it is Gaussian) and both intervals."""
    every, _ = _items(ev, coords, limit=10**6)
    lawful = [item for item in every if _has_law(ev, item[1])]
    items = lawful[:MAX_PANELS]
    shown = (f" (first {len(items)} of {len(lawful)}; choose with coords=)"
             if len(lawful) > len(items) else "")
    if len(lawful) < len(every):
        shown += (f"; {len(every) - len(lawful)} with an interval only or undefined are in the "
                  "intervals plot")
    dstats = _draws_stats(ev)
    fig, axes = _grid(len(items))
    for ax, (label, sel) in zip(axes, items, strict=True):
        point, x = _closed_at(ev, sel), _finite_draws(ev, sel)
        if point is not None and "pmf_prob" in point and np.isfinite(point["pmf_prob"]).any():
            lo, hi = _pmf(ax, point, x)
        else:
            lo, hi = _density(ax, point, x, _draws_label(ev), ev.ci_prob)
        marks = []
        if x is not None:
            d = dstats.sel(sel)
            marks.append((f"{_draws_label(ev)} {_level(ev)}", DRAWS_COLOR, float(d["mean"]),
                          float(d["lower"]), float(d["upper"])))
        if point is not None:
            marks.append((f"fast path {_level(ev)}", FAST_COLOR, float(point["mean"]),
                          float(point["lower"]), float(point["upper"])))
        lo = min([lo] + [m[3] for m in marks])
        hi = max([hi] + [m[4] for m in marks])
        if np.isfinite([lo, hi]).all() and hi > lo:
            ax.set_xlim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
        _interval_marks(ax, marks)
        ax.set_title(label if marks else f"{label}: undefined")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): distributions{shown}")
    _legend(fig)
    return fig


# ---------------------------------------------------------------------------- intervals
def _interval_sources(ev: Evaluation, sel: dict, dstats) -> list[tuple[str, str, xr.Dataset]]:
    sources = []
    point = _closed_at(ev, sel)
    if point is not None:
        sources.append(("fast path", FAST_COLOR, point))
    if dstats is not None:
        d = dstats.sel(sel)
        if np.isfinite(float(d["mean"])):
            sources.append((_draws_label(ev), DRAWS_COLOR, d))
    return sources


@register("intervals", "point estimate and interval of each estimated quantity, fast path and "
                       "posterior side by side")
def intervals(ev: Evaluation, coords: dict | None = None) -> Figure:
    """Forest plot: mean and [lower, upper] per estimand coordinate and source."""
    import matplotlib.pyplot as plt

    items, total = _items(ev, coords, limit=4 * MAX_PANELS)
    dstats = _draws_stats(ev)
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.42 * len(items)), layout="constrained")
    per_row = [_interval_sources(ev, sel, dstats) for _, sel in items]
    for row, sources in enumerate(per_row):
        if not sources:  # undefined (NaN) here: said on the row's label
            continue
        offsets = np.linspace(-0.14, 0.14, len(sources)) if len(sources) > 1 else [0.0]
        for (label, color, s), dy in zip(sources, offsets, strict=True):
            y = -row + dy
            ax.plot([float(s["lower"]), float(s["upper"])], [y, y], color=color, lw=2.2,
                    solid_capstyle="butt", label=f"{label} {_level(ev)}")
            ax.plot([float(s["mean"])], [y], "o", color=color, ms=5)
    ax.set_yticks(-np.arange(len(items)), [label if sources else f"{label} (undefined)"
                                           for (label, _), sources in zip(items, per_row,
                                                                          strict=True)])
    ax.set_ylim(-len(items) + 0.5, 0.5)
    ax.grid(axis="x", color="0.9")
    ax.set_xlabel("value")
    dims = [d for d in _estimand(ev).dims if d not in SAMPLE_DIMS]
    ax.set_ylabel(", ".join(dims))
    shown = f" (first {len(items)} of {total})" if total > len(items) else ""
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): means and {_level(ev)} "
                 f"intervals{shown}")
    _legend(fig)
    return fig


# --------------------------------------------------------------------------------- MCMC
def _mcmc_selection(ev: Evaluation, var_names, coords) -> tuple[list[str], dict, int]:
    """Variables (default: the estimand's if it is in the posterior, else all), coordinates
    (default: at most :data:`MAX_PANELS` of the first variable) and how many plots they make."""
    post = ev.tree["posterior"].to_dataset()
    if var_names is None:
        group, var = ev.meta["estimand"].split("/")
        var_names = [var] if group == "posterior" else list(post.data_vars)
    var_names = list(np.atleast_1d(var_names))
    coords = _limited_coords(post[var_names[0]]) if coords is None else coords
    shown = post[var_names].sel({d: v for d, v in coords.items() if d in post.dims})
    n = sum(int(np.prod([da.sizes[d] for d in da.dims if d not in SAMPLE_DIMS]))
            for da in shown.data_vars.values())
    return var_names, coords, n


def _arviz_figure(pc, ev: Evaluation, what: str) -> Figure:
    fig = pc.get_viz("figure")
    for ax in fig.axes:
        if not ax.has_data():  # the unused cells of ArviZ's grid
            ax.remove()
    fig.set_layout_engine("constrained")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): {what}")
    return fig


@register("trace", "MCMC traces and per-chain densities: chains should overlap and look like "
                   "stationary noise", applies=_needs_mcmc)
def trace(ev: Evaluation, var_names=None, coords: dict | None = None, **kwargs) -> Figure:
    """ArviZ ``plot_trace_dist``, one row per coordinate (at most :data:`MAX_PANELS`)."""
    import arviz_plots as azp

    var_names, coords, rows = _mcmc_selection(ev, var_names, coords)
    kwargs.setdefault("figure_kwargs", {"figsize": (10, 0.6 + 1.5 * rows)})
    pc = azp.plot_trace_dist(ev.tree, var_names=var_names, coords=coords, compact=False,
                             backend="matplotlib", **kwargs)
    return _arviz_figure(pc, ev, "MCMC trace per chain")


@register("rank", "rank plots: each chain's rank ECDF difference should stay inside the "
                  "envelope", applies=_needs_mcmc)
def rank(ev: Evaluation, var_names=None, coords: dict | None = None, **kwargs) -> Figure:
    """ArviZ ``plot_rank`` (fractional-rank ECDF differences with simultaneous envelopes)."""
    import arviz_plots as azp

    var_names, coords, n = _mcmc_selection(ev, var_names, coords)
    kwargs.setdefault("col_wrap", 3)
    kwargs.setdefault("figure_kwargs", {"figsize": (10, 0.8 + 2.3 * -(-n // kwargs["col_wrap"]))})
    pc = azp.plot_rank(ev.tree, var_names=var_names, coords=coords, backend="matplotlib",
                       **kwargs)
    return _arviz_figure(pc, ev, "rank ECDF per chain (uniform ranks = chains agree)")


@register("sensitivity", "power-scaling sensitivity of each posterior quantity to the prior "
                         "and to the likelihood", applies=_needs_mcmc)
def sensitivity(ev: Evaluation, var_names=None, top: int = 15) -> Figure:
    """Prior and likelihood power-scaling sensitivity per quantity (from ``ev.sensitivity()``),
    with the threshold above which a quantity is flagged: the ``top`` most sensitive quantities
    (largest of the two), the others counted in the title."""
    import matplotlib.pyplot as plt

    table = ev.sensitivity(var_names)
    total = len(table)
    order = np.argsort(-table[["prior", "likelihood"]].max(axis=1).to_numpy(), kind="stable")
    table = table.iloc[np.sort(order[:top])]
    n = len(table)
    fig, ax = plt.subplots(figsize=(8, 1.3 + 0.38 * n), layout="constrained")
    y = -np.arange(n)
    ax.axvline(PSENSE_THRESHOLD, color=ALERT_COLOR, lw=1, ls=":",
               label=f"threshold {PSENSE_THRESHOLD}")
    largest = table[["prior", "likelihood"]].max(axis=1)
    ax.hlines(y, 0, largest, color="0.85", lw=1)
    ax.plot(table["prior"], y, "o", color=FAST_COLOR, ms=6, label="prior")
    ax.plot(table["likelihood"], y, "D", color=DRAWS_COLOR, ms=5, label="likelihood")
    for yi, diagnosis, value in zip(y, table["diagnosis"], largest, strict=True):
        if diagnosis != "ok":
            ax.annotate(diagnosis, (value, yi), xytext=(8, 0), textcoords="offset points",
                        va="center", color=ALERT_COLOR, fontsize=8)
    ax.set_yticks(y, table.index)
    ax.set_xlim(left=-0.01 * ax.get_xlim()[1])
    ax.set_ylim(-n + 0.5, 0.5)
    ax.set_xlabel("power-scaling sensitivity (CJS distance)")
    shown = (f" of the {n} most sensitive of {total} quantities ({total - n} more, all "
             f"below {table[['prior', 'likelihood']].max(axis=1).min():.2g})" if total > n else "")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): power-scaling sensitivity{shown}"
                 "\nprior above the threshold: the prior matters; likelihood below: weak data")
    _legend(fig)
    return fig


# ---------------------------------------------------------------------- method-specific
def _metrics(ev: Evaluation, coords: dict | None) -> list[str]:
    """The metrics shown: those of ``coords`` (``{"metric": [...]}``), else all present."""
    present = _estimand(ev)["metric"].values.tolist()
    chosen = (coords or {}).get("metric")
    return present if chosen is None else list(np.atleast_1d(chosen).tolist())


def _chunk_draws(ev: Evaluation) -> xr.Dataset:
    """The draws' mean and interval per (chunk, metric), with the data's realized values and
    thresholds, the alerts of the mean and the draws' share outside the thresholds."""
    out = draws_intervals(ev.draws, ev.ci_prob, ev.ci_kind)
    if "data" in ev.tree.children:
        data = ev.tree["data"].to_dataset()
        out = out.merge(data[[v for v in ("realized", "lower_threshold", "upper_threshold")
                              if v in data]])
    if "lower_threshold" in out:
        out["alert"] = (out["mean"] < out["lower_threshold"]) | (
            out["mean"] > out["upper_threshold"])
        outside = (ev.draws < out["lower_threshold"]) | (ev.draws > out["upper_threshold"])
        out["p_alert"] = outside.mean(SAMPLE_DIMS).where(np.isfinite(out["lower_threshold"]))
    return out


def _chunk_panels(cf: xr.Dataset, metrics: list[str], coords: dict | None
                  ) -> list[tuple[str, dict]]:
    """(title, selection) of the panels of the chunks plot: per metric, one per coordinate of
    the other dimensions (``group``, ``class``...) where the metric has a value."""
    dims = [d for d in cf["mean"].dims if d not in ("chunk", "metric")]
    values = [np.atleast_1d((coords or {}).get(d, cf[d].values)).tolist() for d in dims]
    out = []
    for metric in metrics:
        overall = getattr(REGISTRY.get(str(metric)), "classes", None) == "overall"
        for key in product(*values):
            sel = {"metric": metric, **dict(zip(dims, key, strict=True))}
            if np.isfinite(cf["mean"].sel(sel).values).any():
                # a metric of the whole matrix is stored at the first class: not named by it
                shown = [str(k) for d, k in zip(dims, key, strict=True)
                         if not (d == "class" and overall)]
                out.append((f"{', '.join(shown)}: {metric}" if shown else str(metric), sel))
    return out


def _alert_title(m: xr.Dataset, keys: list[str]) -> str:
    """``2 of 10 chunks in alert`` (with the largest p_alert) for a panel's right title."""
    if "alert" not in m:
        return ""
    n = int(m["alert"].values.astype(bool).sum())
    text = f"{n} of {len(keys)} chunks in alert"
    if "p_alert" in m and np.isfinite(m["p_alert"].values).any():
        i = int(np.nanargmax(m["p_alert"].values))
        text += f"; largest p_alert {m['p_alert'].values[i]:.2g} ({keys[i]})"
    return text


@register("chunks", "metric per chunk on a time axis: estimate with its interval as a band, "
                    "realized values, alert thresholds, alerts and their probability p_alert",
          applies=for_methods("cbpe", "cbpe_multiclass"))
def chunks(ev: Evaluation, coords: dict | None = None) -> Figure:
    """One row per metric, and per coordinate of the evaluation's other dimensions where it
    has them (``group`` of ``scale.map_evaluations``, ``class``; at most :data:`MAX_PANELS`
    rows): the estimate per chunk (without the whole period ``all``) with its interval as a
    band, the realized values where labels are known, the alert thresholds learned on the
    reference (dashed), the chunks in alert (red, with ``p_alert``, the probability that the
    chunk's metric is outside the thresholds), and before them the reference period's chunks
    on a grey band, their estimates (dashed, where they were estimated) and realized values.
    Chunks keyed by dates sit on a date axis, others
    on their index. The estimate is the fast path's, else the draws' mean and interval
    (realized values and thresholds then come from the data)."""
    import matplotlib.pyplot as plt

    cf = ev.closed_form if ev.closed_form is not None else _chunk_draws(ev)
    cf = cf.sel(chunk=[c for c in cf["chunk"].values.tolist() if c != "all"])
    panels = _chunk_panels(cf, _metrics(ev, coords), coords)
    total, panels = len(panels), panels[:MAX_PANELS]
    keys = [str(c) for c in cf["chunk"].values]
    x, dates = chunk_axis(keys)
    data = ev.tree["data"].to_dataset() if "data" in ev.tree.children else xr.Dataset()
    period = ev.tree["reference"].to_dataset() if "reference" in ev.tree.children else None
    reference = data.get("reference_realized") if period is None else period["realized"]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(10, 0.9 + 1.6 * len(panels)), layout="constrained")
    for ax, (title, sel) in zip(axes[:, 0], panels, strict=True):
        m = cf.sel(sel)
        ax.fill_between(x, m["lower"].values, m["upper"].values, color=FAST_COLOR,
                        alpha=0.2, lw=0, step=None, label=f"estimate {_level(ev)}")
        ax.plot(x, m["mean"].values, "-o", color=FAST_COLOR, ms=3.5, lw=1.4,
                label="estimate")
        if "realized" in m and np.isfinite(m["realized"].values).any():
            known = np.isfinite(m["realized"].values)
            ax.plot(x[known], m["realized"].values[known], "D", color="black", ms=4,
                    mfc="none", label="realized")
        threshold_steps(ax, x, m)
        if reference is not None and set(sel) == {"metric"}:
            estimate = None if period is None else tuple(
                period[v].sel(metric=sel["metric"]).values for v in ("mean", "lower", "upper"))
            reference_period(ax, x, reference.sel(metric=sel["metric"]).values, estimate,
                             FAST_COLOR)
        if "alert" in m and m["alert"].values.astype(bool).any():
            alert = m["alert"].values.astype(bool)
            ax.plot(x[alert], m["mean"].values[alert], "o", ms=9, mfc="none", mew=1.8,
                    color=ALERT_COLOR, label="alert")
            for xi, yi, p in zip(x[alert], m["mean"].values[alert],
                                 m["p_alert"].values[alert] if "p_alert" in m
                                 else [np.nan] * alert.sum(), strict=True):
                if np.isfinite(p):
                    ax.annotate(f"{p:.2f}", (xi, yi), xytext=(0, 7),
                                textcoords="offset points", ha="center", fontsize=7,
                                color=ALERT_COLOR)
        ax.grid(axis="y", color="0.92")
        ax.set_title(title, loc="left", fontweight="bold")
        ax.set_title(_alert_title(m, keys), loc="right", fontsize=8, color="0.35")
        time_ticks(ax, keys, dates, 0 if reference is None else reference.shape[0] + 1)
    more = f" (first {len(panels)} of {total}; choose with coords=)" if total > len(panels) else ""
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): metrics per chunk{more}; "
                 "alerts annotated with p_alert")
    _legend(fig, ncols=5)
    return fig


def _violins(ax: Axes, draws: xr.DataArray, metrics: list[str], y: np.ndarray, side: str,
             alpha: float, label: str) -> None:
    """Violins of ``draws`` (chain, draw, metric) at rows ``y``, on one ``side`` of each row."""
    samples = [draws.sel(metric=m).values.ravel() for m in metrics]
    samples = [(yi, x[np.isfinite(x)]) for yi, x in zip(y, samples, strict=True)]
    samples = [(yi, x) for yi, x in samples if x.size > 1 and np.ptp(x) > 0]
    if not samples:
        return
    rows, data = zip(*samples, strict=True)
    parts = ax.violinplot(data, positions=rows, orientation="horizontal", side=side,
                          widths=0.8, showextrema=False)
    for body in parts["bodies"]:
        body.set(facecolor=DRAWS_COLOR, edgecolor=DRAWS_COLOR, alpha=alpha, label=label)


@register("bounds", "per metric: the identified interval [lower bound, upper bound], the "
                    "interval covering it with its uncertainty, and where a model was sampled "
                    "the posterior of each bound and of the metric",
          applies=for_methods("bounds"))
def bounds(ev: Evaluation, coords: dict | None = None) -> Figure:
    """Per metric: [lower_bound, upper_bound] as a thick bar and [lower, upper] as a thin bar
    (the fast path's, else the posterior's); where draws exist, violins of the posterior of
    the lower and of the upper bound above the bar and of the metric (one coupling position
    per draw) below it."""
    import matplotlib.pyplot as plt

    closed = ev.closed_form is not None
    table = ev.summary("closed_form" if closed else "draws")
    metrics = [m for m in _metrics(ev, coords) if m in table.index]
    post = ev.tree["posterior"].to_dataset() if ev.draws is not None else None
    fig, ax = plt.subplots(figsize=(8, 1.4 + (0.5 if post is None else 0.9) * len(metrics)),
                           layout="constrained")
    y = -np.arange(len(metrics), dtype=float)
    color = FAST_COLOR if closed else DRAWS_COLOR
    rows = table.loc[metrics]
    ax.hlines(y, rows["lower"], rows["upper"], color=color, lw=1.4,
              label=f"covering interval {_level(ev)}")
    ax.hlines(y, rows["lower_bound"], rows["upper_bound"], color=color, lw=6, alpha=0.8,
              label="identified interval [L, U]" + ("" if closed else " (posterior means)"))
    if post is not None:
        for var in ("lower_bound", "upper_bound"):
            _violins(ax, post[var], metrics, y, "high", 0.45, "posterior of L and of U")
        _violins(ax, ev.draws, metrics, y, "low", 0.2, "posterior of the metric")
    ax.set_yticks(y, metrics)
    ax.set_ylim(-len(metrics) + 0.5, 0.5)
    ax.grid(axis="x", color="0.9")
    ax.set_xlabel("value")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): sharp bounds per metric")
    _legend(fig, ncols=4 if post is None else 2)
    return fig


def _has_shifts(ev: Evaluation) -> str | None:
    if ev.meta["method"] != "pemi":
        return "it is specific to method pemi"
    if "delta_sensitivity" not in ev.tree.children:
        return "it needs a prior on the MNAR shift: run pemi with mnar=(mean, sd), sd > 0"
    return None


def tipping_points(ev: Evaluation) -> pd.DataFrame:
    r"""Per metric of a PEMI evaluation, the MNAR shifts at which the conclusion under MAR tips.

    PEMI-Gauss is computed at fixed shifts :math:`\delta` (``delta_sensitivity``: the missing
    labels' probabilities :math:`\sigma(\operatorname{logit}p_i+\delta)`; :math:`\delta = 0`
    is missing at random). The conclusion under MAR is its interval at :math:`\delta = 0`; it
    tips where the estimate at :math:`\delta` leaves that interval, found by linear
    interpolation between the computed shifts.

    Parameters
    ----------
    ev : Evaluation
        A result of ``be.pemi(..., mnar=(mean, sd))`` with ``sd > 0``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``metric``: ``mar_lower``, ``mar_upper`` (the MAR interval), ``below`` and
        ``above``, the negative and positive shifts where the estimate leaves it (NaN where it
        stays inside over the computed range ``delta_min`` to ``delta_max``).

    Raises
    ------
    ValueError
        Without a prior on the MNAR shift.

    Examples
    --------
    >>> import numpy as np, bayeval as be
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(400)
    >>> labels = (rng.random(400) < scores).astype(float)
    >>> labels[rng.random(400) < 0.4] = np.nan
    >>> ev = be.pemi(scores, labels, metrics=["precision"], mnar=(0.0, 2.0), random_seed=0)
    >>> tips = tipping_points(ev)
    >>> bool(tips.loc["precision", "above"] > 0), tips.loc["precision", "delta_max"].round(2)
    (True, np.float64(3.92))
    """
    reason = _has_shifts(ev)
    if reason is not None:
        raise ValueError(f"tipping_points(): {reason}.")
    ds = ev.tree["delta_sensitivity"].to_dataset()
    delta = ds["delta"].values
    rows = {}
    for metric in ds["metric"].values.tolist():
        m = ds.sel(metric=metric)
        at0 = m.sel(delta=0.0)
        lo, hi = float(at0["lower"]), float(at0["upper"])
        mean = m["mean"].values
        rows[metric] = {"mar_lower": lo, "mar_upper": hi,
                        "below": _first_exit(delta[delta <= 0][::-1], mean[delta <= 0][::-1],
                                             lo, hi),
                        "above": _first_exit(delta[delta >= 0], mean[delta >= 0], lo, hi),
                        "delta_min": float(delta.min()), "delta_max": float(delta.max())}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("metric")


def _first_exit(delta: np.ndarray, mean: np.ndarray, lo: float, hi: float) -> float:
    """The first shift along ``delta`` (from 0 outwards) where ``mean`` leaves [lo, hi],
    linearly interpolated; NaN if it stays inside."""
    for i in range(1, delta.size):
        for bound in (lo, hi):
            a, b = mean[i - 1] - bound, mean[i] - bound
            if a * b < 0 or (b == 0 and a != 0):
                return float(delta[i - 1] + (delta[i] - delta[i - 1]) * a / (a - b))
    return float("nan")


@register("tipping", "per metric, the estimate as the MNAR shift delta moves away from missing "
                     "at random (delta = 0), and the shifts where it leaves the MAR interval",
          applies=_has_shifts)
def tipping(ev: Evaluation, coords: dict | None = None) -> Figure:
    """Per metric: PEMI-Gauss's estimate and interval at each computed MNAR shift, the MAR
    interval (grey band), and the tipping points of :func:`tipping_points` (red)."""
    ds = ev.tree["delta_sensitivity"].to_dataset()
    metrics = _metrics(ev, coords)[:MAX_PANELS]
    tips = tipping_points(ev)
    fig, axes = _grid(len(metrics), height=2.3, max_cols=min(4, len(metrics)))
    for ax, metric in zip(axes, metrics, strict=True):
        m, t = ds.sel(metric=metric), tips.loc[metric]
        d = m["delta"].values
        ax.axhspan(t["mar_lower"], t["mar_upper"], color="0.88", lw=0,
                   label=f"MAR interval (delta = 0) {_level(ev)}")
        ax.fill_between(d, m["lower"].values, m["upper"].values, color=FAST_COLOR, alpha=0.2,
                        lw=0, label=f"interval at delta {_level(ev)}")
        ax.plot(d, m["mean"].values, "-o", color=FAST_COLOR, ms=3.5, lw=1.4,
                label="estimate at delta")
        ax.axvline(0, color="0.5", lw=0.8)
        tipped = [v for v in (t["below"], t["above"]) if np.isfinite(v)]
        for v in tipped:
            ax.axvline(v, color=ALERT_COLOR, lw=1.2, ls="--", label="tipping point")
        ax.set_title(f"{metric}\ntips at delta = {', '.join(f'{v:+.2f}' for v in tipped)}"
                     if tipped else f"{metric}\nholds for delta in "
                                    f"[{t['delta_min']:.2f}, {t['delta_max']:.2f}]")
        ax.set_xlabel("MNAR shift delta (log-odds)")
        ax.grid(axis="y", color="0.92")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): missing at random (delta = 0) "
                 "against missing not at random")
    _legend(fig)
    return fig


DEFAULT_KINDS.update(cbpe="chunks", bounds="bounds")
register_display("plot", plot)
