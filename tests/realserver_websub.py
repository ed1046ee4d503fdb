"""Flask-WebSub's hub (the Python WebSub hub on PyPI) as a test fixture: run by
tests/realserver/websub_hub.py from the venv tests/realserver/install put in its cache folder, on
127.0.0.1 only, its subscriptions in SQLite in a temporary folder; stopped with SIGTERM at the end.
Beside it, the two other parties a hub talks to, in this process: the site (its built folder
served with the `Link` header Flask-WebSub requires of a topic, rel="hub" and rel="self",
flask_websub/hub/tasks.py) and a subscriber that confirms its intent (echoes `hub.challenge`) and
keeps what the hub delivers.

Where the software is missing, the tier is skipped saying why, or fails in CI and under `.ci/run`
unless the install skipped it for want of PyPI (tests/realserver_pds.py's rule)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from realserver_pds import cached_install, unavailable
from realserver_synapse import free_port, stop

HERE = Path(__file__).parent / "realserver"
STARTED_WITHIN = 60.0  # seconds: Flask and Celery imported on a loaded machine


def install_dir() -> Path:
    """Where tests/realserver/install puts Flask-WebSub (the same rule as that script)."""
    return cached_install("SYNDICATE_WEBSUB_DIR", "websub", HERE / "websub-requirements.txt")


@dataclass(frozen=True)
class Hub:
    url: str  # http://127.0.0.1:<port>/hub
    log: Path


def start_hub(folder: Path) -> Iterator[Hub]:
    python = install_dir() / "venv" / "bin" / "python"
    if not (install_dir() / ".installed").exists() or not python.exists():
        unavailable("websub", f"Flask-WebSub is not installed in {install_dir()}")
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = folder / "hub.log"
    output = log.open("w")
    process = subprocess.Popen(
        [str(python), str(HERE / "websub_hub.py"), str(port), str(folder / "hub.sqlite3")],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    hub = Hub(f"http://127.0.0.1:{port}/hub", log)
    try:
        deadline = time.monotonic() + STARTED_WITHIN
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the hub exited {process.returncode}: {log.read_text()[-3000:]}")
            try:
                if httpx.post(hub.url, data={"hub.mode": "none"}, timeout=5).status_code == 400:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the hub did not answer within {STARTED_WITHIN:.0f} s: {log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield hub
    finally:
        stop(process)
        output.close()


@dataclass
class Party:
    """A site's built folder served as it is deployed (every answer naming the hub and itself in
    its `Link` header), and a subscriber's callback, on one loopback server: a GET with
    `hub.challenge` is echoed (intent confirmed), a POST kept as a delivery."""

    site_dir: Path
    hub: str
    url: str = ""
    deliveries: list[bytes] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)  # the topics whose subscription it confirmed

    @property
    def callback(self) -> str:
        return f"{self.url}callback"

    def subscribe(self, topic: str) -> None:
        form = {"hub.mode": "subscribe", "hub.callback": self.callback, "hub.topic": topic}
        answer = httpx.post(self.hub, data=form, timeout=30)
        assert answer.status_code == 202, answer.text
        deadline = time.monotonic() + 30
        while topic not in self.confirmed:  # Flask-WebSub verifies intent before it answers; kept bounded
            assert time.monotonic() < deadline, "the hub never confirmed the subscription"
            time.sleep(0.05)


def serve_party(site_dir: Path, hub: str) -> Iterator[Party]:
    party = Party(site_dir, hub)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/callback":
                query = parse_qs(parts.query)
                party.confirmed.append(query["hub.topic"][0])
                self._answer(200, query["hub.challenge"][0].encode(), {})
                return
            target = (site_dir / parts.path.lstrip("/")).resolve()
            if site_dir.resolve() not in target.parents or not target.is_file():
                self._answer(404, b"Not Found", {})
                return
            link = f'<{hub}>; rel="hub", <{party.url}{parts.path.lstrip("/")}>; rel="self"'
            self._answer(200, target.read_bytes(), {"Content-Type": "application/rss+xml", "Link": link})

        def do_POST(self) -> None:
            party.deliveries.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self._answer(204, b"", {})

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Handler) as server:
        party.url = f"http://127.0.0.1:{server.server_address[1]}/"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield party
        finally:
            server.shutdown()
