"""A Matrix send's 200 counts only once the event it names is read (issue 49 item 5).

Synapse answers a transaction id it remembers (for a day, in its database) with the event it
made then, whether or not that event was redacted since, and its answer looks like any other:
`{"event_id": ...}`. So the channel reads the answered event before the send counts: this pair's
(its marker) and not redacted is done; redacted is this life's copy gone (recorded `deleted` and
said, never done); anything else is for a person. A ledger restored from a backup taken before a
send is how a run meets it: the record is gone, so the pair's life and its ids are the first
ones again."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from channel_specs import SPECS
from conftest import SITE, ListReporter, make_post

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

pytestmark = pytest.mark.http

KEY = "blog/post-1/"


def setup(tmp_path, sandbox, clock) -> tuple[Any, dict[str, str]]:
    sandbox.now = clock.time
    raw = SPECS["matrix"].raw(sandbox)
    options = parse_options({"room": raw}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    return options, raw


def record(tmp_path) -> Record:
    found = Ledger.read(tmp_path / "ledger.yml").record(KEY, "room")
    assert found is not None
    return found


def redact_by_hand(raw: dict[str, str], event_id: str) -> None:
    """The author redacts the message in the room (their own client, their own transaction id)."""
    room = quote(raw["room_id"], safe="")
    url = f"{raw['homeserver']}/_matrix/client/v3/rooms/{room}/redact/{quote(event_id, safe='')}/by-hand-1"
    answer = httpx.put(url, json={}, headers={"Authorization": f"Bearer {raw['access_token']}"})
    assert answer.status_code == 200, answer.text


def shown(sandbox) -> list[str]:
    """What the room shows of the post: its messages not redacted."""
    matrix = sandbox.emulators["matrix"]
    return [m["id"] for m in matrix.received(matrix.state, "") if m["announces"] and not m["deleted"]]


def test_a_send_answered_with_its_redacted_event_is_not_done_and_a_new_life_shows_the_post(tmp_path, sandbox, clock):
    options, raw = setup(tmp_path, sandbox, clock)
    send(options, [make_post(1)], ListReporter(), clock=clock)
    first = record(tmp_path)
    redact_by_hand(raw, str(first.remote_id))
    (tmp_path / "ledger.yml").unlink()  # restored from a backup taken before the send
    clock.now += 3600  # past Synapse's in-memory cache; its table keeps the id for a day

    report = send(options, [make_post(1)], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert "redacted" in report.results[0].detail, report.results
    again = record(tmp_path)
    assert again.state == State.DELETED and again.remote_id == first.remote_id, again
    assert shown(sandbox) == []  # and the ledger does not claim otherwise

    ledger = Ledger.open_for_writing(tmp_path / "ledger.yml")  # `resolve --retry`: a new life
    try:
        retried = resolved(f"({KEY}, room)", again, Decision("retry"), "2026-12-07T00:00:00Z", "by hand")
        assert isinstance(retried, Record)
        ledger.apply([Transition(PostRef(KEY, make_post(1).url, "Post 1"), "room", retried)], by_hand=True)
    finally:
        ledger.close()
    report = send(options, [make_post(1)], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    new = record(tmp_path)
    assert new.life == 1 and shown(sandbox) == [new.remote_id], (new, shown(sandbox))


def test_a_send_answered_with_an_event_not_this_posts_is_for_a_person(tmp_path, sandbox, clock):
    """The homeserver answers the pair's transaction id with an event that does not carry its
    marker (here: another user's message): nothing proves the post is in the room, so the pair
    is not done and not sent again blind; a person decides."""
    options, _ = setup(tmp_path, sandbox, clock)
    send(options, [make_post(1)], ListReporter(), clock=clock)
    matrix = sandbox.emulators["matrix"]
    foreign = matrix.add_foreign("someone else's message")
    for seen in matrix.state["transactions"].values():
        seen["event_id"] = foreign
    (tmp_path / "ledger.yml").unlink()
    clock.now += 3600

    report = send(options, [make_post(1)], ListReporter(), clock=clock)
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)], report.results
    assert record(tmp_path).remote_id != foreign
