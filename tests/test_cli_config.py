"""``bayeval run CONFIG``: a weekly monitoring job described by a TOML file gives what the same
command line gives, and what ``be.cbpe`` gives on the same tables; the file's errors name its
keys (exit 2, one line)."""

import argparse

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.cli_config import config_argv

#: the weekly job of the tests, as a config file (paths relative to its folder)
WEEKLY = """
command = "cbpe"

[input]
data = "production.csv"
score_col = "score"
label_col = "label"
chunk_col = "timestamp"
reference = "reference.csv"
ref_label_col = "label"

[options]
chunk_period = "W"
late_labels = "{late_labels}"
seed = 0

[output]
summary = "{summary}"
"""


def _weeks(rng, start: str, n_weeks: int, shift_from: int) -> pd.DataFrame:
    """100 calibrated scores a week from ``start``; from week ``shift_from`` on the scores
    crowd toward 0.5, so the model is less sure and less accurate."""
    week = np.repeat(np.arange(n_weeks), 100)
    t0 = pd.Timestamp(start)
    stamps = t0 + pd.to_timedelta(week * 7 + np.tile(np.linspace(0, 6.9, 100), n_weeks),
                                  unit="D")
    scores = np.where(week < shift_from, rng.beta(1.2, 1.2, week.size),
                      rng.beta(6, 6, week.size))
    labels = (rng.random(week.size) < scores).astype(float)
    return pd.DataFrame({"timestamp": stamps.strftime("%Y-%m-%d %H:%M"), "score": scores,
                         "label": labels, "week": week})


@pytest.fixture(scope="module")
def weekly(tmp_path_factory):
    """A reference of 8 weeks and 12 production weeks, drifting from week 7; labels arrive
    for 30 % of the rows of weeks 9-12."""
    rng = np.random.default_rng(12)
    folder = tmp_path_factory.mktemp("weekly")
    ref = _weeks(rng, "2023-11-06", 8, shift_from=99)
    prod = _weeks(rng, "2024-01-01", 12, shift_from=6)
    late = (prod["week"] >= 8) & (rng.random(len(prod)) < 0.3)
    prod["label"] = prod["label"].where(late)
    ref.drop(columns="week").to_csv(folder / "reference.csv", index=False)
    prod.drop(columns="week").to_csv(folder / "production.csv", index=False)
    return folder


def _config(folder, name: str, **fields) -> str:
    path = folder / name
    path.write_text(WEEKLY.format(**fields))
    return path


@pytest.mark.parametrize("late_labels", ["estimate", "report"])
def test_weekly_cbpe_is_the_same_via_the_cli_a_config_file_and_the_function(
        command, weekly, tmp_path, late_labels):
    folder = weekly
    cli = command("cbpe", folder / "production.csv", "--score-col", "score", "--label-col",
                  "label", "--chunk-col", "timestamp", "--chunk-period", "W", "--reference",
                  folder / "reference.csv", "--ref-label-col", "label", "--late-labels",
                  late_labels, "--seed", "0", "--summary", tmp_path / "cli.csv")
    job = command("run", _config(folder, f"{late_labels}.toml", late_labels=late_labels,
                                 summary=f"{late_labels}.csv"))
    prod, ref = pd.read_csv(folder / "production.csv"), pd.read_csv(folder / "reference.csv")
    expected = be.cbpe("score", data=prod, labels="label", chunks="timestamp",
                       chunk_period="W", reference=ref, late_labels=late_labels,
                       random_seed=0).summary().reset_index()
    assert expected["alert"].any()  # the drift fires alerts: both exit with 1
    assert cli.returncode == job.returncode == 1, (cli.stderr, job.stderr)
    assert cli.stderr == job.stderr == ""
    assert "alerts: " in cli.stdout and "alerts: " in job.stdout
    via_cli = pd.read_csv(tmp_path / "cli.csv")
    via_file = pd.read_csv(folder / f"{late_labels}.csv")
    pd.testing.assert_frame_equal(via_cli, via_file)
    assert via_cli["chunk"].tolist() == expected["chunk"].tolist()
    assert via_cli["chunk"].nunique() == 13  # 12 weeks and the whole period
    for name in ("mean", "lower", "upper", "lower_threshold", "upper_threshold", "realized"):
        np.testing.assert_array_equal(via_cli[name], expected[name])
    np.testing.assert_array_equal(via_cli["alert"], expected["alert"])


