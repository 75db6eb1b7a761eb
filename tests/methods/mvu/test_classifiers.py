"""be.mvu on any scikit-learn classifier (linear: exact; others: the quasi-Monte-Carlo vote of
Gaussian imputations), Dirichlet summaries of degenerate draws, and DataFrame rows and features
kept end to end."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler
from threadpoolctl import threadpool_limits

import bayeval as be
from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.estimators import GaussianImputer


@pytest.fixture(autouse=True)
def one_thread():
    """Gradient boosting's OpenMP threads wait for each other on a busy machine."""
    with threadpool_limits(1):
        yield


COV = np.array([[1.0, 0.6, 0.3, 0.0], [0.6, 1.0, 0.4, 0.2], [0.3, 0.4, 1.0, 0.5],
                [0.0, 0.2, 0.5, 1.0]])
NAMES = ["age", "bmi", "glucose", "insulin"]


def data(n_train=1500, n_test=24, seed=0):
    """Correlated Gaussian features, a non-linear label, test rows with one or two missing."""
    rng = np.random.default_rng(seed)
    x = rng.multivariate_normal(np.zeros(4), COV, size=n_train + n_test)
    y = (x[:, 0] + x[:, 1] * x[:, 2] - 0.5 * x[:, 3] + 0.5 * rng.normal(size=len(x)) > 0)
    test = x[n_train:].copy()
    test[np.arange(n_test), rng.integers(0, 4, n_test)] = np.nan
    test[::3, 3] = np.nan
    return x[:n_train], y[:n_train].astype(int), test


def reference(clf, train, test, draws=20_000):
    """c_hard by the independent votes of many imputations."""
    return mvu(clf, test, train=train, method="mc", draws=draws,
               random_seed=99).closed_form["c_hard"].values


def within_4_se(c, ref, draws=1000, ref_draws=20_000):
    """|c - ref| within 4 binomial standard errors of the difference, at the pooled c_hard."""
    p = (c * draws + ref * ref_draws) / (draws + ref_draws)
    return np.abs(c - ref) <= 4 * np.sqrt(p * (1 - p) * (1 / draws + 1 / ref_draws)) + 1e-12


CLASSIFIERS = {
    "random forest": lambda: RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0),
    "gradient boosting": lambda: HistGradientBoostingClassifier(max_iter=15, random_state=0),
    "mlp": lambda: MLPClassifier((8,), max_iter=400, random_state=0),
}


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_a_nonlinear_classifier_gets_the_vote_of_its_imputations(name):
    """No crash, the reason in the notes, and c_hard within 4 (independent-draws) standard
    errors of a 20,000-draw reference; the bound method works as well as the estimator."""
    train, y, test = data()
    clf = CLASSIFIERS[name]().fit(train, y)
    ev = mvu(clf.predict_proba, test, train=train, random_seed=1)
    assert "not linear" in ev.warnings[0] and "quasi-Monte-Carlo" in ev.warnings[0]
    c = ev.closed_form["c_hard"].values
    assert within_4_se(c, reference(clf, train, test)).all()


def test_the_default_is_more_accurate_than_the_plain_vote():
    """Mean |c_hard error| against a 20,000-draw reference over 30 rows and 2 seeds: the
    quasi-Monte-Carlo vote (default) below the 1,000-draw independent vote (method='mc')."""
    train, y, test = data(n_test=30, seed=3)
    clf = CLASSIFIERS["random forest"]().fit(train, y)
    ref = reference(clf, train, test)
    err = {"exact": [], "mc": []}
    for seed in range(2):
        for method in err:
            c = mvu(clf, test, train=train, method=method, random_seed=seed).closed_form
            err[method].append(np.abs(c["c_hard"].values - ref).mean())
    assert np.mean(err["exact"]) < np.mean(err["mc"])


def test_logistic_regression_stays_exact():
    train, y, test = data()
    clf = LogisticRegression().fit(train, y)
    ev = mvu(clf.predict_proba, test, train=train)
    assert ev.warnings == () or not any("not linear" in w for w in ev.warnings)
    c = ev.closed_form["c_hard"].values
    assert "c_hard_se" not in ev.closed_form
    assert within_4_se(c, reference(clf, train, test), draws=10**12).all()


def test_a_pipeline_with_a_column_transformer_on_a_dataframe():
    """Named columns in a new order, no feature-name warning (warnings are errors); an affine
    column transformer is still exact, a spline one gets the vote."""
    train, y, test = data()
    frame = pd.DataFrame(train, columns=NAMES)
    rows = pd.DataFrame(test, columns=NAMES, index=[f"patient-{i:04d}" for i in range(500, 524)])
    rows = rows[NAMES[::-1]]
    linear = make_pipeline(ColumnTransformer([("z", StandardScaler(), NAMES)]),
                           LogisticRegression()).fit(frame, y)
    spline = make_pipeline(ColumnTransformer([("z", StandardScaler(), NAMES[:2]),
                                              ("s", SplineTransformer(), NAMES[2:])]),
                           LogisticRegression()).fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = mvu(linear, rows, train=frame[NAMES[::-1]], random_seed=0)
        voted = mvu(spline, rows, train=frame, draws=400, random_seed=0)
    assert "c_hard_se" not in exact.closed_form
    assert "not linear" in voted.warnings[0]
    assert list(exact.closed_form["feature"].values) == NAMES
    np.testing.assert_array_equal(exact.closed_form["missing"].values, np.isnan(test))
    c = exact.closed_form["c_hard"].values
    assert within_4_se(c, reference(linear, frame, rows), draws=10**12).all()


