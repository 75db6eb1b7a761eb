r"""Coverage of the weighted comparison and ranking of systems when the human-labelled prompts
are a stratified sample.

Population. :data:`K` systems answer the same :data:`N_TOTAL` prompts. A share :data:`HARD` of
the prompts is hard; system :math:`k` is right with probability :data:`RATE_EASY`:math:`_k` on
an easy prompt and :data:`RATE_HARD`:math:`_k` on a hard one, so :math:`\theta_k = (1 - h)
\,r_{easy,k} + h\,r_{hard,k}` and the differences :math:`\theta_a - \theta_b` are known. The
judge passes a right answer with probability :data:`SENSITIVITY` and a wrong one with
:data:`FALSE_PASS`:math:`_k` (lenient with some systems: the judge-only ranking is biased), the
same on easy and hard prompts.

Designs (Poisson sampling, weights :math:`w = 1/\pi` on the labelled prompts and :math:`v =
1/(1 - \pi)` on the others):

* ``"verdict"``: a prompt where the judge's verdicts on the systems are not all the same is sent
  to a human with probability :data:`PI_SPLIT`, the others with :data:`PI_SAME` (labelling where
  the judge sees a difference). The labelled prompts over-represent the split verdicts, so the
  unweighted classical, PPI and PPI++ estimators are biased; the EIF's cells are the vectors of
  verdicts, so its cell means stay unbiased (missing at random given its cells) and the weights
  only change its precision.
* ``"stratified"``: a hard prompt with :data:`PI_HARD`, an easy one with :data:`PI_EASY` (the
  stratum is known to the designer, not to the judge): within a vector of verdicts the labelled
  prompts are harder than the others, and every unweighted estimator is biased, the EIF too.

Two systems (the first two, :func:`bayeval.methods.judge.compare_systems`, ``method="all"``):
the 95 % Wald interval of :math:`\theta_A - \theta_B` without and with the weights. Four systems
(:func:`bayeval.methods.judge.rank_systems`, paired, ``adjust="max_t"``): the 95 % interval of
each of the 6 differences (coverage pooled over the pairs; its Monte-Carlo SE
:math:`\sqrt{\hat c(1-\hat c)/R}` is conservative) and the simultaneous coverage (every adjusted
interval holds). Coverage is the share of replicates whose interval holds the truth (MC SE
:math:`\sqrt{\hat c(1-\hat c)/R}`), bias the mean error, width the mean interval width.

``python -m benchmarks.coverage_judge_compare_weights --replications 1000`` prints the tables of
``docs/judge.md`` and ``docs/ranking.md`` (R = 1,000: about 35 minutes with ``nice`` on a shared
2-core machine, 23 minutes of CPU).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from bayeval.methods.judge import compare_systems, rank_systems

SEED = 20261125
N_TOTAL = 3000
K = 4
HARD = 0.3
#: each system's rate of right answers on easy and on hard prompts
RATE_EASY = np.array([0.85, 0.80, 0.78, 0.70])
RATE_HARD = np.array([0.30, 0.35, 0.25, 0.20])
THETA = (1 - HARD) * RATE_EASY + HARD * RATE_HARD
#: the judge passes a right answer with this probability, a wrong one with FALSE_PASS[k]
SENSITIVITY = 0.9
FALSE_PASS = np.array([0.15, 0.40, 0.25, 0.30])
PI_SPLIT, PI_SAME = 0.15, 0.03
PI_HARD, PI_EASY = 0.15, 0.03
DESIGNS = ("verdict", "stratified")
COMPARE = ("classical", "ppi", "ppi_pp", "eif")
RANK = ("ppi_pp", "eif")
CI_PROB = 0.95


def simulate(rng: np.random.Generator, design: str, k: int = K, n_total: int = N_TOTAL):
    """One sample of ``k`` systems: (y, yhat, yhat_unlabeled, w, v), the first three of shape
    (m, k), (m, k), (n, k), the weights :math:`1/\\pi` and :math:`1/(1 - \\pi)`.

    The verdict design labels by the judge's verdicts on these ``k`` systems.
    """
    hard = rng.random(n_total) < HARD
    rate = np.where(hard[:, None], RATE_HARD[:k], RATE_EASY[:k])
    right = rng.random((n_total, k)) < rate
    said = np.where(right, rng.random((n_total, k)) < SENSITIVITY,
                    rng.random((n_total, k)) < FALSE_PASS[:k])
    if design == "verdict":
        split = said.min(axis=1) != said.max(axis=1)
        pi = np.where(split, PI_SPLIT, PI_SAME)
    else:
        pi = np.where(hard, PI_HARD, PI_EASY)
    lab = rng.random(n_total) < pi
    return (right[lab].astype(float), said[lab].astype(float), said[~lab].astype(float),
            1 / pi[lab], 1 / (1 - pi[~lab]))


def run(replications: int = 1000, seed: int = SEED) -> pd.DataFrame:
    """One row per replicate, design, weighting, analysis (``compare`` or ``rank``), estimator
    and pair: estimate, lower, upper, truth, and ``all_adjusted`` (rank: every adjusted interval
    of the replicate holds its truth)."""
    rng = np.random.default_rng(seed)
    delta = THETA[:, None] - THETA[None, :]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for r in range(replications):
            for design in DESIGNS:
                y, yh, yu, w, v = simulate(rng, design, 2)
                y4, yh4, yu4, w4, v4 = simulate(rng, design, K)
                for kind in ("none", "weighted"):
                    on = kind == "weighted"
                    kw = {"sample_weight": w, "sample_weight_unlabeled": v} if on else {}
                    for e in COMPARE:
                        s = compare_systems(y, yh, yu, method=e, ci_prob=CI_PROB,
                                            **kw).closed_form.sel(estimator=e)
                        rows.append({"replicate": r, "design": design, "weights": kind,
                                     "analysis": "compare", "estimator": e, "pair": "A - B",
                                     "theta": delta[0, 1], "estimate": float(s["mean"]),
                                     "lower": float(s["lower"]), "upper": float(s["upper"]),
                                     "all_adjusted": np.nan})
                    kw = {"sample_weight": w4, "sample_weight_unlabeled": v4} if on else {}
                    for e in RANK:
                        cf = rank_systems(y4, yh4, yu4, method=e, ci_prob=CI_PROB,
                                          random_seed=r, **kw).closed_form
                        names = [str(x) for x in cf["system"].values]
                        truth = np.array([delta[names.index(a), names.index(b)] for a, b in
                                          zip(cf["first"].values, cf["second"].values,
                                              strict=True)])
                        held = ((cf["pair_lower_adjusted"].values <= truth)
                                & (truth <= cf["pair_upper_adjusted"].values)).all()
                        rows += [{"replicate": r, "design": design, "weights": kind,
                                  "analysis": "rank", "estimator": e, "pair": str(p),
                                  "theta": t, "estimate": float(cf["pair_mean"][i]),
                                  "lower": float(cf["pair_lower"][i]),
                                  "upper": float(cf["pair_upper"][i]),
                                  "all_adjusted": float(held)}
                                 for i, (p, t) in enumerate(zip(cf["pair"].values, truth,
                                                               strict=True))]
    return pd.DataFrame(rows)


def coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Per analysis, design, weighting and estimator: coverage of the 95 % intervals of the
    differences with its Monte-Carlo SE, bias, mean width and (rank) the simultaneous
    coverage of the adjusted intervals with its SE."""
    frame = frame.assign(
        covered=(frame["lower"] <= frame["theta"]) & (frame["theta"] <= frame["upper"]),
        error=frame["estimate"] - frame["theta"], width=frame["upper"] - frame["lower"])
    keys = ["analysis", "design", "weights", "estimator"]
    out = frame.groupby(keys, sort=False).agg(
        coverage=("covered", "mean"), bias=("error", "mean"), width=("width", "mean"),
        replications=("replicate", "nunique"))
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replications"])
    joint = frame.drop_duplicates(["replicate", *keys]).groupby(keys, sort=False)[
        "all_adjusted"].mean()
    out["simultaneous"] = joint
    out["simultaneous_se"] = np.sqrt(joint * (1 - joint) / out["replications"])
    return out


