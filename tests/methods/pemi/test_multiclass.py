"""PEMI with K classes: exact laws against enumeration with scikit-learn's metrics, the
delta-method laws against scikit-learn on simulated completions, K = 2 against binary PEMI, the
MNAR shifts, the calibration map's posterior, the PyMC model's check and its power, pandas
alignment and bad input."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special
from sklearn import metrics as skm

import bayeval as be
from bayeval.methods.pemi.multiclass import PEMIClasses
from bayeval.methods.pemi.multiclass_models import posterior
from bayeval.multiclass import matrix_of, matrix_value

K = 3
PER_CLASS = ("precision", "recall", "f1", "specificity")


def _draw(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.minimum((rng.random(p.shape[0])[:, None] > p.cumsum(axis=1)).sum(axis=1),
                      p.shape[1] - 1)


def _sk(metric: str, y: np.ndarray, yp: np.ndarray) -> np.ndarray | float:
    """scikit-learn's value: per class (K,) or one number."""
    labels = list(range(K))
    if metric == "specificity":
        return np.array([skm.recall_score(y != k, yp != k, zero_division=0) for k in labels])
    if metric in ("precision", "recall", "f1"):
        fn = {"precision": skm.precision_score, "recall": skm.recall_score,
              "f1": skm.f1_score}[metric]
        return fn(y, yp, labels=labels, average=None, zero_division=0)
    if metric.startswith(("macro_", "weighted_")):
        kind, base = metric.split("_")
        fn = {"precision": skm.precision_score, "recall": skm.recall_score,
              "f1": skm.f1_score}[base]
        return fn(y, yp, labels=labels, average=kind, zero_division=0)
    return {"accuracy": skm.accuracy_score, "balanced_accuracy": skm.balanced_accuracy_score,
            "cohen_kappa": skm.cohen_kappa_score, "mcc": skm.matthews_corrcoef}[metric](y, yp)


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(3)
    n = 9
    s, p = rng.dirichlet([1, 1, 1], n), rng.dirichlet([1, 1, 1], n)
    y = rng.integers(0, K, n)
    missing = [1, 3, 4, 7, 8]
    labels = y.astype(object)
    labels[missing] = None
    return s, p, y, labels, missing


# ------------------------------------------------------------------------- exact laws
def test_exact_laws_equal_enumeration_of_the_completions(tiny):
    s, p, y, labels, missing = tiny
    yp = s.argmax(axis=1)
    ev = be.pemi(s, labels, p=p, metrics=("accuracy", *PER_CLASS), method="exact")
    cf = ev.closed_form
    laws = {}
    for completion in itertools.product(range(K), repeat=len(missing)):
        yy = y.copy()
        yy[missing] = completion
        weight = np.prod(p[missing, completion])
        for metric in ("accuracy", *PER_CLASS):
            for k, v in enumerate(np.atleast_1d(_sk(metric, yy, yp))):
                law = laws.setdefault((metric, k), {})
                key = round(float(v), 12)
                law[key] = law.get(key, 0.0) + weight
    for (metric, k), law in laws.items():
        point = cf.sel(metric=metric).isel({"class": k})
        values, probs = np.array(sorted(law)), np.array([law[v] for v in sorted(law)])
        keep = np.isfinite(point["pmf_prob"].values) & (point["pmf_prob"].values > 0)
        np.testing.assert_allclose(point["pmf_value"].values[keep], values, atol=1e-12)
        np.testing.assert_allclose(point["pmf_prob"].values[keep], probs, atol=1e-12)
        assert float(point["mean"]) == pytest.approx(probs @ values, abs=1e-12)


