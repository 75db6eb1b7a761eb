"""The NUTS implementation chosen by ``sample_kwargs["nuts_sampler"]``: PyMC's by default (even
with nutpie installed), nutpie on request through every method's entry function, with the
sample statistics that bayeval's checks read, reproducible draws and clear errors."""

import time

import numpy as np
import pytest
from scipy import stats

import bayeval as be
from bayeval import sampling

pytestmark = pytest.mark.xdist_group("sampling_beta_binomial")

NUTPIE = {"nuts_sampler": "nutpie"}
SMALL = {"draws": 1000, "tune": 500}


def beta_binomial(k=7, n=10, initval=None):
    """Beta(1, 1) prior, k successes in n trials: the posterior is Beta(k + 1, n - k + 1)."""
    import pymc as pm

    with pm.Model() as m:
        theta = pm.Beta("theta", 1, 1, initval=initval)
        pm.Binomial("k", n=n, p=theta, observed=k)
    return m


@pytest.fixture(scope="module")
def model():
    return beta_binomial()


@pytest.fixture(scope="module")
def nutpie_tree(model):
    pytest.importorskip("nutpie")
    return sampling.sample(model, 3, {**SMALL, **NUTPIE})


def test_pymc_s_own_nuts_is_the_default_even_with_nutpie_installed(model):
    tree = sampling.sample(model, 3, SMALL)
    assert tree.posterior.attrs["inference_library"] == "pymc"
    assert sampling.DEFAULTS["nuts_sampler"] == "pymc"


def test_nutpie_draws_the_posterior_and_leaves_what_the_checks_read(nutpie_tree):
    assert nutpie_tree.posterior.attrs["inference_library"] == "nutpie"
    assert dict(nutpie_tree.posterior.sizes) == {"chain": 2, "draw": 1000}
    stats_ = nutpie_tree.sample_stats
    assert stats_["diverging"].dtype == bool and stats_["diverging"].shape == (2, 1000)
    summary = sampling.draws_summary(nutpie_tree.posterior["theta"], 0.95, "eti")
    mcse = float(summary["mcse_mean"].iloc[0])
    assert abs(float(summary["mean"].iloc[0]) - stats.beta(8, 4).mean()) <= 4 * mcse
    tests = be.check.sampler_tests(nutpie_tree.posterior.to_dataset(), stats_.to_dataset())
    assert tests["passed"].all(), tests


def test_nutpie_is_reproducible_by_its_seed(model, nutpie_tree):
    again = sampling.sample(model, 3, {**SMALL, **NUTPIE})
    np.testing.assert_array_equal(again.posterior["theta"], nutpie_tree.posterior["theta"])
    other = sampling.sample(model, 4, {**SMALL, **NUTPIE})
    assert not np.array_equal(other.posterior["theta"], nutpie_tree.posterior["theta"])


def test_nutpie_gives_pymc_s_nutpie_draws(model, nutpie_tree):
    """bayeval runs nutpie itself (to reuse its compiled models): the draws, groups and sample
    statistics are those of ``pm.sample(nuts_sampler="nutpie")`` with the same seed."""
    import pymc as pm

    with sampling._QUIET:
        tree = pm.sample(model=model, random_seed=3, **{**sampling.DEFAULTS, **SMALL, **NUTPIE})
    np.testing.assert_array_equal(tree.posterior["theta"], nutpie_tree.posterior["theta"])
    assert set(tree.children) == set(nutpie_tree.children)
    assert set(tree.sample_stats.data_vars) == set(nutpie_tree.sample_stats.data_vars)
    np.testing.assert_array_equal(tree.sample_stats["diverging"],
                                  nutpie_tree.sample_stats["diverging"])


@pytest.fixture
def compiled(monkeypatch):
    """The models nutpie compiles (an empty cache to start with)."""
    nutpie = pytest.importorskip("nutpie")
    compile_pymc_model, models = nutpie.compile_pymc_model, []

    def counted(*args, **kwargs):
        models.append(args[0])
        return compile_pymc_model(*args, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counted)
    monkeypatch.setattr(sampling, "_NUTPIE_CACHE", [])
    return models


