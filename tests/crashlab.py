"""Crash-test harness: scenarios of 3 posts × every channel against a private emulator, run in
child processes that are SIGKILLed at checkpoints, by the emulator, or at random times.

Time: a recovery comes "after the settle time", as the rule requires before any read may prove a
post absent. Rather than sleep, the harness waits until the emulator has finished every request
it was given (the server could have finished the first one), then moves the clocks of the child
and of the emulator forward together by more than `settle` (an offset, so the real server and the
child still agree on every other time)."""

from __future__ import annotations

import http.server
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from channel_specs import EVERY_TYPE
from crashsite import AT_LEAST_ONCE, AT_MOST_ONCE, CHANNELS, TYPE_OF, delivered_urls, remote, thread_parts
from forkserver import ForkedChild
from profiles import crash_points

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import TYPES, emulators
from mkdocs_syndicate.sandbox import SandboxServer
from mkdocs_syndicate.sandbox.matrix_events import relation

HERE = Path(__file__).resolve().parent
KEYS = ["blog/one/", "blog/two/", "blog/three/"]
TITLES = {"blog/one/": "One", "blog/two/": "Two", "blog/three/": "Three"}
# The third post is long: a thread of 2 parts on Mastodon (500 characters) and 3 on Bluesky (300).
LONG = {
    "blog/three/": "\n\n".join(
        [
            "Three begins with a paragraph that sets the scene for everything after it. " * 3,
            "Then a second paragraph goes on about the matter in more detail than the first. " * 3,
            "And a third one closes the argument, so that the thread has an end. " * 2,
        ]
    )
}
# With threads, the long post has an image too (issue 35): Mastodon attaches it (embed: image, its
# default) to the thread's first part, uploaded before it with its id recorded first.
IMAGE_POST, IMAGE_ALT = "blog/three/", "Three's cover: a gradient"
KEY_FILE = "crash-key-1234"
# A channel whose emulator commits after the client gives up gets a short timeout, so those
# scenarios time out quickly; every other channel a long one, so that a busy machine (a request
# slowed past a second) never turns a plain scenario into a timed-out one: the kill tests count
# checkpoints along a clean run's path. Settle is twice the timeout, as the settings require;
# the scenarios' clocks jump past it (Scenario.settle), so a long one costs no waiting.
TIMEOUT, SETTLE = 1.0, 2.0
RECOVERY_RUNS = 8  # plain runs a recovery may take (Scenario.recovers)
LONG_TIMEOUT, LONG_SETTLE = 30.0, 60.0

# Counts reported at the end of the test session (conftest's terminal summary).
STATS: Counter = Counter()


def timing(emulator: str, hostile: str) -> dict[str, float]:
    """The short timeout only where this scenario's emulator commits after it (see TIMEOUT)."""
    delay = HOSTILE[hostile].get(emulator, {}).get("commit_delay", 0.0)
    return (
        {"timeout": TIMEOUT, "settle": SETTLE} if delay > TIMEOUT else {"timeout": LONG_TIMEOUT, "settle": LONG_SETTLE}
    )


def channels(url: str, *, hostile: str = "plain", removals: bool = False, threads: bool = False) -> dict:
    """Every type in the registry (built in or a plugin, batched or not), at the private emulator;
    with `removals`, `removals: delete` on every type that can delete (the others keep)."""
    found: dict[str, dict[str, Any]] = {}
    for channel_id, name in TYPE_OF.items():
        found[channel_id] = EVERY_TYPE[name].raw_at(url, **timing(name, hostile))
        if threads and TYPES[name].client_class().threads:  # the long post goes out as a thread (issue 35)
            found[channel_id]["thread"] = True
    if removals:
        for settings in found.values():
            if TYPES[settings["type"]].client_class().deletes:
                settings["removals"] = "delete"
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
# What a post needs for every type to have work (Webmention: a link to a page), as the specs say.
POST_FIELDS = {name: value for spec in EVERY_TYPE.values() for name, value in spec.post_fields.items()}
# Variants whose clean run passes the same checkpoints as a plain one (no answer ever times out).
SAME_PATH = ("plain", "masto-ignores-key", "masto-replay-500", "slow-commits")


