"""The bayeval command."""

import pytest

from bayeval.cli import main


def test_demo_prints_a_checked_evaluation(capsys):
    assert main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "95% equal-tailed intervals" in out
    assert "accuracy" in out and "recall" in out
    assert "fast path vs MCMC draws, 4-sigma Monte-Carlo tolerances: all passed" in out
    assert "MCMC diagnostics: all within thresholds" in out


def test_unknown_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
