"""The judge on dask partitions (a LocalCluster of 2 worker processes): its counts and every
estimator equal the in-memory ones (1e-12)."""

import warnings

import numpy as np
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask.array as da
import dask.dataframe as dd

from bayeval import scale
from bayeval.methods.judge.api import judge
from bayeval.methods.judge.fast import Counts
from bayeval.methods.judge.partitioned import judge_counts, judge_estimates

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
EXACT = 1e-12
SEED = 20261010


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def assert_same(a, b, tol=EXACT):
    """Every variable of Dataset ``b`` equals ``a``'s: floats to ``tol`` (NaN where NaN)."""
    assert list(a["estimator"].values) == list(b["estimator"].values)
    for name in b.data_vars:
        x, y = a[name].values, b[name].values
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, rtol=0, atol=tol, err_msg=name)


def test_judge_counts_and_estimators_equal_in_memory(client, rng):
    y = (rng.random(500) < 0.3).astype(int)
    yhat = np.where(y == 1, rng.random(500) < 0.8, rng.random(500) < 0.15).astype(int)
    yhat_u = (rng.random(200_000) < 0.33).astype(int)
    counts = scale.judge_counts(da.from_array(y, chunks=128), da.from_array(yhat, chunks=128),
                                dd.from_array(yhat_u, chunksize=30_000))
    assert counts == Counts.from_labels(y, yhat, yhat_u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mem = judge(y, yhat, yhat_u, method="all", ci_prob=0.9)
    assert_same(mem.closed_form, scale.judge_estimates(counts, ci_prob=0.9))


def test_wald_intervals_and_a_chance_judge_as_in_memory():
    """ci_kind="wald" (formerly ci=), and Rogan–Gladen left out for kappa <= 0, as in memory."""
    chance = Counts(20, 30, 35, 25, t1=600, t0=400)
    y = np.repeat([1, 1, 0, 0], chance[:4])
    yhat = np.repeat([1, 0, 1, 0], chance[:4])
    yhat_u = np.repeat([1, 0], chance[4:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mem = judge(y, yhat, yhat_u, method="all", ci_kind="wald")
    wald = judge_estimates(chance, ci_kind="wald")
    assert "rogan_gladen" not in wald["estimator"].values
    assert_same(mem.closed_form, wald)
    with pytest.warns(FutureWarning, match=r"judge_estimates\(ci=\) is now"):
        old = judge_estimates(chance, ci="wald")
    assert old.equals(wald)
    assert scale.judge_counts is judge_counts and scale.judge_estimates is judge_estimates
    with pytest.raises(ValueError, match="ci_kind must be one of"):
        judge_estimates(chance, ci_kind="eti")


@pytest.mark.parametrize(("y", "yhat", "yhat_u", "message"), [
    ([0], [0], [0, 0], "single value"),
    ([0, 0, 1, 1], [1, 1, 1, 1], [1, 0, 1], "every labelled item"),
    ([0, 0, 0, 1], [0, 1, 0, 1], [0, 1], "1 positive and 3 negative"),
])
def test_counts_judge_refuses_are_refused_with_the_same_error(y, yhat, yhat_u, message):
    """One class alone labelled divided 0 by 0 in Rogan–Gladen's rates; now judge's error."""
    with pytest.raises(ValueError, match=message) as mem:
        judge(y, yhat, yhat_u)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=message) as part:
            judge_estimates(Counts.from_labels(y, yhat, yhat_u))
    assert str(part.value) == str(mem.value)
