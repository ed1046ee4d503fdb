"""The ledger kept in git for CI, against a local bare repository as the remote: in_flight pushed
before every at-most-once call, container death (kill, wipe the work tree, clone again, rerun)
with no duplicate and no miss, two runners racing on one ledger never posting a pair twice, and
push failures that stop the run before any further remote call."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from conftest import SITE, ListReporter, indexnow_raw, make_post, mastodon_raw
from crashlab import SAME_PATH, STATS, Scenario

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import LedgerWriteError
from mkdocs_syndicate.ledger.format import dump, parse
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert result.returncode == 0, result.stderr
    return result.stdout


def make_remote(folder: Path) -> Path:
    """A bare repository with one commit on main (a README), like a site's repository."""
    bare = folder / "remote.git"
    git("init", "--quiet", "--bare", "-b", "main", str(bare), cwd=folder)
    seed = folder / "seed"
    git("clone", "--quiet", str(bare), str(seed), cwd=folder)
    (seed / "README.md").write_text("# site\n")
    git("add", "README.md", cwd=seed)
    git("commit", "--quiet", "-m", "start", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)
    shutil.rmtree(seed)
    return bare


def clone(bare: Path, target: Path) -> Path:
    git("clone", "--quiet", "-b", "main", str(bare), str(target), cwd=bare.parent)
    return target


