"""K-class CBPE's calibration="auto": none, the multinomial map or the one-vs-rest maps, chosen
by the multiclass Brier score on held-out reference folds."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

import bayeval as be
from bayeval.calibration import make_calibrator
from bayeval.methods.cbpe.multiclass import class_maps, renormalised, select_class_map
from bayeval.multiclass_calibration import brier_scores, multinomial_map, select_map

K = 3


def _labels(truth, rng):
    return (rng.random(truth.shape[0])[:, None] > truth.cumsum(axis=1)).sum(axis=1).clip(
        max=truth.shape[1] - 1)


def _softmax(z):
    return renormalised(np.exp(z - z.max(axis=1, keepdims=True)))[0]


def _tempered(n, rng):
    """Scores softmax(0.6 z) of true probabilities softmax(z): a uniform temperature."""
    z = rng.normal(0, 1.5, (n, K))
    return _softmax(0.6 * z), _labels(_softmax(z), rng)


def _chosen(ev):
    data = ev.tree["data"]
    return str(data["calibrator"].values[data["chosen"].values][0])


def test_auto_picks_the_multinomial_map_for_a_tempered_softmax():
    rng = np.random.default_rng(0)
    ref = _tempered(3000, rng)
    window = _tempered(300, rng)[0]
    kwargs = dict(reference=ref, metrics=["accuracy", "macro_f1"], n_chunks=2, random_seed=5)
    ev = be.cbpe(window, **kwargs)
    assert _chosen(ev) == "multinomial"
    heldout = ev.tree["data"]["heldout_brier"].to_series()
    assert list(heldout.index) == ["none", "multinomial", "one-vs-rest"]
    # the raw scores are far worse than either map; the two maps within a few thousandths
    assert heldout["none"] - heldout["multinomial"] > 0.01
    assert any("calibration='auto' chose multinomial" in w for w in ev.warnings)
    assert "multinomial Platt" in ev.meta["description"]
    # what it fits is calibration="multinomial" with the same seed
    explicit = be.cbpe(window, calibration="multinomial", **kwargs)
    for name in ("mean", "lower", "upper"):
        np.testing.assert_array_equal(ev.closed_form[name], explicit.closed_form[name])


def test_auto_picks_one_vs_rest_maps_for_class_specific_shapes():
    """P(Y = k | s) proportional to s_k^(3, 1, 0.3): each class bent its own way, which the
    multinomial map's one slope cannot follow."""
    rng = np.random.default_rng(1)
    s = rng.dirichlet(np.ones(K), 2000)
    y = _labels(renormalised(s ** np.array([3.0, 1.0, 0.3]))[0], rng)
    window = rng.dirichlet(np.ones(K), 200)
    ev = be.cbpe(window, reference=(s, y), metrics=["accuracy"], random_seed=2)
    assert _chosen(ev) == "one-vs-rest"
    data = ev.tree["data"]
    excess, se = (data[v].sel(calibrator="multinomial").item() for v in ("brier_excess",
                                                                         "brier_se"))
    assert excess > 2 * se  # the multinomial map loses by more than one standard error
    assert "one-vs-rest, renormalised" in ev.meta["description"]


