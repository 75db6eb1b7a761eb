"""One self-contained HTML report of one or several evaluations.

The file embeds its figures as base64 PNG and its CSS inline: it opens offline, needs no
JavaScript, and can be mailed as is. Each evaluation's section leads with its answer, one
sentence and one figure or table (CBPE: the alerts by chunk with their probability ``p_alert``;
PEMI: the estimate and where the conclusion tips between missing at random and not; judge: the
estimate with the human labels it is worth and the estimators side by side; bounds: the
identified interval with the interval covering it; MVU: the rows whose missing features should
be collected, and with ``costs`` which to measure first). Badges summarise the checks: one says
"fail" only where a check failed. The detail follows in collapsed sections: the summary tables,
what was evaluated and the data, the other figures of :mod:`bayeval.plots`, the
fast-path-vs-posterior check, the MCMC diagnostics and the prior sensitivity with
plain-language verdicts, and what is needed to reproduce it.
Several evaluations get a table of contents with their answers. Everything that comes from the
data or the evaluation is HTML-escaped; numbers are shown as :func:`bayeval.table.display_frame`
shows them.

Importing this module registers :func:`report` as the display behind ``Evaluation.report()``;
matplotlib is imported when the figures are drawn.
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from html import escape
from importlib.metadata import version
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayeval import plots
from bayeval.display import register_display
from bayeval.evaluation import BFMI_MIN, ESS_MIN, PSENSE_THRESHOLD, RHAT_MAX, Evaluation
from bayeval.metrics import REGISTRY
from bayeval.table import Table, display_number, formatters

__all__ = ["report"]

FIGURE_DPI = 110
#: what each MCMC diagnostic means when it is within its threshold, and when it is not
DIAGNOSTIC_VERDICTS = {
    "r_hat": (f"The chains agree with each other (R-hat ≤ {RHAT_MAX} everywhere).",
              "The chains disagree on {which}: they have not converged to one distribution. "
              "Sample longer or reparametrise the model."),
    "ess_bulk": (f"Enough effective draws for stable means (bulk ESS ≥ {ESS_MIN:g}).",
                 "Too few effective draws for stable means of {which}: draw more."),
    "ess_tail": (f"Enough effective draws for stable interval ends (tail ESS ≥ {ESS_MIN:g}).",
                 "Too few effective draws for stable interval ends of {which}: draw more."),
    "divergences": ("No divergent transitions: the sampler explored the whole posterior.",
                    "Divergent transitions: the sampler missed part of the posterior and the "
                    "results may be biased. Raise target_accept or reparametrise."),
    "bfmi": (f"The sampler moved efficiently between energy levels (BFMI ≥ {BFMI_MIN}).",
             "Low BFMI in {which}: the sampler explores the tails of the posterior poorly."),
}


def report(evaluations: Evaluation | Sequence[Evaluation], path: str | os.PathLike, *,
           title: str = "bayeval report", costs=None, groups=None) -> Path:
    """Write one self-contained HTML report of one or several evaluations.

    Parameters
    ----------
    evaluations : Evaluation or sequence of Evaluation
        What to report; several get one section each and a table of contents.
    path : str or path-like
        The HTML file to write (its folder is created if needed).
    title : str
        The page's title and heading.
    costs, groups : optional
        The costs of measuring the features (and the groups measured together) of the MVU
        evaluations: their answer then shows, for every row to collect, the plan of
        ``ev.decide(threshold, costs=costs, groups=groups)`` (the feature or group to measure
        first, the probability that it changes the decision, the measurements in order, their
        cost and the expected hard confidence once they are made).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        If ``evaluations`` is empty or holds something other than Evaluations; ``costs`` or
        ``groups`` without an MVU evaluation, or that its ``decide`` refuses.

    Examples
    --------
    >>> import tempfile, bayeval as be
    >>> from bayeval.report import report
    >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     text = report(ev, f"{tmp}/report.html").read_text()
    >>> "<script" in text, text.count("data:image/png;base64,")
    (False, 2)
    """
    evaluations = _as_list(evaluations)
    plans = _mvu_plans(evaluations, costs, groups)
    sections = [_Section.of(ev, i, plans.get(i - 1))
                for i, ev in enumerate(evaluations, start=1)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(sections, title), encoding="utf-8")
    return path


def _as_list(evaluations) -> list[Evaluation]:
    evaluations = [evaluations] if isinstance(evaluations, Evaluation) else list(evaluations)
    if not evaluations:
        raise ValueError("evaluations is empty; give an Evaluation or a list of them.")
    for ev in evaluations:
        if not isinstance(ev, Evaluation):
            raise ValueError(f"evaluations must hold bayeval Evaluations, got "
                             f"{type(ev).__name__}.")
    return evaluations


# ------------------------------------------------------------------------ what to show
def _attempt(fn: Callable[[], Table]) -> Table | str:
    """``fn()``, or the message of its ValueError (a result that does not apply)."""
    try:
        return fn()
    except ValueError as err:
        return str(err)


@dataclass
class _Section:
    """One evaluation and its results, computed once for its section and the contents."""

    ev: Evaluation
    number: int
    check: Table | str | None
    diagnostics: Table | str | None
    sensitivity: Table | str | None
    #: MVU: the decisions with a plan under the report's costs
    plan: Table | None = None

    @classmethod
    def of(cls, ev: Evaluation, number: int, plan: Table | None = None) -> _Section:
        both = ev.closed_form is not None and ev.draws is not None
        return cls(ev, number,
                   check=_attempt(ev.check) if both else None,
                   diagnostics=_attempt(ev.diagnostics) if ev.has_mcmc else None,
                   sensitivity=_attempt(ev.sensitivity) if ev.has_mcmc else None, plan=plan)

    @property
    def anchor(self) -> str:
        return f"evaluation-{self.number}"

    @property
    def name(self) -> str:
        return f"{self.ev.meta['method']} ({self.ev.meta['variant']})"

    def statuses(self) -> list[tuple[str, str]]:
        """(css class, text) badges: check, diagnostics, sensitivity, alerts, warnings. A badge
        is ``bad`` only for a failed check, ``warn`` for what needs a look."""
        out = (_verdict(self.check, *CHECK_BADGE) + _verdict(self.diagnostics, *MCMC_BADGE)
               + _prior_badge(self.sensitivity))
        alerts = _alerts(self.ev)
        if alerts is not None:
            out.append(("warn", f"{_count(len(alerts), 'alert')} in "
                                f"{_count(alerts['chunk'].nunique(), 'chunk')}")
                       if len(alerts) else ("ok", "no alerts"))
        n = len(self.ev.warnings)
        if n:
            out.append(("warn", _count(n, "warning")))
        elif not (alerts is not None and len(alerts)):
            out.append(("ok", "no warnings"))
        return out


#: (attribute of the result, badge when it is True, badge when it is False)
CHECK_BADGE = ("passed", "fast path and posterior agree", "check FAILED")
MCMC_BADGE = ("ok", "MCMC diagnostics ok", "MCMC diagnostics FAILED")


def _verdict(result: Table | str | None, attr: str, good: str, bad: str
             ) -> list[tuple[str, str]]:
    if not isinstance(result, Table):
        return []
    return [("ok", good) if result.attrs[attr] else ("bad", bad)]


def _prior_badge(result: Table | str | None) -> list[tuple[str, str]]:
    if not isinstance(result, Table):
        return []
    flagged = int((result["diagnosis"] != "ok").sum())
    return [("warn", f"prior matters for {_count(flagged, 'quantity')}") if flagged
            else ("ok", "prior insensitive")]


# --------------------------------------------------------------------------- HTML bits
def _count(n: int, noun: str) -> str:
    """``1 quantity``, ``2 quantities``, ``3 warnings``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


