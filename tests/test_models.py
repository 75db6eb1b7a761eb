"""Quick runs of every catalogued model, with the package's default sampler settings, pass its
own convergence diagnostics and agree with the model's long-run reference posterior."""

import json

import numpy as np
import pytest
from scipy import stats

from bayeval.check import sampler_tests
from bayeval.methods.bounds.api import M1_SAMPLING, M3_SAMPLING
from bayeval.methods.cbpe.api import V2B_SAMPLE_KWARGS
from bayeval.methods.judge.models import TARGET_ACCEPT
from bayeval.methods.mvu.models import MODEL_A_SAMPLING
from bayeval.sampling import sample
from models.regenerate import ROOT, build, names, posterior_stats

#: the false-alarm probability of one two-sided 4-sigma comparison, kept for the whole family
FAMILY_ALARM = 2 * stats.norm.sf(4.0)


def disagreements(quick: dict, reference: dict) -> list[str]:
    """Scalars whose mean or sd differ beyond z combined Monte-Carlo standard errors.

    A model compares 2K numbers (K scalars, a mean and an sd each): ``z`` splits the false-alarm
    probability of one 4-sigma comparison over them (Bonferroni), so the chance that a correct
    posterior fails is the same for a model with 1 scalar (z = 4.2) or 148 (z = 5.2), whatever
    the random stream of the quick run.
    """
    z = stats.norm.isf(FAMILY_ALARM / (2 * 2 * len(reference)))
    out = []
    for label, ref in reference.items():
        q = quick[label]
        if abs(q["mean"] - ref["mean"]) > z * np.hypot(q["mcse_mean"], ref["mcse_mean"]):
            out.append(f"{label} mean")
        if abs(q["sd"] - ref["sd"]) > z * np.hypot(q["mcse_sd"], ref["mcse_sd"]):
            out.append(f"{label} sd")
    return out


def spec_of(name):
    return json.loads((ROOT / name / "reference.json").read_text())


def grouped(name):
    """The judge's models on the worker of the judge's model tests (compiled once there)."""
    if name.startswith("judge_"):
        return pytest.param(name, marks=pytest.mark.xdist_group("judge_pymc"))
    return name


#: models the package draws forward (``pm.sample_prior_predictive``: iid draws, no MCMC to
#: diagnose); the catalogue samples them with NUTS only to compare with their references
FORWARD = {"cbpe_v0", "cbpe_v2"}
#: the sampler settings the package's entry functions give these models over ``DEFAULTS``
PACKAGE_DEFAULTS = {"bounds_m1": M1_SAMPLING, "bounds_m3": M3_SAMPLING,
                    "cbpe_v2b": V2B_SAMPLE_KWARGS["learned"],
                    "judge_model_a": {"target_accept": TARGET_ACCEPT},
                    "judge_model_b": {"target_accept": TARGET_ACCEPT},
                    "mvu_model_a": MODEL_A_SAMPLING}


@pytest.mark.parametrize("name", [grouped(name) for name in names()])
def test_quick_run_matches_reference(name):
    spec = spec_of(name)
    assert spec["reference"], f"{name}: reference.json has no reference; run models.regenerate"
    # DEFAULTS (2 chains of 1000 draws after 1000 tuning) with the model's own settings
    tree = sample(build(spec), 12345, defaults=PACKAGE_DEFAULTS.get(name))
    diagnostics = sampler_tests(tree["posterior"].to_dataset(), tree["sample_stats"].to_dataset())
    assert name in FORWARD or diagnostics["passed"].all(), diagnostics
    quick = posterior_stats(tree)
    assert quick.keys() == spec["reference"].keys()
    assert disagreements(quick, spec["reference"]) == []


def test_a_moved_posterior_is_caught():
    spec = spec_of("labelled_beta_binomial")
    spec["kwargs"]["successes"][0] -= 8  # accuracy 267/285 instead of 275/285
    quick = posterior_stats(sample(build(spec), 12345, {"draws": 1000, "tune": 1000}))
    # the accuracy moves (mean and, further from 1, a wider sd); the other rates do not
    assert disagreements(quick, spec["reference"]) == ["theta[accuracy] mean",
                                                       "theta[accuracy] sd"]


def test_labelled_reference_is_the_conjugate_posterior():
    spec = spec_of("labelled_beta_binomial")
    a, b = spec["kwargs"]["prior"]
    for k, m, metric in zip(*(spec["kwargs"][key] for key in ("successes", "trials", "metrics")),
                            strict=True):
        law = stats.beta(a + k, b + m - k)
        ref = spec["reference"][f"theta[{metric}]"]
        assert abs(ref["mean"] - law.mean()) <= 4 * ref["mcse_mean"]
        assert abs(ref["sd"] - law.std()) <= 4 * ref["mcse_sd"]
