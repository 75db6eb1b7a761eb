"""CBPE integrated over the posterior of the calibration map learned from the reference."""

import numpy as np
import pytest
import xarray as xr
from scipy import special

from bayeval.calibration import make_calibrator
from bayeval.calibration_map import map_posterior
from bayeval.chunks import make_chunks
from bayeval.confusion_moments import auc_count_moments, ratio_moments
from bayeval.evaluation import Evaluation
from bayeval.methods.cbpe.api import cbpe
from bayeval.methods.cbpe.auc import auc_map_shift
from bayeval.methods.cbpe.fast import CountLaw, count_laws, windows
from bayeval.poibin import PoissonBinomial

METRICS = ["accuracy", "precision", "recall", "f1", "roc_auc"]


def _overconfident(n, rng, a=2.0, b=4.0):
    p = rng.beta(a, b, n)
    return special.expit(2.5 * special.logit(p) + 0.8), (rng.random(n) < p).astype(float)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    ref_s, ref_y = _overconfident(400, rng)
    cal = make_calibrator("platt", 0.5).fit(ref_s, ref_y)
    return ref_s, ref_y, cal, rng.beta(2, 3, 300)


def test_shifted_law_is_the_mixture_of_the_drawn_poisson_binomials(fitted):
    """The TP law of a window mixed over the map's draws: shifting the plug-in PMF by each
    draw's change of the mean against the exact mixture of the drawn Poisson-binomials."""
    ref_s, ref_y, cal, s = fitted
    post = map_posterior(cal, ref_s, ref_y, draws=200, random_seed=1)
    pos = s >= 0.5
    law = CountLaw.poisson_binomial(cal.predict(s), pos)
    moved = law.with_map(post.shifts(s[pos]), post.shifts(s[~pos]), split=True)
    exact = np.mean([PoissonBinomial(p[pos]).pmf() for p in post.predict(s)], axis=0)
    approx = np.zeros(exact.size)
    approx[moved.tp_start : moved.tp_start + moved.tp.shape[1]] = moved.tp[0]
    t = np.arange(exact.size)
    assert abs(approx @ t - exact @ t) < 1e-8  # the mean is exact
    assert abs(np.sqrt(approx @ t**2 - (approx @ t) ** 2) / np.sqrt(exact @ t**2 - (exact @ t)
                                                                         ** 2) - 1) < 0.02
    assert 0.5 * np.abs(approx - exact).sum() < 0.02  # total variation


def test_auc_shift_is_the_drawn_maps_change_of_the_mean(fitted):
    """The first-order change of ROC-AUC's mean per draw against the exact moments of every
    drawn map: the spread agrees within 5 % and the draws pair up (correlation > 0.99)."""
    ref_s, ref_y, cal, s = fitted
    post = map_posterior(cal, ref_s, ref_y, draws=100, random_seed=2)
    s = np.sort(s)
    p = cal.predict(s)
    moments = auc_count_moments(s, p, 0.5)
    linear = auc_map_shift(moments, post.sums(s, p, s >= 0.5), post)
    base = ratio_moments(moments)[0]
    exact = np.array([ratio_moments(auc_count_moments(s, q, 0.5))[0] - base
                      for q in post.predict(s)])
    assert abs(linear.std() / exact.std() - 1) < 0.05
    assert np.corrcoef(linear, exact)[0, 1] > 0.99


def test_a_pooled_map_keeps_the_joint_of_its_shifts(fitted):
    """Pooled map: sixteen groups of draws against one component per draw."""
    ref_s, ref_y, _, s = fitted
    cal = make_calibrator("platt").fit(ref_s, ref_y)
    post = map_posterior(cal, ref_s, ref_y, random_seed=3)
    ws = windows(s, make_chunks(s.size), cal.predict, 0.5)
    law = count_laws(ws, "none", None, None)[0]
    sums = post.sums(*ws[0])
    grouped = law.with_map(post.linear(sums, 1), post.linear(sums, 0), split=False)
    tp, fn = post.linear(sums, 1), post.linear(sums, 0)
    full = [law.with_map(np.array([a]), np.array([b]), split=True)
            for a, b in zip(tp, fn, strict=True)]
    for metric in ["accuracy", "recall", "f1"]:
        lo, hi = grouped.law(metric).interval_ends(0.95, "eti")
        mixture = np.mean([d.law(metric).mass(lo, hi) for d in full])
        assert abs(mixture - 0.95) < 0.01, (metric, mixture)


