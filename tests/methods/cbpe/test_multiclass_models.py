"""CBPE's PyMC model of K classes: its sufficient statistics against scikit-learn on fixed
labellings, its forward draws against the exact fast path (check), the check's power against a
perturbed fast path, and the calibration maps' draws carried as a mixture index."""

import numpy as np
import pymc as pm
import pytest
from sklearn.metrics import confusion_matrix, roc_auc_score

import bayeval as be
from bayeval.methods.cbpe.multiclass import CBPEClasses, renormalised
from bayeval.methods.cbpe.multiclass_models import class_metric_draws, class_model

K = 3
METRICS = ["accuracy", "precision", "recall", "f1", "specificity", "roc_auc", "macro_precision",
           "macro_recall", "macro_f1", "macro_specificity", "macro_roc_auc"]


def _labels(p, rng):
    return (rng.random((p.shape[0], 1)) > p.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)


def _learned(n, rng):
    """Over-confident scores softmax(0.6 z) of true probabilities softmax(z)."""
    z = rng.normal(0, 1.5, (n, K))
    truth = renormalised(np.exp(z))[0]
    return renormalised(np.exp(0.6 * z))[0], _labels(truth, rng)


@pytest.fixture(scope="module")
def calibrated():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(K, 1.5), 900)
    ev = be.cbpe(p, n_chunks=3, metrics=METRICS, method="both", random_seed=1)
    return p, ev


def test_sufficient_statistics_are_sklearns_confusion_matrix_and_auc():
    """At fixed u the labels are the categoricals' inverse CDFs; TP, FN and the rank sums give
    scikit-learn's per-class counts and one-vs-rest ROC-AUC per chunk and for the whole
    period, ties (repeated rows) counted 1/2."""
    rng = np.random.default_rng(3)
    s = np.repeat(rng.dirichlet(np.ones(K), 20), 2, axis=0)  # every score tied once
    p = rng.dirichlet(np.ones(K), 40)
    yp = s.argmax(axis=1)
    codes = np.repeat([0, 1], 20)
    m = class_model(p, yp, scores=s, chunk=codes, chunk_labels=["a", "b"])
    u = rng.random(40)
    y = (u[:, None] > p.cumsum(axis=1)[:, :-1]).sum(axis=1)
    at = pm.do(m, {"u": u})
    assert pm.draw(at["y"]).tolist() == y.tolist()
    tp, fn, ranks = (pm.draw(at[v]) for v in ("tp", "fn", "rank_sum"))
    group = {"tp": tp, "fn": fn, "rank_sum": ranks}
    import xarray as xr

    group = xr.Dataset({k: (("chain", "draw", "chunk", "class"), v[None, None])
                        for k, v in group.items()})
    predicted = np.array([np.bincount(yp[codes == c], minlength=K) for c in (0, 1)])
    predicted = np.vstack([predicted, predicted.sum(axis=0)])
    value = class_metric_draws(group, predicted, predicted.sum(axis=1),
                               ["roc_auc", "macro_roc_auc", "accuracy"], 0.0)[0, 0]
    for c, rows in enumerate([codes == 0, codes == 1, np.ones(40, bool)]):
        cm = confusion_matrix(y[rows], yp[rows], labels=range(K))
        np.testing.assert_array_equal(tp[c], np.diag(cm))
        np.testing.assert_array_equal(fn[c], cm.sum(axis=1) - np.diag(cm))
        auc = [roc_auc_score(y[rows] == k, s[rows, k]) for k in range(K)]
        np.testing.assert_allclose(value.sel(metric="roc_auc")[c], auc, atol=1e-12)
        assert float(value.sel(metric="macro_roc_auc")[c, 0]) == pytest.approx(
            roc_auc_score(y[rows], s[rows], multi_class="ovr", average="macro"), abs=1e-12)
        assert float(value.sel(metric="accuracy")[c, 0]) == pytest.approx(
            np.trace(cm) / rows.sum(), abs=1e-12)


def test_a_class_absent_from_a_draw_follows_zero_division():
    import xarray as xr

    dims = ("chain", "draw", "chunk", "class")
    group = xr.Dataset({"tp": (dims, [[[[2, 0, 1]]]]), "fn": (dims, [[[[1, 0, 0]]]]),
                        "rank_sum": (dims, [[[[9.0, 0.0, 4.0]]]])})
    value = class_metric_draws(group, np.array([[2, 1, 1]]), np.array([4]),
                               ["roc_auc", "macro_roc_auc", "macro_recall"], np.nan)[0, 0, 0]
    auc = value.sel(metric="roc_auc").values
    assert np.isnan(auc[1]) and auc[0] == pytest.approx((9 - 6) / 3)
    # the macro averages leave the undefined class out with zero_division=nan
    assert float(value.sel(metric="macro_roc_auc")[0]) == pytest.approx((1.0 + 1.0) / 2)
    assert float(value.sel(metric="macro_recall")[0]) == pytest.approx((2 / 3 + 1.0) / 2)


