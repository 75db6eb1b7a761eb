"""Scale: CBPE on a partitioned Parquet dataset, and judge posteriors fanned out over workers.

Rows, all measured in one run on a fresh ``LocalCluster`` of 2 worker processes with one thread
each (PYTENSOR_FLAGS inherited, so the workers share the compile cache):

* ``scale.cbpe_parquet``: :func:`bayeval.scale.cbpe` (exact, noise none, every metric: the
  nine confusion-matrix metrics from count PMFs, and ROC-AUC from sums over score ranges, the
  rows shuffled once between the workers), the whole period and 100 chunks (a ``day`` key)
  of ``N_ROWS`` rows read lazily from a Parquet dataset of 64 files written once to a
  temporary folder with pyarrow (chunks straddle the files). Peak memory: the peak resident
  set of each worker process and of this one (``resource.getrusage``), read right after the
  run. Target: all of them together under 4 GiB.
* ``scale.cbpe_in_memory``: the same on the first 10^7 rows (10 days), partitioned against
  :func:`bayeval.methods.cbpe.api.cbpe` in memory: equal to 1e-12 (mean, sd, interval, its mass,
  p_undefined, plugin, every metric); time ratio for the record.
* ``scale.judge_fan_out``: 20 judge posteriors (Model A, NUTS, 2 x 1000 draws, 200 labelled
  and 10^5 judge-only items each) through :func:`bayeval.scale.map_evaluations` on the 2
  workers against the same 20 one after the other in this process, every process warmed up by
  one fit first, best of 2 interleaved runs each (the load average is in the note: other work
  on the machine takes cores from the workers). Target: ratio sequential / fanned out >= 1.6
  (2 cores).

``python -m benchmarks.bench_scale`` prints the rows.
"""

from __future__ import annotations

import importlib
import itertools
import os
import resource
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from bayeval import scale
from bayeval.datasets import noisy_judge
from bayeval.methods.cbpe import cbpe
from bayeval.methods.judge import judge

SEED = 20261010
N_ROWS = 10**8
DAYS = 100
FILES = 64
GIB = 2**30
FAST = ["mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin"]


