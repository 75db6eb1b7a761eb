"""The demo: every method on embedded data (``bayeval demo``, ``make demo``)."""

from __future__ import annotations

import bayeval as be
from bayeval import datasets


def run(seed: int = 0, verbose: bool = False) -> list[be.Evaluation]:
    """Evaluations of each method on embedded or simulated data, fast path and model checked."""
    data = datasets.breast_cancer(random_seed=seed)
    steps = [
        ("labelled: all labels known (breast-cancer classifier)",
         lambda: be.labelled(data.scores, data.labels, method="both", random_seed=seed)),
    ]
    out = []
    for title, step in steps:
        if verbose:
            print(f"== {title}", flush=True)
        out.append(step())
    return out
