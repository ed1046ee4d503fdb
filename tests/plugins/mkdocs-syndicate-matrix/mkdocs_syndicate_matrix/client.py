"""The Matrix channel: a message in a room, written from the Matrix Client-Server API
(spec.matrix.org, v1.x): `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`.

At most once. The transaction id is chosen before the call, unique per (site, post, channel), and a
repeat under it returns the same event: but a homeserver keeps transaction ids only for a while
(Synapse: about 30 minutes, and not across a restart) and only per access token, so a repeat is
not safe by construction and an unknown outcome is read first. The same id goes into the event's
content (`net.mkdocs_syndicate.post`): a read proves that what it found is this post, whatever
device sent it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channels.base import (
    Channel,
    Found,
    Http,
    Kind,
    Outcome,
    Prepared,
    Verdict,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.reading import BadAnswer, identifier, json_object
from mkdocs_syndicate.config.channels import Option
from mkdocs_syndicate.content.identity import client_id
from mkdocs_syndicate.content.messages import LengthRule, render_message
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import Record

if TYPE_CHECKING:
    import httpx

MARKER = "net.mkdocs_syndicate.post"  # a namespaced content key: Matrix keeps unknown keys
DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}"
MAX_BYTES = 32_000  # an event is at most 65,536 bytes with its envelope
MAX_PAGES = 10  # of 100 events each, read back before "not found" becomes "cannot tell"


class MatrixChannel(Channel):
    type_name = "matrix"
    options: ClassVar[Mapping[str, Option]] = {
        "homeserver": Option("url", required=True, help="e.g. https://matrix.org"),
        "room_id": Option("text", required=True, help="the room's id, e.g. !abcdef:matrix.org (not its alias)"),
        "access_token": Option("secret", required=True, help="a bot account's token, e.g. !ENV MATRIX_TOKEN"),
        "web_url": Option("url", default="https://matrix.to", help="where a message's link points"),
    }

    @property
    def _room(self) -> str:
        return str(self.settings.options["room_id"])

    def _url(self, path: str) -> str:
        return f"{self.settings.options['homeserver']}/_matrix/client/v3{path}"

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.options['access_token'].reveal()}"}

    def _link(self, event_id: str) -> str:
        return f"{self.settings.options['web_url']}/#/{quote(self._room, safe='!:')}/{quote(event_id, safe='$')}"

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

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        """Page back through the room's messages from our own account for the event whose content
        carries this pair's id: found, or the whole history read (absent), or cannot tell."""
        if not record.idempotency_key:
            return Verdict(Found.UNKNOWN, reason="no transaction id recorded: nothing to look for")
        whoami = await http.request("GET", self._url("/account/whoami"), headers=self._auth())
        if whoami.status_code != 200:
            return Verdict(Found.UNKNOWN, reason=f"whoami answered {whoami.status_code}")
        try:
            me = identifier(json_object(whoami).get("user_id"), "user_id")
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
            if not isinstance(end, str) or not end or not chunk:
                return Verdict(Found.ABSENT, reason="not in the room's history")
            token = end
        return Verdict(Found.UNKNOWN, reason=f"not in the last {MAX_PAGES * 100} messages; older ones not read")


def _retry_after_ms(answer: httpx.Response) -> float | None:
    try:
        value = json.loads(answer.content).get("retry_after_ms")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 86_400_000:
        return None
    return value / 1000
