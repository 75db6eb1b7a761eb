"""MVU's answer in the HTML report: the rows to collect and, under costs, the plan of each (the
feature or group to measure first, its flip probability, the measurements in order, their cost,
the expected hard confidence after), as decide() computes it, and as a browser shows it."""

import re
from html import unescape

import pandas as pd
import pytest

import bayeval as be
from bayeval.report import COLLECT_BELOW, PLAN_COLUMNS, report
from tests.browser import probe
from tests.methods.mvu.four_features import BINARY as CLF
from tests.methods.mvu.four_features import IMPUTER
from tests.methods.mvu.four_features import rows as four_rows

NAMES = ["age", "pressure", "chol", "hdl"]
COSTS = {"lipids": 2.0, "age": 1.0, "pressure": 0.5}
GROUPS = {"lipids": ["chol", "hdl"]}


@pytest.fixture(scope="module")
def ev():
    x = pd.DataFrame(four_rows(30, 5, least=1, spread=3), columns=NAMES,
                     index=[f"patient-{i:02d}" for i in range(30)])
    return be.mvu(CLF, x, imputer=IMPUTER)


def answer_table(html):
    """(column headers, rows of cells) of the first section's answer table."""
    answer = re.search(r'<div class="answer">(.*?)</div></div>', html, re.S).group(1)
    heads = [unescape(h) for h in re.findall(r"<th scope=\"col\"[^>]*>(.*?)</th>", answer)]
    rows = [[unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tbody>(.*?)</tbody>", answer, re.S)[0].split("</tr>")
            if row]
    return answer, heads, rows


def test_the_answer_shows_the_plan_under_costs(ev, tmp_path):
    html = report(ev, tmp_path / "r.html", costs=COSTS, groups=GROUPS).read_text()
    answer, heads, rows = answer_table(html)
    assert heads == ["instance", *PLAN_COLUMNS]
    want = ev.decide(COLLECT_BELOW, costs=COSTS, groups=GROUPS)
    want = want[want["collect"]].sort_values("c_hard").head(10)
    assert [r[0] for r in rows] == want.index.tolist()
    assert [r[heads.index("first")] for r in rows] == want["first"].tolist()
    assert [r[heads.index("plan")] for r in rows] == want["plan"].tolist()
    assert "lipids" in {r[heads.index("first")] for r in rows}  # the group is named
    assert "<strong>p_flip_first</strong>" in answer and "per unit of cost" in answer


def test_without_costs_the_answer_is_the_rows_to_collect(ev, tmp_path):
    _, heads, _ = answer_table(report(ev, tmp_path / "r.html").read_text())
    assert "plan" not in heads and "c_hard" in heads and "collect" in heads


def test_plan_options_are_checked(ev, tmp_path):
    other = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="costs= and groups= plan the measurements of MVU"):
        report(other, tmp_path / "r.html", costs=1.0)
    with pytest.raises(ValueError, match="groups: group 'lipids' names 'ldl'"):
        report([other, ev], tmp_path / "r.html", costs=1.0, groups={"lipids": ["ldl"]})
    with pytest.raises(ValueError, match="costs must give every group or feature's cost"):
        report(ev, tmp_path / "r.html", costs={"lipids": 1.0}, groups=GROUPS)
    with pytest.raises(ValueError, match="groups= names features measured together"):
        report(ev, tmp_path / "r.html", groups=GROUPS)
    assert not (tmp_path / "r.html").exists()


def test_the_plan_renders_in_chromium(ev, tmp_path):
    path = report(ev, tmp_path / "r.html", costs=COSTS, groups=GROUPS)
    seen = probe(tmp_path, path, """
const t = document.querySelector(".answer table"), r = t.getBoundingClientRect();
return {width: r.width, height: r.height, page: document.documentElement.clientWidth,
        heads: [...t.querySelectorAll("thead th")].map((h) => h.innerText),
        plans: [...t.querySelectorAll("tbody tr")].map((row) => row.cells[5].innerText)};
""")
    assert seen["heads"] == ["instance", *PLAN_COLUMNS]
    assert 0 < seen["width"] <= seen["page"] and seen["height"] > 100
    assert all(seen["plans"]) and any("lipids" in p for p in seen["plans"])
