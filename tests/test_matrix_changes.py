"""The Matrix channel's edits and redactions, decided from scripted answers in the shapes Synapse
1.163.2 gives (tests/test_realserver_matrix.py checks those shapes against Synapse itself): what
counts as this post's event, as redacted, as already edited, and what is never sent."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_post

from mkdocs_syndicate.channels.base import Copy, Kind, Presence, Seen
from mkdocs_syndicate.channels.matrix import MARKER, MatrixChannel
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.ledger.schema import Record, State

pytestmark = pytest.mark.unit

ROOM = "!room"
EVENT = "$original"
SITE = Site("https://example.com/", "Example")


def found(read):
    """What a read found, without the links it saw (the engine judges those)."""
    return read.found if isinstance(read, Seen) else read


class Scripted:
    """An Http whose answers are scripted per (method, path verb); it records what was asked."""

    def __init__(self, answers: dict[str, list[httpx.Response]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str, Any]] = []
        self.urls: list[str] = []

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        verb = url.split("/rooms/", 1)[1].split("/")[1]
        self.asked.append((method, verb, kwargs.get("json")))
        self.urls.append(url)
        return self.answers[f"{method} {verb}"].pop(0)

    def now(self) -> float:
        return 1_800_000_000.0


def answer(status: int, body: Any) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def channel() -> MatrixChannel:
    options = parse_options(
        {
            "mx": {
                "type": "matrix",
                "homeserver": "https://matrix.example",
                "room_id": ROOM,
                "access_token": "t",
            }
        },
        ledger_path=Path("ledger.yml"),
        site=SITE,
        sandbox=False,
        sending=True,
    )
    (settings,) = options.channels
    return MatrixChannel(settings, SITE)


def setup(description: str = "Now.") -> tuple[MatrixChannel, Any, Any, Record]:
    mx = channel()
    post = make_post(1, description=description)
    prepared = mx.prepare(post)
    record = Record(
        State.IN_FLIGHT,
        1,
        "2026-12-01T00:00:00Z",
        remote_id=EVENT,
        remote_url="https://matrix.to/#/!room/$original",
        idempotency_key=mx.prepare(post).idempotency_key,
        created_at="2026-12-01T00:00:00Z",
        op="update",
    )
    return mx, post, prepared, record


def event(content: dict[str, Any], **unsigned: Any) -> dict[str, Any]:
    return {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "content": content, "unsigned": unsigned}


def original(record: Record, body: str) -> dict[str, Any]:
    return {"msgtype": "m.text", "body": body, MARKER: record.idempotency_key}


def replaced_by(record: Record, body: str, event_id: str = "$edit") -> dict[str, Any]:
    content = {
        "msgtype": "m.text",
        "body": "* " + body,
        "m.new_content": original(record, body),
        "m.relates_to": {"rel_type": "m.replace", "event_id": EVENT},
    }
    return {"m.replace": {"event_id": event_id, "type": "m.room.message", "content": content}}


REDACTED = {"event_id": EVENT, "room_id": ROOM, "content": {}, "unsigned": {"redacted_because": {"event_id": "$r"}}}


def test_an_edit_is_an_m_replace_with_the_marker_in_its_new_content_after_a_read():
    mx, post, prepared, record = setup()
    http = Scripted(
        {
            "GET event": [answer(200, event(original(record, "old text")))],
            "PUT send": [answer(200, {"event_id": "$edit"})],
        }
    )
    outcome = asyncio.run(mx.update(http, post, prepared, record))
    assert outcome.kind is Kind.DONE and outcome.remote_id == EVENT
    (_, _, first), (_, _, sent) = http.asked
    assert first is None and sent["m.relates_to"] == {"rel_type": "m.replace", "event_id": EVENT}
    assert sent["m.new_content"] == original(record, prepared.message.text)
    assert sent["body"] == "* " + prepared.message.text and MARKER not in sent


def test_a_redacted_copy_is_not_edited_and_is_gone():
    mx, post, prepared, record = setup()
    http = Scripted({"GET event": [answer(200, REDACTED), answer(200, REDACTED)]})
    assert asyncio.run(mx.update(http, post, prepared, record)).kind is Kind.GONE
    assert found(asyncio.run(mx.read_copy(http, post, record, prepared))) is Copy.GONE
    assert [verb for _, verb, _ in http.asked] == ["event", "event"]


def test_a_copy_already_saying_the_text_gets_no_second_edit():
    mx, post, prepared, record = setup()
    said = event(original(record, "old"), **{"m.relations": replaced_by(record, prepared.message.text)})
    http = Scripted({"GET event": [answer(200, said), answer(200, said)]})
    assert asyncio.run(mx.update(http, post, prepared, record)).kind is Kind.DONE
    assert found(asyncio.run(mx.read_copy(http, post, record, prepared))) is Copy.MATCHES
    assert [verb for _, verb, _ in http.asked] == ["event", "event"]


def test_the_latest_replacement_decides_not_the_original():
    mx, post, prepared, record = setup()
    stale = event(original(record, prepared.message.text), **{"m.relations": replaced_by(record, "another text")})
    http = Scripted({"GET event": [answer(200, stale)]})
    assert found(asyncio.run(mx.read_copy(http, post, record, prepared))) is Copy.DIFFERS


@pytest.mark.parametrize(
    "why, status, body",
    [
        ("a 404: also the answer for an event the bot may not see", 404, {"errcode": "M_NOT_FOUND"}),
        ("another post's event", 200, event({"msgtype": "m.text", "body": "x", MARKER: "another pair"})),
        ("no marker at all", 200, event({"msgtype": "m.text", "body": "x"})),
        ("another event than the one asked", 200, {**event({}), "event_id": "$other"}),
        ("a proxy's page", 200, "<html>"),
    ],
)
def test_a_read_that_proves_nothing_is_never_gone_and_sends_no_edit(why, status, body):
    mx, post, prepared, record = setup()
    http = Scripted({"GET event": [answer(status, body) for _ in range(3)]})
    assert found(asyncio.run(mx.read_copy(http, post, record, prepared))) is Copy.UNKNOWN, why
    assert found(asyncio.run(mx.read_presence(http, record))) is Presence.UNKNOWN, why
    outcome = asyncio.run(mx.update(http, post, prepared, record))
    assert outcome.kind is Kind.NOT_SENT, why
    assert [verb for _, verb, _ in http.asked] == ["event"] * 3


def test_an_edit_of_the_wrong_shape_proves_nothing():
    mx, post, prepared, record = setup()
    odd = event(original(record, "old"), **{"m.relations": {"m.replace": {"event_id": "$e", "content": "?"}}})
    http = Scripted({"GET event": [answer(200, odd), answer(200, odd)]})
    assert found(asyncio.run(mx.read_copy(http, post, record, prepared))) is Copy.UNKNOWN
    assert asyncio.run(mx.update(http, post, prepared, record)).kind is Kind.NOT_SENT


def test_edit_transaction_ids_repeat_for_the_same_edit_and_differ_for_another():
    """The same edit of the same event after a lost answer: the same txnId (Synapse returns the
    event it made). Another text, or the same text over a later edit (a revert): another."""
    mx, post, prepared, record = setup()

    def txn(latest: str, prepared_now: Any) -> str:
        said = event(original(record, "old"), **({"m.relations": replaced_by(record, "b", latest)} if latest else {}))
        http = Scripted({"GET event": [answer(200, said)], "PUT send": [answer(200, {"event_id": "$e"})]})
        asyncio.run(mx.update(http, post, prepared_now, record))
        return http.urls[-1].rsplit("/", 1)[1]

    other = mx.prepare(replace(post, description="Something else."))
    assert txn("", prepared) == txn("", prepared)
    assert txn("", prepared) != txn("", other)
    assert txn("$edit-1", prepared) != txn("", prepared)


def test_a_redaction_is_done_on_its_answer_and_gone_only_when_the_event_says_redacted():
    mx, _, _, record = setup()
    http = Scripted(
        {
            "PUT redact": [answer(200, {"event_id": "$r"}), answer(404, {"errcode": "M_NOT_FOUND"})],
            "GET event": [answer(200, REDACTED), answer(200, event(original(record, "still here")))],
        }
    )
    assert asyncio.run(mx.delete(http, record)).kind is Kind.DONE
    assert asyncio.run(mx.delete(http, record)).kind is Kind.AMBIGUOUS  # a 404 is read before anything else
    assert found(asyncio.run(mx.read_presence(http, record))) is Presence.GONE
    assert found(asyncio.run(mx.read_presence(http, record))) is Presence.PRESENT


def test_a_429_on_an_edit_or_a_redaction_waits_as_its_body_says():
    mx, post, prepared, record = setup()
    limited = {"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": 1500}
    http = Scripted(
        {
            "GET event": [answer(200, event(original(record, "old")))],
            "PUT send": [answer(429, limited)],
            "PUT redact": [answer(429, limited)],
        }
    )
    for outcome in (asyncio.run(mx.update(http, post, prepared, record)), asyncio.run(mx.delete(http, record))):
        assert outcome.kind is Kind.RATE_LIMITED and outcome.retry_after == 1.5
