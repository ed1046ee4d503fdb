"""Every third-party package the code imports is declared in pyproject.toml (MkDocs bringing it
along is not a promise), and nothing declared goes unused."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = {"material"}  # Material's blog: used when the site has it, guarded by ImportError


def imported_top_level_names() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "mkdocs_syndicate").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names - set(sys.stdlib_module_names) - {"mkdocs_syndicate", "__future__"}


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {Requirement(line).name.lower().replace("_", "-") for line in project["dependencies"]}


def test_every_imported_package_is_declared_and_every_declared_one_is_imported():
    distributions = packages_distributions()
    used = {distributions[name][0].lower().replace("_", "-") for name in imported_top_level_names() - OPTIONAL}
    assert used - declared() == set(), "imported but not declared"
    assert declared() - used == set(), "declared but never imported"
