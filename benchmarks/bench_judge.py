"""Judge: agreement and speed against ppi_py, cost of Model A in n, real LLM-judge data.

Rows, all measured in one run:

* ``judge.ppi_py``: 90 % PPI (``lam=1``) and PPI++ (``lam=None``, tuned and clipped) intervals of
  :func:`bayeval.methods.judge.ppi_py_api.ppi_mean_ci` against ``ppi_py.ppi_mean_ci`` (PyPI
  ``ppi-python``) on the same arrays, 2,000 labelled and 10^6 unlabelled items: identical to
  1e-10; time ratio. Without ppi_py installed the rows say so (``ok`` None).
* ``judge.model_a``: ``judge(..., method="pymc")`` (Model A, NUTS, 2 x 1000 draws) with 10^7
  against 10^3 unlabelled items, after one warm-up fit (compilation cached): ratio <= 1.5.
* ``judge.arena``: the paper's real data (Chatbot Arena pairs judged by GPT-4o-mini and
  GPT-5.2, MIT, read from ``../shared/data/arena_judge`` when present): 1,000 random 10 %
  labelled splits per pair, 90 % logit intervals of the full-data win rate of position A (RG:
  the paper's adjusted variant, as in its figures). Target: EIF
  coverage within 4 sd of 0.90 (conservative is fine: the truth is the mean of the same finite
  set) and EIF narrower than PPI and RG, as the paper's Fig. 7 reports (widths EIF 0.27-0.30,
  PPI 0.35-0.44, RG 0.76-0.96).

``python -m benchmarks.bench_judge`` prints the rows.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np

from bayeval.methods.judge import judge, ppi_mean_ci
from bayeval.methods.judge.fast import (
    Counts,
    Moments,
    eif_cells,
    interval,
    ppi,
    rogan_gladen,
    youden,
    z_value,
)
from benchmarks.timing import best_time

SEED = 20261122
ARENA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena_judge"


def row(benchmark: str, case: str, ours_s, peer: str, peer_s, target: str, ok, note: str
        ) -> dict:
    return {"benchmark": benchmark, "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def simulated(n_labelled: int, n_unlabelled: int, rng) -> tuple[np.ndarray, ...]:
    """theta = .3, sensitivity .8, specificity .85, as float arrays (ppi_py's input)."""
    y = (rng.random(n_labelled + n_unlabelled) < 0.3).astype(float)
    yhat = np.where(y == 1, rng.random(y.size) < 0.8, rng.random(y.size) < 0.15).astype(float)
    return y[:n_labelled], yhat[:n_labelled], yhat[n_labelled:]


def against_ppi_py() -> list[dict]:
    args = simulated(2000, 10**6, np.random.default_rng(SEED))
    try:
        import ppi_py
    except ImportError:
        return [row("judge.ppi_py", f"{name}, n=2000, N=10^6", None, "ppi_py", None,
                    "same interval to 1e-10", None, "ppi_py not installed "
                    "(pip install ppi-python)") for name in ("PPI", "PPI++")]
    rows = []
    for name, lam in (("PPI", 1.0), ("PPI++", None)):
        ours_s, ours = best_time(lambda lam=lam: ppi_mean_ci(*args, alpha=0.1, lam=lam), 5)
        peer_s, peer = best_time(lambda lam=lam: ppi_py.ppi_mean_ci(*args, alpha=0.1, lam=lam), 5)
        gap = float(np.max(np.abs(np.ravel(ours) - np.ravel(peer))))
        rows.append(row("judge.ppi_py", f"{name} 90% CI, n=2000, N=10^6", ours_s,
                        f"ppi_py {ppi_py.__version__ if hasattr(ppi_py, '__version__') else ''}"
                        .strip(), peer_s, "same interval to 1e-10", gap <= 1e-10,
                        f"max |difference| {gap:.1e}; interval [{ours[0][0]:.5f}, "
                        f"{ours[1][0]:.5f}]"))
    return rows


def model_a_cost() -> list[dict]:
    rng = np.random.default_rng(SEED)
    data = {n: simulated(200, n, rng) for n in (10**3, 10**7)}

    def fit(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return judge(*data[n], method="pymc", random_seed=1)

    fit(10**3)  # compiles the graph once: the counts are pm.Data, the same graph for every n
    times = {10**3: [], 10**7: []}
    for _ in range(3):  # interleaved, so that a busy machine slows both sizes alike
        for n, runs in times.items():
            seconds, ev = best_time(lambda n=n: fit(n), 1)
            runs.append(seconds)
    small_s, large_s = min(times[10**3]), min(times[10**7])
    steps = float(ev.tree["sample_stats"]["n_steps"].mean())
    ratio = large_s / small_s
    return [row("judge.model_a", "NUTS posterior, 200 labelled, 10^7 unlabelled", large_s,
                "the same with 10^3 unlabelled", small_s, "time ratio <= 1.5", ratio <= 1.5,
                f"ratio {ratio:.2f}; {steps:.1f} leapfrog steps per draw at 10^7")]


def arena_pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(y, yhat) per pair and judge: 1 = position A preferred, items with a valid judge pick and
    a decisive human vote (as the paper's code)."""
    out = {}
    for path in sorted(ARENA.glob("claude-opus-4-*_vs_*.json")):
        rows = [r for r in json.loads(path.read_text())
                if r.get("judge_pick") in ("A", "B") and r.get("human_winner") in
                ("model_a", "model_b")]
        name = path.stem.removeprefix("claude-opus-4-20250514_vs_")
        out[name] = (np.array([r["human_winner"] == "model_a" for r in rows], dtype=np.int8),
                     np.array([r["judge_pick"] == "A" for r in rows], dtype=np.int8))
    return out


def arena_split_counts(y, yhat, splits: int, rng) -> Counts:
    """Counts of ``splits`` random 10 % labelled splits (m = round(0.1 N), as the paper)."""
    m = round(0.1 * y.size)
    labelled = np.argsort(rng.random((splits, y.size)), axis=1)[:, :m]
    mask = np.zeros((splits, y.size), dtype=bool)
    np.put_along_axis(mask, labelled, True, axis=1)
    yes, says = y.astype(bool), yhat.astype(bool)
    t1 = (~mask & says).sum(1)
    return Counts((mask & yes & says).sum(1), (mask & yes & ~says).sum(1),
                  (mask & ~yes & says).sum(1), (mask & ~yes & ~says).sum(1), t1,
                  (y.size - m) - t1)


def arena() -> list[dict]:
    if not ARENA.exists():
        return [row("judge.arena", "real LLM-judge data", None, "paper Fig. 7", None, "", None,
                    f"{ARENA} not present: skipped")]
    rng = np.random.default_rng(SEED)
    z, splits = z_value(0.9), 1000
    rows = []
    for name, (y, yhat) in arena_pairs().items():
        start = time.perf_counter()
        c = arena_split_counts(y, yhat, splits, rng)
        m1, m0, c1, c0 = c.n11 + c.n10, c.n01 + c.n00, c.n11 + c.n01, c.n10 + c.n00
        keep = (np.minimum(m1, m0) >= 2) & (np.minimum(c1, c0) >= 1)  # the paper's filter
        c = Counts(*(a[keep] for a in c))
        mo = Moments.from_counts(c)
        rg_ok = np.abs(youden(c, adjust=True, z=z)) >= 1e-4  # the paper's code: NA below
        est = {"eif": eif_cells(*c.cells()), "ppi": ppi(mo),
               "rg": rogan_gladen(Counts(*(a[rg_ok] for a in c)), adjust=True, z=z)}
        coverage, width = {}, {}
        for key, e in est.items():
            lo, hi = interval(e, z, "logit")
            coverage[key] = np.mean((lo <= y.mean()) & (y.mean() <= hi))
            width[key] = np.mean(hi - lo)
        elapsed = time.perf_counter() - start
        tol = 4 * np.sqrt(0.09 / keep.sum())
        ok = bool(coverage["eif"] >= 0.9 - tol and width["eif"] < width["ppi"] < width["rg"])
        rows.append(row("judge.arena", f"{name} (N={y.size}, {keep.sum()} usable splits)",
                        elapsed, "paper Fig. 7", None,
                        "EIF coverage >= 0.90 - 4 sd; width EIF < PPI < RG", ok,
                        "coverage / mean width: " + ", ".join(
                            f"{k.upper()} {coverage[k]:.3f} / {width[k]:.3f}" for k in est)))
    return rows


def run() -> list[dict]:
    return against_ppi_py() + model_a_cost() + arena()


if __name__ == "__main__":
    for r in run():
        print(r)
