"""The command line's options that mirror the functions' (--metrics, --calibration,
--alert-thresholds, --late-labels, --mnar, cbpe's outputs' options): each equals the function
called with the same arguments, and a malformed value is a usage error (exit 2, one line)."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval import datasets
from bayeval.evaluation import load


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    rng = np.random.default_rng(11)
    folder = tmp_path_factory.mktemp("options")
    ref_s = rng.beta(2, 2, 600)
    ref = pd.DataFrame({"score": ref_s, "label": (rng.random(600) < ref_s).astype(int)})
    s = rng.beta(2, 2, 400)
    y = np.where(rng.random(400) < 0.5, (rng.random(400) < s).astype(float), np.nan)
    prod = pd.DataFrame({"score": s, "label": y})
    ref.to_csv(folder / "ref.csv", index=False)
    prod.to_csv(folder / "prod.csv", index=False)
    return folder, ref, prod


def _closed(path):
    return load(path).closed_form


def test_cbpe_options_equal_the_function(command, frames, tmp_path):
    folder, ref, prod = frames
    out = tmp_path / "ev.nc"
    run = command("cbpe", folder / "prod.csv", "--score-col", "score", "--label-col", "label",
                  "--reference", folder / "ref.csv", "--n-chunks", "2", "--seed", "3",
                  "--metrics", "accuracy,f1", "--calibration", "platt",
                  "--alert-thresholds", "accuracy=0.8:,f1=:0.9", "--late-labels", "estimate",
                  "--netcdf", out)
    assert run.returncode == 1, run.stderr  # accuracy below 0.8: an alert fires
    expected = be.cbpe(prod["score"], labels=prod["label"],
                       reference=(ref["score"], ref["label"]), n_chunks=2, random_seed=3,
                       metrics=["accuracy", "f1"], calibration="platt",
                       alert_thresholds={"accuracy": (0.8, None), "f1": (None, 0.9)},
                       late_labels="estimate").closed_form
    got = _closed(out)
    assert list(got["metric"].values) == ["accuracy", "f1"]
    for name in ("mean", "lower", "upper", "lower_threshold", "upper_threshold"):
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=1e-12)


def test_cbpe_output_options_equal_the_function(command, frames, tmp_path):
    folder, ref, prod = frames
    out = tmp_path / "outputs.nc"
    run = command("cbpe", folder / "prod.csv", "--score-col", "score",
                  "--reference", folder / "ref.csv", "--ref-label-col", "label",
                  "--n-chunks", "2", "--seed", "3", "--metrics", "confusion_matrix,business_value",
                  "--normalize-confusion-matrix", "true", "--business-value-matrix",
                  "0,-20,-50,100", "--normalize-business-value", "per_prediction",
                  "--no-fail-on-alert", "--netcdf", out)
    assert run.returncode == 0, run.stderr
    expected = be.cbpe(prod["score"], reference=(ref["score"], ref["label"]), n_chunks=2,
                       random_seed=3, metrics=["confusion_matrix", "business_value"],
                       normalize_confusion_matrix="true",
                       business_value_matrix=[[0, -20], [-50, 100]],
                       normalize_business_value="per_prediction").closed_form
    got = _closed(out)
    assert list(got["metric"].values) == list(expected["metric"].values)
    for name in ("mean", "lower", "upper"):
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=1e-12)
    bad = command("cbpe", folder / "prod.csv", "--score-col", "score", "--metrics",
                  "business_value", "--business-value-matrix", "0,1,2")
    assert bad.returncode == 2 and "--business-value-matrix: expected 4" in bad.stderr


def test_pemi_and_bounds_options_equal_the_functions(command, frames, tmp_path):
    folder, _, prod = frames
    out = tmp_path / "pemi.nc"
    run = command("pemi", folder / "prod.csv", "--score-col", "score", "--label-col", "label",
                  "--metrics", "precision,recall", "--calibration", "beta", "--mnar", "0,0.5",
                  "--seed", "1", "--netcdf", out)
    assert run.returncode == 0, run.stderr
    expected = be.pemi(prod["score"], prod["label"], metrics=["precision", "recall"],
                       calibration="beta", mnar=(0.0, 0.5), random_seed=1).closed_form
    np.testing.assert_allclose(_closed(out)["mean"], expected["mean"], rtol=0, atol=1e-12)
    w = datasets.weak_labels(300, min_votes=1, random_seed=4)
    path = tmp_path / "weak.csv"
    pd.DataFrame(w.weak_labels, columns=["a", "b", "c"]).assign(pred=w.y_pred).to_csv(
        path, index=False)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "a,b,c",
                  "--metrics", "recall", "--netcdf", tmp_path / "b.nc")
    assert run.returncode == 0, run.stderr
    assert list(_closed(tmp_path / "b.nc")["metric"].values) == ["recall"]


@pytest.mark.parametrize(("args", "message"), [
    (["--alert-thresholds", "accuracy=0.8"], "--alert-thresholds: expected metric=lower:upper"),
    (["--alert-thresholds", "accuracy=a:b"], "--alert-thresholds: expected metric=lower:upper"),
    (["--metrics", "acc"], "metrics must be one of"),
    (["--calibration", "magic"], "calibration"),
    (["--late-labels", "always"], "late_labels"),
])
def test_bad_cbpe_options_are_usage_errors(command, frames, args, message):
    run = command("cbpe", frames[0] / "prod.csv", "--score-col", "score", *args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mnar", ["a", "1,2,3"])
def test_bad_mnar_is_a_usage_error(command, frames, mnar):
    run = command("pemi", frames[0] / "prod.csv", "--score-col", "score", "--label-col",
                  "label", "--mnar", mnar)
    assert run.returncode == 2 and "--mnar: expected" in run.stderr


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json"])
def test_summary_is_written_with_full_precision(command, frames, tmp_path, suffix):
    folder, ref, prod = frames
    out = tmp_path / f"summary{suffix}"
    run = command("cbpe", folder / "prod.csv", "--score-col", "score", "--reference",
                  folder / "ref.csv", "--ref-label-col", "label", "--n-chunks", "2", "--seed",
                  "2", "--metrics", "accuracy,roc_auc", "--summary", out)
    assert run.returncode == 0, run.stderr
    read = {".csv": pd.read_csv, ".parquet": pd.read_parquet,
            ".json": lambda p: pd.read_json(p, precise_float=True)}[suffix]
    got = read(out)
    expected = be.cbpe(prod["score"], reference=(ref["score"], ref["label"]), n_chunks=2,
                       random_seed=2, metrics=["accuracy", "roc_auc"]).summary().reset_index()
    assert got["chunk"].astype(str).tolist() == expected["chunk"].tolist()
    assert got["metric"].tolist() == expected["metric"].tolist()
    for column in ("mean", "sd", "lower", "upper"):
        np.testing.assert_array_equal(got[column], expected[column])  # every digit


def test_summary_needs_a_known_suffix_before_any_work(command, frames, tmp_path):
    run = command("cbpe", frames[0] / "prod.csv", "--score-col", "score", "--summary",
                  tmp_path / "summary.xlsx")
    assert run.returncode == 2 and "--summary: the file's suffix names its format" in run.stderr
