"""MVU hard confidence: exact from DMV against the paper's Monte-Carlo votes, in one run.

Data: scikit-learn's digits, a logistic-regression classifier and a DMV trained on 70 % of the
images; 10,000 test rows resampled from the other 30 %, each of the 16 sensors (2 x 2 pixels)
missing with probability 0.3 (30 % of the features).

Rows:

* exact hard confidence from DMV (forward pass + one Dirichlet integral per row) against the
  paper's 1,000 Dirichlet vote draws per row from the same alpha: under 1 s; the note gives the
  speed ratio, the mean |c_hard| difference and the mean Monte-Carlo standard error it should match;
* the DMV estimator end to end against the Monte-Carlo baseline (1,000 conditional-Gaussian
  imputations per row pushed through the classifier) on 1,000 of the rows: the mean |c_hard|
  difference between the two estimators.

Run ``python -m benchmarks.bench_mvu`` to print the rows.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.estimators import DMV, mcar_mask, sensor_groups
from bayeval.methods.mvu.fast import hard_confidence

SEED = 20261122
N = 10_000
N_VOTES = 1_000


def row(case: str, ours_s: float, peer: str, peer_s: float, target: str, ok: bool | None,
        note: str) -> dict:
    return {"benchmark": "mvu.hard_confidence", "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def setup():
    """Classifier, trained DMV and 10,000 partially observed rows."""
    d = load_digits()
    x_train, x_test, y_train, _ = train_test_split(d.data / 16, d.target, test_size=0.3,
                                                   random_state=0, stratify=d.target)
    clf = LogisticRegression(max_iter=2000).fit(x_train, y_train)
    groups = sensor_groups((8, 8), (4, 4))
    dmv = DMV(hidden=16, n_masks=4, max_iter=150, groups=groups, random_seed=SEED).fit(
        x_train, clf)
    rng = np.random.default_rng(SEED)
    rows = x_test[rng.integers(0, len(x_test), N)]
    x = np.where(mcar_mask(N, groups, 0.3, rng), np.nan, rows)
    return clf, dmv, x_train, x


def exact_vs_votes(dmv: DMV, x: np.ndarray) -> dict:
    start = time.perf_counter()
    _, c_exact = hard_confidence(dmv.alpha(x))
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    _, c_votes = hard_confidence(dmv.alpha(x), method="mc", draws=N_VOTES, random_seed=SEED)
    peer_s = time.perf_counter() - start
    diff = float(np.abs(c_votes - c_exact).mean())
    se = float(np.sqrt(c_exact * (1 - c_exact) / N_VOTES).mean())
    return row(f"DMV forward + exact c_hard, {N:,} rows, K=10, 30% missing", ours_s,
               f"{N_VOTES:,} Dirichlet vote draws per row", peer_s, "< 1 s", ours_s < 1.0,
               f"{peer_s / ours_s:.0f}x faster; mean |c_hard diff| {diff:.4f} "
               f"(mean Monte-Carlo SE {se:.4f})")


def dmv_vs_gaussian_mc(clf, dmv: DMV, x_train: np.ndarray, x: np.ndarray,
                       n: int = 1_000) -> dict:
    x = x[:n]
    start = time.perf_counter()
    c_dmv = mvu(clf, x, imputer="dmv", dmv=dmv).closed_form["c_hard"].values
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    c_mc = mvu(clf, x, train=x_train, method="mc", draws=N_VOTES,
               random_seed=SEED).closed_form["c_hard"].values
    peer_s = time.perf_counter() - start
    diff = float(np.abs(c_dmv - c_mc).mean())
    return row(f"DMV estimator end to end, {n:,} rows", ours_s,
               f"conditional-Gaussian Monte Carlo, {N_VOTES:,} imputations per row", peer_s,
               "faster than the peer", ours_s < peer_s,
               f"{peer_s / ours_s:.0f}x faster; mean |c_hard(DMV) - c_hard(MC)| {diff:.4f}")


def run() -> list[dict]:
    """All rows of this benchmark, measured in one run."""
    clf, dmv, x_train, x = setup()
    return [exact_vs_votes(dmv, x), dmv_vs_gaussian_mc(clf, dmv, x_train, x)]


if __name__ == "__main__":
    for r in run():
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.items()))
