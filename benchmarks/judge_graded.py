r"""The judge on a continuous outcome: the simulation of Chen et al. (2026, §5.4), after Ji et al.

Population of :math:`N = 2{,}000` items: a latent class :math:`Z \sim \mathrm{Unif}\{1, 2, 3\}`,
the human outcome :math:`Y \mid Z \sim N(\mu_Z, 1)` with :math:`\mu = (1, 2, \mu_3)`,
:math:`\mu_3 \in \{3, \dots, 9\}`, and the judge :math:`\hat Y = Z`: it finds the class but
reports it on the wrong scale, so :math:`E[Y \mid \hat Y]` is a step function, linear only at
:math:`\mu_3 = 3`. A random :math:`m = \max(10, \mathrm{round}(fN))` items carry :math:`Y`,
:math:`f \in \{5, 10, 20\}\,\%`.

Each replicate runs :func:`bayeval.judge` on the outcome declared unbounded
(``y_range=(-inf, inf)``, Wald intervals) with ``method="all"`` (naive, classical, PPI, PPI++
clipped and unclipped, EIF with cell means) and ``method="eif", mu_model="linear"`` (EIF-linear).
Coverage is the share of replicates whose interval holds the target, with Monte-Carlo SE
:math:`\sqrt{\hat c(1-\hat c)/R}`; width is the mean of upper - lower, with SE
:math:`\mathrm{sd}/\sqrt R`. Two targets: the mean of :math:`Y` over the unlabelled items (the
paper's truth, ``coverage``) and the population mean :math:`(1 + 2 + \mu_3)/3`
(``coverage_pop``), which the intervals estimate.

``python -m benchmarks.judge_graded --replications 2000 --ci-prob 0.95`` prints the markdown
table per cell (coverage and width with SEs); the ``judge_continuous`` experiment of
``benchmarks.reproductions`` runs :func:`run` and summarises it in ``docs/reproductions.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import bayeval as be

SEED = 20261126
N_ITEMS = 2000
MU3 = (3, 4, 5, 6, 7, 8, 9)
FRACTIONS = (0.05, 0.10, 0.20)
ESTIMATORS = ("naive", "classical", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif_linear", "eif")


def replicate(mu3: float, fraction: float, ci_prob: float, rng: np.random.Generator) -> dict:
    """(lower, upper) per estimator and the two targets, for one simulated dataset."""
    z = rng.integers(1, 4, N_ITEMS)
    y = rng.normal(np.array([0.0, 1.0, 2.0, mu3])[z], 1.0)
    m = max(10, round(fraction * N_ITEMS))
    labelled = np.zeros(N_ITEMS, bool)
    labelled[rng.choice(N_ITEMS, m, replace=False)] = True
    args = (y[labelled], z[labelled], z[~labelled])
    kwargs = dict(y_range=(-np.inf, np.inf), ci_kind="wald", ci_prob=ci_prob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cells = be.judge(*args, method="all", **kwargs).closed_form
        line = be.judge(*args, method="eif", mu_model="linear", **kwargs).closed_form
    out = {name: (float(cells["lower"].sel(estimator=name)),
                  float(cells["upper"].sel(estimator=name)))
           for name in ESTIMATORS if name != "eif_linear"}
    out["eif_linear"] = (float(line["lower"].item()), float(line["upper"].item()))
    return {"intervals": out, "target": float(y[~labelled].mean()), "pop": (3 + mu3) / 3}


def run(replications: int, ci_prob: float, seed: int = SEED, fractions=FRACTIONS,
        mu3s=MU3) -> pd.DataFrame:
    """Coverage and width per (fraction, mu3, estimator), with Monte-Carlo SEs; each cell has its
    own seed, so a subset of the cells gives the same numbers as the full grid."""
    rows = []
    for fraction in fractions:
        for mu3 in mu3s:
            rng = np.random.default_rng([seed, int(mu3), round(fraction * 100)])
            reps = [replicate(mu3, fraction, ci_prob, rng) for _ in range(replications)]
            for name in ESTIMATORS:
                lo, hi = (np.array([r["intervals"][name][j] for r in reps]) for j in (0, 1))
                target = np.array([r["target"] for r in reps])
                hit, hit_pop = (lo <= target) & (target <= hi), (lo <= reps[0]["pop"]) & (
                    reps[0]["pop"] <= hi)
                width = hi - lo
                rows.append({"fraction": fraction, "mu3": mu3, "estimator": name,
                             "coverage": hit.mean(),
                             "coverage_se": np.sqrt(hit.mean() * (1 - hit.mean()) / replications),
                             "coverage_pop": hit_pop.mean(), "width": width.mean(),
                             "width_se": width.std(ddof=1) / np.sqrt(replications)})
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    """One row per (fraction, mu3): coverage (SE) and width (SE) per estimator."""
    names = [n for n in ESTIMATORS if n != "naive"]
    head = ("| labelled | μ3 | " + " | ".join(f"{n} cov." for n in names) + " | "
            + " | ".join(f"{n} width" for n in names) + " | naive cov. |")
    lines = [head, "|" + "---|" * (3 + 2 * len(names))]
    for (fraction, mu3), g in frame.groupby(["fraction", "mu3"], sort=True):
        g = g.set_index("estimator")
        cov = [f"{g.loc[n, 'coverage']:.3f} ({g.loc[n, 'coverage_se']:.3f})" for n in names]
        wid = [f"{g.loc[n, 'width']:.3f} ({g.loc[n, 'width_se']:.3f})" for n in names]
        lines.append(f"| {fraction:.0%} | {mu3} | " + " | ".join(cov + wid)
                     + f" | {g.loc['naive', 'coverage']:.3f} |")
    pooled = frame.groupby("estimator")[["coverage", "coverage_pop"]].mean()
    pairs = [f"{n} {pooled.loc[n, 'coverage']:.3f} / {pooled.loc[n, 'coverage_pop']:.3f}"
             for n in ESTIMATORS]
    lines += ["", f"Pooled over the {len(frame) // len(ESTIMATORS)} cells (coverage of the "
              "unlabelled mean / of E[Y]): " + ", ".join(pairs) + "."]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--ci-prob", type=float, default=0.95)
    parser.add_argument("--csv", help="also write the full table to this CSV file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(args.replications, args.ci_prob)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(markdown(frame))
    print(f"\n{args.replications} replications per cell, {args.ci_prob:.0%} intervals, "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
