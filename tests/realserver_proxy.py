"""A loopback proxy in front of a real server (the reference PDS, Synapse): it counts the calls a
run makes (XRPC methods; Matrix calls by `matrix_call`) and their answers, and can SIGKILL the
client around one of them. The client-side checkpoints cannot reach
the moment after the real server committed and before its answer arrived; a kill from here can.
It can also say yes for the server (`Lie`): the call answered with the server's success shape,
never forwarded, as a service that answers 200 and does not carry the change out.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "host"}


@dataclass
class Kill:
    method: str  # the call's name: an XRPC method (com.atproto.repo.putRecord), or matrix_call's ("PUT send")
    when: str  # "before": the server never sees it; "after": it committed, no answer comes
    pid: int = 0
    nth: int = 1  # the nth such call is the one
    landed: str = ""  # filled in when the kill is done: what the server had done by then


@dataclass
class Lie:
    method: str  # the call's name, as for Kill
    body: dict[str, object]  # the answer the server would give had it done it
    status: int = 200
    told: int = 0  # how many calls it answered


def xrpc_method(command: str, path: str) -> str:
    return path.split("?", 1)[0].removeprefix("/xrpc/")


def matrix_call(command: str, path: str) -> str:
    """A Client-Server API call by its method and the path's verb: "PUT send" for
    /_matrix/client/v3/rooms/{roomId}/send/{type}/{txnId}, "PUT redact", "GET event", "GET messages";
    a call outside a room by its last path segment ("GET whoami")."""
    parts = path.split("?", 1)[0].split("/")
    if "rooms" in parts and len(parts) > parts.index("rooms") + 2:
        return f"{command} {parts[parts.index('rooms') + 2]}"
    return f"{command} {parts[-1]}"


class RecordingProxy:
    def __init__(self, upstream: str, name: Callable[[str, str], str] = xrpc_method) -> None:
        self.upstream = upstream.rstrip("/")
        self.name = name
        self.calls: list[tuple[str, int]] = []  # (XRPC method, status answered)
        self.kill: Kill | None = None
        self.lie: Lie | None = None
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer._forward(self)

            do_POST = do_PUT = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def count(self, method: str, status: int | None = None) -> int:
        with self._lock:
            return sum(1 for m, s in self.calls if m == method and (status is None or s == status))

    def _armed(self, method: str, when: str) -> Kill | None:
        with self._lock:
            kill = self.kill
            if kill is not None and kill.method == method and kill.when == when and not kill.landed:
                kill.nth -= 1
                if kill.nth == 0:
                    return kill
        return None

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        method = self.name(handler.command, handler.path)
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        kill = self._armed(method, "before")
        if kill is not None:
            kill.landed = "before the server received the request"
            os.kill(kill.pid, signal.SIGKILL)
            handler.close_connection = True
            return
        lie = self.lie
        if lie is not None and lie.method == method:
            self._tell(handler, method, lie)
            return
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        answer = httpx.request(handler.command, self.upstream + handler.path, headers=headers, content=body, timeout=30)
        with self._lock:
            self.calls.append((method, answer.status_code))
        kill = self._armed(method, "after")
        if kill is not None:
            kill.landed = f"after the server answered {answer.status_code}, before the client heard it"
            os.kill(kill.pid, signal.SIGKILL)
            handler.close_connection = True
            return
        handler.send_response(answer.status_code)
        for name, value in answer.headers.multi_items():
            if name.lower() not in HOP_BY_HOP:
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(answer.content)))
        handler.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            handler.wfile.write(answer.content)

    def _tell(self, handler: BaseHTTPRequestHandler, method: str, lie: Lie) -> None:
        content = json.dumps(lie.body).encode("utf-8")
        with self._lock:
            self.calls.append((method, lie.status))
            lie.told += 1
        handler.send_response(lie.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            handler.wfile.write(content)
