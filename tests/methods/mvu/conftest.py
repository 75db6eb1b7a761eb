"""Shared MVU test data: a small test set of the paper's synthetic setting."""

import numpy as np
import pytest

from tests.methods.mvu.synthetic import cov


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(11)
    train = rng.multivariate_normal([0, 0], cov(), size=400)
    x = rng.multivariate_normal([0, 0], cov(), size=5)
    x[:2, 0], x[2:4, 1] = np.nan, np.nan  # the last row is complete
    return train, x
