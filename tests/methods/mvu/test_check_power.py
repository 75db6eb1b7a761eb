"""Power of MVU's check(): a correct run of Models A, B and C passes; a reference c_hard 1.5
tolerances from the draws' fails exactly there (0.5 tolerances away still passes), and so does a
results table's value 1.5 tolerances from the reference; a sampler run without warm-up fails
naming its diagnostics and also on the compared quantities; a posterior moved away from the
model's (a shifted Laplace approximation) fails without any sampler diagnostic."""

import numpy as np
import pytest
import xarray as xr
from scipy import special

import bayeval.methods.mvu.models as models
from bayeval.methods.mvu.api import mvu
from bayeval.methods.mvu.estimators import GaussianImputer
from bayeval.methods.mvu.result import MVUEvaluation
from tests.methods.mvu.synthetic import CLF, cov

pytestmark = pytest.mark.xdist_group("mvu_check_power")  # one compile of each model
BROKEN = {"tune": 0, "draws": 30}


def nonlinear(z):
    """A classifier that no linear map reproduces: sigmoid(x1^2 - x2)."""
    return special.expit(z[:, 0] ** 2 - z[:, 1])


def run(small, kind: str, **kwargs) -> MVUEvaluation:
    train, x = small
    if kind == "b":  # an imputer object: Model B, a Dirichlet per row fitted to 50 MVU draws
        return mvu(CLF, x, imputer=GaussianImputer([0, 0], cov()), method="both", draws=50,
                   random_seed=3, **kwargs)
    clf = nonlinear if kind == "a_nonlinear" else CLF
    imputer = "dmv" if kind.startswith("c") else "gaussian"
    return mvu(clf, x, train=train, imputer=imputer, method="both", random_seed=4, **kwargs)


@pytest.fixture(scope="module")
def runs(small):
    """The correct runs, computed once: Model A (binary linear, exact per-draw laws; a
    non-linear classifier, predictive draws), B, and C (Laplace)."""
    return {kind: run(small, kind) for kind in ("a", "a_nonlinear", "b", "c")}


@pytest.mark.parametrize("kind", ["a", "a_nonlinear", "b", "c"])
def test_a_correct_run_passes(runs, kind):
    out = runs[kind].check()
    assert out.attrs["passed"], out
    assert "all passed" in out.attrs["caption"]
    quantities = set(out.index.get_level_values("quantity"))
    assert {"phi", "c_hard"} <= quantities
    assert ("sampler" in quantities) == (kind != "c")  # Laplace draws are independent
    # the compared c_hard is the one the results table reports
    drawn = runs[kind].tree["posterior_predictive"]["vote_hat"].mean(("chain", "draw"))
    np.testing.assert_allclose(drawn, runs[kind].closed_form["c_hard"], rtol=0, atol=1e-12)


def _moved(ev: MVUEvaluation, row: int, by: float) -> MVUEvaluation:
    """The run with its reference c_hard of ``row`` put ``by`` tolerances below the draws'."""
    drawn, tolerance = ev.check().loc[("c_hard", row, "mean"), ["draws", "tolerance"]]
    tree = ev.tree.copy()
    ref = tree["check_reference"].to_dataset()
    mean = ref["mean"].copy()
    mean.loc[{"quantity": "c_hard", "instance": row}] = drawn - by * tolerance
    tree["check_reference"] = xr.DataTree(ref.assign(mean=mean))
    return MVUEvaluation(tree)


@pytest.mark.parametrize("kind", ["a", "a_nonlinear", "b", "c"])
def test_a_reference_moved_by_one_and_a_half_tolerances_fails_there(runs, kind):
    ev = runs[kind]
    row = int(np.argmin(ev.closed_form["c_hard"].values))  # the least certain row
    assert _moved(ev, row, 0.5).check().attrs["passed"]
    out = _moved(ev, row, 1.5).check()
    assert not out.attrs["passed"]
    failed = out.index[~out["passed"]].tolist()
    assert failed == [("c_hard", row, "mean"), ("c_hard", row, "reported")]
    assert f"c_hard of instance {row} (mean)" in out.attrs["caption"]


@pytest.mark.parametrize("kind", ["a", "b", "c"])
def test_a_reported_value_off_the_draws_fails_there(runs, kind):
    """The results table's c_hard and mean of Phi moved by 1.5 tolerances from the reference:
    only the ``reported`` tests fail (the draws are untouched); 0.5 tolerances pass."""
    ev = runs[kind]
    row = int(np.argmin(ev.closed_form["c_hard"].values))
    checked = ev.check()
    for by, passes in ((0.5, True), (1.5, False)):
        tree = ev.tree.copy()
        closed = tree["closed_form"].to_dataset()
        for quantity, var in (("c_hard", "c_hard"), ("phi", "mean")):
            fast, tolerance = checked.loc[(quantity, row, "reported"), ["fast", "tolerance"]]
            value = closed[var].copy()
            value.loc[{"instance": row}] = fast + by * tolerance
            closed = closed.assign({var: value})
        tree["closed_form"] = xr.DataTree(closed)
        out = MVUEvaluation(tree).check()
        assert out.attrs["passed"] == passes
        if not passes:
            assert out.index[~out["passed"]].tolist() == [("phi", row, "reported"),
                                                           ("c_hard", row, "reported")]


