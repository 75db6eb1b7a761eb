"""BoundsEvaluation: the summary of a fast path is its closed form, and check() needs model M1's
conjugate reference."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from bayeval.methods.bounds import bounds, result
from bayeval.methods.bounds.result import BoundsEvaluation, check_reference

WEAK = [[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 50
Y_PRED = [1, 1, 0, 0, 0, 1] * 50


def test_doctests_run():
    assert doctest.testmod(result).failed == 0


def test_fast_path_summary_is_the_closed_form_and_check_needs_model_m1():
    ev = bounds(Y_PRED, WEAK, label_model="majority_vote", method="entropic")
    assert isinstance(ev, BoundsEvaluation)
    s = ev.summary()
    for column in ("mean", "sd", "lower", "upper", "lower_bound", "upper_bound"):
        np.testing.assert_array_equal(s[column].to_numpy(), ev.closed_form[column].values)
    with pytest.raises(ValueError, match="conjugate posterior"):
        ev.check()


def test_check_reference_is_the_draws_summary():
    rng = np.random.default_rng(0)
    draws = np.sort(rng.random((4000, 2, 2)), axis=-1)
    ref = check_reference(draws, ["accuracy", "f1"], 0.9)
    np.testing.assert_allclose(ref["mean"].values, draws.mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(ref["lower"].values, np.quantile(draws, 0.05, axis=0), rtol=0,
                               atol=1e-15)
    mass = ref["interval_mass"].values
    assert (np.abs(mass - 0.9) <= 1 / 4000 * 2 + 1e-12).all()  # the quantiles' own rows
