"""A human's decision on a pair (`mkdocs-syndicate resolve`), as the ledger's rules make it: the
CLI only asks and prints (tests/test_cli.py runs the command itself)."""

from __future__ import annotations

import pytest

from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Record, State

pytestmark = pytest.mark.unit

AT = "2026-12-04T09:00:00Z"
IN_FLIGHT = Record(
    State.IN_FLIGHT,
    2,
    "2026-12-03T08:00:00Z",
    idempotency_key="k1",
    created_at="2026-12-01T00:00:00Z",
    message_sha256="ab" * 32,
)


@pytest.mark.parametrize(
    "decision", [Decision("done", "https://m.example/@me/1", "1"), Decision("retry"), Decision("skip")]
)
def test_every_decision_carries_the_key_the_first_attempt_and_the_hash_forward(decision):
    record = resolved("(p, c)", IN_FLIGHT, decision, AT, "by hand")
    assert isinstance(record, Record) and record.at == AT and record.note == "by hand" and record.attempts == 2
    assert (record.idempotency_key, record.created_at, record.message_sha256) == (
        IN_FLIGHT.idempotency_key,
        IN_FLIGHT.created_at,
        IN_FLIGHT.message_sha256,
    )
    assert record.state == {"done": State.DONE, "retry": State.FAILED, "skip": State.SKIPPED}[decision.kind]


def test_done_records_where_the_post_is():
    record = resolved("(p, c)", None, Decision("done", "https://m.example/@me/1", "1"), AT, "n")
    assert isinstance(record, Record) and (record.remote_url, record.remote_id) == ("https://m.example/@me/1", "1")


def test_what_needs_no_change_says_so_and_what_went_out_cannot_be_undone():
    failed = Record(State.FAILED, 1, AT)
    assert resolved("(p, c)", failed, Decision("retry"), AT, "n") == "(p, c) is already pending: the next run sends it"
    assert resolved("(p, c)", None, Decision("retry"), AT, "n") == "(p, c) is already pending: the next run sends it"
    assert resolved("(p, c)", Record(State.SKIPPED, 0, AT), Decision("skip"), AT, "n") == "(p, c) is already skipped"
    with pytest.raises(SyndicateError, match=r"\(p, c\) is done \(it went out\); it cannot be skipped"):
        resolved("(p, c)", Record(State.DONE, 1, AT), Decision("skip"), AT, "n")
    with pytest.raises(SyndicateError, match=r"\(p, c\) is already done; nothing to resolve"):
        resolved("(p, c)", Record(State.DONE, 1, AT), Decision("retry"), AT, "n")
