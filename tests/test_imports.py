"""The package's architecture: imports flow one way, no cycles, no private names, small modules,
and ``import bayeval`` leaves the heavy libraries (ArviZ, matplotlib, PyMC) unimported.

The import graph is read from the source with ``ast``, so every rule names all its offenders.
The layers: the core (every module outside ``methods`` and the faces), the methods
(``bayeval.methods.<name>``) and the faces (``cli``, ``demo``, ``plots``, ``report``, ``scale``
and the top-level ``bayeval``).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "bayeval"
FACES = {"bayeval", "bayeval.cli", "bayeval.demo", "bayeval.plots", "bayeval.report",
         "bayeval.scale"}
#: what the core never imports, not even inside a function
NOT_FOR_THE_CORE = ("bayeval.cli", "bayeval.demo", "bayeval.methods", "bayeval.plots",
                    "bayeval.report", "bayeval.scale")
#: scipy.stats alone took about half of ``import bayeval`` (1-2 s) when a module-level constant
#: called it: the functions that need it import it when they run
HEAVY = ("arviz", "arviz_plots", "arviz_stats", "matplotlib", "pymc", "pytensor", "scipy.stats")
MAX_LINES = 900


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in SOURCES.items()}


def _is_package(name: str) -> bool:
    return SOURCES[name].name == "__init__.py"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import``, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, node: ast.AST) -> list[tuple[str, str | None, int]]:
    """(target module, imported name or None, line) of one import statement, bayeval only."""
    out = []
    if isinstance(node, ast.Import):
        out = [(alias.name, None, node.lineno) for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        source = _absolute(module, node)
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            out.append((sub, None, node.lineno) if sub in SOURCES
                       else (source, alias.name, node.lineno))
    return [item for item in out if item[0] == "bayeval" or item[0].startswith("bayeval.")]


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(test)


def _top_level(tree: ast.Module):
    """The statements run when the module is imported (not those of functions, classes'
    methods or ``if TYPE_CHECKING:``)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if _type_checking(node):
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, []))


def module_graph() -> dict[str, dict[str, int]]:
    """Module-level imports: ``{module: {imported module: line}}``."""
    graph = {}
    for name, tree in TREES.items():
        edges = {}
        for node in _top_level(tree):
            for target, _, line in _imports(name, node):
                if target != name and target in SOURCES:
                    edges.setdefault(target, line)
        graph[name] = edges
    return graph


def all_imports(name: str) -> list[tuple[str, str | None, int]]:
    """Every import of bayeval in module ``name``, also those inside functions."""
    return [item for node in ast.walk(TREES[name]) for item in _imports(name, node)]


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _method(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "methods" else None


def _layer(name: str) -> str:
    if name in FACES:
        return "face"
    return "method" if name.startswith("bayeval.methods") else "core"


def _within(target: str, prefix: str) -> bool:
    return target == prefix or target.startswith(prefix + ".")


# ------------------------------------------------------------------------------------ rules
def test_the_module_level_import_graph_has_no_cycle():
    graph = module_graph()
    cycles = _cycles(graph)
    report = []
    for component in cycles:
        inside = set(component)
        edges = [f"{a} -> {b} (line {graph[a][b]})" for a in component for b in graph[a]
                 if b in inside]
        report.append("cycle through " + ", ".join(component) + ":\n    " + "\n    ".join(edges))
    assert not cycles, "\n".join(report)


def test_a_method_imports_no_other_method_and_no_face():
    offenders = []
    for name in SOURCES:
        method = _method(name)
        if method is None:
            continue
        for target, _, line in all_imports(name):
            other = _method(target)
            if (other is not None and other != method) or target == "bayeval.methods":
                offenders.append(f"{name}:{line} imports {target} (another method)")
            elif _layer(target) == "face":
                offenders.append(f"{name}:{line} imports {target} (a face: methods use the core)")
    assert not offenders, "\n".join(offenders)


def test_the_core_imports_no_face_and_no_method():
    offenders = [f"{name}:{line} imports {target}"
                 for name in SOURCES if _layer(name) == "core"
                 for target, _, line in all_imports(name)
                 if any(_within(target, face) for face in NOT_FOR_THE_CORE)]
    assert not offenders, "\n".join(offenders)


def test_plots_imports_no_method():
    offenders = [f"bayeval.plots:{line} imports {target}"
                 for target, _, line in all_imports("bayeval.plots")
                 if _within(target, "bayeval.methods")]
    assert not offenders, "\n".join(offenders)


def _private(attr: str) -> bool:
    return attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def test_no_private_name_is_imported_across_modules():
    """``from bayeval.x import _name``, and ``x._name`` on an imported bayeval module."""
    offenders = []
    for name, tree in TREES.items():
        modules = {}  # local name -> the bayeval module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("bayeval") and alias.asname:
                        modules[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, node)
                for alias in node.names:
                    if f"{source}.{alias.name}" in SOURCES:
                        modules[alias.asname or alias.name] = f"{source}.{alias.name}"
            for target, imported, line in _imports(name, node):
                if imported is not None and _private(imported) and target != name:
                    offenders.append(f"{name}:{line} imports {imported} from {target}")
                elif imported is None and _private(target.rsplit(".", 1)[-1]):
                    offenders.append(f"{name}:{line} imports the private module {target}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and _private(node.attr)
                    and modules[node.value.id] != name):
                offenders.append(f"{name}:{node.lineno} uses {modules[node.value.id]}."
                                 f"{node.attr}")
    assert not offenders, "\n".join(offenders)


def test_no_module_is_over_900_lines():
    sizes = {name: len(path.read_text().splitlines()) for name, path in SOURCES.items()}
    offenders = [f"{name}: {n} lines" for name, n in sizes.items() if n > MAX_LINES]
    assert not offenders, "\n".join(offenders)


def test_the_display_registry_is_filled_by_the_faces():
    """``Evaluation.plot()``/``report()`` find their functions in the core's registry
    (bayeval.display), which bayeval.plots, bayeval.report and MVU's plots fill when
    ``import bayeval`` imports them."""
    import importlib

    display, plots, report, mvu_plots = (importlib.import_module(f"bayeval.{name}") for name in
                                         ("display", "plots", "report", "methods.mvu.plots"))
    assert display.DISPLAYS == {"plot": plots.plot, "report": report.report}
    assert plots.KINDS is display.PLOT_KINDS
    assert display.PLOT_KINDS["confidence"].draw is mvu_plots.confidence
    assert display.DEFAULT_PLOT_KINDS["mvu"] == "confidence"


# ------------------------------------------------------------------------------ import time
def _heavy_after(module: str) -> list[str]:
    """The heavy libraries in ``sys.modules`` after ``import <module>`` in a fresh process."""
    code = f"import sys, {module}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, f"import {module} failed:\n{run.stderr}"
    return run.stdout.split()


def test_import_bayeval_leaves_the_heavy_libraries_unimported():
    """ArviZ, matplotlib, PyMC and scipy.stats are imported by the functions that use them;
    together they take most of the time of an eager ``import bayeval``."""
    assert _heavy_after("bayeval") == []


@pytest.mark.parametrize("module", ["bayeval.scale", "bayeval.cli"])
def test_the_faces_import_lightly_too(module):
    assert _heavy_after(module) == []
