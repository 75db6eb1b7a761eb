"""The ``bayeval`` command: every method on CSV or Parquet files, and the demo.

``--scheduler`` (a dask scheduler's address, or ``local``) runs a command on dask
(:mod:`bayeval.scale`): ``cbpe`` then reads DATA lazily and uses the partitioned fast path, and
``--group-col`` runs one evaluation per value of a column on the workers.

Long work (NUTS sampling) shows PyMC's progress bars on stderr when stderr is a terminal;
``--progress``/``--no-progress`` force it either way.

Exit codes: 0 success, 2 bad usage or bad input (a one-line message naming the column, option or
argument), 1 an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import bayeval as be
from bayeval import sampling
from bayeval.methods.cbpe import NOISES

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "InputError", "alert_thresholds",
           "check_output", "class_scores", "column", "main", "read_table", "write_summary"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class InputError(ValueError):
    """Bad input from the command line: reported in one line with exit code 2.

    Examples
    --------
    >>> issubclass(InputError, ValueError)  # caught with the library's validation errors
    True
    """


# ------------------------------------------------------------------------------------ reading
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
    bayeval.cli.InputError: --reference: no such file: none.csv
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
    >>> column(frame, "day", "--score-col", "f.csv")
    Traceback (most recent call last):
    ...
    bayeval.cli.InputError: --score-col: column 'day' of f.csv has non-numeric values such as 'mon'
    >>> column(frame, "p", "--score-col", "f.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli.InputError: --score-col: column 'p' is not in f.csv (its columns: score, ...)
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


def check_output(path: str, option: str, *, folder: bool = False) -> None:
    """Check that ``path`` can be written, before any work is done.

    Parameters
    ----------
    path : str
        The file (or with ``folder`` the folder, made if missing) to write.
    option : str
        The option that named it, for error messages.
    folder : bool
        ``path`` is a folder, made with its missing parents.

    Raises
    ------
    InputError
        A file path that is a folder, or a folder that is a file; a missing folder to write
        the file in; a file where a parent folder should be; a folder that cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> check_output(f"{tmp}/report.html", "--report")
    >>> check_output(f"{tmp}/no/report.html", "--report")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayeval.cli.InputError: --report: cannot write .../no/report.html: the folder .../no does ...
    """
    target = Path(path)
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


def _frame(args) -> pd.DataFrame:
    """The command's rows: one group's under --group-col, else all of DATA."""
    frame = getattr(args, "frame", None)
    return read_table(args.data, "DATA") if frame is None else frame


# ----------------------------------------------------------------------------------- commands
def class_scores(frame: pd.DataFrame, spec: str, path: str) -> pd.DataFrame:
    """The scores of K classes named by ``--score-cols``: a comma-separated list of columns
    (named by the classes), or a prefix ending in ``*`` (``p_*``: the classes are what follows
    the prefix).

    Examples
    --------
    >>> frame = pd.DataFrame({"p_A": [0.7, 0.1], "p_B": [0.2, 0.3], "p_tie": [0.1, 0.6]})
    >>> class_scores(frame, "p_*", "data.csv").columns.tolist()
    ['A', 'B', 'tie']
    >>> class_scores(frame, "p_A,p_tie", "data.csv").columns.tolist()
    ['p_A', 'p_tie']
    """
    if spec.endswith("*"):
        names = [c for c in map(str, frame.columns) if c.startswith(spec[:-1])]
        if len(names) < 2:
            raise InputError(f"--score-cols: {spec!r} matches {len(names)} column(s) of {path}; "
                             "K classes need at least 2")
        classes = [c[len(spec) - 1:] for c in names]
    else:
        names = classes = [c.strip() for c in spec.split(",")]
        if len(names) < 2 or len(set(names)) < len(names):
            raise InputError("--score-cols: give at least 2 distinct columns, comma-separated, "
                             f"or a prefix such as 'p_*'; got {spec!r}")
    columns = {cls: column(frame, name, "--score-cols", path)
               for cls, name in zip(classes, names, strict=True)}
    return pd.DataFrame(columns, index=frame.index)


def _classes(frame: pd.DataFrame, name: str, option: str, path: str) -> pd.Series:
    """A column of class labels as text (the classes are the names of the score columns);
    blank cells stay missing."""
    values = column(frame, name, option, path, numeric=False)
    return values.where(values.isna(), values.astype(str))


def _reference(args) -> tuple[Any, pd.Series] | None:
    """The labelled reference of cbpe (--reference, with the score columns and
    --ref-label-col)."""
    if not args.reference:
        return None
    ref = read_table(args.reference, "--reference")
    label = args.ref_label_col or args.label_col
    if args.score_cols:
        return (class_scores(ref, args.score_cols, args.reference),
                _classes(ref, label, "--ref-label-col", args.reference))
    return (column(ref, args.score_col, "--score-col", args.reference),
            column(ref, label, "--ref-label-col", args.reference))


def _cbpe(args) -> be.Evaluation:
    data = _frame(args)
    kwargs: dict[str, Any] = {}
    if args.score_cols:
        if args.score_col:
            raise InputError("--score-cols: give --score-col (two classes) or --score-cols "
                             "(K classes), not both")
        scores = class_scores(data, args.score_cols, args.data)
        if args.pred_col:
            kwargs["y_pred"] = _classes(data, args.pred_col, "--pred-col", args.data)
        if args.label_col:
            kwargs["labels"] = _classes(data, args.label_col, "--label-col", args.data)
    else:
        scores = column(data, args.score_col, "--score-col", args.data)
        if args.pred_col:
            kwargs["y_pred"] = column(data, args.pred_col, "--pred-col", args.data)
        if args.label_col:
            kwargs["labels"] = column(data, args.label_col, "--label-col", args.data,
                                      missing_ok=True)
    if args.reference:
        kwargs["reference"] = _reference(args)
    if args.chunk_col:
        kwargs["chunks"] = column(data, args.chunk_col, "--chunk-col", args.data,
                                  numeric=False).to_numpy()
    elif args.chunk_period:
        raise InputError("--chunk-period groups the timestamps of --chunk-col; give "
                         "--chunk-col")
    return be.cbpe(scores, threshold=args.threshold, chunk_size=args.chunk_size,
                   n_chunks=args.n_chunks, chunk_period=args.chunk_period, noise=args.noise,
                   kappa=args.kappa,
                   calibration_uncertainty=args.calibration_uncertainty,
                   method=args.method or "exact", **kwargs, **_options(args), **_common(args))


def _pemi(args) -> be.Evaluation:
    data = _frame(args)
    kwargs = {}
    if args.pred_col:
        kwargs["y_pred"] = column(data, args.pred_col, "--pred-col", args.data)
    scores = column(data, args.score_col, "--score-col", args.data)
    labels = column(data, args.label_col, "--label-col", args.data, missing_ok=True)
    with warnings.catch_warnings():  # its notes (a fallback, the plug-in) are printed by _show
        warnings.simplefilter("ignore", UserWarning)
        return be.pemi(scores, labels, threshold=args.threshold, method=args.method or "auto",
                       calibration_uncertainty=args.calibration_uncertainty, **kwargs,
                       **_options(args), **_common(args))


def _judge(args) -> be.Evaluation:
    """The rows with an empty --label-col cell are the items without a human label (the rule
    of :func:`bayeval.judge` with ``data=``)."""
    data = _frame(args)
    data = data.assign(**{
        args.label_col: column(data, args.label_col, "--label-col", args.data, missing_ok=True),
        args.judge_col: column(data, args.judge_col, "--judge-col", args.data)})
    return be.judge(args.label_col, args.judge_col, data=data, method=args.method or "eif",
                    ci_kind=args.ci_kind, **_common(args))


def _bounds(args) -> be.Evaluation:
    data = _frame(args)
    if not args.weak_cols:
        raise InputError("--weak-cols is required (comma-separated labelling-function columns)")
    weak = np.column_stack([column(data, c.strip(), "--weak-cols", args.data, integer=True)
                            for c in args.weak_cols.split(",")])
    y_pred = column(data, args.pred_col, "--pred-col", args.data, integer=True)
    return be.bounds(y_pred.astype(np.int64), weak.astype(np.int64),
                     method=args.method or "exact", **_options(args), **_common(args))


def _common(args) -> dict[str, Any]:
    return {"ci_prob": args.ci_prob, "random_seed": args.seed}


def _options(args) -> dict[str, Any]:
    """The options a subcommand mirrors from its function, where given: --metrics,
    --calibration, --alert-thresholds, --late-labels, --mnar."""
    out: dict[str, Any] = {}
    if getattr(args, "metrics", None):
        out["metrics"] = [m.strip() for m in args.metrics.split(",")]
    for name in ("calibration", "late_labels"):
        if getattr(args, name, None):
            out[name] = getattr(args, name)
    if getattr(args, "alert_thresholds", None):
        out["alert_thresholds"] = alert_thresholds(args.alert_thresholds)
    if getattr(args, "mnar", None):
        out["mnar"] = _numbers(args.mnar, "--mnar", (1, 2))
    return out


def _numbers(text: str, option: str, counts: tuple[int, ...]) -> float | tuple[float, ...]:
    """Comma-separated numbers, e.g. '0.5' or '0,0.5'."""
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"{option}: expected numbers separated by commas, got {text!r}") from None
    if len(values) not in counts:
        raise InputError(f"{option}: expected {' or '.join(map(str, counts))} number(s), got "
                         f"{text!r}")
    return values[0] if len(values) == 1 else values


def alert_thresholds(text: str) -> dict[str, tuple[float | None, float | None]]:
    """--alert-thresholds: ``metric=lower:upper`` pairs separated by commas, an end left empty
    for none.

    Examples
    --------
    >>> alert_thresholds("accuracy=0.8:0.95,f1=0.7:")
    {'accuracy': (0.8, 0.95), 'f1': (0.7, None)}
    """
    out = {}
    for item in text.split(","):
        metric, _, ends = item.partition("=")
        lower, colon, upper = ends.partition(":")
        try:
            out[metric.strip()] = tuple(float(v) if v.strip() else None for v in (lower, upper))
        except ValueError:
            colon = ""
        if not metric.strip() or not colon:
            raise InputError(f"--alert-thresholds: expected metric=lower:upper pairs separated "
                             f"by commas (an end may be empty), got {item!r}")
    return out


# ---------------------------------------------------------------------------------------- dask
def _client(args):
    """A dask client for --scheduler (closed on exit), or nothing."""
    address = getattr(args, "scheduler", None)
    if not address:
        return contextlib.nullcontext()
    try:
        from bayeval import scale

        return scale.connect(address)
    except ImportError:
        raise InputError("--scheduler needs dask: pip install 'bayeval[scale]'") from None
    except OSError as err:
        raise InputError(f"--scheduler: cannot connect to {address}: {err}") from None


def _read_lazy(path: str):
    """DATA as a dask DataFrame: a CSV file or glob, or a Parquet file, folder or glob."""
    import dask.dataframe as dd

    name = path.lower()
    if name.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
        return dd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",")
    if not Path(path).exists() and "*" not in path:
        raise InputError(f"DATA: no such file or folder: {path}")
    return dd.read_parquet(path)


def _cbpe_dask(args) -> be.Evaluation:
    """cbpe partition by partition (DATA is never read whole); the reference is read in memory
    (it calibrates and gives the alert thresholds)."""
    from bayeval import scale

    if args.pred_col:
        raise InputError("--pred-col: with --scheduler the predictions are scores >= "
                         "--threshold; leave it out")
    if args.noise != "none":
        raise InputError("--noise: with --scheduler only the calibrated model (none) is "
                         "partitioned; leave --scheduler out for the noise models")
    if args.score_cols:
        raise InputError("--score-cols: with --scheduler only two classes are partitioned; "
                         "leave --scheduler out for K classes")
    if args.chunk_period:
        raise InputError("--chunk-period: with --scheduler chunks are by --chunk-col key, "
                         "--chunk-size or --n-chunks; leave --scheduler out for periods")
    data = _read_lazy(args.data)
    scores = column(data, args.score_col, "--score-col", args.data, numeric=False)
    chunks = (column(data, args.chunk_col, "--chunk-col", args.data, numeric=False)
              if args.chunk_col else None)
    labels = (column(data, args.label_col, "--label-col", args.data, numeric=False)
              if args.label_col else None)
    if args.late_labels:
        raise InputError("--late-labels: with --scheduler the labels are reported beside the "
                         "estimates; leave --scheduler out to put them in")
    return scale.cbpe(scores, threshold=args.threshold, reference=_reference(args),
                      labels=labels, chunks=chunks, chunk_size=args.chunk_size,
                      n_chunks=args.n_chunks, ci_prob=args.ci_prob, random_seed=args.seed,
                      calibration_uncertainty=args.calibration_uncertainty, **_options(args))


def _one_group(payload) -> be.Evaluation:
    """The command on one group's rows (run on a worker)."""
    args, frame = payload
    return args.func(argparse.Namespace(**{**vars(args), "frame": frame}))


