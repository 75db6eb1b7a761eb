"""MVU's PyMC models: model(..., variant=...) builds A, B and C; the old builder names still work
with a warning; Model B's posterior is centred on the Dirichlet MLE."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import bayeval.methods.mvu as mvu_package
from bayeval.methods.mvu import dmv_design, model
from bayeval.methods.mvu.estimators import dirichlet_mle
from bayeval.methods.mvu.fast import hard_confidence

ROOT = Path(__file__).resolve().parents[3]


def test_variants_build_their_models():
    rng = np.random.default_rng(0)
    a = model(rng.normal(size=(30, 2)), variant="a")
    assert [v.name for v in a.free_RVs] == ["mu", "chol"]
    b = model(rng.dirichlet([1.0, 2.0], size=50), variant="b")
    assert [v.name for v in b.free_RVs] == ["mu", "kappa"]
    h = dmv_design([[1.0, np.nan], [np.nan, 2.0]], [[False, True], [True, False]])
    c = model(h, [[0.2, 0.8], [0.6, 0.4]], sigma_w=2.0, variant="c")
    assert [v.name for v in c.free_RVs] == ["w_eta", "w_kappa"]
    with pytest.raises(ValueError, match="variant must be one of"):
        model(h, variant="d")


@pytest.mark.parametrize("variant", ["a", "b", "c"])
def test_old_builder_names_warn_and_build_the_same_model(variant):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = getattr(mvu_package, f"model_{variant}")
    assert caught[0].category is FutureWarning
    assert f"model(..., variant='{variant}')" in str(caught[0].message)
    assert old.func is model and old.keywords == {"variant": variant}
    with pytest.raises(AttributeError):
        mvu_package.model_d  # noqa: B018


def test_model_b_posterior_is_centred_on_the_mle():
    from bayeval.sampling import sample

    rng = np.random.default_rng(5)
    z = 0.5 + 0.8 * rng.standard_normal(400)
    phi = np.stack([special.expit(-z), special.expit(z)], axis=1)
    post = sample(model(phi, variant="b"), 5, {"draws": 1000, "tune": 1000})["posterior"]["alpha"]
    mle = dirichlet_mle(phi[None])[0]
    mean, sd = post.mean(("chain", "draw")).values[0], post.std(("chain", "draw")).values[0]
    assert np.all(np.abs(mean - mle) <= 3 * sd)
    c_fit = hard_confidence(mean[None])[1][0]
    assert abs(c_fit - (phi[:, 1] > 0.5).mean()) <= 0.03


def test_model_b_reference_is_centred_on_the_mle():
    spec = json.loads((ROOT / "models" / "mvu_model_b" / "reference.json").read_text())
    assert spec["builder"] == "bayeval.methods.mvu.models:model"
    assert spec["kwargs"]["variant"] == "b"
    mle = dirichlet_mle(np.asarray(spec["kwargs"]["phi"])[None])[0]
    for j in range(2):
        ref = spec["reference"][f"alpha[0, {j}]"]
        assert abs(ref["mean"] - mle[j]) <= 3 * ref["sd"]
