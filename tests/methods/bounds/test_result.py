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


def _evaluation_with_reported(counts, beta, shift_lower=0.0, sd_factor=1.0):
    """A 'both' evaluation whose posterior is M1's conjugate draws (standing in for NUTS) and
    whose results table is the fast path's, its lower bound moved by ``shift_lower`` and its
    sds times ``sd_factor``."""
    import xarray as xr

    from bayeval.methods.bounds.api import sparse_priors
    from bayeval.methods.bounds.fast import closed_form, exact_bounds, kink_corrections
    from bayeval.methods.bounds.models import m1_posterior_bounds

    metrics = ["accuracy"]
    prior = sparse_priors(counts)
    shift = kink_corrections(counts, beta, metrics, posterior_prior=prior["prior_predictions"])
    d = m1_posterior_bounds(counts, beta, metrics, draws=4000, random_seed=1, bound_shift=shift,
                            **prior).reshape(2, 2000, 1, 2)
    dims = ("chain", "draw", "metric")
    post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
                       "value": (dims, d.mean(axis=-1))}, coords={"metric": metrics})
    ref = check_reference(m1_posterior_bounds(counts, beta, metrics, random_seed=2,
                                              bound_shift=shift, **prior), metrics, 0.95)
    fast = exact_bounds(counts, beta, metrics)
    fast["accuracy"]["lower_bound"] += shift_lower * fast["accuracy"]["lower_bound_sd"]
    for side in ("lower", "upper"):
        fast["accuracy"][f"{side}_bound_sd"] *= sd_factor
    return BoundsEvaluation.create(
        method="bounds", variant="both", estimand="posterior/value",
        closed_form=closed_form(fast, 0.95),
        draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))


def test_check_compares_the_posterior_with_the_reported_bounds():
    # Patterns of 12-40 items, several at a kink (alpha = beta): the plug-in ends are biased and
    # the fast path corrects them; M1's draws, shifted as bounds() shifts them, sit on the
    # reported bounds. Moving the reported lower bound by one standard error (twice the
    # tolerance) must fail the check, on that row only.
    counts = np.array([[6, 6], [20, 20], [3, 9], [12, 28], [30, 10], [8, 4]])
    beta = np.array([[0.5, 0.5], [0.5, 0.5], [0.3, 0.7], [0.3, 0.7], [0.8, 0.2], [0.6, 0.4]])
    ok = _evaluation_with_reported(counts, beta).check()
    assert ok.attrs["passed"], ok
    assert {"reported_bound", "reported_sd"} <= set(ok.index.get_level_values("test"))
    bad = _evaluation_with_reported(counts, beta, shift_lower=1.0).check()
    assert not bad.attrs["passed"]
    failed = bad[~bad["passed"]].index.tolist()
    assert failed == [("lower", "accuracy", "reported_bound")], failed


def test_check_fails_reported_sds_twice_too_wide():
    # M1's posterior sd is the reported standard error (its normal error carries what the
    # plug-in posterior lacks): reported sds twice as wide fail reported_sd, and only that.
    counts = np.array([[60, 60], [200, 200], [30, 90], [120, 280], [300, 100]])
    beta = np.array([[0.5, 0.5], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8], [0.8, 0.2]])
    wide = _evaluation_with_reported(counts, beta, sd_factor=2.0).check()
    failed = wide[~wide["passed"]].index.get_level_values("test").unique().tolist()
    assert failed == ["reported_sd"], wide
