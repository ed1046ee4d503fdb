"""A site of three posts announced to Mastodon and IndexNow emulators, run in a child process
that can be SIGKILLed at a named durability checkpoint or by the emulator itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sites import post, write_site

from mkdocs_syndicate.ledger.store import Ledger

POSTS = {
    "one.md": post("One", "2026-11-20"),
    "two.md": post("Two", "2026-11-21"),
    "three.md": post("Three", "2026-11-22"),
}
KEYS = ["posts/one/", "posts/two/", "posts/three/"]
URLS = [f"https://example.com/{k}" for k in KEYS]


# Short timeouts and settle times: a rerun right after a kill reads, and waits the 2 s settle
# time in the run before a read may prove a post absent.
TIMING = {"timeout": 1, "settle": 2}


def make(folder: Path, sandbox) -> Path:
    channels = {
        "masto": {"type": "mastodon", "instance": sandbox.url + "/mastodon", "token": "sandbox-mastodon-token"},
        "ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "site-key-1234"},
        "devto": {
            "type": "forem",
            "api": sandbox.url + "/forem/api",
            "api_key": "sandbox-forem-api-key",
            "min_interval": 0,
        },
        "weibo": {
            "type": "weibo",
            "api": sandbox.url + "/weibo/2",
            "access_token": "sandbox-weibo-access-token",
            "rip": "203.0.113.7",
        },
        "bsky": {
            "type": "bluesky",
            "service": sandbox.url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
        },
    }
    config = write_site(folder, {"mode": "send", "channels": {k: {**v, **TIMING} for k, v in channels.items()}}, POSTS)
    sandbox.key_file_root = folder / "site"
    return config


def start(config: Path, **env: str) -> subprocess.Popen:
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI"))},
        "NO_MKDOCS_2_WARNING": "1",
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


CHANNELS = ("masto", "ping", "devto", "weibo", "bsky")
AT_MOST_ONCE = {"masto": "mastodon", "devto": "forem", "weibo": "weibo", "bsky": "bluesky"}


def remote(state: dict, emulator: str) -> list[tuple[str, str]]:
    """(remote id, first line of text) of every post an at-most-once emulator holds."""
    if emulator == "mastodon":
        return [(s["id"], s["text"].splitlines()[0]) for s in state["mastodon"]["statuses"]]
    if emulator == "forem":
        return [(str(a["id"]), a["title"]) for a in state["forem"]["articles"]]
    if emulator == "weibo":
        return [(s["idstr"], s["original"].split(" ")[0]) for s in state["weibo"]["statuses"]]
    return [
        (f"at://did:plc:sandbox0000000000000000/app.bsky.feed.post/{k}", r["value"]["text"].splitlines()[0])
        for k, r in state["bluesky"]["records"].items()
    ]


def check_outcome(config: Path, sandbox) -> None:
    """Each post exactly once on every at-most-once channel, every URL pinged, every record done."""
    state = sandbox.snapshot()
    book = Ledger.read(config.parent / "ledger.yml")
    for channel, emulator in AT_MOST_ONCE.items():
        held = remote(state, emulator)
        assert sorted(text for _, text in held) == ["One", "Three", "Two"], (channel, held)
        assert {book.record(k, channel).remote_id for k in KEYS} == {i for i, _ in held}, channel
    pinged = {url for ping in state["indexnow"]["pings"] for url in ping["urls"]}
    assert pinged >= set(URLS)
    for key in KEYS:
        for channel in CHANNELS:
            record = book.record(key, channel)
            assert record is not None and record.state == "done", (key, channel, record)
