"""The run byte-compiles the package once (tests/bytecode.py), so the hundreds of processes the
suite starts read bytecode instead of compiling the package again where PYTHONDONTWRITEBYTECODE
is set: every module has a .pyc that Python will accept for its current source."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent


def accepted(source: Path) -> bool:
    """What importlib checks before it uses a .pyc: the source's mtime and size in the header."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return False
    header = cached.read_bytes()[:16]
    flags, mtime, size = struct.unpack("<III", header[4:16])
    stat = source.stat()
    return flags == 0 and mtime == int(stat.st_mtime) & 0xFFFFFFFF and size == stat.st_size & 0xFFFFFFFF


def test_every_module_of_the_package_has_fresh_bytecode() -> None:
    sources = sorted((REPO / "mkdocs_syndicate").rglob("*.py"))
    missing = [str(s.relative_to(REPO)) for s in sources if not accepted(s)]
    assert sources and not missing, f"{len(missing)} of {len(sources)} modules without fresh bytecode: {missing[:5]}"


def test_the_tests_helper_modules_children_import_have_fresh_bytecode() -> None:
    helpers = [REPO / "tests" / name for name in ("sites.py", "crashlab.py", "channel_specs.py")]
    assert all(accepted(h) for h in helpers if h.exists())