@dataclass
class Scenario:
    folder: Path
    hostile: str = "plain"
    server: SandboxServer = field(init=False)
    offset: float = 0.0  # seconds the child's and the emulator's clocks are moved forward
    site: str = "https://example.com/"
    removals: bool = False  # `removals: delete` on every channel type that can delete
    threads: bool = False  # `thread: true` where a type posts threads; the third post long (issue 35)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.server = SandboxServer(self.folder / "emulator", emulators())
        self.server.now = lambda: time.time() + self.offset
        for emulator, quirks in HOSTILE[self.hostile].items():
            self.server.set_quirks(emulator, **quirks)
        if "indexnow" in EVERY_TYPE:  # its key check has tests of its own: the key was validated long ago
            self.server.emulators["indexnow"].trust(EVERY_TYPE["indexnow"].settings["key"])
        self.server.start()
        spec = {
            "ledger": str(self.folder / "ledger.yml"),
            "site_url": self.site,
            "site_dir": str(self.folder / "site"),
            "channels": channels(self.server.url, hostile=self.hostile, removals=self.removals, threads=self.threads),
            "posts": [
                {
                    "key": k,
                    "url": f"{self.site}{k}",
                    "title": TITLES[k],
                    "date": f"2026-11-2{i}T00:00:00+00:00",
                    "description": LONG[k] if self.threads and k in LONG else f"About {TITLES[k]}.",
                    **(self.image_of(k) if self.threads and k == IMAGE_POST else {}),
                    **POST_FIELDS,
                }
                for i, k in enumerate(KEYS)
            ],
        }
        (self.folder / "spec.json").write_text(json.dumps(spec))

    def image_of(self, key: str) -> dict[str, str]:
        """The post's image, a real PNG in the built site, and its alt text."""
        from PIL import Image

        (self.folder / "site" / "img").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (96, 54), (20, 140, 160)).save(self.folder / "site" / "img" / "cover.png")
        return {"image": f"{self.site}img/cover.png", "image_alt": IMAGE_ALT}

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
        self.offset += LONG_SETTLE + 1.0

    # ---------------------------------------------------------------- invariants

    def check(self) -> None:
        """After a clean final run: each post exactly once on every at-most-once channel, every
        URL pinged at least once, every record done, remote ids in the ledger match the remote."""
        book = Ledger.read(self.folder / "ledger.yml")
        state = self.server.snapshot()
        for channel, emulator in AT_MOST_ONCE.items():
            held = remote(state, emulator)
            assert sorted(u for _, u in held) == sorted(f"{self.site}{k}" for k in KEYS), (channel, held)
            assert {book.record(k, channel).remote_id for k in KEYS} == {i for i, _ in held}, channel
        for emulator in AT_LEAST_ONCE.values():
            assert set(delivered_urls(state, emulator)) >= {f"{self.site}{k}" for k in KEYS}, emulator
        for key in KEYS:
            for channel in CHANNELS:
                record = book.record(key, channel)
                assert record is not None and record.state == "done", (key, channel, record)
        self.threads_complete(book, state)

    def threads_complete(self, book: Ledger, state: dict) -> None:
        """Each thread whole: its record lists every part, each part a reply to the one before,
        and the service holds no later part the record does not list."""
        for channel, emulator in AT_MOST_ONCE.items():
            replies = dict(thread_parts(state, emulator))
            listed = set()
            for key in KEYS:
                record = book.record(key, channel)
                parts = record.parts
                if record.state == "deleted":  # its parts are named still, and none is on the service
                    assert not {part.remote_id for part in parts} & set(replies), (channel, key, parts, replies)
                    continue
                for before, part in itertools.pairwise(parts):
                    assert replies.get(part.remote_id) == before.remote_id, (channel, key, parts, replies)
                    listed.add(part.remote_id)
            assert set(replies) == listed, (channel, replies, listed)
            STATS[f"thread parts on {channel}"] = max(STATS[f"thread parts on {channel}"], len(listed))

    def recovers(self) -> None:
        """After whatever killed the last run: still no duplicate, and plain runs after the settle
        time finish it all. A run that meets a timeout leaves that pair in flight for the next, which
        reads before it resends: with commits after the 1 s timeout a 2-part thread needs three runs
        (part 1 sent; found, part 2 sent; found), and on a loaded machine any request may time out
        and cost one more (seen at load 12: a part's send timed out before the emulator took it, so
        the next read proved it absent and the resend timed out in the last run). Hence
        RECOVERY_RUNS, not 3; the rule itself is checked after every run."""
        self.at_most_once_holds()
        for _ in range(RECOVERY_RUNS):
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
            parents = [parent for _, parent in thread_parts(state, emulator)]  # no part twice
            assert len(parents) == len(set(parents)), (emulator, thread_parts(state, emulator))


# ---------------------------------------------------------------- removals (issue 34)


