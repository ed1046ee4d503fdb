"""A Matrix homeserver for the sandbox and the tests, written from the Client-Server API
(https://spec.matrix.org/latest/client-server-api/) and Synapse's behaviour, not from the client.
Synapse's source, 1.163.2 (https://github.com/element-hq/synapse/tree/v1.163.2; the paths below
are in it):

- `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}`: the same transaction id in
  the same room from the same user and device returns the first event id, whatever the body
  (the spec scopes transaction ids to the device since v1.7). Synapse keeps the mapping in its
  database table `event_txn_id_device_id` and deletes rows older than 24 hours
  (synapse/storage/databases/main/events_worker.py, `_cleanup_old_transaction_ids`: "Cleans out
  transaction id mappings older than 24hrs"), so it holds across restarts and across a new login
  on the same device; another device gets a new event. Quirk `ignore_idempotency_key`: a server
  that forgot it (an older Synapse, another homeserver);
- the room has a room-version-12 id: no server part (Synapse's `DEFAULT_ROOM_VERSION = "12"`,
  synapse/config/server.py; the id is the create event's hash);
- `GET .../rooms/{roomId}/messages` with `dir`, `from`, `limit` and a `filter` (types, senders):
  `chunk`, `start`, and `end` on every page that has events, the last one too; a page past the
  last event is an empty chunk with no `end` (synapse/handlers/pagination.py `get_messages`:
  "if no events are returned from pagination ... we do not return end"); an event's
  `unsigned.transaction_id` only for the device that sent it;
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

from mkdocs_syndicate.channel_api import Emulator, Request, Response, first_url

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
TRANSACTION_LIFETIME = 24 * 3600.0  # Synapse's `_cleanup_old_transaction_ids`
# An access token past its expiry (refresh tokens, spec v1.3): Synapse answers it M_UNKNOWN_TOKEN
# with `soft_logout: true` (synapse/api/auth/internal.py, "Access token has expired").
EXPIRED_TOKEN = "sandbox-matrix-token-expired"


class MatrixEmulator(Emulator):
    name = "matrix"
    creating = (f"PUT {PREFIX}/rooms/",)
    read_marker = "/messages"
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "reset_in": 40}
    joined = True  # tests: False once the bot has been removed from the room (kicked, or it left)

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
                "link": f"{public_base}/matrix/to/#/{ROOM}/{e['event_id']}?via={SERVER_NAME}",
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
        if auth.removeprefix("Bearer ") == EXPIRED_TOKEN:
            return Response(
                401, {"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": True}
            )
        device = DEVICES.get(auth.removeprefix("Bearer "))
        if device is None:
            return self._error(401, "M_UNKNOWN_TOKEN", "Unrecognised access token")
        parts = [unquote(p) for p in path.split("/")]
        if path == "/account/whoami" and request.method == "GET":
            return Response(200, {"user_id": USER, "device_id": device, "is_guest": False})
        if path == "/joined_rooms" and request.method == "GET":
            return Response(200, {"joined_rooms": [ROOM] if self.joined else []})
        if len(parts) == 6 and parts[1] == "rooms" and parts[3] == "send" and request.method == "PUT":
            return self._send(request, device, parts[2], parts[4], parts[5])
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

    def _send(self, request: Request, device: str, room: str, event_type: str, txn: str) -> Response:
        if room != ROOM or not self.joined:
            return self._error(403, "M_FORBIDDEN", f"User {USER} not in room {room}")
        try:
            content = request.json()
        except ValueError:
            return self._error(400, "M_NOT_JSON", "Content not JSON.")
        if not isinstance(content, dict):
            return self._error(400, "M_BAD_JSON", "Content must be a JSON object.")
        now = self.server.now()
        key = f"{room}\n{USER}\n{device}\n{txn}"
        seen = self.state["transactions"].get(key)
        if self._remembered(seen, now) and not self.quirks.get("ignore_idempotency_key"):
            return Response(200, {"event_id": seen["event_id"]})
        event: dict[str, Any] = {
            "event_id": "$" + secrets.token_urlsafe(32),
            "type": event_type,
            "room_id": room,
            "sender": USER,
            "origin_server_ts": int(self.server_clock(now) * 1000),
            "content": content,
            "transaction_id": txn,
            "sent_by": device,
            "visible_at": self.commit_time(),
        }
        self.state["events"].append(event)
        self.state["transactions"][key] = {"event_id": event["event_id"], "at": now}
        # A slow commit (quirk commit_delay): the answer waits for it, and readers see the event
        # only once it is committed.
        committed = float(event["visible_at"])
        return Response(200, {"event_id": event["event_id"]}, hold_until=committed if committed > now else None)

    @staticmethod
    def _remembered(seen: Any, now: float) -> bool:
        """A transaction still in the table: written less than 24 hours ago."""
        return isinstance(seen, dict) and now < float(seen.get("at", 0)) + TRANSACTION_LIFETIME

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
        if chunk:
            body["end"] = str(start + len(chunk))
        return Response(200, body)

    @staticmethod
    def _shown(event: dict[str, Any], request: Request) -> dict[str, Any]:
        """An event as a client sees it: the transaction id only for the device that sent it."""
        shown = {k: event[k] for k in ("event_id", "type", "room_id", "sender", "origin_server_ts", "content")}
        shown["unsigned"] = {"age": 0}
        presented = request.headers.get("authorization", "").removeprefix("Bearer ")
        if DEVICES.get(presented) == event["sent_by"]:
            shown["unsigned"]["transaction_id"] = event["transaction_id"]
        return shown
