"""Ledger schema v2, declared once: the record's fields in file order with their kinds, the
states, a post entry's fields, the header and end marker, and which plain scalars read back as
text. The full parser, the fast reader and the dumper are all derived from these declarations
(docs/ledger.md), so a field added here is parsed, read fast and written alike.

Version 2 adds what a post's life after its first announcement needs: a post entry's `id` (its
pinned `syndicate_id`), `src` (its source file) and `aliases` (the keys and URLs it had before a
move); the state `deleted`; `op` (`update` or `delete`) on an `in_flight` record; and the flag
`sandbox: true` on a record a sandbox run wrote (a rehearsal's, against the emulators: a real run
treats it as no record); a thread's `part` and `parts`; a pair's `life` (its announcements anew
after its copy was deleted); `review`, why a person must decide before a run changes the pair
again; and `media`, the images uploaded for the
post's copy (engine/uploads.py), written before the status that uses them; and `mentions`, a
Webmention channel's record of each link target it told (one sub-record per (post, target)).
A version 1 ledger
loads unchanged, and a ledger is written as version 1 until it holds a version 2 field."""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, NamedTuple

import yaml

from mkdocs_syndicate.lazyre import lazy_compile

VERSION = 2  # what this plugin writes once a version 2 field is present
VERSIONS = (1, 2)  # what it reads
HEADER = "# mkdocs-syndicate ledger: what was announced where. Commit this file.\n"
END_MARKER = "..."


class State(enum.StrEnum):
    """Where a (post, channel) pair is in its life (docs/how-it-works.md; the transitions
    allowed are ledger/store.py's). A StrEnum: it is written, printed and compared as its text."""

    IN_FLIGHT = "in_flight"  # durable before the request leaves; the request may be out
    DONE = "done"  # the service confirmed, or a read found it
    FAILED = "failed"  # nothing went out, or a definite no: pending again
    SKIPPED = "skipped"  # never announced here (adopted, opted out, resolved by hand)
    DELETED = "deleted"  # the copy was removed: by `removals: delete`, or by its author (proved by a read of its id)


STATES = tuple(state.value for state in State)
# The note of a `deleted` record whose copy its author withdrew on the service while the post
# stayed (an edit's read found it gone): the author's hand, which no later run undoes by itself.
WITHDRAWN = "withdrawn by its author on the service"

# A flag: `true`, written only when true. Parts: a thread's parts sent, a list of small mappings;
# media: the images uploaded for the copy, the same.
FieldKind = Literal["state", "count", "time", "text", "flag", "parts", "media", "mentions"]


