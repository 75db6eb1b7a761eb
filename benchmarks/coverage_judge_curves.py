r"""Coverage and width of the judge's estimators with a scored judge, by calibration curve.

Population. Item :math:`i` has a chance :math:`p_i \sim \mathrm{Beta}(0.4, 0.6)` of
:math:`Y_i = 1` (many easy items, :math:`\theta = E[Y] = 0.4`); the judge reports a score from
:math:`\mathrm{logit}\,p_i`, miscalibrated:

* ``hedging``: :math:`s_i = \mathrm{expit}(0.2\,\mathrm{logit}\,p_i + 0.8 + \varepsilon_i)`,
  :math:`\varepsilon_i \sim N(0, 0.05^2)`: scores squeezed into about [0.35, 0.85] and too high,
  so :math:`E[Y \mid s]` is a steep S-curve in :math:`s` that no line follows;
* ``overconfident``: :math:`s_i = \mathrm{expit}(3\,\mathrm{logit}\,p_i + 1 +
  \varepsilon_i)`, :math:`\varepsilon_i \sim N(0, 1)`: scores piled near 0 and 1;
* ``ten_point``: the overconfident score rounded to one decimal, a rating with 11 levels.

Each replicate draws :math:`N` = :data:`N_TOTAL` items, of which the first :math:`m` have human
labels, and runs :func:`bayeval.judge` (95 % logit intervals): ``method="all"`` for the
classical, PPI and PPI++ estimators, and ``method="eif"`` with each ``mu_model`` (cells only
for the rating: with continuous scores no unlabelled item shares a labelled item's score, and the
cell EIF is the labelled mean). Coverage is the share of replicates whose interval holds
:math:`\theta` (Monte-Carlo SE :math:`\sqrt{\hat c(1 - \hat c)/R}`); width is the mean interval
width (with its Monte-Carlo SE), ``sd`` the spread of the estimates around :math:`\theta` (root
mean squared error). A replicate with fewer than 2 labelled items of a class is redrawn (at
:math:`m = 20` about 1 in 2,000).

``python -m benchmarks.coverage_judge_curves`` runs ``--replications`` (default 1,000) and prints
the markdown tables of ``docs/judge.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

from bayeval import judge

SEED = 20261125
N_TOTAL = 2000
PRIOR_A, PRIOR_B = 0.4, 0.6
THETA = PRIOR_A / (PRIOR_A + PRIOR_B)
#: slope, shift and noise sd of the judge's logit, and the rounding of its score
JUDGES = {"hedging": (0.2, 0.8, 0.05, None), "overconfident": (3.0, 1.0, 1.0, None),
          "ten_point": (3.0, 1.0, 1.0, 1)}
LABELLED = (20, 50, 200)
BASELINES = ("classical", "ppi", "ppi_pp")
MU_MODELS = ("cell", "bins", "linear", "isotonic", "spline")
CI_PROB = 0.95


def simulate(rng: np.random.Generator, kind: str, n_total: int = N_TOTAL):
    """(y, score) of ``n_total`` items judged by the judge ``kind`` of :data:`JUDGES`."""
    slope, shift, noise, decimals = JUDGES[kind]
    p = rng.beta(PRIOR_A, PRIOR_B, n_total)
    y = (rng.random(n_total) < p).astype(int)
    score = special.expit(slope * special.logit(p) + shift + rng.normal(0, noise, n_total))
    return y, score if decimals is None else np.round(score, decimals)


def run(replications: int = 1000, judges=tuple(JUDGES), labelled=LABELLED,
        estimators=(*BASELINES, *MU_MODELS), seed: int = SEED) -> pd.DataFrame:
    """One row per replicate and estimator (a baseline or ``eif_<mu_model>``): judge, m,
    estimate, lower, upper."""
    rows = []
    streams = np.random.SeedSequence(seed).spawn(len(judges) * len(labelled))
    configs = [(kind, m) for kind in judges for m in labelled]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for (kind, m), stream in zip(configs, streams, strict=True):
            rng = np.random.default_rng(stream)
            curves = [mm for mm in estimators if mm in MU_MODELS
                      and (mm != "cell" or JUDGES[kind][3] is not None)]
            for r in range(replications):
                y, score = simulate(rng, kind)
                while min(y[:m].sum(), m - y[:m].sum()) < 2:
                    y, score = simulate(rng, kind)
                args = (y[:m], score[:m], score[m:])
                found = {}
                if any(e in BASELINES for e in estimators):
                    s = judge(*args, method="all", ci_prob=CI_PROB).summary()
                    found |= {e: s.loc[e] for e in BASELINES if e in estimators}
                for mm in curves:
                    s = judge(*args, mu_model=mm, ci_prob=CI_PROB, random_seed=r).summary()
                    found[f"eif_{mm}"] = s.loc["eif"]
                rows += [{"judge": kind, "m": m, "replicate": r, "estimator": e,
                          "estimate": v["mean"], "lower": v["lower"], "upper": v["upper"]}
                         for e, v in found.items()]
    return pd.DataFrame(rows)


def coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage, width and the estimates' sd (RMSE), with Monte-Carlo SEs, per judge, m and
    estimator."""
    frame = frame.assign(covered=(frame["lower"] <= THETA) & (THETA <= frame["upper"]),
                         sq_error=(frame["estimate"] - THETA) ** 2,
                         width=frame["upper"] - frame["lower"])
    out = frame.groupby(["judge", "m", "estimator"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), width_sd=("width", "std"),
        mse=("sq_error", "mean"), replications=("covered", "size"))
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replications"])
    out["width_se"] = out["width_sd"] / np.sqrt(out["replications"])
    out["rmse"] = np.sqrt(out["mse"])
    return out.drop(columns=["width_sd", "mse"])


def markdown(cov: pd.DataFrame) -> str:
    """One table per judge: an estimator per row, coverage (SE), width and RMSE per m."""
    parts = []
    for kind, block in cov.groupby(level="judge", sort=False):
        ms = block.index.get_level_values("m").unique()
        lines = [f"**{kind}** judge", "",
                 "| estimator | " + " | ".join(f"m = {m}: coverage (SE) | width | RMSE"
                                                for m in ms) + " |",
                 "|---|" + "---|---|---|" * len(ms)]
        for est in block.index.get_level_values("estimator").unique():
            cells = []
            for m in ms:
                row = block.loc[(kind, m, est)]
                cells.append(f"{row['coverage']:.3f} ({row['coverage_se']:.3f}) | "
                             f"{row['width']:.3f} | {row['rmse']:.3f}")
            lines.append(f"| {est} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cov = coverage(run(args.replications))
    print(f"theta = {THETA:.3f}, N = {N_TOTAL}, R = {args.replications}, "
          f"{time.perf_counter() - start:.0f} s\n")
    print(markdown(cov))
    return 0


if __name__ == "__main__":
    sys.exit(main())
