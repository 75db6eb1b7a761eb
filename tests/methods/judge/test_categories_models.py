"""The PyMC model of a judge of K categories against its exact conjugate posterior."""

import numpy as np
import pytest

import bayeval as be
from bayeval.methods.judge.categories import ClassCounts, posterior_moments
from bayeval.methods.judge.categories_models import class_model

pytestmark = pytest.mark.xdist_group("judge_pymc")  # one worker compiles the models
TABLE = np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]])
UNLABELLED = np.array([450, 320, 230])


@pytest.fixture(scope="module")
def both_a():
    """Model A (misclassification matrix, hidden labels summed out) sampled with NUTS beside
    the exact posterior of the conjugate parametrisation (Model B)."""
    y, yhat = np.divmod(np.repeat(np.arange(9), TABLE.ravel()), 3)
    names = np.array(["A", "tie", "B"])
    return be.judge(names[y], names[yhat], names[np.repeat(np.arange(3), UNLABELLED)],
                    method="both", weights={"A": 1, "tie": 0.5, "B": 0}, random_seed=5,
                    sample_kwargs={"draws": 1000, "tune": 1000})


@pytest.mark.slow
def test_model_a_matches_the_exact_posterior(both_a):
    check = both_a.check()
    assert check.attrs["passed"], check
    exact = posterior_moments(ClassCounts(TABLE, UNLABELLED), np.full((3, 3), 0.5))
    order = {"metric": "prevalence", "class": ["A", "tie", "B"]}  # the table's; judge sorts
    assert both_a.closed_form["mean"].sel(order).values.tolist() == (
        pytest.approx(exact.estimate.tolist(), abs=1e-12))


@pytest.mark.slow
def test_a_perturbed_closed_form_fails_the_check(both_a):
    """check() can fail: the exact posterior of the table with 5 items moved from (A, judged
    A) to (tie, judged A) lies 1.2 posterior sd away for A's and tie's prevalences."""
    moved = TABLE.copy()
    moved[0, 0] -= 5
    moved[1, 0] += 5
    shifted = posterior_moments(ClassCounts(moved, UNLABELLED), np.full((3, 3), 0.5))
    tree = both_a.tree.copy()
    cf = tree["closed_form"].to_dataset()
    cf["mean"].loc[{"metric": "prevalence", "class": ["A", "tie", "B"]}] = shifted.estimate
    tree["closed_form"] = cf
    wrong = type(both_a)(tree)
    assert not wrong.check().attrs["passed"]


def test_both_models_have_the_same_prior_and_likelihood():
    """Model A's log density at (pi, M) equals Model B's at the mapped (rho, mu), up to the
    Jacobian-free constant: compared at two points, the differences agree."""
    alpha = np.full((3, 3), 0.5)
    a = class_model(TABLE, UNLABELLED, ["A", "tie", "B"], alpha=alpha)
    b = class_model(TABLE, UNLABELLED, ["A", "tie", "B"], alpha=alpha, variant="b")
    la = a.compile_logp(jacobian=False)
    lb = b.compile_logp(jacobian=False)
    rng = np.random.default_rng(0)
    values = []
    for _ in range(2):
        pi = rng.dirichlet(np.ones(3))
        mm = rng.dirichlet(np.ones(3), size=3)
        joint = pi[:, None] * mm
        rho = joint.sum(0)
        mu = (joint / rho).T
        pa, pb = (
            {model.rvs_to_values[model[k]].name:
             model.rvs_to_transforms[model[k]].forward(v).eval() for k, v in point.items()}
            for model, point in ((a, {"pi": pi, "misclassification": mm}),
                                 (b, {"rho": rho, "mu": mu})))
        values.append((la(pa), lb(pb), joint))
    (a0, b0, j0), (a1, b1, j1) = values
    # the densities of one Dirichlet on the table in two coordinates differ by the Jacobian
    # of (pi, M) -> (rho, mu), prod_k pi_k^(K-1) / prod_j rho_j^(K-1); the likelihoods agree
    log_jac = lambda j: 2 * (np.log(j.sum(1)).sum() - np.log(j.sum(0)).sum())  # noqa: E731
    assert (a1 - a0) - (b1 - b0) == pytest.approx(log_jac(j1) - log_jac(j0), abs=1e-8)


@pytest.mark.slow
def test_the_posterior_summary_has_every_class_and_eif_agreement_says_what_checks_it(both_a):
    summary = both_a.summary()
    assert summary.index.names == ["metric", "class"]
    assert set(summary.loc["prevalence"].index) == {"A", "tie", "B"}
    assert summary.loc[("prevalence", "A"), "mean"] == pytest.approx(
        float(both_a.draws.sel(metric="prevalence", **{"class": "A"}).mean()), abs=1e-12)
    with pytest.raises(ValueError, match=r"for K categories, ev\.check"):
        be.methods.judge.eif_agreement(both_a)