@pytest.mark.parametrize("kind", ["a", "a_nonlinear", "b"])
def test_a_sampler_without_warm_up_fails_and_says_why(small, kind):
    out = run(small, kind, sample_kwargs=BROKEN).check()
    assert not out.attrs["passed"]
    caption = out.attrs["caption"]
    assert "the sampler did not converge" in caption and "ess_bulk" in caption
    sampler = out.xs("sampler", level="quantity")
    for test in sampler.index[~sampler["passed"]].get_level_values("test"):
        assert test in caption
    drawn = out.drop(index="sampler", level="quantity")
    assert not drawn["passed"].all(), drawn  # the draws themselves are caught, not only R-hat


def test_model_c_nuts_without_warm_up_fails(small):
    out = run(small, "c", inference="nuts", sample_kwargs=BROKEN).check()
    assert not out.attrs["passed"]
    assert "the sampler did not converge" in out.attrs["caption"]
    assert not out.drop(index="sampler", level="quantity")["passed"].all()


def test_a_shifted_laplace_posterior_fails_without_a_sampler(small, monkeypatch):
    """Model C's Laplace draws moved by 0.5 posterior sd in every weight: no sampler runs, the
    comparison with the importance-sampled posterior alone catches it."""
    laplace = models._laplace

    def shifted(pm_model, draws, rng):
        tree = laplace(pm_model, draws, rng)
        post = tree["posterior"].to_dataset()
        moved = post + 0.5 * post.std(("chain", "draw"))
        return xr.DataTree.from_dict({"posterior": moved})

    monkeypatch.setattr(models, "_laplace", shifted)
    out = run(small, "c").check()
    assert not out.attrs["passed"]
    assert "sampler" not in set(out.index.get_level_values("quantity"))


def test_rows_without_missing_features_compare_exactly(runs):
    """The complete row is a point mass on both sides: tolerance 0 (plus the quadrature's 1e-8)
    and no difference but the rounding of a sum of equal draws."""
    out = runs["a"].check().xs(4, level="instance")
    assert (out["statistic"] <= 1e-12).all() and (out["tolerance"] < 1e-7).all()


def _constant_votes(ev: MVUEvaluation, row: int, reference: float) -> MVUEvaluation:
    """The run with every posterior vote of ``row`` the decision's and a reference c_hard of
    ``reference`` with the sd of Bernoulli(``reference``) indicators."""
    tree = ev.tree.copy()
    pp = tree["posterior_predictive"].to_dataset()
    votes = pp["vote_hat"].copy()
    votes.loc[{"instance": row}] = 1.0
    tree["posterior_predictive"] = xr.DataTree(pp.assign(vote_hat=votes))
    closed = tree["closed_form"].to_dataset()
    c_hard = closed["c_hard"].copy()
    c_hard.loc[{"instance": row}] = 1.0
    tree["closed_form"] = xr.DataTree(closed.assign(c_hard=c_hard))
    ref = tree["check_reference"].to_dataset()
    mean, sd = ref["mean"].copy(), ref["sd"].copy()
    mean.loc[{"quantity": "c_hard", "instance": row}] = reference
    sd.loc[{"quantity": "c_hard", "instance": row}] = np.sqrt(reference * (1 - reference))
    tree["check_reference"] = xr.DataTree(ref.assign(mean=mean, sd=sd))
    return MVUEvaluation(tree)


def test_votes_without_spread_meet_the_references_error(runs):
    """Every vote draw of a row the same (a near-certain row of a non-linear classifier): the
    mean test's tolerance is the reference's Monte-Carlo error, 4 sd_ref / sqrt(n_ref) (+ the
    quadrature's 1e-8); a reference c_hard of 0.999 passes, one of 0.99 fails there."""
    ev = runs["a_nonlinear"]
    row = int(np.argmax(ev.closed_form["c_hard"].values))
    n_ref = float(ev.tree["check_reference"]["n_reference"].sel(instance=row))
    out = _constant_votes(ev, row, 0.999).check()
    assert out.attrs["passed"], out
    tolerance = out.loc[("c_hard", row, "mean"), "tolerance"]
    assert tolerance == pytest.approx(4 * np.sqrt(0.999 * 0.001 / n_ref) + 1e-8, rel=1e-9)
    out = _constant_votes(ev, row, 0.99).check()
    assert not out.attrs["passed"]
    assert ("c_hard", row, "mean") in out.index[~out["passed"]].tolist()


def test_phi_with_a_heavy_tail_has_no_variance_test(runs):
    """A reference law of Phi whose sd exceeds its interval's width (a variance carried by a
    tail beyond the interval, as when Phi is within 1e-3 of 1 but for rare draws) drops that
    row's variance test only."""
    ev = runs["a"]
    row = int(np.argmax(ev.closed_form["c_hard"].values))
    before = ev.check().index
    tree = ev.tree.copy()
    ref = tree["check_reference"].to_dataset()
    sd = ref["sd"].copy()
    width = float((ref["upper"] - ref["lower"]).sel(quantity="phi", instance=row))
    sd.loc[{"quantity": "phi", "instance": row}] = 1.5 * width
    tree["check_reference"] = xr.DataTree(ref.assign(sd=sd))
    after = MVUEvaluation(tree).check().index
    assert set(before) - set(after) == {("phi", row, "variance_ratio")}
