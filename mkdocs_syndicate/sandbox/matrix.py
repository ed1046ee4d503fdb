"""A Matrix homeserver for the sandbox and the tests, written from the Client-Server API
(https://spec.matrix.org/latest/client-server-api/) and Synapse's behaviour, not from the client.
Synapse's source, 1.163.2 (https://github.com/element-hq/synapse/tree/v1.163.2; the paths below
are in it):

- `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}`: the same transaction id in
  the same room from the same user and device returns the first event id, whatever the body and
  even once the user has left the room (the spec scopes transaction ids to the device since
  v1.7). Synapse keeps the mapping in its database table `event_txn_id_device_id` and deletes
  rows older than 24 hours (synapse/storage/databases/main/events_worker.py,
  `_cleanup_old_transaction_ids`: "Cleans out transaction id mappings older than 24hrs"), so it
  holds across restarts and across a new login on the same device; another device gets a new
  event. Quirk `ignore_idempotency_key`: a server that forgot it (an older Synapse, another
  homeserver);
- the room has a room-version-12 id: no server part (Synapse's `DEFAULT_ROOM_VERSION = "12"`,
  synapse/config/server.py; the id is the create event's hash);
- `GET .../rooms/{roomId}/messages` with `dir`, `from`, `limit` and a `filter` (types, senders):
  `chunk`, `start`, and `end` on every page that has events, the last one too; a page past the
  last event is an empty chunk with no `end` (synapse/handlers/pagination.py `get_messages`:
  "if no events are returned from pagination ... we do not return end"); an event's
  `unsigned.transaction_id` only for the device that sent it;
- `GET .../rooms/{roomId}/event/{eventId}`, edits (`m.replace`), redactions (`PUT
  .../redact/{eventId}/{txnId}`, and Synapse's `POST` without one) and `GET
  /_matrix/client/v1/rooms/{roomId}/relations/{eventId}[/{relType}[/{eventType}]]`: each
  method's docstring here, and the room's rules (which edit is bundled, what a redaction keeps,
  the client format) in sandbox/matrix_events.py; measured on Synapse 1.163.2 by raw HTTP;
- `GET .../account/whoami`;
- a `PUT` with a transaction id is first looked up in Synapse's in-memory HTTP transaction cache
  (sandbox/matrix_requests.py): a repeat within 30 minutes is answered from it whatever its body,
  a malformed one too; later, or after a restart, the body is parsed first (rest/client/room.py
  `RoomSendEventRestServlet._do`: a body that is no JSON is 400 even for a room that does not
  exist) and the transaction found in the database table;
- errors as `{"errcode", "error"}`: M_MISSING_TOKEN / M_UNKNOWN_TOKEN (401), M_FORBIDDEN (403, not
  in the room; or a redaction of another user's event by a member without `redact` power, "You
  don't have permission to redact events", handlers/message.py), M_NOT_JSON (400),
  M_LIMIT_EXCEEDED (429, `retry_after_ms` and Retry-After). An injected 429 fault stands in front
  of the server (before its transaction cache, as a proxy's would); Synapse's own `rc_message`
  (quirk `rc_message`, sandbox/matrix_requests.py) is checked where handlers/message.py checks
  it: for a send after the cache and before the transaction table, for a redaction after the
  table (RoomRedactEventRestServlet looks the id up itself before it makes the event).
"""

from __future__ import annotations

import html
import json
import math
import secrets
from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from mkdocs_syndicate.emulator_api import Emulator, Request, Response, first_url
from mkdocs_syndicate.sandbox import matrix_media
from mkdocs_syndicate.sandbox.matrix_events import REDACTION, THREAD, Room, in_thread_after, relation
from mkdocs_syndicate.sandbox.matrix_requests import MessageLimiter, TransactionCache

