"""A griffe extension for the API pages: bayeval's docstrings are numpydoc, written in reST
(the form that ``help()`` and IDEs show); the site renders Markdown. Before mkdocstrings renders
a docstring, this rewrites the reST in it to Markdown:

* ``:math:`x``` to ``\\(x\\)`` and ``.. math::`` blocks to ``\\[ ... \\]`` (typeset by MathJax);
* ``:func:`~a.b```, ``:class:``, ``:meth:``, ``:mod:``, ``:data:``, ``:attr:``, ``:exc:`` to code
  (with ``~``, the last name only);
* simple tables (``=====  =====`` borders) to Markdown tables;
* literal blocks introduced by ``::`` to fenced code.

mkdocs.yml loads it with ``extensions: [docs/griffe_rst.py]``; ``exclude_docs`` keeps it out of
the site.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(func|class|meth|mod|data|attr|exc|obj|const|ref):`(~?)([^`]+)`")
MATH = re.compile(r":math:`([^`]+)`")
BORDER = re.compile(r"^( *)(=+)( +=+)+ *$")


def _role(match: re.Match) -> str:
    target = match.group(3)
    if "<" in target and target.endswith(">"):  # :func:`title <target>`
        target = target[:target.index("<")].strip()
    if match.group(2):
        target = target.split(".")[-1]
    return f"`{target}`"


def _spans(border: str) -> list[tuple[int, int]]:
    """Column spans (start, end) of a simple table's border line."""
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _table(lines: list[str]) -> list[str]:
    """A reST simple table (border, header, border, rows, border) as Markdown lines."""
    spans = _spans(lines[0])
    borders = [i for i, line in enumerate(lines) if BORDER.match(line)]

    starts = [start for start, _ in spans]

    def cells(line: str) -> list[str]:
        """Cells separated by two spaces or more, each in the column where it starts."""
        out = [""] * len(spans)
        for part in re.finditer(r"\S+(?: \S+)*", line):
            k = max([0] + [i for i, s in enumerate(starts) if s <= part.start()])
            out[k] = f"{out[k]} {part.group()}".strip()
        return out

    def rows(block: list[str]) -> list[list[str]]:
        out: list[list[str]] = []
        for line in block:
            if not line.strip():
                continue
            parts = cells(line)
            if out and not parts[0]:  # a continuation line: first column empty
                out[-1] = [f"{a} {b}".strip() for a, b in zip(out[-1], parts, strict=True)]
            else:
                out.append(parts)
        return out

    header = rows(lines[borders[0] + 1:borders[1]]) if len(borders) > 2 else []
    body = rows(lines[borders[1 if header else 0] + 1:borders[-1]])
    head = [" ".join(col) for col in zip(*header, strict=True)] if header else [""] * len(spans)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(spans)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
    return ["", *out, ""]


def _blocks(text: str) -> str:
    """Tables, math directives and literal blocks of one docstring."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if BORDER.match(line):
            end = i + 1
            borders = 1
            while end < len(lines) and borders < 3:
                if BORDER.match(lines[end]):
                    borders += 1
                    if borders == 2 and end + 1 < len(lines) and not lines[end + 1].strip():
                        break  # a headerless table ends at its second border
                end += 1
            out += _table(lines[i:end + 1])
            i = end + 1
            continue
        stripped = line.strip()
        if stripped.startswith(".. math::") or (stripped.endswith("::") and not
                                                stripped.startswith("..")):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            block: list[str] = []
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip()) > indent):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            pad = " " * indent
            if stripped.startswith(".. math::"):
                formula = stripped[len(".. math::"):].strip()
                out += ["", pad + "\\[", *([pad + formula] if formula else []),
                        *[pad + b.strip() for b in block if b.strip()], pad + "\\]", ""]
            else:
                lead = line.rstrip()[:-2]  # "text::" -> "text:", "text ::" and "::" -> ""
                common = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
                out += ([lead + ":"] if lead.strip() and not lead.endswith(" ") else
                        [lead] if lead.strip() else []) + ["", pad + "```python",
                        *[pad + b[common:] for b in block], pad + "```", ""]
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def to_markdown(text: str) -> str:
    """One docstring's reST roles, math, tables and literal blocks as Markdown.

    Examples
    --------
    >>> to_markdown("The mean :math:`\\\\bar x` of :func:`~bayeval.poibin.pmf`.")
    'The mean \\\\(\\\\bar x\\\\) of `pmf`.'
    """
    text = _blocks(text)
    text = MATH.sub(lambda m: f"\\({m.group(1)}\\)", text)
    return ROLE.sub(_role, text)


class RstToMarkdown(griffe.Extension):
    """Rewrites every docstring's reST to Markdown (:func:`to_markdown`) once it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