def test_an_identical_model_reuses_nutpie_s_compiled_model(compiled):
    """A model built again with the same graph and data is not compiled again: the second run
    is faster and its draws are the first's; other data compile anew."""
    times, trees = [], []
    for m in (beta_binomial(), beta_binomial()):
        start = time.perf_counter()
        trees.append(sampling.sample(m, 5, {**SMALL, **NUTPIE}))
        times.append(time.perf_counter() - start)
    assert len(compiled) == 1 and times[1] < times[0], times
    np.testing.assert_array_equal(trees[0].posterior["theta"], trees[1].posterior["theta"])
    other = sampling.sample(beta_binomial(k=2), 5, {**SMALL, **NUTPIE})
    assert len(compiled) == 2
    summary = sampling.draws_summary(other.posterior["theta"], 0.95, "eti")
    mcse = float(summary["mcse_mean"].iloc[0])
    assert abs(float(summary["mean"].iloc[0]) - stats.beta(3, 9).mean()) <= 4 * mcse
    np.testing.assert_array_equal(other.observed_data["k"], 2)


def test_models_with_the_same_numeric_initial_values_share_a_compiled_model(compiled):
    """Initial values given as numbers are part of what makes two models the same."""
    for start in (np.array(0.3), np.array(0.3), np.array(0.6)):
        sampling.sample(beta_binomial(initval=start), 5, {"draws": 50, "tune": 50, **NUTPIE})
    assert len(compiled) == 2


def test_nutpie_with_a_step_or_an_unknown_sampler_is_refused(model):
    import pymc as pm

    with pytest.raises(ValueError, match=r"sample_kwargs\['step'\] cannot be combined"):
        sampling.sample(model, 0, {**NUTPIE, "step": pm.Slice(model=model)})
    with pytest.raises(ValueError, match=r"sample_kwargs\['nuts_sampler'\] must be one of "
                                         r"'pymc', 'nutpie', got 'stan'"):
        sampling.sample(model, 0, {"nuts_sampler": "stan"})


def test_nutpie_refuses_discrete_parameters():
    import pymc as pm

    with pm.Model() as m:
        pm.Bernoulli("z", 0.3)
        pm.Normal("x", 0, 1)
    with pytest.raises(ValueError, match=r"continuous parameters only.*\(z\)"):
        sampling.sample(m, 0, NUTPIE)


