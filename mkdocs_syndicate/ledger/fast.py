"""A fast reader for the canonical ledger layout (what `ledger_format.dump` writes).

A YAML parser takes seconds for 50,000 records; this reads our own layout line by line with one
pass of one regular expression over all its lines. It accepts only text whose meaning it is sure of — exactly the
layout, scalars exactly as the dumper writes them — and returns None for anything else (hand
edits, block style, comments, odd characters), and the caller then uses the full YAML parser,
which also gives the precise file:line error. So both paths always agree with `yaml.safe_load`
(tests/test_ledger_fast.py checks that on generated and hand-edited files).
"""

from __future__ import annotations

import datetime as _dt
import gc
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from mkdocs_syndicate.ledger.schema import (
    BLOCK_PLAIN,
    FLAG_FIELDS,
    HEADER,
    STATES,
    TEXT_FIELDS,
    VERSIONS,
    Part,
    PostEntry,
    Posts,
    Record,
    State,
    media_from,
    mentions_from,
    parts_from,
    resolves_to_str,
)

# Characters a YAML reader treats specially or refuses in a stream (and raw tabs, which the dumper
# escapes) never appear raw in the dumper's output: one search of the whole text for them sends
# any file that has one to the full parser, so the expressions below need not exclude them (and
# compile in a fraction of the time: every build reads the ledger).
ODD = re.compile("[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ufeff\\ufffe\\uffff\\ud800-\\udfff]")
_QUOTED = r'"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"'  # unrolled: fast on long strings
_QCONTENT = r'(?:[^"\\\n]|\\[^\n])[^"\\\n]*(?:\\[^\n][^"\\\n]*)*'  # non-empty
# `at` as the dumper writes it (quoted UTC seconds; every record has one); other shapes, valid or
# not, are left to the full parser, which says what is wrong and where.
_STAMP = r'"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"'
_FLOW_VALUE = rf"(?:{_QUOTED}|[A-Za-z_][A-Za-z0-9_.-]*|0|[1-9][0-9]*)"
_BLOCK_VALUE = rf'(?:{_QUOTED}|[^\s"#][^\n]*)'
# A record line exactly as the dumper writes it: fields in schema order, the state an identifier,
# attempts a number, `at` quoted (it would read as a timestamp otherwise).
_RECORD = re.compile(
    rf"      ({_FLOW_VALUE}): \{{state: ({'|'.join(STATES)})(?:, attempts: (0|[1-9][0-9]*))?"
    rf", at: ({_STAMP})"
    # Optional text fields: group A is the inside of a non-empty quoted value (one string made, not
    # two), group B an empty quoted value or a plain token; both empty means the field is absent.
    + "".join(
        rf'(?:, {name}: (?:"({_QCONTENT})"|(""|[A-Za-z_][A-Za-z0-9_.-]*|0|[1-9][0-9]*)))?' for name in TEXT_FIELDS
    )
    # A thread: the part in flight (a number) and the parts sent (a flow list of flow mappings,
    # read by YAML: rare, and checked as the full parser checks it); the media uploaded, the same.
    + r"(?:, part: ([1-9][0-9]*))?(?:, life: (0|[1-9][0-9]*))?"
    + r"(?:, parts: (\[\{[^\n]*?\}\]))?(?:, media: (\[\{[^\n]*?\}\]))?(?:, mentions: (\[\{[^\n]*?\}\]))?"
    # Flags, as the dumper writes them: `true`, or absent (false).
    + "".join(rf"(?:, {name}: (true))?" for name in FLAG_FIELDS)
    + r"\}"
)
_ESCAPE = re.compile(r'\\(["\\nt]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})')
_SIMPLE = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_MAYBE_NOT_STR = set("yYnNtTfFoO-+0123456789.<~=")  # first letters of YAML 1.1 implicit types

_STATE_OF = {state.value: state for state in State}  # the regex took one of these texts


class _NotCanonical(Exception):
    pass


