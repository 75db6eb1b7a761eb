"""The Fréchet bounds on dask partitions (a LocalCluster of 2 worker processes): the cell counts
and the exact bounds equal the in-memory ones (1e-12), empty partitions add nothing, and bad
input is rejected as in memory."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask
import dask.array as da
import dask.dataframe as dd

from bayeval import scale
from bayeval.methods.bounds import bounds, partitioned
from bayeval.methods.bounds.partitioned import bounds_cells, bounds_exact

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
EXACT = 1e-12
SEED = 20261010


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def assert_same(a, b, tol=EXACT):
    """Every variable of Dataset ``b`` equals ``a``'s: floats to ``tol`` (NaN where NaN)."""
    for name in b.data_vars:
        x, y = a[name].values, b[name].values
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, rtol=0, atol=tol, err_msg=name)


def test_scale_is_the_public_face():
    assert (scale.bounds_cells, scale.bounds_exact, scale.BoundsCells) == (
        bounds_cells, bounds_exact, partitioned.BoundsCells)


@pytest.mark.parametrize("label_model", ["majority_vote", "dawid_skene"])
def test_bounds_cell_counts_equal_in_memory(client, rng, label_model):
    n = 20_000
    weak = rng.integers(-1, 2, (n, 4))
    weak[(weak == -1).all(axis=1), 0] = 1
    y_pred = rng.integers(0, 2, n)
    mem = bounds(y_pred, weak, label_model=label_model).closed_form
    lazy = dd.from_pandas(pd.DataFrame(np.column_stack([weak, y_pred]), columns=[*"abcd", "h"]),
                          npartitions=6)
    ours = scale.bounds_exact(lazy["h"], lazy[list("abcd")], label_model=label_model)
    assert_same(mem, ours.drop_vars("midpoint_sd"))


def test_three_classes_equal_in_memory(client, rng):
    n = 9_000
    weak = rng.integers(-1, 3, (n, 3))
    weak[(weak == -1).all(axis=1), 0] = 2
    y_pred = rng.integers(0, 3, n)
    mem = bounds(y_pred, weak).closed_form
    ours = bounds_exact(da.from_array(y_pred, chunks=2_000), da.from_array(weak, chunks=(2_000, 3)))
    assert list(ours["metric"].values) == ["accuracy", "macro_f1"]
    assert_same(mem, ours.drop_vars("midpoint_sd"))


def test_empty_partitions_add_nothing(client, rng):
    n = 1_200
    frame = pd.DataFrame({"judge": rng.integers(0, 2, n),
                          "day": np.repeat(["mon", "tue", "wed", "thu"], n // 4)})
    lazy = dd.from_pandas(frame, npartitions=6)
    kept, lazy = frame[frame["day"].isin(["mon", "thu"])], lazy[lazy["day"].isin(["mon", "thu"])]
    assert (lazy.map_partitions(len).compute() == 0).sum() == 2  # tue and wed only
    cells = scale.bounds_cells(lazy["judge"], lazy[["judge"]])
    np.testing.assert_array_equal(cells.cell_counts, [[(kept["judge"] == 0).sum(), 0],
                                                      [0, (kept["judge"] == 1).sum()]])


@pytest.mark.parametrize(("weak", "y_pred", "kwargs", "match"), [
    ([[0, -2], [1, -1], [1, 1], [0, 0]], [0, 1, 1, 0], {}, "weak_labels must hold integers"),
    ([[0, 1], [1, -1], [1, 1], [0, 0]], [0, 1, 2, 0], {"n_classes": 2}, "hold 3 class codes"),
    ([[0, 1], [1, -1], [1, 1], [0, 0]], [0, 1, 2, 0], {"metrics": ["f1[3]"]},
     r"metrics must be one of .*f1\[2\]"),
    ([[0, 1], [1, -1], [1, 1], [0, 0]], [0, 1, 1, 0], {"label_model": "snorkel"},
     "label_model must be one of"),
])
def test_bad_input_is_rejected_as_in_memory(weak, y_pred, kwargs, match):
    for run in (bounds, lambda y, w, **kw: bounds_exact(da.from_array(np.asarray(y), chunks=2),
                                                        da.from_array(np.asarray(w), chunks=2),
                                                        **kw)):
        with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match=match):
            run(y_pred, weak, **kwargs)
