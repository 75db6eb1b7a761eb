"""bayeval.report: one self-contained HTML file, read as text and rendered in headless Chromium."""

import base64
import re
import struct

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayeval as be
from bayeval import datasets
from bayeval.evaluation import Evaluation
from bayeval.report import _Section, _sensitivity, report
from bayeval.table import table
from tests.browser import probe, run_chromium

UNSAFE = "<script>alert('x')</script> & <b>co</b>"


@pytest.fixture(scope="module")
def unsafe():
    """An evaluation whose every text field carries HTML."""
    closed = xr.Dataset({k: ("metric", [v]) for k, v in
                         (("mean", 0.5), ("sd", 0.1), ("lower", 0.3), ("upper", 0.7))},
                        coords={"metric": ["<i>rate</i>"]})
    return Evaluation.create(method="synthetic", variant="<u>exact</u>", closed_form=closed,
                             description=UNSAFE, assumptions=UNSAFE, warnings=[UNSAFE],
                             data=xr.Dataset({"<n>": 3}))


@pytest.fixture(scope="module")
def page(tmp_path_factory, exact, both, unsafe):
    path = report([exact, both, unsafe], tmp_path_factory.mktemp("report") / "report.html")
    return path, path.read_text(encoding="utf-8")


def images(html):
    return re.findall(r'<img src="([^"]*)"', html)


def png_size(src):
    """(width, height) from the IHDR chunk of a base64 PNG data URI."""
    raw = base64.b64decode(src.removeprefix("data:image/png;base64,"))
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", raw[16:24])


def test_report_is_one_self_contained_file(page):
    path, html = page
    assert path.name == "report.html" and html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.replace(UNSAFE.replace("<", "&lt;"), "")
    assert not re.search(r'(src|href)="(?!data:image/png;base64,|#)', html)  # no network
    srcs = images(html)
    # exact: intervals, distribution (its Beta laws); both: those, trace, rank and sensitivity;
    # unsafe: intervals (no law to draw)
    assert len(srcs) == 2 + 5 + 1
    assert all(w > 300 and h > 150 for w, h in map(png_size, srcs))


def test_contents_link_every_section(page):
    _, html = page
    anchors = re.findall(r'<section class="evaluation" id="([^"]+)"', html)
    assert anchors == ["evaluation-1", "evaluation-2", "evaluation-3"]
    contents = html[html.index('<nav class="contents">'):html.index("</nav>")]
    assert re.findall(r'href="#([^"]+)"', contents) == anchors
    assert "labelled (exact)" in contents and "labelled (both)" in contents


def test_sections_hold_summary_check_diagnostics_sensitivity_and_versions(page, both):
    _, html = page
    section = html[html.index('id="evaluation-2"'):html.index('id="evaluation-3"')]
    captions = re.findall(r"<caption>(.*?)</caption>", section)
    assert "labelled (both), closed form: 95% equal-tailed intervals (eti)" in captions
    assert "labelled (both), draws: 95% equal-tailed intervals (eti)" in captions
    assert both.check().caption in captions
    check = both.check()  # 5 metrics x mean, variance, interval mass; the sampler's tests
    assert (f"All {len(check)} tests passed" in section if check.attrs["passed"] else
            f"of {len(check)} tests failed" in section)
    assert "MCMC diagnostics in plain words" in captions
    assert "The chains agree with each other" in section
    ok = both.diagnostics().attrs["ok"]
    assert ("All diagnostics are within their thresholds" in section) == ok
    assert "The prior does not drive the results" in section  # Beta(1, 1): flat prior
    assert both.meta["assumptions"] in section
    for package, version in both.meta["versions"].items():
        assert f"<th scope=\"row\">{package} version</th><td class=\"text\">{version}</td>" \
               in section
    assert '<th scope="row">random_seed</th><td class="text">5</td>' in section


def test_fast_path_only_says_what_does_not_apply(page):
    _, html = page
    section = html[html.index('id="evaluation-1"'):html.index('id="evaluation-2"')]
    assert "labelled (exact), closed form: 95% equal-tailed intervals (eti)" in section
    assert "Not applicable: the check needs both a fast path and draws" in section
    assert "Not applicable: no MCMC was run" in section
    assert "draws:" not in section


