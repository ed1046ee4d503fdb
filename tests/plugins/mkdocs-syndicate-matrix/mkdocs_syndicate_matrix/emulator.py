"""A Matrix homeserver for the sandbox and the tests, written from the Client-Server API
(spec.matrix.org v1.x) and Synapse's behaviour, not from the client:

- `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}`: the same transaction id from
  the same access token returns the same event id (the spec's idempotency), unless the server has
  forgotten it (quirk `ignore_idempotency_key`: Synapse keeps transaction ids for about 30 minutes
  and not across restarts);
- `GET .../rooms/{roomId}/messages` with `dir`, `from`, `limit` and a `filter` (types, senders):
  `chunk`, `start`, and `end` only while there are more events; an event's
  `unsigned.transaction_id` only for the access token that sent it;
- `GET .../account/whoami`;
- errors as `{"errcode", "error"}`: M_MISSING_TOKEN / M_UNKNOWN_TOKEN (401), M_FORBIDDEN (403, not
  in the room), M_NOT_JSON (400), M_LIMIT_EXCEEDED (429, `retry_after_ms` and Retry-After).
"""

from __future__ import annotations

import html
import json
import math
import secrets
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from mkdocs_syndicate.sandbox.emulator import Emulator, Request, Response, first_url

TOKEN = "sandbox-matrix-token"
USER = "@sandbox:matrix.test"
DEVICE = "SANDBOXDEVICE"
ROOM = "!sandbox:matrix.test"
PREFIX = "/_matrix/client/v3"


class MatrixEmulator(Emulator):
    name = "matrix"
    creating = (f"PUT {PREFIX}/rooms/",)
    read_marker = "/messages"
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "reset_in": 40}

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
        return [
            {
                "id": e["event_id"],
                "text": e["content"].get("body", ""),
                "announces": first_url(e["content"].get("body", "")),
                "at": e["origin_server_ts"] / 1000,
                "link": f"{public_base}/matrix/to/#/{ROOM}/{e['event_id']}",
            }
            for e in state.get("events", [])
        ]

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
        if not request.path.startswith(PREFIX):
            return self._error(404, "M_UNRECOGNIZED", "Unrecognized request")
        path = request.path.removeprefix(PREFIX)
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return self._error(401, "M_MISSING_TOKEN", "Missing access token")
        if auth.removeprefix("Bearer ") != TOKEN:
            return self._error(401, "M_UNKNOWN_TOKEN", "Unrecognised access token")
        parts = [unquote(p) for p in path.split("/")]
        if path == "/account/whoami" and request.method == "GET":
            return Response(200, {"user_id": USER, "device_id": DEVICE, "is_guest": False})
        if len(parts) == 6 and parts[1] == "rooms" and parts[3] == "send" and request.method == "PUT":
            return self._send(request, parts[2], parts[4], parts[5])
        if len(parts) == 4 and parts[1] == "rooms" and parts[3] == "messages" and request.method == "GET":
            return self._messages(request, parts[2])
        return self._error(404, "M_UNRECOGNIZED", "Unrecognized request")

    def _room_page(self) -> Response:
        """Where a message's link points: a matrix.to permalink names the event in its fragment,
        which a browser never sends, so (as a Matrix client would) the page shows the room, each
        message as text with its event id as an anchor."""
        items = "".join(
            f'<li id="{html.escape(e["event_id"])}"><pre>{html.escape(str(e["content"].get("body", "")))}</pre></li>'
            for e in self.visible(self.state["events"])
        )
        page = f"<!doctype html><title>{html.escape(ROOM)}</title><h1>{html.escape(ROOM)}</h1><ol>{items}</ol>"
        return Response(200, page.encode("utf-8"), {"Content-Type": "text/html; charset=utf-8"})

    # ---------------------------------------------------------------- rooms

    def _send(self, request: Request, room: str, event_type: str, txn: str) -> Response:
        if room != ROOM:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        try:
            content = request.json()
        except ValueError:
            return self._error(400, "M_NOT_JSON", "Content not JSON.")
        if not isinstance(content, dict):
            return self._error(400, "M_BAD_JSON", "Content must be a JSON object.")
        seen = self.state["transactions"].get(f"{TOKEN}\n{txn}")
        if seen is not None and not self.quirks.get("ignore_idempotency_key"):
            return Response(200, {"event_id": seen})
        now = self.server.now()
        event = {
            "event_id": "$" + secrets.token_urlsafe(32),
            "type": event_type,
            "room_id": room,
            "sender": USER,
            "origin_server_ts": int(self.server_clock(now) * 1000),
            "content": content,
            "transaction_id": txn,
            "sent_by": TOKEN,
            "visible_at": self.commit_time(),
        }
        self.state["events"].append(event)
        self.state["transactions"][f"{TOKEN}\n{txn}"] = event["event_id"]
        # A slow commit (quirk commit_delay): the answer waits for it, and readers see the event
        # only once it is committed.
        committed = event["visible_at"]
        return Response(200, {"event_id": event["event_id"]}, hold_until=committed if committed > now else None)

    def _messages(self, request: Request, room: str) -> Response:
        if room != ROOM:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        backwards = request.arg("dir", "b") == "b"
        try:
            limit = max(1, min(int(request.arg("limit", "10") or 10), 1000))
            wanted = json.loads(request.arg("filter") or "{}")
            start = int(request.arg("from") or 0)
        except ValueError:
            return self._error(400, "M_INVALID_PARAM", "Invalid parameter")
        events = [
            e
            for e in self.visible(self.state["events"])
            if e["type"] in wanted.get("types", [e["type"]]) and e["sender"] in wanted.get("senders", [e["sender"]])
        ]
        if backwards:
            events = events[::-1]
        chunk = events[start : start + limit]
        body: dict[str, Any] = {"chunk": [self._shown(e, request) for e in chunk], "start": str(start)}
        if start + limit < len(events):
            body["end"] = str(start + limit)
        return Response(200, body)

    @staticmethod
    def _shown(event: dict[str, Any], request: Request) -> dict[str, Any]:
        """An event as a client sees it: the transaction id only for the token that sent it."""
        shown = {k: event[k] for k in ("event_id", "type", "room_id", "sender", "origin_server_ts", "content")}
        shown["unsigned"] = {"age": 0}
        if request.headers.get("authorization", "") == f"Bearer {event['sent_by']}":
            shown["unsigned"]["transaction_id"] = event["transaction_id"]
        return shown
