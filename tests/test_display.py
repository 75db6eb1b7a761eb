"""The display registry: Evaluation.plot() and .report() call what bayeval.plots and
bayeval.report registered, and a method's own figure registers as a plot kind."""

import pytest
import xarray as xr

import bayeval  # noqa: F401 (fills the registry)
from bayeval import display
from bayeval.evaluation import Evaluation


def test_import_bayeval_registers_the_plot_the_report_and_every_kind():
    assert {name: fn.__module__ for name, fn in display.DISPLAYS.items()} == {
        "plot": "bayeval.plots", "report": "bayeval.report"}
    assert {"distribution", "intervals", "trace", "rank", "sensitivity", "chunks", "bounds",
            "confidence"} <= set(display.PLOT_KINDS)
    assert display.DEFAULT_PLOT_KINDS["mvu"] == "confidence"


def test_for_methods_names_the_methods_a_kind_applies_to():
    applies = display.for_methods("cbpe", "pemi")
    ev = Evaluation.create(method="cbpe", variant="exact",
                           closed_form=xr.Dataset({"mean": 0.5}))
    other = Evaluation.create(method="judge", variant="exact",
                              closed_form=xr.Dataset({"mean": 0.5}))
    assert applies(ev) is None
    assert "cbpe" in applies(other)


def test_plot_and_report_dispatch_through_the_display_registry(monkeypatch, tmp_path):
    ev = Evaluation.create(method="custom", variant="exact",
                           closed_form=xr.Dataset({"mean": 0.5, "sd": 0.1, "lower": 0.3,
                                                   "upper": 0.7}))
    calls = []
    monkeypatch.setitem(display.DISPLAYS, "plot", lambda *a, **k: calls.append(("plot", a, k)))
    monkeypatch.setitem(display.DISPLAYS, "report", display.DISPLAYS["report"])  # undo below
    display.register_display("report", lambda *a, **k: calls.append(("report", a, k)))
    ev.plot("intervals", coords=None)
    ev.report(tmp_path / "r.html", title="t")
    assert calls == [("plot", (ev, "intervals"), {"coords": None}),
                     ("report", (ev, tmp_path / "r.html"), {"title": "t"})]
    monkeypatch.delitem(display.DISPLAYS, "report")
    with pytest.raises(RuntimeError, match="no 'report' display is registered"):
        ev.report(tmp_path / "r.html")


# ------------------------------------------------------------------ the display format
def test_summaries_print_in_one_format_and_keep_full_precision(command, tmp_path):
    """The same summary printed in Python and by the command line: 4 decimals at most, open
    bounds as "-", effective sample sizes as integers, no scientific notation, no column
    hidden; the DataFrame's values are untouched."""
    import numpy as np
    import pandas as pd

    from bayeval import datasets
    from bayeval.methods.judge import judge
    from bayeval.table import display_frame, table

    d = datasets.noisy_judge(150, 1000, random_seed=3)
    human = np.r_[d.y, np.full(d.yhat_unlabeled.size, np.nan)]
    pd.DataFrame({"human": human, "llm": np.r_[d.yhat, d.yhat_unlabeled]}).to_csv(
        tmp_path / "judge.csv", index=False)
    run = command("judge", str(tmp_path / "judge.csv"), "--label-col", "human", "--judge-col",
                  "llm", "--method", "all")
    summary = judge(d.y, d.yhat, d.yhat_unlabeled, method="all").summary()
    assert repr(summary) in run.stdout
    assert summary.loc["eif", "mean"] != round(summary.loc["eif", "mean"], 4)  # full precision

    frame = pd.DataFrame({"mean": [0.961713, 9.04e-10], "upper": [np.inf, 0.98],
                          "ess_bulk": [2971.66, 12.2], "alert": [True, False],
                          **{f"extra_{i}": [1.5, 2.25] for i in range(12)}})
    text = repr(table(frame, "caption"))
    assert "e-" not in text and "inf" not in text and "..." not in text
    shown = display_frame(frame)
    assert shown["mean"].tolist() == ["0.9617", "0.0000"]
    assert shown["upper"].tolist() == ["-", "0.98"]
    assert shown["ess_bulk"].tolist() == ["2972", "12"]
    assert shown["extra_11"].tolist() == ["1.50", "2.25"] and "extra_11" in text