def test_dataframe_rows_keep_their_labels_end_to_end(tmp_path):
    train, y, test = data(n_test=6)
    clf = RandomForestClassifier(n_estimators=10, random_state=0).fit(
        pd.DataFrame(train, columns=NAMES), y)
    ids = [f"patient-{i:04d}" for i in range(500, 506)]
    rows = pd.DataFrame(test, columns=NAMES, index=pd.Index(ids, name="patient"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = mvu(clf, rows, train=pd.DataFrame(train, columns=NAMES), draws=64, random_seed=0)
    assert ev.summary().index.tolist() == ids
    assert ev.decide(0.9).index.tolist() == ids
    ev.report(tmp_path / "mvu.html")
    assert "patient-0500" in (tmp_path / "mvu.html").read_text()
    ev.to_netcdf(tmp_path / "mvu.nc")
    back = be.load(tmp_path / "mvu.nc")
    assert back.closed_form["instance"].values.tolist() == ids
    assert back.closed_form["feature"].values.tolist() == NAMES


def test_dataframe_inputs_that_cannot_be_matched_are_refused():
    train, y, test = data(n_test=4)
    clf = LogisticRegression().fit(pd.DataFrame(train, columns=NAMES), y)
    rows = pd.DataFrame(test, columns=NAMES)
    with pytest.raises(ValueError, match=r"X must have the columns .* missing \['insulin'\]"):
        mvu(clf, rows.drop(columns="insulin"), train=train)
    with pytest.raises(ValueError, match="train must have the columns"):
        mvu(clf, rows, train=pd.DataFrame(train, columns=["a", "b", "c", "d"]))
    with pytest.raises(ValueError, match="flat and unique"):
        mvu(clf, rows.set_index(pd.Index([0, 0, 1, 2])), train=train)


def test_dirichlet_summaries_of_degenerate_draws():
    """Draws within 1e-6 of a vertex (no maximum-likelihood Dirichlet: the moments, said in the
    notes) and a class with probability 0 in every draw (floored): no error, c_hard 1."""
    imputer = GaussianImputer(np.zeros(2), np.eye(2))
    x = np.array([[np.nan, 0.5], [0.2, np.nan]])

    def sure(z):
        p = 1e-8 * (1 + np.tanh(z[:, 0]))
        return np.stack([p, 1 - 2 * p, p], axis=1)

    ev = mvu(sure, x, imputer=imputer, dirichlet="mle", draws=200, random_seed=0)
    assert "moments fit" in ev.warnings[0]
    np.testing.assert_allclose(ev.closed_form["c_hard"].values, 1.0)

    def two_of_three(z):
        p = 1 / (1 + np.exp(-3 * z[:, 0]))
        return np.stack([p, 1 - p, np.zeros(len(z))], axis=1)

    for fit in ("mle", "moments"):
        cf = mvu(two_of_three, x, imputer=imputer, dirichlet=fit, draws=200,
                 random_seed=0).closed_form
        assert np.isfinite(cf["c_hard"].values).all()


def test_scale_needs_a_dirichlet_summary():
    train, y, test = data(n_test=4)
    clf = CLASSIFIERS["random forest"]().fit(train, y)
    with pytest.raises(ValueError, match="scale calibrates a Dirichlet MVU"):
        mvu(clf, test, train=train, scale=0.5)
    assert np.isfinite(mvu(clf, test, train=train, scale=0.5, dirichlet="moments",
                           draws=100).closed_form["c_hard"].values).all()


def test_the_class_coordinate_names_the_classifiers_classes(tmp_path):
    """``proba``'s class coordinate is the classifier's ``classes_`` (as ``y_hard``), in the
    order of its ``predict_proba`` columns, and survives a round trip to netCDF."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 3))
    names = np.array(["low", "mid", "high"])[np.digitize(x[:, 0] + x[:, 1], [-0.7, 0.7])]
    clf = LogisticRegression().fit(x, names)
    rows = x[:6].copy()
    rows[:, 2] = np.nan
    ev = mvu(clf, rows, train=x)
    cf = ev.closed_form
    assert cf["class"].values.tolist() == clf.classes_.tolist() == ["high", "low", "mid"]
    best = cf["proba"].idxmax("class").values
    assert best.tolist() == cf["y_soft"].values.tolist()
    back = be.load(ev.to_netcdf(tmp_path / "mvu.nc"))
    assert back.closed_form["class"].values.tolist() == ["high", "low", "mid"]
