"""A hand-edited ledger read almost as fast as a canonical one.

One comment or one record rewritten by hand used to send the whole file to the YAML parser
(10,000 posts: 6 s and 450 MB with libyaml, every run, and in git mode on every run until the
next write). Here the posts section is cut into one piece per post (a line at the posts'
indentation starts one). Each piece the fast reader takes, with comment and blank lines left out,
is read by it; the others are read by the YAML parser, together, as one small document. The
result is used only if every piece was read and no post key repeats; any doubt (a piece the
parser refuses, an odd top, another indentation) returns None, and the caller reads the whole
file with the full parser, which gives the precise file:line error. tests/test_ledger_fast.py
checks the result against the full parser and yaml.safe_load on hand-edited files.
"""

from __future__ import annotations

import gc

from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger.fast import parse_piece
from mkdocs_syndicate.ledger.schema import END_MARKER, VERSION, VERSIONS, Posts


def parse_tolerant(text: str, path: str) -> Posts | None:
    lines = text.split("\n")
    section = _posts_section(lines)
    if section is None:
        return None
    top, end = section
    head = [line for line in lines[:top] if not _is_filler(line)]
    if head not in ([f"version: {version}"] for version in VERSIONS):
        return None
    pieces = _pieces(lines[top + 1 : end - 1])
    if pieces is None:
        return None
    collecting = gc.isenabled()
    gc.disable()  # many small objects, no cycles (as in the fast reader)
    try:
        return _read(pieces, path)
    finally:
        if collecting:
            gc.enable()


def _posts_section(lines: list[str]) -> tuple[int, int] | None:
    """Where `posts:` is, and where the end marker is after it; None without either."""
    top = next((n for n, line in enumerate(lines) if line == "posts:"), None)
    if top is None:
        return None
    end = next((n + 1 for n in range(len(lines) - 1, top, -1) if lines[n].strip() == END_MARKER), None)
    return (top, end) if end is not None else None


def _is_filler(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _pieces(body: list[str]) -> list[list[str]] | None:
    """The posts section cut before each line that starts a post (two spaces, then a key; `  :` is
    the value of an explicit `? key`, not a new post). Before the first post only filler."""
    pieces: list[list[str]] = []
    for line in body:
        if line[:2] == "  " and line[2:3] not in ("", " ", "#", ":"):
            pieces.append([line])
        elif pieces:
            pieces[-1].append(line)
        elif not _is_filler(line):
            return None
    return pieces


def _read(pieces: list[list[str]], path: str) -> Posts | None:
    posts: Posts = {}
    parse_later: list[str] = []
    for piece in pieces:
        found = parse_piece("\n".join(line for line in piece if not _is_filler(line)) + "\n")
        if found is None:
            parse_later.append("\n".join(piece))
        elif not _merged(posts, found):
            return None
    # In slices: the parser's node tree for thousands of posts at once would cost far more memory.
    for start in range(0, len(parse_later), _SLICE):
        found = _parsed(parse_later[start : start + _SLICE], path)
        if found is None or not _merged(posts, found):
            return None
    return posts


def _parsed(pieces: list[str], path: str) -> Posts | None:
    """Hand-edited pieces, read by the full parser; None leaves the whole file to it."""
    from mkdocs_syndicate.ledger.format import parse_yaml

    document = f"version: {VERSION}\nposts:\n" + "\n".join(pieces) + f"\n{END_MARKER}\n"
    try:
        found = parse_yaml(document, path)
    except LedgerError:
        return None
    return found if len(found) == len(pieces) else None  # a piece that was not one post


def _merged(posts: Posts, found: Posts) -> bool:
    """`found` added to `posts`; False on a repeated key (the full parser reports it with its line)."""
    if any(key in posts for key in found):
        return False
    posts.update(found)
    return True


_SLICE = 500
