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
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from realserver_pds import cached_install, unavailable

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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
    port = _free_port()
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
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()
