"""be.labelled: the conjugate posterior through the entry function, its intervals, and its bad
input."""

import doctest

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval.methods.labelled import api

LABELS = np.array([1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0])
Y_PRED = np.array([1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0])
# tp = 5, fn = 2, fp = 1, tn = 4


def test_doctests_run():
    assert doctest.testmod(api).failed == 0


@pytest.mark.parametrize("ci_kind", ["eti", "hdi"])
def test_exact_posterior_is_the_conjugate_beta(ci_kind):
    ev = be.labelled(labels=LABELS, y_pred=Y_PRED, prior=(2.0, 3.0), ci_prob=0.9,
                     ci_kind=ci_kind)
    s = ev.summary()
    law = stats.beta(2 + 5, 3 + 2)  # recall: 5 of 7
    assert s.loc["recall", "mean"] == pytest.approx(law.mean(), abs=1e-14)
    assert s.loc["recall", "sd"] == pytest.approx(law.std(), abs=1e-14)
    lo, hi = s.loc["recall", "lower"], s.loc["recall", "upper"]
    assert law.cdf(hi) - law.cdf(lo) == pytest.approx(0.9, abs=1e-9)
    if ci_kind == "eti":
        assert law.cdf(lo) == pytest.approx(0.05, abs=1e-12)
    else:  # equal density at both ends is the mark of the shortest interval
        assert law.pdf(lo) == pytest.approx(law.pdf(hi), rel=1e-5)


def test_hdi_at_the_boundary_when_nothing_failed():
    ev = be.labelled(labels=[1, 1, 1, 1], y_pred=[1, 1, 1, 1], metrics="accuracy", ci_kind="hdi")
    s = ev.summary()
    assert s.loc["accuracy", "upper"] == pytest.approx(1.0, abs=1e-9)  # Beta(5, 1)
    assert s.loc["accuracy", "lower"] == pytest.approx(0.05 ** (1 / 5), abs=1e-7)


def test_scores_and_threshold_make_the_predictions():
    scores = np.where(Y_PRED == 1, 0.7, 0.2)
    a = be.labelled(scores, LABELS, threshold=0.5).summary()
    b = be.labelled(labels=LABELS, y_pred=Y_PRED).summary()
    assert a.equals(b)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(labels=[0, 1, 2], y_pred=[0, 1, None]), "y_pred has 1 missing value"),
    (dict(labels=[0, 1, 1], y_pred=[0, 1]), "length mismatch: labels has 3, y_pred has 2"),
    (dict(labels=[0, 1]), "give scores"),
    (dict(labels=[0, 1], y_pred=[0, 1], metrics="f1"), "metrics must be one of"),
    (dict(labels=[0, 1], y_pred=[0, 1], prior=(0, 1)), "prior must be two finite positive"),
    (dict(labels=[0, 1], y_pred=[0, 1], prior=(np.inf, 1)), "prior must be two finite positive"),
    (dict(labels=[0, 1], y_pred=[0, 1], prior=None), "prior must be two finite positive"),
    (dict(labels=[0, 1], y_pred=[0, 1], method="mcmc"), "method must be one of"),
    (dict(scores=[0.2, 1.2], labels=[0, 1]), r"scores must lie in \[0, 1\]"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        be.labelled(**kwargs)
