"""CBPE's fast paths: the count laws against the engine of bayeval.confusion, their lazy form
against the whole grid, the V2 limits and moments and the Beta-binomial PMF."""

import numpy as np
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from bayeval.confusion import metric_distribution
from bayeval.methods.cbpe import fast as cbpe_fast
from bayeval.methods.cbpe.fast import CountLaw, beta_binomial_pmf
from bayeval.metrics import METRICS
from bayeval.poibin import convolve

TWO_COUNT = ("recall", "specificity", "f1", "fbeta", "balanced_accuracy", "mcc")


@pytest.fixture(autouse=True)
def one_blas_thread():
    """OpenBLAS threads oversubscribe a loaded 2-core machine (a 1e5 dot: 25 ms, not 0.1)."""
    with threadpool_limits(1, "blas"):
        yield


@pytest.fixture(scope="module")
def window():
    rng = np.random.default_rng(7)
    s = rng.beta(2, 2, 300)
    return s, (s >= 0.5).astype(np.int8)

# ------------------------------------------------------------------------- exact identities


@pytest.mark.parametrize("zero_division", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("metric", METRICS)
def test_v0_law_is_the_engines_distribution(window, metric, zero_division):
    s, y_pred = window
    ours = CountLaw.poisson_binomial(s, y_pred).law(metric, zero_division, beta=0.5)
    engine = metric_distribution(metric, y_pred, s, zero_division=zero_division, beta=0.5)
    np.testing.assert_array_equal(ours.values, engine.values)
    np.testing.assert_allclose(ours.probs, engine.probs, rtol=0, atol=1e-12)
    assert ours.p_undefined == pytest.approx(engine.p_undefined, abs=1e-12)


def _undefined_heavy():
    """A window where TP = FN = 0 has probability 0.017 (recall and MCC undefined)."""
    rng = np.random.default_rng(8)
    s = np.r_[rng.uniform(0, 0.01, 400), [0.5, 0.5, 0.5]]
    return s, (s >= 0.5).astype(np.int8)


def _mixture():
    """A V2b-like window: Beta-binomial cells mixed over three concentrations."""
    n, c, y_pred = (np.array([40, 25, 60, 35, 80]), np.array([0.2, 0.4, 0.6, 0.85, 0.95]),
                    np.array([0, 0, 1, 1, 1]))
    kappa = np.array([[3.0], [30.0], [300.0]])
    return CountLaw.beta_binomial(n, kappa * c, kappa * (1 - c), y_pred, [0.2, 0.5, 0.3])


@pytest.mark.parametrize("zero_division", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("metric", TWO_COUNT)
def test_lazy_law_is_the_grid_law(window, metric, zero_division):
    """The lazy law (no support listed) against the PMF pushed forward from the whole grid:
    one component (V0, and a window where TP = FN = 0 has mass) and a mixture (V2b)."""
    laws = [CountLaw.poisson_binomial(s, y_pred) for s, y_pred in (window, _undefined_heavy())]
    for law in [*laws, _mixture()]:
        grid = law.grid(metric, zero_division, beta=2.0)
        lazy = law._lazy(metric, zero_division, beta=2.0)
        assert lazy.lazy
        assert lazy.mean == pytest.approx(grid.mean, abs=1e-12)
        assert lazy.sd == pytest.approx(grid.sd, abs=1e-12)
        assert lazy.p_undefined == pytest.approx(grid.p_undefined, abs=1e-12)
        for ci_prob in (0.998, 0.95, 0.5, 0.1):
            assert lazy.interval(ci_prob) == grid.interval(ci_prob)
        picks = grid.values[:: max(1, grid.values.size // 40)]
        for v in picks:
            assert lazy.mass(-np.inf, v) == pytest.approx(grid.mass(-np.inf, v), abs=1e-12)
            assert lazy.mass(v, v) == pytest.approx(grid.mass(v, v), abs=1e-12)
        for lo, hi in ((-np.inf, picks[len(picks) // 2]), (picks[1], np.inf)):
            assert lazy.mass(lo, hi) == pytest.approx(grid.mass(lo, hi), abs=1e-12)
        assert lazy.lazy  # none of the above listed the support


def test_large_window_matches_the_engine():
    """At 60,000 rows CBPE's law is lazy and equals the engine's from the rows."""
    rng = np.random.default_rng(9)
    s = rng.beta(2, 3, 60_000)
    y_pred = (s >= 0.5).astype(np.int8)
    law = CountLaw.poisson_binomial(s, y_pred)
    for metric in ("recall", "f1", "mcc"):
        ours, engine = law.law(metric), metric_distribution(metric, y_pred, s)
        assert ours.lazy
        assert ours.mean == pytest.approx(engine.mean, abs=1e-12)
        assert ours.sd == pytest.approx(engine.sd, abs=1e-12)
        assert ours.interval(0.95) == engine.interval(0.95)


def test_whole_period_is_the_convolution_of_its_chunks(window):
    s, y_pred = window
    parts = [CountLaw.poisson_binomial(s[r], y_pred[r]) for r in (slice(0, 100),
                                                                 slice(100, 300))]
    whole, direct = parts[0] + parts[1], CountLaw.poisson_binomial(s, y_pred)
    for a, b in ((whole.tp, direct.tp), (whole.fn, direct.fn)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("kappa", [0.5, 50.0])
def test_singleton_groups_make_v2_equal_v0(window, kappa):
    s, y_pred = window
    v2 = CountLaw.beta_binomial(np.ones(s.size, int), kappa * s[None], kappa * (1 - s[None]),
                                y_pred, [1.0])
    v0 = CountLaw.poisson_binomial(s, y_pred)
    assert (v2.tp_start, v2.fn_start) == (v0.tp_start, v0.fn_start)
    np.testing.assert_allclose(v2.tp, v0.tp, atol=1e-12)
    np.testing.assert_allclose(v2.fn, v0.fn, atol=1e-12)


def _groups():
    return (np.array([40, 25, 60, 35]), np.array([0.2, 0.4, 0.6, 0.85]),
            np.array([0, 0, 1, 1]))


def test_v2_tends_to_binomials_as_kappa_grows():
    n, c, y_pred = _groups()
    law = CountLaw.beta_binomial(n, 1e15 * c[None], 1e15 * (1 - c[None]), y_pred, [1.0])
    binomials = [stats.binom.pmf(np.arange(m + 1), m, p) for m, p in zip(n, c, strict=True)]
    tp = convolve(*binomials[2:])
    np.testing.assert_allclose(law.tp[0], tp[law.tp_start: law.tp_start + law.tp.shape[1]],
                               atol=1e-12)


def test_v2_tp_variance_formula_and_unchanged_means():
    n, c, y_pred = _groups()
    kappa = 7.0
    law = CountLaw.beta_binomial(n, kappa * c[None], kappa * (1 - c[None]), y_pred, [1.0])
    mean, var = law.tp_moments()
    pos = y_pred == 1
    assert mean == pytest.approx(np.sum(n[pos] * c[pos]), rel=1e-12)
    formula = np.sum(n[pos] * c[pos] * (1 - c[pos]) * (kappa + n[pos]) / (kappa + 1))
    assert var == pytest.approx(formula, rel=1e-10)
    # accuracy and precision keep their V0 means (the noise preserves every expected count)
    rows = np.repeat(c, n), np.repeat(y_pred, n)
    v0 = CountLaw.poisson_binomial(*rows)
    for metric in ("accuracy", "precision"):
        assert law.law(metric).mean == pytest.approx(v0.law(metric).mean, abs=1e-12)


def test_beta_binomial_pmf_against_scipy():
    for n, a, b in ((10, 2.0, 3.0), (80, 0.01, 0.5), (400, 30.0, 70.0)):
        np.testing.assert_allclose(beta_binomial_pmf(n, [a], [b])[0],
                                   stats.betabinom.pmf(np.arange(n + 1), n, a, b), atol=1e-13)


def test_binning_shares_each_bins_rate_across_chunks():
    """Semantics (a): the whole period pools each bin's cells (one rate per bin), so its TP law
    is the kappa mixture of BetaBinomial(n_b, a_b, b_b) over the bins' totals: wider than the
    sum of independent chunks, which V2b (b) uses."""
    cells = {"n": np.array([30, 20, 25, 40]), "chunk": np.array([0, 0, 1, 1]),
             "bin": np.array([0, 1, 0, 1]), "y_pred": np.array([0, 1, 0, 1]),
             "c": np.array([0.3, 0.8, 0.3, 0.8])}
    a = np.array([[3.0, 8.0, 3.0, 8.0], [30.0, 80.0, 30.0, 80.0]])
    b = np.array([[7.0, 2.0, 7.0, 2.0], [70.0, 20.0, 70.0, 20.0]])
    weights = np.array([0.4, 0.6])
    laws = cbpe_fast.count_laws([None] * 3, "binning", cells, (a, b, weights))
    whole = laws[-1]
    tp = whole.tp_start + np.arange(whole.tp.shape[1])
    expected = sum(w * stats.betabinom.pmf(tp, 60, a[j, 1], b[j, 1])
                   for j, w in enumerate(weights))
    np.testing.assert_allclose(weights @ whole.tp, expected, atol=1e-14)
    summed = laws[0] + laws[1]
    assert whole.tp_moments()[0] == pytest.approx(summed.tp_moments()[0], rel=1e-12)
    assert whole.tp_moments()[1] > 1.3 * summed.tp_moments()[1]
    independent = cbpe_fast.count_laws([None] * 3, "learned", cells, (a, b, weights))[-1]
    np.testing.assert_allclose(independent.tp, summed.tp, atol=1e-14)


def test_windows_read_in_a_known_order_are_the_sorted_windows():
    """Chunks read in the rows' stable order by score are each chunk sorted, with ties; an
    order that is not the scores' leaves the chunks unsorted."""
    from bayeval.chunks import make_chunks

    rng = np.random.default_rng(3)
    s = np.round(rng.random(500), 2)  # ties
    chunking = make_chunks(s.size, chunks=rng.integers(0, 4, s.size))
    sorted_ = cbpe_fast.windows(s, chunking, np.sqrt, 0.5, whole=False)
    read = cbpe_fast.windows(s, chunking, np.sqrt, 0.5, whole=False,
                             order=np.argsort(s, kind="stable"))
    for a, b in zip(sorted_, read, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    shuffled = cbpe_fast.windows(s, chunking, np.sqrt, 0.5, whole=False,
                                 order=rng.permutation(s.size))
    assert not all((w.s[1:] >= w.s[:-1]).all() for w in shuffled)
