"""The package's layers, checked: each package imports only those below it (README, Development),
so there are no circles. Imports inside functions count (they are still a dependency, only a
later one); imports for type checking do not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mkdocs_syndicate

pytestmark = pytest.mark.unit

PACKAGE = Path(mkdocs_syndicate.__file__).parent

# Lowest first. A module may import its own layer and any layer before it.
LAYERS = [
    {"safety", "lazyre", "timeutil", "localdirs", "checkpoints", "redaction", "errors"},
    {"ledger"},
    {"content"},
    {"net"},
    {"registry"},  # names each type's client and emulator by import path; imports neither
    {"config"},
    {"channels"},
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


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    typing_only = {
        id(node)
        for guard in ast.walk(tree)
        if isinstance(guard, ast.If) and "TYPE_CHECKING" in ast.unparse(guard.test)
        for node in ast.walk(guard)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mkdocs_syndicate"):
            if node.module == "mkdocs_syndicate":  # from mkdocs_syndicate import config (not __version__)
                found.update(f"mkdocs_syndicate.{alias.name}" for alias in node.names if _is_module(alias.name))
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("mkdocs_syndicate."))
    return found


def _is_module(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def edges() -> list[tuple[str, str, str]]:
    """(importing module's file, its unit, the imported unit), across units."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py" and path.parent == PACKAGE:
            continue
        source = unit_of("mkdocs_syndicate." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        for target in imports_of(path):
            if unit_of(target) != source:
                found.append((str(path.relative_to(PACKAGE)), source, unit_of(target)))
    return found


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
    assert imports_of(module) == {"mkdocs_syndicate.engine"}
