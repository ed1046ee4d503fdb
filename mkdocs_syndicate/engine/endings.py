"""How a pair's way through a run ends: the record to write (or none) and the words to report,
from what the attempt came to and the policy's step (engine/policy.py decides the step; this
module only words it). Pure: the runner hands in the facts and the time, and writes what comes
back, so every text's choice is pinned by tests/test_endings.py.

Every text a server had a say in is cleaned first: credentials out, then control characters,
then cut to ERROR_LENGTH."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mkdocs_syndicate.channels.base import Found, Kind, Outcome
from mkdocs_syndicate.engine.policy import Action, Event, Step
from mkdocs_syndicate.engine.records import not_made
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.redaction import redact
from mkdocs_syndicate.safety import clauses, one_line, without_reprs
from mkdocs_syndicate.timeutil import epoch_to_iso

ERROR_LENGTH = 300  # characters of an error kept in the ledger and the report
INTERRUPTED_BEFORE_SENDING = "interrupted before the request was sent (the next run sends it)"

# Outcomes that prove the request made nothing: not counted among the uncertain sends.
DEFINITE = frozenset({Kind.NOT_SENT, Kind.REFUSED, Kind.RATE_LIMITED, Kind.AUTH})

# The steps that end a member's way in this run; the others (send, retry, read) go on with the unit.
ENDING_STEPS = frozenset(
    {Step.DONE, Step.DELETED, Step.FAIL, Step.STOP_LANE, Step.RELEASE, Step.AWAIT, Step.LEAVE, Step.REVIEW, Step.HOLD}
)


@dataclass(frozen=True)
class Facts:
    """What one request's way has come to in this run, as its ending reads it."""

    channel_id: str
    secrets: Sequence[Any]  # redacted from every text
    event: Event  # the last send's kind or the last read's finding
    now: str  # the ISO time the records are written at
    reason: str = ""  # what came with the event (the server's error, the read's reason)
    outcome: Outcome | None = None  # the last send's outcome
    found: tuple[str | None, str | None] = (None, None)  # remote id and URL from the last read
    batch: int | None = None  # a batched request (IndexNow): how many URLs it carried
    sends: int = 0  # requests for the unit so far in this run


@dataclass(frozen=True)
class End:
    """How one member's way ends in this run: the record to write (or none), and what to report."""

    record: Record | None
    state: PairState
    text: str
    remote_url: str | None = None
    needs_review: bool = False
    stops_lane: str | None = None  # why the channel takes no more requests this run


def ending(facts: Facts, current: Record | None, action: Action) -> End:
    """One member's end of this run's way, by the policy's step (one of ENDING_STEPS)."""
    step = action.step
    if step is Step.LEAVE:
        text = leave_text(facts, action)
        return End(None, PairState.IN_FLIGHT, text, needs_review=action.needs_review)
    if step is Step.HOLD:
        return End(None, PairState.NOT_ATTEMPTED, clauses(clean(facts.reason, facts.secrets), action.reason))
    assert current is not None  # a send or a read came first: the pair has a record
    if step is Step.REVIEW:  # recorded, so that no later run acts on it until a person has
        why = clauses(clean(facts.reason, facts.secrets) if facts.reason else "", action.reason)
        return End(replace(current, review=why), PairState.of(current.state), f"needs review: {why}", needs_review=True)
    if step is Step.DONE:
        return _done(facts, current, action)
    if step is Step.DELETED:
        note = clean(facts.reason or action.reason, facts.secrets)
        answer = facts.outcome
        if answer is not None and answer.remote_id and not current.remote_id:  # answered with a copy since deleted
            current = replace(current, remote_id=answer.remote_id, remote_url=answer.remote_url)
        return End(current.gone(facts.now, note), PairState.DELETED, note)
    if step is Step.AWAIT:
        note = clauses(clean(facts.reason, facts.secrets), action.reason)
        return End(replace(current, error=note), PairState.WAITING, note)
    return _failed_end(facts, current, action)


