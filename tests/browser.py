"""Headless Chromium for the tests that look at pages as a person would: the HTML report and
the documentation site. Missing Chromium is a skip on a workstation and a failure in CI."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
#: wraps a probe's body: it runs once the page and its fonts (and MathJax, where the page
#: typesets formulas) are ready, and writes its JSON result into the DOM for --dump-dom
PROBE = """<script>
window.addEventListener("load", async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  await document.fonts.ready;
  const result = await (async () => { %s })();
  const out = document.createElement("pre");
  out.id = "probe-result";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str:
    """The browser's path, or a skip (a failure where CI is set)."""
    if CHROMIUM.exists():
        return str(CHROMIUM)
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {CHROMIUM} is missing: .ci/run must install Debian's "
                    "chromium (apt-get install -y chromium).")
    pytest.skip(f"headless Chromium ({CHROMIUM}) is not installed; apt-get install -y chromium")


def run_chromium(tmp_path: Path, *args) -> str:
    """Chromium's stdout, run on a fresh profile in ``tmp_path``."""
    result = subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def probe(tmp_path: Path, page: Path, body: str, width: int = 1400):
    """The JSON value that the JavaScript ``body`` returns on ``page`` (a copy of it, beside
    it, with the probe added) in a window ``width`` pixels wide."""
    html = page.read_text(encoding="utf-8")
    copy = page.with_name(f"_probe_{page.name}")
    copy.write_text(html.replace("</body>", PROBE % body + "</body>"), encoding="utf-8")
    try:
        dom = run_chromium(tmp_path, f"--window-size={width},1000",
                           "--virtual-time-budget=15000", "--dump-dom", copy.as_uri())
    finally:
        copy.unlink()
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run (the page failed to load?)"
    return json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))