def _by_group(args, client) -> be.Evaluation:
    """One evaluation per value of --group-col, gathered over ``group``."""
    from bayeval import scale

    data = read_table(args.data, "DATA")
    key = args.group_col
    for option in ("group_col", "score_col", "pred_col", "label_col", "judge_col", "chunk_col"):
        if getattr(args, option, None):
            column(data, getattr(args, option), f"--{option.replace('_', '-')}", args.data,
                   numeric=False)
    blank = data[key].isna() | (data[key].astype(str).str.strip() == "")
    if blank.any():
        raise InputError(f"--group-col: column {key!r} of {args.data} has {int(blank.sum())} "
                         f"blank cell(s) (first in row {int(np.flatnonzero(blank)[0])}); every "
                         "row needs a group")
    groups = {str(k): (args, rows.drop(columns=key))
              for k, rows in data.groupby(key, sort=False)}
    return scale.map_evaluations(_one_group, groups, client)


def _run(args, client):
    if getattr(args, "group_col", None):
        return _by_group(args, client)
    if client is not None and args.command == "cbpe":
        return _cbpe_dask(args)
    return args.func(args)


@contextlib.contextmanager
def _progress(args):
    """PyMC's progress bars for the command (through :data:`bayeval.sampling.DEFAULTS`) when
    ``--progress``, or stderr is a terminal and not ``--no-progress``. They go to stderr, with
    whatever the computation prints, so that stdout holds the results only."""
    if not (sys.stderr.isatty() if args.progress is None else args.progress):
        yield
        return
    before = sampling.DEFAULTS["progressbar"]
    sampling.DEFAULTS["progressbar"] = True
    try:
        with contextlib.redirect_stdout(sys.stderr):  # PyMC's rich console writes to stdout
            yield
    finally:
        sampling.DEFAULTS["progressbar"] = before


