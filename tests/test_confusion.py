"""Tests of bayeval.confusion (the exact laws) against enumeration of all label completions.

Oracle (tests/confusion_oracle.py): for n <= 12 every completion of the unknown labels is
enumerated with its probability and the metric is computed in exact rational arithmetic
(independently of bayeval.metrics), so the support, its merging, the probabilities, the moments
and p_undefined are checked to 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayeval import confusion, confusion_grid
from bayeval.confusion import metric_distribution
from bayeval.metrics import METRICS, from_counts
from bayeval.poibin import PoissonBinomial
from tests.confusion_oracle import BETA, CASES, moderate_case, oracle

# ---------------------------------------------------------------------------------------------
# enumeration oracle


GRID = [(c, m, z) for c in CASES for m in METRICS for z in (0.0, 1.0, np.nan)]


@pytest.mark.parametrize(("case", "metric", "zero_division"), GRID)
def test_distribution_equals_enumeration(case, metric, zero_division):
    yp, p, labels, _ = CASES[case]
    values, probs, p_undefined = oracle(case, metric, zero_division)
    d = metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=BETA)
    assert d.values.shape == values.shape  # equal rationals merged, distinct ones kept
    np.testing.assert_allclose(d.values, values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.probs, probs, rtol=0, atol=1e-12)
    assert abs(d.p_undefined - p_undefined) <= 1e-12
    assert abs(math.fsum(d.probs) - 1) <= 1e-12
    if np.isnan(values[0]):
        assert np.isnan(d.mean) and np.isnan(d.sd)
        return
    mean = math.fsum(values * probs)
    assert abs(d.mean - mean) <= 1e-12
    assert abs(d.sd - math.sqrt(math.fsum((values - mean) ** 2 * probs))) <= 1e-12


def test_oracle_cases_cover_the_edge_cases():
    """The cases above exercise undefined metrics with probability strictly between 0 and 1."""
    assert max(oracle(c, "precision", 0.0)[2] for c in CASES) == 1.0
    assert any(0.01 < oracle(c, "recall", 0.0)[2] < 1 for c in CASES)


# ---------------------------------------------------------------------------------------------
# truncation, merging, intervals


@pytest.mark.parametrize("metric", ["f1", "mcc", "balanced_accuracy", "precision", "accuracy"])
def test_truncated_grid_equals_full_grid(metric):
    """Cutting each count PMF at 1e-16 changes no probability by more than 1e-12 (n = 2000)."""
    yp, p, labels = moderate_case(seed=9, n=2000)
    rows = confusion.label_rows(yp, p, labels)
    tp = rows.tp_known + np.arange(rows.p_pos.size + 1.0)[:, None]
    fn = rows.fn_known + np.arange(rows.p_neg.size + 1.0)[None, :]
    values = from_counts(metric, tp, rows.n_pos - tp, fn, rows.n_neg - fn).ravel()
    probs = np.outer(PoissonBinomial(rows.p_pos).pmf(), PoissonBinomial(rows.p_neg).pmf()).ravel()
    full, inverse = np.unique(values, return_inverse=True)
    full_probs = np.bincount(inverse, weights=probs)
    d = metric_distribution(metric, yp, p, labels)
    where = np.searchsorted(full, d.values)
    assert np.array_equal(full[where], d.values)  # the cut support is part of the full one
    ours = np.zeros_like(full_probs)
    ours[where] = d.probs
    assert np.abs(ours - full_probs).max() <= 1e-12
    assert d.mean == pytest.approx(full @ full_probs, abs=1e-12)


def _algorithm3(probs: np.ndarray, alpha: float) -> tuple[int, int]:
    """Algorithm 3 of the CBPE paper (Kivimäki et al., §3.4 and App. C), transcribed verbatim."""
    lo, up, tail = 0, probs.size - 1, 0.0
    while True:
        pl, pu = probs[lo], probs[up]
        if pl < pu:
            if tail + pl >= alpha:
                return lo, up
            tail, lo = tail + pl, lo + 1
        else:
            if tail + pu >= alpha:
                return lo, up
            tail, up = tail + pu, up - 1


def test_interval_kinds_on_a_hand_checked_law():
    """probs .18 .01 .39 .26 .16, 80 %: Algorithm 3 trims .16 then stops at .18 -> [0, 3];
    the shortest interval with mass >= .8 is [2, 4] (.81); equal tails (.1 each) -> [0, 4]."""
    probs = np.array([.18, .01, .39, .26, .16])
    d = confusion.MetricDistribution("x", np.arange(5.0), probs, 0.0, 0.0)
    assert d.interval(0.8, "paper_hdi") == (0.0, 3.0)
    assert d.interval(0.8, "hdi") == (2.0, 4.0)
    assert d.interval(0.8, "eti") == (0.0, 4.0)
    b = metric_distribution("precision", [1, 1, 0], [0.5, 0.5, 0.2])  # 0, 1/2, 1 w.p. 1/4 1/2 1/4
    assert (b.values.tolist(), b.probs.tolist()) == ([0, 0.5, 1], [0.25, 0.5, 0.25])
    assert b.interval(0.5, "eti") == (0.0, 0.5)  # Q(1/4) = 0 since F(0) = 1/4 exactly
    assert b.interval(0.5, "hdi") == (0.5, 0.5)
    assert b.interval(0.5, "paper_hdi") == (0.0, 0.5)  # ties trim the upper end first
    assert b.interval(0.95) == (0.0, 1.0)


@pytest.mark.parametrize("metric", ["recall", "f1", "mcc", "accuracy"])
def test_intervals_hold_their_mass_and_match_brute_force(metric):
    yp, p, labels = moderate_case(seed=10, n=120)
    d = metric_distribution(metric, yp, p, labels)
    csum = np.r_[0.0, np.cumsum(d.probs)]
    for ci in (0.5, 0.8, 0.95, 0.99):
        alpha = 1 - ci
        for kind in confusion.INTERVAL_KINDS:
            lo, hi = d.interval(ci, kind)
            inside = (d.values >= lo) & (d.values <= hi)
            # sums of float probabilities: rounding ~ m * eps
            assert math.fsum(d.probs[inside]) >= ci - 1e-14, (kind, ci)
            assert d.mass(lo, hi) == pytest.approx(math.fsum(d.probs[inside]), abs=1e-15)
        i, j = _algorithm3(d.probs, alpha)
        assert d.interval(ci, "paper_hdi") == (d.values[i], d.values[j])
        mass = csum[None, 1:] - csum[:-1, None]  # mass[i, j] of [v_i, v_j]
        width = np.where(mass >= ci - 1e-12, d.values[None, :] - d.values[:, None], np.inf)
        lo, hi = d.interval(ci, "hdi")
        assert hi - lo == pytest.approx(width.min(), abs=1e-15)


@pytest.mark.parametrize("metric", ["accuracy", "precision", "npv"])
def test_algorithm3_is_shortest_for_log_concave_laws(metric):
    """For a rescaled Poisson-binomial (log-concave, unimodal in value order) Algorithm 3's greedy
    trim is the shortest interval."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 300))
        d = metric_distribution(metric, rng.integers(0, 2, n), rng.beta(0.5, 0.8, n))
        for ci in (0.5, 0.8, 0.95, 0.99):
            (a, b), (c, e) = d.interval(ci, "hdi"), d.interval(ci, "paper_hdi")
            assert e - c == pytest.approx(b - a, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the lazy law (no support listed) against its materialised support

GRID_METRICS = ("recall", "specificity", "f1", "fbeta", "balanced_accuracy", "mcc")
ZERO_DIVISIONS = (0.0, 1.0, np.nan)
CI_PROBS = (0.5, 0.95, 0.99)


def _lazy_and_eager(metric, yp, p, labels, zero_division, beta=BETA):
    """The lazy law's (mean, sd, p_undefined, ETIs, masses at bounds) before and after its
    support is listed, the latter from a MetricDistribution built on that support."""
    d = metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=beta)
    assert d._grid is not None and d._support is None
    below_one = np.nextafter(1.0, 0)
    bounds = [(0.0, 0.0), (0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (d.mean, below_one),
              (-1.0, d.mean), (d.mean, d.mean - 1e-3)]

    def summary(x):
        etis = [x.interval(ci) for ci in CI_PROBS]
        masses = [x.mass(lo, hi) for lo, hi in [*bounds, *etis]]
        return x.mean, x.sd, x.p_undefined, etis, masses

    lazy = summary(d)
    assert d._support is None  # nothing above listed the support
    eager = confusion.MetricDistribution(metric, d.values, d.probs, d.p_undefined, zero_division)
    values, probs = d._grid.cells()
    return lazy, summary(eager), float(probs[np.isnan(values)].sum())


def _assert_same(lazy, eager, p_undefined):
    np.testing.assert_allclose(lazy[:2], eager[:2], rtol=0, atol=1e-12)
    assert lazy[2] == pytest.approx(p_undefined, abs=1e-12)
    assert lazy[3] == eager[3]  # the same support values, exactly
    np.testing.assert_allclose(lazy[4], eager[4], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("case", "metric", "zero_division"),
                         [(c, m, z) for c in CASES for m in GRID_METRICS for z in ZERO_DIVISIONS])
def test_lazy_law_equals_its_support_on_the_enumerated_cases(case, metric, zero_division):
    yp, p, labels, _ = CASES[case]
    d = metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=BETA)
    if d._grid is None:  # never defined: a point mass, nothing lazy
        assert np.isnan(zero_division) or d.values.tolist() == [zero_division]
        assert d.p_undefined == 1.0
        return
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, zero_division))


