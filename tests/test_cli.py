"""The bayeval command, run for real in a subprocess."""

import subprocess
import sys


def bayeval(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bayeval.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_demo_writes_a_report(tmp_path):
    run = bayeval("demo", "--out", tmp_path / "demo", "--seed", "1")
    assert run.returncode == 0, run.stderr
    assert "95% equal-tailed intervals" in run.stdout
    report = tmp_path / "demo" / "report.html"
    assert report.is_file() and f"report: {report}" in run.stdout
    assert "<table" in report.read_text()


def test_unknown_command_is_a_usage_error():
    run = bayeval("frobnicate")
    assert run.returncode == 2 and "invalid choice" in run.stderr
