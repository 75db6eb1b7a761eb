"""Every validation error names the argument, says what was wrong and what is accepted."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeval.validation import (
    as_array,
    as_beta,
    as_binary,
    as_choice,
    as_ci_prob,
    as_labels,
    as_scores,
    as_seed,
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