class FieldSpec(NamedTuple):  # a NamedTuple, not a dataclass: cheaper to define on every import
    name: str
    kind: FieldKind
    plain_time_ok: bool = False  # a hand edit may write it as an unquoted YAML timestamp


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("state", "state"),
    FieldSpec("attempts", "count"),
    FieldSpec("at", "time", plain_time_ok=True),  # UTC, last transition
    FieldSpec("remote_id", "text"),
    FieldSpec("remote_url", "text"),
    FieldSpec("error", "text"),
    FieldSpec("idempotency_key", "text"),
    FieldSpec("created_at", "text", plain_time_ok=True),  # the first attempt: windows and scan bounds
    FieldSpec("message_sha256", "text"),
    FieldSpec("note", "text"),
    FieldSpec("op", "text"),  # on in_flight: "update" or "delete" of an existing copy (absent: the first send)
    # Why a person must decide before any run changes the pair again (engine/policy.py Step.REVIEW):
    # a change the service answered as made that a read shows not made, a copy that is another post's.
    FieldSpec("review", "text"),
    FieldSpec("part", "count"),  # a thread: the part whose request the in_flight record announces (2, 3, ...)
    FieldSpec("life", "count"),  # announcements anew after the copy was deleted (absent: 0, the first life)
    FieldSpec("parts", "parts"),  # a thread: each part sent, in order, the first being remote_id's
    FieldSpec("media", "media"),  # the images uploaded for the copy, before the status that shows them
    FieldSpec("mentions", "mentions"),  # Webmention: each target told of the post, and its endpoint's answer
    FieldSpec("sandbox", "flag"),  # written by a sandbox run: the emulators', not a real copy
)
OPS = ("update", "delete")
FIELD_NAMES = tuple(spec.name for spec in FIELDS)
TEXT_FIELDS = tuple(spec.name for spec in FIELDS if spec.kind == "text")  # optional, in file order
FLAG_FIELDS = tuple(spec.name for spec in FIELDS if spec.kind == "flag")  # optional, after the text fields


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a thread that was sent: its id on the service (a status id, an `at://` URI),
    its public URL, the hash of its text, and for Bluesky the record's `cid` (a reply names its
    root and its parent by URI and cid). `deleted`: proved gone by a removal still under way
    (engine/thread_changes.py), kept listed so that the `deleted` record names every part."""

    remote_id: str
    remote_url: str | None = None
    message_sha256: str | None = None
    cid: str | None = None
    deleted: bool = False

    def as_items(self) -> list[tuple[str, str | bool]]:
        return [(name, value) for name in PART_KEYS if (value := getattr(self, name)) not in (None, False)]


PART_KEYS = ("remote_id", "remote_url", "message_sha256", "cid", "deleted")


def live_parts(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """The parts still out: a removal under way marks those it deleted (always the last ones)."""
    return parts if not parts or not parts[-1].deleted else tuple(part for part in parts if not part.deleted)


def parts_from(value: Any) -> tuple[Part, ...]:
    """A `parts` field's value as YAML gives it: a list of mappings of text. ValueError says what
    is wrong with it otherwise."""
    if not isinstance(value, list):
        raise ValueError("parts must be a list of {remote_id: ..., remote_url: ..., message_sha256: ...}")
    found = []
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict) or not isinstance(item.get("remote_id"), str):
            raise ValueError(f"part {number} must be a mapping with a remote_id")
        unknown = set(item) - set(PART_KEYS)
        if unknown:
            raise ValueError(f"part {number}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(PART_KEYS)})")
        for key, text in item.items():
            if key == "deleted":
                if text is not True:  # written only when true
                    raise ValueError(f"part {number}: deleted must be true")
            elif not isinstance(text, str):
                raise ValueError(f"part {number}: {key} must be text, put it in quotes")
        found.append(Part(**item))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Media:
    """One image uploaded for a copy (engine/uploads.py): the service's id for it (a Mastodon
    media id, a Bluesky blob's CID, a Matrix `mxc://` URI), the SHA-256 of the post's image file
    it was made from (a changed image is uploaded anew), and what a reuse of a Bluesky blob names
    besides its CID: its media type and size in bytes as uploaded. Never a credential."""

    id: str
    sha256: str
    mime: str | None = None
    size: int | None = None

    def as_items(self) -> list[tuple[str, str | int]]:
        return [(name, value) for name in MEDIA_KEYS if (value := getattr(self, name)) is not None]


MEDIA_KEYS = ("id", "sha256", "mime", "size")


def media_from(value: Any) -> tuple[Media, ...]:
    """A `media` field's value as YAML gives it: a list of {id, sha256, mime, size}. ValueError
    says what is wrong with it otherwise."""
    if not isinstance(value, list):
        raise ValueError("media must be a list of {id: ..., sha256: ..., mime: ..., size: ...}")
    found = []
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("sha256"), str):
            raise ValueError(f"media item {number} must be a mapping with an id and a sha256")
        unknown = set(item) - set(MEDIA_KEYS)
        if unknown:
            known = ", ".join(MEDIA_KEYS)
            raise ValueError(f"media item {number}: unknown key {sorted(unknown)[0]!r} (known: {known})")
        for key, got in item.items():
            if key == "size":
                if isinstance(got, bool) or not isinstance(got, int) or got < 0:
                    raise ValueError(f"media item {number}: size must be a whole number of bytes")
            elif not isinstance(got, str):
                raise ValueError(f"media item {number}: {key} must be text, put it in quotes")
        found.append(Media(**item))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Mention:
    """One (post, target) of a Webmention channel: the page the post links to (`target`), the
    endpoint its discovery found (none: the target takes no Webmention), the endpoint's answer
    (`status`, its HTTP code; `remote_id`, the status URL its 201/202 `Location` named; `error`,
    why it refused) and `unlinked` when the post no longer links there (told once, so that the
    receiver drops the mention, then forgotten). Never a credential."""

    target: str
    endpoint: str | None = None
    status: int | None = None
    remote_id: str | None = None
    error: str | None = None
    unlinked: bool = False

    def as_items(self) -> list[tuple[str, str | int | bool]]:
        return [(name, value) for name in MENTION_KEYS if (value := getattr(self, name)) not in (None, False)]


MENTION_KEYS = ("target", "endpoint", "status", "remote_id", "error", "unlinked")


def mentions_from(value: Any) -> tuple[Mention, ...]:
    """A `mentions` field's value as YAML gives it: a list of {target, endpoint, status,
    remote_id, error, unlinked}. ValueError says what is wrong with it otherwise."""
    if not isinstance(value, list):
        raise ValueError("mentions must be a list of {target: ..., endpoint: ..., status: ..., remote_id: ...}")
    found = []
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict) or not isinstance(item.get("target"), str):
            raise ValueError(f"mention {number} must be a mapping with a target")
        unknown = set(item) - set(MENTION_KEYS)
        if unknown:
            known = ", ".join(MENTION_KEYS)
            raise ValueError(f"mention {number}: unknown key {sorted(unknown)[0]!r} (known: {known})")
        for key, got in item.items():
            if key == "status":
                if isinstance(got, bool) or not isinstance(got, int) or not 100 <= got <= 599:
                    raise ValueError(f"mention {number}: status must be an HTTP status code")
            elif key == "unlinked":
                if got is not True:  # written only when true
                    raise ValueError(f"mention {number}: unlinked must be true")
            elif not isinstance(got, str):
                raise ValueError(f"mention {number}: {key} must be text, put it in quotes")
        found.append(Mention(**item))
    return tuple(found)


@dataclass(slots=True)  # 50,000 of them in a large ledger: no per-object __dict__
class Record:
    """The state of one (post, channel) pair: the fields of FIELDS, in their order."""

    state: State
    attempts: int = 0
    at: str = ""
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None
    idempotency_key: str | None = None
    created_at: str | None = None
    message_sha256: str | None = None
    note: str | None = None
    op: str | None = None
    review: str | None = None  # a person decides first (`mkdocs-syndicate resolve`): held by every run
    part: int | None = None  # a thread's part announced by this in_flight record (see `parts`)
    # How many times the pair was announced anew after its copy was deleted: part of every id a
    # client chooses (content/identity.py `client_id`), so a new life never meets an old copy.
    life: int | None = None
    parts: tuple[Part, ...] = ()  # a thread's parts sent so far, in order (empty: one message)
    media: tuple[Media, ...] = ()  # images uploaded for the copy, written before the status that uses them
    mentions: tuple[Mention, ...] = ()  # Webmention: the targets told of the post (a link taken out is told too)
    sandbox: bool = False  # a sandbox run's record: to a real run, no record (the pair is pending)

    def moved(self, state: State, at: str, **fields: Any) -> Record:
        """The pair's next record: what a resend or a later read must reuse (the idempotency key,
        the first attempt's time, the payload's hash) carried forward, the rest given. A sandbox
        run's record stays one."""
        return Record(
            state,
            self.attempts,
            at,
            idempotency_key=self.idempotency_key,
            created_at=self.created_at,
            message_sha256=self.message_sha256,
            parts=self.parts,  # what a thread has out stays known, whatever happens to the rest
            media=self.media,  # an upload stays known: a resend reuses it (engine/uploads.py)
            mentions=self.mentions,  # the targets told: a link taken out later is told too
            sandbox=self.sandbox,
            life=self.life,
            **fields,
        )

    def new_life(self, at: str, error: str, note: str | None = None) -> Record:
        """The record a new life of the pair starts from (its copy deleted, the post to be
        announced again): pending (`failed`, `error` saying why), its life counted one up, and
        nothing of the old copy carried over (ids, key, first attempt, parts, uploads), so every
        id a client chooses is new."""
        return Record(State.FAILED, 0, at, error=error, note=note, life=(self.life or 0) + 1, sandbox=self.sandbox)

    @property
    def lives(self) -> int:
        """The pair's life number (0 for the first), as client ids take it."""
        return self.life or 0

    @property
    def withdrawn(self) -> bool:
        """A `deleted` copy its author withdrew by hand (`WITHDRAWN`): never a new life by itself."""
        return self.state == State.DELETED and (self.note or "").startswith(WITHDRAWN)

    def gone(self, at: str, note: str) -> Record:
        """The pair's `deleted` record: the copy's id and URL (and a thread's parts, each one
        listed) kept, so the ledger still names which copy a read proved gone (docs/ledger.md)."""
        parts = tuple(replace(part, deleted=False) for part in self.parts)
        gone = self.moved(State.DELETED, at, remote_id=self.remote_id, remote_url=self.remote_url, note=note)
        return replace(gone, parts=parts)

    def as_items(self) -> list[tuple[str, Any]]:
        """The fields written, in file order: a text field when set, a flag when true, parts when any."""
        return [
            (name, value)
            for name in FIELD_NAMES
            if (value := getattr(self, name)) is not None and value is not False and value != ()
        ]


