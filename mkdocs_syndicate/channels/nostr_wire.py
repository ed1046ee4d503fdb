"""One conversation with a Nostr relay over its WebSocket (NIP-01), one connection each: publish
an event (`["EVENT", e]`, answered by `["OK", id, accepted, reason]`), or read what matches some
filters (`["REQ", sub, filter…]`, answered by `["EVENT", sub, e]`… then `["EOSE", sub]`, or
`["CLOSED", sub, reason]` when the relay refuses the query).

What is known about an answer is said exactly: a connection that never opened sent nothing; once
the event went out, a closed connection or a silent relay proves nothing either way. nostr-relay
(the reference Python relay) answers a refused event with an empty id (nostr_relay/web.py: its
StorageError branch sends `["OK", "", false, reason]`), so an `OK` whose id is empty or this
event's, the first on this connection, is the answer to it. NOTICE lines are kept for the error.

The runner's HTTP client does not speak WebSocket: the connection is the `websockets` library's
(already what atproto's SDK and uvicorn-based relays use), opened here with the channel's timeout."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from mkdocs_syndicate.channels.nostr_events import Event

MAX_MESSAGE = 4 * 1024 * 1024  # a long-form article with its tags, as a relay may send it back


@dataclass(frozen=True)
class Publication:
    """What became of one EVENT: `sent` False when the connection never opened (nothing left);
    `accepted` None when no OK came for it."""

    sent: bool
    accepted: bool | None = None
    reason: str = ""  # the relay's OK message ("duplicate: …", "rate-limited: …"), or what went wrong
    notices: tuple[str, ...] = ()
    refused_handshake: int | None = None  # the HTTP status a relay refused the upgrade with


@dataclass(frozen=True)
class Query:
    """What a REQ found: `complete` only when the relay said EOSE (it sent all it has)."""

    complete: bool
    events: list[Event] = field(default_factory=list)
    reason: str = ""


class _NotOpened(Exception):
    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.status = status


async def _open(relay: str, timeout: float) -> Any:
    """The connection, or _NotOpened saying why nothing was sent."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

    try:
        return await connect(
            relay, open_timeout=timeout, close_timeout=1, max_size=MAX_MESSAGE, compression=None, ping_interval=None
        )
    except InvalidStatus as exc:
        status = exc.response.status_code
        raise _NotOpened(f"the relay refused the connection with HTTP {status}", status) from None
    except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
        raise _NotOpened(f"could not connect ({type(exc).__name__})") from None


async def publish(relay: str, event: Event, timeout: float) -> Publication:
    from websockets.exceptions import ConnectionClosed

    try:
        connection = await _open(relay, timeout)
    except _NotOpened as exc:
        return Publication(False, reason=str(exc), refused_handshake=exc.status)
    notices: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            await connection.send(json.dumps(["EVENT", event], ensure_ascii=False))
            while True:
                message = _message(await connection.recv())
                if message[:1] == ["NOTICE"] and len(message) > 1:
                    notices.append(str(message[1]))
                elif message[:1] == ["OK"] and len(message) >= 3 and message[1] in ("", event["id"]):
                    accepted = message[2] if isinstance(message[2], bool) else None
                    reason = str(message[3]) if len(message) > 3 else ""
                    return Publication(True, accepted, reason, tuple(notices))
    except TimeoutError:
        return Publication(True, reason=f"no OK within {timeout:g} s", notices=tuple(notices))
    except (ConnectionClosed, OSError, ValueError) as exc:  # closed, or a frame that is no JSON: it proves nothing
        return Publication(
            True, reason=f"the connection ended without an OK ({type(exc).__name__})", notices=tuple(notices)
        )
    finally:
        await _close(connection)


async def query(relay: str, filters: list[dict[str, Any]], timeout: float, subscription: str = "syndicate") -> Query:
    from websockets.exceptions import ConnectionClosed

    try:
        connection = await _open(relay, timeout)
    except _NotOpened as exc:
        return Query(False, reason=str(exc))
    found: list[Event] = []
    try:
        async with asyncio.timeout(timeout):
            await connection.send(json.dumps(["REQ", subscription, *filters]))
            while True:
                message = _message(await connection.recv())
                if message[:2] == ["EVENT", subscription] and len(message) > 2 and isinstance(message[2], dict):
                    found.append(message[2])
                elif message[:2] == ["EOSE", subscription]:
                    return Query(True, found)
                elif message[:2] == ["CLOSED", subscription]:
                    return Query(False, reason=f"the relay closed the query: {message[2] if len(message) > 2 else ''}")
    except TimeoutError:
        return Query(False, reason=f"no end of stored events within {timeout:g} s")
    except (ConnectionClosed, OSError, ValueError) as exc:  # as in publish: a read that ended early proves nothing
        return Query(False, reason=f"the connection ended before the end of stored events ({type(exc).__name__})")
    finally:
        await _close(connection, ["CLOSE", subscription])


def _message(frame: str | bytes) -> list[Any]:
    """A relay message: a JSON array (NIP-01). Anything else is no answer (ValueError)."""
    message = json.loads(frame)
    if not isinstance(message, list):
        raise ValueError("a relay message that is not a JSON array")
    return message


async def _close(connection: Any, last: list[str] | None = None) -> None:
    try:
        if last is not None:
            await connection.send(json.dumps(last))
        await connection.close()
    except Exception:  # closing what the relay may have closed already
        pass
