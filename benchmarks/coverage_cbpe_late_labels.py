r"""Coverage of CBPE's 95 % intervals when labels arrive late for part of the analysis period.

Each replication draws a labelled reference of 2,000 rows (:math:`s\sim\mathrm{Beta}(2,2)`,
:math:`y\sim\mathrm{Bernoulli}(s)`) and an analysis period of 8 weekly chunks of 400 rows with the
same scores' law; from week 5 the labels drift, :math:`P(Y=1\mid s)=\sigma(\mathrm{logit}\,s-1)`
(a concept drift: the reference's map no longer holds), and a share ``labelled`` (10 % or 30 %)
of the rows of weeks 5-8 is labelled, at random. :func:`bayeval.cbpe` runs twice with the same
seed: ``late_labels="estimate"`` (the labels in the estimate) and ``"report"`` (CBPE's law, the
labels only reported). For every chunk and the whole period we record whether the 95 % interval
holds the window's **realized** metric over all its rows (from every label, which the method
sees only in part).

Monte-Carlo errors: a column's coverage :math:`\hat c` is the mean over :math:`R` replications of
the per-replication fraction of its windows covered (one window for the whole period, four for
the weeks with and without labels); its standard error is the sd (ddof 1) of those fractions over
:math:`\sqrt R` (at most :math:`\sqrt{\hat c(1-\hat c)/R}`, 0.015 at 0.95 with :math:`R=200`).

``nice -n 5 env OPENBLAS_NUM_THREADS=1 python -m benchmarks.coverage_cbpe_late_labels`` prints
the table in markdown (``--replications`` to change :math:`R`).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special
from sklearn import metrics as skm

import bayeval as be

SEED = 20261124
WEEKS, ROWS, DRIFT_FROM, DRIFT = 8, 400, 4, -1.0
N_REF = 2000
METRICS = ("accuracy", "f1", "roc_auc")
LABELLED = (0.1, 0.3)
VARIANTS = ("estimate", "report")


def realized(y: np.ndarray, s: np.ndarray, metric: str) -> float:
    """The metric of a window with every label known (scikit-learn's)."""
    if metric == "roc_auc":
        return float(skm.roc_auc_score(y, s))
    pred = s >= 0.5
    return float(skm.accuracy_score(y, pred) if metric == "accuracy" else
                 skm.f1_score(y, pred, zero_division=0))


def replication(rng: np.random.Generator, labelled: float) -> dict[str, np.ndarray]:
    """Covered (windows x metrics) and widths per variant, windows = weeks then the period."""
    ref = rng.beta(2, 2, N_REF)
    reference = (ref, (rng.random(N_REF) < ref).astype(int))
    week = np.repeat(np.arange(WEEKS), ROWS)
    s = rng.beta(2, 2, week.size)
    y = (rng.random(s.size) < special.expit(special.logit(s) + DRIFT * (week >= DRIFT_FROM))
         ).astype(int)
    labels = np.where((week >= DRIFT_FROM) & (rng.random(s.size) < labelled), y, np.nan)
    truth = np.array([[realized(y[r], s[r], m) for m in METRICS]
                      for r in [*(week == w for w in range(WEEKS)), slice(None)]])
    seed = int(rng.integers(2**31))
    out = {}
    for variant in VARIANTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = be.cbpe(s, reference=reference, labels=labels, chunks=week,
                         late_labels=variant, metrics=list(METRICS), random_seed=seed
                         ).closed_form
        lower, upper = cf["lower"].values, cf["upper"].values
        out[variant] = (lower <= truth) & (truth <= upper)
        out[f"{variant} width"] = upper - lower
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage_cbpe_late_labels",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    groups = {"weeks 1-4 (no label)": slice(0, DRIFT_FROM),
              "weeks 5-8 (labelled)": slice(DRIFT_FROM, WEEKS), "whole period": slice(WEEKS, None)}
    rows = []
    for labelled in LABELLED:
        rng = np.random.default_rng([args.seed, int(labelled * 100)])
        start = time.perf_counter()
        reps = [replication(rng, labelled) for _ in range(args.replications)]
        seconds = (time.perf_counter() - start) / args.replications
        for variant in VARIANTS:
            for group, where in groups.items():
                for j, metric in enumerate(METRICS):
                    frac = np.array([r[variant][where, j].mean() for r in reps])
                    width = np.mean([r[f"{variant} width"][where, j].mean() for r in reps])
                    rows.append({"labelled": f"{labelled:.0%}", "late_labels": variant,
                                 "windows": group, "metric": metric,
                                 "coverage": frac.mean(),
                                 "se": frac.std(ddof=1) / np.sqrt(frac.size),
                                 "width": width})
        print(f"labelled {labelled:.0%}: {seconds:.2f} s per replication (two runs)")
    table = pd.DataFrame(rows)
    print(f"\nR = {args.replications} replications per row\n")
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * table.columns.size)
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row)
              + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