def test_everything_from_the_data_is_escaped(page):
    _, html = page
    section = html[html.index('id="evaluation-3"'):]
    assert "<script>alert" not in html and "<b>co</b>" not in html
    assert section.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; "
                         "&lt;b&gt;co&lt;/b&gt;") == 3  # description, assumptions, warning
    assert "&lt;i&gt;rate&lt;/i&gt;" in section and "&lt;u&gt;exact&lt;/u&gt;" in section
    assert "&lt;n&gt;" in section
    assert '<span class="badge warn">1 warning</span>' in section


def test_a_failed_check_and_missing_sensitivity_are_reported(both, tmp_path):
    """A wrong fast path (recall's mean off by 0.01) and an evaluation read back without its
    model or log densities: the failure is highlighted, the sensitivity says why it is absent."""
    groups = {k: v.to_dataset() for k, v in both.tree.children.items()
              if k not in ("log_prior", "log_likelihood")}
    groups["closed_form"] = groups["closed_form"].copy()
    groups["closed_form"]["mean"] += xr.where(groups["closed_form"]["metric"] == "recall",
                                              0.01, 0.0)
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = both.tree.attrs
    html = report(Evaluation(tree), tmp_path / "failed.html").read_text(encoding="utf-8")
    assert '<span class="badge bad">check FAILED</span>' in html
    assert re.search(r"\d+ of \d+ tests failed</strong> \([^)]*recall, mean", html)
    failed = re.findall(r'<tr class="fail"><th scope="row">([^<]*)</th><th scope="row">'
                        r"([^<]*)</th>", html)
    assert ("recall", "mean") in failed
    assert "Not computed: sensitivity() needs the log_prior and log_likelihood groups" in html
    assert "Figure “sensitivity” not drawn" in html
    assert '<nav class="contents">' not in html  # one evaluation: no contents


def test_sensitivity_verdicts_name_the_quantities():
    frame = pd.DataFrame({"prior": [0.2, 0.0], "likelihood": [0.3, 0.01],
                          "diagnosis": ["prior-data conflict", "ok"]},
                         index=pd.Index(["theta[<a>]", "theta[b]"], name="quantity"))
    html = _sensitivity(table(frame, "psense"))
    assert '<div class="callout warn"><strong>The prior matters for 1 quantity</strong>: ' \
           "theta[&lt;a&gt;] (prior-data conflict)." in html
    assert "The data say little about theta[b] (likelihood sensitivity below 0.05)" in html
    assert html.count('<tr class="fail">') == 1


def test_bad_input_is_refused(tmp_path, exact):
    with pytest.raises(ValueError, match="evaluations is empty"):
        report([], tmp_path / "r.html")
    with pytest.raises(ValueError, match="must hold bayeval Evaluations, got DataFrame"):
        report([exact, pd.DataFrame(exact.summary())], tmp_path / "r.html")


# ------------------------------------------------------------------------- the browser
#: the rendered page as a person sees it: tables, images as decoded, badges, sections' answers
LOOK = """
const visible = (el) => el.getClientRects().length > 0;
return {
  tables: document.querySelectorAll("table").length,
  images: [...document.images].map((i) => [i.complete, i.naturalWidth, i.naturalHeight]),
  badges: [...document.querySelectorAll(".badge")].filter(visible).map((b) => b.innerText),
  answers: [...document.querySelectorAll("section.evaluation")].map((s) => {
    const a = s.querySelector(".answer"), r = a.getBoundingClientRect();
    return {text: a.querySelector(".lead").innerText, height: r.height,
            lead: a.querySelectorAll("img, table").length, open: s.querySelectorAll(
              "details[open]").length};
  }),
  height: document.documentElement.scrollHeight,
};
"""


