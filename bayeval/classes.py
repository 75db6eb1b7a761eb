r"""Class labels and class probabilities of K classes, mapped once at the entry point.

Labels and predictions may hold any hashable values (integers, strings, booleans, a pandas
Categorical). :func:`encode` maps them to codes :math:`0,\dots,K-1` of one shared list of
classes, which the results keep as their ``class`` coordinate (:func:`class_coordinate`):

* a pandas Categorical gives its categories, in their order (declared classes that no row
  holds are classes too);
* other values give the sorted union of the values of labels and predictions (scikit-learn's
  ``unique_labels``), or the order of first appearance where the values do not sort (mixed
  types).

Scores of K classes are an (n, K) array of class probabilities :math:`s_{ik}=P(Y_i=k)`
(:func:`as_class_scores`): finite, in [0, 1], each row summing to 1 within
:data:`ROW_SUM_TOL` (scikit-learn's ``np.allclose`` check in ``roc_auc_score``), and kept as
given (dividing by the row sums would move tied scores apart). A DataFrame's columns name the
classes.

:func:`binary_input` tells the two-class inputs of the binary methods (labels and predictions of
0 and 1, a 1-D score of class 1) from K-class inputs.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from bayeval.validation import as_array, describe

__all__ = ["ROW_SUM_TOL", "as_class_scores", "binary_input", "class_coordinate", "column_classes",
           "encode"]

ROW_SUM_TOL = 1e-5
"""Largest accepted :math:`|\\sum_k s_{ik}-1|` of a row of class probabilities."""


def _values(x: Any, name: str) -> tuple[np.ndarray, list | None]:
    """1-D values of ``x`` (object or numeric) and the categories of a pandas Categorical."""
    if x is None:
        raise ValueError(f"{name} is required, got None.")
    if isinstance(x, (str, bytes, dict)):
        raise ValueError(f"{name} must be array-like (numpy, pandas, xarray or a list) of class "
                         f"labels, got {type(x).__name__} {describe(x)}.")
    categories = None
    if isinstance(x, (pd.Series, pd.Index, pd.Categorical)) and isinstance(
            x.dtype, pd.CategoricalDtype):
        categories = list(x.dtype.categories)
        x = np.asarray(x, dtype=object)
    elif isinstance(x, (pd.Series, pd.Index)):
        x = x.to_numpy()
    elif hasattr(x, "values") and hasattr(x, "dims"):  # xarray DataArray
        x = x.values
    arr = np.asarray(x)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional class labels, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; at least one value is needed.")
    missing = pd.isna(arr)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} has {int(missing.sum())} missing value(s) (None or NaN, first "
                         f"at index {i}); every row needs a class label.")
    return arr, categories


def _union(arrays: list[np.ndarray], categories: list[list | None]) -> list:
    """The classes: categories first (in order), then the other values, sorted if they sort."""
    declared = pd.unique(pd.Series([c for cats in categories if cats is not None for c in cats],
                                   dtype=object)).tolist()
    known = set(declared)
    rest = [v for v in pd.unique(pd.Series([v for a in arrays for v in a.tolist()], dtype=object))
            if v not in known]
    try:
        rest = sorted(rest)
    except TypeError:  # mixed types: order of first appearance
        pass
    return declared + rest


def encode(labels: Any, y_pred: Any = None, *, classes: Any = None,
           names: tuple[str, str] = ("labels", "y_pred")) -> tuple[np.ndarray, ...]:
    """Codes 0..K-1 of labels (and predictions) on one shared list of classes.

    Parameters
    ----------
    labels : array-like, shape (n,)
        Class labels of any hashable type, or a pandas Categorical.
    y_pred : array-like, shape (n,), optional
        Predicted classes, of the same classes.
    classes : sequence, optional
        The classes, in order (e.g. the columns of the scores); every label must be one of them.
        By default the categories and values of the inputs (module docstring).
    names : (str, str)
        The arguments' public names, for error messages.

    Returns
    -------
    labels, y_pred, classes : numpy.ndarray
        int64 codes (``y_pred`` None when not given) and the classes as an object array.

    Raises
    ------
    ValueError
        For missing values (None, NaN), arrays that are not 1-D, a length mismatch, or labels
        not among ``classes``.

    Examples
    --------
    >>> y, yp, classes = encode(["cat", "dog", "cat", "eel"], ["dog", "dog", "cat", "cat"])
    >>> y.tolist(), yp.tolist(), classes.tolist()
    ([0, 1, 0, 2], [1, 1, 0, 0], ['cat', 'dog', 'eel'])
    >>> encode([0, 1, 5], classes=[0, 1, 2])
    Traceback (most recent call last):
        ...
    ValueError: labels holds 1 value(s) that are not among the 3 classes [0, 1, 2], such as [5].
    """
    y, cats = _values(labels, names[0])
    arrays, categories = [y], [cats]
    if y_pred is not None:
        yp, pcats = _values(y_pred, names[1])
        if yp.size != y.size:
            raise ValueError(f"{names[0]} and {names[1]} must have the same length, got "
                             f"{y.size} and {yp.size}.")
        arrays.append(yp)
        categories.append(pcats)
    if classes is None:
        classes = _union(arrays, categories)
    index = pd.Index(list(classes), dtype=object)
    codes = []
    for arr, name in zip(arrays, names, strict=False):
        code = index.get_indexer(pd.Index(arr.tolist(), dtype=object))
        if (bad := code < 0).any():
            raise ValueError(f"{name} holds {int(bad.sum())} value(s) that are not among the "
                             f"{len(index)} classes {describe(index.tolist())}, such as "
                             f"{describe(pd.unique(arr[bad])[:3].tolist())}.")
        codes.append(code.astype(np.int64))
    if y_pred is None:
        codes.append(None)
    return codes[0], codes[1], np.asarray(index, dtype=object)


def as_class_scores(scores: Any, name: str = "scores") -> tuple[np.ndarray, np.ndarray | None]:
    r"""Class probabilities: an (n, K) array whose rows sum to 1, and the classes it names.

    Parameters
    ----------
    scores : array-like or DataFrame, shape (n, K)
        :math:`s_{ik}=P(Y_i=k)`; a DataFrame's columns are the classes.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    scores : numpy.ndarray
        float64, as given.
    classes : numpy.ndarray or None
        The DataFrame's columns (object array), None for other inputs.

    Raises
    ------
    ValueError
        Not 2-D with at least two columns, values outside [0, 1], NaN or infinite values, or a
        row whose sum is more than :data:`ROW_SUM_TOL` away from 1.

    Examples
    --------
    >>> s, classes = as_class_scores(pd.DataFrame({"a": [0.2, 0.5], "b": [0.8, 0.5]}))
    >>> s.tolist(), classes.tolist()
    ([[0.2, 0.8], [0.5, 0.5]], ['a', 'b'])
    >>> as_class_scores([[0.2, 0.7], [0.5, 0.5]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: scores' rows must sum to 1 (class probabilities, within 1e-05); row 0 sums to 0.9...
    """
    classes = (np.asarray(list(scores.columns), dtype=object)
               if isinstance(scores, pd.DataFrame) else None)
    s = as_array(scores, name, ndim=2)
    if s.shape[1] < 2:
        raise ValueError(f"{name} must have one column per class (at least 2), got shape "
                         f"{s.shape}.")
    if (bad := (s < 0) | (s > 1)).any():
        raise ValueError(f"{name} must be probabilities in [0, 1]; got values such as "
                         f"{describe(s[bad][:3].tolist())}.")
    total = s.sum(axis=1)
    if (off := np.abs(total - 1) > ROW_SUM_TOL).any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(f"{name}' rows must sum to 1 (class probabilities, within "
                         f"{ROW_SUM_TOL:g}); row {i} sums to {total[i]:.6g}.")
    return s, classes


def column_classes(labels: Any, named: np.ndarray | None, n_columns: int, *,
                   names: tuple[str, str] = ("labels", "scores")) -> np.ndarray:
    """The classes of the K score columns: a DataFrame's columns, else the K classes of the
    labels (sorted), else 0..K-1 when the labels are integers among them. ``names`` are the
    public names of the labels and the scores, for the error message.

    Raises
    ------
    ValueError
        When none of these gives K classes.

    Examples
    --------
    >>> column_classes(["b", "a", "c"], None, 3).tolist(), column_classes([0, 2], None, 3).tolist()
    (['a', 'b', 'c'], [0, 1, 2])
    """
    if named is not None:
        return named
    _, _, found = encode(labels, names=(names[0], ""))
    if len(found) == n_columns:
        return found
    if all(isinstance(c, (int, np.integer)) and 0 <= c < n_columns for c in found):
        return np.arange(n_columns).astype(object)
    raise ValueError(f"{names[0]} hold {len(found)} classes and {names[1]} have {n_columns} "
                     "columns; name the columns' classes (a DataFrame, or classes=).")


def class_coordinate(classes: Any) -> np.ndarray:
    """The classes as a coordinate that netCDF can store: their own values when all are
    strings, all integers or all floats, else their ``str``.

    Examples
    --------
    >>> class_coordinate(np.array([3, 7], dtype=object)), class_coordinate(["a", 1])
    (array([3, 7]), array(['a', '1'], dtype='<U1'))
    """
    values = list(classes)
    for kind in (str, (int, np.integer), (float, np.floating)):
        if all(isinstance(v, kind) and not isinstance(v, (bool, np.bool_)) for v in values):
            return np.asarray(values)
    return np.asarray([str(v) for v in values])


def _binary_values(x: Any) -> bool:
    """Whether ``x`` is None or holds only the numbers (or booleans) 0 and 1."""
    if x is None:
        return True
    try:
        arr = np.asarray(x.to_numpy() if isinstance(x, (pd.Series, pd.Index)) else x)
    except (TypeError, ValueError):
        return True  # left to the binary path's checks and their messages
    if isinstance(getattr(x, "dtype", None), pd.CategoricalDtype):
        return False
    if arr.dtype == object:  # e.g. a column that held None: 0/1 numbers stay binary
        return all(v is None or v is pd.NA or (isinstance(v, numbers.Real) and
                                              (v in (0, 1) or v != v))
                   for v in pd.unique(arr.ravel()))
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        return arr.dtype.kind not in "USO"
    with np.errstate(invalid="ignore"):
        return bool(np.all((arr == 0) | (arr == 1) | np.isnan(arr.astype(float))))


def binary_input(scores: Any, labels: Any, y_pred: Any = None) -> bool:
    """Whether the inputs are those of two classes 0 and 1 (the binary methods' inputs).

    True when ``scores`` is None or has one column and ``labels`` and ``y_pred`` hold only 0
    and 1 (numbers or booleans; NaN passes, for the binary checks to refuse or accept): the
    input of the binary path, whose own checks then apply. False for strings, a pandas
    Categorical, other numbers, or scores of several columns: the K-class path.

    Examples
    --------
    >>> binary_input(None, [0, 1, 1]), binary_input(None, [0, 1, 2]), binary_input(None, ["a"])
    (True, False, False)
    >>> binary_input([[0.2, 0.8], [0.6, 0.4]], [1, 0])
    False
    """
    if scores is not None:
        shape = np.shape(scores)
        if len(shape) == 2 and 1 not in shape:
            return False
    return _binary_values(labels) and _binary_values(y_pred)
