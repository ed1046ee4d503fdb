"""The plugin inside real `mkdocs` processes, against the loopback emulators."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import httpx
import pytest
from conftest import site_channels
from sites import ROOT, mkdocs, post, write_site

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process


@pytest.fixture
def site(tmp_path, sandbox):
    def make(plugin=None, posts=None, **kwargs):
        config = write_site(
            tmp_path / "site",
            {"channels": site_channels(sandbox), **(plugin or {})},
            posts or {"a.md": post("First"), "b.md": post("Second", "2026-11-21")},
            **kwargs,
        )
        sandbox.key_file_root = config.parent / "site"
        return config

    return make


def statuses(sandbox):
    return sandbox.snapshot()["mastodon"]["statuses"]


def test_local_build_plans_and_touches_nothing(site, sandbox):
    config = site()
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    assert "plan (mode auto: not in CI" in result.stderr and "would send posts/a/" in result.stderr
    assert not (config.parent / "ledger.yml").exists() and sandbox.requests() == []
    assert (config.parent / "site" / "site-key-1234.txt").read_text() == "site-key-1234"


def test_ci_build_sends_then_a_second_build_sends_nothing(site, sandbox):
    config = site()
    first = mkdocs(config, env={"CI": "true"})
    assert first.returncode == 0, first.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert {(k, c): r.state for k, e in book.posts.items() for c, r in e.channels.items()} == {
        ("posts/a/", "masto"): "done",
        ("posts/a/", "ping"): "done",
        ("posts/b/", "masto"): "done",
        ("posts/b/", "ping"): "done",
    }
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["First", "Second"]
    before, requests = (config.parent / "ledger.yml").read_text(), len(sandbox.requests())
    second = mkdocs(config, env={"CI": "true"})
    assert second.returncode == 0 and "0 requests" in second.stderr
    assert (config.parent / "ledger.yml").read_text() == before and len(sandbox.requests()) == requests


@pytest.mark.parametrize(
    "env", [{"CI": "true", "GITHUB_EVENT_NAME": "pull_request"}, {"CI": "true", "CI_MERGE_REQUEST_IID": "3"}]
)
def test_pull_request_builds_never_send(site, sandbox, env):
    result = mkdocs(site(), env=env)
    assert result.returncode == 0 and sandbox.requests() == []


def test_missing_token_in_send_mode_fails_the_build_naming_the_setting(site, sandbox, tmp_path):
    config = site({"mode": "send", "channels": site_channels(sandbox, token=None)})
    result = mkdocs(config)
    assert result.returncode == 1
    assert "plugins.syndicate.channels.masto.token: missing" in result.stderr
    assert sandbox.requests() == [] and not (config.parent / "ledger.yml").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"type": "myspace"}, "plugins.syndicate.channels.masto.type: unknown channel type"),
        ({"instance": "http://mastodon.example"}, "plugins.syndicate.channels.masto.instance:.*non-loopback"),
    ],
)
def test_bad_channel_settings_fail_the_build(site, sandbox, change, message):
    import re

    result = mkdocs(site({"mode": "send", "channels": {"masto": {**site_channels(sandbox)["masto"], **change}}}))
    assert result.returncode == 1 and re.search(message, result.stderr), result.stderr


def test_drafts_future_posts_since_and_opt_outs_are_not_announced(site, sandbox):
    config = site(
        {"mode": "send", "since": "2026-01-01"},
        posts={
            "ok.md": post("Announced"),
            "draft.md": post("Draft", draft=True),
            "future.md": post("Future", "2099-01-01"),
            "old.md": post("Old", "2025-06-01"),
            "optout.md": post("Opted out", syndicate=False),
            "notmasto.md": post("Ping only", syndicate={"masto": False}),
        },
    )
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert sorted(book.posts) == ["posts/notmasto/", "posts/ok/"]
    assert set(book.posts["posts/notmasto/"].channels) == {"ping"}
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["Announced"]


def test_posts_globs_select_pages_without_front_matter_flag(site, sandbox):
    config = site(
        {"mode": "send", "posts": ["posts/a.md"]},
        posts={"a.md": "---\ndate: 2026-11-20\n---\n# Globbed\n", "b.md": post("Not matched")},
    )
    assert mkdocs(config).returncode == 0
    assert sorted(Ledger.read(config.parent / "ledger.yml").posts) == ["posts/a/"]


def test_undone_work_exits_non_zero_and_names_the_pairs(site, sandbox):
    config = site({"mode": "send", "channels": site_channels(sandbox, token="not-the-right-one")})
    result = mkdocs(config)
    assert result.returncode == 1
    assert "pair(s) left undone" in result.stderr and "(posts/a/, masto) failed: credentials: 401" in result.stderr
    assert "(posts/b/, masto) not_attempted" in result.stderr
    assert "not-the-right-one" not in result.stderr + result.stdout
    assert "not-the-right-one" not in (config.parent / "ledger.yml").read_text()


def test_strict_failure_sends_nothing(site, sandbox):
    config = site({"mode": "send"}, posts={"a.md": post("Broken") + "\n[x](missing.md)\n"})
    result = mkdocs(config, "build", "--strict")
    assert result.returncode == 1 and sandbox.requests() == []


def test_material_blog_posts_are_found_with_their_final_urls(site, sandbox):
    config = site(
        {"mode": "send"},
        blog=True,
        posts={
            "hello.md": "---\ndate: 2026-11-20\ndescription: Hi there\n---\n# Hello World\n\nText.\n",
            "draft.md": "---\ndate: 2026-11-21\ndraft: true\n---\n# A Draft\n",
        },
    )
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert list(book.posts) == ["blog/2026/11/20/hello-world/"]
    assert book.posts["blog/2026/11/20/hello-world/"].url == "https://example.com/blog/2026/11/20/hello-world/"
    assert "Hi there" in statuses(sandbox)[0]["text"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_never_sends_nor_writes(site, sandbox):
    config = site({"mode": "send"})
    port = _free_port()
    import os

    from sites import mkdocs as _unused  # noqa: F401  (same environment rules as builds)

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "CI": "true"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "serve",
            "--clean",
            "-f",
            str(config),
            "-a",
            f"127.0.0.1:{port}",
            "--no-livereload",
        ],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("mkdocs serve did not come up")
    finally:
        process.terminate()
        process.communicate(timeout=30)  # waits, and closes its pipe
    assert sandbox.requests() == [] and not (config.parent / "ledger.yml").exists()


def _git(*args, cwd):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(cwd),
        },
    )


@pytest.mark.parametrize("push_works", [True, False])
def test_gh_deploy_announces_only_after_a_successful_push(site, sandbox, tmp_path, push_works):
    config = site({"mode": "auto"})
    repo = config.parent
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    hook = remote / "hooks" / "post-receive"  # when the push landed, by the remote's own clock
    hook.write_text(f"#!/bin/sh\ndate +%s.%N > {tmp_path / 'pushed_at'}\n")
    hook.chmod(0o755)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "site", cwd=repo)
    _git("remote", "add", "origin", str(remote) if push_works else str(tmp_path / "missing.git"), cwd=repo)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    result = mkdocs(config, "gh-deploy", "--force", env=env)
    if push_works:
        assert result.returncode == 0, result.stderr
        assert len(statuses(sandbox)) == 2
        pushed_at = float((tmp_path / "pushed_at").read_text())
        assert pushed_at < min(r["at"] for r in sandbox.requests())  # announced after the push
    else:
        assert result.returncode != 0
        assert sandbox.requests() == [] and not (repo / "ledger.yml").exists()


def test_properdocs_runs_the_plugin_in_its_builds_and_after_its_gh_deploy_push(site, sandbox, tmp_path):
    """ProperDocs continues MkDocs 1.6 (same configuration, same events, plugins found under
    `mkdocs.plugins`): a CI build sends and writes the key file; gh-deploy announces after its push."""
    config = site({"mode": "auto"})
    built = mkdocs(config, env={"CI": "true"}, program="properdocs")
    assert built.returncode == 0, built.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert {r.state for e in book.posts.values() for r in e.channels.values()} == {"done"}
    assert len(statuses(sandbox)) == 2
    assert (config.parent / "site" / "site-key-1234.txt").read_text() == "site-key-1234"

    (config.parent / "docs" / "posts" / "c.md").write_text(post("Third", "2026-11-22"))
    repo, remote = config.parent, tmp_path / "remote.git"
    _git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    hook = remote / "hooks" / "post-receive"
    hook.write_text(f"#!/bin/sh\ndate +%s.%N > {tmp_path / 'pushed_at'}\n")
    hook.chmod(0o755)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "site", cwd=repo)
    _git("remote", "add", "origin", str(remote), cwd=repo)
    requests = len(sandbox.requests())
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    deployed = mkdocs(config, "gh-deploy", "--force", env=env, program="properdocs")
    assert deployed.returncode == 0, deployed.stderr
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["First", "Second", "Third"]
    pushed_at = float((tmp_path / "pushed_at").read_text())
    assert pushed_at < min(r["at"] for r in sandbox.requests()[requests:])  # announced after the push


def test_example_site_as_the_quick_start_says(tmp_path):
    """First run: everything sent, the IndexNow pings answered 202 (a new key) and kept in_flight;
    second run: the sandbox engine has checked the key file, the pings are confirmed with 200;
    third run: nothing to do, no request, the ledger unchanged."""
    site_copy = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", site_copy, ignore=shutil.ignore_patterns("site"))
    # The ledger as a fresh clone has it, never the working tree's: quick-start command 1 fills
    # that one, and command 2 must pass after it (regression: it read the filled ledger).
    (tmp_path / "ledger.yml").write_text(dump({}), encoding="utf-8")
    first = mkdocs(site_copy / "mkdocs.yml")
    assert first.returncode == 0, first.stderr
    ledger_text = (tmp_path / "ledger.yml").read_text()
    assert ledger_text.count("state: done") == 12 and ledger_text.count("remote_id") == 12
    assert ledger_text.count("sandbox: true}") == 15  # a rehearsal's records, as the quick start says
    assert ledger_text.count("202 accepted, key validation pending") == 3
    assert "indexnow: 3 posts not confirmed yet" in first.stderr
    second = mkdocs(site_copy / "mkdocs.yml")
    assert second.returncode == 0, second.stderr
    ledger_text = (tmp_path / "ledger.yml").read_text()
    assert ledger_text.count("state: done") == 15 and "in_flight" not in ledger_text
    assert ledger_text.count("sandbox: true}") == 15
    third = mkdocs(site_copy / "mkdocs.yml")
    assert third.returncode == 0 and "0 requests" in third.stderr
    assert (tmp_path / "ledger.yml").read_text() == ledger_text
    # Built after the announcements, each post's page links to its four copies (IndexNow's ping
    # has no page), as the ledger records them.
    from test_crosslinks import Links

    book = Ledger.read(tmp_path / "ledger.yml")
    for key, entry in book.posts.items():
        links = Links((site_copy / "site" / key / "index.html").read_text(encoding="utf-8"))
        assert sorted(href for _, href, _ in links.found) == sorted(
            record.remote_url for record in entry.channels.values() if record.remote_url
        ), key
        assert len(links.found) == 4 and links.blocks == 1
    # The site leaves MkDocs' plugins behind: the same settings, the posts from its own RSS feed.
    sandbox_state = tmp_path / ".syndicate-sandbox" / "state.json"
    requests = len(json.loads(sandbox_state.read_text())["requests"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    switched = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs_syndicate.cli",
            "run",
            "-f",
            "example-site/mkdocs.yml",
            "--feed",
            "example-site/site/feed_rss_created.xml",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert switched.returncode == 0, switched.stderr
    assert "sending the posts of the feed example-site/site/feed_rss_created.xml" in switched.stderr
    assert len(json.loads(sandbox_state.read_text())["requests"]) == requests  # zero requests
    assert (tmp_path / "ledger.yml").read_text() == ledger_text


def test_forem_body_links_resolve_through_mkdocs_file_map(site, sandbox):
    devto = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0}
    config = site(
        {"mode": "send", "channels": {"devto": devto}},
        posts={
            "a.md": post("First") + "\nSee [the second](b.md#part), ![pic](../img/x.png) and [site](/about/).\n",
            "b.md": post("Second", "2026-11-21"),
        },
    )
    (config.parent / "docs" / "img").mkdir()
    (config.parent / "docs" / "img" / "x.png").write_bytes(b"png")
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    body = next(a for a in sandbox.snapshot()["forem"]["articles"] if a["title"] == "First")["body_markdown"]
    assert "[the second](https://example.com/posts/b/#part)" in body
    assert "![pic](https://example.com/img/x.png)" in body and "[site](https://example.com/about/)" in body
    assert not body.startswith("# First")
