"""A hand-edited ledger read almost as fast as a canonical one.

One comment or one record rewritten by hand used to send the whole file to the YAML parser
(10,000 posts: 6 s and 450 MB with libyaml, every run, and in git mode on every run until the
next write). Here the posts section is cut into one piece per post (a line at the posts'
indentation starts one). Each piece the fast reader takes, with comment and blank lines left out,
is read by it; the others are read by the YAML parser, together, as one small document. The
result is used only if every piece was read and no post key repeats; any doubt (a piece the
parser refuses, an odd top, another indentation) returns None, and the caller reads the whole
file with the full parser, which gives the precise file:line error.

Whatever the full parser refuses, this must refuse too (issue 36: a fuzzer found a tab-indented
comment and a stray `...` accepted here). So it only leaves out what YAML reads as nothing in
every context: a line of spaces, or spaces and a comment of printable characters (a tab or a line
break of YAML's own, NEL or U+2028, can continue the scalar above it); it refuses a document
marker anywhere but the last line; and it parses together only pieces that follow each other in
the file, so each is read with what comes before it there. tests/test_ledger_fast.py checks the
result against the full parser and yaml.safe_load on hand-edited files and on fuzzed mutants.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable

from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger.fast import ODD, parse_piece
from mkdocs_syndicate.ledger.schema import END_MARKER, VERSION, VERSIONS, Posts

FullParser = Callable[[str, str], Posts]  # (text, path) → posts: ledger.format.parse_yaml


def parse_tolerant(text: str, path: str, parse_yaml: FullParser) -> Posts | None:
    """The posts, with only the hand-edited ones read by `parse_yaml` (handed in by
    ledger/format.py, which imports this module); None leaves the whole file to it."""
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
        return _read(pieces, path, parse_yaml)
    finally:
        if collecting:
            gc.enable()


def _posts_section(lines: list[str]) -> tuple[int, int] | None:
    """Where `posts:` is, and where the end marker is after it; None without either, or with a
    document marker anywhere else, or anything but empty lines after the end marker."""
    top = next((n for n, line in enumerate(lines) if line == "posts:"), None)
    if top is None:
        return None
    last = len(lines) - 1
    while last > top and lines[last] == "":
        last -= 1
    if lines[last] != END_MARKER or any(line.startswith(("---", "...")) for line in lines[:last]):
        return None
    return top, last + 1


# Spaces, optionally then a comment: nothing in any context. Not a tab, which can continue the
# plain scalar of the line above, nor a character of the fast reader's ODD class (YAML's own line
# breaks, characters a YAML reader refuses).
_FILLER = re.compile(" *(?:#" + ODD.pattern.replace("[", "[^", 1) + "*)?")


def _is_filler(line: str) -> bool:
    return _FILLER.fullmatch(line) is not None


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


def _read(pieces: list[list[str]], path: str, parse_yaml: FullParser) -> Posts | None:
    posts: Posts = {}
    parse_later: list[list[str]] = [[]]  # runs of pieces next to each other in the file
    for piece in pieces:
        found = parse_piece("\n".join(line for line in piece if not _is_filler(line)) + "\n")
        if found is None:
            parse_later[-1].append("\n".join(piece))
        elif not _merged(posts, found):
            return None
        elif parse_later[-1]:
            parse_later.append([])
    # In slices: the parser's node tree for thousands of posts at once would cost far more memory.
    for run in parse_later:
        for start in range(0, len(run), _SLICE):
            found = _parsed(run[start : start + _SLICE], path, parse_yaml)
            if found is None or not _merged(posts, found):
                return None
    return posts


def _parsed(pieces: list[str], path: str, parse_yaml: FullParser) -> Posts | None:
    """Hand-edited pieces, read by the full parser; None leaves the whole file to it."""
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