@pytest.fixture(scope="module")
def period():
    rng = np.random.default_rng(4)
    ref = _overconfident(1000, rng)
    scores, labels = _overconfident(4000, rng)
    return ref, scores, labels


def test_default_integrates_over_the_map_and_plugin_says_it_does_not(period):
    ref, scores, _ = period
    kwargs = dict(reference=ref, n_chunks=4, metrics=METRICS, calibration="isotonic",
                  random_seed=5)
    posterior, plugin = cbpe(scores, **kwargs), cbpe(scores, calibration_uncertainty=False,
                                                     **kwargs)
    assert "integrated over 400 draws" in posterior.meta["description"]
    assert posterior.meta["calibration_uncertainty"]
    assert not any("conditional" in w for w in posterior.warnings)
    assert not plugin.meta["calibration_uncertainty"]
    assert any("conditional on the calibration map" in w for w in plugin.warnings)
    ratio = posterior.closed_form["sd"] / plugin.closed_form["sd"]
    assert (ratio > 1.0).all()
    assert (ratio.sel(chunk="all") > ratio.isel(chunk=0)).all()  # a shared error: longer, wider
    xr.testing.assert_allclose(posterior.closed_form["plugin"], plugin.closed_form["plugin"])
    noisy = cbpe(scores, noise="beta", kappa=50.0, **{**kwargs, "metrics": METRICS[:4]})
    assert any("integrated with noise='none' only" in w for w in noisy.warnings)


@pytest.mark.parametrize("class_conditional", [True, False])
def test_check_compares_with_labels_drawn_from_the_drawn_maps(period, class_conditional):
    """The forward simulation picks a drawn map, then labels: independent of the shifted
    laws. Replacing the fast path by the plug-in (conditional on the map) must fail."""
    ref, scores, _ = period
    ev = cbpe(scores[:2000], reference=ref, n_chunks=2, metrics=METRICS, method="both",
              calibration="platt", class_conditional=class_conditional, random_seed=6,
              draws=4000)
    assert ev.check().attrs["passed"]
    plugin = cbpe(scores[:2000], reference=ref, n_chunks=2, metrics=METRICS,
                  calibration="platt", class_conditional=class_conditional, random_seed=6,
                  calibration_uncertainty=False)
    swapped = Evaluation.create(method="cbpe", variant="both", closed_form=plugin.closed_form,
                                draws=ev.tree, estimand="prior/value", iid_draws=True)
    assert not swapped.check().attrs["passed"]


def test_shift_of_the_scores_is_reported_per_chunk():
    rng = np.random.default_rng(7)
    ref = _overconfident(1000, rng)
    same = cbpe(_overconfident(2000, rng)[0], reference=ref, n_chunks=2, metrics=["accuracy"],
                random_seed=8)
    moved = cbpe(_overconfident(2000, rng, a=6.0, b=1.0)[0], reference=ref, n_chunks=2,
                 metrics=["accuracy"], random_seed=8)
    assert (same.closed_form["sparse_share"] < 0.1).all()  # the tails of the reference
    assert not any("sparse_share" in w for w in same.warnings)
    assert (moved.closed_form["sparse_share"] > 0.1).all()
    assert any("sparse_share" in w for w in moved.warnings)


def test_reference_chunks_have_no_short_tail():
    rng = np.random.default_rng(9)
    ref = _overconfident(1002, rng)
    ev = cbpe(_overconfident(500, rng)[0], reference=ref, chunk_size=100,
              metrics=["precision"], calibration="none")
    assert int(ev.tree["data"]["reference_chunks"]) == 10
    assert np.isfinite(ev.closed_form["lower_threshold"].isel(chunk=0)).all()


def test_roc_auc_mean_counts_the_single_class_labellings_as_zero_division():
    """Six rows: the mean of ROC-AUC over the 64 labellings, zero_division where one class."""
    import itertools

    from sklearn.metrics import roc_auc_score

    s = np.array([0.05, 0.2, 0.3, 0.6, 0.7, 0.9])
    exact = 0.0
    for y in itertools.product([0, 1], repeat=6):
        y = np.array(y)
        prob = np.prod(np.where(y == 1, s, 1 - s))
        exact += prob * (roc_auc_score(y, s) if 0 < y.sum() < 6 else 0.0)
    ev = cbpe(s, metrics=["roc_auc"], calibration="none")
    mean = float(ev.closed_form["mean"].sel(chunk="all", metric="roc_auc"))
    assert abs(mean - exact) < 0.01  # the delta method's own error at n = 6
