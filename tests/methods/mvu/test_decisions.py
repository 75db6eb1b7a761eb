"""Decisions with costs: the Bayes action now, the expected loss once the missing features are
collected and the value of collecting, exact (two classes: Beta, linear-Gaussian) and from draws,
against a hand computation and brute-force Monte Carlo that reveals the missing features."""

import numpy as np
import pandas as pd
import pytest

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.decisions import as_loss, binary_envelope
from bayeval.methods.mvu.estimators import LinearClassifier
from bayeval.methods.mvu.mnar import MNARGaussianImputer
from tests.methods.mvu.four_features import BINARY, COV, IMPUTER, THREE
from tests.methods.mvu.four_features import rows as four_rows

#: predict 0, predict 1 (a false negative costs 3), refer (0.35 whatever the class)
LOSS2 = np.array([[0.0, 3.0], [1.0, 0.0], [0.35, 0.35]])
LOSS3 = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [0.4, 0.4, 0.4]])


def rows(n, seed):
    return four_rows(n, seed, complete_last=True)


def revealed(clf, imputer, x, n, seed):
    """MVU draws (rows, n, K): the missing features drawn from the imputer's conditional law
    (numpy's multivariate normal, not the package's sampler), pushed through the classifier."""
    rng = np.random.default_rng(seed)
    m = np.isnan(x)
    x_hat, cov = imputer.conditional(x, m)
    out = []
    for r in range(len(x)):
        idx = np.flatnonzero(m[r])
        draws = np.repeat(x_hat[r][None], n, axis=0)
        if idx.size:
            draws[:, idx] = rng.multivariate_normal(x_hat[r, idx], cov[r][np.ix_(idx, idx)], n)
        out.append(clf.predict_proba(draws))
    return np.array(out)


def test_hand_case_uniform_beta_with_abstention():
    """Phi_1 ~ Beta(1, 1), loss min(phi, 1 - phi, 0.3): now (0.5, 0.5) -> abstain at 0.3; after,
    E min = 2 * int_0^0.3 phi dphi + 0.3 * 0.4 = 0.21; the action changes when phi < 0.3 or
    phi > 0.7, probability 0.6."""
    train = np.array([[1.0, 1.0], [-1.0, -1.0]])
    ev = mvu(LinearClassifier([[1.0, 1.0]], [0.0]), [[np.nan, 0.0]], imputer="mean",
             heuristic="scale_prob", heuristic_param=2.0, train=train)
    np.testing.assert_allclose(ev.closed_form["alpha"].values, [[1.0, 1.0]])
    tab = ev.bayes_actions([[0.0, 1.0], [1.0, 0.0], [0.3, 0.3]], ["no", "yes", "abstain"],
                           collect_cost=0.05)
    row = tab.iloc[0]
    assert row["action"] == "abstain" and row["collect"]
    np.testing.assert_allclose([row["loss_now"], row["loss_after"], row["value"],
                                row["p_change"], row["expected_cost"]],
                               [0.3, 0.21, 0.09, 0.6, 0.26], rtol=0, atol=1e-12)


@pytest.mark.parametrize("mnar", [None, (0.6, 0.5)], ids=["mar", "mnar"])
def test_binary_linear_exact_matches_revealing_the_features(mnar):
    x = rows(10, 0)
    ev = mvu(BINARY, x, imputer=IMPUTER, mnar=mnar)
    tab = ev.bayes_actions(LOSS2, ["0", "1", "refer"])
    law = IMPUTER if mnar is None else MNARGaussianImputer.shifting(IMPUTER, mnar)
    n = 40000
    phi = revealed(BINARY, law, x, n, seed=1)
    risk = phi @ LOSS2.T  # (rows, n, actions)
    best = risk.min(-1)
    after_se = best.std(1) / np.sqrt(n)
    assert (np.abs(tab["loss_after"].values - best.mean(1)) <= 4 * after_se + 1e-12).all()
    assert (tab["loss_after_se"].values == 0).all()
    now = risk.mean(1)  # the ground truth's expected loss of each action now
    truth = now.argmin(1)
    margin = np.sort(now, 1)[:, 1] - now.min(1)
    sure = margin > 4 * (risk.std(1).max(1) / np.sqrt(n))
    assert sure.sum() >= 7
    np.testing.assert_array_equal(tab["action"].values[sure],
                                  np.array(["0", "1", "refer"])[truth[sure]])
    action = np.array(["0", "1", "refer"]).searchsorted(tab["action"].values)
    change = (risk.argmin(-1) != action[:, None]).mean(1)
    p = tab["p_change"].values
    assert (np.abs(p - change) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12).all()
    complete = tab.iloc[-1]
    assert complete["value"] == 0 and complete["p_change"] == 0