def remote_ledger(bare: Path) -> str | None:
    result = subprocess.run(["git", "--git-dir", str(bare), "show", "main:ledger.yml"], capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


GIT = GitSettings(commit=True, push=True, branch="main")


def run(work: Path, channels: dict, posts, clock=None, transport=None, git_settings=GIT):
    opts = parse_options(
        channels, ledger_path=work / "ledger.yml", site=SITE, sandbox=False, sending=True, git=git_settings
    )
    return send(opts, posts, ListReporter(), clock=clock, transport=transport)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    bare = make_remote(tmp_path)
    return bare, clone(bare, tmp_path / "work")


CREATES = {
    "masto": "/api/v1/statuses",
    "devto": "/api/articles",
    "weibo": "/statuses/share.json",
    "bsky": "com.atproto.repo.putRecord",
}


def every_channel(sandbox) -> dict:
    return {
        "ping": indexnow_raw(sandbox),
        "masto": mastodon_raw(sandbox),
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


def count_pushes(bare: Path) -> Path:
    """A hook on the remote that counts the pushes it receives (ours, not our own bookkeeping)."""
    counter = bare / "pushes"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho push >> '{counter}'\n")
    hook.chmod(0o755)
    return counter


def pushes(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


async def forward(request: httpx.Request) -> httpx.Response:
    """Send over real HTTP with a connection pool of its own: a re-planned round, or another run
    in its own thread, is on another event loop, where a shared pool's connections cannot go."""
    async with httpx.AsyncHTTPTransport() as inner:
        response = await inner.handle_async_request(request)
        body = await response.aread()
    return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(body))


class PushedBeforeSend(httpx.AsyncBaseTransport):
    """Real HTTP; before every create on an at-most-once channel, the pushed ledger must hold one
    more record of that channel (in_flight or beyond) than there were creates before it."""

    def __init__(self, bare: Path) -> None:
        self.bare = bare
        self.inner = httpx.AsyncHTTPTransport()
        self.creates: dict[str, int] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        channel = next(
            (c for c, path in CREATES.items() if request.method == "POST" and request.url.path.endswith(path)), None
        )
        if channel is not None:
            text = remote_ledger(self.bare)
            assert text is not None, "nothing pushed before the request"
            pushed = [k for k, e in parse(text, "remote").items() if channel in e.channels]
            self.creates[channel] = self.creates.get(channel, 0) + 1
            assert len(pushed) >= self.creates[channel], (channel, pushed)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:  # the run's client closes its transport: its connections with it
        await self.inner.aclose()


def test_in_flight_is_pushed_before_every_at_most_once_request_and_lanes_share_pushes(repo, sandbox):
    bare, work = repo
    config_before = (work / ".git" / "config").read_bytes()
    counter = count_pushes(bare)
    transport = PushedBeforeSend(bare)
    report = run(work, every_channel(sandbox), [make_post(1), make_post(2), make_post(3)], transport=transport)
    assert not report.undone, report.results
    assert transport.creates == {"masto": 3, "devto": 3, "weibo": 3, "bsky": 3}
    # Lanes that move together share each push: a round of in_flight records per post (the
    # previous post's done records riding along) and the last done records: 3 + 1, never 2 per post.
    assert pushes(counter) <= 2 * 3 + 2, pushes(counter)
    assert remote_ledger(bare) == (work / "ledger.yml").read_text()
    log = git("log", "--format=%s", "main", cwd=bare).splitlines()
    # The last push carries the last done records; which lanes' records ride on it depends on how
    # the lanes interleave (a slow machine lets one finish a push earlier), so only its form is fixed.
    assert re.fullmatch(
        r"syndicate: (bsky|devto|masto|weibo)(, (bsky|devto|masto|weibo))* done for blog/post-3/ \[skip ci\]", log[0]
    ), log
    assert all("[skip ci]" in m for m in log[:-1]) and len(log) - 1 == pushes(counter)
    assert (work / ".git" / "config").read_bytes() == config_before  # no credential, no remote change
    # the checkout followed: HEAD is the pushed tip and the ledger is clean
    assert git("rev-parse", "HEAD", cwd=work) == git("rev-parse", "main", cwd=bare)
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work).strip() == ""


def test_one_post_on_five_channels_takes_two_pushes(repo, sandbox):
    """The in_flight records of the four at-most-once lanes go out in one push, their done records
    (and the ping's) in the run's last one."""
    bare, work = repo
    counter = count_pushes(bare)
    report = run(work, every_channel(sandbox), [make_post(1)])
    assert not report.undone, report.results
    assert pushes(counter) <= 3, pushes(counter)  # 2 unless a lane lags behind the linger
    log = git("log", "--format=%s", "main", cwd=bare).splitlines()
    assert any(re.search(r"bsky, devto, masto, (ping, )?weibo in_flight for blog/post-1/", m) for m in log), log
    assert re.match(
        r"syndicate: bsky, devto, masto, (ping, )?weibo done(; ping in_flight)? for blog/post-1/", log[0]
    ), log


def test_a_commit_and_push_is_two_git_processes(repo):
    """Fewer processes per push: fast-import writes blob, tree and commit; then one push. Nothing is
    fetched while pushes succeed."""
    from mkdocs_syndicate.ledger.gitmirror import GitMirror
    from mkdocs_syndicate.ledger.schema import PostEntry, Record

    bare, work = repo
    mirror = GitMirror(work / "ledger.yml", GIT)
    mirror.start()
    for n in range(3):
        posts = {
            "blog/x/": PostEntry(
                "https://example.com/blog/x/", "X", {"masto": Record(State.IN_FLIGHT, n + 1, "2026-12-03T00:00:00Z")}
            )
        }
        before = mirror.processes
        text = dump(posts)
        mirror.persist(posts, text, [("blog/x/", "masto", "in_flight")], push=True)
        assert mirror.processes - before == 2
        assert remote_ledger(bare) == text
    assert git("for-each-ref", "refs/syndicate", cwd=work).strip() == ""  # no scratch ref left behind


def test_a_start_takes_the_ledgers_posts_when_the_pushed_ledger_is_the_same_file(repo):
    """The ledger was read once when the run opened it: an unchanged pushed ledger is not parsed
    again, and a different one is parsed once, for both the run and the merge base."""
    from mkdocs_syndicate.ledger.gitmirror import GitMirror
    from mkdocs_syndicate.ledger.schema import PostEntry, Record

    _, work = repo
    posts = {
        "blog/x/": PostEntry(
            "https://example.com/blog/x/", "X", {"masto": Record(State.DONE, 1, "2026-12-03T00:00:00Z", remote_id="1")}
        )
    }
    (work / "ledger.yml").write_text(dump(posts))
    git("add", "ledger.yml", cwd=work)
    git("commit", "--quiet", "-m", "ledger", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    local = parse((work / "ledger.yml").read_text(), "local")
    same = GitMirror(work / "ledger.yml", GIT)
    assert same.start(local) is None and same.base is local
    (work / "ledger.yml").write_text(dump({}))  # the checkout's file lags behind the remote
    behind = GitMirror(work / "ledger.yml", GIT)
    remote = behind.start({})
    assert remote == posts and behind.base is remote


def test_commits_carry_the_users_identity_when_set_else_the_bots(repo, monkeypatch):
    """Never an identity git guessed from the host name: the user's when configured (environment
    or config), otherwise a bot's."""
    from mkdocs_syndicate.ledger.gitmirror import GitMirror

    bare, work = repo
    posts: dict = {}
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    bot = GitMirror(work / "ledger.yml", GIT)
    bot.start()
    bot.persist(posts, dump(posts), [], push=True)
    git("config", "user.name", "Ada Lovelace", cwd=work)
    git("config", "user.email", "ada@example.com", cwd=work)
    user = GitMirror(work / "ledger.yml", GIT)
    user.start()
    user.persist(posts, dump(posts) + "# again\n", [], push=True)
    authors = git("log", "-2", "--format=%an <%ae>|%cn <%ce>", "main", cwd=bare).splitlines()
    assert authors == [
        "Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>",
        "mkdocs-syndicate <mkdocs-syndicate@users.noreply.github.com>|"
        "mkdocs-syndicate <mkdocs-syndicate@users.noreply.github.com>",
    ], authors


def test_a_shallow_checkout_pushes_and_handles_a_race(repo, sandbox, tmp_path):
    """actions/checkout clones one commit deep unless told otherwise: the ledger's commits build on
    that tip, and a lost race fetches and merges onto the new tip just the same."""
    bare, work = repo
    for n in range(3):  # some history the shallow clones do not have
        (work / f"page-{n}.md").write_text(f"# {n}\n")
        git("add", ".", cwd=work)
        git("commit", "--quiet", "-m", f"page {n}", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    first, second = (tmp_path / "shallow-1", tmp_path / "shallow-2")
    for target in (first, second):
        git("clone", "--quiet", "--depth", "1", "-b", "main", f"file://{bare}", str(target), cwd=tmp_path)
        assert git("rev-parse", "--is-shallow-repository", cwd=target).strip() == "true"
    assert not run(first, {"masto": mastodon_raw(sandbox)}, [make_post(1)]).undone
    # The second checkout is stale: its first push is refused, it fetches (shallow) and merges.
    assert not run(second, {"ping": indexnow_raw(sandbox)}, [make_post(2)]).undone
    pushed = parse(remote_ledger(bare), "remote")
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()} == {
        ("blog/post-1/", "masto"): "done",
        ("blog/post-2/", "ping"): "done",
    }
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
    log = git("log", "--format=%s", "main", cwd=bare)
    assert "syndicate: this run's records on top of another run's" in log, log  # the race was lost, then merged


def test_a_stale_checkout_loses_its_first_push_and_takes_the_pushed_ledger_sending_nothing(repo, sandbox, tmp_path):
    """No fetch at the start: the checkout's view of the remote is trusted until a push says
    otherwise, and the first push comes before the first at-most-once request."""
    bare, work = repo
    stale = clone(bare, tmp_path / "stale")
    posts = [make_post(1)]
    assert not run(work, {"masto": mastodon_raw(sandbox)}, posts).undone
    requests = len(sandbox.requests())
    report = run(stale, {"masto": mastodon_raw(sandbox)}, posts)
    assert report.results == [] and not report.undone  # the other run finished it: nothing to say
    assert len(sandbox.requests()) == requests and len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
    assert Ledger.read(stale / "ledger.yml").record("blog/post-1/", "masto").state == "done"
    assert git("rev-parse", "HEAD", cwd=stale) == git("rev-parse", "main", cwd=bare)


def test_a_push_refused_for_another_reason_stops_before_any_remote_call(repo, sandbox):
    bare, work = repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch: https://user:s3cret@example.com/x' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LedgerWriteError) as caught:
        run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1), make_post(2)])
    assert "git push to origin/main failed" in str(caught.value) and "s3cret" not in str(caught.value)
    assert sandbox.requests() == []


