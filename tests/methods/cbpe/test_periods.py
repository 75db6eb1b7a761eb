"""CBPE by time period: ``chunk_period`` equals chunks keyed by the period of each row, in time
order, for the analysis period and the reference's thresholds; binary and K classes; the CLI."""

import numpy as np
import pandas as pd
import pytest

from bayeval.methods.cbpe.api import cbpe


def _weeks(n, seed):
    rng = np.random.default_rng(seed)
    stamps = pd.Timestamp("2024-03-06") + pd.to_timedelta(rng.uniform(0, 35, n), unit="D")
    scores = rng.beta(2, 2, n)
    return stamps, scores, (rng.random(n) < scores).astype(float)


def test_chunk_period_equals_chunks_keyed_by_period_in_time_order():
    stamps, scores, labels = _weeks(600, 0)
    ref_stamps, ref_scores, ref_labels = _weeks(800, 1)
    by_period = cbpe(scores, labels=labels, chunks=stamps, chunk_period="W",
                     reference=(ref_scores, ref_labels), reference_chunks=ref_stamps,
                     calibration="none", metrics=["accuracy", "f1"])
    week = pd.Series(stamps).dt.to_period("W").astype(str).to_numpy()
    ref_week = pd.Series(ref_stamps).dt.to_period("W").astype(str).to_numpy()
    by_key = cbpe(scores, labels=labels, chunks=week, reference=(ref_scores, ref_labels),
                  reference_chunks=ref_week, calibration="none", metrics=["accuracy", "f1"])
    chunks = list(by_period.closed_form["chunk"].values)
    assert chunks == [*sorted(set(week)), "all"]  # time order, not first appearance
    assert chunks[0] == "2024-03-04/2024-03-10"
    for name in ("mean", "lower", "upper", "realized", "lower_threshold", "upper_threshold"):
        np.testing.assert_allclose(by_period.closed_form[name],  # the whole period's sums
                                   by_key.closed_form[name].sel(chunk=chunks),  # in another
                                   rtol=0, atol=1e-12)  # order of chunks


def test_k_classes_take_a_chunk_period():
    rng = np.random.default_rng(2)
    stamps = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.uniform(0, 60, 300), unit="D")
    scores = rng.dirichlet([2, 2, 2], 300)
    ev = cbpe(scores, chunks=stamps, chunk_period="M", metrics=["accuracy"])
    assert list(ev.closed_form["chunk"].values) == ["2024-01", "2024-02", "all"]


def test_the_command_line_chunks_by_period(command, tmp_path):
    stamps, scores, _ = _weeks(300, 3)
    path = tmp_path / "data.csv"
    pd.DataFrame({"ts": stamps, "score": scores}).to_csv(path, index=False)
    run = command("cbpe", path, "--score-col", "score", "--chunk-col", "ts",
                  "--chunk-period", "W")
    assert run.returncode == 0, run.stderr
    assert "2024-03-04/2024-03-10" in run.stdout
    # every row printed (6 weeks and the whole period x 10 metrics: beyond pandas' 60 rows)
    weeks = pd.Series(stamps).dt.to_period("W").nunique()
    assert weeks == 6 and "..." not in run.stdout
    assert sum(" accuracy " in f"{line} " for line in run.stdout.splitlines()) == weeks + 1
    assert sum(" roc_auc " in f"{line} " for line in run.stdout.splitlines()) == weeks + 1
    run = command("cbpe", path, "--score-col", "score", "--chunk-period", "W")
    assert run.returncode == 2 and "--chunk-period groups the timestamps" in run.stderr
    run = command("cbpe", path, "--score-col", "score", "--chunk-col", "ts",
                  "--chunk-period", "fortnight")
    assert run.returncode == 2 and "chunk_period must be a pandas period alias" in run.stderr


@pytest.mark.parametrize("period", ["2W", "D"])
def test_every_row_is_in_one_chunk_and_the_whole_period_is_all_rows(period):
    stamps, scores, _ = _weeks(500, 4)
    ev = cbpe(scores, chunks=stamps, chunk_period=period, metrics=["accuracy"])
    n = ev.closed_form["n"]
    assert int(n.sel(chunk="all")) == 500 == int(n.drop_sel(chunk="all").sum())
