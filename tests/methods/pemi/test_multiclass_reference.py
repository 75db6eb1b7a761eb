"""PEMI with K classes and a labelled reference: the map learned on the reference (its plug-in
is the given p of the fitted map, its posterior that of the labelled rows when they are the
reference), the models fitted on it, score columns named in data= equal to arrays, pandas
alignment, and classes of the reference that do not match the test set's."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.multiclass_calibration import log_scores, platt_probabilities, posterior

CLASSES = np.array(["A", "B", "tie"], dtype=object)
METRICS = ("accuracy", "recall", "macro_f1")
STATS = ("mean", "sd", "lower", "upper", "interval_mass")


def _rows(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Over-confident scores (the labels follow s^0.6) and their class codes."""
    s = rng.dirichlet([2, 2, 2], n)
    true = s**0.6 / (s**0.6).sum(axis=1, keepdims=True)
    y = np.minimum((rng.random(n)[:, None] > true.cumsum(axis=1)).sum(axis=1), 2)
    return s, y


@pytest.fixture(scope="module")
def split():
    rng = np.random.default_rng(21)
    s, y = _rows(240, rng)
    ref_s, ref_y = _rows(160, rng)
    labels = CLASSES[y]
    labels[rng.random(s.shape[0]) < 0.5] = None
    return s, labels, ref_s, CLASSES[ref_y]


def _same(a: be.Evaluation, b: be.Evaluation, atol: float = 0.0) -> None:
    for var in STATS:
        np.testing.assert_allclose(a.closed_form[var].values, b.closed_form[var].values,
                                   rtol=0, atol=atol, err_msg=var)


# ------------------------------------------------------------------------- what it fits on
def test_the_plug_in_map_of_the_reference_is_that_map_as_given_p(split):
    s, labels, ref_s, ref_y = split
    with pytest.warns(UserWarning, match="conditional on the fitted calibration map"):
        plug_in = be.pemi(s, labels, reference=(ref_s, ref_y), calibration_uncertainty=False,
                          metrics=METRICS)
    a, b = posterior(ref_s, np.searchsorted(CLASSES, ref_y)).mode
    p = platt_probabilities(log_scores(s), a[None], np.array([b]))[0]
    assert plug_in.closed_form.identical(be.pemi(s, labels, p=p, metrics=METRICS).closed_form)
    assert "fitted on the reference's 160 rows" in plug_in.tree["data"].attrs["p_source"]


def test_a_reference_of_the_labelled_rows_is_the_map_of_the_labelled_rows(split):
    s, labels, _, _ = split
    known = ~pd.isna(labels)
    own = be.pemi(s, labels, metrics=METRICS, random_seed=4)
    ref = be.pemi(s, labels, reference=(s[known], labels[known]), metrics=METRICS,
                  random_seed=4)
    assert ref.closed_form.identical(own.closed_form)
    assert int(ref.tree["data"]["map_draws"]) == 400


def test_the_reference_moves_the_map_and_serves_a_test_set_without_labels(split):
    s, labels, ref_s, ref_y = split
    own = be.pemi(s, labels, metrics="accuracy", random_seed=4)
    ref = be.pemi(s, labels, reference=(ref_s, ref_y), metrics="accuracy", random_seed=4)
    assert not np.allclose(ref.closed_form["mean"].values, own.closed_form["mean"].values,
                           atol=1e-6, equal_nan=True)
    blind = be.pemi(s, [None] * s.shape[0], reference=(ref_s, ref_y), metrics="accuracy",
                    random_seed=4)
    assert blind.closed_form["class"].values.tolist() == ["A", "B", "tie"]
    assert 0 < float(blind.closed_form["sd"][0, 0]) < float(blind.closed_form["upper"][0, 0])
    assert int(blind.tree["data"]["n_missing"]) == s.shape[0]


def test_given_p_or_no_calibration_leave_the_reference_unused(split):
    s, labels, ref_s, ref_y = split
    for kwargs in (dict(p=s), dict(calibration="none")):
        _same(be.pemi(s, labels, reference=(ref_s, ref_y), metrics=METRICS, **kwargs),
              be.pemi(s, labels, metrics=METRICS, **kwargs))


def test_the_model_is_fitted_on_the_reference(split):
    s, labels, ref_s, ref_y = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = be.pemi(s, labels, reference=(ref_s, ref_y), metrics="accuracy", method="pymc",
                     random_seed=2, sample_kwargs=dict(draws=100, tune=100, chains=1))
    observed = ev.tree["observed_data"].to_dataset()["labels"].values
    np.testing.assert_array_equal(observed, np.searchsorted(CLASSES, ref_y))


