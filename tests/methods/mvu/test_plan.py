"""What to measure first: flip probabilities and expected gains of revealing one feature, exact
(binary linear, Gaussian imputation) and from imputations (a random forest), against Monte Carlo
that reveals the feature; the greedy plan under costs."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

from bayeval.methods.mvu import mvu
from tests.methods.mvu.four_features import BINARY as CLF
from tests.methods.mvu.four_features import COV, IMPUTER
from tests.methods.mvu.four_features import rows as four_rows


def rows(n, seed):
    return four_rows(n, seed, least=2, spread=2)


def revealed(clf, x, i, n_values, seed, **kwargs):
    """y_hard and c_hard of ``n_values`` copies of row x with feature i drawn from its
    conditional law (the other missing features stay missing)."""
    m = np.isnan(x)[None]
    values = IMPUTER.sample(x[None], m, n_values, seed)[0, :, i]
    copies = np.repeat(x[None], n_values, axis=0)
    copies[:, i] = values
    cf = mvu(clf, copies, imputer=IMPUTER, random_seed=seed, **kwargs).closed_form
    return cf["y_hard"].values, cf["c_hard"].values


def test_exact_flip_probability_and_gain_match_revealing_the_feature():
    x = rows(6, 0)
    ev = mvu(CLF, x, imputer=IMPUTER)
    plan = ev.decide(1.0, costs=1.0)
    by = plan.attrs["by_feature"]
    n = 4000
    for r in range(len(x)):
        y, c = plan["y_hard"].iloc[r], plan["c_hard"].iloc[r]
        for i in np.flatnonzero(np.isnan(x[r])):
            y_new, c_new = revealed(CLF, x[r], i, n, seed=r * 10 + i)
            flip = np.mean(y_new != y)
            p, g = by.loc[(r, i), "p_flip"], by.loc[(r, i), "gain"]
            assert abs(p - flip) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12
            assert abs(g - (c_new.mean() - c)) <= 4 * c_new.std() / np.sqrt(n) + 1e-12


def test_the_greedy_plan_starts_with_the_likeliest_flip_and_respects_costs():
    x = rows(40, 1)
    ev = mvu(CLF, x, imputer=IMPUTER)
    plan = ev.decide(1.0, costs=1.0)
    by = plan.attrs["by_feature"]["p_flip"]
    likeliest = [by.loc[r].idxmax() for r in plan.index]
    assert (plan["first"].to_numpy() == np.array(likeliest)).all()
    np.testing.assert_allclose(plan["c_hard_after"], 1.0)  # level 1: everything is planned
    # a feature 100x cheaper goes first wherever it may flip the decision at all
    cheap = ev.decide(1.0, costs=[1.0, 1.0, 1.0, 0.01])
    flip = cheap.attrs["by_feature"]["p_flip"]
    helps = [r for r in plan.index if (r, 3) in flip.index
             and flip.loc[(r, 3)] > 0.01 * flip.loc[r].max()]
    assert helps and (cheap.loc[helps, "first"] == 3).all()
    # stop at the level: the plan's expected c_hard reaches 0.9 and one feature fewer would not
    short = ev.decide(0.9, costs=1.0)
    todo = short[short["collect"]]
    assert (todo["c_hard_after"] >= 0.9 - 1e-12).all()
    assert (todo["plan"].str.count(",") + 1 <= todo.index.map(lambda r: np.isnan(x[r]).sum())).all()


def test_a_random_forest_plan_starts_with_the_likeliest_flip():
    """The first feature of the plan (equal costs) is the one whose revealing alone most often
    changes the random forest's decision, by Monte Carlo over 200 revealed values (each decided
    by 500 votes), in at least 90 % of the rows to collect."""
    rng = np.random.default_rng(2)
    train = rng.multivariate_normal(np.zeros(4), COV, size=1500)
    y = (train[:, 0] - 0.8 * train[:, 1] + 0.6 * train[:, 2] * train[:, 3] > 0).astype(int)
    with threadpool_limits(1):
        clf = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0).fit(train, y)
        x = rows(12, 3)
        ev = mvu(clf, x, imputer=IMPUTER, random_seed=0)
        plan = ev.decide(0.95, costs=1.0)
        todo = plan[plan["collect"]]
        agree = []
        for r in todo.index:
            flips = {i: np.mean(revealed(clf, x[r], i, 200, seed=r, draws=500)[0]
                                != todo.loc[r, "y_hard"]) for i in np.flatnonzero(np.isnan(x[r]))}
            agree.append(todo.loc[r, "first"] == max(flips, key=flips.get))
    assert len(agree) >= 8 and np.mean(agree) >= 0.9, agree


def test_plans_need_the_run_and_valid_costs(tmp_path):
    x = rows(3, 4)
    ev = mvu(CLF, x, imputer=IMPUTER)
    with pytest.raises(ValueError, match="costs must be positive"):
        ev.decide(0.9, costs=[1.0, 2.0])
    with pytest.raises(ValueError, match="unknown \\['age'\\], missing \\['0', '1'"):
        ev.decide(0.9, costs={"age": 1.0})  # names as the user wrote them, not np.str_('0')
    ev.to_netcdf(tmp_path / "mvu.nc")
    from bayeval import load
    from bayeval.methods.mvu import MVUEvaluation
    back = MVUEvaluation(load(tmp_path / "mvu.nc").tree)  # a linear run plans after loading
    assert back.decide(0.9, costs=1.0).equals(ev.decide(0.9, costs=1.0))
    back.tree, back.planner = back.tree.drop_nodes("imputation"), None
    with pytest.raises(ValueError, match="needs the classifier and the imputer"):
        back.decide(0.9, costs=1.0)
