"""`Table`: the pandas DataFrame that every result method returns, printed with its caption.

The caption (kept in ``attrs["caption"]``) states what the numbers are, e.g. the interval level
and kind of a summary, or the tolerances of a check.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["Table", "table"]


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
        body = super().__repr__()
        return f"{self.caption}\n{body}" if self.caption else body


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
