"""A site of three posts announced to every registered type's emulator (built in or a plugin),
run in a child process that can be SIGKILLed at a named durability checkpoint or by the emulator
itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from channel_specs import EVERY_TYPE, SPECS
from conftest import PLUGIN_PYTHONPATH
from sites import post, write_site

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import TYPES

# Each post cites the pages the types that tell cited pages (Webmention) know, so that they have work.
CITES = "".join(
    f"\nIt cites [a page]({page}).\n" for page in sorted({t.emulator_class().cited_page for t in TYPES.values()} - {""})
)
POSTS = {
    "one.md": post("One", "2026-11-20") + CITES,
    "two.md": post("Two", "2026-11-21") + CITES,
    "three.md": post("Three", "2026-11-22") + CITES,
}
KEYS = ["posts/one/", "posts/two/", "posts/three/"]
URLS = [f"https://example.com/{k}" for k in KEYS]


# Short timeouts and settle times: a rerun right after a kill reads, and waits the 2 s settle
# time in the run before a read may prove a post absent.
TIMING = {"timeout": 1, "settle": 2}


def make(folder: Path, sandbox) -> Path:
    channels = {channel_id: EVERY_TYPE[name].raw(sandbox) for channel_id, name in TYPE_OF.items()}
    config = write_site(folder, {"mode": "send", "channels": {k: {**v, **TIMING} for k, v in channels.items()}}, POSTS)
    sandbox.key_file_root = folder / "site"
    return config


def start(config: Path, **env: str) -> subprocess.Popen:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI"))},
        "NO_MKDOCS_2_WARNING": "1",
        "PYTHONPATH": PLUGIN_PYTHONPATH,  # the session's channel plugins (conftest.py)
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config)],
        cwd=config.parent,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(config: Path, **env: str) -> tuple[int, str]:
    process = start(config, **env)
    _, err = process.communicate(timeout=120)
    return process.returncode, err


# Every type in the registry (built in or a plugin), under the short ids the built-in ones have
# always had here: the at-most-once ones, which read before they resend, and the others (at least
# once, or batched: IndexNow's ping, a plugin's), which must deliver every post at least once.
SHORT_IDS = {"indexnow": "ping", "mastodon": "masto", "forem": "devto", "weibo": "weibo", "bluesky": "bsky"}
AT_MOST_ONCE = {SHORT_IDS.get(name, name): name for name in SPECS}
AT_LEAST_ONCE = {SHORT_IDS.get(name, name): name for name in EVERY_TYPE if name not in SPECS}
TYPE_OF = {**AT_LEAST_ONCE, **AT_MOST_ONCE}
CHANNELS = tuple(TYPE_OF)


def remote(state: dict, emulator: str) -> list[tuple[str, str]]:
    """(remote id as the ledger records it, the post URL it announces) of every post an
    at-most-once service holds, from its emulator's own account (`received`); a thread's later
    parts (replies to the account's own posts) are `thread_parts`."""
    return [(_id(item), item["announces"]) for item in _received(state, emulator) if not _reply_to(item)]


def thread_parts(state: dict, emulator: str) -> list[tuple[str, str]]:
    """(remote id, the id of the post it replies to) of every later part of a thread."""
    return [
        (_id(item), _reply_to(item))
        for item in _received(state, emulator)
        if _reply_to(item) and not item.get("deleted")  # a redacted Matrix part stays, as "deleted"
    ]


def delivered_urls(state: dict, emulator: str) -> list[str]:
    """Each post URL an at-least-once service received, once per time it received it: a batched
    type's emulator lists one item a request, its text the URLs it carried one a line
    (docs/channels.md)."""
    if not TYPES[emulator].client_class().batched:
        return [item["announces"] for item in _received(state, emulator)]
    return [url for item in _received(state, emulator) for url in item["text"].splitlines()]


def _received(state: dict, emulator: str) -> list[dict]:
    cls = TYPES[emulator].emulator_class()
    # `received` reads only the state it is given: no server is needed to call it.
    return list(cls.received(object.__new__(cls), state.get(emulator, {}), ""))


def _id(item: dict) -> str:
    return str(item.get("remote_id", item["id"]))


def _reply_to(item: dict) -> str:
    return str(item.get("in_reply_to_id") or item.get("in_reply_to") or "")


def check_outcome(config: Path, sandbox) -> None:
    """Each post exactly once on every at-most-once channel, at least once on the others, every
    record done."""
    state = sandbox.snapshot()
    book = Ledger.read(config.parent / "ledger.yml")
    for channel, emulator in AT_MOST_ONCE.items():
        held = remote(state, emulator)
        assert sorted(url for _, url in held) == sorted(URLS), (channel, held)
        assert {book.record(k, channel).remote_id for k in KEYS} == {i for i, _ in held}, channel
    for emulator in AT_LEAST_ONCE.values():
        assert set(delivered_urls(state, emulator)) >= set(URLS), emulator
    for key in KEYS:
        for channel in CHANNELS:
            record = book.record(key, channel)
            assert record is not None and record.state == "done", (key, channel, record)
