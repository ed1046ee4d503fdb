"""A post announced as a thread (`thread: true`) in a real browser: the conversation under its
first part shows the readers' replies, those to a later part too, and never the thread's own
later parts, which are the post; the counts beside the links do not count them as replies. On
the page the plugin built and on a page shown from syndication.json."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from channel_specs import SPECS
from conftest import TRUSTED_INDEXNOW_KEYS, mastodon_raw, write_ledger
from sites import mkdocs, post, write_site
from test_conversation import Tree, author_of, dom, every_item, page_url, replies_below, section, served, top_items
from test_crosslinks import build_again_planning, chromium

from mkdocs_syndicate.content.crosslinks import block_html, copies
from mkdocs_syndicate.ledger.schema import Part, Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer
from mkdocs_syndicate.sources import ledger_copies
from mkdocs_syndicate.sources.syndication_file import syndication_json

# The browser tests keep to one worker (xdist_group): the module's fixture is made once a run.
pytestmark = pytest.mark.xdist_group("conversation")

# About 200 characters each: a part of its own on a 300-character Mastodon and on Bluesky (the
# first part holds the template's text, the post's URL and the first paragraph).
PARAGRAPHS = [
    "The first paragraph sets the scene. " * 5,
    "The second paragraph goes deeper into the matter at hand. " * 3,
    "The third paragraph draws the threads together and ends. " * 3,
]
SITE = "https://example.com/"


@dataclass
class Pages:
    built: str  # the DOM of the post's page the plugin built, after the script ran
    listed: str  # the DOM of a page the plugin did not build, its links from syndication.json


def plain_page(site: Path, folder: Path, page: Path) -> None:
    """`folder`: the post's page at its path as another generator's would be, with the one tag
    docs/links.md gives, beside the built site's script and syndication.json."""
    shutil.copytree(site / "assets", folder / "assets")
    shutil.copy(site / "syndication.json", folder / "syndication.json")
    target = folder / page.relative_to(site)
    target.parent.mkdir(parents=True)
    target.write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>Long one</title></head><body>'
        '<h1>Long one</h1><script src="/assets/syndicate/comments.js" defer></script></body></html>',
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pages]:
    chromium()
    tmp = tmp_path_factory.mktemp("threads")
    with SandboxServer(tmp / "sandbox-state", emulators()) as sandbox:
        sandbox.emulators["indexnow"].trust(*TRUSTED_INDEXNOW_KEYS)
        channels = {
            "masto": mastodon_raw(sandbox, thread=True, max_characters=300, max_parts=3),
            "bsky": SPECS["bluesky"].raw(
                sandbox,
                thread=True,
                max_parts=3,
                appview=f"{sandbox.url}/bluesky-appview",
                web_url=f"{sandbox.url}/bluesky",
            ),
        }
        long = "\n\n".join(p.strip() for p in PARAGRAPHS)
        config = write_site(
            tmp,
            {"mode": "send", "comments": True, "channels": channels},
            {"a.md": post("Long one", dt.date(2026, 11, 20), description=long)},
            blog=True,
            site_url=SITE,
        )
        built = mkdocs(config)
        assert built.returncode == 0, built.stderr
        book = Ledger.read(tmp / "ledger.yml")
        (key,) = book.posts
        masto, bsky = book.record(key, "masto"), book.record(key, "bsky")
        assert masto and bsky and len(masto.parts) == 3 and len(bsky.parts) == 3, (masto, bsky)
        m1, m2, m3 = (p.remote_id for p in masto.parts)
        b1, b2, b3 = (p.remote_id for p in bsky.parts)

        def m(name: str, parent: str, hour: int) -> str:
            text = f"<p>{name} on Mastodon</p>"
            return str(
                sandbox.add_reply("mastodon", parent, author=name, text=text, at=f"2026-12-01T{hour:02d}:00:00Z")["id"]
            )

        def b(name: str, parent: str, hour: int) -> str:
            text = f"{name} on Bluesky"
            return str(
                sandbox.add_reply("bluesky", parent, author=name, text=text, at=f"2026-12-01T{hour:02d}:30:00Z")["uri"]
            )

        ana = m("ana", m1, 1)  # under part 1
        bo = m("bo", m2, 2)  # under part 2: a reply to the post all the same
        m("cy", bo, 3)  # under a reply to part 2: nested under it
        m("dee", m3, 4)  # under part 3
        # The post's author answering a reader, from the thread's own account: a reply, not a part.
        answer = httpx.post(
            f"{channels['masto']['instance']}/api/v1/statuses",
            headers={"Authorization": f"Bearer {channels['masto']['token']}"},
            json={"status": "Thanks, ana!", "in_reply_to_id": ana},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        b("eve", b1, 1)
        fay = b("fay", b2, 2)
        b("gus", fay, 3)
        b("hal", b3, 4)
        sandbox.react("mastodon", m1, likes=3, reposts=2)
        sandbox.react("bluesky", b1, likes=5, reposts=1)

        build_again_planning(config)
        site = tmp / "site"
        (site / "syndication.json").write_text(syndication_json(tmp / "ledger.yml", channels, SITE, comments=True))
        (page,) = (site / "blog").rglob("long-one/index.html")
        plain_page(site, tmp / "plain", page)
        server, other = served(site), served(tmp / "plain")
        try:
            shown = dom(page_url(server, site, "long-one"), tmp / "profile-1")
            listed = dom(page_url(other, tmp / "plain", "long-one"), tmp / "profile-2")
        finally:
            for each in (server, other):
                each.shutdown()
                each.server_close()
        yield Pages(shown, listed)


def shown_pages(pages: Pages) -> list[tuple[str, str]]:
    return [("the plugin's page", pages.built), ("a page from syndication.json", pages.listed)]


@pytest.mark.process
def test_the_reader_sees_the_replies_to_every_part_and_never_the_parts(pages):
    for where, html in shown_pages(pages):
        replies = section(html)
        text = replies.text()
        assert "second paragraph" not in text and "third paragraph" not in text, where
        top = {author_of(item): item for item in top_items(replies)}
        # A reply to part 2 or 3 is a reply to the post: at the top, as one to part 1 is.
        assert list(top) == ["ana", "eve", "bo", "fay", "dee", "hal"], (where, list(top))
        assert [author_of(i) for i in replies_below(top["bo"])] == ["cy"], where
        assert [author_of(i) for i in replies_below(top["fay"])] == ["gus"], where
        (own,) = replies_below(top["ana"])  # the author's own answer to a reader is shown
        assert author_of(own) == "Sandbox" and "Thanks, ana!" in own.text(), where
        assert len(every_item(replies)) == 9, where  # 6 at the top, 3 below them


@pytest.mark.process
def test_the_counts_beside_the_links_do_not_count_the_parts_as_replies(pages):
    for where, html in shown_pages(pages):
        counts = [span.text() for span in Tree(html).root.all("span", "syndicate-counts")]
        # Each service counts part 2 among part 1's direct replies (one reader's reply besides).
        assert counts == [" (1 reply, 2 boosts, 3 favourites)", " (1 reply, 1 repost, 5 likes)"], (where, counts)


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
