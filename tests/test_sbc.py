"""Simulation-based calibration, reduced: the judge's Models A and B, PEMI's M1 and CBPE's V2b
(the last two as batched copies of one model per simulation) recover their own prior draws
(ranks uniform at the 1 % family level), and CBPE V0's latent counts follow their exact
Poisson-binomial laws (discrete ranks, ties broken at random); the uniformity test rejects the
ranks of a posterior that is too narrow, data simulated from another likelihood than the
model's, and counts drawn from another law than the model's.

The full run (200 simulations per model, every model of ``benchmarks.sbc.CASES``) is
``python -m benchmarks.sbc``.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import special

from bayeval.poibin import PoissonBinomial
from benchmarks import sbc
from benchmarks.sbc import cbpe, pemi

FAST = {"draws": 400, "tune": 400}
SIMULATIONS, BINS = 30, 5
judge_group = pytest.mark.xdist_group("judge_pymc")  # the judge's models compile once there


@pytest.fixture(scope="module")
def judge_sbc():
    return sbc.run(SIMULATIONS, ["judge_model_a", "judge_model_b"], FAST, bins=BINS)


@pytest.fixture(scope="module")
def batched_sbc():
    return sbc.run(SIMULATIONS, ["pemi_m1", "cbpe_v2b"], FAST, bins=BINS)


@judge_group
def test_judge_models_are_calibrated(judge_sbc):
    assert judge_sbc["passed"].all(), judge_sbc
    assert (judge_sbc["divergences"] == 0).all()


def test_batched_models_are_calibrated(batched_sbc):
    assert set(batched_sbc["parameter"]) == {"a", "log_b", "log_kappa"}
    assert batched_sbc["passed"].all(), batched_sbc
    assert (batched_sbc["divergences"] == 0).all()


@judge_group
def test_uniformity_rejects_ranks_of_a_posterior_that_is_too_narrow(judge_sbc):
    """Ranks pile up at both ends when the posterior is too narrow: the same test rejects."""
    rng = np.random.default_rng(0)
    edges = np.concatenate([rng.integers(0, 10, SIMULATIONS // 2),
                            rng.integers(90, 100, SIMULATIONS - SIMULATIONS // 2)])
    assert sbc.uniformity(edges, BINS)[1] < sbc.LEVEL / len(judge_sbc)


def test_a_simulator_whose_likelihood_is_not_the_models_fails(monkeypatch, batched_sbc):
    """PEMI's labels simulated with log-odds 1.5 above the map's: the true intercepts sit below
    their posteriors and the intercept's ranks fail."""
    shifted = SimpleNamespace(expit=lambda x: special.expit(x + 1.5), logit=special.logit)
    monkeypatch.setattr(pemi, "special", shifted)
    run = sbc.run(SIMULATIONS, ["pemi_m1"], FAST, bins=BINS)
    a = run.set_index("parameter").loc["a"]
    assert a["p_value"] < sbc.LEVEL / len(batched_sbc), run
    assert np.median(run.attrs["ranks"]["pemi_m1"]["a"]) < 20


def test_cbpe_v0_counts_follow_the_poisson_binomial(monkeypatch):
    """NUTS on V0's uniforms gives counts whose ranks against exact Poisson-binomial draws are
    uniform; with the true counts drawn from probabilities 0.15 higher, TP's ranks pile up at
    the top and fail."""
    run = sbc.run(SIMULATIONS, ["cbpe_v0"], FAST, bins=BINS)
    assert set(run["parameter"]) == {"tp_copy[0]", "tp_copy[1]", "fn_copy[0]", "fn_copy[1]"}
    assert run["passed"].all(), run
    assert (run["divergences"] == 0).all()
    monkeypatch.setattr(cbpe, "PoissonBinomial",
                        lambda p: PoissonBinomial(np.minimum(np.asarray(p) + 0.15, 1.0)))
    shifted = sbc.run(SIMULATIONS, ["cbpe_v0"], FAST, bins=BINS).set_index("parameter")
    assert (shifted.loc[["tp_copy[0]", "tp_copy[1]"], "p_value"] < sbc.LEVEL / len(shifted)
            ).all(), shifted
