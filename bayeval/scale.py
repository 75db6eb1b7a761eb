r"""Scale out with dask: partitioned fast paths, and many evaluations at once.

This module is the public face of bayeval's dask paths; it holds :func:`map_evaluations` and its
companions and re-exports the partitioned entry points, whose implementations live next to the
in-memory code they must equal: ``bayeval.methods.<name>.partitioned`` (CBPE, PEMI, judge, bounds,
MVU) and :mod:`bayeval.partitions` (the shared plumbing: partitions, tree reduction,
Poisson-binomial windows, ROC-AUC score ranges). Two kinds of scale, on an existing dask cluster
(the ``scale`` extra):

* **Rows that outgrow memory**: each partitioned fast path reduces every partition (a block of
  rows) to a small exact summary, combines the summaries up a tree and finishes on the client
  with the in-memory code, so the results equal the in-memory ones to 1e-12. Inputs are dask
  arrays or columns of one dask DataFrame; numpy and pandas inputs are one partition. The
  reductions run on dask's current scheduler (a ``distributed.Client`` registers itself as that
  scheduler when it is created).
* **Many evaluations** (models, segments, judges, chunks): :func:`map_evaluations` runs one
  evaluation per group, on a ``distributed.Client`` or in this process, PyMC fits included,
  and gathers them into one :class:`~bayeval.evaluation.Evaluation` with a ``group``
  dimension. A group that fails is reported for that group; the others are kept.

The partitioned entry points, with what a partition :math:`b` sends and how the summaries
combine (a count over independent rows is the sum of its partitions' counts,
:math:`K=\sum_b K_b`, so its PMF is the convolution :math:`f_K=f_{K_1}*\dots*f_{K_B}`;
sufficient statistics are sums):

* :func:`poisson_binomial`: the PMF window of :math:`K_b`; convolved;
* :func:`cbpe`: per chunk, the windows of the PMFs of :math:`TP_b` and :math:`FN_b`, row
  counts, :math:`\sum p` and the labelled rows' confusion counts; convolved and summed;
* :func:`auc_numerator_moments`, :func:`auc_moments` (also CBPE's and PEMI's ROC-AUC): the rows,
  cut into score ranges, each range reduced to 13 sums; ranges concatenated in score order;
* :func:`pemi_sums`, :func:`pemi_gauss`: known counts and sums of the calibrated scores per
  MNAR node; summed;
* :func:`judge_counts`, :func:`judge_estimates`: the labelled 2x2 table, :math:`T_1`,
  :math:`T_0`; summed;
* :func:`bounds_cells`, :func:`bounds_exact`: the items per (weak-label pattern, prediction);
  summed on the union;
* :func:`mvu_hard_confidence`: the rows' :math:`(y_\mathrm{hard}, c_\mathrm{hard})`; a row map.

The gathered Evaluation holds every group's ``closed_form``, ``posterior``, ``sample_stats``...
concatenated along ``group`` (indexes such as ``chunk`` are united in order of first
appearance, other dimensions padded with NaN), and a ``group_status`` node: per group
``status`` (``"ok"`` or ``"error"``), ``error``, ``traceback``, ``seconds``, ``process`` (the
``host:pid`` that ran it) and ``meta`` (its own metadata as JSON). :func:`select` gives one
group's Evaluation back, :func:`group_diagnostics` the MCMC diagnostics of each group and
:func:`group_status` the status table.

Workers: :func:`connect` starts a ``LocalCluster`` of one single-threaded process per worker
(PyMC samples in the worker; pytensor compiles there) or connects to a scheduler's address.
Workers on one machine share pytensor's compile cache, the ``compiledir`` of
``PYTENSOR_FLAGS`` (inherited from this process, or set with ``compiledir=``), so a model is
compiled once per machine, not once per group.
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.evaluation import Evaluation
from bayeval.methods.bounds.partitioned import BoundsCells, bounds_cells, bounds_exact
from bayeval.methods.cbpe.partitioned import cbpe
from bayeval.methods.judge.partitioned import judge_counts, judge_estimates
from bayeval.methods.mvu.partitioned import mvu_hard_confidence
from bayeval.methods.pemi.partitioned import CALIBRATION_ROWS, LabelSums, pemi_gauss, pemi_sums
from bayeval.partitions import auc_moments, auc_numerator_moments, poisson_binomial
from bayeval.table import Table, table

__all__ = [
    "CALIBRATION_ROWS",
    "STATUS",
    "BoundsCells",
    "LabelSums",
    "auc_moments",
    "auc_numerator_moments",
    "bounds_cells",
    "bounds_exact",
    "cbpe",
    "connect",
    "group_diagnostics",
    "group_status",
    "judge_counts",
    "judge_estimates",
    "map_evaluations",
    "mvu_hard_confidence",
    "pemi_gauss",
    "pemi_sums",
    "poisson_binomial",
    "select",
]

STATUS = "group_status"
"""Node of a gathered Evaluation with the status, error and metadata of every group."""

_SHARED = ("ci_prob", "ci_kind", "estimand", "iid_draws")  # must agree across the groups


# ---------------------------------------------------------------------------------------------
# workers


def connect(scheduler: str, *, n_workers: int | None = None, compiledir: str | None = None):
    """A ``distributed.Client``: on a new LocalCluster (``"local"``) or at a scheduler address.

    Parameters
    ----------
    scheduler : str
        ``"local"``: a LocalCluster of ``n_workers`` processes with one thread each (one PyMC
        fit per process at a time, BLAS single-threaded), closed with the client; otherwise the
        address of a running scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    n_workers : int, optional
        Workers of the local cluster (default: one per core).
    compiledir : str, optional
        pytensor's compile cache for the local workers (``PYTENSOR_FLAGS=compiledir=...``);
        by default they inherit this process's ``PYTENSOR_FLAGS``.

    Returns
    -------
    distributed.Client
        Registered as dask's scheduler, so the partitioned fast paths run on it too; use it as
        a context manager to close it.

    Examples
    --------
    A scheduler's address (here of a small cluster of threads in this process; ``"local"``
    starts worker processes instead):

    >>> import numpy as np
    >>> from distributed import LocalCluster
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster:
    ...     with connect(cluster.scheduler_address) as client:
    ...         start, probs = poisson_binomial(np.full(4, 0.5))
    ...         workers = len(client.scheduler_info()["workers"])
    >>> workers, start, probs.round(4).tolist()
    (1, 0, [0.0625, 0.25, 0.375, 0.25, 0.0625])
    """
    from distributed import Client

    if scheduler != "local":
        return Client(scheduler)
    env = {"PYTENSOR_FLAGS": f"compiledir={compiledir}"} if compiledir else {}
    return Client(n_workers=n_workers, threads_per_worker=1, processes=True, env=env)


# ---------------------------------------------------------------------------------------------
# running the groups


class _Outcome(NamedTuple):
    """What a group's run returns to the client."""

    status: str  # "ok" or "error"
    tree: xr.DataTree | None
    kind: type | None  # the Evaluation's class (e.g. BoundsEvaluation)
    error: str
    traceback: str
    seconds: float
    process: str