def test_zero_one_loss_p_change_is_one_minus_hard_confidence():
    """Under the 0-1 loss the Bayes action now is y_soft and, where it equals y_hard, the action
    changes with probability 1 - c_hard: the exact quadrature against the normal CDF."""
    x = rows(12, 2)
    ev = mvu(BINARY, x, imputer=IMPUTER)
    cf = ev.closed_form
    tab = ev.bayes_actions(1 - np.eye(2))
    same = cf["y_soft"].values == cf["y_hard"].values
    assert same.sum() >= 10
    np.testing.assert_allclose(tab["p_change"].values[same], 1 - cf["c_hard"].values[same],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(tab["loss_now"].values, 1 - cf["c_soft"].values, atol=1e-12)


def test_three_classes_from_draws_match_revealing_the_features():
    x = rows(8, 3)
    ev = mvu(THREE, x, imputer=IMPUTER, random_seed=4)
    tab = ev.bayes_actions(LOSS3, [0, 1, 2, "refer"], draws=20000, random_seed=5)
    n = 20000
    best = (revealed(THREE, IMPUTER, x, n, seed=6) @ LOSS3.T).min(-1)
    se = np.sqrt(tab["loss_after_se"].values ** 2 + best.var(1) / n)
    assert (np.abs(tab["loss_after"].values - best.mean(1)) <= 4 * se + 1e-12).all()
    assert (tab["loss_after_se"].values[:-1] > 0).all()


def test_unrecognised_classifier_draws_match_the_exact_binary_path():
    x = rows(8, 7)
    exact = mvu(BINARY, x, imputer=IMPUTER).bayes_actions(LOSS2, ["0", "1", "refer"])
    ev = mvu(lambda z: BINARY.predict_proba(z), x, imputer=IMPUTER, draws=400, random_seed=8)
    drawn = ev.bayes_actions(LOSS2, ["0", "1", "refer"], draws=8000, random_seed=9)
    # the draws are quasi-Monte-Carlo: the independent-draws standard error is conservative
    assert (np.abs(drawn["loss_after"].values - exact["loss_after"].values)
            <= 4 * drawn["loss_after_se"].values + 1e-12).all()


def test_dirichlet_mvu_beta_exact_against_its_draws():
    rng = np.random.default_rng(10)
    train = rng.multivariate_normal(np.zeros(4), COV, size=500)
    x = rows(6, 11)
    ev = mvu(BINARY, x, imputer="mean", heuristic="scale_prob", heuristic_param=4.0, train=train)
    tab = ev.bayes_actions(LOSS2, ["0", "1", "refer"])
    alpha = ev.closed_form["alpha"].values
    n = 100000
    for r in range(len(x) - 1):
        phi1 = rng.beta(alpha[r, 1], alpha[r, 0], n)
        best = (np.stack([1 - phi1, phi1], -1) @ LOSS2.T).min(-1)
        assert abs(tab["loss_after"].iloc[r] - best.mean()) <= 4 * best.std() / np.sqrt(n)


def test_envelope_and_loss_input():
    cuts, active = binary_envelope(LOSS2)
    np.testing.assert_allclose(cuts, [0.0, 0.35 / 3, 0.65, 1.0])
    np.testing.assert_array_equal(active, [0, 2, 1])
    frame = pd.DataFrame({1: [3.0, 0.0], 0: [0.0, 1.0]}, index=["no", "yes"])
    loss, names = as_loss(frame, [0, 1])
    np.testing.assert_array_equal(loss, [[0.0, 3.0], [1.0, 0.0]])
    assert names == ["no", "yes"]
    boolean = pd.DataFrame({True: [3.0, 0.0, 0.3], False: [0.0, 1.0, 0.3]},
                           index=["discharge", "treat", "refer"])  # classes, not a mask
    loss, names = as_loss(boolean, [False, True])
    np.testing.assert_array_equal(loss, [[0.0, 3.0], [1.0, 0.0], [0.3, 0.3]])
    assert names == ["discharge", "treat", "refer"]


@pytest.mark.parametrize("loss, actions, match", [
    ([[0.0, 1.0, 2.0]], None, "matrix with 2 columns"),
    ([[0.0, np.nan], [1.0, 0.0]], None, "finite"),
    ([[0.0, 1.0], [1.0, 0.0], [0.3, 0.3]], None, "name the actions"),
    ([[0.0, 1.0], [1.0, 0.0]], ["a", "a"], "once each"),
    (pd.DataFrame({"x": [0.0], 1: [1.0]}), None, "columns must be the classes"),
    ("cheap", None, "matrix"),
])
def test_bad_loss_is_refused(loss, actions, match):
    ev = mvu(BINARY, rows(3, 0), imputer=IMPUTER)
    with pytest.raises(ValueError, match=match):
        ev.bayes_actions(loss, actions)


def test_runs_without_the_law_are_refused():
    ev = mvu(BINARY, rows(3, 0), imputer=IMPUTER)
    with pytest.raises(ValueError, match="collect_cost must be"):
        ev.bayes_actions(1 - np.eye(2), collect_cost=-1.0)
    ev.tree = ev.tree.drop_nodes("imputation")  # neither the run's state nor its planner
    ev.planner = None
    with pytest.raises(ValueError, match="needs the law of the MVU"):
        ev.bayes_actions(1 - np.eye(2))

    class Sampler:
        def sample(self, X, mask, draws, random_seed=None):
            rng = np.random.default_rng(random_seed)
            x = np.repeat(np.asarray(X, dtype=float)[:, None], draws, axis=1)
            return np.where(np.isnan(x), rng.standard_normal(x.shape), x)

    ev = mvu(BINARY, rows(3, 0), imputer=Sampler(), draws=50, random_seed=0)
    with pytest.raises(ValueError, match="needs the law of the MVU"):
        ev.bayes_actions(1 - np.eye(2))
