"""The paper's synthetic MVU setting: the classifier pi(x) = sigmoid(x1 + x2 - 1) and the
Gaussian of the two features."""

import numpy as np

from bayeval.methods.mvu.estimators import LinearClassifier

CLF = LinearClassifier([[1.0, 1.0]], [-1.0])  # the paper's pi(x) = sigmoid(x1 + x2 - 1)


def cov(corr=0.7, factor=1.0):
    c = corr * np.sqrt(0.3)
    return factor * np.array([[0.3, c], [c, 1.0]])
