"""Per-row arguments named as columns of a table (``data=``), and tables as ``reference=``.

Every entry function takes its per-row arguments as arrays or, with ``data=`` a table, as the
names of its columns (the seaborn and statsmodels convention)::

    be.cbpe("score", data=df, labels="y", chunks="ts", chunk_period="W", reference=ref_df)

The rules, the same for every method (:func:`named_columns`):

* ``data`` is a pandas DataFrame, a pyarrow Table or any table with the dataframe interchange
  protocol (``__dataframe__``) or the Arrow stream protocol, converted to pandas once;
* a string names a column of ``data``; where an argument takes several columns (the scores of
  K classes, labelling-function votes, a label model's probabilities, features, one judge per
  group), a list of names, or a mapping ``{name: column}`` that renames them, gives a
  DataFrame of those columns;
* the columns keep ``data``'s index, so row-level results carry it; an array beside ``data`` is
  taken row by row in ``data``'s order and must have its length; a pandas Series beside
  ``data`` is paired by index and must have the same labels;
* a table as ``reference`` (or ``train``) has its columns under the same names as the analysis
  arguments: the scores, the predictions if named, and the labels column named by ``labels``.
  The analysis table may lack that column: then no analysis label is known. ``chunks`` naming
  a column also chunks the reference by its column of that name;
* with the judge's labels ``y`` a column of ``data`` and ``yhat_unlabeled`` left out, the rows
  where ``y`` is missing (NaN or None) are the items without a human label.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from bayeval.validation.arrays import describe

__all__ = ["MULTI_COLUMN", "PRESETS", "REFERENCE_PARTS", "as_table", "is_table",
           "named_columns"]

#: arguments that may name several columns (a list, or a mapping that renames them)
MULTI_COLUMN = ("scores", "weak_labels", "label_model", "X", "yhat")
#: strings that are an argument's own options, never column names (None: every string)
PRESETS: dict[str, tuple[str, ...] | None] = {"p": ("half", "prevalence"), "label_model": None}
#: the parts of a reference table, in the order of ``reference=(scores, labels, y_pred)``
REFERENCE_PARTS = ("scores", "labels", "y_pred")
#: arguments that are not rows of ``data``
_OTHER = ("reference", "reference_chunks", "train", "yhat_unlabeled")


def is_table(x: Any) -> bool:
    """Whether ``x`` is a table: a pandas DataFrame, or an object with the dataframe
    interchange protocol (``__dataframe__``: pyarrow, polars...) or the Arrow stream protocol.

    Examples
    --------
    >>> is_table(pd.DataFrame({"a": [1]})), is_table(np.zeros((2, 2))), is_table((1, 2))
    (True, False, False)
    """
    return isinstance(x, pd.DataFrame) or (
        not isinstance(x, (pd.Series, pd.Index, np.ndarray))
        and (hasattr(x, "__dataframe__") or hasattr(x, "__arrow_c_stream__")))


def as_table(x: Any, name: str = "data") -> pd.DataFrame:
    """A table as a pandas DataFrame, converted once (no copy for a DataFrame).

    Parameters
    ----------
    x : table
        A pandas DataFrame, or a table that :func:`is_table` accepts.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        ``x`` is not a table, or its conversion to pandas failed (the reason is given).

    Examples
    --------
    >>> as_table({"a": [1]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: data must be a table (a pandas DataFrame, a pyarrow Table, or any table with ...
    """
    if isinstance(x, pd.DataFrame):
        return x
    if not is_table(x):
        raise ValueError(f"{name} must be a table (a pandas DataFrame, a pyarrow Table, or any "
                         "table with __dataframe__) whose columns the other arguments name; "
                         f"got {type(x).__name__} {describe(x)}.")
    try:
        if hasattr(x, "to_pandas"):
            frame = x.to_pandas()
        elif hasattr(x, "__dataframe__"):
            frame = pd.api.interchange.from_dataframe(x)
        else:
            frame = pd.DataFrame.from_arrow(x)
    except Exception as err:  # the converter's own error, whatever its type, said in one line
        raise ValueError(f"{name}: the {type(x).__name__} could not be converted to a pandas "
                         f"DataFrame ({type(err).__name__}: {err}); convert it yourself "
                         "(e.g. with .to_pandas()) and pass the DataFrame.") from None
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name}: the {type(x).__name__} converted to a "
                         f"{type(frame).__name__}, not a DataFrame; pass a pandas DataFrame.")
    return frame


def _names(value: Any, name: str) -> list | dict | None:
    """The column names that ``value`` gives (a list, or a mapping new name -> column), None
    when it names no column."""
    if isinstance(value, str):
        return [value]
    if name in MULTI_COLUMN and isinstance(value, Mapping) and value and all(
            isinstance(v, str) for v in value.values()):
        return dict(value)
    if (name in MULTI_COLUMN and isinstance(value, (list, tuple)) and value
            and all(isinstance(v, str) for v in value)):
        return list(value)
    return None


def _is_preset(value: Any, name: str) -> bool:
    return isinstance(value, str) and name in PRESETS and (
        PRESETS[name] is None or value in PRESETS[name])


def _lookup(frame: pd.DataFrame, value: Any, name: str, where: str, role: str = "") -> Any:
    """The columns that ``value`` names in ``frame``: a Series for one name, else a DataFrame
    (its columns renamed by a mapping's keys). ``role``: the argument whose names they are
    (default ``name``)."""
    names = _names(value, role or name)
    wanted = list(names.values()) if isinstance(names, dict) else names
    for col in wanted:
        if col not in frame.columns:
            shown = ", ".join(map(repr, frame.columns[:10]))
            more = f", ... ({frame.columns.size} in all)" if frame.columns.size > 10 else ""
            raise ValueError(f"{name}: column {col!r} is not in {where} (its columns: "
                             f"{shown}{more}).")
        if (frame.columns == col).sum() > 1:
            raise ValueError(f"{name}: {where} has {int((frame.columns == col).sum())} columns "
                             f"named {col!r}; give each column its own name.")
    if isinstance(value, str):
        return frame[value]
    if isinstance(names, dict):
        return frame[wanted].set_axis(list(names), axis=1)
    return frame[wanted]


def _beside(value: Any, name: str, frame: pd.DataFrame) -> Any:
    """An array or pandas object given beside ``data``, in ``data``'s row order."""
    if value is None or isinstance(value, str) or np.ndim(value) == 0:
        return value
    if isinstance(value, (pd.Series, pd.DataFrame)):
        index = value.index
        if index.equals(frame.index):
            return value
        differ = frame.index.symmetric_difference(index, sort=False)
        if differ.size or not index.is_unique or not frame.index.is_unique:
            what = (f"{differ.size} label(s) are in only one of them (e.g. {differ[0]!r})"
                    if differ.size else "an index has duplicated labels")
            raise ValueError(f"{name} is a pandas {type(value).__name__} beside data=, paired "
                             f"with data's rows by index, but {what}; give it data's index, "
                             "make it a column of data, or pass .to_numpy() to pair it by "
                             "position.")
        return value.loc[frame.index]
    n = len(value) if hasattr(value, "__len__") else None
    if n is not None and n != len(frame):
        raise ValueError(f"{name} has {n} rows but data has {len(frame)}; an array beside "
                         "data= gives one value per row of data, in its order (or name a "
                         "column of data).")
    return value


def _no_data(value: Any, name: str) -> None:
    """Refuse a column name when there is no table to find it in. Only a string is taken for
    one: without a table, a list of strings is values (class labels, judge verdicts)."""
    if isinstance(value, str) and not _is_preset(value, name):
        raise ValueError(f"{name} is {describe(value)}, a column name, but no table was given: "
                         f"pass the table as data= to take {name} from its columns, or give "
                         "the values as an array.")


def _reference_table(ref: pd.DataFrame, given: dict[str, Any], parts: tuple[str, ...]) -> tuple:
    """``reference=(scores, labels[, y_pred])`` (the ``parts`` the function takes) from the
    columns of a reference table, found under the names of the analysis arguments."""
    out = []
    for part in parts:
        if part == "y_pred" and not (isinstance(given.get(part), str)
                                     and given[part] in ref.columns):
            break  # made from the scores, as the analysis predictions are when not given
        if _names(given.get(part), part) is None:
            raise ValueError(f"reference is a table, whose columns are found under the names of "
                             f"the analysis arguments; name {part} as a column ({part}='...') "
                             "so that it can be found in the reference.")
        out.append(_lookup(ref, given[part], part, "the reference table"))
    return tuple(out)


def named_columns(data: Any = None, *, absent_labels: Any = None,
            reference_parts: tuple[str, ...] = REFERENCE_PARTS, **arguments: Any
            ) -> tuple[Any, ...]:
    """The per-row arguments with their column names resolved in ``data`` and a table
    ``reference`` (or ``train``) turned into its parts: ready for the entry functions' checks.

    The rules are in the module docstring. Argument names give the roles: ``scores``,
    ``labels``, ``y_pred``, ``chunks``, ``p``, ``y``, ``yhat``, ``weak_labels``,
    ``label_model`` and ``X`` are rows of ``data``; ``reference`` is a tuple or a table,
    ``reference_chunks`` a column of a table reference; ``train`` a table of the columns of
    ``X``; ``yhat_unlabeled`` the judge on the items without a human label.

    Parameters
    ----------
    data : table, optional
        The analysis rows (:func:`as_table`). Without it, a string where
        an array is expected is refused with a hint to pass ``data=``.
    absent_labels : optional
        What ``labels`` is when ``data`` lacks the column it names and a table reference has
        it (the analysis has no label): None, or a number filling every row (NaN: missing).
    reference_parts : tuple of str
        The parts of ``reference`` the function takes, in order: ``("scores", "labels")``, and
        ``"y_pred"`` where a table reference has the column that ``y_pred`` names.
    **arguments
        The entry function's arguments by their public names, in the order to return them.

    Returns
    -------
    tuple
        The arguments in the order given: columns as pandas Series (or DataFrames) with
        ``data``'s index, arrays and Series beside ``data`` in its row order, ``reference`` as
        a tuple, everything else unchanged.

    Raises
    ------
    ValueError
        A column that is not in its table (naming the argument, the column and the table's
        first 10 columns); a column name without ``data``; ``data`` or a reference that is not
        a table; an array beside ``data`` of another length, a Series whose index differs.

    Examples
    --------
    >>> df = pd.DataFrame({"s": [0.9, 0.2, 0.6], "y": [1, 0, 0]}, index=["a", "b", "c"])
    >>> scores, labels = named_columns(df, scores="s", labels="y")
    >>> labels.to_dict()
    {'a': 1, 'b': 0, 'c': 0}
    >>> named_columns(df, scores="score")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: scores: column 'score' is not in data (its columns: 's', 'y').
    >>> named_columns(scores="s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: scores is 's', a column name, but no table was given: pass the table as data=...
    """
    out = dict(arguments)
    reference = arguments.get("reference")
    ref = as_table(reference, "reference") if is_table(reference) else None
    if data is None:
        for name, value in arguments.items():
            if name not in ("reference", "reference_chunks"):
                _no_data(value, name)
        if ref is not None:
            _reference_table(ref, arguments, reference_parts)  # raises: nothing is named
        return tuple(out.values())
    frame = as_table(data, "data")
    for name, value in arguments.items():
        if name in _OTHER or _is_preset(value, name):
            continue
        names = _names(value, name)
        if names is None:
            out[name] = _beside(value, name, frame)
        elif (name == "labels" and isinstance(value, str) and value not in frame.columns
              and ref is not None and value in ref.columns):
            out[name] = (None if absent_labels is None else
                         pd.Series(absent_labels, index=frame.index, dtype=float, name=value))
        else:
            out[name] = _lookup(frame, value, name, "data")
    if ref is not None:
        out["reference"] = _reference_table(ref, arguments, reference_parts)
        chunks = arguments.get("chunks")
        if "reference_chunks" in arguments:
            own = arguments["reference_chunks"]
            key = own if isinstance(own, str) else (
                chunks if own is None and isinstance(chunks, str) and chunks in ref.columns
                else None)
            if key is not None:
                out["reference_chunks"] = _lookup(ref, key, "reference_chunks",
                                                  "the reference table")
    if is_table(arguments.get("train")) and isinstance(arguments.get("X"), (list, tuple, dict)):
        train = as_table(arguments["train"], "train")
        out["train"] = _lookup(train, arguments["X"], "train", "the train table", "X")
    if "yhat_unlabeled" in arguments and arguments["yhat_unlabeled"] is None:
        out["y"], out["yhat"], out["yhat_unlabeled"] = _split_labelled(out["y"], out["yhat"])
    return tuple(out.values())


def _split_labelled(y: Any, yhat: Any) -> tuple[Any, Any, Any]:
    """The judge's items with a human label and those without: the rows where ``y`` is not
    missing, and where it is."""
    if not isinstance(y, pd.Series):
        raise ValueError("yhat_unlabeled is required unless y names one column of data: then "
                         "the rows where y is missing (NaN or None) are the items without a "
                         "human label.")
    known = y.notna().to_numpy()
    if known.all():
        raise ValueError(f"yhat_unlabeled: every row of data has a human label in column "
                         f"{y.name!r}; the items without one (y missing: NaN or None) are the "
                         "ones the judge adds. Give yhat_unlabeled, or rows without a label.")
    if isinstance(yhat, (pd.Series, pd.DataFrame)):
        return y[known], yhat.iloc[known], yhat.iloc[~known]
    yhat = np.asarray(yhat)
    return y[known], yhat[known], yhat[~known]
