r"""The exact Fréchet bounds on data split into dask partitions.

The bounds depend on the items only through the cell counts :math:`n_{zk}` (items of weak-label
pattern :math:`z` predicted as class :math:`k`). Each partition reduces its rows to its distinct
(pattern, prediction) rows and their counts; two partitions' summaries combine by summing the
counts on the union of their rows, up the tree of :func:`bayeval.partitions.tree_reduce`. The
client then fits the label model on the pattern counts and runs
:func:`~bayeval.methods.bounds.fast.exact_bounds`, as :func:`~bayeval.methods.bounds.api.bounds`
does in memory: the results equal the in-memory ones to rounding (1e-12).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from bayeval.methods.bounds.api import as_classes, as_metrics, class_codes, recode_classes
from bayeval.methods.bounds.fast import exact_bounds
from bayeval.methods.bounds.label_models import (
    LABEL_MODELS,
    fit_label_model,
    label_model_delta,
)
from bayeval.methods.bounds.misfit import misfit_check
from bayeval.partitions import reduce_blocks
from bayeval.validation import as_choice, check_same_length

__all__ = ["BoundsCells", "bounds_cells", "bounds_exact"]


class BoundsCells(NamedTuple):
    """Weak-label patterns and the items per (pattern, predicted class).

    ``patterns`` (n_cells, n_lfs) are the distinct rows of the weak labels, sorted
    lexicographically; ``cell_counts`` (n_cells, n_classes) counts the items of each pattern
    predicted as each class; ``counts`` are its row sums.

    Examples
    --------
    >>> import numpy as np
    >>> cells = BoundsCells(np.array([[0, 0], [1, -1]]), np.array([[3, 1], [0, 2]]))
    >>> cells.counts.tolist()
    [4, 2]
    """

    patterns: np.ndarray
    cell_counts: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        return self.cell_counts.sum(axis=1)


def _distinct(rows: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (sorted) and the summed counts of each."""
    unique, where = np.unique(rows, axis=0, return_inverse=True)
    return unique, np.bincount(where.ravel(), weights=counts, minlength=len(unique)).astype(
        np.int64)


