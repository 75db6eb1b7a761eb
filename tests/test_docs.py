"""The documentation site as a reader sees it: three pages (a method's guide, its API reference,
its worked example) built with the site's own configuration and rendered in headless Chromium,
with formulas typeset and no reST left in the text; the docstrings' reST rewritten to Markdown;
the command-line page's examples run as they are written."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.browser import probe

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["cbpe.md", "api/cbpe.md", "notebooks/cbpe.ipynb"]
sys.path.insert(0, str(ROOT / "docs"))
from griffe_rst import to_markdown  # noqa: E402  (docs/ is not a package)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The three pages built by mkdocs with mkdocs.yml (its theme, Markdown extensions,
    MathJax and plugins), the other pages left out."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but mkdocs is missing: `make test` installs the docs extra.")
        pytest.skip("the docs extra is not installed: pip install -e '.[docs]'")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            options = plugin["mkdocstrings"]["handlers"]["python"]["options"]
            options["extensions"] = [str(ROOT / e) for e in options["extensions"]]
    folders = {str(Path(p).parent) for p in PAGES} - {"."}
    config.update(
        docs_dir=str(ROOT / "docs"), strict=False, nav=PAGES,  # links to left-out pages
        exclude_docs="\n".join(["griffe_rst.py", "/*.md", *(f"/{d}/*" for d in folders),
                                *(f"!/{p}" for p in PAGES)]))
    tmp = tmp_path_factory.mktemp("docs")
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                             str(tmp / "mkdocs.yml"), "-d", str(tmp / "site")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "site"


#: what a reader sees: the text, the typeset formulas, the figures
SEEN = """
return {text: document.querySelector("article").innerText,
        formulas: document.querySelectorAll("article mjx-container").length,
        raw: document.querySelectorAll("article .arithmatex:not(:has(mjx-container))").length,
        images: [...document.querySelectorAll("article img")].filter(
          (i) => i.complete && i.naturalWidth > 100).length};
"""


@pytest.mark.parametrize("page", PAGES)
def test_pages_show_typeset_formulas_and_no_rest(site, page, tmp_path):
    path = site / Path(page).with_suffix("") / "index.html"
    seen = probe(tmp_path, path, SEEN)
    leftovers = re.findall(r"\\\(|\\\[|:(?:func|math|class|meth|mod|data):`|^=====", seen["text"],
                           re.M)
    assert not leftovers, f"{page} shows {leftovers[:5]}"
    assert seen["raw"] == 0  # every formula was typeset
    if page != "notebooks/cbpe.ipynb":
        assert seen["formulas"] > 10
    else:  # the stored outputs: tables and figures
        assert seen["images"] >= 1 and "mean" in seen["text"]


def test_docstrings_rest_becomes_markdown():
    text = """The law :math:`\\hat\\theta` of :func:`~bayeval.poibin.pmf` (:class:`be.Evaluation`)

=========  ==========================  =====
``noise``  model                       name
=========  ==========================  =====
``none``   :math:`Y\\sim B(p)`, every   V0
           row on its own
``beta``   shared errors               V2
=========  ==========================  =====

.. math::

    TP = \\sum_i Y_i

Register a kind::

    @register_plot("x", "y")
    def x(ev): ...
"""
    out = to_markdown(text)
    assert out.splitlines()[0] == ("The law \\(\\hat\\theta\\) of `pmf` "
                                   "(`be.Evaluation`)")
    assert "| ``noise`` | model | name |" in out
    assert "| ``none`` | \\(Y\\sim B(p)\\), every row on its own | V0 |" in out
    assert "\\[\nTP = \\sum_i Y_i\n\\]" in out
    assert "Register a kind:\n\n```python\n@register_plot(\"x\", \"y\")\ndef x(ev): ...\n```" in out


def test_the_command_line_page_runs_as_written(tmp_path):
    """Every shell example of docs/cli.md, in order, in an empty folder (but the demo, which
    test_cli.py runs)."""
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "docs" / "cli.md").read_text(), re.S)
    assert len(blocks) >= 6
    # an empty home, but matplotlib's font list and PyTensor's compiled code from the shared
    # caches: built anew in each command they took most of its time
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "MPLBACKEND": "Agg",
           "OPENBLAS_NUM_THREADS": "1", "HOME": str(tmp_path),
           "MPLCONFIGDIR": str(ROOT / ".cache" / "matplotlib"),
           "PYTENSOR_FLAGS": os.environ["PYTENSOR_FLAGS"]}
    for block in blocks:
        if block.startswith("bayeval demo"):
            continue
        result = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, text=True,
                                capture_output=True, timeout=300, check=False)
        assert result.returncode == 0, f"{block}\n{result.stderr[-2000:]}"
    assert {"cbpe.html", "pemi.html", "judge.html", "bounds.html"} <= {
        p.name for p in tmp_path.iterdir()}
