"""The bayeval command: in this process through ``main(argv)`` (the ``command`` fixture), and
once per subcommand end to end, the installed command in a subprocess (``command_line``)."""

import numpy as np
import pandas as pd
import pytest

from bayeval.evaluation import load


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same judge and PEMI data as CSV and Parquet, and bad files."""
    from bayeval import datasets

    folder = tmp_path_factory.mktemp("cli")
    judge = datasets.noisy_judge(150, 1000, random_seed=3)
    human = np.r_[judge.y, np.full(judge.yhat_unlabeled.size, np.nan)]
    frame = pd.DataFrame({"human": human, "llm": np.r_[judge.yhat, judge.yhat_unlabeled]})
    frame.to_csv(folder / "judge.csv", index=False)
    frame.to_parquet(folder / "judge.parquet")
    d = datasets.breast_cancer()
    masked = datasets.mask_labels(d.labels, p_m=0.3, random_seed=1).labels
    pd.DataFrame({"score": d.scores, "label": masked}).to_csv(folder / "pemi.csv", index=False)
    (folder / "empty.csv").write_text("")
    pd.DataFrame({"score": ["0.2", "high"], "label": [0, 1]}).to_csv(folder / "text.csv",
                                                                     index=False)
    return folder


@pytest.fixture(scope="module")
def cbpe_files(tmp_path_factory):
    """A labelled reference (CSV) and 200 production scores (Parquet) of the breast-cancer
    classifier."""
    from bayeval import datasets

    folder = tmp_path_factory.mktemp("cbpe")
    d = datasets.breast_cancer()
    pd.DataFrame({"score": d.scores, "label": d.labels}).to_csv(folder / "ref.csv", index=False)
    pd.DataFrame({"score": d.scores[:200]}).to_parquet(folder / "prod.parquet")
    return folder


@pytest.fixture(scope="module")
def weak_file(tmp_path_factory):
    """Predictions and the votes of three labelling functions (CSV)."""
    from bayeval import datasets

    w = datasets.weak_labels(1000, min_votes=1, random_seed=2)
    path = tmp_path_factory.mktemp("bounds") / "weak.csv"
    pd.DataFrame(w.weak_labels, columns=["lf1", "lf2", "lf3"]).assign(pred=w.y_pred).to_csv(
        path, index=False)
    return path


# ---------------------------------------------------------------- end to end, one per command
def test_cbpe_end_to_end(command_line, cbpe_files, command):
    args = ("cbpe", cbpe_files / "prod.parquet", "--score-col", "score", "--reference",
            cbpe_files / "ref.csv", "--ref-label-col", "label", "--chunk-size", "50",
            "--seed", "0")  # the calibrator is chosen by randomly split cross-validation
    run = command_line(*args)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "[150:199]" in run.stdout and "all" in run.stdout
    assert run.stdout == command(*args).stdout  # in process: the same


def test_pemi_end_to_end(command_line, files, tmp_path):
    run = command_line("pemi", files / "pemi.csv", "--score-col", "score", "--label-col",
                       "label", "--report", tmp_path / "pemi.html")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "precision" in run.stdout and (tmp_path / "pemi.html").is_file()


def test_judge_end_to_end(command_line, files, tmp_path):
    run = command_line("judge", files / "judge.csv", "--label-col", "human", "--judge-col",
                       "llm", "--method", "all", "--netcdf", tmp_path / "judge.nc")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "eif" in run.stdout and "rogan_gladen" in run.stdout
    assert (tmp_path / "judge.nc").is_file()


def test_bounds_end_to_end(command_line, weak_file):
    run = command_line("bounds", weak_file, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "lower_bound" in run.stdout and "accuracy" in run.stdout
    run = command_line("bounds", weak_file, "--pred-col", "pred", "--weak-cols", "lf1,lf9")
    assert run.returncode == 2 and "--weak-cols: column 'lf9' is not in" in run.stderr


# ----------------------------------------------------------------------------------- in process
def test_unknown_command_is_a_usage_error(command):
    run = command("frobnicate")
    assert run.returncode == 2 and "invalid choice" in run.stderr


def test_main_returns_the_exit_code(files, capsys):
    from bayeval.cli import EXIT_OK, EXIT_USAGE, main

    assert main(["judge", str(files / "judge.csv"), "--label-col", "human", "--judge-col",
                 "llm"]) == EXIT_OK
    assert main(["judge", str(files / "judge.csv"), "--label-col", "human"]) == EXIT_USAGE
    shown = capsys.readouterr()
    assert "eif" in shown.out and shown.err.strip() == (
        "bayeval judge: error: --judge-col is required")


@pytest.mark.parametrize("name", ["judge.csv", "judge.parquet"])
def test_judge_from_csv_and_parquet(command, files, name, tmp_path):
    run = command("judge", files / name, "--label-col", "human", "--judge-col", "llm",
                  "--method", "all", "--netcdf", tmp_path / "judge.nc")
    assert run.returncode == 0, run.stderr
    assert "eif" in run.stdout and "rogan_gladen" in run.stdout
    assert (tmp_path / "judge.nc").is_file()


def test_csv_and_parquet_give_the_same_numbers(command, files):
    csv = command("judge", files / "judge.csv", "--label-col", "human", "--judge-col", "llm")
    parquet = command("judge", files / "judge.parquet", "--label-col", "human",
                      "--judge-col", "llm")
    assert csv.returncode == parquet.returncode == 0
    assert csv.stdout == parquet.stdout


def test_pemi_with_a_report(command, files, tmp_path):
    run = command("pemi", files / "pemi.csv", "--score-col", "score", "--label-col", "label",
                  "--report", tmp_path / "pemi.html")
    assert run.returncode == 0, run.stderr
    assert "precision" in run.stdout and (tmp_path / "pemi.html").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["pemi", "{d}/pemi.csv", "--score-col", "prob", "--label-col", "label"],
     "--score-col: column 'prob' is not in"),
    (["pemi", "{d}/text.csv", "--score-col", "score", "--label-col", "label"],
     "--score-col: column 'score' of {d}/text.csv has non-numeric values such as 'high'"),
    (["pemi", "{d}/empty.csv", "--score-col", "score", "--label-col", "label"],
     "DATA: {d}/empty.csv is empty"),
    (["pemi", "{d}/missing.csv", "--score-col", "score", "--label-col", "label"],
     "DATA: no such file"),
    (["judge", "{d}/judge.csv", "--label-col", "human"], "--judge-col is required"),
    (["pemi", "{d}/pemi.csv", "--score-col", "score", "--label-col", "label",
      "--ci-prob", "2"], "ci_prob must lie strictly between 0 and 1"),
    (["cbpe", "{d}/pemi.csv", "--score-col", "score", "--chunk-col", "day"],
     "--chunk-col: column 'day' is not in {d}/pemi.csv (its columns: score, label)"),
    (["judge", "{d}/judge.csv", "--label-col", "human", "--judge-col", "llm", "--group-col",
      "team"], "--group-col: column 'team' is not in {d}/judge.csv (its columns: human, llm)"),
])
def test_bad_input_is_one_line_and_exit_code_2(command, files, args, message):
    run = command(*(a.format(d=files) for a in args))
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message.format(d=files) in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_cbpe_with_a_reference_and_chunks(command, cbpe_files, tmp_path):
    ref = cbpe_files / "ref.csv"
    pd.DataFrame({"p": pd.read_parquet(cbpe_files / "prod.parquet")["score"]}).to_parquet(
        tmp_path / "p.parquet")
    run = command("cbpe", tmp_path / "p.parquet", "--score-col", "p", "--reference", ref,
                  "--ref-label-col", "label", "--chunk-size", "50")
    assert run.returncode == 2 and "--score-col: column 'p' is not in" in run.stderr
    prod = cbpe_files / "prod.parquet"
    run = command("cbpe", prod, "--score-col", "score", "--reference", ref, "--ref-label-col",
                  "label", "--chunk-size", "50")
    assert run.returncode == 0, run.stderr
    assert "[150:199]" in run.stdout and "all" in run.stdout
    calibrated = run.stdout
    run = command("cbpe", prod, "--score-col", "score", "--reference", ref, "--ref-label-col",
                  "label", "--chunk-size", "50", "--noise", "binning")
    assert run.returncode == 0, run.stderr
    assert "[150:199]" in run.stdout and run.stdout != calibrated  # wider intervals
    run = command("cbpe", prod, "--score-col", "score", "--noise", "beta")
    assert run.returncode == 2 and "noise='beta' needs kappa" in run.stderr
    for calibration in ("--calibration-uncertainty", "--no-calibration-uncertainty"):
        run = command("cbpe", prod, "--score-col", "score", "--reference", ref,
                      "--ref-label-col", "label", "--chunk-size", "50", "--seed", "0",
                      "--netcdf", tmp_path / f"{calibration}.nc", calibration)
        assert run.returncode == 0, run.stderr
    posterior, plugin = (load(tmp_path / f"--{flag}.nc") for flag in
                         ("calibration-uncertainty", "no-calibration-uncertainty"))
    assert posterior.meta["calibration"] == plugin.meta["calibration"]
    if posterior.meta["calibration"] != "none":  # a fitted map: its posterior or the plug-in
        # the shared error of the map widens every law of the whole period; a chunk of 50 rows
        # can narrow one (E[Var | map] < Var at the fitted map, when draws move p toward 0, 1)
        ratio = posterior.closed_form["sd"] / plugin.closed_form["sd"]
        assert (ratio.sel(chunk="all") > 1).all() and float(ratio.median()) > 1
        assert any("conditional on the calibration map" in w for w in plugin.warnings)


def test_bounds_from_weak_label_columns(command, weak_file):
    run = command("bounds", weak_file, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3")
    assert run.returncode == 0, run.stderr
    assert "lower_bound" in run.stdout and "accuracy" in run.stdout
    run = command("bounds", weak_file, "--pred-col", "pred", "--weak-cols", "lf1,lf9")
    assert run.returncode == 2 and "--weak-cols: column 'lf9' is not in" in run.stderr


# ----------------------------------------------------------------------------------- progress
PROGRESS = "Progress"  # the header of PyMC's progress table


def sampling(files, *options):
    """A small NUTS run: the judge's model A."""
    return ("judge", files / "judge.csv", "--label-col", "human", "--judge-col", "llm",
            "--method", "pymc", "--seed", "1", *options)