def test_two_classes_equal_binary_pemi(tiny):
    rng = np.random.default_rng(8)
    n = 40
    q = rng.beta(2, 2, n)
    s, p = np.column_stack([1 - q, q]), rng.beta(2, 3, n)
    y = (rng.random(n) < p).astype(float)
    y[rng.random(n) < 0.4] = np.nan
    metrics = ("accuracy", "precision", "recall", "f1", "specificity")
    classes = be.pemi(s, y, p=np.column_stack([1 - p, p]), metrics=metrics,
                      method="exact").closed_form
    binary = be.pemi(q, y, p=p, metrics=metrics, method="exact").closed_form
    for metric in metrics:
        for var in ("mean", "sd", "lower", "upper"):
            assert float(classes[var].sel(metric=metric).isel({"class": 1 if metric != "accuracy"
                                                              else 0})) == pytest.approx(
                float(binary[var].sel(metric=metric)), abs=1e-12)


# ------------------------------------------------------------------- delta-method laws
def test_delta_laws_agree_with_scikit_learn_on_simulated_completions():
    # the law against 20,000 completions (metrics by bayeval.multiclass, vectorised), whose
    # values equal scikit-learn's on the first 100 of them
    rng = np.random.default_rng(4)
    n, draws = 300, 20_000
    s = rng.dirichlet([2, 2, 2], n)
    y = _draw(s, rng)
    labels = y.astype(object)
    missing = rng.choice(n, 200, replace=False)
    labels[missing] = None
    metrics = ("balanced_accuracy", "macro_f1", "weighted_precision", "cohen_kappa", "mcc")
    cf = be.pemi(s, labels, p=s, metrics=metrics).closed_form
    yp = s.argmax(axis=1)
    completed = np.tile(y, (draws, 1))
    u = rng.random((draws, missing.size, 1))
    completed[:, missing] = np.minimum((u > s[missing].cumsum(axis=1)).sum(axis=-1), K - 1)
    matrices = matrix_of(completed, yp, K).astype(float)
    for metric in metrics:
        values = matrix_value(metric, matrices, 0.0)
        np.testing.assert_allclose(values[:100], [_sk(metric, c, yp) for c in completed[:100]],
                                   atol=1e-12)
        point = cf.sel(metric=metric).isel({"class": 0})
        sd = values.std(ddof=1)
        assert abs(float(point["mean"]) - values.mean()) <= 4 * sd / np.sqrt(draws)
        # sd: 4-sigma Monte-Carlo tolerance of an sd, plus 2 % for the delta method
        assert abs(float(point["sd"]) / sd - 1) <= 4 / np.sqrt(2 * draws) + 0.02


def test_imputation_draws_agree_with_the_exact_and_normal_laws():
    rng = np.random.default_rng(5)
    n = 200
    s = rng.dirichlet([2, 2, 2], n)
    labels = _draw(s, rng).astype(object)
    labels[rng.random(n) < 0.5] = None
    metrics = ("accuracy", "recall", "macro_f1")
    cf = be.pemi(s, labels, p=s, metrics=metrics).closed_form
    draws = be.pemi(s, labels, p=s, metrics=metrics, method="impute", draws=20_000,
                    random_seed=2).draws
    for metric, k in (("accuracy", 0), ("recall", 0), ("recall", 2), ("macro_f1", 0)):
        x = draws.sel(metric=metric).isel({"class": k}).values.ravel()
        point = cf.sel(metric=metric).isel({"class": k})
        assert abs(x.mean() - float(point["mean"])) <= 4 * x.std() / np.sqrt(x.size)
        assert abs(x.std() / float(point["sd"]) - 1) <= 4 / np.sqrt(2 * x.size) + 0.02


