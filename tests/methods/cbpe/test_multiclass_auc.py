"""One-vs-rest ROC-AUC in CBPE of K classes: the classes' covariances and the macro average's
law against simulation, the exact small-window laws against enumeration, NannyML's estimate,
scikit-learn's realized values, and the maps' draws summed a block of rows at a time."""

from itertools import product

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

import bayeval as be
from bayeval.methods.cbpe import multiclass_auc
from bayeval.methods.cbpe.multiclass import renormalised
from bayeval.methods.cbpe.multiclass_auc import mean_shifts
from bayeval.multiclass_laws import ovr_auc_moments

K = 3


def _labels(p, rng, reps=None):
    shape = (p.shape[0], 1) if reps is None else (reps, p.shape[0], 1)
    return (rng.random(shape) > p.cumsum(axis=1)).sum(axis=-1).clip(max=K - 1)


def _tied(n, rng):
    """Probabilities p and raw scores renormalised p^0.7, every second row's scores a copy of
    the row before (ties in every column)."""
    p = rng.dirichlet(np.full(K, 1.5), n)
    s = renormalised(p**0.7)[0]
    s[1::2] = s[::2][: s[1::2].shape[0]]
    return p, s


def _simulated_aucs(y, s):
    """(reps, K) one-vs-rest ROC-AUCs by rank sums (mid-ranks: ties count 1/2)."""
    n = s.shape[0]
    ranks = stats.rankdata(s, axis=0)
    out = np.empty((y.shape[0], K))
    for k in range(K):
        hit = y == k
        n1 = hit.sum(axis=1)
        out[:, k] = ((hit * ranks[:, k]).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * (n - n1))
    return out


def test_covariances_of_the_classes_match_simulation():
    """Every class's ROC-AUC shares the rows' labels: their covariances (about a quarter of
    the variances here) against 20,000 simulated labellings of 300 rows, each within 4 SEs of
    a sample covariance, sqrt((var_k var_l + cov_kl^2) / R)."""
    rng = np.random.default_rng(1)
    p, s = _tied(300, rng)
    reps = 20_000
    y = _labels(p, rng, reps)
    sim = _simulated_aucs(y, s)
    for r in range(3):  # the rank sums are scikit-learn's one-vs-rest ROC-AUCs
        np.testing.assert_allclose(sim[r], roc_auc_score(y[r], s, multi_class="ovr",
                                                         average=None), atol=1e-12)
    o = ovr_auc_moments(s, p)
    cov = np.cov(sim, rowvar=False)
    var = np.diag(cov)
    se = np.sqrt((np.outer(var, var) + cov**2) / reps)
    assert (np.abs(o.cov - cov) <= 4 * se).all(), (o.cov, cov)
    assert (o.cov[~np.eye(K, dtype=bool)] > 0.15 * var.mean()).all()
    np.testing.assert_allclose(o.mean, sim.mean(axis=0), atol=4 * np.sqrt(var.max() / reps))
    macro = sim.mean(axis=1)
    assert np.sqrt(o.cov.sum()) / K == pytest.approx(macro.std(), rel=4 / np.sqrt(2 * reps))


def test_laws_of_each_chunk_match_simulated_sklearn_values():
    rng = np.random.default_rng(2)
    _, p = _tied(300, rng)  # calibrated scores with ties
    cf = be.cbpe(p, n_chunks=2, calibration="none",
                 metrics=["roc_auc", "macro_roc_auc"]).closed_form
    reps = 4000
    y = _labels(p, rng, reps)
    for chunk, rows in (("[0:149]", slice(0, 150)), ("[150:299]", slice(150, 300)),
                        ("all", slice(0, 300))):
        sim = _simulated_aucs(y[:, rows], p[rows])
        got = cf.sel(chunk=chunk)
        for metric, values in (("roc_auc", sim), ("macro_roc_auc", sim.mean(axis=1)[:, None])):
            mean = got["mean"].sel(metric=metric).values[: values.shape[1]]
            sd = got["sd"].sel(metric=metric).values[: values.shape[1]]
            np.testing.assert_allclose(mean, values.mean(axis=0),
                                       atol=4 * values.std(axis=0).max() / np.sqrt(reps))
            np.testing.assert_allclose(sd, values.std(axis=0), rtol=4 / np.sqrt(2 * reps))
        assert not got["exact"].sel(metric="roc_auc").any()


def test_small_windows_are_exact_and_match_enumeration():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.4, 0.3, 0.3],
                  [0.3, 0.5, 0.2]])
    cf = be.cbpe(p, calibration="none", metrics=["roc_auc", "macro_roc_auc"]).closed_form.sel(
        chunk="all")
    weights, values = [], []
    for y in product(range(K), repeat=5):
        y = np.array(y)
        weights.append(np.prod(p[np.arange(5), y]))
        values.append([roc_auc_score(y == k, p[:, k]) if 0 < (y == k).sum() < 5 else 0.0
                       for k in range(K)])
    weights, values = np.array(weights), np.array(values)
    np.testing.assert_allclose(cf["mean"].sel(metric="roc_auc"), weights @ values, atol=1e-12)
    sd = np.sqrt(weights @ (values - weights @ values) ** 2)
    np.testing.assert_allclose(cf["sd"].sel(metric="roc_auc"), sd, atol=1e-12)
    p_undefined = [weights[[(np.array(y) == k).sum() in (0, 5) for y in product(range(K),
                                                                                 repeat=5)]].sum()
                   for k in range(K)]
    np.testing.assert_allclose(cf["p_undefined"].sel(metric="roc_auc"), p_undefined, atol=1e-12)
    assert cf["exact"].sel(metric="roc_auc").all()
    macro = values.mean(axis=1)
    assert float(cf["mean"].sel(metric="macro_roc_auc")[0]) == pytest.approx(weights @ macro,
                                                                            abs=1e-12)
    # the sd by the classes' delta-method covariances, 1.2 % off at five rows
    assert float(cf["sd"].sel(metric="macro_roc_auc")[0]) == pytest.approx(
        np.sqrt(weights @ (macro - weights @ macro) ** 2), rel=0.02)


