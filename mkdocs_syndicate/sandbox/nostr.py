"""Nostr relay emulator, written from the NIPs (NIP-01 events, filters and the EVENT/REQ/OK/EOSE/
CLOSED messages; NIP-09 deletion requests; NIP-23 long-form) and from nostr-relay 1.14's source
(the reference Python relay the realserver tier runs), never from the client.

It speaks WebSocket at `ws://<sandbox>/nostr` (sandbox/websocket.py carries the frames). Each
client message is one sandbox request, so the sandbox's faults and kills apply to it:
`["EVENT", e]` is `POST /EVENT/<its kind>/` (a note's and an article's create something, a
kind 5 deletes), `["REQ", sub, filter…]` is `GET /REQ`.

What it does, as nostr-relay does (nostr_relay/web.py, storage/db.py, validators.py):
- an event is checked: its fields, its id (the hash of its fields), its BIP-340 signature, its
  time (not a year old, not an hour ahead: `is_recent`), its content's size (`max_event_size`,
  4,096 by default: the `max_characters` quirk); a refusal is `["OK", "", false, "invalid: …"]`,
  the empty id being nostr-relay's;
- an event already stored is `["OK", id, false, "duplicate: exists"]` (nostr-relay answers false
  where NIP-01 suggests true: a client must take either as "the relay has it");
- a kind 30000–39999 event replaces the stored one of the same author, kind and `d` tag when it
  is newer; an older one is refused (NIP-01: only the latest is kept);
- a kind 5 (NIP-09) deletes the author's events its `e` tags name and, as NIP-09 asks, the
  versions of its `a` addresses up to its created_at; the deletion itself is kept and served;
- like a relay that admits only its members (NIP-01's `restricted:` prefix, which nostr-relay
  gives its authenticator's refusals), it stores events from the sandbox account's key alone;
- a REQ answers the stored events matching any of its filters (ids, authors, kinds, #x tags,
  since, until, limit), newest first, then EOSE.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.nip19 import naddr_name, note_name

# The sandbox account (a rehearsal never signs with the user's key): a fixed test key.
SECRET_KEY = "5ee1c8000ab28edd64d74a7d951ac2dd559814887b1b9e1ac7c5f89e96125c12"
NOTE, DELETION = 1, 5
MAX_EVENT_SIZE = 4096  # nostr_relay/config.py: max_event_size
OLDEST_EVENT = 31_536_000  # nostr_relay/config.py: oldest_event (a year)
FUTURE_LIMIT = 3600  # nostr_relay/validators.py is_recent: an hour ahead
RELAY_SAYS = "relay_says"  # an answer's messages, in the sandbox's Response (a fault's body is not one)


def public_key(secret_hex: str) -> str:
    from coincurve import PublicKeyXOnly

    return str(PublicKeyXOnly.from_secret(bytes.fromhex(secret_hex)).format().hex())


def _computed_id(event: dict[str, Any]) -> str:
    fields = [0, event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"]]
    return hashlib.sha256(json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def _signature_valid(event: dict[str, Any]) -> bool:
    from coincurve import PublicKeyXOnly

    try:
        return bool(
            PublicKeyXOnly(bytes.fromhex(event["pubkey"])).verify(
                bytes.fromhex(event["sig"]), bytes.fromhex(event["id"])
            )
        )
    except (ValueError, TypeError):
        return False


def _well_formed(event: object) -> bool:
    if not isinstance(event, dict):
        return False
    hexes = all(
        isinstance(event.get(k), str) and len(event[k]) == n for k, n in (("id", 64), ("pubkey", 64), ("sig", 128))
    )
    tags = event.get("tags")
    return (
        hexes
        and isinstance(event.get("created_at"), int)
        and isinstance(event.get("kind"), int)
        and isinstance(event.get("content"), str)
        and isinstance(tags, list)
        and all(isinstance(t, list) and t and all(isinstance(v, str) for v in t) for t in tags)
    )


def _first(event: dict[str, Any], name: str) -> str:
    return next((t[1] for t in event["tags"] if len(t) > 1 and t[0] == name), "")


def _addressable(kind: int) -> bool:
    return 30000 <= kind < 40000


def _matches(event: dict[str, Any], wanted: Mapping[str, Any]) -> bool:
    """NIP-01: every condition of the filter holds; a #x condition holds when a tag x has one of its values."""
    for key, values in wanted.items():
        if key == "ids" and event["id"] not in values:
            return False
        if key == "authors" and event["pubkey"] not in values:
            return False
        if key == "kinds" and event["kind"] not in values:
            return False
        if key == "since" and event["created_at"] < values:
            return False
        if key == "until" and event["created_at"] > values:
            return False
        if key.startswith("#") and not any(len(t) > 1 and t[0] == key[1:] and t[1] in values for t in event["tags"]):
            return False
    return True


