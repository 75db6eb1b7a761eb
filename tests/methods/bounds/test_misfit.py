"""A label model that the weak labels contradict: detected, named, and the bounds widened.

Dawid-Skene with a near-copy of a labelling function (benchmarks/coverage_bounds.py's duplicated
design: the copy repeats function 0's vote with probability 0.9) collapses the bounds around a
wrong value. The fit's tests must flag every replicate, the reported interval of the identified
set must then hold the true metric where the full fit's does not; with conditionally independent
functions the tests' false alarms must stay at their family-wise level (1 %).
"""

from __future__ import annotations

import numpy as np
import pytest

from bayeval.methods.bounds.label_models import FIT_LEVEL, dawid_skene, dawid_skene_fit
from benchmarks.coverage_bounds import Cell, population, run_cell

SEED = 20261124


@pytest.mark.slow
def test_a_duplicated_function_is_flagged_and_the_bounds_widen():
    # R = 40: a correct interval of the identified set holds the truth at >= 0.93 (floor
    # 0.93 - 3 MC sds = 0.81); the full fit's held it in none of 30 pilot replicates.
    reps = 40
    out = run_cell(Cell(2, 4, 1000, "dawid_skene", duplicate=True), reps, seed=SEED)
    out = out[out["metric"] == "accuracy"].set_index(["variant", "bound"])
    assert (out["warned"] == 1.0).all()
    floor = 0.93 - 3 * np.sqrt(0.93 * 0.07 / reps)
    assert out.loc[("default", "truth"), "coverage"] >= floor, out
    assert out.loc[("all LFs", "truth"), "coverage"] <= 0.2, out


def test_conditionally_independent_functions_rarely_raise_the_alarm():
    # 4 one-coin functions, binary, n = 1,000: over 300 samples the tests flag at most
    # FIT_LEVEL + 3 MC sds of it.
    patterns, joint_zh, _ = population(2, 4)
    p = joint_zh.sum(axis=1)
    rng = np.random.default_rng(SEED)
    reps, flagged = 300, 0
    for _ in range(reps):
        counts = rng.multinomial(1000, p)
        seen = counts > 0
        beta = dawid_skene(patterns[seen], counts[seen], 2)
        flagged += dawid_skene_fit(patterns[seen], counts[seen], beta)["misfit"]
    assert flagged / reps <= FIT_LEVEL + 3 * np.sqrt(FIT_LEVEL * (1 - FIT_LEVEL) / reps)
