"""CBPE's other outputs (confusion-matrix cells, business value, average precision): their laws
against exact enumeration of the labels, NannyML's estimates against direct transcriptions,
thresholds, realized values, coverage and bad input."""

from itertools import product

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, confusion_matrix
from threadpoolctl import threadpool_limits

from bayeval import datasets
from bayeval.methods.cbpe.api import ALERT_SD, cbpe
from bayeval.methods.cbpe.fast import CountLaw, Window
from bayeval.methods.cbpe.kappa import beta_grid
from bayeval.methods.cbpe.outputs import (
    AP_DRAWS,
    CELLS,
    LinearLaw,
    Outputs,
    ap_draws,
    average_precision,
    nannyml_ap,
    value_law,
)

MATRIX = [[0.5, -2.25], [-5.0, 3.75]]  # [[tn, fp], [fn, tp]]


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(1, "blas"):
        yield


@pytest.fixture(scope="module")
def tiny():
    """Nine rows (two tied scores): every one of the 512 label vectors and its probability."""
    s = np.array([0.05, 0.2, 0.35, 0.35, 0.5, 0.62, 0.7, 0.85, 0.97])
    y = np.array(list(product([0, 1], repeat=s.size)), dtype=float)
    prob = np.prod(np.where(y == 1, s, 1 - s), axis=1)
    return s, (s >= 0.5).astype(int), y, prob


def enumerated(values, prob):
    """Mean, sd and the equal-tailed 0.9 interval of an enumerated law."""
    order = np.argsort(values, kind="stable")
    v, p = values[order], prob[order]
    mean = p @ v
    cdf, above = np.cumsum(p), 1 - np.cumsum(p)
    return mean, np.sqrt(p @ (v - mean) ** 2), v[np.argmax(cdf >= 0.05 - 1e-12)], \
        v[np.argmax(above <= 0.05 + 1e-12)]


def realized_values(y, y_pred, normalize, per_prediction):
    """Each label vector's cells and value, by scikit-learn's confusion matrix."""
    rows = []
    for labels in y:
        with np.errstate(all="ignore"):
            cm = confusion_matrix(labels, y_pred, labels=[0, 1], normalize=normalize)
        (tn, fp), (fn, tp) = np.nan_to_num(cm)
        counts = confusion_matrix(labels, y_pred, labels=[0, 1]).astype(float)
        if per_prediction:
            with np.errstate(all="ignore"):
                counts = np.nan_to_num(counts / counts.sum(axis=0, keepdims=True))
        rows.append([tp, tn, fp, fn, (np.array(MATRIX) * counts).sum()])
    return np.array(rows)


@pytest.mark.parametrize("normalize", [None, "all", "true", "pred"])
@pytest.mark.parametrize("per_prediction", [False, True])
def test_laws_equal_enumeration(tiny, normalize, per_prediction):
    s, y_pred, y, prob = tiny
    ev = cbpe(s, metrics=["confusion_matrix", "business_value"], calibration="none",
              normalize_confusion_matrix=normalize, business_value_matrix=MATRIX,
              normalize_business_value="per_prediction" if per_prediction else None,
              ci_prob=0.9)
    closed = ev.closed_form.sel(chunk="all")
    truth = realized_values(y, y_pred, normalize, per_prediction)
    for j, name in enumerate([*CELLS, "business_value"]):
        mean, sd, lower, upper = enumerated(truth[:, j], prob)
        row = closed.sel(metric=name)
        assert float(row["mean"]) == pytest.approx(mean, abs=1e-12), name
        assert float(row["sd"]) == pytest.approx(sd, abs=1e-12), name
        assert (float(row["lower"]), float(row["upper"])) == pytest.approx((lower, upper),
                                                                          abs=1e-12), name
        inside = prob[(truth[:, j] >= lower - 1e-12) & (truth[:, j] <= upper + 1e-12)].sum()
        assert float(row["interval_mass"]) == pytest.approx(inside, abs=1e-12), name
        assert bool(row["exact"])