def _done(facts: Facts, current: Record, action: Action) -> End:
    told = facts.outcome.mentions if facts.event is Kind.DONE and facts.outcome is not None else None
    if current.op == "delete":  # a removed page pinged (a batched channel's delete)
        how = f"pinged as removed, with {facts.batch or 0} URL(s)"
        gone = current.gone(facts.now, "the post was removed")
        return End(gone if told is None else replace(gone, mentions=told), PairState.DELETED, how)
    if facts.event is Kind.DONE and facts.outcome is not None:  # the send's answer names it
        remote_id, remote_url = facts.outcome.remote_id, facts.outcome.remote_url
        remark = facts.outcome.note or ""
    else:  # a read found it (or it is done without a name: received often enough)
        remote_id, remote_url = facts.found
        # What a read that found the copy says of it (a suspect URL); nothing for an ending by count
        remark = facts.reason if facts.event is Found.FOUND else ""
    remark = clean(remark, facts.secrets) if remark else ""
    if action.reason:
        how = action.reason
    elif facts.batch is not None:
        how = f"pinged with {facts.batch} URL(s)"
    elif facts.event is Kind.DONE:
        how = "sent"
    else:
        how = "found by verify (sent by an earlier run)" if facts.sends == 0 else "sent (confirmed by a read)"
    note = clauses(action.reason, remark) or None
    record = current.moved(State.DONE, facts.now, remote_id=remote_id, remote_url=remote_url, note=note)
    if told is not None:  # what a Webmention channel told each target: the record's sub-records
        record = replace(record, mentions=told)
    return End(record, PairState.DONE, clauses(how, remark), remote_url)


def _failed_end(facts: Facts, current: Record, action: Action) -> End:
    """FAIL, STOP_LANE and RELEASE: the record says failed (when a request may have gone out,
    it was in_flight); the pair ends, and with STOP_LANE so does the lane."""
    error = action.reason if action.step is Step.RELEASE else error_text(facts, action)
    stop = f"{facts.channel_id} stopped for this run: {error}" if action.step is Step.STOP_LANE else None
    if action.keep_in_flight:  # the outcome is unknown: the next run reads before it sends
        return End(None, PairState.IN_FLIGHT, clauses(error, action.reason), stops_lane=stop)
    record = None
    if current.state == State.IN_FLIGHT:
        record = not_made(current, error, facts.now, definite=facts.event in DEFINITE)
        if facts.event is Found.CONFLICT:  # what is at our key is not ours: the next attempt takes a fresh key
            record = replace(record, idempotency_key=None, created_at=None)
    state = PairState.PENDING if action.step is Step.RELEASE else PairState.FAILED
    return End(record, state, error, stops_lane=stop)


def error_text(facts: Facts, action: Action) -> str:
    """A request that did not do its work: the server's words (else the policy's), and when it
    asked to wait, until when."""
    error = clean(facts.reason or action.reason, facts.secrets)
    if facts.event is Kind.RATE_LIMITED and action.at is not None:
        error = clauses(error, f"retry after {epoch_to_iso(action.at)}")
    return error


def leave_text(facts: Facts, action: Action) -> str:
    """A pair left in_flight: what the last answer said, why, and what the policy makes of it."""
    cause = clean(facts.reason, facts.secrets) if facts.reason else ""
    outcome = facts.outcome
    last = clean(outcome.error, facts.secrets) if outcome is not None and outcome.error else ""
    said = [part for part in (last, cause if cause != last else "", action.reason) if part]
    text = clauses(*said) or clean(None, facts.secrets)
    if action.at is not None:
        text += f" (after {epoch_to_iso(action.at)})"
    return ("needs review: " if action.needs_review else "") + text


def clean(text: str | None, secrets: Sequence[Any]) -> str:
    """Credentials out first, then control characters, then cut: a token cut in half before
    redaction would leave its prefix behind."""
    cleaned = one_line(without_reprs(redact(text or "unknown error", secrets)))
    return cleaned if len(cleaned) <= ERROR_LENGTH else cleaned[: ERROR_LENGTH - 1] + "…"