TOKEN = "sandbox-matrix-token"
SERVER_NAME = "matrix.test"
USER = f"@sandbox:{SERVER_NAME}"
DEVICE = "SANDBOXDEVICE"
# The bot's tokens, by the device each was issued to: a second login on the same device id (as
# `POST /login` with `device_id` gives), and a login on another device.
SAME_DEVICE_TOKEN = "sandbox-matrix-token-relogin"
OTHER_DEVICE_TOKEN = "sandbox-matrix-token-other-device"
DEVICES = {TOKEN: DEVICE, SAME_DEVICE_TOKEN: DEVICE, OTHER_DEVICE_TOKEN: "OTHERDEVICE"}
ROOM = "!iZWugxDc5DFLd7tLc4XhrIAJHUG3mscKIJqBT3CouKI"  # room version 12: no ":server" part
PREFIX = "/_matrix/client/v3"
V1 = "/_matrix/client/v1"
TRANSACTION_LIFETIME = 24 * 3600.0  # Synapse's `_cleanup_old_transaction_ids`
# An access token past its expiry (refresh tokens, spec v1.3): Synapse answers it M_UNKNOWN_TOKEN
# with `soft_logout: true` (synapse/api/auth/internal.py, "Access token has expired").
EXPIRED_TOKEN = "sandbox-matrix-token-expired"