def test_ten_digits_against_simulated_completions():
    datasets = pytest.importorskip("sklearn.datasets")
    from sklearn.linear_model import LogisticRegression

    x, y = datasets.load_digits(return_X_y=True)
    proba = LogisticRegression(C=0.1, max_iter=2000).fit(x[::2], y[::2]).predict_proba(x[1::2])
    y, yp = y[1::2], proba.argmax(axis=1)
    rng = np.random.default_rng(13)
    missing = np.flatnonzero(rng.random(y.size) < 0.8 * (1 - proba.max(axis=1)) + 0.2)
    labels = y.astype(object)
    labels[missing] = None
    metrics = ("accuracy", "balanced_accuracy", "macro_f1", "mcc")
    cf = be.pemi(proba, labels, calibration="none", metrics=metrics).closed_form
    right = np.sum(np.delete(y == yp, missing)) + proba[missing, yp[missing]].sum()
    assert float(cf["mean"].sel(metric="accuracy")[0]) == pytest.approx(right / y.size,
                                                                        abs=1e-12)
    draws, k = 10_000, proba.shape[1]
    completed = np.tile(y, (draws, 1))
    u = rng.random((draws, missing.size, 1))
    completed[:, missing] = np.minimum((u > proba[missing].cumsum(axis=1)).sum(axis=-1), k - 1)
    matrices = matrix_of(completed, yp, k).astype(float)
    for metric in metrics[1:]:
        values = matrix_value(metric, matrices, 0.0)
        point = cf.sel(metric=metric).isel({"class": 0})
        sd = values.std(ddof=1)
        assert abs(float(point["mean"]) - values.mean()) <= 4 * sd / np.sqrt(draws)
        assert abs(float(point["sd"]) / sd - 1) <= 4 / np.sqrt(2 * draws) + 0.02


# ------------------------------------------------------------------------------ MNAR
def test_a_fixed_mnar_shift_is_the_reweighted_probabilities(tiny):
    s, p, _, labels, _ = tiny
    shifted = p * np.exp([0.0, 0.7, -0.4])
    shifted /= shifted.sum(axis=1, keepdims=True)
    a = be.pemi(s, labels, p=p, mnar={1: 0.7, 2: -0.4}, metrics=("accuracy", "recall"),
                method="exact").closed_form
    b = be.pemi(s, labels, p=shifted, metrics=("accuracy", "recall"),
                method="exact").closed_form
    for var in ("mean", "sd", "lower", "upper"):
        np.testing.assert_allclose(a[var].values, b[var].values, atol=1e-12)
    same = be.pemi(s, labels, p=p, mnar=[0.0, 0.0, 0.0], method="exact",
                   metrics="accuracy").closed_form
    assert same.identical(be.pemi(s, labels, p=p, method="exact", metrics="accuracy").closed_form)


def test_mnar_shift_of_the_missingness_rates_covers_the_truth():
    # class 2's labels are missing 4 times as often as the others': delta_2 = log 4 recovers
    # class 2's precision, MAR (delta = 0) is biased
    rng = np.random.default_rng(11)
    n, hits, biased = 600, [], []
    for _ in range(40):
        p = rng.dirichlet([1, 1, 1], n)
        y = _draw(p, rng)
        rate = np.where(y == 2, 0.6, 0.15)
        labels = y.astype(object)
        labels[rng.random(n) < rate] = None
        truth = _sk("precision", y, p.argmax(axis=1))[2]
        for out, mnar in ((hits, {2: np.log(4.0)}), (biased, None)):
            cf = be.pemi(p, labels, calibration="none", mnar=mnar,
                         metrics="precision").closed_form
            out.append(float(cf["lower"][0, 2]) <= truth <= float(cf["upper"][0, 2]))
    assert np.mean(hits) >= 0.85 and np.mean(biased) < 0.5


