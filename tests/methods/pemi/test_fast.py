"""PEMI's closed forms (PEMI-Gauss, the exact laws, their MNAR mixtures) against enumeration.

The oracle enumerates all 2^8 completions of the missing labels of a 12-row test set (tied
scores, known rows of both classes) with their probabilities; every statement about a law is
then exact, and Monte-Carlo statements get 4-sigma tolerances (bayeval.check.compare).
"""

import numpy as np
import pytest
from scipy import special

from bayeval.check import compare
from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.fast import Options
from bayeval.methods.pemi.protocol import metric_values
from bayeval.metrics import confusion_counts

NAN = np.nan
SCORES = np.array([0.9, 0.8, 0.8, 0.7, 0.6, 0.55, 0.4, 0.4, 0.3, 0.2, 0.1, 0.8])
LABELS = np.array([1, NAN, NAN, 0, NAN, 1, NAN, NAN, 0, NAN, NAN, NAN])
P = np.array([0.5, 0.85, 0.6, 0.5, 0.55, 0.5, 0.3, 0.45, 0.5, 0.25, 0.05, 0.7])
Y_PRED = (SCORES >= 0.5).astype(np.int8)
CM = ("accuracy", "precision", "recall", "f1", "specificity", "npv", "balanced_accuracy", "mcc")


def completions(labels=LABELS, p=P):
    """All completions of the missing labels (rows) and their probabilities."""
    miss = np.flatnonzero(np.isnan(labels))
    bits = (np.arange(2**miss.size)[:, None] >> np.arange(miss.size)) & 1
    y = np.repeat(np.nan_to_num(labels)[None, :], bits.shape[0], axis=0).astype(np.int8)
    y[:, miss] = bits
    return y, np.prod(np.where(bits == 1, p[miss], 1 - p[miss]), axis=1)


def enumerated(metric, labels=LABELS, p=P, scores=SCORES, y_pred=Y_PRED, **opts):
    """Exact law (sorted values, probabilities) of a metric by enumeration."""
    y, w = completions(labels, p)
    values = metric_values(scores, y, y_pred, (metric,), Options(**opts))[:, 0]
    support, index = np.unique(values, return_inverse=True)
    return support, np.bincount(index, weights=w)


def moments_of(values, probs):
    mean = values @ probs
    return mean, (values - mean) ** 2 @ probs


def ratio_parts(metric, y):
    """Numerator and denominator of a metric on each completion (Z and W of the paper's ratio
    form, Theorems 2-3)."""
    tp, fp, fn, _ = (c.astype(float) for c in confusion_counts(y, Y_PRED))
    if metric == "recall":
        return tp, tp + fn
    if metric == "f1":
        return 2 * tp, 2 * tp + fp + fn
    xi = (SCORES[:, None] > SCORES[None, :]) + 0.5 * (SCORES[:, None] == SCORES[None, :])
    num = np.einsum("bi,ij,bj->b", y, xi, 1 - y)
    return num, y.sum(1) * (1.0 - y).sum(1)


# ------------------------------------------------------------------------ enumeration oracles
@pytest.mark.parametrize("metric", [*CM, "roc_auc"])
def test_pemi_draws_follow_the_enumerated_law(metric):
    values, probs = enumerated(metric)
    ev = pemi(SCORES, LABELS, p=P, metrics=metric, method="impute", draws=40_000,
              random_seed=7)
    cdf = np.cumsum(probs)
    lo, hi = values[np.argmax(cdf >= 0.05)], values[np.argmax(cdf >= 0.95)]
    mass = probs[(values >= lo) & (values <= hi)].sum()
    mean, var = moments_of(values, probs)
    rows = compare(ev.draws.sel(metric=metric).values, mean=mean, sd=np.sqrt(var),
                   interval=(lo, hi), interval_mass=mass, pmf=(values, probs), iid=True)
    assert rows["passed"].all(), rows


@pytest.mark.parametrize("metric", ["accuracy", "precision", "npv"])
def test_gauss_is_exact_for_linear_metrics(metric):
    mean, var = moments_of(*enumerated(metric))
    cf = pemi(SCORES, LABELS, p=P, metrics=metric, method="gauss").closed_form.sel(metric=metric)
    assert float(cf["mean"]) == pytest.approx(mean, abs=1e-12)
    assert float(cf["sd"]) ** 2 == pytest.approx(var, abs=1e-12)