def markdown(cov: pd.DataFrame, analysis: str) -> str:
    """The docs' table of one analysis."""
    rank = analysis == "rank"
    head = "| design | weights | estimator | coverage (SE) | bias | width |"
    lines = [head + (" simultaneous (SE) |" if rank else ""),
             "|---|---|---|---|---|---|" + ("---|" if rank else "")]
    for (_, design, kind, est), row in cov[cov.index.get_level_values(0) == analysis].iterrows():
        line = (f"| {design} | {kind} | {est} | {row['coverage']:.3f} ({row['coverage_se']:.3f})"
                f" | {row['bias']:+.4f} | {row['width']:.4f} |")
        if rank:
            line += f" {row['simultaneous']:.3f} ({row['simultaneous_se']:.3f}) |"
        lines.append(line)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cov = coverage(run(args.replications))
    print(f"theta = {THETA.round(3).tolist()}, N = {N_TOTAL}, verdict design pi = {PI_SPLIT} "
          f"(split verdicts) / {PI_SAME}, stratified pi = {PI_HARD} (hard) / {PI_EASY}, "
          f"R = {args.replications}, {time.perf_counter() - start:.0f} s\n")
    print("Two systems, theta_A - theta_B =", round(float(THETA[0] - THETA[1]), 3), "\n")
    print(markdown(cov, "compare"))
    print("\nFour systems, the 6 pairwise differences\n")
    print(markdown(cov, "rank"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
