"""Announcing from a feed (`--feed`) instead of an MkDocs build: RSS from mkdocs-rss-plugin on a
Material blog, hand-written Atom and JSON Feed, a standalone syndicate.yml, a site that switches
from the plugin to its own feed, and a feed-driven run killed mid-way."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import mastodon_raw
from sites import mkdocs, post, write_site

from mkdocs_syndicate.content.portable import portable_markdown
from mkdocs_syndicate.errors import FeedError
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources.feed import read_feed

SITE = "https://example.com/"

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>A Zensical site</title>
  <link href="https://example.com/"/>
  <updated>2026-11-22T10:00:00Z</updated>
  <id>https://example.com/</id>
  <entry>
    <title>Group commits</title>
    <link href="https://example.com/blog/group-commits/"/>
    <id>https://example.com/blog/group-commits/</id>
    <published>2026-11-21T09:30:00+01:00</published>
    <updated>2026-11-22T10:00:00Z</updated>
    <summary type="html">&lt;p&gt;Why &lt;em&gt;one&lt;/em&gt; push for many records.&lt;/p&gt;</summary>
    <content type="html">&lt;h2&gt;The idea&lt;/h2&gt;&lt;p&gt;Push &lt;strong&gt;once&lt;/strong&gt;, see &lt;a href="https://git-scm.com/"&gt;git&lt;/a&gt;.&lt;/p&gt;&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;li&gt;two&lt;/li&gt;&lt;/ul&gt;</content>
    <category term="git"/>
    <category term="ci"/>
  </entry>
  <entry>
    <title>Summary only</title>
    <link href="https://example.com/blog/summary-only/"/>
    <id>https://example.com/blog/summary-only/</id>
    <updated>2026-11-20T08:00:00Z</updated>
    <summary>Just a summary.</summary>
  </entry>
</feed>
"""

JSON_FEED: dict[str, Any] = {
    "version": "https://jsonfeed.org/version/1.1",
    "title": "A Hugo site",
    "home_page_url": SITE,
    "items": [
        {
            "id": "1",
            "url": "https://example.com/posts/hello/",
            "title": "Hello",
            "content_html": "<p>Hello <code>world</code>.</p>",
            "summary": "A greeting.",
            "date_published": "2026-11-19T12:00:00Z",
            "tags": ["intro"],
            "image": "/images/hello.png",
        }
    ],
}


@pytest.mark.unit
def test_atom_entries_become_posts_keyed_by_their_path_under_site_url(tmp_path):
    feed = tmp_path / "atom.xml"
    feed.write_text(ATOM, encoding="utf-8")
    first, second = read_feed(str(feed), SITE)
    assert (first.key, first.url, first.title) == (
        "blog/group-commits/",
        "https://example.com/blog/group-commits/",
        "Group commits",
    )
    assert first.date.isoformat() == "2026-11-21T08:30:00+00:00"  # published, in UTC
    assert first.description == "Why one push for many records."  # HTML reduced to text
    assert first.tags == ("git", "ci")
    body = portable_markdown(first.body_html, first.url, first.title)  # what DEV gets: the content as Markdown
    assert "## The idea" in body and "**once**" in body and "[git](https://git-scm.com/)" in body
    assert second.date.isoformat() == "2026-11-20T08:00:00+00:00"  # updated, when nothing was published
    assert second.body_html == "" and second.body_missing and second.description == "Just a summary."


@pytest.mark.unit
def test_json_feed_items_become_posts(tmp_path):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(JSON_FEED), encoding="utf-8")
    (hello,) = read_feed(str(feed), SITE)
    assert (hello.key, hello.title, hello.description, hello.tags) == (
        "posts/hello/",
        "Hello",
        "A greeting.",
        ("intro",),
    )
    assert (
        portable_markdown(hello.body_html, hello.url) == "Hello `world`."
        and hello.image == "https://example.com/images/hello.png"
    )


@pytest.mark.unit
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"url": None}, "item 1 (1): no link"),
        ({"date_published": None}, "item 1 (https://example.com/posts/hello/): no date"),
        (
            {"url": "https://elsewhere.org/posts/hello/"},
            "the link https://elsewhere.org/posts/hello/ is outside site_url",
        ),
        ({"date_published": "yesterday"}, "date 'yesterday' is not RFC 3339"),
    ],
)
def test_an_entry_that_cannot_be_announced_is_named(tmp_path, change, message):
    feed = tmp_path / "feed.json"
    item = {**JSON_FEED["items"][0], **change}
    feed.write_text(json.dumps({**JSON_FEED, "items": [item]}), encoding="utf-8")
    with pytest.raises(FeedError) as caught:
        read_feed(str(feed), SITE)
    assert f"feed {feed}" in str(caught.value) and message in str(caught.value)


