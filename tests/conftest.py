"""Shared fixtures: a real loopback sandbox server, a fake clock, posts and channels."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import pytest
from profiles import EXAMPLES as PROFILES_EXAMPLES
from profiles import PROFILE

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.registry import clients, emulators
from mkdocs_syndicate.sandbox import SandboxServer

SITE = Site("https://example.com/", "Example")

# Channel plugins installed for the whole session, as pip leaves one in site-packages: a
# .dist-info in tests/plugins/ whose entry point declares the toy ping type (tests/toyping.py,
# batched and at least once). Every suite built from the registry (tests/channel_specs.py) then
# covers a batched type that is not built in (issue 37). A child process that runs the shared
# scenarios (a `mkdocs build`) gets them with PLUGIN_PYTHONPATH, which also puts this checkout
# first: a child then imports the package under test even where the venv's editable install
# points at another checkout (a git worktree).
TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "plugins"))
PLUGIN_PYTHONPATH = os.pathsep.join([str(TESTS.parent), str(TESTS / "plugins"), str(TESTS)])


def _one_default_tls_context() -> None:
    """httpx builds a TLS context (the whole CA bundle parsed) for every client it makes, even
    for the plain-http loopback calls these tests make: 170 bare `httpx.get/post` calls and a
    transport per run spent most of some tests' CPU there. The default one is built once per
    process instead; a test that passes its own `verify` still gets its own."""
    import functools

    import httpx._transports.default as transports

    made = transports.create_ssl_context
    default = functools.cache(made)

    def create_ssl_context(verify=True, cert=None, trust_env=True):
        if verify is True and cert is None and trust_env:
            return default()
        return made(verify=verify, cert=cert, trust_env=trust_env)

    transports.create_ssl_context = create_ssl_context


_one_default_tls_context()

# The suite's size (tests/profiles.py): hypothesis takes its example count from the profile of the
# same name. No deadline: an example's time says how busy the machine is, not whether it is right.
for _name, _examples in PROFILES_EXAMPLES.items():
    hypothesis.settings.register_profile(_name, max_examples=_examples, deadline=None)
hypothesis.settings.load_profile(PROFILE)


class FakeClock:
    """Virtual time: sleeping advances it instantly. Start near real time so servers' reset
    headers (computed from the real clock) give sensible waits."""

    def __init__(self, start: float | None = None) -> None:
        self.now = float(int(time.time())) if start is None else start  # whole seconds, like the ledger
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


class RecordingTransport(httpx.AsyncBaseTransport):
    """Real HTTP, plus the (fake) clock time and request line of every request."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: list[tuple[float, str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((self.clock.time(), request.method, request.url.path))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class RefusingTransport(httpx.AsyncBaseTransport):
    """Fails the test on any request: for runs that must make none."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.method} {request.url}")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# Keys the tests' IndexNow pings use, validated "long ago" (the key check itself has its own tests).
TRUSTED_INDEXNOW_KEYS = ("test-key-12345678", "sandbox-indexnow-key-0001", "site-key-1234")


@pytest.fixture
def sandbox(tmp_path: Path):
    with SandboxServer(tmp_path / "sandbox-state", emulators()) as server:
        server.emulators["indexnow"].trust(*TRUSTED_INDEXNOW_KEYS)
        yield server
        check_bluesky_records(server)


def check_bluesky_records(server: SandboxServer) -> None:
    """Every record a test sent to the Bluesky emulator must pass the official SDK's models (with
    its strict string formats): a judge nobody here wrote. Skipped only without the SDK."""
    try:
        from atproto import models
        from atproto_client.models.utils import get_or_create
    except ImportError:
        return
    for rkey, stored in server.snapshot()["bluesky"]["records"].items():
        record = stored["value"]
        if record.get("$type") != "app.bsky.feed.post":
            continue
        parsed = get_or_create(record, models.AppBskyFeedPost.Record, strict=True, strict_string_format=True)
        assert isinstance(parsed, models.AppBskyFeedPost.Record), (rkey, record)


def make_post(n: int, **changes) -> Post:
    fields: dict[str, Any] = dict(
        key=f"blog/post-{n}/",
        url=f"https://example.com/blog/post-{n}/",
        title=f"Post {n}",
        date=dt.datetime(2026, 11, n, tzinfo=dt.UTC),
        source=f"docs/blog/post-{n}.md",
        description=f"About {n}.",
    )
    fields.update(changes)
    return Post(**fields)


def channel_settings(raw: dict):
    return parse_channels(raw, clients())


def mastodon_raw(server: SandboxServer, **extra) -> dict:
    return {"type": "mastodon", "instance": server.url + "/mastodon", "token": "sandbox-mastodon-token", **extra}


def indexnow_raw(server: SandboxServer, **extra) -> dict:
    return {"type": "indexnow", "endpoint": server.url + "/indexnow", "key": "test-key-12345678", **extra}


def site_channels(server: SandboxServer, **masto) -> dict:
    """A site's channels in the plugin and CLI tests: Mastodon (changed by `masto`) and IndexNow,
    whose key file the site publishes."""
    return {"masto": mastodon_raw(server, **masto), "ping": indexnow_raw(server, key="site-key-1234")}


class ListReporter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.waits: list[tuple[str, float, str]] = []

    def lane_started(self, channel_id: str, total: int) -> None:
        self.lines.append(f"{channel_id}: {total} pending")

    def pair_finished(self, result) -> None:
        self.lines.append(f"{result.channel} {result.post_key} {result.state} {result.detail}")

    async def wait(self, channel_id: str, seconds: float, reason: str, clock) -> None:
        self.waits.append((channel_id, seconds, reason))
        await clock.sleep(seconds)


def write_ledger(path: Path, records: dict[tuple[str, str], Record]) -> None:
    """A ledger as an earlier (possibly killed) run left it, written in the canonical layout."""
    from mkdocs_syndicate.ledger.format import dump
    from mkdocs_syndicate.ledger.schema import PostEntry

    posts: dict = {}
    for (key, channel), record in records.items():
        entry = posts.setdefault(key, PostEntry(url=f"https://example.com/{key}", title=key))
        entry.channels[channel] = record
    path.write_text(dump(posts), encoding="utf-8")


def as_in_flight(done: Record) -> Record:
    """A done record as the in_flight record it was before the answer came (a run killed after
    the server committed): its key, first attempt and payload hash, and no remote id."""
    return Record(
        State.IN_FLIGHT,
        1,
        done.at,
        idempotency_key=done.idempotency_key,
        created_at=done.created_at,
        message_sha256=done.message_sha256,
    )


# ---------------------------------------------------------------- kinds of test

# Every test is one kind, by the heaviest thing it does (a module sets its default with
# `pytestmark`, a test may raise its own). The developer loop is `pytest -m "not crash"`.
KINDS = ("unit", "http", "process", "realserver", "crash")


def kind_of(item: pytest.Item) -> str | None:
    found = [k for k in KINDS if item.get_closest_marker(k) is not None]
    return found[-1] if found else None


def pytest_configure(config):
    # Once a run, before any worker or child process starts: the bytecode every child reads
    # (tests/bytecode.py). A worker finds it written by the controller.
    if getattr(config, "workerinput", None) is None:
        from bytecode import compile_once

        compile_once(TESTS.parent)
    # Under pytest-xdist (`-n auto`, README command 2, .ci/run), the tests of one real server keep
    # to one worker (their `xdist_group`: tests/test_realserver_*.py), so the PDS, Synapse and the
    # AppView start once a run instead of once a worker; every other test is spread as with `load`.
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    # A worker parses the command line afresh and never sees the line above: without being told,
    # it leaves the group out of its test ids and the controller spreads a group over every worker
    # (each one starting its own AppView). Told through its workerinput (pytest_configure_node).
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("syndicate_dist") == "loadgroup":
        config.option.loadgroup = True
        config.pluginmanager.register(_GroupSuffixes(), "syndicate-xdist-group-suffixes")


class _GroupSuffixes:
    """On a worker: the `@group` suffix the controller groups tests by. pytest-xdist 3.8 adds it by
    assigning `item._nodeid`, which pytest 9.2's structured node ids no longer read, so every group
    is silently spread (pytest-dev/pytest-xdist#1386, open as of 2026-12); where the suffix did not
    take, it is added to the structured id. Does nothing where xdist's own assignment works."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            groups = sorted(
                {
                    str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")
                }
            )
            if not groups or item.nodeid.endswith("@" + "_".join(groups)):
                continue
            suffixed = f"{item.nodeid}@{'_'.join(groups)}"
            if hasattr(item, "_id"):
                from _pytest.nodeid import NodeId

                item._id = NodeId.parse(suffixed)
            else:
                item._nodeid = suffixed


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers a core. Much of a process or crash test is waiting on other
    processes (a server starting, a child killed and run again, a browser), so with one worker a
    core the cores idle half the run (measured on 2 cores: 8 min 18 s with 2 workers, 6 min 22 s
    with 4: docs/development.md). PYTEST_XDIST_AUTO_NUM_WORKERS still decides where it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """On the controller, for each xdist worker it starts: the distribution it chose."""
    node.workerinput["syndicate_dist"] = node.config.option.dist


