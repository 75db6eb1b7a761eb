"""PEMI's baselines, scores and the paper's protocol (its §6) on the breast-cancer data.

The classifier is a logistic regression on two features, mean texture and mean smoothness
(ROC-AUC about 0.83). With all 30 features the classes are nearly separable (AUC 0.99): most
missing labels are then certain, every metric's law is a few lattice points, and a PIT says
little about any method. Folds of 5 (test folds of about 114 rows) are masked at 30 % of the fold.
"""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from bayeval.calibration import make_calibrator
from bayeval.methods.pemi import protocol
from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.fast import Rows
from bayeval.methods.pemi.models import map_posterior, predictive
from bayeval.metrics import roc_auc

METRICS = ("precision", "recall", "f1")
FEATURES = [1, 4]  # mean texture, mean smoothness


def breast_cancer_protocol(**kwargs):
    data = load_breast_cancer()
    return protocol.replications(data.data[:, FEATURES], 1 - data.target, n_folds=5, p_m=0.3,
                                 mask_base="fold", calib_fraction=0.2, **kwargs)


def test_pit_distances_are_the_exact_integrals():
    u = np.random.default_rng(0).random(37)
    ks, w1 = protocol.pit_distances(u)
    t = np.linspace(0, 1, 2_000_001)
    gap = np.abs(np.searchsorted(np.sort(u), t, side="right") / u.size - t)
    assert w1 == pytest.approx(np.trapezoid(gap, t), abs=1e-6)
    assert ks == pytest.approx(gap.max(), abs=1e-6)
    assert protocol.pit_distances(np.linspace(0.5 / 50, 1 - 0.5 / 50, 50)) == pytest.approx(
        (0.01, 0.005), abs=1e-15)


def test_randomised_pit_of_a_discrete_law_is_uniform():
    rng = np.random.default_rng(1)
    draws = rng.binomial(3, 0.4, size=(4000, 400)).astype(float)  # predictive draws
    truth = rng.binomial(3, 0.4, size=4000)
    pit = protocol.pit_draws(truth, draws, random_seed=2)
    ks, _ = protocol.pit_distances(pit)
    assert ks <= 1.95 / np.sqrt(truth.size) + 1 / 400  # DKW at 0.001, plus the ECDF's grain


def test_bootstrap_counts_and_weighted_auc_match_explicit_resamples():
    rng = np.random.default_rng(3)
    scores = np.round(rng.random(60), 1)  # ties
    labels = (rng.random(60) < scores).astype(float)
    labels[rng.random(60) < 0.3] = np.nan
    y_pred = (scores >= 0.5).astype(np.int8)
    metrics = ("accuracy", "precision", "recall", "f1", "roc_auc")
    boot = protocol.complete_case_bootstrap(scores, labels, y_pred, metrics, n_boot=5,
                                            random_seed=4)
    known = ~np.isnan(labels)
    s, y, yp = scores[known], labels[known].astype(np.int8), y_pred[known]
    weights = np.random.default_rng(4).multinomial(y.size, np.full(y.size, 1 / y.size), size=5)
    for b, w in enumerate(weights):
        idx = np.repeat(np.arange(y.size), w)
        cm = protocol.metric_values(s[idx], y[idx], yp[idx], metrics[:4])
        np.testing.assert_allclose(boot[b, :4], cm, rtol=0, atol=1e-14)
        assert boot[b, 4] == pytest.approx(roc_auc(y[idx], s[idx]), abs=1e-14)


def test_definitional_bounds_impute_the_prediction_or_its_opposite():
    scores = np.array([0.9, 0.7, 0.4, 0.2, 0.6])
    labels = np.array([1, np.nan, 0, np.nan, 0])
    y_pred = (scores >= 0.5).astype(np.int8)
    best, worst = protocol.definitional_bounds(scores, labels, y_pred, ("accuracy", "precision"))
    np.testing.assert_allclose(best, [4 / 5, 2 / 3])
    np.testing.assert_allclose(worst, [2 / 5, 1 / 3])


