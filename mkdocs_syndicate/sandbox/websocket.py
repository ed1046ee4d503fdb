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


def wants_websocket(server: Any, prefix: str, headers: Any) -> bool:
    """An upgrade asked of an emulator that speaks WebSocket."""
    emulator = server.emulators.get(server.routes.get(prefix, ""))
    return bool(getattr(emulator, "websocket", False)) and str(headers.get("Upgrade", "")).lower() == "websocket"


def serve(handler: Any, emulator: Any, prefix: str) -> None:
    """Upgrade the handler's connection, then carry messages until the client closes, each one
    answered as the handler answers an HTTP request (its dispatch, and its hold for a slow commit)."""
    handler.close_connection = True  # no HTTP request follows on this connection
    connection: socket.socket = handler.connection
    path, headers = handler.path, handler.headers

    def read() -> bytes:  # what arrived (b"" at the end), through the handler's buffered reader
        return bytes(handler.rfile.read1(65536))

    def answer(request: Request) -> Response | None:
        held: Response | None = handler._held(handler._dispatch(prefix, request))
        return held

    from websockets.frames import Frame, Opcode
    from websockets.http11 import Request as Upgrade
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    protocol = ServerProtocol(max_size=MAX_MESSAGE)
    # The HTTP server has read the request already: it is handed to the protocol as it came.
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    protocol.receive_data(f"GET {path} HTTP/1.1\r\n{lines}\r\n".encode("latin-1"))
    (upgrade,) = protocol.events_received()
    assert isinstance(upgrade, Upgrade)
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
            if isinstance(frame, Frame) and frame.opcode in (Opcode.TEXT, Opcode.CONT):
                pieces.append(bytes(frame.data))
                if not frame.fin:
                    continue
                text, pieces = b"".join(pieces).decode("utf-8", errors="replace"), []
                replies = _replies(emulator, text, answer)
                if replies is None:  # drop: no close frame, no answer
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)
                    return
                for reply in replies:  # a message, or (a fault's) text sent as it is
                    text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
                    protocol.send_text(text.encode("utf-8"))
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
