"""``bayeval run CONFIG``: a command described by a TOML file, for scheduled monitoring jobs.

The file names the command and gives its options in three tables; every key is the name of a
command-line option, with underscores (``--chunk-period`` is ``chunk_period``), so the file is
the command line written down, and runs through the same code::

    command = "cbpe"

    [input]                   # the files read and their columns
    data = "production.csv"
    score_col = "score"
    reference = "reference.csv"

    [options]                 # how the method runs
    metrics = ["accuracy", "f1"]

    [output]                  # the files written
    summary = "summary.csv"

Values are strings, numbers, true/false (for switches such as ``calibration_uncertainty``) or
lists (for the options whose values are separated by commas, such as ``metrics``).
Relative paths start at the config file's folder. An unknown key, or a key in the wrong table,
is refused with the keys that table accepts.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from bayeval.cli_files import InputError

__all__ = ["SECTIONS", "config_argv", "in_config_terms", "section_of"]

#: the tables of a config file, beside its ``command``
SECTIONS = ("input", "options", "output")
#: the keys that name the files a command reads, and those it writes
INPUT_FILES, OUTPUT_FILES = ("data", "reference", "train", "classifier"), (
    "report", "netcdf", "summary", "decisions")


def section_of(key: str) -> str:
    """The table of a config file that holds the option ``key``.

    Examples
    --------
    >>> section_of("score_col"), section_of("reference"), section_of("seed"), section_of("report")
    ('input', 'input', 'options', 'output')
    """
    if key in OUTPUT_FILES:
        return "output"
    return "input" if key in INPUT_FILES or key.endswith(("_col", "_cols")) else "options"


def config_argv(path: str, commands: Mapping[str, Sequence[argparse.Action]]
                ) -> tuple[list[str], dict[str, str]]:
    """The command line that the config file ``path`` describes.

    Parameters
    ----------
    path : str
        The TOML file.
    commands : mapping
        The options (argparse actions) of each command a file may run, by command.

    Returns
    -------
    argv : list of str
        The command and its arguments, relative paths resolved against the file's folder.
    names : dict
        Each option of the command (``--chunk-period``, and ``DATA``) as the file names it
        (``[options] chunk_period``), for :func:`in_config_terms`.

    Raises
    ------
    InputError
        No such file, invalid TOML, an unknown command, table or key, a key in the wrong
        table, a value of the wrong type, or no ``data``.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "job.toml").write_text('command = "pemi"\\n[input]\\ndata = "t.csv"\\n'
    ...                                      '[options]\\nmetrics = ["f1", "recall"]\\n')
    >>> seed = argparse.Action(["--seed"], "seed")
    >>> data, metrics = argparse.Action([], "data"), argparse.Action(["--metrics"], "metrics")
    >>> argv, names = config_argv(str(folder / "job.toml"), {"pemi": [data, metrics, seed]})
    >>> argv[0], Path(argv[1]) == folder / "t.csv", argv[2:]
    ('pemi', True, ['--metrics', 'f1,recall'])
    >>> names["--seed"]
    '[options] seed'
    """
    file = Path(path)
    if not file.is_file():
        raise InputError(f"CONFIG: no such file: {path}")
    try:
        config = tomllib.loads(file.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"CONFIG: {path} is not valid TOML: {err}") from None
    _known(config, ("command", *SECTIONS), f"{path}: the file")
    command = config.get("command")
    if command not in commands:
        raise InputError(f"{path}: command must be one of {', '.join(commands)}; got "
                         f"{command!r}")
    actions = {a.dest: a for a in commands[command]}
    names = {(a.option_strings[0] if a.option_strings else "DATA"):
             f"[{section_of(a.dest)}] {a.dest}" for a in actions.values()}
    argv = [command]
    for section in SECTIONS:
        table = config.get(section, {})
        if not isinstance(table, dict):
            raise InputError(f"{path}: {section} must be a table ([{section}]), got {table!r}")
        accepted = [d for d in actions if section_of(d) == section]
        _known(table, accepted, f"{path}: [{section}] of {command}", actions)
        for key, value in table.items():
            if key in INPUT_FILES + OUTPUT_FILES and isinstance(value, str):
                value = str(file.parent / Path(value).expanduser())
            argv += _words(actions[key], value, f"{path}: [{section}] {key}")
    if len(argv) < 2 or argv[1].startswith("-"):
        raise InputError(f"{path}: [input] data is required (the file of the rows to evaluate)")
    return argv, names


def _known(table: Mapping, accepted: Sequence[str], where: str, actions=()) -> None:
    """Refuse the keys of ``table`` that are not ``accepted``, listing those that are."""
    for key in table:
        if key not in accepted:
            elsewhere = (f"; it goes in [{section_of(key)}]" if key in actions else "")
            raise InputError(f"{where} has no key {key!r}{elsewhere}; it accepts: "
                             f"{', '.join(accepted)}")


def _words(action: argparse.Action, value, where: str) -> list[str]:
    """The command-line words of one option's value: a switch's flag, or the flag and its
    value (a list comma-separated; the positional DATA without a flag)."""
    if action.nargs == 0:  # a switch: true gives --flag, false --no-flag where it has one
        if not isinstance(value, bool):
            raise InputError(f"{where} is a switch: true or false, got {value!r}")
        off = [s for s in action.option_strings if s.startswith("--no-")]
        return [action.option_strings[0]] if value else off
    items = value if isinstance(value, list) else [value]
    if not items or any(isinstance(v, (bool, dict, list)) for v in items):
        raise InputError(f"{where} takes a string, a number or a list of them, got {value!r}")
    text = ",".join(map(str, items))
    return [action.option_strings[0], text] if action.option_strings else [text]


def in_config_terms(message: str, names: Mapping[str, str]) -> str:
    """A message about command-line options, with each named as the config file names it.

    Examples
    --------
    >>> in_config_terms("argument --chunk-size: invalid int value: 'ten'",
    ...                 {"--chunk-size": "[options] chunk_size"})
    "[options] chunk_size: invalid int value: 'ten'"
    """
    def name(match: re.Match) -> str:
        return names.get(match.group(0), match.group(0))

    text = re.sub(r"(?<![\w-])(--[A-Za-z][\w-]*|DATA)(?![\w-])", name, message)
    return text.replace("argument [", "[")