#: boolean columns that are checks: True is a pass, False a failure
CHECK_COLUMNS = frozenset({"passed", "ok"})
#: boolean columns that raise an alert when True
ALERT_COLUMNS = frozenset({"alert", "alert_realized"})
#: columns shown first in a summary table, where present: the answer before the detail
LEADING_COLUMNS = ("mean", "lower", "upper", "alert", "p_alert", "realized", "lower_bound",
                   "upper_bound", "c_hard", "y_hard")


def _cell(value, column: str, fmt: Callable) -> str:
    """One table cell: checks as pass/fail badges, alerts as an alert badge, other booleans as
    yes/no, numbers by the column's display format."""
    if isinstance(value, bool | np.bool_):
        if column in CHECK_COLUMNS:
            return ('<td class="flag"><span class="badge ok">✓ pass</span></td>' if value else
                    '<td class="flag"><span class="badge bad">✗ fail</span></td>')
        if column in ALERT_COLUMNS:
            return ('<td class="flag"><span class="badge warn">alert</span></td>' if value
                    else '<td class="flag">–</td>')
        return f'<td class="flag">{"yes" if value else "no"}</td>'
    if isinstance(value, Real):
        return f'<td class="num">{escape(fmt(value))}</td>'
    return f'<td class="text">{escape(str(value))}</td>'


def _align(dtype) -> str:
    """The css class of a column: ``flag`` (booleans), ``num`` or ``text``."""
    if pd.api.types.is_bool_dtype(dtype):
        return "flag"
    return "num" if pd.api.types.is_numeric_dtype(dtype) else "text"


