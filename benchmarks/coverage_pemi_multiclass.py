"""Coverage of PEMI's 95 % intervals with K = 3 classes, the calibration map learned from the
labelled rows.

Design: a test set of ``N_TEST`` rows with logits :math:`z_{ik}\\sim N(0,1.5^2)`, true class
probabilities :math:`\\mathrm{softmax}(z_i+c)`, :math:`c=(0,0.3,-0.3)`, labels drawn from them
and the prediction the class of the largest score. The classifier's scores are either
under-confident and biased, :math:`s_i=\\mathrm{softmax}(0.6\\,z_i)`, or calibrated,
:math:`s_i=\\mathrm{softmax}(z_i+c)` (the multinomial Platt family holds both maps).
``LABELLED`` rows are labelled: at random (MCAR), or with odds of being labelled
:math:`e^{4(\\max_ks_{ik}-0.5)}` (MAR given the scores). The map is learned from the labelled
rows (the default, multinomial Platt). Each replication draws fresh data; the target is the
metric of the whole test set with every label known (:func:`bayeval.multiclass.matrix_value`).

Per cell and metric: coverage of the default (mixed over the map's posterior) and of the plug-in
(``calibration_uncertainty=False``) with Monte-Carlo standard errors :math:`\\sqrt{c(1-c)/R}`
(per-class metrics pooled over the K classes: R x K intervals, dependent within a replication,
so that SE is a lower bound), and the mean widths. Run
``python -m benchmarks.coverage_pemi_multiclass --replications 200`` (prints the markdown table
of docs/pemi.md).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

from bayeval.methods.pemi.api import pemi
from bayeval.multiclass import CLASS_METRICS, matrix_of, matrix_value

SEED = 20261125
K = 3
N_TEST = 600
LABELLED = 200
BIAS = np.array([0.0, 0.3, -0.3])
MECHANISMS = ("mcar", "mar")
SCORES = ("under-confident", "calibrated")
METRICS = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "macro_f1",
           "weighted_f1", "cohen_kappa", "mcc")
TARGET = 0.93


def replication(n: int, labelled: int, mechanism: str, scores: str,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores (n, K), labels (None where missing) and the full labels of one test set."""
    z = rng.normal(0.0, 1.5, (n, K))
    p = special.softmax(z + BIAS, axis=1)
    s = special.softmax(0.6 * z, axis=1) if scores == "under-confident" else p
    y = np.minimum((rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1), K - 1)
    weight = np.ones(n) if mechanism == "mcar" else np.exp(4.0 * (s.max(axis=1) - 0.5))
    known = rng.choice(n, labelled, replace=False, p=weight / weight.sum())
    labels = np.full(n, None, dtype=object)
    labels[known] = y[known]
    return s, labels, y


def truth(s: np.ndarray, y: np.ndarray, metrics) -> np.ndarray:
    """The metrics of the whole test set, (metric, class) with overall metrics at class 0."""
    mat = matrix_of(y, s.argmax(axis=1), K).astype(float)
    out = np.full((len(metrics), K), np.nan)
    for j, metric in enumerate(metrics):
        if metric in CLASS_METRICS:
            out[j] = matrix_value(metric, mat, 0.0)
        else:
            out[j, 0] = matrix_value(metric, mat, 0.0)
    return out


def run(replications: int = 200, seed: int = SEED, *, n_test: int = N_TEST,
        labelled: int = LABELLED, mechanisms=MECHANISMS, scores=SCORES,
        metrics=METRICS) -> pd.DataFrame:
    """Coverage and width per (scores, mechanism, metric) for the default and the plug-in."""
    rng = np.random.default_rng(seed)
    records = []
    for kind, mechanism in itertools.product(scores, mechanisms):
        hits = {v: [] for v in ("default", "plugin")}
        widths = {v: [] for v in ("default", "plugin")}
        for r in range(replications):
            s, labels, y = replication(n_test, labelled, mechanism, kind, rng)
            target = truth(s, y, metrics)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                for variant, wanted in (("default", True), ("plugin", False)):
                    cf = pemi(s, labels, metrics=metrics, calibration_uncertainty=wanted,
                              random_seed=r).closed_form
                    lo, hi = cf["lower"].values, cf["upper"].values
                    hits[variant].append((target >= lo - 1e-12) & (target <= hi + 1e-12))
                    widths[variant].append(hi - lo)
        for j, metric in enumerate(metrics):
            cols = slice(None) if metric in CLASS_METRICS else slice(0, 1)
            row = {"scores": kind, "mechanism": mechanism, "metric": metric,
                   "replications": replications}
            for variant in ("default", "plugin"):
                h = np.array([x[j, cols] for x in hits[variant]]).ravel()
                c = float(h.mean())
                row[f"coverage_{variant}"] = c
                row[f"mcse_{variant}"] = float(np.sqrt(c * (1 - c) / h.size))
                row[f"width_{variant}"] = float(np.mean([w[j, cols] for w in widths[variant]]))
            records.append(row)
        print(markdown(pd.DataFrame.from_records(records[-len(metrics):])), file=sys.stderr,
              flush=True)  # each cell as it ends
    return pd.DataFrame.from_records(records)


def markdown(frame: pd.DataFrame) -> str:
    """The table as markdown: coverage ± MC s.e. and mean width, default beside plug-in."""
    lines = ["| scores | missingness | metric | default coverage | plug-in coverage | "
             "default width | plug-in width |", "|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        mark = "" if r.coverage_default >= TARGET else " (below 0.93)"
        lines.append(
            f"| {r.scores} | {r.mechanism.upper()} | {r.metric} | "
            f"{r.coverage_default:.3f} ± {r.mcse_default:.3f}{mark} | "
            f"{r.coverage_plugin:.3f} ± {r.mcse_plugin:.3f} | {r.width_default:.4f} | "
            f"{r.width_plugin:.4f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.coverage_pemi_multiclass [--replications R] [--seed S]
    [--csv PATH]``: prints the markdown table with its settings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--csv", help="also write the cells to this CSV file")
    parser.add_argument("--scores", nargs="+", choices=SCORES, default=SCORES)
    parser.add_argument("--mechanisms", nargs="+", choices=MECHANISMS, default=MECHANISMS)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(args.replications, args.seed, scores=args.scores, mechanisms=args.mechanisms)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(f"PEMI with K = {K} classes, 95 % intervals of the realized metric of {N_TEST:,} test "
          f"rows, {LABELLED} labelled; R = {args.replications} replications per cell, seed "
          f"{args.seed}, {datetime.date.today()}, {time.perf_counter() - start:.0f} s\n")
    print(markdown(frame))


if __name__ == "__main__":
    main()
