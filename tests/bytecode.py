"""Byte-compile the package under test, and the tests' own helper modules, once a test run.

The suite starts hundreds of Python processes (`mkdocs build`, the CLI, crash children, servers).
Where PYTHONDONTWRITEBYTECODE is set (this workplace's shells, some CI images), none of them
writes the bytecode it compiles, so each one compiled the whole package from source again: about
0.2 s of CPU a process for the engine alone. Writing the .pyc files once, before any test starts,
lets every child read them: the variable stops a process from *writing* bytecode, never from
reading it. An installed wheel has its bytecode from pip; this gives an editable checkout the same.

The files go where Python itself puts them (`__pycache__/`, ignored by git), and Python checks each
one against its source's mtime and size: a stale file is recompiled in memory, never trusted.
"""

from __future__ import annotations

import compileall
from pathlib import Path

# Folders of tests whose modules children import (tests/plugins/ holds the toy channel plugin).
HELPER_FOLDERS = ("", "plugins", "conformance")


def compile_once(repo: Path) -> int:
    """Compile what a test's child process imports from this checkout; returns how many source
    files are now backed by fresh bytecode. Only changed files are written again."""
    package = repo / "mkdocs_syndicate"
    compileall.compile_dir(package, quiet=2, workers=1)
    for folder in HELPER_FOLDERS:
        where = repo / "tests" / folder
        if where.is_dir():
            compileall.compile_dir(where, maxlevels=0, quiet=2, workers=1)
    return sum(1 for _ in package.rglob("*.py"))
