"""Timing shared by the benchmarks."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np


def best_time(fn: Callable[[], Any], repeats: int, *,
              warm_up: bool = False) -> tuple[float, Any]:
    """Best wall time of ``repeats`` calls, in seconds, and the last result (``warm_up``: after
    one untimed call, which pays lazy imports and first-call caches)."""
    if warm_up:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def against_floor(call: Callable[[], Any], floor: Callable[[], Any], data: np.ndarray,
                  repeats: int) -> tuple[float, float, float, int]:
    """Best times of ``call`` (after one untimed call: lazy imports), of ``floor`` (the
    computation it cannot avoid) and of one pass over ``data`` (``data.sum``), and the peak
    memory ``call`` allocates (bytes, tracemalloc)."""
    call()
    ours, _ = best_time(call, repeats)
    least, _ = best_time(floor, repeats)
    one_pass, _ = best_time(data.sum, repeats)
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return ours, least, one_pass, peak
