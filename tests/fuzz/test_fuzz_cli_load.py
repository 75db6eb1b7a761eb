"""Fuzzing every CLI subcommand through ``main(argv)`` in this process, and ``be.load``.

Random valid files exit 0; random bad files, columns and options exit 2 with one line on
stderr and no traceback. Random damage to a saved evaluation gives one ValueError naming the
file, at once.
"""

import contextlib
import functools
import io
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import bayeval as be
from bayeval import files
from bayeval.cli import main
from tests.fuzz.budget import budget

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

COMMANDS = {
    "cbpe": ["--score-col", "score"],
    "pemi": ["--score-col", "score", "--label-col", "label"],
    "judge": ["--label-col", "label", "--judge-col", "judge"],
    "bounds": ["--pred-col", "pred", "--weak-cols", "lf1,lf2,lf3"],
}


def run(argv: list[str]) -> tuple[int, str]:
    """main(argv): exit code (argparse's included) and stderr."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, err.getvalue()


@st.composite
def frames(draw):
    """A table with every column the commands read: scores, labels (some blank), a judge,
    predictions and three labelling functions' votes."""
    n = draw(st.integers(6, 40))
    rows = st.lists(st.integers(0, 1), min_size=n, max_size=n)
    score = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    label = draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=n, max_size=n))
    votes = {f"lf{i}": draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n))
             for i in (1, 2, 3)}
    return pd.DataFrame({"score": score, "label": label, "judge": draw(rows),
                         "pred": draw(rows), **votes})


@budget(12, long=80)
@given(frame=frames(), command=st.sampled_from(sorted(COMMANDS)))
def test_cli_valid_files(frame, command):
    """Exit 0, or a clear one-line usage error about the data (e.g. a single class)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.csv"
        frame.to_csv(path, index=False)
        code, err = run([command, str(path), *COMMANDS[command], "--seed", "0"])
    assert code in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


BAD_CELLS = ["x", "", "0.5.1", "inf", "-1", "2", "1e400", " "]


@budget(15, long=150)
@given(frame=frames(), command=st.sampled_from(sorted(COMMANDS)), data=st.data())
def test_cli_bad_input_is_one_line_and_exit_2(frame, command, data):
    """A bad cell, a missing column, a bad option value or an unwritable output."""
    argv = [command, "DATA", *COMMANDS[command]]
    how = data.draw(st.sampled_from(["cell", "column", "option", "output"]))
    with tempfile.TemporaryDirectory() as tmp:
        if how == "cell":
            col = data.draw(st.sampled_from([c for c in frame.columns
                                             if c in " ".join(COMMANDS[command])]))
            cell = data.draw(st.sampled_from(BAD_CELLS))
            assume(not (col == "label" and cell in ("", " ")))  # a missing label
            assume(not (col.startswith("lf") and cell in ("-1",)))  # an abstention
            assume(not (col == "judge" and cell in ("-1", "2")))  # an ordinal judge
            frame = frame.astype(object)
            frame.loc[data.draw(st.integers(0, len(frame) - 1)), col] = cell
        elif how == "column":
            i = argv.index(data.draw(st.sampled_from(argv[2::2])))
            argv[i + 1] = "nope"
        elif how == "option":
            argv += data.draw(st.sampled_from([["--ci-prob", "1.5"], ["--ci-prob", "x"],
                                               ["--seed", "-1"], ["--method", "nope"],
                                               ["--unknown"]]))
        else:
            argv += data.draw(st.sampled_from([["--report", f"{tmp}/no/r.html"],
                                               ["--netcdf", tmp], ["--report", f"{tmp}/f/x"]]))
            (Path(tmp) / "f").write_text("x")
        path = Path(tmp) / "data.csv"
        frame.to_csv(path, index=False)
        argv[1] = str(path)
        code, err = run(argv)
    if how == "cell" and command == "bounds" and code == 0:
        return  # a vote of 2 is a third class of the labelling functions: valid
    assert code == 2, (argv, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@functools.cache
def saved() -> tuple[be.Evaluation, bytes]:
    """An evaluation and the bytes of its file."""
    ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    with tempfile.TemporaryDirectory() as tmp:
        return ev, Path(ev.to_netcdf(Path(tmp) / "ev.nc")).read_bytes()


def _load(raw: bytes) -> tuple[Path, float, object]:
    """be.load of ``raw`` written to a file: the path, the seconds taken, the result or error."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ev.nc"
        path.write_bytes(raw)
        start = time.perf_counter()
        try:
            out = be.load(path)
        except ValueError as err:
            out = err
        return path, time.perf_counter() - start, out


@budget(25, long=600)
@given(data=st.data(), how=st.sampled_from(["flip", "insert"]))
def test_load_of_damaged_files(data, how):
    """Flipped or inserted bytes: one ValueError naming the file, at once (the checksum)."""
    clean = saved()[1]
    raw = bytearray(clean)
    at = data.draw(st.integers(0, len(raw) - 1))
    if how == "flip":
        raw[at] ^= data.draw(st.integers(1, 255))
    else:
        raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    path, seconds, out = _load(bytes(raw))
    if at >= len(clean) - len(files.TRAILER) - 65 and isinstance(out, be.Evaluation):
        assert out == saved()[0]  # the checksum itself damaged: the intact data is read
        return
    assert isinstance(out, ValueError) and f"cannot load {path}" in str(out), out
    assert seconds < 1.0


@budget(3, long=8)  # a worker per example: 2 s each
@given(data=st.data())
def test_load_of_cut_files(data):
    """A cut file has lost its checksum: it is parsed in a worker, and gives a ValueError naming
    the file, or (cut in the checksum only) the evaluation itself."""
    ev, clean = saved()
    at = data.draw(st.integers(0, len(clean) - 1))
    path, _, out = _load(clean[:at])
    if isinstance(out, be.Evaluation):
        assert at > len(clean) - len(files.TRAILER) - 66 and out == ev
    else:
        assert isinstance(out, ValueError) and f"cannot load {path}" in str(out), out


@budget(8, long=200)
@given(content=st.binary(max_size=200))
def test_load_of_random_bytes(content):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.nc"
        path.write_bytes(content)
        with pytest.raises(ValueError, match=f"cannot load {path}"):
            be.load(path)


def test_load_round_trip_is_exact(tmp_path):
    ev, clean = saved()
    (tmp_path / "ev.nc").write_bytes(clean)
    assert be.load(tmp_path / "ev.nc") == ev
