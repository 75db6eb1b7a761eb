"""labelled with K classes: the exact Dirichlet posterior, its marginals, digits, coverage."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as skm

import bayeval as be
from bayeval.methods.labelled.fast import CLASS_METRICS_ALL, cell_prior
from bayeval.methods.labelled.multiclass import LabelledClasses
from bayeval.multiclass import from_matrix

MATRIX = np.array([[40, 6, 4], [5, 30, 5], [2, 3, 25]])


def rows(matrix, classes):
    """Labels and predictions with this confusion matrix."""
    k = len(classes)
    y = np.repeat(np.repeat(np.arange(k), k), matrix.ravel())
    yp = np.repeat(np.tile(np.arange(k), k), matrix.ravel())
    return np.asarray(classes, dtype=object)[y], np.asarray(classes, dtype=object)[yp]


def test_exact_draws_have_the_dirichlet_marginals():
    """Accuracy is Beta(a + t, b + n - t); recall of class k Beta(alpha_kk + C_kk, rest of row)."""
    y, yp = rows(MATRIX, ["cat", "dog", "eel"])
    draws = 40000
    ev = be.labelled(labels=y, y_pred=yp, metrics=["accuracy", "recall", "precision"],
                     prior=(2.0, 1.0), draws=draws, random_seed=1)
    cf = ev.closed_form
    alpha = cell_prior((2.0, 1.0), 3) + MATRIX
    laws = {("accuracy", "cat"): stats.beta(np.trace(alpha), alpha.sum() - np.trace(alpha))}
    for k, c in enumerate(["cat", "dog", "eel"]):
        laws["recall", c] = stats.beta(alpha[k, k], alpha[k].sum() - alpha[k, k])
        laws["precision", c] = stats.beta(alpha[k, k], alpha[:, k].sum() - alpha[k, k])
    for (metric, c), law in laws.items():
        point = cf.sel(metric=metric, **{"class": c})
        assert abs(float(point["mean"]) - law.mean()) <= 4 * law.std() / np.sqrt(draws)
        assert float(point["sd"]) == pytest.approx(law.std(), rel=4 * np.sqrt(0.5 / draws))
        q_se = np.sqrt(0.025 * 0.975 / draws) / law.pdf(law.ppf(0.025))  # a quantile's MC error
        assert float(point["lower"]) == pytest.approx(law.ppf(0.025), abs=4 * q_se)
    assert np.isnan(cf["mean"].sel(metric="accuracy", **{"class": "dog"}))


def test_summary_classes_and_layout():
    y, yp = rows(MATRIX, [3, 1, 2])  # ints out of order: sorted classes
    ev = be.labelled(labels=pd.Series(y.astype(int)), y_pred=yp.astype(int), random_seed=0)
    assert isinstance(ev, LabelledClasses)
    assert ev.closed_form["class"].values.tolist() == [1, 2, 3]
    s = ev.summary()
    overall = [m for m in CLASS_METRICS_ALL if m not in ("precision", "recall", "f1",
                                                          "specificity")]
    assert len(s) == len(overall) + 4 * 3
    law = stats.beta(1 + 95, 1 + 25)  # prior (1, 1): accuracy Beta(1 + t, 1 + n - t)
    assert s.loc[("accuracy", ""), "mean"] == pytest.approx(law.mean(),
                                                            abs=4 * law.std() / np.sqrt(20000))


def test_same_seed_same_result_and_scores_give_argmax():
    y, yp = rows(MATRIX, ["a", "b", "c"])
    scores = pd.DataFrame(np.eye(3)[pd.Index(["a", "b", "c"]).get_indexer(yp)] * 0.7 + 0.1,
                          columns=["a", "b", "c"])
    one = be.labelled(scores, y, random_seed=5)
    two = be.labelled(labels=y, y_pred=yp, random_seed=5)
    assert one.summary().equals(two.summary())


def test_binary_numbers_do_not_move():
    ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    assert type(ev).__name__ == "Evaluation"
    assert ev.summary().loc["accuracy", "mean"] == 0.75


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(labels=[0, 1, 2]), "needs y_pred or scores"),
    (dict(labels=[0, 1, 2], y_pred=[0, 1, 2], metrics="npv"), "metrics must be one of"),
    (dict(labels=[0, 1, 2], y_pred=[0, 1, 2], prior=np.ones((2, 2))), "3 x 3 array"),
    (dict(labels=[0, 1, 2], y_pred=[0, 1, 2], prior=(0, 1)), "prior must be two finite"),
    (dict(labels=["a", "b"], scores=[[0.5, 0.2, 0.3], [0.1, 0.1, 0.8]]), "name the columns"),
    (dict(labels=[0, 1, 2], y_pred=[0, 1, 2], draws=10), "draws"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        be.labelled(**kwargs)


@pytest.mark.filterwarnings("ignore:self.within_class_std_dev_")
def test_digits_posterior_means_near_the_observed_metrics():
    """10 classes, a nearest-centroid classifier: the posterior means are the observed metrics
    shrunk by the prior's 2 pseudo-rows and the posterior's spread (within 2 sd + 0.01)."""
    from sklearn.datasets import load_digits
    from sklearn.neighbors import NearestCentroid

    x, y = load_digits(return_X_y=True)
    fit = NearestCentroid().fit(x[::2], y[::2])
    y_test, y_pred = y[1::2], fit.predict(x[1::2])
    ev = be.labelled(labels=y_test, y_pred=y_pred, random_seed=0, draws=4000)
    s = ev.summary()
    cm = skm.confusion_matrix(y_test, y_pred)
    observed = {
        "accuracy": skm.accuracy_score(y_test, y_pred),
        "balanced_accuracy": skm.balanced_accuracy_score(y_test, y_pred),
        "macro_f1": skm.f1_score(y_test, y_pred, average="macro"),
        "weighted_precision": skm.precision_score(y_test, y_pred, average="weighted"),
        "cohen_kappa": skm.cohen_kappa_score(y_test, y_pred),
        "mcc": skm.matthews_corrcoef(y_test, y_pred),
    }
    for metric, value in observed.items():
        row = s.loc[(metric, "")]
        assert abs(row["mean"] - value) <= 2 * row["sd"] + 0.01, metric
        assert row["lower"] <= value <= row["upper"], metric
    recall = skm.recall_score(y_test, y_pred, average=None)
    assert np.abs(s.loc["recall"]["mean"].values - recall).max() < 0.03
    assert from_matrix("accuracy", cm) == observed["accuracy"]


def test_reduced_coverage_k3():
    """95 % intervals of 6 metrics over 60 replications of n = 150 rows (the benchmark runs
    more): each covers at least 51 of 60 (binomial 0.95: P(X <= 50) = 0.003)."""
    rng = np.random.default_rng(20261202)
    pi = np.array([[0.30, 0.04, 0.02], [0.05, 0.22, 0.05], [0.02, 0.05, 0.25]])
    metrics = ["accuracy", "macro_f1", "cohen_kappa", "mcc", "recall", "weighted_precision"]
    truth = {m: from_matrix(m, pi) for m in metrics}
    hits = {m: 0 for m in metrics}
    for _ in range(60):
        cm = rng.multinomial(150, pi.ravel()).reshape(3, 3)
        y, yp = rows(cm, [0, 1, 2])
        cf = be.labelled(labels=y.astype(int), y_pred=yp.astype(int), metrics=metrics,
                         draws=2000, random_seed=rng).closed_form
        for m in metrics:
            value = truth[m][0] if m == "recall" else truth[m]
            point = cf.sel(metric=m).isel({"class": 0})
            hits[m] += bool(point["lower"] <= value <= point["upper"])
    assert min(hits.values()) >= 51, hits