def test_mcar_pemi_gauss_calibrated_beats_the_complete_case_bootstrap():
    """Table 3's direction: W1 of the PIT, 100 replications, MCAR p_m = 0.3."""
    pits = {"gauss": [], "bootstrap": []}
    cache = {}
    for r in breast_cancer_protocol(n_repeats=10, random_seed=0):
        if r.fold not in cache:  # one scaling-binning calibrator per fold, both halves
            cache = {r.fold: make_calibrator("scaling_binning").fit(*r.reference)}
        y_pred = (r.scores >= 0.5).astype(np.int8)
        truth = protocol.metric_values(r.scores, r.y_true, y_pred, METRICS)
        cf = pemi(r.scores, r.labels, p=cache[r.fold].predict(r.scores), metrics=METRICS,
                  method="gauss").closed_form
        pits["gauss"].append(protocol.pit_normal(truth, cf["mean"].values, cf["sd"].values))
        boot = protocol.complete_case_bootstrap(r.scores, r.labels, y_pred, METRICS,
                                                n_boot=2000, random_seed=r.fold)
        pits["bootstrap"].append(protocol.pit_draws(truth, boot.T, random_seed=r.fold))
    w1 = {k: np.array([protocol.pit_distances(col)[1] for col in np.array(v).T])
          for k, v in pits.items()}
    assert len(pits["gauss"]) == 100
    # the noise floor of W1 for 100 uniform PITs is about 0.03: require a margin
    assert (w1["gauss"] < w1["bootstrap"] - 0.03).all(), w1


def test_m3_with_the_true_delta_covers_the_true_metric_under_mnar():
    """Label-dependent MNAR (eta = 0.8 of the masked labels positive, prevalence 0.37): M3's
    predictive with the true shift delta = log(r1/r0), the map's posterior drawn from the
    calibration split by quadrature (M3's fast path), covers the fold's true metric as often as
    its 90 % intervals hold mass (equal-tailed intervals of discrete draws hold at least 90 %).
    200 replications, 4-sigma binomial tolerance. The same draws with delta = 0 (MAR)
    under-cover precision and recall, so the test can fail."""
    covered, mass, covered_mar = [], [], []
    for r in breast_cancer_protocol(n_repeats=20, mechanism="mnar", eta=0.8, random_seed=1):
        y_pred = (r.scores >= 0.5).astype(np.int8)
        truth = protocol.metric_values(r.scores, r.y_true, y_pred, METRICS)
        rows = Rows(r.scores, y_pred, r.labels)
        a, b = map_posterior(*r.reference, size=2000, random_seed=r.fold)
        for delta, cov in ((r.delta, covered), (0.0, covered_mar)):
            draws = predictive(rows, METRICS, a, b, delta, random_seed=r.fold)
            lo, hi = np.quantile(draws, [0.05, 0.95], axis=0, method="inverted_cdf")
            cov.append((truth >= lo) & (truth <= hi))
            if delta:
                mass.append(((draws >= lo) & (draws <= hi)).mean(0))
    covered, mass = np.array(covered), np.array(mass)
    n = covered.shape[0]
    assert n == 200
    tolerance = 4 * np.sqrt((mass * (1 - mass)).sum(0)) / n
    assert (np.abs(covered.mean(0) - mass.mean(0)) <= tolerance).all(), (
        covered.mean(0), mass.mean(0), tolerance)
    # MAR covers about 0.84 and 0.76 of precision and recall here
    assert (np.mean(covered_mar, axis=0)[:2] < mass.mean(0)[:2] - tolerance[:2]).all()


def test_m3_entry_point_runs_the_same_quadrature_draws():
    r = next(breast_cancer_protocol(mechanism="mnar", eta=0.8, random_seed=1))
    ev = pemi(r.scores, r.labels, reference=r.reference, mnar=r.delta, metrics=METRICS,
              method="quadrature", draws=500, random_seed=5)
    post = ev.tree["posterior"].to_dataset()
    rows = Rows(r.scores, (r.scores >= 0.5).astype(np.int8), r.labels)
    again = predictive(rows, METRICS, post["a"].values, post["b"].values, r.delta,
                       random_seed=np.random.default_rng([5, 1, 2]))
    np.testing.assert_array_equal(ev.draws.values[0], again)
    assert np.all(post["delta"].values == r.delta)
