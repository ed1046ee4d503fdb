"""The ledger file: parse (strict, with file:line errors) and dump (canonical, one line per record).

The canonical layout sorts post keys and channel ids and writes every (post, channel) record as
one flow mapping on one line, so one transition changes one line of the diff. The file ends with
the YAML end marker `...`; a file without it is treated as truncated.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Callable
from typing import Any

import yaml

from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.ledger.schema import (
    BLOCK_PLAIN,
    END_MARKER,
    FIELD_NAMES,
    FIELDS,
    FLOW_PLAIN,
    HEADER,
    OPS,
    STATES,
    VERSION,
    VERSIONS,
    FieldSpec,
    Media,
    Mention,
    Part,
    PostEntry,
    Posts,
    Record,
    State,
    media_from,
    mentions_from,
    needs_v2,
    parts_from,
    resolves_to_str,
)
from mkdocs_syndicate.timeutil import to_iso

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# ---------------------------------------------------------------- parse


def parse(text: str, path: str) -> Posts:
    """Parse and validate a ledger; any doubt is a LedgerError naming `path` and the line."""
    return parse_with_layout(text, path)[0]


def parse_with_layout(text: str, path: str) -> tuple[Posts, bool]:
    """`parse`, and whether the text is in the canonical layout: read by the fast reader (a large
    ledger), or exactly what `dump` writes (a small one). A run that may write puts a ledger that
    is not back in it, once, so that the next runs read it fast (issue 36)."""
    if not _ends_with_marker(text):
        raise LedgerError(
            path,
            f"no end marker '{END_MARKER}' on the last line: the file is truncated "
            "or was not written by mkdocs-syndicate. Restore it from git before running again.",
        )
    if len(text) >= FAST_READER_FROM:
        from mkdocs_syndicate.ledger.fast import parse_canonical  # late: compiling it costs ~4 ms

        fast = parse_canonical(text)  # our own layout, read without a YAML parser
        if fast is not None:
            return fast, True
        from mkdocs_syndicate.ledger.tolerant import parse_tolerant

        tolerated = parse_tolerant(text, path, parse_yaml)  # hand edits: only the edited posts parsed as YAML
        if tolerated is not None:
            return tolerated, False
        return parse_yaml(text, path), False
    posts = parse_yaml(text, path)
    return posts, dump(posts) == text  # small: a dump costs less than a millisecond


# Below this size libyaml reads a ledger faster than the fast reader compiles and runs (10 KB:
# 3 ms against 4 + 1 ms); above it the fast reader wins by far (13.8 MB: 0.5 s against 9 s).
# Both give the same answer (tests/test_ledger_fast.py).
FAST_READER_FROM = 24 * 1024


def parse_yaml(text: str, path: str) -> Posts:
    """The full YAML path: hand edits, block style, and every error with its line."""
    if not _ends_with_marker(text):
        raise LedgerError(path, f"no end marker '{END_MARKER}' on the last line: the file is truncated")
    root = _compose(text, path)
    _reject_aliases(root, path)
    top = _mapping(root, path, "the top level")
    _check_version(top, root, path)
    unknown = set(top) - {"version", "posts"}
    if unknown:
        key = sorted(unknown)[0]
        raise LedgerError(path, f"unknown top-level key {key!r}", _line(top[key][0]))
    posts_node = top.get("posts")
    posts: Posts = {}
    if posts_node is None or _is_null(posts_node[1]):
        return posts
    for post_key, (key_node, entry_node) in _mapping(posts_node[1], path, "'posts'").items():
        posts[post_key] = _parse_post(post_key, key_node, entry_node, path)
    return posts


def _compose(text: str, path: str) -> yaml.Node:
    """The document's node tree; a YAML error names its line."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise LedgerError(path, f"not valid YAML: {exc.problem or exc}", line) from None
    except yaml.reader.ReaderError as exc:  # a raw NUL or other control byte: its line, not its offset
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or b"\0")
        line = text.count("\n", 0, exc.position) + 1
        raise LedgerError(path, f"not valid YAML: character U+{code:04X} ({exc.reason}); remove it", line) from None
    except yaml.YAMLError as exc:
        raise LedgerError(path, f"not valid YAML: {exc}") from None
    if root is None:
        raise LedgerError(path, "empty document")
    return root


