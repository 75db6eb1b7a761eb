"""The bayeval command: in this process through ``main(argv)`` (the ``command`` fixture), and
once per subcommand end to end, the installed command in a subprocess (``command_line``)."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be
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


# ------------------------------------------------------------------------------------ labelled
def test_labelled_equals_the_function(command, tmp_path):
    from bayeval import datasets

    d = datasets.breast_cancer()
    frame = pd.DataFrame({"score": d.scores, "label": d.labels,
                          "pred": (d.scores >= 0.3).astype(int)})
    frame.to_csv(tmp_path / "labelled.csv", index=False)
    for options, kwargs in [(["--score-col", "score", "--threshold", "0.3"], {"scores": "score",
                                                                                "threshold": 0.3}),
                            (["--pred-col", "pred"], {"y_pred": "pred"})]:
        run = command("labelled", tmp_path / "labelled.csv", "--label-col", "label", *options,
                      "--metrics", "accuracy,recall", "--prior", "0.5,0.5", "--summary",
                      tmp_path / "s.csv")
        assert run.returncode == 0 and run.stderr == "", run.stderr
        expected = be.labelled(labels="label", data=frame, metrics=["accuracy", "recall"],
                               prior=(0.5, 0.5), **kwargs).summary().reset_index()
        got = pd.read_csv(tmp_path / "s.csv")
        assert got["metric"].tolist() == ["accuracy", "recall"]
        for name in ("mean", "lower", "upper"):
            np.testing.assert_array_equal(got[name], expected[name])


@pytest.mark.parametrize(("args", "message"), [
    (["--score-col", "score"], "--label-col is required"),
    (["--score-col", "score", "--label-col", "label"],
     "--label-col: column 'label' of {d}/pemi.csv has 86 empty cells"),
    (["--score-col", "score", "--label-col", "label", "--prior", "1"],
     "--prior: expected 2 number(s), got '1'"),
])
def test_labelled_bad_input_is_a_usage_error(command, files, args, message):
    run = command("labelled", files / "pemi.csv", *args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message.format(d=files) in run.stderr and len(run.stderr.strip().splitlines()) == 1


# -------------------------------------------------------------------------------------- bounds
def test_bounds_label_models_equal_the_function(command, weak_file, tmp_path):
    frame = pd.read_csv(weak_file)
    rng = np.random.default_rng(3)
    probs = rng.dirichlet([2, 2], len(frame))
    frame["lm_0"], frame["lm_1"] = probs[:, 0], probs[:, 1]
    path = tmp_path / "weak.csv"
    frame.to_csv(path, index=False)
    weak = ["lf1", "lf2", "lf3"]
    for option, label_model in [("majority_vote", "majority_vote"), ("lm_*", probs),
                                ("lm_0,lm_1", probs)]:
        run = command("bounds", path, "--pred-col", "pred", "--weak-cols", ",".join(weak),
                      "--label-model", option, "--metrics", "accuracy", "--netcdf",
                      tmp_path / "b.nc")
        assert run.returncode == 0, run.stderr
        expected = be.bounds("pred", weak, data=frame, label_model=label_model,
                             metrics=["accuracy"]).closed_form
        got = load(tmp_path / "b.nc").closed_form
        for name in ("lower_bound", "upper_bound", "lower", "upper"):
            np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=1e-12)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3",
                  "--label-model", "lm_0")
    assert run.returncode == 2 and "--label-model: dawid_skene, majority_vote, or" in run.stderr


def test_bounds_gold_labels_go_to_model_m3(command, weak_file, tmp_path, monkeypatch):
    """--gold-col passes the gold labels (NaN where unknown) and model m3; it needs the PyMC
    model (sampled elsewhere: tests/methods/bounds)."""
    frame = pd.read_csv(weak_file)
    frame["gold"] = np.where(np.arange(len(frame)) % 10 == 0, frame["pred"], np.nan)
    path = tmp_path / "gold.csv"
    frame.to_csv(path, index=False)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3",
                  "--gold-col", "gold")
    assert run.returncode == 2 and "--gold-col: the gold labels enter the PyMC model m3; " \
                                   "add --method pymc" in run.stderr
    seen = {}

    def bounds(y_pred, weak, **kwargs):
        seen.update(kwargs)
        raise ValueError("stop here")

    monkeypatch.setattr(be, "bounds", bounds)
    run = command("bounds", path, "--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3",
                  "--gold-col", "gold", "--method", "pymc")
    assert run.returncode == 2 and "stop here" in run.stderr
    assert seen["model"] == "m3" and seen["method"] == "pymc"
    np.testing.assert_array_equal(seen["labels"], frame["gold"].to_numpy())


# ----------------------------------------------------------------------------------------- mvu
@pytest.fixture(scope="module")
def mvu_files(tmp_path_factory):
    """A logistic regression on three named features, its training rows, and 12 rows to decide
    on, some with a missing feature; the model saved with joblib (and skops if installed)."""
    import joblib
    from sklearn.linear_model import LogisticRegression

    folder = tmp_path_factory.mktemp("mvu")
    rng = np.random.default_rng(7)
    train = pd.DataFrame(rng.multivariate_normal([0, 0, 0], [[1, 0.6, 0], [0.6, 1, 0.3],
                                                             [0, 0.3, 1]], 400),
                         columns=["age", "dose", "weight"])
    y = (train.sum(axis=1) + rng.normal(size=400) > 0).astype(int)
    model = LogisticRegression().fit(train, y)
    rows = train.head(12).copy()
    rows.iloc[::3, 1] = np.nan
    rows.iloc[1::4, 0] = np.nan
    rows.insert(0, "patient", [f"p{i}" for i in range(12)])
    train.to_csv(folder / "train.csv", index=False)
    rows.to_csv(folder / "rows.csv", index=False)
    joblib.dump(model, folder / "model.joblib")
    return folder, model, train, rows


def _mvu_expected(model, train, rows, **kwargs):
    features = rows.set_index("patient")[["age", "dose", "weight"]]
    return be.mvu(model, features, train=train, **kwargs)


def test_mvu_from_a_skops_file_equals_the_function(command, mvu_files, tmp_path):
    skops = pytest.importorskip("skops.io")
    folder, model, train, rows = mvu_files
    skops.dump(model, tmp_path / "model.skops")
    run = command("mvu", folder / "rows.csv", "--classifier", tmp_path / "model.skops",
                  "--train", folder / "train.csv", "--id-col", "patient", "--seed", "1",
                  "--summary", tmp_path / "s.parquet", "--decide-threshold", "0.9",
                  "--costs", "age=1,dose=2,weight=1", "--decisions", tmp_path / "d.csv")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    ev = _mvu_expected(model, train, rows, random_seed=1)
    expected = ev.summary()
    got = pd.read_parquet(tmp_path / "s.parquet")
    assert got["instance"].tolist() == [f"p{i}" for i in range(12)]  # the --id-col ids
    for name in ("c_hard", "mean", "lower", "upper"):
        np.testing.assert_array_equal(got[name], expected[name])
    decisions = pd.read_csv(tmp_path / "d.csv")
    want = ev.decide(0.9, costs={"age": 1, "dose": 2, "weight": 1})
    assert decisions["collect"].tolist() == want["collect"].tolist()
    assert decisions["first"].fillna("").tolist() == want["first"].fillna("").tolist()
    assert "collect" in run.stdout and "written" in run.stdout


def test_mvu_refuses_untrusted_skops_types_unless_trusted(command, mvu_files, tmp_path):
    skops = pytest.importorskip("skops.io")
    from sklearn.ensemble import HistGradientBoostingClassifier

    folder, _, train, _ = mvu_files
    model = HistGradientBoostingClassifier(max_iter=5).fit(train, train["age"] > 0)
    skops.dump(model, tmp_path / "hgb.skops")
    untrusted = skops.get_untrusted_types(file=tmp_path / "hgb.skops")
    assert untrusted  # skops does not trust the trees' node arrays by default
    args = ("mvu", folder / "rows.csv", "--classifier", tmp_path / "hgb.skops", "--train",
            folder / "train.csv", "--draws", "50", "--seed", "0")
    run = command(*args)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "holds types that skops does not trust by default: " + ", ".join(untrusted) \
        in run.stderr and "--trust TYPE" in run.stderr
    trusted = [a for t in untrusted for a in ("--trust", t)]
    for extra in (trusted, ["--trust-all"]):
        run = command(*args, *extra)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        assert "c_hard" in run.stdout


def test_mvu_reads_pickle_only_with_unsafe_pickle(command, mvu_files, tmp_path):
    folder, model, train, rows = mvu_files
    args = ("mvu", folder / "rows.csv", "--classifier", folder / "model.joblib", "--train",
            folder / "train.csv", "--id-col", "patient", "--netcdf", tmp_path / "m.nc")
    run = command(*args)
    assert run.returncode == 2 and "is a pickle file, which runs any code" in run.stderr
    assert "--unsafe-pickle" in run.stderr and not (tmp_path / "m.nc").exists()
    run = command(*args, "--unsafe-pickle")
    assert run.returncode == 0, run.stderr
    assert "UserWarning: --unsafe-pickle: loading" in run.stderr  # the one line of warning
    got = load(tmp_path / "m.nc").summary()
    np.testing.assert_array_equal(got["c_hard"], _mvu_expected(model, train, rows).summary()[
        "c_hard"])


def test_mvu_without_skops_names_the_extra(command, mvu_files, tmp_path, monkeypatch):
    import sys

    (tmp_path / "model.skops").write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "skops", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "skops.io", None)
    run = command("mvu", mvu_files[0] / "rows.csv", "--classifier", tmp_path / "model.skops")
    assert run.returncode == 2
    assert "reading a skops file needs skops: pip install 'bayeval[mvu-cli]'" in run.stderr


def test_mvu_plans_groups_in_the_decisions_and_the_report(command, mvu_files, tmp_path):
    folder, model, train, rows = mvu_files
    run = command("mvu", folder / "rows.csv", "--classifier", folder / "model.joblib",
                  "--unsafe-pickle", "--train", folder / "train.csv", "--id-col", "patient",
                  "--seed", "1", "--decide-threshold", "0.95", "--costs", "blood=2,weight=1",
                  "--groups", "blood=age,dose", "--decisions", tmp_path / "d.csv",
                  "--report", tmp_path / "r.html")
    assert run.returncode == 0, run.stderr
    costs, groups = {"blood": 2, "weight": 1}, {"blood": ["age", "dose"]}
    ev = _mvu_expected(model, train, rows, random_seed=1)
    want = ev.decide(0.95, costs=costs, groups=groups)
    got = pd.read_csv(tmp_path / "d.csv")
    assert got["plan"].fillna("").tolist() == want["plan"].tolist()
    assert "blood" in set(got["first"].dropna()) and "blood" in run.stdout
    np.testing.assert_allclose(got["p_flip_first"], want["p_flip_first"], rtol=1e-12)
    html = (tmp_path / "r.html").read_text()
    plan = ev.decide(0.9, costs=costs, groups=groups)  # the report's level
    assert '<th scope="col" class="text">plan</th>' in html
    assert plan["collect"].any() and all(
        f">{p}</td>" in html for p in plan.loc[plan["collect"], "plan"])
    # --costs with --report alone: the plan in the report, no decisions printed
    run = command("mvu", folder / "rows.csv", "--classifier", folder / "model.joblib",
                  "--unsafe-pickle", "--train", folder / "train.csv", "--costs", "1",
                  "--report", tmp_path / "r2.html")
    assert run.returncode == 0, run.stderr
    assert "p_flip_first" in (tmp_path / "r2.html").read_text() and "collect" not in run.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--feature-cols", "age,dose,height"], "--feature-cols: column 'height' is not in"),
    (["--decide-threshold", "0.9", "--groups", "blood=age,dose"], "--groups: give --costs too"),
    (["--decide-threshold", "0.9", "--costs", "1", "--groups", "blood=age,dose;blood=weight"],
     "--groups: group=feature,feature items separated by ';', each group named once"),
    (["--decide-threshold", "0.9", "--costs", "1", "--groups", "blood="],
     "--groups: group=feature,feature items"),
    (["--decide-threshold", "0.9", "--costs", "1", "--groups", "blood=age,height"],
     "groups: group 'blood' names 'height', which is not a feature"),
    (["--decide-threshold", "0.9", "--costs", "1", "--groups", "a=age,dose;b=dose"],
     "feature 'dose' is in groups 'a' and 'b'"),
    (["--costs", "1", "--groups", "a=age"], "--costs: give --decide-threshold or --collect-cost"
                                            ", or --report"),
    (["--collect-cost", "0.1", "--costs", "age=1,dose"],
     "--costs: one number (the cost of every feature) or feature=cost pairs"),
    (["--costs", "1"], "--costs: give --decide-threshold or --collect-cost"),
    (["--decide-threshold", "0.9", "--decisions", "{t}/d.xlsx"],
     "--decisions: the file's suffix names its format"),
    (["--decisions", "{t}/d.csv"], "--decisions: give --decide-threshold or --collect-cost"),
    (["--id-col", "nope"], "--id-col: column 'nope' is not in"),
])
def test_mvu_bad_options_are_usage_errors(command, mvu_files, tmp_path, args, message):
    folder = mvu_files[0]
    run = command("mvu", folder / "rows.csv", "--classifier", folder / "model.joblib",
                  "--unsafe-pickle", "--train", folder / "train.csv",
                  *(a.format(t=tmp_path) for a in args))
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stderr


# ---------------------------------------------------------------------------------- exit codes
def test_exit_codes_alert_usage_internal(command, cbpe_files, monkeypatch):
    """1 when an estimate is outside its alert thresholds (0 with --no-fail-on-alert), 2 for
    bad usage, 3 for an internal error."""
    from bayeval.cli import EXIT_ALERT, EXIT_ERROR, EXIT_OK, EXIT_USAGE

    assert (EXIT_OK, EXIT_ALERT, EXIT_USAGE, EXIT_ERROR) == (0, 1, 2, 3)
    args = ("cbpe", cbpe_files / "prod.parquet", "--score-col", "score", "--metrics",
            "accuracy", "--n-chunks", "2")
    run = command(*args, "--alert-thresholds", "accuracy=0.99:")  # breast cancer: about 0.96
    assert run.returncode == 1 and "alerts: 2 estimate(s) outside their thresholds" in run.stdout
    assert run.stderr == ""
    assert command(*args, "--alert-thresholds", "accuracy=0.99:",
                   "--no-fail-on-alert").returncode == 0
    assert command(*args, "--alert-thresholds", "accuracy=0.5:").returncode == 0
    assert command(*args, "--n-chunks", "x").returncode == 2

    def broken(*a, **k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(be, "cbpe", broken)
    run = command(*args)
    assert run.returncode == 3
    assert run.stderr.strip() == "bayeval cbpe: internal error: RuntimeError: a bug"
