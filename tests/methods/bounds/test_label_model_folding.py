"""The variance a fitted label model's error adds to a bound through its kinks.

The delta method gives the label model's error no variance at a binary pattern's kink (the two
classes' slopes cancel), while the bound moves by :math:`-|\\delta|` there: the folded part must
be :math:`(1 - 2/\\pi)\\sigma^2`; it must vanish away from the kinks and with no error; and the
draws of the pooled label model must have the delta method's sds.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayeval.methods.bounds.fast import exact_bounds
from bayeval.methods.bounds.label_models import dawid_skene, label_model_delta, majority_vote
from benchmarks.coverage_bounds import population

DRAWS = 20_000  # the variance of S normal draws has relative sd sqrt(2/S) = 1 %


def _common(sd, n_draws=DRAWS, seed=0):
    """Draws moving class 0 of every pooled pattern by one N(0, sd^2) shift (class 1 the other
    way), as a label model whose error is shared by all patterns."""
    shift = np.random.default_rng(seed).normal(0.0, sd, n_draws)

    def draws(group):
        out = np.zeros((n_draws, int(group.max()) + 1, 2))
        out[:, :, 0], out[:, :, 1] = shift[:, None], -shift[:, None]
        return out
    return draws


def _upper_variances(counts, beta, draws):
    """The squared sd of the accuracy's upper bound with and without the folded part."""
    args = {"label_model_pullback": None}
    ours = exact_bounds(counts, beta, ["accuracy"], label_model_draws=draws, **args)
    plain = exact_bounds(counts, beta, ["accuracy"], **args)
    return ours["accuracy"]["upper_bound_sd"] ** 2, plain["accuracy"]["upper_bound_sd"] ** 2


def test_a_pattern_at_its_kink_folds_the_label_model_error():
    # one large pattern predicted as the label model says: alpha = beta, the bound is at its
    # kink and moves by -|delta| when beta moves by delta
    counts, beta, sd = np.array([[500_000, 500_000]]), np.array([[0.5, 0.5]]), 0.05
    ours, plain = _upper_variances(counts, beta, _common(sd))
    folded = (1 - 2 / np.pi) * sd**2
    assert ours - plain == pytest.approx(folded, rel=4 * np.sqrt(2 / DRAWS))


def test_far_from_the_kinks_or_without_error_nothing_is_added():
    counts = np.array([[100_000, 900_000], [700_000, 300_000]])
    beta = np.array([[0.6, 0.4], [0.2, 0.8]])  # every pattern 0.3 or more from its kinks
    ours, plain = _upper_variances(counts, beta, _common(0.02))
    assert ours - plain < 1e-4 * plain
    at_kink = np.array([[500_000, 500_000]]), np.array([[0.5, 0.5]])
    ours, plain = _upper_variances(*at_kink, _common(0.0))
    assert ours == plain


@pytest.mark.parametrize("name", ["dawid_skene", "majority_vote"])
def test_draws_of_the_pooled_label_model_have_its_delta_method_sd(name):
    patterns, joint_zh, _ = population(2, 4)
    rng = np.random.default_rng(3)
    counts = rng.multinomial(1000, joint_zh.sum(axis=1) / joint_zh.sum())
    seen = counts > 0
    patterns, counts = patterns[seen], counts[seen]
    fit = dawid_skene if name == "dawid_skene" else majority_vote
    delta = label_model_delta(name, patterns, counts, fit(patterns, 2, counts)
                              if name == "majority_vote" else fit(patterns, counts, 2))
    group = np.arange(len(counts)) // 3  # patterns pooled in threes
    sd = delta.pooled_sd(group)
    draws = delta.pooled_draws(group, n_draws=DRAWS)
    assert draws.shape == (DRAWS, group.max() + 1, 2)
    moving = sd > 0
    assert moving.any()
    ratio = draws.var(axis=0)[moving] / sd[moving] ** 2
    assert np.abs(ratio - 1).max() < 5 * np.sqrt(2 / DRAWS)
    assert np.all(draws.var(axis=0)[~moving] < 1e-20)
