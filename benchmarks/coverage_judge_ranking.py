r"""Coverage of the differences and ranks of four systems, and of Bradley–Terry strengths.

**Scores** (:func:`bayeval.methods.judge.rank_systems`, paired). :data:`K` systems answer the
same :data:`N_TOTAL` prompts, :data:`M` of them graded by humans. A share :data:`EASY` of the
prompts is easy (every system right); on the others system :math:`k` is right with probability
:math:`q_k`, so :math:`\theta_k = E + (1 - E)q_k`, and each replicate draws :math:`\theta_k
\sim U(0.45, 0.65)`. The judge passes a right answer with probability :data:`SENSITIVITY` and a
wrong one with :data:`FALSE_PASS` (different per system: the naive ranking is biased), plus
:data:`LENIENCY` on a share :data:`LENIENT` of the prompts (its errors correlate across
systems).

**Strengths** (:func:`bayeval.methods.judge.bradley_terry`). Each replicate draws strengths
:math:`\beta \sim N(0, 0.3^2)`, centred; :data:`N_PAIRS` comparisons of two distinct random
systems, :data:`M` audited. The human verdict ties with probability :math:`0.2(1 - |2\sigma -
1|)`, :math:`\sigma = \sigma(\beta_a - \beta_b)`, and the first wins with probability
:math:`\sigma` minus half of that, so that the expected verdict is :math:`\sigma` (ties half a
win). The judge copies the human with probability :data:`JUDGE_AGREES`, else answers from its
position bias :data:`POSITION_BIAS` (first wins, tie, second wins).

Coverage is the share of intervals that hold the truth (Monte-Carlo SE :math:`\sqrt{\hat
c(1-\hat c)/R}` over the :math:`R` replicates, conservative for the pooled pairs); simultaneous
coverage the share of replicates where every pair's adjusted interval holds. The reliability of
:math:`P(\theta_a > \theta_b)`: all pairs of all replicates binned by it, per bin the mean
prediction against the share where :math:`\theta_a > \theta_b`.

``python -m benchmarks.coverage_judge_ranking --replications 500`` prints the tables of
``docs/ranking.md`` (about 8 minutes on one core).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from bayeval.methods.judge import bradley_terry, rank_systems

SEED = 20260107
K = 4
N_TOTAL = 2000
M = 200
EASY = 0.3
SENSITIVITY = np.array([0.90, 0.85, 0.90, 0.85])
FALSE_PASS = np.array([0.15, 0.30, 0.20, 0.35])
LENIENT, LENIENCY = 0.3, 0.2
N_PAIRS = 3000
JUDGE_AGREES = 0.65
POSITION_BIAS = (0.6, 0.1, 0.3)
SCORE_ESTIMATORS = ("eif", "ppi_pp", "classical", "naive", "bayes")
BT_ESTIMATORS = ("ppi_pp", "classical", "naive")
BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
NAMES = ["s1", "s2", "s3", "s4"]


def simulate_systems(rng: np.random.Generator):
    """(theta, y (M, K), yhat (M, K), yhat_unlabeled (N - M, K)) of one replicate."""
    theta = rng.uniform(0.45, 0.65, K)
    q = (theta - EASY) / (1 - EASY)
    right = (rng.random(N_TOTAL) < EASY)[:, None] | (rng.random((N_TOTAL, K)) < q)
    mood = (rng.random(N_TOTAL) < LENIENT)[:, None] * LENIENCY
    passed = rng.random((N_TOTAL, K)) < np.where(right, SENSITIVITY, FALSE_PASS + mood)
    frame = [pd.DataFrame(a * 1.0, columns=NAMES) for a in (right, passed)]
    return theta, frame[0][:M], frame[1][:M], frame[1][M:]


def simulate_pairs(rng: np.random.Generator):
    """(beta, pairs, verdicts, judge verdicts) of one replicate, the first M audited."""
    beta = rng.normal(0, 0.3, K)
    beta -= beta.mean()
    ab = np.argsort(rng.random((N_PAIRS, K)), axis=1)[:, :2]
    s = 1 / (1 + np.exp(beta[ab[:, 1]] - beta[ab[:, 0]]))
    tie = 0.2 * (1 - np.abs(2 * s - 1))
    u = rng.random(N_PAIRS)
    v = np.where(u < s - tie / 2, 1.0, np.where(u < s + tie / 2, 0.5, 0.0))
    bias = rng.choice([1.0, 0.5, 0.0], N_PAIRS, p=POSITION_BIAS)
    vhat = np.where(rng.random(N_PAIRS) < JUDGE_AGREES, v, bias)
    return beta, np.array(NAMES)[ab], v, vhat


def _pair_truth(values: np.ndarray) -> np.ndarray:
    return np.array([values[a] - values[b] for a in range(K) for b in range(a + 1, K)])


def _rows(ev, truth_scores, kind: str, estimator: str, rep: int) -> list[dict]:
    """One row per pair: truth, estimate, coverage, widths, P(a > b)."""
    diff = ev.differences()
    truth = _pair_truth(truth_scores)
    scores = ev.summary()
    inside = ((scores["lower"] <= truth_scores) & (truth_scores <= scores["upper"])).to_numpy()
    all_in = bool(((diff["lower_adjusted"] <= truth) & (truth <= diff["upper_adjusted"])).all())
    best = int(np.argmax(truth_scores))
    return [{"kind": kind, "estimator": estimator, "rep": rep, "pair": pair, "truth": t,
             "covered": diff["lower"].iloc[j] <= t <= diff["upper"].iloc[j],
             "width": diff["upper"].iloc[j] - diff["lower"].iloc[j],
             "width_adjusted": diff["upper_adjusted"].iloc[j] - diff["lower_adjusted"].iloc[j],
             "simultaneous": all_in, "prob_greater": diff["prob_greater"].iloc[j],
             "score_covered": inside.mean(), "score_width": (scores["upper"]
                                                             - scores["lower"]).mean(),
             "prob_best_true": scores["prob_best"].iloc[best]}
            for j, (pair, t) in enumerate(zip(diff.index, truth, strict=True))]


def run(replications: int, seed: int = SEED, bt: bool = True,
        estimators=SCORE_ESTIMATORS, bt_estimators=BT_ESTIMATORS) -> pd.DataFrame:
    """Per replicate and pair: coverage, widths and P(a > b) of every estimator."""
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    for rep in range(replications):
        theta, y, yhat, yu = simulate_systems(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for est in estimators:
                ev = rank_systems(y, yhat, yu, method=est, random_seed=rep)
                rows += _rows(ev, theta, "scores", est, rep)
            if bt:
                beta, pairs, v, vhat = simulate_pairs(rng)
                for est in bt_estimators:
                    ev = bradley_terry(pairs[:M], v[:M], vhat[:M], pairs[M:], vhat[M:],
                                       method=est, random_seed=rep)
                    truth = pd.Series(beta, index=NAMES).loc[ev.summary().index].to_numpy()
                    rows += _rows(ev, truth, "strengths", est, rep)
    return pd.DataFrame(rows)


def coverage(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, estimator): coverage of the differences (marginal, pooled over pairs, and
    simultaneous) and of the scores, with Monte-Carlo SEs over replicates, and mean widths."""
    reps = frame.groupby(["kind", "estimator", "rep"]).agg(
        covered=("covered", "mean"), simultaneous=("simultaneous", "first"),
        score_covered=("score_covered", "first"), width=("width", "mean"),
        width_adjusted=("width_adjusted", "mean"), score_width=("score_width", "first"))
    g = reps.groupby(level=["kind", "estimator"])
    out = g.mean()
    r = g.size()
    for col in ("covered", "simultaneous", "score_covered"):
        out[col + "_se"] = np.sqrt(out[col] * (1 - out[col]) / r)
    out["replications"] = r
    return out