def _random_case(seed: int, n: int):
    """Predictions, p (continuous, coarse, some 0 and 1) and about a third of labels known."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.05, rng.integers(0, 2, n), np.round(rng.beta(2, 2, n), 2))
    labels = np.where(rng.random(n) < 1 / 3, rng.integers(0, 2, n), np.nan)
    return rng.integers(0, 2, n), p, labels


@pytest.mark.parametrize("metric", GRID_METRICS)
@pytest.mark.parametrize("zero_division", ZERO_DIVISIONS)
def test_lazy_law_equals_its_support_when_quantiles_bisect(metric, zero_division):
    """n = 2000: more grid cells than a quantile enumerates, so it bisects first."""
    yp, p, labels = _random_case(3, 2000)
    grid = confusion._grid_of_rows(metric, confusion.label_rows(yp, p, labels), BETA, 0.0)
    assert grid.a.size * grid.b.size > 2 * confusion_grid._ENUMERATE
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, zero_division))


@pytest.mark.parametrize(("metric", "beta"), [("mcc", 1.0), ("fbeta", 0.3), ("fbeta", 0.0),
                                              ("fbeta", np.inf), ("f1", 1.0)])
def test_lazy_law_with_rounded_values_and_beta_limits(metric, beta):
    """n = 3e4: MCC's squared numerator passes 2^53 (values rounded); beta^2 = 0.09 is not a
    short rational; beta = 0 (precision: constant rows) and inf (recall)."""
    yp, p, labels = _random_case(4, 30_000)
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, 0.0, beta=beta))


@pytest.mark.parametrize("metric", GRID_METRICS)
def test_grid_rows_are_monotone_with_undefined_cells_at_their_ends(metric):
    """What the lazy law relies on: in each row (fixed TP) the metric's doubles do not increase
    with FN, and undefined cells are a row's first or last cell, or the whole row."""
    cases = [CASES[c][:3] for c in CASES] + [_random_case(5, 30_000)]
    for yp, p, labels in cases:
        grid = confusion._grid_of_rows(metric, confusion.label_rows(yp, p, labels), BETA, 0.0)
        values = grid.cells()[0].reshape(grid.a.size, grid.b.size)
        defined = np.arange(grid.b.size)
        defined = (defined >= grid.start[:, None]) & (defined < grid.end[:, None])
        assert np.array_equal(~np.isnan(values), defined)
        assert not (np.diff(values, axis=1) > 0).any()  # NaN differences compare False


