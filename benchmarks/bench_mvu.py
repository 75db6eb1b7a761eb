"""MVU hard confidence: exact from DMV against the paper's Monte-Carlo votes, in one run.

Data: scikit-learn's digits, a logistic-regression classifier and a DMV trained on 70 % of the
images; 10,000 test rows resampled from the other 30 %, each of the 16 sensors (2 x 2 pixels)
missing with probability 0.3 (30 % of the features).

Rows:

* exact hard confidence from DMV (forward pass + one Dirichlet integral per row) against the
  paper's 1,000 Dirichlet vote draws per row from the same alpha, on 10,000 and 100,000 rows
  (interleaved runs, best of each side): at least 100x faster; the note gives the largest error
  against a fine reference on the hardest rows (near ties, smallest concentrations) and random
  ones, the largest difference from the tanh-sinh integral over all rows, and the Monte-Carlo
  standard error the votes carry;
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

import mpmath as mp
import numpy as np
from scipy import special
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.estimators import DMV, mcar_mask, sensor_groups
from bayeval.methods.mvu.fast import _vote_prob_of, hard_confidence

SEED = 20261122
N = 10_000
N_LARGE = 100_000
N_VOTES = 1_000


def row(case: str, ours_s: float, peer: str, peer_s: float, target: str, ok: bool | None,
        note: str) -> dict:
    return {"benchmark": "mvu.hard_confidence", "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def setup():
    """Classifier, trained DMV, 10,000 and 100,000 partially observed rows."""
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
    rows = x_test[rng.integers(0, len(x_test), N_LARGE)]
    x_large = np.where(mcar_mask(N_LARGE, groups, 0.3, rng), np.nan, rows)
    return clf, dmv, x_train, x, x_large


def fine_rule(alpha: np.ndarray) -> float:
    r"""Reference :math:`P(\arg\max G = j^*)`: the trapezoidal rule in :math:`u = \log x` (step
    min(0.01, sd / 8) of the winner's :math:`\log G`, 40 sd wide) with scipy's incomplete gamma;
    the integrand is analytic in a strip, so its error is far below 1e-12."""
    j = int(np.argmax(alpha))
    a_j, a_o = alpha[j], np.delete(alpha, j)
    sd = 1 / np.sqrt(a_j)
    lo, hi = np.log(a_j) - 40 * sd - 60 / alpha.sum(), np.log(a_j + 40 * np.sqrt(a_j) + 60)
    h = min(0.01, sd / 8)
    u = np.arange(lo, hi + h, h)
    d = u - np.log(a_j)
    const = float(mp.mpf(a_j) * mp.log(a_j) - a_j - mp.loggamma(a_j))
    with np.errstate(divide="ignore"):
        log_f = (-a_j * (np.expm1(d) - d) + const
                 + np.log(special.gammainc(a_o[:, None], np.exp(u))).sum(0))
    return float(np.exp(log_f).sum() * h)


def accuracy(alpha: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """Largest error against :func:`fine_rule` on the 50 nearest ties, the 50 smallest
    concentrations and 200 random rows among those with every alpha <= 1e5 (beyond, scipy's
    incomplete gamma loses digits); largest difference from the tanh-sinh integral."""
    ok = np.flatnonzero(alpha.max(1) <= 1e5)
    a, top = alpha[ok], np.sort(alpha[ok], axis=1)[:, -2:]
    rng = np.random.default_rng(SEED)
    rows = np.unique(np.concatenate([np.argsort((top[:, 1] - top[:, 0]) / np.sqrt(top[:, 1]))[:50],
                                     np.argsort(a.sum(1))[:50],
                                     rng.choice(len(a), 200, replace=False)]))
    fine = max(abs(c[ok[i]] - fine_rule(a[i])) for i in rows)
    tanh_sinh = _vote_prob_of(alpha, alpha.argmax(1), np.zeros(alpha.shape[1]))
    return fine, float(np.abs(c - tanh_sinh).max())


def exact_vs_votes(dmv: DMV, x: np.ndarray, peer_runs: int) -> dict:
    """Both sides interleaved, ``peer_runs`` times (ours best of 3 each time); best of each."""
    ours, peer = [], []
    for _ in range(peer_runs):
        for _ in range(3):
            start = time.perf_counter()
            _, c_exact = hard_confidence(dmv.alpha(x))
            ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        _, c_votes = hard_confidence(dmv.alpha(x), method="mc", draws=N_VOTES, random_seed=SEED)
        peer.append(time.perf_counter() - start)
    ours_s, peer_s = min(ours), min(peer)
    fine, tanh_sinh = accuracy(dmv.alpha(x), c_exact)
    se = np.sqrt(c_exact * (1 - c_exact) / N_VOTES)
    diff = float(np.abs(c_votes - c_exact).mean())
    return row(f"DMV forward + exact c_hard, {len(x):,} rows, K=10, 30% missing", ours_s,
               f"{N_VOTES:,} Dirichlet vote draws per row", peer_s, ">= 100x",
               peer_s >= 100 * ours_s,
               f"{peer_s / ours_s:.0f}x faster (best of {len(ours)} against best of {peer_runs}); "
               f"max error {fine:.0e} against a fine quadrature (up to 300 rows, the nearest "
               f"ties among them), "
               f"max diff {tanh_sinh:.0e} from the tanh-sinh integral over all rows; the votes: "
               f"mean abs c_hard diff {diff:.4f}, Monte-Carlo SE mean {se.mean():.4f}, max "
               f"{se.max():.4f}")


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
               f"{peer_s / ours_s:.0f}x faster; mean abs(c_hard(DMV) - c_hard(MC)) {diff:.4f}")


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
    clf, dmv, x_train, x, x_large = setup()
    return [exact_vs_votes(dmv, x, peer_runs=3), exact_vs_votes(dmv, x_large, peer_runs=2),
            dmv_vs_gaussian_mc(clf, dmv, x_train, x), model_a_cost()]


if __name__ == "__main__":
    for r in run():
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.items()))
