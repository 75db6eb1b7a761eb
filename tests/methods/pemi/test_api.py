"""PEMI's entry function: the calibration map fitted on the labelled rows, the MNAR sensitivity
table, nothing missing, old argument names, and bad input (the closed forms are tested against
enumeration in test_fast.py)."""

import warnings

import numpy as np
import pytest

from bayeval import calibration
from bayeval.datasets import breast_cancer, calibrated_scores, mask_labels
from bayeval.methods.pemi.api import delta_sensitivity, pemi
from bayeval.methods.pemi.protocol import metric_values

NAN = np.nan


# ------------------------------------------------------------------------ probabilities
def test_calibrators_and_presets_are_fitted_on_the_labelled_rows():
    d = calibrated_scores(400, random_seed=4)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=5).labels
    known = ~np.isnan(labels)
    for name in ("platt", "isotonic", "scaling_binning"):
        fitted = calibration.make_calibrator(name).fit(d.scores[known], labels[known])
        given = pemi(d.scores, labels, p=fitted.predict(d.scores)).closed_form
        with pytest.warns(UserWarning, match="conditional on the fitted calibration map"):
            plug_in = pemi(d.scores, labels, calibration=name, calibration_uncertainty=False)
        assert plug_in.closed_form.identical(given)
    rate = np.full(400, labels[known].mean())
    assert pemi(d.scores, labels, p="prevalence").closed_form.identical(
        pemi(d.scores, labels, p=rate).closed_form)
    assert pemi(d.scores, labels, p="half").closed_form.identical(
        pemi(d.scores, labels, p=np.full(400, 0.5)).closed_form)
    ref = (d.scores[:100], d.labels[:100])
    fitted = calibration.make_calibrator("platt").fit(*ref)
    plug_in = pemi(d.scores, labels, calibration="platt", reference=ref,
                   calibration_uncertainty=False)
    assert plug_in.closed_form.identical(pemi(d.scores, labels,
                                              p=fitted.predict(d.scores)).closed_form)


def test_mnar_shift_zero_is_mar_and_the_sensitivity_table_starts_there():
    d = calibrated_scores(500, random_seed=1)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=2).labels
    # the table is PEMI-Gauss at the fitted map's probabilities
    plug_in = dict(method="gauss", calibration_uncertainty=False)
    with warnings.catch_warnings():  # "conditional on the fitted calibration map"
        warnings.simplefilter("ignore")
        mar = pemi(d.scores, labels, **plug_in)
        zero = pemi(d.scores, labels, mnar=0.0, **plug_in)
        table = delta_sensitivity(pemi(d.scores, labels, mnar=(1.0, 0.5), **plug_in))
    assert zero.closed_form.identical(mar.closed_form)
    at_zero = table.loc[0.0]
    np.testing.assert_allclose(at_zero["mean"].values, mar.closed_form["mean"].values, rtol=0,
                               atol=1e-15)
    # a larger delta makes more of the missing labels positive: precision rises, recall falls
    assert table["mean"]["precision"].is_monotonic_increasing
    assert table["mean"]["recall"].is_monotonic_decreasing


def test_nothing_missing_gives_the_plain_metric_with_zero_width():
    d = breast_cancer(random_seed=0)
    with pytest.warns(UserWarning, match="no label is missing"):
        ev = pemi(d.scores, d.labels, method="impute")
    cf = ev.closed_form
    truth = metric_values(d.scores, d.labels, d.y_pred, tuple(cf["metric"].values))
    np.testing.assert_array_equal(cf["mean"].values, truth)
    assert (cf["sd"] == 0).all() and (cf["lower"] == cf["upper"]).all()


# -------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(labels=[0, 1, 2, NAN]), r"labels must be 0, 1 or NaN"),
    (dict(labels=[0, 1, NAN]), "length mismatch: scores has 4, labels has 3"),
    (dict(labels=[NAN] * 4), "no calibrator can be fitted"),
    (dict(labels=[NAN] * 4, p="prevalence"), "no calibrator can be fitted"),
    (dict(labels=[0, 0, NAN, NAN]), "only class 0"),
    (dict(labels=[0, 1, NAN, NAN], metrics="roc_auc", method="exact"), "ROC-AUC has none"),
    (dict(labels=[0, 1, NAN, NAN], p=[0.5] * 4, method="pymc"), "p must be None"),
    (dict(labels=[0, 1, NAN, NAN], mnar=(0.0, -1.0)), "mnar must be None"),
    (dict(labels=[0, 1, NAN, NAN], calibration="magic"), "calibration must be one of"),
    (dict(labels=[0, 1, NAN, NAN], calibration=object()), "calibration must be a name"),
    (dict(labels=[0, 1, NAN, NAN], p=[0.5] * 3), "length mismatch: scores has 4, p has 3"),
    (dict(labels=[0, 1, NAN, NAN], p=[0.5, 0.5, 1.5, 0.5]), r"p must lie in \[0, 1\]"),
    (dict(labels=[0, 1, NAN, NAN], method="impute", draws=0), "draws must be an integer >= 2"),
    (dict(labels=[0, 1, NAN, NAN], method="impute", draws=1), "draws must be an integer >= 2"),
    (dict(labels=[0, 1, NAN, NAN], metrics="auc"), "metrics must be one of"),
    (dict(labels=[0, 1, NAN, NAN], reference=([0.2], [0, 1])), "length mismatch"),
    (dict(labels=[0, 1, NAN, NAN], mnar="large"), "mnar must be None"),
    (dict(labels=[0, 1, NAN, NAN], threshold="0.5"), "threshold must be a number"),
    (dict(labels=[0, 1, NAN, NAN], prior_log_b=(0.0, 0.0)), "prior_log_b must be"),
    (dict(labels=[0, 1, NAN, NAN], random_seed=-1), "random_seed must be"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pemi([0.2, 0.7, 0.4, 0.9], **kwargs)


def test_all_labels_missing_works_with_given_p():
    cf = pemi([0.2, 0.7, 0.4, 0.9], [NAN] * 4, p=[0.2, 0.7, 0.4, 0.9],
              metrics="accuracy").closed_form
    assert float(cf["mean"].item()) == pytest.approx((0.8 + 0.7 + 0.6 + 0.9) / 4, abs=1e-15)


# -------------------------------------------------------------------------- old names
def test_old_argument_names_warn_and_give_the_same_result():
    d = calibrated_scores(300, random_seed=6)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=7).labels
    new = pemi(d.scores, labels, calibration="platt", method="impute", draws=500, random_seed=8)
    with pytest.warns(FutureWarning, match=r"pemi\(calibrator=\) is now pemi\(calibration=\)"):
        old = pemi(d.scores, labels, calibrator="platt", method="impute", draws=500,
                   random_seed=8)
    assert old.draws.identical(new.draws)
    with pytest.warns(FutureWarning, match=r"pemi\(n_imputations=\) is now pemi\(draws=\)"):
        old = pemi(d.scores, labels, calibration="platt", method="impute", n_imputations=500,
                   random_seed=8)
    assert old.draws.identical(new.draws)
    with pytest.raises(TypeError, match="both calibrator= and its new name calibration="):
        pemi(d.scores, labels, calibrator="platt", calibration="platt")
