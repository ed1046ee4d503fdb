"""The ledger kept in git for CI, against a local bare repository as the remote: in_flight pushed
before every at-most-once call, container death (kill, wipe the work tree, clone again, rerun)
with no duplicate and no miss, two runners racing on one ledger never posting a pair twice, and
push failures that stop the run before any further remote call."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from conftest import SITE, ListReporter, indexnow_raw, make_post, mastodon_raw
from crashlab import STATS, Scenario

from mkdocs_syndicate.engine.options import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import LedgerWriteError
from mkdocs_syndicate.ledger.format import parse
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **GIT_ENV})
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
    result = subprocess.run(["git", "--git-dir", str(bare), "show", "main:ledger.yml"],
                            capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


GIT = GitSettings(commit=True, push=True, branch="main")


def run(work: Path, channels: dict, posts, clock=None, transport=None, git_settings=GIT):
    opts = parse_options(channels, ledger_path=work / "ledger.yml", site=SITE, sandbox=False, sending=True,
                         git=git_settings)
    return send(opts, posts, ListReporter(), clock=clock, transport=transport)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    bare = make_remote(tmp_path)
    return bare, clone(bare, tmp_path / "work")


class PushedBeforeSend(httpx.AsyncBaseTransport):
    """Real HTTP; on every create, the pushed ledger must already hold that post in_flight."""

    def __init__(self, bare: Path) -> None:
        self.bare = bare
        self.inner = httpx.AsyncHTTPTransport()
        self.checked: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/api/v1/statuses"):
            text = remote_ledger(self.bare)
            assert text is not None, "nothing pushed before the POST"
            posts = parse(text, "remote")
            in_flight = [k for k, e in posts.items() if e.channels.get("masto") and
                         e.channels["masto"].state == "in_flight"]
            assert len(in_flight) == 1, posts
            self.checked.append(in_flight[0])
        return await self.inner.handle_async_request(request)


def test_in_flight_is_pushed_before_each_post_and_every_transition_is_a_commit(repo, sandbox):
    bare, work = repo
    config_before = (work / ".git" / "config").read_bytes()
    transport = PushedBeforeSend(bare)
    posts = [make_post(1), make_post(2)]
    report = run(work, {"masto": mastodon_raw(sandbox), "ping": indexnow_raw(sandbox)}, posts,
                 transport=transport)
    assert not report.undone, report.results
    assert transport.checked == ["blog/post-1/", "blog/post-2/"]
    assert remote_ledger(bare) == (work / "ledger.yml").read_text()
    log = git("log", "--format=%s", "main", cwd=bare).splitlines()
    assert log[0].startswith("syndicate: masto done for blog/post-2/") and all("[skip ci]" in m for m in log[:-1])
    assert "syndicate: masto in_flight for blog/post-1/ [skip ci]" in log
    assert (work / ".git" / "config").read_bytes() == config_before  # no credential, no remote change
    # the checkout followed: HEAD is the pushed tip and the ledger is clean
    assert git("rev-parse", "HEAD", cwd=work) == git("rev-parse", "main", cwd=bare)
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work).strip() == ""


def test_a_stale_checkout_starts_from_the_pushed_ledger(repo, sandbox, tmp_path):
    bare, work = repo
    stale = clone(bare, tmp_path / "stale")
    posts = [make_post(1)]
    assert not run(work, {"masto": mastodon_raw(sandbox)}, posts).undone
    report = run(stale, {"masto": mastodon_raw(sandbox)}, posts)
    assert report.results == [] and len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
    assert Ledger.read(stale / "ledger.yml").record("blog/post-1/", "masto").state == "done"


def test_a_push_refused_for_another_reason_stops_before_any_remote_call(repo, sandbox):
    bare, work = repo
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch: https://user:s3cret@example.com/x' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LedgerWriteError) as caught:
        run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1), make_post(2)])
    assert "git push to origin/main failed" in str(caught.value) and "s3cret" not in str(caught.value)
    assert sandbox.requests() == []


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

    report = run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1)], transport=Interloper())
    assert not report.undone, report.results
    pushed = parse(remote_ledger(bare), "remote")
    assert pushed["blog/post-1/"].channels["masto"].state == "done"
    assert pushed["blog/post-9/"].channels["ping"].state == "done"
    assert parse((work / "ledger.yml").read_text(), "local") == pushed


# ------------------------------------------------------------------ real processes

class GitScenario(Scenario):
    """A crashlab scenario whose ledger lives in a clone of a bare repository, pushed per transition."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.bare = make_remote(self.folder)
        self.clones = 0
        self.fresh_clone()

    def fresh_clone(self) -> Path:
        """Container death: the old work tree is gone; all that is left is what was pushed."""
        self.clones += 1
        if hasattr(self, "work"):
            shutil.rmtree(self.work)
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


CONTAINER_DEATHS = ["ledger.replaced:1", "after_in_flight_write:1", "after_in_flight_write:3",
                    "after_response:2", "before_done_write:4", "after_done_write:5", "ledger.tmp_fsynced:7",
                    "after_in_flight_write:9", "after_response:11"]


@pytest.mark.crash
@pytest.mark.parametrize("kill_at", CONTAINER_DEATHS)
def test_container_death_then_a_fresh_clone_reruns_with_no_duplicate_and_no_miss(tmp_path, kill_at):
    scenario = GitScenario(tmp_path / "s")
    try:
        code, output = scenario.run(SYNDICATE_CRASH_AT=kill_at)
        assert code == -signal.SIGKILL, output
        scenario.at_most_once_holds()
        scenario.fresh_clone()
        scenario.recovers()
        STATS["git container deaths"] += 1
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
@pytest.mark.parametrize("seed", range(4))
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
    config = write_site(work, {"git": {"push": True}, "channels": {
        "masto": mastodon_raw(sandbox), "ping": indexnow_raw(sandbox, key="site-key-1234")}},
        {"a.md": post("Alpha"), "b.md": post("Beta", "2026-11-21")})
    sandbox.key_file_root = work / "site"
    (work / ".gitignore").write_text("site/\n.syndicate-cache/\n*.yml.lock\n")
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "site", cwd=work)
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    result = mkdocs(config, env={"CI": "true", **GIT_ENV})
    assert result.returncode == 0, result.stderr
    pushed = parse(remote_ledger(bare), "remote")
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()} == {
        ("posts/a/", "masto"): "done", ("posts/a/", "ping"): "done",
        ("posts/b/", "masto"): "done", ("posts/b/", "ping"): "done"}
    assert git("status", "--porcelain", cwd=work).strip() == ""


def test_a_bad_git_setting_is_named(tmp_path, sandbox):
    from sites import mkdocs, post, write_site

    config = write_site(tmp_path, {"git": {"push": "yes"}, "channels": {"masto": mastodon_raw(sandbox)}},
                        {"a.md": post("Alpha")})
    result = mkdocs(config)
    assert result.returncode == 1 and "plugins.syndicate.git.push: must be true or false" in result.stderr


def test_commit_without_push_keeps_every_transition_as_a_local_commit(repo, sandbox):
    bare, work = repo
    remote_before = git("rev-parse", "main", cwd=bare)
    report = run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1)],
                 git_settings=GitSettings(commit=True, push=False))
    assert not report.undone
    log = git("log", "--format=%s", "HEAD", cwd=work).splitlines()
    assert log[:2] == ["syndicate: masto done for blog/post-1/ [skip ci]",
                       "syndicate: masto in_flight for blog/post-1/ [skip ci]"]
    assert git("rev-parse", "main", cwd=bare) == remote_before  # nothing pushed
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work).strip() == ""
