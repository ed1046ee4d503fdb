"""A copy being edited (its record `in_flight` with `op: update`: a run killed mid-edit, or an edit
waiting for its settle time) is out and public at the id and URL its record keeps: its post's
page links it as its `done` record would, with the same replies data, from the ledger, from the
ledger's cache and in `syndication.json`, and standard.site's document link follows the same
rule. A delete in flight (the copy may be gone) and a first send's in_flight (no copy is proved)
link nothing."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from conftest import write_ledger
from sites import mkdocs, post, write_site
from test_crosslinks import Links

from mkdocs_syndicate.content.crosslinks import block_html, copies
from mkdocs_syndicate.ledger.schema import Part, Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources import ledger_copies
from mkdocs_syndicate.sources.standard_site import document_uris
from mkdocs_syndicate.sources.syndication_file import syndication_json

AT = "2026-11-20T10:00:00Z"
SITE = "https://example.com/"
MASTO = "https://mastodon.social/@me"
BSKY_WEB = "https://bsky.app/profile/me.bsky.social/post"
BSKY = "at://did:plc:abc/app.bsky.feed.post/"
DOC = "at://did:plc:abcdefghijklmnopqrstuvwx/site.standard.document/3mabcdefghij2"
CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://mastodon.social", "token": "x-token-1234"},
    "bsky": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "abcd-efgh-ijkl-mnop"},
    "devto": {"type": "forem", "api_key": "x-key-1234"},
    "std": {"type": "standard", "handle": "me.bsky.social", "app_password": "abcd-efgh-ijkl-mnop"},
}
NAMES = {"masto": "Mastodon", "bsky": "Bluesky", "devto": "DEV"}


def done(remote_id: str, url: str | None, *parts: str) -> Record:
    listed = tuple(Part(p, f"{url}/{n}", "0" * 64) for n, p in enumerate(parts, 1))
    return Record(State.DONE, 1, AT, remote_id=remote_id, remote_url=url, message_sha256="1" * 64, parts=listed)


def editing(record: Record, op: str = "update", part: int | None = None) -> Record:
    """The record an edit (or a delete) writes before its request: the copy's id and URL kept."""
    return dataclasses.replace(record, state=State.IN_FLIGHT, attempts=1, op=op, part=part, message_sha256="2" * 64)


def ledgers(tmp_path: Path) -> tuple[Path, Path]:
    """The same copies twice: all done, and with every edit in flight (a thread's part edit
    included); beside them a delete in flight and a first send in flight (a thread begun),
    which link nothing in either."""
    copies_done = {
        ("posts/a/", "masto"): done("111", f"{MASTO}/111", "111", "112", "113"),
        ("posts/a/", "bsky"): done(BSKY + "1", f"{BSKY_WEB}/1"),
        ("posts/a/", "std"): done(DOC, None),
        ("posts/b/", "masto"): done("120", f"{MASTO}/120"),
    }
    never = {
        ("posts/a/", "devto"): editing(done("9", "https://dev.to/me/a-9"), "delete"),
        ("posts/c/", "masto"): dataclasses.replace(
            done("130", f"{MASTO}/130", "130"), state=State.IN_FLIGHT, part=1
        ),  # a thread's first send: its first part out, the record not done
        ("posts/c/", "std"): editing(done(DOC.replace("2", "3"), None), "delete"),
        ("posts/d/", "bsky"): Record(State.IN_FLIGHT, 1, AT, idempotency_key="3mabc"),
    }
    in_flight = {pair: editing(record, part=2 if pair[1] == "masto" else None) for pair, record in copies_done.items()}
    write_ledger(tmp_path / "done.yml", {**copies_done, **never})
    write_ledger(tmp_path / "editing.yml", {**in_flight, **never})
    return tmp_path / "done.yml", tmp_path / "editing.yml"


def shown(path: Path) -> dict[str, str]:
    """Each post's links as the page marks them up, replies data and a thread's parts included."""
    replies_of = ledger_copies.replies_locator(CHANNELS, sandbox=False)
    found = ledger_copies.done_copies(path)
    return {key: block_html(copies(records, NAMES, replies_of), script_url="/c.js") for key, records in found.items()}


