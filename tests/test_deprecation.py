"""Renamed arguments and names: the old name works for one release with a FutureWarning that
points at the caller; giving both names is a TypeError; unknown names stay errors."""

import functools
import types
import warnings

import pytest

from bayeval.deprecation import renamed_arguments, renamed_names


@renamed_arguments(n_draws="draws", calibrator="calibration")
def fit(x, *, draws=10, calibration="none"):
    """Fit."""
    return x, draws, calibration


def test_old_keywords_work_with_a_future_warning_naming_both():
    with pytest.warns(FutureWarning, match=r"fit\(n_draws=\) is now fit\(draws=\); the old name "
                                           "will be removed in the next release"):
        assert fit(1, n_draws=3) == (1, 3, "none")
    with pytest.warns(FutureWarning) as caught:
        assert fit(2, n_draws=4, calibrator="beta") == (2, 4, "beta")
    assert len(caught) == 2


def test_the_warning_points_at_the_caller():
    with pytest.warns(FutureWarning) as caught:
        fit(1, n_draws=3)
    assert caught[0].filename == __file__


def test_new_keywords_and_positional_arguments_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit(1, draws=5, calibration="x") == (1, 5, "x")
        assert fit(1) == (1, 10, "none")


def test_both_names_is_a_type_error():
    with pytest.raises(TypeError, match=r"fit\(\) got both n_draws= and its new name draws=; "
                                        "give draws= only"):
        fit(1, n_draws=3, draws=4)


def test_the_wrapper_keeps_the_function_s_name_and_doc():
    assert fit.__name__ == "fit" and fit.__doc__ == "Fit."
    assert fit.__wrapped__(1) == (1, 10, "none")


def test_renamed_names_serve_the_new_object_with_a_warning():
    def model(data, *, variant):
        return data, variant

    module = types.ModuleType("pkg")
    module.__getattr__ = renamed_names("pkg", {
        "model_v0": ("model(..., variant='v0')", lambda: functools.partial(model, variant="v0"))})
    with pytest.warns(FutureWarning, match=r"pkg\.model_v0 is now pkg\.model\(\.\.\., "
                                           r"variant='v0'\); the old name will be removed"):
        old = module.model_v0
    assert old("d") == ("d", "v0")
    with pytest.warns(FutureWarning) as caught:
        module.model_v0  # noqa: B018
    assert caught[0].filename == __file__


def test_unknown_names_are_attribute_errors_without_a_warning():
    getattr_ = renamed_names("pkg", {"old": ("new", lambda: 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'other'"):
            getattr_("other")
