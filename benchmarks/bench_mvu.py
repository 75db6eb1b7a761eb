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
* Model A (``method="pymc"``: NUTS on the Gaussian imputer's mean and LKJ covariance, 2 chains
  x 1,000 draws) on 150 rows of an 8-feature Gaussian design with 2,000 training rows and a
  logistic regression, against the plug-in answer (``method="exact"``): the wall time of the
  whole call (compilation included; target < 30 s) and, in the note, that of
  ``method="both"`` and whether its ``check()`` passes.

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


def model_a_cost(d: int = 8, n_train: int = 2_000, n: int = 150) -> dict:
    """Model A's posterior on ``n`` rows (30 % of the features missing) against the plug-in."""
    rng = np.random.default_rng(SEED)
    a = rng.normal(size=(d, d))
    rows = rng.multivariate_normal(np.zeros(d), a @ a.T / d + 0.5 * np.eye(d), size=n_train + n)
    y = (rows @ rng.normal(size=d) + 0.5 * rng.normal(size=len(rows)) > 0).astype(int)
    clf = LogisticRegression().fit(rows[:n_train], y[:n_train])
    x = np.where(rng.random((n, d)) < 0.3, np.nan, rows[n_train:])
    start = time.perf_counter()
    mvu(clf, x, train=rows[:n_train], method="pymc", random_seed=1)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    passed = bool(mvu(clf, x, train=rows[:n_train], method="both", random_seed=1).check()
                  .attrs["passed"])
    both_s = time.perf_counter() - start
    start = time.perf_counter()
    mvu(clf, x, train=rows[:n_train], method="exact")
    peer_s = time.perf_counter() - start
    return row(f"Model A (method='pymc'), {n} rows, d={d}, {n_train:,} training rows", ours_s,
               "plug-in Gaussian (method='exact')", peer_s, "< 30 s", ours_s < 30.0,
               f"method='both' with check() {both_s:.0f} s, check "
               f"{'passed' if passed else 'FAILED'}")


def run() -> list[dict]:
    """All rows of this benchmark, measured in one run."""
    clf, dmv, x_train, x = setup()
    return [exact_vs_votes(dmv, x), dmv_vs_gaussian_mc(clf, dmv, x_train, x), model_a_cost()]


if __name__ == "__main__":
    for r in run():
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.items()))
