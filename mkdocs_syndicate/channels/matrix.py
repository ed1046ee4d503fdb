"""The Matrix channel: a message in a room, written from the Matrix Client-Server API
(spec.matrix.org, v1.x): `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.

At most once. The transaction id is chosen before the call, unique per (site, post, channel), and a
repeat under it returns the same event, but only within the scope and lifetime the homeserver
gives it. The spec scopes a transaction id to the device (v1.7+; before, to the access token) and
sets no lifetime. Synapse keeps it per (room, user, device) in its database for 24 hours, across
restarts, and a new login on the same device id finds it too; another device or an expired id
makes a new event. So a repeat is not safe by construction, and an unknown outcome is read
first. The same id goes into the event's content (`net.mkdocs_syndicate.post`): a read proves
that what it found is this post, whatever device sent it.

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
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Channel,
    ChannelSettings,
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
    Record,
    Site,
    Verdict,
    check_unreachable,
    client_id,
    error_detail,
    identifier,
    json_object,
    render_message,
    status_outcome,
    transport_outcome,
)

if TYPE_CHECKING:
    import httpx

MARKER = "net.mkdocs_syndicate.post"  # a namespaced content key: Matrix keeps unknown keys
DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}"
MAX_BYTES = 32_000  # an event is at most 65,536 bytes with its envelope
MAX_PAGES = 10  # of 100 events each, read back before "not found" becomes "cannot tell"


class MatrixChannel(Channel):
    type_name = "matrix"
    rate_limit_checked_first = True  # Synapse refuses with 429 before it makes anything (above)
    options: ClassVar[Mapping[str, Option]] = {
        "homeserver": Option("url", required=True, help="e.g. https://matrix.org"),
        "room_id": Option(
            "text",
            required=True,
            help="the room's id (not its alias), e.g. !abcdef:matrix.org, or !6tl-xDwy… in room version 12",
        ),
        "access_token": Option("secret", required=True, help="a bot account's token, e.g. !ENV MATRIX_TOKEN"),
        "web_url": Option("url", default="https://matrix.to", help="where a message's link points"),
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

    def prepare(self, post: Post, created_at: str | None = None) -> Prepared:
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            LengthRule(MAX_BYTES, lambda text: len(text.encode("utf-8")), "bytes"),
            self.site.name,
            where=self.settings.where("template"),
        )
        key = client_id(post.url, self.id, "matrix-transaction")
        return Prepared(message, idempotency_key=key, description=message.text)

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.message is not None and prepared.idempotency_key
        content = {"msgtype": "m.text", "body": prepared.message.text, MARKER: prepared.idempotency_key}
        path = f"/rooms/{quote(self._room, safe='')}/send/m.room.message/{prepared.idempotency_key}"
        try:
            answer = await http.request("PUT", self._url(path), json=content, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 200:
            try:
                event_id = identifier(json_object(answer).get("event_id"), "event_id")
            except BadAnswer as exc:
                return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable answer ({exc}); the message may exist")
            return Outcome(Kind.DONE, remote_id=event_id, remote_url=self._link(event_id))
        outcome = status_outcome(answer, http.now())
        if outcome.kind is Kind.RATE_LIMITED and outcome.retry_after is None:
            # M_LIMIT_EXCEEDED says how long in its body (Retry-After only since spec v1.10).
            return Outcome(Kind.RATE_LIMITED, error=outcome.error, retry_after=_retry_after_ms(answer))
        return outcome

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await _matrix_check(self, http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        """Page back through the room's messages from our own account for the event whose content
        carries this pair's id: found, or the whole history read (absent), or cannot tell."""
        if not record.idempotency_key:
            return Verdict(Found.UNKNOWN, reason="no transaction id recorded: nothing to look for")
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
                    if isinstance(content, dict) and content.get(MARKER) == record.idempotency_key:
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
            action="invite the bot to the room again and have it join",
        )
    return CredentialCheck(Health.OK, me, details=(f"joined to {channel._room}",))


def _retry_after_ms(answer: httpx.Response) -> float | None:
    try:
        value = json.loads(answer.content).get("retry_after_ms")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 86_400_000:
        return None
    return value / 1000