def _attempt(fn: Callable[[Any], Evaluation], payload: Any) -> _Outcome:
    """Run one group, catching its failure (the PyMC model is dropped: the tree travels)."""
    where = f"{socket.gethostname()}:{os.getpid()}"
    start = time.perf_counter()
    try:
        ev = fn(payload)
        if not isinstance(ev, Evaluation):
            raise TypeError(f"fn returned {type(ev).__name__}, not an Evaluation.")
        return _Outcome("ok", ev.tree, type(ev), "", "", time.perf_counter() - start, where)
    except Exception as err:  # reported for this group; the others go on
        return _Outcome("error", None, None, f"{type(err).__name__}: {err}",
                        traceback.format_exc(), time.perf_counter() - start, where)


def _submit(client, fn: Callable[[Any], Evaluation], payloads: list) -> list[_Outcome]:
    """Every group as a task of ``client``; a lost worker fails only the groups it held."""
    data = client.scatter(payloads)
    futures = client.map(_attempt, [fn] * len(payloads), data, pure=False)
    outcomes = []
    for future in futures:
        try:
            outcomes.append(future.result())
        except Exception as err:  # the task itself died (a worker killed, out of memory...)
            outcomes.append(_Outcome("error", None, None, f"{type(err).__name__}: {err}", "",
                                     np.nan, ""))
    return outcomes


