"""The PyMC model of labelled evaluation: its variables, and its one variant."""

import doctest

import pytest

from bayeval.methods import labelled
from bayeval.methods.labelled import models
from bayeval.methods.labelled.models import model


def test_doctests_run():
    assert doctest.testmod(models).failed == 0


def test_model_has_the_documented_variables():
    m = model([9, 5], [12, 6], metrics=("accuracy", "precision"))
    assert [v.name for v in m.free_RVs] == ["theta"]
    assert [v.name for v in m.observed_RVs] == ["successes"]
    assert m.coords["metric"] == ("accuracy", "precision")


def test_one_model_no_variant():
    assert labelled.model is model
    m = model([9, 5], [12, 6], metrics=("accuracy", "precision"), variant=None)
    assert [v.name for v in m.free_RVs] == ["theta"]
    with pytest.raises(ValueError, match="variant must be None"):
        model([9, 5], [12, 6], variant="a")
