r"""Coverage of the 95 % intervals of the judge with K = 3 categories (win / tie / loss).

Population. :math:`N` items, :math:`Y \in \{A, \mathrm{tie}, B\}` with prevalences
:data:`PI`; the judge's label follows the misclassification matrix :data:`M` (rows the human
label): it calls most ties a win of A or B and confuses A and B a little. :math:`m` of the items,
chosen at random, carry the human label. A replicate draws the sufficient statistics: the
labelled 3×3 table is multinomial :math:`(m; \pi_kM_{kj})` and the unlabelled judge labels
multinomial :math:`(N - m; M^\top\pi)`.

Estimands: the three prevalences and the win rate of A counting a tie as half,
:math:`\pi_A + \pi_{\mathrm{tie}}/2`. Intervals: every estimator of
:mod:`bayeval.methods.judge.categories` with its logit-Wald interval (the rule of
:func:`~bayeval.methods.judge.fast.reported`), and ``bayes``, the equal-tailed interval of
:data:`DRAWS` exact posterior draws under Jeffreys' prior. The frequentist estimators are defined
when every category has at least 2 labelled items and the judge is not constant on them
(``judge`` refuses otherwise; Rogan–Gladen also needs a condition number of :math:`\hat M`
within :data:`~bayeval.methods.judge.categories.MAX_CONDITION`): their coverage is over the
replicates where they are (``defined``). Coverage is the share of replicates whose interval holds
the truth, with Monte-Carlo SE :math:`\sqrt{\hat c(1-\hat c)/R}`.

``python -m benchmarks.coverage_judge_categories`` runs m in 30, 100, 300 at N = 5,000 with
``--replications`` (default 500, SE about 0.01 at 0.95) and prints the markdown table of
``docs/judge.md``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

from bayeval.methods.judge.categories import (
    MAX_CONDITION,
    ClassCounts,
    by_name,
    condition_number,
    posterior_draws,
)
from bayeval.methods.judge.fast import Estimate, reported, z_value

SEED = 20261201
CLASSES = ("A", "tie", "B")
PI = np.array([0.45, 0.15, 0.40])
#: P(judge = j | human = k): ties mostly called wins, A and B confused a little
M = np.array([[0.85, 0.05, 0.10],
              [0.35, 0.40, 0.25],
              [0.08, 0.05, 0.87]])
WEIGHTS = np.array([1.0, 0.5, 0.0])
N_TOTAL = 5000
M_GRID = (30, 100, 300)
DRAWS = 4000
ESTIMATORS = ("naive", "classical", "rogan_gladen", "ppi", "ppi_pp", "eif", "mle", "bayes")


def simulate(m: int, n_total: int, replications: int, rng: np.random.Generator) -> ClassCounts:
    """``replications`` draws of the counts of m labelled and n_total - m unlabelled items."""
    k = len(PI)
    table = rng.multinomial(m, (PI[:, None] * M).ravel(), size=replications).reshape(-1, k, k)
    return ClassCounts(table, rng.multinomial(n_total - m, PI @ M, size=replications))


def defined(c: ClassCounts) -> np.ndarray:
    """Replicates the frequentist estimators accept: 2 labels of each category, a judge with
    two labels or more on the labelled items."""
    rows, cols = c.table.sum(axis=-1), c.table.sum(axis=-2)
    return (rows.min(axis=-1) >= 2) & ((cols > 0).sum(axis=-1) >= 2)


def intervals(c: ClassCounts, ci_prob: float, rng: np.random.Generator) -> dict:
    """{estimator: (lower, upper, ok)}, bounds of shape (R, 4): the three prevalences and the
    win rate; ``ok`` marks the replicates where the estimator is defined."""
    z = z_value(ci_prob)
    ok = defined(c)
    usable = {"rogan_gladen": ok & (condition_number(c) <= MAX_CONDITION)}
    out = {}
    for name in ESTIMATORS:
        if name == "bayes":
            tail = (1 - ci_prob) / 2
            lo, hi = np.empty((len(c.m), 4)), np.empty((len(c.m), 4))
            for r in range(len(c.m)):
                pi = posterior_draws(ClassCounts(c.table[r], c.unlabelled[r]),
                                     np.full((3, 3), 0.5), DRAWS, rng)
                x = np.column_stack([pi, pi @ WEIGHTS])
                lo[r], hi[r] = np.quantile(x, [tail, 1 - tail], axis=0)
            out[name] = (lo, hi, np.ones(len(c.m), bool))
            continue
        keep = usable.get(name, ok)
        est = by_name(ClassCounts(c.table[keep], c.unlabelled[keep]))[name]()
        _, lo_k, hi_k = reported(Estimate(est.estimate, est.se()), z)
        _, lo_w, hi_w = reported(Estimate(*est.weighted(WEIGHTS)), z)
        lo, hi = np.full((len(c.m), 4), np.nan), np.full((len(c.m), 4), np.nan)
        lo[keep], hi[keep] = np.column_stack([lo_k, lo_w]), np.column_stack([hi_k, hi_w])
        out[name] = (lo, hi, keep)
    return out


def run(replications: int = 500, ci_prob: float = 0.95, m_grid=M_GRID, n_total: int = N_TOTAL,
        seed: int = SEED) -> pd.DataFrame:
    """Coverage, its Monte-Carlo SE, mean width and share defined, per m, estimator, estimand."""
    rng = np.random.default_rng(seed)
    truth = np.append(PI, PI @ WEIGHTS)
    rows = []
    for m in m_grid:
        c = simulate(m, n_total, replications, rng)
        for name, (lo, hi, ok) in intervals(c, ci_prob, rng).items():
            hit = (lo[ok] <= truth) & (truth <= hi[ok])
            for j, estimand in enumerate([*CLASSES, "win rate"]):
                cover = hit[:, j].mean()
                rows.append({"m": m, "estimator": name, "estimand": estimand, "coverage": cover,
                             "se": np.sqrt(cover * (1 - cover) / ok.sum()),
                             "width": (hi[ok, j] - lo[ok, j]).mean(), "defined": ok.mean()})
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    """Coverage ± SE per estimator (rows) and estimand (columns), one block per m."""
    lines = []
    for m, block in frame.groupby("m"):
        wide = block.assign(cell=[f"{c:.3f} ± {s:.3f}" for c, s in
                                  zip(block["coverage"], block["se"], strict=True)])
        table = wide.pivot(index="estimator", columns="estimand", values="cell").reindex(
            index=list(ESTIMATORS), columns=[*CLASSES, "win rate"])
        width = block.pivot(index="estimator", columns="estimand", values="width")["win rate"]
        share = block.groupby("estimator")["defined"].first()
        lines += [f"m = {m}:", "",
                  "| estimator | A | tie | B | win rate | win-rate width | defined |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| `{e}` | " + " | ".join(table.loc[e]) + f" | {width[e]:.3f} | "
                  f"{share[e]:.0%} |" for e in ESTIMATORS]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=500)
    parser.add_argument("--ci-prob", type=float, default=0.95)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(args.replications, args.ci_prob)
    print(markdown(frame))
    print(f"R = {args.replications}, seed {SEED}, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