def _bounds_block(y_pred: Any, weak_labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """A partition's distinct (votes, prediction) rows and their counts."""
    if len(y_pred) == 0:
        return np.empty((0, np.shape(weak_labels)[1] + 1), np.int64), np.empty(0, np.int64)
    weak = as_classes(weak_labels, "weak_labels", ndim=2, minimum=-1)
    yp = as_classes(y_pred, "y_pred", ndim=1, minimum=0)
    check_same_length(y_pred=yp, weak_labels=weak)
    return _distinct(np.column_stack([weak, yp]), np.ones(len(yp)))


def _stack_distinct(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    return _distinct(np.vstack([a[0], b[0]]), np.r_[a[1], b[1]])


def bounds_cells(y_pred: Any, weak_labels: Any, *, n_classes: int | None = None) -> BoundsCells:
    r"""Items per (weak-label pattern :math:`z`, predicted class :math:`k`) of partitioned data.

    Parameters
    ----------
    y_pred : dask array, dask Series or array-like of int, shape (n,)
        Predicted classes.
    weak_labels : dask array, dask DataFrame or array-like of int, shape (n, n_lfs)
        Labelling-function votes, -1 = abstain (items without a vote form a pattern of their
        own).
    n_classes : int, optional
        :math:`K`; by default the classes seen, read as
        :func:`~bayeval.methods.bounds.api.class_codes` reads them (the patterns and counts use
        0..K-1 in the codes' order).

    Returns
    -------
    BoundsCells
        :math:`n_{zk}`, the statistic of the exact bounds and of the models
        (:func:`~bayeval.methods.bounds.fast.exact_bounds`,
        :func:`~bayeval.methods.bounds.models.model`): the in-memory cell counts of
        ``bounds(y_pred, weak_labels)`` up to the order of the patterns.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> weak = np.array([[1, 1, -1], [0, 0, 0], [1, -1, 1], [1, 1, -1], [0, 1, 0], [0, 0, 0]])
    >>> y_pred = np.array([1, 0, 1, 0, 0, 0])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     cells = bounds_cells(da.from_array(y_pred, chunks=4),
    ...                          da.from_array(weak, chunks=(4, 3)))
    >>> cells.patterns.tolist(), cells.cell_counts.tolist()
    ([[0, 0, 0], [0, 1, 0], [1, -1, 1], [1, 1, -1]], [[2, 0], [1, 0], [0, 1], [1, 1]])
    """
    rows, counts = reduce_blocks(_bounds_block, _stack_distinct,
                                 {"y_pred": y_pred, "weak_labels": weak_labels}).compute()
    codes = class_codes(rows[:, -1], rows[:, :-1], n_classes)
    rows = recode_classes(rows, codes)
    patterns, cell = np.unique(rows[:, :-1], axis=0, return_inverse=True)
    cell_counts = np.zeros((len(patterns), len(codes)), dtype=np.int64)
    np.add.at(cell_counts, (cell.ravel(), rows[:, -1]), counts)
    return BoundsCells(patterns, cell_counts)


def bounds_exact(y_pred: Any, weak_labels: Any, *, label_model: str = "dawid_skene",
                 metrics: Any = None, n_classes: int | None = None,
                 label_model_uncertainty: bool = True) -> xr.Dataset:
    r"""Exact Fréchet bounds of the metrics on partitioned data.

    Parameters
    ----------
    y_pred, weak_labels, n_classes
        As in :func:`bounds_cells`.
    label_model : {"dawid_skene", "majority_vote"}
        Fitted on the pattern counts (:mod:`bayeval.methods.bounds.label_models`).
    metrics : sequence of str, optional
        As in :func:`bayeval.methods.bounds.api.bounds`.
    label_model_uncertainty : bool
        As in :func:`bayeval.methods.bounds.api.bounds`: the sds include the label model's
        sampling error (it is fitted on these items).

    Returns
    -------
    xr.Dataset
        Over ``metric``: ``lower_bound``, ``upper_bound``, their sds, ``midpoint_sd`` and
        ``label_model`` of :func:`~bayeval.methods.bounds.fast.exact_bounds`, as
        ``bounds(y_pred, weak_labels)`` computes them in memory.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.bounds import bounds
    >>> rng = np.random.default_rng(0)
    >>> weak = rng.integers(-1, 2, (3_000, 3))
    >>> weak[(weak == -1).all(axis=1), 0] = 1  # every item has a vote
    >>> y_pred = rng.integers(0, 2, 3_000)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     ours = bounds_exact(da.from_array(y_pred, chunks=1_000),
    ...                         da.from_array(weak, chunks=(1_000, 3)), metrics=["accuracy"])
    >>> [round(float(ours[b].item()), 4) for b in ("lower_bound", "upper_bound")]
    [0.3064, 0.6822]
    >>> mem = bounds(y_pred, weak, metrics=["accuracy"]).closed_form
    >>> float(abs(ours["upper_bound"] - mem["upper_bound"]).max()) < 1e-12
    True
    """
    label_model = as_choice(label_model, "label_model", LABEL_MODELS)
    cells = bounds_cells(y_pred, weak_labels, n_classes=n_classes)
    k = cells.cell_counts.shape[1]
    metrics = as_metrics(metrics, k)
    beta = fit_label_model(label_model, cells.patterns, cells.counts, k)
    error = {}
    if label_model_uncertainty:
        error = label_model_delta(label_model, cells.patterns, cells.counts,
                                  beta).error_terms()
    out = exact_bounds(cells.cell_counts, beta, metrics, **error)
    if label_model == "dawid_skene":
        misfit_check(cells.patterns, cells.cell_counts, beta, out,
                     label_model_uncertainty=label_model_uncertainty)
    keys = [key for key in out[metrics[0]] if not key.endswith("_fixed_label_model")]
    return xr.Dataset({key: ("metric", [out[m][key] for m in metrics]) for key in keys},
                      coords={"metric": list(metrics)})
