"""Crash-test harness: scenarios of 3 posts × every channel against a private emulator, run in
child processes that are SIGKILLed at checkpoints, by the emulator, or at random times."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from crashsite import remote  # noqa: F401  (one reading of what each emulator holds)
from mkdocs_syndicate.ledger import Ledger
from mkdocs_syndicate.sandbox import SandboxServer

HERE = Path(__file__).resolve().parent
KEYS = ["blog/one/", "blog/two/", "blog/three/"]
TITLES = {"blog/one/": "One", "blog/two/": "Two", "blog/three/": "Three"}
AT_MOST_ONCE = {"masto": "mastodon", "devto": "forem", "weibo": "weibo", "bsky": "bluesky"}
CHANNELS = ("ping", *AT_MOST_ONCE)
KEY_FILE = "crash-key-1234"

# Counts reported at the end of the test session (conftest's terminal summary).
STATS: Counter = Counter()


def channels(url: str) -> dict:
    return {
        "ping": {"type": "indexnow", "endpoint": url + "/indexnow", "key": KEY_FILE},
        "masto": {"type": "mastodon", "instance": url + "/mastodon", "token": "sandbox-mastodon-token"},
        "devto": {"type": "forem", "api": url + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0},
        "weibo": {"type": "weibo", "api": url + "/weibo/2", "access_token": "sandbox-weibo-access-token"},
        "bsky": {"type": "bluesky", "service": url + "/bluesky", "handle": "sandbox.bsky.social",
                 "app_password": "sandbox-bsky-app-password"},
    }


@dataclass
class Scenario:
    folder: Path
    server: SandboxServer = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.server = SandboxServer(self.folder / "emulator").start()
        spec = {"ledger": str(self.folder / "ledger.yml"), "site_url": "https://example.com/",
                "channels": channels(self.server.url),
                "posts": [{"key": k, "url": f"https://example.com/{k}", "title": TITLES[k],
                           "date": f"2026-11-2{i}T00:00:00+00:00", "description": f"About {TITLES[k]}."}
                          for i, k in enumerate(KEYS)]}
        (self.folder / "spec.json").write_text(json.dumps(spec))

    def close(self) -> None:
        self.server.stop()

    def start(self, **env: str) -> subprocess.Popen:
        full = {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")}
        full.update(env)
        STATS["child processes"] += 1
        return subprocess.Popen([sys.executable, str(HERE / "crash_child.py"), str(self.folder / "spec.json")],
                                env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, **env: str) -> tuple[int, str]:
        process = self.start(**env)
        out, err = process.communicate(timeout=120)
        return process.returncode, out + err

    def kill_after(self, seconds: float) -> int:
        """Start a run and SIGKILL it after `seconds` (if it is still running)."""
        process = self.start()
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            STATS["random kills"] += 1
        process.communicate(timeout=60)
        return process.returncode

    # ---------------------------------------------------------------- invariants

    def check(self) -> None:
        """After a clean final run: each post exactly once on every at-most-once channel, every
        URL pinged at least once, every record done, remote ids in the ledger match the remote."""
        book = Ledger.read(self.folder / "ledger.yml")
        state = self.server.snapshot()
        for channel, emulator in AT_MOST_ONCE.items():
            held = remote(state, emulator)
            assert sorted(t for _, t in held) == ["One", "Three", "Two"], (channel, held)
            assert {book.record(k, channel).remote_id for k in KEYS} == {i for i, _ in held}, channel
        pinged = {u for ping in state["indexnow"]["pings"] for u in ping["urls"]}
        assert pinged >= {f"https://example.com/{k}" for k in KEYS}
        for key in KEYS:
            for channel in CHANNELS:
                record = book.record(key, channel)
                assert record is not None and record.state == "done", (key, channel, record)

    def recovers(self) -> None:
        """After whatever killed the last run: still no duplicate, and one plain run finishes it all."""
        self.at_most_once_holds()
        code, output = self.run()
        assert code == 0, output
        self.check()

    def at_most_once_holds(self) -> None:
        """At any moment, killed or not: never two of the same post on an at-most-once channel."""
        state = self.server.snapshot()
        for emulator in AT_MOST_ONCE.values():
            titles = [t for _, t in remote(state, emulator)]
            assert len(titles) == len(set(titles)), (emulator, titles)


def checkpoint_names(log: Path) -> list[str]:
    return [line.split("\t", 1)[1] for line in log.read_text().splitlines()] if log.exists() else []


def elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.1f} s"
