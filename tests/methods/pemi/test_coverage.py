"""PEMI's default 95 % intervals cover the whole test set's metric when the calibration map is
learned from 100 labelled rows, labels missing at random given the score, scores
over-confident (one cell of the grid of benchmarks/coverage_pemi.py, which docs/pemi.md reports
in full); the plug-in, conditional on the fitted map, does not.

Tolerance: a cell's coverage over R replications has Monte-Carlo sd at most
sqrt(c(1-c)/R); the mean coverage over the five metrics has at most that sd too (their hits are
positively correlated within a replication, never more than perfectly). At the nominal
c = 0.95 and R = 60 that is 0.028, and the test requires the default's mean coverage
>= 0.95 - 3 sd = 0.866 (a one-sided 3-sigma false-alarm rate of 0.13 %), and each metric's
>= 0.95 - 4 sd = 0.838. The plug-in must miss the same 3-sigma bar: the check can fail."""

import numpy as np
import pytest

from benchmarks.coverage_pemi import run

R = 60
SD = np.sqrt(0.95 * 0.05 / R)


@pytest.fixture(scope="module")
def coverage():
    return run(R, 20261124, n_test=300, labelled=(100,), mechanisms=("mar",),
               scores=("over-confident",))


def test_default_covers_where_the_assumptions_hold(coverage):
    assert (coverage["replications"] == R).all()
    assert coverage["coverage_default"].mean() >= 0.95 - 3 * SD, coverage
    assert (coverage["coverage_default"] >= 0.95 - 4 * SD).all(), coverage


def test_plug_in_undercovers_and_is_narrower(coverage):
    assert coverage["coverage_plugin"].mean() < 0.95 - 3 * SD, coverage
    assert (coverage["width_ratio"] > 1).all(), coverage
