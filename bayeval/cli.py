"""The ``bayeval`` command: every method on CSV or Parquet files, and the demo.

``--scheduler`` (a dask scheduler's address, or ``local``) runs a command on dask
(:mod:`bayeval.scale`): ``cbpe`` then reads DATA lazily and uses the partitioned fast path, and
``--group-col`` runs one evaluation per value of a column on the workers.

Long work (NUTS sampling) shows PyMC's progress bars on stderr when stderr is a terminal;
``--progress``/``--no-progress`` force it either way. ``--sampler nutpie`` samples with nutpie
instead of PyMC's NUTS (:func:`bayeval.sampling.sample`).

``bayeval run CONFIG`` runs the command that a TOML file describes (:mod:`bayeval.cli_config`);
the files are read and written by :mod:`bayeval.cli_files`, the saved classifiers of ``mvu``
loaded by :mod:`bayeval.cli_models`.

Exit codes: 0 success, 1 an alert fired (an estimate of ``cbpe`` outside its thresholds; not
with ``--no-fail-on-alert``), 2 bad usage or bad input (a one-line message naming the column,
option or argument), 3 an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import bayeval as be
from bayeval import sampling
from bayeval.cli_config import config_argv, in_config_terms
from bayeval.cli_files import (
    InputError,
    check_output,
    class_columns,
    classes,
    column,
    read_table,
    write_table,
)
from bayeval.cli_models import load_classifier
from bayeval.methods.cbpe import NOISES
from bayeval.methods.mvu.plan import plan_units

__all__ = ["EXIT_ALERT", "EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "alert_thresholds", "main"]

#: the exit codes: success, an alert fired, bad usage or input, an internal error
EXIT_OK, EXIT_ALERT, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


def _frame(args) -> pd.DataFrame:
    """The command's rows: one group's under --group-col, else all of DATA."""
    frame = getattr(args, "frame", None)
    return read_table(args.data, "DATA") if frame is None else frame


# ----------------------------------------------------------------------------------- commands
def _rows(args, frame: pd.DataFrame, path: str, *, labels_missing_ok: bool) -> dict[str, Any]:
    """The scores (--score-col, or --score-cols for K classes), predictions (--pred-col) and
    labels (--label-col) of cbpe and labelled, where given."""
    out: dict[str, Any] = {}
    if args.score_cols:
        if args.score_col:
            raise InputError("--score-cols: give --score-col (two classes) or --score-cols "
                             "(K classes), not both")
        out["scores"] = class_columns(frame, args.score_cols, path)
        read = classes
    else:
        if args.score_col or not args.pred_col:
            out["scores"] = column(frame, args.score_col, "--score-col", path)

        def read(frame, name, option, path):
            return column(frame, name, option, path,
                          missing_ok=labels_missing_ok and option == "--label-col")
    if args.pred_col:
        out["y_pred"] = read(frame, args.pred_col, "--pred-col", path)
    if args.label_col:
        out["labels"] = read(frame, args.label_col, "--label-col", path)
    return out


def _reference(args) -> dict[str, Any]:
    """The labelled reference of cbpe (--reference, with the score columns and
    --ref-label-col), chunked by its --chunk-col column where it has one."""
    if not args.reference:
        return {}
    ref = read_table(args.reference, "--reference")
    label = args.ref_label_col or args.label_col
    if args.score_cols:
        out = {"reference": (class_columns(ref, args.score_cols, args.reference),
                             classes(ref, label, "--ref-label-col", args.reference))}
    else:
        out = {"reference": (column(ref, args.score_col, "--score-col", args.reference),
                             column(ref, label, "--ref-label-col", args.reference))}
    if args.chunk_col and args.chunk_col in ref.columns:
        out["reference_chunks"] = ref[args.chunk_col].to_numpy()
    return out


def _cbpe(args) -> be.Evaluation:
    data = _frame(args)
    kwargs = _rows(args, data, args.data, labels_missing_ok=True) | _reference(args)
    if args.chunk_col:
        kwargs["chunks"] = column(data, args.chunk_col, "--chunk-col", args.data,
                                  numeric=False).to_numpy()
    elif args.chunk_period:
        raise InputError("--chunk-period groups the timestamps of --chunk-col; give "
                         "--chunk-col")
    return be.cbpe(kwargs.pop("scores"), threshold=args.threshold, chunk_size=args.chunk_size,
                   n_chunks=args.n_chunks, chunk_period=args.chunk_period, noise=args.noise,
                   kappa=args.kappa,
                   calibration_uncertainty=args.calibration_uncertainty,
                   method=args.method or "exact", **kwargs, **_options(args), **_common(args))


def _labelled(args) -> be.Evaluation:
    """Every row labelled: the scores or the predictions, and the labels."""
    if not args.label_col:
        raise InputError("--label-col is required")
    prior = _numbers(args.prior, "--prior", (2,)) if args.prior else (1.0, 1.0)
    rows = _rows(args, _frame(args), args.data, labels_missing_ok=False)
    return be.labelled(rows.get("scores"), rows["labels"], y_pred=rows.get("y_pred"),
                       threshold=args.threshold, prior=prior, method=args.method or "exact",
                       ci_kind=args.ci_kind, **_options(args), **_common(args))


def _pemi(args) -> be.Evaluation:
    """Two classes (--score-col) or K (--score-cols); the empty --label-col cells are the
    missing labels."""
    data = _frame(args)
    if args.score_cols:
        if not args.label_col:
            raise InputError("--label-col is required")
        kwargs = _rows(args, data, args.data, labels_missing_ok=True)
        scores, labels = kwargs.pop("scores"), kwargs.pop("labels")
    else:
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


#: the label models that bounds fits on the weak labels
LABEL_MODELS = ("dawid_skene", "majority_vote")


def _bounds(args) -> be.Evaluation:
    data = _frame(args)
    if not args.weak_cols:
        raise InputError("--weak-cols is required (comma-separated labelling-function columns)")
    weak = np.column_stack([column(data, c.strip(), "--weak-cols", args.data, integer=True)
                            for c in args.weak_cols.split(",")])
    y_pred = column(data, args.pred_col, "--pred-col", args.data, integer=True)
    label_model = args.label_model or LABEL_MODELS[0]
    if label_model not in LABEL_MODELS:
        if "*" not in label_model and "," not in label_model:
            raise InputError(f"--label-model: {', '.join(LABEL_MODELS)}, or your label model's "
                             "probabilities: one column per class (in class order), "
                             f"comma-separated or a prefix such as 'lm_*'; got {label_model!r}")
        label_model = class_columns(data, label_model, args.data, "--label-model").to_numpy()
    kwargs: dict[str, Any] = {"model": args.model or "m1"}
    if args.gold_col:
        if (args.method or "exact") not in ("pymc", "both"):
            raise InputError("--gold-col: the gold labels enter the PyMC model m3; add "
                             "--method pymc (or both)")
        kwargs = {"model": args.model or "m3",
                  "labels": column(data, args.gold_col, "--gold-col", args.data,
                                   missing_ok=True, integer=True)}
    return be.bounds(y_pred.astype(np.int64), weak.astype(np.int64), label_model=label_model,
                     method=args.method or "exact", **kwargs, **_options(args), **_common(args))


def _mvu(args) -> be.Evaluation:
    """The saved classifier on DATA's features (empty cells: missing), the imputer fitted on
    --train."""
    _decide(args)  # its options checked before any work
    data = _frame(args)
    classifier = load_classifier(args.classifier, trust=_words(args.trust),
                                 trust_all=args.trust_all, unsafe_pickle=args.unsafe_pickle)
    names = _words(args.feature_cols) or [str(c) for c in getattr(
        classifier, "feature_names_in_", ())]
    if not names:
        raise InputError("--feature-cols is required: the classifier does not name its "
                         "features (it was fitted on an array)")
    plan_units(_plan(args)["groups"], names)  # --groups names features
    index = (pd.Index(column(data, args.id_col, "--id-col", args.data, numeric=False),
                      name=args.id_col) if args.id_col else data.index)

    def features(frame, path, missing_ok):
        return pd.DataFrame({c: column(frame, c, "--feature-cols", path, missing_ok=missing_ok)
                             for c in names}, index=frame.index)

    train = features(read_table(args.train, "--train"), args.train, False) if args.train else None
    return be.mvu(classifier, features(data, args.data, True).set_index(index), train=train,
                  imputer=args.imputer, method=args.method or "exact", threshold=args.threshold,
                  draws=args.draws, ci_kind=args.ci_kind, **_common(args))


def _decide(args) -> dict[str, Any] | None:
    """The arguments of MVU's ``decide()`` where --decide-threshold or --collect-cost asks for
    its decisions."""
    plan = _plan(args)
    if args.decide_threshold is None and args.collect_cost is None:
        for option in ("costs", "groups", "decisions"):
            if getattr(args, option) and not (option != "decisions" and args.report):
                raise InputError(f"--{option}: give --decide-threshold or --collect-cost"
                                 + (", or --report" if option != "decisions" else ""))
        return None
    return {"threshold": args.decide_threshold, "collect_cost": args.collect_cost,
            "change_cost": args.change_cost, **plan}


def _plan(args) -> dict[str, Any]:
    """The costs and groups of MVU's plans (--costs, --groups)."""
    if args.groups and not args.costs:
        raise InputError("--groups: give --costs too (the cost of each group, and of each "
                         "feature of no group)")
    return {"costs": _costs(args.costs) if args.costs else None,
            "groups": _groups(args.groups) if args.groups else None}