def _table(frame: pd.DataFrame, caption: str, bad: Sequence[bool] | None = None) -> str:
    """``frame`` as an HTML table with its caption; rows where ``bad`` is True highlighted."""
    names = [escape(str(n or "")) for n in frame.index.names]
    head = "".join(f'<th scope="col">{n}</th>' for n in names)
    for column, dtype in frame.dtypes.items():
        head += f'<th scope="col" class="{_align(dtype)}">{escape(str(column))}</th>'

    fmts = formatters(frame)
    bad = np.zeros(len(frame), bool) if bad is None else np.asarray(bad, bool)
    rows = []
    for key, row, flagged in zip(frame.index, frame.itertuples(index=False), bad, strict=True):
        keys = key if isinstance(key, tuple) else (key,)
        cells = "".join(f'<th scope="row">{escape(str(k))}</th>' for k in keys)
        cells += "".join(_cell(v, c, fmts[c]) for v, c in zip(row, frame.columns, strict=True))
        rows.append(f'<tr class="fail">{cells}</tr>' if flagged else f"<tr>{cells}</tr>")
    return (f'<div class="table-wrap"><table><caption>{escape(caption)}</caption>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _callout(kind: str, html: str) -> str:
    return f'<div class="callout {kind}">{html}</div>'


def _badges(statuses: list[tuple[str, str]]) -> str:
    return " ".join(f'<span class="badge {c}">{escape(t)}</span>' for c, t in statuses)


def _list(items: list[str]) -> str:
    """A phrase naming at most five of ``items`` (already escaped or plain text)."""
    shown = ", ".join(escape(i) for i in items[:5])
    return shown + (f" and {len(items) - 5} more" if len(items) > 5 else "")


# ------------------------------------------------------------------------ the answers
def _value(row) -> str:
    """``0.9617 (95% interval 0.9366 to 0.9806)`` style: a mean and its interval."""
    mean, lower, upper = (display_number(row[k]) for k in ("mean", "lower", "upper"))
    return f"<strong>{mean}</strong> ({lower} to {upper})"


def _level(ev: Evaluation) -> str:
    return f"{100 * ev.ci_prob:g}% interval"


def _alerts(ev: Evaluation) -> pd.DataFrame | None:
    """The (chunk, metric) pairs in alert, with the estimate and ``p_alert``, or None where the
    evaluation has no alerts to raise."""
    cf = ev.closed_form
    if cf is None or "alert" not in cf or "chunk" not in cf.dims:
        return None
    keep = [v for v in ("mean", "lower", "upper", "lower_threshold", "upper_threshold",
                        "p_alert", "alert") if v in cf]
    frame = cf[keep].to_dataframe()[keep].reset_index()
    return frame[frame["alert"].astype(bool)].drop(columns="alert")


def _where(row, dims: list[str]) -> str:
    """``recall`` or ``recall of class 2`` or ``recall of group a``: a metric at one
    coordinate of the other dimensions (besides ``chunk``)."""
    metric = REGISTRY.get(str(row["metric"]))
    overall = metric is not None and metric.classes == "overall"  # stored at the first class
    others = [f"{d} {row[d]}" for d in dims
              if d not in ("chunk", "metric") and not (d == "class" and overall)]
    return str(row["metric"]) + (f" of {', '.join(others)}" if others else "")


def _answer_cbpe(ev: Evaluation) -> tuple[str, str | None]:
    cf = ev.closed_form
    if cf is None or "alert" not in cf:
        return _answer_generic(ev)
    alerts = _alerts(ev)
    dims = list(cf["mean"].dims)
    chunks = [c for c in cf["chunk"].values.tolist() if c != "all"]
    means = cf["mean"].sel(chunk=chunks)
    cells = int(np.isfinite(means).sum())
    p = cf["p_alert"].sel(chunk=chunks) if "p_alert" in cf else None
    if alerts.empty:
        text = (f"<strong>No alert</strong>: in {_count(len(chunks), 'chunk')} no estimate of "
                f"the {_count(cells // max(1, len(chunks)), 'metric')} is outside its thresholds")
        if p is not None and np.isfinite(p.values).any():
            top = p.to_dataframe().reset_index().sort_values("p_alert").iloc[-1]
            text += (f"; the largest probability of an alert (p_alert) is "
                     f"{display_number(top['p_alert'])} ({escape(_where(top, dims))} in "
                     f"{escape(str(top['chunk']))})")
    else:
        worst = alerts.sort_values("p_alert", ascending=False) if "p_alert" in alerts else alerts
        named = [f"{_where(r, dims)} in {r['chunk']}" + (
            f" (p_alert {display_number(r['p_alert'])})" if "p_alert" in alerts else "")
            for _, r in worst.iterrows()]
        text = (f"<strong>{_count(len(alerts), 'alert')}</strong> in "
                f"{_count(alerts['chunk'].nunique(), 'chunk')} of {len(chunks)} "
                f"({len(alerts)} of {cells} estimates): {_list(named)}")
    if "all" in cf["chunk"].values:
        whole = cf[["mean", "lower", "upper"]].sel(chunk="all").to_dataframe().reset_index()
        first = whole[np.isfinite(whole["mean"])].iloc[0]
        text += (f". Over the whole period, {escape(_where(first, dims))} is "
                 f"{_value(first)} ({_level(ev)})")
    if "reference" in ev.tree.children:  # the estimates checked on the labelled reference
        ref = ev.tree["reference"].to_dataset()
        known = np.isfinite(ref["realized"]) & np.isfinite(ref["mean"])
        inside = known & (ref["realized"] >= ref["lower"]) & (ref["realized"] <= ref["upper"])
        text += (f". On the reference period ({_count(ref.sizes['chunk'], 'chunk')}, labelled), "
                 f"the realized metric is inside the estimate's interval in "
                 f"{int(inside.sum())} of {int(known.sum())} estimates")
    return text + ".", "chunks"


def _answer_pemi(ev: Evaluation) -> tuple[str, str | None]:
    table = ev.summary()
    data = ev.tree["data"].to_dataset() if "data" in ev.tree.children else None
    values = ", ".join(f"{escape(str(m))} {_value(r)}" for m, r in table.iterrows())
    text = f"{values} ({_level(ev)})"
    if data is not None and "n_missing" in data:
        text = (f"With {int(data['n_missing'])} of {int(data['n'])} labels missing, {text}")
    if "tipping" not in plots.available(ev):
        return text + ".", "intervals"
    tips = plots.tipping_points(ev)
    tipped = [f"{escape(str(m))} at delta = " + " and ".join(
        f"{v:+.2f}" for v in (t["below"], t["above"]) if np.isfinite(v))
        for m, t in tips.iterrows() if np.isfinite(t[["below", "above"]].astype(float)).any()]
    held = [escape(str(m)) for m, t in tips.iterrows()
            if not np.isfinite(t[["below", "above"]].astype(float)).any()]
    span = f"[{tips['delta_min'].min():.2f}, {tips['delta_max'].max():.2f}]"
    text += (". Missing not at random: the estimate leaves the interval it has when labels are "
             "missing at random (delta = 0) for " + (_list(tipped) if tipped else "no metric"))
    if held:
        text += f"; {_list(held)} hold{'s' if len(held) == 1 else ''} for every shift in {span}"
    return text + ".", "tipping"


def _answer_judge(ev: Evaluation) -> tuple[str, str | None]:
    table = ev.summary()
    if table.index.nlevels > 1 or table.index.name != "estimator":
        return _answer_generic(ev)
    best = "eif" if "eif" in table.index else table.index[0]
    text = f"P(Y = 1) is {_value(table.loc[best])} by {escape(str(best))} ({_level(ev)})"
    data = ev.tree["data"].to_dataset() if "data" in ev.tree.children else None
    if data is not None and "n_effective" in data and np.isfinite(float(data["n_effective"])):
        text += (f"; with the judge's {int(data['n']):,} labels, the {int(data['m']):,} human "
                 f"labels are worth {display_number(float(data['n_effective']), 0)} "
                 "(n_effective)")
    if "naive" in table.index and best != "naive":
        text += (f"; the judge alone says {display_number(table.loc['naive', 'mean'])}, "
                 "biased by its errors")
    return text + ".", "intervals"


def _answer_bounds(ev: Evaluation) -> tuple[str, str | None]:
    table = ev.summary("closed_form" if ev.closed_form is not None else None)
    parts = [f"{escape(str(m))} in <strong>[{display_number(r['lower_bound'])}, "
             f"{display_number(r['upper_bound'])}]</strong> ({display_number(r['lower'])} to "
             f"{display_number(r['upper'])} with its uncertainty)"
             for m, r in table.iterrows() if np.isfinite(r["lower_bound"])]
    undefined = [escape(str(m)) for m, r in table.iterrows() if not np.isfinite(r["lower_bound"])]
    text = ("Without true labels, the metrics lie in their identified intervals [lower bound, "
            f"upper bound], covered by the {_level(ev)}: " + "; ".join(parts))
    if undefined:
        text += f"; {_list(undefined)} undefined"
    return text + ".", "bounds"


#: hard confidence below which MVU's answer suggests collecting a row's missing features
COLLECT_BELOW = 0.9


#: the columns of MVU's answer with a plan
PLAN_COLUMNS = ("y_hard", "c_hard", "first", "p_flip_first", "plan", "plan_cost", "c_hard_after")


def _mvu_plans(evaluations: list[Evaluation], costs, groups) -> dict[int, Table]:
    """The decisions with a plan of every MVU evaluation (by position) under ``costs``."""
    if costs is None and groups is None:
        return {}
    where = [i for i, ev in enumerate(evaluations) if ev.meta["method"] == "mvu"]
    if not where:
        raise ValueError("costs= and groups= plan the measurements of MVU evaluations; none of "
                         "the evaluations is one.")
    return {i: evaluations[i].decide(threshold=COLLECT_BELOW, costs=costs, groups=groups)
            for i in where}


def _answer_mvu(ev: Evaluation, plan: Table | None = None) -> tuple[str, str | None]:
    plan = ev.decide(threshold=COLLECT_BELOW) if plan is None else plan
    n = int(plan.attrs["n_collect"])
    text = (f"<strong>{n} of {len(plan)} rows</strong> should have their missing features "
            f"measured: their decision changes with probability above "
            f"{1 - COLLECT_BELOW:.0%} once they are known (hard confidence c_hard below "
            f"{COLLECT_BELOW}; <code>ev.decide(threshold=...)</code> or "
            "<code>collect_cost=</code> for another rule)")
    shown = plan[plan["collect"]].sort_values("c_hard").head(MAX_ROWS)
    if "plan" in plan:
        text += (f". For each, measure <strong>first</strong> the feature (or group of features "
                 "measured together) most likely to change the decision per unit of cost, "
                 "which changes it with probability <strong>p_flip_first</strong>; "
                 "<strong>plan</strong> lists the measurements in that order until the expected "
                 f"hard confidence reaches {COLLECT_BELOW} (<strong>c_hard_after</strong>, "
                 "expected once they are made), at a cost of <strong>plan_cost</strong>")
        shown = shown[list(PLAN_COLUMNS)]
    more = f" (the {MAX_ROWS} least confident of {n})" if n > MAX_ROWS else ""
    return text + ".", _table(shown, f"{plan.caption}{more}") if n else None


def _answer_generic(ev: Evaluation) -> tuple[str, str | None]:
    table = ev.summary()
    if not {"mean", "lower", "upper"} <= set(table.columns):
        return escape(table.caption) + ".", plots.default_kind(ev)
    named = [f"{escape(', '.join(map(str, k)) if isinstance(k, tuple) else str(k))} "
             f"{_value(r)}" for k, r in table.head(MAX_ROWS).iterrows()]
    more = f" and {len(table) - MAX_ROWS} more" if len(table) > MAX_ROWS else ""
    kind = "intervals" if ev.draws is None else plots.default_kind(ev)
    return "; ".join(named) + f"{more} ({_level(ev)}).", kind


#: rows of a table shown in an answer; the rest are counted
MAX_ROWS = 10
#: the answer of each method: (sentence, a plot kind or an HTML table or None)
ANSWERS: dict[str, Callable[[Evaluation], tuple[str, str | None]]] = {
    "cbpe": _answer_cbpe, "cbpe_multiclass": _answer_cbpe, "pemi": _answer_pemi,
    "judge": _answer_judge,
    "bounds": _answer_bounds, "mvu": _answer_mvu}


def _answer(ev: Evaluation, plan: Table | None = None) -> tuple[str, str | None, str | None]:
    """(sentence, the lead figure's kind, a lead table's HTML) of ``ev`` (MVU: with ``plan``,
    its decisions with a plan)."""
    try:
        answer = ANSWERS.get(ev.meta["method"], _answer_generic)
        text, lead = answer(ev) if plan is None else answer(ev, plan)
    except (ValueError, KeyError) as err:
        return f"No answer could be drawn: {escape(str(err))}.", None, None
    if lead is not None and lead.startswith("<"):
        return text, None, lead
    return text, lead, None


# ------------------------------------------------------------------------ the sections
def _about(ev: Evaluation) -> str:
    meta = ev.meta
    parts = [f"<p>{escape(meta['description'] or 'No description was recorded.')}</p>"]
    if meta["assumptions"]:
        parts.append(f'<p><strong>Assumptions.</strong> {escape(meta["assumptions"])}</p>')
    kind = "equal-tailed" if ev.ci_kind == "eti" else "highest-density"
    parts.append(f"<p><strong>Intervals.</strong> {100 * ev.ci_prob:g}% {kind} intervals "
                 f"({escape(ev.ci_kind)}) throughout.</p>")
    return "".join(parts)


def _warnings(ev: Evaluation) -> str:
    if not ev.warnings:
        return ""
    items = "".join(f"<li>{escape(w)}</li>" for w in ev.warnings)
    return _callout("warn", f"<strong>Warnings</strong><ul>{items}</ul>")


def _dataset_tables(ds: xr.Dataset, caption: str) -> str:
    """A Dataset as tables: its scalars as one (quantity, value) table, then one table per set
    of dimensions ("``caption`` by ``dims``")."""
    by_dims: dict[tuple, list[str]] = {}
    for name, da in ds.data_vars.items():
        by_dims.setdefault(da.dims, []).append(name)
    out = []
    for dims, names in by_dims.items():
        if dims:
            frame = ds[names].to_dataframe()[names]
        else:
            frame = pd.DataFrame({"value": [ds[n].item() for n in names]},
                                 index=pd.Index(names, name="quantity"))
        out.append(_table(frame, f"{caption} by {', '.join(map(str, dims))}" if dims else caption))
    return "".join(out)


def _data(ev: Evaluation) -> str:
    if "data" not in ev.tree.children:
        return "<p>No data summary was recorded.</p>"
    return _dataset_tables(ev.tree["data"].to_dataset(), "the input data")


def _summaries(ev: Evaluation) -> str:
    sources = [s for s, present in (("closed_form", ev.closed_form is not None),
                                    ("draws", ev.draws is not None)) if present]
    out = []
    calls = [partial(ev.summary, source) for source in sources]
    if "reference" in ev.tree.children:  # CBPE's reference chunks, after the analysis
        calls.append(partial(ev.summary, period="reference"))
    for source, call in zip([*sources, "reference period"], calls, strict=False):
        summary = _attempt(call)
        if isinstance(summary, Table):
            first = [c for c in LEADING_COLUMNS if c in summary.columns]
            summary = summary[first + [c for c in summary.columns if c not in first]]
        out.append(_table(summary, summary.caption) if isinstance(summary, Table) else
                   f'<p class="note">No {source.replace("_", " ")} summary: '
                   f"{escape(summary)}</p>")
    return "".join(out)


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI, facecolor="white")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _figure(ev: Evaluation, kind: str) -> str:
    """One figure of :mod:`bayeval.plots` with its caption, or why it was not drawn."""
    try:
        fig = plots.plot(ev, kind)
    except ValueError as err:
        return f'<p class="note">Figure “{escape(kind)}” not drawn: {escape(str(err))}</p>'
    description = plots.KINDS[kind].description
    return (f'<figure><img src="data:image/png;base64,{_png(fig)}" '
            f'alt="{escape(kind)} plot: {escape(description)}">'
            f"<figcaption><strong>{escape(kind)}</strong>: {escape(description)}."
            "</figcaption></figure>")