@pytest.mark.xdist_group("judge_pymc")  # with the judge's model tests: one compile
def test_progress_on_request_goes_to_stderr_and_not_by_default_off_a_terminal(command, files):
    run = command(*sampling(files, "--progress"))
    assert run.returncode == 0, run.stderr
    assert PROGRESS in run.stderr and "━" in run.stderr  # the bars, one per chain
    assert PROGRESS not in run.stdout and "theta" in run.stdout  # stdout: the results only
    quiet = command(*sampling(files))
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout == run.stdout


@pytest.mark.xdist_group("judge_pymc")  # with the judge's model tests: one compile
def test_progress_by_default_on_a_terminal_unless_no_progress(command_on_a_terminal, files):
    code, out, terminal = command_on_a_terminal(*sampling(files))
    assert code == 0 and PROGRESS in terminal and "theta" in out
    code, out, terminal = command_on_a_terminal(*sampling(files, "--no-progress"))
    assert code == 0 and terminal == "" and "theta" in out


def test_progress_beyond_nuts_mvu_imputation(capsys):
    """The switch that ``--progress`` turns on (``bayeval.sampling.DEFAULTS``) also shows MVU's
    imputation and the classifier's pass over the imputations, on stderr only; off, nothing.
    The numbers do not depend on it. (CBPE's posterior-predictive bar: test_cbpe_models.py.)"""
    import argparse

    import bayeval as be
    from bayeval import sampling
    from bayeval.cli import _progress

    rng = np.random.default_rng(0)
    train = rng.normal(size=(200, 3))
    rows = train[:6].copy()
    rows[:, 0] = np.nan

    def nonlinear(x):  # not linear: MVU imputes and pushes the draws through it
        return 1 / (1 + np.exp(-np.tanh(x.sum(axis=1))))

    def run(progress):
        with _progress(argparse.Namespace(progress=progress)):
            ev = be.mvu(nonlinear, rows, train=train, method="mc", draws=50, random_seed=0)
        return ev.summary(), capsys.readouterr()

    summary, shown = run(True)
    assert sampling.DEFAULTS["progressbar"] is False  # restored
    assert shown.out == ""
    assert "MVU: imputation [" + "#" * 30 + "] 6/6" in shown.err
    assert "MVU: classifier on the imputations [" + "#" * 30 + "] 6/6" in shown.err
    quiet_summary, quiet = run(False)
    assert quiet.out == "" and quiet.err == ""
    pd.testing.assert_frame_equal(summary, quiet_summary)