def reliability(frame: pd.DataFrame, kind: str = "scores", estimator: str = "eif"
                ) -> pd.DataFrame:
    """P(a > b) binned: mean prediction, observed share with its SE, count."""
    sub = frame[(frame["kind"] == kind) & (frame["estimator"] == estimator)]
    bins = pd.cut(sub["prob_greater"], BINS, include_lowest=True)
    g = sub.assign(event=sub["truth"] > 0).groupby(bins, observed=True)
    out = pd.DataFrame({"predicted": g["prob_greater"].mean(), "observed": g["event"].mean(),
                        "n": g.size()})
    out["observed_se"] = np.sqrt(out["observed"] * (1 - out["observed"]) / out["n"])
    return out


def markdown(cov: pd.DataFrame, rel: dict) -> str:
    """The tables of ``docs/ranking.md``: coverage ± MC SE and widths; reliability of P(a > b)."""
    lines = ["| quantity | estimator | differences, marginal | simultaneous | scores | width | "
             "width, simultaneous | score width |", "|---|---|---|---|---|---|---|---|"]
    for (kind, est), r in cov.iterrows():
        lines.append(f"| {kind} | {est} | {r.covered:.3f} ± {r.covered_se:.3f} | "
                     f"{r.simultaneous:.3f} ± {r.simultaneous_se:.3f} | "
                     f"{r.score_covered:.3f} ± {r.score_covered_se:.3f} | {r.width:.3f} | "
                     f"{r.width_adjusted:.3f} | {r.score_width:.3f} |")
    for (kind, est), table in rel.items():
        lines += ["", f"P(a > b), {kind}, {est}:", "",
                  "| bin | predicted | observed | pairs |", "|---|---|---|---|"]
        lines += [f"| {b} | {r.predicted:.3f} | {r.observed:.3f} ± {r.observed_se:.3f} | "
                  f"{r.n} |" for b, r in table.iterrows()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(args.replications, args.seed)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(f"R = {args.replications}, {time.perf_counter() - start:.0f} s\n")
    rel = {key: reliability(frame, *key)
           for key in (("scores", "eif"), ("scores", "bayes"), ("strengths", "ppi_pp"))}
    print(markdown(coverage(frame), rel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