# Every line of the posts section is one of these; findall makes one pass in C, and a count of
# matches equal to the count of lines proves no line was skipped (each alternative spans a line).
_LINE = re.compile(
    rf"^(?:  ({_QUOTED}|[^\s\"#][^\n]*?):"  # 1 post key
    rf"|    url: ({_BLOCK_VALUE})|    title: ({_BLOCK_VALUE})"  # 2 url, 3 title
    rf"|    (channels:(?: \{{\}})?)"  # 4 channels header
    rf"|{_RECORD.pattern}"  # 5.. a record
    rf"|    id: ({_BLOCK_VALUE})|    src: ({_BLOCK_VALUE})"  # version 2: the pin, the source file
    rf"|    aliases: \[({_FLOW_VALUE}(?:, {_FLOW_VALUE})*)\]"  # version 2: earlier keys and URLs
    rf"|    fingerprint: ({_BLOCK_VALUE})"  # version 2: its date and a sketch of its text
    rf"|    entry_id: ({_BLOCK_VALUE}))$",  # version 2: a feed's id for it
    re.MULTILINE,
)
_TEXTS_END = 8 + 2 * len(TEXT_FIELDS)  # a row's text field groups end here; the flags follow
# Between the text fields and the flags:
_PART, _LIFE, _PARTS, _MEDIA, _MENTIONS = (_TEXTS_END + n for n in range(5))
_FLAGS_END = _TEXTS_END + 5 + len(FLAG_FIELDS)  # a row's record groups end here; the version 2 lines follow
_ID, _SRC, _ALIASES, _FINGERPRINT, _ENTRY_ID = (_FLAGS_END + n for n in range(5))
_ALIAS = re.compile(_FLOW_VALUE)
T = TypeVar("T")


def parse_canonical(text: str) -> Posts | None:
    """The posts of a canonical ledger, or None when the text is not exactly canonical."""
    prefix = next((p for v in VERSIONS if text.startswith(p := f"{HEADER}version: {v}\nposts:")), None)
    if prefix is None or not text.endswith("\n...\n"):
        return None
    if text == prefix + " {}\n...\n":
        return {}
    body = text[len(prefix) + 1 : -4]  # from the first post key line to the last record's newline
    if text[len(prefix)] != "\n" or not body or ODD.search(body):
        return None
    # Tens of thousands of small objects and no cycles: the cyclic GC would only add passes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _posts(body)
    except _NotCanonical:
        return None
    finally:
        if collecting:
            gc.enable()


def parse_piece(chunk: str) -> Posts | None:
    """The posts of a piece of a posts section (whole posts, as the tolerant reader cuts them) in
    the canonical layout, or None when it is not canonical."""
    if ODD.search(chunk):
        return None
    try:
        return _posts(chunk)
    except _NotCanonical:
        return None


_CHUNK = 1 << 20  # characters per findall: its row tuples for a whole 13 MB file would be ~10x that


def _chunks(body: str) -> Iterator[list[tuple[str, ...]]]:
    start = 0
    while start < len(body):
        end = body.find("\n", min(start + _CHUNK, len(body) - 1)) + 1 or len(body)
        chunk = body[start:end]
        rows = _LINE.findall(chunk)
        if len(rows) != chunk.count("\n"):
            raise _NotCanonical  # some line is not in the canonical layout
        yield rows
        start = end


def _posts(body: str) -> Posts:
    """One loop over the rows. A record (most rows are records: this loop runs once per line of a
    ledger that can hold 50,000 of them) is read inline; a post's four header lines are read by
    `_post`, once per post."""
    posts: Posts = {}
    plain_ok: dict[str, bool] = {}
    channels: dict[str, str] = {}
    stamps: dict[str, str] = {}
    rows = itertools.chain.from_iterable(_chunks(body))
    entry: PostEntry | None = None  # the post whose records may come next (not after `channels: {}`)
    for row in rows:
        channel_token = row[4]
        if not channel_token:  # a post's key line; its url, title, version 2 lines and channels header follow
            if not row[0] or (entry is not None and not entry.channels):
                raise _NotCanonical  # a stray line, or `channels:` with no record under it
            entry = _post(row[0], rows, posts, plain_ok)
            continue
        if entry is None:
            raise _NotCanonical
        # Channel ids and timestamps repeat across records: decode (and check) each once.
        channel = channels.get(channel_token) or channels.setdefault(channel_token, _flow(channel_token, plain_ok))
        at = stamps.get(row[7]) or stamps.setdefault(row[7], _stamp(row[7]))
        if channel in entry.channels:
            raise _NotCanonical
        # The text fields, in schema order: each a pair of groups (quoted inside, plain).
        texts = row[8:_TEXTS_END]
        values: list[Any] = [  # Any: the text fields' values, before the flags (mypy cannot tell)
            (q if "\\" not in q else _unescape(q)) if q else _value(p, plain_ok)
            for q, p in zip(texts[::2], texts[1::2], strict=True)
        ]
        record = entry.channels[channel] = Record(_STATE_OF[row[5]], int(row[6]) if row[6] else 0, at, *values)
        if row[_PART]:
            record.part = int(row[_PART])
        if row[_LIFE]:
            record.life = int(row[_LIFE])
        if row[_PARTS]:
            record.parts = _parts(row[_PARTS])
        if row[_MEDIA]:
            record.media = _listed(media_from, row[_MEDIA])
        if row[_MENTIONS]:
            record.mentions = _listed(mentions_from, row[_MENTIONS])
        flags = row[_MENTIONS + 1 : _FLAGS_END]  # each `true` or absent
        if any(flags):
            for name, flag in zip(FLAG_FIELDS, flags, strict=True):
                setattr(record, name, bool(flag))
    if entry is not None and not entry.channels:
        raise _NotCanonical
    return posts