@pytest.mark.unit
def test_a_missing_or_unreadable_feed_is_named(tmp_path):
    with pytest.raises(FeedError, match=r"feed .*nope\.xml: no such file"):
        read_feed(str(tmp_path / "nope.xml"), SITE)
    (tmp_path / "page.html").write_text("<html><body>not a feed</body></html>")
    with pytest.raises(FeedError, match="not an RSS, Atom or JSON feed"):
        read_feed(str(tmp_path / "page.html"), SITE)


# ---------------------------------------------------------------------- real commands


def cli(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    full.update(NO_MKDOCS_2_WARNING="1", **env)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", *args],
        cwd=folder,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def channels(sandbox) -> dict:
    return {
        "masto": mastodon_raw(sandbox),
        "bsky": {
            "type": "bluesky",
            "service": sandbox.url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
        },
        "devto": {
            "type": "forem",
            "api": sandbox.url + "/forem/api",
            "api_key": "sandbox-forem-api-key",
            "min_interval": 0,
        },
    }


def standalone_site(folder: Path, sandbox, **extra) -> Path:
    """A site some other generator built: its Atom feed and a syndicate.yml, no mkdocs.yml."""
    (folder / "public").mkdir(parents=True)
    (folder / "public" / "atom.xml").write_text(ATOM, encoding="utf-8")
    settings = {
        "site_url": SITE,
        "site_name": "Zensical site",
        "mode": "send",
        "backlog": "send",
        "channels": channels(sandbox),
        **extra,
    }
    (folder / "syndicate.yml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return folder


@pytest.mark.process
def test_a_site_without_mkdocs_announces_from_its_feed_and_a_second_run_sends_nothing(tmp_path, sandbox):
    site = standalone_site(tmp_path, sandbox)
    plan = cli(site, "plan", "--feed", "public/atom.xml")
    assert (
        plan.returncode == 1
        and "feed public/atom.xml: entry 2 (https://example.com/blog/summary-only/): "
        "channel devto (forem) publishes the whole article, and this feed entry has a summary only"
        in plan.stderr
    )
    # DEV needs the whole article: the entry with a summary only is refused by name; with its
    # content in the feed, it goes.
    atom = ATOM.replace(
        "<summary>Just a summary.</summary>",
        '<summary>Just a summary.</summary><content type="html">&lt;p&gt;Now whole.&lt;/p&gt;</content>',
    )
    (site / "public" / "atom.xml").write_text(atom, encoding="utf-8")
    first = cli(site, "run", "--feed", "public/atom.xml")
    assert first.returncode == 0, first.stderr
    assert "sending the posts of the feed public/atom.xml" in first.stderr
    book = Ledger.read(site / "ledger.yml")
    for key in ("blog/group-commits/", "blog/summary-only/"):
        for channel in ("masto", "bsky", "devto"):
            assert book.record(key, channel).state == "done", (key, channel)
    article = next(a for a in sandbox.snapshot()["forem"]["articles"] if a["title"] == "Group commits")
    assert (
        "**once**" in article["body_markdown"] and article["canonical_url"] == "https://example.com/blog/group-commits/"
    )
    requests = len(sandbox.requests())
    again = cli(site, "run", "--feed", "public/atom.xml")
    assert again.returncode == 0, again.stderr
    assert len(sandbox.requests()) == requests
    status = cli(site, "status", "--feed", "public/atom.xml", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["build_seen"] is True


@pytest.mark.process
def test_site_files_writes_the_indexnow_key_file_into_a_site_built_without_the_plugin(tmp_path, sandbox):
    site = standalone_site(tmp_path, sandbox, site_dir="public")
    missing = cli(site, "site-files", "--site-dir", "nowhere")
    assert missing.returncode == 1 and "site dir nowhere: no such folder" in missing.stderr
    # The posts' links (syndication.json, the comments script) are written whatever the channels;
    # with `links: false` and no channel that adds a file, nothing is, and it says why.
    listed = cli(site, "site-files")
    assert listed.returncode == 0 and (site / "public" / "syndication.json").exists(), listed.stderr
    settings = yaml.safe_load((site / "syndicate.yml").read_text())
    (site / "syndicate.yml").write_text(yaml.safe_dump({**settings, "links": False}), encoding="utf-8")
    nothing = cli(site, "site-files")
    assert nothing.returncode == 1 and "nothing written: no enabled channel adds a file" in nothing.stderr
    settings = yaml.safe_load((site / "syndicate.yml").read_text())
    settings["channels"]["ping"] = {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "feed-key-1234"}
    (site / "syndicate.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    written = cli(site, "site-files")
    assert written.returncode == 0, written.stderr
    assert (site / "public" / "feed-key-1234.txt").read_text() == "feed-key-1234"
    assert f"wrote {site / 'public' / 'feed-key-1234.txt'}" in written.stderr


@pytest.mark.process
def test_site_files_in_a_rehearsal_writes_the_configured_key_file_and_a_run_the_sandboxs(tmp_path):
    """`sandbox: true`: the built site is deployed for real, so `site-files` writes the key file of
    the key the user set, not the sandbox's (which it used to, as the plugin's plan build did). A
    run from the feed still passes the sandbox engine's key check: it writes the sandbox's key
    file into site_dir before its pings, and the engine fetches it there (202, then 200)."""
    sandbox_key, real_key = "sandbox-indexnow-key-0001", "real-key-00000001"
    public = tmp_path / "public"
    public.mkdir()
    (public / "atom.xml").write_text(ATOM, encoding="utf-8")
    (tmp_path / "syndicate.yml").write_text(
        f"site_url: {SITE}\nsite_dir: public\nmode: send\nbacklog: send\nsandbox: true\n"
        "channels:\n  ping: {type: indexnow, key: !ENV INDEXNOW_KEY}\n",
        encoding="utf-8",
    )
    placed = cli(tmp_path, "site-files", INDEXNOW_KEY=real_key)
    assert placed.returncode == 0, placed.stderr
    assert (public / f"{real_key}.txt").read_text() == real_key
    assert not (public / f"{sandbox_key}.txt").exists(), placed.stderr
    assert f"left out {sandbox_key}.txt" in placed.stderr

    def states(expected: str) -> None:
        run = cli(tmp_path, "run", "--feed", "public/atom.xml", INDEXNOW_KEY=real_key)
        assert run.returncode == 0, run.stderr
        book = Ledger.read(tmp_path / "ledger.yml")
        assert {k: r.state for k, e in book.posts.items() for r in e.channels.values()} == {
            "blog/group-commits/": expected,
            "blog/summary-only/": expected,
        }, run.stderr

    states("in_flight")  # 202: the engine fetches the key file only after its first answer
    assert (public / f"{sandbox_key}.txt").read_text() == sandbox_key
    states("done")  # 200: it found the sandbox's key file in site_dir, not a 403
    assert (public / f"{real_key}.txt").read_text() == real_key
    # A rehearsal with the key unset writes the rest and says what the deploy lacks.
    for written in (real_key, sandbox_key):
        (public / f"{written}.txt").unlink()
    unset = cli(tmp_path, "site-files")
    assert unset.returncode == 0 and "warning: no channel's file written: channels.ping.key" in unset.stderr
    assert sorted(p.name for p in public.glob("*.txt")) == [], unset.stderr


@pytest.mark.process
def test_a_bad_standalone_setting_is_named_with_its_file(tmp_path, sandbox):
    site = standalone_site(tmp_path, sandbox, mode="sometimes")
    result = cli(site, "plan", "--feed", "public/atom.xml")
    assert result.returncode == 1 and "syndicate.yml: mode:" in result.stderr
    (site / "syndicate.yml").write_text("channels: {}\n")
    result = cli(site, "plan", "--feed", "public/atom.xml")
    assert result.returncode == 1 and "syndicate.yml: site_url: required" in result.stderr


def rss_blog(folder: Path, sandbox, mode: str = "send") -> Path:
    """A Material blog that also publishes its feed with mkdocs-rss-plugin, as Material documents."""
    config = write_site(
        folder,
        {"mode": mode, "channels": {k: v for k, v in channels(sandbox).items() if k != "devto"}},
        {
            "a.md": post("Alpha", dt.date(2026, 11, 20), description="About alpha.", categories=["Python"]),
            "b.md": post("Beta", dt.date(2026, 11, 21), description="About beta."),
        },
        blog=True,
    )
    data = yaml.safe_load(config.read_text())
    data["plugins"].insert(
        1,
        {
            "rss": {
                "match_path": "blog/posts/.*",
                "date_from_meta": {"as_creation": "date"},
                "categories": ["categories"],
                "use_git": False,
            }
        },
    )
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


@pytest.mark.process
def test_a_site_that_switches_from_the_plugin_to_its_feed_keeps_every_record(tmp_path, sandbox):
    config = rss_blog(tmp_path, sandbox)
    build = mkdocs(config)
    assert build.returncode == 0, build.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    keys = sorted(book.posts)
    assert keys == ["blog/2026/11/20/alpha/", "blog/2026/11/21/beta/"]
    requests = len(sandbox.requests())
    # Later the site moves to a generator without plugins: the same settings, posts from the feed.
    feed = tmp_path / "site" / "feed_rss_created.xml"
    for command in ("plan", "run"):
        result = cli(tmp_path, command, "-f", str(config), "--feed", str(feed))
        assert result.returncode == 0, result.stderr
    assert f"plan from the feed {feed}" in cli(tmp_path, "plan", "-f", str(config), "--feed", str(feed)).stdout
    assert ": 0 pair(s) would be sent" in cli(tmp_path, "plan", "-f", str(config), "--feed", str(feed)).stdout
    assert len(sandbox.requests()) == requests  # zero requests on the first feed run
    assert Ledger.read(tmp_path / "ledger.yml").text() == book.text()
    json_feed = tmp_path / "site" / "feed_json_created.json"
    assert sorted(p.key for p in read_feed(str(json_feed), SITE)) == keys


@pytest.mark.process
def test_a_fresh_blog_announced_only_through_its_rss_feed(tmp_path, sandbox):
    config = rss_blog(tmp_path, sandbox, mode="plan")  # the build announces nothing
    assert mkdocs(config).returncode == 0
    assert not (tmp_path / "ledger.yml").exists()
    result = cli(tmp_path, "run", "-f", str(config), "--feed", str(tmp_path / "site" / "feed_rss_created.xml"))
    assert result.returncode == 0, result.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    assert {(k, c): r.state for k, e in book.posts.items() for c, r in e.channels.items()} == {
        (k, c): "done" for k in ("blog/2026/11/20/alpha/", "blog/2026/11/21/beta/") for c in ("masto", "bsky")
    }
    status = sandbox.snapshot()["mastodon"]["statuses"]
    assert len(status) == 2 and any("About alpha." in s["text"] for s in status)


@pytest.mark.crash
@pytest.mark.parametrize("kill_at", ["after_in_flight_write:2", "after_response:3", "ledger.replaced:5"])
def test_a_feed_driven_run_killed_mid_way_finishes_on_the_next_without_a_duplicate(tmp_path, sandbox, kill_at):
    from crashlab import STATS
    from crashsite import remote

    site = standalone_site(
        tmp_path,
        sandbox,
        channels={k: {**v, "timeout": 1, "settle": 2} for k, v in channels(sandbox).items() if k != "devto"},
    )
    killed = cli(site, "run", "--feed", "public/atom.xml", SYNDICATE_CRASH_AT=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    Ledger.read(site / "ledger.yml")  # whole, parseable
    sandbox.wait_idle(timeout=30)
    for _ in range(3):
        rerun = cli(site, "run", "--feed", "public/atom.xml")
        if rerun.returncode == 0:
            break
    assert rerun.returncode == 0, rerun.stderr
    state = sandbox.snapshot()
    for emulator in ("mastodon", "bluesky"):
        announced = sorted(url for _, url in remote(state, emulator))
        assert len(announced) == 2 and len(set(announced)) == 2, (emulator, announced)  # each post once
    print(f"feed run killed at {kill_at}: each post once after the rerun")
    STATS["feed-driven runs killed"] += 1


@pytest.mark.http
def test_a_feed_is_fetched_by_url_and_an_error_status_is_named(monkeypatch):
    import gzip
    import http.server
    import threading

    from mkdocs_syndicate.sources import feed

    class Feed(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/slow.xml":  # a byte now and then: each read is quick, the whole is not
                self.send_response(200)
                self.send_header("Content-Length", "20")
                self.end_headers()
                for _ in range(20):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.25)
                return
            body = ATOM.encode() if self.path == "/atom.xml" else b"gone"
            if self.path == "/bomb.xml":  # small on the wire, too big once decompressed
                body = gzip.compress(ATOM.encode() + b" " * 100_000)
            self.send_response(404 if self.path == "/old.xml" else 200)
            self.send_header("Content-Type", "application/atom+xml")
            if self.path == "/bomb.xml":
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Feed)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert [p.key for p in read_feed(base + "/atom.xml", SITE)] == ["blog/group-commits/", "blog/summary-only/"]
        with pytest.raises(FeedError, match=r"feed http://127\.0\.0\.1:\d+/old\.xml: the server answered 404"):
            read_feed(base + "/old.xml", SITE)
        monkeypatch.setattr(feed, "MAX_FEED_BYTES", 50_000)
        with pytest.raises(FeedError, match=r"feed http://127\.0\.0\.1:\d+/bomb\.xml: larger than 50000 bytes"):
            read_feed(base + "/bomb.xml", SITE)
        monkeypatch.setattr(feed, "FETCH_TIMEOUT", 1.0)
        with pytest.raises(FeedError, match=r"feed http://127\.0\.0\.1:\d+/slow\.xml: cannot fetch it \(ReadTimeout\)"):
            read_feed(base + "/slow.xml", SITE)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.process
def test_zensical_builds_the_example_site_and_its_feed_which_announces_every_post(tmp_path):
    """Zensical builds mkdocs.yml sites and runs no MkDocs plugin (no ledger, nothing announced),
    but it writes the blog's feed itself from the same `rss:` settings: `--feed` on it announces
    every post, with the settings of the same mkdocs.yml."""
    import shutil

    from sites import ROOT

    site = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", site, ignore=shutil.ignore_patterns("site"))
    # The feed carries summaries, not whole articles: DEV, which publishes the article, sits out.
    config = site / "mkdocs.yml"
    config.write_text(config.read_text().replace("devto: {type: forem,", "devto: {enabled: false, type: forem,"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    env["NO_MKDOCS_2_WARNING"] = "1"
    build = subprocess.run(
        [sys.executable, "-m", "zensical", "build", "-f", "mkdocs.yml"],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    feed = site / "site" / "feed_rss_created.xml"
    assert feed.exists() and "Zensical" in feed.read_text()
    assert not (tmp_path / "ledger.yml").exists()  # the plugin did not run

    def syndicate(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "mkdocs_syndicate.cli", *args, "-f", "example-site/mkdocs.yml"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    # What the plugin would have put in the site (IndexNow's key file), between build and deploy:
    # the configured key's, in this rehearsal too (the site is deployed for real), not the sandbox's.
    env["INDEXNOW_KEY"] = "example-key-0001"
    placed = syndicate("site-files")
    assert placed.returncode == 0, placed.stderr
    assert (site / "site" / "example-key-0001.txt").read_text() == "example-key-0001"
    assert not (site / "site" / "sandbox-indexnow-key-0001.txt").exists()
    run = syndicate("run", "--feed", "example-site/site/feed_rss_created.xml")
    # Every at-most-once pair done; IndexNow answers 202 for a key it has not checked yet (waiting).
    assert run.returncode == 0, run.stderr
    # The run to the sandbox wrote the sandbox's key file, where its engine fetches it.
    assert (site / "site" / "sandbox-indexnow-key-0001.txt").read_text() == "sandbox-indexnow-key-0001"
    book = Ledger.read(tmp_path / "ledger.yml")
    assert len(book.posts) == 3 and all(key.startswith("blog/2026/11/") for key in book.posts)
    # The keys are the ones the plugin gives these pages under MkDocs: a site moving to Zensical
    # keeps its ledger.
    from mkdocs_syndicate.sources.manifest import manifest_path, read_manifest

    planned = mkdocs(config, env={"SYNDICATE_MODE": "plan"})
    assert planned.returncode == 0, planned.stderr
    plugin_keys = sorted(p.key for p in read_manifest(manifest_path(tmp_path / "ledger.yml"), SITE)[0])
    assert sorted(book.posts) == plugin_keys
    states = {(k, c): r.state for k, e in book.posts.items() for c, r in e.channels.items()}
    assert {c for (k, c), state in states.items() if state != "done"} <= {"indexnow"}
    assert sum(state == "done" for state in states.values()) >= 9, states  # mastodon, weibo, bluesky
    # The sandbox engine has fetched the key file from the built site by now: the next run's
    # ping is answered 200, as on the plugin's path.
    again = syndicate("run", "--feed", "example-site/site/feed_rss_created.xml")
    assert again.returncode == 0, again.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    assert {r.state for e in book.posts.values() for r in e.channels.values()} == {"done"}


# ---------------------------------------------------------------------- one page, one key


@pytest.mark.unit
@pytest.mark.parametrize(
    "link",
    [
        "https://example.com/blog/group-commits/",
        "https://example.com/blog/group-commits/?utm_source=rss&utm_medium=feed",
        "https://example.com/blog/group-commits",
        "https://example.com/blog/group-commits/index.html",
        "https://example.com/blog/group-commits/#comments",
        "http://example.com/blog/group-commits/",
        "https://EXAMPLE.com/blog/group-commits/",
        "https://example.com:443/blog/group-commits/",
    ],
)
def test_every_spelling_of_a_link_is_the_plugins_key(tmp_path, link):
    feed = tmp_path / "atom.xml"
    feed.write_text(
        ATOM.replace(
            '<link href="https://example.com/blog/group-commits/"/>', f'<link href="{link.replace("&", "&amp;")}"/>'
        ),
        encoding="utf-8",
    )
    first = read_feed(str(feed), SITE)[0]
    assert first.key == "blog/group-commits/"
    assert first.url == "https://example.com/blog/group-commits/"  # announced in the site's own form


@pytest.mark.unit
@pytest.mark.parametrize("page_url", ["blog/2026/11/28/idempotency/", "blog/caf%C3%A9/", "posts/a.html", "notes/"])
def test_the_plugin_and_a_feed_agree_on_mkdocs_page_urls(page_url):
    """MkDocs' page.url (percent-encoded, dir/ or name.html) is already canonical, so a ledger
    written by either source is the other's too; a feed that writes café unencoded agrees."""
    from urllib.parse import unquote

    from mkdocs_syndicate.content.identity import canonical_path, post_key_of

    assert canonical_path(page_url) == page_url
    assert post_key_of(SITE + page_url, SITE) == page_url
    assert post_key_of(SITE + unquote(page_url), SITE) == page_url


@pytest.mark.unit
def test_a_project_site_with_a_path_keys_under_its_path():
    from mkdocs_syndicate.content.identity import post_key_of

    site = "https://user.github.io/project/"
    assert post_key_of("https://user.github.io/project/blog/x/?ref=feed", site) == "blog/x/"
    assert post_key_of("https://user.github.io/other/blog/x/", site) is None
    assert post_key_of("https://user.github.io/project/../other/x/", site) is None


@pytest.mark.process
def test_switching_between_the_plugins_keys_and_a_feeds_links_sends_nothing(tmp_path, sandbox):
    """Announced once; the feed then spells its links with tracking parameters, without the
    trailing slash, with index.html, over http: the same pages, 0 requests. A page announced
    under a pinned syndicate_id is found by its URL."""
    site = standalone_site(tmp_path, sandbox)
    atom = ATOM.replace(
        "<summary>Just a summary.</summary>",
        '<summary>Just a summary.</summary><content type="html">&lt;p&gt;Whole.&lt;/p&gt;</content>',
    )
    (site / "public" / "atom.xml").write_text(atom, encoding="utf-8")
    assert cli(site, "run", "--feed", "public/atom.xml").returncode == 0
    # What a build with a pinned id would have written for the second page.
    text = (site / "ledger.yml").read_text(encoding="utf-8")
    (site / "ledger.yml").write_text(text.replace("  blog/summary-only/:", "  pinned-summary:"), encoding="utf-8")
    requests = len(sandbox.requests())
    respelled = atom.replace(
        'href="https://example.com/blog/group-commits/"',
        'href="http://EXAMPLE.com/blog/group-commits?utm_source=rss&amp;utm_medium=feed"',
    ).replace(
        'href="https://example.com/blog/summary-only/"', 'href="https://example.com/blog/summary-only/index.html#top"'
    )
    (site / "public" / "atom.xml").write_text(respelled, encoding="utf-8")
    again = cli(site, "run", "--feed", "public/atom.xml")
    assert again.returncode == 0, again.stderr
    assert len(sandbox.requests()) == requests, sandbox.requests()[requests:]
    book = Ledger.read(site / "ledger.yml")
    assert sorted(book.posts) == ["blog/group-commits/", "pinned-summary"]