def _costs(text: str) -> float | dict[str, float]:
    """--costs: one number (every feature's), or feature=cost pairs separated by commas."""
    items = [w.partition("=") for w in _words(text)]
    try:
        if len(items) == 1 and not items[0][1]:
            return float(items[0][0])
        if items and all(eq and name.strip() for name, eq, _ in items):
            return {name.strip(): float(value) for name, _, value in items}
    except ValueError:
        pass
    raise InputError("--costs: one number (the cost of every feature) or feature=cost pairs "
                     f"separated by commas; got {text!r}")


def _groups(text: str) -> dict[str, list[str]]:
    """--groups: ``group=feature,feature`` items separated by ';'."""
    out: dict[str, list[str]] = {}
    for item in (i for i in text.split(";") if i.strip()):
        name, eq, members = item.partition("=")
        if not (eq and name.strip() and _words(members)) or name.strip() in out:
            raise InputError("--groups: group=feature,feature items separated by ';', each "
                             "group named once, e.g. 'lipids=chol,hdl;vitals=pulse,pressure'; "
                             f"got {text!r}")
        out[name.strip()] = _words(members)
    if not out:
        raise InputError(f"--groups: give at least one group=feature,feature item; got {text!r}")
    return out


def _words(text: str | list[str] | None) -> list[str]:
    """Comma-separated words (of one option, or of a repeated one), stripped."""
    items = text if isinstance(text, list) else [text or ""]
    return [w.strip() for item in items for w in item.split(",") if w.strip()]


