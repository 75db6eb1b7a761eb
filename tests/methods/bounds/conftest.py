"""The synthetic weak-label generator shared by the bounds tests.

Y ~ Cat(pi), one-coin Dawid–Skene labelling functions (so the oracle P(Y | Z) is known by Bayes'
rule), features X = s e_Y + gamma share(Z) + noise (a dependence of X on Y beyond Z, and on Z
itself), and h = argmax X. The fixtures ``simulate`` and ``population`` return the generator and
the exact population margins.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from sklearn.utils import Bunch

ACCURACY, PROPENSITY, SEPARATION, Z_EFFECT = (0.8, 0.7, 0.65), (0.8, 0.6, 0.5), 1.5, 1.0


def _vote_likelihood(patterns, prior):
    """P(Z = z, Y = y) of the one-coin model, shape (n_patterns, K)."""
    k = len(prior)
    joint = np.tile(np.asarray(prior, float), (len(patterns), 1))
    for j, (acc, prop) in enumerate(zip(ACCURACY, PROPENSITY, strict=True)):
        vote = patterns[:, j][:, None]
        hit = np.where(vote == np.arange(k), prop * acc, prop * (1 - acc) / (k - 1))
        joint *= np.where(vote == -1, 1 - prop, hit)
    return joint


def _share(patterns, k):
    votes = np.stack([(patterns == c).sum(axis=1) for c in range(k)], axis=1)
    return votes / votes.sum(axis=1, keepdims=True)


def simulate_items(n, seed, n_classes=2):
    """Items with at least one vote (the population is conditional on coverage)."""
    rng = np.random.default_rng(seed)
    prior = np.array([0.4, 0.6]) if n_classes == 2 else np.full(n_classes, 1 / n_classes)
    m = 2 * n
    y = rng.choice(n_classes, size=m, p=prior)
    votes = rng.random((m, 3)) < PROPENSITY
    right = rng.random((m, 3)) < ACCURACY
    other = (y[:, None] + rng.integers(1, n_classes, size=(m, 3))) % n_classes
    weak = np.where(votes, np.where(right, y[:, None], other), -1)
    keep = np.flatnonzero((weak != -1).any(axis=1))[:n]
    y, weak = y[keep], weak[keep]
    x = (SEPARATION * np.eye(n_classes)[y] + Z_EFFECT * _share(weak, n_classes)
         + rng.normal(size=(n, n_classes)))
    joint = _vote_likelihood(weak, prior)
    return Bunch(y=y, h=np.argmax(x, axis=1), weak=weak, prior=prior,
                 oracle=joint / joint.sum(axis=1, keepdims=True))


def population_margins(prior):
    """Exact p_z, alpha_z, beta_z of the binary generator over every covered pattern."""
    patterns = np.array(list(itertools.product((-1, 0, 1), repeat=3)))
    patterns = patterns[(patterns != -1).any(axis=1)]
    joint = _vote_likelihood(patterns, prior)
    p = joint.sum(axis=1) / joint.sum()
    beta = joint / joint.sum(axis=1, keepdims=True)
    share = _share(patterns, 2)
    drift = Z_EFFECT * (share[:, 1] - share[:, 0])
    h1 = stats.norm.cdf((SEPARATION * np.array([-1.0, 1.0])[None] + drift[:, None]) / np.sqrt(2))
    a1 = (beta * h1).sum(axis=1)
    return patterns, p, np.stack([1 - a1, a1], axis=1), beta


@pytest.fixture(scope="session")
def simulate():
    """``simulate(n, seed, n_classes=2)``: items with at least one vote."""
    return simulate_items


@pytest.fixture(scope="session")
def population():
    """``population(prior)``: exact (patterns, p_z, alpha_z, beta_z) of the binary generator."""
    return population_margins

