"""`Table`: the pandas DataFrame that every result method returns, printed with its caption.

The caption (kept in ``attrs["caption"]``) states what the numbers are, e.g. the interval level
and kind of a summary, or the tolerances of a check. A Table prints (in Python, in notebooks, in
the command line and in the HTML report) in one display format, :func:`display_frame`; its
values keep their full precision.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np
import pandas as pd

__all__ = ["Table", "display_frame", "display_number", "table"]

#: float columns shown as integers wherever they appear (effective sample sizes, counts)
INTEGER_COLUMNS = frozenset({"ess_bulk", "ess_tail", "ess", "n_eff", "n_effective", "n",
                             "divergences", "count"})


def display_number(value, decimals: int = 4) -> str:
    """One number as it is displayed: open bounds (infinite) as ``-``, ``NaN`` as such, from
    1,000 on without decimals, else with ``decimals`` decimals (never in scientific notation).

    Parameters
    ----------
    value : number
    decimals : int
        Decimals below 1,000.

    Returns
    -------
    str

    Examples
    --------
    >>> [display_number(v) for v in (0.961713, 1.00024, 2971.66, 9.04e-10, -np.inf)]
    ['0.9617', '1.0002', '2972', '0.0000', '-']
    >>> display_number(0.5, decimals=2), display_number(float("nan")), display_number(-0.0)
    ('0.50', 'NaN', '0.0000')
    """
    v = float(value) + 0.0  # -0.0 shows as 0
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "-"
    return f"{v:.{0 if abs(v) >= 1000 else decimals}f}"


def _formatter(name, column: pd.Series):
    """How a column's cells are displayed (:func:`display_number`): integers for counts and
    effective sample sizes, else as many decimals as its values need, from 1 to 4; booleans
    and text as they are."""
    kind = column.dtype.kind
    if kind not in "iuf":
        return str
    if kind in "iu" or str(name) in INTEGER_COLUMNS or str(name).startswith("n_"):
        return lambda v: display_number(v, 0)
    x = column.to_numpy(dtype=float)
    x = x[np.isfinite(x) & (np.abs(x) < 1000)]
    needed = max([len(f"{v:.4f}".rstrip("0").split(".")[1]) for v in x], default=1)
    return lambda v: display_number(v, max(1, needed))


def formatters(frame: pd.DataFrame) -> dict:
    """The formatter of each of ``frame``'s columns (for ``DataFrame.to_string``)."""
    return {name: _formatter(name, col) for name, col in frame.items()}


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s cells as the strings that are displayed (see :func:`display_number`).

    Integers for counts and effective sample sizes; other numbers with at most 4 decimals (as
    many as the column needs), none from 1,000 on, never in scientific notation; ``-`` for open
    (infinite) bounds. Booleans and text are kept as they are.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Of strings, with ``frame``'s index and columns.

    Examples
    --------
    >>> frame = pd.DataFrame({"mean": [0.96166, 9.04e-10], "ess_bulk": [2971.66, 1709.2],
    ...                       "r_hat": [1.00024, 1.0114], "upper": [np.inf, 0.98]})
    >>> print(display_frame(frame).to_string())
         mean ess_bulk   r_hat upper
    0  0.9617     2972  1.0002     -
    1  0.0000     1709  1.0114  0.98
    """
    cells = {name: [fmt(v) for v in frame[name]] for name, fmt in formatters(frame).items()}
    return pd.DataFrame(cells, index=frame.index, columns=frame.columns)


class Table(pd.DataFrame):
    """A DataFrame whose printed form starts with ``attrs["caption"]``.

    Everything else is pandas: a Table is a ``pd.DataFrame``, and selections, arithmetic and
    copies of it are Tables again, with the same ``attrs`` (pandas carries ``attrs`` along).
    Build one with :func:`table`.

    Parameters
    ----------
    *args, **kwargs
        Those of ``pd.DataFrame``.

    Attributes
    ----------
    caption : str
        ``attrs["caption"]``, or ``""`` when there is none (the Table then prints as a plain
        DataFrame).

    Examples
    --------
    >>> t = Table({"mean": [0.81, 0.64]}, index=["accuracy", "f1"])
    >>> t.attrs["caption"] = "posterior means"
    >>> print(t)
    posterior means
              mean
    accuracy  0.81
    f1        0.64
    >>> sub = t.loc[["f1"]]
    >>> type(sub).__name__, sub.caption
    ('Table', 'posterior means')
    """

    @property
    def _constructor(self):
        return Table

    @property
    def caption(self) -> str:
        """``attrs["caption"]``, ``""`` when there is none."""
        return self.attrs.get("caption", "")

    def __repr__(self) -> str:
        rows = pd.get_option("display.max_rows")
        spaced = {name: (lambda v, f=fmt: f" {f(v)}") for name, fmt in formatters(self).items()}
        body = pd.DataFrame(self).to_string(  # a leading space per cell, as pandas' own
            formatters=spaced, col_space={n: len(str(n)) + 1 for n in self.columns},
            max_rows=rows,
            min_rows=(pd.get_option("display.min_rows") if rows is not None and len(self) > rows
                      else None))
        body = "\n".join(line.rstrip() for line in body.splitlines())
        return f"{self.caption}\n{body}" if self.caption else body

    def _repr_html_(self) -> str:
        caption = f"<p><strong>{escape(self.caption)}</strong></p>" if self.caption else ""
        return caption + display_frame(self).to_html(max_rows=pd.get_option("display.max_rows"))


def table(frame: pd.DataFrame, caption: str, **attrs) -> Table:
    """Wrap ``frame`` as a :class:`Table` with a caption and extra ``attrs``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The numbers (its data are not copied beyond what ``pd.DataFrame`` does).
    caption : str
        What the numbers are, printed above them, e.g. ``"95% equal-tailed intervals"``.
    **attrs
        More metadata for ``attrs`` (e.g. ``ci_prob=0.95``), read by code rather than printed.

    Returns
    -------
    Table
        ``frame``'s rows and columns with ``attrs`` holding ``caption`` and ``attrs``.

    Examples
    --------
    >>> frame = pd.DataFrame({"lower": [0.7], "upper": [0.9]}, index=["accuracy"])
    >>> t = table(frame, "95% equal-tailed intervals", ci_prob=0.95)
    >>> t.attrs
    {'ci_prob': 0.95, 'caption': '95% equal-tailed intervals'}
    >>> print(t)
    95% equal-tailed intervals
              lower  upper
    accuracy    0.7    0.9
    """
    out = Table(frame)
    out.attrs.update(attrs, caption=caption)
    return out
