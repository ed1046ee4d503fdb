"""WebSocket for the sandbox's emulators that speak it (Nostr relays): the upgrade of one HTTP
connection, then each text message the client sends handed to the emulator as one sandbox
request, through the server's dispatch, so faults, kills and the request log apply to it as to
any HTTP request. The protocol is the `websockets` library's sans-I/O one (RFC 6455), driven over
the handler's own socket; the server stays the standard library's threaded HTTP server.

An emulator that speaks it has `websocket = True` and two methods: `message(text)`, the
client's message as a Request (or the messages to answer it with at once), and
`replies(request, response)`, the messages a request's answer is (None: drop the connection
without a word, as a killed or failing relay would)."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable
from typing import Any

from mkdocs_syndicate.emulator_api import Request, Response

MAX_MESSAGE = 4 * 1024 * 1024


def wants_websocket(headers: Any) -> bool:
    return str(headers.get("Upgrade", "")).lower() == "websocket"


def serve(
    connection: socket.socket,
    read: Callable[[], bytes],
    path: str,
    headers: Any,
    emulator: Any,
    answer: Callable[[Request], Response | None],
) -> None:
    """Upgrade, then carry messages until the client closes. `read` returns what arrived (b"" at
    the end: the handler's buffered reader, which may hold bytes already); `answer` is the
    server's dispatch of one request to this emulator."""
    from websockets.frames import Opcode
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    protocol = ServerProtocol(max_size=MAX_MESSAGE)
    # The HTTP server has read the request already: it is handed to the protocol as it came.
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    protocol.receive_data(f"GET {path} HTTP/1.1\r\n{lines}\r\n".encode("latin-1"))
    (upgrade,) = protocol.events_received()
    response = protocol.accept(upgrade)
    protocol.send_response(response)
    connection.sendall(b"".join(protocol.data_to_send()))
    if response.status_code != 101:
        return
    pieces: list[bytes] = []
    while protocol.state is not State.CLOSED:
        data = read()
        if not data:
            protocol.receive_eof()
            return
        protocol.receive_data(data)
        for frame in protocol.events_received():
            if frame.opcode in (Opcode.TEXT, Opcode.CONT):
                pieces.append(frame.data)
                if not frame.fin:
                    continue
                text, pieces = b"".join(pieces).decode("utf-8", errors="replace"), []
                replies = _replies(emulator, text, answer)
                if replies is None:  # drop: no close frame, no answer
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)
                    return
                for reply in replies:
                    protocol.send_text(json.dumps(reply, ensure_ascii=False).encode("utf-8"))
        outgoing = protocol.data_to_send()
        connection.sendall(b"".join(outgoing))
        if b"" in outgoing or protocol.close_expected():  # the closing handshake is done: end the TCP connection
            return


def _replies(emulator: Any, text: str, answer: Callable[[Request], Response | None]) -> list[Any] | None:
    request = emulator.message(text)
    if not isinstance(request, Request):
        return list(request)
    replies: list[Any] | None = emulator.replies(request, answer(request))
    return replies
