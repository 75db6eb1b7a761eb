"""The page: every experiment in order, the parts that cannot run offline, ``render`` and
``main``."""

from __future__ import annotations

import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import bayeval as be

from ..timing import best_time
from . import bounds, cbpe, judge, mvu, pemi
from .core import Experiment, verdict

OUT = Path(__file__).resolve().parents[2] / "docs" / "reproductions.md"
_MODULES = {"CBPE": cbpe, "PEMI": pemi, "Judge": judge, "Bounds": bounds, "MVU": mvu}
EXPERIMENTS: dict[str, Experiment] = {k: v for m in _MODULES.values()
                                      for k, v in m.EXPERIMENTS.items()}
NOT_REPRODUCIBLE = {method: m.NOT_REPRODUCIBLE for method, m in _MODULES.items()}


def _fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    v = float(v)
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e4):
        return f"{v:.2e}"
    return f"{v:.4f}" if abs(v) < 1 else f"{v:.2f}"


def _cell(v) -> str:
    """A table cell: pipes escaped (|x| would end the cell)."""
    return _fmt(v).replace("|", "\\|")


def render(results: dict[str, tuple[list[dict], float]], total: float) -> str:
    """The markdown page of ``results`` (experiment name -> rows, seconds), run in ``total`` s."""
    lines = [
        "# Reproductions of the papers' results",
        "",
        "The experiments of the five papers that can run offline, with our numbers next to "
        "the papers'. Regenerate this page by hand (it is not run in CI, like `make bench`):",
        "",
        "```bash",
        "PYTENSOR_FLAGS=compiledir=.cache/pytensor OPENBLAS_NUM_THREADS=1 "
        ".venv/bin/python -m benchmarks.reproductions",
        "```",
        "",
        "`python -m benchmarks.reproductions judge_arena mvu_synthetic` runs some of them and "
        "prints their rows without writing the page. The data are scikit-learn's bundled data "
        "sets, bayeval's simulators and, for the judge's Chatbot Arena example, the 2x2 "
        "tables of the judge outputs in the paper's code repository; no download. Every row has a "
        "criterion (column *agrees*) where the paper gives a number or a claim to test, stated "
        "in its note or in the experiment's description; `–` marks a qualitative comparison.",
        "",
        f"Generated on {datetime.now(UTC):%Y-%m-%d} ({platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, numpy "
        f"{np.__version__}, bayeval {be.__version__}) in {total / 60:.1f} minutes.",
        "",
        "| method | experiment | verdict |",
        "|---|---|---|",
    ]
    for name, (rows, _) in results.items():
        exp = EXPERIMENTS[name]
        lines.append(f"| {exp.method} | {exp.title} | "
                     f"{_cell(verdict(exp, rows).split(';')[0].split(' (all')[0])} |")
    for method in dict.fromkeys(e.method for e in EXPERIMENTS.values()):
        lines += ["", f"## {method}", ""]
        for name, (rows, seconds) in results.items():
            exp = EXPERIMENTS[name]
            if exp.method != method:
                continue
            lines += [f"### {exp.title}", "",
                      f"**Paper:** {exp.paper}  ",
                      f"**Here** (`{name}`, {seconds:.0f} s): {exp.ours}", "",
                      "| quantity | paper | ours | agrees | note |", "|---|---|---|---|---|"]
            for r in rows:
                mark = {True: "yes", False: "**no**", None: "–"}[r["agrees"]]
                ours = _cell(r["ours"]) + (f" ± {_fmt(r['se'])}" if r.get("se") else "")
                lines.append(f"| {_cell(r['quantity'])} | {_cell(r['paper'])} | {ours} | {mark} "
                             f"| {_cell(r['note'])} |")
            lines += ["", f"**Verdict:** {verdict(exp, rows)}", ""]
        lines += [f"**Not reproducible offline:** {NOT_REPRODUCIBLE[method]}", ""]
    lines += ["`±` after our number is its Monte-Carlo standard error where the row has one."]
    return "\n".join(lines) + "\n"


def main(selected: list[str]) -> int:
    """Run the ``selected`` experiments, print their rows; with none, run all, write the page."""
    unknown = [s for s in selected if s not in EXPERIMENTS]
    if unknown:
        print(f"unknown experiment(s) {unknown}; choose from {list(EXPERIMENTS)}",
              file=sys.stderr)
        return 2
    names = selected or list(EXPERIMENTS)
    results, start = {}, time.perf_counter()
    for name in names:
        print(f"running {name} ...", flush=True)
        seconds, rows = best_time(EXPERIMENTS[name].run, 1)
        results[name] = (rows, seconds)
        for r in rows:
            print(f"  {r['quantity']}: paper {_fmt(r['paper'])}, ours {_fmt(r['ours'])}, "
                  f"agrees {r['agrees']}", flush=True)
        print(f"  {verdict(EXPERIMENTS[name], rows)} ({seconds:.0f} s)", flush=True)
    if not selected:
        OUT.write_text(render(results, time.perf_counter() - start))
        print(f"written to {OUT}")
    return 0
