"""CBPE of K classes with the multinomial Platt map (``calibration="multinomial"``) against
independent computations: PEMI's map of the same labelled rows, a direct penalised multinomial
logistic fit, the mixture over the posterior draws enumerated, and the generative model."""

import warnings

import numpy as np
import pytest
from scipy import optimize, special, stats

import bayeval as be
from bayeval.calibration_map import EXACT_MAP_ROWS
from bayeval.methods.pemi.multiclass_models import log_scores, platt_probabilities, posterior
from bayeval.multiclass_calibration import (
    PRIOR_A,
    PRIOR_LOG_B,
    SHIFT_ROWS,
    multinomial_map,
)
from bayeval.poibin import pmf_rows

K = 3


def _rows(n, rng):
    """Scores softmax(0.6 z) of true probabilities softmax(z), z ~ N(0, 1.5^2), and labels."""
    z = rng.normal(0.0, 1.5, (n, K))
    truth, s = special.softmax(z, axis=1), special.softmax(0.6 * z, axis=1)
    y = (rng.random(n)[:, None] > truth.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)
    return s, y


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return _rows(600, rng), _rows(40, rng)


def _cbpe(s, ref, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return be.cbpe(s, reference=ref, calibration="multinomial", **kw)


def test_map_is_pemis(data):
    (ref_s, ref_y), (s, _) = data
    a, b = posterior(ref_s, ref_y, random_seed=3).mode  # PEMI's map of the same labelled rows
    pemi_p = platt_probabilities(log_scores(s), a[None], np.array([b]))[0]
    fitted = multinomial_map(ref_s, ref_y, uncertainty=False)
    np.testing.assert_allclose(fitted.predict(s), pemi_p, rtol=0, atol=1e-12)
    # and end to end: PEMI's accuracy of the reference rows labelled and the window's missing
    # is their correct count plus the window's expected count under the map, CBPE's plug-in
    scores = np.vstack([ref_s, s])
    labels = np.r_[ref_y.astype(float), np.full(len(s), np.nan)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = be.pemi(scores, labels, calibration_uncertainty=False, metrics=["accuracy"],
                     method="exact")
    pemi_acc = float(ev.closed_form["mean"].sel(metric="accuracy").values.ravel()[0])
    yp = s.argmax(axis=1)
    window = (pemi_acc * len(scores) - np.sum(ref_y == ref_s.argmax(axis=1))) / len(s)
    cf = _cbpe(s, (ref_s, ref_y), calibration_uncertainty=False,
               metrics=["accuracy"]).closed_form.sel(chunk="all", metric="accuracy")
    assert float(cf["mean"][0]) == pytest.approx(pemi_p[np.arange(len(s)), yp].mean(), abs=1e-12)
    assert float(cf["mean"][0]) == pytest.approx(window, abs=1e-12)


def test_probabilities_sum_to_one(data):
    (ref_s, ref_y), (s, _) = data
    fitted = multinomial_map(ref_s, ref_y, random_seed=1)
    np.testing.assert_allclose(fitted.predict(s).sum(axis=1), 1.0, atol=1e-12)
    draws = fitted.predict_draws(s)
    assert draws.shape == (fitted.draws, len(s), K)
    np.testing.assert_allclose(draws.sum(axis=2), 1.0, atol=1e-12)


def test_mode_is_a_direct_penalised_multinomial_logistic_fit(data):
    (ref_s, ref_y), _ = data
    x = np.log(ref_s)

    def loss(theta):  # (a_1, a_2, log b), the same normal priors
        a = np.r_[0.0, theta[:-1]]
        z = a + np.exp(theta[-1]) * x
        nll = -(z[np.arange(len(ref_y)), ref_y] - special.logsumexp(z, axis=1)).sum()
        return nll - stats.norm.logpdf(theta[:-1], *PRIOR_A).sum() - stats.norm.logpdf(
            theta[-1], *PRIOR_LOG_B)

    res = optimize.minimize(loss, np.zeros(K), method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20_000})
    fitted = multinomial_map(ref_s, ref_y, uncertainty=False)
    assert fitted.draws == 0
    np.testing.assert_allclose(fitted.a, np.r_[0.0, res.x[:-1]], atol=1e-6)
    assert fitted.b == pytest.approx(np.exp(res.x[-1]), abs=1e-6)
    assert fitted.b == pytest.approx(1 / 0.6, rel=0.15)  # the scores' temperature, 0.6


def test_resampled_draws_keep_each_draw_its_share(data):
    (ref_s, ref_y), _ = data
    post = posterior(ref_s, ref_y, random_seed=np.random.default_rng(5))
    fitted = multinomial_map(ref_s, ref_y, random_seed=np.random.default_rng(5))
    # systematic resampling keeps draw s floor(M w_s) or ceil(M w_s) times
    counts = np.bincount(np.searchsorted(post.b, fitted.draw_b, sorter=np.argsort(post.b)),
                         minlength=post.size)[np.argsort(np.argsort(post.b))]
    assert np.all(np.abs(counts - post.size * post.weights) < 1.0 + 1e-9)


def _mixture(p_draws, yp, pick):
    """Mean and sd of sum_i Y_i[pick_i] over rows with probabilities p_draws (M, n), mixed
    over the draws: each draw's Poisson-binomial, enumerated."""
    starts, pmfs = pmf_rows(p_draws[:, pick])
    support = starts[:, None] + np.arange(pmfs.shape[1])
    means = (pmfs * support).sum(axis=1)
    seconds = (pmfs * support**2).sum(axis=1)
    mean = means.mean()
    return mean, np.sqrt(seconds.mean() - mean**2)


def test_mixed_laws_are_the_mixture_of_the_draws_laws(data):
    (ref_s, ref_y), (s, _) = data
    ev = _cbpe(s, (ref_s, ref_y), metrics=["accuracy", "precision"], random_seed=2)
    cf = ev.closed_form.sel(chunk="all")
    seed = np.random.default_rng([2, 17])  # the map's draws of random_seed=2
    pm = multinomial_map(ref_s, ref_y, random_seed=seed).predict_draws(s)
    yp = s.argmax(axis=1)
    own = pm[:, np.arange(len(s)), yp]
    mean, sd = _mixture(own, yp, np.ones(len(s), bool))
    acc = cf.sel(metric="accuracy").isel({"class": 0})
    assert float(acc["mean"]) == pytest.approx(mean / len(s), abs=1e-12)
    assert float(acc["sd"]) == pytest.approx(sd / len(s), abs=1e-12)
    for c in range(K):  # precision_k = TP_k / (rows predicted k), a fixed denominator
        rows = yp == c
        mean, sd = _mixture(pm[:, :, c], yp, rows)
        prec = cf.sel(metric="precision").isel({"class": c})
        assert float(prec["mean"]) == pytest.approx(mean / rows.sum(), abs=1e-12)
        assert float(prec["sd"]) == pytest.approx(sd / rows.sum(), abs=1e-12)


def test_long_windows_keep_each_draws_expected_counts(data):
    (ref_s, ref_y), _ = data
    s, _ = _rows(EXACT_MAP_ROWS + 500, np.random.default_rng(9))
    cf = _cbpe(s, (ref_s, ref_y), metrics=["accuracy"], random_seed=4).closed_form.sel(
        chunk="all", metric="accuracy").isel({"class": 0})
    pm = multinomial_map(ref_s, ref_y, random_seed=np.random.default_rng([4, 17])).predict_draws(s)
    own = pm[:, np.arange(len(s)), s.argmax(axis=1)]
    assert float(cf["mean"]) == pytest.approx(own.sum(axis=1).mean() / len(s), abs=1e-12)
    # the lattice kernel adds the draws' spread to the plug-in's variance (at most 1/4 more)
    plug = _cbpe(s, (ref_s, ref_y), metrics=["accuracy"], calibration_uncertainty=False)
    plug_sd = float(plug.closed_form["sd"].sel(chunk="all", metric="accuracy")[0])
    between = own.sum(axis=1).var() / len(s) ** 2
    assert float(cf["sd"]) ** 2 - plug_sd**2 == pytest.approx(between, abs=0.25 / len(s) ** 2)


def test_check_passes_with_the_model(data):
    """The model mixes over the same draws of the map as the fast path, whose two chunks take
    each draw exactly and whose whole period (longer than EXACT_MAP_ROWS) sums each draw's
    expected counts."""
    (ref_s, ref_y), _ = data
    s, _ = _rows(EXACT_MAP_ROWS + 200, np.random.default_rng(11))
    ev = _cbpe(s, (ref_s, ref_y), method="both", n_chunks=2, draws=2000, random_seed=6,
               metrics=["accuracy", "recall", "macro_f1", "roc_auc"])
    assert "multinomial Platt" in ev.meta["description"]
    assert "map_u" in [v.name for v in ev.model.free_RVs]
    check = ev.check()
    assert check.attrs["passed"], check[~check["passed"]]
    assert len(check.index.droplevel("test").unique()) == 3 * (2 + 2 * K)


def test_multinomial_needs_a_reference():
    with pytest.raises(ValueError, match="calibration='multinomial' needs reference"):
        be.cbpe(np.full((10, K), 1 / K), calibration="multinomial")


def test_long_windows_shift_the_counts_as_every_draw_summed_over_every_row():
    """Beyond SHIFT_ROWS rows each draw's shift of the expected counts is the first-order part
    plus a sampled remainder: within 5 % of the shifts' sd over the draws of the sums over
    every row of every draw's probabilities."""
    rng = np.random.default_rng(11)
    ref_s, ref_y = _rows(200, rng)
    s, _ = _rows(30_000, rng)
    yp = s.argmax(axis=1)
    m = multinomial_map(ref_s, ref_y, random_seed=3)
    assert len(s) > SHIFT_ROWS
    tp, total = m.count_shifts(s, m.predict(s), yp)
    exact_tp, exact_total = np.zeros_like(tp), np.zeros_like(total)
    for rows in np.array_split(np.arange(len(s)), 10):
        pm, p = m.predict_draws(s[rows]), m.predict(s[rows])
        d = pm - p[None]
        exact_total += d.sum(axis=1)
        own = d[:, np.arange(rows.size), yp[rows]]
        exact_tp += np.stack([own[:, yp[rows] == c].sum(axis=1) for c in range(K)], axis=1)
    for mine, exact in ((tp, exact_tp), (total, exact_total)):
        assert (np.abs(mine - exact).max(axis=0) <= 0.05 * exact.std(axis=0)).all()