class MatrixEmulator(Emulator):
    name = "matrix"
    creating = (f"PUT {PREFIX}/rooms/", f"POST {PREFIX}/rooms/")  # sends and redactions: rate-limited
    read_marker = "/messages"
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "reset_in": 40}
    joined = True  # tests: False once the bot has been removed from the room (kicked, or it left)

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        # What Synapse keeps in memory, lost when it restarts (sandbox/matrix_requests.py).
        self.http_transactions = TransactionCache()
        self.limiter = MessageLimiter()

    def initial_state(self) -> dict[str, Any]:
        return {"events": [], "transactions": {}}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {
            "homeserver": f"{url}/matrix",
            "room_id": ROOM,
            "access_token": TOKEN,
            "web_url": f"{public_base}/matrix/to",
        }

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        """The room as Element shows it (matrix_events.Room.timeline): an edited message once,
        with its latest text, and a redacted one as deleted, announcing nothing."""
        return [
            {
                "id": m["event"]["event_id"],
                "text": m["text"],
                "announces": first_url(m["text"]),
                "at": m["event"]["origin_server_ts"] / 1000,
                "link": f"{public_base}/matrix/to/#/{ROOM}/{m['event']['event_id']}?via={SERVER_NAME}",
                "edited": m["edited"],
                "deleted": m["deleted"],
                "reason": m["reason"],
                # In a thread: the event its reply fallback names (a part's, the part before it).
                "in_reply_to": in_thread_after(m["event"]) or matrix_media.parent_of(m["event"]["content"]),
                "images": [
                    image
                    for image in [matrix_media.image_of(m["event"]["content"], SERVER_NAME, public_base)]
                    if image is not None and not m["deleted"]
                ],
            }
            for m in Room(state.get("events", [])).timeline()
            if m["event"]["sender"] == USER  # what the bot sent, not others' messages
        ]

    def add_foreign(self, body: str, sender: str = f"@reader:{SERVER_NAME}") -> str:
        """Someone else's message in the room (a test's); its event id. The bot, below the
        room's `redact` power level, may not redact it."""
        content = {"msgtype": "m.text", "body": body}
        with self.server.lock:
            made = self._create("", ROOM, "m.room.message", content, None, sender=sender)
            self.server.save()
        return str(made.body["event_id"])

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        """M_LIMIT_EXCEEDED with `retry_after_ms`; the Retry-After header only from servers on
        spec v1.10 or later (`"retry_after_header": false` in the fault: an older one)."""
        wait = float(fault.get("reset_in", 5))
        headers = {"Retry-After": str(math.ceil(wait))} if fault.get("retry_after_header", True) else {}
        body = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests", "retry_after_ms": int(wait * 1000)}
        return Response(429, body, headers)

    @staticmethod
    def _error(status: int, errcode: str, message: str) -> Response:
        return Response(status, {"errcode": errcode, "error": message})

    # ---------------------------------------------------------------- dispatch

    def handle(self, request: Request) -> Response:
        if request.path.rstrip("/") == "/to" and request.method == "GET":
            return self._room_page()
        if not request.path.startswith((PREFIX + "/", V1 + "/", "/_matrix/media/")):
            return self._error(404, "M_UNRECOGNIZED", "Unrecognized request")
        path = request.path.removeprefix(PREFIX)
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return self._error(401, "M_MISSING_TOKEN", "Missing access token")
        if auth.removeprefix("Bearer ") == EXPIRED_TOKEN:
            return Response(
                401, {"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": True}
            )
        device = DEVICES.get(auth.removeprefix("Bearer "))
        if device is None:
            return self._error(401, "M_UNKNOWN_TOKEN", "Unrecognised access token")
        if matrix_media.handles(request.path):  # the content repository: sandbox/matrix_media.py
            return matrix_media.handle(self, request, SERVER_NAME)
        if path.startswith(V1 + "/"):
            return self._v1(request, device, [unquote(p) for p in path.removeprefix(V1).split("/")])
        parts = [unquote(p) for p in path.split("/")]
        if path == "/account/whoami" and request.method == "GET":
            return Response(200, {"user_id": USER, "device_id": device, "is_guest": False})
        if path == "/joined_rooms" and request.method == "GET":
            return Response(200, {"joined_rooms": [ROOM] if self.joined else []})
        if len(parts) == 6 and parts[1] == "rooms" and parts[3] == "send" and request.method == "PUT":
            return self._cached(request, device, lambda: self._send(request, device, parts[2], parts[4], parts[5]))
        if len(parts) == 4 and parts[1] == "rooms" and parts[3] == "messages" and request.method == "GET":
            return self._messages(request, device, parts[2])
        if len(parts) == 5 and parts[1] == "rooms" and parts[3] == "event" and request.method == "GET":
            return self._event(device, parts[2], parts[4])
        redact = (request.method, len(parts)) in (("PUT", 6), ("POST", 5))
        if redact and parts[1] == "rooms" and parts[3] == "redact" and len(parts) == 6:
            return self._cached(request, device, lambda: self._redact(request, device, parts[2], parts[4], parts[5]))
        if redact and parts[1] == "rooms" and parts[3] == "redact":
            return self._redact(request, device, parts[2], parts[4], None)
        return self._error(404, "M_UNRECOGNIZED", "Unrecognized request")

    def _cached(self, request: Request, device: str, servlet: Callable[[], Response]) -> Response:
        """A PUT with a transaction id, through Synapse's HTTP transaction cache: a repeat within
        its lifetime is answered before the servlet runs, whatever its body (only successes are
        kept; sandbox/matrix_requests.py)."""
        now = self.server.now()
        if not self.quirks.get("ignore_idempotency_key"):
            replayed = self.http_transactions.get(request.path, device, now)
            if replayed is not None:
                return replayed
        answer = servlet()
        self.http_transactions.keep(request.path, device, answer, now)
        return answer

    def _v1(self, request: Request, device: str, parts: list[str]) -> Response:
        """`/_matrix/client/v1`: only /relations here (Synapse serves it on v1 alone; on v3 it
        answers 404 M_UNRECOGNIZED, measured)."""
        if 5 <= len(parts) <= 7 and parts[1] == "rooms" and parts[3] == "relations" and request.method == "GET":
            return self._relations(request, device, parts[2], parts[4], *parts[5:])
        return self._error(404, "M_UNRECOGNIZED", "Unrecognized request")

    def _room_page(self) -> Response:
        """Where a message's link points: a matrix.to permalink names the event in its fragment,
        which a browser never sends, so (as a Matrix client would) the page shows the room, each
        message as text with its event id as an anchor: an edited one with its latest text and
        "(edited)", a redacted one as "Message deleted", as Element shows them."""
        items = "".join(
            f'<li id="{html.escape(m["event"]["event_id"])}">'
            + (
                "<p><i>Message deleted</i></p>"
                if m["deleted"]
                else f"<pre>{html.escape(m['text'])}</pre>" + (" <small>(edited)</small>" if m["edited"] else "")
            )
            + "</li>"
            for m in Room(self.visible(self.state["events"])).timeline()
        )
        page = f"<!doctype html><title>{html.escape(ROOM)}</title><h1>{html.escape(ROOM)}</h1><ol>{items}</ol>"
        return Response(200, page.encode("utf-8"), {"Content-Type": "text/html; charset=utf-8"})

    # ---------------------------------------------------------------- rooms

    def _room(self) -> Room:
        """The committed events: what any read sees now."""
        return Room(self.visible(self.state["events"]))

    def _now_ms(self) -> int:
        return int(self.server_clock(self.server.now()) * 1000)

    def _send(self, request: Request, device: str, room: str, event_type: str, txn: str) -> Response:
        """An edit is an ordinary send whose content relates to the original (`m.relates_to`
        `rel_type: m.replace`, spec "Event replacements"). Synapse refuses only a relation to an
        event it does not know (400 M_UNKNOWN, measured) or in another room; whether the edit is
        valid (same sender and type, the original no edit itself, `m.new_content` present) is
        decided when reading (sandbox/matrix_events.py), and an edit of a redacted event is
        accepted (measured). A transaction id seen before answers its first event even once the
        bot is out of the room: rest/client/room.py `RoomSendEventRestServlet.on_PUT` asks the
        transaction cache (rest/client/transactions.py) before it makes anything, and
        handlers/message.py `create_and_send_nonmember_event` looks the id up before
        `check_local_user_in_room` (measured)."""
        try:
            content = request.json()  # RoomSendEventRestServlet._do parses first: even in a room
        except ValueError:  # that does not exist, a body that is no JSON is a 400
            return self._error(400, "M_NOT_JSON", "Content not JSON.")
        if not isinstance(content, dict):
            return self._error(400, "M_BAD_JSON", "Content must be a JSON object.")
        if room != ROOM:  # get_room_version, on the way to the rate limit
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        limited = self.limiter.refused(self.quirks.get("rc_message"), self.server.now())
        if limited is not None:  # checked before the transaction is looked up in the database
            return limited
        seen = self._replayed(room, device, txn)
        if seen is not None:
            return seen
        if not self.joined:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        refused = matrix_media.message_problem(event_type, content)
        if refused is not None:
            return refused
        rel = relation({"content": content})
        # handlers/message.py `_validate_event_relation`: the parent must be known (or be the
        # target of some relation), and nothing else about an edit is checked when it is sent.
        if rel is not None:
            room_now = self._room()
            if rel[1] not in room_now.by_id and not room_now.is_target(rel[1]):
                return self._error(400, "M_UNKNOWN", "Can't send relation to unknown event")
            # The same function: a thread's root must have no relation of its own (the spec's
            # "Threading": a thread cannot start from an event that is itself a relation).
            root = room_now.by_id.get(rel[1])
            if rel[0] == THREAD and root is not None and relation(root) is not None:
                return self._error(400, "M_UNKNOWN", "Cannot start threads from an event with a relation")
        self.limiter.record(self.quirks.get("rc_message"), self.server.now())
        return self._create(device, room, event_type, content, txn)

    def _replayed(self, room: str, device: str, txn: str | None) -> Response | None:
        """The first event's id for a transaction id seen in the last 24 hours, per room, user
        and device: sends and redactions share Synapse's table, so a redaction with a send's
        transaction id answers the sent event's id (measured)."""
        if txn is None or self.quirks.get("ignore_idempotency_key"):
            return None
        seen = self.state["transactions"].get(f"{room}\n{USER}\n{device}\n{txn}")
        return Response(200, {"event_id": seen["event_id"]}) if self._remembered(seen, self.server.now()) else None

    def _create(
        self, device: str, room: str, event_type: str, content: dict[str, Any], txn: str | None, sender: str = USER
    ) -> Response:
        now = self.server.now()
        event: dict[str, Any] = {
            "event_id": "$" + secrets.token_urlsafe(32),
            "type": event_type,
            "room_id": room,
            "sender": sender,
            "origin_server_ts": int(self.server_clock(now) * 1000),
            "content": content,
            "transaction_id": txn,
            "sent_by": device if txn is not None else None,
            "visible_at": self.commit_time(),
        }
        self.state["events"].append(event)
        if txn is not None:
            self.state["transactions"][f"{room}\n{USER}\n{device}\n{txn}"] = {"event_id": event["event_id"], "at": now}
        # A slow commit (quirk commit_delay): the answer waits for it, and readers see the event
        # only once it is committed.
        committed = float(event["visible_at"])
        return Response(200, {"event_id": event["event_id"]}, hold_until=committed if committed > now else None)

    def _redact(self, request: Request, device: str, room: str, event_id: str, txn: str | None) -> Response:
        """`PUT .../rooms/{roomId}/redact/{eventId}/{txnId}` (and Synapse's `POST` without a
        transaction id), in rest/client/room.py `RoomRedactEventRestServlet`'s order: the body
        must be a JSON object; an unknown room is 404 "Could not find room_version"; a `redacts`
        in the body other than the path's is 400 M_INVALID_PARAM (room versions 11+ put it in
        the content); a transaction id seen before answers its first event; then the redaction
        is made (403 once the bot is out of the room; 403 "You don't have permission to redact
        events" for another user's event). Measured on Synapse: the answer is
        `{event_id}` of the redaction; redacting an event again is accepted and makes another
        redaction event; the content keeps `reason`. An id no event has is 404 M_NOT_FOUND
        "Could not find event …" for a member below the room's `redact` power level, as a bot
        invited into a room is (handlers/message.py: when `check_redaction` says the sender must
        own the original, the original must exist; a room admin's redaction of it is accepted).
        The bot here is such a member."""
        try:
            content = request.json()  # an empty body too is M_NOT_JSON (measured)
        except ValueError:
            return self._error(400, "M_NOT_JSON", "Content not JSON.")
        if not isinstance(content, dict):
            return self._error(400, "M_BAD_JSON", "Content must be a JSON object.")
        if room != ROOM:
            return self._error(404, "M_NOT_FOUND", f"Could not find room_version for {room}")
        if content.get("redacts", event_id) != event_id:
            incoherent = "Cannot provide a redacts value incoherent with the event_id of the URL parameter"
            return self._error(400, "M_INVALID_PARAM", incoherent)
        seen = self._replayed(room, device, txn)  # the servlet's own lookup, before the rate limit
        if seen is not None:
            return seen
        limited = self.limiter.refused(self.quirks.get("rc_message"), self.server.now())
        if limited is not None:
            return limited
        if not self.joined:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        # handle_new_client_event counts the event, then checks the redaction: the bot has no
        # `redact` power, so the original must exist and be its own.
        self.limiter.record(self.quirks.get("rc_message"), self.server.now())
        original = next((e for e in self.state["events"] if e.get("event_id") == event_id), None)
        if original is None:
            return self._error(404, "M_NOT_FOUND", f"Could not find event {event_id}")
        if original["sender"] != USER:
            return self._error(403, "M_FORBIDDEN", "You don't have permission to redact events")
        return self._create(device, room, REDACTION, {**content, "redacts": event_id}, txn)

    @staticmethod
    def _remembered(seen: Any, now: float) -> bool:
        """A transaction still in the table: written less than 24 hours ago."""
        return isinstance(seen, dict) and now < float(seen.get("at", 0)) + TRANSACTION_LIFETIME

    def _messages(self, request: Request, device: str, room: str) -> Response:
        """Both an original and its edits are in the history, each a whole event; the original
        with the edit bundled, a redacted one pruned (measured)."""
        if room != ROOM:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}, and room previews are disabled")
        backwards = request.arg("dir", "b") == "b"
        try:
            limit = max(1, min(int(request.arg("limit", "10") or 10), 1000))
            wanted = json.loads(request.arg("filter") or "{}")
            start = int(request.arg("from") or 0)
        except ValueError:
            return self._error(400, "M_INVALID_PARAM", "Invalid parameter")
        room_now = self._room()
        events = [
            e
            for e in room_now.events
            if e["type"] in wanted.get("types", [e["type"]]) and e["sender"] in wanted.get("senders", [e["sender"]])
        ]
        if backwards:
            events = events[::-1]
        chunk = events[start : start + limit]
        now_ms = self._now_ms()
        body: dict[str, Any] = {"chunk": [room_now.shown(e, device, now_ms) for e in chunk], "start": str(start)}
        if chunk:
            body["end"] = str(start + len(chunk))
        return Response(200, body)

    def _event(self, device: str, room: str, event_id: str) -> Response:
        """`GET .../rooms/{roomId}/event/{eventId}`: the ORIGINAL content, the latest edit under
        `unsigned["m.relations"]["m.replace"]` (rest/client/room.py `RoomEventServlet`). An
        unknown id, an event of another room and one the user may not see are all 404
        M_NOT_FOUND "Event not found." (the servlet turns the AuthError into it; measured).
        Once the bot is out of the room it still reads what was sent while it was in."""
        room_now = self._room()
        event = room_now.by_id.get(event_id)
        if room != ROOM or event is None or event["room_id"] != room:
            return self._error(404, "M_NOT_FOUND", "Event not found.")
        return Response(200, room_now.shown(event, device, self._now_ms()))

    def _relations(
        self, request: Request, device: str, room: str, parent_id: str, rel_type: str | None = None, *rest: str
    ) -> Response:
        """`GET /_matrix/client/v1/rooms/{roomId}/relations/{eventId}[/{relType}[/{eventType}]]`
        (rest/client/relations.py, handlers/relations.py `get_relations`): `chunk`, newest first
        unless `dir=f`, `limit` 5 by default (at most 1000), `next_batch` while more remain,
        `prev_batch` echoing `from`. Every relation to the event, whoever sent it; a redacted
        relation is gone, and a redacted event lists no edits. Errors as measured: a room the
        user is not in, 403 M_FORBIDDEN; an unknown event, 404 M_UNKNOWN "Unknown parent
        event."; a bad `limit` or `dir` 400 M_INVALID_PARAM, a bad `from` 400 M_UNKNOWN."""
        if room != ROOM:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}, and room previews are disabled")
        try:
            limit = min(int(request.arg("limit", "5") or ""), 1000)  # http/servlet.py `parse_integer`
        except ValueError:
            return self._error(400, "M_INVALID_PARAM", "Query parameter limit must be an integer")
        if limit < 0:
            return self._error(400, "M_INVALID_PARAM", "Query parameter limit must be a positive integer.")
        direction = request.arg("dir") or "b"
        if direction not in ("b", "f"):
            return self._error(400, "M_INVALID_PARAM", "Query parameter 'dir' must be one of ['b', 'f']")
        start = request.arg("from")
        start = None if start == "END" else start  # streams/config.py: "For backwards compat."
        if start is not None and not (start.startswith("r") and start[1:].isdigit()):
            return self._error(400, "M_UNKNOWN", "'from' parameter is invalid")
        room_now = self._room()
        parent = room_now.by_id.get(parent_id)
        if parent is None:
            return self._error(404, "M_UNKNOWN", "Unknown parent event.")
        found = room_now.children(parent, rel_type, rest[0] if rest else None)
        if direction == "b":
            found.reverse()
        if start is not None:  # a token is the position of the last event the page before gave
            edge = int(start[1:])
            found = [e for e in found if (room_now.position[e["event_id"]] < edge) == (direction == "b")]
        page = found[:limit]
        now_ms = self._now_ms()
        body: dict[str, Any] = {"chunk": [room_now.shown(e, device, now_ms) for e in page]}
        if len(found) > len(page) and page:
            body["next_batch"] = f"r{room_now.position[page[-1]['event_id']]}"
        if start is not None:
            body["prev_batch"] = start
        return Response(200, body)
