r"""Coverage of the difference of two systems, and the calibration of P(A > B), with a judge.

Population. Systems A and B answer the same prompts. The true grades :math:`(Y_A, Y_B)` are
0/1 with rates :math:`\theta_A = \theta_B + \Delta` and correlation :data:`CORR` (a prompt hard
for one system tends to be hard for the other). The judge passes a right answer with probability
:data:`SENSITIVITY` (per system) and a wrong one with probability :data:`FALSE_PASS`: it is
more lenient with B. On a share :data:`LENIENT` of the prompts it is in a lenient mood for both
answers (:data:`LENIENCY` added to both false-pass rates), so its errors on the two systems are
correlated. The naive difference of the judge's pass rates is biased towards B.

Replicates. Each draws :math:`\theta_B \sim U(0.45, 0.75)` and :math:`\Delta \sim U(-0.12,
0.12)`, then :math:`N` = :data:`N_TOTAL` prompts of which :math:`m` (random) carry human grades
of both answers, and runs :func:`bayeval.compare_systems` (``method="all"``, 95 %). Coverage is
the share of replicates whose interval holds :math:`\Delta` (Monte-Carlo SE
:math:`\sqrt{\hat c(1 - \hat c)/R}`); width the mean interval width. Reliability of ``bayes``'s
:math:`P(\Delta > 0)`: the replicates binned by it, and per bin the mean predicted probability
against the share of replicates where A is truly better (SE :math:`\sqrt{f(1-f)/n}`).

``python -m benchmarks.coverage_judge_compare`` runs m in 50, 200 with ``--replications``
(default 2,000) and prints the markdown tables of ``docs/judge.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from bayeval import compare_systems

SEED = 20261219
N_TOTAL = 3000
M_GRID = (50, 200)
CORR = 0.4
SENSITIVITY = np.array([0.90, 0.85])
FALSE_PASS = np.array([0.15, 0.30])
LENIENT, LENIENCY = 0.3, 0.25
ESTIMATORS = ("naive", "classical", "ppi", "ppi_pp", "eif", "bayes")
BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)


def cell_probabilities(theta_a: float, theta_b: float) -> np.ndarray:
    """P(Y_A, Y_B, judge_A, judge_B), shape (2, 2, 2, 2)."""
    cov = CORR * np.sqrt(theta_a * (1 - theta_a) * theta_b * (1 - theta_b))
    p11 = theta_a * theta_b + cov
    truth = np.array([[1 - theta_a - theta_b + p11, theta_b - p11], [theta_a - p11, p11]])
    out = np.zeros((2, 2, 2, 2))
    for mood, weight in ((0.0, 1 - LENIENT), (LENIENCY, LENIENT)):
        passes = np.stack([FALSE_PASS + mood, SENSITIVITY])  # [truth, system]: P(judge = 1)
        for ya, yb in np.ndindex(2, 2):
            ja = np.array([1 - passes[ya, 0], passes[ya, 0]])
            jb = np.array([1 - passes[yb, 1], passes[yb, 1]])
            out[ya, yb] += weight * truth[ya, yb] * np.outer(ja, jb)
    return out


def simulate(m: int, n_total: int, theta_a: float, theta_b: float, rng: np.random.Generator):
    """(y, yhat, yhat_unlabeled): arrays (m, 2), (m, 2), (n_total - m, 2) of 0/1 grades."""
    cells = cell_probabilities(theta_a, theta_b).ravel()
    codes = rng.choice(16, size=n_total, p=cells)
    bits = (codes[:, None] >> np.array([3, 2, 1, 0])) & 1  # Y_A, Y_B, judge_A, judge_B
    return bits[:m, :2], bits[:m, 2:], bits[m:, 2:]


def run(replications: int = 2000, m_grid=M_GRID, n_total: int = N_TOTAL, seed: int = SEED
        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per replicate and estimator: (m, delta, estimator, lower, upper, prob_greater)."""
    rows = []
    rng = np.random.default_rng(seed)
    for m in m_grid:
        for r in range(replications):
            theta_b, delta = rng.uniform(0.45, 0.75), rng.uniform(-0.12, 0.12)
            y, yhat, yhat_u = simulate(m, n_total, theta_b + delta, theta_b, rng)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s = compare_systems(y, yhat, yhat_u, method="all",
                                        random_seed=int(rng.integers(2**31))).summary()
            except ValueError:  # a constant difference on the labelled prompts: undefined
                rows.append({"m": m, "rep": r, "delta": delta, "estimator": "undefined"})
                continue
            for name in ESTIMATORS:
                rows.append({"m": m, "rep": r, "delta": delta, "estimator": name,
                             "mean": s.loc[name, "mean"], "lower": s.loc[name, "lower"],
                             "upper": s.loc[name, "upper"],
                             "prob_greater": s.loc[name, "prob_greater"]})
    frame = pd.DataFrame(rows)
    return coverage(frame, replications), reliability(frame)


def coverage(frame: pd.DataFrame, replications: int) -> pd.DataFrame:
    """Coverage, its SE, mean width and bias per (m, estimator)."""
    est = frame[frame["estimator"] != "undefined"].copy()
    est["covered"] = (est["lower"] <= est["delta"]) & (est["delta"] <= est["upper"])
    est["width"] = est["upper"] - est["lower"]
    est["error"] = est["mean"] - est["delta"]
    out = est.groupby(["m", "estimator"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), bias=("error", "mean"),
        replicates=("covered", "size"))
    out["se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["replicates"])
    out["undefined"] = replications - out["replicates"]
    return out[["coverage", "se", "width", "bias", "replicates", "undefined"]]


def reliability(frame: pd.DataFrame) -> pd.DataFrame:
    """Per m and bin of bayes's P(A > B): mean prediction, observed share of A better, SE."""
    b = frame[frame["estimator"] == "bayes"].copy()
    b["bin"] = pd.cut(b["prob_greater"], BINS, include_lowest=True)
    b["better"] = b["delta"] > 0
    out = b.groupby(["m", "bin"], observed=True).agg(
        predicted=("prob_greater", "mean"), observed=("better", "mean"),
        replicates=("better", "size"))
    out["se"] = np.sqrt(out["observed"] * (1 - out["observed"]) / out["replicates"])
    return out


def markdown(cov: pd.DataFrame, rel: pd.DataFrame) -> str:
    """The two tables of docs/judge.md."""
    lines = ["| m | estimator | coverage (SE) | mean width | bias |", "|---|---|---|---|---|"]
    for (m, name), row in cov.iterrows():
        lines.append(f"| {m} | {name} | {row.coverage:.3f} ({row.se:.3f}) | {row.width:.3f} | "
                     f"{row.bias:+.4f} |")
    lines += ["", "| m | P(A > B) bin | replicates | mean P(A > B) | share A truly better (SE) |",
              "|---|---|---|---|---|"]
    for (m, interval), row in rel.iterrows():
        lines.append(f"| {m} | {max(interval.left, 0):.1f}-{interval.right:.1f} | "
                     f"{int(row.replicates)} | "
                     f"{row.predicted:.3f} | {row.observed:.3f} ({row.se:.3f}) |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cov, rel = run(args.replications)
    print(markdown(cov, rel))
    undefined = int(cov["undefined"].max())
    print(f"R = {args.replications} per m ({undefined} undefined), N = {N_TOTAL}, seed {SEED}, "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
