"""A `deleted` record keeps the id and URL of the copy it names (and a thread's parts): which copy
a read proved gone stays in the ledger, for a person, a later read and `git diff`. Its readers
agree on it, and nothing takes it for a live copy because it has an id: the post page's links,
the standard.site link, `status`, the plan, and a decision by hand. Pure: no socket, no process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mkdocs_syndicate.channels.base import Found, Kind
from mkdocs_syndicate.cli.status import _status_lines
from mkdocs_syndicate.content.crosslinks import copies
from mkdocs_syndicate.engine.endings import Facts, ending
from mkdocs_syndicate.engine.policy import Action, Step
from mkdocs_syndicate.engine.thread_changes import next_change, parts_of
from mkdocs_syndicate.ledger.fast import parse_canonical
from mkdocs_syndicate.ledger.format import dump, parse_yaml
from mkdocs_syndicate.ledger.merge import merge
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Part, PostEntry, Record, State, live_parts
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.ledger.tolerant import parse_tolerant
from mkdocs_syndicate.output.status import status_view
from mkdocs_syndicate.sources.ledger_copies import done_copies
from mkdocs_syndicate.sources.standard_site import document_uris
from mkdocs_syndicate.sources.syndication_file import syndication_json
from mkdocs_syndicate.timeutil import from_iso

pytestmark = pytest.mark.unit

AT = "2026-12-05T05:00:00Z"
URL = "https://m.example/@me/111"
PARTS = (
    Part("111", URL, "aa" * 32),
    Part("112", "https://m.example/@me/112", "bb" * 32),
    Part("113", "https://m.example/@me/113", "cc" * 32),
)
DONE = Record(
    State.DONE, 1, "2026-12-01T00:00:00Z", remote_id="111", remote_url=URL, idempotency_key="k", message_sha256="h"
)
THREAD = Record(State.DONE, 3, "2026-12-01T00:00:00Z", remote_id="111", remote_url=URL, parts=PARTS)
DOC = "at://did:plc:abc/site.standard.document/3kabc"


def test_every_way_into_deleted_keeps_the_copys_id_url_and_parts():
    in_flight = Record(State.IN_FLIGHT, 2, AT, remote_id="111", remote_url=URL, op="delete", parts=PARTS)
    gone = in_flight.gone(AT, "deleted (confirmed by reading the copy)")
    assert (gone.state, gone.remote_id, gone.remote_url, gone.parts, gone.op) == (
        State.DELETED,
        "111",
        URL,
        PARTS,
        None,
    )
    # The runner's ending of a read that proves the copy gone (engine/endings.py).
    facts = Facts("masto", [], Found.ABSENT, AT, reason="gone")
    end = ending(facts, in_flight, Action(Step.DELETED))
    assert end.record is not None and (end.record.remote_id, end.record.remote_url) == ("111", URL)
    # A removed page's ping (a batched channel's delete) keeps what it had: nothing, or its id.
    ping = ending(Facts("ping", [], Kind.DONE, AT, batch=1), in_flight, Action(Step.DONE))
    assert ping.record is not None and ping.record.remote_id == "111"


def test_a_removal_under_way_lists_its_deleted_parts_and_the_end_names_them_all():
    """A thread's removal deletes the last part first: a deleted part stays listed, marked, and
    is never counted as a part still out; the `deleted` record lists every part, unmarked."""
    halfway = Record(
        State.IN_FLIGHT, 1, AT, remote_id="111", op="delete", parts=(*PARTS[:2], Part("113", deleted=True))
    )
    assert parts_of(halfway) == PARTS[:2] == live_parts(halfway.parts)
    assert next_change(parts_of(halfway), ()) == ("delete", 2)
    ended = Record(
        State.IN_FLIGHT,
        1,
        AT,
        remote_id="111",
        op="delete",
        parts=tuple(Part(p.remote_id, p.remote_url, p.message_sha256, deleted=True) for p in PARTS),
    )
    assert parts_of(ended) == () and next_change((), ()) is None
    assert ended.gone(AT, "every part").parts == PARTS


def test_the_three_readers_and_the_merge_agree_on_a_deleted_record_with_its_ids():
    halfway = Record(
        State.IN_FLIGHT,
        1,
        AT,
        remote_id="111",
        op="delete",
        part=2,
        parts=(
            *PARTS[:2],
            Part("113", "https://m.example/@me/113", "cc" * 32, deleted=True),
        ),
    )
    posts = {
        "posts/a/": PostEntry("https://e.example/posts/a/", "A", {"masto": THREAD.gone(AT, "removed")}),
        "posts/b/": PostEntry("https://e.example/posts/b/", "B", {"masto": halfway}),
    }
    text = dump(posts)
    assert 'remote_id: "111"' in text and "deleted: true" in text and text.count("deleted: true") == 1
    assert parse_canonical(text) == posts
    assert parse_yaml(text, "l.yml") == posts
    block = text.replace("    channels:\n", "    channels:  # by hand\n")  # a hand edit: the tolerant reader
    assert block != text and parse_tolerant(block, "l.yml", parse_yaml) == posts
    base = {"posts/a/": PostEntry("https://e.example/posts/a/", "A", {"masto": THREAD})}
    theirs = {**base, "posts/c/": PostEntry("https://e.example/posts/c/", "C", {"masto": DONE})}
    merged = merge(base, posts, theirs)
    assert merged["posts/a/"].channels["masto"] == posts["posts/a/"].channels["masto"]


@pytest.mark.parametrize("marked", ["deleted: false", 'deleted: "true"', "deleted: 1"])
def test_a_parts_deleted_mark_is_exactly_true(marked):
    posts = {"posts/b/": PostEntry("u", "B", {"masto": Record(State.IN_FLIGHT, 1, AT, op="delete", parts=PARTS)})}
    text = dump(posts).replace('remote_id: "113"', f'remote_id: "113", {marked}')
    assert marked in text
    with pytest.raises(Exception, match="deleted must be true"):
        parse_yaml(text, "l.yml")


def test_a_deleted_copy_is_no_link_no_document_and_no_copy_for_another_channel(tmp_path: Path):
    gone = DONE.gone(AT, "the post was removed")
    assert copies({"masto": gone}, {"masto": "Mastodon"}) == []
    ledger = tmp_path / "ledger.yml"
    standard = Record(State.DELETED, 1, AT, remote_id=DOC)
    ledger.write_text(
        dump({"posts/a/": PostEntry("https://e.example/posts/a/", "A", {"masto": gone, "std": standard})})
    )
    assert done_copies(ledger) == {}
    masto = {"type": "mastodon", "instance": "https://m.example", "token": "t"}
    assert json.loads(syndication_json(ledger, {"masto": masto}, "https://e.example/", comments=True))["posts"] == {}
    live = ledger.read_text().replace("state: deleted", "state: done", 1)  # the same copy, live: listed
    ledger.write_text(live)
    assert list(json.loads(syndication_json(ledger, {"masto": masto}, "https://e.example/"))["posts"]) == [
        "https://e.example/posts/a/"
    ]
    assert document_uris(ledger, {"std": {"type": "standard"}}) == {}


def test_status_says_a_deleted_copy_was_there_and_not_as_a_link(tmp_path: Path):
    path = tmp_path / "ledger.yml"
    path.write_text(dump({"posts/a/": PostEntry("u", "A", {"masto": DONE.gone(AT, "the post was removed")})}))
    view = status_view(Ledger.read(path), ["masto"], None, from_iso(AT), frozenset())
    (pair,) = view.pairs
    assert (pair.state, pair.remote_id, pair.remote_url) == ("deleted", "111", URL)
    lines = [line.plain for line in _status_lines(pair, 200)]
    assert lines[1].strip() == f"the post was removed; was {URL}", lines


@pytest.mark.parametrize("kind", ["done", "skip", "retry"])
def test_a_decision_on_a_deleted_pair_starts_a_new_life_without_the_gone_copys_ids(kind):
    """`resolve` on a deleted thread: nothing of the copy that is gone (its ids, parts, key,
    uploads) is carried into the record, which would make it a live copy to edit or link."""
    gone = THREAD.gone(AT, "deleted by its author")
    record = resolved("(p, c)", gone, Decision(kind), AT, "by hand")
    assert isinstance(record, Record)
    assert (record.remote_id, record.remote_url, record.parts, record.idempotency_key) == (None, None, (), None)
    assert record.state == {"done": State.DONE, "skip": State.SKIPPED, "retry": State.FAILED}[kind]
