r"""Coverage of labelled's 95 % intervals with K = 3 classes (the Dirichlet–multinomial posterior).

Population. The cell probabilities :math:`\pi_{kj}=P(Y=k,\hat Y=j)` of a 3-class classifier;
:data:`POPULATIONS` holds a balanced one (accuracy 0.77), an imbalanced one (class prevalences
0.6, 0.3, 0.1) and a weak one (accuracy 0.5). A replicate draws the confusion matrix of n
labelled rows, :math:`C\sim\mathrm{Multinomial}(n,\pi)`, and runs ``be.labelled`` (default prior
(1, 1), exact posterior draws); the true value of each metric is the metric of :math:`\pi`
(:func:`bayeval.multiclass.from_matrix`). Coverage is the share of replicates whose interval holds
it, with Monte-Carlo SE :math:`\sqrt{\hat c(1-\hat c)/R}`; per-class metrics are pooled over the
three classes (SE then over the 3R intervals, which are dependent, so slightly optimistic).

``python -m benchmarks.coverage_multiclass`` runs n in 60, 200, 1,000 on the three populations
with ``--replications`` (default 400) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import bayeval as be
from bayeval.multiclass import from_matrix

POPULATIONS = {
    "balanced": np.array([[0.27, 0.04, 0.02], [0.04, 0.25, 0.04], [0.02, 0.07, 0.25]]),
    "imbalanced": np.array([[0.50, 0.07, 0.03], [0.06, 0.21, 0.03], [0.02, 0.03, 0.05]]),
    "weak": np.array([[0.17, 0.09, 0.07], [0.08, 0.16, 0.09], [0.08, 0.09, 0.17]]),
}
SIZES = (60, 200, 1000)
METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "macro_precision", "weighted_f1",
           "cohen_kappa", "mcc", "precision", "recall", "f1", "specificity")
DRAWS = 4000


def rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels and predictions with this confusion matrix."""
    k = matrix.shape[0]
    return (np.repeat(np.repeat(np.arange(k), k), matrix.ravel()),
            np.repeat(np.tile(np.arange(k), k), matrix.ravel()))


def coverage(pi: np.ndarray, n: int, replications: int, ci_prob: float,
             rng: np.random.Generator) -> dict[str, tuple[float, float, float]]:
    """(coverage, its MC SE, mean width) per metric."""
    truth = {m: np.atleast_1d(from_matrix(m, pi)) for m in METRICS}
    hits = {m: [] for m in METRICS}
    width = {m: [] for m in METRICS}
    for _ in range(replications):
        cm = rng.multinomial(n, pi.ravel()).reshape(pi.shape)
        y, yp = rows(cm)
        cf = be.labelled(labels=y, y_pred=yp, metrics=list(METRICS), ci_prob=ci_prob,
                         draws=DRAWS, random_seed=rng).closed_form
        for m in METRICS:
            point = cf.sel(metric=m)
            lo, hi = point["lower"].values, point["upper"].values
            keep = slice(None) if truth[m].size > 1 else slice(0, 1)
            hits[m].extend(((lo[keep] <= truth[m]) & (truth[m] <= hi[keep])).tolist())
            width[m].extend((hi[keep] - lo[keep]).tolist())
    out = {}
    for m in METRICS:
        c = float(np.mean(hits[m]))
        out[m] = (c, float(np.sqrt(c * (1 - c) / len(hits[m]))), float(np.mean(width[m])))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=400)
    parser.add_argument("--ci-prob", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=20261203)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    print(f"K = 3, {args.replications} replications per cell, {100 * args.ci_prob:g} % "
          f"intervals, seed {args.seed}: coverage (MC SE) [mean width]\n")
    print("| population | n | " + " | ".join(METRICS) + " |")
    print("|---|---:|" + "---:|" * len(METRICS))
    for name, pi in POPULATIONS.items():
        for n in SIZES:
            res = coverage(pi, n, args.replications, args.ci_prob, rng)
            cells = [f"{c:.3f} ({se:.3f}) [{w:.3f}]" for c, se, w in res.values()]
            print(f"| {name} | {n} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
