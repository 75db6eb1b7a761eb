"""The coverage protocol of the CBPE paper (Kivimäki et al., 2025, App. D.1).

Perfectly calibrated scores: per trial :math:`\\alpha,\\beta\\sim U[0.1, 10]`,
:math:`s_i\\sim\\mathrm{Beta}(\\alpha,\\beta)`, :math:`y_i\\sim\\mathrm{Bernoulli}(s_i)`,
:math:`\\hat y_i=[s_i\\ge0.5]`. The 95 % interval of each window must cover the window's
realized metric in at least 93 % of 1000 trials (the exact intervals hold at least 95 %: with
1000 trials 0.93 is 3.8 binomial sds below 0.955). One ``cbpe`` call per window size: the trials
are its chunks, the labels give the realized metrics.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from bayeval.methods.cbpe.api import cbpe

TRIALS = 1000
METRICS = ["accuracy", "precision", "recall", "f1"]


@pytest.mark.parametrize("n", [20, 100, 500])
def test_intervals_cover_the_realized_metric(n):
    rng = np.random.default_rng(20261122 + n)
    a, b = rng.uniform(0.1, 10, TRIALS), rng.uniform(0.1, 10, TRIALS)
    scores = rng.beta(np.repeat(a, n), np.repeat(b, n))
    labels = (rng.random(scores.size) < scores).astype(float)
    with threadpool_limits(1, "blas"):
        ev = cbpe(scores, labels=labels, chunks=np.repeat(np.arange(TRIALS), n),
                  metrics=METRICS, calibration="none")
    trials = ev.closed_form.isel(chunk=slice(0, TRIALS))  # the last chunk is the whole period
    covered = (trials["lower"] <= trials["realized"]) & (trials["realized"] <= trials["upper"])
    coverage = covered.mean("chunk")
    assert (coverage >= 0.93).all(), coverage.to_series()
    assert (trials["interval_mass"] >= 0.95).all()