class NostrEmulator(Emulator):
    name = "nostr"
    websocket = True  # sandbox/websocket.py serves it
    creating = ("POST /EVENT/1/", "POST /EVENT/30023/")  # a note, an article (a deletion is kind 5)
    public_pages = ("/e/",)  # the web gateway's page of a note or an article (client_options' web_url)
    read_marker = "/REQ"
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429}
    # A key the relay does not admit: the shared suites' refused credential (a malformed one is a
    # config error, never sent).
    refused_credentials: ClassVar[Mapping[str, str]] = {
        "secret_key": "7f0e3b1a5c2d4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
    }

    def initial_state(self) -> dict[str, Any]:
        return {"events": []}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> Mapping[str, object]:
        return {"relay": f"{url}/nostr", "secret_key": SECRET_KEY, "web_url": f"{public_base}/nostr/e"}

    # ---------------------------------------------------------------- messages

    def message(self, text: str) -> Request | list[list[Any]]:
        """A client's WebSocket message as the sandbox request it is, or the relay's answer to a
        message that is none (a NOTICE, as nostr-relay gives one it cannot read)."""
        try:
            message = json.loads(text)
        except ValueError:
            return [["NOTICE", "invalid: could not parse message"]]
        if not isinstance(message, list) or not message:
            return [["NOTICE", "invalid: a message is a JSON array"]]
        if message[0] == "EVENT" and len(message) == 2 and isinstance(message[1], dict):
            kind = message[1].get("kind")
            # Named by its kind, so that faults and the shared suites tell a note from a deletion.
            path = f"/EVENT/{kind}/" if isinstance(kind, int) else "/EVENT/invalid/"
            return Request("POST", path, {}, {}, json.dumps(message[1]).encode(), "")
        if message[0] == "REQ" and len(message) >= 3 and isinstance(message[1], str):
            return Request("GET", "/REQ", {}, {}, json.dumps(message[1:]).encode(), "")
        if message[0] == "CLOSE":
            return []
        return [["NOTICE", f"invalid: unknown message {str(message[0])[:20]!r}"]]

    def replies(self, request: Request, response: Response | None) -> list[Any] | None:
        """The relay's messages (or a replaced answer's text) for a request's answer; None: the
        connection drops unanswered. A fault's HTTP status becomes what a relay says in its place:
        429 a rate limit, 401/403 an authentication refusal, any other a relay that fails
        mid-request (the connection drops)."""
        if response is None:
            return None
        if isinstance(response.body, dict) and isinstance(response.body.get(RELAY_SAYS), list):
            return list(response.body[RELAY_SAYS])
        body = request.json()
        if response.status < 300:  # an answer replaced by one of another shape: sent as it is, one frame
            replaced = response.body
            return [replaced.decode("utf-8", "replace") if isinstance(replaced, bytes) else replaced]
        reason = {429: "rate-limited: slow down", 401: "auth-required: log in", 403: "restricted: not allowed"}.get(
            response.status
        )
        if reason is None:  # a relay has no HTTP status once connected: a failing one drops the connection
            return None
        if request.path.startswith("/EVENT/"):
            return [["OK", body.get("id", "") if isinstance(body, dict) else "", False, reason]]
        return [["CLOSED", body[0], reason]]

    def handle(self, request: Request) -> Response:
        if request.base:  # plain HTTP, not a message of a WebSocket (sandbox/websocket.py)
            return Response(426, b"a Nostr relay: connect with WebSocket", {"Upgrade": "websocket"})
        if request.path.startswith("/EVENT/"):
            answer = self._event(request.json())
            committed = self.commit_time()
            return Response(
                200, {RELAY_SAYS: [answer]}, hold_until=committed if committed > self.server.now() else None
            )
        subscription, *filters = request.json()
        found = [["EVENT", subscription, e] for e in self._query(filters)]
        return Response(200, {RELAY_SAYS: [*found, ["EOSE", subscription]]})

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        return Response(429)

    # ---------------------------------------------------------------- storage

    def _event(self, event: Any) -> list[Any]:
        refused = self._refusal(event)
        if refused:
            return ["OK", "", False, refused]
        events: list[dict[str, Any]] = self.state["events"]
        if any(stored["event"]["id"] == event["id"] for stored in events):
            return ["OK", event["id"], False, "duplicate: exists"]
        if _addressable(event["kind"]):
            same = [s for s in events if self._same_address(s["event"], event) and not s.get("deleted_at")]
            if any(s["event"]["created_at"] >= event["created_at"] for s in same):
                return ["OK", "", False, "invalid: a newer version of this address is stored"]
            for stored in same:
                stored["deleted_at"] = self.server.now()  # replaced
                stored["replaced"] = True
        if event["kind"] == DELETION:
            self._delete(event)
        events.append({"event": event, "visible_at": self.commit_time(), "at": self.server.now()})
        return ["OK", event["id"], True, ""]

    def _refusal(self, event: Any) -> str:
        if not _well_formed(event):
            return "invalid: Bad JSON"
        if _computed_id(event) != event["id"] or not _signature_valid(event):
            return "invalid: Bad signature"
        now = self.server.now()
        if now - event["created_at"] > OLDEST_EVENT:
            return f"invalid: {event['created_at']} is too old"
        if now - event["created_at"] < -FUTURE_LIMIT:
            return f"invalid: {event['created_at']} is in the future"
        if len(event["content"]) > int(self.quirks.get("max_characters") or MAX_EVENT_SIZE):
            return "invalid: 280 characters should be enough for anybody"  # nostr-relay's words
        if event["pubkey"] != public_key(SECRET_KEY):
            return "restricted: this relay stores events of its members only"
        return ""

    @staticmethod
    def _same_address(stored: dict[str, Any], event: dict[str, Any]) -> bool:
        return (
            stored["kind"] == event["kind"]
            and stored["pubkey"] == event["pubkey"]
            and _first(stored, "d") == _first(event, "d")
        )

    def _delete(self, deletion: dict[str, Any]) -> None:
        """NIP-09: the author's own events its `e` tags name, and the versions of its `a`
        addresses (kind:pubkey:d) up to its created_at."""
        named = {t[1] for t in deletion["tags"] if len(t) > 1 and t[0] == "e"}
        addresses = {t[1] for t in deletion["tags"] if len(t) > 1 and t[0] == "a"}
        for stored in self.state["events"]:
            event = stored["event"]
            if event["pubkey"] != deletion["pubkey"] or stored.get("deleted_at"):
                continue
            address = f"{event['kind']}:{event['pubkey']}:{_first(event, 'd')}"
            covered = (
                _addressable(event["kind"]) and address in addresses and event["created_at"] <= deletion["created_at"]
            )
            if event["id"] in named or covered:
                stored["deleted_at"] = self.server.now()

    def _query(self, filters: list[Any]) -> list[dict[str, Any]]:
        live = [s["event"] for s in self.visible(self.state["events"]) if not s.get("deleted_at")]
        live.sort(key=lambda e: (-e["created_at"], e["id"]))
        found: dict[str, dict[str, Any]] = {}
        for wanted in filters:
            if not isinstance(wanted, dict):
                continue
            hits = [e for e in live if _matches(e, wanted)]
            limit = wanted.get("limit")
            for event in hits[: limit if isinstance(limit, int) and limit >= 0 else None]:
                found.setdefault(event["id"], event)
        return sorted(found.values(), key=lambda e: (-e["created_at"], e["id"]))

    # ---------------------------------------------------------------- what it holds

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        """The notes and articles stored, oldest first (an article once, as its latest version;
        a deleted one as deleted, announcing nothing); deletion requests are not posts."""
        shown = []
        for stored in state.get("events", []):
            event = stored["event"]
            if event["kind"] == DELETION or stored.get("replaced"):
                continue
            deleted = bool(stored.get("deleted_at"))
            article = _addressable(event["kind"])
            remote_id = f"{event['kind']}:{event['pubkey']}:{_first(event, 'd')}" if article else event["id"]
            name = naddr_name(event["kind"], event["pubkey"], _first(event, "d")) if article else note_name(event["id"])
            shown.append(
                {
                    "id": event["id"],
                    "remote_id": remote_id,
                    "text": event["content"] if not article else f"{_first(event, 'title')}\n\n{event['content']}",
                    "announces": "" if deleted else _first(event, "r"),
                    "at": stored.get("at"),
                    "link": f"{public_base}/nostr/e/{name}",
                    "deleted": deleted,
                }
            )
        return shown
