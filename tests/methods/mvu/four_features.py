"""Shared MVU test data: four correlated Gaussian features, a binary and a three-class linear
classifier, and test rows with some features missing."""

import numpy as np

from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier

COV = np.array([[1.0, 0.6, 0.3, 0.0], [0.6, 1.0, 0.4, 0.2], [0.3, 0.4, 1.0, 0.5],
                [0.0, 0.2, 0.5, 1.0]])
IMPUTER = GaussianImputer(np.zeros(4), COV)
BINARY = LinearClassifier([[1.0, -0.8, 0.6, 0.4]], [0.1])
THREE = LinearClassifier([[1.0, -0.5, 0.3, 0.0], [-0.4, 0.9, 0.0, 0.5], [0.0, 0.0, -0.6, 0.2]],
                         [0.0, 0.2, -0.1])


def rows(n, seed, least=1, spread=3, complete_last=False):
    """n rows of the Gaussian; row r misses ``least + r % spread`` random features (the last
    row none with ``complete_last``)."""
    rng = np.random.default_rng(seed)
    x = rng.multivariate_normal(np.zeros(4), COV, size=n)
    for r in range(n - complete_last):
        x[r, rng.choice(4, size=least + r % spread, replace=False)] = np.nan
    return x