def test_pemi_calibration_uncertainty_switch(command, files, tmp_path):
    """``pemi --calibration-uncertainty`` (the default) mixes over the posterior of the map
    fitted on the labelled rows; ``--no-calibration-uncertainty`` gives the plug-in: the same
    Platt map, smaller sds and a warning that the intervals are conditional on it."""
    for flag in ("--calibration-uncertainty", "--no-calibration-uncertainty"):
        run = command("pemi", files / "pemi.csv", "--score-col", "score", "--label-col",
                      "label", "--seed", "0", "--netcdf", tmp_path / f"{flag}.nc", flag)
        assert run.returncode == 0, run.stderr
    posterior, plugin = (load(tmp_path / f"--{flag}.nc") for flag in
                         ("calibration-uncertainty", "no-calibration-uncertainty"))
    assert posterior.meta["calibration_uncertainty"] and not plugin.meta[
        "calibration_uncertainty"]
    assert int(posterior.tree["data"]["map_draws"]) > 0
    assert int(plugin.tree["data"]["map_draws"]) == 0
    # sd, not width: the exact laws' intervals end on a lattice of values
    assert (posterior.closed_form["sd"].values > plugin.closed_form["sd"].values).all()
    assert any("conditional on the fitted calibration map" in w for w in plugin.warnings)
    assert not any("conditional on the fitted" in w for w in posterior.warnings)


# --------------------------------------------------------------- usage errors before any work
@pytest.mark.parametrize(("option", "where", "message"), [
    ("--report", "{t}/missing/r.html", "the folder {t}/missing does not exist"),
    ("--report", "{t}", "is a folder; give the path of a file"),
    ("--netcdf", "{t}/file.txt/ev.nc", "{t}/file.txt is a file, not a folder"),
])
def test_output_paths_are_checked_before_any_work(command, files, tmp_path, monkeypatch,
                                                  option, where, message):
    import bayeval as be

    (tmp_path / "file.txt").write_text("x")
    monkeypatch.setattr(be, "judge", lambda *a, **k: pytest.fail("computed before the check"))
    run = command("judge", files / "judge.csv", "--label-col", "human", "--judge-col", "llm",
                  option, where.format(t=tmp_path))
    assert run.returncode == 2 and message.format(t=tmp_path) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_demo_out_that_is_a_file_is_a_usage_error(command, tmp_path):
    (tmp_path / "taken").write_text("x")
    run = command("demo", "--out", tmp_path / "taken")
    assert run.returncode == 2 and "is a file, not a folder" in run.stderr


def test_a_csv_naming_a_column_twice_is_refused(command, tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("score,label,score\n0.9,1,0.2\n0.3,,0.8\n")
    run = command("pemi", path, "--score-col", "score", "--label-col", "label")
    assert run.returncode == 2 and "has the column 'score' twice" in run.stderr


def test_bounds_refuses_fractional_codes_instead_of_truncating(command, weak_file, tmp_path):
    frame = pd.read_csv(weak_file).astype(float)
    frame.loc[3, "pred"] = 0.7  # was truncated to 0 (recall 0, exit 0)
    path = tmp_path / "weak.csv"
    frame.to_csv(path, index=False)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3")
    assert run.returncode == 2
    assert "--pred-col: column 'pred' of" in run.stderr and "such as 0.7" in run.stderr
    frame.loc[3, "pred"] = np.inf  # was an internal error (cast to int)
    frame.to_csv(path, index=False)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3")
    assert run.returncode == 2 and "such as inf" in run.stderr
    frame.loc[3, "pred"], frame.loc[5, "lf2"] = 1, 0.5
    frame.to_csv(path, index=False)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3")
    assert run.returncode == 2 and "--weak-cols: column 'lf2'" in run.stderr


def test_blank_group_keys_are_refused(command, files, tmp_path):
    frame = pd.read_csv(files / "judge.csv")
    frame["team"] = np.where(np.arange(len(frame)) % 3 == 0, "", "a")
    path = tmp_path / "groups.csv"
    frame.to_csv(path, index=False)
    run = command("judge", path, "--label-col", "human", "--judge-col", "llm", "--group-col",
                  "team")
    assert run.returncode == 2
    assert "--group-col: column 'team' of" in run.stderr and "blank cell(s)" in run.stderr


def test_argparse_errors_are_one_line(command):
    run = command("cbpe", "x.csv", "--chunk-size", "ten")
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "invalid int value: 'ten'" in run.stderr
