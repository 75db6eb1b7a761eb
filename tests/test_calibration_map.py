"""The posterior of a calibration map: weighted fits, the draws and their linear statistics."""

import warnings

import numpy as np
import pytest
from scipy import special

from bayeval import calibration
from bayeval.calibration_map import lattice_kernel, map_posterior


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 3, n)
    return s, (rng.random(n) < s**1.3).astype(float)


@pytest.mark.parametrize("name", ["isotonic", "platt", "beta"])
def test_integer_weights_fit_as_repeated_rows(name):
    s, y = _data(300)
    counts = np.random.default_rng(1).integers(0, 4, s.size)
    weighted = calibration.make_calibrator(name).fit(s, y, sample_weight=counts)
    repeated = calibration.make_calibrator(name).fit(np.repeat(s, counts), np.repeat(y, counts))
    grid = np.linspace(0.01, 0.99, 50)
    np.testing.assert_allclose(weighted.predict(grid), repeated.predict(grid), atol=1e-8)


def test_sample_weight_is_checked():
    s, y = _data(20)
    with pytest.raises(ValueError, match="sample_weight"):
        calibration.Platt().fit(s, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="sample_weight"):
        calibration.Platt().fit(s, y, sample_weight=np.ones(19))


def test_platt_draws_spread_as_its_posterior():
    """The weighted likelihood bootstrap of Platt scaling has, to first order, the spread of the
    posterior N(MLE, I^-1): at a score, sd of sigma(a logit s + b) from the Fisher information.
    400 draws estimate an sd within 1/sqrt(2 * 400) = 3.5 % (1 sd); 4 sds: 14 %."""
    s, y = _data(5000, seed=2)
    cal = calibration.Platt().fit(s, y)
    post = map_posterior(cal, s, y, random_seed=3)
    x = np.column_stack([special.logit(s), np.ones(s.size)])
    p = cal.predict(s)
    cov = np.linalg.inv((x.T * (p * (1 - p))) @ x)
    at = np.array([0.1, 0.4, 0.8])
    grad = (np.column_stack([special.logit(at), np.ones(3)])
            * (cal.predict(at) * (1 - cal.predict(at)))[:, None])
    laplace = np.sqrt(np.einsum("ik,kl,il->i", grad, cov, grad))
    draws = post.predict(at)
    np.testing.assert_allclose(draws.std(axis=0) / laplace, 1.0, atol=0.14)
    # centred on the fit: the mean of 400 draws within 4 sd / sqrt(400)
    assert (np.abs(draws.mean(axis=0) - cal.predict(at)) <= 4 * laplace / 20).all()


def _jeffreys_grid(s, y, at, prior=True):
    """Posterior mean and sd of Platt's map at ``at`` under Jeffreys' prior (or a flat one), by
    a 400 x 400 grid over the coefficients: computed without the sampler."""
    x = np.column_stack([special.logit(s), np.ones(s.size)])
    a, b = np.meshgrid(np.linspace(-1.5, 4.0, 400), np.linspace(-4.0, 3.0, 400))
    coef = np.column_stack([a.ravel(), b.ravel()])
    eta = coef @ x.T
    logp = (y * eta - np.logaddexp(0.0, eta)).sum(axis=1)
    if prior:
        w = special.expit(eta) * special.expit(-eta)
        info = np.einsum("gn,ni,nj->gij", w, x, x)
        logp += 0.5 * np.linalg.slogdet(info)[1]
    weight = np.exp(logp - logp.max())
    weight /= weight.sum()
    f = special.expit(coef @ np.column_stack([special.logit(at), np.ones(at.size)]).T)
    mean = weight @ f
    return mean, np.sqrt(weight @ (f - mean) ** 2)