def test_heldout_scores_equal_sklearn_on_the_same_folds():
    rng = np.random.default_rng(2)
    ref_s, ref_y = _tempered(600, rng)
    ev = be.cbpe(_tempered(100, rng)[0], reference=(ref_s, ref_y), metrics=["accuracy"],
                 random_seed=7)
    reported = ev.tree["data"].to_dataset()
    maps = class_maps(ref_s, ref_y, "auto", 7)  # each class's family, chosen on all rows
    name, table, oof, folds = select_class_map(ref_s, ref_y, maps=maps,
                                               random_seed=np.random.default_rng([7, 29]))
    np.testing.assert_array_equal(reported["heldout_brier"].values, table["heldout_brier"])
    assert name == _chosen(ev)
    # stratified folds: every class dealt evenly over the 10 folds
    for k in range(K):
        counts = np.bincount(folds[ref_y == k], minlength=10)
        assert counts.max() - counts.min() <= 1
    labels = list(range(K))
    assert table.loc["none", "heldout_brier"] == pytest.approx(
        brier_score_loss(ref_y, ref_s, labels=labels), abs=1e-12)
    refit = np.empty_like(ref_s)  # the multinomial map refitted on each fold's other rows
    ovr = np.empty_like(ref_s)  # and each class's calibrator
    for f in range(10):
        test = folds == f
        refit[test] = multinomial_map(ref_s[~test], ref_y[~test], uncertainty=False).predict(
            ref_s[test])
        ovr[test] = renormalised(np.column_stack([
            make_calibrator(m.name).fit(ref_s[~test, k], ref_y[~test] == k).predict(
                ref_s[test, k]) for k, m in enumerate(maps)]))[0]
    np.testing.assert_allclose(refit, oof["multinomial"], atol=1e-6)  # from another start
    np.testing.assert_allclose(ovr, oof["one-vs-rest"], atol=1e-12)
    for c, p in (("multinomial", refit), ("one-vs-rest", ovr)):
        assert table.loc[c, "heldout_brier"] == pytest.approx(
            brier_score_loss(ref_y, p, labels=labels), abs=1e-6)
    # the standard error of the excess over the lowest, from sklearn's per-row scores
    best = table["heldout_brier"].idxmin()
    per_row = {c: np.array([brier_score_loss([y], [p], labels=labels)
                            for y, p in zip(ref_y, oof[c], strict=True)]) for c in oof}
    for c in oof:
        d = per_row[c] - per_row[best]
        assert table.loc[c, "brier_se"] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size),
                                                         abs=1e-12)


def test_one_standard_error_rule():
    """The identity only when lowest; otherwise the first candidate within one SE."""
    rng = np.random.default_rng(3)
    s = rng.dirichlet(np.ones(K), 400)
    y = _labels(s, rng)

    def shrunk(w):  # s pulled towards 1/K by w: worse than s the more w is
        return lambda *_: lambda t: (1 - w) * t + w / K

    name, _, _, _ = select_map(s, y, {"none": shrunk(0.0), "a": shrunk(0.3)}, random_seed=0)
    assert name == "none"  # calibrated: the identity is lowest, and kept
    name, table, _, _ = select_map(s, y, {"none": shrunk(0.4), "a": shrunk(0.2),
                                          "b": shrunk(0.0), "c": shrunk(0.5)}, random_seed=0)
    assert table["heldout_brier"].idxmin() == "b"
    assert name == "a"  # within one SE of "b", and listed first
    assert 0 < table.loc["a", "brier_excess"] <= table.loc["a", "brier_se"]
    name, _, _, _ = select_map(s, y, {"c": shrunk(0.5), "b": shrunk(0.0)}, random_seed=0)
    assert name == "b"  # "c" is further than one SE
    np.testing.assert_allclose(table["heldout_brier"]["b"], brier_scores(s, y).mean())


def test_bad_input_still_errors():
    rng = np.random.default_rng(4)
    s, y = _tempered(200, rng)
    with pytest.raises(ValueError, match="calibration"):
        be.cbpe(s, reference=(s, y), calibration="multinomal")
    few = y.copy()
    few[few == 2] = 0
    few[:1] = 2  # one row of class 2
    with pytest.raises(ValueError, match="at least 2 reference rows of every class"):
        be.cbpe(s, reference=(s, few))
    with pytest.raises(ValueError, match="at least 4 rows of every class"):
        select_class_map(s, np.r_[few[:199], 2])  # 2 rows of class 2
    few[:3] = 2  # 3 rows: too few for held-out folds, each class's own map is chosen
    ev = be.cbpe(s, reference=(s, few), metrics=["accuracy"], random_seed=0)
    assert any("fewer than 4 reference rows" in w for w in ev.warnings)
    assert "heldout_brier" not in ev.tree["data"]
