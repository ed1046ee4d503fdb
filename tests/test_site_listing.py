"""syndication.json (issue 41): each post's copies for pages the plugin does not build, from the
committed ledger and vetted as the plugin's links are, written by `site-files` with the comments
script that shows it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from conftest import write_ledger

from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.sources.syndication_file import syndication_json

SITE = "https://blog.example.org/"
CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://mastodon.social", "token": "t"},
    "bsky": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "p"},
    "devto": {"type": "forem", "api_key": "k", "label": "DEV Community"},
}


def done(url: str, remote_id: str = "1", *, sandbox: bool = False) -> Record:
    return Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id=remote_id, remote_url=url, sandbox=sandbox)


@pytest.fixture
def ledger(tmp_path):
    path = tmp_path / "ledger.yml"
    write_ledger(
        path,
        {
            ("posts/hello/", "masto"): done("https://mastodon.social/@me/113", "113"),
            ("posts/hello/", "bsky"): done(
                "https://bsky.app/profile/me.bsky.social/post/3l2", "at://did:plc:abc/app.bsky.feed.post/3l2"
            ),
            ("posts/hello/", "devto"): done("https://dev.to/me/hello-1a2b"),
            ("posts/hello/", "gone"): done("https://mastodon.social/@me/999"),  # a channel no longer configured
            ("posts/second/", "masto"): done("https://evil.example/@me/114"),  # a hand edit: not its service
            ("posts/third/", "masto"): Record(State.IN_FLIGHT, 1, "2026-11-20T10:00:00Z"),
            ("posts/rehearsed/", "masto"): done("http://127.0.0.1:8787/mastodon/@sandbox/1", sandbox=True),
        },
    )
    return path


@pytest.mark.unit
def test_the_listing_has_each_posts_vetted_copies_in_the_channels_order_by_its_url(ledger):
    said: list[str] = []
    data = json.loads(syndication_json(ledger, CHANNELS, SITE, warn=said.append))
    assert data["version"] == 1 and data["site_url"] == SITE and data["lead"] == "Also on:"
    assert list(data["posts"]) == [SITE + "posts/hello/"]  # second: not on Mastodon; third: in flight
    assert data["posts"][SITE + "posts/hello/"] == [
        {"channel": "masto", "service": "Mastodon", "url": "https://mastodon.social/@me/113"},
        {"channel": "bsky", "service": "Bluesky", "url": "https://bsky.app/profile/me.bsky.social/post/3l2"},
        {"channel": "devto", "service": "DEV Community", "url": "https://dev.to/me/hello-1a2b"},
    ]
    assert said == [
        "posts/second/: the masto copy is not linked on the post's page: its URL is not on masto's own "
        "service (host evil.example)"
    ]


@pytest.mark.unit
def test_with_comments_each_copy_says_where_its_replies_are_read(ledger):
    data = json.loads(syndication_json(ledger, CHANNELS, SITE, comments=True, lead="Elsewhere:"))
    masto, bsky, devto = data["posts"][SITE + "posts/hello/"]
    assert masto["replies"] == {"type": "mastodon", "url": "https://mastodon.social/api/v1/statuses/113/context"}
    assert bsky["replies"]["type"] == "bluesky" and bsky["replies"]["web"] == "https://bsky.app"
    assert bsky["replies"]["url"].startswith("https://public.api.bsky.app/xrpc/app.bsky.feed.getPostThread?uri=")
    # DEV's comments are public (issue 39): GET /api/comments?a_id=<the article's id>.
    assert devto["replies"] == {"type": "forem", "url": "https://dev.to/api/comments?a_id=1"}
    assert data["lead"] == "Elsewhere:"


@pytest.mark.unit
def test_a_rehearsals_copies_are_listed_by_a_sandbox_site_only(ledger):
    real = json.loads(syndication_json(ledger, CHANNELS, SITE))["posts"]
    rehearsal = json.loads(syndication_json(ledger, CHANNELS, SITE, sandbox=True))["posts"]
    assert SITE + "posts/rehearsed/" not in real and SITE + "posts/rehearsed/" in rehearsal


@pytest.mark.unit
def test_no_ledger_yet_lists_nothing(tmp_path):
    assert json.loads(syndication_json(tmp_path / "ledger.yml", CHANNELS, SITE))["posts"] == {}


def site_files(folder, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_", "INDEXNOW"))}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", "site-files"],
        cwd=folder,
        env=full | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.process
def test_site_files_writes_the_listing_and_the_script_and_still_fails_on_a_missing_key(tmp_path, ledger):
    (tmp_path / "public").mkdir()
    settings = {
        "site_url": SITE,
        "site_dir": "public",
        "channels": CHANNELS | {"ping": {"type": "indexnow", "key": "!ENV INDEXNOW_KEY"}},
    }
    text = yaml.safe_dump(settings).replace("'!ENV INDEXNOW_KEY'", "!ENV INDEXNOW_KEY")
    (tmp_path / "syndicate.yml").write_text(text)
    written = site_files(tmp_path, INDEXNOW_KEY="site-key-1234")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "public" / "site-key-1234.txt").exists()
    listing = json.loads((tmp_path / "public" / "syndication.json").read_text())
    assert list(listing["posts"]) == [SITE + "posts/hello/"]
    script = (tmp_path / "public" / "assets" / "syndicate" / "comments.js").read_text()
    assert "syndication.json" in script and "syndicate-links" in script
    # The key's variable missing in this job: the links are written, and the deploy is stopped
    # all the same (a site without its key file fails every IndexNow ping).
    (tmp_path / "public" / "syndication.json").unlink()
    missing = site_files(tmp_path)
    assert missing.returncode == 1 and (tmp_path / "public" / "syndication.json").exists()
    assert "no channel's file written: channels.ping.key" in missing.stderr, missing.stderr