@pytest.mark.parametrize("metric", ["recall", "f1", "roc_auc"])
@pytest.mark.parametrize("second_order", [False, True])
def test_gauss_ratio_moments_are_the_delta_method_of_the_enumerated_moments(metric,
                                                                            second_order):
    y, w = completions()
    z, d = ratio_parts(metric, y)
    mz, md = z @ w, d @ w
    vz, vd, c = (z - mz) ** 2 @ w, (d - md) ** 2 @ w, (z - mz) * (d - md) @ w
    mean = mz / md - (c / md**2 - mz * vd / md**3 if second_order else 0.0)
    var = (mz**2 * vd + md**2 * vz - 2 * mz * md * c) / md**4
    cf = pemi(SCORES, LABELS, p=P, metrics=metric, second_order=second_order,
              method="gauss").closed_form
    assert float(cf["mean"].sel(metric=metric)) == pytest.approx(mean, rel=1e-12)
    assert float(cf["sd"].sel(metric=metric)) ** 2 == pytest.approx(var, rel=1e-10)


def test_exact_pmf_with_a_fixed_mnar_shift_is_the_enumerated_one():
    shifted = special.expit(special.logit(P) + 0.7)
    ds = pemi(SCORES, LABELS, p=P, mnar=0.7, metrics=("recall", "f1"),
              method="exact").closed_form
    for metric in ("recall", "f1"):
        values, probs = enumerated(metric, p=shifted)
        row = ds.sel(metric=metric)
        keep = np.isfinite(row["pmf_prob"].values)
        np.testing.assert_array_equal(row["pmf_value"].values[keep], values)
        np.testing.assert_allclose(row["pmf_prob"].values[keep], probs, rtol=0, atol=1e-12)


def test_exact_mixture_over_a_delta_prior_integrates_the_enumerated_laws():
    x, w = special.roots_hermitenorm(120)
    w = w / w.sum()
    values, _ = enumerated("f1")
    truth = np.zeros(values.size)
    for node, weight in zip(0.4 + 0.9 * x, w, strict=True):
        v, pr = enumerated("f1", p=special.expit(special.logit(P) + node))
        truth[np.searchsorted(values, v)] += weight * pr
    row = pemi(SCORES, LABELS, p=P, mnar=(0.4, 0.9), metrics="f1",
               method="exact").closed_form.sel(metric="f1")
    keep = np.isfinite(row["pmf_prob"].values)
    np.testing.assert_allclose(row["pmf_prob"].values[keep], truth, rtol=0, atol=1e-9)


def test_impute_with_a_delta_prior_follows_the_exact_mixture():
    exact = pemi(SCORES, LABELS, p=P, mnar=(0.4, 0.9), metrics="recall",
                 method="exact").closed_form.sel(metric="recall")
    keep = np.isfinite(exact["pmf_prob"].values)
    draws = pemi(SCORES, LABELS, p=P, mnar=(0.4, 0.9), metrics="recall", method="impute",
                 draws=40_000, random_seed=3).draws.sel(metric="recall").values
    rows = compare(draws, mean=float(exact["mean"]), sd=float(exact["sd"]),
                   interval=(float(exact["lower"]), float(exact["upper"])),
                   interval_mass=float(exact["interval_mass"]),
                   pmf=(exact["pmf_value"].values[keep], exact["pmf_prob"].values[keep]),
                   iid=True)
    assert rows["passed"].all(), rows


def test_probability_of_an_undefined_metric_is_exact_in_every_path():
    labels = np.array([NAN, NAN, NAN, 0, NAN, 0, NAN, NAN, 0, NAN, NAN, NAN])  # no known positive
    p = np.full(12, 0.2)
    _, w = completions(labels, p)
    y, _ = completions(labels, p)
    truth = w[y.sum(1) == 0].sum()  # recall is undefined without positives
    with pytest.warns(UserWarning, match="PEMI-Gauss ignores that event"):
        gauss = pemi(SCORES, labels, p=p, metrics="recall", method="gauss").closed_form
    exact = pemi(SCORES, labels, p=p, metrics="recall", method="exact").closed_form
    for cf in (gauss, exact):
        assert float(cf["p_undefined"].sel(metric="recall")) == pytest.approx(truth, abs=1e-15)
    draws = pemi(SCORES, labels, p=p, metrics="recall", method="impute", zero_division=np.nan,
                 draws=20_000, random_seed=1).draws.values
    frac = np.isnan(draws).mean()
    assert abs(frac - truth) <= 4 * np.sqrt(truth * (1 - truth) / draws.size)


def test_undefined_in_every_completion_takes_zero_division():
    ev = pemi(SCORES, LABELS, y_pred=np.zeros(12), p=P, metrics="precision", zero_division=1.0)
    cf = ev.closed_form.sel(metric="precision")
    assert (float(cf["mean"]), float(cf["sd"]), float(cf["p_undefined"])) == (1.0, 0.0, 1.0)
    auc = pemi(SCORES, np.full(12, NAN), p=np.zeros(12), metrics="roc_auc").closed_form
    assert float(auc["p_undefined"].item()) == 1.0 and float(auc["mean"].item()) == 0.0
