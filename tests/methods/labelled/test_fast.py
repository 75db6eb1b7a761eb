"""The conjugate closed form of labelled evaluation: the counts of each rate and their Beta
posterior."""

import doctest

import numpy as np
import pytest
from scipy import stats

from bayeval.methods.labelled import fast
from bayeval.methods.labelled.fast import RATE_METRICS, counts, posterior


def test_doctests_run():
    assert doctest.testmod(fast).failed == 0


def test_counts_of_each_rate():
    k, m = counts(5, 1, 2, 4, RATE_METRICS)
    np.testing.assert_array_equal(k, [9, 5, 5, 4, 4])
    np.testing.assert_array_equal(m, [12, 6, 7, 5, 6])


def test_posterior_is_the_conjugate_beta():
    ds = posterior([9, 5], [12, 7], metrics=["accuracy", "recall"], prior=(2.0, 3.0), ci_prob=0.9)
    law = stats.beta(2 + 5, 3 + 2)  # recall: 5 of 7
    row = ds.sel(metric="recall")
    assert float(row["mean"]) == pytest.approx(law.mean(), abs=1e-14)
    assert float(row["sd"]) == pytest.approx(law.std(), abs=1e-14)
    assert (float(row["alpha"]), float(row["beta"])) == (7.0, 5.0)
    assert law.cdf(float(row["lower"])) == pytest.approx(0.05, abs=1e-12)
    assert law.cdf(float(row["upper"])) == pytest.approx(0.95, abs=1e-12)
