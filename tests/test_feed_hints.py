"""Hints for sites announced from their feed (issue 41): what a feed entry can and cannot do (it
has no front matter to opt out with), and descriptions made from a feed's HTML that read as text."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import SITE, channel_settings

from mkdocs_syndicate.channels.forem import ForemChannel
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.sources.feed import read_feed

pytestmark = pytest.mark.unit

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>A blog</title><link>https://example.com/</link>
<item><title>Hello, fediverse</title><link>https://example.com/blog/hello/</link>
<pubDate>Fri, 20 Nov 2026 00:00:00 +0000</pubDate>
<description>{description}</description></item>
</channel></rss>
"""


def description_of(tmp_path, html: str) -> str:
    import html as escape

    feed = tmp_path / "feed.xml"
    feed.write_text(RSS.format(description=escape.escape(html)), encoding="utf-8")
    (post,) = read_feed(str(feed), "https://example.com/")
    return post.description


def test_a_heading_in_a_feeds_description_keeps_a_separator_from_the_text_after_it(tmp_path):
    said = description_of(
        tmp_path, "<p>Announces each new post.</p><h2>Why the feed</h2><p>Because Zensical runs no plugin.</p>"
    )
    assert said == "Announces each new post. Why the feed. Because Zensical runs no plugin."
    # A heading that ends its own sentence gets no second stop.
    assert description_of(tmp_path, "<h2>Why?</h2><p>Because.</p>") == "Why? Because."


def test_a_description_that_opens_with_the_title_as_its_heading_does_not_say_it_twice(tmp_path):
    """Zensical (and mkdocs-rss-plugin) start an item's description with the page's <h1>."""
    said = description_of(tmp_path, "<h1>Hello, fediverse</h1>\n<p>Why this site announces its posts.</p>")
    assert said == "Why this site announces its posts."
    # Another first heading is kept, with its separator.
    assert description_of(tmp_path, "<h1>Intro</h1><p>Text.</p>") == "Intro. Text."


def forem() -> ForemChannel:
    (settings,) = channel_settings(
        {"devto": {"type": "forem", "api": "https://dev.to/api", "api_key": "k", "min_interval": 0}}
    )
    return ForemChannel(settings, SITE)


def test_dev_refusing_a_summary_only_feed_entry_names_what_a_feed_can_do_not_front_matter():
    entry = Post(
        key="blog/hello/",
        url="https://example.com/blog/hello/",
        title="Hello",
        date=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        source="feed public/index.xml: entry 1 (https://example.com/blog/hello/)",
        description="A summary.",
        body_missing=True,
    )
    with pytest.raises(PostError) as refused:
        forem().prepare(entry)
    said = str(refused.value)
    assert said.startswith("feed public/index.xml: entry 1 (https://example.com/blog/hello/): channel devto")
    assert "`enabled: false` on channel devto" in said and "full content" in said and "docs/recipes/" in said
    assert "opt the post out" not in said and "front matter" not in said.replace("no front matter", "")
    # A page of an MkDocs build can still be opted out in its front matter: that is what it says.
    page = Post(**{**entry.__dict__, "src": "blog/posts/hello.md", "source": "blog/posts/hello.md"})
    with pytest.raises(PostError, match="opt the post out of this channel in its front matter"):
        forem().prepare(page)