def test_platt_draws_with_few_rows_are_jeffreys_posterior():
    """With 30 rows the draws are the posterior under Jeffreys' prior, computed on a grid: the
    mean of 2,000 draws (effective size >= 2,000, resampled) within 4 sd / sqrt(1,000) of the
    grid's, their sd within 4 / sqrt(2 * 1,000) = 13 %. The flat prior's posterior (the
    bootstrap's first-order target) is off by more than that tolerance."""
    s, y = _data(30, seed=5)
    at = np.array([0.1, 0.4, 0.8])
    draws = map_posterior(calibration.Platt().fit(s, y), s, y, draws=2000,
                          random_seed=6).predict(at)
    mean, sd = _jeffreys_grid(s, y, at)
    assert (np.abs(draws.mean(axis=0) - mean) <= 4 * sd / np.sqrt(1000)).all()
    np.testing.assert_allclose(draws.std(axis=0) / sd, 1.0, atol=0.13)
    flat_mean, _ = _jeffreys_grid(s, y, at, prior=False)
    assert (np.abs(flat_mean - mean) > 4 * sd / np.sqrt(1000)).any()


def test_a_side_without_labelled_rows_keeps_the_plugin_map():
    """A map split at 0.5 fitted on rows all below it: the upper side is the identity, which
    has no parameter, so its draws equal the map there."""
    s, y = _data(60, seed=9)
    s = s / 2.5
    post = map_posterior(calibration.make_calibrator("platt", 0.5).fit(s, y), s, y,
                         random_seed=10)
    draws = post.predict([0.2, 0.7, 0.9])
    assert draws[:, 0].std() > 0.01
    np.testing.assert_array_equal(draws[:, 1:], np.broadcast_to([0.7, 0.9], (400, 2)))


def test_near_separated_side_warns_of_nothing():
    """The breast-cancer reference split at 0.5 has a side of 53 rows, 52 of them positive:
    some of Jeffreys' proposals have a singular Fisher information (the prior is 0 there) and
    get weight 0, with no divide-by-zero or NaN on the way."""
    import bayeval as be
    from bayeval import datasets

    d = datasets.breast_cancer()
    half = d.scores.size // 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ev = be.cbpe(d.scores[half:], reference=(d.scores[:half], d.labels[:half]),
                     metrics=["accuracy"], random_seed=0)
    assert np.isfinite(ev.closed_form["mean"]).all()


def test_beta_calibration_draws_stay_monotone():
    """Beta calibration's a, b >= 0 hold in every draw of its posterior: each drawn map is
    non-decreasing in the score at the knots, where the draws are kept."""
    s, y = _data(40, seed=7)
    post = map_posterior(calibration.BetaCalibration().fit(s, y), s, y, random_seed=8)
    knots = post.sides[0].knots
    assert (np.diff(post.predict(knots[(knots > 0) & (knots < 1)]), axis=1) >= -1e-12).all()


@pytest.mark.parametrize("name", ["isotonic", "platt", "beta", "scaling_binning"])
def test_shifts_are_the_sums_of_the_drawn_probabilities(name):
    s, y = _data(800, seed=4)
    cal = calibration.make_calibrator(name, threshold=0.5).fit(s, y)
    post = map_posterior(cal, s, y, draws=50, random_seed=5)
    new = np.random.default_rng(6).beta(2, 2, 300)
    drawn = post.predict(new)
    assert drawn.shape == (50, 300) and ((drawn >= 0) & (drawn <= 1)).all()
    inside = (drawn > 0).all() and (drawn < 1).all()  # no clipping: the sums are linear
    if inside:
        np.testing.assert_allclose(post.shifts(new), (drawn - cal.predict(new)).sum(axis=1),
                                   atol=1e-9)
    sums = post.sums(new, cal.predict(new), new >= 0.5)
    np.testing.assert_allclose(post.linear(sums, 1) + post.linear(sums, 0), post.shifts(new),
                               atol=1e-9)
    np.testing.assert_allclose(post.linear(sums, 1), post.shifts(new[new >= 0.5]), atol=1e-9)
    many = post.linear_many(sums, [(1, False, None), (None, True, None), (0, False, None)])
    np.testing.assert_allclose(many, np.stack([post.linear(sums, 1), post.linear(
        sums, with_p=True), post.linear(sums, 0)], axis=1), rtol=1e-12, atol=1e-15)
    half = post.sums(new[:150], cal.predict(new[:150]), new[:150] >= 0.5) + post.sums(
        new[150:], cal.predict(new[150:]), new[150:] >= 0.5)
    np.testing.assert_allclose(post.linear(half, with_p=True), post.linear(sums, with_p=True),
                               atol=1e-9)
    np.testing.assert_allclose(post.linear(sums, with_p=True),
                               ((drawn - cal.predict(new)) * cal.predict(new)).sum(axis=1),
                               atol=1e-9 if inside else 1e-2)


