"""The records a pair's request writes, each made from the one before: `in_flight` before the
request leaves (phase one of the protocol), and, when the request did not do its work, `failed`.
Pure: the runner hands in the time and writes what comes back. How a way ends otherwise (done,
deleted, waiting, left in_flight) is engine/endings.py."""

from __future__ import annotations

from dataclasses import replace

from mkdocs_syndicate.channels.base import Prepared
from mkdocs_syndicate.engine.plan import PendingPair
from mkdocs_syndicate.ledger.schema import Record, State


def in_flight(pair: PendingPair, previous: Record | None, now: str, *, batched: bool, sandbox: bool) -> Record:
    """Phase one: what the request carries, written (durably, for at-most-once) before it leaves.
    `sandbox`: a rehearsal's record, which a real run will not count."""
    attempts = (previous.attempts if previous else 0) + 1
    if batched:  # at-least-once pings: no key, and no read to match a payload against
        # The page's hash, so a later change of the page pings it again; a re-ping of a done pair
        # says so (op: update).
        # What earlier pings told (Webmention's targets) stays known: a link taken out is told too.
        mentions = previous.mentions if previous is not None else ()
        return Record(
            State.IN_FLIGHT,
            attempts,
            now,
            message_sha256=pair.prepared.sha256,
            op=pair.op,
            mentions=mentions,
            sandbox=sandbox,
        )
    return Record(
        State.IN_FLIGHT,
        attempts,
        now,
        idempotency_key=pair.prepared.idempotency_key,
        created_at=_created_at(pair, previous, now),
        message_sha256=pair.prepared.sha256,
        # An upload made for an earlier attempt stays known: reused if it is this image's
        # (engine/uploads.py), and an earlier in_flight without one says one may be orphaned.
        media=previous.media if previous is not None else (),
        sandbox=sandbox,
        life=previous.life if previous is not None else None,  # the ids were derived for it
    )


def _created_at(pair: PendingPair, previous: Record | None, now: str) -> str:
    """The pair's first attempt, kept while the payload is unchanged: windows and scan bounds
    are measured from it. A channel that freezes it into the payload (Bluesky) decides."""
    if pair.prepared.created_at:
        return pair.prepared.created_at
    if previous is not None and previous.created_at and previous.message_sha256 == pair.prepared.sha256:
        return previous.created_at
    return now


def as_sent(pair: PendingPair, previous: Record | None) -> Prepared:
    """The message to send: marked a replay when its key was sent before by a request whose
    outcome is unknown, so the service may answer for it."""
    replay = (
        previous is not None
        and previous.state == State.IN_FLIGHT
        and previous.idempotency_key is not None
        and previous.idempotency_key == pair.prepared.idempotency_key
    )
    return replace(pair.prepared, replay=True) if replay else pair.prepared


def not_made(current: Record, error: str, now: str, *, definite: bool = False) -> Record:
    """A request that did not do its work: `failed`, except a removed page's ping (`op:
    delete`), which goes back to `done` with a note, as a refused delete of a copy does
    (engine/updates.py): a failed record of a post gone from the source is pending for nobody,
    so the ping would be lost; done, the next run finds the post removed and pings it again.

    `definite`: the request never left, or the service said a definite no; it is not one of the
    sends whose outcome was unknown, which `attempts` counts against the cap
    (policy.MAX_UNCERTAIN_SENDS), so the in_flight write's count is taken back."""
    if current.op == "delete" and current.state == State.IN_FLIGHT:
        return current.moved(State.DONE, now, note=f"delete not made: {error}")
    failed = current.moved(State.FAILED, now, error=error)
    if definite and current.state == State.IN_FLIGHT:
        failed = replace(failed, attempts=max(0, current.attempts - 1))
    return failed