def test_lazy_eti_breaks_exact_ties_like_the_support():
    """Recall with y_pred 1 1 0 and p = 1/2: the cells (TP, FN) give 0 w.p. 1/8 (undefined at
    (0, 0)) + 1/8, 1/2 w.p. 1/4, 2/3 w.p. 1/8 and 1 w.p. 3/8; all masses dyadic, so exact."""
    args = ("recall", [1, 1, 0], [0.5, 0.5, 0.5])
    d = metric_distribution(*args)  # 0 1/4, 1/2 1/4, 2/3 1/8, 1 3/8
    assert d.interval(0.5) == (0.0, 1.0)  # F(0) = 1/4 = alpha/2 exactly: Q(1/4) = 0
    assert d.mass(0.5, 2 / 3) == 0.375
    d = metric_distribution(*args, zero_division=1.0)  # 0 1/8, 1/2 1/4, 2/3 1/8, 1 1/2
    assert d.interval(0.5) == (0.5, 1.0)
    assert d.interval(0.75) == (0.0, 1.0)  # F(0) = 1/8 = alpha/2 exactly
    d = metric_distribution(*args, zero_division=np.nan)  # 1/7, 2/7, 1/7, 3/7 given defined
    assert d.interval(0.5) == (0.5, 1.0)
    assert (d.mean, d.p_undefined) == (pytest.approx(2 / 3, abs=1e-15), 0.125)
    assert d.values.tolist() == [0, 0.5, 2 / 3, 1]
    np.testing.assert_allclose(d.probs, np.array([1, 2, 1, 3]) / 7, rtol=1e-15)