# ---------------------------------------------------------------------- calibration map
def _design(n: int, bias, slope: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """True probabilities softmax(z + bias) and scores softmax(slope z), z ~ N(0, 1.5^2)."""
    z = rng.normal(0.0, 1.5, (n, K))
    return special.softmax(z + np.asarray(bias), axis=1), special.softmax(slope * z, axis=1)


def test_the_map_posterior_finds_the_true_map_and_mixing_over_it_widens_the_law():
    rng = np.random.default_rng(6)
    n = 3000
    truth, s = _design(n, [0.0, 0.5, -0.5], 0.5, rng)  # the true map: a = bias, b = 2
    post = posterior(s, _draw(truth, rng), random_seed=0)
    for draws, true in ((post.a[:, 1:], [0.5, -0.5]), (post.b[:, None], [2.0])):
        mean = post.weights @ draws
        sd = np.sqrt(post.weights @ (draws - mean) ** 2)
        assert (np.abs(mean - true) <= 4 * sd).all()
    assert post.ess > 200
    labels = _draw(truth, rng).astype(object)
    labels[rng.random(n) < 0.95] = None
    wide = be.pemi(s, labels, metrics="accuracy", random_seed=1).closed_form
    with pytest.warns(UserWarning, match="conditional on the fitted calibration map"):
        narrow = be.pemi(s, labels, metrics="accuracy", calibration_uncertainty=False).closed_form
    assert float(wide["sd"][0, 0]) > 1.2 * float(narrow["sd"][0, 0])


# ------------------------------------------------------------------------ the PyMC model
@pytest.fixture(scope="module")
def both():
    rng = np.random.default_rng(1)
    n = 300
    p, s = _design(n, [0.0, 0.3, -0.3], 0.6, rng)
    labels = _draw(p, rng).astype(object)
    labels[rng.choice(n, 150, replace=False)] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = be.pemi(s, labels, metrics=("accuracy", "precision", "macro_f1"), method="both",
                     mnar={1: (0.2, 0.3)}, random_seed=0)
    return s, labels, ev


def test_the_model_agrees_with_the_fast_path(both):
    _, _, ev = both
    assert isinstance(ev, PEMIClasses)
    assert ev.check().attrs["passed"]
    assert ev.tree["posterior"].to_dataset()["delta"].sizes["class"] == K


def test_the_check_fails_when_the_fast_path_is_shifted(both):
    s, labels, ev = both
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        moved = be.pemi(s, labels, metrics=("accuracy", "precision", "macro_f1"),
                        mnar={1: 0.8}, random_seed=0).closed_form
    bad = PEMIClasses.create(method="pemi_multiclass", variant="both", closed_form=moved,
                             draws=ev.tree, estimand="posterior_predictive/value")
    assert not bad.check().attrs["passed"]


# ------------------------------------------------------------------------------- inputs
def test_pandas_inputs_pair_by_index_and_name_the_classes():
    rng = np.random.default_rng(9)
    n = 120
    s = rng.dirichlet([2, 2, 2], n)
    y = np.array(["cat", "dog", "eel"], dtype=object)[_draw(s, rng)]
    y[rng.random(n) < 0.4] = None
    index = [f"r{i}" for i in range(n)]
    frame = pd.DataFrame(s, columns=["cat", "dog", "eel"], index=index)
    labels = pd.Series(y, index=index)
    order = rng.permutation(n)
    metrics = ("accuracy", "recall", "macro_f1")
    ordered = be.pemi(frame, labels, metrics=metrics, random_seed=3)
    shuffled = be.pemi(frame.iloc[order], labels.iloc[rng.permutation(n)].loc[
        frame.index[order]].sample(frac=1.0, random_state=1), metrics=metrics, random_seed=3)
    assert ordered.closed_form["class"].values.tolist() == ["cat", "dog", "eel"]
    for var in ("mean", "sd", "lower", "upper"):
        np.testing.assert_allclose(shuffled.closed_form[var].values,
                                   ordered.closed_form[var].values, atol=1e-9)
    categorical = pd.Series(pd.Categorical(y, categories=["cat", "dog", "eel"]), index=index)
    again = be.pemi(frame, categorical, metrics=metrics, random_seed=3)
    np.testing.assert_allclose(again.closed_form["mean"].values,
                               ordered.closed_form["mean"].values, atol=1e-12)


def test_categorical_and_nullable_labels():
    s = np.array(S3 * 5)
    codes = [0, 1, None, 0] * 5
    declared = pd.Categorical([None if c is None else ["lo", "mid"][c] for c in codes],
                              categories=["lo", "mid", "hi"])  # "hi": a class no row holds
    by_name = be.pemi(s, declared, calibration="none", metrics="recall").closed_form
    assert by_name["class"].values.tolist() == ["lo", "mid", "hi"]
    nullable = pd.Series(codes, dtype="Int64")  # pd.NA where missing
    by_code = be.pemi(s, nullable, calibration="none", metrics="recall").closed_form
    assert by_code["class"].values.tolist() == [0, 1, 2]
    np.testing.assert_allclose(by_name["mean"].values, by_code["mean"].values, atol=1e-12)


def test_nothing_missing_gives_scikit_learns_metrics_with_zero_width():
    rng = np.random.default_rng(10)
    s = rng.dirichlet([2, 2, 2], 50)
    y = _draw(s, rng)
    metrics = ("accuracy", "f1", "macro_f1", "mcc")
    with pytest.warns(UserWarning, match="no label is missing"):
        cf = be.pemi(s, y.astype(object) + 0, metrics=metrics, calibration="none").closed_form
    yp = s.argmax(axis=1)
    for metric in metrics:
        expected = np.atleast_1d(_sk(metric, y, yp))
        got = cf["mean"].sel(metric=metric).values[: expected.size]
        np.testing.assert_allclose(got, expected, atol=1e-12)
        assert np.nanmax(cf["upper"].sel(metric=metric) - cf["lower"].sel(metric=metric)) == 0


def test_a_class_never_predicted_follows_zero_division_in_the_averages():
    rng = np.random.default_rng(12)
    s = rng.dirichlet([3, 3, 0.3], 80)
    s = s[s.argmax(axis=1) != 2]  # class 2 is never predicted: its precision is undefined
    y = rng.integers(0, K, len(s))
    for zd in (0.0, 1.0):
        with pytest.warns(UserWarning, match="no label is missing"):
            cf = be.pemi(s, y.astype(object), calibration="none", zero_division=zd,
                         metrics=("macro_precision", "weighted_precision")).closed_form
        for kind in ("macro", "weighted"):
            assert float(cf["mean"].sel(metric=f"{kind}_precision")[0]) == pytest.approx(
                skm.precision_score(y, s.argmax(axis=1), labels=list(range(K)), average=kind,
                                    zero_division=zd), abs=1e-12)


S3 = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]]


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(scores=[[0.7, 0.2, 0.2]] * 4), "rows must sum to 1"),
    (dict(scores=pd.DataFrame(S3, columns=["a", "b", "c"]), labels=["a", "z", None, "b"]),
     "not among the 3 classes"),
    (dict(labels=[0, 5, 7, 1]),
     "hold 4 classes and scores have 3 columns"),
    (dict(mnar={7: 0.5}), "mnar's keys must be classes"),
    (dict(mnar=[0.5, 0.1]), "a sequence of 3 such values"),
    (dict(mnar={1: (0.0, -1.0)}), "sd >= 0"),
    (dict(method="exact", metrics="macro_f1"), "method='exact' gives the exact laws"),
    (dict(p=S3, method="pymc"), "p must be None"),
    (dict(labels=[None] * 4), "no known value"),
    (dict(threshold=0.3), "threshold is for scores of one class"),
    (dict(calibration="isotonic"), "calibration must be one of"),
    (dict(p=[[0.5, 0.5]] * 4), "p must have the shape of scores"),
    (dict(metrics="average_precision"), "metrics"),
])
def test_bad_input(kwargs, message):
    args = dict(scores=S3, labels=[0, 1, None, 2]) | kwargs
    with pytest.raises(ValueError, match=message):
        be.pemi(args.pop("scores"), args.pop("labels"), **args)
