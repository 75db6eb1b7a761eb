"""PyMC's NUTS against nutpie's on every model of the catalogue (``models/``).

Each catalogued model is built from its ``reference.json`` and sampled by
:func:`bayeval.sampling.sample` with the package's defaults (2 chains x 1,000 draws after 1,000
tuning steps, one core, the same seed) twice: ``nuts_sampler="pymc"`` and ``"nutpie"``, one after
the other, the order alternating from model to model so that a busy machine slows both alike.
Both compile the model's log density and gradient with PyTensor's numba backend.

Each model is sampled twice by each sampler: the second call in the same process builds the
model again and reuses nutpie's compiled model (:func:`bayeval.sampling.sample` keeps those of
identical models), while PyMC compiles it again.

For a run with wall time :math:`T` (the call, compilation included), sampling time :math:`S`
(tuning and draws: what the sampler reports) and smallest bulk effective sample size
:math:`\\mathrm{ESS}_{\\min}` over the model's scalars (Vehtari et al. 2021; free and deterministic
variables, as the catalogue's references), the time to 1,000 effective draws is

.. math::

    t_{1000} = (T - S) + S \\cdot 1000 / \\mathrm{ESS}_{\\min}

with compilation, and :math:`S \\cdot 1000 / \\mathrm{ESS}_{\\min}` without. A row's ``ours`` is
nutpie's :math:`t_{1000}` with compilation, ``peer`` PyMC's; the note has the times without
compilation, the smallest ESS, the largest R-hat and the divergences of both. The target,
nutpie reaching 1,000 effective draws sooner, is on the second call in a process (nutpie's
compiled model reused, as a user's repeated or refitted calls do); the first call's row,
whose time is mostly numba compiling nutpie's model (seconds, once per process and model), is
a measurement with no target.

``python -m benchmarks samplers`` prints the rows (it needs nutpie: ``pip install
'bayeval[nutpie]'``; without it the rows say so).
"""

from __future__ import annotations

import importlib.util
import os
import time
import warnings

import arviz as az
import numpy as np

from bayeval.sampling import sample
from models.regenerate import ROOT, build, names, posterior_stats

SEED = 12345
SAMPLERS = ("pymc", "nutpie")


def warm_up() -> None:
    """Both samplers once on a one-parameter model: the first call in a process pays for
    importing and compiling their own machinery, which no model's row should carry."""
    import pymc as pm

    with pm.Model() as m:
        theta = pm.Beta("theta", 1, 1)
        pm.Binomial("k", n=10, p=theta, observed=7)
    for sampler in SAMPLERS:
        sample(m, 0, {"nuts_sampler": sampler, "draws": 100, "tune": 100})


def measure(name: str, sampler: str) -> dict:
    """Wall time, sampling time, smallest bulk ESS, largest R-hat and divergences of one run."""
    import json

    spec = json.loads((ROOT / name / "reference.json").read_text())
    start = time.perf_counter()
    model = build(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = sample(model, SEED, {"nuts_sampler": sampler})
    wall = time.perf_counter() - start
    stats = posterior_stats(tree)
    post = tree["posterior"].to_dataset()
    rhat = max(float(np.nanmax(np.asarray(az.rhat(post[v])))) for v in post.data_vars)
    ess = min(s["ess_bulk"] for s in stats.values())
    sampling = float(tree["posterior"].attrs["sampling_time"])
    return {"wall": wall, "sampling": sampling, "compile": wall - sampling, "ess": ess,
            "rhat": rhat, "divergences": int(tree["sample_stats"]["diverging"].sum()),
            "scalars": len(stats),
            "t1000": wall - sampling + sampling * 1000 / ess,
            "t1000_sampling": sampling * 1000 / ess}


def _fmt(s: float) -> str:
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def row_of(name: str, runs: dict[str, dict], load: tuple[float, float], call: str) -> dict:
    nut, pym = runs["nutpie"], runs["pymc"]
    first = call.startswith("first")
    ok = None if first else bool(nut["t1000"] < pym["t1000"])
    note = (f"without compilation: nutpie {_fmt(nut['t1000_sampling'])}, PyMC "
            f"{_fmt(pym['t1000_sampling'])} ({pym['t1000_sampling'] / nut['t1000_sampling']:.2f}"
            f"x); compilation nutpie {_fmt(nut['compile'])}, PyMC {_fmt(pym['compile'])}; "
            f"min bulk ESS of {nut['scalars']} scalars nutpie {nut['ess']:.0f}, PyMC "
            f"{pym['ess']:.0f}; max R-hat nutpie {nut['rhat']:.3f}, PyMC {pym['rhat']:.3f}; "
            f"divergences nutpie {nut['divergences']}, PyMC {pym['divergences']}; "
            f"load average {load[0]:.1f} before, {load[1]:.1f} after (2 cores)")
    return {"benchmark": "samplers", "case": f"{name}: time to 1,000 bulk ESS, {call}",
            "ours_s": nut["t1000"], "peer": "PyMC NUTS", "peer_s": pym["t1000"],
            "target": "" if first else "nutpie faster to 1,000 ESS", "ok": ok, "note": note}


def run(selected: list[str] | None = None) -> list[dict]:
    models = [n for n in names() if not selected or n in selected]
    if importlib.util.find_spec("nutpie") is None:
        return [{"benchmark": "samplers", "case": f"{n}: time to 1,000 bulk ESS", "ours_s": None,
                 "peer": "PyMC NUTS", "peer_s": None, "target": "nutpie faster to 1,000 ESS",
                 "ok": None, "note": "nutpie is not installed (pip install 'bayeval[nutpie]')"}
                for n in models]
    warm_up()
    rows = []
    calls = ("first call, compilation included",
             "second call in the process (nutpie's compiled model reused)")
    for i, name in enumerate(models):
        order = SAMPLERS if i % 2 == 0 else SAMPLERS[::-1]
        for call in calls:
            before = os.getloadavg()[0]
            runs = {s: measure(name, s) for s in order}
            rows.append(row_of(name, runs, (before, os.getloadavg()[0]), call))
            print(rows[-1]["case"], _fmt(runs["nutpie"]["t1000"]), _fmt(runs["pymc"]["t1000"]),
                  rows[-1]["note"], flush=True)
    return rows


if __name__ == "__main__":
    import sys

    for r in run(sys.argv[1:]):
        print(r)