def row(benchmark: str, case: str, ours_s, peer: str, peer_s, target: str, ok, note: str
        ) -> dict:
    return {"benchmark": benchmark, "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def write_parquet(folder: Path, n_rows: int) -> None:
    """``score`` ~ Beta(2, 5) (taken as calibrated) and ``day`` = row // (n_rows / DAYS),
    in FILES files written one at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    bounds = np.linspace(0, n_rows, FILES + 1).astype(np.int64)
    per_day = n_rows // DAYS
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        table = pa.table({"score": rng.beta(2.0, 5.0, hi - lo),
                          "day": (np.arange(lo, hi) // per_day).astype(np.int16)})
        pq.write_table(table, folder / f"part-{i:03d}.parquet")


def cpu_seconds() -> float:
    """User and system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss() -> int:
    """Peak resident set of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cbpe_parquet(client, folder: Path) -> list[dict]:
    import dask.dataframe as dd

    frame = dd.read_parquet(str(folder), columns=["score", "day"])
    start = time.perf_counter()
    ev = scale.cbpe(frame["score"], chunks=frame["day"])
    seconds = time.perf_counter() - start
    workers = client.run(peak_rss)
    total = sum(workers.values()) + peak_rss()
    chunks = ev.closed_form.sizes["chunk"] - 1
    note = (f"{N_ROWS:.0e} rows, {frame.npartitions} partitions, {chunks} chunks + whole; peak "
            f"RSS workers {', '.join(f'{v / GIB:.2f}' for v in workers.values())} GiB, client "
            f"{peak_rss() / GIB:.2f} GiB, total {total / GIB:.2f} GiB; whole-period f1 "
            f"{float(ev.closed_form['mean'].sel(chunk='all', metric='f1')):.6f}")
    return [row("scale.cbpe_parquet", f"CBPE exact, whole + {chunks} chunks, 2 workers",
                seconds, "", None, "peak memory < 4 GiB", total < 4 * GIB, note)]


def cbpe_in_memory(folder: Path) -> list[dict]:
    import dask.dataframe as dd

    files = sorted(folder.glob("*.parquet"))
    frame = dd.read_parquet([str(f) for f in files])
    frame = frame[frame["day"] < 10]
    start = time.perf_counter()
    ev = scale.cbpe(frame["score"], chunks=frame["day"])
    ours_s = time.perf_counter() - start
    local = frame.compute()
    start = time.perf_counter()
    mem = cbpe(local["score"].to_numpy(), chunks=local["day"].to_numpy(), calibration="none")
    peer_s = time.perf_counter() - start
    gap = max(float(np.abs(mem.closed_form[v] - ev.closed_form[v]).max()) for v in FAST)
    return [row("scale.cbpe_in_memory", f"CBPE exact, {len(local):.0e} rows, 10 chunks + whole",
                ours_s, "bayeval.methods.cbpe.api.cbpe in memory", peer_s, "equal to 1e-12",
                gap <= 1e-12, f"max |difference| {gap:.1e} over {', '.join(FAST)}")]


def judge_fit(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return judge(data.y, data.yhat, data.yhat_unlabeled, method="pymc", random_seed=1)


def warm_up() -> None:
    judge_fit(noisy_judge(200, 1000, random_seed=0))


def judge_fan_out(client, rounds: int = 2) -> list[dict]:
    groups = {f"judge_{i:02d}": noisy_judge(200, 10**5, prevalence=0.2 + 0.02 * i,
                                            random_seed=SEED + i) for i in range(20)}
    warm_up()
    client.run(warm_up)
    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {"fanned": [], "here": []}
    cpu: dict[str, list[float]] = {"fanned": [], "here": []}
    runs = {}
    for _ in range(rounds):  # interleaved, so that other work on the machine slows both alike
        for key, on in (("fanned", client), ("here", None)):
            start, used = time.perf_counter(), cpu_seconds() + sum(client.run(cpu_seconds)
                                                                    .values())
            runs[key] = scale.map_evaluations(judge_fit, groups, on)
            times[key].append(time.perf_counter() - start)
            cpu[key].append(cpu_seconds() + sum(client.run(cpu_seconds).values()) - used)
    same = bool(np.array_equal(runs["fanned"].tree["posterior"]["theta"].values,
                               runs["here"].tree["posterior"]["theta"].values))
    status = scale.group_status(runs["fanned"])
    ours_s, peer_s = min(times["fanned"]), min(times["here"])
    ratio = peer_s / ours_s
    return [row("scale.judge_fan_out", "20 judge posteriors (model A, NUTS), 2 workers", ours_s,
                "the same 20 sequentially", peer_s, "ratio >= 1.6", ratio >= 1.6,
                f"ratio {ratio:.2f} (best of {rounds} interleaved runs); CPU time "
                f"{min(cpu['fanned']):.0f} s fanned out (workers and client) vs "
                f"{min(cpu['here']):.0f} s sequentially; "
                f"{int((status['status'] == 'ok').sum())}/20 ran on "
                f"{status['process'].nunique()} processes; draws identical to the sequential "
                f"run: {same}; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after "
                f"(on {os.cpu_count()} cores: other work slows the fan-out)")]


def run() -> list[dict]:
    from distributed import Client, LocalCluster

    folder = Path(tempfile.mkdtemp(prefix="bayeval-bench-scale-"))
    try:
        start = time.perf_counter()
        write_parquet(folder, N_ROWS)
        written_s = time.perf_counter() - start
        size = sum(f.stat().st_size for f in folder.iterdir()) / GIB
        env = {"PYTENSOR_FLAGS": os.environ.get("PYTENSOR_FLAGS", "")}
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0", env=env) as cluster, Client(cluster) as client:
            client.run(importlib.import_module, "bayeval.scale")  # imports are not timed
            rows = cbpe_parquet(client, folder)
            rows[0]["note"] += f"; Parquet {size:.2f} GiB written in {written_s:.0f} s"
            rows += cbpe_in_memory(folder)
            rows += judge_fan_out(client)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
