"""Class labels and class probabilities at the edge: codes, classes, checks."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeval.classes import ROW_SUM_TOL, as_class_scores, binary_input, class_coordinate, encode


def test_codes_follow_the_sorted_union_of_labels_and_predictions():
    y, yp, classes = encode([3, 1, 7, 1], [1, 9, 3, 3])
    assert classes.tolist() == [1, 3, 7, 9]
    assert y.tolist() == [1, 0, 2, 0] and yp.tolist() == [0, 3, 1, 1]
    assert classes[y].tolist() == [3, 1, 7, 1]  # the codes map back to the labels


def test_categorical_keeps_its_categories_and_their_order():
    labels = pd.Series(pd.Categorical(["tie", "win"], categories=["win", "loss", "tie"]))
    y, yp, classes = encode(labels, ["loss", "win"])
    assert classes.tolist() == ["win", "loss", "tie"]
    assert y.tolist() == [2, 0] and yp.tolist() == [1, 0]


def test_other_containers():
    y, _, classes = encode(xr.DataArray(np.array(["b", "a"])))
    assert classes.tolist() == ["a", "b"] and y.tolist() == [1, 0]
    y, _, classes = encode(np.array([[True], [False]]))
    assert classes.tolist() == [False, True] and y.tolist() == [1, 0]


@pytest.mark.parametrize(("labels", "y_pred", "message"), [
    ([0, None, 1], None, "labels has 1 missing value"),
    ([0.0, np.nan], None, "labels has 1 missing value"),
    ([[0, 1], [1, 0]], None, "labels must be 1-dimensional"),
    ([], None, "labels is empty"),
    ("abc", None, "labels must be array-like"),
    ([0, 1], [0, 1, 1], "labels and y_pred must have the same length"),
])
def test_bad_labels(labels, y_pred, message):
    with pytest.raises(ValueError, match=message):
        encode(labels, y_pred)


def test_scores_rows_and_columns():
    frame = pd.DataFrame({"cat": [0.5, 0.1], "dog": [0.5, 0.9 + ROW_SUM_TOL / 2]})
    s, classes = as_class_scores(frame)
    assert classes.tolist() == ["cat", "dog"] and s[1, 1] == 0.9 + ROW_SUM_TOL / 2
    with pytest.raises(ValueError, match="row 1 sums to"):
        as_class_scores([[0.5, 0.5], [0.1, 0.9 + 2 * ROW_SUM_TOL]])
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        as_class_scores([[1.5, -0.5]])
    with pytest.raises(ValueError, match="one column per class"):
        as_class_scores([[1.0], [1.0]])
    with pytest.raises(ValueError, match="NaN or infinite"):
        as_class_scores([[np.nan, 1.0]])


def test_class_coordinate_is_storable():
    assert class_coordinate(np.array([2, 5], dtype=object)).dtype.kind == "i"
    assert class_coordinate(["x", "y"]).dtype.kind == "U"
    assert class_coordinate([1, "y"]).tolist() == ["1", "y"]
    assert class_coordinate([True, False]).tolist() == ["True", "False"]


def test_binary_input_tells_the_two_paths_apart():
    assert binary_input(None, [0, 1, 1], [1, 1, 0])
    assert binary_input([0.2, 0.9], [True, False])
    assert binary_input(None, [0.0, np.nan])  # NaN is left to the binary checks
    assert not binary_input(None, [0, 1, 2])
    assert not binary_input(None, ["no", "yes"])
    assert not binary_input(None, pd.Categorical([0, 1]))
    assert not binary_input([[0.2, 0.8], [0.5, 0.5]], [0, 1])
    assert not binary_input(None, [0, 1], [0, 2])
    # an object column of 0/1 numbers (e.g. one that held None) is still binary
    assert binary_input(None, pd.Series([0, 1, None], dtype=object))
    assert not binary_input(None, np.array(["0", "1"], dtype=object))
    assert not binary_input(None, np.array([0, 2], dtype=object))
