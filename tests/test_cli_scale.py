"""The bayeval command on a dask scheduler and by group (the scale extra), in this process
through ``main(argv)`` (the ``command`` fixture)."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be


def test_cbpe_on_a_scheduler_reads_parquet_by_partition(command, tmp_path):
    pytest.importorskip("distributed", reason="--scheduler needs the 'scale' extra")
    rng = np.random.default_rng(0)
    folder = tmp_path / "scores"
    folder.mkdir()
    for i in range(3):
        pd.DataFrame({"score": rng.beta(2, 5, 1000), "day": np.repeat([i, i + 1], 500)}
                     ).to_parquet(folder / f"part-{i}.parquet")
    run = command("cbpe", folder, "--score-col", "score", "--chunk-col", "day", "--scheduler",
                  "local", "--netcdf", tmp_path / "ev.nc")
    assert run.returncode == 0, run.stderr
    ev = be.load(tmp_path / "ev.nc")
    assert list(ev.closed_form["chunk"].values) == ["0", "1", "2", "3", "all"]
    assert ev.closed_form["n"].values.tolist() == [500, 1000, 1000, 500, 3000]


def test_cbpe_on_a_scheduler_with_reference_and_labels_equals_in_memory(command, tmp_path):
    pytest.importorskip("distributed", reason="--scheduler needs the 'scale' extra")
    rng = np.random.default_rng(1)
    ref_scores = rng.beta(2, 3, 2000)
    pd.DataFrame({"score": ref_scores, "y": (rng.random(2000) < ref_scores).astype(int)}
                 ).to_csv(tmp_path / "ref.csv", index=False)
    scores = rng.beta(2, 3, 1200)
    labels = np.where(rng.random(1200) < 0.5, (rng.random(1200) < scores).astype(float), np.nan)
    pd.DataFrame({"score": scores, "y": labels}).to_parquet(tmp_path / "prod.parquet")
    args = ("cbpe", tmp_path / "prod.parquet", "--score-col", "score", "--label-col", "y",
            "--reference", tmp_path / "ref.csv", "--chunk-size", "400", "--seed", "3")
    run = command(*args, "--scheduler", "local", "--netcdf", tmp_path / "dask.nc")
    assert run.returncode == 0, run.stderr
    run = command(*args, "--netcdf", tmp_path / "memory.nc")
    assert run.returncode == 0, run.stderr
    dask_cf, mem_cf = (be.load(tmp_path / f"{n}.nc").closed_form for n in ("dask", "memory"))
    for var in ("mean", "sd", "lower", "upper", "realized", "n_labelled", "lower_threshold"):
        np.testing.assert_allclose(dask_cf[var], mem_cf[var], rtol=1e-12, atol=1e-14)
    run = command(*args, "--scheduler", "local", "--noise", "binning")
    assert run.returncode == 2 and "--noise: with --scheduler" in run.stderr


def test_group_col_runs_one_evaluation_per_group_and_reports_failures(command, tmp_path):
    rng = np.random.default_rng(1)
    y = (rng.random(900) < 0.3).astype(float)
    judge = np.where(y == 1, rng.random(900) < 0.85, rng.random(900) < 0.2).astype(int)
    y[rng.random(900) < 0.8] = np.nan
    groups = np.repeat(["gpt", "claude", "llama"], 300)
    y[groups == "llama"] = np.where(np.isnan(y[groups == "llama"]), np.nan, 1.0)  # one class
    pd.DataFrame({"human": y, "llm": judge, "judge": groups}).to_csv(tmp_path / "j.csv",
                                                                      index=False)
    run = command("judge", tmp_path / "j.csv", "--label-col", "human", "--judge-col", "llm",
                  "--group-col", "judge")
    assert run.returncode == 0, run.stderr
    assert "gpt" in run.stdout and "claude" in run.stdout
    assert "warning: [llama] failed: ValueError" in run.stdout
