"""Weak-label patterns and label models (majority vote, Dawid–Skene EM)."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest

from bayeval.datasets import weak_labels as simulate_weak_labels
from bayeval.methods.bounds import label_models
from bayeval.methods.bounds.label_models import dawid_skene, majority_vote, weak_label_patterns


def test_doctests_run():
    assert doctest.testmod(label_models).failed == 0


@pytest.mark.parametrize(("n_lfs", "n_classes"), [(3, 2), (50, 3), (70, 9)])
def test_patterns_reproduce_every_row(n_lfs, n_classes):
    # 50 and 70 columns overflow one 64-bit code: the chunked encoding must stay exact.
    rng = np.random.default_rng(n_lfs)
    base = rng.integers(-1, n_classes, size=(40, n_lfs))
    weak = base[rng.integers(0, 40, size=500)]
    cell, patterns, counts = weak_label_patterns(weak, n_classes)
    np.testing.assert_array_equal(patterns[cell], weak)
    assert len(np.unique(patterns, axis=0)) == len(patterns)
    np.testing.assert_array_equal(np.bincount(cell), counts)


def test_majority_vote_is_the_share_of_votes():
    patterns = np.array([[0, 1, 1, -1], [2, -1, -1, -1], [0, 1, 2, 2]])
    expected = [[1 / 3, 2 / 3, 0], [0, 0, 1], [0.25, 0.25, 0.5]]
    np.testing.assert_allclose(majority_vote(patterns, 3), expected, rtol=0, atol=1e-15)


def test_dawid_skene_counts_equal_repeated_rows():
    # EM is linear in the counts: a pattern with count c equals c copies with count 1.
    sim = simulate_weak_labels(600, random_seed=5)
    weak = sim.weak_labels[(sim.weak_labels != -1).any(axis=1)]
    cell, patterns, counts = weak_label_patterns(weak, 2)
    grouped = dawid_skene(patterns, counts, 2)[cell]
    repeated = dawid_skene(weak, np.ones(len(weak), dtype=int), 2)
    np.testing.assert_allclose(grouped, repeated, rtol=0, atol=1e-10)


def _oracle(patterns, prior, accuracy, propensity):
    """P(Y | pattern) of the one-coin Dawid–Skene model by Bayes' rule."""
    k = len(prior)
    log_post = np.tile(np.log(prior), (len(patterns), 1))
    for j, (acc, prop) in enumerate(zip(accuracy, propensity, strict=True)):
        vote = patterns[:, j][:, None]
        hit = np.where(vote == np.arange(k), prop * acc, prop * (1 - acc) / (k - 1))
        log_post += np.log(np.where(vote == -1, 1 - prop, hit))
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    return post / post.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("class_balance", [None, (0.3, 0.7)])
def test_dawid_skene_recovers_the_oracle(class_balance):
    prior, acc, prop = (0.3, 0.7), (0.85, 0.75, 0.65, 0.7), (0.8, 0.6, 0.5, 0.7)
    sim = simulate_weak_labels(60000, prior=prior, accuracy=acc, propensity=prop,
                               random_seed=11)
    weak = sim.weak_labels[(sim.weak_labels != -1).any(axis=1)]
    _, patterns, counts = weak_label_patterns(weak, 2)
    fitted = dawid_skene(patterns, counts, 2, class_balance=class_balance)
    truth = _oracle(patterns, prior, acc, prop)
    # Weighted total-variation error. Each vote probability is estimated from >= ~9000 votes
    # (SE <= 0.005); a posterior moves by at most ~1.5x the sum of its LFs' errors, so 4 sigma
    # over four LFs is about 0.03.
    tv = (counts * np.abs(fitted - truth).sum(axis=1) / 2).sum() / counts.sum()
    assert tv < 0.03


def test_dawid_skene_multiclass_fixed_point_on_exact_counts():
    # Expected pattern counts of a known model (no sampling noise): EM ends near the truth.
    prior, acc, prop = (0.5, 0.3, 0.2), (0.8, 0.7, 0.75), (0.9, 0.8, 0.85)
    patterns = np.array(list(itertools.product(range(-1, 3), repeat=3)))
    patterns = patterns[(patterns != -1).any(axis=1)]
    k = 3
    joint = np.tile(np.asarray(prior), (len(patterns), 1))
    for j in range(3):
        vote = patterns[:, j][:, None]
        hit = np.where(vote == np.arange(k), prop[j] * acc[j], prop[j] * (1 - acc[j]) / (k - 1))
        joint *= np.where(vote == -1, 1 - prop[j], hit)
    counts = np.round(1e7 * joint.sum(axis=1)).astype(int)
    fitted = dawid_skene(patterns, counts, 3, smoothing=1e-6, max_iter=2000, tol=1e-10)
    truth = joint / joint.sum(axis=1, keepdims=True)
    # Three LFs identify the class-conditional model; rounding counts to 1e7 leaves ~1e-4.
    assert np.abs(fitted - truth).max() < 2e-3
