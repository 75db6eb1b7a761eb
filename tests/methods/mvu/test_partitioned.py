"""MVU on dask partitions (a LocalCluster of 2 worker processes): the row map of the exact hard
confidence equals the in-memory one (1e-12)."""

import numpy as np
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask.array as da

from bayeval import scale
from bayeval.methods.mvu.api import mvu
from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
from bayeval.methods.mvu.fast import gaussian_vote_probs
from bayeval.methods.mvu.partitioned import mvu_hard_confidence

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
EXACT = 1e-12
SEED = 20261010


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def test_mvu_maps_rows(client, rng):
    assert scale.mvu_hard_confidence is mvu_hard_confidence
    train = rng.multivariate_normal([0, 1, -1], [[1, .5, .2], [.5, 1, .3], [.2, .3, 1]], 400)
    imputer = GaussianImputer.fit(train)
    x = rng.normal(size=(3_000, 3))
    x[rng.random(x.shape) < 0.3] = np.nan
    coef, intercept = np.array([[1.0, -0.5, 2.0]]), np.array([0.1])
    y_hard, c_hard = scale.mvu_hard_confidence(da.from_array(x, chunks=(700, 3)), imputer,
                                               coef, intercept)
    mean, cov = imputer.logits(x, np.isnan(x), coef, intercept)
    probs = gaussian_vote_probs(mean[:, 0], cov[:, 0, 0])
    np.testing.assert_allclose(c_hard.compute(), probs.max(axis=1), rtol=0, atol=EXACT)
    np.testing.assert_array_equal(y_hard.compute(), probs.argmax(axis=1))


def test_mvu_equals_the_in_memory_entry_with_weights(client, rng):
    train = rng.multivariate_normal([0, 1], [[1, .6], [.6, 1]], 500)
    imputer = GaussianImputer.fit(train)
    x = rng.normal(size=(2_000, 2))
    x[rng.random(x.shape) < 0.4] = np.nan
    coef, intercept = np.array([[1.0, -0.5]]), np.array([0.2])
    mem = mvu(LinearClassifier(coef, intercept), x, imputer=imputer, threshold=0.3).closed_form
    y_hard, c_hard = mvu_hard_confidence(da.from_array(x, chunks=(300, 2)), imputer, coef,
                                         intercept, weights=[0.3, 0.7])
    np.testing.assert_allclose(c_hard.compute(), mem["c_hard"].values, rtol=0, atol=EXACT)
    np.testing.assert_array_equal(y_hard.compute(), mem["y_hard"].values)


def test_mvu_errors():
    imputer = GaussianImputer([0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="binary linear"):
        mvu_hard_confidence(np.zeros((3, 2)), imputer, np.eye(2), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"x must have shape \(n, 2\)"):
        mvu_hard_confidence(np.zeros((3, 3)), imputer, [[1.0, 1.0]], [0.0])
