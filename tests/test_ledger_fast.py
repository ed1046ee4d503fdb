"""The fast reader of the canonical layout agrees with the full YAML parser and with
yaml.safe_load, on generated ledgers, on hand-edited (block style) files and on near-canonical
mutations; and it really is used for our own output (no silent fallback)."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger.fast import parse_canonical
from mkdocs_syndicate.ledger.format import dump, parse, parse_yaml
from mkdocs_syndicate.ledger.schema import OPS, STATES, Media, Part, PostEntry, Record, State, needs_v2

pytestmark = pytest.mark.unit

TRICKY = [
    "no",
    "on",
    "off",
    "yes",
    "y",
    "~",
    "null",
    "1e3",
    "0x10",
    "12:30",
    "2026-01-02",
    "<<",
    "=",
    "-",
    "?",
    "a: b",
    "#x",
    "x #y",
    "'q'",
    '"dq"',
    "back\\slash",
    "tab\there",
    "new\nline",
    "ü",
    "😀",
    "\u2028",
    "\x85",
    "\x7f",
    "",
    " lead",
    "trail ",
    "[x]",
    "{x}",
    "a,b",
    "&a",
    "*a",
    "!t",
    "%p",
    "@a",
    "`b",
]
text = st.one_of(st.sampled_from(TRICKY), st.text(max_size=30))
ident = st.one_of(st.sampled_from(["mastodon", "devto", "bsky", "ping", "no", "1", "x-y", "a.b", "on"]), text)
timestamp = st.sampled_from(["2026-12-02T07:00:02Z", "2026-12-02T07:00:02.123456Z", "2026-12-02T07:00:02+01:00"])
record = st.builds(
    Record,
    state=st.sampled_from(STATES),
    attempts=st.integers(0, 10**6),
    at=timestamp,
    remote_id=st.one_of(st.none(), text),
    remote_url=st.one_of(st.none(), text),
    error=st.one_of(st.none(), text),
    idempotency_key=st.one_of(st.none(), text),
    created_at=st.one_of(st.none(), timestamp),
    message_sha256=st.one_of(st.none(), text),
    note=st.one_of(st.none(), text),
    op=st.one_of(st.none(), st.sampled_from(OPS)),
    part=st.one_of(st.none(), st.integers(1, 99)),
    parts=st.lists(
        st.builds(
            Part,
            remote_id=text,
            remote_url=st.one_of(st.none(), text),
            message_sha256=st.one_of(st.none(), text),
            cid=st.one_of(st.none(), text),
            deleted=st.booleans(),  # a removal under way: the parts it deleted
        ),
        max_size=3,
    ).map(tuple),
    media=st.lists(
        st.builds(
            Media,
            id=text,
            sha256=text,
            mime=st.one_of(st.none(), text),
            size=st.one_of(st.none(), st.integers(0, 10**9)),
        ),
        max_size=2,
    ).map(tuple),
    sandbox=st.booleans(),
)
entry = st.builds(
    PostEntry,
    url=text,
    title=text,
    channels=st.dictionaries(ident, record, max_size=4),
    id=st.one_of(st.none(), text),
    src=st.one_of(st.none(), text),
    aliases=st.lists(text, max_size=3).map(tuple),
    fingerprint=st.one_of(st.none(), text),
    entry_id=st.one_of(st.none(), text),
)
posts = st.dictionaries(text, entry, max_size=5)


def _plain_value(value):
    """A field as YAML reads it: a thread's parts and a copy's media are lists of mappings."""
    return [dict(item.as_items()) for item in value] if isinstance(value, tuple) else value


def as_plain(data) -> dict:
    """What yaml.safe_load should return for `data`."""
    return {
        "version": 2 if needs_v2(data) else 1,
        "posts": {
            key: {
                "url": e.url,
                "title": e.title,
                **({"id": e.id} if e.id is not None else {}),
                **({"src": e.src} if e.src is not None else {}),
                **({"aliases": list(e.aliases)} if e.aliases else {}),
                **({"fingerprint": e.fingerprint} if e.fingerprint is not None else {}),
                **({"entry_id": e.entry_id} if e.entry_id is not None else {}),
                "channels": {ch: {k: _plain_value(v) for k, v in r.as_items()} for ch, r in e.channels.items()},
            }
            for key, e in data.items()
        },
    }


def without_empty_at(plain: dict) -> dict:
    for e in plain["posts"].values():
        for r in e["channels"].values():
            if r.get("at") == "":
                r["at"] = ""
    return plain


@given(posts)
def test_our_output_takes_the_fast_path_and_every_reader_agrees(data):
    text = dump(data)
    fast = parse_canonical(text)
    assert fast is not None, "the fast path refused the dumper's own output"
    assert fast == data == parse_yaml(text, "x")
    assert yaml.safe_load(text) == without_empty_at(as_plain(data))


HAND_EDITED = [
    """\
    # edited by hand
    version: 1
    posts:
      blog/a/:
        url: https://example.com/blog/a/
        title: A
        channels:
          mastodon:
            state: done
            attempts: 1
            at: "2026-12-02T07:00:03Z"
            remote_id: "1137"
    ...
    """,
    """\
    version: 1
    posts:
      "blog/b/": {url: "https://example.com/blog/b/", title: 'B', channels: {devto: {state: failed, attempts: 2, at: "2026-12-02T07:00:03Z", error: 'no'}}}
    ...
    """,
    """\
    # mkdocs-syndicate ledger: what was announced where. Commit this file.
    version: 1
    posts:
      blog/c/:
        url: https://example.com/blog/c/
        title: C   # a comment
        channels:
          ping: {state: done, attempts: 1, at: "2026-12-02T07:00:03Z"}
    ...
    """,
]


@pytest.mark.parametrize("source", HAND_EDITED)
def test_hand_edits_fall_back_to_the_full_parser_with_the_same_meaning(source):
    text = textwrap.dedent(source)
    assert parse_canonical(text) is None
    data = parse(text, "hand.yml")
    loaded = yaml.safe_load(text)
    for key, e in data.items():
        assert loaded["posts"][key]["url"] == e.url and loaded["posts"][key]["title"] == e.title
        for ch, r in e.channels.items():
            raw = loaded["posts"][key]["channels"][ch]
            assert {k: str(v) if k != "attempts" else v for k, v in raw.items()} == dict(r.as_items())
    assert parse(dump(data), "again") == data  # and the next write is canonical


SAMPLE = {
    "blog/a/": PostEntry(
        "https://example.com/blog/a/",
        "A title: yes",
        {
            "mastodon": Record(
                State.DONE,
                1,
                "2026-12-02T07:00:03Z",
                remote_id="1137",
                remote_url="https://m/1",
                idempotency_key="k" * 64,
            ),
            "ping": Record(State.IN_FLIGHT, 2, "2026-12-02T07:00:02Z"),
        },
    ),
    "blog/b/": PostEntry("https://example.com/blog/b/", "B", {}),
}


@given(
    st.integers(0, 200),
    st.sampled_from(["", "x", '"', "\\", " ", "#", ":", "{", "}", ",", "0", "no", "\t"]),
    st.integers(0, 80),
)
def test_near_canonical_mutations_never_make_the_fast_path_disagree(line_no, insert, column):
    lines = dump(SAMPLE).split("\n")
    index = line_no % len(lines)
    line = lines[index]
    lines[index] = line[:column] + insert + line[column + 1 :]
    text = "\n".join(lines)
    fast = parse_canonical(text)
    try:
        slow = parse_yaml(text, "m")
    except LedgerError:
        slow = None
    if fast is not None:
        assert fast == slow, (index, lines[index])


def test_a_yaml_keyword_where_text_belongs_is_refused_by_both_paths():
    text = dump(SAMPLE).replace('remote_id: "1137"', "remote_id: no")
    assert parse_canonical(text) is None
    with pytest.raises(LedgerError, match="remote_id must be text"):
        parse(text, "l.yml")


def test_a_timestamp_of_the_right_shape_but_no_such_day_is_refused_by_both_paths():
    text = dump(SAMPLE).replace('"2026-12-02T07:00:03Z"', '"2026-02-30T07:00:03Z"')
    assert parse_canonical(text) is None
    with pytest.raises(LedgerError, match="'at' must be a UTC time"):
        parse(text, "l.yml")


# ---------------------------------------------------------------- hand edits, read fast

from mkdocs_syndicate.ledger.tolerant import parse_tolerant  # noqa: E402


def _block_style(line: str) -> str:
    """A canonical record line rewritten as a hand editor would: block style, a comment."""
    head, _, inside = line.partition(": {")
    fields = yaml.safe_load("{" + inside)
    out = [f"{head}:  # edited by hand"]
    for name, value in fields.items():
        out.append(f"        {name}: {json_quote(value)}")
    return "\n".join(out)


def json_quote(value):
    import json

    return str(value) if isinstance(value, int) else json.dumps(value, ensure_ascii=True)


edit = st.sampled_from(["comment", "blank", "trailing", "block", "none"])


@given(posts, st.lists(st.tuples(st.integers(0, 10**6), edit), max_size=8))
def test_hand_edits_are_read_by_the_tolerant_path_with_the_full_parsers_meaning(data, edits):
    lines = dump(data).split("\n")
    for at, kind in edits:
        index = 2 + at % max(1, len(lines) - 4)  # inside the posts section
        line = lines[index]
        if kind == "comment":
            lines.insert(index, "# a comment: {not: yaml}")
        elif kind == "blank":
            lines.insert(index, "")
        elif kind == "trailing" and line.startswith("      ") and line.endswith("}"):
            lines[index] = line + "   # sent by hand"
        elif kind == "block" and line.startswith("      ") and ": {state:" in line and "\\" not in line:
            lines[index] = _block_style(line)
    text = "\n".join(lines)
    try:
        expected = parse_yaml(text, "hand.yml")
    except LedgerError:
        expected = None
    tolerated = parse_tolerant(text, "hand.yml", parse_yaml)
    if expected is None:
        assert tolerated is None
        return
    assert tolerated is not None or not data, "the tolerant path refused a valid hand edit"
    if tolerated is not None:
        assert tolerated == expected == data
    assert parse(text, "hand.yml") == data


def test_a_hand_edit_the_parser_refuses_gives_the_full_parsers_error_and_line():
    text = dump(SAMPLE).replace("    title: B\n", "    title: B\n    color: red   # by hand\n")
    assert parse_tolerant(text, "l.yml", parse_yaml) is None
    with pytest.raises(LedgerError, match=r"l\.yml:\d+: unknown key 'color' in post 'blog/b/'"):
        parse(text + "\n" * 30000, "l.yml")  # past the fast reader's threshold: every path tried


def test_a_repeated_post_key_across_pieces_is_left_to_the_full_parser():
    text = dump(SAMPLE)
    piece = text[text.index("  blog/b/:") : text.index("...")]
    text = text.replace("...\n", "  # copied by hand\n" + piece + "...\n")
    assert parse_tolerant(text, "l.yml", parse_yaml) is None
    with pytest.raises(LedgerError, match="duplicate key 'blog/b/'"):
        parse(text + "\n" * 30000, "l.yml")


# ---------------------------------------------------------------- fuzzed mutants: the readers agree

# A canonical ledger with every kind of line, and the same ledger partly in block style (what the
# tolerant reader reads), each mutated as a careless hand or a broken tool would.
FUZZ_BASE = {
    **SAMPLE,
    "blog/c/": PostEntry(
        "https://example.com/blog/c/",
        'C: "quoted"',
        {
            "devto": Record(State.FAILED, 1, "2026-12-02T07:00:03Z", error="no way"),
            "x": Record(State.DELETED, 1, "2026-12-02T07:00:03Z"),
            "y": Record(State.DONE, 1, "2026-12-02T07:00:03Z", remote_url="http://127.0.0.1:8787/y", sandbox=True),
        },
        id="pin-c",
        src="blog/c.md",
        aliases=("blog/old-c/", "https://example.com/blog/old-c/"),
    ),
}
FUZZ_TEXTS = [
    dump(FUZZ_BASE),
    "\n".join(_block_style(line) if ": {state:" in line else line for line in dump(FUZZ_BASE).split("\n")),
]
FUZZ_CHARS = [
    "\t",
    " ",
    "  ",
    "#",
    ":",
    "-",
    "x",
    "{",
    "}",
    "'",
    '"',
    ",",
    "?",
    "&",
    "*",
    "!",
    "|",
    ">",
    "%",
    ".",
    "\r",
    "\x85",
    "\u2028",
    "\x7f",
]
FUZZ_LINES = [
    "",
    "#x",
    "\t# note",
    "  # c",
    "\t",
    " \t",
    "    # c: {d}",
    "# a: {b}",
    "...",
    "---",
    "  #",
    " #c",
    "  # \x85x: y",
    "#\u2028  z: 1",
    "%YAML 1.1",
]
mutation = st.tuples(
    st.sampled_from(["insert", "delete", "duplicate", "line", "indent", "dedent", "repeat", "trail", "drop"]),
    st.integers(0, 10**6),  # which line
    st.integers(0, 200),  # which column
    st.integers(0, 10**6),  # which character or line to add
)


def _mutated(text: str, mutations: list[tuple[str, int, int, int]]) -> str:
    lines = text.split("\n")
    for kind, at, where, pick in mutations:
        index = at % len(lines)
        line = lines[index]
        column = where % (len(line) + 1)
        if kind == "insert":
            lines[index] = line[:column] + FUZZ_CHARS[pick % len(FUZZ_CHARS)] + line[column:]
        elif kind == "delete":
            lines[index] = line[:column] + line[column + 1 :]
        elif kind == "duplicate":
            lines[index] = line[:column] + line[column : column + 1] + line[column:]
        elif kind == "line":
            lines.insert(index, FUZZ_LINES[pick % len(FUZZ_LINES)])
        elif kind == "indent":
            lines[index] = ("\t", " ", "  ")[pick % 3] + line
        elif kind == "dedent":
            lines[index] = line[1:] if line.startswith(" ") else line
        elif kind == "repeat":
            lines.insert(index, line)
        elif kind == "trail":
            lines[index] = line + ("  # c", "\t# c", "\t", " ", "#c")[pick % 5]
        elif len(lines) > 1:
            del lines[index]
    return "\n".join(lines)


@given(st.sampled_from(FUZZ_TEXTS), st.lists(mutation, min_size=1, max_size=4))
def test_fuzzed_mutants_are_read_alike_by_the_three_readers_or_refused_by_all(source, mutations):
    """Issue 36: 56 of 5,000 mutants were read by the tolerant reader and refused by the full
    parser (a tab-indented comment, a stray `...`). A reader other than the full parser may hand a
    file on (None), never read it otherwise: the user gets the full parser's answer or its error."""
    text = _mutated(source, mutations)
    try:
        expected = parse_yaml(text, "m.yml")
    except LedgerError as exc:
        expected, error = None, str(exc)
    for name, found in (("fast", parse_canonical(text)), ("tolerant", parse_tolerant(text, "m.yml", parse_yaml))):
        assert found is None or found == expected, (
            f"the {name} reader read what the full parser {'refuses' if expected is None else 'reads otherwise'}"
        )
    padded = text + "\n" * 30000  # past the fast reader's threshold: parse() tries every reader
    if expected is None:
        with pytest.raises(LedgerError):
            parse(padded, "m.yml")
        assert parse_canonical(padded) is None and parse_tolerant(padded, "m.yml", parse_yaml) is None, error
    else:
        assert parse(padded, "m.yml") == expected


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda t: t.replace("    title: B\n", "    title: B\n\t# note\n"), id="tab-indented comment"),
        pytest.param(lambda t: t.replace("    title: B\n", "    title: B\n\t\n"), id="a line of a tab"),
        pytest.param(lambda t: t.replace("  blog/b/:", "...\n  blog/b/:"), id="a stray end marker"),
        pytest.param(lambda t: t.replace("    title: B\n", "    title: B\n  # a\x85b: c\n"), id="NEL in a comment"),
        pytest.param(lambda t: t + "# after the end\n", id="a comment after the end marker"),
    ],
)
def test_what_the_full_parser_refuses_the_tolerant_reader_refuses(edit):
    text = edit(dump(FUZZ_BASE))
    with pytest.raises(LedgerError):
        parse_yaml(text, "l.yml")
    assert parse_tolerant(text, "l.yml", parse_yaml) is None