if tuple(f.name for f in fields(Record)) != FIELD_NAMES:  # pragma: no cover - a declaration out of step
    raise AssertionError("Record's fields must be FIELDS, in the same order")
if FIELD_NAMES[-len(FLAG_FIELDS) :] != FLAG_FIELDS:  # pragma: no cover - the fast reader reads them last
    raise AssertionError("flag fields come after every other field")


@dataclass(slots=True)
class PostEntry:
    url: str
    title: str
    channels: dict[str, Record] = field(default_factory=dict)
    id: str | None = None  # the post's pinned `syndicate_id`, once seen
    src: str | None = None  # its source file, relative to docs_dir (posts the plugin finds)
    aliases: tuple[str, ...] = ()  # every key and URL it was announced under before a move
    # Its date and a sketch of its text (content/fingerprint.py): the same post after a rename
    # that no history shows (a shallow clone).
    fingerprint: str | None = None
    # A feed's own id for it (Atom `id`, RSS `guid`, JSON Feed `id`): the same post under a new link.
    entry_id: str | None = None

    @property
    def is_v2(self) -> bool:
        facts = (self.id, self.src, self.fingerprint, self.entry_id)
        return any(fact is not None for fact in facts) or bool(self.aliases)

    def former_urls(self, current: str) -> tuple[str, ...]:
        """The addresses it was announced under, other than `current`: its URL and the aliases
        that are links (aliases hold earlier keys too). A copy made then links there."""
        urls = (self.url, *(alias for alias in self.aliases if alias.startswith(("https://", "http://"))))
        return tuple(url for url in dict.fromkeys(urls) if url and url != current)


