"""Fuzzing ``be.bounds`` with invalid input: every bad argument gives a ValueError or TypeError
naming it, before any label model is fitted or sampler run.

The budget is :mod:`tests.fuzz.budget`'s (a few examples here, many under ``make fuzz``); the
valid-input fuzzing of ``be.bounds`` is in ``test_fuzz_entry.py``.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import bayeval as be
from tests.fuzz.budget import budget
from tests.fuzz.test_fuzz_entry import BAD_ARRAYS, BAD_NUMBERS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

WEAK = np.array([[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 5)
Y_PRED = np.array([1, 1, 0, 0, 0, 1] * 5)
#: arguments that take a value (number, name, array) and what else the error may name
ARGUMENTS = {"y_pred": ("weak_labels",), "weak_labels": ("y_pred",), "label_model": (),
             "metrics": (), "method": (), "model": (), "labels": (), "n_classes": (),
             "epsilon": (), "ci_prob": (), "ci_kind": (), "random_seed": ()}
#: flags, and the sampler settings (checked before NUTS runs)
FLAGS = ("small_pattern_correction", "label_model_uncertainty")
#: values of each argument that are valid
VALID = {"metrics": [None], "n_classes": [None, 2], "epsilon": [None],
         "random_seed": [None, 2, True]}


def refused(names, **kwargs):
    """``be.bounds(**kwargs)`` raises a ValueError or TypeError naming one of ``names``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as err:
            be.bounds(**kwargs)
    assert any(name in str(err.value) for name in names), (names, err.value)


@budget(40, long=300)
@given(argument=st.sampled_from(sorted(ARGUMENTS)),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS + [[0.5, np.nan]]))
def test_bounds_invalid(argument, bad):
    assume(not any(bad is v or (bad == v and type(bad) is type(v))
                   for v in VALID.get(argument, [])))
    assume(not (argument == "epsilon" and isinstance(bad, (int, float)) and not isinstance(
        bad, bool) and 0 < bad < np.inf))  # a temperature
    kwargs = dict(y_pred=Y_PRED, weak_labels=WEAK, label_model="majority_vote")
    if argument == "epsilon":
        kwargs["method"] = "entropic"
    if argument in ("random_seed", "labels"):  # used by the PyMC models (M3 for labels)
        kwargs.update(method="pymc", model="m3" if argument == "labels" else "m1")
    kwargs[argument] = bad
    refused((argument, *ARGUMENTS[argument]), **kwargs)


@budget(20, long=200)
@given(argument=st.sampled_from(FLAGS), bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS))
def test_bounds_invalid_flags(argument, bad):
    assume(bad is not True)
    refused((argument,), y_pred=Y_PRED, weak_labels=WEAK, **{argument: bad})


@budget(20, long=200)
@given(setting=st.sampled_from(["draws", "tune", "chains", "cores"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS),
       method=st.sampled_from(["pymc", "both"]), model=st.sampled_from(["m1", "m2"]))
def test_bounds_invalid_sample_kwargs(setting, bad, method, model):
    valid = {"draws": 2, "tune": 0, "chains": 1, "cores": 1}[setting]
    assume(not (isinstance(bad, int) and not isinstance(bad, bool) and bad >= valid))
    refused(("sample_kwargs",), y_pred=Y_PRED, weak_labels=WEAK, method=method, model=model,
            sample_kwargs={setting: bad})


def test_bounds_refuses_a_negative_seed_and_no_chains():
    # the regressions: random_seed=-1 was accepted, chains=0 ended in a ZeroDivisionError
    with pytest.raises(ValueError, match="random_seed must be a non-negative integer"):
        be.bounds(Y_PRED, WEAK, random_seed=-1)
    with pytest.raises(ValueError, match=r"sample_kwargs\['chains'\] must be a positive"):
        be.bounds(Y_PRED, WEAK, method="pymc", sample_kwargs={"chains": 0})
    with pytest.raises(ValueError, match="sample_kwargs must be a dict"):
        be.bounds(Y_PRED, WEAK, method="both", sample_kwargs=[("chains", 2)])
