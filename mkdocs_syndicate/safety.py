"""Text from outside (server answers, post keys, titles, feed entries) made safe where it goes:

- a terminal, a CI log, a table cell or a git commit message (`printable`, `one_line`): control
  characters (C0, C1, ESC sequences, line breaks where one line is expected), bidi overrides and
  isolates (U+202A-U+202E, U+2066-U+2069: U+202E before "gpj.exe" shows "exe.jpg"), and on one line the
  invisible characters too (zero-width spaces, bidi marks) are shown escaped, never interpreted;
- a public post (`public_text`): terminal escape sequences (CSI, and OSC such as OSC 8 links) and
  control characters are removed, with the bidi overrides and isolates;
- a name the tool keys records and log lines by (`is_plain_name`): none of them at all;
- a server's words followed by ours (`clauses`): its closing full stop is not doubled by our "; ".
"""

from __future__ import annotations

import logging
import re

from mkdocs_syndicate.lazyre import lazy_compile

# Bidi embeddings, overrides and isolates: they reorder the text after them (up to the end of
# the paragraph, the line or the log).
_BIDI = "\u202a-\u202e\u2066-\u2069"
# Invisible: zero-width space, bidi marks, word joiner and invisible operators, BOM. Zero-width
# (non-)joiners are left alone: emoji sequences and Indic scripts need them.
_INVISIBLE = "\u061c\u200b\u200e\u200f\u2060-\u2064\ufeff"

_CONTROL = lazy_compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_CONTROL_OR_NEWLINE = lazy_compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}{_INVISIBLE}]")
# A terminal's escape sequences as a whole (ECMA-48): OSC ... BEL or ST (OSC 8 hyperlinks, window
# titles), CSI parameters and final byte (colours, cursor moves), and two-character escapes.
_ESCAPE_SEQUENCE = lazy_compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\x20-\x7e]?"
)
_NOT_IN_A_POST = lazy_compile(rf"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")
# What json.dumps(ensure_ascii=False) leaves as it is (it escapes C0 itself; \n between items is
# layout, not text).
_RAW_IN_JSON = lazy_compile(rf"[\x7f-\x9f\u2028\u2029{_BIDI}{_INVISIBLE}]")
_NOT_IN_A_NAME = lazy_compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}{_INVISIBLE}\u200c\u200d]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """Keep line breaks and tabs (multi-line messages), escape every other control character."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """For a single line: newlines, tabs and invisible characters escaped too."""
    return _CONTROL_OR_NEWLINE.sub(_escape, text)


_OBJECT_REPR = lazy_compile(r" ?<[\w.]+(?: object)? at 0x[0-9a-fA-F]+>")


def without_reprs(text: str) -> str:
    """`text` without the repr of a Python object (`<_io.BytesIO object at 0x7f…>`, which Pillow's
    "cannot identify image file" quotes): no one reading a ledger or a log can use an address."""
    return _OBJECT_REPR.sub("", text)


def public_text(text: str) -> str:
    """Text for a public post (a title, a description, a tag, a label): terminal escape sequences,
    control characters (but line breaks and tabs: \\r\\n becomes \\n) and bidi overrides removed."""
    text = _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _NOT_IN_A_POST.sub("", text)


def is_plain_name(text: str) -> bool:
    """A name that keys records and log lines (a channel id): no control, line-break, bidi or
    invisible character, which could forge a log line or make two names look the same."""
    return _NOT_IN_A_NAME.search(text) is None


def json_safe(text: str) -> str:
    """JSON text (made with ensure_ascii=False) whose strings' control, bidi and invisible
    characters are written as \\uXXXX escapes: the same JSON, inert on a terminal."""
    return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


class PrintableRecords(logging.Filter):
    """A logger's every record shown as `printable` text (whatever a message quotes: a feed's
    title, a post key, a server's answer), installed on the plugin's logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        shown = printable(message)
        if shown != message:
            record.msg, record.args = shown, None
        return True


def clauses(*parts: str) -> str:
    """The parts that are not empty, joined by "; ", each but the last without the full stop a
    server's message often ends with: `401: Invalid access token passed; log the bot in`, not
    `passed.; log`. An ellipsis (`...`) is left as it is."""
    kept = [part for part in parts if part]
    return "; ".join(
        [part[:-1] if part.endswith(".") and not part.endswith("..") else part for part in kept[:-1]] + kept[-1:]
    )
