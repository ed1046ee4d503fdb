"""What one emulated service is made of, for the emulators alone: the base class every emulator
extends (built in, or a channel plugin's: docs/channels.md), and the request and answer it handles.
The loopback server (sandbox/server.py) is handed its emulators; it routes, injects faults and
keeps their state.

It imports nothing of the package: an emulator is written from the service, never from the client,
and importing one loads no client code (tests/test_cheap_import.py). `mkdocs_syndicate.channel_api`
re-exports these names for a plugin that keeps its client and emulator in one module."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol
from urllib.parse import parse_qs

__all__ = ["Emulator", "Request", "Response", "first_url"]


class Host(Protocol):
    """What an emulator may use of the server that hosts it (sandbox/server.py's SandboxServer):
    named here, so that this module does not import the server that imports it."""

    state: dict[str, Any]  # every emulator's state, by name, guarded by `lock`
    now: Callable[[], float]  # the clock, shared with tests' virtual one
    public_base: str  # where the links it hands out point
    key_file_root: Path | None  # the built site, for IndexNow's key file
    state_dir: Path  # where state.json is, and the uploads the emulators keep (sandbox/media_files.py)
    idempotency_ttl: float
    quirks: dict[str, dict[str, Any]]
    emulators: dict[str, Emulator]

    @property
    def lock(self) -> AbstractContextManager[Any]: ...
    @property
    def url(self) -> str: ...
    @property
    def listening(self) -> bool: ...
    def save(self) -> None: ...


@dataclass
class Request:
    method: str
    path: str  # below the channel prefix, e.g. /api/v1/statuses
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes
    base: str  # scheme://host:port/prefix as the client reached it
    prefix: str = ""  # the first path segment it came in on (an emulator may have two)

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode("utf-8"), keep_blank_values=True)

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-serialisable, bytes or None
    headers: dict[str, str] = field(default_factory=dict)
    hold_until: float | None = None  # server time before which the answer is not sent (slow commit)
    after: Callable[[], None] | None = None  # work the service does once it has answered

    def encoded(self) -> tuple[bytes, str]:
        if self.body is None:
            return b"", "text/plain"
        if isinstance(self.body, bytes):
            return self.body, self.headers.get("Content-Type", "text/plain; charset=utf-8")
        return json.dumps(self.body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8"


_URL = re.compile(r"https?://[^\s<>\"]+")


def first_url(text: str) -> str:
    """The first link in a text: what a received post announces."""
    match = _URL.search(text or "")
    return match.group(0).rstrip(".,)") if match else ""


# What a service's user does by hand, by name: (the emulator, the request it is done before).
Hands = Mapping[str, Callable[[Any, Request], object]]


class Emulator:
    """Base class: one service. `state` is a JSON-able dict owned by the server's lock."""

    name: str = ""
    also_at: tuple[str, ...] = ()  # more path prefixes it answers on (a second host of the service)
    creating: tuple[str, ...] = ()  # "METHOD path" prefixes that create something (fault default)
    public_pages: tuple[str, ...] = ()  # path prefixes (after its own) of received posts' public pages
    # What the shared test suites need to hold a channel to its contract (docs/channels.md):
    # read_marker, a part of the path of the reads its client's verify makes; rate_limit_fault, the
    # fault that makes it answer 429 asking for 40 s; user_settings, required settings a user
    # supplies and the sandbox does not (Weibo's rip).
    read_marker: ClassVar[str] = ""
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "reset_in": 40}
    user_settings: ClassVar[Mapping[str, object]] = {}
    # What the service's user may do by hand (in its app or editor), by name: the fault
    # `by_hand_before` does it to what a request names, just before the service handles it.
    hands: ClassVar[Hands] = {}
    # cited_page: for a type that tells the pages a post links to (Webmention), a page of its
    # emulator's that the shared suites' posts link to, so that the type has something to send.
    cited_page: ClassVar[str] = ""

    def __init__(self, server: Host) -> None:
        self.server = server

    def initial_state(self) -> dict[str, Any]:
        return {}

    @property
    def state(self) -> dict[str, Any]:
        mine: dict[str, Any] = self.server.state[self.name]
        return mine

    def handle(self, request: Request) -> Response:
        raise NotImplementedError

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        """Its 429 for an injected fault (`fault["request"]`: the request's "METHOD path")."""
        return Response(429, {"error": "Too many requests"})

    duplicates_matter: bool = True  # a post received twice is a duplicate (not so for pings)

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        """What it received, for the dashboard and the shared test suites: {id, text, announces
        (the post URL it is about), at (epoch seconds), link (where it would be seen)} each, oldest
        first, and remote_id where the id a client records differs from `id`."""
        return []

    def configure_for_site(self, site_url: str) -> None:
        """Set up as a real account for this site would be (Weibo: the app's safe domain)."""

    @classmethod
    def client_options(cls, url: str, public_base: str) -> Mapping[str, object]:
        """The channel settings that point a client at this emulator, with its own credentials
        (a rehearsal never sends the real ones): `url` is where the server listens, `public_base`
        where the links it hands out point."""
        return {}

    # ---------------------------------------------------------------- quirks

    @property
    def quirks(self) -> dict[str, Any]:
        return self.server.quirks.setdefault(self.name, {})

    def commit_time(self) -> float:
        """When a create accepted now becomes visible (now, unless the database is slow)."""
        return self.server.now() + float(self.quirks.get("commit_delay", 0) or 0)

    def server_clock(self, epoch: float) -> float:
        """The time the service writes for a moment: its own clock, which may be off ours (quirk
        clock_offset, in seconds; negative is behind)."""
        return epoch + float(self.quirks.get("clock_offset", 0) or 0)

    def visible(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What a reader (or a uniqueness check) sees now: creates still being committed are not there."""
        now = self.server.now()
        return [item for item in items if item.get("visible_at", 0) <= now]
