"""Regenerate the reference posteriors of the model catalogue with long runs.

Usage (from the repository root)::

    python -m models.regenerate            # every model
    python -m models.regenerate NAME ...   # some of them

Each ``models/NAME/reference.json`` names its builder (``"module:function"``), the builder's
JSON data arguments, a seed and the long-run sampler settings; this script samples the model and
writes, for every scalar of every free and deterministic posterior variable, its mean, sd, the
MCSEs of the mean and of the sd, and the bulk ESS. ``tests/test_models.py`` compares quick
runs with them.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import arviz as az
import numpy as np

from bayeval.evaluation import _flatten, _versions
from bayeval.sampling import sample

ROOT = Path(__file__).resolve().parent


def build(spec: dict):
    """The PyMC model of a catalogue entry."""
    module, func = spec["builder"].split(":")
    return getattr(importlib.import_module(module), func)(**spec["kwargs"])


def posterior_stats(tree) -> dict[str, dict[str, float]]:
    """mean, sd, mcse_mean, mcse_sd and ess_bulk of every scalar of the posterior."""
    post = tree["posterior"].to_dataset()
    stats = {}
    for var, da in post.data_vars.items():
        parts = {"mean": da.mean(("chain", "draw")), "sd": da.std(("chain", "draw"), ddof=1),
                 "mcse_mean": az.mcse(da), "mcse_sd": az.mcse(da, method="sd"),
                 "ess_bulk": az.ess(da)}
        flat = {k: dict(_flatten(var, v)) for k, v in parts.items()}
        for label in flat["mean"]:
            stats[label] = {k: float(flat[k][label]) for k in parts}
    return stats


def regenerate(name: str) -> None:
    path = ROOT / name / "reference.json"
    spec = json.loads(path.read_text())
    tree = sample(build(spec), spec["random_seed"], spec["sample_kwargs"])
    spec["reference"] = posterior_stats(tree)
    spec["versions"] = _versions()
    path.write_text(json.dumps(spec, indent=2) + "\n")
    worst = max(v["mcse_mean"] / max(v["sd"], np.finfo(float).tiny)
                for v in spec["reference"].values())
    print(f"{name}: {len(spec['reference'])} quantities, worst mcse/sd {worst:.4f}")


def names() -> list[str]:
    return sorted(p.parent.name for p in ROOT.glob("*/reference.json"))


if __name__ == "__main__":
    for model_name in sys.argv[1:] or names():
        regenerate(model_name)