def test_a_hooks_escape_sequences_are_shown_escaped_never_sent_to_the_terminal(repo, sandbox):
    """A remote's hook prints what it likes (`remote: ...` lines): colour codes, a title change,
    a screen clear. Our message quotes it with each control character escaped."""
    bare, work = repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nprintf 'denied \\033[2J\\033]0;owned\\007 \\033[31mred\\n' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LedgerWriteError) as caught:
        run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1)])
    shown = str(caught.value)
    assert "denied \\x1b[2J\\x1b]0;owned\\x07 \\x1b[31mred" in shown, shown
    assert not any(ch in shown for ch in "\x1b\x07"), shown


def test_a_push_refused_mid_run_sends_nothing_further(repo, sandbox):
    """The remote starts refusing at the second push (done for post 1, in_flight for post 2): the
    lanes waiting for it send nothing, and no lane sends anything after it."""
    bare, work = repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        f"#!/bin/sh\ncat >/dev/null\necho push >> '{bare}/pushes'\n"
        f"[ $(wc -l < '{bare}/pushes') -ge 2 ] && {{ echo 'protected branch' >&2; exit 1; }}\nexit 0\n"
    )
    hook.chmod(0o755)
    with pytest.raises(LedgerWriteError) as caught:
        run(work, every_channel(sandbox), [make_post(1), make_post(2), make_post(3)])
    assert "protected branch" in str(caught.value)
    state = sandbox.snapshot()
    from crashsite import remote

    for emulator in ("mastodon", "forem", "weibo", "bluesky"):
        assert len(remote(state, emulator)) == 1, emulator  # post 1 only
    pushed = parse(remote_ledger(bare), "remote")
    assert {c: r.state for c, r in pushed["blog/post-1/"].channels.items() if c != "ping"} == {
        "masto": "in_flight",
        "devto": "in_flight",
        "weibo": "in_flight",
        "bsky": "in_flight",
    }
    assert all(set(pushed[k].channels) <= {"ping"} for k in ("blog/post-2/", "blog/post-3/") if k in pushed)


