"""Coverage of PEMI's 95 % intervals when the calibration map is learned from few labels.

Design: a test set of ``N_TEST`` rows (true :math:`p\\sim\\mathrm{Beta}(2,4)`,
:math:`y\\sim\\mathcal B(p)`, prediction :math:`s\\ge0.5`) scored by an over-confident
classifier, :math:`s=\\sigma(2.5\\,\\mathrm{logit}\\,p+0.8)`, or a calibrated one, :math:`s=p`
(Platt's family holds both maps), of which 30, 100 or 1,000 rows are
labelled: at random (MCAR), or with odds of being labelled :math:`e^{3(s-0.5)}` (MAR given the
score). The map is learned from the labelled rows by the default calibrator (Platt). Each
replication draws fresh data; the target is the metric of the whole test set with every label
known. Per cell: coverage of the default (integrated over the map's posterior) and of the
plug-in (``calibration_uncertainty=False``), their Monte-Carlo standard errors
:math:`\\sqrt{c(1-c)/R}`, the mean widths and the width ratio. Run
``python -m benchmarks.coverage_pemi --replications 200 --csv out.csv`` (prints the markdown
table of docs/pemi.md).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

from bayeval.methods.pemi.api import pemi
from bayeval.methods.pemi.protocol import metric_values

SEED = 20261124
N_TEST = 2000
LABELLED = (30, 100, 1000)
MECHANISMS = ("mcar", "mar")
SCORES = ("over-confident", "calibrated")
METRICS = ("precision", "recall", "accuracy", "f1", "roc_auc")


def replication(n: int, labelled: int, mechanism: str, rng: np.random.Generator,
                scores: str = "over-confident"):
    """Scores, labels (NaN where missing) and the full labels of one test set."""
    p = rng.beta(2, 4, n)
    s = special.expit(2.5 * special.logit(p) + 0.8) if scores == "over-confident" else p
    y = (rng.random(n) < p).astype(float)
    weight = np.ones(n) if mechanism == "mcar" else np.exp(3.0 * (s - 0.5))
    known = rng.choice(n, labelled, replace=False, p=weight / weight.sum())
    labels = np.full(n, np.nan)
    labels[known] = y[known]
    return s, labels, y


def run(replications: int = 400, seed: int = SEED, *, n_test: int = N_TEST,
        labelled=LABELLED, mechanisms=MECHANISMS, metrics=METRICS,
        scores=SCORES) -> pd.DataFrame:
    """Coverage and width per (scores, mechanism, labelled rows, metric) for the default and
    the plug-in; one row per cell."""
    rng = np.random.default_rng(seed)
    records = []
    for kind, mechanism, k in itertools.product(scores, mechanisms, labelled):
        hits = {v: [] for v in ("default", "plugin")}
        widths = {v: [] for v in ("default", "plugin")}
        for r in range(replications):
            s, labels, y = replication(n_test, k, mechanism, rng, kind)
            if np.unique(labels[~np.isnan(labels)]).size < 2:
                continue  # no map can be fitted on one class
            truth = metric_values(s, y, (s >= 0.5).astype(np.int8), tuple(metrics))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                for variant, wanted in (("default", True), ("plugin", False)):
                    cf = pemi(s, labels, metrics=metrics, calibration_uncertainty=wanted,
                              random_seed=r).closed_form
                    lo, hi = cf["lower"].values, cf["upper"].values
                    hits[variant].append((truth >= lo - 1e-12) & (truth <= hi + 1e-12))
                    widths[variant].append(hi - lo)
        reps = len(hits["default"])
        for j, metric in enumerate(metrics):
            row = {"scores": kind, "mechanism": mechanism, "labelled": k, "metric": metric,
                   "replications": reps}
            for variant in ("default", "plugin"):
                c = float(np.mean([h[j] for h in hits[variant]]))
                row[f"coverage_{variant}"] = c
                row[f"mcse_{variant}"] = float(np.sqrt(c * (1 - c) / reps))
                row[f"width_{variant}"] = float(np.mean([w[j] for w in widths[variant]]))
            row["width_ratio"] = row["width_default"] / row["width_plugin"]
            records.append(row)
    return pd.DataFrame.from_records(records)


def markdown(frame: pd.DataFrame) -> str:
    """The table as markdown: coverage ± MC s.e. and mean width, default beside plug-in."""
    lines = ["| scores | missingness | labelled | metric | default coverage | "
             "plug-in coverage | default width | plug-in width | width ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        lines.append(
            f"| {r.scores} | {r.mechanism.upper()} | {r.labelled:,} | {r.metric} | "
            f"{r.coverage_default:.3f} ± {r.mcse_default:.3f} | "
            f"{r.coverage_plugin:.3f} ± {r.mcse_plugin:.3f} | {r.width_default:.4f} | "
            f"{r.width_plugin:.4f} | {r.width_ratio:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.coverage_pemi [--replications R] [--seed S] [--csv PATH]``:
    prints the markdown table with its settings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=400)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--csv", help="also write the cells to this CSV file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(args.replications, args.seed)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(f"PEMI, 95 % intervals of the realized metric of {N_TEST:,} test rows; "
          f"R = {args.replications} replications per cell (fewer where the labelled rows "
          f"held one class), seed {args.seed}, {datetime.date.today()}, "
          f"{time.perf_counter() - start:.0f} s\n")
    print(markdown(frame))


if __name__ == "__main__":
    main()