@pytest.mark.unit
def test_a_copy_whose_edit_is_in_flight_is_linked_as_its_done_record_would_be(tmp_path, monkeypatch):
    done_path, editing_path = ledgers(tmp_path)
    expected = shown(done_path)
    assert set(expected) == {"posts/a/", "posts/b/"}  # c/ and d/ have nothing out to link
    assert [c.channel for c in copies(ledger_copies.done_copies(done_path)["posts/a/"], NAMES)] == ["masto", "bsky"]
    assert 'data-parts="112 113"' in expected["posts/a/"] and "/api/v1/statuses/111/context" in expected["posts/a/"]
    assert shown(editing_path) == expected  # read from the ledger
    monkeypatch.setattr(Ledger, "read", lambda *a, **k: pytest.fail("the cache was not read"))
    assert shown(editing_path) == expected  # and from its cache
    listed = [
        json.loads(syndication_json(path, CHANNELS, SITE, comments=True))["posts"] for path in (done_path, editing_path)
    ]
    assert listed[0] == listed[1] and len(listed[0][SITE + "posts/a/"]) == 2
    assert listed[0][SITE + "posts/a/"][0]["replies"]["parts"] == ["112", "113"]


@pytest.mark.unit
def test_which_records_are_linked():
    from mkdocs_syndicate.content.crosslinks import linked_record

    copy = done("1", f"{MASTO}/1")
    assert linked_record(copy) and linked_record(editing(copy))
    assert not linked_record(editing(copy, "delete"))
    # A thread grown shorter deletes its later parts, last first: part 1, the linked copy, stays out.
    assert linked_record(dataclasses.replace(editing(copy, "delete"), part=3))
    assert not linked_record(dataclasses.replace(editing(copy, "delete"), part=1))
    assert not linked_record(dataclasses.replace(copy, state=State.IN_FLIGHT))  # a first send's
    assert not linked_record(dataclasses.replace(copy, state=State.FAILED))


@pytest.mark.unit
def test_a_cache_written_before_edits_were_linked_is_not_read(tmp_path):
    """The cache is keyed by the ledger's bytes: one an earlier version wrote for the same ledger
    left the edit in flight out, and would keep it out until the ledger changed."""
    _, editing_path = ledgers(tmp_path)
    digest = hashlib.sha256(editing_path.read_bytes()).hexdigest()
    cache = ledger_copies.cache_path(editing_path)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"format": 3, "ledger": digest, "copies": {}}), encoding="utf-8")
    assert set(ledger_copies.done_copies(editing_path)) == {"posts/a/", "posts/b/"}


@pytest.mark.unit
def test_the_document_link_follows_the_same_rule(tmp_path):
    done_path, editing_path = ledgers(tmp_path)
    assert document_uris(done_path, CHANNELS) == document_uris(editing_path, CHANNELS) == {"posts/a/": DOC}


@pytest.mark.process
def test_a_build_links_a_copy_and_its_document_while_their_edits_are_in_flight(tmp_path):
    """`mkdocs build` over a ledger a run killed mid-edit left: the page keeps its links, its
    replies data and its document link; the copy being deleted is not linked."""
    config = write_site(
        tmp_path,
        {"mode": "plan", "comments": True, "channels": CHANNELS},
        {"a.md": post("Alpha"), "c.md": post("Gamma", "2026-11-21")},
    )
    _, editing_path = ledgers(tmp_path)
    editing_path.rename(tmp_path / "ledger.yml")
    built = mkdocs(config)
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "site" / "posts" / "a" / "index.html").read_text()
    assert Links(page).found == [
        ["syndication", f"{MASTO}/111", "Mastodon"],
        ["syndication", f"{BSKY_WEB}/1", "Bluesky"],
    ]
    assert 'data-replies="https://mastodon.social/api/v1/statuses/111/context"' in page
    assert 'data-parts="112 113"' in page
    assert f'<link rel="site.standard.document" href="{DOC}">' in page.split("</head>")[0]
    other = (tmp_path / "site" / "posts" / "c" / "index.html").read_text()
    assert Links(other).found == [] and "site.standard.document" not in other
