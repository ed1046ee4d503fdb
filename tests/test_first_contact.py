"""A real site's first CI run, as a new user meets it: 60 posts over four years, a new ledger.
The first `CI=true mkdocs build` must not flood the channels with old posts; a pull request's
`--strict` build must pass; a big plan must stay readable."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest
from sites import mkdocs, post, write_site

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources import plan_snapshot

pytestmark = pytest.mark.process

NOW = dt.datetime.now(dt.UTC)


def big_site(folder, **plugin):
    """60 posts, one every ~24 days back from yesterday: two inside the 2-day backlog cut."""
    posts = {}
    for n in range(60):
        date = NOW - dt.timedelta(days=1 + n * 0.5 if n < 2 else n * 24.5)
        posts[f"p{n:02d}.md"] = post(f"Post {n:02d}", date.strftime("%Y-%m-%d %H:%M:%S"))
    channels = {
        "masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "x-token-1"},
        "ping": {"type": "indexnow", "key": "big-site-key-1"},
    }
    plugin = {"channels": channels, "sandbox": True, "backlog": "adopt", **plugin}
    return write_site(folder, plugin, posts)


def test_the_first_ci_build_adopts_the_backlog_and_announces_only_what_is_new(tmp_path):
    config = big_site(tmp_path)
    result = mkdocs(config, env={"CI": "true"})
    assert result.returncode == 0, result.stderr
    assert "backlog: 58 post(s) dated before" in result.stderr and "marked skipped" in result.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    states = {(key, ch): r.state for key, e in book.posts.items() for ch, r in e.channels.items()}
    skipped = {key for (key, _), state in states.items() if state == "skipped"}
    sent = {key for (key, ch), state in states.items() if state != "skipped"}
    assert len(skipped) == 58 and sent == {"posts/p00/", "posts/p01/"}
    cut = NOW - dt.timedelta(days=2)
    for key in sent:
        assert f"Post {key[-3:-1]}" in book.posts[key].title
    assert all("adopted" in (book.record(key, "masto").note or "") for key in skipped)
    # Nothing older than the cut reached the sandbox's Mastodon:
    import json

    received = json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())["mastodon"]["statuses"]
    assert sorted(s["text"].splitlines()[0] for s in received) == ["Post 00", "Post 01"]
    assert cut > NOW - dt.timedelta(days=3)

    again = mkdocs(config, env={"CI": "true"})  # the IndexNow pings are confirmed (202, then 200)
    assert again.returncode == 0 and "backlog:" not in again.stderr and "posts/p00/ done" in again.stderr
    third = mkdocs(config, env={"CI": "true"})
    assert third.returncode == 0 and "0 requests" in third.stderr


def test_backlog_send_announces_the_old_posts_as_before(tmp_path):
    config = big_site(tmp_path, backlog="send", max_per_run=3)
    result = mkdocs(config, env={"CI": "true"})
    assert "backlog:" not in result.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    assert len(book.posts) == 3 and "posts/p59/" in book.posts  # oldest first, max_per_run of them


def test_a_plan_build_says_what_the_first_send_will_adopt_and_stays_short(tmp_path):
    config = big_site(tmp_path, backlog="send")
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "syndicate:" in line]
    assert len(lines) < 30, "\n".join(lines)
    assert "would send: … and 17 more" in result.stderr and "`mkdocs-syndicate plan` lists them all" in result.stderr
    assert "deferred to a later run (max_per_run): … and 47 more" in result.stderr

    adopting = big_site(tmp_path / "adopting")
    result = mkdocs(adopting)
    assert "the send will adopt, not announce: backlog: 58 post(s)" in result.stderr
    assert "would send posts/p00/" in result.stderr and "would send posts/p10/" not in result.stderr


def test_a_pull_request_strict_build_passes_with_old_posts_pending(tmp_path):
    config = big_site(tmp_path, backlog="send")
    from mkdocs_syndicate.ledger.format import dump

    (tmp_path / "ledger.yml").write_text(dump({}))  # the sending step has run before
    pr = mkdocs(config, "build", "--strict", env={"CI": "true", "GITHUB_EVENT_NAME": "pull_request"})
    assert pr.returncode == 0, pr.stderr
    assert "still not announced" in pr.stderr and "WARNING" not in pr.stderr
    local = mkdocs(config, "build", "--strict")  # a local (or main-branch plan) build still warns
    assert local.returncode != 0 and "WARNING" in local.stderr and "still not announced" in local.stderr


@pytest.mark.parametrize("value", ["-1", ".nan", "soon"])
def test_bad_backlog_days_is_named(tmp_path, value):
    config = big_site(tmp_path)
    config.write_text(config.read_text().replace("backlog: adopt", f"backlog: adopt\n      backlog_days: {value}"))
    result = mkdocs(config)
    assert result.returncode != 0 and "backlog_days" in result.stderr


# ------------------------------------------------------------------ friction


def test_every_missing_credential_is_named_in_one_error(tmp_path):
    config = write_site(
        tmp_path,
        {
            "mode": "send",
            "channels": {
                "masto": {"type": "mastodon", "instance": "https://m.example"},
                "devto": {"type": "forem"},
                "bsky": {"type": "bluesky", "handle": "me.bsky.social"},
            },
        },
        {"a.md": post("A")},
    )
    result = mkdocs(config)
    assert result.returncode != 0
    for setting in ("channels.masto.token", "channels.devto.api_key", "channels.bsky.app_password"):
        assert setting in result.stderr, setting
    assert "Set them, or set 'enabled: false' on those channels" in result.stderr


def test_git_status_stays_clean_but_for_the_ledger(tmp_path):
    import subprocess

    config = write_site(
        tmp_path, {"mode": "send", "sandbox": True, "channels": {"masto": {"type": "mastodon"}}}, {"a.md": post("A")}
    )
    (tmp_path / ".gitignore").write_text("site/\n")  # what any MkDocs site ignores already
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    assert mkdocs(config).returncode == 0
    for folder in (".syndicate-cache", ".syndicate-sandbox"):
        assert (tmp_path / folder / ".gitignore").read_text().strip().endswith("*")
    assert (tmp_path / ".syndicate-cache" / "ledger.yml.lock").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "PATH": "/usr/bin:/bin"},
    ).stdout
    untracked = sorted(line[3:] for line in status.splitlines())
    assert untracked == [".gitignore", "docs/index.md", "docs/posts/a.md", "ledger.yml", "mkdocs.yml"], untracked


def test_sandbox_pacing_is_scaled_down_and_says_so(tmp_path):
    import time

    posts = {f"{n}.md": post(f"P{n}", f"2026-11-2{n}") for n in range(1, 4)}
    config = write_site(tmp_path, {"mode": "send", "sandbox": True, "channels": {"devto": {"type": "forem"}}}, posts)
    started = time.monotonic()
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 30  # 2 × 75 s of real DEV spacing would be 150 s
    assert "pacing 100× faster than configured (devto 75 s → 0.75 s; `sandbox_pacing: real`" in result.stderr


def test_sandbox_pacing_real_keeps_the_configured_spacing(tmp_path):
    from mkdocs_syndicate.config.run import Site, parse_options
    from mkdocs_syndicate.sandbox.site import make_channels, sandbox_note

    for pacing, expected in (("fast", 0.75), ("real", 75.0)):
        options = parse_options(
            {"devto": {"type": "forem"}},
            ledger_path=tmp_path / "l.yml",
            site=Site("https://example.com/", "x"),
            sandbox=True,
            sending=True,
            sandbox_pacing=pacing,
        )
        (channel,) = make_channels(options)
        assert channel.settings.min_interval == expected
        assert ("100× faster" in sandbox_note(options)) == (pacing == "fast")


def test_a_github_pages_project_site_pings_indexnow_with_its_key_under_the_project_path(tmp_path):
    """`site_url: https://user.github.io/project/`: site_dir is served under /project/ and the
    host's root belongs to the user site. The key file is published at <site_url><key>.txt and
    named as keyLocation; the sandbox engine, like the real ones, fetches it there and takes the
    URLs under that folder. It used to look for the key under the path twice: 403 on every run."""
    posts = {"hello.md": post("Hello", (NOW - dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S"))}
    config = write_site(
        tmp_path,
        {"channels": {"ping": {"type": "indexnow", "key": "project-key-0001"}}, "sandbox": True},
        posts,
        site_url="https://user.github.io/project/",
    )
    first = mkdocs(config, env={"CI": "true"})
    assert first.returncode == 0, first.stderr
    key = "sandbox-indexnow-key-0001"  # a rehearsal pings with the sandbox's own key
    assert (tmp_path / "site" / f"{key}.txt").read_text() == key
    record = Ledger.read(tmp_path / "ledger.yml").record("posts/hello/", "ping")
    assert record.state == "in_flight" and record.error.startswith("202 accepted"), record
    assert f"https://user.github.io/project/{key}.txt" in record.error
    second = mkdocs(config, env={"CI": "true"})
    # Not a 403 from the key check (the build's folder is left out: its pytest-NNN may say 403).
    assert second.returncode == 0 and "403" not in second.stderr.replace(str(tmp_path), ""), second.stderr
    assert Ledger.read(tmp_path / "ledger.yml").record("posts/hello/", "ping").state == "done"


def test_a_plan_build_in_the_sandbox_publishes_the_real_key_file_and_not_the_sandboxs(tmp_path):
    """`sandbox: true`, mode plan (as this repository's docs build): the built site is deployed as
    the real one, so it holds the key file of the key the user set, not the sandbox's, which a
    plan build used to write. A run to the sandbox still passes the key check: `mkdocs-syndicate
    run` writes the sandbox's key file into the built site before its pings (a send build writes
    it while building: the test above)."""
    sandbox_key, real_key = "sandbox-indexnow-key-0001", "real-key-00000001"
    posts = {"hello.md": post("Hello", (NOW - dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S"))}
    plugin = {"mode": "plan", "sandbox": True, "channels": {"ping": {"type": "indexnow", "key": real_key}}}
    config = write_site(tmp_path, plugin, posts, site_url="https://blog.mysite.org/")
    site = tmp_path / "site"

    def plan_build() -> None:
        built = mkdocs(config)
        assert built.returncode == 0, built.stderr
        assert not (site / f"{sandbox_key}.txt").exists()
        assert (site / f"{real_key}.txt").read_text() == real_key

    plan_build()
    first = syndicate(config, "run")
    assert first.returncode == 0, first.stderr
    assert (site / f"{sandbox_key}.txt").read_text() == sandbox_key
    assert Ledger.read(tmp_path / "ledger.yml").record("posts/hello/", "ping").state == "in_flight"  # 202
    second = syndicate(config, "run")
    assert second.returncode == 0, second.stderr
    assert Ledger.read(tmp_path / "ledger.yml").record("posts/hello/", "ping").state == "done"
    plan_build()  # nothing pending: it saves the plan's shortcut, and the next build starts from it
    snapshot = plan_snapshot.snapshot_path(tmp_path / "ledger.yml")
    assert json.loads(snapshot.read_text())["site_files"] == [[f"{real_key}.txt", real_key]]
    plan_build()
    # The credential check of a rehearsal finds the key file as a run to the sandbox would.
    checked = syndicate(config, "doctor")
    assert checked.returncode == 0 and "ping (indexnow): ok" in checked.stdout, checked.stdout + checked.stderr


def syndicate(config, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", *args, "-f", str(config)],
        cwd=config.parent,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
