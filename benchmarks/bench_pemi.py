r"""PEMI-Gauss against PEMI (Algorithm 1): speed at scale and agreement, measured in one run.

Rows: PEMI-Gauss for precision, recall, accuracy, F1 and ROC-AUC at n = 10^6 with 30 % of the
labels missing (MCAR), through the entry point with given p: under 3 s; the same with the
default calibration (Platt's map fitted on the 700,000 labelled rows, the metrics mixed over
400 draws of its posterior), for information.
Then, at n = 10^5, PEMI-Gauss against PEMI with
B = 10,000 imputations (same p): the time ratio and, per metric, the Wasserstein-1 distance
between the normal law and the empirical law of the imputations, in units of the normal's sd
(the Monte-Carlo floor for B = 10,000 is about 0.01). Last, the floor (10^6 and 10^7 rows,
scores ``Beta(2, 2)``, labels drawn from them, 30 % missing, given p, ``method="gauss"``,
accuracy alone and the four count metrics): PEMI-Gauss (the whole call from raw arrays)
against what its laws need, the sums :math:`\sum p` and :math:`\sum p(1-p)` over the missing
rows of each predicted class (the normal law's moments) and the two Poisson-binomial PMFs of
:math:`U` and :math:`V` (the exact law that checks the normal interval's mass; target: within
3x), with its ratio to one pass over the scores (``np.sum``) and its peak memory beyond the
inputs (``tracemalloc``). BLAS runs single-threaded during the floor's timings
(``threadpoolctl``), as in the CBPE benchmark. Run ``python -m benchmarks pemi``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from bayeval.datasets import calibrated_scores, mask_labels
from bayeval.methods.pemi import pemi
from bayeval.poibin import PoissonBinomial
from benchmarks.timing import against_floor, best_time

SEED = 20261122
METRICS = ("precision", "recall", "accuracy", "f1", "roc_auc")
REPEATS = 3
#: best of more calls for the floor rows, timed in milliseconds where one slow call is noise
FLOOR_REPEATS = 15


def row(case: str, ours_s: float, peer: str, peer_s: float | None, target: str, ok: bool | None,
        note: str) -> dict:
    return {"benchmark": "pemi", "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def data(n: int, seed: int):
    """Calibrated Beta(2, 2) scores with their labels, 30 % hidden at random."""
    d = calibrated_scores(n, random_seed=seed)
    return d.scores, mask_labels(d.labels, p_m=0.3, random_seed=seed + 1).labels


def w1_to_normal(draws: np.ndarray, mean: float, sd: float) -> float:
    r""":math:`\int|\hat F_B(t)-\Phi((t-\mu)/\sigma)|\,dt` on a fine grid."""
    lo, hi = min(draws.min(), mean - 8 * sd), max(draws.max(), mean + 8 * sd)
    t = np.linspace(lo, hi, 200_001)
    ecdf = np.searchsorted(np.sort(draws), t, side="right") / draws.size
    return float(np.trapezoid(np.abs(ecdf - stats.norm.cdf(t, mean, sd)), t))


def at_scale(n: int = 1_000_000) -> list[dict]:
    scores, labels = data(n, SEED)
    p = np.clip(scores, 0.0, 1.0)
    ours_s, ev = best_time(lambda: pemi(scores, labels, p=p, metrics=METRICS), 3)
    sd = ev.closed_form["sd"].values
    fit_s, _ = best_time(lambda: pemi(scores, labels, metrics=METRICS), 1)
    return [
        row(f"PEMI-Gauss, 5 metrics incl. ROC-AUC, n={n:,}, 30% missing", ours_s, "", None,
            "< 3 s", ours_s < 3.0, "entry point with given p (validation, complete-case and "
            "bounds included); sd: " + ", ".join(f"{m} {s:.2g}"
                                                 for m, s in zip(METRICS, sd, strict=True))),
        row(f"the same with the default calibrator fitted on {int(np.sum(~np.isnan(labels))):,} "
            "labelled rows", fit_s, "", None, "", None,
            f"Platt's map, its posterior and the mixture over its 400 draws: {fit_s - ours_s:.2f}"
            " s of it"),
    ]


def against_imputation(n: int = 100_000, b: int = 10_000) -> dict:
    scores, labels = data(n, SEED + 2)
    p = np.clip(scores, 0.0, 1.0)  # calibrated by construction: both sides use the same p
    ours_s, gauss = best_time(lambda: pemi(scores, labels, p=p, metrics=METRICS), 3)
    peer_s, imputed = best_time(lambda: pemi(scores, labels, p=p, metrics=METRICS,
                                             method="impute", draws=b,
                                             random_seed=SEED), 1)
    cf = gauss.closed_form
    w1 = {m: w1_to_normal(imputed.draws.sel(metric=m).values.ravel(),
                          float(cf["mean"].sel(metric=m)), float(cf["sd"].sel(metric=m)))
          / float(cf["sd"].sel(metric=m)) for m in METRICS}
    worst = max(w1.values())
    return row(f"PEMI-Gauss vs PEMI B={b:,}, n={n:,}, 30% missing, 5 metrics", ours_s,
               f"PEMI (Algorithm 1), B={b:,}", peer_s, "W1 / sd <= 0.05", worst <= 0.05,
               f"{peer_s / ours_s:,.0f}x faster; W1/sd: "
               + ", ".join(f"{m} {v:.3f}" for m, v in w1.items()))


def floor(n: int, metrics: tuple[str, ...]) -> dict:
    """PEMI-Gauss on ``n`` rows against the sums and PMFs its laws need (module docstring)."""
    rng = np.random.default_rng(SEED)
    scores = rng.beta(2.0, 2.0, n)
    labels = (rng.random(n) < scores).astype(float)
    labels[rng.random(n) < 0.3] = np.nan
    p = scores.copy()  # calibrated by construction
    missing, positive = np.isnan(labels), scores >= 0.5

    def call():
        return pemi(scores, labels, p=p, metrics=metrics, method="gauss")

    def needed():
        u, v = p[missing & positive], p[missing & ~positive]
        return (u.sum(), (u * (1.0 - u)).sum(), v.sum(), (v * (1.0 - v)).sum(),
                PoissonBinomial(u).pmf(), PoissonBinomial(v).pmf())

    ours_s, floor_s, pass_s, peak = against_floor(call, needed, scores, FLOOR_REPEATS)
    inputs = scores.nbytes + labels.nbytes + p.nbytes
    ratio = ours_s / floor_s
    return row(f"PEMI-Gauss, {n:,} rows, 30% missing, given p, {len(metrics)} metric(s): the "
               "floor", ours_s, "the sums and the two Poisson-binomial PMFs it needs", floor_s,
               "<= 3x the floor's time", ratio <= 3,
               f"{ratio:.2f}x the floor, {ours_s / pass_s:.0f}x one pass over the scores "
               f"({pass_s * 1e3:.1f} ms); peak memory {peak / 2**20:.0f} MiB beyond the "
               f"{inputs / 2**20:.0f} MiB of scores, labels and p ({', '.join(metrics)})")


def run() -> list[dict]:
    with threadpool_limits(1, "blas"):
        floors = [floor(n, m) for n in (10**6, 10**7) for m in (METRICS[2:3], METRICS[:4])]
    return [*at_scale(), against_imputation(), *floors]


if __name__ == "__main__":
    for r in run():
        print(r)
