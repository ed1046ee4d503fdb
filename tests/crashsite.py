"""A site of three posts announced to Mastodon and IndexNow emulators, run in a child process
that can be SIGKILLed at a named durability checkpoint or by the emulator itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mkdocs_syndicate.ledger import Ledger
from sites import post, write_site

POSTS = {"one.md": post("One", "2026-11-20"), "two.md": post("Two", "2026-11-21"),
         "three.md": post("Three", "2026-11-22")}
KEYS = ["posts/one/", "posts/two/", "posts/three/"]
URLS = [f"https://example.com/{k}" for k in KEYS]


def make(folder: Path, sandbox) -> Path:
    config = write_site(folder, {"mode": "send", "channels": {
        "masto": {"type": "mastodon", "instance": sandbox.url + "/mastodon", "token": "sandbox-mastodon-token"},
        "ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "site-key-1234"},
    }}, POSTS)
    sandbox.key_file_root = folder / "site"
    return config


def start(config: Path, **env: str) -> subprocess.Popen:
    full = {**{k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI"))},
            "NO_MKDOCS_2_WARNING": "1", **env}
    return subprocess.Popen([sys.executable, "-m", "mkdocs", "build", "-f", str(config)],
                            cwd=config.parent, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def run(config: Path, **env: str) -> tuple[int, str]:
    process = start(config, **env)
    _, err = process.communicate(timeout=120)
    return process.returncode, err


def check_outcome(config: Path, sandbox) -> None:
    """Each Mastodon post exactly once, every URL pinged, every record done."""
    state = sandbox.snapshot()
    texts = [s["text"].splitlines()[0] for s in state["mastodon"]["statuses"]]
    assert sorted(texts) == ["One", "Three", "Two"], texts
    pinged = {url for ping in state["indexnow"]["pings"] for url in ping["urls"]}
    assert pinged >= set(URLS)
    book = Ledger.read(config.parent / "ledger.yml")
    for key in KEYS:
        for channel in ("masto", "ping"):
            record = book.record(key, channel)
            assert record is not None and record.state == "done", (key, channel, record)
    ids = {book.record(k, "masto").remote_id for k in KEYS}
    assert ids == {s["id"] for s in state["mastodon"]["statuses"]}
