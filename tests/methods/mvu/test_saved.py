"""A saved Gaussian-imputation MVU read back with be.load: bayes_actions, decide(costs=) and
delta_sensitivity give the unsaved result's values (to 1e-12) from the saved group
``imputation`` (rows, imputer, MNAR shift, a linear classifier's coefficients); a non-linear
classifier is asked for by name and, given, reproduces the unsaved values under the same seed."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import bayeval as be
from bayeval.methods.mvu import MVUEvaluation, mvu
from bayeval.methods.mvu.mnar import delta_sensitivity
from tests.methods.mvu.four_features import BINARY, COV, IMPUTER, rows

LOSS2 = np.array([[0.0, 3.0], [1.0, 0.0], [0.35, 0.35]])


def frame(x):
    return pd.DataFrame(x, columns=list("abcd"), index=[f"r{i}" for i in range(len(x))])


def reloaded(ev, tmp_path):
    back = be.load(ev.to_netcdf(tmp_path / "mvu.nc"))
    assert isinstance(back, MVUEvaluation) and back.planner is None
    assert back.equals(ev)
    return back


def same(a: pd.DataFrame, b: pd.DataFrame):
    assert a.index.equals(b.index) and a.columns.equals(b.columns)
    for col in a.columns:
        if a[col].dtype.kind in "fi":
            np.testing.assert_allclose(b[col].to_numpy(float), a[col].to_numpy(float), rtol=0,
                                       atol=1e-12)
        else:
            assert a[col].tolist() == b[col].tolist()


@pytest.mark.parametrize("mnar", [None, (0.5, 0.4), {"a": (0.8, 0.5), "c": -1.0}],
                         ids=["mar", "scalar", "by_feature"])
def test_binary_linear_round_trip(mnar, tmp_path):
    x = frame(rows(8, 20, complete_last=True))
    ev = mvu(BINARY, x, imputer=IMPUTER, mnar=mnar, threshold=0.4)
    back = reloaded(ev, tmp_path)
    same(ev.bayes_actions(LOSS2, ["0", "1", "refer"], collect_cost=0.02),
         back.bayes_actions(LOSS2, ["0", "1", "refer"], collect_cost=0.02))
    same(delta_sensitivity(ev, [-1.0, 0.5]), delta_sensitivity(back, [-1.0, 0.5]))
    same(delta_sensitivity(ev, features=["b", "d"]), delta_sensitivity(back, features=["b", "d"]))
    if mnar is not None:
        same(delta_sensitivity(ev), delta_sensitivity(back))
    plan, again = ev.decide(0.95, costs=[1.0, 2.0, 0.5, 1.0]), back.decide(
        0.95, costs=[1.0, 2.0, 0.5, 1.0])
    same(plan, again)
    same(plan.attrs["by_feature"], again.attrs["by_feature"])


def test_multiclass_with_class_labels_round_trip(tmp_path):
    rng = np.random.default_rng(21)
    train = rng.multivariate_normal(np.zeros(4), COV, size=600)
    y = np.array(["low", "mid", "high"])[np.digitize(train @ [1.0, -0.5, 0.3, 0.2], [-0.5, 0.5])]
    clf = LogisticRegression().fit(train, y)
    x = rows(6, 22, complete_last=True)
    ev = mvu(clf, x, imputer=IMPUTER, mnar={1: 0.7}, random_seed=1)
    back = reloaded(ev, tmp_path)
    loss = pd.DataFrame(1 - np.eye(3), index=clf.classes_, columns=clf.classes_)
    a = ev.bayes_actions(loss, draws=500, random_seed=2)
    same(a, back.bayes_actions(loss, draws=500, random_seed=2))
    assert set(a["action"]) <= set(clf.classes_)
    tab = delta_sensitivity(ev, [0.0, 1.0], random_seed=3)
    again = delta_sensitivity(back, [0.0, 1.0], random_seed=3)
    same(tab, again)
    assert tab.attrs["y_hard"].equals(again.attrs["y_hard"])


def test_a_non_linear_classifier_is_asked_for_and_then_used(tmp_path):
    def squares(z):
        return BINARY.predict_proba(np.asarray(z) ** 2 - 0.8)

    x = rows(6, 23, complete_last=True)
    ev = mvu(squares, x, imputer=IMPUTER, mnar=0.4, draws=400, random_seed=4)
    back = reloaded(ev, tmp_path)
    for call in (lambda: back.bayes_actions(LOSS2, ["0", "1", "refer"]),
                 lambda: delta_sensitivity(back), lambda: back.decide(0.9, costs=1.0)):
        with pytest.raises(ValueError, match=r"pass classifier=<the fitted classifier"):
            call()
    with pytest.raises(ValueError, match="classifier gives 3 class probabilities"):
        back.bayes_actions(LOSS2, ["0", "1", "refer"], classifier=lambda z: np.full(
            (len(z), 3), 1 / 3))
    kwargs = {"draws": 300, "random_seed": 5}
    same(ev.bayes_actions(LOSS2, ["0", "1", "refer"], **kwargs),
         back.bayes_actions(LOSS2, ["0", "1", "refer"], classifier=squares, **kwargs))
    same(delta_sensitivity(ev, [1.0], **kwargs),
         delta_sensitivity(back, [1.0], classifier=squares, **kwargs))


def test_runs_without_a_planner_save_no_state(tmp_path):
    train = np.random.default_rng(0).multivariate_normal(np.zeros(4), COV, size=200)
    ev = mvu(BINARY, rows(3, 0), imputer="mean", train=train, heuristic="scale_prob")
    assert "imputation" not in ev.tree.children
    back = reloaded(ev, tmp_path)
    same(ev.bayes_actions(LOSS2, ["0", "1", "refer"]),
         back.bayes_actions(LOSS2, ["0", "1", "refer"]))
    with pytest.raises(ValueError, match="needs the classifier and the Gaussian imputer"):
        delta_sensitivity(back)
