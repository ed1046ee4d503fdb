"""The clues to a renamed post's identity besides what it carries (issue 50, item 1): git's renames
as engine/history.py reads them, the content fingerprint (content/fingerprint.py), and how
engine/moves.py weighs them: history first, a fingerprint only for one entry of the same date
and text, and a tie or a likeness short of sure held for a person (a doubt), never announced."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from conftest import make_post

from mkdocs_syndicate.content.fingerprint import PERHAPS, SAME, Fingerprint, fingerprint_of
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.history import History, Trail, _renames
from mkdocs_syndicate.engine.moves import identify
from mkdocs_syndicate.ledger.format import dump, parse
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State

pytestmark = pytest.mark.unit
SITE = "https://example.com/"
TEXT = " ".join(f"word{n} of a post about moving house" for n in range(60))
DONE = Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1", remote_url="https://m.example/@me/1")


def page(key: str, body: str = TEXT, day: int = 20, src: str = "") -> Post:
    return make_post(
        day,
        key=key,
        url=SITE + key,
        body_html=f"<p>{body}</p>",
        src=src,
        date=dt.datetime(2026, 11, day, tzinfo=dt.UTC),
    )


def entry_of(post, src: str | None = None) -> PostEntry:
    return PostEntry(post.url, post.title, {"masto": DONE}, src=src, fingerprint=fingerprint_of(post).text())


class FakeHistory(History):
    def __init__(self, trails: dict[str, Trail]) -> None:
        self.trails = trails

    def trail(self, src: str) -> Trail | None:
        return self.trails.get(src)


def test_a_fingerprint_knows_its_text_through_a_small_edit_and_nothing_else():
    base = fingerprint_of(page("a/"))
    assert Fingerprint.parse(base.text()) == base and base.date == "2026-11-20"
    assert base.likeness(fingerprint_of(page("b/", TEXT.replace("word7 of", "word seven of")))) >= SAME
    assert base.likeness(fingerprint_of(page("c/", "an entirely different post on other matters " * 20))) < PERHAPS
    assert Fingerprint.parse("not hex at all") is None and Fingerprint.parse(None) is None


def test_a_fingerprint_is_kept_in_the_ledger_and_read_back():
    entry = entry_of(page("a/"))
    assert parse(dump({"a/": entry}), "ledger.yml")["a/"].fingerprint == entry.fingerprint


def test_gits_name_status_output_is_read_as_renames_in_order():
    output = "\x01\x00\nR080\x00posts/One.md\x00posts/one.md\x00R100\x00a b.md\x00c/é.md\x00\x01\x00\nM\x00x.md\x00"
    assert [(r.old, r.new, r.similarity) for r in _renames(output)] == [
        ("posts/One.md", "posts/one.md", 80),
        ("a b.md", "c/é.md", 100),
    ]


def test_history_comes_before_the_fingerprint():
    """Two orphans: one git saw renamed to the post's file, one of the same text: git wins."""
    new = page("posts/new/", src="posts/new.md")
    ledger = {
        "posts/old/": entry_of(page("posts/old/", "a different text " * 30), "posts/old.md"),
        "posts/twin/": entry_of(page("posts/twin/"), "posts/twin.md"),
    }
    found = identify(ledger, [new], SITE, history=FakeHistory({"posts/old.md": Trail("posts/new.md", 100)}))
    assert [(m.old, m.new) for m in found.moves] == [("posts/old/", "posts/new/")] and not found.doubts
    assert "history" in found.moves[0].why


def test_a_rename_with_edits_under_another_date_is_a_doubt():
    """Deleting one release's notes and writing the next one's in one commit looks like a rename to git."""
    new = page("posts/v2/", TEXT.replace("word3", "v2"), day=27, src="posts/v2.md")
    ledger = {"posts/v1/": entry_of(page("posts/v1/"), "posts/v1.md")}
    found = identify(ledger, [new], SITE, history=FakeHistory({"posts/v1.md": Trail("posts/v2.md", 70)}))
    assert not found.moves and [d.olds for d in found.doubts] == [("posts/v1/",)]


def test_without_history_one_entry_of_the_same_date_and_text_is_the_post():
    found = identify({"posts/old/": entry_of(page("posts/old/"))}, [page("posts/new/")], SITE)
    assert [(m.old, m.new) for m in found.moves] == [("posts/old/", "posts/new/")]
    assert found.posts["posts/new/"].fingerprint


@pytest.mark.parametrize(
    ("ledger_days", "why"),
    [((20, 20), "more than one old post"), ((21,), "a likeness")],
    ids=["tie", "same-text-other-date"],
)
def test_a_tie_or_a_weak_likeness_is_a_doubt_not_a_new_post(ledger_days, why):
    ledger = {f"posts/old-{n}/": entry_of(page(f"posts/old-{n}/", day=day)) for n, day in enumerate(ledger_days)}
    found = identify(ledger, [page("posts/new/")], SITE)
    assert not found.moves and len(found.doubts) == 1
    assert why in found.doubts[0].why and "needs review: posts/new/" in found.doubts[0].line()
    assert "mkdocs-syndicate resolve posts/new/" in found.doubts[0].line()


def test_an_unrelated_new_post_is_new():
    found = identify(
        {"posts/old/": entry_of(page("posts/old/"))}, [page("posts/new/", "news of another kind " * 40)], SITE
    )
    assert not found.moves and not found.doubts


def test_an_unchanged_post_is_told_by_its_opening_and_a_small_edit_writes_nothing():
    """The fingerprint keeps a CRC of what it read: the same post writes nothing to the ledger;
    a small edit neither (the kept sketch still matches); a rewrite refreshes it."""
    post = page("posts/a/", src="posts/a.md")
    ledger = {"posts/a/": entry_of(post, "posts/a.md")}
    assert Fingerprint.parse(ledger["posts/a/"].fingerprint).opening.startswith("#")
    assert identify(ledger, [post], SITE).learned == []
    edited = page("posts/a/", TEXT.replace("word7 of", "word seven of"), src="posts/a.md")
    assert identify(ledger, [edited], SITE).learned == []
    rewritten = page("posts/a/", "a wholly new text about other things " * 30, src="posts/a.md")
    assert identify(ledger, [rewritten], SITE).learned == ["posts/a/"]


def test_the_also_on_block_the_plugin_adds_is_not_part_of_the_fingerprint():
    """Announced, a page shows its copies (`<aside class="syndicate-links">`): the post did not change."""
    plain = page("posts/a/", "Short.")
    shown = page("posts/a/", "Short.")
    shown = replace(
        shown, body_html=shown.body_html + '\n<aside class="syndicate-links">Also on: <a>Mastodon</a></aside>'
    )
    assert fingerprint_of(shown) == fingerprint_of(plain)
