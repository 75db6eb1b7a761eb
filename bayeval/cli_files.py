"""The files of the ``bayeval`` command: its tables read, their columns checked, its outputs
checked before any work and the summary written.

Every error is an :class:`InputError` that names the option or argument (``DATA``,
``--score-col``...) and what it accepts: the command reports it in one line with exit code 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TABLE_FORMATS", "InputError", "check_output", "class_columns", "classes",
           "column", "read_table", "write_table"]

#: the formats of the tables written (--summary, --decisions), by suffix
TABLE_FORMATS = (".csv", ".parquet", ".json")


class InputError(ValueError):
    """Bad input from the command line: reported in one line with exit code 2.

    Examples
    --------
    >>> issubclass(InputError, ValueError)  # caught with the library's validation errors
    True
    """


def read_table(path: str, option: str) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.csv.gz``, ``.tsv``, ``.txt``) or Parquet (``.parquet``, ``.pq``)
    file.

    Parameters
    ----------
    path : str
        The file.
    option : str
        The option or argument that named it, for error messages (``"DATA"``, ``"--reference"``).

    Returns
    -------
    pandas.DataFrame
        Its rows, at least one.

    Raises
    ------
    InputError
        No such file, an unknown extension, an unreadable, empty or row-less file, or a CSV
        whose header names a column twice.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "scores.csv"
    >>> _ = path.write_text("score,label\\n0.9,1\\n0.2,\\n")
    >>> read_table(str(path), "DATA")
       score  label
    0    0.9    1.0
    1    0.2    NaN
    >>> read_table("none.csv", "--reference")
    Traceback (most recent call last):
    ...
    bayeval.cli_files.InputError: --reference: no such file: none.csv
    """
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{option}: no such file: {path}")
    name = file.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            frame = pd.read_parquet(file)
        elif name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            frame = pd.read_csv(file, sep="\t" if name.endswith(".tsv") else ",")
        else:
            raise InputError(f"{option}: {path} is neither CSV (.csv, .tsv) nor Parquet "
                             "(.parquet, .pq)")
    except pd.errors.EmptyDataError:
        raise InputError(f"{option}: {path} is empty") from None
    except (pd.errors.ParserError, OSError, ValueError) as err:
        if isinstance(err, InputError):
            raise
        raise InputError(f"{option}: cannot read {path}: {err}") from None
    if frame.empty:
        raise InputError(f"{option}: {path} has no rows")
    if not name.endswith((".parquet", ".pq")):  # pandas renames a repeated name 'score.1'
        header = pd.read_csv(file, sep="\t" if name.endswith(".tsv") else ",", header=None,
                             nrows=1, dtype=str, keep_default_na=False).iloc[0]
        if header.duplicated().any():
            raise InputError(f"{option}: {path} has the column {header[header.duplicated()]
                             .iloc[0]!r} twice; every column needs its own name")
    return frame


def column(frame, name: str | None, option: str, path: str, *, numeric: bool = True,
           missing_ok: bool = False, integer: bool = False):
    """The column ``name`` of ``frame``, named by the command-line option ``option``.

    Parameters
    ----------
    frame : pandas.DataFrame or dask.dataframe.DataFrame
        The rows read from ``path``.
    name : str or None
        The column; None when the option was not given.
    option, path : str
        The option and the file, for error messages.
    numeric : bool
        Return the values as floats, checked (a pandas ``frame``); else the column as it is
        (keys, or a lazy dask column), only checked to exist.
    missing_ok : bool
        Blank cells are allowed (NaN), e.g. missing labels.
    integer : bool
        The values must be whole numbers (class codes, votes).

    Returns
    -------
    numpy.ndarray of float, or the column (pandas or dask Series) when not ``numeric``.

    Raises
    ------
    InputError
        The option is missing, the column is not in the file, a value is not numeric (or not a
        whole number where ``integer``), or a cell is blank where ``missing_ok`` is False.

    Examples
    --------
    >>> frame = pd.DataFrame({"score": [0.9, 0.2], "label": [1, None], "day": ["mon", "tue"]})
    >>> column(frame, "label", "--label-col", "data.csv", missing_ok=True)
    array([ 1., nan])
    >>> column(frame, "day", "--chunk-col", "data.csv", numeric=False).tolist()
    ['mon', 'tue']
    >>> column(frame, "day", "--score-col", "f.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli_files.InputError: --score-col: column 'day' of f.csv has non-numeric ... 'mon'
    >>> column(frame, "p", "--score-col", "f.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli_files.InputError: --score-col: column 'p' is not in f.csv (its columns: score, ...)
    """
    if name is None:
        raise InputError(f"{option} is required")
    if name not in frame.columns:
        cols = ", ".join(map(str, frame.columns[:20]))
        raise InputError(f"{option}: column {name!r} is not in {path} (its columns: {cols})")
    if not numeric:
        return frame[name]
    values = pd.to_numeric(frame[name], errors="coerce")
    bad = values.isna() & frame[name].notna()
    if bad.any():
        raise InputError(f"{option}: column {name!r} of {path} has non-numeric values such as "
                         f"{frame[name][bad].iloc[0]!r}")
    if values.isna().any() and not missing_ok:
        raise InputError(f"{option}: column {name!r} of {path} has {int(values.isna().sum())} "
                         "empty cells")
    out = values.to_numpy(dtype=float)
    fractional = np.isinf(out) | (np.isfinite(out) & (out != np.round(out)))
    if integer and fractional.any():
        raise InputError(f"{option}: column {name!r} of {path} has values that are not whole "
                         f"numbers such as {out[fractional][0]:g}; it holds class codes")
    return out


