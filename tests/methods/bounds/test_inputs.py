"""The inputs of the bounds: pandas pairs by index, class codes are read and named, bad codes
and sizes are refused up front (bayeval.validation.aligned is the rule; tests/test_alignment.py
holds it for the other methods)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeval.methods.bounds import bounds, compare_labelling_functions, rank_classifiers

WEAK = np.array([[1, 1, 0], [1, 0, -1], [1, 0, 1], [0, -1, 0], [0, 0, 0], [-1, 1, 1]] * 40)
Y_PRED = np.array([1, 1, 0, 0, 0, 1] * 40)
INDEX = pd.Index([f"item{i}" for i in range(len(Y_PRED))])
ORDER = np.random.default_rng(0).permutation(len(Y_PRED))


def _summary(y_pred, weak, **kwargs):
    return bounds(y_pred, weak, label_model="majority_vote", **kwargs).summary()


def test_a_shuffled_data_frame_pairs_by_index():
    expected = _summary(Y_PRED, WEAK)
    weak = pd.DataFrame(WEAK, index=INDEX).iloc[ORDER]
    pd.testing.assert_frame_equal(_summary(pd.Series(Y_PRED, index=INDEX), weak), expected)
    probs = pd.DataFrame(np.tile([0.3, 0.7], (len(Y_PRED), 1)), index=INDEX).iloc[ORDER[::-1]]
    pd.testing.assert_frame_equal(
        bounds(pd.Series(Y_PRED, index=INDEX), weak, label_model=probs).summary(),
        bounds(Y_PRED, WEAK, label_model=probs.sort_index(key=INDEX.get_indexer)).summary())


def test_indexes_that_do_not_pair_are_an_error():
    weak = pd.DataFrame(WEAK, index=INDEX).rename(index={"item0": "elsewhere"})
    with pytest.raises(ValueError, match=r"^y_pred and weak_labels are paired by their pandas "
                                         r"index, but 2 label\(s\)"):
        _summary(pd.Series(Y_PRED, index=INDEX), weak)
    twice = INDEX.to_numpy().copy()
    twice[1] = twice[0]
    with pytest.raises(ValueError, match=r"duplicated label"):
        _summary(pd.Series(Y_PRED, index=INDEX), pd.DataFrame(WEAK, index=twice))


def test_selection_helpers_pair_by_index():
    weak = pd.DataFrame(WEAK, index=INDEX)
    shuffled = pd.Series(Y_PRED, index=INDEX).iloc[ORDER]
    ranked = rank_classifiers({"a": shuffled, "b": np.ones(len(Y_PRED), int)}, weak,
                              label_model="majority_vote")
    plain = rank_classifiers({"a": Y_PRED, "b": np.ones(len(Y_PRED), int)}, WEAK,
                             label_model="majority_vote")
    pd.testing.assert_frame_equal(ranked, plain)
    subsets = {"two": [0, 1], "all": [0, 1, 2]}
    pd.testing.assert_frame_equal(
        compare_labelling_functions(shuffled, weak, subsets, label_model="majority_vote"),
        compare_labelling_functions(Y_PRED, WEAK, subsets, label_model="majority_vote"))


@pytest.mark.parametrize("codes", [(1, 2), (0, 10**9)])
def test_any_two_class_codes_answer_the_same_question_and_are_named(codes):
    recode = np.array(codes)
    ev = bounds(recode[Y_PRED], np.where(WEAK >= 0, recode[np.maximum(WEAK, 0)], -1),
                label_model="majority_vote")
    pd.testing.assert_frame_equal(ev.summary(), _summary(Y_PRED, WEAK))
    assert ev.tree["data"]["class_code"].values.tolist() == list(codes)
    assert f"precision, recall and F1 of class {codes[1]}" in ev.meta["description"]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"weak_labels": np.where(WEAK == 1, 0.7, WEAK)}, r"^weak_labels must hold integers"),
    ({"n_classes": 10**9}, r"^n_classes must be an integer from 2 to 1000"),
    ({"y_pred": np.full(len(Y_PRED), 3), "weak_labels": np.where(WEAK >= 0, 3, -1)},
     r"^y_pred and weak_labels hold one class code, 3"),
    ({"y_pred": np.arange(1200) * 7, "weak_labels": np.zeros((1200, 1), int)},
     r"hold 1200 distinct class codes; at most 1000"),
])
def test_bad_codes_and_sizes_are_refused_up_front(kwargs, match):
    args = {"y_pred": Y_PRED, "weak_labels": WEAK, **kwargs}
    with pytest.raises(ValueError, match=match):
        bounds(args.pop("y_pred"), args.pop("weak_labels"), label_model="majority_vote", **args)
