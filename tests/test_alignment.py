"""pandas inputs pair by index, plain arrays by position, in every entry function.

Each case gives an entry function's per-row arguments as plain arrays (in row order) and a call
that returns its summary. The rule (:func:`bayeval.validation.aligned`): Series are reordered
to the first Series' index; an index with other labels or duplicated labels is an error; arrays,
lists and arrays mixed with Series pair by position.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval import datasets
from bayeval.validation import aligned


@dataclass(frozen=True)
class Case:
    columns: dict[str, np.ndarray]
    call: Callable[..., pd.DataFrame]


def _labelled() -> Case:
    d = datasets.calibrated_scores(40, random_seed=1)
    return Case({"scores": d.scores, "labels": d.labels},
                lambda **cols: be.labelled(**cols).summary())


def _cbpe() -> Case:
    ref, new = (datasets.calibrated_scores(n, random_seed=seed) for n, seed in ((200, 2), (90, 3)))
    labels = np.where(np.arange(90) % 3 == 0, new.labels, np.nan)
    return Case({"scores": new.scores, "labels": labels,
                 "y_pred": (new.scores >= 0.5).astype(int), "chunks": np.arange(90) % 2},
                lambda **cols: be.cbpe(**cols, reference=(ref.scores, ref.labels),
                                       calibration="none", metrics=["accuracy", "f1"]).summary())


def _pemi() -> Case:
    d = datasets.calibrated_scores(50, random_seed=4)
    labels = np.where(np.arange(50) % 4 == 0, np.nan, d.labels)
    return Case({"scores": d.scores, "labels": labels, "p": 0.1 + 0.8 * d.scores,
                 "y_pred": (d.scores >= 0.4).astype(int)},
                lambda **cols: be.pemi(**cols, metrics=["accuracy", "f1"],
                                       method="exact").summary())


def _judge() -> Case:
    d = datasets.noisy_judge(40, 300, prevalence=0.4, random_seed=5)
    return Case({"y": d.y, "yhat": d.yhat},
                lambda **cols: be.judge(**cols, yhat_unlabeled=d.yhat_unlabeled,
                                        method="all").summary())


CASES = {"labelled": _labelled, "cbpe": _cbpe, "pemi": _pemi, "judge": _judge}


@pytest.fixture(scope="module", params=list(CASES))
def case(request) -> Case:
    return CASES[request.param]()


@pytest.fixture(scope="module")
def expected(case) -> pd.DataFrame:
    return case.call(**case.columns)


def _index(n: int) -> pd.Index:
    return pd.Index([f"row{i}" for i in range(n)])


def _series(case: Case, index: pd.Index, order: np.ndarray) -> dict[str, pd.Series]:
    """The first column in row order, the others shuffled by ``order``, all indexed."""
    first, *others = case.columns
    out = {first: pd.Series(case.columns[first], index=index)}
    out.update({k: pd.Series(case.columns[k], index=index).iloc[order] for k in others})
    return out


def _order(case: Case) -> np.ndarray:
    return np.random.default_rng(0).permutation(len(next(iter(case.columns.values()))))


def test_shuffled_series_give_the_answer_of_aligned_input(case, expected):
    n = len(_order(case))
    pd.testing.assert_frame_equal(case.call(**_series(case, _index(n), _order(case))), expected)


def test_series_whose_first_is_shuffled_follow_its_order(case):
    """Every argument is reordered to the first Series' rows, whatever their order."""
    order = _order(case)
    cols = {k: pd.Series(v, index=_index(order.size)).iloc[order]
            for k, v in case.columns.items()}
    shuffled = case.call(**{k: v.to_numpy() for k, v in cols.items()})
    cols.update({k: cols[k].sort_index() for k in list(cols)[1:]})
    pd.testing.assert_frame_equal(case.call(**cols), shuffled)


def test_an_index_with_other_labels_is_an_error(case):
    order = _order(case)
    cols = _series(case, _index(order.size), order)
    first, second, *_ = cols
    cols[second] = cols[second].rename({cols[second].index[0]: "elsewhere"})
    with pytest.raises(ValueError, match=rf"^{first} and {second} are paired by their pandas "
                                         r"index, but 2 label\(s\) are in only one"):
        case.call(**cols)


def test_duplicated_labels_are_an_error(case):
    order = _order(case)
    index = _index(order.size).to_numpy()
    index[1] = index[0]
    cols = _series(case, pd.Index(index), order)
    first = next(iter(cols))
    with pytest.raises(ValueError, match=rf"the index of {first} has 1 duplicated label\(s\) "
                                         r"\(e.g. 'row0'\)"):
        case.call(**cols)


