"""Simulators produce the laws they state (4-sigma tolerances) and are reproducible."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bayeval import datasets


def test_calibrated_scores_are_calibrated():
    d = datasets.calibrated_scores(40000, a=2, b=5, random_seed=1)
    s, y = d.scores, d.labels
    for lo, hi in [(0, 0.2), (0.2, 0.4), (0.4, 1.0)]:
        inbin = (s >= lo) & (s < hi)
        sd = np.sqrt(np.sum(s[inbin] * (1 - s[inbin]))) / inbin.sum()
        assert abs(y[inbin].mean() - s[inbin].mean()) <= 4 * sd
    np.testing.assert_array_equal(d.y_pred, s >= 0.5)


def test_noisy_judge_has_its_rates():
    d = datasets.noisy_judge(20000, 10, prevalence=0.3, sensitivity=0.85, specificity=0.7,
                             random_seed=2)
    for rate, sel, expected in [(d.yhat[d.y == 1].mean(), d.y == 1, 0.85),
                                (1 - d.yhat[d.y == 0].mean(), d.y == 0, 0.7)]:
        assert abs(rate - expected) <= 4 * np.sqrt(expected * (1 - expected) / sel.sum())
    assert abs(d.y.mean() - 0.3) <= 4 * np.sqrt(0.21 / 20000)
    assert d.yhat_unlabeled.shape == (10,)


def test_weak_labels_follow_the_dawid_skene_model():
    acc, prop = (0.9, 0.7), (0.6, 0.3)
    d = datasets.weak_labels(30000, prior=(0.3, 0.7), accuracy=acc, propensity=prop,
                             random_seed=3)
    z, y = d.weak_labels, d.labels
    for j in range(2):
        voted = z[:, j] >= 0
        assert abs(voted.mean() - prop[j]) <= 4 * np.sqrt(prop[j] * (1 - prop[j]) / len(y))
        hit = (z[voted, j] == y[voted]).mean()
        assert abs(hit - acc[j]) <= 4 * np.sqrt(acc[j] * (1 - acc[j]) / voted.sum())
    np.testing.assert_allclose(d.p_y_given_z.sum(axis=1), 1.0, atol=1e-12)
    # the oracle P(Y = 1 | Z) is calibrated: its mean matches the labels' mean in every cell
    cells = z[:, 0] * 3 + z[:, 1]
    for cell in np.unique(cells):
        inc = cells == cell
        p = d.p_y_given_z[inc, 1]
        assert np.ptp(p) < 1e-12
        assert abs(y[inc].mean() - p[0]) <= 4 * np.sqrt(p[0] * (1 - p[0]) / inc.sum()) + 1e-12


def test_mask_labels_mcar_and_mnar():
    y = np.r_[np.ones(300), np.zeros(700)].astype(int)
    mcar = datasets.mask_labels(y, p_m=0.2, random_seed=4)
    assert mcar.mask.sum() == 200 and np.isnan(mcar.labels).sum() == 200
    np.testing.assert_array_equal(mcar.labels[~mcar.mask], y[~mcar.mask])
    mnar = datasets.mask_labels(y, p_m=0.3, mechanism="mnar", eta=0.8, random_seed=4)
    assert mnar.mask.sum() == 300 and mnar.eta == pytest.approx(0.8)
    capped = datasets.mask_labels(y, p_m=0.5, mechanism="mnar", eta=0.9, random_seed=4)
    assert capped.mask.sum() == 500 and capped.eta == pytest.approx(300 / 500)


def test_mask_labels_bad_input():
    with pytest.raises(ValueError, match="mechanism='mnar' needs eta"):
        datasets.mask_labels([0, 1], p_m=0.5, mechanism="mnar")
    with pytest.raises(ValueError, match="p_m must lie in"):
        datasets.mask_labels([0, 1], p_m=1.5)
    with pytest.raises(ValueError, match="labels must be binary"):
        datasets.mask_labels([0, 2], p_m=0.5)


def test_breast_cancer_is_a_good_reproducible_classifier():
    a, b = datasets.breast_cancer(), datasets.breast_cancer()
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.scores.shape == a.labels.shape == (285,)
    assert roc_auc_score(a.labels, a.scores) > 0.97
    assert set(np.unique(a.labels)) == {0, 1}


def test_weak_labels_with_a_minimum_of_votes_keep_their_label_model():
    d = datasets.weak_labels(20000, min_votes=1, random_seed=5)
    assert ((d.weak_labels >= 0).sum(axis=1) >= 1).all()
    free = datasets.weak_labels(20000, random_seed=5)
    assert ((free.weak_labels >= 0).sum(axis=1) == 0).any()
    # the oracle P(Y = 1 | Z) stays calibrated in every cell
    cells = np.ravel_multi_index((d.weak_labels + 1).T, (3, 3, 3))
    for cell in np.unique(cells):
        inc = cells == cell
        p = d.p_y_given_z[inc, 1][0]
        assert abs(d.labels[inc].mean() - p) <= 4 * np.sqrt(p * (1 - p) / inc.sum()) + 1e-12
    with pytest.raises(ValueError, match="min_votes must be between 0 and the 3"):
        datasets.weak_labels(10, min_votes=4)


def test_weak_labels_with_certain_rates_are_defined():
    """Propensity or accuracy of exactly 1 (log 0 for impossible events) warns nothing and
    gives a proper posterior: a perfect labelling function that always votes fixes P(Y | Z)."""
    d = datasets.weak_labels(300, accuracy=(1.0, 0.6), propensity=(1.0, 0.5), random_seed=4)
    assert np.isfinite(d.p_y_given_z).all()
    np.testing.assert_array_equal(d.p_y_given_z.argmax(axis=1), d.labels)
    np.testing.assert_allclose(d.p_y_given_z.max(axis=1), 1.0)
