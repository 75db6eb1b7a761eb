r"""Coverage and width of the pooled EIF of several judges against the best single judge.

Population. Each of :math:`N` items has a true label :math:`Y \sim \mathrm{Bernoulli}(\theta)`
and a 0/1 verdict from each judge of a design (:data:`DESIGNS`): judge :math:`j` errs on a
positive item with probability :math:`1 - s_j` and on a negative one with probability
:math:`1 - c_j`. In the correlated designs some judges (two LLMs of one family) share their
errors: on a share :math:`e` of the items of each class they are all wrong together, and
elsewhere each errs on its own with the probability that keeps its error rates at
:math:`1 - s_j`, :math:`1 - c_j`. Their verdicts are then dependent given :math:`Y`, as LLM
judges' often are.

Replicates. Each draws :math:`\theta \sim U(0.15, 0.5)`, then :math:`N` items of which
:math:`m` carry a human label, and runs :func:`bayeval.methods.judge.pool_judges` (95 %
logit intervals): every judge's own EIF estimate and the pooled EIF on verdict patterns.
Coverage is the share of replicates whose interval holds :math:`\theta` (Monte-Carlo SE
:math:`\sqrt{\hat c(1 - \hat c)/R}`), width the mean interval width; the best single judge is
the one with the narrowest mean interval in that setting.

``python -m benchmarks.coverage_judge_pooled`` runs every design, m in 50, 100, 300 and N in
2,000, 10,000 with ``--replications`` (default 1,000) and prints the markdown table of
``docs/judge.md``. ``--latent R`` also measures the coverage of the latent-class posterior
(conditionally independent judges; computed by importance sampling,
:func:`~bayeval.methods.judge.pooled_models.exact_posterior`, the twin of its NUTS run) on the
three-judge designs at N = 2,000, m = 100, with R replicates each.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from bayeval.methods.judge import pool_judges
from bayeval.methods.judge.pooled_models import exact_posterior

SEED = 20261125
M_GRID = (50, 100, 300)
N_GRID = (2000, 10_000)
#: per design: the judges' sensitivities, specificities, which of them share errors and on what
#: share of the items
DESIGNS = {
    "independent": {"sensitivity": (0.90, 0.82, 0.72), "specificity": (0.92, 0.85, 0.75),
                    "shared": (False, False, False), "share": 0.0},
    "two correlated": {"sensitivity": (0.85, 0.84, 0.78), "specificity": (0.88, 0.86, 0.80),
                       "shared": (True, True, False), "share": 0.06},
    "two alike, correlated": {"sensitivity": (0.86, 0.84), "specificity": (0.88, 0.86),
                              "shared": (True, True), "share": 0.08},
}


def simulate(design: dict, theta: float, n_total: int, rng: np.random.Generator):
    """(y, verdicts): arrays (n_total,) and (n_total, J) of 0/1."""
    y = rng.random(n_total) < theta
    error = np.where(y[:, None], 1 - np.array(design["sensitivity"]),
                     1 - np.array(design["specificity"]))
    shared = np.array(design["shared"])
    together = (rng.random(n_total) < design["share"])[:, None] & shared
    own = np.where(shared, (error - design["share"]) / (1 - design["share"]), error)
    wrong = together | (rng.random(error.shape) < own)
    return y.astype(np.int8), (y[:, None] ^ wrong).astype(np.int8)


def run(replications: int = 1000, m_grid=M_GRID, n_grid=N_GRID, seed: int = SEED
        ) -> pd.DataFrame:
    """One row per replicate and estimate: design, N, m, theta, judge, lower, upper."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, design in DESIGNS.items():
        for n_total in n_grid:
            for m in m_grid:
                for r in range(replications):
                    theta = rng.uniform(0.15, 0.5)
                    y, v = simulate(design, theta, n_total, rng)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            s = pool_judges(y[:m], v[:m], v[m:]).summary()
                        except ValueError:  # fewer than 2 labelled items of a class
                            continue
                    for judge, row in s.iterrows():
                        rows.append({"design": name, "N": n_total, "m": m, "rep": r,
                                     "theta": theta, "judge": judge, "mean": row["mean"],
                                     "lower": row["lower"], "upper": row["upper"],
                                     "n_effective": row["n_effective"]})
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Per setting: coverage (SE), width and n_effective of the pooled estimate and of the best
    single judge (narrowest mean interval)."""
    f = frame.assign(covered=(frame["lower"] <= frame["theta"]) & (frame["theta"]
                                                                    <= frame["upper"]),
                     width=frame["upper"] - frame["lower"])
    per = f.groupby(["design", "N", "m", "judge"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"),
        n_effective=("n_effective", "median"), replicates=("covered", "size"))
    per["se"] = np.sqrt(per["coverage"] * (1 - per["coverage"]) / per["replicates"])
    out = []
    for key, g in per.groupby(level=["design", "N", "m"], sort=False):
        g = g.droplevel(["design", "N", "m"])
        pooled, singles = g.loc["pooled"], g.drop(index="pooled")
        best = singles["width"].idxmin()
        out.append({"design": key[0], "N": key[1], "m": key[2],
                    "replicates": int(pooled["replicates"]),
                    "pooled_coverage": pooled["coverage"], "pooled_se": pooled["se"],
                    "pooled_width": pooled["width"], "pooled_n_effective": pooled["n_effective"],
                    "best_judge": best, "best_coverage": singles.loc[best, "coverage"],
                    "best_se": singles.loc[best, "se"], "best_width": singles.loc[best, "width"],
                    "best_n_effective": singles.loc[best, "n_effective"],
                    "lowest_single_coverage": singles["coverage"].min()})
    out = pd.DataFrame(out)
    out["width_ratio"] = out["pooled_width"] / out["best_width"]
    return out


def markdown(summary: pd.DataFrame) -> str:
    """The table of docs/judge.md."""
    lines = ["| design | N | m | pooled coverage (SE) | pooled width | best judge: coverage (SE)"
             " | best judge width | width ratio | n_effective pooled / best |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in summary.itertuples():
        lines.append(f"| {row.design} | {row.N:,} | {row.m} | {row.pooled_coverage:.3f} "
                     f"({row.pooled_se:.3f}) | {row.pooled_width:.3f} | {row.best_judge}: "
                     f"{row.best_coverage:.3f} ({row.best_se:.3f}) | {row.best_width:.3f} | "
                     f"{row.width_ratio:.2f} | {row.pooled_n_effective:.0f} / "
                     f"{row.best_n_effective:.0f} |")
    return "\n".join(lines)


def latent_coverage(replications: int, m: int = 100, n_total: int = 2000, seed: int = SEED
                    ) -> pd.DataFrame:
    """Coverage (SE) and mean width of the latent-class posterior's 95 % interval per
    three-judge design."""
    rng = np.random.default_rng(seed + 1)
    rows = []
    for name, design in DESIGNS.items():
        n_judges = len(design["sensitivity"])
        if n_judges != 3:
            continue
        weights = 1 << np.arange(n_judges)
        for r in range(replications):
            theta = rng.uniform(0.15, 0.5)
            y, v = simulate(design, theta, n_total, rng)
            code = v @ weights
            labelled = np.stack([np.bincount(code[:m][y[:m] == a], minlength=1 << n_judges)
                                 for a in (0, 1)])
            post = exact_posterior(labelled, np.bincount(code[m:], minlength=1 << n_judges),
                                   None, 0.95, r)
            rows.append({"design": name, "covered": post["lower"] <= theta <= post["upper"],
                         "width": post["upper"] - post["lower"]})
    out = pd.DataFrame(rows).groupby("design", sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), replicates=("covered", "size"))
    out["se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replicates"])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--latent", type=int, default=0, metavar="R")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.replications:
        print(markdown(summarise(run(args.replications))))
        print(f"R = {args.replications} per setting, seed {SEED}, "
              f"{time.perf_counter() - start:.0f} s")
    if args.latent:
        start = time.perf_counter()
        out = latent_coverage(args.latent)
        print("| design | latent-class coverage (SE) | mean width |\n|---|---|---|")
        for name, row in out.iterrows():
            print(f"| {name} | {row.coverage:.3f} ({row.se:.3f}) | {row.width:.3f} |")
        print(f"R = {args.latent} per design, N = 2,000, m = 100, "
              f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
