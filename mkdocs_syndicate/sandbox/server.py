"""One loopback HTTP server hosting every channel emulator under its own path prefix.

What each emulator received is kept in `<state_dir>/state.json` (written atomically after every
change), so it survives restarts and a second run can be checked against the first. A control
API injects faults the way real services misbehave:

    POST /_sandbox/faults   {"channel": "mastodon", "action": "status", "status": 429, ...}
    DELETE /_sandbox/faults
    GET  /_sandbox/state
    GET  /_sandbox/received   what each channel received, duplicates marked (and `GET /`: as a page)
    GET  /_sandbox/media/<channel>/<name>   an image an emulator received (sandbox/media_files.py)

Fault actions: `status` (answer with that status instead of processing), `drop_before` /
`drop_after` (close the connection without an answer, before or after committing), `kill_before`
/ `kill_after` (SIGKILL the client process `pid`, before or after committing), `delay_after`
(commit, then wait `seconds` before answering: a client read timeout), `status_after` (commit,
then answer `status` and `body` instead: "sent, but said no"), `undone_after` (answer as the
service would, then undo its work: "said yes, did not"), `by_hand_before` (the service's user does
`hand` to what the request names, then the service handles it). Each fault applies to `times` requests
(default 1) whose "METHOD path" contains `match` (default: any request that creates something),
after the first `skip` of them (default 0: a thread's second part).

Quirks are standing properties of a server, the ways real deployments differ from their docs:

    POST /_sandbox/quirks   {"channel": "mastodon", "commit_delay": 8, "ignore_idempotency_key": true}

`commit_delay` (every emulator that creates posts): a create is accepted at once but becomes
visible (to listings, uniqueness checks, idempotency keys) only `commit_delay` seconds later on the
server's clock, and the answer is held until then or until the client gives up: a slow database.
Mastodon also has `ignore_idempotency_key` (Pixelfed and other servers speaking its API) and
`replay_500` (a replayed key answered with 500, mastodon/mastodon#40399). `clock_offset` (seconds,
negative is behind): the server stamps what it creates with its own clock, hours off the client's.
Mastodon's `DELETE /api/v1/statuses/:id` removes a status as its author would; its key, still in
Redis, then answers a replay with 404.

Faults and quirks are sandbox/faults.py's; finding a sandbox serving a folder, sandbox/discovery.py's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text
from mkdocs_syndicate.localdirs import private_dir
from mkdocs_syndicate.sandbox import DEFAULT_PUBLIC_BASE, media_files, websocket
from mkdocs_syndicate.sandbox import faults as faulting
from mkdocs_syndicate.sandbox.dashboard import page, post_page, received
from mkdocs_syndicate.sandbox.discovery import answering


class SandboxServer:
    def __init__(
        self,
        state_dir: Path,
        emulators: Iterable[type[Emulator]],
        *,
        port: int = 0,
        public_base: str | None = None,  # DEFAULT_PUBLIC_BASE
        key_file_root: Path | None = None,
        idempotency_ttl: float = 3600.0,
        latency: Callable[[], float] | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.public_base = (public_base or DEFAULT_PUBLIC_BASE).rstrip("/")
        self.key_file_root = key_file_root
        self.idempotency_ttl = idempotency_ttl
        self.latency = latency
        self.now: Callable[[], float] = time.time  # tests may share their virtual clock
        self.lock = threading.RLock()
        self.emulators: dict[str, Emulator] = {e.name: e for e in (cls(self) for cls in emulators)}
        self.routes = {prefix: e.name for e in self.emulators.values() for prefix in (e.name, *e.also_at)}
        self.channel_names: dict[str, list[str]] = {}  # emulator -> the site's channel ids for it
        self.on_request: Callable[[str], None] | None = None  # a line per request (foreground)
        self.faults: list[dict[str, Any]] = []
        self.quirks: dict[str, dict[str, Any]] = {}
        self.state = self._load()
        self._busy = threading.Condition()
        self._active = 0  # requests being handled (a killed client's may still be)
        self._later = 0  # work a service does after answering (IndexNow's key fetch)
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> SandboxServer:
        self._httpd = _QuietServer(("127.0.0.1", self._port), _handler_for(self))
        self._httpd.owner = self
        httpd = self._httpd
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.05), name="syndicate-sandbox", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Foreground (`mkdocs-syndicate sandbox`): builds with `sandbox: true` and the same state
        folder use this server instead of starting their own, so the page shows their posts."""
        self._httpd = _QuietServer(("127.0.0.1", self._port), _handler_for(self))
        private_dir(self.state_dir)
        atomic_write_text(self.advert_file, json.dumps({"url": self.url, "pid": os.getpid()}), checkpoint=False)
        try:
            self._httpd.serve_forever()
        finally:
            self.advert_file.unlink(missing_ok=True)
            self._httpd.server_close()
            self._httpd = None

    @property
    def advert_file(self) -> Path:
        return self.state_dir / "server.json"

    def stop(self) -> None:
        # What the service does after answering is part of what it was sent: a build that stops
        # its sandbox right after the last ping still leaves the key checked, however busy the
        # machine (bounded: a stuck fetch must not hang the build).
        with self._busy:
            self._busy.wait_for(lambda: self._later == 0, timeout=15)
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def listening(self) -> bool:
        return self._httpd is not None

    def own_links_if_taken(self) -> str | None:
        """A run's own sandbox listens on any free port and hands out links at the default
        address (8787), where `mkdocs-syndicate sandbox` serves them after the run. When something
        already answers there (another site's sandbox), such links would reach it, not this site's
        posts: they use the address this server bound instead. Returns what to tell the user then."""
        if self.public_base == self.url or not answering(self.public_base):
            return None
        taken, self.public_base = self.public_base, self.url
        port = self.url.rsplit(":", 1)[1]
        return (
            f"sandbox: {taken} is taken (another site's `mkdocs-syndicate sandbox`?), so this run's sandbox "
            f"and its links use the port it bound: {self.url}; `mkdocs-syndicate sandbox --port {port}` "
            "serves them after the run"
        )

    def public_page(self, path: str) -> Response | None:
        """The public page of a received post whose link has this path (None: not one)."""
        prefix, _, rest = path.lstrip("/").partition("/")
        emulator_name = self.routes.get(prefix)
        if emulator_name is None or not ("/" + rest).startswith(self.emulators[emulator_name].public_pages):
            return None  # an API path: only the few public ones are looked up
        seen = received(self.emulators.values(), self.snapshot(), self.public_base)
        for emulator, items in seen.items():
            for item in items:
                if item["link"] and urlsplit(item["link"]).path == path:
                    return Response(200, post_page(emulator, item), {"Content-Type": "text/html; charset=utf-8"})
        return None

    def site_file(self, path: str) -> Response:
        """The built site as if deployed (`GET /_site/<path>`): where the emulated engines fetch
        the IndexNow key file when the site's own host is not on this machine."""
        root = self.key_file_root
        if root is None:
            return Response(404, b"Not Found")
        target = (root / path.lstrip("/")).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            return Response(404, b"Not Found")
        return Response(200, target.read_bytes(), {"Content-Type": "text/plain; charset=utf-8"})

    # ---------------------------------------------------------------- state

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    def _load(self) -> dict[str, Any]:
        state: dict[str, Any] = {name: e.initial_state() for name, e in self.emulators.items()}
        state["requests"] = []
        if self.state_file.exists():
            saved = json.loads(self.state_file.read_text(encoding="utf-8"))
            state.update(saved)
        return state

    def save(self) -> None:
        private_dir(self.state_dir)
        # Whole for other processes (the rename); not fsynced: it need not outlive the machine.
        atomic_write_text(self.state_file, json.dumps(self.state, ensure_ascii=False), checkpoint=False, durable=False)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            copied: dict[str, Any] = json.loads(json.dumps(self.state))
            return copied

    def add_fault(self, fault: dict[str, Any]) -> None:
        if fault.get("channel") not in self.emulators:
            raise ValueError(f"unknown channel {fault.get('channel')!r}")
        faulting.checked_fault(self.emulators[fault["channel"]], fault)
        with self.lock:
            self.faults.append({"times": 1, **fault})

    def tell(self, emulator: str, request: Request, response: Response | None) -> None:
        if self.on_request is None:
            return
        ids = ", ".join(self.channel_names.get(emulator, [])) or emulator
        answer = "no answer (fault)" if response is None else str(response.status)
        stamp = dt.datetime.now().strftime("%H:%M:%S")
        self.on_request(f"{stamp} {ids}: {request.method} {request.path} → {answer}")

    def wait_idle(self, timeout: float) -> None:
        """Until no connection is open: whatever a (killed) client sent has been handled."""
        with self._busy:
            if not self._busy.wait_for(lambda: self._active == 0, timeout):
                raise TimeoutError(f"the emulator is still handling {self._active} request(s)")

    def _enter(self) -> None:
        with self._busy:
            self._active += 1

    def _leave(self) -> None:
        with self._busy:
            self._active -= 1
            self._busy.notify_all()

    def add_reply(self, channel: str, parent: str, *, author: str, text: str, **details: Any) -> dict[str, Any]:
        """Someone else's public reply to a received post or to a reply (the comments script
        reads them); `details` as the emulator's add_reply takes them (a content warning,
        labels, hidden, its time)."""
        emulator = self.emulators.get(channel)
        if emulator is None or not hasattr(emulator, "add_reply"):
            raise ValueError(f"channel {channel!r} has no public replies here")
        import inspect

        known = set(inspect.signature(emulator.add_reply).parameters) - {"parent", "parent_id", "author", "text"}
        unknown = sorted(set(details) - known)
        if unknown:
            raise ValueError(f"a {channel} reply has no {unknown[0]!r} here (it has: {', '.join(sorted(known))})")
        with self.lock:
            reply: dict[str, Any] = emulator.add_reply(parent, author, text, **details)
            self.save()
        return reply

    def react(self, channel: str, post: str, *, likes: int = 0, reposts: int = 0) -> None:
        """Readers' likes and reposts (Mastodon: favourites and boosts) of a post or reply."""
        from mkdocs_syndicate.sandbox.conversations import react

        emulator = self.emulators.get(channel)
        if emulator is None or channel not in ("mastodon", "bluesky"):
            raise ValueError(f"channel {channel!r} shows no likes or reposts here")
        with self.lock:
            react(emulator.state, post, int(likes), int(reposts))
            self.save()

    def control_call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """A control API call without the HTTP (`mkdocs-syndicate sandbox reply` when no sandbox
        runs: the state folder changes, and the next sandbox serves it)."""
        answer = self.control(Request("POST", f"/{path}", {}, {}, json.dumps(body).encode(), self.public_base))
        if answer.status >= 400:
            raise ValueError(str((answer.body or {}).get("error")))
        return answer.body if isinstance(answer.body, dict) else {}

    def set_quirks(self, channel: str, **quirks: Any) -> None:
        if channel not in self.emulators:
            raise ValueError(f"unknown channel {channel!r}")
        unknown = set(quirks) - faulting.QUIRKS
        if unknown:
            raise ValueError(f"unknown quirk {sorted(unknown)[0]!r} (known: {', '.join(sorted(faulting.QUIRKS))})")
        with self.lock:
            self.quirks.setdefault(channel, {}).update(quirks)

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def requests(self, channel: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(r) for r in self.state["requests"] if channel is None or r["channel"] == channel]

    # ---------------------------------------------------------------- dispatch

    def dispatch(self, channel: str, request: Request) -> Response | None:
        """None means: close the connection without an answer."""
        emulator = self.emulators[channel]
        if self.latency is not None:
            time.sleep(self.latency())
        line = f"{request.method} {request.path}"
        with self.lock:
            fault = faulting.take_fault(self.faults, channel, line, emulator.creating) or {}
            self.state["requests"].append(
                {"channel": channel, "method": request.method, "path": request.path, "at": self.now()}
            )
        action = fault.get("action")
        if action in faulting.KEPT_FROM_SERVICE:  # the request never reaches the service
            with self.lock:
                self.save()
            return faulting.fault_before(emulator, action, {**fault, "request": line})
        with self.lock:
            response = faulting.served(emulator, request, fault)
            self.save()
        return faulting.fault_after(action, fault, response) if action is not None else response

    def control(self, request: Request) -> Response:
        """/_sandbox/…: how tests and the dashboard steer the sandbox."""
        if request.method == "GET" and request.path.startswith("/media/"):
            return media_files.served(self.state_dir, request.path.removeprefix("/media/"))
        route = _CONTROL.get((request.method, request.path))
        if route is None:
            return Response(404, {"error": "Record not found"})
        try:
            return route(self, request)
        except (ValueError, AttributeError, TypeError) as exc:  # a malformed fault or quirk
            return Response(400, {"error": str(exc)})

    def _post_fault(self, request: Request) -> Response:
        self.add_fault(request.json())
        return Response(204)

    def _post_quirks(self, request: Request) -> Response:
        body = request.json()
        self.set_quirks(str(body.pop("channel", "")), **body)
        return Response(204)

    def _post_reply(self, request: Request) -> Response:
        body = dict(request.json())
        channel, parent = str(body.pop("channel", "")), str(body.pop("parent", ""))
        author, text = str(body.pop("author", "reader")), str(body.pop("text", ""))
        return Response(200, self.add_reply(channel, parent, author=author, text=text, **body))

    def _post_reactions(self, request: Request) -> Response:
        body = dict(request.json())
        self.react(
            str(body.get("channel", "")),
            str(body.get("post", "")),
            likes=body.get("likes", 0),
            reposts=body.get("reposts", 0),
        )
        return Response(200, {})

    def _delete_faults(self, request: Request) -> Response:
        self.clear_faults()
        return Response(204)


