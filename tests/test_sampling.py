"""Sampling with bayeval's defaults, the summaries of draws, the log densities for ArviZ's
sensitivity, and the progress lines of long work outside PyMC."""

import io
import logging

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayeval import sampling

pytestmark = pytest.mark.xdist_group("sampling_beta_binomial")


@pytest.fixture(scope="module")
def model():
    """Beta(1, 1) prior, 7 successes in 10 trials: the posterior is Beta(8, 4)."""
    import pymc as pm

    with pm.Model() as m:
        theta = pm.Beta("theta", 1, 1)
        pm.Binomial("k", n=10, p=theta, observed=7)
    return m


@pytest.fixture(scope="module")
def tree(model):
    return sampling.sample(model, 3, {"draws": 500, "tune": 300})


def test_sample_uses_the_defaults_updated_by_the_user_s_settings(tree):
    assert dict(tree.posterior.sizes) == {"chain": sampling.DEFAULTS["chains"], "draw": 500}
    assert "diverging" in tree.sample_stats


def test_sample_draws_the_posterior(tree):
    draws = tree.posterior["theta"]
    summary = sampling.draws_summary(draws, 0.95, "eti")
    law = stats.beta(8, 4)
    mcse = float(summary["mcse_mean"].iloc[0])
    assert abs(float(summary["mean"].iloc[0]) - law.mean()) <= 4 * mcse
    assert summary["r_hat"].iloc[0] < 1.05


def test_sample_is_reproducible_and_leaves_pymc_s_log_level(model, tree):
    logger = logging.getLogger("pymc")
    before = logger.level
    again = sampling.sample(model, 3, {"draws": 500, "tune": 300})
    assert logger.level == before
    np.testing.assert_array_equal(again.posterior["theta"], tree.posterior["theta"])


def test_add_log_densities_adds_what_is_missing_once(model, tree):
    assert "log_likelihood" not in tree.children
    full = sampling.add_log_densities(tree, model)
    assert {"log_likelihood", "log_prior"} <= set(full.children)
    assert "log_likelihood" not in tree.children  # a copy
    theta = full.posterior["theta"]
    np.testing.assert_allclose(full.log_likelihood["k"],
                               stats.binom.logpmf(7, 10, theta), rtol=1e-9)
    assert sampling.add_log_densities(full, model) is full


def draws(values, chains=2):
    return xr.DataArray(np.asarray(values, dtype=float).reshape(chains, -1),
                        dims=sampling.SAMPLE_DIMS, name="theta")


def test_draws_intervals_eti_and_hdi():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, size=4000)
    eti = sampling.draws_intervals(draws(x), 0.9, "eti")
    assert float(eti["mean"]) == pytest.approx(x.mean(), rel=1e-12)
    assert float(eti["sd"]) == pytest.approx(x.std(ddof=1), rel=1e-12)
    lo, hi = np.quantile(x, [0.05, 0.95])
    assert float(eti["lower"]) == pytest.approx(lo, rel=1e-3)
    assert float(eti["upper"]) == pytest.approx(hi, rel=1e-3)
    hdi = sampling.draws_intervals(draws(x), 0.9, "hdi")
    inside = ((x >= float(hdi["lower"])) & (x <= float(hdi["upper"]))).mean()
    assert inside == pytest.approx(0.9, abs=2e-3)
    assert float(hdi["upper"] - hdi["lower"]) < hi - lo  # skewed: the HDI is shorter


def test_draws_intervals_keep_the_estimand_s_dims():
    x = xr.DataArray(np.arange(24.0).reshape(2, 4, 3), dims=(*sampling.SAMPLE_DIMS, "metric"),
                     coords={"metric": ["a", "b", "c"]})
    ds = sampling.draws_intervals(x, 0.5, "eti")
    assert dict(ds.sizes) == {"metric": 3}
    np.testing.assert_allclose(ds["mean"], [10.5, 11.5, 12.5])


def test_draws_summary_has_r_hat_only_with_several_chains():
    x = np.random.default_rng(1).normal(size=400)
    two = sampling.draws_summary(draws(x), 0.95, "eti")
    assert list(two.columns) == ["mean", "sd", "lower", "upper", "mcse_mean", "ess_bulk",
                                 "ess_tail", "r_hat"]
    assert list(two.index) == ["theta"] and two.index.name == "quantity"
    one = sampling.draws_summary(draws(x, chains=1), 0.95, "eti")
    assert "r_hat" not in one.columns
    assert float(one["mean"].iloc[0]) == pytest.approx(x.mean(), rel=1e-12)


