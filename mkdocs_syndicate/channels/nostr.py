"""The Nostr channel: a post announced on relays, written from the NIPs (github.com/nostr-protocol/nips):
NIP-01 (events, ids, signatures, the EVENT/REQ/OK/EOSE/CLOSED messages), NIP-09 (deletion
requests), NIP-19 (the bech32 names in a copy's link) and NIP-23 (long-form content).

A lane is one relay, and each (post, relay) pair has its own ledger record: `relay:` makes the
channel one lane, `relays:` one lane per relay named `<id>@<relay host>` (`lanes`), each with its
own records, pacing and reads. At most once.

- Default: a kind 1 note, the message with the post's link, and an `r` tag naming the post's
  URL. Its `created_at` is frozen at the pair's first attempt, so the event, and with it its id
  (the hash of the signed fields, NIP-01), is the same on every resend: the id is chosen before
  the call and recorded in_flight. A relay answers a repeat with `OK true "duplicate: …"`; an
  unknown outcome is still read first, by a REQ for that id from our key (a relay may have
  dropped a duplicate of a deleted event, and a read costs one round trip).
- `long_form: true`: the whole post as a NIP-23 article (kind 30023) in Markdown, with `title`,
  `summary`, `published_at` and a `d` tag derived from (site, post, channel, life). An article is
  addressable by (kind, author, d): an edit publishes a newer version of the same address, which
  replaces the old one, and the copy is read by a REQ on author + `d`. `edits: update` is its
  default; a note is never edited (NIP-01 has no edit; `edits: ignore`).
- Removal: a NIP-09 kind 5 event naming the copy (`e` its id; an article's `a` its address and
  `e` each version a read found: nostr-relay deletes by `e` only, nostr_relay/storage/db.py
  `process_tags`). Read back as the copy absent and our deletion present; absent alone proves
  nothing (a relay may prune).

A relay's OK false is a definite "not stored" (NIP-01), its reason's prefix saying why:
`rate-limited:` waits and retries (nostr-relay checks its limit before it stores anything,
nostr_relay/web.py); `auth-required:`, `restricted:` and `blocked:` are the key refused (the lane
stops); `duplicate:` means the relay has it. The secret key is checked when the config is read
(channels/nostr_keys.py) and never leaves this process except as signatures.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from mkdocs_syndicate.channel_api import (
    Channel,
    ChannelSettings,
    ConfigError,
    Copy,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    LengthRule,
    Option,
    Outcome,
    Post,
    Prepared,
    Presence,
    Record,
    Verdict,
    client_id,
    render_message,
)
from mkdocs_syndicate.channels import nostr_wire
from mkdocs_syndicate.channels.nostr_events import (
    ARTICLE,
    DELETION,
    NOTE,
    Event,
    is_genuine,
    public_key,
    signed,
    tag_value,
    unsigned,
)
from mkdocs_syndicate.channels.nostr_keys import secret_key
from mkdocs_syndicate.config.channels import is_loopback
from mkdocs_syndicate.content.portable import portable_markdown
from mkdocs_syndicate.nip19 import bech32_encode, naddr_name, note_name
from mkdocs_syndicate.timeutil import epoch_to_iso, from_iso

DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}"
# nostr-relay's default max_event_size is 4,096 characters of content (nostr_relay/config.py):
# the smallest default of the relays whose source we read, so a note stays under it.
NOTE_CHARACTERS = 4_000
SUMMARY_CHARACTERS = 300


_WEBSOCKET_SCHEMES = {"https": "wss", "http": "ws"}  # a relay's address as its NIP-11 page gives it


def relay_url(value: str, setting: str) -> str:
    """wss:// anywhere; ws:// only on a loopback host (a relay of one's own, the sandbox). The
    relay's https:// (or loopback http://) address is taken as its wss:// (ws://) one."""
    value = value.strip()
    scheme, colon, rest = value.partition(":")
    value = f"{_WEBSOCKET_SCHEMES.get(scheme.lower(), scheme)}{colon}{rest}"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  # a port that is no number raises here
    except ValueError:
        raise ConfigError(f"{value!r} is not a relay URL (wss://relay.example.com)", setting) from None
    if parts.scheme not in ("ws", "wss") or not parts.hostname or "@" in parts.netloc:
        raise ConfigError(
            f"{value!r} is not a relay URL: it must start with wss:// (e.g. wss://relay.damus.io)", setting
        )
    if parts.scheme == "ws" and not is_loopback(parts.hostname):
        raise ConfigError(f"{value!r} uses ws:// on a non-loopback host; use wss://", setting)
    return value