def _check_version(top: dict[str, Any], root: yaml.Node, path: str) -> None:
    version = top.get("version")
    if version is None:
        raise LedgerError(path, "missing 'version'", _line(root))
    found_version = _scalar(version[1], path)
    # Exactly the number 1 or 2: not `true`, `1.0`, `"1"` or `0x1`, which only look like it to YAML.
    if type(found_version) is not int or found_version not in VERSIONS or version[1].value != str(found_version):
        raise LedgerError(
            path,
            f"unknown version {version[1].value!r}; this mkdocs-syndicate reads versions "
            f"{' and '.join(map(str, VERSIONS))} (upgrade the plugin)",
            _line(version[1]),
        )


def _ends_with_marker(text: str) -> bool:
    end = len(text)  # indexes, not copies: a ledger can be many megabytes
    while end and text[end - 1] in "\r\n":
        end -= 1
    return text[text.rfind("\n", 0, end) + 1 : end].rstrip() == END_MARKER


def _reject_aliases(root: yaml.Node, path: str) -> None:
    # The composer shares the node object for every use of an anchor: a repeat is an alias.
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise LedgerError(path, "aliases are not allowed in a ledger", _line(node))
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _mapping(node: yaml.Node, path: str, what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise LedgerError(path, f"{what} must be a mapping", _line(node))
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise LedgerError(path, f"a key in {what} must be a plain string", _line(key_node))
        key = str(key_node.value)
        if key in out:
            raise LedgerError(path, f"duplicate key {key!r} in {what}", _line(key_node))
        out[key] = (key_node, value_node)
    return out


_constructor = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.Node, path: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise LedgerError(path, "expected a single value here", _line(node))
    try:
        return _constructor.construct_object(node)
    except yaml.YAMLError as exc:
        raise LedgerError(path, f"bad value: {exc}", _line(node)) from None


def _text(node: yaml.Node, path: str, what: str, *, time: bool = False) -> str:
    """A text field. A plain (unquoted) value that YAML 1.1 reads as something else is an error,
    never converted: `0123` would become "83", `1:30` "90", `0x1F` "31". Only the time fields
    take an unquoted timestamp (block-style hand edits write them so)."""
    value = _scalar(node, path)
    if isinstance(value, _dt.datetime) and time:
        return to_iso(value)
    if not isinstance(value, str):
        shown = "null" if value is None else f"a {type(value).__name__}"
        raise LedgerError(
            path,
            f'{what} must be text, but YAML reads {node.value!r} as {shown}: put it in quotes ("{node.value}")',
            _line(node),
        )
    return value


def _parse_post(post_key: str, key_node: yaml.Node, node: yaml.Node, path: str) -> PostEntry:
    what = f"post {post_key!r}"
    items = _mapping(node, path, what)
    unknown = set(items) - set(ENTRY_KEYS)
    if unknown:
        key = sorted(unknown)[0]
        raise LedgerError(path, f"unknown key {key!r} in {what} (known: {', '.join(ENTRY_KEYS)})", _line(items[key][0]))
    url = _text(items["url"][1], path, f"{what} url") if "url" in items else ""
    title = _text(items["title"][1], path, f"{what} title") if "title" in items else ""
    entry = PostEntry(url=url, title=title)
    for name in ("id", "src"):
        if name in items and not _is_null(items[name][1]):
            setattr(entry, name, _text(items[name][1], path, f"{what} {name}"))
    if "aliases" in items and not _is_null(items["aliases"][1]):
        entry.aliases = _aliases(items["aliases"][1], path, what)
    for name in ("fingerprint", "entry_id"):
        if name in items and not _is_null(items[name][1]):
            setattr(entry, name, _text(items[name][1], path, f"{what} {name}"))
    if "channels" in items and not _is_null(items["channels"][1]):
        for channel, (_, rec_node) in _mapping(items["channels"][1], path, f"{what} channels").items():
            entry.channels[channel] = _parse_record(rec_node, path, f"record ({post_key}, {channel})")
    return entry


# A post entry's keys, in file order.
ENTRY_KEYS = ("url", "title", "id", "src", "aliases", "fingerprint", "entry_id", "channels")


def _aliases(node: yaml.Node, path: str, what: str) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise LedgerError(path, f"{what} aliases must be a list of keys and URLs", _line(node))
    return tuple(_text(item, path, f"{what} alias") for item in node.value)


def _parse_record(node: yaml.Node, path: str, what: str) -> Record:
    items = _mapping(node, path, what)
    unknown = set(items) - set(FIELD_NAMES)
    if unknown:
        key = sorted(unknown)[0]
        raise LedgerError(
            path, f"unknown field {key!r} in {what} (known: {', '.join(FIELD_NAMES)})", _line(items[key][0])
        )
    if "state" not in items:
        raise LedgerError(path, f"{what} has no 'state'", _line(node))
    values: dict[str, Any] = {}
    for spec in FIELDS:  # the schema says what each field may hold
        if spec.name not in items or (spec.kind == "text" and _is_null(items[spec.name][1])):
            continue
        values[spec.name] = _field(spec, items[spec.name][1], path, what)
    if not values.get("at"):  # every decision on timing (settle, waits, ages) starts from it
        raise LedgerError(
            path,
            f"{what} has no 'at' (the UTC time of its last change, like "
            '"2026-12-02T07:00:02Z"): restore it from git, or write the time by hand',
            _line(node),
        )
    return Record(**values)


# The fields that hold a list of small mappings, and what reads one.
_LISTS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "parts": parts_from,
    "media": media_from,
    "mentions": mentions_from,
}


