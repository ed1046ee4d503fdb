"""The Matrix channel: a message in a room, written from the Matrix Client-Server API
(spec.matrix.org, v1.x): `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.

At most once. The transaction id is chosen before the call, unique per (site, post, channel, life),
and a repeat under it returns the same event, but only within the scope and lifetime the homeserver
gives it. The spec scopes a transaction id to the device (v1.7+; before, to the access token) and
sets no lifetime. Synapse keeps it per (room, user, device) in its database for 24 hours, across
restarts, and a new login on the same device id finds it too; another device or an expired id
makes a new event. So a repeat is not safe by construction, and an unknown outcome is read
first. The same id goes into the event's content (`net.mkdocs_syndicate.post`): a read proves
that what it found is this post, whatever device sent it. A 200 names an event that may be an
old one (Synapse answers a remembered id with it, redacted or not): it is read before it counts.

A 429 `M_LIMIT_EXCEEDED` is a definite "not made": Synapse checks the sender's message rate
limit before it looks up the transaction or builds the event, and again before it persists it
(https://github.com/element-hq/synapse/blob/v1.163.2/synapse/handlers/message.py, `create_and_send_nonmember_event`:
`request_ratelimiter.ratelimit(requester, update=False)`, then
`persist_and_notify_client_events`: `request_ratelimiter.ratelimit(requester)` before the event is
written), so the pair is retried after the wait the answer asks for, with no read first.

A message's link is a matrix.to permalink with `via=` the bot's own server: a room id of room
version 12 (Synapse 1.163's default, synapse/config/server.py `DEFAULT_ROOM_VERSION = "12"`) has
no server part, and the spec says room ids "are not routable on their own" without a `via`
(spec.matrix.org/latest/appendices/#routing).

Edits and removals (Client-Server API, "Event replacements" and "Redactions"). An edit is a new
`m.room.message` whose content has `m.new_content` (the whole new content, this pair's marker
kept in it) and `m.relates_to: {rel_type: m.replace, event_id}`; its `body` is the fallback
(`* ` and the text) for clients without edits. A removal is a redaction,
`PUT /rooms/{roomId}/redact/{eventId}/{txnId}`. Both are read back at the copy's own id,
`GET /rooms/{roomId}/event/{eventId}`, which Synapse 1.163.2 serves with the ORIGINAL content and
the latest valid replacement (same sender, same type) whole in `unsigned["m.relations"]["m.replace"]`
(synapse/handlers/relations.py `get_bundled_aggregations`, synapse/events/utils.py
`serialize_event`); a redacted event as `content: {}` with `unsigned.redacted_because`. A read is
about this post only when the event's own content carries this pair's marker, and the copy is gone
only when the event says it was redacted: a 404 `M_NOT_FOUND` is also Synapse's answer to an event
the bot may not see (synapse/rest/client/room.py `RoomEventServlet`), so it proves nothing.

Synapse accepts an edit of a redacted event (and a repeat redaction, 200), so an edit is sent only
after a read of the copy: redacted, it is not edited; already saying the new text (an earlier
edit whose answer was lost), nothing is sent. Transaction ids are derived from the pair's id: an
edit's from the event it replaces as read just before and the new text (a retry of the same edit
reuses it, and Synapse returns the event it already made), a redaction's from the pair's id alone.

With `embed: image` the message is one `m.image` event, the post's image with the message as its
caption (channels/matrix_media.py); the default `card` is the text message, whose link clients
preview.

Threads (`thread: true`): a message over the limit is a thread (the spec's "Threading", v1.4+,
from MSC3440): each later part an `m.room.message` with `m.relates_to: {rel_type: m.thread,
event_id: <part 1>, is_falling_back: true, m.in_reply_to: {event_id: <the part before>}}`, the
reply fallback for clients without threads. Synapse refuses a thread whose root has a relation
itself (handlers/message.py `_validate_event_relation`, "Cannot start threads from an event with a
relation"); part 1 never has one. Each later part has its own marker and transaction id, derived
from the pair's id and the part's number: a read finds it by its marker, and its edit and
redaction address it alone. A part's limit is one of readability, PART_CHARACTERS: the event's
own limit (the spec's 65,536 bytes for the whole event as canonical JSON, "Size limits";
Synapse's synapse/api/constants.py `MAX_PDU_SIZE`, which MAX_BYTES keeps a message well under)
would never split a post, whose description is at most 10,000 characters.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channel_api import (
    BadAnswer,
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
    Media,
    MediaState,
    Option,
    Outcome,
    Part,
    Post,
    PostImage,
    Prepared,
    Presence,
    Record,
    Seen,
    Site,
    Verdict,
    check_unreachable,
    client_id,
    delete_outcome,
    error_detail,
    identifier,
    json_object,
    links_in,
    post_image,
    render_message,
    transport_outcome,
)
from mkdocs_syndicate.channels import matrix_media
from mkdocs_syndicate.channels.matrix_answers import (
    EventRead,
    answered_outcome,
    event_read,
    has_event_id,
    part_marker,
    refusal,
    txn_id,
)

MARKER = "net.mkdocs_syndicate.post"  # a namespaced content key: Matrix keeps unknown keys
DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}"
MAX_BYTES = 32_000  # an event is at most 65,536 bytes with its envelope
MAX_PAGES = 10  # of 100 events each, read back before "not found" becomes "cannot tell"
PART_CHARACTERS = 2_000  # `thread: true`: a part is about a screenful in Element
FALLBACK_BYTES = 16_000  # an edit's fallback body is cut here: with m.new_content it must fit one event


def room_id(value: str, setting: str) -> str:
    """A room id starts with `!` (the spec's "Room IDs"). An alias (`#name:server`) or a link is
    refused when the config is read: every send would fail, and `doctor` would blame the bot's
    membership of a room it cannot find."""
    if value.startswith("!"):
        return value
    what = "is the room's alias, not its id" if value.startswith("#") else "is not a room id"
    raise ConfigError(
        f"{value!r} {what}: use the room's id, which starts with ! (in Element: Room settings → Advanced → "
        "Internal room ID), e.g. !abcdef:matrix.org, or !Tf0-6y… in room version 12",
        setting,
    )


class MatrixChannel(Channel):
    type_name = "matrix"
    rate_limit_checked_first = True  # Synapse refuses with 429 before it makes anything (above)
    edits_in_place = True  # an m.replace edit of the message
    deletes = True  # a redaction of the message
    uploads = True  # `embed: image`: the post's image in the content repository, before the message
    threads = True  # later parts in the first part's m.thread
    options: ClassVar[Mapping[str, Option]] = {
        "homeserver": Option("url", required=True, help="e.g. https://matrix.org"),
        "room_id": Option(
            "text",
            required=True,
            help="the room's id (not its alias), e.g. !abcdef:matrix.org, or !6tl-xDwy… in room version 12",
            check=room_id,
        ),
        "access_token": Option("secret", required=True, help="a bot account's token, e.g. !ENV MATRIX_TOKEN"),
        "web_url": Option("url", default="https://matrix.to", help="where a message's link points"),
        "embed": Option(
            "choice",
            default="card",
            choices=("card", "image"),
            help="card: a text message, whose link clients preview; image: an m.image of the post's image, "
            "the message its caption",
        ),
    }

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        super().__init__(settings, site)
        self._server_name: str | None = None  # the bot's own server (from whoami): a permalink's via

    @property
    def _room(self) -> str:
        return str(self.settings.options["room_id"])

    def _url(self, path: str) -> str:
        return f"{self.settings.options['homeserver']}/_matrix/client/v3{path}"

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.options['access_token'].reveal()}"}

    def _link(self, event_id: str) -> str:
        link = f"{self.settings.options['web_url']}/#/{quote(self._room, safe='!:')}/{quote(event_id, safe='$')}"
        via = self._via()
        return f"{link}?via={quote(via, safe=':')}" if via else link

    def _via(self) -> str | None:
        """A server in the room: the bot's own (it is joined), else the room id's server part
        (room versions before 12 have one), else none known."""
        if self._server_name:
            return self._server_name
        _, colon, server = self._room.partition(":")
        return server if colon and server else None

    async def warm_up(self, http: Http) -> None:
        """The bot's server name, for the permalinks' `via` (whoami changes nothing remote)."""
        import httpx

        if self._server_name is None:
            # On failure the link falls back to the room id's server part.
            with contextlib.suppress(httpx.HTTPError, BadAnswer):
                await self._whoami(http)

    async def _whoami(self, http: Http) -> str:
        """The bot's user id (@name:server), remembering its server name; raises BadAnswer."""
        answer = await http.request("GET", self._url("/account/whoami"), headers=self._auth())
        if answer.status_code != 200:
            raise BadAnswer(f"answered {answer.status_code}")
        me = identifier(json_object(answer).get("user_id"), "user_id")
        _, colon, server = me.partition(":")  # a localpart has no ":"; a server name may have a port
        if colon and server:
            self._server_name = server
        return me

    def recognises(self, remote_url: str) -> bool:
        return remote_url.startswith(f"{self.settings.options['web_url']}/#/{quote(self._room, safe='!:')}/")

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            _length_rule(self.settings.max_parts),
            self.site.name,
            where=self.settings.where("template"),
            max_parts=self.settings.max_parts,
            thread_text=self.settings.thread_text,
        )
        key = client_id(post.url, self.id, "matrix-transaction", life)
        image = None
        if self.settings.options["embed"] == "image":
            image, notes = post_image(post, self.site.url, self.site.site_dir)
            message = replace(message, notes=(*message.notes, *notes))
        extra = f"{image.sha256}\n{image.alt}" if image is not None else ""
        digest = hashlib.sha256(f"{message.text}\n{extra}".encode()).hexdigest() if image is not None else None
        return Prepared(
            message, idempotency_key=key, description=message.text, image=image, payload_sha256=digest, life=life
        )

    def _content(self, text: str, key: str, image: PostImage | None, media: tuple[Media, ...]) -> dict[str, Any]:
        """The message's content: a text message, or (`embed: image`, once uploaded) the image."""
        if image is not None and media:
            return matrix_media.image_content(text, image, media[0], (MARKER, key))
        return {"msgtype": "m.text", "body": text, MARKER: key}

    async def upload(self, http: Http, post: Post, image: PostImage) -> Outcome:
        homeserver = str(self.settings.options["homeserver"])
        return await matrix_media.upload(http, homeserver, self._auth(), image, post.source or post.key)

    async def read_media(self, http: Http, media: Media) -> MediaState:
        return await matrix_media.read(http, str(self.settings.options["homeserver"]), self._auth(), media)

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        assert prepared.message is not None and prepared.idempotency_key
        content = self._content(prepared.message.text, prepared.idempotency_key, prepared.image, prepared.media)
        return await self._put_message(http, prepared.idempotency_key, content)

    async def send_part(
        self, http: Http, post: Post, prepared: Prepared, number: int, sent: tuple[Part, ...], replay: bool
    ) -> Outcome:
        """Part `number` in part 1's thread, its reply fallback the part before, under its own
        marker and transaction id."""
        assert prepared.message is not None and prepared.idempotency_key
        marker = part_marker(prepared.idempotency_key, number)
        content = {
            "msgtype": "m.text",
            "body": prepared.message.texts[number - 1],
            MARKER: marker,
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": sent[0].remote_id,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": sent[-1].remote_id},
            },
        }
        return await self._put_message(http, marker, content)

    def part_copy(self, record: Record, number: int) -> Record:
        """Part `number` alone: its event, and its own marker (its edit's and redaction's
        transaction ids derive from it)."""
        copy = super().part_copy(record, number)
        if number == 1 or not record.idempotency_key:
            return copy
        return replace(copy, idempotency_key=part_marker(record.idempotency_key, number))

    async def _put_message(self, http: Http, txn: str, content: dict[str, Any]) -> Outcome:
        import httpx

        path = f"/rooms/{quote(self._room, safe='')}/send/m.room.message/{txn}"
        try:
            answer = await http.request("PUT", self._url(path), json=content, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 200:
            try:
                event_id = identifier(json_object(answer).get("event_id"), "event_id")
            except BadAnswer as exc:
                return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable answer ({exc}); the message may exist")
            return await self._answered(http, event_id, txn)
        return refusal(answer, http.now())

    def _event_path(self, event_id: str) -> str:
        return f"/rooms/{quote(self._room, safe='')}/event/{quote(event_id, safe='')}"

    async def _read(self, http: Http, record: Record) -> EventRead:
        """GET the copy's own event: this pair's (its content carries the pair's marker), redacted,
        or unknown (any other answer, a 404 included). Raises httpx's errors."""
        assert record.remote_id
        return await self._read_event(http, record.remote_id, record.idempotency_key)

    async def _read_event(self, http: Http, event_id: str, marker: str | None) -> EventRead:
        answer = await http.request("GET", self._url(self._event_path(event_id)), headers=self._auth())
        return event_read(answer, event_id, marker, MARKER)

    async def _answered(self, http: Http, event_id: str, marker: str) -> Outcome:
        """A send's 200 counts only once the event it names is read: Synapse answers a transaction
        id it remembers (a day) with the event it made then, redacted or not, so the answer alone
        cannot tell a new message from an old one (matrix_answers.answered_outcome)."""
        import httpx

        try:
            read = await self._read_event(http, event_id, marker)
        except httpx.TransportError as exc:
            read = EventRead("unknown", f"the read of it got no answer ({type(exc).__name__})")
        return answered_outcome(read, event_id, self._link(event_id))

    def _says(self, read: EventRead, prepared: Prepared, media: tuple[Media, ...] = ()) -> bool:
        assert read.content is not None and prepared.message is not None
        return matrix_media.shows(read.content, prepared.message.text, prepared.image, media)

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """An m.replace edit of the copy, after a read of it: a redacted copy is not edited (GONE),
        a copy already saying the text gets nothing more (DONE), a read that proves nothing sends
        nothing (NOT_SENT: the next try reads again)."""
        import httpx

        assert prepared.message is not None and record.remote_id and record.idempotency_key
        try:
            read = await self._read(http, record)
        except httpx.TransportError as exc:
            return Outcome(Kind.NOT_SENT, error=f"the read before the edit got no answer ({type(exc).__name__})")
        if read.state == "redacted":
            return Outcome(Kind.GONE, error="the message was redacted; it is not edited")
        if read.state != "ours":
            return Outcome(Kind.NOT_SENT, error=f"{read.reason}; no edit was sent")
        if self._says(read, prepared, record.media):
            return Outcome(Kind.DONE, remote_id=record.remote_id, remote_url=record.remote_url)
        new = self._content(prepared.message.text, record.idempotency_key, prepared.image, record.media)
        fallback = new["body"].encode("utf-8")[:FALLBACK_BYTES].decode("utf-8", errors="ignore")
        content = {
            **{k: v for k, v in new.items() if k != MARKER},  # the fallback, for clients without edits
            "body": f"* {fallback}",
            "m.new_content": new,  # an image's edit keeps the image (the upload the record names)
            "m.relates_to": {"rel_type": "m.replace", "event_id": record.remote_id},
        }
        txn = txn_id("edit", record.idempotency_key, read.latest, prepared.sha256 or "")
        path = f"/rooms/{quote(self._room, safe='')}/send/m.room.message/{txn}"
        try:
            answer = await http.request("PUT", self._url(path), json=content, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 200 and has_event_id(answer):
            return Outcome(Kind.DONE, remote_id=record.remote_id, remote_url=record.remote_url)
        if answer.status_code == 200:
            return Outcome(Kind.AMBIGUOUS, error="200 with an unreadable answer; the edit may exist")
        return refusal(answer, http.now())

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """The copy's own event: redacted is GONE; this pair's event saying the text (its latest
        replacement's, else its own) MATCHES; saying something else DIFFERS; anything else UNKNOWN."""
        read = await self._read(http, record)
        if read.state == "redacted":
            return Copy.GONE
        if read.state != "ours" or prepared.message is None:
            return Copy.UNKNOWN
        return Seen(Copy.MATCHES if self._says(read, prepared, record.media) else Copy.DIFFERS, links_in(read.content))

    async def delete(self, http: Http, record: Record) -> Outcome:
        """A redaction of the copy's event. Synapse answers 200 with the redaction's event id, also
        for an event redacted before; a 404 proves nothing (the read decides)."""
        import httpx

        assert record.remote_id and record.idempotency_key
        txn = txn_id("redact", record.idempotency_key)
        path = f"/rooms/{quote(self._room, safe='')}/redact/{quote(record.remote_id, safe='')}/{txn}"
        try:
            answer = await http.request("PUT", self._url(path), json={}, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 429:
            return refusal(answer, http.now())
        return delete_outcome(answer, http.now(), gone=False, what="message", confirms=has_event_id)

    async def read_presence(self, http: Http, record: Record) -> Presence | Seen:
        """The copy's own event: redacted is GONE; this pair's event is PRESENT; anything else,
        a 404 included, UNKNOWN."""
        read = await self._read(http, record)
        found = {"redacted": Presence.GONE, "ours": Presence.PRESENT}.get(read.state, Presence.UNKNOWN)
        return Seen(found, links_in(read.content)) if found is Presence.PRESENT else found

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await _matrix_check(self, http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        """Page back through the room's messages from our own account for the event whose content
        carries this pair's id: found, or the whole history read (absent), or cannot tell. After a
        send answered with an event, that event is read: this pair's and not redacted, or cannot tell."""
        if not record.idempotency_key:
            return Verdict(Found.UNKNOWN, reason="no transaction id recorded: nothing to look for")
        if after is not None and after.remote_id:
            read = await self._read_event(http, after.remote_id, record.idempotency_key)
            if read.state == "ours":
                return Verdict(Found.FOUND, after.remote_id, self._link(after.remote_id))
            return Verdict(Found.UNKNOWN, reason=f"the send was answered with {after.remote_id}, but {read.reason}")
        return await self._find(http, record.idempotency_key)

    async def read_part(self, http: Http, post: Post, record: Record, number: int) -> Verdict:
        """The room's messages from our own account, for the event carrying part `number`'s marker."""
        if not record.idempotency_key:
            return Verdict(Found.UNKNOWN, reason="no transaction id recorded: nothing to look for")
        return await self._find(http, part_marker(record.idempotency_key, number))

    async def _find(self, http: Http, marker: str) -> Verdict:
        try:
            me = await self._whoami(http)
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"whoami: {exc}")
        query = {"dir": "b", "limit": "100", "filter": json.dumps({"types": ["m.room.message"], "senders": [me]})}
        token: str | None = None
        for _ in range(MAX_PAGES):
            page = await http.request(
                "GET",
                self._url(f"/rooms/{quote(self._room, safe='')}/messages"),
                params={**query, **({"from": token} if token else {})},
                headers=self._auth(),
            )
            if page.status_code != 200:
                return Verdict(Found.UNKNOWN, reason=f"messages answered {page.status_code}")
            try:
                body = json_object(page)
                chunk = body.get("chunk")
                if not isinstance(chunk, list):
                    raise BadAnswer("messages answer has no chunk list")
                for event in chunk:
                    content = event.get("content") if isinstance(event, dict) else None
                    if isinstance(content, dict) and content.get(MARKER) == marker:
                        event_id = identifier(event.get("event_id"), "event_id")
                        return Verdict(Found.FOUND, event_id, self._link(event_id))
                end = body.get("end")
            except BadAnswer as exc:
                return Verdict(Found.UNKNOWN, reason=str(exc))
            # The spec: `end` is left out when no further events are available. A page may be
            # empty and still have one (Synapse, when its visibility filter removed a whole page).
            if not isinstance(end, str) or not end or end == token:
                return Verdict(Found.ABSENT, reason="not in the room's history")
            token = end
        return Verdict(Found.UNKNOWN, reason=f"not in the last {MAX_PAGES * 100} messages; older ones not read")


async def _matrix_check(channel: MatrixChannel, http: Http) -> CredentialCheck:
    """whoami proves the token (M_UNKNOWN_TOKEN: revoked, logged out, or expired); /joined_rooms
    whether the bot is still in the room it posts to (kicked, or it left: every send is M_FORBIDDEN)."""
    import httpx

    try:
        answer = await http.request("GET", channel._url("/account/whoami"), headers=channel._auth())
        if answer.status_code in (401, 403):
            return CredentialCheck(
                Health.FAILING,
                problem=f"{answer.status_code}{error_detail(answer)}",
                action="log the bot in again (POST /login) and put the new access token where the config reads it",
            )
        me = identifier(json_object(answer).get("user_id"), "user_id") if answer.status_code == 200 else None
        rooms = await http.request("GET", channel._url("/joined_rooms"), headers=channel._auth())
        joined = json_object(rooms).get("joined_rooms") if rooms.status_code == 200 else None
    except (httpx.HTTPError, BadAnswer) as exc:
        return check_unreachable(exc)
    if me is None or not isinstance(joined, list):
        return CredentialCheck(
            Health.UNKNOWN,
            problem=f"whoami answered {answer.status_code}, joined_rooms {rooms.status_code}",
            action="check the homeserver setting and whether it is up, then run the check again",
        )
    if channel._room not in joined:
        return CredentialCheck(
            Health.FAILING,
            me,
            problem=f"{me} is not in the room {channel._room}",
            action="invite the bot to the room and have it join (as the bot: in Element, or POST /join/<room id>)",
        )
    return CredentialCheck(Health.OK, me, details=(f"joined to {channel._room}",))


def _length_rule(max_parts: int) -> LengthRule:
    """A message's limit: the event's, in bytes; a thread's part's, in characters (above)."""
    if max_parts > 1:
        return LengthRule(PART_CHARACTERS, len, "characters")
    return LengthRule(MAX_BYTES, lambda text: len(text.encode("utf-8")), "bytes")
