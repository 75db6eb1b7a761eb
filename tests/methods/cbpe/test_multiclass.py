"""CBPE of K classes against independent computations: enumeration of every labelling (tiny n),
scikit-learn's metrics of labels simulated from the probabilities, NannyML's formulas."""

from itertools import product

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

import bayeval as be
from bayeval.multiclass import matrix_of, matrix_value
from benchmarks.coverage_cbpe_multiclass import coverage

K = 3


def _probs(n, seed):
    return np.random.default_rng(seed).dirichlet(np.ones(K) * 1.5, n)


def _sklearn(y, yp):
    prec, rec, f1, _ = precision_recall_fscore_support(y, yp, labels=range(K), average=None,
                                                       zero_division=0)
    return {"accuracy": accuracy_score(y, yp), "precision": prec, "recall": rec, "f1": f1,
            "macro_precision": prec.mean(), "macro_recall": rec.mean(), "macro_f1": f1.mean()}


def test_means_equal_enumeration_of_every_labelling():
    p = _probs(4, 0)
    yp = p.argmax(axis=1)
    metrics = ["accuracy", "precision", "recall", "f1", "macro_precision", "macro_recall",
               "macro_f1"]
    cf = be.cbpe(p, metrics=metrics, calibration="none").closed_form.sel(chunk="all")
    expected = {m: 0.0 for m in metrics}
    acc_pmf = {}
    for y in product(range(K), repeat=4):
        w = np.prod(p[np.arange(4), y])
        values = _sklearn(np.array(y), yp)
        for m in metrics:
            expected[m] = expected[m] + w * values[m]
        acc_pmf[values["accuracy"]] = acc_pmf.get(values["accuracy"], 0.0) + w
    for m in metrics:
        got = cf["mean"].sel(metric=m).values
        want = np.atleast_1d(expected[m])
        np.testing.assert_allclose(got[: want.size], want, atol=1e-12, err_msg=m)
    lo, hi = cf["lower"].sel(metric="accuracy").values[0], cf["upper"].sel(
        metric="accuracy").values[0]
    mass = sum(w for v, w in acc_pmf.items() if lo - 1e-12 <= v <= hi + 1e-12)
    assert mass == pytest.approx(float(cf["interval_mass"].sel(metric="accuracy")[0]), abs=1e-12)
    assert mass >= 0.95


def test_sds_match_simulated_sklearn_metrics():
    p = _probs(300, 1)
    yp = p.argmax(axis=1)
    rng = np.random.default_rng(2)
    reps = 4000
    y = (rng.random((reps, 300, 1)) > p.cumsum(axis=1)).sum(axis=2).clip(max=K - 1)
    matrices = matrix_of(y, yp, K).astype(float)
    for draw in range(3):  # the vectorised metrics are scikit-learn's
        np.testing.assert_allclose(matrix_value("f1", matrices[draw], 0.0),
                                   _sklearn(y[draw], yp)["f1"], atol=1e-12)
    metrics = ["accuracy", "f1", "macro_recall", "macro_f1"]
    cf = be.cbpe(p, metrics=metrics, calibration="none").closed_form.sel(chunk="all")
    for m in metrics:
        sim = np.asarray(matrix_value(m, matrices, 0.0)).reshape(reps, -1)
        mean, sd = cf["mean"].sel(metric=m).values, cf["sd"].sel(metric=m).values
        cols = sim.shape[1]
        # mean: 4 Monte-Carlo SEs; sd: 4 SEs of a sample sd, sd / sqrt(2 reps)
        np.testing.assert_allclose(mean[:cols], sim.mean(axis=0),
                                   atol=4 * sim.std(axis=0).max() / np.sqrt(reps), err_msg=m)
        np.testing.assert_allclose(sd[:cols], sim.std(axis=0),
                                   rtol=4 / np.sqrt(2 * reps), err_msg=m)


