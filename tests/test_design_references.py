"""The project carries its own design (issue 40): every design file a docstring, a comment, the
README or a page under docs/ names is in the repository. Whoever clones the project has no
`../shared` folder, so a reference to it, or to a `*.md` or `docs/...` file that is not here, fails.

What counts as a reference: in Python files, the docstrings and comments (string literals in code
are test data: a site's `docs/posts/a.md` written into tmp_path); in every other file, all of it.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

import pytest
from sites import ROOT

pytestmark = pytest.mark.unit

SCANNED = ("mkdocs_syndicate", "tests", "benchmarks", "docs", ".ci")
# Not walked: caches and builds, and tests/data (third-party posts, not ours).
SKIPPED_DIRS = {"__pycache__", "node_modules", "data", "site", "build", "dist", ".venv", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".js", ".mjs", ".json", ".txt", ""}

MD_FILE = re.compile(r"(?<![\w.\-/])((?:\.\.?/)*[\w.\-]+(?:/[\w.\-]+)*\.md)\b")
DOCS_PATH = re.compile(r"(?<![\w.\-/])(docs/[\w.\-/]*[\w\-])")
MD_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
SHARED = re.compile(r"\.\./shared|/work/shared")

# Pages of a *user's* site in examples (a post's relative link, a redirect's target, a ledger's
# `src`): not files of this repository.
EXAMPLE_PAGES = {
    "new.md",
    "other.md",
    "../media/x.png",
    "blog/posts/hello.md",
    "blog/posts/idempotency.md",
    "posts/b.md",
    "posts/other.md",
}
# docs/moves.md's renames, one per case
EXAMPLE_PAGES |= {"posts/one.md", "posts/one-new.md", "posts/2026/one.md", "One.md", "one.md"}


def scanned_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in SCANNED:
        for folder, dirs, names in os.walk(ROOT / top):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            files += [Path(folder, name) for name in sorted(names) if Path(name).suffix in TEXT_SUFFIXES]
    return files


def prose(path: Path) -> list[tuple[int, str]]:
    """What a reader reads as prose: a Python file's docstrings and comments, any other file whole."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".py":
        return [(1, text)]
    found = []
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append((body[0].lineno, value.value))
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def exists(mention: str, where: Path) -> bool:
    """A mention resolves from the mentioning file's folder or the repository's root; a bare file
    name may also name a page of docs/ (prose says "identity.md" for docs/design/identity.md)."""
    if mention in EXAMPLE_PAGES:
        return True
    candidates = [where.parent / mention, ROOT / mention]
    if "/" not in mention:
        candidates += list((ROOT / "docs").rglob(mention))
    return any(candidate.exists() for candidate in candidates)


def broken_references() -> list[str]:
    broken = []
    for path in scanned_files():
        if path == Path(__file__):
            continue  # this file names the patterns it looks for
        rel = path.relative_to(ROOT)
        for line, text in prose(path):
            if SHARED.search(text):
                broken.append(f"{rel}:{line}: mentions the team's ../shared folder (not in the repository)")
            mentions = {m.group(1) for m in MD_FILE.finditer(text)} | {m.group(1) for m in DOCS_PATH.finditer(text)}
            if path.suffix == ".md":
                mentions |= {m.group(1) for m in MD_LINK.finditer(text) if "://" not in m.group(1)}
            broken += [f"{rel}:{line}: {m} is not in the repository" for m in sorted(mentions) if not exists(m, path)]
    return broken


def test_every_design_file_the_project_names_is_in_it():
    assert broken_references() == []


def test_the_design_index_links_every_design_page():
    index = (ROOT / "docs" / "design" / "README.md").read_text(encoding="utf-8")
    linked = {m.group(1) for m in MD_LINK.finditer(index)}
    pages = {p.name for p in (ROOT / "docs" / "design").glob("*.md")} - {"README.md"}
    assert pages <= linked, pages - linked
    assert "removals.md" in linked


def test_the_check_finds_what_it_is_for(tmp_path, monkeypatch):
    """The scanner itself: a docstring naming a missing design file, a comment naming ../shared
    and a README link to a missing page are found; a string literal in code is not prose."""
    source = tmp_path / "mod.py"
    source.write_text(
        '"""Emulator (reference: channel-apis.md §1)."""\n'
        "# see ../shared/reference/reliability.md\n"
        'SITE = "docs/posts/a.md"\n',
        encoding="utf-8",
    )
    said = [text for _, text in prose(source)]
    assert any("channel-apis.md" in text for text in said) and any("../shared" in text for text in said)
    assert not any("docs/posts/a.md" in text for text in said)
    assert not exists("channel-apis.md", source) and not exists("docs/design/nowhere.md", source)
    assert exists("docs/design/identity.md", source) and exists("identity.md", source)