def test_a_push_race_on_other_pairs_is_reapplied_on_the_new_tip(repo, sandbox, tmp_path):
    """Another writer pushes in between (a pair of theirs): our transitions go on top of theirs."""
    bare, work = repo
    other = clone(bare, tmp_path / "other")
    first = True

    class Interloper(httpx.AsyncBaseTransport):
        inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            nonlocal first
            if first and request.method == "POST":
                first = False  # someone else's run lands between our in_flight push and our done push
                import concurrent.futures

                with concurrent.futures.ThreadPoolExecutor(1) as pool:  # its own event loop
                    other_run = pool.submit(run, other, {"ping": indexnow_raw(sandbox)}, [make_post(9)])
                    assert not other_run.result().undone
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    report = run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1)], transport=Interloper())
    assert not report.undone, report.results
    pushed = parse(remote_ledger(bare), "remote")
    assert pushed["blog/post-1/"].channels["masto"].state == "done"
    assert pushed["blog/post-9/"].channels["ping"].state == "done"
    assert parse((work / "ledger.yml").read_text(), "local") == pushed


def test_another_run_taking_a_pair_of_this_plan_makes_the_plan_stale(repo, sandbox, tmp_path):
    """Regression: a push merged onto another run's ledger brought in their record of a pair that a
    lane of ours was about to send (its in_flight not written yet, DEV's pacing), and the lane then
    built on their record. A pair of this run's plan that they changed makes the plan stale: the
    run re-plans and leaves the pair to them."""
    bare, work = repo
    other = clone(bare, tmp_path / "other")
    first = True
    devto = {
        "type": "forem",
        "api": sandbox.url + "/forem/api",
        "api_key": "sandbox-forem-api-key",
        "min_interval": 0.5,
    }

    class Interloper(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request):
            nonlocal first
            if first and request.method == "POST" and request.url.path.endswith("/api/v1/statuses"):
                first = False  # while our DEV lane waits out its pacing, they send post 2 to DEV
                import concurrent.futures

                with concurrent.futures.ThreadPoolExecutor(1) as pool:
                    other_run = pool.submit(run, other, {"devto": {**devto, "min_interval": 0}}, [make_post(2)])
                    assert not other_run.result().undone
            return await forward(request)

    report = run(
        work, {"masto": mastodon_raw(sandbox), "devto": devto}, [make_post(1), make_post(2)], transport=Interloper()
    )
    assert not any("unexpected error" in r.detail for r in report.results), report.results
    assert sorted(a["title"] for a in sandbox.snapshot()["forem"]["articles"]) == ["Post 1", "Post 2"]
    pushed = parse(remote_ledger(bare), "remote")
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()} == {
        ("blog/post-1/", "masto"): "done",
        ("blog/post-2/", "masto"): "done",
        ("blog/post-1/", "devto"): "done",
        ("blog/post-2/", "devto"): "done",
    }
    # The report is the ledger as pushed: one line per pair, none "not attempted" that is done
    # (it said both, and exited 1 with all done).
    said = [(r.post_key, r.channel) for r in report.results]
    assert len(said) == len(set(said)), report.results
    assert not report.undone, report.results


def test_two_runs_claiming_a_pair_with_identical_in_flight_records_send_it_once(repo, sandbox, tmp_path):
    """Regression: the three-way merge took two equal in_flight records (same second, same text,
    no key: DEV) for one change, so the run whose push was refused merged, pushed and sent too: a
    duplicate article. Two in_flight records are two claims; only the pushed one sends."""
    import concurrent.futures

    from conftest import FakeClock

    bare, work = repo
    other = clone(bare, tmp_path / "other")
    devto = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0}
    start = float(int(time.time()))
    b_report = None

    class OtherRunFirst(httpx.AsyncBaseTransport):
        """A's in_flight is pushed and its create is leaving: B (same second, same post) runs now."""

        async def handle_async_request(self, request):
            nonlocal b_report
            if b_report is None and request.method == "POST":
                with concurrent.futures.ThreadPoolExecutor(1) as pool:  # its own event loop
                    b_report = pool.submit(run, other, {"devto": devto}, [make_post(1)], FakeClock(start)).result()
            return await forward(request)

    report = run(work, {"devto": devto}, [make_post(1)], FakeClock(start), transport=OtherRunFirst())
    assert b_report is not None
    assert len(sandbox.snapshot()["forem"]["articles"]) == 1, sandbox.snapshot()["forem"]["articles"]
    assert [(r.post_key, r.state) for r in report.results] == [("blog/post-1/", "done")], report.results
    assert not any(r.detail == "sent" for r in b_report.results), b_report.results
    assert parse(remote_ledger(bare), "remote")["blog/post-1/"].channels["devto"].state == "done"


