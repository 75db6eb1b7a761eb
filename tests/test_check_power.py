"""check() can fail: for every method, a run that is right passes, and a perturbed fast path, a
shifted posterior or a broken sampler run (no warm-up, a few draws) fails.

A "shifted posterior" moves the second chain's draws of the estimand by one posterior sd: the
chains then disagree (R-hat) and their mean moves by half an sd, many Monte-Carlo SEs.
"""

import warnings

import numpy as np
import pytest
import xarray as xr

from bayeval import datasets
from bayeval.evaluation import Evaluation
from bayeval.methods.bounds.models import m1_posterior_bounds
from bayeval.methods.bounds.result import BoundsEvaluation, check_reference
from bayeval.methods.cbpe import cbpe
from bayeval.methods.judge import judge
from bayeval.methods.labelled import labelled
from bayeval.methods.mvu import mvu
from bayeval.methods.pemi import pemi
from tests.methods.mvu.synthetic import CLF, cov

BROKEN = {"tune": 0, "draws": 30}


def rebuilt(ev: Evaluation, group: str, change) -> Evaluation:
    """``ev`` (as its own class) with ``change(dataset)`` in place of the group ``group``."""
    groups = {k: v.to_dataset() for k, v in ev.tree.children.items()}
    groups[group] = change(groups[group])
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = ev.tree.attrs
    return type(ev)(tree)


def shifted_fast_path(ev: Evaluation, by: float = 6.0) -> Evaluation:
    """The fast path's mean moved by ``by`` of its sds (sd > 0 coordinates)."""
    return rebuilt(ev, "closed_form", lambda cf: cf.assign(mean=cf["mean"] + by * cf["sd"]))


def shifted_posterior(ev: Evaluation) -> Evaluation:
    """The estimand's draws of the second chain moved by one posterior sd."""
    group, var = ev.meta["estimand"].split("/")

    def shift(ds):
        x = ds[var]
        move = xr.where(x["chain"] == x["chain"][1], x.std(("chain", "draw")), 0.0)
        return ds.assign({var: x + move})

    return rebuilt(ev, group, shift)


def failed(ev: Evaluation) -> bool:
    return not ev.check().attrs["passed"]


# ============================================================================== labelled
@pytest.fixture(scope="module")
def labelled_run():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    y_pred = np.where(rng.random(300) < 0.8, y, 1 - y)
    return y, y_pred, labelled(labels=y, y_pred=y_pred, metrics=["accuracy", "recall"],
                               method="both", random_seed=2)


def test_labelled(labelled_run):
    y, y_pred, ev = labelled_run
    assert ev.check().attrs["passed"], ev.check()
    assert failed(shifted_fast_path(ev)) and failed(shifted_posterior(ev))
    broken = labelled(labels=y, y_pred=y_pred, metrics=["accuracy", "recall"], method="both",
                      random_seed=2, sample_kwargs=BROKEN)
    assert failed(broken)


# ================================================================================= judge
def test_judge():
    rng = np.random.default_rng(3)
    y = (rng.random(2200) < 0.3).astype(int)
    yhat = np.where(rng.random(2200) < 0.8, y, 1 - y)
    args = (y[:200], yhat[:200], yhat[200:])
    ev = judge(*args, method="both", model="b", random_seed=4)
    assert ev.check().attrs["passed"], ev.check()
    assert failed(shifted_fast_path(ev, by=1.0)) and failed(shifted_posterior(ev))


# ================================================================================== cbpe
def test_cbpe():
    """CBPE's draws are independent forward simulations of its exact law: a perturbed law
    fails."""
    scores = datasets.calibrated_scores(240, random_seed=12).scores
    ev = cbpe(scores, metrics=["accuracy", "f1"], method="both", draws=4000, random_seed=3)
    assert ev.check().attrs["passed"], ev.check()
    assert failed(shifted_fast_path(ev, by=0.5))


# ================================================================================== pemi
def test_pemi():
    d = datasets.breast_cancer(random_seed=0)
    labels = datasets.mask_labels(d.labels, p_m=0.3, random_seed=1).labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = pemi(d.scores, labels, metrics=["accuracy"], method="both", random_seed=3)
    assert ev.check().attrs["passed"], ev.check()
    assert failed(shifted_fast_path(ev, by=0.5)) and failed(shifted_posterior(ev))


# ================================================================================ bounds
def test_bounds():
    """Model M1's check compares its bound draws with their exact conjugate posterior; here
    independent draws of that posterior stand in for NUTS (a NUTS run of M1 is
    tests/methods/bounds/test_models.py)."""
    counts, beta = [[300, 700], [500, 100]], [[0.6, 0.4], [0.2, 0.8]]
    d = m1_posterior_bounds(counts, beta, ["accuracy"], draws=2000, random_seed=1)
    d = d.reshape(2, 1000, 1, 2)
    dims = ("chain", "draw", "metric")
    post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
                       "value": (dims, d.mean(axis=-1))}, coords={"metric": ["accuracy"]})
    ref = check_reference(m1_posterior_bounds(counts, beta, ["accuracy"], random_seed=2),
                          ["accuracy"], 0.95)
    ev = BoundsEvaluation.create(
        method="bounds", variant="pymc", estimand="posterior/value",
        draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))
    assert ev.check().attrs["passed"], ev.check()
    moved = rebuilt(ev, "check_reference", lambda r: r.assign(mean=r["mean"] + 0.2 * r["sd"]))
    assert failed(moved)
    shifted = rebuilt(ev, "posterior", lambda p: p.assign(
        upper_bound=p["upper_bound"] + xr.where(p["chain"] == 1, p["upper_bound"].std(), 0.0)))
    assert failed(shifted)


# =================================================================================== mvu
def test_mvu():
    rng = np.random.default_rng(11)
    train = rng.multivariate_normal([0, 0], cov(), size=400)
    x = rng.multivariate_normal([0, 0], cov(), size=3)
    x[:2, 0] = np.nan
    ev = mvu(CLF, x, train=train, method="both", random_seed=3,
             sample_kwargs={"draws": 500, "tune": 500})
    assert ev.check().attrs["passed"], ev.check()
    assert failed(shifted_fast_path(ev, by=0.5))
    assert failed(mvu(CLF, x, train=train, method="both", random_seed=3, sample_kwargs=BROKEN))

