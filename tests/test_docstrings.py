"""Every public function and class has a docstring with a runnable ``Examples`` section.

"Public" is a module's ``__all__``: its functions and classes defined in that module (names
re-exported from elsewhere are checked where they are defined). The examples themselves run as
doctests (``--doctest-modules``); this test makes sure they exist. Modules still being worked on
are listed in ``PENDING``; a pending module that is complete fails the test, so the list cannot rot.
"""

import importlib
import inspect
import pkgutil
import re

import pytest

import bayeval

#: modules that still miss ``__all__`` or an example; remove a module once it is complete.
PENDING: set[str] = set()

MODULES = ["bayeval", *sorted(m.name for m in pkgutil.walk_packages(bayeval.__path__, "bayeval."))]
_EXAMPLES = re.compile(r"^Examples\n-{8,}\n(.*)", re.MULTILINE | re.DOTALL)


def _has_example(obj) -> bool:
    match = _EXAMPLES.search(inspect.getdoc(obj) or "")
    return bool(match) and ">>>" in match.group(1)


def _missing(name: str) -> list[str]:
    """The public functions and classes of module ``name`` without an example (or ``__all__``)."""
    module = importlib.import_module(name)
    if not hasattr(module, "__all__"):
        return ["(no __all__)"]
    missing = []
    for attr in module.__all__:
        obj = getattr(module, attr)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if obj.__module__ == name and not _has_example(obj):
            missing.append(attr)
    return missing


@pytest.mark.parametrize("name", MODULES)
def test_public_names_have_examples(name):
    missing = _missing(name)
    if name in PENDING:
        assert missing, f"{name} has __all__ and an example for every public name: " \
                        "remove it from PENDING"
    else:
        assert not missing, f"{name}: no Examples section with >>> in {', '.join(missing)}"


def test_pending_names_modules():
    assert PENDING <= set(MODULES), f"not bayeval modules: {sorted(PENDING - set(MODULES))}"


def test_detects_missing_examples():
    def documented():
        """Doc.

        Examples
        --------
        >>> 1
        1
        """

    def bare():
        """Doc, no example."""

    def heading_only():
        """Doc.

        Examples
        --------
        See the guide.
        """

    assert _has_example(documented)
    assert not _has_example(bare)
    assert not _has_example(heading_only)
    assert not _has_example(lambda: None)
