"""`mkdocs-syndicate inject`: the plugin's page side put into pages any generator built, by
splicing at the places a parser finds (content/pagehtml.py, sources/inject.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_ledger
from test_crosslinks import Links

from mkdocs_syndicate.content.crosslinks import Copy, block_html
from mkdocs_syndicate.content.pagehtml import Additions, creator_head_tag, handle_problem
from mkdocs_syndicate.content.pagehtml import added as spliced
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.sources.inject import Settings, inject
from mkdocs_syndicate.sources.standard_site import WELL_KNOWN

AT = "2026-12-01T00:00:00Z"
SITE = "https://example.com/"
DOC = "at://did:plc:abcdefghijklmnopqrstuvwx/site.standard.document/3mabcdefghij2"
MASTO = {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}

PAGE = (
    '<!doctype html>\r\n<html><head><meta charset="utf-8"><title>A</title></head>\r\n'
    '<body><nav><a href="/">home</a></nav><article class="post"><h1>A</h1><p>Text &amp; more.</p>'
    "<script>if (a < b) { x = '</article>'; } // <!-- syndicate --></script>"
    "</article><footer>f</footer></body></html>\r\n"
)
BLOCK = block_html([Copy("masto", "Mastodon", "https://m.example/@me/1")])


def done(url: str | None, remote_id: str = "1") -> Record:
    return Record(State.DONE, 1, AT, remote_id=remote_id, remote_url=url)


@pytest.mark.unit
def test_the_block_goes_at_the_end_of_the_article_and_every_other_byte_stays():
    result = spliced(PAGE, Additions((creator_head_tag("@me@m.example"),), BLOCK))
    # The article is an h-entry now (the page had none), the block ends it, the head has the tag.
    assert result.html == PAGE.replace('<article class="post">', '<article class="post h-entry">').replace(
        "</script></article>", "</script>" + BLOCK + "</article>"
    ).replace("</head>", '<meta name="fediverse:creator" content="@me@m.example">\n</head>')
    assert result.changed == ["added fediverse:creator", "added the links", "made <article> an h-entry"]
    again = spliced(result.html, Additions((creator_head_tag("@me@m.example"),), BLOCK))
    assert again.html == result.html and again.changed == []


@pytest.mark.unit
def test_the_authors_marker_then_the_selector_then_article_then_main_say_where():
    marked = PAGE.replace("<footer>", "<footer><!-- syndicate -->")
    assert "<!-- syndicate -->" + BLOCK in spliced(marked, Additions(block=BLOCK, selector="article")).html
    assert "f" + BLOCK + "</footer>" in spliced(PAGE, Additions(block=BLOCK, selector="body > footer")).html
    mained = "<html><head></head><body><main><p>x</p></main></body></html>"
    assert spliced(mained, Additions(block=BLOCK)).html == mained.replace("<main>", '<main class="h-entry">').replace(
        "</main>", BLOCK + "</main>"
    )
    bare = "<html><head></head><body><p>x</p></body></html>"
    nowhere = spliced(bare, Additions(block=BLOCK))
    assert nowhere.html == bare and "no <article> or <main>" in (nowhere.problem or "")
    unmatched = spliced(PAGE, Additions(block=BLOCK, selector="#nope"))
    assert unmatched.html == PAGE and "#nope" in (unmatched.problem or "")


@pytest.mark.unit
def test_a_page_of_its_own_h_entry_and_creator_keeps_them_and_a_changed_block_is_replaced():
    own = PAGE.replace('<article class="post">', '<div class="h-entry"><article class="post">').replace(
        "<title>A</title>", '<title>A</title><meta name="fediverse:creator" content="@author@x.example">'
    )
    first = spliced(own, Additions((creator_head_tag("@me@m.example"),), BLOCK)).html
    assert '<article class="post">' in first and "@me@m.example" not in first
    changed = block_html([Copy("masto", "Mastodon", "https://m.example/@me/2")])
    second = spliced(first, Additions(block=changed))
    assert second.html == first.replace(BLOCK, changed) and second.changed == ["replaced the links"]
    assert spliced(first, Additions(block="")).html == own  # no copy left: the block taken out


@pytest.mark.unit
def test_hostile_values_are_text_in_the_page():
    url = 'https://m.example/@me/1?a="><script>alert(1)</script>'
    block = block_html([Copy("masto", 'Masto<b>don</b>"', url)])
    page = spliced(PAGE, Additions((creator_head_tag("@me@m.example"),), block)).html
    links = Links(page)
    assert links.found == [["syndication", url, 'Masto<b>don</b>"']]
    assert page.count("<script>") == PAGE.count("<script>")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("value", "fine"),
    [
        ("@me@mastodon.social", True),
        ("@first.last@social.example.org", True),
        ("me@mastodon.social", False),
        ("@me", False),
        ('@me@x.example"><script>', False),
        ("@me@localhost", False),
        (42, False),
    ],
)
def test_fediverse_creator_is_an_account(value, fine):
    assert (handle_problem(value) is None) is fine


def site(tmp_path: Path, pages: dict[str, str]) -> Path:
    folder = tmp_path / "site"
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def settings(tmp_path: Path, channels: dict, **extra) -> Settings:
    return Settings(tmp_path / "ledger.yml", channels, SITE, tmp_path / "site", **extra)


@pytest.mark.unit
def test_inject_changes_the_pages_with_copies_only_and_a_second_run_nothing(tmp_path):
    folder = site(tmp_path, {"a/index.html": PAGE, "b/index.html": PAGE, "c.html": PAGE, "index.html": PAGE})
    os.chmod(folder / "a" / "index.html", 0o640)
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("a/", "masto"): done("https://m.example/@me/1"),
            ("b/", "masto"): Record(State.FAILED, 1, AT, error="x"),
            ("gone/", "masto"): done("https://m.example/@me/3"),  # a post no longer built
            ("../../etc/", "masto"): done("https://m.example/@me/4"),  # a hand-edited ledger
        },
    )
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done_ = inject(settings(tmp_path, {"masto": MASTO}, fediverse_creator="@me@m.example"))
    assert list(done_.changed) == ["a/index.html"] and done_.problems == []
    assert [line.split(":")[0] for line in done_.missing] == ["../../etc/", "gone/"]
    page = (folder / "a" / "index.html").read_bytes().decode()
    assert Links(page).found == [["syndication", "https://m.example/@me/1", "Mastodon"]]
    assert '<meta name="fediverse:creator" content="@me@m.example">' in page and "\r\n" in page
    assert oct(os.stat(folder / "a" / "index.html").st_mode & 0o777) == "0o640"
    after = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert {p for p in after if after[p] != before.get(p)} == {folder / "a" / "index.html"}
    second = inject(settings(tmp_path, {"masto": MASTO}, fediverse_creator="@me@m.example"))
    assert second.changed == {} and second.unchanged == 1
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == after


@pytest.mark.unit
def test_inject_writes_the_replies_script_and_standard_sites_files(tmp_path):
    folder = site(tmp_path, {"blog/a/index.html": PAGE, "blog/b.html": PAGE})
    channels = {"masto": MASTO, "std": {"type": "standard", "handle": "me.example", "app_password": "x"}}
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("blog/a/", "masto"): done("https://m.example/@me/1"),
            ("blog/b.html", "std"): done(None, DOC),
        },
    )
    done_ = inject(settings(tmp_path, channels, comments=True))
    assert sorted(done_.files) == [WELL_KNOWN, "assets/syndicate/comments.js"]
    a = (folder / "blog" / "a" / "index.html").read_text()
    assert 'data-service-type="mastodon"' in a and 'src="../../assets/syndicate/comments.js" defer' in a
    b = (folder / "blog" / "b.html").read_text()
    assert f'<link rel="site.standard.document" href="{DOC}">' in b and "syndicate-links" not in b
    assert (folder / WELL_KNOWN).read_text().startswith("at://did:plc:abcdefghijklmnopqrstuvwx/")
    assert inject(settings(tmp_path, channels, comments=True)).files == []