def _groups(groups: Any) -> tuple[list[str], list[Any]]:
    """(labels, payloads): a mapping's keys and values, or a sequence's items as both."""
    if isinstance(groups, Mapping):
        labels, payloads = [str(k) for k in groups], list(groups.values())
    elif isinstance(groups, str) or not hasattr(groups, "__iter__"):
        raise ValueError(f"groups must be a mapping {{label: payload}} or a sequence of "
                         f"payloads; got {type(groups).__name__}.")
    else:
        payloads = list(groups)
        labels = [str(g) for g in payloads]
    if not labels:
        raise ValueError("groups is empty; give at least one group.")
    if len(set(labels)) < len(labels):
        raise ValueError(f"groups must have distinct labels; got {labels}.")
    return labels, payloads


def map_evaluations(fn: Callable[[Any], Evaluation], groups: Any, client=None, *,
                    dim: str = "group") -> Evaluation:
    r"""One evaluation per group, run in parallel, gathered into one Evaluation over ``dim``.

    Parameters
    ----------
    fn : callable
        ``fn(payload) -> Evaluation``, e.g. ``functools.partial(be.methods.judge.judge,
        method="pymc")`` wrapped to unpack the payload. With a client it must pickle
        (a module-level function or a partial of one).
    groups : mapping or sequence
        ``{label: payload}`` (the label becomes the coordinate), or payloads that are their
        own labels (e.g. segment names that ``fn`` looks up).
    client : distributed.Client, optional
        Run the groups as tasks on its workers (see :func:`connect`); None runs them one
        after the other in this process.
    dim : str
        Name of the new dimension.

    Returns
    -------
    Evaluation
        Of the class of the groups' evaluations when they share one. Every node of the groups
        that ran is concatenated along ``dim``; :data:`STATUS` holds every group's status,
        error, traceback, run time, process and metadata. The metadata lists ``groups``,
        ``failed`` and the groups' warnings (prefixed ``[label]``), one per failure included.
        ``summary()`` and ``check()`` work over ``dim``; per group: :func:`select`,
        :func:`group_diagnostics`.

        When every group failed it holds only their status and warnings (``summary()``
        raises, naming the errors).

    Raises
    ------
    ValueError
        If the evaluations disagree on ``ci_prob``, ``ci_kind``, the estimand or the kind of
        draws, or already have a dimension ``dim``.

    Examples
    --------
    >>> import bayeval as be
    >>> groups = {"model_a": ([1, 0, 1, 1], [1, 0, 0, 1]), "model_b": ([1, 0, 1, 1], [1, 1, 1, 1])}
    >>> ev = map_evaluations(lambda g: be.labelled(labels=g[0], y_pred=g[1]), groups)
    >>> ev.summary().loc[("model_b", "accuracy"), "mean"].round(4)
    np.float64(0.6667)
    """
    labels, payloads = _groups(groups)
    outcomes = ([_attempt(fn, p) for p in payloads] if client is None else
                _submit(client, fn, payloads))
    return _gather(labels, outcomes, dim)


# ---------------------------------------------------------------------------------------------
# gathering


def _union(indexes: list[pd.Index]) -> pd.Index:
    """The union of indexes in order of first appearance (not sorted, unlike pandas')."""
    out = indexes[0]
    for index in indexes[1:]:
        out = out.append(index[~index.isin(out)])
    return out