def pytest_collection_modifyitems(config, items):
    unmarked = [item.nodeid for item in items if kind_of(item) is None]
    if unmarked:
        raise pytest.UsageError(f"tests without a kind ({', '.join(KINDS)}): {unmarked[:5]}")
    # The long crash runs (and the real server, which takes ~20 s to start) first: under
    # pytest-xdist they start at once and the short tests fill the other workers around them,
    # instead of one soak running alone at the end.
    items.sort(key=lambda item: kind_of(item) not in ("crash", "realserver"))


@pytest.fixture(autouse=True)
def _private_state_home(tmp_path_factory, monkeypatch):
    """Kept sessions (channels/sessions.py) go to a folder of the test's own, never the user's
    ~/.local/state; the processes a test starts inherit it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    # Run in GitHub Actions, the suite's own runs must not write the job's summary or annotate it
    # (a test that wants them sets them: tests/test_doctor.py).
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(autouse=True)
def _children_import_this_checkout(monkeypatch):
    """Every process a test starts (`mkdocs build`, `python -m mkdocs_syndicate.cli`) imports the
    package of this checkout first, not the one the venv's editable install points at (another
    git worktree): else a child runs other code than the test's."""
    inherited = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS.parent), *([inherited] if inherited else [])]))


@pytest.fixture(autouse=True)
def _kinds_keep_their_word(request, monkeypatch):
    """A unit test opens no socket and starts no process; an http test starts no process. Checked,
    so the markers can be trusted when a subset is run."""
    import socket
    import subprocess

    kind = kind_of(request.node)
    if kind in ("unit", "http"):

        def no_process(self, *args, **kwargs):
            raise AssertionError(f"a test marked {kind} started a process: mark it process")

        monkeypatch.setattr(subprocess.Popen, "_execute_child", no_process)
    if kind == "unit":

        def no_socket(self, *args, **kwargs):
            raise AssertionError("a test marked unit opened a connection: mark it http")

        monkeypatch.setattr(socket.socket, "connect", no_socket)
        monkeypatch.setattr(socket.socket, "connect_ex", no_socket)


# ---------------------------------------------------------------- crash-safety counts


def pytest_sessionfinish(session):
    """Under pytest-xdist each worker counts its own: hand them to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from crashlab import STATS

        workeroutput["crash_stats"] = dict(STATS)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_testnodedown(node, error):
    from crashlab import STATS

    STATS.update(getattr(node, "workeroutput", {}).get("crash_stats", {}))


def pytest_report_header(config):
    return f"profile: {PROFILE} (SYNDICATE_TEST_PROFILE: dev, the default, or ci; tests/profiles.py)"


def pytest_terminal_summary(terminalreporter):
    """The crash tests' counts (checkpoints K, scenarios, seeds), for the README and the log."""
    from crashlab import STATS

    if STATS:
        terminalreporter.write_sep("-", "crash-safety counts")
        for name, value in sorted(STATS.items()):
            terminalreporter.write_line(f"{name}: {value}")
