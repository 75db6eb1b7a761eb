"""The exact posterior of Model B (and of Model A under Dirichlet priors): its interval, the
finite-sample mean, frequentist coverage, and the catalogue's long-run references."""

import json
from pathlib import Path

import numpy as np
import pytest

from bayeval.methods.judge import fast
from bayeval.methods.judge.conjugate import conjugate_posterior
from bayeval.methods.judge.models import DEFAULT_PRIOR

JEFFREYS = DEFAULT_PRIOR["b"]
UNIFORM = {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}

ROOT = Path(__file__).resolve().parents[3]

def coverage(c: fast.Counts, theta, prior: dict, ci_prob: float, rng, draws=4000) -> float:
    """Share of data sets whose equal-tailed interval (from ``draws`` exact posterior draws each)
    holds ``theta``."""
    size = (draws, np.size(c.t1))
    (ap, bp), (a1, b1), (a0, b0) = prior["p"], prior["mu1"], prior["mu0"]
    p = rng.beta(ap + c.t1 + c.n11 + c.n01, bp + c.t0 + c.n10 + c.n00, size)
    mu1, mu0 = rng.beta(a1 + c.n11, b1 + c.n01, size), rng.beta(a0 + c.n10, b0 + c.n00, size)
    tail = (1 - ci_prob) / 2
    lo, hi = np.quantile(p * mu1 + (1 - p) * mu0, [tail, 1 - tail], axis=0)
    return float(np.mean((lo <= theta) & (theta <= hi)))


def test_model_b_credible_intervals_have_frequentist_coverage(sim):
    """90 % equal-tailed intervals of the exact posterior (default prior) cover theta in
    0.87-0.93 of 2,000 data sets (m = 200, theta in [0.2, 0.8])."""
    rng = np.random.default_rng(9)
    reps = 2000
    theta = rng.uniform(0.2, 0.8, reps)
    q0, q1 = rng.uniform(0.6, 0.9, (2, reps))
    c = fast.Counts(*(np.concatenate(v) for v in zip(*(
        sim.simulate(t, a, b, 200, 1800, 1, rng) for t, a, b in zip(theta, q0, q1, strict=True)),
        strict=True)))
    assert 0.87 <= coverage(c, theta, JEFFREYS, 0.9, rng) <= 0.93


def test_default_prior_covers_with_few_labels_and_a_rare_class(sim):
    """m = 20 human labels, N = 2,000, prevalence 0.1, sensitivity = specificity = 0.7: the
    default (Jeffreys) 95 % interval covers within 4 MC SEs of 0.95 over 2,000 data sets (SE
    0.005); the uniform Dirichlet, which pulls the rare class's cell means toward 1/2, does not."""
    rng = np.random.default_rng(20)
    reps = 2000
    c = sim.simulate(0.1, 0.7, 0.7, 20, 1980, reps, rng)
    tol = 4 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(coverage(c, 0.1, JEFFREYS, 0.95, rng) - 0.95) <= tol
    assert coverage(c, 0.1, UNIFORM, 0.95, rng) < 0.95 - tol



def test_exact_posterior_interval_and_finite_mean(sim):
    """The quadrature interval holds ci_prob of 10^6 independent draws (MC sd 2e-4); the
    finite-sample mean's moments match simulated hidden labels."""
    rng = np.random.default_rng(14)
    post = conjugate_posterior(sim.RUNNING_EXAMPLE, UNIFORM, 0.9)
    c, size = sim.RUNNING_EXAMPLE, 1_000_000
    p = rng.beta(2 + c.t1 + c.n11 + c.n01, 2 + c.t0 + c.n10 + c.n00, size)
    mu1, mu0 = rng.beta(1 + c.n11, 1 + c.n01, size), rng.beta(1 + c.n10, 1 + c.n00, size)
    theta = p * mu1 + (1 - p) * mu0
    assert np.mean(theta < post.lower) == pytest.approx(0.05, abs=4 * np.sqrt(0.05 * 0.95 / size))
    assert np.mean(theta > post.upper) == pytest.approx(0.05, abs=4 * np.sqrt(0.05 * 0.95 / size))
    assert theta.mean() == pytest.approx(float(post.mean), abs=4 * float(post.sd) / np.sqrt(size))
    finite = (c.n11 + c.n10 + rng.binomial(c.t1, mu1) + rng.binomial(c.t0, mu0)) / (c.m + c.n)
    assert finite.mean() == pytest.approx(float(post.finite_mean),
                                          abs=4 * float(post.finite_sd) / np.sqrt(size))
    assert finite.std() == pytest.approx(float(post.finite_sd), rel=4 * np.sqrt(2 / size))


@pytest.mark.parametrize("name", ["judge_model_a", "judge_model_b"])
def test_catalogue_references_are_the_exact_posterior(name):
    """The long-run references of models/judge_model_{a,b} (default priors) are the conjugate
    posterior: theta's mean and sd within 4 of their MCSEs."""
    spec = json.loads((ROOT / "models" / name / "reference.json").read_text())
    counts = fast.Counts(*(spec["kwargs"][k] for k in fast.Counts._fields))
    exact = conjugate_posterior(counts, JEFFREYS, 0.95)
    ref = spec["reference"]["theta"]
    assert abs(ref["mean"] - float(exact.mean)) <= 4 * ref["mcse_mean"]
    assert abs(ref["sd"] - float(exact.sd)) <= 4 * ref["mcse_sd"]


