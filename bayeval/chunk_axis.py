"""The time axis of the chunks plot: where chunks sit (dates or indexes), ticks that do not
overlap, the reference period before the analysis and the alert thresholds as steps.

Matplotlib is imported when a figure is drawn, not with this module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

__all__ = ["chunk_axis", "reference_period", "threshold_steps", "time_ticks"]


def chunk_axis(keys: list[str]) -> tuple[np.ndarray, bool]:
    """Positions of chunks on a time axis: dates where every key starts with one (``2024-03``,
    ``2024-03-04/2024-03-10``: the period's start), else the chunk's index.

    Parameters
    ----------
    keys : list of str
        The chunks' labels, in order.

    Returns
    -------
    positions : ndarray
        ``datetime64`` values, or ``0, 1, ...``.
    dates : bool
        Whether ``positions`` are dates.

    Examples
    --------
    >>> days, dates = chunk_axis(["2024-03-04/2024-03-10", "2024-03-11/2024-03-17"])
    >>> days.astype("datetime64[D]").astype(str).tolist(), dates
    (['2024-03-04', '2024-03-11'], True)
    >>> chunk_axis(["[0:99]", "[100:199]"])
    (array([0, 1]), False)
    """
    import pandas as pd

    starts = [k.split("/")[0].strip() for k in keys]
    if all(re.fullmatch(r"\d{4}-\d{2}(-\d{2})?([ T][\d:.]+)?", s) for s in starts):
        return pd.to_datetime(starts).values, True
    return np.arange(len(keys)), False


def time_ticks(ax: Axes, keys: list[str], dates: bool, before: int = 0) -> None:
    """Ticks that do not overlap: dates by matplotlib's concise date formatter (none before the
    first chunk), else chunk labels every k-th, k such that they fit in the axis (which
    ``before`` positions of the reference period share with the chunks).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> keys = [f"[{100 * i}:{100 * i + 99}]" for i in range(30)]
    >>> fig, ax = plt.subplots()
    >>> time_ticks(ax, keys, dates=False)
    >>> ticks = ax.xaxis.get_major_locator()()
    >>> len(ticks), ax.xaxis.get_major_formatter()(ticks[1], 1)
    (6, '[500:599]')
    >>> plt.close(fig)
    """
    import matplotlib.dates as mdates
    from matplotlib.ticker import FixedLocator, FuncFormatter

    if dates:  # no dates before the first chunk (the reference period's are not known)
        first = mdates.date2num(np.datetime64(keys[0].split("/")[0].strip()))

        class After(mdates.AutoDateLocator):
            def __call__(self):
                ticks = np.asarray(super().__call__())
                return ticks[ticks >= first]

        locator = After(minticks=3, maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        return
    width = max(len(k) for k in keys)
    step = max(1, -(-(len(keys) + before) * width // 70))  # about 70 characters across
    ax.xaxis.set_major_locator(FixedLocator(np.arange(0, len(keys), step)))
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda x, _: keys[round(x)] if 0 <= round(x) < len(keys) else ""))


def reference_period(ax: Axes, x: np.ndarray, realized: np.ndarray,
                     estimate: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                     color: str = "C0") -> None:
    """The reference chunks before the first analysis chunk, spaced as the analysis chunks
    are, on a grey band that a dotted line separates from the analysis: their estimate
    (``(mean, lower, upper)``, dashed, its interval a light band in ``color``) where given,
    and their realized metric (grey diamonds).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> realized = np.array([0.8, 0.82, 0.79])
    >>> reference_period(ax, np.arange(4), realized, (realized + 0.01, realized - 0.03,
    ...                                               realized + 0.04))
    >>> [line.get_label() for line in ax.lines]
    ['estimate (reference)', 'realized (reference)', 'reference | analysis']
    >>> ax.lines[1].get_xdata().tolist()
    [-4.0, -3.0, -2.0]
    >>> plt.close(fig)
    """
    if not np.isfinite(realized).any() and estimate is None:
        return
    step = np.median(np.diff(x)) if x.size > 1 else (
        np.timedelta64(1, "D") if np.issubdtype(x.dtype, np.datetime64) else 1)
    at = x[0] - step * np.arange(realized.size + 1, 1, -1)
    ax.axvspan(at[0] - step / 2, at[-1] + step / 2, color="0.93", lw=0, label="reference period")
    if estimate is not None:
        mean, lower, upper = estimate
        ax.fill_between(at, lower, upper, color=color, alpha=0.1, lw=0)
        ax.plot(at, mean, "--", color=color, lw=1.1, alpha=0.8, label="estimate (reference)")
    ax.plot(at, realized, "D", color="0.45", ms=3.5, mfc="none", label="realized (reference)")
    ax.axvline(x[0] - step, color="0.55", lw=0.8, ls=":", label="reference | analysis")
    ax.text(at[realized.size // 2], 0.97, "reference", transform=ax.get_xaxis_transform(),
            ha="center", va="top", fontsize=8, color="0.4")


def threshold_steps(ax: Axes, x: np.ndarray, m: xr.Dataset) -> None:
    """The alert thresholds as dashed steps over the chunks (flat where they do not vary).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import xarray as xr
    >>> m = xr.Dataset({"lower_threshold": ("chunk", [0.7, 0.7]),
    ...                 "upper_threshold": ("chunk", [0.9, 0.9])})
    >>> fig, ax = plt.subplots()
    >>> threshold_steps(ax, np.arange(2), m)
    >>> sorted(line.get_ydata()[0] for line in ax.lines)
    [0.7, 0.9]
    >>> plt.close(fig)
    """
    for var in ("lower_threshold", "upper_threshold"):
        if var not in m:
            continue
        y = m[var].values.astype(float)
        if np.isfinite(y).any() and np.nanmax(y) > np.nanmin(y):
            ax.step(x, y, where="mid", color="0.35", lw=1, ls="--", label="alert thresholds")
        elif np.isfinite(y).any():
            ax.axhline(float(np.nanmax(y)), color="0.35", lw=1, ls="--",
                       label="alert thresholds")
