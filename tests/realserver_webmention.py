"""django-webmention (a Webmention receiver on PyPI, a pluggable Django app) as a test fixture:
run from the venv that tests/realserver/install put in its cache folder, on 127.0.0.1 only, with
SQLite in a temporary folder, under Django's own development server; stopped with SIGTERM at the
end. The project around it is the smallest one its README asks for: the app installed, its
middleware (which names the endpoint in a `Link` header on every answer), its URLs under
/webmention/, and pages under /notes/ that can be mentioned (its view accepts a target only when
the target's path resolves to a view of the site).

What it received is read from its own table (`webmention_webmentionresponse`): the source, the
target (`response_to`), and `current`, which it clears when a source no longer mentions the
target or cannot be fetched (a removed post).

Where the software is missing, the tier is skipped saying why, or fails in CI and under `.ci/run`
unless the install skipped it for want of PyPI (tests/realserver_pds.py's rule)."""

from __future__ import annotations

import functools
import http.server
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realserver_pds import cached_install, unavailable
from realserver_synapse import free_port, stop

HERE = Path(__file__).parent / "realserver"
STARTED_WITHIN = 90.0  # seconds: migrations and the server's start on a loaded machine

SETTINGS = """
SECRET_KEY = "a test site's key, not a secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "webmention"]
MIDDLEWARE = ["webmention.middleware.webmention_middleware"]
ROOT_URLCONF = "wmsite.urls"
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {database!r}}}}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
"""

URLS = """
from django.http import HttpResponse
from django.urls import include, path, re_path


def note(request, rest):
    return HttpResponse("<!doctype html><title>a note</title><p>A note that can be mentioned.</p>")


urlpatterns = [path("webmention/", include("webmention.urls")), re_path(r"^notes/(?P<rest>.*)$", note)]
"""


@dataclass(frozen=True)
class Receiver:
    url: str  # http://127.0.0.1:<port>
    database: Path
    log: Path

    def note(self, name: str) -> str:
        return f"{self.url}/notes/{name}"

    def mentions(self) -> list[tuple[str, str, bool]]:
        """(source, target, current) of every Webmention it keeps, oldest first."""
        with sqlite3.connect(self.database) as db:
            rows = db.execute(
                "SELECT source, response_to, current FROM webmention_webmentionresponse ORDER BY id"
            ).fetchall()
        return [(str(s), str(t), bool(c)) for s, t, c in rows]


def install_dir() -> Path:
    """Where tests/realserver/install puts django-webmention (the same rule as that script)."""
    return cached_install("SYNDICATE_WEBMENTION_DIR", "webmention", HERE / "webmention-requirements.txt")


def start_receiver(folder: Path) -> Iterator[Receiver]:
    python = install_dir() / "venv" / "bin" / "python"
    if not (install_dir() / ".installed").exists() or not python.exists():
        unavailable("webmention", f"django-webmention is not installed in {install_dir()}")
    project = folder / "wmsite"
    project.mkdir(parents=True, exist_ok=True)
    (project / "__init__.py").write_text("")
    database = folder / "webmention.sqlite3"
    (project / "settings.py").write_text(SETTINGS.format(database=str(database)))
    (project / "urls.py").write_text(URLS)
    env = {"PYTHONPATH": str(folder), "DJANGO_SETTINGS_MODULE": "wmsite.settings", "PATH": "/usr/bin:/bin"}
    log = folder / "receiver.log"
    migrated = subprocess.run(
        [str(python), "-m", "django", "migrate", "--noinput"], cwd=folder, env=env, capture_output=True, text=True
    )
    if migrated.returncode != 0:
        raise RuntimeError(f"django-webmention's migrations failed: {migrated.stderr[-3000:]}")
    port = free_port()
    output = log.open("w")
    process = subprocess.Popen(
        [str(python), "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    receiver = Receiver(f"http://127.0.0.1:{port}", database, log)
    try:
        deadline = time.monotonic() + STARTED_WITHIN
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"django-webmention exited {process.returncode}: {log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(receiver.note("ready"), timeout=5) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"django-webmention did not answer within {STARTED_WITHIN:.0f} s")
            time.sleep(0.2)
        yield receiver
    finally:
        stop(process)
        output.close()


class Pages:
    """A site's public pages on 127.0.0.1, as a receiver fetches a source: `pages[path] =
    (status, html)`; any other path answers 404."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str]] = {"/": (200, "<p>Home</p>")}  # a removal's witness asks it
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_PageHandler, self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def __init__(self, site: Pages, *args: Any) -> None:
        self.site = site
        super().__init__(*args)

    def do_GET(self) -> None:
        status, html = self.site.pages.get(self.path, (404, "<p>Not Found</p>"))
        body = html.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:  # quiet
        pass
