"""Coverage of CBPE's 95 % intervals when the calibration map is learned from a finite
reference: one cell of ``benchmarks/coverage_cbpe.py`` (the same code, fewer replications).

Each replication draws a fresh 500-row labelled reference and two fresh analysis chunks of 5,001
rows from the over-confident design (:math:`p\\sim\\mathrm{Beta}(2,4)`,
:math:`s=\\sigma(2.5\\,\\mathrm{logit}\\,p+0.8)`, :math:`y\\sim\\mathrm{Bernoulli}(p)`), runs the
default (integrating over the map's posterior) and the plug-in (``calibration_uncertainty=False``)
with the same seed, and checks whether their 95 % intervals hold the realized metric of each chunk
and of the whole period (10,002 rows), computed from labels the method never uses. The whole
period is where the fitted map's error, shared by every row, shows: the plug-in covers it in
about a third of the replications. Chunks above 5,000 rows keep the test fast (the map's draws
enter through the shift kernel, about 0.1 s per call); the exact per-draw mixture of shorter
windows costs about 2.5 s per call and is measured by the benchmark (``docs/coverage.md``).

Tolerance. The whole-period coverage over R replications is a binomial proportion; at the
coverage 0.93 that the intervals must reach, its sd is sqrt(0.93 * 0.07 / R) = 0.040 with
R = 40, and a coverage below 0.93 - 3 sd = 0.809 fails (a false alarm at most ~0.3 % per metric
when the true coverage is 0.93; less at the nominal 0.95). The per-chunk coverage averages
chunks that share the reference, so its sd is at most the same (the variance of a mean of
correlated indicators is at most one indicator's). The check can fail: the plug-in fails it.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/ is not installed
from benchmarks import coverage_cbpe as bench

REPLICATIONS = 40
REQUIRED = 0.93
MC_SD = np.sqrt(REQUIRED * (1 - REQUIRED) / REPLICATIONS)
FLOOR = REQUIRED - 3 * MC_SD  # 0.809
SEED = 20261125
METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc")
CELL = bench.Cell("over-confident", n_ref=500, chunk_size=5001, n_chunks=2)


def test_the_default_covers_a_long_period_and_the_plugin_does_not():
    """The calibrator chosen and fitted on 500 rows is off by a little, the same little for
    every row; over 10,002 rows that error dominates the labels' own noise. The default
    integrates over the map's posterior and covers; the plug-in, conditional on the fitted map,
    fails the same floor, which shows that the check can fail."""
    frame = bench.run(REPLICATIONS, SEED, cells=[CELL], metrics=METRICS).set_index(
        ["variant", "metric"])
    default, plugin = frame.loc["default"], frame.loc["plug-in"]
    assert (default["coverage_whole"] >= FLOOR).all(), default
    assert (default["coverage_chunk"] >= FLOOR).all(), default
    assert (plugin["coverage_whole"] < FLOOR).all(), plugin
    # paired draws (same seed, same fitted map): the default is wider, never narrower
    assert (default["width_ratio_whole"] > 1).all() and (default["width_ratio_chunk"] > 1).all()
