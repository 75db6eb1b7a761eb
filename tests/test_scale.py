"""bayeval.scale on a LocalCluster of 2 worker processes: partitioned fast paths equal the
in-memory ones (1e-12), and many evaluations fan out, a failing group reported, none lost."""

import itertools
import os
import socket

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe", reason="bayeval.scale needs the 'scale' extra (dask)")
pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' extra "
                    "(dask.distributed)")
import dask.array as da
import dask.dataframe as dd

import bayeval as be
from bayeval import confusion_moments, partitions, scale
from bayeval.methods.cbpe.api import cbpe
from bayeval.methods.judge.fast import Counts
from bayeval.poibin import PoissonBinomial
from tests.partitioned_checks import EXACT, assert_same, tied_scores

pytestmark = pytest.mark.xdist_group("scale")  # one cluster per test run under xdist
SEED = 20261010


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


# ------------------------------------------------------------------------ partitioned paths
def test_poisson_binomial_convolves_partitions(client, rng):
    p = np.r_[rng.beta(2, 5, 40_000), np.zeros(30), np.ones(20)]
    rng.shuffle(p)
    full = PoissonBinomial(p).pmf()
    start, probs = scale.poisson_binomial(da.from_array(p, chunks=6_000))
    padded = np.zeros(p.size + 1)
    padded[start : start + probs.size] = probs
    np.testing.assert_allclose(padded, full, rtol=0, atol=EXACT)
    start, probs = scale.poisson_binomial(dd.from_array(p, chunksize=9_000), tol=1e-10)
    assert full[:start].max() <= 1e-10 and full[start + probs.size :].max() <= 1e-10
    np.testing.assert_allclose(probs, full[start : start + probs.size], rtol=0, atol=EXACT)


