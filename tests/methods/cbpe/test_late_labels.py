"""Late labels in CBPE's estimate (late_labels="estimate"): the law of each chunk's realized
metric given its known labels, the unlabelled rows from a map learned on them (PEMI's law)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import special
from sklearn import metrics as skm

import bayeval as be
from bayeval.calibration import Platt
from bayeval.methods.cbpe.late_labels import MIN_CLASS_LABELS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SKLEARN = {"accuracy": skm.accuracy_score, "f1": skm.f1_score, "recall": skm.recall_score,
           "mcc": skm.matthews_corrcoef, "roc_auc": skm.roc_auc_score}


def weeks_with_drift(rng, per_day=50):
    """12 weeks of daily rows; from week 9 P(Y=1 | s) drops by 1.5 in log-odds (concept
    drift); 30 % of the rows of weeks 9-12 labelled (at random)."""
    stamps = np.repeat(pd.date_range("2024-01-01", periods=84, freq="D"), per_day)
    week = np.arange(stamps.size) // (7 * per_day)
    s = rng.beta(2, 2, stamps.size)
    y = (rng.random(s.size) < special.expit(special.logit(s) - 1.5 * (week >= 8))).astype(float)
    labels = np.where((week >= 8) & (rng.random(s.size) < 0.3), y, np.nan)
    return pd.DataFrame({"score": s, "label": labels, "ts": stamps}), y, week


def test_weekly_monitoring_with_drift_moves_to_the_truth():
    rng = np.random.default_rng(7)
    ref = rng.beta(2, 2, 4000)
    reference = (ref, (rng.random(4000) < ref).astype(int))
    frame, y, week = weeks_with_drift(rng)
    common = dict(reference=reference, labels=frame["label"], chunks=frame["ts"],
                  chunk_period="W", metrics=["accuracy", "f1"], random_seed=0)
    report = be.cbpe(frame["score"], **common).closed_form
    folded = be.cbpe(frame["score"], late_labels="estimate", **common).closed_form
    assert "late_labels" not in report
    used = folded["late_labels"].values.tolist()
    assert used == ["none"] * 8 + ["learned"] * 4 + ["combined"]
    pred = frame["score"].to_numpy() >= 0.5
    truth = np.array([[skm.accuracy_score(y[r], pred[r]), skm.f1_score(y[r], pred[r])]
                      for r in [*(week == w for w in range(12)), slice(None)]])
    inside = (folded["lower"] <= truth) & (truth <= folded["upper"])
    missed = (report["lower"] > truth) | (truth > report["upper"])
    assert bool(inside[8:].all()), folded[["lower", "upper"]].isel(chunk=slice(8, None))
    assert bool(missed.sel(metric="accuracy")[8:12].any())  # the drift CBPE cannot see
    # the unlabelled chunks keep CBPE's law; the labelled ones move toward their truth
    assert np.array_equal(report["mean"][:8], folded["mean"][:8])
    gap = abs(folded["mean"] - truth)[8:12]
    assert bool((gap < abs(report["mean"] - truth)[8:12]).all())
    # the whole period's accuracy is narrower: 30 % of four weeks known (F1's law sits at
    # another point under the drift, and its width with it)
    width = (folded["upper"] - folded["lower"]).sel(chunk="all", metric="accuracy")
    assert width < (report["upper"] - report["lower"]).sel(chunk="all", metric="accuracy")
    # realized stays that of the labelled rows
    assert np.array_equal(report["realized"], folded["realized"], equal_nan=True)


def _small_chunk(rng, n_labelled=40, n_unlabelled=7):
    s = rng.beta(2, 2, n_labelled + n_unlabelled)
    y = (rng.random(s.size) < special.expit(special.logit(s) - 0.5)).astype(float)
    labels = y.copy()
    labels[n_labelled:] = np.nan
    return s, labels


def _enumerated(s, labels, q, metric):
    """The exact PMF of the metric over every labelling of the unlabelled rows."""
    unknown = np.flatnonzero(np.isnan(labels))
    pred = (s >= 0.5).astype(int)
    law = {}
    for bits in itertools.product([0, 1], repeat=unknown.size):
        y = labels.copy()
        y[unknown] = bits
        prob = np.prod(np.where(bits, q[unknown], 1 - q[unknown]))
        value = (SKLEARN[metric](y, s) if metric == "roc_auc" else
                 SKLEARN[metric](y, pred, **({} if metric in ("accuracy", "mcc") else
                                             {"zero_division": 0})))
        law[value] = law.get(value, 0.0) + prob
    values = np.array(sorted(law))
    probs = np.array([law[v] for v in values])
    first = np.r_[True, np.diff(values) > 1e-12]  # equal rationals computed two ways
    return values[first], np.add.reduceat(probs, np.flatnonzero(first))


@pytest.mark.parametrize("mnar", [None, 0.7])
def test_a_chunk_map_law_equals_the_enumeration_of_every_labelling(mnar):
    rng = np.random.default_rng(3)
    s, labels = _small_chunk(rng)
    metrics = list(SKLEARN)
    ev = be.cbpe(s, labels=labels, late_labels="estimate", mnar=mnar, calibration="none",
                 calibration_uncertainty=False, metrics=metrics)
    cf = ev.closed_form.sel(chunk="all")
    assert ev.closed_form["late_labels"].values.tolist() == ["learned", "combined"]
    known = ~np.isnan(labels)
    cal = Platt().fit(s[known], labels[known])
    q = special.expit(special.logit(cal.predict(s)) + (mnar or 0.0))
    for metric in metrics:
        values, probs = _enumerated(s, labels, q, metric)
        got = cf.sel(metric=metric)
        keep = np.isfinite(got["pmf_value"].values) & (got["pmf_prob"].values > 0)
        np.testing.assert_allclose(got["pmf_value"].values[keep], values, atol=1e-12)
        np.testing.assert_allclose(got["pmf_prob"].values[keep], probs, atol=1e-12)
        assert float(got["mean"]) == pytest.approx(values @ probs, abs=1e-12)
    # PEMI on the same rows gives the same law
    pemi = be.pemi(s, labels, calibration="platt", calibration_uncertainty=False,
                   method="exact", mnar=mnar, metrics=["accuracy", "f1"])
    for metric in ("accuracy", "f1"):
        assert float(cf["mean"].sel(metric=metric)) == pytest.approx(
            float(pemi.closed_form["mean"].sel(metric=metric)), abs=1e-12)


def test_too_few_labels_fix_them_and_keep_the_reference_map():
    rng = np.random.default_rng(5)
    s, labels = _small_chunk(rng, n_labelled=12, n_unlabelled=7)
    labels[:12] = np.r_[np.ones(MIN_CLASS_LABELS - 1), np.zeros(3)]  # 9 positives: too few
    ev = be.cbpe(np.r_[rng.beta(2, 2, 30), s], labels=np.r_[np.full(30, np.nan), labels],
                 chunks=np.repeat(["a", "b"], [30, s.size]), late_labels="estimate",
                 calibration="none", metrics=["accuracy", "f1", "roc_auc"])
    cf = ev.closed_form
    assert cf["late_labels"].values.tolist() == ["none", "fixed", "combined"]
    assert any("fewer than 10 labels of a class" in w for w in ev.warnings)
    for metric in ("accuracy", "f1", "roc_auc"):  # the scores are the reference's map here
        values, probs = _enumerated(s, labels, s, metric)
        got = cf.sel(chunk="b", metric=metric)
        keep = got["pmf_prob"].values > 0
        np.testing.assert_allclose(got["pmf_value"].values[keep], values, atol=1e-12)
        np.testing.assert_allclose(got["pmf_prob"].values[keep], probs, atol=1e-12)


def test_the_whole_period_adds_the_chunks_and_the_map_posterior_widens():
    rng = np.random.default_rng(11)
    s = rng.beta(2, 2, 900)
    y = (rng.random(900) < special.expit(special.logit(s) - 1.0)).astype(float)
    labels = np.where(rng.random(900) < 0.4, y, np.nan)
    labels[:300] = np.nan
    common = dict(labels=labels, n_chunks=3, late_labels="estimate", calibration="none",
                  metrics=["accuracy"])
    plug = be.cbpe(s, calibration_uncertainty=False, **common).closed_form
    # plug-in: independent rows, so the whole period's mean and variance are the chunks' sums
    n = np.r_[plug["n"].values[:3]]
    chunk_mean, chunk_var = plug["mean"].values[:3, 0] * n, (plug["sd"].values[:3, 0] * n) ** 2
    whole = plug.sel(chunk="all", metric="accuracy")
    assert float(whole["mean"]) * 900 == pytest.approx(chunk_mean.sum(), abs=1e-9)
    assert (float(whole["sd"]) * 900) ** 2 == pytest.approx(chunk_var.sum(), rel=1e-9)
    mixed = be.cbpe(s, random_seed=1, **common).closed_form
    assert bool((mixed["sd"] > plug["sd"]).sel(chunk=["[300:599]", "[600:899]", "all"]).all())
    # the mixture over the map's posterior is centred near the plug-in (Jeffreys' posterior:
    # a bias of order 1/labels), within 4 Monte-Carlo SEs of its 400 draws
    between = np.sqrt(mixed["sd"] ** 2 - plug["sd"] ** 2)
    assert bool((abs(mixed["mean"] - plug["mean"]) <= 4 * between / 20 + 0.01).all())


def test_a_prior_on_delta_tends_to_the_fixed_shift():
    rng = np.random.default_rng(2)
    s, labels = _small_chunk(rng, n_labelled=60, n_unlabelled=200)
    common = dict(labels=labels, late_labels="estimate", calibration="none",
                  calibration_uncertainty=False, metrics=["precision", "recall"])
    fixed = be.cbpe(s, mnar=-0.8, **common).closed_form
    narrow = be.cbpe(s, mnar=(-0.8, 1e-9), random_seed=0, **common).closed_form
    wide = be.cbpe(s, mnar=(-0.8, 1.0), random_seed=0, **common).closed_form
    np.testing.assert_allclose(narrow["mean"], fixed["mean"], atol=1e-8)
    np.testing.assert_allclose(narrow["sd"], fixed["sd"], rtol=1e-6)
    assert bool((wide["sd"] > fixed["sd"]).all())
    mar = be.cbpe(s, **common).closed_form  # a negative shift: fewer positives unlabelled
    assert bool((fixed["mean"].sel(metric="precision") < mar["mean"].sel(metric="precision"))
                .all())


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(late_labels="fold"), "late_labels"),
    (dict(late_labels="estimate", noise="beta", kappa=50.0), "noise='beta'"),
    (dict(late_labels="estimate", method="pymc"), "method='pymc'"),
    (dict(mnar=0.5), "mnar= shifts"),
    (dict(late_labels="estimate", mnar="high"), "mnar must be"),
    (dict(late_labels="estimate", mnar=(0.0, -1.0)), "mnar must be"),
    (dict(late_labels="estimate", mnar=np.nan), "mnar must be"),
])
def test_bad_late_labels_arguments(kwargs, match):
    s = np.linspace(0.1, 0.9, 20)
    with pytest.raises(ValueError, match=match):
        be.cbpe(s, labels=np.r_[np.ones(10), np.full(10, np.nan)], calibration="none",
                **kwargs)


def test_k_classes_refuse_estimate():
    p = np.full((6, 3), 1 / 3)
    with pytest.raises(ValueError, match="K classes"):
        be.cbpe(p, labels=np.zeros(6), late_labels="estimate")
