"""The demo: one evaluation per method, in the documented order, on the data it describes; the
fast path and the PyMC model agree where both ran; ``bayeval demo`` prints them and writes
their report."""

import contextlib
import io

import numpy as np
import pytest

from bayeval import demo

METHODS = ["labelled", "cbpe", "pemi", "judge", "bounds", "mvu"]


@pytest.fixture(scope="module")
def shown():
    """The demo's evaluations (seed 1) and what it printed."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        evaluations = demo.run(seed=1, verbose=True)
    return evaluations, out.getvalue()


def test_one_evaluation_per_method_in_order_with_its_title(shown):
    evaluations, printed = shown
    assert [ev.meta["method"] for ev in evaluations] == METHODS
    titles = [line[3:] for line in printed.splitlines() if line.startswith("== ")]
    assert titles == [title for title, _ in demo._steps(seed=1)]
    assert [t.split(":")[0] for t in titles] == METHODS


def test_the_fast_path_and_the_model_agree_where_both_ran(shown):
    evaluations, _ = shown
    both = [ev for ev in evaluations if ev.meta["variant"] == "both"]
    assert [ev.meta["method"] for ev in both] == ["labelled", "cbpe"]
    for ev in both:
        assert ev.check().attrs["passed"], ev.meta["method"]


def test_the_evaluations_cover_the_documented_data(shown):
    evaluations, _ = shown
    cbpe = evaluations[1].summary()
    chunks = list(dict.fromkeys(cbpe.index.get_level_values("chunk")))
    assert chunks == ["[0:99]", "[100:199]", "[200:299]", "[300:399]", "all"]
    assert set(cbpe.index.get_level_values("metric")) == {"accuracy", "precision", "recall",
                                                           "f1"}
    assert evaluations[5].summary().shape[0] == 40  # one row per patient


def test_the_data_depend_on_the_seed_only():
    a, b, c = (demo._steps(s) for s in (0, 0, 2))
    assert [t for t, _ in a] == [t for t, _ in c]  # the same titles for any seed
    ev_a, ev_b, ev_c = (steps[3][1]() for steps in (a, b, c))  # the judge: fast, no PyMC
    np.testing.assert_array_equal(ev_a.summary()["mean"], ev_b.summary()["mean"])
    assert not np.array_equal(ev_a.summary()["mean"], ev_c.summary()["mean"])


def test_the_demo_report_leads_with_every_answer_on_a_short_page(shown, tmp_path):
    """At 1,400 px wide: under 12,000 px tall, every section's answer (sentence and figure or
    table) visible without opening anything, and no badge saying fail where no check failed."""
    from bayeval.report import report
    from tests.browser import probe

    evaluations, _ = shown
    path = report(evaluations, tmp_path / "report.html")
    seen = probe(tmp_path, path, """
      const visible = (el) => el.getClientRects().length > 0;
      return {height: document.documentElement.scrollHeight,
              fails: [...document.querySelectorAll(".badge")].filter(visible)
                       .map((b) => b.innerText).filter((t) => /fail/i.test(t)),
              answers: [...document.querySelectorAll("section.evaluation .answer")].map((a) =>
                [a.querySelector(".lead").innerText.length,
                 [...a.querySelectorAll("img, table")].filter(visible).length,
                 a.getBoundingClientRect().height])};
    """)
    assert seen["height"] < 12_000
    assert len(seen["answers"]) == len(METHODS)
    assert all(chars > 40 and leads == 1 and height > 150
               for chars, leads, height in seen["answers"])
    failed = [ev for ev in evaluations
              if ev.closed_form is not None and ev.draws is not None
              and not ev.check().attrs["passed"]]
    assert bool(seen["fails"]) == bool(failed)


def test_the_command_prints_the_evaluations_and_writes_their_report(shown, command, tmp_path,
                                                                    monkeypatch):
    """``bayeval demo --seed 1`` runs ``demo.run(seed=1)`` (here the evaluations computed
    above, not a second time), prints their summaries and writes their report."""
    evaluations, _ = shown
    seeds = []
    monkeypatch.setattr(demo, "run", lambda seed, verbose: seeds.append(seed) or evaluations)
    run = command("demo", "--out", tmp_path / "demo", "--seed", "1")
    assert run.returncode == 0, run.stderr
    assert seeds == [1]
    assert all(ev.summary().caption in run.stdout for ev in evaluations)
    report = tmp_path / "demo" / "report.html"
    assert report.is_file() and f"report: {report}" in run.stdout
    assert "<table" in report.read_text()