def _post(key_token: str, rows: Iterator[tuple[str, ...]], posts: Posts, plain_ok: dict[str, bool]) -> PostEntry | None:
    """A post's header: its key (given), then exactly its url and title lines, its version 2
    lines if any (id, src, aliases, fingerprint, entry_id, in that order), and its channels line. Returns the entry its
    records go into, or None after `channels: {}`."""
    key = _block(key_token, plain_ok)
    if key in posts:
        raise _NotCanonical  # a duplicate: the full parser reports it with its line
    url_row, title_row, row = next(rows, _NONE), next(rows, _NONE), next(rows, _NONE)
    url_token, title_token = url_row[1], title_row[2]
    if not (url_token and title_token):
        raise _NotCanonical  # out of order, or the text ends inside the header
    entry = posts[key] = PostEntry(_block(url_token, plain_ok), _block(title_token, plain_ok))
    if row[_ID]:
        entry.id, row = _block(row[_ID], plain_ok), next(rows, _NONE)
    if row[_SRC]:
        entry.src, row = _block(row[_SRC], plain_ok), next(rows, _NONE)
    if row[_ALIASES]:
        entry.aliases = tuple(_flow(token, plain_ok) for token in _ALIAS.findall(row[_ALIASES]))
        row = next(rows, _NONE)
    if row[_FINGERPRINT]:
        entry.fingerprint, row = _block(row[_FINGERPRINT], plain_ok), next(rows, _NONE)
    if row[_ENTRY_ID]:
        entry.entry_id, row = _block(row[_ENTRY_ID], plain_ok), next(rows, _NONE)
    header = row[3]
    if not header:
        raise _NotCanonical
    return None if header == "channels: {}" else entry


_NONE = ("",) * (_ENTRY_ID + 1)  # a row that is none of a header's lines: the end of the text, read as such


def _parts(token: str) -> tuple[Part, ...]:
    import yaml

    try:
        return parts_from(yaml.safe_load(token))
    except (ValueError, yaml.YAMLError):
        raise _NotCanonical from None  # the full parser says what is wrong, and where


def _listed(reader: Callable[[Any], tuple[T, ...]], token: str) -> tuple[T, ...]:
    """A field that holds a list of small mappings (media, mentions), read by YAML and checked."""
    import yaml

    try:
        return reader(yaml.safe_load(token))
    except (ValueError, yaml.YAMLError):
        raise _NotCanonical from None  # the full parser says what is wrong, and where


def _stamp(token: str) -> str:
    at = token[1:-1]
    try:  # the shape is the regex's; the calendar is fromisoformat's (2026-02-30 is not a date)
        _dt.datetime.fromisoformat(at)
    except ValueError:
        raise _NotCanonical from None
    return at


def _value(token: str, plain_ok: dict[str, bool]) -> str | None:
    """Group B of an optional field: absent, an empty quoted value, or a plain token."""
    if not token:
        return None
    if token == '""':
        return ""
    return _flow(token, plain_ok)


def _flow(token: str, plain_ok: dict[str, bool]) -> str:
    """A token _RECORD matched: quoted, an identifier, or a number (never text in our layout)."""
    if token[0] == '"':
        return _unquote(token)
    if token[0].isdigit() or not _is_str(token, plain_ok):
        raise _NotCanonical  # a bare number or a YAML keyword where text belongs
    return token


def _block(token: str, plain_ok: dict[str, bool]) -> str:
    if token.startswith('"'):
        return _unquote(token)
    if not BLOCK_PLAIN.fullmatch(token) or not _is_str(token, plain_ok):
        raise _NotCanonical
    return token


def _is_str(token: str, plain_ok: dict[str, bool]) -> bool:
    if token[0] not in _MAYBE_NOT_STR:
        return True
    known = plain_ok.get(token)
    if known is None:
        known = plain_ok[token] = resolves_to_str(token)
    return known


def _unquote(token: str) -> str:
    return _unescape(token[1:-1])


def _unescape(inner: str) -> str:
    """The text of a double-quoted scalar's inside, with the dumper's escapes decoded."""
    if "\\" not in inner:
        return inner
    if "\\" in _ESCAPE.sub("", inner):
        raise _NotCanonical  # an escape the dumper never writes

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in _SIMPLE:
            return _SIMPLE[code]
        value = int(code[1:], 16)
        if 0xD800 <= value <= 0xDFFF:
            raise _NotCanonical  # libyaml refuses a surrogate escape: the full parser says where
        return chr(value)

    return _ESCAPE.sub(one, inner)