def test_the_end_of_run_push_that_loses_a_race_takes_theirs_like_any_other(repo, sandbox, tmp_path, monkeypatch):
    """Regression (found by the racing test, about every other run): run A loses a race to run B
    (B took post 2 of A's plan), takes B's ledger and re-plans: nothing left to send. A's records
    (post 1 done) still need their push, and B pushes its post 2 `done` just before it. That push
    raised StaleLedger out of the run (exit 2): the empty round still claimed the first round's
    pairs, and the push sat outside the race handling. Now it merges and pushes."""
    import concurrent.futures
    import threading

    from mkdocs_syndicate import checkpoints

    bare, work = repo
    other = clone(bare, tmp_path / "other")
    masto = mastodon_raw(sandbox, min_interval=0)
    b_sent, release_b = threading.Event(), threading.Event()
    pool = concurrent.futures.ThreadPoolExecutor(1)  # B: its own thread, its own event loop
    b_run: concurrent.futures.Future | None = None
    main = threading.current_thread()
    final_push_raced = []

    class HeldB(httpx.AsyncBaseTransport):
        """B's create leaves only when A's last push is about to go."""

        async def handle_async_request(self, request):
            if request.method == "POST":
                b_sent.set()
                release_b.wait(30)
            return await forward(request)

    class StartsB(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request):
            nonlocal b_run
            if b_run is None and request.method == "POST":  # A's post 1 is out: B takes post 2
                b_run = pool.submit(run, other, {"masto": masto}, [make_post(2)], transport=HeldB())
                assert b_sent.wait(30), "B never sent"
            return await forward(request)

    hit = checkpoints.hit

    def at_checkpoint(name: str) -> None:
        # A's end-of-run push is the only commit made in the test's own thread (group flushes run
        # in worker threads, B in its own): B finishes first, so that push loses the race.
        if name == "git.committed" and threading.current_thread() is main and b_run is not None:
            release_b.set()
            assert not b_run.result(30).undone
            final_push_raced.append(True)
        hit(name)

    monkeypatch.setattr(checkpoints, "hit", at_checkpoint)
    try:
        report = run(work, {"masto": masto}, [make_post(1), make_post(2)], transport=StartsB())
    finally:
        release_b.set()
        pool.shutdown()
    assert final_push_raced, "the end-of-run push never happened"
    statuses = sandbox.snapshot()["mastodon"]["statuses"]
    assert len(statuses) == 2, statuses  # post 1 by A, post 2 by B: none twice
    pushed = parse(remote_ledger(bare), "remote")
    assert {k: e.channels["masto"].state for k, e in pushed.items()} == {"blog/post-1/": "done", "blog/post-2/": "done"}
    log = git("log", "--format=%s", "main", cwd=bare).splitlines()
    assert "on top of another run's" in log[0], log
    assert {(r.post_key, r.state) for r in report.results} >= {("blog/post-1/", "done")}, report.results


# ------------------------------------------------------------------ real processes


class GitScenario(Scenario):
    """A crashlab scenario whose ledger lives in a clone of a bare repository, pushed per transition."""

    work: Path

    def __post_init__(self) -> None:
        super().__post_init__()
        self.bare = make_remote(self.folder)
        self.clones = 0
        self.fresh_clone()

    def fresh_clone(self) -> Path:
        """Container death: the old work tree is gone; all that is left is what was pushed."""
        self.clones += 1
        if hasattr(self, "work"):
            # Moved out of sight as a dead container's disk is, not deleted: a git the SIGKILLed run
            # started outlives it and may still be writing there (rmtree then failed under load:
            # "Directory not empty: '.git'").
            self.work.rename(self.folder / f"dead{self.clones}")
        self.work = clone(self.bare, self.folder / f"work{self.clones}")
        spec = json.loads((self.folder / "spec.json").read_text())
        spec["ledger"] = str(self.work / "ledger.yml")
        spec["git"] = {"commit": True, "push": True, "branch": "main"}
        (self.folder / "spec.json").write_text(json.dumps(spec))
        return self.work

    def start(self, **env: str):
        return super().start(**GIT_ENV, **env)

    def check(self) -> None:
        text = remote_ledger(self.bare)
        assert text is not None
        (self.folder / "ledger.yml").write_text(text)  # crashlab checks the ledger there
        super().check()


# A clean run of this scenario (3 posts × 5 channels) pushes 4 groups: the in_flight records of
# post one; done(one) with in_flight(two); done(two) with in_flight(three); done(three).
CONTAINER_DEATHS = [
    "ledger.replaced:1",
    "git.committed:1",
    "after_in_flight_write:1",
    "after_in_flight_write:3",
    "after_response:2",
    "before_done_write:4",
    "after_done_write:5",
    "ledger.tmp_fsynced:2",
    "after_in_flight_write:9",
    "after_response:11",
]


@pytest.mark.crash
@pytest.mark.parametrize(
    ("kill_at", "hostile"), [(kill_at, SAME_PATH[n % len(SAME_PATH)]) for n, kill_at in enumerate(CONTAINER_DEATHS)]
)
def test_container_death_then_a_fresh_clone_reruns_with_no_duplicate_and_no_miss(tmp_path, kill_at, hostile):
    """Against plain servers and hostile ones in turn: a Mastodon that ignores the idempotency key,
    one that answers a replayed key with 500, and slow commits."""
    scenario = GitScenario(tmp_path / "s", hostile)
    try:
        code, output = scenario.run(SYNDICATE_CRASH_AT=kill_at)
        assert code == -signal.SIGKILL, output
        scenario.at_most_once_holds()
        scenario.fresh_clone()
        scenario.recovers()
        STATS["git container deaths"] += 1
    finally:
        scenario.close()