def _common(args) -> dict[str, Any]:
    return {"ci_prob": args.ci_prob, "random_seed": args.seed}


def _options(args) -> dict[str, Any]:
    """The options a subcommand mirrors from its function, where given: --metrics,
    --calibration, --alert-thresholds, --late-labels, --mnar and cbpe's outputs' options."""
    out: dict[str, Any] = {}
    if getattr(args, "metrics", None):
        out["metrics"] = [m.strip() for m in args.metrics.split(",")]
    for name in ("calibration", "late_labels"):
        if getattr(args, name, None):
            out[name] = getattr(args, name)
    if getattr(args, "alert_thresholds", None):
        out["alert_thresholds"] = alert_thresholds(args.alert_thresholds)
    if getattr(args, "mnar", None):
        out["mnar"] = (class_shifts(args.mnar) if getattr(args, "score_cols", None) else
                       _numbers(args.mnar, "--mnar", (1, 2)))
    for name in ("normalize_confusion_matrix", "normalize_business_value"):
        if getattr(args, name, None):
            out[name] = getattr(args, name)
    if getattr(args, "business_value_matrix", None):
        values = _numbers(args.business_value_matrix, "--business-value-matrix", (4,))
        out["business_value_matrix"] = [list(values[:2]), list(values[2:])]
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


