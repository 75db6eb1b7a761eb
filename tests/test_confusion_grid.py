"""The grid law of a two-count metric: its quantile search and masses against the listed law."""

from __future__ import annotations

import numpy as np
import pytest

from bayeval import confusion_grid
from bayeval.confusion import MetricDistribution
from bayeval.confusion_grid import GridLaw, merge_values
from bayeval.poibin import pmf_above

LEVELS = (0.001, 0.025, 0.3)


def test_merge_repairs_quantisation_collisions():
    """Values 1 ulp apart among a wide span share a quantised key; they still sort and merge."""
    rng = np.random.default_rng(0)
    near = 0.5 + np.arange(300) * np.spacing(0.5)
    values = rng.permutation(np.r_[np.repeat(near, 3), -1.0, 1.0, rng.uniform(-1, 1, 500)])
    probs = rng.uniform(size=values.size)
    got_values, got_probs = merge_values(values, probs)
    want_values, inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(got_values, want_values)
    np.testing.assert_allclose(got_probs, np.bincount(inverse, weights=probs), rtol=1e-14)


def _pmfs(rng, n: int, components: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts and a (components, counts) array of Poisson-binomial PMFs on a common support."""
    rows = [pmf_above(rng.beta(2, 3, n), 1e-16) for _ in range(components)]
    start = min(s for s, _ in rows)
    width = max(s + p.size for s, p in rows) - start
    out = np.zeros((components, width))
    for c, (s, p) in enumerate(rows):
        out[c, s - start:s - start + p.size] = p / p.sum()
    return start + np.arange(width, dtype=float), out


def _grid(metric: str, zero_division: float, components: int, seed: int = 1) -> GridLaw:
    """A law of about 2 10^5 cells (several times what a quantile enumerates), mixed over
    ``components`` pairs of count laws with unequal weights."""
    rng = np.random.default_rng(seed)
    tp, a = _pmfs(rng, 3000, components)
    fn, b = _pmfs(rng, 2000, components)
    weights = rng.dirichlet(np.ones(components))
    law = GridLaw(metric, 3000, 2000, tp, a, fn, b, weights, 1.0, zero_division)
    assert law.size > 4 * confusion_grid._ENUMERATE
    return law


def _listed(law: GridLaw) -> MetricDistribution:
    """The same law with its whole support listed (sorted cells, no search)."""
    return MetricDistribution.from_cells(law.metric, *law.cells(), law.zero_division)


@pytest.mark.parametrize("metric", ["recall", "f1", "specificity", "mcc"])
@pytest.mark.parametrize("zero_division", [0.0, np.nan])
@pytest.mark.parametrize("components", [1, 3])
def test_quantiles_are_those_of_the_listed_law(metric, zero_division, components):
    """Both tails at three levels: the same support value as the sorted cells give."""
    law = _grid(metric, zero_division, components)
    listed = _listed(law)
    for level in LEVELS:
        lower = law.quantile(level, False)
        upper = law.quantile(level, True)
        assert (lower, upper) == listed.interval_ends(1 - 2 * level, "eti")


def test_the_answer_does_not_depend_on_the_path(monkeypatch):
    """Secant steps bracket the answer in fewer passes; bisection alone finds the same one."""
    aimed = []
    real_aim = GridLaw._aim

    def recording(*args):
        point, was_aimed = real_aim(*args)
        aimed.append(was_aimed)
        return point, was_aimed

    monkeypatch.setattr(GridLaw, "_aim", staticmethod(recording))
    searched = [_grid("f1", 0.0, 2).quantile(level, upper) for level in LEVELS
                for upper in (False, True)]
    assert any(aimed)  # the secant steps were taken

    def bisect(tried, target, sd, width, bracket, trust):
        return 0.5 * (bracket[0] + bracket[1]), False

    monkeypatch.setattr(GridLaw, "_aim", staticmethod(bisect))
    bisected = [_grid("f1", 0.0, 2).quantile(level, upper) for level in LEVELS
                for upper in (False, True)]
    assert searched == bisected


@pytest.mark.parametrize("zero_division", [0.0, 1.0, np.nan])
def test_the_mass_of_an_interval_just_found_equals_a_fresh_search(zero_division):
    """``mass`` after ``quantile`` reads the rows' cuts kept at the ends; a law that never
    searched computes them anew."""
    law = _grid("recall", zero_division, 2)
    lo, hi = law.quantile(0.025, False), law.quantile(0.025, True)
    assert (hi, False) in law._cuts and (lo, True) in law._cuts
    fresh = _grid("recall", zero_division, 2)
    assert not fresh._cuts
    assert law.mass(lo, hi) == pytest.approx(fresh.mass(lo, hi), abs=1e-15)
    assert law.mass(lo, hi) == pytest.approx(_listed(law).mass(lo, hi), abs=1e-12)


@pytest.mark.parametrize("first", ["recall", "f1"])
def test_a_law_for_another_metric_is_that_metrics_law(first):
    """for_metric shares the counts' sums and gives every other metric (beta and zero_division
    too) the moments, interval and mass of a law built for it, bit for bit, whatever the first
    law has already searched."""
    law = _grid(first, 0.0, 2)
    law.quantile(0.025, False), law.mass(0.2, 0.8)  # cached cuts of the first metric
    for metric, beta, zero_division in [("f1", 1.0, np.nan), ("fbeta", 0.5, 1.0),
                                        ("recall", 1.0, 0.0), ("mcc", 1.0, 0.0),
                                        ("specificity", 1.0, np.nan)]:
        other = law.for_metric(metric, beta, zero_division)
        fresh = GridLaw(metric, 3000, 2000, law.tp, law.a, law.fn, law.b, law.weights, beta,
                        zero_division)
        assert other._diagonal_sums is law._diagonal_sums
        assert other.p_undefined == fresh.p_undefined
        assert other.moments == fresh.moments
        assert other._range == fresh._range  # the support's ends, cached by a quantile
        ends = other.quantile(0.025, False), other.quantile(0.025, True)
        assert ends == (fresh.quantile(0.025, False), fresh.quantile(0.025, True))
        assert other.mass(*ends) == fresh.mass(*ends)


@pytest.mark.parametrize("step", [1, -1])
def test_monotone_values_merge_as_sorted_ones(step):
    """Strictly increasing or decreasing values skip the sort: the same sorted support and
    probabilities as a shuffle of them gives."""
    rng = np.random.default_rng(2)
    values = np.cumsum(rng.uniform(0.01, 1.0, 400))[::step].copy()
    probs = rng.uniform(size=values.size)
    shuffle = rng.permutation(values.size)
    got = merge_values(values, probs)
    want = merge_values(values[shuffle], probs[shuffle])
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    assert (np.diff(got[0]) > 0).all()
