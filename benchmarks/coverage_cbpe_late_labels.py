r"""Coverage of CBPE's 95 % intervals when labels arrive late for part of the analysis period.

Each replication draws a labelled reference of 2,000 rows and a DataFrame of 12 weeks of daily
rows (50 a day, 350 a week) with a timestamp column, chunked by ``chunk_period="W"``. The
reference and weeks 1-8 follow coverage.md's over-confident design,
:math:`p\sim\mathrm{Beta}(2,4)`, :math:`s=\sigma(2.5\,\mathrm{logit}\,p+0.8)`,
:math:`y\sim\mathrm{Bernoulli}(p)`; weeks 9-12 drift:

* ``covariate shift``: :math:`p\sim\mathrm{Beta}(4,2)` with the same map from :math:`p` to
  :math:`s`: the scores move, :math:`P(Y\mid s)` holds (CBPE's assumption);
* ``concept shift``: :math:`s=\sigma(4\,\mathrm{logit}\,p+0.8)`: the model becomes more
  over-confident, :math:`P(Y\mid s)` changes (the reference's map is wrong);
* ``log-odds drift`` (the earlier design of this benchmark): calibrated scores,
  :math:`s\sim\mathrm{Beta}(2,2)`, :math:`p=s` before and :math:`p=\sigma(\mathrm{logit}\,s-1)`
  in weeks 9-12.

A share ``labelled`` (30 % by default) of the rows of weeks 9-12 is labelled, at random.
:func:`bayeval.cbpe` runs on the DataFrame twice with the same seed: ``late_labels="estimate"``
(the labels in the estimate) and ``"report"`` (CBPE's law, the labels only reported). For every
week and the whole period we record whether the 95 % interval holds the window's **realized**
metric over all its rows (from every label, which the method sees only in part), and its width.

Monte-Carlo errors: a column's coverage :math:`\hat c` is the mean over :math:`R` replications of
the per-replication fraction of its windows covered (one window for the whole period, four or
eight for the weeks); its standard error is the sd (ddof 1) of those fractions over
:math:`\sqrt R` (at most :math:`\sqrt{\hat c(1-\hat c)/R}`, 0.015 at 0.95 with :math:`R=200`).

``nice -n 5 env OPENBLAS_NUM_THREADS=1 python -m benchmarks.coverage_cbpe_late_labels`` prints
the table in markdown (``--replications`` to change :math:`R`, ``--design`` and ``--labelled``
to choose the cells).
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
WEEKS, PER_DAY, DRIFT_FROM = 12, 50, 8
N_REF = 2000
METRICS = ("accuracy", "f1", "roc_auc")
DESIGNS = ("covariate shift", "concept shift", "log-odds drift")
VARIANTS = ("estimate", "report")
GROUPS = {"weeks 1-8 (no label)": slice(0, DRIFT_FROM),
          "weeks 9-12 (labelled)": slice(DRIFT_FROM, WEEKS), "whole period": slice(WEEKS, None)}


def realized(y: np.ndarray, s: np.ndarray, metric: str) -> float:
    """The metric of a window with every label known (scikit-learn's)."""
    if metric == "roc_auc":
        return float(skm.roc_auc_score(y, s))
    pred = s >= 0.5
    return float(skm.accuracy_score(y, pred) if metric == "accuracy" else
                 skm.f1_score(y, pred, zero_division=0))


def draw(rng: np.random.Generator, design: str, n: int,
         drifted: np.ndarray | bool) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels of ``n`` rows, those with ``drifted`` from the drifted law."""
    if design == "log-odds drift":
        s = rng.beta(2, 2, n)
        p = special.expit(special.logit(s) - 1.0 * drifted)
    else:
        shifted = drifted & (design == "covariate shift")
        p = np.where(shifted, rng.beta(4, 2, n), rng.beta(2, 4, n))
        slope = np.where(drifted & (design == "concept shift"), 4.0, 2.5)
        s = special.expit(slope * special.logit(p) + 0.8)
    return s, (rng.random(n) < p).astype(int)


def replication(rng: np.random.Generator, design: str,
                labelled: float) -> dict[str, np.ndarray]:
    """Covered (windows x metrics) and widths per variant, windows = weeks then the period."""
    reference = draw(rng, design, N_REF, False)
    stamps = np.repeat(pd.date_range("2024-01-01", periods=7 * WEEKS, freq="D"), PER_DAY)
    week = np.arange(stamps.size) // (7 * PER_DAY)
    s, y = draw(rng, design, stamps.size, week >= DRIFT_FROM)
    labels = np.where((week >= DRIFT_FROM) & (rng.random(s.size) < labelled), y, np.nan)
    frame = pd.DataFrame({"score": s, "label": labels, "timestamp": stamps})
    truth = np.array([[realized(y[r], s[r], m) for m in METRICS]
                      for r in [*(week == w for w in range(WEEKS)), slice(None)]])
    seed = int(rng.integers(2**31))
    out = {}
    for variant in VARIANTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = be.cbpe(data=frame, scores="score", labels="label", chunks="timestamp",
                         chunk_period="W", reference=reference, late_labels=variant,
                         metrics=list(METRICS), random_seed=seed).closed_form
        lower, upper = cf["lower"].values, cf["upper"].values
        out[variant] = (lower <= truth) & (truth <= upper)
        out[f"{variant} width"] = upper - lower
    return out


def run(design: str, labelled: float, replications: int, seed: int = SEED) -> list[dict]:
    """The table's rows of one design and share of labels."""
    rng = np.random.default_rng([seed, DESIGNS.index(design), int(labelled * 100)])
    start = time.perf_counter()
    reps = [replication(rng, design, labelled) for _ in range(replications)]
    seconds = (time.perf_counter() - start) / replications
    print(f"{design}, labelled {labelled:.0%}: {seconds:.2f} s per replication (two runs)",
          flush=True)
    rows = []
    for group, where in GROUPS.items():
        for j, metric in enumerate(METRICS):
            row = {"design": design, "labelled": f"{labelled:.0%}", "windows": group,
                   "metric": metric}
            for variant in VARIANTS:
                frac = np.array([r[variant][where, j].mean() for r in reps])
                row[f"{variant} coverage"] = frac.mean()
                row[f"{variant} se"] = frac.std(ddof=1) / np.sqrt(frac.size)
                row[f"{variant} width"] = np.mean([r[f"{variant} width"][where, j].mean()
                                                   for r in reps])
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage_cbpe_late_labels",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--design", choices=DESIGNS, action="append",
                        help="default: covariate shift and concept shift")
    parser.add_argument("--labelled", type=float, action="append", help="default: 0.3")
    args = parser.parse_args(argv)
    rows = [row for design in args.design or DESIGNS[:2] for labelled in args.labelled or [0.3]
            for row in run(design, labelled, args.replications, args.seed)]
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