def pushed_in_flight(scenario: GitScenario, last_push_only: bool = False) -> tuple[list[str], list[str]]:
    """The at-most-once pairs the pushed ledger holds in_flight (with last_push_only: those the
    last push brought), split into those whose post the emulator has (the request went out) and
    those it has not."""
    from crashlab import AT_MOST_ONCE
    from crashsite import remote

    text = remote_ledger(scenario.bare)
    assert text is not None
    before = (
        subprocess.run(
            ["git", "--git-dir", str(scenario.bare), "show", "main~1:ledger.yml"], capture_output=True, text=True
        ).stdout
        if last_push_only
        else ""
    )
    earlier = parse(before, "remote~1") if before else {}
    scenario.server.wait_idle(timeout=30)  # what reached the server before the kill is visible
    state = scenario.server.snapshot()
    sent: list[str] = []
    unsent: list[str] = []
    for key, entry in parse(text, "remote").items():
        for channel, record in entry.channels.items():
            was = earlier.get(key).channels.get(channel) if key in earlier else None
            if channel in AT_MOST_ONCE and record.state == "in_flight" and not (last_push_only and was == record):
                held = [url for _, url in remote(state, AT_MOST_ONCE[channel])]
                (sent if f"https://example.com/{key}" in held else unsent).append(f"({key}, {channel})")
    return sent, unsent


# Kills at the two git checkpoints, each checked for where it landed: right after a group's push
# (its in_flight records are on the remote, none of their requests left: the rerun reads after the
# settle time, finds nothing and sends each once), and with a group committed but not pushed (the
# requests went out, their done records did not reach the remote: the rerun reads each back).
GROUP_KILLS = [
    ("git.pushed", group, "pushed, request not sent", "between a group's push and its requests") for group in (1, 2, 3)
] + [("git.committed", group, "sent, done not pushed", "between responses and their done push") for group in (2, 3, 4)]


@pytest.mark.crash
@pytest.mark.parametrize(("checkpoint", "group", "landing", "window"), GROUP_KILLS)
def test_container_death_around_a_groups_push(tmp_path, checkpoint, group, landing, window):
    scenario = GitScenario(tmp_path / "s")
    try:
        code, output = scenario.run(SYNDICATE_CRASH_AT=f"{checkpoint}:{group}")
        assert code == -signal.SIGKILL, output
        if checkpoint == "git.pushed":  # this group's in_flight records are out; not one request
            sent, unsent = pushed_in_flight(scenario, last_push_only=True)
            landed = unsent
            assert unsent and not sent, (sent, unsent)  # where the kill landed
        else:  # requests went out whose done records are only in the unpushed commit (a lane still
            # waiting for its answer may hold an in_flight whose request never arrived)
            sent, unsent = pushed_in_flight(scenario)
            landed = sent
            assert sent, (sent, unsent)  # where the kill landed
        print(f"killed at {checkpoint}:{group}: in_flight {landing}: {', '.join(landed)}")
        scenario.fresh_clone()
        scenario.recovers()
        STATS[f"git kills {window}"] += 1
    finally:
        scenario.close()


@pytest.mark.crash
@pytest.mark.parametrize("action", ["kill_before", "kill_after"])
def test_container_death_around_the_servers_commit(tmp_path, action):
    scenario = GitScenario(tmp_path / "s")
    try:
        process = scenario.start()
        scenario.server.add_fault({"channel": "forem", "action": action, "pid": process.pid})
        out, err = process.communicate(timeout=120)
        assert process.returncode == -signal.SIGKILL, out + err
        scenario.fresh_clone()
        scenario.recovers()
        STATS["git container deaths"] += 1
    finally:
        scenario.close()


@pytest.mark.crash
@pytest.mark.parametrize("seed", range(int(os.environ.get("SYNDICATE_RACE_SEEDS", "4"))))
def test_two_runners_racing_on_one_ledger_never_post_a_pair_twice(tmp_path, seed):
    scenario = GitScenario(tmp_path / "s")
    jitter = random.Random(seed)
    scenario.server.latency = lambda: jitter.uniform(0, 0.02)
    try:
        spec = json.loads((scenario.folder / "spec.json").read_text())
        second = clone(scenario.bare, scenario.folder / "racer")
        spec["ledger"] = str(second / "ledger.yml")
        (scenario.folder / "racer.json").write_text(json.dumps(spec))
        first = scenario.start()
        from forkserver import ForkedChild

        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")}
        racer = ForkedChild(scenario.folder / "racer.json", {**env, **GIT_ENV})
        outputs = [p.communicate(timeout=120) for p in (first, racer)]
        assert {first.returncode, racer.returncode} <= {0, 1}, outputs
        if any(out.count(" pending\n") > 5 for out, _ in outputs):  # lanes started again: a re-plan
            STATS["git races lost and re-planned"] += 1
        scenario.at_most_once_holds()
        scenario.fresh_clone()
        scenario.recovers()
        STATS["git races"] += 1
    finally:
        scenario.close()


