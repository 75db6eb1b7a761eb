"""Test configuration: the repository root on sys.path (for models/), a headless backend, one
xdist worker per module with a module-scoped fixture, the fitted evaluations shared by the plot
and report tests, and the bayeval command run in this process (``command``,
``command_on_a_terminal``) or in a subprocess (``command_line``)."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: no oversubscription

import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTENSOR_FLAGS", f"compiledir={ROOT / '.cache' / 'pytensor'}")
# The tests' models are small: compiling their C code at -O1 instead of PyTensor's -O3 takes a
# third of the time on a fresh checkout and samples them about as fast (the library's users keep
# PyTensor's defaults). Statistical tests hold for any correct build: they use Monte-Carlo errors.
if "gcc__cxxflags" not in os.environ["PYTENSOR_FLAGS"]:
    os.environ["PYTENSOR_FLAGS"] += ",gcc__cxxflags=-O1"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    """The tests of a module that share a module-scoped fixture (a fit, a NUTS run, a demo) run
    on one xdist worker, so that the fixture is computed once rather than on every worker that
    gets one of them. Tests already in an ``xdist_group`` keep theirs."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(d and d[-1].scope == "module" for d in defs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist sends the ids to the scheduler
def pytest_collection_finish(session):
    """On an xdist worker with ``--dist loadgroup``: the group of each test goes to the scheduler
    as an ``@group`` suffix of its id, which pytest-xdist 3.8 writes where pytest 9.2 no longer
    reads it (pytest-dev/pytest-xdist#1386); the groups were then ignored and a module's
    fixture computed on both workers. Where the suffix is missing, set it as xdist would."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                 for m in item.iter_markers("xdist_group")}
        ident = getattr(item, "_id", None)
        if names and ident is not None and "@" not in item.nodeid:
            item._id = type(ident).parse(f"{item.nodeid}@{'_'.join(sorted(names))}")


# shared by the plot and report tests: the breast-cancer classifier evaluated with all labels
@pytest.fixture(scope="module")
def data():
    from bayeval import datasets

    return datasets.breast_cancer()


@pytest.fixture(scope="module")
def exact(data):
    import bayeval as be

    return be.labelled(data.scores, data.labels)


@pytest.fixture(scope="module")
def both(data):
    import bayeval as be

    return be.labelled(data.scores, data.labels, method="both", random_seed=5,
                       sample_kwargs={"draws": 300, "tune": 300})


# ------------------------------------------------------------------------ the bayeval command
class Run:
    """What a run of the ``bayeval`` command gave: its exit code, stdout and stderr."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


#: what Python hides by default; any other warning reaches the command's stderr
_HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def run_main(*args) -> int:
    """``bayeval.cli.main(args)`` in this process, as the command would end: its exit code
    (argparse's usage errors included), and the warnings a user would see written to stderr."""
    import warnings

    from bayeval.cli import main

    with warnings.catch_warnings(record=True) as caught:
        for category in _HIDDEN:
            warnings.filterwarnings("ignore", category=category)
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:
            code = stop.code
    for w in caught:
        sys.stderr.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    return code


@pytest.fixture
def command(capfd):
    """``command(*args)``: the bayeval command run in this process through ``main(argv)``, with
    its exit code and everything written to stdout and stderr (file-descriptor level)."""

    def run(*args) -> Run:
        capfd.readouterr()
        code = run_main(*args)
        out, err = capfd.readouterr()
        return Run(code, out, err)

    return run


@pytest.fixture
def command_on_a_terminal(monkeypatch):
    """``command_on_a_terminal(*args)``: the command run in this process with stderr on a
    pseudo-terminal; (exit code, stdout, what the terminal got)."""
    import io
    import threading

    def run(*args) -> tuple[int, str, str]:
        master, slave = os.openpty()
        seen = bytearray()

        def read():  # drain the terminal while the command writes to it
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the terminal was closed
                    break
                if not chunk:
                    break
                seen.extend(chunk)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        out = io.StringIO()
        with open(slave, "w", encoding="utf-8") as terminal, monkeypatch.context() as patch:
            patch.setattr(sys, "stdout", out)
            patch.setattr(sys, "stderr", terminal)
            code = run_main(*args)
        reader.join(timeout=60)
        os.close(master)
        return code, out.getvalue(), seen.decode(errors="replace")

    return run


@pytest.fixture(scope="session")
def command_line():
    """``command_line(*args)``: the installed ``bayeval`` console script (``python -m
    bayeval.cli`` where none is installed next to this Python) run in a subprocess, for the one
    end-to-end test of each subcommand."""
    script = Path(sys.executable).with_name("bayeval")
    argv = [str(script)] if script.is_file() else [sys.executable, "-m", "bayeval.cli"]

    def run(*args, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([*argv, *map(str, args)], capture_output=True, text=True,
                              timeout=600, **kwargs)

    return run


@pytest.fixture(scope="module")
def client():
    """A ``distributed.Client`` on a LocalCluster of 2 single-threaded worker processes, for the
    partitioned paths' tests (mark their module ``xdist_group("scale")``: one worker runs them)."""
    distributed = pytest.importorskip("distributed", reason="bayeval.scale needs the 'scale' "
                                                            "extra (dask.distributed)")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0")
    with cluster, distributed.Client(cluster) as c:
        yield c