def _field(spec: FieldSpec, node: yaml.Node, path: str, what: str) -> Any:
    """One field's value, as its kind in the schema allows."""
    label = f"{what} {spec.name}"
    if spec.kind == "state":
        state = _text(node, path, label)
        if state not in STATES:
            raise LedgerError(path, f"{what}: unknown state {state!r} (one of {', '.join(STATES)})", _line(node))
        return State(state)
    if spec.kind == "count":
        count = _scalar(node, path)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise LedgerError(path, f"{what}: {spec.name} must be a whole number >= 0", _line(node))
        return count
    if spec.kind == "flag":
        # Exactly `true` or `false`: not `yes`, `on` or "true", which only look like it to YAML.
        if not (isinstance(node, yaml.ScalarNode) and node.tag == _BOOL_TAG and node.value in ("true", "false")):
            raise LedgerError(path, f"{what}: {spec.name} must be true or false", _line(node))
        return node.value == "true"
    if spec.kind in _LISTS:
        try:
            return _LISTS[spec.kind](_constructor.construct_object(node, deep=True))
        except (ValueError, yaml.YAMLError) as exc:
            raise LedgerError(path, f"{what}: {exc}", _line(node)) from None
    if spec.kind == "time":
        stamp = _text(node, path, label, time=True)
        if stamp and not _valid_timestamp(stamp):
            raise LedgerError(
                path, f"{what}: '{spec.name}' must be a UTC time like 2026-12-02T07:00:02Z, not {stamp!r}", _line(node)
            )
        return stamp
    value = _text(node, path, label, time=spec.plain_time_ok)
    if spec.name == "op" and value not in OPS:
        raise LedgerError(path, f"{what}: unknown op {value!r} (one of {', '.join(OPS)})", _line(node))
    return value


_BOOL_TAG = "tag:yaml.org,2002:bool"
_TS_RE = lazy_compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _valid_timestamp(value: str) -> bool:
    if not _TS_RE.fullmatch(value):
        return False
    try:
        _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- dump


def dump(posts: Posts, cache: dict[str, tuple[PostEntry, str]] | None = None) -> str:
    """The canonical text of a ledger (deterministic: same data, same bytes). With `cache`, a
    post whose entry object is the one rendered last time is not rendered again (the Ledger
    replaces, never mutates, the entries it changes)."""
    # Version 1 until a version 2 field is written: an older plugin still reads what it can.
    out = [HEADER, f"version: {VERSION if needs_v2(posts) else 1}\n"]
    if not posts:
        out.append("posts: {}\n")
    else:
        out.append("posts:\n")
        for key in sorted(posts):
            entry = posts[key]
            if cache is not None:
                hit = cache.get(key)
                if hit is None or hit[0] is not entry:
                    hit = cache[key] = (entry, render_post(key, entry))
                out.append(hit[1])
            else:
                out.append(render_post(key, entry))
    out.append(END_MARKER + "\n")
    return "".join(out)


