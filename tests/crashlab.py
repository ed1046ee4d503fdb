"""Crash-test harness: scenarios of 3 posts × every channel against a private emulator, run in
child processes that are SIGKILLed at checkpoints, by the emulator, or at random times.

Time: a recovery comes "after the settle time", as the rule requires before any read may prove a
post absent. Rather than sleep, the harness waits until the emulator has finished every request
it was given (the server could have finished the first one), then moves the clocks of the child
and of the emulator forward together by more than `settle` (an offset, so the real server and the
child still agree on every other time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from channel_specs import SPECS
from crashsite import AT_MOST_ONCE, CHANNELS, remote
from forkserver import ForkedChild

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

HERE = Path(__file__).resolve().parent
KEYS = ["blog/one/", "blog/two/", "blog/three/"]
TITLES = {"blog/one/": "One", "blog/two/": "Two", "blog/three/": "Three"}
KEY_FILE = "crash-key-1234"
TIMEOUT, SETTLE = 1.0, 2.0  # per channel: short, so slow-commit scenarios time out quickly

# Counts reported at the end of the test session (conftest's terminal summary).
STATS: Counter = Counter()


def channels(url: str) -> dict:
    """The IndexNow ping and every at-most-once type in the registry, at the private emulator."""
    timing = {"timeout": TIMEOUT, "settle": SETTLE}
    found = {"ping": {"type": "indexnow", "endpoint": url + "/indexnow", "key": KEY_FILE, **timing}}
    for channel_id, name in AT_MOST_ONCE.items():
        found[channel_id] = SPECS[name].raw_at(url, **timing)
    return found


# The ways real servers misbehave (sandbox quirks), given to scenarios so that the crash tests
# run against them too: a Mastodon that ignores Idempotency-Key, one that answers a replayed key
# with 500, and slow commits (visible only after the delay; longer than the timeout: ambiguous).
HOSTILE: dict[str, dict[str, dict[str, Any]]] = {
    "plain": {},
    "masto-ignores-key": {"mastodon": {"ignore_idempotency_key": True}},
    "masto-replay-500": {"mastodon": {"replay_500": True}},
    "slow-commits": {name: {"commit_delay": 0.3} for name in AT_MOST_ONCE.values()},
    "commits-after-timeout": {
        "mastodon": {"commit_delay": TIMEOUT + 0.5, "ignore_idempotency_key": True},
        "forem": {"commit_delay": TIMEOUT + 0.5},
    },
}
# Variants whose clean run passes the same checkpoints as a plain one (no answer ever times out).
SAME_PATH = ("plain", "masto-ignores-key", "masto-replay-500", "slow-commits")


@dataclass
class Scenario:
    folder: Path
    hostile: str = "plain"
    server: SandboxServer = field(init=False)
    offset: float = 0.0  # seconds the child's and the emulator's clocks are moved forward

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.server = SandboxServer(self.folder / "emulator", emulators())
        self.server.now = lambda: time.time() + self.offset
        for emulator, quirks in HOSTILE[self.hostile].items():
            self.server.set_quirks(emulator, **quirks)
        self.server.emulators["indexnow"].trust(KEY_FILE)
        self.server.start()
        spec = {
            "ledger": str(self.folder / "ledger.yml"),
            "site_url": "https://example.com/",
            "channels": channels(self.server.url),
            "posts": [
                {
                    "key": k,
                    "url": f"https://example.com/{k}",
                    "title": TITLES[k],
                    "date": f"2026-11-2{i}T00:00:00+00:00",
                    "description": f"About {TITLES[k]}.",
                }
                for i, k in enumerate(KEYS)
            ],
        }
        (self.folder / "spec.json").write_text(json.dumps(spec))

    def close(self) -> None:
        self.server.stop()
        from conftest import check_bluesky_records

        check_bluesky_records(self.server)

    def start(self, **env: str) -> ForkedChild:
        full = {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")}
        full["CRASH_CLOCK_OFFSET"] = repr(self.offset)
        full.update(env)
        STATS["child processes"] += 1
        return ForkedChild(self.folder / "spec.json", full)

    def run(self, **env: str) -> tuple[int, str]:
        process = self.start(**env)
        out, err = process.communicate(timeout=120)
        return process.returncode, out + err

    def kill_after_first_checkpoint(self, seconds: float) -> str | None:
        """Start a run, wait for its first checkpoint (the interpreter and imports are behind it),
        SIGKILL it `seconds` later if it is still running. Returns where the kill landed: "in
        flight" (some pair's in_flight record written by this run and not yet resolved), "between
        pairs", or None when the run ended first."""
        log = self.folder / f"soak-{time.monotonic_ns()}.log"
        process = self.start(SYNDICATE_CHECKPOINT_LOG=str(log))
        deadline = time.monotonic() + 60
        while process.poll() is None and not (log.exists() and log.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.002)
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        if process.returncode != -signal.SIGKILL:
            return None  # the run ended before the kill
        STATS["random kills"] += 1
        landed = "in flight" if open_in_flight(log) else "between pairs"
        STATS[f"random kills landing {landed}"] += 1
        return landed

    # ---------------------------------------------------------------- time

    def settle(self) -> None:
        """Let the settle time pass: the emulator has finished everything it was sent, and both
        clocks move past the child's settle window."""
        self.server.wait_idle(timeout=30)
        self.offset += SETTLE + 1.0

    # ---------------------------------------------------------------- invariants

    def check(self) -> None:
        """After a clean final run: each post exactly once on every at-most-once channel, every
        URL pinged at least once, every record done, remote ids in the ledger match the remote."""
        book = Ledger.read(self.folder / "ledger.yml")
        state = self.server.snapshot()
        for channel, emulator in AT_MOST_ONCE.items():
            held = remote(state, emulator)
            assert sorted(u for _, u in held) == sorted(f"https://example.com/{k}" for k in KEYS), (channel, held)
            assert {book.record(k, channel).remote_id for k in KEYS} == {i for i, _ in held}, channel
        pinged = {u for ping in state["indexnow"]["pings"] for u in ping["urls"]}
        assert pinged >= {f"https://example.com/{k}" for k in KEYS}
        for key in KEYS:
            for channel in CHANNELS:
                record = book.record(key, channel)
                assert record is not None and record.state == "done", (key, channel, record)

    def recovers(self) -> None:
        """After whatever killed the last run: still no duplicate, and plain runs after the settle
        time finish it all (a run that meets a slow commit itself leaves that pair for the next)."""
        self.at_most_once_holds()
        for _ in range(3):
            self.settle()
            code, output = self.run()
            self.at_most_once_holds()
            if code == 0:
                break
        assert code == 0, output
        self.check()

    def at_most_once_holds(self) -> None:
        """At any moment, killed or not: never two of the same post on an at-most-once channel."""
        state = self.server.snapshot()
        for emulator in AT_MOST_ONCE.values():
            announced = [u for _, u in remote(state, emulator)]
            assert len(announced) == len(set(announced)), (emulator, announced)


def checkpoint_names(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [line.split("\t")[1] for line in log.read_text().splitlines() if not line.startswith("-\t")]


def open_in_flight(log: Path) -> set[str]:
    """Pairs whose last recorded write in this run's log is in_flight: a kill now lands inside
    the window between an in_flight write and its resolution."""
    last: dict[str, str] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            if line.startswith("-\tnote\t"):
                key, channel, state = line.split("\t", 2)[2].rsplit("|", 2)
                last[f"{key}|{channel}"] = state
    return {pair for pair, state in last.items() if state == "in_flight"}


def elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.1f} s"
