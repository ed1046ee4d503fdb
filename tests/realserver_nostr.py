"""nostr-relay (the Python Nostr relay on PyPI) as a test fixture: run from the venv that
tests/realserver/install put in its cache folder, on 127.0.0.1 only, with SQLite in a temporary
folder; stopped with SIGTERM at the end. Its configuration is nostr-relay's own file format
(nostr_relay/config.yaml): the validators that check a signature and an event's time, content of
up to 100,000 characters (a long-form article; the default 4,096 is for notes), no NIP-05
verification and no authentication.

Where the software is missing, the tier is skipped saying why, or fails in CI and under `.ci/run`
unless the install skipped it for want of PyPI (tests/realserver_pds.py's rule)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from realserver_pds import cached_install, unavailable
from realserver_synapse import free_port, stop

HERE = Path(__file__).parent / "realserver"
STARTED_WITHIN = 90.0  # seconds: its database migrations on a loaded machine


@dataclass(frozen=True)
class Relay:
    url: str  # ws://127.0.0.1:<port>
    log: Path

    def query(self, *filters: dict) -> list[dict]:
        """The stored events matching `filters`, read as any client reads them (REQ … EOSE)."""
        return asyncio.run(_query(self.url, list(filters)))


async def _query(url: str, filters: list[dict]) -> list[dict]:
    from websockets.asyncio.client import connect

    async with connect(url, compression=None) as connection:
        await connection.send(json.dumps(["REQ", "test", *filters]))
        found = []
        while True:
            message = json.loads(await asyncio.wait_for(connection.recv(), 30))
            if message[0] == "EVENT":
                found.append(message[2])
            elif message[0] in ("EOSE", "CLOSED"):
                return found


def install_dir() -> Path:
    """Where tests/realserver/install puts nostr-relay (the same rule as that script)."""
    return cached_install("SYNDICATE_NOSTR_DIR", "nostr", HERE / "nostr-requirements.txt")


def config(folder: Path, port: int) -> str:
    return f"""
DEBUG: false
relay_name: syndicate test relay
storage:
  sqlalchemy.url: sqlite+aiosqlite:///{folder}/nostr.sqlite3
  validators:
    - nostr_relay.validators.is_signed
    - nostr_relay.validators.is_recent
verification:
  nip05_verification: disabled
gunicorn:
  bind: 127.0.0.1:{port}
  workers: 1
  loglevel: warning
  reload: false
authentication:
  enabled: false
max_event_size: 100000
"""


def start_relay(folder: Path) -> Iterator[Relay]:
    python = install_dir() / "venv" / "bin" / "python"
    if not (install_dir() / ".installed").exists() or not python.exists():
        unavailable("nostr", f"nostr-relay is not installed in {install_dir()}")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (folder / "config.yaml").write_text(config(folder, port))
    log = folder / "relay.log"
    output = log.open("w")
    process = subprocess.Popen(
        [str(install_dir() / "venv" / "bin" / "nostr-relay"), "-c", str(folder / "config.yaml"), "serve"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    relay = Relay(f"ws://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + STARTED_WITHIN
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"nostr-relay exited {process.returncode}: {log.read_text()[-3000:]}")
            try:
                relay.query({"limit": 1})
                break
            except (TimeoutError, OSError, ValueError):
                pass
            except Exception as exc:  # websockets' handshake errors while gunicorn starts its worker
                if "websockets" not in type(exc).__module__:
                    raise
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"nostr-relay did not answer within {STARTED_WITHIN:.0f} s: {log.read_text()[-3000:]}"
                )
            time.sleep(0.2)
        yield relay
    finally:
        stop(process)
        output.close()


class KillingProxy:
    """A TCP proxy in front of the relay (WebSocket passes through it as bytes), which SIGKILLs a
    process as the relay's `nth` OK passes, before forwarding it: the relay stored the event
    (nostr-relay answers OK once its transaction is committed, nostr_relay/web.py), and the
    answer never reaches the client. The relay's frames are not masked (RFC 6455: only a
    client's are), and the client asks for no compression, so an OK is seen in the bytes."""

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream.removeprefix("ws://").rsplit(":", 1)
        self._server = socket.create_server(("127.0.0.1", 0))
        self._pid: int | None = None
        self._nth = 0
        self._seen = 0
        self._lock = threading.Lock()
        self.landed = ""

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.getsockname()[1]}"

    def arm(self, pid: int, nth: int) -> None:
        with self._lock:
            self._pid, self._nth, self._seen, self.landed = pid, nth, 0, ""

    def __enter__(self) -> KillingProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection((self._upstream[0], int(self._upstream[1])))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, from_relay: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_relay and self._kills(data):
                    break
                target.sendall(data)
        except OSError:
            pass
        for end in (source, target):  # the other direction's pump ends on the closed sockets too
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def _kills(self, data: bytes) -> bool:
        with self._lock:
            if self._pid is None or b'["OK"' not in data:
                return False
            self._seen += data.count(b'["OK"')
            if self._seen < self._nth:
                return False
            os.kill(self._pid, signal.SIGKILL)
            self.landed = f"after the relay's OK of EVENT {self._nth}: stored, the answer not delivered"
            self._pid = None
            return True