def relay_urls(values: tuple[str, ...], setting: str) -> tuple[str, ...]:
    """`relays:`: each a relay URL, as `relay:` takes one."""
    return tuple(relay_url(value, f"{setting}[{n}]") for n, value in enumerate(values))


@dataclass(frozen=True)
class _Read:
    """What a REQ about one copy found: the copy's versions (newest first) and our deletions of it."""

    complete: bool
    versions: list[Event]
    deletions: list[Event]
    reason: str = ""


class NostrChannel(Channel):
    type_name = "nostr"
    deletes = True  # a NIP-09 deletion request
    # nostr-relay checks a client's rate limit before it stores anything (nostr_relay/web.py:
    # `rate_limiter.is_limited` answers OK false "rate-limited:" before `storage.add_event`), and
    # NIP-01's OK false is "not stored": a rate-limited event is retried after the wait, unread.
    rate_limit_checked_first = True
    # A note is never edited (NIP-01 has no edit); with long_form, an article is, as a newer
    # version of its address: `edits_in_place_with` says which a channel's settings are.
    edits_in_place = False
    options: ClassVar[Mapping[str, Option]] = {
        "relay": Option("text", help="the relay's WebSocket URL, e.g. wss://relay.damus.io", check=relay_url),
        "relays": Option(
            "list",
            help="several relays, each a lane with its own records: [wss://relay.damus.io, wss://nos.lol]",
            check=relay_urls,
        ),
        "secret_key": Option(
            "secret",
            required=True,
            help="the account's secret key, nsec1… or hex: !ENV NOSTR_SECRET_KEY",
            check=secret_key,
        ),
        "long_form": Option("bool", default=False, help="publish the whole post as a NIP-23 article (kind 30023)"),
        "web_url": Option("url", default="https://njump.me", help="a web gateway: a copy's link is <web_url>/<note1…>"),
    }

    @classmethod
    def lanes(cls, settings: ChannelSettings) -> list[ChannelSettings]:
        """`relay:` is this channel; `relays:` is one lane per relay, `<id>@<relay host>`, each
        with its own records, pacing and reads (a relay down holds up no other)."""
        relay, relays = settings.options.get("relay"), settings.options.get("relays")
        if (relay is None) == (relays is None):
            problem = (
                "give one of relay (one relay) or relays (a list)"
                if relay is None
                else "give relay or relays, not both"
            )
            raise ConfigError(problem, settings.where("relays" if relays else "relay"))
        if relays is None:
            return [settings]
        named: dict[str, str] = {}
        for url in relays:
            name = f"{settings.id}@{urlsplit(url).netloc.lower()}"
            if name in named:
                raise ConfigError(
                    f"{url} and {named[name]} are on one host: give each relay once", settings.where("relays")
                )
            named[name] = url
        return [
            replace(settings, id=name, configured=settings.id, options={**settings.options, "relay": url})
            for name, url in named.items()
        ]

    @classmethod
    def edits_in_place_with(cls, values: Mapping[str, Any]) -> bool:
        """Only an article is edited in place: a note cannot be (NIP-01 has no edit)."""
        return values.get("long_form") is True

    @property
    def _article(self) -> bool:
        return bool(self.settings.options["long_form"])

    @property
    def _relay(self) -> str:
        return str(self.settings.options["relay"])

    @property
    def _secret(self) -> str:
        return str(self.settings.options["secret_key"].reveal())

    @property
    def _author(self) -> str:
        return public_key(self._secret)

    def _address(self, identifier: str) -> str:
        return f"{ARTICLE}:{self._author}:{identifier}"

    def _link(self, event: Event) -> str:
        web = self.settings.options["web_url"]
        if event["kind"] == ARTICLE:
            return f"{web}/{naddr_name(ARTICLE, self._author, tag_value(event, 'd') or '')}"
        return f"{web}/{note_name(event['id'])}"

    def recognises(self, remote_url: str) -> bool:
        return remote_url.startswith(f"{self.settings.options['web_url']}/")

    # ---------------------------------------------------------------- without network

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            LengthRule(NOTE_CHARACTERS, len, "characters"),
            self.site.name,
            where=self.settings.where("template"),
        )
        frozen = created_at or epoch_to_iso(time.time())
        if not self._article:
            event = self._note(post, message.text, frozen)
            return Prepared(
                message, idempotency_key=event["id"], created_at=frozen, description=message.text, life=life
            )
        identifier = client_id(post.url, self.id, "nostr-article", life)
        article = self._article_event(post, message.text, frozen, identifier, _epoch(frozen))
        fingerprint = json.dumps([article["content"], article["tags"]], ensure_ascii=False)
        return Prepared(
            message,
            idempotency_key=identifier,
            created_at=frozen,
            description=f"article {post.title!r}, {len(article['content'])} characters of Markdown\n{message.text}",
            payload_sha256=hashlib.sha256(fingerprint.encode()).hexdigest(),
            life=life,
        )

    def _note(self, post: Post, text: str, frozen: str) -> Event:
        return unsigned(self._author, _epoch(frozen), NOTE, [["r", post.url]], text)

    def _article_event(self, post: Post, summary: str, frozen: str, identifier: str, at: int) -> Event:
        """NIP-23: Markdown content; `d`, `title`, `summary`, `published_at` (the first version's
        time, kept by every edit), `r` the post, `t` its tags."""
        body = portable_markdown(post.body_html, post.url, post.title, post.code_languages) or post.summary
        tags = [
            ["d", identifier],
            ["title", post.title],
            ["summary", (post.summary or summary)[:SUMMARY_CHARACTERS]],
            ["published_at", str(_epoch(frozen))],
            ["r", post.url],
            *(["t", tag.lower()] for tag in post.tags),
        ]
        return unsigned(self._author, at, ARTICLE, tags, f"{body.strip()}\n\n[{post.url}]({post.url})")

    def _event_for(self, post: Post, prepared: Prepared, at: int | None = None) -> Event:
        assert prepared.message is not None and prepared.created_at and prepared.idempotency_key
        if not self._article:
            return self._note(post, prepared.message.text, prepared.created_at)
        when = _epoch(prepared.created_at) if at is None else at
        return self._article_event(post, prepared.message.text, prepared.created_at, prepared.idempotency_key, when)

    # ---------------------------------------------------------------- over the network

    async def _publish(self, http: Http, event: Event) -> tuple[Outcome, Event]:
        answer = await nostr_wire.publish(self._relay, signed(event, self._secret), self.settings.timeout)
        return _outcome(answer), event

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        event = self._event_for(post, prepared)
        outcome, _ = await self._publish(http, event)
        if outcome.kind is not Kind.DONE:
            return outcome
        remote_id = self._address(event["tags"][0][1]) if self._article else event["id"]
        return Outcome(Kind.DONE, remote_id=remote_id, remote_url=self._link(event))

    def _filters(self, record: Record) -> list[dict[str, Any]]:
        """The copy (a note by its id, an article by its address) and our deletions of it."""
        author = self._author
        if not self._article:
            note = record.remote_id or record.idempotency_key
            return [{"ids": [note], "authors": [author]}, {"kinds": [DELETION], "authors": [author], "#e": [note]}]
        identifier = record.idempotency_key or ""
        return [
            {"kinds": [ARTICLE], "authors": [author], "#d": [identifier]},
            {"kinds": [DELETION], "authors": [author], "#a": [self._address(identifier)]},
        ]

    async def _read(self, record: Record) -> _Read:
        answer = await nostr_wire.query(self._relay, self._filters(record), self.settings.timeout)
        if not answer.complete:
            return _Read(False, [], [], answer.reason)
        author = self._author
        mine = [e for e in answer.events if is_genuine(e, author)]
        target = (record.remote_id or record.idempotency_key) if not self._article else record.idempotency_key
        if self._article:
            versions = [e for e in mine if e["kind"] == ARTICLE and tag_value(e, "d") == target]
        else:
            versions = [e for e in mine if e["kind"] == NOTE and e["id"] == target]
        deletions = [e for e in mine if e["kind"] == DELETION]
        versions.sort(key=lambda e: (-e["created_at"], e["id"]))  # NIP-01: the newest; on a tie, the lowest id
        return _Read(True, versions, deletions)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        """A REQ for the copy this record's request would have made (the note's id, chosen before
        the call; the article's address): stored is FOUND, the relay's whole answer without it is
        ABSENT, anything else proves nothing."""
        if not record.idempotency_key:
            return Verdict(Found.UNKNOWN, reason="no event id recorded: nothing to look for")
        read = await self._read(record)
        if not read.complete:
            return Verdict(Found.UNKNOWN, reason=read.reason)
        if not read.versions:
            return Verdict(Found.ABSENT, reason=f"{self._relay} has no such event from this key")
        event = read.versions[0]
        remote_id = self._address(record.idempotency_key) if self._article else event["id"]
        return Verdict(Found.FOUND, remote_id, self._link(event))

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """An article's newer version at its address, after a read of it: deleted is GONE, saying
        the text already is DONE, a read that proves nothing sends nothing (NOT_SENT). Its
        `created_at` is past the version read, so that the relay keeps it (NIP-01: the newest)."""
        if not self._article:
            return Outcome(Kind.REFUSED, error="a Nostr note cannot be edited (NIP-01 has no edit)")
        read = await self._read(record)
        if not read.complete:
            return Outcome(Kind.NOT_SENT, error=f"{read.reason}; no edit was sent")
        state = self._copy(read, post, prepared)
        if state is Copy.GONE:
            return Outcome(Kind.GONE, error="the article was deleted; it is not edited")
        if state is Copy.MATCHES:
            return Outcome(Kind.DONE, remote_id=record.remote_id, remote_url=record.remote_url)
        if state is Copy.UNKNOWN:
            return Outcome(Kind.NOT_SENT, error=f"{self._relay} does not have the article; no edit was sent")
        at = max(int(http.now()), read.versions[0]["created_at"] + 1)
        outcome, event = await self._publish(http, self._event_for(post, prepared, at))
        if outcome.kind is not Kind.DONE:
            return outcome
        return Outcome(Kind.DONE, remote_id=record.remote_id, remote_url=self._link(event))

    def _copy(self, read: _Read, post: Post, prepared: Prepared) -> Copy:
        """An article's newest version against what `prepared` makes of the post."""
        latest = read.versions[0] if read.versions else None
        newest_deletion = max((d["created_at"] for d in read.deletions), default=None)
        if newest_deletion is not None and (latest is None or latest["created_at"] <= newest_deletion):
            return Copy.GONE  # NIP-09: an `a` deletion covers the versions up to its created_at
        if latest is None:
            return Copy.UNKNOWN
        wanted = self._event_for(post, prepared)
        same = latest["content"] == wanted["content"] and latest["tags"] == wanted["tags"]
        return Copy.MATCHES if same else Copy.DIFFERS

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy:
        if not self._article:
            return Copy.UNKNOWN
        read = await self._read(record)
        return self._copy(read, post, prepared) if read.complete else Copy.UNKNOWN

    async def delete(self, http: Http, record: Record) -> Outcome:
        """A NIP-09 deletion request naming the copy: a note's id; an article's address and each
        version a read found (a relay that deletes by `e` alone deletes those)."""
        if not self._article:
            tags = [["e", str(record.remote_id)], ["k", str(NOTE)]]
        else:
            read = await self._read(record)
            if not read.complete:
                return Outcome(Kind.NOT_SENT, error=f"{read.reason}; no deletion was sent")
            address = self._address(record.idempotency_key or "")
            tags = [["a", address], *(["e", e["id"]] for e in read.versions), ["k", str(ARTICLE)]]
        outcome, _ = await self._publish(http, unsigned(self._author, int(http.now()), DELETION, tags, ""))
        return Outcome(Kind.DONE) if outcome.kind is Kind.DONE else outcome

    async def read_presence(self, http: Http, record: Record) -> Presence:
        """GONE only when the copy is absent and our deletion of it is there; PRESENT when the
        copy is; anything else proves nothing."""
        read = await self._read(record)
        if not read.complete:
            return Presence.UNKNOWN
        if self._article:
            newest = max((d["created_at"] for d in read.deletions), default=None)
            live = [v for v in read.versions if newest is None or v["created_at"] > newest]
        else:
            live = read.versions
        if live:
            return Presence.PRESENT
        return Presence.GONE if read.deletions else Presence.UNKNOWN

    async def check_credentials(self, http: Http) -> CredentialCheck:
        """A REQ for our own latest event: proves the relay answers and says whose key this is.
        Nostr has no read that proves a relay will take our writes: a relay that refuses them
        says so only to an EVENT."""
        npub = _npub(self._author)
        answer = await nostr_wire.query(
            self._relay, [{"authors": [self._author], "limit": 1}], self.settings.timeout, "syndicate-check"
        )
        if not answer.complete:
            return CredentialCheck(
                Health.UNKNOWN,
                npub,
                problem=answer.reason,
                action="check the relay setting and whether the relay is up, then run the check again",
            )
        return CredentialCheck(Health.OK, npub, details=(f"{self._relay} answers reads",))