def class_shifts(text: str) -> dict[str, float | tuple[float, ...]]:
    """--mnar with K classes: ``class=delta`` or ``class=mean,sd`` items separated by ';'.

    Examples
    --------
    >>> class_shifts("A=0.5;tie=0,1")
    {'A': 0.5, 'tie': (0.0, 1.0)}
    """
    out = {}
    for item in text.split(";"):
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise InputError("--mnar: with --score-cols give 'class=delta' or 'class=mean,sd' "
                             f"items separated by ';', e.g. 'A=0.5;tie=0,1'; got {text!r}")
        out[name.strip()] = _numbers(value, "--mnar", (1, 2))
    return out


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
    for option in ("normalize_confusion_matrix", "business_value_matrix",
                   "normalize_business_value"):
        if getattr(args, option):
            raise InputError(f"--{option.replace('_', '-')}: the confusion cells and business "
                             "value are not partitioned; leave --scheduler out for them")
    data = _read_lazy(args.data)
    scores = column(data, args.score_col, "--score-col", args.data, numeric=False)
    chunks = (column(data, args.chunk_col, "--chunk-col", args.data, numeric=False)
              if args.chunk_col else None)
    labels = (column(data, args.label_col, "--label-col", args.data, numeric=False)
              if args.label_col else None)
    if args.late_labels or args.mnar:
        raise InputError(f"--{'late-labels' if args.late_labels else 'mnar'}: with --scheduler "
                         "the labels are reported beside the estimates; leave --scheduler out "
                         "to put them in")
    return scale.cbpe(scores, threshold=args.threshold, labels=labels, chunks=chunks,
                      chunk_size=args.chunk_size, n_chunks=args.n_chunks, **_reference(args),
                      ci_prob=args.ci_prob, random_seed=args.seed,
                      calibration_uncertainty=args.calibration_uncertainty, **_options(args))


def _one_group(payload) -> be.Evaluation:
    """The command on one group's rows (run on a worker)."""
    args, frame = payload
    with _sampler(args):  # a worker process has its own sampling.DEFAULTS
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


@contextlib.contextmanager
def _sampler(args):
    """``--sampler``: the NUTS implementation of the command's sampling (through
    :data:`bayeval.sampling.DEFAULTS`), PyMC's own unless given; restored afterwards."""
    choice = getattr(args, "sampler", None)
    if choice is None:
        yield
        return
    if choice == "nutpie" and importlib.util.find_spec("nutpie") is None:
        raise InputError("--sampler nutpie needs nutpie: pip install 'bayeval[nutpie]'")
    before = sampling.DEFAULTS["nuts_sampler"]
    sampling.DEFAULTS["nuts_sampler"] = choice
    try:
        yield
    finally:
        sampling.DEFAULTS["nuts_sampler"] = before


def _demo(args) -> list[be.Evaluation]:
    from bayeval.demo import run

    return run(seed=args.seed, verbose=True)


# -------------------------------------------------------------------------------------- output
#: the columns of cbpe's reference chunks printed below the summary
REFERENCE_COLUMNS = ("mean", "lower", "upper", "realized", "lower_threshold", "upper_threshold")


def _show(evaluations: list[be.Evaluation], args) -> int:
    """Print the summaries (cbpe's reference chunks below its own, with their realized
    metrics; MVU's decisions), write the files asked for; the number of alerts (estimates of
    the analysis period outside their thresholds: the summaries' ``alert`` column)."""
    decide = _decide(args) if args.command == "mvu" else None
    decisions = None if decide is None else evaluations[0].decide(**decide)
    alerts = 0
    with pd.option_context("display.max_rows", None):  # every row, in the tables' own format
        for ev in evaluations:
            summary = ev.summary()
            print(summary)
            if "reference" in ev.tree.children:  # cbpe: the reference chunks, labelled
                reference = ev.summary(period="reference")
                print()
                print(reference[[c for c in REFERENCE_COLUMNS if c in reference]])
            for warning in ev.warnings:
                print(f"warning: {warning}")
            print()
            if "alert" in summary:
                alerts += int(summary["alert"].fillna(False).astype(bool).sum())
        if decisions is not None:
            print(decisions)
            print()
    if getattr(args, "netcdf", None):
        if len(evaluations) != 1:
            raise InputError("--netcdf writes one evaluation; the demo has several")
        print(f"written {evaluations[0].to_netcdf(args.netcdf)}")
    if getattr(args, "report", None):
        plan = _plan(args) if args.command == "mvu" else {}
        print(f"report: {be.report(evaluations, args.report, **plan)}")
    if getattr(args, "summary", None):
        print(f"written {write_table(evaluations[0].summary(), args.summary)}")
    if decisions is not None and args.decisions:
        print(f"written {write_table(decisions, args.decisions)}")
    if alerts:
        print(f"alerts: {alerts} estimate(s) outside their thresholds")
    return alerts


