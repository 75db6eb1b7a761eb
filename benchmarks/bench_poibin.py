"""Poisson-binomial PMF against its peers: speed and agreement, measured in one run.

Rows: the whole PMF at n = 1,000 against ``scipy.stats.poisson_binom`` (>= 100x faster, same
values to 1e-12); at n = 10^6 against ``fast-poibin`` (at most 2x its time); and, as an accuracy
check at large n, the PMF at n = 10^5 against fast-poibin's exact O(n^2) recursion (``dp`` mode).
Run ``python -m benchmarks.bench_poibin`` to print the rows.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from bayeval.poibin import PoissonBinomial
from benchmarks.timing import best_time

SEED = 20260901


def row(case: str, ours_s: float, peer: str, peer_s: float, target: str, ok: bool | None,
        note: str) -> dict:
    return {"benchmark": "poibin.pmf", "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def ours(p: np.ndarray) -> np.ndarray:
    return PoissonBinomial(p).pmf()


def vs_scipy(n: int = 1_000) -> dict:
    p = np.random.default_rng(SEED).random(n)
    ours_s, pmf = best_time(lambda: ours(p), 20)
    peer_s, ref = best_time(lambda: scipy.stats.poisson_binom(p).pmf(np.arange(n + 1)), 2)
    diff = float(np.abs(pmf - ref).max())
    speedup = peer_s / ours_s
    return row(f"whole PMF, n={n:,}, p~U(0,1)", ours_s, "scipy.stats.poisson_binom", peer_s,
               ">= 100x faster, max abs diff <= 1e-12", speedup >= 100 and diff <= 1e-12,
               f"{speedup:,.0f}x faster; max abs diff {diff:.1e}")


def vs_fast_poibin(n: int = 1_000_000) -> dict:
    p = np.random.default_rng(SEED + 1).random(n)
    case, target = f"whole PMF, n={n:,}, p~U(0,1)", "<= 2x the peer's time"
    ours_s, pmf = best_time(lambda: ours(p), 3)
    try:
        from fast_poibin import PoiBin
    except ImportError:
        return row(case, ours_s, "fast-poibin (mixed)", float("nan"), target, None,
                   "skipped: fast-poibin is not installed (pip install 'bayeval[bench]')")
    PoiBin(p[:1000])  # numba compilation, not timed
    peer_s, ref = best_time(lambda: PoiBin(p).pmf, 3)
    diff = float(np.abs(pmf - ref).max())
    return row(case, ours_s, "fast-poibin (mixed)", peer_s, target, ours_s <= 2 * peer_s,
               f"ours / peer = {ours_s / peer_s:.2f}; max abs diff {diff:.1e}")


def vs_exact_recursion(n: int = 100_000) -> dict:
    rng = np.random.default_rng(SEED + 2)
    p = np.where(rng.random(n) < 0.5, rng.uniform(0.95, 1, n), rng.uniform(0, 0.05, n))
    case, target = f"accuracy, n={n:,}, p near 0 and 1", "max abs diff <= 1e-12"
    ours_s, pmf = best_time(lambda: ours(p), 3)
    try:
        from fast_poibin import PoiBin
    except ImportError:
        return row(case, ours_s, "fast-poibin (dp, exact O(n^2))", float("nan"), target, None,
                   "skipped: fast-poibin is not installed (pip install 'bayeval[bench]')")
    PoiBin(p[:10], mode="dp")  # numba compilation, not timed
    peer_s, exact = best_time(lambda: PoiBin(p, mode="dp").pmf, 1)
    diff = float(np.abs(pmf - exact).max())
    return row(case, ours_s, "fast-poibin (dp, exact O(n^2))", peer_s, target, diff <= 1e-12,
               f"max abs diff {diff:.1e} (max mass {exact.max():.1e})")


def run() -> list[dict]:
    """All rows of this benchmark, measured in one run."""
    return [vs_scipy(), vs_fast_poibin(), vs_exact_recursion()]


if __name__ == "__main__":
    for r in run():
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.items()))