def test_arrays_and_lists_pair_by_position(case, expected):
    lists = {k: v.tolist() for k, v in case.columns.items()}
    pd.testing.assert_frame_equal(case.call(**lists), expected)


def test_series_mixed_with_arrays_pair_by_position(case, expected):
    """A Series (shuffled index) beside plain arrays is not reordered: arrays have no index."""
    order = _order(case)
    first, *others = case.columns
    shuffled = pd.Series(case.columns[first], index=_index(order.size)[order])
    mixed = {first: shuffled, **{k: case.columns[k] for k in others}}
    pd.testing.assert_frame_equal(case.call(**mixed), expected)


# ------------------------------------------------------------------ the parts of a reference
def _reference_parts(n: int = 200):
    ref = datasets.calibrated_scores(n, random_seed=6)
    index = _index(n)
    order = np.random.default_rng(1).permutation(n)
    scores = pd.Series(ref.scores, index=index)
    labels = pd.Series(ref.labels, index=index).iloc[order]
    return ref, scores, labels, order


def test_cbpe_pairs_the_reference_parts_and_chunks_by_index():
    ref, scores, labels, order = _reference_parts()
    keys = np.arange(ref.scores.size) // 50
    new = datasets.calibrated_scores(60, random_seed=7)

    def run(reference, reference_chunks):
        return be.cbpe(new.scores, reference=reference, reference_chunks=reference_chunks,
                       calibration="none", metrics=["accuracy"]).summary()

    expected = run((ref.scores, ref.labels), keys)
    chunks = pd.Series(keys, index=scores.index).iloc[order[::-1]]
    pd.testing.assert_frame_equal(run((scores, labels), chunks), expected)
    y_pred = pd.Series(ref.scores >= 0.5, index=scores.index).iloc[order[::-1]]
    pd.testing.assert_frame_equal(run((scores, labels, y_pred), keys), expected)
    with pytest.raises(ValueError, match=r"^reference scores and reference labels are paired"):
        run((scores, labels.set_axis(range(labels.size))), None)


def test_pemi_pairs_the_reference_parts_by_index():
    ref, scores, labels, _ = _reference_parts()
    d = datasets.calibrated_scores(40, random_seed=8)
    missing = np.where(np.arange(40) % 2 == 0, np.nan, d.labels)

    def run(reference):
        return be.pemi(d.scores, missing, reference=reference, calibration_uncertainty=False,
                       metrics="accuracy", method="gauss").summary()

    pd.testing.assert_frame_equal(run((scores, labels)), run((ref.scores, ref.labels)))
    with pytest.raises(ValueError, match=r"^reference scores and reference labels are paired"):
        run((scores, labels.reset_index(drop=True)))


def test_judge_pairs_the_columns_of_data_frames_by_index():
    d = datasets.noisy_judge(40, 300, prevalence=0.4, random_seed=9)
    judges = {"a": d.yhat, "b": np.where(np.arange(40) % 5 == 0, 1 - d.yhat, d.yhat)}
    yhat = pd.DataFrame(judges, index=_index(40))
    unlabelled = pd.DataFrame({"a": d.yhat_unlabeled, "b": d.yhat_unlabeled})
    y = pd.Series(d.y, index=_index(40)).iloc[np.random.default_rng(2).permutation(40)]
    expected = be.judge(d.y, judges, unlabelled).summary()
    pd.testing.assert_frame_equal(be.judge(y, yhat, unlabelled).summary(), expected)


# ---------------------------------------------------------------------------- the rule itself
def test_identical_indexes_pair_as_they_are_duplicates_included():
    index = pd.Index([3, 3, 1])
    scores, labels = pd.Series([0.1, 0.8, 0.4], index=index), pd.Series([0, 1, 1], index=index)
    out = aligned(scores=scores, labels=labels)
    assert out[0] is scores and out[1] is labels


def test_lengths_must_agree_and_none_or_presets_pass_through():
    assert aligned(scores=[0.2, 0.4], p="half", y_pred=None)[1:] == ("half", None)
    # grouping keys are paired, their length is make_chunks' to check
    assert aligned(scores=[0.2, 0.4], chunks=["a"], keys=("chunks",))[1] == ["a"]
    with pytest.raises(ValueError, match=r"^length mismatch: scores has 3, p has 2;"):
        aligned(scores=[0.1, 0.2, 0.3], labels=np.zeros((3, 1)), p=np.zeros((1, 2)))
