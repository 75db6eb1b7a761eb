"""Every validation error names the argument, says what was wrong and what is accepted."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayeval as be
from bayeval.calibration import CALIBRATORS, Calibrator, Platt
from bayeval.metrics import BINARY_METRICS, METRICS
from bayeval.validation import (
    as_array,
    as_beta,
    as_binary,
    as_calibration,
    as_choice,
    as_ci_prob,
    as_counts,
    as_labels,
    as_metrics,
    as_positive_int,
    as_predictions,
    as_reference,
    as_scores,
    as_seed,
    as_threshold,
    as_zero_division,
    check_same_length,
)


@pytest.mark.parametrize("x", [
    [0.1, 0.9], np.array([0.1, 0.9]), pd.Series([0.1, 0.9]), xr.DataArray([0.1, 0.9]),
    np.array([[0.1], [0.9]]), (0.1, 0.9),
])
def test_array_likes_are_accepted(x):
    np.testing.assert_array_equal(as_scores(x, "scores"), [0.1, 0.9])


def test_booleans_are_binary_labels():
    np.testing.assert_array_equal(as_binary([True, False, True], "labels"), [1, 0, 1])
    np.testing.assert_array_equal(as_binary(pd.Series([1.0, 0.0]), "labels"), [1, 0])


@pytest.mark.parametrize(("call", "message"), [
    (lambda: as_scores([0.2, np.nan], "scores"), r"scores has 1 NaN or infinite value\(s\) "
                                                 r"\(first at index 1\); only finite"),
    (lambda: as_scores([0.2, np.inf], "scores"), r"scores has 1 NaN or infinite"),
    (lambda: as_scores([0.2, 1.5, -1], "scores"), r"scores must lie in \[0, 1\]; 2 value\(s\) do "
                                                  r"not \(first at index 1: 1.5\)"),
    (lambda: as_binary([0, 1, 2], "labels"), r"labels must be binary \(0/1 or False/True\); "
                                             r"got other values such as \[2\]"),
    (lambda: as_binary([0, 1, np.nan], "labels"), r"labels has 1 NaN"),
    (lambda: as_labels([0, 1, 0.5, np.nan], "labels", allow_missing=True),
     r"labels must be 0, 1 or NaN \(missing\); got other values such as \[0.5\]"),
    (lambda: as_labels([0, np.inf], "labels", allow_missing=True), r"labels has 1 infinite"),
    (lambda: as_scores([], "scores"), r"scores is empty; at least one value is needed"),
    (lambda: as_scores(["a", "b"], "scores"), r"scores must hold numbers or booleans, got dtype"),
    (lambda: as_scores([0.1, "a"], "scores"), r"scores must hold numbers or booleans"),
    (lambda: as_scores([[0.1, 0.2], [0.3, 0.4]], "scores"),
     r"scores must be 1-dimensional, got shape \(2, 2\)"),
    (lambda: as_scores("0.5", "scores"), r"scores must be array-like"),
    (lambda: as_scores(None, "scores"), r"scores is required, got None"),
    (lambda: as_scores([1 + 1j], "scores"), r"scores must be real"),
    (lambda: check_same_length(scores=np.zeros(3), labels=np.zeros(4)),
     r"length mismatch: scores has 3, labels has 4"),
    (lambda: as_ci_prob(1.2), r"ci_prob must lie strictly between 0 and 1 \(e.g. 0.95\), got 1.2"),
    (lambda: as_ci_prob("high"), r"ci_prob must be a number in \(0, 1\)"),
    (lambda: as_choice("fast", "method", ("exact", "pymc")),
     r"method must be one of 'exact', 'pymc'; got 'fast'"),
    (lambda: as_seed(-1), r"random_seed must be a non-negative integer, got -1"),
    (lambda: as_seed("seed"), r"random_seed must be None, a non-negative int or a numpy"),
])
def test_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_nan_allowed_where_missing_values_are_meant():
    out = as_array([1.0, np.nan], "labels", allow_nan=True)
    assert np.isnan(out[1]) and out[0] == 1.0


def test_same_length_returns_it_and_ignores_none():
    assert check_same_length(a=np.zeros(3), b=None, c=np.ones(3)) == 3


def test_seed_gives_reproducible_generators():
    assert as_seed(5).random() == as_seed(5).random()
    rng = np.random.default_rng(1)
    assert as_seed(rng) is rng


def test_zero_division_and_beta_accept_their_values():
    assert [as_zero_division(v) for v in (0, 1, 0.0, np.float32(1.0))] == [0.0, 1.0, 0.0, 1.0]
    assert np.isnan(as_zero_division(np.nan))
    assert [as_beta(b) for b in (0, 0.5, np.int64(2), np.inf)] == [0.0, 0.5, 2.0, np.inf]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: as_zero_division(2), r"zero_division must be 0.0, 1.0 or np.nan, got 2\."),
    (lambda: as_zero_division(0.5), r"zero_division must be 0.0, 1.0 or np.nan, got 0.5\."),
    (lambda: as_zero_division("warn"), r"zero_division must be 0.0, 1.0 or np.nan, got 'warn'"),
    (lambda: as_zero_division(None), r"zero_division must be 0.0, 1.0 or np.nan, got None"),
    (lambda: as_zero_division(np.inf, "fill"), r"fill must be 0.0, 1.0 or np.nan, got inf"),
    (lambda: as_beta(-1), r"beta must be a number >= 0 \(np.inf allowed\), got -1\."),
    (lambda: as_beta(np.nan), r"beta must be a number >= 0 \(np.inf allowed\), got nan"),
    (lambda: as_beta("2"), r"beta must be a number >= 0 \(np.inf allowed\), got '2'"),
    (lambda: as_beta([1.0], "weight"), r"weight must be a number >= 0"),
])
def test_zero_division_and_beta_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ the checks of the entry points
def test_threshold_accepts_numbers_in_the_unit_interval():
    assert [as_threshold(t) for t in (0, 0.5, 1, np.float32(0.25))] == [0.0, 0.5, 1.0, 0.25]


def test_positive_int_accepts_integers_and_returns_int():
    got = [as_positive_int(v, "n_bins") for v in (1, np.int64(7), 3, np.uint8(2))]
    assert got == [1, 7, 3, 2] and all(type(v) is int for v in got)
    assert as_positive_int(5, "chunk_size", most=5) == 5


def test_metrics_default_and_order():
    assert as_metrics(None, METRICS, ("f1",)) == ("f1",)
    assert as_metrics(np.array(["mcc", "f1"]), METRICS, ()) == ("mcc", "f1")
    assert as_metrics("roc_auc", BINARY_METRICS, ()) == ("roc_auc",)


def test_counts_broadcast_to_floats():
    tp, fp, fn, tn = as_counts([1, 2], 3, [[0], [1]], 4.5)
    assert tp.shape == fp.shape == fn.shape == tn.shape == (2, 2) and tp.dtype == float


def test_predictions_from_scores_or_given():
    scores = np.array([0.2, 0.5, 0.9])
    np.testing.assert_array_equal(as_predictions(None, scores, 0.5), [0, 1, 1])
    np.testing.assert_array_equal(as_predictions([0, 0, 1], scores, 0.5), [0, 0, 1])
    np.testing.assert_array_equal(as_predictions([0, 1, 1], scores, 0.5, thresholded=True),
                                  [0, 1, 1])
    np.testing.assert_array_equal(as_predictions([1, 0], None, 0.5), [1, 0])


def test_reference_with_and_without_predictions():
    scores, labels = as_reference(([0.2, 0.8], [0, 1]))
    assert scores.dtype == float and labels.tolist() == [0, 1]
    assert as_reference(([0.2, 0.8], [0, 1]), with_y_pred=True)[2] is None
    assert as_reference(([0.2, 0.8], [0, 1], [0, 1]), with_y_pred=True)[2] == [0, 1]


def test_calibration_names_and_objects():
    assert as_calibration("platt", CALIBRATORS) == "platt"
    cal = Platt()
    assert as_calibration(cal, CALIBRATORS, kind=Calibrator) is cal


class _Map:
    def fit(self, scores, labels):
        return self

    def predict(self, scores):
        return scores


@pytest.mark.parametrize(("call", "message"), [
    (lambda: as_threshold("0.5"), r"threshold must be a number in \[0, 1\], got '0.5'"),
    (lambda: as_threshold(1.5), r"threshold must be a number in \[0, 1\], got 1.5"),
    (lambda: as_threshold(True), r"threshold must be a number in \[0, 1\], got True"),
    (lambda: as_threshold(np.nan), r"threshold must be a number in \[0, 1\], got nan"),
    (lambda: as_positive_int(0, "chunk_size"), r"chunk_size must be a positive integer, got 0"),
    (lambda: as_positive_int(2.5, "draws"), r"draws must be a positive integer, got 2.5"),
    (lambda: as_positive_int(True, "n_bins"), r"n_bins must be a positive integer, got True"),
    (lambda: as_positive_int("3", "n_bins"), r"n_bins must be a positive integer, got '3'"),
    (lambda: as_positive_int(np.inf, "n_bins"), r"n_bins must be a positive integer, got inf"),
    (lambda: as_positive_int(10.0, "n_bins"), r"n_bins must be a positive integer, got 10.0"),
    (lambda: as_positive_int(3, "n_chunks", most=2),
     r"n_chunks=3 exceeds the number of rows \(2\): some chunks would be empty"),
    (lambda: as_metrics("auc", METRICS, ()), r"metrics must be one of 'accuracy', .*; got 'auc'"),
    (lambda: as_metrics(["f1", "f1"], METRICS, ()), r"metrics lists a metric twice"),
    (lambda: as_counts(1, 1, -2, 1), r"fn must hold non-negative counts"),
    (lambda: as_counts(1, np.nan, 1, 1), r"fp has 1 NaN"),
    (lambda: as_counts([1, 2], [1, 2, 3], 1, 1), r"tp, fp, fn and tn must broadcast"),
    (lambda: as_predictions(None, None, 0.5), r"give scores \(with threshold\) or y_pred"),
    (lambda: as_predictions([0, 2], np.array([0.1, 0.9]), 0.5), r"y_pred must be binary"),
    (lambda: as_predictions([0, 1, 1], np.array([0.1, 0.9]), 0.5),
     r"length mismatch: y_pred has 3, scores has 2"),
    (lambda: as_predictions([1, 1], np.array([0.1, 0.9]), 0.5, name="reference y_pred",
                            thresholded=True),
     r"reference y_pred disagrees with scores >= threshold \(0.5\) on 1 row"),
    (lambda: as_reference([0.2, 0.3]), r"reference must be a tuple \(scores, labels\)"),
    (lambda: as_reference(([0.2], [0], [1]), with_y_pred=False), r"reference must be a tuple"),
    (lambda: as_reference(([0.2, 0.3], ["a", "b"])), r"reference labels must hold numbers"),
    (lambda: as_reference(([0.2, 1.3], [0, 1])), r"reference scores must lie in \[0, 1\]"),
    (lambda: as_reference(([0.2], [0, 1])),
     r"length mismatch: reference scores has 1, reference labels has 2"),
    (lambda: as_reference(([0.2, 0.3], [0, 0]), both_classes=True),
     r"reference labels hold only class 0"),
    (lambda: as_calibration("magic", CALIBRATORS), r"calibration must be one of"),
    (lambda: as_calibration(object(), CALIBRATORS), r"calibration must be a name .* or an "
                                                    r"object with fit\(scores, labels\)"),
    (lambda: as_calibration(_Map(), CALIBRATORS, kind=Calibrator),
     r"calibration must be a name .* or a Calibrator; got _Map"),
])
def test_entry_point_checks_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()



# ------------------------------------------------------- bad input at the entry functions
_S = np.linspace(0.05, 0.95, 40)
_Y = (np.arange(40) % 3 == 0).astype(int)  # both classes at every score range
_MISSING = np.where(np.arange(40) % 2 == 0, np.nan, _Y)


class _Overconfident:
    """A calibration map that predicts 1.7."""

    def fit(self, scores, labels):
        return self

    def predict(self, scores):
        return np.full(np.size(scores), 1.7)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: be.labelled(_S, _Y, threshold=-0.5), r"threshold must be a number in \[0, 1\]"),
    (lambda: be.labelled(_S, _Y, threshold=1.5), r"threshold must be a number in \[0, 1\]"),
    (lambda: be.labelled(_S, _Y, threshold=np.nan), r"threshold must be a number in \[0, 1\]"),
    (lambda: be.labelled(_S, _Y, threshold=[0.5]), r"threshold must be a number in \[0, 1\]"),
    (lambda: be.labelled(_S, _Y, prior=(np.inf, 1)), "prior must be two finite positive"),
    (lambda: be.labelled(_S, _Y, method="pymc", sample_kwargs={"chains": 0}),
     r"sample_kwargs\['chains'\] must be a positive integer, got 0"),
    (lambda: be.labelled(_S, _Y, method="pymc", sample_kwargs={"draws": 1}),
     r"sample_kwargs\['draws'\] must be an integer >= 2"),
    (lambda: be.cbpe(_S, reference=(_S, _Y), alert_thresholds={"accuracy": (0.9, 0.1)}),
     r"alert_thresholds\['accuracy'\] has lower 0.9 above upper 0.1"),
    (lambda: be.cbpe(_S, reference=(_S, _Y), alert_thresholds={"accuracy": (np.nan, 1)}),
     r"alert_thresholds\['accuracy'\] must be \(lower, upper\)"),
    (lambda: be.cbpe(_S, reference=(_S, _Y), alert_thresholds=[0.1, 0.9]),
     r"alert_thresholds must be a dict"),
    (lambda: be.cbpe(_S, alert_thresholds={"roc_auc": (0.5, 1)}, metrics=["f1"]),
     "alert_thresholds must be one of 'f1'"),
    (lambda: be.cbpe(_S, metrics=["accuracy", "accuracy"]), "metrics lists a metric twice"),
    (lambda: be.pemi(_S, _MISSING, metrics=["f1", "f1"]), "metrics lists a metric twice"),
    (lambda: be.cbpe(_S, method="pymc", draws=0), "draws must be an integer >= 2, got 0"),
    (lambda: be.cbpe(_S, method="pymc", draws=1), "draws must be an integer >= 2, got 1"),
    (lambda: be.cbpe(_S, method="pymc", sample_kwargs={"chains": 0}),
     r"sample_kwargs\['chains'\] must be a positive integer"),
    (lambda: be.cbpe(_S, reference=(_S, _Y), noise="learned", kappa_prior=None),
     r"kappa_prior must be \(mu, sigma\) of a normal prior"),
    (lambda: be.judge({}, {}, {}), "y is given per group .* but has no group"),
    (lambda: be.judge(_Y[:20], _Y[:20], _Y[20:], method="pymc", sample_kwargs=[1]),
     "sample_kwargs must be a dict"),
    (lambda: be.pemi(_S, _MISSING, calibration=_Overconfident()),
     r"calibration: _Overconfident.predict returned 20 value\(s\) outside \[0, 1\] "
     r"\(e.g. 1.7"),
    (lambda: be.cbpe(pd.Series(_S, dtype="Float64").mask(_S > 0.9)),
     "scores has 3 NaN or infinite value"),
    (lambda: be.labelled(_S, pd.Series(_Y, dtype="boolean").mask(_S > 0.9)),
     "labels has 3 NaN or infinite value"),
])
def test_entry_functions_refuse_bad_input_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_nullable_pandas_dtypes_with_na_are_missing_markers():
    """boolean and Float64 labels with pd.NA are pemi's missing labels, as NaN would be."""
    expected = be.pemi(_S, _MISSING, random_seed=0).summary()
    for labels in (pd.Series(_MISSING, dtype="Float64"),
                   pd.Series(_MISSING).astype("boolean")):
        got = be.pemi(pd.Series(_S, dtype="Float64"), labels,
                      random_seed=0).summary()
        pd.testing.assert_frame_equal(got, expected)
    full = pd.Series(_Y.astype(bool), dtype="boolean")  # no NA: plain booleans
    assert be.labelled(_S, full) == be.labelled(_S, _Y)


def test_as_sample_kwargs_accepts_tune_zero_and_passes_other_keys():
    from bayeval.validation import as_sample_kwargs

    assert as_sample_kwargs({"tune": 0, "step": "x"}) == {"tune": 0, "step": "x"}
    assert as_sample_kwargs(None) == {}
    with pytest.raises(ValueError, match=r"sample_kwargs\['tune'\] must be a positive integer"):
        as_sample_kwargs({"tune": -1})
