"""What the site's git history says of its source files' renames: the first evidence a post under
a new key is an old one (engine/moves.py, docs/moves.md).

Asked only when a build has both a post the ledger does not know and an entry whose source file no
build has now, so a run with no rename never starts git. One `git log` over the history the
checkout has (git's own rename detection, `-M`, chronological), plus the renames staged in the
work tree (`git diff -M HEAD`), gives each old path the path it went to. A shallow clone
(actions/checkout's `fetch-depth: 1`) has no parent for its oldest commit: renames made before it
are not seen, and the fingerprint (content/fingerprint.py) stands in for them.
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

_TIMEOUT = 60.0  # a large history is read in seconds; a hung git must not hang the build


@dataclass(frozen=True)
class Rename:
    old: str  # relative to docs_dir, as a post's `src`
    new: str
    similarity: int  # git's score, 0-100: 100 is the same bytes


@dataclass(frozen=True)
class Trail:
    """Where an old source file went: its last path, and the least similar step on the way."""

    path: str
    similarity: int


class History:
    """The renames of one docs_dir's files, read once, when first asked."""

    def __init__(self, docs_dir: Path) -> None:
        self.docs_dir = docs_dir

    @functools.cached_property
    def _git(self) -> tuple[dict[str, Rename], bool, bool]:
        """(old path → its latest rename, whether it is a checkout, whether it is shallow)."""
        inside = _git(self.docs_dir, "rev-parse", "--is-inside-work-tree", "--is-shallow-repository")
        if inside is None or not inside.startswith("true"):
            return {}, False, False
        shallow = inside.split()[-1] == "true"
        logged = _git(
            self.docs_dir, "log", "--reverse", "-M", "--relative", "--diff-filter=R", "--name-status", "-z",
            "--format=%x01", "HEAD", "--", ".",
        )  # fmt: skip
        staged = _git(self.docs_dir, "diff", "-M", "--relative", "--name-status", "-z", "HEAD", "--", ".")
        forward: dict[str, Rename] = {}
        for rename in [*_renames(logged or ""), *_renames(staged or "")]:
            forward[rename.old] = rename  # the latest rename of a path is the one the ledger last saw
        return forward, True, shallow

    @property
    def available(self) -> bool:
        return self._git[1]

    @property
    def shallow(self) -> bool:
        return self._git[2]

    def trail(self, src: str) -> Trail | None:
        """Where the file at `src` went, through every later rename; None when git saw none."""
        forward = self._git[0]
        path, similarity, seen = src, 100, {src}
        while (step := forward.get(path)) is not None and step.new not in seen:
            path, similarity = step.new, min(similarity, step.similarity)
            seen.add(path)
        return Trail(path, similarity) if path != src else None


def _git(cwd: Path, *args: str) -> str | None:
    """git's output, or None when git is missing, fails or hangs: no history, never an error."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def _renames(output: str) -> list[Rename]:
    """`--name-status -z` output's renames, in order: `R<score>`, old path, new path."""
    tokens = [token.lstrip("\n") for token in output.split("\0")]
    found = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.startswith("R") and token[1:].isdigit() and index + 2 < len(tokens):
            found.append(Rename(tokens[index + 1], tokens[index + 2], int(token[1:])))
            index += 3
        else:
            index += 1
    return found