def test_empty_partitions_add_nothing(client, rng):
    n = 1_200
    frame = pd.DataFrame({"score": rng.beta(2, 3, n), "judge": rng.integers(0, 2, n),
                          "day": np.repeat(["mon", "tue", "wed", "thu"], n // 4)})
    frame["label"] = np.where(rng.random(n) < 0.5, np.nan, frame["judge"])
    lazy = dd.from_pandas(frame, npartitions=6)
    kept, lazy = frame[frame["day"].isin(["mon", "thu"])], lazy[lazy["day"].isin(["mon", "thu"])]
    assert (lazy.map_partitions(len).compute() == 0).sum() == 2  # tue and wed only
    counts = scale.judge_counts(lazy["judge"], lazy["judge"], lazy["judge"])
    assert counts == Counts.from_labels(kept["judge"], kept["judge"], kept["judge"])


@pytest.mark.parametrize("ties", ["half", "one"])
@pytest.mark.parametrize("score_ranges", [None, 7, 40])
def test_auc_moments_equal_in_memory(client, rng, ties, score_ranges):
    n = 12_000
    scores, p = tied_scores(rng, n), rng.beta(2, 2, n)
    labels = np.where(rng.random(n) < 0.6, np.nan, (rng.random(n) < p).astype(float))
    for given in (None, labels):
        mem = confusion_moments.auc_numerator_moments(scores, p, given, ties=ties)
        lazy = (da.from_array(x, chunks=1_700) for x in (scores, p, labels))
        ours = scale.auc_numerator_moments(next(lazy), next(lazy), None if given is None else
                                           next(lazy), ties=ties, score_ranges=score_ranges)
        np.testing.assert_allclose(ours, mem, rtol=EXACT, atol=0)
    np.testing.assert_allclose(
        scale.auc_moments(dd.from_array(scores, chunksize=2_500), p, labels, ties=ties,
                          score_ranges=score_ranges),
        confusion_moments.auc_moments(scores, p, labels, ties=ties), rtol=EXACT, atol=0)


def test_range_sums_concatenate_exactly(rng):
    """The sums of a range followed by another are those of the two ranges together, in any
    grouping (small enumerable case: every cut of 40 sorted rows)."""
    s = np.sort(rng.integers(0, 12, 40) / 12)
    p = rng.random(40)
    y = np.where(rng.random(40) < 0.5, np.nan, (rng.random(40) < 0.5).astype(float))
    whole = partitions._range_sums(s, p, y, 0.5)
    cuts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])[1:]  # ranges never split a tie
    for a, b in itertools.pairwise(cuts):
        parts = [partitions._range_sums(s[i:j], p[i:j], y[i:j], 0.5)
                 for i, j in ((0, a), (a, b), (b, 40))]
        left = parts[0].then(parts[1]).then(parts[2])
        right = parts[0].then(parts[1].then(parts[2]))
        for sums in (left, right):
            np.testing.assert_allclose(sums, whole, rtol=EXACT, atol=EXACT)
            assert sums[-3:] == whole[-3:]  # the labelled rows' integers exactly


# ------------------------------------------------------------------------------- fan-out
def fit(payload):
    """One group: the labelled model, exact and NUTS; a group with a bad label raises."""
    labels, y_pred = payload
    return be.labelled(labels=labels, y_pred=y_pred, method="both", random_seed=1,
                       sample_kwargs={"draws": 600, "tune": 400})


def rates(payload):
    labels, y_pred = payload
    return be.labelled(labels=labels, y_pred=y_pred)


def groups(rng, bad=True):
    out = {}
    for name, skill in (("model_a", 0.9), ("model_b", 0.7)):
        y = (rng.random(300) < 0.4).astype(int)
        out[name] = (y, np.where(rng.random(300) < skill, y, 1 - y))
    if bad:
        out["broken"] = (np.zeros(10, int), np.ones(9, int))  # one prediction short
    return out


def test_fan_out_pymc_reports_a_failing_group_and_keeps_the_others(client, rng, tmp_path):
    data = groups(rng)
    ev = scale.map_evaluations(fit, data, client)
    status = scale.group_status(ev)
    assert status["status"].to_dict() == {"model_a": "ok", "model_b": "ok", "broken": "error"}
    assert "length mismatch" in status.loc["broken", "error"]
    assert ev.meta["failed"] == ["broken"] and any("[broken] failed" in w for w in ev.warnings)
    here = f"{socket.gethostname()}:{os.getpid()}"
    assert here not in set(status["process"])  # the fits ran in the worker processes
    assert list(ev.tree["posterior"]["group"].values) == ["model_a", "model_b"]
    for name in ("model_a", "model_b"):  # the fast path of each group, as in memory
        assert_same(rates(data[name]).closed_form, ev.closed_form.sel(group=name, drop=True))
        one = scale.select(ev, name)
        assert one.meta["variant"] == "both" and one.draws.sizes == {"chain": 2, "draw": 600,
                                                                     "metric": 5}
    assert ev.check().attrs["passed"]  # every group's draws against its closed form
    diagnostics = scale.group_diagnostics(ev)
    assert set(diagnostics.index.get_level_values("group")) == {"model_a", "model_b"}
    with pytest.raises(ValueError, match="failed: ValueError"):
        scale.select(ev, "broken")
    assert be.load(ev.to_netcdf(tmp_path / "groups.nc")).equals(ev)


def test_fan_out_on_workers_equals_sequential(client, rng):
    data = groups(rng)
    on_workers = scale.map_evaluations(rates, data, client)
    here = scale.map_evaluations(rates, data)
    assert_same(here.closed_form, on_workers.closed_form, tol=0)
    assert scale.group_status(here)["status"].tolist() == ["ok", "ok", "error"]


def test_gathering_aligns_chunks_in_order(rng):
    scores = rng.beta(2, 3, 4_000)
    segments = {"eu": (scores[:3_000], ["q1"] * 1_000 + ["q2"] * 2_000),
                "us": (scores[3_000:], ["q0"] * 500 + ["q2"] * 500)}
    ev = scale.map_evaluations(lambda s: cbpe(s[0], chunks=s[1], metrics=["accuracy"]),
                               segments)
    assert list(ev.closed_form["chunk"].values) == ["q1", "q2", "all", "q0"]
    assert np.isnan(ev.closed_form["mean"].sel(group="eu", chunk="q0")).all()
    one = scale.select(ev, "us")
    assert list(one.closed_form["chunk"].values) == ["q2", "all", "q0"]


def test_fan_out_errors():
    with pytest.raises(ValueError, match="distinct labels"):
        scale.map_evaluations(rates, [1, "1"])
    failed = scale.map_evaluations(rates, {"a": ([1], [1, 0]), "b": ([0, 1], [1])})
    assert failed.meta["failed"] == ["a", "b"]  # every group failed: the failures, returned
    status = scale.group_status(failed)
    assert status["error"].str.contains("length mismatch").all()
    assert status["error"].str.contains("length mismatch").all()
    with pytest.raises(ValueError, match=r"holds no result: every group failed \(\[a\] failed"):
        failed.summary()
    assert "0 of 2 groups" in failed.meta["description"] and "a" in repr(failed)
    with pytest.raises(ValueError, match="disagree on ci_prob"):
        scale.map_evaluations(lambda ci: be.labelled(labels=[1, 0], y_pred=[1, 1],
                                                     ci_prob=ci), {"a": 0.9, "b": 0.95})
