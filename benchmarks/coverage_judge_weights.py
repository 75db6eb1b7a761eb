r"""Coverage of the judge's estimators when the human-labelled items are a stratified sample.

Population. A share :data:`HARD` of the prompts is hard: the rate of :math:`Y = 1` is
:data:`RATE_EASY` on easy prompts and :data:`RATE_HARD` on hard ones, so :math:`\theta =
(1 - h)\,\theta_{easy} + h\,\theta_{hard}`. The judge has the same sensitivity :data:`Q1` and
specificity :data:`Q0` on both.

Design. Of :math:`N` = :data:`N_TOTAL` prompts, each hard prompt is sent to a human with
probability :data:`PI_HARD` and each easy one with :data:`PI_EASY` (Poisson sampling by
stratum): the labelled items over-represent the hard prompts, and within a judge label the hard
prompts have a lower rate, so the unweighted estimators (even the EIF, whose cells are the judge's
labels) are biased. The weighted ones get :math:`w = 1/\pi` on the labelled items and :math:`v =
1/(1 - \pi)` on the others (``sample_weight``, ``sample_weight_unlabeled``).

Each replicate runs :func:`bayeval.judge` (``method="all"``, 95 % Wald intervals) without and
with the weights, and ppi_py's weighted PPI++ interval (:func:`bayeval.methods.judge.ppi_mean_ci`,
whose standard error is the spread of the weighted values :math:`w x`). Coverage is the share of
replicates whose interval holds :math:`\theta` (Monte-Carlo SE :math:`\sqrt{\hat c(1-\hat c)/R}`),
bias the mean error, width the mean interval width.

Graded and three-category outcomes (:func:`run_designs`). The same hidden strata carry a graded
outcome in [0, 1] (Beta laws of means 0.75 and 0.4; the judge's rating the outcome plus 0.1 and
noise, rounded to a quarter) and three categories A / tie / B (:data:`P_EASY`, :data:`P_HARD`;
the judge's score +1, 0, -1 by class plus noise, its verdict the score cut at ±0.5). Two
labelling designs: ``"verdict"`` labels by the judge's verdict (ratings of 0.75 or more, ties)
with probability 0.15 and the others with 0.04; ``"stratified"`` labels hard prompts with 0.15
and easy ones with 0.03. Each replicate runs the graded mean and the prevalences and win rate
(a tie counting half) without and with the weights, and the EIF with the cross-fitted spline of
the judge's score (``eif_spline``, weighted).

``python -m benchmarks.coverage_judge_weights`` runs ``--replications`` (default 2,000) and
prints the markdown tables of ``docs/judge.md`` (``--outcomes binary`` or ``designs`` for one).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from bayeval import judge
from bayeval.methods.judge import ppi_mean_ci

SEED = 20261220
N_TOTAL = 4000
HARD, RATE_EASY, RATE_HARD = 0.3, 0.8, 0.3
Q1, Q0 = 0.85, 0.75
PI_EASY, PI_HARD = 0.02, 0.15
THETA = (1 - HARD) * RATE_EASY + HARD * RATE_HARD
ESTIMATORS = ("classical", "ppi", "ppi_pp", "eif")
CI_PROB = 0.95


def simulate(rng: np.random.Generator, n_total: int = N_TOTAL):
    """One stratified sample: (y, yhat, yhat_unlabeled, w, v) of the labelled and other items."""
    hard = rng.random(n_total) < HARD
    y = rng.random(n_total) < np.where(hard, RATE_HARD, RATE_EASY)
    yhat = np.where(y, rng.random(n_total) < Q1, rng.random(n_total) > Q0)
    pi = np.where(hard, PI_HARD, PI_EASY)
    labelled = rng.random(n_total) < pi
    return (y[labelled].astype(int), yhat[labelled].astype(int), yhat[~labelled].astype(int),
            1 / pi[labelled], 1 / (1 - pi[~labelled]))


# ====================================================================== graded outcomes
#: graded outcome in [0, 1]: Beta(a, b) on easy and on hard prompts (means 0.75 and 0.4)
BETA_EASY, BETA_HARD = (6.0, 2.0), (2.0, 3.0)
GRADED_THETA = (1 - HARD) * 0.75 + HARD * 0.4
#: the judge's rating: the outcome plus 0.1 and N(0, 0.15^2) noise, rounded to a quarter
JUDGE_SHIFT, JUDGE_NOISE = 0.1, 0.15
#: "verdict" design: a human rating with probability PI_HIGH where the judge says >= 0.75
PI_HIGH, PI_LOW = 0.15, 0.04
DESIGNS = ("verdict", "stratified")


def graded_design(rng: np.random.Generator, design: str, n_total: int = N_TOTAL):
    r"""One sample of the graded outcome: (y, yhat, yhat_unlabeled, w, v, theta).

    ``"verdict"`` labels by the judge's rating (:data:`PI_HIGH` at 0.75 or more, else
    :data:`PI_LOW`), ``"stratified"`` by the hidden stratum (:data:`PI_HARD`, :data:`PI_EASY`);
    the weights are :math:`1/\pi` and :math:`1/(1 - \pi)`.
    """
    hard = rng.random(n_total) < HARD
    y = np.where(hard, rng.beta(*BETA_HARD, n_total), rng.beta(*BETA_EASY, n_total))
    noisy = y + JUDGE_SHIFT + rng.normal(0, JUDGE_NOISE, n_total)
    yhat = np.clip(np.round(4 * noisy) / 4, 0, 1)
    pi = (np.where(yhat >= 0.75, PI_HIGH, PI_LOW) if design == "verdict"
          else np.where(hard, PI_HARD, PI_EASY))
    lab = rng.random(n_total) < pi
    return y[lab], yhat[lab], yhat[~lab], 1 / pi[lab], 1 / (1 - pi[~lab]), GRADED_THETA


# ====================================================================== three categories
CLASSES = ("A", "tie", "B")
#: P(A), P(tie), P(B) on easy and on hard prompts
P_EASY, P_HARD = np.array([0.55, 0.15, 0.30]), np.array([0.25, 0.35, 0.40])
CLASS_THETA = (1 - HARD) * P_EASY + HARD * P_HARD
#: the win rate of A, a tie counting half
WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}
WIN_THETA = float(CLASS_THETA @ np.array([1.0, 0.5, 0.0]))
#: the judge's score: +1 (A), 0 (tie), -1 (B) plus N(0, SCORE_NOISE^2); its verdict A above
#: VERDICT_CUT, B below -VERDICT_CUT, else tie
SCORE_NOISE, VERDICT_CUT = 0.8, 0.5
#: "verdict" design: a human label with probability PI_TIE where the judge says tie
PI_TIE, PI_OTHER = 0.15, 0.04


def category_design(rng: np.random.Generator, design: str, n_total: int = N_TOTAL):
    """One sample of three categories: (y, verdict, verdict_unlabeled, score, score_unlabeled,
    w, v) as arrays of the labelled and the other items.

    ``"verdict"`` labels the judge's ties with probability :data:`PI_TIE` and its other verdicts
    with :data:`PI_OTHER`; ``"stratified"`` labels by the hidden stratum.
    """
    hard = rng.random(n_total) < HARD
    cum = np.cumsum(np.where(hard[:, None], P_HARD, P_EASY), axis=1)
    code = (rng.random(n_total)[:, None] > cum[:, :-1]).sum(axis=1)
    score = 1.0 - code + rng.normal(0, SCORE_NOISE, n_total)
    said = np.where(score > VERDICT_CUT, 0, np.where(score < -VERDICT_CUT, 2, 1))
    pi = (np.where(said == 1, PI_TIE, PI_OTHER) if design == "verdict"
          else np.where(hard, PI_HARD, PI_EASY))
    lab = rng.random(n_total) < pi
    names = np.array(CLASSES)
    return (names[code[lab]], names[said[lab]], names[said[~lab]], score[lab], score[~lab],
            1 / pi[lab], 1 / (1 - pi[~lab]))


def run(replications: int = 2000, seed: int = SEED) -> pd.DataFrame:
    """One row per replicate and estimator: ``weights`` (none, weighted, ppi_py), estimate,
    lower, upper."""
    rng = np.random.default_rng(seed)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for r in range(replications):
            y, yhat, yhat_u, w, v = simulate(rng)
            for kind, kw in (("none", {}), ("weighted", {"sample_weight": w,
                                                          "sample_weight_unlabeled": v})):
                s = judge(y, yhat, yhat_u, method="all", ci_prob=CI_PROB, ci_kind="wald",
                          **kw).summary()
                rows += [{"replicate": r, "weights": kind, "estimator": e,
                          "estimate": s.loc[e, "mean"], "lower": s.loc[e, "lower"],
                          "upper": s.loc[e, "upper"]} for e in ESTIMATORS]
            lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=1 - CI_PROB, w=w, w_unlabeled=v)
            rows.append({"replicate": r, "weights": "ppi_py", "estimator": "ppi_pp",
                         "estimate": (lo[0] + hi[0]) / 2, "lower": lo[0], "upper": hi[0]})
    return pd.DataFrame(rows)


def run_designs(replications: int = 1500, seed: int = SEED + 1, ci_kind: str = "logit"
                ) -> pd.DataFrame:
    """The graded and the three-category designs (:func:`graded_design`,
    :func:`category_design`) under both labelling designs: one row per replicate, outcome,
    design, weighting (none, weighted), estimator (``eif_spline``: the EIF with the cross-fitted
    spline of the judge's score, weighted only) and estimand, with the estimate, the 95 %
    interval of ``ci_kind`` (the judge's default logit-Wald, or Wald) and the truth."""
    rng = np.random.default_rng(seed)
    truth = {"mean": GRADED_THETA, "win": WIN_THETA, **dict(zip(CLASSES, CLASS_THETA,
                                                                 strict=True))}
    classes = [(k, ("eif", "prevalence", k)) for k in CLASSES] + [("win", ("eif", "weighted",
                                                                            ""))]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for r in range(replications):
            for design in DESIGNS:
                y, yh, yu, w, v, _ = graded_design(rng, design)
                cy, cs, csu, sc, scu, cw, cv = category_design(rng, design)
                for kind in ("none", "weighted"):
                    on = kind == "weighted"
                    g_kw = {"sample_weight": w, "sample_weight_unlabeled": v} if on else {}
                    c_kw = {"sample_weight": cw, "sample_weight_unlabeled": cv} if on else {}
                    out = []
                    s = judge(y, yh, yu, y_range=(0, 1), method="all", ci_kind=ci_kind,
                              **g_kw).summary()
                    out += [("graded", e, "mean", s.loc[e, ["mean", "lower", "upper"]])
                            for e in ESTIMATORS]
                    s = judge(cy, cs, csu, method="all", weights=WIN, ci_kind=ci_kind,
                              **c_kw).summary()
                    out += [("categories", e, k, s.loc[(e, *i[1:]), ["mean", "lower", "upper"]])
                            for e in ("classical", "ppi_pp", "eif") for k, i in classes]
                    if on:
                        s = judge(y, yh, yu, y_range=(0, 1), mu_model="spline", ci_kind=ci_kind,
                                  random_seed=r, **g_kw).summary()
                        out.append(("graded", "eif_spline", "mean",
                                    s.loc["eif", ["mean", "lower", "upper"]]))
                        s = judge(cy, sc, scu, mu_model="spline", weights=WIN, ci_kind=ci_kind,
                                  random_seed=r, **c_kw).summary()
                        out += [("categories", "eif_spline", k,
                                 s.loc[i, ["mean", "lower", "upper"]]) for k, i in classes]
                    rows += [{"replicate": r, "outcome": o, "design": design, "weights": kind,
                              "estimator": e, "estimand": k, "theta": truth[k],
                              "estimate": x.iloc[0], "lower": x.iloc[1], "upper": x.iloc[2]}
                             for o, e, k, x in out]
    return pd.DataFrame(rows)


def design_coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage (with its Monte-Carlo SE), bias and mean width per outcome, design, weighting,
    estimator and estimand."""
    frame = frame.assign(
        covered=(frame["lower"] <= frame["theta"]) & (frame["theta"] <= frame["upper"]),
        error=frame["estimate"] - frame["theta"], width=frame["upper"] - frame["lower"])
    out = frame.groupby(["outcome", "design", "weights", "estimator", "estimand"],
                        sort=False).agg(coverage=("covered", "mean"), bias=("error", "mean"),
                                        width=("width", "mean"), replications=("covered", "size"))
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replications"])
    return out


def design_markdown(cov: pd.DataFrame) -> str:
    """The docs' table of the graded and three-category designs."""
    lines = ["| outcome | design | weights | estimator | estimand | coverage (SE) | bias | width |",
             "|---|---|---|---|---|---|---|---|"]
    for key, row in cov.iterrows():
        lines.append("| " + " | ".join(key) + f" | {row['coverage']:.3f} "
                     f"({row['coverage_se']:.3f}) | {row['bias']:+.4f} | {row['width']:.4f} |")
    return "\n".join(lines)


def coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage (with its Monte-Carlo SE), bias and mean width per weighting and estimator."""
    frame = frame.assign(covered=(frame["lower"] <= THETA) & (THETA <= frame["upper"]),
                         error=frame["estimate"] - THETA, width=frame["upper"] - frame["lower"])
    out = frame.groupby(["weights", "estimator"], sort=False).agg(
        coverage=("covered", "mean"), bias=("error", "mean"), width=("width", "mean"),
        replications=("covered", "size"))
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replications"])
    return out


def markdown(cov: pd.DataFrame) -> str:
    """The docs' table."""
    lines = ["| weights | estimator | coverage (SE) | bias | width |", "|---|---|---|---|---|"]
    for (kind, est), row in cov.iterrows():
        lines.append(f"| {kind} | {est} | {row['coverage']:.3f} ({row['coverage_se']:.3f}) | "
                     f"{row['bias']:+.4f} | {row['width']:.4f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--outcomes", choices=("binary", "designs", "all"), default="all",
                        help="binary: the stratified 0/1 design; designs: the graded and "
                             "three-category ones")
    parser.add_argument("--ci-kind", choices=("logit", "wald"), default="logit",
                        help="the designs' intervals")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.outcomes != "designs":
        cov = coverage(run(args.replications))
        print(f"theta = {THETA:.3f}, N = {N_TOTAL}, pi = {PI_EASY} (easy) / {PI_HARD} (hard), "
              f"R = {args.replications}, {time.perf_counter() - start:.0f} s\n")
        print(markdown(cov))
    if args.outcomes != "binary":
        start = time.perf_counter()
        cov = design_coverage(run_designs(args.replications, ci_kind=args.ci_kind))
        print(f"\ngraded mean {GRADED_THETA:.3f}; categories {CLASS_THETA.round(3).tolist()}, "
              f"win rate {WIN_THETA:.3f}; N = {N_TOTAL}, R = {args.replications}, "
              f"{args.ci_kind} intervals, "
              f"{time.perf_counter() - start:.0f} s\n")
        print(design_markdown(cov))
    return 0


if __name__ == "__main__":
    sys.exit(main())