def test_plugin_is_nannyml_estimate_and_realized_is_sklearn():
    p = _probs(400, 3)
    yp = p.argmax(axis=1)
    rng = np.random.default_rng(4)
    y = (rng.random((400, 1)) > p.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)
    names = np.array(["ant", "bee", "cat"], dtype=object)
    labels = pd.Series(names[y], dtype=object)
    labels[::7] = None
    ref = _probs(600, 5)
    ref_y = names[(rng.random((600, 1)) > ref.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)]
    ev = be.cbpe(pd.DataFrame(p, columns=names), labels=labels, n_chunks=2,
                 reference=(pd.DataFrame(ref, columns=names), ref_y), calibration="none",
                 metrics=["accuracy", "precision", "macro_f1"])
    cf = ev.closed_form
    assert cf["class"].values.tolist() == names.tolist()
    rows = np.arange(200)
    assert float(cf["plugin"].sel(chunk="[0:199]", metric="accuracy")[0]) == pytest.approx(
        p[rows, yp[rows]].mean(), abs=1e-12)
    tp = np.array([p[rows][yp[rows] == k, k].sum() for k in range(K)])
    prec = tp / np.bincount(yp[rows], minlength=K)
    np.testing.assert_allclose(cf["plugin"].sel(chunk="[0:199]", metric="precision"), prec,
                               atol=1e-12)
    fn = p[rows].sum(axis=0) - tp
    f1 = 2 * tp / (2 * tp + (np.bincount(yp[rows], minlength=K) - tp) + fn)
    assert float(cf["plugin"].sel(chunk="[0:199]", metric="macro_f1")[0]) == pytest.approx(
        f1.mean(), abs=1e-12)
    known = labels[:200].notna().to_numpy()
    want = _sklearn(y[:200][known], yp[:200][known])
    np.testing.assert_allclose(cf["realized"].sel(chunk="[0:199]", metric="precision"),
                               want["precision"], atol=1e-12)
    assert float(cf["realized"].sel(chunk="[0:199]", metric="macro_f1")[0]) == pytest.approx(
        want["macro_f1"], abs=1e-12)
    assert int(cf["n_labelled"].sel(chunk="[0:199]")) == known.sum()
    assert np.isfinite(cf["lower_threshold"].sel(chunk="[0:199]", metric="accuracy")[0])
    assert ev.summary().index.get_level_values("class")[:2].tolist() == ["", "ant"]


def test_calibration_map_posterior_widens_the_whole_period():
    rng = np.random.default_rng(6)

    def data(n):
        z = rng.normal(0, 1.5, (n, K))
        e, f = np.exp(z), np.exp(0.6 * z)
        truth = e / e.sum(axis=1, keepdims=True)
        y = (rng.random((n, 1)) > truth.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)
        return f / f.sum(axis=1, keepdims=True), y

    (ref, ref_y), (s, _) = data(300), data(2400)
    kwargs = dict(reference=(ref, ref_y), calibration="platt", metrics=["accuracy", "macro_f1"],
                  n_chunks=2, random_seed=0)
    mixed = be.cbpe(s, **kwargs).closed_form.sel(chunk="all")
    plugin_ev = be.cbpe(s, calibration_uncertainty=False, **kwargs)
    plugin = plugin_ev.closed_form.sel(chunk="all")
    assert (mixed["sd"][:, 0] > 1.3 * plugin["sd"][:, 0]).all()
    assert any("calibration_uncertainty=False" in w for w in plugin_ev.warnings)
    np.testing.assert_allclose(mixed["plugin"], plugin["plugin"], atol=1e-12)


def test_bad_input_is_refused():
    p = _probs(50, 7)
    with pytest.raises(ValueError, match="noise='none'"):
        be.cbpe(p, noise="beta", kappa=10.0)
    with pytest.raises(ValueError, match="metrics"):
        be.cbpe(p, metrics=["mcc"])
    with pytest.raises(ValueError, match="columns"):
        be.cbpe(pd.DataFrame(p, columns=["a", "b", "c"]),
                reference=(pd.DataFrame(p, columns=["a", "b", "d"]), ["a", "b"] * 25))
    with pytest.raises(ValueError, match="at least 2 reference rows of every class"):
        be.cbpe(p, reference=(p, [0, 1] * 25), calibration="isotonic")


def test_coverage_of_calibrated_scores_reduced():
    """The benchmark's K = 3 calibrated setting, 30 windows of 100 rows: at 95 % a metric's
    coverage has an SE of 0.04, so 0.83 is 3 SEs below."""
    for metric, (cov, _) in coverage("calibrated", 100, 30, seed=11).items():
        assert cov >= 0.83, metric