class _UsageError(InputError):
    """A usage error found by argparse, in the command ``prog``."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are raised (reported in one line by :func:`main`)
    and whose ``options`` list the actions of its options."""

    def __init__(self, *args, **kwargs):
        self.options: list[argparse.Action] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.dest != "help":
            self.options.append(action)
        return action

    def error(self, message: str):
        raise _UsageError(self.prog, message)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, _Parser]]:
    """The parser, and the parsers of the commands a config file may run."""
    parser = _Parser(
        prog="bayeval", description=be.__doc__.splitlines()[0],
        epilog="exit codes: 0 ok, 1 an alert fired, 2 bad usage or input, 3 internal error")
    parser.add_argument("--version", action="version", version=f"bayeval {be.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, _Parser] = {}

    def add(name: str, func, help_: str, cols: tuple[str, ...], *,
            groups: bool = True) -> argparse.ArgumentParser:
        p = commands[name] = sub.add_parser(name, help=help_, description=help_)
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
        if groups:
            p.add_argument("--scheduler", help="run on dask: a scheduler address, or 'local' "
                                               "for a LocalCluster of one process per core "
                                               "(needs the scale extra); cbpe then reads DATA "
                                               "lazily (a Parquet file or folder, or CSV) "
                                               "partition by partition")
            p.add_argument("--group-col", help="one evaluation per value of this column, "
                                               "gathered over 'group' (in parallel with "
                                               "--scheduler)")
        _progress_option(p)
        p.set_defaults(func=func)
        return p

    p = add("labelled", _labelled, "metrics from fully labelled data",
            ("score", "pred", "label"))
    _score_cols_option(p)
    _threshold_option(p)
    _metrics_option(p)
    p.add_argument("--prior", help="Beta prior of every rate: 'a,b' (default 1,1)")
    p.add_argument("--ci-kind", choices=("eti", "hdi"), default="eti",
                   help="interval of the posterior: eti (equal-tailed, default) or hdi")
    p = add("cbpe", _cbpe, "performance without labels (CBPE)", ("score", "pred", "label"))
    _score_cols_option(p)
    p.add_argument("--reference", help="labelled reference file (same score columns)")
    p.add_argument("--ref-label-col", help="label column of the reference (--label-col)")
    p.add_argument("--chunk-size", type=int, help="rows per chunk")
    p.add_argument("--n-chunks", type=int, help="number of chunks")
    p.add_argument("--chunk-col", help="column of chunk keys (dates, batches)")
    p.add_argument("--chunk-period",
                   help="chunks by time period of the --chunk-col timestamps: D, W, M, Q, h, "
                        "any pandas period alias, with a multiple (2W)")
    _threshold_option(p)
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
    p.add_argument("--fail-on-alert", action=argparse.BooleanOptionalAction, default=True,
                   help="exit with code 1 when an estimate is outside its alert thresholds "
                        "(default); --no-fail-on-alert exits with 0")
    p.add_argument("--late-labels", help="report (default): the labels of --label-col beside the "
                                         "estimates; estimate: in them")
    p.add_argument("--normalize-confusion-matrix", choices=("all", "true", "pred"),
                   help="with confusion_matrix in --metrics: its cells as shares of all rows, "
                        "of the true class or of the predicted class (default: counts)")
    p.add_argument("--business-value-matrix",
                   help="with business_value in --metrics: the values of a true negative, a "
                        "false positive, a false negative and a true positive, separated by "
                        "commas (NannyML's [[tn, fp], [fn, tp]])")
    p.add_argument("--normalize-business-value", choices=("per_prediction",),
                   help="with business_value: per prediction instead of the total")
    _mnar_option(p)
    _calibration_uncertainty_option(p, "--reference")
    p = add("pemi", _pemi, "metrics with missing labels (PEMI)", ("score", "label", "pred"))
    _score_cols_option(p)
    _threshold_option(p)
    _metrics_option(p)
    p.add_argument("--calibration", help="platt (default), beta, isotonic, scaling_binning or "
                                         "none, fitted on the labelled rows")
    _mnar_option(p)
    _calibration_uncertainty_option(p, "the labelled rows")
    p = add("judge", _judge, "rate from a noisy judge plus some human labels", ("label", "judge"))
    p.add_argument("--ci-kind", choices=("logit", "wald"), default="logit",
                   help="interval of the estimators: logit (inside [0, 1]) or wald (ppi_py's); "
                        "default logit")
    p = add("bounds", _bounds, "Frechet bounds from weak labels", ("pred", "weak", "gold"))
    _metrics_option(p)
    p.add_argument("--label-model",
                   help="dawid_skene (default), majority_vote, or your label model's "
                        "probabilities: one column per class in class order, comma-separated "
                        "or a prefix such as 'lm_*'")
    p.add_argument("--model", help="the PyMC model of --method pymc: m1 (default), m2, or m3 "
                                   "(default with --gold-col)")
    p = add("mvu", _mvu, "would collecting the missing features change the prediction? (MVU)",
            ("id",), groups=False)
    p.add_argument("--classifier", required=True,
                   help="the saved scikit-learn classifier: a skops file (skops.io.dump; needs "
                        "the mvu-cli extra)")
    p.add_argument("--trust", action="append",
                   help="a type the skops file may hold beyond those skops trusts (repeat, or "
                        "separate by commas); the command lists the file's untrusted types")
    p.add_argument("--trust-all", action="store_true",
                   help="trust every type of the skops file: only for a file you made")
    p.add_argument("--unsafe-pickle", action="store_true",
                   help="read --classifier as a pickle or joblib file, which runs any code it "
                        "holds: only for a file you made or trust")
    p.add_argument("--feature-cols", help="the features, comma-separated (empty cell = "
                                          "missing); default: the classifier's feature names")
    p.add_argument("--train", help="complete training rows (the same feature columns): the "
                                   "imputer is fitted on them")
    p.add_argument("--imputer", default="gaussian",
                   help="gaussian (default), mean, zero, conditional_mean or dmv")
    p.add_argument("--threshold", type=float,
                   help="decide class 1 when its probability exceeds this (default: argmax)")
    p.add_argument("--draws", type=int, default=1000, help="imputations per row (1000)")
    p.add_argument("--ci-kind", choices=("eti", "hdi"), default="eti",
                   help="interval kind: eti (equal-tailed, default) or hdi")
    p.add_argument("--decide-threshold", type=float,
                   help="decisions: collect the missing features where c_hard is below this")
    p.add_argument("--collect-cost", type=float,
                   help="decisions: the cost of collecting a row's missing features, against "
                        "--change-cost")
    p.add_argument("--change-cost", type=float, default=1.0,
                   help="decisions: the cost of a decision that collecting would change (1)")
    p.add_argument("--costs", help="decisions and report: the cost of measuring each feature, "
                                   "one number or feature=cost pairs separated by commas (a plan "
                                   "per row to collect; with --groups a group's cost under its "
                                   "name)")
    p.add_argument("--groups", help="features measured together at one cost: group=feature,"
                                    "feature items separated by ';' (e.g. "
                                    "'lipids=chol,hdl;vitals=pulse,pressure')")
    p.add_argument("--decisions", help="write the decisions to this CSV, Parquet or JSON path")
    p = sub.add_parser("run", help="run the command a TOML config file describes",
                       description="run the command a TOML config file describes: command = "
                                   "'cbpe' and the tables [input], [options], [output] of its "
                                   "options (see the command line page of the docs)")
    p.add_argument("config", help="the TOML file")
    p = sub.add_parser("demo", help="run every method on embedded data and write the report")
    p.add_argument("--out", default="bayeval-demo", help="folder of the report (bayeval-demo)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (0)")
    _progress_option(p)
    p.set_defaults(func=_demo)
    return parser, commands


def _seed(text: str) -> int:
    """--seed: an integer >= 0."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return int(text)


def _metrics_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metrics", help="metrics to estimate, separated by commas "
                                     "(e.g. accuracy,f1); default: the function's")


def _threshold_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threshold", type=float, default=0.5, help="decision threshold (0.5)")


def _score_cols_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--score-cols",
                   help="K classes: one score column per class, comma-separated (the column "
                        "names are the classes) or a prefix such as 'p_*' (the classes follow "
                        "it); labels and predictions name the classes")


def _mnar_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mnar", help="labels missing not at random: the log-odds shift of the "
                                  "missing labels, a number or 'mean,sd' of a normal prior; "
                                  "with --score-cols, 'class=delta' items separated by ';' "
                                  "(pemi)")


def _calibration_uncertainty_option(p: argparse.ArgumentParser, fitted_on: str) -> None:
    p.add_argument("--calibration-uncertainty", action=argparse.BooleanOptionalAction,
                   default=True, help="integrate over the posterior of the calibration map "
                                      f"fitted on {fitted_on} (default); --no-... gives the "
                                      "plug-in, conditional on the fitted map")


def _progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bars of sampling on stderr (default: when stderr is a "
                        "terminal)")
    p.add_argument("--sampler", choices=sampling.SAMPLERS,
                   help="NUTS implementation where the method samples (--method pymc or both): "
                        "pymc (default) or nutpie (pip install 'bayeval[nutpie]')")


_COL_HELP = {
    "score": "column of scores in [0, 1]",
    "pred": "column of predictions",
    "label": "column of labels (empty cell = missing)",
    "judge": "column of the judge's labels or scores",
    "weak": "comma-separated columns of labelling-function votes (-1 = abstain)",
    "gold": "column of gold labels where known (empty cell = unknown): the PyMC model m3",
    "id": "column of row ids (the rows of the summary and the decisions; default: row numbers)",
}


def main(argv: list[str] | None = None) -> int:
    """Run the ``bayeval`` command: parse ``argv``, evaluate, print the summaries, write files.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``bayeval`` (default: ``sys.argv[1:]``); ``bayeval --help`` lists
        the commands, ``bayeval COMMAND --help`` their options, ``bayeval run CONFIG`` runs
        the command a TOML file describes (:mod:`bayeval.cli_config`).

    Returns
    -------
    int
        The exit code: :data:`EXIT_OK` (0), :data:`EXIT_ALERT` (1: an estimate of ``cbpe`` is
        outside its alert thresholds, unless ``--no-fail-on-alert``), :data:`EXIT_USAGE` (2:
        bad usage or input, with a one-line message on stderr naming the column, option or
        argument) or :data:`EXIT_ERROR` (3: an internal error). ``--help`` and ``--version``
        exit with 0 through ``SystemExit``.

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
    parser, commands = _parser()
    prog, config, names = "bayeval", None, {}
    try:
        args = parser.parse_args(argv)
        prog = f"bayeval {args.command}"
        if args.command == "run":
            config = args.config
            command_argv, names = config_argv(
                config, {name: p.options for name, p in commands.items()})
            args = parser.parse_args(command_argv)
        alerts = _execute(args)
    except ValueError as err:  # bad input, from the command line or the library's validation
        message = " ".join(str(err).split())
        if isinstance(err, _UsageError):
            prog = prog if names else err.prog
            message += f" (see {err.prog} --help)"
        if names:  # the config file was read: its options as it names them
            message = f"{config}: {in_config_terms(message, names)}"
        print(f"{prog}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # an internal error: say so, without a traceback
        print(f"{prog}: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ALERT if alerts and getattr(args, "fail_on_alert", False) else EXIT_OK


def _execute(args) -> int:
    """Check the outputs, evaluate, show and write: the number of alerts."""
    for option in ("report", "netcdf", "summary", "decisions"):
        if getattr(args, option, None):
            check_output(getattr(args, option), f"--{option}",
                         table=option in ("summary", "decisions"))
    if args.command == "demo":
        check_output(args.out, "--out", folder=True)
    with _sampler(args), _client(args) as client, _progress(args):
        evaluations = _run(args, client)
    evaluations = evaluations if isinstance(evaluations, list) else [evaluations]
    if args.command == "demo":
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        args.report = out / "report.html"
    return _show(evaluations, args)


if __name__ == "__main__":
    sys.exit(main())