def _figures(ev: Evaluation, shown: str | None) -> str:
    """Every figure that applies to ``ev`` but the one ``shown`` with its answer."""
    out = [_figure(ev, kind) for kind in plots.available(ev) if kind != shown]
    return "".join(out) or "<p>No other figure applies to this evaluation.</p>"


def _check(result: Table | str | None) -> str:
    if result is None:
        return ("<p>Not applicable: the check needs both a fast path and draws of the same "
                "quantity (run the method with <code>method=\"both\"</code>).</p>")
    if isinstance(result, str):
        return f"<p>Not computed: {escape(result)}</p>"
    failed = result[~result["passed"].astype(bool)]
    if failed.empty:
        verdict = _callout("ok", f"<strong>All {len(result)} tests passed</strong>: the fast "
                                 "path and the draws agree within their Monte-Carlo error.")
    else:
        rows = [", ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in failed.index]
        verdict = _callout("bad", f"<strong>{len(failed)} of {len(result)} tests failed</strong> "
                                  f"({_list(rows)}): the fast path and the draws disagree; do not "
                                  "trust either until this is understood.")
    return verdict + _table(result, result.caption, bad=~result["passed"].astype(bool))


def _diagnostic_rows(result: Table) -> pd.DataFrame:
    """One row per diagnostic: range of values, threshold, verdict and ok."""
    rows = []
    for name, group in result.groupby(level="diagnostic", sort=False):
        ok = bool(group["ok"].all())
        low, high = group["value"].min(), group["value"].max()
        decimals = 0 if name in ("ess_bulk", "ess_tail", "divergences") else 4
        low, high = display_number(low, decimals), display_number(high, decimals)
        values = low if low == high else f"{low} – {high}"
        good, bad = DIAGNOSTIC_VERDICTS.get(name, ("Within its threshold.",
                                                    "Outside its threshold for {which}."))
        failing = [q for (_, q), v in group["ok"].items() if not v]
        verdict = good if ok else bad.format(which=_list(failing))
        rows.append((name, values, group["threshold"].iloc[0], verdict, ok))
    return pd.DataFrame(rows, columns=["diagnostic", "values", "threshold", "verdict", "ok"]
                        ).set_index("diagnostic")


def _diagnostics(result: Table | str | None) -> str:
    if result is None:
        return "<p>Not applicable: no MCMC was run (the fast path is exact or analytic).</p>"
    if isinstance(result, str):
        return f"<p>Not computed: {escape(result)}</p>"
    verdict = (_callout("ok", "<strong>All diagnostics are within their thresholds</strong>: "
                              "the draws can be trusted.") if result.attrs["ok"] else
               _callout("bad", "<strong>Some diagnostics are outside their thresholds</strong>: "
                               "do not trust the draws until they are fixed."))
    rows = _diagnostic_rows(result)
    full = _table(result, result.caption, bad=~result["ok"].astype(bool))
    return (verdict + _table(rows, "MCMC diagnostics in plain words", bad=~rows["ok"])
            + f"<details><summary>every quantity</summary>{full}</details>")


def _sensitivity(result: Table | str | None) -> str:
    if result is None:
        return ("<p>Not applicable: power-scaling sensitivity needs MCMC draws; the fast path's "
                "prior is stated in the description above.</p>")
    if isinstance(result, str):
        return f"<p>Not computed: {escape(result)}</p>"
    flagged = result[result["diagnosis"] != "ok"]
    weak = result[result["likelihood"] < PSENSE_THRESHOLD]
    if flagged.empty:
        text = ("<strong>The prior does not drive the results</strong>: no quantity's prior "
                f"sensitivity reaches {PSENSE_THRESHOLD}.")
        kind = "ok"
    else:
        named = [f"{q} ({d})" for q, d in flagged["diagnosis"].items()]
        text = (f"<strong>The prior matters for {_count(len(flagged), 'quantity')}</strong>: "
                f"{_list(named)}. Report the prior with the results, or check it against "
                "the data.")
        kind = "warn"
    if not weak.empty:
        text += (f" The data say little about {_list(list(weak.index))} (likelihood "
                 f"sensitivity below {PSENSE_THRESHOLD}).")
    return _callout(kind, text) + _table(result, result.caption,
                                         bad=result["diagnosis"] != "ok")


def _reproducibility(ev: Evaluation) -> str:
    meta = ev.meta
    seed = meta["random_seed"]
    if seed is None:
        seed = ("none: no random numbers were drawn" if ev.draws is None else
                "none: rerun with random_seed= to get the same draws")
    rows = [("method", meta["method"]), ("variant", meta["variant"]),
            ("estimand", meta["estimand"] or "closed form only"), ("random_seed", seed),
            ("created at", meta.get("created_at", "unknown"))]
    rows += [(f"{pkg} version", v) for pkg, v in meta["versions"].items()]
    frame = pd.DataFrame(rows, columns=["item", "value"]).set_index("item")
    return _table(frame.astype(str), "what produced this evaluation")


def _details(title: str, body: str, statuses: list[tuple[str, str]] = ()) -> str:
    """A collapsed part of a section: its title and badges, then ``body`` when opened."""
    return (f'<details><summary>{escape(title)} {_badges(list(statuses))}</summary>'
            f'<div class="detail">{body}</div></details>')


def _section(s: _Section) -> str:
    ev = s.ev
    text, kind, table = _answer(ev, s.plan)
    lead = _figure(ev, kind) if kind is not None else (table or "")
    parts = [
        f'<section class="evaluation" id="{s.anchor}">',
        f'<h2><span class="number">{s.number}</span>{escape(s.name)}</h2>',
        f'<p class="badges">{_badges(s.statuses())}</p>',
        f'<div class="answer"><p class="lead">{text}</p>{lead}</div>',
        _warnings(ev),
        _details("Results tables", _summaries(ev)),
        _details("What was evaluated, and the data", _about(ev) + _data(ev)),
        _details("More figures", _figures(ev, kind)),
        _details("Fast path vs posterior", _check(s.check), _verdict(s.check, *CHECK_BADGE)),
        _details("MCMC diagnostics", _diagnostics(s.diagnostics),
                 _verdict(s.diagnostics, *MCMC_BADGE)),
        _details("Prior sensitivity", _sensitivity(s.sensitivity), _prior_badge(s.sensitivity)),
        _details("Reproducibility", _reproducibility(ev)),
        "</section>",
    ]
    return "\n".join(parts)


def _contents(sections: list[_Section]) -> str:
    if len(sections) < 2:
        return ""
    items = "".join(
        f'<li><a href="#{s.anchor}">{escape(s.name)}</a>'
        f'<span class="description">{escape(s.ev.meta["description"])}</span>'
        f"<span>{_badges(s.statuses())}</span></li>" for s in sections)
    return f'<nav class="contents"><h2>Contents</h2><ol>{items}</ol></nav>'


def _page(sections: list[_Section], title: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    made_with = ", ".join(f"{p} {version(p)}" for p in ("bayeval", "matplotlib", "arviz-plots"))
    n = len(sections)
    body = "\n".join(_section(s) for s in sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{escape(made_with)}">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header class="page"><h1>{escape(title)}</h1>
<p class="subtitle">{_count(n, "evaluation")} · generated {now} with {escape(made_with)}</p>
</header>
<main>
{_contents(sections)}
{body}
</main>
<footer>Made by bayeval: Bayesian evaluation of ML models when the ground truth is missing,
noisy or absent. Self-contained: figures and styles are embedded in this file.</footer>
</body>
</html>
"""


CSS = """
:root { --ink: #1d2733; --muted: #5b6b7b; --line: #dfe4ea; --page: #f4f6f9; --accent: #1f5a96;
  --ok: #17692f; --ok-bg: #e3f3e8; --bad: #a8201a; --bad-bg: #fbe9e7; --warn: #7a4f00;
  --warn-bg: #fff4d6; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--ink);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
header.page, main, footer { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header.page { padding-top: 28px; }
h1 { font-size: 28px; margin: 0; letter-spacing: -0.01em; }
.subtitle { color: var(--muted); margin: 4px 0 0; font-size: 13px; }
section.evaluation, nav.contents { background: #fff; border: 1px solid var(--line);
  border-radius: 10px; padding: 6px 28px 24px; margin: 22px 0;
  box-shadow: 0 1px 3px rgba(16, 24, 40, 0.05); }
h2 { font-size: 21px; margin: 18px 0 6px; display: flex; align-items: center; gap: 10px; }
h2 .number { background: var(--accent); color: #fff; border-radius: 50%; width: 28px;
  height: 28px; font-size: 14px; display: inline-flex; align-items: center;
  justify-content: center; }
h3 { font-size: 15px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--accent);
  border-bottom: 1px solid var(--line); padding-bottom: 4px; margin: 30px 0 10px; }
p { margin: 8px 0; max-width: 80ch; }
code { background: #eef1f5; padding: 1px 5px; border-radius: 4px; font-size: 13px; }
.badges { margin: 4px 0 12px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px;
  font-weight: 600; margin: 2px 4px 2px 0; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.callout { border-left: 4px solid; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
.callout.ok { background: var(--ok-bg); border-color: var(--ok); }
.callout.bad { background: var(--bad-bg); border-color: var(--bad); }
.callout.warn { background: var(--warn-bg); border-color: #d99a00; }
.callout ul { margin: 6px 0 0; padding-left: 20px; }
.table-wrap { overflow-x: auto; margin: 10px 0 16px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums;
  min-width: 420px; }
caption { caption-side: top; text-align: left; color: var(--muted); font-weight: 600;
  padding: 0 0 6px; }
th, td { padding: 5px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef2f7; border-bottom: 2px solid #cfd7e1; text-align: left;
  font-weight: 600; white-space: nowrap; }
thead th.num { text-align: right; }
thead th.flag { text-align: center; }
th[scope="row"] { text-align: left; font-weight: 500; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
td.text { text-align: left; max-width: 60ch; }
td.flag { text-align: center; }
tbody tr:nth-child(even) { background: #f9fafc; }
tbody tr.fail, tbody tr.fail:nth-child(even) { background: var(--bad-bg); }
figure { margin: 14px 0 22px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
.note { color: var(--muted); font-style: italic; }
details { margin: 0; border-top: 1px solid var(--line); }
details:last-of-type { border-bottom: 1px solid var(--line); }
summary { cursor: pointer; color: var(--accent); font-weight: 600; padding: 7px 0; }
summary .badge { font-weight: 600; }
details .detail { padding: 4px 0 14px; }
details details { border: none; }
.answer { margin: 6px 0 14px; }
.answer .lead { font-size: 16px; max-width: none; margin: 6px 0 10px; }
nav.contents ol { padding-left: 22px; }
nav.contents li { margin: 8px 0; }
nav.contents a { color: var(--accent); font-weight: 600; text-decoration: none; }
nav.contents .description { color: var(--muted); margin: 0 8px; }
footer { color: var(--muted); font-size: 12px; padding-bottom: 32px; }
@media print { body { background: #fff; } section.evaluation, nav.contents { box-shadow: none;
  border: none; padding: 0; } }
"""


register_display("report", report)