def _aligned(datasets: list[xr.Dataset]) -> list[xr.Dataset]:
    """Datasets on common indexes (missing entries NaN), unindexed dimensions NaN-padded to the
    longest (e.g. the ``support`` of PMFs)."""
    names = {name for ds in datasets for name in ds.indexes}
    union = {name: _union([ds.indexes[name] for ds in datasets if name in ds.indexes])
             for name in names}
    longest: dict[str, int] = {}
    for ds in datasets:
        for d, size in ds.sizes.items():
            if d not in names:
                longest[d] = max(longest.get(d, 0), size)
    out = []
    for ds in datasets:
        moved = {k: v for k, v in union.items() if k in ds.indexes and not
                 ds.indexes[k].equals(v)}
        ds = ds.reindex(moved) if moved else ds
        pad = {d: (0, size - ds.sizes[d]) for d, size in longest.items()
               if d in ds.sizes and ds.sizes[d] < size}
        out.append(ds.pad(pad) if pad else ds)
    return out


def _concat(datasets: list[xr.Dataset], labels: list[str], dim: str) -> xr.Dataset:
    """The datasets stacked along a new dimension ``dim`` with coordinate ``labels``."""
    if any(dim in ds.dims or dim in ds.variables for ds in datasets):
        raise ValueError(f"the evaluations already have a {dim!r} dimension; pass another "
                         "name, e.g. map_evaluations(..., dim='segment').")
    out = xr.concat(_aligned(datasets), dim=dim, data_vars="all", coords="different",
                    compat="equals", join="exact", combine_attrs="drop_conflicts")
    return out.assign_coords({dim: np.array(labels)})


def _shared(metas: list[dict]) -> dict[str, Any]:
    """The settings every group must share, and method/variant (``"mixed"`` if they differ)."""
    out = {}
    for key in _SHARED:
        values = {json.dumps(m[key]) for m in metas}
        if len(values) > 1:
            raise ValueError(f"the groups' evaluations disagree on {key} ({sorted(values)}); "
                             "map_evaluations gathers evaluations of one kind.")
        out[key] = metas[0][key]
    for key in ("method", "variant"):
        values = {m[key] for m in metas}
        out[key] = values.pop() if len(values) == 1 else "mixed"
    return out


def _status(labels: list[str], outcomes: list[_Outcome], dim: str) -> xr.Dataset:
    metas = [json.loads(o.tree.attrs["bayeval"]) if o.status == "ok" else {} for o in outcomes]
    columns = {"status": [o.status for o in outcomes], "error": [o.error for o in outcomes],
               "traceback": [o.traceback for o in outcomes],
               "seconds": [o.seconds for o in outcomes],
               "process": [o.process for o in outcomes],
               "meta": [json.dumps(m) if m else "" for m in metas]}
    return xr.Dataset({k: (dim, np.array(v)) for k, v in columns.items()},
                      coords={dim: np.array(labels)})


