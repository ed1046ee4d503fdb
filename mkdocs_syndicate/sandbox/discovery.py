"""Finding a sandbox already up: the foreground `mkdocs-syndicate sandbox` serving a state folder
(its advert file), and whether anything listens at an address."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit


def running_sandbox(state_dir: Path) -> str | None:
    """The URL of a foreground sandbox serving `state_dir`, if one is up."""
    import httpx

    try:
        advert = json.loads((Path(state_dir) / "server.json").read_text(encoding="utf-8"))
        os.kill(int(advert["pid"]), 0)
        url = str(advert["url"])
        answer = httpx.get(f"{url}/_sandbox/received", timeout=2)
        if answer.status_code == 200 and isinstance(answer.json(), dict):
            return url
    except (OSError, ValueError, KeyError, TypeError, httpx.HTTPError):
        pass
    return None


def answering(base: str) -> bool:
    """Whether something listens at base (a loopback address: connecting is immediate)."""
    address = urlsplit(base)
    try:
        with socket.create_connection((address.hostname or "127.0.0.1", address.port or 80), timeout=2):
            return True
    except OSError:
        return False
