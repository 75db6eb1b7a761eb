"""PEMI with K classes: each class's one-vs-rest ROC-AUC and the macro average against
scikit-learn on simulated completions, the imputation draws, nothing missing, and the map's
posterior."""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

import bayeval as be

K = 3
METRICS = ["roc_auc", "macro_roc_auc"]


def _draw(p, rng):
    return np.minimum((rng.random(p.shape[:-1])[..., None] > p.cumsum(axis=-1)).sum(axis=-1),
                      K - 1)


def _rank_aucs(y, s):
    """(reps, K) one-vs-rest ROC-AUCs by rank sums (mid-ranks: ties count 1/2)."""
    ranks = stats.rankdata(s, axis=0)
    hits = y[..., None] == np.arange(K)
    n1 = hits.sum(axis=1)
    return ((hits * ranks).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * (s.shape[0] - n1))


@pytest.fixture(scope="module")
def design():
    rng = np.random.default_rng(11)
    n = 300
    s = rng.dirichlet(np.full(K, 1.2), n)
    s[1::4] = s[::4][: s[1::4].shape[0]]  # ties
    y = _draw(s, rng)
    labels = y.astype(object)
    missing = rng.choice(n, 150, replace=False)
    labels[missing] = None
    return s, y, labels, missing


def test_laws_match_scikit_learn_on_simulated_completions(design):
    s, y, labels, missing = design
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cf = be.pemi(s, labels, calibration="none", metrics=METRICS).closed_form
    rng = np.random.default_rng(12)
    reps = 3000
    full = np.tile(y, (reps, 1))
    full[:, missing] = _draw(np.broadcast_to(s[missing], (reps, missing.size, K)), rng)
    per = _rank_aucs(full, s)
    for row in range(3):
        np.testing.assert_allclose(per[row], roc_auc_score(full[row], s, multi_class="ovr",
                                                           average=None), atol=1e-12)
    for metric, sim in (("roc_auc", per), ("macro_roc_auc", per.mean(axis=1)[:, None])):
        mean = cf["mean"].sel(metric=metric).values[: sim.shape[1]]
        sd = cf["sd"].sel(metric=metric).values[: sim.shape[1]]
        np.testing.assert_allclose(mean, sim.mean(axis=0),
                                   atol=4 * sim.std(axis=0).max() / np.sqrt(reps), err_msg=metric)
        np.testing.assert_allclose(sd, sim.std(axis=0), rtol=4 / np.sqrt(2 * reps),
                                   err_msg=metric)
    # the macro average's sd holds the classes' covariances: without them it is 15 % narrower
    sd_classes = cf["sd"].sel(metric="roc_auc").values
    assert float(cf["sd"].sel(metric="macro_roc_auc")[0]) > 1.1 * np.sqrt(
        (sd_classes**2).sum()) / K


def test_imputation_draws_agree_with_the_normal_laws(design):
    s, _, labels, _ = design
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fast = be.pemi(s, labels, calibration="none", metrics=METRICS).closed_form
        ev = be.pemi(s, labels, calibration="none", metrics=METRICS, method="impute",
                     draws=4000, random_seed=0)
    draws = ev.draws
    for metric, classes in (("roc_auc", range(K)), ("macro_roc_auc", [0])):
        for c in classes:
            x = draws.sel(metric=metric).isel({"class": c}).values.ravel()
            mean, sd = (float(fast[v].sel(metric=metric)[c]) for v in ("mean", "sd"))
            assert abs(x.mean() - mean) <= 4 * sd / np.sqrt(x.size)
            assert x.std() == pytest.approx(sd, rel=4 / np.sqrt(2 * x.size))
    assert np.isnan(draws.sel(metric="macro_roc_auc").isel({"class": 1})).all()


def test_nothing_missing_is_scikit_learns_value_with_zero_width(design):
    s, y, _, _ = design
    names = np.array(["x", "y", "z"], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = be.pemi(s, names[y], metrics=METRICS)
    cf = ev.closed_form
    np.testing.assert_allclose(cf["mean"].sel(metric="roc_auc"),
                               roc_auc_score(y, s, multi_class="ovr", average=None), atol=1e-12)
    assert float(cf["mean"].sel(metric="macro_roc_auc")[0]) == pytest.approx(
        roc_auc_score(y, s, multi_class="ovr", average="macro"), abs=1e-12)
    assert float(cf["sd"].sel(metric="macro_roc_auc")[0]) == pytest.approx(0.0, abs=1e-12)
    complete = ev.tree["data"].to_dataset()["complete_case"]
    assert float(complete.sel(metric="macro_roc_auc")[0]) == pytest.approx(
        roc_auc_score(y, s, multi_class="ovr", average="macro"), abs=1e-12)


def test_the_maps_posterior_widens_the_macro_average(design):
    s, _, labels, _ = design
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mixed = be.pemi(s, labels, metrics=METRICS, random_seed=0).closed_form
        fixed = be.pemi(s, labels, metrics=METRICS, calibration_uncertainty=False,
                        random_seed=0).closed_form
    assert float(mixed["sd"].sel(metric="macro_roc_auc")[0]) > float(
        fixed["sd"].sel(metric="macro_roc_auc")[0])
    with pytest.raises(ValueError, match="method='auto'"):
        be.pemi(s, labels, metrics=METRICS, method="exact")