def render_post(key: str, entry: PostEntry) -> str:
    lines = [
        _key_line("  ", _block_scalar(key)),
        f"    url: {_block_scalar(entry.url)}\n    title: {_block_scalar(entry.title)}\n",
    ]
    if entry.id is not None:
        lines.append(f"    id: {_block_scalar(entry.id)}\n")
    if entry.src is not None:
        lines.append(f"    src: {_block_scalar(entry.src)}\n")
    if entry.aliases:
        lines.append(f"    aliases: [{', '.join(_flow_scalar(alias) for alias in entry.aliases)}]\n")
    if entry.fingerprint is not None:
        lines.append(f"    fingerprint: {_block_scalar(entry.fingerprint)}\n")
    if entry.entry_id is not None:
        lines.append(f"    entry_id: {_block_scalar(entry.entry_id)}\n")
    if not entry.channels:
        lines.append("    channels: {}\n")
    else:
        lines.append("    channels:\n")
        for channel in sorted(entry.channels):
            record = entry.channels[channel]
            body = ", ".join(f"{name}: {_flow_value(value)}" for name, value in record.as_items())
            lines.append(f"{_key_line('      ', _flow_scalar(channel))[:-1]} {{{body}}}\n")
    return "".join(lines)


# YAML reads an implicit key only if its ':' comes within 1,024 characters of its start (libyaml
# and PyYAML alike); a longer key is written in the explicit form `? key` / `:`, which every
# reader takes (the fast reader leaves such a file to the full parser).
_IMPLICIT_KEY_MAX = 1000


def _key_line(indent: str, scalar: str) -> str:
    if len(scalar) <= _IMPLICIT_KEY_MAX:
        return f"{indent}{scalar}:\n"
    return f"{indent}? {scalar}\n{indent}:\n"


def _flow_value(value: Any) -> str:
    if isinstance(value, tuple):  # a thread's parts, a copy's media, its mentions: small mappings
        return "[" + ", ".join(_flow_part(item) for item in value) + "]"
    if isinstance(value, bool):  # a flag (written only when true)
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _flow_scalar(str(value))


def _flow_part(item: Part | Media | Mention) -> str:
    return "{" + ", ".join(f"{name}: {_flow_item(value)}" for name, value in item.as_items()) + "}"


def _flow_item(value: str | int | bool) -> str:
    if isinstance(value, bool):  # a part's `deleted`, a mention's `unlinked` (written only when true)
        return "true" if value else "false"
    return str(value) if isinstance(value, int) else _flow_scalar(value)


@functools.lru_cache(maxsize=4096)  # states, channel ids and timestamps repeat a lot
def _flow_scalar(value: str) -> str:
    if FLOW_PLAIN.fullmatch(value) and resolves_to_str(value):
        return value
    return _quote(value)


def _block_scalar(value: str) -> str:
    if BLOCK_PLAIN.fullmatch(value) and resolves_to_str(value):
        return value
    return _quote(value)


_NEEDS_ESCAPE = lazy_compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]')


_SIMPLE_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def _quote(value: str) -> str:
    """A YAML double-quoted scalar; escapes whatever YAML would not keep verbatim."""
    if not _NEEDS_ESCAPE.search(value):
        return f'"{value}"'
    parts = ['"']
    for ch in value:
        code = ord(ch)
        if ch in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[ch])
        elif 0xD800 <= code <= 0xDFFF:
            # A lone surrogate is not text: libyaml refuses its escape, so a file holding one could
            # not be read back. It is written as U+FFFD (only a hostile server's answer can carry
            # one into a record; posts with one are refused before any request).
            parts.append("\\ufffd")
        elif code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            parts.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)
