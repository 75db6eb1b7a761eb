"""Plans over groups of features measured together: a group of one is its feature; a group's flip
probability against the closed form and against Monte Carlo that reveals the group (linear and
non-linear classifiers); the greedy order against every order; names, index and bad groups."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.copula import CopulaImputer
from tests.methods.mvu.four_features import BINARY as CLF
from tests.methods.mvu.four_features import COV, IMPUTER
from tests.methods.mvu.four_features import rows as four_rows

W, B = np.asarray(CLF.coef_)[0], float(np.asarray(CLF.intercept_)[0])
COLUMNS = ["p_flip", "gain", "cost"]


def nonlinear(x):
    """A classifier whose decision is not a linear form: P(1) = sigmoid(x1 x2 + x3 - x4)."""
    x = np.asarray(x, dtype=float)
    p = special.expit(2 * x[:, 0] * x[:, 1] + x[:, 2] - x[:, 3])
    return np.column_stack([1 - p, p])


def logit_law(x, revealed):
    """Mean m of the logit given x's observed features, and tau_S^2, the variance of its
    conditional mean once the missing features ``revealed`` are known (plain linear algebra)."""
    o, miss = np.flatnonzero(~np.isnan(x)), np.flatnonzero(np.isnan(x))
    k = COV[np.ix_(miss, o)] @ np.linalg.inv(COV[np.ix_(o, o)])
    mean_m, cov_m = k @ x[o], COV[np.ix_(miss, miss)] - k @ COV[np.ix_(o, miss)]
    m = W[o] @ x[o] + W[miss] @ mean_m + B
    s = [list(miss).index(i) for i in revealed]
    c = cov_m[:, s].T @ W[miss]
    return m, mean_m, cov_m, miss, s, float(c @ np.linalg.solve(cov_m[np.ix_(s, s)], c))


def test_a_group_of_one_feature_is_the_feature_alone():
    x = four_rows(8, 0, least=2, spread=2)
    ev = mvu(CLF, x, imputer=IMPUTER)
    costs = [1.0, 2.0, 0.5, 1.5]
    alone = ev.decide(0.95, costs=costs)
    for i in range(4):
        named = {f"g{j}" if j == i else j: c for j, c in enumerate(costs)}
        one = ev.decide(0.95, costs=named, groups={f"g{i}": [i]})
        for col in ("p_flip_first", "gain_first", "plan_cost", "c_hard_after"):
            np.testing.assert_allclose(one[col], alone[col], rtol=0, atol=1e-12)
        rename = {i: f"g{i}"}
        assert one["first"].tolist() == alone["first"].replace(rename).tolist()
        assert one["plan"].tolist() == [", ".join(str(rename.get(int(f), f)) for f in p.split(", "))
                                        if p else "" for p in alone["plan"]]
        by = alone.attrs["by_feature"].rename(index=rename, level="feature")
        np.testing.assert_allclose(one.attrs["by_feature"][COLUMNS], by[COLUMNS], atol=1e-12)
        assert one.attrs["by_feature"].index.equals(by.index)
    # the same Monte-Carlo path (a non-linear classifier, the same seed) gives the same numbers
    runs = [mvu(nonlinear, x[:3], imputer=IMPUTER, random_seed=5).decide(1.0, costs=1.0,
                                                                        groups=g)
            for g in (None, {1: [1]})]
    np.testing.assert_allclose(runs[1].attrs["by_feature"], runs[0].attrs["by_feature"],
                               rtol=0, atol=1e-12)


def test_a_two_feature_group_of_a_linear_classifier_against_the_closed_form_and_monte_carlo():
    """Revealing x1 and x3 together: p_flip = Phi(-|m| / tau_S) with tau_S^2 the variance of the
    logit's conditional mean explained by (x1, x3); and the share of 20,000 revealed pairs, each
    decided by the sign of its conditional logit mean, within 4 Monte-Carlo standard errors.
    Where the group holds every missing feature its p_flip is 1 - c_hard, the probability that
    the decision on the complete row (a Gaussian linear form) differs."""
    x = np.array([[np.nan, 0.4, np.nan, np.nan], [0.3, np.nan, np.nan, np.nan],
                  [np.nan, -0.2, np.nan, 0.5]])
    ev = mvu(CLF, x, imputer=IMPUTER)
    plan = ev.decide(1.0, costs={"pair": 1.0, 1: 1.0, 3: 1.0}, groups={"pair": [0, 2]})
    by = plan.attrs["by_feature"]["p_flip"]
    rng, n = np.random.default_rng(7), 20_000
    for r, revealed in ((0, [0, 2]), (1, [2]), (2, [0, 2])):
        m, mean_m, cov_m, miss, s, tau2 = logit_law(x[r], revealed)
        exact = special.ndtr(-abs(m) / np.sqrt(tau2))
        assert abs(by.loc[(r, "pair")] - exact) <= 1e-10
        # Monte Carlo: draw x_S, condition the rest on it, decide by the new logit mean's sign
        xs = rng.multivariate_normal(mean_m[s], cov_m[np.ix_(s, s)], size=n)
        rest = [j for j in range(len(miss)) if j not in s]
        k = cov_m[np.ix_(rest, s)] @ np.linalg.inv(cov_m[np.ix_(s, s)])
        new_rest = mean_m[rest] + (xs - mean_m[s]) @ k.T
        new_m = m + (xs - mean_m[s]) @ W[miss[s]] + (new_rest - mean_m[rest]) @ W[miss[rest]]
        flips = np.mean((new_m > 0) != (plan["y_hard"].iloc[r] == 1))
        assert abs(by.loc[(r, "pair")] - flips) <= 4 * np.sqrt(exact * (1 - exact) / n)
    # row 2 misses x1, x3 only: the group reveals the complete row
    m, _, _, _, _, tau2 = logit_law(x[2], [0, 2])
    assert abs(by.loc[(2, "pair")] - special.ndtr(-abs(m) / np.sqrt(tau2))) <= 1e-10
    assert abs(by.loc[(2, "pair")] - (1 - plan["c_hard"].iloc[2])) <= 1e-10
    # row 1 misses x3 of the group only: the group is x3 alone, at the group's cost
    alone = ev.decide(1.0, costs=1.0).attrs["by_feature"]
    assert abs(by.loc[(1, "pair")] - alone.loc[(1, 2), "p_flip"]) <= 1e-12


def test_a_group_of_a_nonlinear_classifier_against_monte_carlo():
    """The planner's p_flip of (x1, x2) from 64 revealed values times 256 imputations, against
    400 revealed pairs each decided by 2,000 imputations of the rest: within 4 standard errors
    of both (the planner's counted as 64 independent values, an upper bound for its
    quasi-Monte-Carlo points)."""
    x = np.array([[np.nan, np.nan, 0.2, np.nan]])
    ev = mvu(nonlinear, x, imputer=IMPUTER, draws=2000, random_seed=1)
    y = ev.summary()["y_hard"].iloc[0]
    p = ev.decide(1.0, costs=1.0, groups={"pair": [0, 1]}).attrs["by_feature"].loc[
        (0, "pair"), "p_flip"]
    n = 400
    pairs = IMPUTER.sample(x, np.isnan(x), n, 3)[0]
    copies = np.repeat(x, n, axis=0)
    copies[:, :2] = pairs[:, :2]
    flips = np.mean(mvu(nonlinear, copies, imputer=IMPUTER, draws=2000,
                        random_seed=4).summary()["y_hard"].to_numpy() != y)
    q = (p + flips) / 2
    assert 0.05 < q < 0.95  # a case where the group matters but does not settle everything
    assert abs(p - flips) <= 4 * np.sqrt(q * (1 - q) * (1 / 64 + 1 / n))


def test_a_copula_group_of_one_is_the_feature_alone():
    corr = [[1.0, 0.8, 0.0], [0.8, 1.0, 0.3], [0.0, 0.3, 1.0]]
    imp = CopulaImputer(corr, [([0, 1], [0.5, 0.5])] * 3, ["ordinal"] * 3)
    x = [[np.nan, 1.0, np.nan], [np.nan, np.nan, 0.0]]
    runs = [mvu(lambda z: special.expit(2 * np.asarray(z, float) @ [1.0, 1.0, 0.5] - 2),
                x, imputer=imp, random_seed=3).decide(1.0, costs=1.0, groups=g)
            for g in (None, {"a": [0]}, {"a": [0, 2]})]
    np.testing.assert_allclose(runs[1].attrs["by_feature"], runs[0].attrs["by_feature"],
                               rtol=0, atol=1e-12)
    assert runs[2].attrs["by_feature"].index.get_level_values("feature").tolist() == [
        "a", "a", 1]


def exact_law(x, units):
    """p_flip and the expected c_hard once the units named are revealed, of every set of units
    of row x: closed-form tau_S, and E Phi(|m'| / s_rest) over m' ~ N(m, tau_S^2) by adaptive
    quadrature split at the kink m' = 0."""
    m, _, cov_m, miss, _, _ = logit_law(x, [])
    c = cov_m @ W[miss]
    s2 = float(W[miss] @ c)

    def law(names):
        idx = [list(miss).index(i) for n in names for i in units[n] if i in miss]
        if not idx:
            return 0.0, special.ndtr(abs(m) / np.sqrt(s2))
        tau2 = float(c[idx] @ np.linalg.solve(cov_m[np.ix_(idx, idx)], c[idx]))
        tau, rest = np.sqrt(tau2), np.sqrt(max(s2 - tau2, 1e-300))

        def density(u):  # of the new logit mean m', times the c_hard it leaves
            return stats.norm.pdf(u, m, tau) * special.ndtr(abs(u) / rest)

        after = sum(integrate.quad(density, a, b, epsabs=1e-13)[0]
                    for a, b in ((-np.inf, 0.0), (0.0, np.inf)))
        return special.ndtr(-abs(m) / tau), after

    return law, [n for n in units if any(i in miss for i in units[n])]


def greedy_by_enumeration(law, present, costs, level):
    """The order of all orders of ``present`` whose every step has the largest (increase of
    p_flip, then of the expected c_hard) per cost, cut where the expected c_hard reaches
    ``level``."""
    best = None
    for order in itertools.permutations(present):
        done, ok = [], True
        for unit in order:
            flip, after = law(done)
            if after >= level:
                break
            steps = {u: ((law([*done, u])[0] - flip) / costs[u],
                         (law([*done, u])[1] - after) / costs[u])
                     for u in present if u not in done}
            ok &= steps[unit] == max(steps.values())
            done.append(unit)
        if ok:
            best = done
    return best


def test_the_greedy_order_is_the_best_step_by_step_of_every_order():
    """Every missing feature of a row, with a group of two: the plan is the one order of all
    orders that is best step by step (closed forms of every set), cut at the level. Greedy is
    not the cheapest set: row 1 at level 0.7 plans feature 3 then 2 (1.4) where feature 2 alone
    (1.0) would do."""
    x = np.array([[np.nan, np.nan, 0.1, np.nan], [np.nan, -0.3, np.nan, np.nan],
                  [np.nan, np.nan, np.nan, 0.8], [np.nan, np.nan, -0.5, np.nan]])
    groups, costs = {"ab": [0, 1]}, {"ab": 1.5, 2: 1.0, 3: 0.4}
    units = {"ab": [0, 1], 2: [2], 3: [3]}
    ev = mvu(CLF, x, imputer=IMPUTER)
    partial = []
    for level in (0.7, 0.85):
        plan = ev.decide(level, costs=costs, groups=groups)
        for r in np.flatnonzero(plan["collect"]):
            law, present = exact_law(x[r], units)
            best = greedy_by_enumeration(law, present, costs, level)
            assert plan.loc[r, "plan"] == ", ".join(map(str, best))
            assert plan.loc[r, "plan_cost"] == pytest.approx(sum(costs[u] for u in best))
            assert plan.loc[r, "c_hard_after"] == pytest.approx(law(best)[1], abs=1e-8)
            partial.append(len(best) < len(present))
    assert sum(partial) >= 3 and not all(partial)  # plans cut short, and complete ones
    assert ev.decide(0.7, costs=costs, groups=groups).loc[1, "plan"] == "3, 2"


def test_pandas_keeps_names_and_index():
    df = pd.DataFrame(four_rows(5, 2, least=2, spread=2), columns=["age", "bp", "chol", "hdl"],
                      index=[f"p{i}" for i in range(5)])
    ev = mvu(CLF, df, imputer=IMPUTER)
    plan = ev.decide(1.0, costs={"lipids": 2.0, "age": 1.0, "bp": 0.5},
                     groups={"lipids": ["chol", "hdl"]})
    assert plan.index.tolist() == df.index.tolist()
    by = plan.attrs["by_feature"]
    assert set(by.index.get_level_values("instance")) <= set(df.index)
    assert set(by.index.get_level_values("feature")) <= {"lipids", "age", "bp"}
    todo = plan[plan["collect"]]
    assert set(todo["first"]) <= {"lipids", "age", "bp"}
    for r, row in df.iterrows():
        has = ("lipids" in by.loc[r].index) if r in by.index.get_level_values(0) else False
        assert has == (row[["chol", "hdl"]].isna().any() and bool(plan.loc[r, "collect"]))
    assert (by.xs("lipids", level="feature")["cost"] == 2.0).all()


@pytest.mark.parametrize(("groups", "message"), [
    ({"panel": ["chol", "ldl"]}, "groups: group 'panel' names 'ldl', which is not a feature"),
    ({"a": ["chol"], "b": ["chol", "hdl"]}, "feature 'chol' is in groups 'a' and 'b'"),
    ({"panel": []}, "groups must map each group to a non-empty list"),
    ({"panel": "chol"}, "groups must map each group to a non-empty list"),
    ([["chol", "hdl"]], "groups must be a dict"),
    ({"age": ["chol", "hdl"]}, "groups: group 'age' has the name of a feature outside it"),
])
def test_bad_groups_name_the_argument(groups, message):
    df = pd.DataFrame(four_rows(3, 4), columns=["age", "bp", "chol", "hdl"])
    ev = mvu(CLF, df, imputer=IMPUTER)
    with pytest.raises(ValueError, match=message):
        ev.decide(0.9, costs=1.0, groups=groups)


def test_groups_need_costs_by_group_name():
    df = pd.DataFrame(four_rows(3, 4), columns=["age", "bp", "chol", "hdl"])
    ev = mvu(CLF, df, imputer=IMPUTER)
    with pytest.raises(ValueError, match="groups= names features measured together"):
        ev.decide(0.9, groups={"lipids": ["chol", "hdl"]})
    with pytest.raises(ValueError, match=r"unknown \['chol'\], missing \['lipids'\]"):
        ev.decide(0.9, costs={"age": 1, "bp": 1, "chol": 1}, groups={"lipids": ["chol", "hdl"]})
    with pytest.raises(ValueError, match="one number or a dict by group or feature name"):
        ev.decide(0.9, costs=[1, 1, 1, 1], groups={"lipids": ["chol", "hdl"]})


def test_the_runs_groups_are_the_default_units_in_either_form():
    """mvu(groups=) as a dict or as each feature's sensor: the same sensors for DMV and the
    same default units for decide(costs=), equal to passing them to decide()."""
    x = four_rows(6, 4, least=2, spread=2)
    costs = {"panel": 1.5, 1: 1.0, 3: 0.7}
    explicit = mvu(CLF, x, imputer=IMPUTER).decide(0.99, costs=costs, groups={"panel": [0, 2]})
    assert (explicit["plan"].str.contains("panel")).any()
    # as an array, a sensor of one feature ("b", "d") leaves the feature alone, under its name
    for groups in ({"panel": [0, 2]}, np.array(["panel", "b", "panel", "d"])):
        ev = mvu(CLF, x, imputer=IMPUTER, groups=groups)
        assert ev.meta["groups"] == {"panel": [0, 2]}
        plan = ev.decide(0.99, costs=costs)
        pd.testing.assert_frame_equal(plan, explicit)
        pd.testing.assert_frame_equal(plan.attrs["by_feature"], explicit.attrs["by_feature"])
    with pytest.raises(ValueError, match="groups"):
        mvu(CLF, x, imputer=IMPUTER, groups={"panel": [0, 7]})