def blocks(total, size):
    return [slice(i, min(i + size, total)) for i in range(0, total, size)]


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def progress_on(monkeypatch):
    monkeypatch.setitem(sampling.DEFAULTS, "progressbar", True)


def test_progress_off_yields_the_blocks_and_prints_nothing(capsys):
    assert [b.start for b in sampling.progress(blocks(10, 4), 10, "work")] == [0, 4, 8]
    assert capsys.readouterr() == ("", "")


def test_progress_off_a_terminal_is_one_line_at_the_end(progress_on, capsys):
    seen = []
    for b in sampling.progress(blocks(10, 4), 10, "work"):
        seen.append(b.stop)
        assert capsys.readouterr().err == ""  # nothing before the end
    err = capsys.readouterr().err
    assert seen == [4, 8, 10]
    assert err.startswith("work [" + "#" * 30 + "] 10/10 ") and err.endswith(" s\n")
    assert err.count("\n") == 1 and "\r" not in err


def test_progress_on_a_terminal_is_redrawn_after_each_block(progress_on, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    list(sampling.progress(blocks(10, 4), 10, "work"))
    lines = terminal.getvalue().split("\r")[1:]
    assert [line.split("] ")[1].split()[0] for line in lines] == ["4/10", "8/10", "10/10",
                                                                  "10/10"]
    assert lines[0].startswith("work [" + "#" * 12 + "." * 18 + "]")
    assert lines[-1].endswith(" s\n")


def test_stage_off_prints_nothing_and_on_prints_its_start_and_wall_time(capsys, monkeypatch):
    with sampling.stage("work"):
        pass
    assert capsys.readouterr() == ("", "")
    monkeypatch.setitem(sampling.DEFAULTS, "progressbar", True)
    with sampling.stage("work"):
        assert capsys.readouterr().err == "work ...\n"  # shown before the work ends
    err = capsys.readouterr().err
    assert err.startswith("work: done in ") and err.endswith(" s\n")


def test_a_checked_run_reports_its_steps_beyond_the_sampler(progress_on, capsys):
    """CBPE's independent draws and check()'s comparisons are steps of their own."""
    import bayeval as be

    rng = np.random.default_rng(0)
    s = rng.beta(2, 2, 300)
    ev = be.cbpe(s[:200], reference=(s[200:], (rng.random(100) < s[200:]).astype(int)),
                 metrics=["accuracy"], method="both", random_seed=1)
    drawn = capsys.readouterr().err
    assert "CBPE V0: 4,000 independent draws of the window's labels ...\n" in drawn
    assert "CBPE V0: 4,000 independent draws of the window's labels: done in " in drawn
    ev.check()
    assert "check: the fast path against the draws at 2 coordinate(s): done in " in (
        capsys.readouterr().err)


def test_overlapping_samplers_restore_the_pymc_logger_level(monkeypatch):
    """Two samplers in threads, the first to start ending first: the level saved by the second
    (ERROR, set by the first) must not be what is left once both are done."""
    import logging
    import threading

    import pymc as pm

    from bayeval.sampling import sample

    both_in, first_out = threading.Barrier(2), threading.Event()
    levels = []

    def fake_sample(*, model, random_seed, **kwargs):
        levels.append(logging.getLogger("pymc").level)
        both_in.wait(timeout=10)
        if random_seed == 1:
            first_out.wait(timeout=10)  # the second ends after the first
        return random_seed

    monkeypatch.setattr(pm, "sample", fake_sample)
    logger = logging.getLogger("pymc")
    monkeypatch.setattr(logger, "level", logging.INFO)

    def first():
        sample(None, 0)
        first_out.set()

    threads = [threading.Thread(target=first), threading.Thread(target=sample, args=(None, 1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert levels == [logging.ERROR, logging.ERROR]  # quiet while they run
    assert logger.level == logging.INFO


def test_draws_summary_keeps_the_estimands_dimension_order():
    """(metric, class) stays in that order although the coordinates were given class first
    (which orders a Dataset's dims): a per-class summary reads its index as (metric, class)."""
    x = xr.DataArray(np.random.default_rng(0).random((2, 50, 1, 3)),
                     dims=("chain", "draw", "metric", "class"),
                     coords={"class": ["A", "B", "tie"], "metric": ["prevalence"]}, name="theta")
    frame = sampling.draws_summary(x, 0.9, "eti")
    assert list(frame.index.names) == ["metric", "class"]
    assert frame.loc[("prevalence", "B"), "mean"] == pytest.approx(float(x[:, :, 0, 1].mean()))