def test_relative_paths_start_at_the_config_files_folder(command, weekly, tmp_path,
                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)  # elsewhere: the files are found beside the config
    run = command("run", _config(weekly, "moved.toml", late_labels="report",
                                 summary="moved.json"))
    assert run.returncode in (0, 1) and run.stderr == "", run.stderr
    assert (weekly / "moved.json").is_file() and not (tmp_path / "moved.json").exists()


@pytest.mark.parametrize(("text", "message"), [
    ('command = "cbpe"\n[input]\ndata = "production.csv"\nscore_col = "score"\n'
     '[options]\nchunk_perod = "W"\n',
     "{c}: [options] of cbpe has no key 'chunk_perod'; it accepts: method, ci_prob, seed"),
    ('command = "cbpe"\n[input]\ndata = "production.csv"\n[options]\nsummary = "s.csv"\n',
     "has no key 'summary'; it goes in [output]; it accepts:"),
    ('command = "cbpe"\n[inputs]\ndata = "production.csv"\n',
     "{c}: the file has no key 'inputs'; it accepts: command, input, options, output"),
    ('command = "nannyml"\n', "{c}: command must be one of labelled, cbpe, pemi, judge, "
                              "bounds, mvu; got 'nannyml'"),
    ('command = "cbpe"\n[input]\nscore_col = "score"\n', "{c}: [input] data is required"),
    ('command = "cbpe"\n[input]\ndata = "production.csv\n', "{c} is not valid TOML"),
    ('command = "pemi"\n[input]\ndata = "production.csv"\n[options]\n'
     'calibration_uncertainty = "no"\n',
     "[options] calibration_uncertainty is a switch: true or false, got 'no'"),
    ('command = "cbpe"\n[input]\ndata = "production.csv"\n[options]\nmetrics = [["f1"]]\n',
     "[options] metrics takes a string, a number or a list of them"),
    ('command = "cbpe"\n[input]\ndata = "production.csv"\nscore_col = "score"\n'
     '[options]\nchunk_size = "ten"\n',
     "bayeval run: error: {c}: [options] chunk_size: invalid int value: 'ten' "
     "(see bayeval cbpe --help)"),
    ('command = "cbpe"\n[input]\ndata = "production.csv"\nscore_col = "p"\n',
     "bayeval run: error: {c}: [input] score_col: column 'p' is not in"),
    ('command = "cbpe"\n[input]\ndata = "nowhere.csv"\nscore_col = "p"\n',
     "bayeval run: error: {c}: [input] data: no such file: "),
])
def test_config_errors_name_its_keys(command, weekly, text, message):
    config = weekly / "bad.toml"
    config.write_text(text)
    run = command("run", config)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message.format(c=config) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_a_missing_config_file_is_a_usage_error(command, tmp_path):
    run = command("run", tmp_path / "none.toml")
    assert run.returncode == 2
    assert run.stderr.strip() == f"bayeval run: error: CONFIG: no such file: {tmp_path}/none.toml"


def test_switches_and_lists_become_the_command_line(tmp_path):
    """A list is the comma-separated value, true a switch's flag, false its --no- form (or
    nothing); absolute paths stay, relative ones start at the file's folder."""
    folder = tmp_path
    (folder / "job.toml").write_text(
        'command = "mvu"\n[input]\ndata = "/abs/rows.csv"\nclassifier = "m.skops"\n'
        'feature_cols = ["a", "b"]\n[options]\ntrust = ["x.Y", "z.W"]\ntrust_all = false\n'
        'calibration_uncertainty = false\ndraws = 50\n')
    actions = [argparse.Action([], "data"), argparse.Action(["--classifier"], "classifier"),
               argparse.Action(["--feature-cols"], "feature_cols"),
               argparse.Action(["--trust"], "trust"),
               argparse.Action(["--trust-all"], "trust_all", nargs=0),
               argparse.BooleanOptionalAction(["--calibration-uncertainty"],
                                              "calibration_uncertainty"),
               argparse.Action(["--draws"], "draws")]
    argv, _ = config_argv(str(folder / "job.toml"), {"mvu": actions})
    assert argv == ["mvu", "/abs/rows.csv", "--classifier", str(folder / "m.skops"),
                    "--feature-cols", "a,b", "--trust", "x.Y,z.W",
                    "--no-calibration-uncertainty", "--draws", "50"]