def _npub(author: str) -> str:
    return bech32_encode("npub", bytes.fromhex(author))


def _epoch(iso: str) -> int:
    return int(from_iso(iso).timestamp())


# NIP-01's machine-readable prefixes of an OK false, and what each means for the pair.
_REFUSALS: dict[str, Kind] = {
    "duplicate": Kind.DONE,  # the relay has this very event
    "rate-limited": Kind.RATE_LIMITED,
    "auth-required": Kind.AUTH,
    "restricted": Kind.AUTH,
    "blocked": Kind.AUTH,
}


def _outcome(answer: nostr_wire.Publication) -> Outcome:
    said = "; ".join(filter(None, [answer.reason, *answer.notices]))
    if not answer.sent:
        if answer.refused_handshake in (401, 403):
            return Outcome(Kind.AUTH, error=said)
        return Outcome(Kind.NOT_SENT, error=f"{said}; nothing was sent")
    if answer.accepted is None:
        return Outcome(Kind.AMBIGUOUS, error=f"{said}; the event may be stored")
    if answer.accepted:
        return Outcome(Kind.DONE)
    prefix = answer.reason.partition(":")[0].strip() if ":" in answer.reason else ""
    kind = _REFUSALS.get(prefix, Kind.REFUSED)
    if kind is Kind.DONE:
        return Outcome(Kind.DONE)
    if kind is Kind.RATE_LIMITED:  # NIP-01 gives no time to wait: the runner's default wait
        return Outcome(kind, error=f"rate limited by the relay: {said}")
    return Outcome(kind, error=f"the relay refused the event: {said}")
