"""The command line with K classes: ``--score-cols`` (a list or a prefix) equals ``be.cbpe`` on
the same DataFrame, labels and predictions named by the classes; its errors."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.evaluation import load

CLASSES = ["A", "B", "tie"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(5)
    path = tmp_path_factory.mktemp("classes")

    def table(n, labelled):
        p = rng.dirichlet([2, 2, 1], n)
        y = np.array([rng.choice(3, p=row) for row in p])
        frame = pd.DataFrame(p, columns=CLASSES)
        frame["label"] = np.array(CLASSES, dtype=object)[y]
        if not labelled:
            frame.loc[rng.random(n) < 0.7, "label"] = None
        return frame

    ref, prod = table(400, True), table(300, False)
    for name, frame in (("ref", ref), ("prod", prod)):
        frame.to_csv(path / f"{name}.csv", index=False)  # columns named by the classes
        frame.rename(columns={c: f"p_{c}" for c in CLASSES}).to_csv(path / f"{name}_p.csv",
                                                                     index=False)
    return path, ref, prod


@pytest.mark.parametrize(("suffix", "spec"), [("_p", "p_*"), ("", "A,B,tie")])
def test_score_cols_equal_cbpe_on_the_same_frame(command, files, tmp_path, suffix, spec):
    path, ref, prod = files
    out = tmp_path / "ev.nc"
    run = command("cbpe", path / f"prod{suffix}.csv", "--score-cols", spec, "--label-col",
                  "label", "--reference", path / f"ref{suffix}.csv", "--n-chunks", "3",
                  "--seed", "1", "--netcdf", out, "--no-fail-on-alert")  # alerts: exit 0
    assert run.returncode == 0, run.stderr
    expected = be.cbpe(prod[CLASSES], labels=prod["label"],
                       reference=(ref[CLASSES], ref["label"]), n_chunks=3, random_seed=1)
    got = load(out)
    for name in ("mean", "lower", "upper", "realized"):
        np.testing.assert_allclose(got.closed_form[name], expected.closed_form[name],
                                   rtol=0, atol=1e-12)
    assert list(got.closed_form["class"].values) == CLASSES


@pytest.mark.parametrize(("args", "message"), [
    (["--score-cols", "q_*"], "--score-cols: 'q_*' matches 0 column(s)"),
    (["--score-cols", "A"], "--score-cols: give at least 2 distinct columns"),
    (["--score-cols", "A,B,nope"], "--score-cols: column 'nope' is not in"),
    (["--score-cols", "A,B,tie", "--score-col", "A"], "give --score-col (two classes) or "
                                                      "--score-cols"),
])
def test_score_cols_errors_are_one_line_and_exit_code_2(command, files, args, message):
    run = command("cbpe", files[0] / "prod.csv", *args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mnar", [None, "A=0.5;tie=0,1"])
def test_pemi_score_cols_equal_pemi_on_the_same_frame(command, files, tmp_path, mnar):
    """pemi --score-cols: the empty label cells are the missing labels; --mnar names classes."""
    path, _, prod = files
    out = tmp_path / "ev.nc"
    extra = ["--mnar", mnar] if mnar else []
    run = command("pemi", path / "prod_p.csv", "--score-cols", "p_*", "--label-col", "label",
                  "--seed", "2", "--netcdf", out, *extra)
    assert run.returncode == 0, run.stderr
    shifts = {"A": 0.5, "tie": (0.0, 1.0)} if mnar else None
    expected = be.pemi(prod[CLASSES], prod["label"], mnar=shifts, random_seed=2)
    got = load(out)
    for name in ("mean", "lower", "upper"):
        np.testing.assert_allclose(got.closed_form[name], expected.closed_form[name],
                                   rtol=0, atol=1e-12)
    assert list(got.closed_form["class"].values) == CLASSES


def test_pemi_class_shifts_must_name_classes(command, files):
    run = command("pemi", files[0] / "prod.csv", "--score-cols", "A,B,tie", "--label-col",
                  "label", "--mnar", "0.5")
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "--mnar: with --score-cols give 'class=delta'" in run.stderr
