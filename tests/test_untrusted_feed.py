"""A feed's bad entries (issue 36): a field of the wrong type, a slug no ledger can key, a lone
surrogate. Each is left out alone, named with the field, and the rest of the feed goes on; a
document that cannot be read at all (nested 10,000 deep) is refused as a whole, clearly."""

from __future__ import annotations

import codecs
import copy
import json

import pytest
from test_feed import JSON_FEED, SITE, cli, standalone_site

from mkdocs_syndicate.errors import FeedError
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources.feed import read_feed, read_feed_posts

GOOD = JSON_FEED["items"][0]


def with_second_item(tmp_path, **fields) -> str:
    """A JSON Feed of the good item and a second one changed by `fields`."""
    feed = copy.deepcopy(JSON_FEED)
    feed["items"].append({**GOOD, "id": "2", "url": "https://example.com/posts/second/", **fields})
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(feed), encoding="utf-8")
    return str(path)


@pytest.mark.unit
@pytest.mark.parametrize(
    "field, value, said",
    [
        ("tags", 5, "`tags` must be a list of strings, not a number"),
        ("tags", ["ok", 7, None], "`tags` must be a list of strings, not a list holding a number, null"),
        ("title", ["a", "list"], "`title` must be a string, not a list"),
        ("summary", {"a": 1}, "`summary` must be a string, not an object"),
        ("date_published", 20261119, "`date_published` must be a string, not a number"),
        ("content_html", True, "`content_html` must be a string, not true or false"),
        ("image", ["/a.png"], "`image` must be a string, not a list"),
        ("external_url", 3.5, "`external_url` must be a string, not a number"),
    ],
)
def test_a_field_of_the_wrong_type_leaves_its_item_out_by_name_and_the_rest_is_read(tmp_path, field, value, said):
    read = read_feed_posts(with_second_item(tmp_path, **{field: value}), SITE)
    assert [p.key for p in read.posts] == ["posts/hello/"]
    (refused,) = read.refused
    assert refused.startswith("feed ") and ": item 2 (https://example.com/posts/second/): " + said in refused, refused
    assert refused.endswith("the entry is left out"), refused


@pytest.mark.unit
def test_an_item_with_a_wrong_typed_url_is_named_by_its_id(tmp_path):
    read = read_feed_posts(with_second_item(tmp_path, url=["x"], id="tag:example.com,2026:second"), SITE)
    assert "item 2 (tag:example.com,2026:second): `url` must be a string, not a list" in read.refused[0]


@pytest.mark.unit
def test_read_feed_still_refuses_the_whole_feed_for_a_library_caller(tmp_path):
    with pytest.raises(FeedError, match=r"item 2 \(https://example\.com/posts/second/\): `tags` must be"):
        read_feed(with_second_item(tmp_path, tags=5), SITE)


@pytest.mark.unit
def test_a_long_non_ascii_slug_leaves_that_entry_out_with_a_hint_for_feeds(tmp_path):
    read = read_feed_posts(with_second_item(tmp_path, url="https://example.com/posts/" + "漢" * 57 + "/"), SITE)
    assert [p.key for p in read.posts] == ["posts/hello/"]
    (refused,) = read.refused
    assert ": item 2 (https://example.com/posts/" in refused and "is 520 characters as a ledger key" in refused
    assert "give the page a shorter URL slug" in refused and "front matter" not in refused, refused
    assert len(refused) < 600  # the entry is named, not its whole link


@pytest.mark.unit
@pytest.mark.parametrize("depth, said", [(10_000, "nested too deeply to read"), (100, "nested more than 64 levels")])
def test_a_document_nested_too_deep_is_refused_as_a_whole(tmp_path, depth, said):
    path = tmp_path / "feed.json"
    feed = json.dumps(JSON_FEED)[:-1] + ', "_deep": ' + "[" * depth + "]" * depth + "}"
    path.write_text(feed, encoding="utf-8")
    with pytest.raises(FeedError, match=rf"feed .*feed\.json: {said}.*; nothing was sent"):
        read_feed_posts(str(path), SITE)


@pytest.mark.unit
def test_a_json_feed_with_a_utf8_bom_is_read(tmp_path):
    path = tmp_path / "feed.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(JSON_FEED).encode())
    assert [p.key for p in read_feed(str(path), SITE)] == ["posts/hello/"]


@pytest.mark.unit
@pytest.mark.parametrize("source", ["ftp://example.com/feed.xml", "file:///srv/site/feed.xml"])
def test_a_feed_address_of_another_scheme_is_named_as_unsupported(source):
    scheme = source.partition(":")[0]
    with pytest.raises(
        FeedError, match=rf"the scheme {scheme}:// is not supported; give an http or https URL, or a path"
    ):
        read_feed(source, SITE)


# ---------------------------------------------------------------------- the commands


def feed_site(tmp_path, sandbox, bad: dict):
    site = standalone_site(tmp_path, sandbox)
    feed = copy.deepcopy(JSON_FEED)
    feed["items"].append({**GOOD, "id": "2", "url": "https://example.com/posts/second/", **bad})
    (site / "public" / "feed.json").write_text(json.dumps(feed), encoding="utf-8")
    return site


REFUSED_ENTRIES = [
    ({"url": "https://example.com/posts/" + "a" * 1100 + "/"}, "is 1107 characters as a ledger key"),
    ({"title": "Bad \ud800 title"}, "its title holds a lone surrogate (U+D800)"),
    ({"tags": 5}, "`tags` must be a list of strings, not a number"),
]


@pytest.mark.process
@pytest.mark.parametrize("bad, said", REFUSED_ENTRIES)
def test_status_with_a_feed_names_a_refused_entry_without_a_traceback(tmp_path, sandbox, bad, said):
    site = feed_site(tmp_path, sandbox, bad)
    status = cli(site, "status", "--feed", "public/feed.json")
    assert "Traceback" not in status.stderr and status.returncode == 1, status.stderr
    assert "error: feed public/feed.json: item 2 (" in status.stderr and said in status.stderr, status.stderr
    assert "1 feed entry was left out (see above)" in status.stderr
    assert "posts/hello/" in status.stdout  # the rest is shown


@pytest.mark.process
@pytest.mark.parametrize("bad, said", REFUSED_ENTRIES)
def test_a_run_from_a_feed_sends_the_good_entries_and_names_the_refused_one(tmp_path, sandbox, bad, said):
    site = feed_site(tmp_path, sandbox, bad)
    run = cli(site, "run", "--feed", "public/feed.json")
    assert "Traceback" not in run.stderr and run.returncode == 1, run.stderr
    assert said in run.stderr and "1 feed entry was left out" in run.stderr, run.stderr
    assert sorted(Ledger.read(site / "ledger.yml").posts) == ["posts/hello/"]  # sent; the bad one not