def _nannyml_roc_auc(p, s):
    """NannyML's estimate_roc_auc: the trapezoidal area under the ROC curve of the expected
    counts, thresholds at the distinct scores from the top."""
    q = 1.0 - p
    order = np.argsort(-s, kind="stable")
    keys = -s[order]
    last = np.r_[keys[1:] != keys[:-1], True]
    tpr = np.r_[0.0, np.cumsum(p[order])[last] / p.sum()]
    fpr = np.r_[0.0, np.cumsum(q[order])[last] / q.sum()]
    return float(np.trapezoid(tpr, fpr))


def test_plugin_is_nannyml_and_realized_is_sklearn():
    rng = np.random.default_rng(4)
    n = 400
    z = rng.normal(0, 1.5, (n, K))
    truth = renormalised(np.exp(z))[0]
    s = renormalised(np.exp(0.6 * z))[0]
    s[1::3] = s[::3][: s[1::3].shape[0]]
    y = _labels(truth, rng)
    ref_z = rng.normal(0, 1.5, (600, K))
    ref = (renormalised(np.exp(0.6 * ref_z))[0], _labels(renormalised(np.exp(ref_z))[0], rng))
    names = np.array(["ant", "bee", "cat"], dtype=object)
    labels = pd.Series(names[y], dtype=object)
    labels[::5] = None
    ev = be.cbpe(pd.DataFrame(s, columns=names), labels=labels, n_chunks=2,
                 reference=(pd.DataFrame(ref[0], columns=names), names[ref[1]]),
                 calibration="platt", metrics=["roc_auc", "macro_roc_auc"], random_seed=0)
    cf = ev.closed_form
    from bayeval.methods.cbpe.multiclass import class_maps
    maps = class_maps(ref[0], ref[1], "platt")
    p = renormalised(np.column_stack([m.predict(s[:, k]) for k, m in enumerate(maps)]))[0]
    for chunk, rows in (("[0:199]", slice(0, 200)), ("all", slice(0, n))):
        want = [_nannyml_roc_auc(p[rows, k], s[rows, k]) for k in range(K)]
        np.testing.assert_allclose(cf["plugin"].sel(chunk=chunk, metric="roc_auc"), want,
                                   atol=1e-12)
        assert float(cf["plugin"].sel(chunk=chunk, metric="macro_roc_auc")[0]) == pytest.approx(
            np.mean(want), abs=1e-12)
        known = labels[rows].notna().to_numpy()
        yk, sk = y[rows][known], s[rows][known]
        np.testing.assert_allclose(cf["realized"].sel(chunk=chunk, metric="roc_auc"),
                                   roc_auc_score(yk, sk, multi_class="ovr", average=None),
                                   atol=1e-12)
        assert float(cf["realized"].sel(chunk=chunk, metric="macro_roc_auc")[0]) == \
            pytest.approx(roc_auc_score(yk, sk, multi_class="ovr", average="macro"), abs=1e-12)
    assert np.isfinite(cf["lower_threshold"].sel(chunk="[0:199]", metric="roc_auc")).all()
    summary = ev.summary()
    assert summary.xs(("all", "roc_auc"), level=("chunk", "metric")).index.tolist() == \
        names.tolist()
    assert summary.xs(("all", "macro_roc_auc"), level=("chunk", "metric")).index.tolist() == [""]


def test_an_impossible_class_is_left_out_with_zero_division_nan():
    rng = np.random.default_rng(6)
    p = np.column_stack([rng.dirichlet([2, 2], 200), np.zeros(200)])
    cf = be.cbpe(p, calibration="none", zero_division=np.nan,
                 metrics=["roc_auc", "macro_roc_auc"]).closed_form.sel(chunk="all")
    auc = cf["mean"].sel(metric="roc_auc").values
    assert np.isnan(auc[2]) and float(cf["p_undefined"].sel(metric="roc_auc")[2]) == 1.0
    assert float(cf["mean"].sel(metric="macro_roc_auc")[0]) == pytest.approx(auc[:2].mean())


def test_the_maps_draws_summed_in_blocks_equal_them_at_once(monkeypatch):
    rng = np.random.default_rng(7)
    p, s = _tied(101, rng)
    draws = renormalised(p * rng.lognormal(0, 0.2, (50, 101, K)))[0]
    ratio = ovr_auc_moments(s, p).moments
    ratio = np.array([m.mean_num / m.mean_den for m in ratio])
    at_once = mean_shifts(s, ratio, draws)
    for rows in (7, 25, 100):  # blocks that end inside tie groups
        monkeypatch.setattr(multiclass_auc, "BLOCK_CELLS", rows * 50 * K)
        blocks = mean_shifts(s, ratio, lambda r: draws[:, r])
        np.testing.assert_allclose(blocks, at_once, atol=1e-13)
    from bayeval.confusion_moments import auc_count_moments

    direct = [auc_count_moments(s[:, 1], draws[9, :, 1], 0.5)]
    assert at_once[9, 1] == pytest.approx(direct[0].mean_num / direct[0].mean_den - ratio[1],
                                          abs=1e-13)