def test_draws_are_wide_where_labelled_scores_are_sparse():
    rng = np.random.default_rng(7)
    s = np.r_[rng.uniform(0.0, 0.5, 2000), rng.uniform(0.5, 1.0, 40)]
    y = (rng.random(s.size) < s).astype(float)
    cal = calibration.make_calibrator("isotonic", threshold=0.5).fit(s, y)
    sd = map_posterior(cal, s, y, random_seed=8).predict([0.25, 0.75]).std(axis=0)
    # isotonic regression's pointwise error shrinks as n^(-1/3): 50 times fewer rows, about
    # 3.7 times wider (2.6 here)
    assert sd[1] > 2 * sd[0]


def test_identity_and_other_objects():
    s, y = _data(300, seed=9)
    post = map_posterior(calibration.Identity().fit(s, y), s, y, draws=20)
    assert not post.shifts(s).any()

    class Shrink:  # any object with fit and predict: refitted on resampled rows
        def fit(self, scores, labels):
            self.rate_ = np.mean(labels)
            return self

        def predict(self, scores):
            return (np.asarray(scores) + self.rate_) / 2

    shrink = Shrink().fit(s, y)
    post = map_posterior(shrink, s, y, draws=400, random_seed=10)
    # the draws' rates: the resampled mean, sd sqrt(r (1 - r) / n) (2 sd of a 400-draw sd: 7 %)
    rate_sd = post.predict([0.0]).std() * 2
    assert abs(rate_sd / np.sqrt(y.mean() * (1 - y.mean()) / y.size) - 1) < 0.14


def test_lattice_kernel_keeps_the_mean():
    shifts = np.random.default_rng(11).normal(3.0, 7.0, 400)
    start, probs = lattice_kernel(shifts)
    support = start + np.arange(probs.size)
    assert abs(probs.sum() - 1) < 1e-12 and abs(probs @ support - shifts.mean()) < 1e-9


def test_one_distinct_score_keeps_the_bootstrap_draws():
    """Every labelled score equal: Platt's information is singular everywhere, no Jeffreys
    posterior exists, and the weighted likelihood bootstrap's draws stand (no LinAlgError)."""
    s, y = np.zeros(8), np.array([0, 0, 0, 1, 0, 1, 0, 0], dtype=float)
    cal = calibration.make_calibrator("platt").fit(s, y)
    draws = map_posterior(cal, s, y, random_seed=0).predict([0.0, 0.5])
    assert np.isfinite(draws).all()


@pytest.mark.parametrize("split", [True, False])
def test_sums_of_sorted_rows_equal_those_of_the_same_rows_unsorted(split):
    # sorted windows take one sum per run of cells, unsorted rows a bincount: the same sums
    s, y = _data(800, seed=9)
    cal = calibration.make_calibrator("isotonic", threshold=0.5 if split else None).fit(s, y)
    post = map_posterior(cal, s, y, draws=20, random_seed=10)
    new = np.random.default_rng(11).beta(2, 2, 500)
    ordered = np.sort(new)
    assert not (new[1:] >= new[:-1]).all()
    one, other = (post.sums(x, cal.calibrated(x), x >= 0.5) for x in (ordered, new))
    for a, b in zip(one.parts, other.parts, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)
    # the split map's sides are slices of sorted scores, masks of unsorted ones
    np.testing.assert_array_equal(cal.predict(ordered), cal.predict(new)[np.argsort(new)])


def test_interpolation_of_all_draws_is_numpy_interp_bit_for_bit():
    """Knots outside the fitted scores, on them, between them, and tied fitted scores: every
    row of values read at the knots as np.interp reads it, to the last bit."""
    from bayeval.calibration_map import _interp_rows

    rng = np.random.default_rng(12)
    for size in (1, 2, 3, 50, 500):
        x = np.sort(np.round(rng.random(size), 2))  # ties among the scores
        f = rng.random((7, size))
        knots = np.sort(np.r_[rng.uniform(-0.2, 1.2, 300), x, x[0], x[-1], -1.0, 2.0])
        expected = np.array([np.interp(knots, x, row) for row in f])
        np.testing.assert_array_equal(_interp_rows(knots, x, f), expected)


