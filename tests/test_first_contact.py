"""A real site's first CI run, as a new user meets it: 60 posts over four years, a new ledger.
The first `CI=true mkdocs build` must not flood the channels with old posts; a pull request's
`--strict` build must pass; a big plan must stay readable."""

from __future__ import annotations

import datetime as dt

import pytest

from mkdocs_syndicate.ledger import Ledger
from sites import mkdocs, post, write_site

NOW = dt.datetime.now(dt.timezone.utc)


def big_site(folder, **plugin):
    """60 posts, one every ~24 days back from yesterday: two inside the 2-day backlog cut."""
    posts = {}
    for n in range(60):
        date = NOW - dt.timedelta(days=1 + n * 0.5 if n < 2 else n * 24.5)
        posts[f"p{n:02d}.md"] = post(f"Post {n:02d}", date.strftime("%Y-%m-%d %H:%M:%S"))
    channels = {"masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "x-token-1"},
                "ping": {"type": "indexnow", "key": "big-site-key-1"}}
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

    again = mkdocs(config, env={"CI": "true"})   # the IndexNow pings are confirmed (202, then 200)
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
    assert "the first send will adopt, not announce: backlog: 58 post(s)" in result.stderr
    assert "would send posts/p00/" in result.stderr and "would send posts/p10/" not in result.stderr


def test_a_pull_request_strict_build_passes_with_old_posts_pending(tmp_path):
    config = big_site(tmp_path, backlog="send")
    pr = mkdocs(config, "build", "--strict", env={"CI": "true", "GITHUB_EVENT_NAME": "pull_request"})
    assert pr.returncode == 0, pr.stderr
    assert "still not announced" in pr.stderr and "WARNING" not in pr.stderr
    local = mkdocs(config, "build", "--strict")   # a local (or main-branch plan) build still warns
    assert local.returncode != 0 and "WARNING" in local.stderr and "still not announced" in local.stderr


@pytest.mark.parametrize("value", ["-1", ".nan", "soon"])
def test_bad_backlog_days_is_named(tmp_path, value):
    config = big_site(tmp_path)
    config.write_text(config.read_text().replace("backlog: adopt", f"backlog: adopt\n      backlog_days: {value}"))
    result = mkdocs(config)
    assert result.returncode != 0 and "backlog_days" in result.stderr
