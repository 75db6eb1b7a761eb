"""PEMI's models: the builder, M1 with a fixed map is PEMI, NUTS against the quadrature
posterior, and the catalogued reference posteriors."""

import warnings

import numpy as np
import pytest

from bayeval.check import compare
from bayeval.datasets import breast_cancer, calibrated_scores, mask_labels
from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.fast import Rows
from bayeval.methods.pemi.models import (
    PRIOR_A,
    PRIOR_LOG_B,
    map_posterior,
    model,
    platt_map,
    posterior_nodes,
    predictive,
)


def test_model_builders_have_the_documented_variables():
    m1 = model([0.1, 0.4, 0.4, 0.9], [0, 1, 0, 1])
    assert [v.name for v in m1.free_RVs] == ["a", "log_b"]
    assert [v.name for v in m1.deterministics] == ["b"]
    assert m1.coords["score"] == (0, 1, 2)  # grouped by distinct score
    m3 = model([0.1, 0.4, 0.9], [0, 1, 1], variant="m3", delta=(1.0, 0.5))
    assert [v.name for v in m3.free_RVs] == ["a", "log_b", "delta"]
    with pytest.raises(ValueError, match="prior sd of delta > 0"):
        model([0.1, 0.9], [0, 1], variant="m3", delta=(1.0, 0.0))
    with pytest.raises(ValueError, match="use variant='m3' for a prior on delta"):
        model([0.1, 0.9], [0, 1], delta=(1.0, 0.5))
    with pytest.raises(ValueError, match="variant must be one of 'm1', 'm3'"):
        model([0.1, 0.9], [0, 1], variant="m2")


def test_old_builder_names_warn_and_build_the_same_model():
    import bayeval.methods.pemi as pemi_package

    for variant, kwargs in (("m1", {}), ("m3", {"delta": (1.0, 0.5)})):
        with pytest.warns(FutureWarning, match=f"model_{variant} is now .*variant='{variant}'"):
            old = getattr(pemi_package, f"model_{variant}")([0.1, 0.4, 0.9], [0, 1, 1], **kwargs)
        new = model([0.1, 0.4, 0.9], [0, 1, 1], variant=variant, **kwargs)
        assert old.str_repr() == new.str_repr()
        assert old.coords == new.coords


def test_m1_with_a_fixed_map_is_pemi():
    d = calibrated_scores(1500, random_seed=11)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=12).labels
    rows = Rows(d.scores, d.y_pred, labels)
    metrics = ("precision", "recall", "accuracy", "f1")
    n = 20_000
    draws = predictive(rows, metrics, np.full(n, 0.2), np.full(n, 1.3), 0.0, random_seed=13)
    exact = pemi(d.scores, labels, p=platt_map(d.scores, 0.2, 1.3), metrics=metrics,
                 method="exact").closed_form
    gauss = pemi(d.scores, labels, p=platt_map(d.scores, 0.2, 1.3), metrics=metrics,
                 method="gauss").closed_form
    for j, metric in enumerate(metrics):
        ex, ga = exact.sel(metric=metric), gauss.sel(metric=metric)
        keep = np.isfinite(ex["pmf_prob"].values)
        rows_ = compare(draws[None, :, j], mean=float(ga["mean"]), sd=float(ga["sd"]),
                        interval=(float(ex["lower"]), float(ex["upper"])),
                        interval_mass=float(ex["interval_mass"]),
                        pmf=(ex["pmf_value"].values[keep], ex["pmf_prob"].values[keep]),
                        iid=True)
        assert rows_["passed"].all(), (metric, rows_)


def test_m1_widens_pemi_by_the_calibration_maps_uncertainty():
    d = breast_cancer(random_seed=0)
    labels = mask_labels(d.labels, p_m=0.3, random_seed=1).labels
    ev = pemi(d.scores, labels, method="quadrature", random_seed=2)
    a, b = (float(ev.tree["posterior"][v].mean()) for v in ("a", "b"))
    fixed = pemi(d.scores, labels, p=platt_map(d.scores, a, b), method="gauss").closed_form
    draws = ev.draws.values[0]
    n = draws.shape[0]
    for j, metric in enumerate(fixed["metric"].values):
        ratio = draws[:, j].var(ddof=1) / float(fixed["sd"].sel(metric=metric)) ** 2
        assert ratio - 1 > 4 * np.sqrt(2 / n), (metric, ratio)  # beyond the MC error of s^2


def test_m3_nuts_agrees_with_its_fast_paths():
    """One NUTS run of M3: check() against the exact mixture law, diagnostics, delta's
    posterior is its prior, and the map's posterior is the quadrature one."""
    d = breast_cancer(random_seed=0)
    labels = mask_labels(d.labels, p_m=0.3, mechanism="mnar", eta=0.6, random_seed=1).labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = pemi(d.scores, labels, method="both", mnar=(1.0, 0.5), random_seed=3)
    assert ev.check().attrs["passed"], ev.check()
    assert ev.diagnostics().attrs["ok"]
    post = ev.tree["posterior"].to_dataset()
    n = post["delta"].size
    assert abs(float(post["delta"].mean()) - 1.0) <= 4 * 0.5 / np.sqrt(n / 2)
    known = ~np.isnan(labels)
    qa, qb = map_posterior(d.scores[known], labels[known], size=40_000, random_seed=4)
    import arviz as az

    for name, q in (("a", qa), ("b", qb)):
        da = post[name]
        tol_mean = 4 * np.hypot(float(az.mcse(da)), q.std() / np.sqrt(q.size))
        tol_sd = 4 * np.hypot(float(az.mcse(da, method="sd")), q.std() / np.sqrt(2 * q.size))
        assert abs(float(da.mean()) - q.mean()) <= tol_mean, name
        assert abs(float(da.std()) - q.std()) <= tol_sd + 0.002 * q.std(), name  # grid cells
    sens = ev.sensitivity()
    assert sens.loc["delta", "diagnosis"] == "strong prior / weak likelihood"
    assert "delta_sensitivity" in ev.tree.children




@pytest.mark.parametrize("name", ["pemi_m1", "pemi_m3"])
def test_catalogued_references_are_the_quadrature_posterior(name):
    import json
    from pathlib import Path

    spec = json.loads((Path(__file__).resolve().parents[3] / "models" / name /
                       "reference.json").read_text())
    kw = spec["kwargs"]
    a, b = map_posterior(kw["cal_scores"], kw["cal_labels"], size=400_000, random_seed=0)
    for label, q in (("a", a), ("b", b)):
        ref, se = spec["reference"][label], q.std() / np.sqrt(q.size)
        assert abs(ref["mean"] - q.mean()) <= 4 * np.hypot(ref["mcse_mean"], se)
        # + 0.2 %: the quadrature's uniform draw inside a grid cell inflates the sd by ~0.08 %
        assert abs(ref["sd"] - q.std()) <= 4 * np.hypot(ref["mcse_sd"], se / np.sqrt(2)) + (
            0.002 * q.std())
    if name == "pemi_m3":  # delta's posterior is its prior
        ref = spec["reference"]["delta"]
        assert abs(ref["mean"] - kw["delta"][0]) <= 4 * ref["mcse_mean"]
        assert abs(ref["sd"] - kw["delta"][1]) <= 4 * ref["mcse_sd"]


@pytest.mark.parametrize("n", [20, 500])
def test_posterior_nodes_integrate_the_posterior(n):
    """The Gauss-Hermite nodes' means, sds and a predictive probability against a brute-force
    300 x 300 grid of the log posterior over (a, log b) (20 labelled rows: a skewed posterior;
    a 6 x 6 rule fails there)."""
    from bayeval.methods.pemi.models import _laplace, _log_posterior, sufficient

    rng = np.random.default_rng(n)
    s = rng.beta(2, 2, n)
    y = (rng.random(n) < s**1.5).astype(float)
    a, b, w = posterior_nodes(s, y)
    x, trials, positives = sufficient(s, y)
    mode, cov = _laplace(x, trials, positives, PRIOR_A, PRIOR_LOG_B)
    half = 9 * np.sqrt(np.diag(cov))
    ga, gc = np.meshgrid(*(np.linspace(m - h, m + h, 300) for m, h in zip(mode, half,
                                                                             strict=True)),
                         indexing="ij")
    lp = np.concatenate([_log_posterior(ga[i:i + 50], gc[i:i + 50], x, trials, positives,
                                        PRIOR_A, PRIOR_LOG_B) for i in range(0, 300, 50)])
    g = np.exp(lp - lp.max()).ravel()
    g /= g.sum()
    ga, gb = ga.ravel(), np.exp(gc.ravel())

    def functionals(a, b, w):
        p = 1 / (1 + np.exp(-(a + b * np.log(0.3 / 0.7))))
        return [w @ f for f in (a, b, a**2, b**2, p, p**2)]

    np.testing.assert_allclose(functionals(a, b, w), functionals(ga, gb, g), rtol=2e-4)