def test_plugin_is_the_expected_confusion_matrix(tiny):
    """NannyML's estimate: the cells and value of (E TP, E FP, E FN, E TN), per normalisation."""
    s, y_pred, _, _ = tiny
    tp, fp = s[y_pred == 1].sum(), (1 - s[y_pred == 1]).sum()
    fn, tn = s[y_pred == 0].sum(), (1 - s[y_pred == 0]).sum()
    expected = {None: (tp, tn, fp, fn), "all": np.array([tp, tn, fp, fn]) / s.size,
                "true": (tp / (tp + fn), tn / (tn + fp), fp / (tn + fp), fn / (tp + fn)),
                "pred": (tp / (tp + fp), tn / (tn + fn), fp / (tp + fp), fn / (tn + fn))}
    (v_tn, v_fp), (v_fn, v_tp) = MATRIX
    for normalize, cells in expected.items():
        ev = cbpe(s, metrics=["confusion_matrix", "business_value"], calibration="none",
                  normalize_confusion_matrix=normalize, business_value_matrix=MATRIX)
        plugin = ev.closed_form["plugin"].sel(chunk="all")
        assert plugin.sel(metric=list(CELLS)).values == pytest.approx(cells, abs=1e-14)
        value = v_tp * tp + v_fp * fp + v_fn * fn + v_tn * tn
        assert float(plugin.sel(metric="business_value")) == pytest.approx(value, abs=1e-12)


