"""Exact metric distributions and ROC-AUC moments at n = 10^6, timed against reference costs.

Rows, both sides timed in one run (best of a few calls):

* the exact F1 law as a user of its fast path needs it (construction, mean, sd and 95 %
  equal-tailed interval, none of which lists the grid's support) against the two
  Poisson-binomial PMFs it needs (TP's over the predicted positives, FN's over the predicted
  negatives), the floor of the CBPE and PEMI-Gauss rows: at most 3x their time;
* the same law's whole support (``values`` and ``probs``: about 2.4e7 grid cells, sorted),
  against the same PMFs: informational, no target;
* the exact ROC-AUC moments with 30 % of the labels missing against one
  ``sklearn.metrics.roc_auc_score`` on the same rows with all labels: at most 10x its time.

Run ``python -m benchmarks.bench_confusion`` to print the rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from bayeval.confusion import metric_distribution
from bayeval.confusion_moments import auc_moments
from bayeval.poibin import PoissonBinomial
from benchmarks.timing import best_time

SEED = 20260902
N = 1_000_000


def row(benchmark: str, case: str, ours_s: float, peer: str, peer_s: float,
        limit: float | None, note: str) -> dict:
    """A result row; the target is ours <= ``limit`` x the peer's time (None: no target)."""
    return {"benchmark": benchmark, "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": "–" if limit is None else f"<= {limit:g}x the peer's time",
            "ok": None if limit is None else ours_s <= limit * peer_s,
            "note": f"{ours_s / peer_s:.1f}x; {note}"}


def f1_summary(y_pred: np.ndarray, p: np.ndarray) -> tuple[float, float, tuple[float, float]]:
    """What the fast path gives: the exact mean, sd and 95 % equal-tailed interval of F1."""
    dist = metric_distribution("f1", y_pred, p)
    return dist.mean, dist.sd, dist.interval(0.95, "eti")


def f1_support(y_pred: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The whole exact PMF of F1: sorted support and probabilities."""
    dist = metric_distribution("f1", y_pred, p)
    return dist.values, dist.probs


def f1_distribution(n: int = N) -> list[dict]:
    p = np.random.default_rng(SEED).beta(2, 2, n)
    y_pred = (p >= 0.5).astype(np.int8)
    positive = y_pred == 1
    peer = (f"the two Poisson-binomial PMFs it needs ({positive.sum():,} and "
            f"{(~positive).sum():,} rows)")
    case = f"exact F1 law, n={n:,}, p~Beta(2,2), y_pred = p >= 0.5"
    peer_s, _ = best_time(lambda: (PoissonBinomial(p[positive]).pmf(),
                                   PoissonBinomial(p[~positive]).pmf()), 15)
    fast_s, (mean, sd, (lo, hi)) = best_time(lambda: f1_summary(y_pred, p), 15)
    full_s, (values, _) = best_time(lambda: f1_support(y_pred, p), 2)
    return [
        row("confusion.metric_distribution", f"{case}: mean, sd, 95% ETI", fast_s, peer, peer_s,
            3, f"F1 {mean:.4f} +- {sd:.1e}, ETI [{lo:.4f}, {hi:.4f}]; two count PMFs, "
            "then moments by convolution along TP + FN and quantiles by bisection"),
        row("confusion.metric_distribution", f"{case}: whole support (values, probs)", full_s,
            peer, peer_s, None, f"{values.size:,} support points (about 270 sd_TP sd_FN grid "
            "cells, nearly all distinct, so the cost is sorting them); informational"),
    ]


def roc_auc_moments(n: int = N) -> dict:
    rng = np.random.default_rng(SEED + 1)
    scores = rng.normal(size=n)
    p = 1 / (1 + np.exp(-2 * scores))
    y = (rng.random(n) < p).astype(np.int8)
    labels = np.where(rng.random(n) < 0.3, np.nan, y)
    peer_s, _ = best_time(lambda: roc_auc_score(y, scores), 5)
    ours_s, (mean, var) = best_time(lambda: auc_moments(scores, p, labels), 5)
    return row("confusion_moments.auc_moments", f"ROC-AUC mean and variance, n={n:,}, 30% labels "
               "missing, continuous scores", ours_s, "sklearn roc_auc_score (all labels)", peer_s,
               10, f"AUC {mean:.4f} +- {np.sqrt(var):.1e}")


def run() -> list[dict]:
    return [*f1_distribution(), roc_auc_moments()]


if __name__ == "__main__":
    for r in run():
        print(r)