def test_the_plugin_pushes_the_ledger_from_a_ci_build(repo, sandbox):
    from sites import mkdocs, post, write_site

    bare, work = repo
    config = write_site(
        work,
        {
            "git": {"push": True},
            "channels": {"masto": mastodon_raw(sandbox), "ping": indexnow_raw(sandbox, key="site-key-1234")},
        },
        {"a.md": post("Alpha"), "b.md": post("Beta", "2026-11-21")},
    )
    sandbox.key_file_root = work / "site"
    (work / ".gitignore").write_text("site/\n.syndicate-cache/\n*.yml.lock\n")
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "site", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    result = mkdocs(config, env={"CI": "true", **GIT_ENV})
    assert result.returncode == 0, result.stderr
    pushed = parse(remote_ledger(bare), "remote")
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()} == {
        ("posts/a/", "masto"): "done",
        ("posts/a/", "ping"): "done",
        ("posts/b/", "masto"): "done",
        ("posts/b/", "ping"): "done",
    }
    assert git("status", "--porcelain", cwd=work).strip() == ""


@pytest.mark.parametrize("push_dies", [False, True], ids=["push-lands", "push-dies"])
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_while_the_in_flight_is_pushed_records_that_nothing_was_sent(repo, sandbox, signum, code, push_dies):
    """GitHub cancels a job with SIGINT first (docker and Kubernetes send SIGTERM); the run stops
    the same way for both. Lanes interrupted while their in_flight was on its
    way to the remote never sent: the run records `failed` (pushed), not a bare in_flight that
    would cost the next run a settle wait and a read. The next run sends them, reading nothing.
    When the push dies too (a Ctrl-C in a terminal reaches `git push` as well), nothing of the
    in_flight was pushed and the run says pending: the local file says so too, not in_flight
    (issue 36)."""
    from sites import command, mkdocs, post, write_site

    bare, work = repo
    config = write_site(
        work,
        {
            "mode": "plan",
            "git": {"push": True},
            "channels": {
                "masto": mastodon_raw(sandbox, min_interval=0),
                "devto": {
                    "type": "forem",
                    "api": sandbox.url + "/forem/api",
                    "api_key": "sandbox-forem-api-key",
                    "min_interval": 0,
                },
            },
        },
        {"a.md": post("Alpha")},
    )
    (work / ".gitignore").write_text("site/\n.syndicate-cache/\n*.yml.lock\n")
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "site", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    assert mkdocs(config, env=GIT_ENV).returncode == 0  # plan: saves the posts for `run`
    started = bare / "push-started"
    hook = bare / "hooks" / "pre-receive"  # the first push hangs, as a slow remote would
    finished = bare / "push-finished"
    outcome = "exit 1" if push_dies else "true"
    hook.write_text(
        f"#!/bin/sh\ncat >/dev/null\n"
        f"if [ ! -e '{started}' ]; then touch '{started}'; sleep 3; touch '{finished}'; {outcome}; fi\n"
    )
    hook.chmod(0o755)
    run_ = command(config, "run", env=GIT_ENV)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists(), "the first push never started"
        run_.send_signal(signum)
        landed = not finished.exists()
        print(f"{signal.Signals(signum).name} landed {'during' if landed else 'AFTER'} the first (in_flight) push")
        assert landed
        _, err = run_.communicate(timeout=60)
    finally:
        if run_.poll() is None:
            run_.kill()
    assert run_.returncode == code, err
    state = sandbox.snapshot()
    assert state["mastodon"]["statuses"] == [] and state["forem"]["articles"] == []
    local = parse((work / "ledger.yml").read_text(), "local").get("posts/a/")
    if push_dies:
        assert "(posts/a/, masto) pending" in err and "(posts/a/, devto) pending" in err, err
        assert remote_ledger(bare) is None
        assert local is None or not {"masto", "devto"} & set(local.channels), dump({"posts/a/": local})
    else:
        assert "(posts/a/, masto) failed" in err and "(posts/a/, devto) failed" in err, err
        pushed = parse(remote_ledger(bare), "remote")["posts/a/"].channels
        assert {c: (r.state, r.error) for c, r in pushed.items()} == {
            c: ("failed", "interrupted before the request was sent (the next run sends it)") for c in ("masto", "devto")
        }
        assert local is not None and local.channels == pushed

    requests = len(sandbox.requests())
    again = command(config, "run", env=GIT_ENV)
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert [r["method"] for r in sandbox.requests()[requests:]] == ["POST", "POST"]  # no read first
    assert {c: r.state for c, r in parse(remote_ledger(bare), "remote")["posts/a/"].channels.items()} == {
        "masto": "done",
        "devto": "done",
    }


def test_a_bad_git_setting_is_named(tmp_path, sandbox):
    from sites import mkdocs, post, write_site

    config = write_site(
        tmp_path, {"git": {"push": "yes"}, "channels": {"masto": mastodon_raw(sandbox)}}, {"a.md": post("Alpha")}
    )
    result = mkdocs(config)
    # `git` is a SubConfig: MkDocs reports it with the other schema errors, named by its path.
    assert result.returncode == 1 and "Plugin 'syndicate' option 'git.push': must be true or false" in result.stderr


