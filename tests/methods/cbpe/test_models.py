"""CBPE's PyMC models outside NUTS: the posterior-predictive step honours the progress default."""

import subprocess
import sys

import pytest

# PyMC's bar of sample_posterior_predictive writes to the sys.stderr of the moment PyMC was
# imported, which pytest's capture may have replaced: the check runs in a fresh interpreter.
SCRIPT = """
import sys
import numpy as np
import xarray as xr
from bayeval import sampling
from bayeval.methods.cbpe import models as cm

sampling.DEFAULTS["progressbar"] = sys.argv[1] == "on"
draws = np.random.default_rng(0).normal(4.6, 1.0, (1, 200))
tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"log_kappa": (("chain", "draw"), draws)})})
counts = cm.posterior_predictive(tree, cm.predictive_v2b([3, 4], [0.3, 0.8], [0, 1]), 1)
print(counts["tp"].sum().item(), counts["fn"].sum().item())
"""


def run(switch: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, switch], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def runs():
    return run("on"), run("off")


def test_posterior_predictive_shows_progress_on_stderr_when_the_default_is_on(runs):
    on, off = runs
    assert on.returncode == 0, on.stderr
    assert "Sampling" in on.stderr and "100%" in on.stderr and "━" in on.stderr
    assert "Sampling" not in on.stdout
    assert off.returncode == 0, off.stderr
    assert "Sampling" not in off.stderr and "━" not in off.stderr
    assert on.stdout == off.stdout  # the same draws either way