def test_lazy_law_builds_its_support_once_and_only_when_asked():
    yp, p, labels = _random_case(6, 300)
    d = metric_distribution("f1", yp, p, labels)
    assert "metric='f1'" in repr(d)
    d.mean, d.interval(0.9), d.mass(0.2, 0.8)
    assert d._support is None
    assert d.values is d.values and d.probs is d.probs
    assert not d.values.flags.writeable and not d.probs.flags.writeable
    (a, b), (c, e) = d.interval(0.9, "hdi"), d.interval(0.9)
    assert b - a <= e - c


# ---------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize(("call", "match"), [
    (lambda: metric_distribution("f1", [1, 0], [0.5, 1.5]), "p must lie in"),
    (lambda: metric_distribution("f1", [1, 0], [0.5, np.nan]), "p has 1 NaN"),
    (lambda: metric_distribution("f1", [1, 0, 1], [0.5, 0.5]), "length mismatch"),
    (lambda: metric_distribution("f1", [1, 0], [0.5, 0.5], [1, 0, 1]), "labels has 3"),
    (lambda: metric_distribution("f1", [1, 2], [0.5, 0.5]), "y_pred must be binary"),
    (lambda: metric_distribution("f1", [1, 0], [0.5, 0.5], [1, 0.5]), "labels must be 0, 1"),
    (lambda: metric_distribution("auc", [1, 0], [0.5, 0.5]), "metric must be one of"),
    (lambda: metric_distribution("f1", [1, 0], [.5, .5], zero_division=2), "zero_division"),
    (lambda: metric_distribution("fbeta", [1, 0], [.5, .5], beta=-1), "beta must be"),
    (lambda: metric_distribution("f1", [1, 0], [.5, .5]).interval(1.0), "ci_prob"),
    (lambda: metric_distribution("f1", [1, 0], [.5, .5]).interval(0.9, "hpd"), "kind"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
