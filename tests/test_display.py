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