_CONTROL: dict[tuple[str, str], Callable[[SandboxServer, Request], Response]] = {
    ("POST", "/faults"): SandboxServer._post_fault,
    ("POST", "/quirks"): SandboxServer._post_quirks,
    ("DELETE", "/faults"): SandboxServer._delete_faults,
    ("POST", "/replies"): SandboxServer._post_reply,
    ("POST", "/reactions"): SandboxServer._post_reactions,
    ("GET", "/state"): lambda server, request: Response(200, server.snapshot()),
    ("GET", "/received"): lambda server, request: Response(
        200, received(server.emulators.values(), server.snapshot(), server.public_base)
    ),
}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: SandboxServer | None = None

    def process_request(self, request: Any, client_address: Any) -> None:
        # Counted from the accepted connection, not the parsed request: a killed client's bytes
        # may still be on their way into a handler.
        if self.owner is not None:
            self.owner._enter()
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            if self.owner is not None:
                self.owner._leave()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client killed mid-request resets the connection: expected here, not worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _handler_for(server: SandboxServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "mkdocs-syndicate-sandbox"
        # Headers and body leave as two writes: with Nagle on, the body waits for the client's
        # delayed ACK (40 ms on Linux), a stall no real service adds to every answer.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and builds read stderr
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            prefix, _, rest = parts.path.lstrip("/").partition("/")
            if websocket.wants_websocket(server, prefix, self.headers):  # the connection is the WebSocket's
                return websocket.serve(self, server.emulators[server.routes[prefix]], prefix)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            host = self.headers.get("Host", "127.0.0.1")
            request = Request(
                self.command,
                "/" + rest,
                parse_qs(parts.query, keep_blank_values=True),
                {k.lower(): v for k, v in self.headers.items()},
                body,
                f"http://{host}/{prefix}",
            )
            if prefix == "_sandbox":
                response: Response | None = server.control(request)
            elif prefix == "_site" and request.method == "GET":
                response = server.site_file(request.path)
            elif prefix == "" and request.method == "GET":
                seen = received(server.emulators.values(), server.snapshot(), server.public_base)
                response = Response(200, page(seen, server.channel_names), {"Content-Type": "text/html; charset=utf-8"})
            elif request.method == "GET" and (public := server.public_page(parts.path)) is not None:
                response = public
            elif prefix in server.routes:
                response = self._dispatch(prefix, request)
            else:
                response = Response(404, {"error": f"no emulator at /{prefix}"})
            response = self._held(response)  # None: the client gave up while the server was still committing
            if response is None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(2)
                return
            if response.after is not None:  # counted before the client can see the answer
                with server._busy:
                    server._later += 1
            try:
                payload, content_type = response.encoded()
                self.send_response(response.status)
                headers = {"Content-Type": content_type, **response.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(b"" if request.method == "HEAD" else payload)  # HEAD: the headers alone
                self.wfile.flush()
            finally:  # the service does it whether or not the client read the answer
                if response.after is not None:
                    try:
                        response.after()
                    finally:
                        with server._busy:
                            server._later -= 1
                            server._busy.notify_all()

        def _dispatch(self, prefix: str, request: Request) -> Response | None:
            request.prefix = prefix
            response = server.dispatch(server.routes[prefix], request)
            server.tell(server.routes[prefix], request, response)
            return response

        def _held(self, response: Response | None) -> Response | None:
            """The answer once its commit is done; None when the client gave up meanwhile."""
            held = response is None or response.hold_until is None or self._hold(response.hold_until)
            return response if held else None

        def _hold(self, until: float) -> bool:
            """Keep the answer until the server's clock reaches `until` (True), or until the client
            closes the connection or a minute passes (False)."""
            deadline = time.monotonic() + 60
            while server.now() < until:
                if time.monotonic() > deadline:
                    return False
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable:
                    try:
                        if not self.connection.recv(1, socket.MSG_PEEK):
                            return False  # closed by the client
                    except OSError:
                        return False
            return True

        do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _serve

    return Handler