def test_nutpie_missing_says_how_to_install_it(model, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nutpie" else find_spec(name, *a))
    with pytest.raises(ImportError, match=r"pip install 'bayeval\[nutpie\]'"):
        sampling.sample(model, 0, NUTPIE)


# ------------------------------------------------------- through every method's entry function
class Reached(BaseException):
    """Raised where the method's model would be sampled, with the settings it would use."""


def _binary(n=200, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.random(n)
    labels = (rng.random(n) < scores).astype(float)
    return scores, labels


def _judge():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    return be.judge(y, np.where(rng.random(60) < 0.8, y, 1 - y), rng.integers(0, 2, 300),
                    method="pymc", sample_kwargs=NUTPIE)


def _labelled():
    return be.labelled(*_binary(), method="pymc", sample_kwargs=NUTPIE)


def _pemi():
    scores, labels = _binary(400)
    labels[::3] = np.nan
    return be.pemi(scores, labels, method="pymc", sample_kwargs=NUTPIE)


def _cbpe():
    scores, labels = _binary(400, seed=2)
    return be.cbpe(scores[:200], reference=(scores[200:], labels[200:]), n_chunks=2,
                   calibration="none", noise="learned", n_bins=4, method="pymc",
                   metrics=["accuracy"], sample_kwargs=NUTPIE)


def _bounds():
    from bayeval.datasets import weak_labels

    sim = weak_labels(300, random_seed=1)
    return be.bounds(sim.y_pred, sim.weak_labels, method="pymc", model="m2",
                     sample_kwargs=NUTPIE)


def _mvu():
    from bayeval.methods.mvu.estimators import LinearClassifier

    rng = np.random.default_rng(11)
    cov = [[0.3, 0.38], [0.38, 1.0]]
    train = rng.multivariate_normal([0, 0], cov, size=400)
    x = rng.multivariate_normal([0, 0], cov, size=5)
    x[:2, 0] = np.nan
    return be.mvu(LinearClassifier([[1.0, 1.0]], [-1.0]), x, train=train, method="pymc",
                  sample_kwargs=NUTPIE)


def _judge_categories():
    rng = np.random.default_rng(2)
    votes = lambda n: rng.choice(["A", "B", "tie"], n)  # noqa: E731
    return be.judge(votes(60), votes(60), votes(300), method="pymc", sample_kwargs=NUTPIE)


def _judge_graded():
    rng = np.random.default_rng(3)
    grades = lambda n: rng.integers(1, 6, n)  # noqa: E731
    return be.judge(grades(100), grades(100), grades(300), y_range=(1, 5), method="pymc",
                    sample_kwargs=NUTPIE)


def _labelled_classes():
    rng = np.random.default_rng(4)
    return be.labelled(rng.dirichlet(np.ones(3), 200), rng.integers(0, 3, 200), method="pymc",
                       sample_kwargs=NUTPIE)


def _pemi_classes():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 300).astype(float)
    labels[::3] = np.nan
    return be.pemi(rng.dirichlet(np.ones(3), 300), labels, method="pymc", sample_kwargs=NUTPIE)


@pytest.mark.parametrize("entry", [_judge, _judge_categories, _judge_graded, _labelled,
                                   _labelled_classes, _pemi, _pemi_classes, _cbpe, _bounds,
                                   _mvu],
                         ids=lambda f: f.__name__.strip("_"))
def test_the_sampler_passes_through_the_entry_function(entry, monkeypatch):
    def reached(model, kwargs):
        raise Reached(kwargs)

    monkeypatch.setattr(sampling, "_check_sampler", reached)
    with pytest.raises(Reached) as seen:
        entry()
    assert seen.value.args[0]["nuts_sampler"] == "nutpie"


def test_check_diagnostics_and_saving_of_a_nutpie_run(tmp_path):
    pytest.importorskip("nutpie")
    ev = be.labelled(*_binary(), method="both", random_seed=5,
                     sample_kwargs={**NUTPIE, **SMALL})
    assert ev.tree["posterior"].attrs["inference_library"] == "nutpie"
    checked = ev.check()
    assert checked.attrs["passed"], checked
    diagnostics = ev.diagnostics()  # divergences and BFMI read nutpie's sample_stats
    assert {"divergences", "bfmi", "r_hat"} <= set(diagnostics.index.get_level_values(0))
    assert diagnostics["ok"].all(), diagnostics
    assert np.isfinite(ev.summary()["mean"]).all()
    back = be.load(ev.to_netcdf(tmp_path / "ev.nc"))
    assert back.equals(ev)


# ------------------------------------------------------------------------------------ the CLI
@pytest.fixture
def judge_csv(tmp_path):
    import pandas as pd

    human = [1, 1, 1, 0, 0, 0] + [None] * 6
    llm = [1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0]
    path = tmp_path / "judge.csv"
    pd.DataFrame({"human": human * 10, "llm": llm * 10}).to_csv(path, index=False)
    return ["judge", str(path), "--label-col", "human", "--judge-col", "llm", "--method", "pymc"]


def test_cli_sampler_reaches_the_sampler_and_is_restored(judge_csv, monkeypatch):
    from bayeval.cli import main

    def reached(model, kwargs):
        raise Reached(kwargs)

    monkeypatch.setattr(sampling, "_check_sampler", reached)
    with pytest.raises(Reached) as seen:
        main([*judge_csv, "--sampler", "nutpie"])
    assert seen.value.args[0]["nuts_sampler"] == "nutpie"
    assert sampling.DEFAULTS["nuts_sampler"] == "pymc"


def test_cli_sampler_without_nutpie_or_unknown_is_a_usage_error(judge_csv, monkeypatch, capsys):
    import importlib.util

    from bayeval.cli import main

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nutpie" else find_spec(name, *a))
    assert main([*judge_csv, "--sampler", "nutpie"]) == 2
    assert "--sampler nutpie needs nutpie: pip install 'bayeval[nutpie]'" in capsys.readouterr().err
    assert main([*judge_csv, "--sampler", "stan"]) == 2
    assert "--sampler: invalid choice: 'stan'" in capsys.readouterr().err