def test_the_model_agrees_with_the_exact_fast_path(calibrated):
    _, ev = calibrated
    assert isinstance(ev, CBPEClasses)
    assert ev.meta["iid_draws"] and not ev.has_mcmc
    check = ev.check()
    assert check.attrs["passed"], check[~check["passed"]]
    # every chunk, the whole period, and each metric of every class is compared
    chunks = check.index.get_level_values("chunk").unique().tolist()
    assert chunks == ["[0:299]", "[300:599]", "[600:899]", "all"]
    assert len(check.index.droplevel("test").unique()) == 4 * (6 + 5 * K)
    draws = ev.summary(source="draws")
    assert draws.index.names == ["chunk", "metric", "class"]
    assert draws.xs(("all", "precision"), level=("chunk", "metric")).shape[0] == K


def test_the_check_fails_when_one_class_law_is_shifted(calibrated):
    """The fast path of probabilities with class 0's odds times 1.15 (its expected count up by
    about 4 %), against the draws of the unperturbed model."""
    p, ev = calibrated
    moved = renormalised(p * np.array([1.15, 1.0, 1.0]))[0]
    cf = be.cbpe(moved, y_pred=p.argmax(axis=1), n_chunks=3, metrics=METRICS).closed_form
    bad = CBPEClasses.create(method="cbpe_multiclass", variant="both", closed_form=cf,
                             draws=ev.tree, estimand="prior/value", iid_draws=True)
    check = bad.check()
    assert not check.attrs["passed"]
    failed = check[~check["passed"]].index
    assert "mean" in failed.get_level_values("test")
    assert 0 in failed.get_level_values("class")


def test_the_maps_posterior_is_carried_by_the_model():
    """Isotonic maps learned on 600 reference rows: the model mixes over the same draws of the
    maps as the fast path, whose chunks take each draw exactly and whose whole period (2,400
    rows) moves the plug-in laws by the draws' first-order shifts; the check passes, and the
    draws are wider than those of the plug-in maps."""
    rng = np.random.default_rng(5)
    (ref, ref_y), (s, _) = _learned(600, rng), _learned(2400, rng)
    kwargs = dict(reference=(ref, ref_y), calibration="isotonic", n_chunks=2,
                  metrics=["accuracy", "recall", "roc_auc", "macro_f1", "macro_roc_auc"],
                  method="both", random_seed=2)
    ev = be.cbpe(s, **kwargs)
    check = ev.check()
    assert check.attrs["passed"], check[~check["passed"]]
    assert "map_u" in [v.name for v in ev.model.free_RVs]
    plugin = be.cbpe(s, calibration_uncertainty=False, **kwargs)
    sd = ev.draws.sel(chunk="all", metric="accuracy").std(("chain", "draw"))[0]
    sd_plugin = plugin.draws.sel(chunk="all", metric="accuracy").std(("chain", "draw"))[0]
    assert float(sd) > 1.3 * float(sd_plugin)


def test_pymc_alone_keeps_the_realized_metrics_with_the_data():
    rng = np.random.default_rng(8)
    p = rng.dirichlet(np.ones(K), 200)
    y = _labels(p, rng)
    ref = rng.dirichlet(np.ones(K), 400)
    ev = be.cbpe(p, labels=y, reference=(ref, _labels(ref, rng)), calibration="none",
                 n_chunks=2, metrics=["accuracy", "recall"], method="pymc", draws=200,
                 random_seed=0)
    assert ev.closed_form is None and ev.meta["variant"] == "pymc"
    data = ev.tree["data"].to_dataset()
    assert float(data["realized"].sel(chunk="all", metric="accuracy")[0]) == pytest.approx(
        np.mean(y == p.argmax(axis=1)))
    assert np.isfinite(data["lower_threshold"].sel(chunk="[0:99]", metric="recall")).all()
    with pytest.raises(ValueError, match="check"):
        ev.check()


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "nuts"}, "method"),
    ({"method": "pymc", "draws": 1}, "draws"),
])
def test_bad_input(kwargs, message):
    p = np.random.default_rng(0).dirichlet(np.ones(K), 30)
    with pytest.raises(ValueError, match=message):
        be.cbpe(p, **kwargs)