def test_commit_without_push_keeps_every_transition_as_a_local_commit(repo, sandbox):
    bare, work = repo
    remote_before = git("rev-parse", "main", cwd=bare)
    report = run(
        work, {"masto": mastodon_raw(sandbox)}, [make_post(1)], git_settings=GitSettings(commit=True, push=False)
    )
    assert not report.undone
    log = git("log", "--format=%s", "HEAD", cwd=work).splitlines()
    assert log[:2] == [
        "syndicate: masto done for blog/post-1/ [skip ci]",
        "syndicate: masto in_flight for blog/post-1/ [skip ci]",
    ]
    assert git("rev-parse", "main", cwd=bare) == remote_before  # nothing pushed
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work).strip() == ""


@pytest.mark.parametrize("body", [b"<html>gateway</html>", b'{"did": 42}', b""])
def test_a_garbage_login_while_the_in_flight_is_pushed_posts_nothing_and_the_next_run_posts_once(repo, sandbox, body):
    """Bluesky logs in while its in_flight record is being pushed (warm_up). A login answered with
    200 and garbage proves nothing was posted: the pair is failed as never sent, and the lane stops
    for the run (another login would meet the same answer); the next run logs in and posts once."""
    bare, work = repo
    bsky = every_channel(sandbox)["bsky"]
    sandbox.add_fault(
        {"channel": "bluesky", "action": "status", "status": 200, "body": body.decode(), "match": "createSession"}
    )
    report = run(work, {"bsky": bsky}, [make_post(1)])
    assert [r.state for r in report.results] == ["failed"], report.results
    report = run(work, {"bsky": bsky}, [make_post(1)])
    assert not report.undone, report.results
    assert len(sandbox.snapshot()["bluesky"]["records"]) == 1
    assert [r["path"].rsplit("/", 1)[1] for r in sandbox.requests("bluesky")] == [
        "com.atproto.server.createSession",
        "com.atproto.server.createSession",
        "com.atproto.repo.putRecord",
    ]
    record = parse(remote_ledger(bare), "remote")["blog/post-1/"].channels["bsky"]
    # The garbage login's request never left: only the send that went out counts.
    assert record.state == "done" and record.attempts == 1


def test_a_block_style_ledger_on_the_remote_is_pushed_back_canonical_once(repo, sandbox, tmp_path):
    """Issue 36: a YAML formatter rewrote the pushed ledger in block style; git mode starts from the
    remote's ledger and writes only on a change, so every run paid the full parser (10,000 posts:
    10 s, 494 MB). The first run puts it back in the canonical layout: one commit, one push."""
    import yaml

    bare, work = repo
    channels = {"masto": mastodon_raw(sandbox)}
    assert not run(work, channels, [make_post(1)]).undone
    canonical = remote_ledger(bare)
    formatter = clone(bare, tmp_path / "formatter")
    block = yaml.safe_dump(yaml.safe_load(canonical), sort_keys=False) + "...\n"
    (formatter / "ledger.yml").write_text(block)
    git("commit", "--quiet", "-am", "format YAML", cwd=formatter)
    git("push", "--quiet", "origin", "HEAD:main", cwd=formatter)
    counter = count_pushes(bare)

    ci = clone(bare, tmp_path / "ci")  # a fresh checkout, as in CI
    report = run(ci, channels, [make_post(1)])
    assert report.results == []
    assert remote_ledger(bare) == canonical == (ci / "ledger.yml").read_text()
    assert report.notes == ["ledger.yml was not in the canonical layout: rewritten (no record changed)"]
    assert pushes(counter) == 1
    log = git("log", "--format=%s", "main", cwd=bare).splitlines()
    assert log[0] == "syndicate: ledger.yml in the canonical layout (no record changed) [skip ci]", log
    assert git("status", "--porcelain", "--untracked-files=no", cwd=ci).strip() == ""

    again = run(clone(bare, tmp_path / "ci2"), channels, [make_post(1)])
    assert again.notes == [] and pushes(counter) == 1  # once


def test_a_refused_push_leaves_no_unpushed_in_flight_in_the_local_file(repo, sandbox):
    """Issue 36: the local file got the in_flight records, then their push was refused; the
    requests never left and the run said so, but the file said in_flight, so a later run on it
    would wait a settle time and read for nothing. It says what the run said: no record."""
    bare, work = repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LedgerWriteError):
        run(work, every_channel(sandbox), [make_post(1)])
    creates = [r for r in sandbox.requests() if any(r["path"].endswith(path) for path in CREATES.values())]
    assert creates == []  # (a login may have gone out while the push was tried)
    local = parse((work / "ledger.yml").read_text(), "local") if (work / "ledger.yml").exists() else {}
    assert all(r.state != "in_flight" for e in local.values() for r in e.channels.values()), dump(local)
    assert remote_ledger(bare) is None  # nothing was pushed
