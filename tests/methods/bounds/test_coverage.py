"""Coverage of the bounds' intervals: a reduced grid of ``benchmarks/coverage_bounds.py``.

The oracle label model, n = 1,000 items, R = 300 replications per cell with a fixed seed. With
few patterns (2 labelling functions, binary: 9 patterns) each bound's 95 % interval must hold the
population bound in at least 0.93 - 3 Monte-Carlo sds of the replications,
sqrt(0.93 * 0.07 / 300) = 0.0147, i.e. 0.886: a correct interval fails it with probability
below 0.002. With many small patterns (4 labelling functions: 81 and 625 patterns, most with
fewer than 10 items) both bounds' intervals must reach the same floor, and the plug-in interval
(``small_pattern_correction=False``) must miss the upper bound in most replications (0.00-0.05
of 600 in the benchmark).
"""

import numpy as np
import pytest

from benchmarks.coverage_bounds import Cell, run_cell

R = 300


def floor(target):
    return target - 3 * np.sqrt(target * (1 - target) / R)


def _coverage(n_classes, n_lfs):
    out = run_cell(Cell(n_classes, n_lfs, 1000, "oracle"), R, seed=7)
    out = out[out["bound"] != "truth"]
    return out.set_index(["variant", "metric", "bound"])["coverage"]


def test_intervals_cover_the_population_bounds_with_few_patterns():
    default = _coverage(2, 2).loc["default"]
    assert (default >= floor(0.93)).all(), default


@pytest.mark.parametrize("n_classes", [2, 4])
def test_intervals_with_many_small_patterns(n_classes):
    coverage = _coverage(n_classes, 4)
    default = coverage.loc["default"]
    assert (default >= floor(0.93)).all(), default
    assert coverage.loc[("plug-in", "accuracy", "upper")] < 0.5, coverage