class PublicSite:
    """The site as the web sees it, asked as the child's HTTP proxy (`GET http://example.com/blog/two/`):
    200 for the home page and the page of a post the source lists, 404 for one it no longer does (removed and
    deployed). A removal is proved by a real request (engine/removals.py), as in a real run."""

    def __init__(self, live: set[str]) -> None:
        self.live = live  # URL paths that answer 200
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # The home page always answers: a removal is proved only while the site is up.
                found = urlsplit(self.path).path in site.live or urlsplit(self.path).path == "/"
                body = b"<html>a post</html>" if found else b"<html>Not Found</html>"
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        proxy = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.env = {"HTTP_PROXY": proxy, "http_proxy": proxy, "NO_PROXY": "127.0.0.1,localhost"}
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# What a delete asks of each service (the emulator's request line), for counting and for faults.
DELETE_REQUESTS = {
    "mastodon": "DELETE /api/v1/statuses/",
    "bluesky": "POST /xrpc/com.atproto.repo.deleteRecord",
    "standard": "POST /xrpc/com.atproto.repo.deleteRecord",  # standard.site: the document's record
    "forem": "PUT /api/articles/",  # DEV unpublishes: the API deletes nothing
    "matrix": "/redact/",  # PUT .../rooms/{roomId}/redact/{eventId}/{txnId}: a redaction
    "indexnow": "POST /",  # a removed page is pinged
    "nostr": "POST /EVENT/5/",  # a NIP-09 deletion request (the emulator names an EVENT by its kind)
}


@dataclass
class RemovalScenario(Scenario):
    """The scenario's three posts announced, then some corrected (`edit`) or removed from the
    source and from the web (`remove`), on a site whose channels delete a removed post's copies
    wherever they can (weibo and plugin types that cannot delete keep them). Its `check` is the
    end state of a post's life: kept posts once each, a removed post's copies deleted (Mastodon:
    the status gone; Bluesky: the record gone; DEV: unpublished; IndexNow: its page pinged), the
    ledger saying `deleted`, no create for any post since the announcement, and each edit or
    delete carried out at most once more than needed."""

    site: str = "http://example.com/"
    removals: bool = True
    public: PublicSite = field(init=False)
    removed: list[str] = field(init=False, default_factory=list)
    edited: list[str] = field(init=False, default_factory=list)
    mark: int = field(init=False, default=0)  # requests the emulators had before the post's life began

    def __post_init__(self) -> None:
        super().__post_init__()
        self.public = PublicSite({urlsplit(f"{self.site}{key}").path for key in KEYS})

    def start(self, **env: str) -> ForkedChild:
        return super().start(**{**self.public.env, **env})

    def close(self) -> None:
        self.public.close()
        super().close()

    def announced(self) -> None:
        """The clean first run, after which the post's life starts (and requests are counted)."""
        code, output = self.run()
        assert code == 0, output
        Scenario.check(self)
        self.mark = len(self.server.requests())

    def _change_spec(self, change) -> None:
        spec_path = self.folder / "spec.json"
        spec = json.loads(spec_path.read_text())
        change(spec)
        spec_path.write_text(json.dumps(spec))

    def remove(self, key: str) -> None:
        """Gone from the source, and its page answers 404 (the site was deployed)."""
        self._change_spec(lambda spec: spec.update(posts=[p for p in spec["posts"] if p["key"] != key]))
        self.public.live.discard(urlsplit(f"{self.site}{key}").path)
        self.removed.append(key)

    def edit(self, key: str) -> None:
        def corrected(spec: dict) -> None:
            for post in spec["posts"]:
                if post["key"] == key:
                    post["description"] = "Corrected: " + post["description"]

        self._change_spec(corrected)
        self.edited.append(key)

    def url(self, key: str) -> str:
        return f"{self.site}{key}"

    def check(self) -> None:
        book = Ledger.read(self.folder / "ledger.yml")
        state = self.server.snapshot()
        for channel, emulator in AT_MOST_ONCE.items():
            deletes = TYPES[emulator].client_class().deletes
            shown = public_copies(state, emulator)
            for key in KEYS:
                record = book.record(key, channel)
                assert record is not None and record.op is None, (key, channel, record)
                if key in self.removed and deletes:
                    assert record.state == "deleted", (key, channel, record)
                    assert self.url(key) not in [u for _, u in shown], (key, channel, shown)
                else:
                    assert record.state == "done", (key, channel, record)
                    assert [i for i, u in shown if u == self.url(key)] == [record.remote_id], (key, channel, shown)
        for channel, emulator in AT_LEAST_ONCE.items():
            client, delivered = TYPES[emulator].client_class(), delivered_urls(state, emulator)
            for key in KEYS:
                record = book.record(key, channel)
                assert record is not None and record.op is None, (key, channel, record)
                deleted = key in self.removed and client.deletes
                assert record.state == ("deleted" if deleted else "done"), (key, channel, record)
                # Announced, and removed or corrected: told again where the type tells of those
                # (IndexNow pings a removed or changed page again).
                wanted = 2 if deleted or (key in self.edited and client.edits_in_place) else 1
                assert delivered.count(self.url(key)) >= wanted, (key, channel, delivered)
        self.carried_out_at_most_once_more()

    def carried_out_at_most_once_more(self) -> None:
        """Since the announcement: no create on any at-most-once service (Bluesky's and
        standard.site's putRecord edits a copy in place: once per corrected post, at most once more), each removed post's
        delete asked at most twice, each corrected copy edited at most twice."""
        since = self.server.requests()[self.mark :]
        state = self.server.snapshot()
        for emulator in AT_MOST_ONCE.values():
            creating = TYPES[emulator].emulator_class().creating
            made = [f"{r['method']} {r['path']}" for r in since if r["channel"] == emulator]
            made = [line for line in made if line.startswith(creating)]
            if emulator in ("bluesky", "standard"):  # both edit a record in place with putRecord
                puts = [line for line in made if "putRecord" in line]
                assert len(puts) <= 2 * len(self.edited), puts
                made = [line for line in made if "putRecord" not in line]
            if emulator == "matrix":  # an edit is a send (an m.replace; check() counts the originals)
                made = [line for line in made if DELETE_REQUESTS["matrix"] not in line]
                assert len(made) <= 2 * len(self.edited), made
                made = []
            assert made == [], (emulator, made)
        for emulator, line in DELETE_REQUESTS.items():
            asked = [r for r in since if r["channel"] == emulator and line in f"{r['method']} {r['path']}"]
            if emulator == "forem":  # a PUT is an edit or an unpublish: per article
                for article in state["forem"]["articles"]:
                    at_it = [r for r in asked if r["path"].endswith(f"/{article['id']}")]
                    changes = (article["canonical_url"] in map(self.url, self.removed)) + (
                        article["canonical_url"] in map(self.url, self.edited)
                    )
                    assert len(at_it) <= 2 * changes, (article["canonical_url"], at_it)
            elif emulator == "indexnow":
                continue  # at-least-once: a repeated ping is harmless, and pings are counted above
            else:
                assert len(asked) <= 2 * len(self.removed), (emulator, asked)
        events = state.get("matrix", {}).get("events", [])
        for message in events:
            if relation(message) is None and message["type"] == "m.room.message":
                replacements = [e for e in events if relation(e) == ("m.replace", message["event_id"])]
                body = str(message["content"].get("body", ""))
                most = 2 if any(self.url(k) in body for k in self.edited) else 0
                assert len(replacements) <= most, (message, replacements)
        for status in state["mastodon"]["statuses"]:
            edits = len(status.get("edits", []))
            assert edits <= (2 if any(self.url(k) in status["text"] for k in self.edited) else 0), status