def test_the_report_renders_in_chromium(page, tmp_path, both):
    """Every table is in the DOM, every image decoded to its PNG size, every section's answer
    visible with its figure while its detail stays collapsed, and a screenshot."""
    path, html = page
    seen = probe(tmp_path, path, LOOK)
    assert seen["tables"] == html.count("<table>")
    assert [(w, h) for _, w, h in seen["images"]] == [png_size(s) for s in images(html)]
    assert all(complete for complete, _, _ in seen["images"])
    for answer in seen["answers"]:
        assert answer["text"] and answer["height"] > 100 and answer["lead"] == 1
        assert answer["open"] == 0
    failed = [text for _, text in _Section.of(both, 2).statuses() if "FAILED" in text]
    # in the contents, the section's header and the summary line of its collapsed detail
    assert sorted(b for b in seen["badges"] if "fail" in b.lower()) == sorted(3 * failed)

    shot = tmp_path / "report.png"
    run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,3000", path.as_uri())
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (3000, 1200)
    assert np.std(pixels[..., :3]) > 0.05  # not a blank page


@pytest.fixture(scope="module")
def alerting(tmp_path_factory):
    """CBPE with every default metric, tight thresholds on accuracy so that chunks alert, and
    its report."""
    ref = datasets.calibrated_scores(1000, random_seed=0)
    ana = datasets.calibrated_scores(1000, random_seed=1)
    ev = be.cbpe(ana.scores, reference=(ref.scores, ref.labels), chunk_size=200,
                 alert_thresholds={"accuracy": (0.71, 0.9)}, random_seed=0)
    path = ev.report(tmp_path_factory.mktemp("alerts") / "r.html")
    return ev, path, path.read_text(encoding="utf-8")


def test_a_cbpe_report_with_the_default_metrics_leads_with_its_alerts(alerting):
    """The default metrics include ROC-AUC, whose law is normal (its stored PMF is all NaN)."""
    ev, _, html = alerting
    cf = ev.closed_form
    assert "roc_auc" in cf["metric"].values and ("pmf_prob" not in cf or not np.isfinite(
        cf["pmf_prob"].sel(metric="roc_auc")).any())
    alerts = cf["alert"].drop_sel(chunk="all")
    n, chunks = int(alerts.sum()), int(alerts.any("metric").sum())
    assert n > 0
    lead = re.search(r'<p class="lead">(.*?)</p>', html).group(1)
    assert lead.startswith(f"<strong>{n} alert{'s' * (n > 1)}</strong> in {chunks} chunk")
    worst = cf["p_alert"].where(alerts).max().item()
    assert f"(p_alert {worst:.4f})" in lead  # the likeliest alert is named first
    assert 'alt="chunks plot' in html.split('<div class="answer">')[1].split("</div>")[0]


def test_badges_say_fail_only_where_a_check_failed(alerting):
    """CBPE's boolean ``exact`` column is no failure; alerts are said, "no warnings" is not."""
    ev, _, html = alerting
    assert ev.summary("closed_form")["exact"].any()
    assert "✗ fail" not in html and 'class="badge bad"' not in html
    n = int(ev.closed_form["alert"].drop_sel(chunk="all").sum())
    assert re.search(rf'<span class="badge warn">{n} alerts in \d+ chunks</span>', html)
    assert "no warnings" not in html
    assert '<td class="flag">yes</td>' in html  # exact, as a fact
    assert '<td class="flag"><span class="badge warn">alert</span></td>' in html


def test_the_alerting_report_renders_without_a_failure_badge(alerting, tmp_path):
    _, path, _ = alerting
    seen = probe(tmp_path, path, LOOK)
    assert not [b for b in seen["badges"] if "fail" in b.lower()]
    assert any("alerts in" in b for b in seen["badges"])
    (answer,) = seen["answers"]
    assert "alert" in answer["text"] and answer["lead"] == 1 and answer["open"] == 0


def test_cbpe_of_scores_alone_with_the_default_metrics_reports(tmp_path):
    """``be.cbpe(scores).report(path)``: no reference, one chunk, every default metric."""
    scores = datasets.calibrated_scores(300, random_seed=2).scores
    html = be.cbpe(scores).report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "roc_auc" in html and 'alt="chunks plot' in html
    assert 'class="badge bad"' not in html


def test_a_metric_of_the_whole_matrix_is_not_named_by_the_class_it_is_stored_at():
    from bayeval.report import _where

    dims = ["metric", "class", "chunk"]
    assert _where({"metric": "accuracy", "class": 0, "chunk": "a"}, dims) == "accuracy"
    assert _where({"metric": "recall", "class": 2, "chunk": "a"}, dims) == "recall of class 2"
