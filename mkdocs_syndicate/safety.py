"""Text from outside (server answers, post keys, titles) made safe for a terminal, a CI log, a
table cell or a git commit message: control characters (C0, C1, ESC sequences, line breaks where
one line is expected) are shown escaped, never interpreted."""

from __future__ import annotations

import re

from mkdocs_syndicate.lazyre import lazy_compile

_CONTROL = lazy_compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = lazy_compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """Keep line breaks and tabs (multi-line messages), escape every other control character."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """For a single line: newlines and tabs escaped too."""
    return _CONTROL_OR_NEWLINE.sub(_escape, text)
