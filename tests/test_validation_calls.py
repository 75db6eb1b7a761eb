"""Input is checked once, at the entry point: count the calls into bayeval.validation.

A call counts when a function defined in the ``bayeval/validation`` package is entered from code
outside it (its own nested calls, e.g. ``as_scores`` calling ``as_array``, do not count). The
core's internal calls use the trusting twins of the checking functions, so a method's checks do
not grow with the number of chunks, metrics, folds or intervals it computes.
"""

from __future__ import annotations

import collections
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import bayeval as be
from bayeval import datasets, validation
from bayeval.metrics import from_counts, metric_value

VALIDATION = str(Path(validation.__file__).resolve().parent) + os.sep


def validation_calls(run: Callable[[], object]) -> collections.Counter:
    """The calls into ``bayeval.validation`` made from outside it while ``run()`` runs, by
    function name."""
    calls: collections.Counter = collections.Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(VALIDATION):
            caller = frame.f_back
            if caller is None or not caller.f_code.co_filename.startswith(VALIDATION):
                calls[frame.f_code.co_name] += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return calls


@pytest.fixture(scope="module")
def data():
    return datasets.breast_cancer()


def test_the_counter_sees_direct_and_indirect_calls_but_not_nested_ones():
    # as_scores calls as_array inside validation.py: one call, not two
    assert validation_calls(lambda: validation.as_scores([0.2, 0.7])) == {"as_scores": 1}
    # from_counts checks its four arguments; its trusting twin checks none
    checked = validation_calls(lambda: from_counts("f1", 3, 1, 2, 4))
    assert checked == {"as_choice": 1, "as_zero_division": 1, "as_counts": 1, "as_beta": 1}
    counts = [np.float64(c) for c in (3, 1, 2, 4)]
    assert validation_calls(lambda: metric_value("f1", *counts, 1.0, 0.0)) == {}


def test_cbpe_with_a_reference_checks_its_input_at_most_30_times(data):
    half = data.scores.size // 2
    calls = validation_calls(lambda: be.cbpe(
        data.scores[half:], reference=(data.scores[:half], data.labels[:half])))
    assert 0 < sum(calls.values()) <= 30, calls


def test_pemi_checks_its_input_at_most_27_times(data):
    """pemi's arguments at the entry (16 calls: the columns of data=, method, ci_prob, ci_kind,
    metrics, ties, zero_division, beta, draws, threshold, mnar, scores, labels, predictions,
    their lengths, calibration), the calibration map through its public fit and predict (7, as
    a user's map would be used) and Evaluation's ci_prob and ci_kind (2): 25, whatever the
    number of rows, metrics or missing labels."""
    labels = np.where(np.arange(data.scores.size) % 3 == 0, np.nan, data.labels)
    calls = validation_calls(lambda: be.pemi(data.scores, labels))
    assert 0 < sum(calls.values()) <= 27, calls