# ------------------------------------------------------------------------ data= and pandas
def test_score_columns_named_in_data_equal_the_arrays(split):
    s, labels, ref_s, ref_y = split
    columns = ["p_A", "p_B", "p_tie"]
    frame = pd.DataFrame(s, columns=columns).assign(y=labels)
    ref = pd.DataFrame(ref_s, columns=columns).assign(y=ref_y)
    arrays = be.pemi(pd.DataFrame(s, columns=CLASSES), labels,
                     reference=(pd.DataFrame(ref_s, columns=CLASSES), ref_y), metrics=METRICS,
                     random_seed=5)
    renamed = dict(zip(CLASSES, columns, strict=True))
    named = be.pemi(renamed, "y", data=frame, reference=ref, metrics=METRICS, random_seed=5)
    _same(named, arrays, atol=1e-12)
    assert named.closed_form["class"].values.tolist() == ["A", "B", "tie"]
    # a list of columns: the columns' names are the classes (as in cbpe)
    frame["y"], ref["y"] = "p_" + frame["y"], "p_" + ref["y"]
    listed = be.pemi(columns, "y", data=frame, reference=ref, metrics=METRICS, random_seed=5)
    assert listed.closed_form["class"].values.tolist() == columns
    _same(listed, arrays, atol=1e-12)
    # the test table without the labels column: no test label is known
    blind = be.pemi(columns, "y", data=frame.drop(columns="y"), reference=ref,
                    metrics="accuracy", random_seed=5)
    expected = be.pemi(s, [None] * s.shape[0], reference=(ref_s, ref["y"].to_numpy()),
                       metrics="accuracy", random_seed=5)
    _same(blind, expected, atol=1e-12)


def test_shuffled_pandas_rows_pair_by_index(split):
    s, labels, ref_s, ref_y = split
    rng = np.random.default_rng(8)
    frame = pd.DataFrame(s, columns=CLASSES, index=[f"t{i}" for i in range(len(s))])
    y = pd.Series(labels, index=frame.index)
    ref = pd.DataFrame(ref_s, columns=CLASSES, index=[f"r{i}" for i in range(len(ref_s))])
    ref_labels = pd.Series(ref_y, index=ref.index)
    ordered = be.pemi(frame, y, reference=(ref, ref_labels), metrics=METRICS, random_seed=6)
    shuffled = be.pemi(frame, y.sample(frac=1.0, random_state=1),
                       reference=(ref.iloc[rng.permutation(len(ref))],
                                  ref_labels.iloc[rng.permutation(len(ref))]),
                       metrics=METRICS, random_seed=6)
    # the reference's rows in another order only permute the sums of the map's likelihood
    _same(shuffled, ordered, atol=1e-12)
    positional = be.pemi(s, labels, reference=(ref_s, ref_y), metrics=METRICS, random_seed=6)
    _same(ordered, positional, atol=1e-12)


# ---------------------------------------------------------------------------- bad input
S3 = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]]
LABELS = ["a", "b", None, "c"]


@pytest.mark.parametrize(("reference", "message"), [
    (([[0.5, 0.5]] * 4, LABELS), "reference scores have 2 columns and scores 3"),
    ((pd.DataFrame(S3, columns=["a", "b", "d"]), ["a", "b", "a", "b"]),
     r"reference scores' columns \['a', 'b', 'd'\] differ from the scores'"),
    ((S3, ["a", "b", "d", "a"]), "reference labels holds 1 value.* not among the 3 classes"),
    ((S3, ["a", "b", None, "c"]), "reference labels has 1 missing value"),
    ((S3, ["a", "b", "c"]), "length mismatch: reference scores has 4, reference labels has 3"),
    ((S3, [["a"]] * 4), "reference labels must be 1-dimensional"),
    ((S3,), r"reference must be \(scores, labels\)"),
    ((pd.DataFrame(S3, index=[0, 1, 2, 3]), pd.Series(["a", "b", "c", "a"], index=[0, 1, 2, 9])),
     "reference scores and reference labels are paired by their pandas index"),
    (([[0.7, 0.2, 0.2]] * 4, ["a"] * 4), "reference scores' rows must sum to 1"),
])
def test_a_reference_that_does_not_match_is_refused(reference, message):
    scores = pd.DataFrame(S3, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=message):
        be.pemi(scores, LABELS, reference=reference)


def test_classes_of_unnamed_scores_come_from_the_labels_and_the_reference():
    s = np.array(S3 * 5)
    with pytest.raises(ValueError, match="labels and reference labels hold 4 classes and "
                                         "scores have 3 columns"):
        be.pemi(s, ["a", "b", None, "c"] * 5, reference=(s, ["a", "b", "d", "c"] * 5))
    with warnings.catch_warnings():  # the exact laws of recall are reported
        warnings.simplefilter("ignore", UserWarning)
        cf = be.pemi(s, [None] * 20, reference=(s, ["b", "a", "c", "a"] * 5),
                     metrics="recall").closed_form
    assert cf["class"].values.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="threshold is for scores of one class"):
        be.pemi(s, ["a", "b", None, "c"] * 5, threshold=0.3)