def _gather(labels: list[str], outcomes: list[_Outcome], dim: str) -> Evaluation:
    """One Evaluation over ``dim`` from the groups' outcomes (see :func:`map_evaluations`)."""
    done = [(label, o) for label, o in zip(labels, outcomes, strict=True) if o.status == "ok"]
    failed = [(label, o.error) for label, o in zip(labels, outcomes, strict=True)
              if o.status != "ok"]
    if not done:  # the failures, with nothing to gather
        ev = Evaluation.create(
            method="none", variant="none", warnings=[f"[{g}] failed: {e}" for g, e in failed],
            groups=labels, group_dim=dim, failed=[g for g, _ in failed],
            description=f"0 of {len(labels)} groups over {dim!r}: every group failed")
        ev.tree[STATUS] = xr.DataTree(_status(labels, outcomes, dim))
        return ev
    evaluations = [(label, o.kind(o.tree)) for label, o in done]
    shared = _shared([ev.meta for _, ev in evaluations])
    names = list(dict.fromkeys(n for _, ev in evaluations for n in ev.tree.children))
    nodes = {}
    for name in names:
        have = [(label, ev.tree[name].to_dataset()) for label, ev in evaluations
                if name in ev.tree.children]
        nodes[name] = _concat([ds for _, ds in have], [label for label, _ in have], dim)
    kinds = {type(ev) for _, ev in evaluations}
    cls = kinds.pop() if len(kinds) == 1 else Evaluation
    notes = [f"[{label}] {w}" for label, ev in evaluations for w in ev.warnings]
    notes += [f"[{label}] failed: {error}" for label, error in failed]
    closed, data = nodes.pop("closed_form", None), nodes.pop("data", None)
    estimand = shared["estimand"]
    ev = cls.create(
        method=shared["method"], variant=shared["variant"], closed_form=closed, data=data,
        draws=xr.DataTree.from_dict(nodes) if estimand else None, estimand=estimand,
        ci_prob=shared["ci_prob"], ci_kind=shared["ci_kind"], iid_draws=shared["iid_draws"],
        warnings=notes, groups=labels, group_dim=dim, failed=[g for g, _ in failed],
        description=f"{len(done)} of {len(labels)} groups over {dim!r}"
                    + (f"; failed: {', '.join(g for g, _ in failed)}" if failed else ""))
    extra = {} if estimand else nodes
    for name, ds in {**extra, STATUS: _status(labels, outcomes, dim)}.items():
        ev.tree[name] = xr.DataTree(ds)
    return ev


# ---------------------------------------------------------------------------------------------
# reading a gathered evaluation


def _group_dim(ev: Evaluation) -> str:
    if STATUS not in ev.tree.children:
        raise ValueError("this evaluation was not gathered by map_evaluations (it has no "
                         f"{STATUS!r} node).")
    return ev.meta["group_dim"]


def group_status(ev: Evaluation) -> Table:
    """Status, error, run time and process of every group of a gathered evaluation.

    Parameters
    ----------
    ev : Evaluation
        From :func:`map_evaluations`.

    Returns
    -------
    Table
        Indexed by group: ``status`` (``"ok"`` or ``"error"``), ``error``, ``seconds`` and
        ``process``; ``attrs["ok"]`` is True when every group ran.

    Examples
    --------
    >>> import bayeval as be
    >>> groups = {"model_a": ([1, 0, 1, 1], [1, 0, 0, 1]), "broken": ([1, 0], [1, 0, 1])}
    >>> ev = map_evaluations(lambda g: be.labelled(labels=g[0], y_pred=g[1]), groups)
    >>> status = group_status(ev)
    >>> status["status"].to_dict(), status.attrs["ok"]
    ({'model_a': 'ok', 'broken': 'error'}, False)
    >>> status.loc["broken", "error"][:28]
    'ValueError: length mismatch:'
    """
    dim = _group_dim(ev)
    frame = ev.tree[STATUS].to_dataset()[["status", "error", "seconds", "process"]].to_dataframe()
    ok = bool((frame["status"] == "ok").all())
    caption = (f"{len(frame)} groups over {dim!r}: "
               + ("all ran" if ok else f"{int((frame['status'] != 'ok').sum())} FAILED"))
    return table(frame, caption, ok=ok)