def needs_v2(posts: Posts) -> bool:
    """Whether a ledger holds anything a version 1 reader would refuse."""
    return any(
        entry.is_v2
        or any(
            r.state == State.DELETED
            or r.op is not None
            or r.sandbox
            or r.part is not None
            or r.parts
            or r.media
            or r.mentions
            or r.life is not None
            or r.review is not None
            for r in entry.channels.values()
        )
        for entry in posts.values()
    )


Posts = dict[str, PostEntry]


def record_in(posts: Posts, post_key: str, channel: str) -> Record | None:
    """The pair's record in a ledger's posts, or None when it has none."""
    entry = posts.get(post_key)
    return entry.channels.get(channel) if entry else None


# ---------------------------------------------------------------- plain scalars

FLOW_PLAIN = lazy_compile(r"[A-Za-z_][A-Za-z0-9_.-]*")  # unquoted in a flow mapping
BLOCK_PLAIN = lazy_compile(r"[A-Za-z0-9_/.][A-Za-z0-9_./~+%=?&@-]*(?::[A-Za-z0-9_./~+%=?&@-]+)*")
_STR_TAG = "tag:yaml.org,2002:str"
_resolver = yaml.resolver.Resolver()


@functools.lru_cache(maxsize=4096)  # states, channel ids and timestamps repeat a lot
def resolves_to_str(value: str) -> bool:
    """Whether YAML 1.1 reads this plain scalar back as the same text (not a number, a date, a
    boolean...): only then may it stand unquoted."""
    tag: str = _resolver.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG
