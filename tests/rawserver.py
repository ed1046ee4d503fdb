"""A loopback server that answers however a test wants, byte by byte: trickles, floods, gzip
bombs, foreign pagination links. For what no well-behaved emulator would do."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections.abc import Callable

Respond = Callable[[socket.socket, bytes], None]  # (connection, request head) -> writes an answer


class RawServer:
    def __init__(self, respond: Respond) -> None:
        self.seen: list[str] = []  # request lines, in order
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = self.request.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(rest) < length:
                    rest += self.request.recv(65536)
                outer.seen.append(head.split(b"\r\n", 1)[0].decode())
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    respond(self.request, head)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def answer(status: int, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
