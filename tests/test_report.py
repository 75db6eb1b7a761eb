"""bayeval.report: one self-contained HTML file, read as text and rendered in headless Chromium."""

import base64
import json
import os
import re
import struct
import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeval.evaluation import Evaluation
from bayeval.report import _sensitivity, report
from bayeval.table import table

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
#: test harness only (the report has no script): lists each image's decoded size once loaded
DECODE_PROBE = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "decoded";
  out.textContent = JSON.stringify([...document.images].map(
    (img) => [img.complete, img.naturalWidth, img.naturalHeight]));
  document.body.appendChild(out);
});
</script>"""
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
    # exact: distribution, intervals; both: those, trace, rank and sensitivity; unsafe: 2
    assert len(srcs) == 2 + 5 + 2
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
    assert "All 15 tests passed" in section  # 5 metrics x mean, variance, interval mass
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
    assert "1 of 15 tests failed</strong> (recall, mean)" in html
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
def chromium() -> str:
    """The browser; missing is a skip on a workstation and a failure in CI."""
    if CHROMIUM.exists():
        return str(CHROMIUM)
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {CHROMIUM} is missing: .ci/run must install Debian's "
                    "chromium (apt-get install -y chromium).")
    pytest.skip(f"headless Chromium ({CHROMIUM}) is not installed; apt-get install -y chromium")


def run_chromium(tmp_path, *args) -> str:
    result = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_report_renders_in_chromium(page, tmp_path):
    """Every table is in the DOM, every image decoded to its PNG size, and a screenshot."""
    path, html = page
    harness = tmp_path / "harness.html"
    harness.write_text(html.replace("</body>", DECODE_PROBE + "</body>"), encoding="utf-8")
    dom = run_chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom",
                       harness.as_uri())
    # exact: data, summary, versions; both: data, 2 summaries, check, 2 diagnostics,
    # sensitivity, versions; unsafe: data, summary, versions
    assert dom.count("<table>") == html.count("<table>") == 3 + 8 + 3
    assert dom.count("<caption>") == html.count("<caption>")
    assert "labelled (both), draws: 95% equal-tailed intervals (eti)" in dom
    decoded = json.loads(re.search(r'<pre id="decoded">(.*?)</pre>', dom).group(1))
    expected = [png_size(src) for src in images(html)]
    assert [(w, h) for _, w, h in decoded] == expected
    assert all(complete for complete, _, _ in decoded)

    shot = tmp_path / "report.png"
    run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,3000", path.as_uri())
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (3000, 1200)
    assert np.std(pixels[..., :3]) > 0.05  # not a blank page
