"""A run of the plugin's code path (tests/crash_child.py) against a real server, for the
realserver tier's kills: a spec of three posts on a site of their own, and the child process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from profiles import PROFILE

SETTLE = 10.0  # at least twice the timeout, as the settings require


def child_spec(folder: Path, site_url: str, channel_id: str, channel: dict[str, Any]) -> Path:
    """Three posts of a site of their own on one channel, for tests/crash_child.py."""
    spec = {
        "ledger": str(folder / "ledger.yml"),
        "site_url": site_url,
        "channels": {channel_id: {**channel, "timeout": 5, "settle": SETTLE}},
        "posts": [
            {
                "key": f"blog/{n}/",
                "url": f"{site_url}blog/{n}/",
                "title": f"Killed {n}",
                "date": f"2026-11-2{n}T00:00:00+00:00",
                "description": f"About {n}.",
            }
            for n in (1, 2, 3)
        ],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(json.dumps(spec))
    return folder / "spec.json"


def start_child(spec: Path, **env: str) -> Any:
    """tests/crash_child.py in a process of its own, forked from the crash tests' fork server
    (the imports already done), killed with a real SIGKILL."""
    from forkserver import ForkedChild

    return ForkedChild(spec, {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")} | env)


def send_kills(call: str) -> dict[str, tuple[str, str, int]]:
    """The five places a run announcing three posts is killed during the second, by name: (how,
    where: a client checkpoint or the proxy around the server's `call`, how many of the three posts
    the server holds once the kill has landed)."""
    return {
        "before the call (in_flight written)": ("checkpoint", "after_in_flight_write:2", 1),
        "the request never reached the server": ("proxy-before", call, 1),
        "the server committed, no answer came": ("proxy-after", call, 2),
        "the answer came, nothing written yet": ("checkpoint", "after_response:2", 2),
        "before done is written": ("checkpoint", "before_done_write:2", 2),
    }


# Kills after which the real server and the ledger are left as after another kill of the list, and
# the rerun asks the server the same: a request lost on its way to the server (the proxy kills
# before forwarding) is a kill before the call; a kill after the answer came but before it was
# written is the answer lost after the commit. Against the real server the tier runs one of each
# (the time goes to the server's work); the emulators' crash matrix kills at every checkpoint.
SAME_FOR_THE_SERVER = ("proxy-before", "checkpoint after_response:", "checkpoint before_done_write:")


def distinct(kills: dict[str, tuple[Any, ...]]) -> list[str]:
    """The kills of `kills` (name: (how, where, ...)) that leave the real server in a state of
    their own: those SAME_FOR_THE_SERVER names each have a twin among them."""
    return [name for name, (how, at, *_) in kills.items() if not f"{how} {at}".startswith(SAME_FOR_THE_SERVER)]


def chosen(kills: dict[str, tuple[Any, ...]]) -> list[str]:
    """The kills a run of the tier makes: in the dev profile (README command 2) one of each state
    the server can be left in (`distinct`); in the ci profile (`.ci/run`) every one, so that the
    twins are also proved against the real server and not only by the reasoning above."""
    return list(kills) if PROFILE == "ci" else distinct(kills)


def public_pages(monkeypatch: Any) -> Any:
    """The sites' public pages, asked as the HTTP proxy (a server on loopback is not proxied): a
    page of a post the test removed answers 404, the proof a removal needs. A fixture's body."""
    from crashlab import PublicSite

    site = PublicSite(set())
    for name, value in site.env.items():
        monkeypatch.setenv(name, value)
    yield site
    site.close()