def check_output(path: str, option: str, *, folder: bool = False, table: bool = False) -> None:
    """Check that ``path`` can be written, before any work is done.

    Parameters
    ----------
    path : str
        The file (or with ``folder`` the folder, made if missing) to write.
    option : str
        The option that named it, for error messages.
    folder : bool
        ``path`` is a folder, made with its missing parents.
    table : bool
        ``path`` is a table written by :func:`write_table`: its suffix names a format of
        :data:`TABLE_FORMATS`.

    Raises
    ------
    InputError
        A file path that is a folder, or a folder that is a file; a missing folder to write
        the file in; a file where a parent folder should be; a folder that cannot be written;
        a table whose suffix names no format.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> check_output(f"{tmp}/report.html", "--report")
    >>> check_output(f"{tmp}/no/report.html", "--report")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli_files.InputError: --report: cannot write .../no/report.html: the folder ...
    """
    target = Path(path)
    if table and target.suffix.lower() not in TABLE_FORMATS:
        raise InputError(f"{option}: the file's suffix names its format, one of "
                         f"{', '.join(TABLE_FORMATS)}; got {path}")
    if folder:
        if target.exists() and not target.is_dir():
            raise InputError(f"{option}: {path} is a file, not a folder")
        target = target / "report.html"
    elif target.is_dir():
        raise InputError(f"{option}: {path} is a folder; give the path of a file")
    parent = target.parent
    while folder and not parent.exists():
        parent = parent.parent  # made by the command
    if not parent.exists():
        raise InputError(f"{option}: cannot write {path}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise InputError(f"{option}: cannot write {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{option}: cannot write {path}: the folder {parent} is not writable")


def class_columns(frame: pd.DataFrame, spec: str, path: str,
                  option: str = "--score-cols") -> pd.DataFrame:
    """One column per class, named by ``option`` (``--score-cols``, or the probabilities of
    ``--label-model``): a comma-separated list of columns (named by the classes), or a prefix
    ending in ``*`` (``p_*``: the classes are what follows the prefix, in the file's order).

    Examples
    --------
    >>> frame = pd.DataFrame({"p_A": [0.7, 0.1], "p_B": [0.2, 0.3], "p_tie": [0.1, 0.6]})
    >>> class_columns(frame, "p_*", "data.csv").columns.tolist()
    ['A', 'B', 'tie']
    >>> class_columns(frame, "p_A,p_tie", "data.csv").columns.tolist()
    ['p_A', 'p_tie']
    """
    if spec.endswith("*"):
        names = [c for c in map(str, frame.columns) if c.startswith(spec[:-1])]
        if len(names) < 2:
            raise InputError(f"{option}: {spec!r} matches {len(names)} column(s) of {path}; "
                             "K classes need at least 2")
        keys = [c[len(spec) - 1:] for c in names]
    else:
        names = keys = [c.strip() for c in spec.split(",")]
        if len(names) < 2 or len(set(names)) < len(names):
            raise InputError(f"{option}: give at least 2 distinct columns, comma-separated, "
                             f"or a prefix such as 'p_*'; got {spec!r}")
    columns = {cls: column(frame, name, option, path)
               for cls, name in zip(keys, names, strict=True)}
    return pd.DataFrame(columns, index=frame.index)


def classes(frame: pd.DataFrame, name: str, option: str, path: str) -> pd.Series:
    """A column of class labels as text (the classes are the names of the score columns);
    blank cells stay missing.

    Examples
    --------
    >>> frame = pd.DataFrame({"label": [1, None, 2]})
    >>> classes(frame, "label", "--label-col", "data.csv").tolist()
    ['1.0', nan, '2.0']
    """
    values = column(frame, name, option, path, numeric=False)
    return values.where(values.isna(), values.astype(str))


def write_table(table: pd.DataFrame, path: str) -> str:
    """Write a table (a summary, MVU's decisions) with its full precision: CSV, Parquet or
    JSON (records, one per row, missing values as null) by the suffix of ``path``.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"mean": [0.25]}, index=pd.Index(["accuracy"], name="metric"))
    >>> out = write_table(frame, f"{tempfile.mkdtemp()}/s.json")
    >>> open(out).read()
    '[{"metric":"accuracy","mean":0.25}]'
    """
    flat = pd.DataFrame(table).reset_index()
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        flat.to_csv(path, index=False)
    elif suffix == ".parquet":
        flat.to_parquet(path, index=False)
    else:  # Python's float repr round-trips (pandas' JSON keeps 15 digits); NaN as null
        records = flat.astype(object).where(flat.notna(), None).to_dict(orient="records")
        Path(path).write_text(json.dumps(records, default=lambda v: v.item(),
                                         separators=(",", ":")))
    return str(path)
