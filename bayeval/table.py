"""`Table`: the pandas DataFrame that every result method returns, printed with its caption.

The caption (kept in ``attrs["caption"]``) states what the numbers are, e.g. the interval level
and kind of a summary, or the tolerances of a check.
"""

from __future__ import annotations

import pandas as pd


class Table(pd.DataFrame):
    """A DataFrame whose printed form starts with ``attrs["caption"]``."""

    @property
    def _constructor(self):
        return Table

    @property
    def caption(self) -> str:
        return self.attrs.get("caption", "")

    def __repr__(self) -> str:
        body = super().__repr__()
        return f"{self.caption}\n{body}" if self.caption else body


def table(frame: pd.DataFrame, caption: str, **attrs) -> Table:
    """Wrap ``frame`` as a Table with a caption and extra attrs."""
    out = Table(frame)
    out.attrs.update(attrs, caption=caption)
    return out
