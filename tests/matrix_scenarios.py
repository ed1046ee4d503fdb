"""Raw Client-Server API scenarios run the same way against Synapse and against the sandbox's
homeserver (tests/test_realserver_matrix.py compares the two; tests/test_emulators_as_servers.py
holds the emulator to what Synapse answered). Each step's answer is reduced to what does not
differ between two servers: status, errcode, and whether an event id is the one expected."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

MESSAGE = {"msgtype": "m.text", "body": "hello"}


class Room:
    """One user's view of one room on one homeserver."""

    def __init__(self, homeserver: str, token: str, room: str) -> None:
        self.homeserver, self.token = homeserver, token
        self.client = f"{homeserver}/_matrix/client/v3"
        self.path = f"{self.client}/rooms/{quote(room, safe='')}"
        self.auth = {"Authorization": f"Bearer {token}"}
        self.run = uuid.uuid4().hex  # transaction ids of this run's own

    def send(self, txn: str, body: Any = MESSAGE, event_type: str = "m.room.message") -> httpx.Response:
        return self._put(f"{self.path}/send/{event_type}/{self.run}-{txn}", body)

    def redact(self, event_id: str, txn: str, body: Any = None) -> httpx.Response:
        return self._put(
            f"{self.path}/redact/{quote(event_id, safe='')}/{self.run}-{txn}", {} if body is None else body
        )

    def _put(self, url: str, body: Any) -> httpx.Response:
        if isinstance(body, bytes):
            return httpx.put(url, content=body, headers={**self.auth, "Content-Type": "application/json"})
        return httpx.put(url, json=body, headers=self.auth)

    def content(self, event_id: str) -> Any:
        answer = httpx.get(f"{self.path}/event/{quote(event_id, safe='')}", headers=self.auth)
        return answer.json().get("content")


def errcode(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, str(answer.json().get("errcode", ""))


def event_id(answer: httpx.Response) -> str:
    return str(answer.json().get("event_id"))


def redact_anothers(room: Room, theirs: str) -> list[Any]:
    """A member without `redact` power redacts another user's event: the answer, then the event."""
    refused = room.redact(theirs, "theirs")
    return [(*errcode(refused), refused.json().get("error")), room.content(theirs)]


def no_json_to_no_room(room: Room, elsewhere: str) -> list[tuple[int, str]]:
    """A send and a redaction whose body is no JSON, to a room that does not exist."""
    nowhere = Room(room.homeserver, room.token, elsewhere)
    return [
        errcode(nowhere.send("bad", b"{not json")),
        errcode(nowhere.send("good", MESSAGE)),
        errcode(nowhere.redact("$whatever", "bad", b"{not json")),
    ]


def cached_replays(room: Room) -> list[Any]:
    """A send repeated at once with a body that is no JSON (the HTTP transaction cache answers it);
    a send that failed, then the same id with a good body (a failure is not kept); the same for a
    redaction."""
    first = room.send("a")
    steps: list[Any] = [first.status_code]
    malformed = room.send("a", b"{not json")
    steps.append((malformed.status_code, event_id(malformed) == event_id(first)))
    steps.append(errcode(room.send("b", b"{not json")))
    retried = room.send("b")
    steps.append((retried.status_code, event_id(retried) != event_id(first)))
    redaction = room.redact(event_id(first), "r")
    again = room.redact(event_id(first), "r", b"{not json")
    steps.append((redaction.status_code, again.status_code, event_id(again) == event_id(redaction)))
    return steps


def rate_limit_order(room: Room, limit: Callable[[], None]) -> list[Any]:
    """A send and a redaction made; then `limit()` sets the user's `rc_message` so that no new
    event passes (a burst of 0, which a bucket never refills: no timing in the scenario). Then a
    new send is 429, a repeat of the send 200 (the HTTP cache, before the limit), the send's id
    under another event type 429 (the limit, before the transaction table), the redaction's id on
    another event's path 200 (the redaction servlet's own lookup, before the limit), a new
    redaction 429."""
    sent = room.send("a")
    spare = room.send("spare")
    redaction = room.redact(event_id(spare), "r")
    steps: list[Any] = [sent.status_code, spare.status_code, redaction.status_code]
    limit()
    limited = room.send("c")
    steps.append((*errcode(limited), "retry_after_ms" in limited.json(), "Retry-After" in limited.headers))
    again = room.send("a")
    steps.append((again.status_code, event_id(again) == event_id(sent)))
    steps.append(errcode(room.send("a", event_type="org.example.other")))
    elsewhere = room.redact(event_id(sent), "r")
    steps.append((elsewhere.status_code, event_id(elsewhere) == event_id(redaction)))
    steps.append(errcode(room.redact(event_id(sent), "new")))
    return steps
