"""Coercion and checking of per-row arguments: arrays of scores, labels, predictions, counts
and the pairing of their rows (:func:`aligned`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "aligned",
    "as_array",
    "as_binary",
    "as_counts",
    "as_labels",
    "as_predictions",
    "as_probabilities",
    "as_reference",
    "as_scores",
    "check_same_length",
    "describe",
]


def describe(x: Any) -> str:
    """``repr(x)``, cut to 60 characters, for error messages.

    Examples
    --------
    >>> describe("x" * 80)[-5:]
    'xx...'
    """
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _pandas_values(x: pd.Series | pd.DataFrame | pd.Index) -> np.ndarray:
    """The values of a pandas object; nullable numbers and booleans (``Float64``, ``Int64``,
    ``boolean``) with ``pd.NA`` give floats with NaN, the missing marker of every argument that
    accepts one (and refused by the others as NaN is)."""
    dtypes = list(x.dtypes) if isinstance(x, pd.DataFrame) else [x.dtype]
    nullable = dtypes and all(
        isinstance(d, pd.api.extensions.ExtensionDtype) and hasattr(d, "numpy_dtype")
        and (pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d)) for d in dtypes)
    if not nullable:
        return x.to_numpy()
    if np.asarray(x.isna()).any():
        return x.to_numpy(dtype=float, na_value=np.nan)
    return x.to_numpy(dtype=np.result_type(*(d.numpy_dtype for d in dtypes)))


def _to_numpy(x: Any, name: str) -> np.ndarray:
    """Turn numpy, pandas, xarray, lists and scalars into a numpy array (no copy when possible)."""
    if x is None:
        raise ValueError(f"{name} is required, got None.")
    if isinstance(x, (pd.Series, pd.DataFrame, pd.Index)):
        x = _pandas_values(x)
    elif hasattr(x, "to_numpy"):
        x = x.to_numpy()
    elif hasattr(x, "values") and hasattr(x, "dims"):  # xarray DataArray
        x = x.values
    if isinstance(x, (str, bytes, Mapping)):
        raise ValueError(f"{name} must be array-like (numpy, pandas, xarray or a list), "
                         f"got {type(x).__name__} {describe(x)}.")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be array-like of numbers, got {type(x).__name__}: "
                         f"{err}.") from None
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers, got values such as "
                             f"{describe(arr.ravel()[:3].tolist())}.") from None
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must hold numbers or booleans, got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got complex values.")
    return arr


def as_array(x: Any, name: str, *, ndim: int | None = 1, allow_nan: bool = False,
             allow_empty: bool = False, dtype: type = float) -> np.ndarray:
    """Coerce ``x`` to a numpy array of ``dtype`` and check shape, emptiness and finiteness.

    Parameters
    ----------
    x : array-like
        numpy, pandas, xarray, a list or a scalar.
    name : str
        The argument's public name, used in error messages.
    ndim : int or None
        Required number of dimensions (None: any); with ``ndim=1`` a column or row vector of
        shape (n, 1) or (1, n) is flattened.
    allow_nan : bool
        Accept NaN (a missing value); infinities are always rejected for float ``dtype``.
    allow_empty : bool
        Accept an array with no values.
    dtype : type
        The result's dtype.

    Returns
    -------
    numpy.ndarray
        No copy when ``x`` already is such an array.

    Raises
    ------
    ValueError
        If ``x`` is None, a string or mapping, not numeric, of the wrong dimension, empty, or
        holds NaN or infinite values.

    Examples
    --------
    >>> as_array([[1], [2], [3]], "scores")
    array([1., 2., 3.])
    >>> as_array([0.5, float("nan")], "scores")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: scores has 1 NaN or infinite value(s) (first at index 1); only finite numbers ...
    """
    arr = _to_numpy(x, name)
    if ndim is not None and arr.ndim != ndim:
        if ndim == 1 and arr.ndim == 2 and 1 in arr.shape:
            arr = arr.reshape(-1)
        else:
            raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty; at least one value is needed.")
    arr = arr.astype(dtype, copy=False)
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) if not allow_nan else np.isinf(arr)
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            what = "NaN or infinite" if not allow_nan else "infinite"
            raise ValueError(f"{name} has {int(bad.sum())} {what} value(s) (first at index {i}); "
                             f"only finite numbers are accepted"
                             + (" (NaN marks a missing value)." if allow_nan else "."))
    return arr


def as_scores(x: Any, name: str = "scores", *, allow_nan: bool = False,
              ndim: int | None = 1) -> np.ndarray:
    """Probabilities or scores in [0, 1] as float64.

    Parameters
    ----------
    x : array-like
        The values.
    name : str
        The argument's public name, used in error messages.
    allow_nan : bool
        Accept NaN (a missing value).
    ndim : int or None
        Required number of dimensions (None: any).

    Returns
    -------
    numpy.ndarray
        float64 values in [0, 1].

    Raises
    ------
    ValueError
        As :func:`as_array`, and for a value outside [0, 1].

    Examples
    --------
    >>> as_scores([0.2, 1])
    array([0.2, 1. ])
    >>> as_scores([0.2, 1.3])
    Traceback (most recent call last):
        ...
    ValueError: scores must lie in [0, 1]; 1 value(s) do not (first at index 1: 1.3).
    """
    arr = as_array(x, name, ndim=ndim, allow_nan=allow_nan)
    out = (arr < 0) | (arr > 1)
    if out.any():
        i = int(np.flatnonzero(out.ravel())[0])
        raise ValueError(f"{name} must lie in [0, 1]; {int(out.sum())} value(s) do not "
                         f"(first at index {i}: {float(arr.ravel()[i])!r}).")
    return arr


as_probabilities = as_scores


def as_binary(x: Any, name: str = "labels", *, ndim: int | None = 1) -> np.ndarray:
    """Binary labels (0/1, False/True, 0.0/1.0) as int8; anything else is rejected.

    Parameters
    ----------
    x : array-like
        The labels.
    name : str
        The argument's public name, used in error messages.
    ndim : int or None
        Required number of dimensions (None: any).

    Returns
    -------
    numpy.ndarray
        int8 zeros and ones.

    Raises
    ------
    ValueError
        As :func:`as_array`, and for values other than 0 and 1.

    Examples
    --------
    >>> as_binary([True, False, 1.0])
    array([1, 0, 1], dtype=int8)
    >>> as_binary([0, 1, 2], "y_pred")
    Traceback (most recent call last):
        ...
    ValueError: y_pred must be binary (0/1 or False/True); got other values such as [2].
    """
    raw = _to_numpy(x, name)
    if raw.dtype == bool:
        return as_array(raw, name, ndim=ndim, dtype=bool).astype(np.int8)
    exact = np.issubdtype(raw.dtype, np.integer)  # no NaN to look for: check the values as they are
    arr = as_array(raw, name, ndim=ndim, dtype=raw.dtype if exact else float)
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        vals = np.unique(arr[bad])[:5].tolist()
        raise ValueError(f"{name} must be binary (0/1 or False/True); got other values "
                         f"such as {vals}.")
    return arr.astype(np.int8)


def as_labels(x: Any, name: str = "labels", *, allow_missing: bool = False) -> np.ndarray:
    """Binary labels; with ``allow_missing`` NaN marks a missing label and the result is float.

    Parameters
    ----------
    x : array-like, shape (n,)
        The labels.
    name : str
        The argument's public name, used in error messages.
    allow_missing : bool
        Accept NaN as a missing label.

    Returns
    -------
    numpy.ndarray
        int8 labels (:func:`as_binary`), or float64 0, 1 and NaN with ``allow_missing``.

    Raises
    ------
    ValueError
        For values other than 0, 1 (and NaN with ``allow_missing``).

    Examples
    --------
    >>> as_labels([1, float("nan"), 0], allow_missing=True)
    array([ 1., nan,  0.])
    >>> as_labels([1, float("nan"), 0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: labels has 1 NaN or infinite value(s) (first at index 1); only finite numbers ...
    """
    if not allow_missing:
        return as_binary(x, name)
    arr = as_array(x, name, allow_nan=True)
    known = ~np.isnan(arr)
    bad = known & (arr != 0) & (arr != 1)
    if bad.any():
        vals = np.unique(arr[bad])[:5].tolist()
        raise ValueError(f"{name} must be 0, 1 or NaN (missing); got other values such as "
                         f"{vals}.")
    return arr


def check_same_length(**arrays: np.ndarray | None) -> int:
    """All given arrays have the same first dimension; returns it.

    Parameters
    ----------
    **arrays : numpy.ndarray or None
        The arrays by their public names; None values are skipped.

    Returns
    -------
    int
        The common length.

    Raises
    ------
    ValueError
        If the lengths differ; the message lists every length.

    Examples
    --------
    >>> check_same_length(scores=np.zeros(3), labels=np.ones(3), y_pred=None)
    3
    >>> check_same_length(scores=np.zeros(3), labels=np.ones(2))
    Traceback (most recent call last):
        ...
    ValueError: length mismatch: scores has 3, labels has 2; they must have one value per row.
    """
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"length mismatch: {desc}; they must have one value per row.")
    return next(iter(lengths.values()))


def _length(x: Any) -> int | None:
    """The number of rows of an argument as :func:`as_array` sees it (None: not array-like)."""
    try:
        shape = np.shape(x)
    except ValueError:  # a ragged list: as_array says what is wrong with it
        return None
    if len(shape) == 2 and 1 in shape:
        return max(shape)
    return shape[0] if shape else None


def _unique(index: pd.Index, name: str, other: str) -> None:
    if not index.is_unique:
        dup = index[index.duplicated()].unique()
        raise ValueError(f"the index of {name} has {dup.size} duplicated label(s) (e.g. "
                         f"{dup[0]!r}), so its rows cannot be paired with those of {other} by "
                         "index; give unique labels, or pass .to_numpy() to pair by position.")


def aligned(*, keys: tuple[str, ...] = (), **arrays: Any) -> tuple[Any, ...]:
    """The per-row arguments with their rows paired: by pandas index, else by position.

    pandas Series and DataFrames pair by index: each is reordered to the rows of the first of
    them (identical indexes are kept as they are). Plain arrays and lists pair by position, so
    mixed with pandas they are taken to be in the order of the first indexed argument. Every
    argument must have one value per row; None and strings (presets) pass through.

    Parameters
    ----------
    keys : tuple of str
        The names of grouping keys among ``arrays`` (e.g. ``chunks``): paired like the others,
        their length is left to their own check (:func:`bayeval.chunks.make_chunks`).
    **arrays : array-like or None
        The per-row arguments by their public names, the first one first.

    Returns
    -------
    tuple
        The arguments in the order given, the pandas ones reordered.

    Raises
    ------
    ValueError
        Naming the arguments: indexes whose labels differ (how many, and one of them), an index
        with duplicated labels, or lengths that differ.

    Examples
    --------
    >>> scores = pd.Series([0.9, 0.2], index=["a", "b"])
    >>> labels = pd.Series([0, 1], index=["b", "a"])
    >>> aligned(scores=scores, labels=labels)[1].to_dict()
    {'a': 1, 'b': 0}
    >>> aligned(scores=scores, labels=labels.set_axis(["b", "c"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: scores and labels are paired by their pandas index, but 2 label(s) are in only ...
    """
    out = dict(arrays)
    indexed = [k for k, v in arrays.items() if isinstance(v, (pd.Series, pd.DataFrame))]
    for name in indexed[1:]:
        first, anchor, index = indexed[0], arrays[indexed[0]].index, arrays[name].index
        if index.equals(anchor):
            continue
        _unique(anchor, first, name)
        _unique(index, name, first)
        unmatched = anchor.symmetric_difference(index, sort=False)
        if unmatched.size:
            raise ValueError(f"{first} and {name} are paired by their pandas index, but "
                             f"{unmatched.size} label(s) are in only one of them (e.g. "
                             f"{unmatched[0]!r}); give them the same index (e.g. columns of one "
                             "DataFrame), or pass .to_numpy() to pair them by position.")
        out[name] = arrays[name].iloc[index.get_indexer(anchor)]
    lengths = {k: n for k, v in out.items() if k not in keys and (n := _length(v)) is not None}
    if len(set(lengths.values())) > 1:
        first, n = next(iter(lengths.items()))
        check_same_length(**{k: range(m) for k, m in lengths.items() if k == first or m != n})
    return tuple(out.values())


def as_counts(tp: Any, fp: Any, fn: Any, tn: Any) -> list[np.ndarray]:
    """Confusion counts: non-negative finite numbers (integers or expected counts) that
    broadcast to one shape.

    Parameters
    ----------
    tp, fp, fn, tn : array-like
        The counts.

    Returns
    -------
    list of numpy.ndarray
        The four float arrays, broadcast to one shape.

    Raises
    ------
    ValueError
        Naming the count that is negative, NaN or infinite, or the shapes that do not broadcast.

    Examples
    --------
    >>> [a.tolist() for a in as_counts([3, 0], 1, 2, 4)]
    [[3.0, 0.0], [1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]
    >>> as_counts(3, -1, 2, 4)
    Traceback (most recent call last):
        ...
    ValueError: fp must hold non-negative counts; got 1 negative value(s).
    """
    out = []
    for name, x in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
        arr = as_array(x, name, ndim=None, allow_empty=True)
        if (arr < 0).any():
            raise ValueError(f"{name} must hold non-negative counts; got "
                             f"{int((arr < 0).sum())} negative value(s).")
        out.append(arr)
    try:
        return np.broadcast_arrays(*out)
    except ValueError:
        names = ("tp", "fp", "fn", "tn")
        shapes = ", ".join(f"{k} {a.shape}" for k, a in zip(names, out, strict=True))
        raise ValueError(f"tp, fp, fn and tn must broadcast to one shape; got {shapes}.") from None


def as_predictions(y_pred: Any, scores: np.ndarray | None, threshold: float, *,
                   name: str = "y_pred", thresholded: bool = False) -> np.ndarray:
    """The predictions: ``y_pred`` as given, or ``scores >= threshold``.

    Parameters
    ----------
    y_pred : array-like of 0/1 or None
        The predictions given (None: made from the scores).
    scores : numpy.ndarray or None
        Checked scores (:func:`as_scores`), one per row; None when only ``y_pred`` is given.
    threshold : float
        Checked threshold (:func:`as_threshold`).
    name : str
        The public name of ``y_pred``, used in error messages.
    thresholded : bool
        Require ``y_pred`` to equal ``scores >= threshold`` (methods that need the rule).

    Returns
    -------
    numpy.ndarray
        int8 zeros and ones.

    Raises
    ------
    ValueError
        Neither ``y_pred`` nor ``scores``; ``y_pred`` not binary, of another length than
        ``scores``, or (``thresholded``) not ``scores >= threshold``.

    Examples
    --------
    >>> as_predictions(None, np.array([0.2, 0.7]), 0.5)
    array([0, 1], dtype=int8)
    >>> as_predictions([1, 1], np.array([0.2, 0.7]), 0.5, thresholded=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: y_pred disagrees with scores >= threshold (0.5) on 1 row(s) (first at index 0)...
    """
    if y_pred is None:
        if scores is None:
            raise ValueError(f"give scores (with threshold) or {name}; both are None.")
        return (scores >= threshold).astype(np.int8)
    y_pred = as_binary(y_pred, name)
    if scores is None:
        return y_pred
    check_same_length(**{name: y_pred, "scores": scores})
    if not thresholded:
        return y_pred
    bad = y_pred != (scores >= threshold)
    if bad.any():
        neg, pos = scores[y_pred == 0], scores[y_pred == 1]
        hint = ""
        if neg.size and pos.size and neg.max() < pos.min():
            hint = (f" They follow a threshold in ({neg.max():.6g}, {pos.min():.6g}]; pass "
                    "that threshold.")
        raise ValueError(f"{name} disagrees with scores >= threshold ({threshold:g}) on "
                         f"{int(bad.sum())} row(s) (first at index {int(np.flatnonzero(bad)[0])})"
                         f"; predictions must be made by thresholding the scores.{hint}")
    return y_pred


def as_reference(reference: Any, *, with_y_pred: bool = False, both_classes: bool = False,
                 name: str = "reference") -> tuple[np.ndarray, ...]:
    """Labelled reference data: ``(scores, labels)``, or with ``with_y_pred`` also
    ``(scores, labels, y_pred)``; its parts pair by index if they have one (:func:`aligned`).

    Parameters
    ----------
    reference : tuple
        Scores in [0, 1] and 0/1 labels of one length (and predictions).
    with_y_pred : bool
        Accept a third element, the reference predictions (returned unchecked, None if absent:
        check them with :func:`as_predictions`).
    both_classes : bool
        Require both classes among the labels.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    tuple
        ``(scores, labels)`` as float64 and int8 arrays; with ``with_y_pred`` a third element,
        the predictions as given (or None).

    Raises
    ------
    ValueError
        Not such a tuple; bad scores or labels; different lengths; one class with
        ``both_classes``.

    Examples
    --------
    >>> as_reference(([0.2, 0.9], [0, 1]))[1]
    array([0, 1], dtype=int8)
    >>> as_reference([0.2, 0.3])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: reference must be a tuple (scores, labels) of arrays of labelled data; got ...
    """
    sizes = (2, 3) if with_y_pred else (2,)
    if (not isinstance(reference, (tuple, list)) or len(reference) not in sizes
            or any(np.ndim(part) == 0 for part in reference)):
        shapes = "(scores, labels) or (scores, labels, y_pred)" if with_y_pred else \
            "(scores, labels)"
        raise ValueError(f"{name} must be a tuple {shapes} of arrays of labelled data; got "
                         f"{type(reference).__name__} {describe(reference)}.")
    parts = aligned(**{f"{name} {part}": x for part, x in
                       zip(("scores", "labels", "y_pred"), reference, strict=False)})
    scores = as_scores(parts[0], f"{name} scores")
    labels = as_binary(parts[1], f"{name} labels")
    if both_classes and labels.min() == labels.max():
        raise ValueError(f"{name} labels hold only class {int(labels[0])}; calibration and "
                         f"alert thresholds need both classes (0 and 1) in the {name}.")
    if not with_y_pred:
        return scores, labels
    return scores, labels, parts[2] if len(parts) == 3 else None
