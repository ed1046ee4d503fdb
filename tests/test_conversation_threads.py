"""A post announced as a thread (`thread: true`): its page names the thread's later parts, per
copy, so the comments script can leave them out of the replies."""

from __future__ import annotations

import json

import pytest
from conftest import write_ledger

from mkdocs_syndicate.content.crosslinks import block_html, copies
from mkdocs_syndicate.ledger.schema import Part, Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources import ledger_copies
from mkdocs_syndicate.sources.syndication_file import syndication_json

BSKY = "at://did:plc:abc/app.bsky.feed.post/"


def thread(url: str, *ids: str) -> Record:
    parts = tuple(Part(i, f"{url}/{n}", "0" * 64) for n, i in enumerate(ids, 1))
    return Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id=ids[0], remote_url=f"{url}/1", parts=parts)


@pytest.mark.unit
def test_a_threads_later_parts_are_named_on_its_links_from_the_ledger_and_from_its_cache(tmp_path, monkeypatch):
    """The page says which ids are the thread's later parts, per copy (data-parts; in
    syndication.json, `parts`), as the ledger lists them, and so does a build that reads the
    ledger's cache instead of the ledger; Bluesky's thread is read as many levels deeper."""
    raw = {
        "masto": {"type": "mastodon", "instance": "https://mastodon.social", "token": "t"},
        "bsky": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "p"},
    }
    path = tmp_path / "ledger.yml"
    write_ledger(
        path,
        {
            ("posts/long/", "masto"): thread("https://mastodon.social/@me", "111", "112", "113"),
            ("posts/long/", "bsky"): thread(
                "https://bsky.app/profile/me.bsky.social/post", BSKY + "1", BSKY + "2", BSKY + "3"
            ),
            ("posts/short/", "masto"): thread("https://mastodon.social/@me", "120"),
        },
    )
    names = {"masto": "Mastodon", "bsky": "Bluesky"}
    replies_of = ledger_copies.replies_locator(raw, sandbox=False)
    first = ledger_copies.done_copies(path)
    monkeypatch.setattr(Ledger, "read", lambda *a, **k: pytest.fail("the cache was not read"))
    for read in (first, ledger_copies.done_copies(path)):
        masto, bsky = copies(read["posts/long/"], names, replies_of)
        assert masto.replies and masto.replies.parts == ("112", "113")
        assert bsky.replies and bsky.replies.parts == (BSKY + "2", BSKY + "3")
        assert bsky.replies.url.endswith("&depth=12")  # replies below part 3 keep their 10 levels
        page = block_html([masto, bsky], script_url="/comments.js")
        assert 'data-parts="112 113"' in page and f'data-parts="{BSKY}2 {BSKY}3"' in page
        (short,) = copies(read["posts/short/"], names, replies_of)
        assert (
            short.replies and short.replies.parts == () and "data-parts" not in block_html([short], script_url="/c.js")
        )
    listing = json.loads(syndication_json(path, raw, "https://blog.example.org/", comments=True))
    masto_listed, bsky_listed = listing["posts"]["https://blog.example.org/posts/long/"]
    assert masto_listed["replies"]["parts"] == ["112", "113"]
    assert bsky_listed["replies"]["parts"] == [BSKY + "2", BSKY + "3"]
    assert "parts" not in listing["posts"]["https://blog.example.org/posts/short/"][0]["replies"]
