"""The exact posterior of Model B (and of Model A under Dirichlet priors): its interval, the
finite-sample mean, frequentist coverage, and the catalogue's long-run references."""

import json
from pathlib import Path

import numpy as np
import pytest

from bayeval.methods.judge import fast
from bayeval.methods.judge.conjugate import conjugate_posterior

ROOT = Path(__file__).resolve().parents[3]

def test_model_b_credible_intervals_have_frequentist_coverage(sim):
    """§5.6 T3: 90 % equal-tailed intervals of the exact posterior cover theta in 0.87-0.93 of
    2,000 data sets (m = 200, theta in [0.2, 0.8]); 4,000 independent draws per data set."""
    rng = np.random.default_rng(9)
    reps, draws = 2000, 4000
    theta = rng.uniform(0.2, 0.8, reps)
    q0, q1 = rng.uniform(0.6, 0.9, (2, reps))
    c = fast.Counts(*(np.concatenate(v) for v in zip(*(
        sim.simulate(t, a, b, 200, 1800, 1, rng) for t, a, b in zip(theta, q0, q1, strict=True)),
        strict=True)))
    size = (draws, reps)
    p = rng.beta(2 + c.t1 + c.n11 + c.n01, 2 + c.t0 + c.n10 + c.n00, size)
    mu1, mu0 = rng.beta(1 + c.n11, 1 + c.n01, size), rng.beta(1 + c.n10, 1 + c.n00, size)
    lo, hi = np.quantile(p * mu1 + (1 - p) * mu0, [0.05, 0.95], axis=0)
    assert 0.87 <= np.mean((lo <= theta) & (theta <= hi)) <= 0.93



def test_exact_posterior_interval_and_finite_mean(sim):
    """The quadrature interval holds ci_prob of 10^6 independent draws (MC sd 2e-4); the
    finite-sample mean's moments match simulated hidden labels."""
    rng = np.random.default_rng(14)
    prior = {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}
    post = conjugate_posterior(sim.SPEC_COUNTS, prior, 0.9)
    c, size = sim.SPEC_COUNTS, 1_000_000
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
    exact = conjugate_posterior(counts, {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}, 0.95)
    ref = spec["reference"]["theta"]
    assert abs(ref["mean"] - float(exact.mean)) <= 4 * ref["mcse_mean"]
    assert abs(ref["sd"] - float(exact.sd)) <= 4 * ref["mcse_sd"]


