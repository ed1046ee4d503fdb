"""The package's layers, checked: each package imports only those below it (docs/development.md).
Imports inside functions count (they are still a dependency, only a later one); imports for type
checking do not count for the layers, but they do for circles: no module may reach itself through
imports of any kind, within a layer too (a circle of type-only imports still ties the modules
together: one cannot be read, moved or tested without the others)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from pathlib import Path

import pytest

import mkdocs_syndicate

pytestmark = pytest.mark.unit

PACKAGE = Path(mkdocs_syndicate.__file__).parent

# Lowest first. A module may import its own layer and any layer before it.
LAYERS = [
    {"safety", "lazyre", "timeutil", "localdirs", "localfiles", "checkpoints", "redaction", "errors", "nip19"},
    {"ledger"},
    {"content"},
    {"net"},
    {"registry"},  # names each type's client and emulator by import path; imports neither
    {"emulator_api"},  # the emulators' base: imports nothing of the package, so no client code
    {"config"},
    # The public channel API gathers the clients' base (channels/base.py) and re-exports the
    # emulators' base (emulator_api): the built-in channels import it, so it shares their layer.
    {"channels", "channel_api"},
    {"sandbox"},
    {"engine"},
    {"output"},
    {"sources"},
    {"cli", "plugin"},
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """mkdocs_syndicate.engine.runner → engine; mkdocs_syndicate.cli → cli."""
    return module.split(".")[1]


def imports_of(path: Path, *, typing_too: bool = False) -> set[str]:
    """The package's modules (or packages) `path` imports; `typing_too` counts TYPE_CHECKING ones."""
    tree = ast.parse(path.read_text("utf-8"))
    typing_only = (
        set()
        if typing_too
        else {
            id(node)
            for guard in ast.walk(tree)
            if isinstance(guard, ast.If) and "TYPE_CHECKING" in ast.unparse(guard.test)
            for node in ast.walk(guard)
        }
    )
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mkdocs_syndicate"):
            # from mkdocs_syndicate.engine import runner names a module; from ...engine.plan import Plan, its module
            named = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [name for name in named if _is_module(name)]
            found.update(modules or [node.module])
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("mkdocs_syndicate."))
    return found


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def edges() -> list[tuple[str, str, str]]:
    """(importing module's file, its unit, the imported unit), across units."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py" and path.parent == PACKAGE:
            continue
        source = unit_of("mkdocs_syndicate." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        for target in imports_of(path) - {"mkdocs_syndicate"}:  # the package's own __init__: its version
            if unit_of(target) != source:
                found.append((str(path.relative_to(PACKAGE)), source, unit_of(target)))
    return found


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every module of the package → the package's modules it imports, of any kind."""
    return {module_of(path): imports_of(path, typing_too=True) for path in sorted(PACKAGE.rglob("*.py"))}


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (or a module importing itself): each
    is a circle, found by Tarjan's algorithm, iteratively (no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in graph:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    group = stack[stack.index(module) :]
                    del stack[stack.index(module) :]
                    if len(group) > 1 or module in graph[module]:
                        found.append(sorted(group))
    return found


def test_no_module_reaches_itself_through_imports_type_only_ones_included():
    assert circles(import_graph()) == []


def test_the_circle_check_sees_a_circle_closed_by_a_type_only_import(tmp_path):
    """A circle closed by a TYPE_CHECKING import is still found, and a chain without one is not."""
    first = tmp_path / "a.py"
    first.write_text("from mkdocs_syndicate.errors import SyndicateError\n")
    second = tmp_path / "b.py"
    second.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mkdocs_syndicate.engine.plan import Plan\n"
    )
    assert imports_of(first, typing_too=True) == {"mkdocs_syndicate.errors"}
    assert imports_of(second) == set() and imports_of(second, typing_too=True) == {"mkdocs_syndicate.engine.plan"}
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"], ["e"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_every_unit_has_a_layer():
    units = {unit_of("mkdocs_syndicate." + p.relative_to(PACKAGE).with_suffix("").parts[0]) for p in PACKAGE.iterdir()}
    units -= {"__init__", "__pycache__", "assets", "py"}
    assert units - set(RANK) == set()


def test_no_package_imports_a_layer_above_its_own():
    upward = [f"{file}: {source} imports {target}" for file, source, target in edges() if RANK[target] > RANK[source]]
    assert upward == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The walk must see a function-level import and skip a TYPE_CHECKING one, or it proves nothing."""
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mkdocs_syndicate.cli import main\n"
        "def f():\n    from mkdocs_syndicate.engine import runner\n"
    )
    assert imports_of(module) == {"mkdocs_syndicate.engine.runner"}


# ---------------------------------------------------------------- module size

MAX_LINES = 500  # a module a reader can hold: past this, it has more than one job (issue 40)


def oversized(root: Path, exceptions: Collection[str] = ()) -> list[str]:
    """The modules under `root` longer than MAX_LINES, by their path from `root`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        lines = len(path.read_text("utf-8").splitlines())
        if lines > MAX_LINES and name not in exceptions:
            found.append(f"{name}: {lines} lines")
    return found


def test_no_module_is_over_500_lines():
    assert oversized(PACKAGE) == []


def test_the_size_check_counts_lines_and_sees_nested_modules(tmp_path):
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert oversized(tmp_path) == [f"deep/long.py: {MAX_LINES + 1} lines"]
    assert oversized(tmp_path, {"deep/long.py"}) == []
