"""Simulation-based calibration, reduced: the judge's Models A and B recover their own prior
draws (ranks uniform at the 1 % family level), and the uniformity test rejects the ranks of a
posterior that is too narrow.

The full run (200 simulations per model, MVU Model B included) is ``benchmarks/sbc.py``.
"""

import numpy as np
import pytest

from benchmarks import sbc

pytestmark = pytest.mark.xdist_group("judge_pymc")  # the judge's models compile once there
FAST = {"draws": 400, "tune": 400}
SIMULATIONS, BINS = 30, 5


@pytest.fixture(scope="module")
def judge_sbc():
    return sbc.run(SIMULATIONS, ["judge_model_a", "judge_model_b"], FAST, bins=BINS)


def test_judge_models_are_calibrated(judge_sbc):
    assert judge_sbc["passed"].all(), judge_sbc
    assert (judge_sbc["divergences"] == 0).all()


def test_uniformity_rejects_ranks_of_a_posterior_that_is_too_narrow(judge_sbc):
    """Ranks pile up at both ends when the posterior is too narrow: the same test rejects."""
    rng = np.random.default_rng(0)
    edges = np.concatenate([rng.integers(0, 10, SIMULATIONS // 2),
                            rng.integers(90, 100, SIMULATIONS - SIMULATIONS // 2)])
    assert sbc.uniformity(edges, BINS)[1] < sbc.LEVEL / len(judge_sbc)
