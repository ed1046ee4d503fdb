import datetime as dt

import pytest

from mkdocs_syndicate.content.posts import ChannelOverride, Post, announceable, as_datetime, parse_syndicate_meta
from mkdocs_syndicate.errors import PostError

pytestmark = pytest.mark.unit

UTC = dt.UTC


def post(key, day, **kw):
    return Post(key=key, url="https://e.com/" + key, title=key, date=dt.datetime(2026, 11, day, tzinfo=UTC), **kw)


def test_filter_and_order():
    now = dt.datetime(2026, 11, 20, tzinfo=UTC)
    posts = [
        post("c/", 15),
        post("a/", 10),
        post("draft/", 11, draft=True),
        post("future/", 25),
        post("old/", 1),
        post("out/", 12, opted_out=True),
    ]
    chosen = announceable(posts, now, since=dt.datetime(2026, 11, 5, tzinfo=UTC))
    assert [p.key for p in chosen] == ["a/", "c/"]


def test_duplicate_keys_name_both_sources():
    with pytest.raises(PostError, match=r"x.md and y.md"):
        announceable(
            [post("k/", 1, source="y.md"), post("k/", 2, source="x.md")], dt.datetime(2026, 12, 1, tzinfo=UTC), None
        )


def test_front_matter_syndicate_forms():
    assert parse_syndicate_meta(False, "p.md") == (False, {})
    enabled, over = parse_syndicate_meta({"mastodon": False, "bluesky": {"text": "hi"}}, "p.md")
    assert enabled is True and over == {"mastodon": ChannelOverride(False), "bluesky": ChannelOverride(True, "hi")}
    p = post("a/", 1, overrides=over)
    assert not p.wants("mastodon") and p.wants("bluesky") and p.wants("indexnow")
    with pytest.raises(PostError, match=r"p.md: front matter 'syndicate.m'"):
        parse_syndicate_meta({"m": "yes"}, "p.md")


def test_dates():
    assert as_datetime(dt.date(2026, 1, 2), "p") == dt.datetime(2026, 1, 2, tzinfo=UTC)
    assert as_datetime({"created": "2026-01-02T10:00:00+02:00"}, "p").utcoffset() == dt.timedelta(hours=2)
    with pytest.raises(PostError, match=r"p.md: a post needs a date"):
        as_datetime(None, "p.md")