def test_average_precision_against_scikit_learn_and_enumeration(tiny):
    s, y_pred, y, prob = tiny
    rng = np.random.default_rng(3)
    for labels in y[rng.choice(len(y), 40)]:
        if labels.any():
            assert average_precision(labels, s) == pytest.approx(
                average_precision_score(labels, s), abs=1e-12)
    truth = np.array([average_precision(labels, s, 0.0) for labels in y])
    mean, sd, _, _ = enumerated(truth, prob)
    draws = ap_draws(Window(s, s, y_pred == 1), np.random.default_rng(5), 100_000)
    draws = np.nan_to_num(draws)  # no positive: zero_division 0
    assert abs(draws.mean() - mean) <= 4 * sd / np.sqrt(draws.size)
    # each support value's frequency within 4 binomial SEs of its exact probability
    for value in np.unique(truth)[:: max(1, np.unique(truth).size // 12)]:
        p = prob[np.isclose(truth, value, atol=1e-9)].sum()
        seen = np.isclose(draws, value, atol=1e-6).mean()
        assert abs(seen - p) <= 4 * np.sqrt(p * (1 - p) / draws.size) + 1e-12, value


def test_average_precision_is_nannymls_estimate():
    """A line-by-line transcription of NannyML's estimate_ap, scores with ties."""
    rng = np.random.default_rng(1)
    scores = np.round(rng.random(500), 2)
    p = np.clip(scores + rng.normal(0, 0.05, 500), 0, 1)
    order = np.argsort(scores)[::-1]
    tps = np.round(np.cumsum(p[order]), 5)
    precision = np.r_[1, tps / np.arange(1, tps.size + 1)][::-1]
    recall = (np.r_[0, tps] / tps[-1])[::-1]
    assert nannyml_ap(p, scores) == pytest.approx(-np.sum(np.diff(recall) * precision[:-1]),
                                                  abs=1e-14)
    # through cbpe (uncalibrated: p = scores); its windows hold the rows sorted by score
    ev = cbpe(scores, metrics=["average_precision"], calibration="none", random_seed=0)
    plugin = ev.closed_form["plugin"].sel(chunk="all", metric="average_precision")
    assert float(plugin) == pytest.approx(nannyml_ap(scores, scores), abs=1e-12)


def test_mixture_law_equals_its_grid():
    """With shared Beta noise (a mixture over kappa), the business value's lazy ETI and masses
    equal those of its whole PMF."""
    rng = np.random.default_rng(2)
    cells = {"c": rng.uniform(0.1, 0.9, 6), "n": np.array([30, 25, 40, 35, 20, 28]),
             "y_pred": np.array([0, 0, 0, 1, 1, 1])}
    a, b, w = beta_grid(cells, [5.0, 40.0, 300.0], np.array([0.2, 0.5, 0.3]))
    law = CountLaw.beta_binomial(cells["n"], a, b, cells["y_pred"], w)
    out = Outputs(False, None, np.array(MATRIX), True, False)
    lazy = value_law(law, out)
    assert isinstance(lazy, LinearLaw)
    whole = lazy.grid()
    assert lazy.mean == pytest.approx(whole.mean, abs=1e-12)
    assert lazy.sd == pytest.approx(whole.sd, abs=1e-12)
    for ci in (0.5, 0.9, 0.99):
        assert lazy.interval_ends(ci, "eti") == pytest.approx(whole.interval_ends(ci, "eti"),
                                                              abs=1e-12)
    for lo, hi in ((-3.0, 1.0), (-1.5, -0.5), (float(whole.values[3]), float(whole.values[-4]))):
        assert lazy.mass(lo, hi) == pytest.approx(whole.mass(lo, hi), abs=1e-12)


def test_thresholds_realized_and_summary_rows():
    ref = datasets.calibrated_scores(3000, random_seed=4)
    new = datasets.calibrated_scores(1500, random_seed=5)
    ev = cbpe(new.scores, reference=(ref.scores, ref.labels), labels=new.labels, n_chunks=3,
              metrics=["accuracy", "confusion_matrix", "business_value"],
              business_value_matrix=MATRIX, calibration="none",
              alert_thresholds={"business_value": (-1e9, None)})
    closed = ev.closed_form
    first = str(closed["chunk"].values[0])
    # reference chunks of 500 rows: their realized true positives, mean +- 3 sd, lower >= 0
    pred = ref.scores >= 0.5
    tps = [(ref.labels[r] * pred[r]).sum() for r in np.array_split(np.arange(3000), 6)]
    lower = max(np.mean(tps) - ALERT_SD * np.std(tps), 0.0)
    upper = np.mean(tps) + ALERT_SD * np.std(tps)
    reference = ev.tree["data"].to_dataset()["reference_realized"]  # the chunks plot's band
    assert reference.sel(metric="true_positive").values.tolist() == tps
    row = closed.sel(chunk=first, metric="true_positive")
    assert (float(row["lower_threshold"]), float(row["upper_threshold"])) == pytest.approx(
        (lower, upper), abs=1e-9)
    assert float(closed["lower_threshold"].sel(chunk=first,
                                               metric="business_value")) == -1e9
    rows = slice(0, 500)
    y, p = new.labels[rows], new.scores[rows] >= 0.5
    assert float(closed["realized"].sel(chunk=first, metric="false_negative")) == \
        float((y * ~p).sum())
    summary = ev.summary()
    assert list(summary.loc[first].index) == [
        "accuracy", *CELLS, "business_value"]


def test_ap_interval_covers_the_realized_ap():
    """90 % intervals of AP over 300 windows of 150 rows, labels ~ Bernoulli(s): coverage within
    4 binomial SEs of 0.90 (the draws' quantiles add a Monte-Carlo error of ~0.005)."""
    from bayeval.confusion import MetricDistribution

    rng = np.random.default_rng(8)
    hits = []
    for _ in range(300):
        s = np.sort(rng.beta(2, 3, 150))
        draws = np.nan_to_num(ap_draws(Window(s, s, s >= 0.5), rng, AP_DRAWS))
        law = MetricDistribution.from_cells("average_precision", draws,
                                            np.full(draws.size, 1 / draws.size), 0.0)
        lo, hi = law.interval_ends(0.9, "eti")
        truth = average_precision((rng.random(150) < s).astype(float), s, 0.0)
        hits.append(lo <= truth <= hi)
    assert abs(np.mean(hits) - 0.9) <= 4 * np.sqrt(0.9 * 0.1 / 300)


@pytest.mark.parametrize("kwargs, message", [
    (dict(metrics=["business_value"]), "needs business_value_matrix"),
    (dict(metrics=["business_value"], business_value_matrix=[1, 2, 3]), "needs business_value"),
    (dict(metrics=["f1"], normalize_confusion_matrix="all"), "add 'confusion_matrix'"),
    (dict(metrics=["confusion_matrix"], normalize_confusion_matrix="rows"),
     "normalize_confusion_matrix"),
    (dict(metrics=["f1"], business_value_matrix=MATRIX), "add 'business_value'"),
    (dict(metrics=["confusion_matrix"], method="pymc"), "fast path only"),
    (dict(metrics=["average_precision"], noise="beta", kappa=50.0), "noise='none'"),
    (dict(metrics=["confusion_matrix", "confusion_matrix"]), "twice"),
])
def test_bad_input(kwargs, message):
    s = np.random.default_rng(0).random(50)
    with pytest.raises(ValueError, match=message):
        cbpe(s, calibration="none", **kwargs)