def _draws_by_hand(s, y, draws, seed):
    """The isotonic map's draws (one side, sorted rows) by one SciPy fit and one np.interp per
    draw, from the same Gamma weights."""
    from scipy.optimize import isotonic_regression

    from bayeval.calibration_map import _knots, _reduced

    rng = np.random.default_rng(seed)
    x, pos, neg = _reduced(s, y)
    knots = _knots(s, 0.0, 1.0)
    gp, gn = (rng.standard_gamma(c, size=(draws, x.size)) for c in (pos, neg))
    def fit(r, w):
        return np.interp(knots, x, isotonic_regression(r, weights=w).x)
    centre = fit(pos / (pos + neg), pos + neg)
    return np.array([fit(a / (a + b), a + b) for a, b in zip(gp, gn, strict=True)]) - centre


@pytest.mark.parametrize("n", [40, 3000])
def test_isotonic_draws_are_those_of_one_fit_per_draw(n):
    s, y = _data(n, seed=13)
    s = np.round(s, 3)  # ties; more than MAX_POINTS distinct scores with 3,000 rows
    order = np.argsort(s, kind="stable")
    s, y = s[order], y[order]
    post = map_posterior(calibration.Isotonic().fit(s, y), s, y, draws=60, random_seed=14)
    by_hand = _draws_by_hand(s, y, 60, 14)
    np.testing.assert_array_equal(post.sides[0].deviations, by_hand)
    # laid out as the by-hand array: their products with the rows' sums round alike
    sums = post.sides[0].basis_sums(np.random.default_rng(15).random(500))
    np.testing.assert_array_equal(post.sides[0].deviations @ sums, by_hand @ sums)


@pytest.mark.parametrize("name", ["isotonic", "platt"])
def test_sorted_and_unsorted_rows_give_the_same_draws(name):
    s, y = _data(1500, seed=15)
    s = np.round(s, 2)
    cal = calibration.make_calibrator(name, 0.5).fit(s, y)
    order = np.argsort(s, kind="stable")
    one = map_posterior(cal, s, y, draws=40, random_seed=16)
    other = map_posterior(cal, s[order], y[order], draws=40, random_seed=16)
    for a, b in zip(one.sides, other.sides, strict=True):
        np.testing.assert_array_equal(a.knots, b.knots)
        np.testing.assert_array_equal(a.deviations, b.deviations)


def test_support_counts_of_sorted_scores_equal_the_binned_ones():
    """Scores on the edges count in the bin above them, the same by bisection of sorted scores
    as by each score's bin."""
    from bayeval.calibration_map import SUPPORT_EDGES, support_counts

    rng = np.random.default_rng(17)
    s = np.r_[rng.beta(0.3, 0.3, 5000), SUPPORT_EDGES, SUPPORT_EDGES[:10], 0.0, 1.0, 0.5]
    rng.shuffle(s)
    assert not (s[1:] >= s[:-1]).all()
    binned = np.bincount(np.searchsorted(SUPPORT_EDGES, s, side="right"),
                         minlength=SUPPORT_EDGES.size + 1)
    by_rows = np.zeros(SUPPORT_EDGES.size + 1, dtype=np.int64)
    for v in s:  # bin b: edges[b - 1] <= s < edges[b]
        by_rows[(SUPPORT_EDGES <= v).sum()] += 1
    np.testing.assert_array_equal(binned, by_rows)
    for scores in (s, np.sort(s), np.sort(s)[:1], np.sort(s)[:0]):
        expected = np.bincount(np.searchsorted(SUPPORT_EDGES, scores, side="right"),
                               minlength=SUPPORT_EDGES.size + 1)
        np.testing.assert_array_equal(support_counts(scores), expected)
    assert support_counts(np.sort(s)).dtype == support_counts(s).dtype