def select(ev: Evaluation, group: str) -> Evaluation:
    """One group of a gathered evaluation, with its own metadata.

    Entries that another group added (an index value this group lacks, padding) are dropped
    where all of the group's values there are NaN.

    Parameters
    ----------
    ev : Evaluation
        From :func:`map_evaluations`.
    group : str
        A group's label.

    Returns
    -------
    Evaluation
        Of the group's class, as the group's function returned it.

    Raises
    ------
    ValueError
        If the group is unknown or failed (the error is in the message).

    Examples
    --------
    >>> import bayeval as be
    >>> groups = {"model_a": ([1, 0, 1, 1], [1, 0, 0, 1]), "model_b": ([1, 0], [1, 1])}
    >>> ev = map_evaluations(lambda g: be.labelled(labels=g[0], y_pred=g[1]), groups)
    >>> one = select(ev, "model_b")
    >>> one.summary().loc["accuracy", "mean"].round(4)
    np.float64(0.5)
    """
    dim = _group_dim(ev)
    status = ev.tree[STATUS].to_dataset()
    if group not in status[dim].values:
        raise ValueError(f"group {group!r} is not one of {status[dim].values.tolist()}.")
    row = status.sel({dim: group})
    if str(row["status"].values) != "ok":
        raise ValueError(f"group {group!r} failed: {row['error'].values}")
    nodes = {}
    for name, node in ev.tree.children.items():
        ds = node.to_dataset()
        if name == STATUS or group not in ds[dim].values:
            continue
        ds = ds.sel({dim: group}, drop=True)
        for d in ds.dims:
            ds = ds.dropna(d, how="all") if ds.sizes[d] else ds
        nodes[name] = ds
    tree = xr.DataTree.from_dict(nodes)
    tree.attrs["bayeval"] = str(row["meta"].values)
    return type(ev)(tree)


def group_diagnostics(ev: Evaluation) -> Table:
    """MCMC diagnostics (:meth:`Evaluation.diagnostics`) of every group that ran MCMC.

    Parameters
    ----------
    ev : Evaluation
        From :func:`map_evaluations`, with groups that ran MCMC.

    Returns
    -------
    Table
        Indexed by (group, diagnostic, quantity); ``attrs["ok"]`` is True when every group's
        diagnostics are within their thresholds.

    Raises
    ------
    ValueError
        If no group ran MCMC.

    Examples
    --------
    Independent draws standing in for each group's MCMC draws (a real run comes from
    ``method="pymc"``):

    >>> import numpy as np, xarray as xr
    >>> from bayeval.methods.labelled import posterior
    >>> def fit(right):  # right of 60 predictions, Beta(2, 2) prior
    ...     rng = np.random.default_rng(right)
    ...     dims = ("chain", "draw", "metric")
    ...     draws = xr.DataTree.from_dict({
    ...         "posterior": xr.Dataset({"theta": (dims, rng.beta(right + 2, 62 - right,
    ...                                                           (2, 1000, 1)))},
    ...                                 coords={"metric": ["accuracy"]}),
    ...         "sample_stats": xr.Dataset({"diverging": (dims[:2], np.zeros((2, 1000), bool)),
    ...                                     "energy": (dims[:2], rng.normal(size=(2, 1000)))})})
    ...     return Evaluation.create(
    ...         method="labelled", variant="both", draws=draws, estimand="posterior/theta",
    ...         closed_form=posterior([right], [60], metrics=["accuracy"], prior=(2, 2)),
    ...         iid_draws=True)
    >>> table = group_diagnostics(map_evaluations(fit, {"a": 45, "b": 30}))
    >>> table.attrs["ok"], sorted(set(table.index.get_level_values("group")))
    (True, ['a', 'b'])
    """
    dim = _group_dim(ev)
    status = ev.tree[STATUS].to_dataset()
    frames = {}
    for group in status[dim].values[status["status"].values == "ok"]:
        one = select(ev, str(group))
        if one.has_mcmc:
            frames[str(group)] = one.diagnostics()
    if not frames:
        raise ValueError("group_diagnostics() needs MCMC draws; no group ran MCMC.")
    frame = pd.concat({g: pd.DataFrame(f) for g, f in frames.items()}, names=[dim])
    ok = all(f.attrs["ok"] for f in frames.values())
    bad = [g for g, f in frames.items() if not f.attrs["ok"]]
    caption = ("MCMC diagnostics per group: " + ("all within thresholds" if ok else
                                                  f"OUTSIDE THRESHOLDS in {', '.join(bad)}"))
    return table(frame, caption, ok=ok)
