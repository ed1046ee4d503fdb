"""A human's decision on a pair (`mkdocs-syndicate resolve`), as the ledger's rules make it: the
CLI only asks and prints (tests/test_cli.py runs the command itself)."""

from __future__ import annotations

import pytest

from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Part, Record, State

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


def test_a_half_sent_thread_is_retried_from_where_it_stopped_or_left_as_it_is():
    """A thread whose part 2 was refused: --retry keeps the parts sent (the next run goes on from
    part 2), --done keeps its first part as the copy and the parts listed."""
    first = Part("101", "https://m.example/@me/101", "aa" * 32)
    failed = Record(
        State.FAILED,
        1,
        "2026-12-03T08:00:00Z",
        remote_id="101",
        remote_url="https://m.example/@me/101",
        error="thread part 2 of 3: 422",
        part=2,
        parts=(first,),
    )
    stopped = Record(State.IN_FLIGHT, 2, "2026-12-03T08:00:00Z", remote_id="101", part=2, parts=(first,))
    retried = resolved("(p, c)", stopped, Decision("retry"), AT, "by hand")
    assert isinstance(retried, Record) and retried.state == State.FAILED and retried.parts == (first,)
    done = resolved("(p, c)", failed, Decision("done"), AT, "left at one part")
    assert isinstance(done, Record) and done.state == State.DONE
    assert (done.remote_id, done.remote_url, done.parts) == ("101", "https://m.example/@me/101", (first,))


def test_retry_on_a_post_the_ledger_has_no_entry_for_records_it_as_a_new_post():
    """A post held as perhaps an old one (engine/clues.py): `--retry` says it is new, and writes
    its key into the ledger, pending; a post the ledger knows is pending already."""
    record = resolved("(p, c)", None, Decision("retry"), AT, "n", known=False)
    assert isinstance(record, Record) and record.state == State.FAILED and "a new post" in (record.error or "")