def public_copies(state: dict, emulator: str) -> list[tuple[str, str]]:
    """(remote id, post URL) of the copies a service shows: DEV's unpublished articles are its
    author's drafts, not public copies."""
    held = remote(state, emulator)
    if emulator != "forem":
        return held
    drafts = {str(a["id"]) for a in state["forem"]["articles"] if not a.get("published")}
    return [(i, u) for i, u in held if i not in drafts]


def checkpoint_names(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [line.split("\t")[1] for line in log.read_text().splitlines() if not line.startswith("-\t")]


def kill_specs(names: list[str]) -> list[str]:
    """`name:K` for the checkpoint hits of a clean run: the K-th hit of that name, wherever the
    lanes' interleaving puts it on a loaded machine (a bare N would land on whatever came N-th).
    Every protocol checkpoint of every pair; the atomic write's own steps (`ledger.*`) of the
    run's first and last write only: they are the same code for every write, and the matrix and
    the ledger tests kill there on every write already (a suite kept within its time)."""
    seen: Counter = Counter()
    specs = []
    for name in names:
        seen[name] += 1
        specs.append((name, seen[name]))
    return [f"{name}:{k}" for name, k in specs if not name.startswith("ledger.") or k in (1, seen[name])]


def chosen_specs(specs: list[str]) -> list[str]:
    """Kill specs (`kill_specs`, perhaps filtered) sampled by the profile: all of them in ci, in
    dev the first and last hit of each checkpoint and every STRIDE-th (profiles.crash_points)."""
    return [specs[n - 1] for n in crash_points([spec.rsplit(":", 1)[0] for spec in specs])]


def landed(log: Path) -> tuple[str, set[str]]:
    """Where a killed run died, from its own checkpoint log: the last checkpoint it logged (the
    line is fsynced before the kill) and the pairs whose record it left in_flight."""
    names = checkpoint_names(log)
    assert names, f"the killed run logged no checkpoint: {log}"
    return names[-1], open_in_flight(log)


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
