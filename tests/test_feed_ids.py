"""Feed ids are identity (issue 50, item 3): an entry's Atom `id`, RSS `guid` (a permalink or an
opaque string) or JSON Feed `id` names it across a change of its link. Measured on the code before
as a second status for the same entry, exit 0. Real `mkdocs-syndicate run --feed` processes, the
Mastodon emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import mastodon_raw

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources.feed import read_feed

SITE = "https://example.com/"


def json_feed(link: str) -> str:
    item = {"id": "post-41", "url": link, "title": "Moving", "content_html": "<p>Body.</p>"}
    item["date_published"] = "2026-11-19T12:00:00Z"
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "T", "items": [item]})


def atom_feed(link: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        "<id>https://example.com/</id><updated>2026-11-19T12:00:00Z</updated>"
        "<entry><title>Moving</title><id>tag:example.com,2026:post-41</id>"
        f'<link href="{link}"/><updated>2026-11-19T12:00:00Z</updated><content type="html">Body.</content></entry>'
        "</feed>"
    )


def rss_feed(link: str) -> str:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.com/</link>'
        f"<item><title>Moving</title><link>{link}</link>"
        '<guid isPermaLink="false">post-41</guid><pubDate>Thu, 19 Nov 2026 12:00:00 GMT</pubDate>'
        "<description>Body.</description></item></channel></rss>"
    )


def rss_permalink_feed(link: str) -> str:
    """The guid is the link the entry was first published under; the link moved since."""
    return rss_feed(link).replace(
        '<guid isPermaLink="false">post-41</guid>', "<guid>https://example.com/posts/old/</guid>"
    )


FORMATS = {"json": (json_feed, "feed.json"), "atom": (atom_feed, "atom.xml"), "rss": (rss_feed, "rss.xml")}
FORMATS["rss-permalink"] = (rss_permalink_feed, "rss.xml")


@pytest.mark.unit
@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_gives_its_entry_id(tmp_path, kind):
    make, name = FORMATS[kind]
    (tmp_path / name).write_text(make("https://example.com/posts/new-slug/"), encoding="utf-8")
    (post,) = read_feed(str(tmp_path / name), SITE)
    expected = {"atom": "tag:example.com,2026:post-41", "rss-permalink": "https://example.com/posts/old/"}
    assert post.entry_id == expected.get(kind, "post-41")


@pytest.mark.unit
def test_a_permalink_guid_that_is_the_entrys_own_link_adds_nothing_to_keep(tmp_path):
    """mkdocs-rss-plugin and most generators write the link as the guid: the ledger's URL says it."""
    (tmp_path / "rss.xml").write_text(rss_permalink_feed("https://example.com/posts/old"), encoding="utf-8")
    (post,) = read_feed(str(tmp_path / "rss.xml"), SITE)
    assert post.entry_id is None


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


@pytest.mark.process
@pytest.mark.parametrize("kind", FORMATS)
def test_an_entry_whose_link_changes_under_the_same_id_is_the_same_post(tmp_path, sandbox, kind):
    make, name = FORMATS[kind]
    channels = {"masto": mastodon_raw(sandbox)}
    settings = {"site_url": SITE, "site_name": "A site", "mode": "send", "backlog": "send", "channels": channels}
    (tmp_path / "syndicate.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    (tmp_path / name).write_text(make("https://example.com/posts/old/"), encoding="utf-8")
    first = cli(tmp_path, "run", "--feed", name)
    assert first.returncode == 0, first.stderr
    (tmp_path / name).write_text(make("https://example.com/posts/new-slug/"), encoding="utf-8")
    moved = cli(tmp_path, "run", "--feed", name)
    assert moved.returncode == 0, moved.stderr
    assert "moved: posts/old/ → posts/new-slug/ (the same post, by its feed entry id" in moved.stdout + moved.stderr
    statuses = sandbox.snapshot()["mastodon"]["statuses"]
    assert len(statuses) == 1, statuses
    assert "https://example.com/posts/new-slug/" in statuses[0]["content"]  # edited in place
    book = Ledger.read(tmp_path / "ledger.yml")
    assert list(book.posts) == ["posts/new-slug/"]
    assert "https://example.com/posts/old/" in book.posts["posts/new-slug/"].aliases
