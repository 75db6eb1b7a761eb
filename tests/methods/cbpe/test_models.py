"""CBPE's PyMC models: model(..., variant=) and the old builder names, the latent forms and
their free variables, and the posterior-predictive step honours the progress default."""

import subprocess
import sys
import warnings

import numpy as np
import pymc as pm
import pytest

from bayeval.methods import cbpe as cbpe_package
from bayeval.methods.cbpe import models as cbpe_models
from bayeval.methods.cbpe.fast import beta_binomial_pmf

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


def _groups():
    return (np.array([40, 25, 60, 35]), np.array([0.2, 0.4, 0.6, 0.85]),
            np.array([0, 0, 1, 1]))


def test_v2_latent_forms_have_the_same_law():
    """The uniform form (for NUTS) against the exact Beta-binomial moments of each cell."""
    n, c, y_pred = _groups()
    model = cbpe_models.model(n, c, y_pred, 5.0, latent="uniform", variant="v2")
    draws = 4000
    k = pm.draw(model["k"], draws=draws, random_seed=1)
    for g in range(n.size):
        pmf = beta_binomial_pmf(int(n[g]), [5.0 * c[g]], [5.0 * (1 - c[g])])[0]
        support = np.arange(n[g] + 1)
        mean = pmf @ support
        var, mu4 = pmf @ (support - mean) ** 2, pmf @ (support - mean) ** 4
        assert abs(k[:, g].mean() - mean) <= 4 * np.sqrt(var / draws)
        sd_ratio = np.sqrt((mu4 / var**2 - (draws - 3) / (draws - 1)) / draws)
        assert abs(k[:, g].var(ddof=1) / var - 1) <= 4 * sd_ratio


def test_models_have_continuous_free_variables_only():
    v0 = cbpe_models.model([0.2, 0.7, 0.9], [0, 1, 1], variant="v0")
    assert [v.name for v in v0.free_RVs] == ["u"]
    v2 = cbpe_models.model([3, 4], [0.3, 0.8], [0, 1], 10.0, latent="uniform", variant="v2")
    assert {v.name for v in v2.free_RVs} == {"pi", "u"}
    v2b = cbpe_models.model([1, 3], [4, 4], [0.3, 0.8], variant="v2b")
    assert [v.name for v in v2b.free_RVs] == ["log_kappa"]
    assert [v.name for v in v2b.observed_RVs] == ["k"]
    pred = cbpe_models.predictive_v2b([3, 4], [0.3, 0.8], [0, 1])
    assert "k" in {v.name for v in pred.free_RVs}  # discrete: forward sampling only
    assert pred.coords["chunk"] == ("[0:1]", "all")


def test_model_dispatches_on_variant_and_old_names_warn():
    data = ([0.2, 0.7, 0.9], [0, 1, 1])
    assert cbpe_package.model is cbpe_models.model
    with pytest.raises(ValueError, match="variant must be one of"):
        cbpe_models.model(*data, variant="v1")
    for variant, args in (("v0", data), ("v2", ([3, 4], [0.3, 0.8], [0, 1], 10.0)),
                          ("v2b", ([1, 3], [4, 4], [0.3, 0.8]))):
        with pytest.warns(FutureWarning, match=f"model_{variant} is now"):
            old = getattr(cbpe_package, f"model_{variant}")
        new = cbpe_models.model(*args, variant=variant)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            built = old(*args)
        assert [v.name for v in built.free_RVs] == [v.name for v in new.free_RVs]
        assert built.coords == new.coords
    with pytest.raises(AttributeError):
        cbpe_package.model_v3  # noqa: B018