def _demo(args) -> list[be.Evaluation]:
    from bayeval.demo import run

    return run(seed=args.seed, verbose=True)


# -------------------------------------------------------------------------------------- output
def _show(evaluations: list[be.Evaluation], args) -> None:
    with pd.option_context("display.max_rows", None):  # every row, in the tables' own format
        for ev in evaluations:
            print(ev.summary())
            for warning in ev.warnings:
                print(f"warning: {warning}")
            print()
    if getattr(args, "netcdf", None):
        if len(evaluations) != 1:
            raise InputError("--netcdf writes one evaluation; the demo has several")
        print(f"written {evaluations[0].to_netcdf(args.netcdf)}")
    if getattr(args, "report", None):
        print(f"report: {be.report(evaluations, args.report)}")
    if getattr(args, "summary", None):
        print(f"written {write_summary(evaluations[0].summary(), args.summary)}")


#: the formats of --summary, by suffix
SUMMARY_FORMATS = (".csv", ".parquet", ".json")


def write_summary(summary: pd.DataFrame, path: str) -> str:
    """Write a summary with its full precision: CSV, Parquet or JSON (records, one per row,
    missing values as null) by the suffix of ``path``.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"mean": [0.25]}, index=pd.Index(["accuracy"], name="metric"))
    >>> out = write_summary(frame, f"{tempfile.mkdtemp()}/s.json")
    >>> open(out).read()
    '[{"metric":"accuracy","mean":0.25}]'
    """
    flat = pd.DataFrame(summary).reset_index()
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


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line (``--help`` gives the usage)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayeval", description=be.__doc__.splitlines()[0],
        epilog="exit codes: 0 ok, 2 bad usage or input, 1 internal error")
    parser.add_argument("--version", action="version", version=f"bayeval {be.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, func, help_: str, cols: tuple[str, ...]) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("data", help="CSV or Parquet file")
        for col in cols:
            p.add_argument(f"--{col}-col" if col != "weak" else "--weak-cols",
                           help=_COL_HELP[col])
        p.add_argument("--method", help="method or estimator (see the Python function)")
        p.add_argument("--ci-prob", type=float, default=0.95, help="interval level (0.95)")
        p.add_argument("--seed", type=_seed, default=None, help="random seed (an integer >= 0)")
        p.add_argument("--report", help="write the HTML report to this path")
        p.add_argument("--netcdf", help="write the Evaluation to this netCDF path")
        p.add_argument("--summary", help="write the summary, full precision, to this CSV, "
                                         "Parquet or JSON path (by its suffix)")
        p.add_argument("--scheduler", help="run on dask: a scheduler address, or 'local' for a "
                                           "LocalCluster of one process per core (needs the "
                                           "scale extra); cbpe then reads DATA lazily (a "
                                           "Parquet file or folder, or CSV) partition by "
                                           "partition")
        p.add_argument("--group-col", help="one evaluation per value of this column, gathered "
                                           "over 'group' (in parallel with --scheduler)")
        _progress_option(p)
        p.set_defaults(func=func)
        return p

    p = add("cbpe", _cbpe, "performance without labels (CBPE)", ("score", "pred", "label"))
    p.add_argument("--score-cols",
                   help="K classes: one score column per class, comma-separated (the column "
                        "names are the classes) or a prefix such as 'p_*' (the classes follow "
                        "it); labels and predictions name the classes")
    p.add_argument("--reference", help="labelled reference file (same score columns)")
    p.add_argument("--ref-label-col", help="label column of the reference (--label-col)")
    p.add_argument("--chunk-size", type=int, help="rows per chunk")
    p.add_argument("--n-chunks", type=int, help="number of chunks")
    p.add_argument("--chunk-col", help="column of chunk keys (dates, batches)")
    p.add_argument("--chunk-period",
                   help="chunks by time period of the --chunk-col timestamps: D, W, M, Q, h, "
                        "any pandas period alias, with a multiple (2W)")
    p.add_argument("--threshold", type=float, default=0.5, help="decision threshold (0.5)")
    p.add_argument("--noise", choices=NOISES, default="none",
                   help="calibration noise: none, beta (with --kappa), learned (drift between "
                        "reference chunks) or binning (one uncertain map); default none")
    p.add_argument("--kappa", type=float, help="concentration of --noise beta")
    _metrics_option(p)
    p.add_argument("--calibration", help="auto (default), none, isotonic, platt, beta or "
                                         "scaling_binning, fitted on --reference")
    p.add_argument("--alert-thresholds",
                   help="your own alert thresholds instead of the reference's: "
                        "metric=lower:upper pairs separated by commas, an end may be empty "
                        "(accuracy=0.8:,f1=0.7:0.95)")
    p.add_argument("--late-labels", help="report (default): the labels of --label-col beside the "
                                         "estimates; estimate: in them")
    p.add_argument("--calibration-uncertainty", action=argparse.BooleanOptionalAction,
                   default=True, help="integrate over the posterior of the calibration map "
                                      "fitted on --reference (default); --no-... gives the "
                                      "plug-in, conditional on the fitted map")
    p = add("pemi", _pemi, "metrics with missing labels (PEMI)", ("score", "label", "pred"))
    p.add_argument("--threshold", type=float, default=0.5, help="decision threshold (0.5)")
    _metrics_option(p)
    p.add_argument("--calibration", help="platt (default), beta, isotonic, scaling_binning or "
                                         "none, fitted on the labelled rows")
    p.add_argument("--mnar", help="labels missing not at random: the log-odds shift of the "
                                  "missing labels, a number or 'mean,sd' of a normal prior")
    p.add_argument("--calibration-uncertainty", action=argparse.BooleanOptionalAction,
                   default=True, help="integrate over the posterior of the calibration map "
                                      "fitted on the labelled rows (default); --no-... gives "
                                      "the plug-in, conditional on the fitted map")
    p = add("judge", _judge, "rate from a noisy judge plus some human labels", ("label", "judge"))
    p.add_argument("--ci-kind", choices=("logit", "wald"), default="logit",
                   help="interval of the estimators: logit (inside [0, 1]) or wald (ppi_py's); "
                        "default logit")
    p = add("bounds", _bounds, "Frechet bounds from weak labels", ("pred", "weak"))
    _metrics_option(p)
    p = sub.add_parser("demo", help="run every method on embedded data and write the report")
    p.add_argument("--out", default="bayeval-demo", help="folder of the report (bayeval-demo)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (0)")
    _progress_option(p)
    p.set_defaults(func=_demo)
    return parser


def _seed(text: str) -> int:
    """--seed: an integer >= 0."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return int(text)


def _metrics_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metrics", help="metrics to estimate, separated by commas "
                                     "(e.g. accuracy,f1); default: the function's")


def _progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bars of sampling on stderr (default: when stderr is a "
                        "terminal)")


_COL_HELP = {
    "score": "column of scores in [0, 1]",
    "pred": "column of predictions",
    "label": "column of labels (empty cell = missing)",
    "judge": "column of the judge's labels or scores",
    "weak": "comma-separated columns of labelling-function votes (-1 = abstain)",
}


def main(argv: list[str] | None = None) -> int:
    """Run the ``bayeval`` command: parse ``argv``, evaluate, print the summaries, write files.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``bayeval`` (default: ``sys.argv[1:]``); ``bayeval --help`` lists
        the commands, ``bayeval COMMAND --help`` their options.

    Returns
    -------
    int
        The exit code: :data:`EXIT_OK` (0), :data:`EXIT_USAGE` (2: bad usage or input, with a
        one-line message on stderr naming the column, option or argument) or
        :data:`EXIT_ERROR` (1: an internal error). Usage errors found by argparse exit with 2
        through ``SystemExit``.

    Examples
    --------
    >>> import contextlib, io, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "judge.csv"
    >>> human = [1, 1, 1, 0, 0, 0] + [None] * 6  # humans label half of the rows
    >>> llm = [1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0]
    >>> pd.DataFrame({"human": human * 10, "llm": llm * 10}).to_csv(path, index=False)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["judge", str(path), "--label-col", "human", "--judge-col", "llm"])
    >>> code, "eif" in out.getvalue()
    (0, True)
    >>> main(["judge", str(path), "--label-col", "human"])  # message on stderr
    2
    """
    args = _parser().parse_args(argv)
    try:
        for option in ("report", "netcdf", "summary"):
            if getattr(args, option, None):
                check_output(getattr(args, option), f"--{option}")
        if getattr(args, "summary", None) and (
                Path(args.summary).suffix.lower() not in SUMMARY_FORMATS):
            raise InputError(f"--summary: the file's suffix names its format, one of "
                             f"{', '.join(SUMMARY_FORMATS)}; got {args.summary}")
        if args.command == "demo":
            check_output(args.out, "--out", folder=True)
        with _client(args) as client, _progress(args):
            evaluations = _run(args, client)
        evaluations = evaluations if isinstance(evaluations, list) else [evaluations]
        if args.command == "demo":
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            args.report = out / "report.html"
        _show(evaluations, args)
    except ValueError as err:  # bad input, from the command line or the library's validation
        print(f"bayeval {args.command}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # an internal error: say so, without a traceback
        print(f"bayeval {args.command}: internal error: {type(err).__name__}: {err}",
              file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
