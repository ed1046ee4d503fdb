"""A post's life: the same post under a new URL is the same post (issue 34, "Moves").

Each case was reproduced on the code before engine/moves.py as a second status on the Mastodon
emulator with exit 0. Here each runs in real processes (`mkdocs build`, `mkdocs-syndicate run`)
and must end with one status per post, and the ledger saying where the post went.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import as_in_flight, mastodon_raw, site_channels, write_ledger
from sites import mkdocs, post, write_site

from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process
SITE = "https://example.com/"


def statuses(sandbox) -> list[dict]:
    return sandbox.snapshot()["mastodon"]["statuses"]


def build(config: Path) -> subprocess.CompletedProcess:
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    return result


def masto_site(tmp_path: Path, sandbox, posts: dict[str, str], **kwargs) -> Path:
    config = write_site(
        tmp_path / "site", {"mode": "send", "channels": {"masto": mastodon_raw(sandbox)}}, posts, **kwargs
    )
    sandbox.key_file_root = config.parent / "site"
    return config


def test_a_typo_fixed_in_a_material_blog_title_moves_the_post_and_announces_nothing_again(tmp_path, sandbox):
    """Material makes the slug from the title: the edit moves the page. The source file says it
    is the same post (`src` in the ledger)."""
    config = masto_site(
        tmp_path, sandbox, {"hello.md": "---\ndate: 2026-11-20\n---\n# Hello, fediverse\n\nText.\n"}, blog=True
    )
    build(config)
    assert len(statuses(sandbox)) == 1
    source = config.parent / "docs" / "blog" / "posts" / "hello.md"
    source.write_text(source.read_text().replace("Hello, fediverse", "Hello again, fediverse"))
    again = build(config)
    assert len(statuses(sandbox)) == 1, statuses(sandbox)
    assert "moved: blog/2026/11/20/hello-fediverse/ → blog/2026/11/20/hello-again-fediverse/" in again.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    (key,) = book.posts
    entry = book.posts[key]
    assert key == "blog/2026/11/20/hello-again-fediverse/" and entry.src == "blog/posts/hello.md"
    assert "blog/2026/11/20/hello-fediverse/" in entry.aliases
    assert entry.channels["masto"].state == State.DONE
    assert "version: 2" in (config.parent / "ledger.yml").read_text()


def test_the_readmes_rename_advice_a_pin_then_a_renamed_file_is_one_post(tmp_path, sandbox):
    """Announce posts/one/, pin it with syndicate_id (nothing pending), rename the file: the pin
    reached the ledger with the first build that saw it, so the renamed file is still the post."""
    config = masto_site(tmp_path, sandbox, {"one.md": post("One")})
    build(config)
    docs = config.parent / "docs" / "posts"
    (docs / "one.md").write_text(post("One", syndicate_id="my-key"), encoding="utf-8")
    pinned = build(config)
    assert "nothing pending" in pinned.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert list(book.posts) == ["my-key"] and book.posts["my-key"].id == "my-key"
    (docs / "one.md").rename(docs / "one-renamed.md")
    build(config)
    assert len(statuses(sandbox)) == 1, statuses(sandbox)
    entry = Ledger.read(config.parent / "ledger.yml").posts["my-key"]
    assert entry.url == "https://example.com/posts/one-renamed/"
    assert "https://example.com/posts/one/" in entry.aliases and entry.src == "posts/one-renamed.md"


def test_a_redirect_the_site_declares_moves_the_post(tmp_path, sandbox):
    """mkdocs-redirects' redirect_maps: the old page's key becomes an alias of the new one."""
    pytest.importorskip("mkdocs_redirects")
    config = masto_site(tmp_path, sandbox, {"old-name.md": post("Moving house")})
    build(config)
    docs = config.parent / "docs" / "posts"
    (docs / "old-name.md").rename(docs / "new-name.md")
    settings = yaml.safe_load(config.read_text())
    settings["plugins"].insert(0, {"redirects": {"redirect_maps": {"posts/old-name.md": "posts/new-name.md"}}})
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    moved = build(config)
    assert len(statuses(sandbox)) == 1, statuses(sandbox)
    assert "a redirect from posts/old-name/" in moved.stderr
    assert list(Ledger.read(config.parent / "ledger.yml").posts) == ["posts/new-name/"]


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", *args],
        cwd=folder,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def feed_site(folder: Path, sandbox, channels: dict) -> Path:
    settings = {"site_url": SITE, "site_name": "A site", "mode": "send", "backlog": "send", "channels": channels}
    (folder / "syndicate.yml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return folder


def json_feed(folder: Path, urls: list[str]) -> str:
    items = [
        {
            "id": str(n),
            "url": url,
            "title": f"Post {n}",
            "content_html": f"<p>Body {n}.</p>",
            "date_published": "2026-11-19T12:00:00Z",
        }
        for n, url in enumerate(urls)
    ]
    feed = {"version": "https://jsonfeed.org/version/1.1", "title": "T", "home_page_url": SITE, "items": items}
    (folder / "feed.json").write_text(json.dumps(feed), encoding="utf-8")
    return "feed.json"


DONE = Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1", remote_url="https://m.example/@me/1")


@pytest.mark.parametrize(
    ("announced_as", "feed_link"),
    [
        ("posts/two/", "https://example.com//posts/two/"),  # a doubled slash
        ("posts/release-v1.2/", "https://example.com/posts/release-v1.2"),  # a dotted last segment
        ("posts/caf%C3%A9/", "https://example.com/posts/cafe%CC%81/"),  # NFD, as macOS spells it
        ("posts/caf%C3%A9/", "https://example.com/posts/caf%c3%a9/"),  # another percent-encoding case
    ],
)
def test_a_feeds_other_spelling_of_an_announced_page_is_the_same_post(tmp_path, sandbox, announced_as, feed_link):
    site = feed_site(tmp_path, sandbox, {"masto": mastodon_raw(sandbox)})
    write_ledger(site / "ledger.yml", {(announced_as, "masto"): DONE})
    result = cli(site, "run", "--feed", json_feed(site, [feed_link]))
    assert result.returncode == 0, result.stderr
    assert sandbox.requests() == [], result.stderr
    assert list(Ledger.read(site / "ledger.yml").posts) == [announced_as]


def test_a_pinned_post_whose_file_was_renamed_is_found_by_a_feed(tmp_path, sandbox):
    """The plugin announced a pinned post and then saw its file renamed (its URL moved); a feed,
    which cannot carry the pin, finds it under the new URL: the ledger knows it."""
    config = masto_site(tmp_path, sandbox, {"one.md": post("One", syndicate_id="pin-one")})
    build(config)
    docs = config.parent / "docs" / "posts"
    (docs / "one.md").rename(docs / "one-renamed.md")
    build(config)
    site = config.parent
    feed_site(site, sandbox, {"masto": mastodon_raw(sandbox)})
    config.unlink()  # from now on a feed-driven site
    result = cli(site, "run", "--feed", json_feed(site, ["https://example.com/posts/one-renamed/"]))
    assert result.returncode == 0, result.stderr
    assert len(statuses(sandbox)) == 1, statuses(sandbox)
    assert list(Ledger.read(site / "ledger.yml").posts) == ["pin-one"]


def test_a_renamed_channel_whose_only_record_is_in_flight_is_refused(tmp_path, sandbox):
    """A run killed mid-POST left `masto` in_flight; the channel is then renamed `mastodon`. The
    old record has no copy URL to tell its account by, and a new id would send a second status
    under a new Idempotency-Key: refused until rename-channel or enabled: false."""
    config = masto_site(tmp_path, sandbox, {"a.md": post("First")})
    build(config)
    key = "posts/a/"
    done = Ledger.read(config.parent / "ledger.yml").record(key, "masto")
    assert done is not None
    write_ledger(config.parent / "ledger.yml", {(key, "masto"): as_in_flight(done)})
    settings = yaml.safe_load(config.read_text())
    settings["plugins"][0]["syndicate"]["channels"] = {"mastodon": mastodon_raw(sandbox)}
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    before = len(sandbox.requests())
    refused = mkdocs(config)
    assert refused.returncode != 0
    assert "rename-channel masto mastodon" in refused.stderr
    assert len(sandbox.requests()) == before and len(statuses(sandbox)) == 1


def test_a_second_site_channel_beside_an_old_ping_channel_is_not_refused(tmp_path, sandbox):
    """Only an at-most-once request whose outcome is unknown blocks a new id: a vanished IndexNow
    channel's pending pings (a batch, no payload hash) do not stop a new Mastodon channel."""
    config = write_site(tmp_path / "site", {"mode": "send", "channels": site_channels(sandbox)}, {"a.md": post("A")})
    sandbox.key_file_root = config.parent / "site"
    write_ledger(
        config.parent / "ledger.yml", {("posts/a/", "oldping"): Record(State.IN_FLIGHT, 1, "2026-11-20T10:00:00Z")}
    )
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
