"""Exact metric distributions and ROC-AUC moments at n = 10^6, timed against reference costs.

Rows, both sides timed in one run (best of a few calls):

* the exact F1 distribution (support and probabilities) against the Poisson-binomial PMF of its
  larger count: at most 3x its time;
* the exact ROC-AUC moments with 30 % of the labels missing against one
  ``sklearn.metrics.roc_auc_score`` on the same rows with all labels: at most 10x its time.

Run ``python -m benchmarks.bench_confusion`` to print the rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from bayeval.confusion import auc_moments, metric_distribution
from bayeval.poibin import PoissonBinomial

SEED = 20260902
N = 1_000_000


def best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time of ``repeats`` calls, in seconds, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def row(benchmark: str, case: str, ours_s: float, peer: str, peer_s: float, limit: float,
        note: str) -> dict:
    """A result row; the target is ours <= ``limit`` x the peer's time."""
    return {"benchmark": benchmark, "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": f"<= {limit:g}x the peer's time",
            "ok": ours_s <= limit * peer_s, "note": f"{ours_s / peer_s:.1f}x; {note}"}


def f1_distribution(n: int = N) -> dict:
    p = np.random.default_rng(SEED).beta(2, 2, n)
    y_pred = (p >= 0.5).astype(np.int8)
    larger = p[y_pred == 1] if y_pred.sum() >= n / 2 else p[y_pred == 0]
    peer_s, _ = best_time(lambda: PoissonBinomial(larger).pmf(), 5)
    ours_s, dist = best_time(lambda: metric_distribution("f1", y_pred, p), 3)
    return row("confusion.metric_distribution", f"exact F1 law, n={n:,}, p~Beta(2,2), "
               "y_pred = p >= 0.5", ours_s, f"PMF of the larger count ({larger.size:,} rows)",
               peer_s, 3, f"{dist.values.size:,} support points (about 270 sd_TP sd_FN grid "
               "cells, nearly all distinct, so the cost is sorting them)")


def roc_auc_moments(n: int = N) -> dict:
    rng = np.random.default_rng(SEED + 1)
    scores = rng.normal(size=n)
    p = 1 / (1 + np.exp(-2 * scores))
    y = (rng.random(n) < p).astype(np.int8)
    labels = np.where(rng.random(n) < 0.3, np.nan, y)
    peer_s, _ = best_time(lambda: roc_auc_score(y, scores), 5)
    ours_s, (mean, var) = best_time(lambda: auc_moments(scores, p, labels), 5)
    return row("confusion.auc_moments", f"ROC-AUC mean and variance, n={n:,}, 30% labels "
               "missing, continuous scores", ours_s, "sklearn roc_auc_score (all labels)", peer_s,
               10, f"AUC {mean:.4f} +- {np.sqrt(var):.1e}")


def run() -> list[dict]:
    return [f1_distribution(), roc_auc_moments()]


if __name__ == "__main__":
    for r in run():
        print(r)
