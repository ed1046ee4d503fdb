"""What to do next with one (post, channel) pair, given what just happened: one pure function.

An event is the outcome of a send (`Kind`) or of a read of the remote side (`Found`). The rule it
enforces (docs/how-it-works.md: read before any resend): an at-most-once request whose outcome is unknown is
never repeated until a read proves the post absent, and not before `settle` seconds after the last
attempt, because the server may still be working on it (Mastodon stores its Idempotency-Key only
after creating the status, with no lock; some servers ignore the key). Only a channel whose repeat
is a no-op by construction (`repeat_safe`: Bluesky's deterministic rkey + identical putRecord) may
resend without that. A request that provably never left (NOT_SENT) may be retried at once.

The runner executes the step; it holds no policy of its own.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass

from mkdocs_syndicate.channels.base import Copy, Found, Kind, Presence

DEFAULT_TRIES = 4  # sends per pair within one run (the first one plus retries)
MAX_UNCERTAIN_SENDS = 5  # sends of an at-most-once pair ever, once one of them went unanswered (kills too)
DEFAULT_429_WAIT = 60.0  # a 429 without any usable hint
MIN_429_WAIT = 1.0  # a hint of "now" or the past must not become a hot loop
# A service that answers "received, confirmed later" (IndexNow's 202) to this many sends of one
# pair has received it that many times: it is done, with a note, instead of being sent (and the
# ledger rewritten) on every build for ever.
MAX_ACCEPTED_SENDS = 5

Event = Kind | Found


class Step(enum.Enum):
    DONE = "record done"
    RETRY = "record failed (nothing happened remotely), then send again"
    FAIL = "record failed; the lane goes on"
    STOP_LANE = "record failed; the channel takes no more requests this run"
    SEND = "send again (keeping the in_flight record and its key)"
    READ = "read the remote side"
    READ_LATER = "keep in_flight; read again once the settle time has passed"
    LEAVE = "keep in_flight and report it"
    AWAIT = "keep in_flight: received, confirmed only later; the next run sends again"
    DELETED = "record deleted: it was made, and the service proves it is gone; never sent again"
    RELEASE = "record failed: proved absent by a run that only reads; the next run sends it"
    REVIEW = "record why a person must decide (`review`); no later run retries it by itself"
    HOLD = "change nothing: the copy could not be proved to be this post's, or read at all; read again next run"


@dataclass(frozen=True)
class Situation:
    at_most_once: bool
    repeat_safe: bool  # a repeat is a no-op by construction
    last_attempt: float | None  # epoch seconds of the last in_flight write (the record's `at`)
    now: float
    settle: float
    max_wait: float  # longest wait sat through inside this run
    sends_left: int  # how many more sends this run allows for the pair
    retry_after: float | None = None  # seconds, from a 429's headers
    attempts: int = 0  # sends of this pair recorded in the ledger, across waits and runs
    verify_only: bool = False  # `mkdocs-syndicate verify`: this run reads, and never sends
    rate_limit_checked_first: bool = False  # the channel's 429 proves nothing was made (Matrix)
    # The last request of this run was answered as done: a read after it that shows otherwise is
    # not an unknown outcome but a service that said yes and did not (a person decides).
    answered: bool = False
    replay: bool = False  # the send carried a client id an earlier request may have used
    # The channel reads its copies back (Channel.read_copy / read_presence overridden): its edits
    # and deletes are proved by a read; a type that cannot is taken on the service's answer.
    reads_copies: bool = True
    reads_presence: bool = True


@dataclass(frozen=True)
class Action:
    step: Step
    at: float | None = None  # RETRY after a 429 and READ_LATER: not before this moment
    needs_review: bool = False  # LEAVE: a human (or a later read) must decide
    keep_in_flight: bool = False  # STOP_LANE: the outcome is unknown, so the record stays in_flight
    reason: str = ""


def settled_at(situation: Situation) -> float:
    """When the server must have finished the last attempt."""
    return (situation.last_attempt if situation.last_attempt is not None else -math.inf) + situation.settle


def decide(event: Event, s: Situation) -> Action:
    """What to do after `event`, by the rule for that event (`_RULES`, below)."""
    rule = _RULES.get(event)
    if rule is None:
        raise ValueError(f"unknown event {event!r}")
    return rule(s)


def _accepted(s: Situation) -> Action:
    if s.attempts >= MAX_ACCEPTED_SENDS:
        return Action(
            Step.DONE,
            reason=f"received {s.attempts} times and never confirmed (202 each time); done, not sent again",
        )
    return Action(
        Step.AWAIT,
        reason=f"sent again by the next run until the service answers 200 (at most {MAX_ACCEPTED_SENDS} times)",
    )


def _not_sent(s: Situation) -> Action:
    if s.sends_left <= 0:
        return Action(Step.FAIL, reason="nothing was sent, and no tries are left in this run")
    return Action(Step.RETRY)


def _rate_limited(s: Situation) -> Action:
    delay = _rate_limit_wait(s.retry_after)
    if s.at_most_once and not s.repeat_safe and not s.rate_limit_checked_first:
        # A 429 is no proof that nothing was made: proxies and servers that ignore the key
        # have answered it after committing. Read before any resend, once the wait is over.
        if delay > s.max_wait:
            return Action(
                Step.STOP_LANE,
                at=s.now + delay,
                keep_in_flight=True,
                reason=f"rate limited for {delay:.0f} s, beyond max_wait {s.max_wait:.0f} s; "
                "the next run reads before it sends",
            )
        return Action(
            Step.READ,
            at=s.now + delay,
            reason="rate limited, and the post may have been made all the same: read first",
        )
    if delay > s.max_wait:
        return Action(
            Step.STOP_LANE,
            at=s.now + delay,
            reason=f"rate limited for {delay:.0f} s, beyond max_wait {s.max_wait:.0f} s",
        )
    if s.sends_left <= 0:
        return Action(Step.FAIL, at=s.now + delay, reason="rate limited, and no tries are left in this run")
    return Action(Step.RETRY, at=s.now + delay)


def _ambiguous(s: Situation) -> Action:
    if not s.at_most_once:
        return _send_or_leave(s, "no answer; a resend is harmless on this channel")
    # Even where a repeat is harmless, a read is cheap and settles it (and finds a record of
    # ours that a repeat could not overwrite, such as Bluesky's InvalidSwap).
    return Action(Step.READ, reason="the request may have been carried out: read before anything else")


def _resend_is_harmless(s: Situation) -> bool:
    return not s.at_most_once or s.repeat_safe


def _unknown(s: Situation) -> Action:
    if _resend_is_harmless(s):
        return _send_or_leave(s, "cannot read the remote side; a resend is harmless on this channel")
    return Action(
        Step.LEAVE,
        needs_review=True,
        reason="the remote side could not be read, so the post may exist; never resent blind",
    )


def _absent(s: Situation) -> Action:
    if _resend_is_harmless(s):
        return _send_or_leave(s, "not there; a resend is harmless on this channel")
    ready = settled_at(s)
    if s.retry_after is not None:  # the server asked for a wait too
        ready = max(ready, s.now + _rate_limit_wait(s.retry_after))
    if s.attempts >= MAX_UNCERTAIN_SENDS:
        return Action(
            Step.LEAVE,
            needs_review=True,
            reason=(
                f"sent {s.attempts} times without a definite answer, and not found; not sent again "
                "(check the service, then `mkdocs-syndicate resolve`)"
            ),
        )
    if s.now >= ready:
        return _send_or_leave(s, "proved absent after the settle time")
    if ready - s.now <= s.max_wait:
        return Action(
            Step.READ_LATER,
            at=ready,
            reason="not there yet, but the server may still be working on the last request",
        )
    return Action(
        Step.LEAVE,
        at=ready,
        reason="not there yet, but the server may still be working on the last request; "
        "a run after the settle time reads again",
    )


def _send_or_leave(s: Situation, reason: str) -> Action:
    if s.verify_only:  # what a send would do is left to the next run
        if _resend_is_harmless(s):
            return Action(Step.LEAVE, reason="the next run sends it again (a repeat is harmless here)")
        return Action(Step.RELEASE, reason="verify found no post after the settle time; the next run sends it")
    if s.sends_left <= 0:
        return Action(Step.LEAVE, reason=f"{reason}, but no tries are left in this run; the next run goes on")
    return Action(Step.SEND, reason=reason)


def _rate_limit_wait(hint: float | None) -> float:
    if hint is None or not math.isfinite(hint):
        return DEFAULT_429_WAIT
    return max(MIN_429_WAIT, hint)


# The table: each event's rule.
def _made(s: Situation) -> Action:
    if s.replay and s.at_most_once and not s.repeat_safe:
        # The id was sent before, by a request whose outcome was unknown: the service may answer
        # with what it made then (Synapse does for a day, a redacted event too). Read it first.
        return Action(Step.READ, reason="answered for a client id sent before: read back before it counts")
    return Action(Step.DONE)


def _absent_after(s: Situation) -> Action:
    if s.answered:
        return Action(
            Step.REVIEW,
            needs_review=True,
            reason="the service answered with a copy that a read of it cannot find; not sent again "
            "(check the service, then `mkdocs-syndicate resolve`)",
        )
    return _absent(s)


_RULES: dict[Event, Callable[[Situation], Action]] = {
    Kind.DONE: _made,
    Found.FOUND: lambda s: Action(Step.DONE),
    Kind.REFUSED: lambda s: Action(Step.FAIL),
    Found.CONFLICT: lambda s: Action(Step.FAIL),
    Kind.ACCEPTED: _accepted,
    Kind.GONE: lambda s: Action(Step.DELETED, reason="made, then deleted by its author: not sent again"),
    Kind.AUTH: lambda s: Action(Step.STOP_LANE, reason="the service refused the credentials"),
    Kind.NOT_SENT: _not_sent,
    Kind.RATE_LIMITED: _rate_limited,
    Kind.AMBIGUOUS: _ambiguous,
    Found.UNKNOWN: _unknown,
    Found.ABSENT: _absent_after,
}


# ---------------------------------------------------------------- an update of an existing copy
#
# An update sets a copy's text: a repeat sets the same text, so it is harmless (at most one edit
# more than needed) and needs no settle wait; it must never become a create. Whether an update
# whose outcome is unknown happened is settled by reading the copy by its own id.

UpdateEvent = Kind | Copy


def decide_update(event: UpdateEvent, s: Situation) -> Action:
    """What to do after `event` of an update (`op: update`), by `_UPDATE_RULES`."""
    rule = _UPDATE_RULES.get(event)
    if rule is None:
        raise ValueError(f"unknown event {event!r}")
    return rule(s)


def _change_again(s: Situation, reason: str, verb: str = "updates") -> Action:
    """An update or a delete whose copy a read found not yet changed: sent again (a repeat is
    harmless), or left for the next run."""
    if s.verify_only or s.sends_left <= 0:
        return Action(Step.LEAVE, reason=f"{reason}; the next run {verb} it")
    return Action(Step.SEND, reason=reason)


def _update_rate_limited(s: Situation, verb: str = "updates") -> Action:
    delay = _rate_limit_wait(s.retry_after)
    if delay > s.max_wait or s.sends_left <= 0:
        return Action(
            Step.STOP_LANE,
            at=s.now + delay,
            keep_in_flight=True,
            reason=f"rate limited for {delay:.0f} s; the next run reads the copy, then {verb} it",
        )
    return Action(Step.RETRY, at=s.now + delay)


def _proved_otherwise(shows: str, verb: str, verbs: str) -> Callable[[Situation], Action]:
    """A read that shows the copy unchanged: after a request answered as done, the service said
    yes and did not (a person decides, and no run loops on it); before any request, or after an
    unanswered one, the change goes (again: a repeat sets the same text)."""

    def rule(s: Situation) -> Action:
        if s.answered:
            return Action(
                Step.REVIEW,
                needs_review=True,
                reason=f"the service answered the {verb} as done, but a read of the copy shows {shows}: "
                "not tried again (check the copy, then `mkdocs-syndicate resolve`)",
            )
        return _change_again(s, f"the copy shows {shows}", verbs)

    return rule


def _matches(s: Situation) -> Action:
    """The copy shows the edit's text. Before any request of this change (the read that proves the
    copy this post's), the edit still goes: a read compares what it can (not a card's thumbnail),
    and an edit to the same text changes nothing. After one, the read proves it."""
    if s.attempts == 0 and not s.verify_only:
        return Action(Step.SEND, reason="the copy is this post's: the edit goes")
    how = "proved by a read of the copy" if s.answered else "confirmed by reading the copy"
    return Action(Step.DONE, reason=f"updated ({how})")


def _not_ours(s: Situation) -> Action:
    return Action(Step.REVIEW, needs_review=True, reason="the copy the record names is not this post's; not changed")


def _unproved(s: Situation) -> Action:
    """A read that proved nothing: nothing is changed on a copy not proved to be this post's."""
    if s.answered:  # the change was answered as made: the next run reads it again
        return Action(Step.LEAVE, reason="the read of the copy after the change proved nothing; the next run reads it")
    return Action(Step.HOLD, reason="the copy could not be read, so it is not proved to be this post's; not changed")


def _prove(verb: str) -> Callable[[Situation], Action]:
    """An edit or a delete answered as made: a read of the copy proves it, where the channel reads."""

    def rule(s: Situation) -> Action:
        if not (s.reads_presence if verb == "delete" else s.reads_copies):
            done = "deleted (the post was removed)" if verb == "delete" else "updated"
            return Action(Step.DONE, reason=f"{done}: the service's answer (this channel type cannot read its copies)")
        return Action(Step.READ, reason=f"answered; a read of the copy proves the {verb}")

    return rule


_UPDATE_RULES: dict[UpdateEvent, Callable[[Situation], Action]] = {
    Kind.DONE: _prove("edit"),
    Kind.ACCEPTED: _prove("edit"),
    Copy.MATCHES: _matches,
    Kind.GONE: lambda s: Action(Step.DELETED, reason="the copy was deleted on the service; not made again"),
    Copy.GONE: lambda s: Action(Step.DELETED, reason="the copy was deleted on the service; not made again"),
    Copy.NOT_OURS: _not_ours,
    Kind.REFUSED: lambda s: Action(Step.FAIL, reason="the update was refused; the copy keeps its old text"),
    Kind.AUTH: lambda s: Action(Step.STOP_LANE, reason="the service refused the credentials"),
    Kind.NOT_SENT: lambda s: _not_sent(s) if not s.verify_only else Action(Step.LEAVE),
    Kind.RATE_LIMITED: _update_rate_limited,
    Kind.AMBIGUOUS: lambda s: Action(Step.READ, reason="the update may have happened: read the copy"),
    Copy.DIFFERS: _proved_otherwise("its old text or image", "edit", "updates"),
    Copy.UNKNOWN: _unproved,
}


DeleteEvent = Kind | Presence


def decide_delete(event: DeleteEvent, s: Situation) -> Action:
    """What to do after `event` of a removed post's delete (`op: delete`), by `_DELETE_RULES`.
    Step.DONE and Step.DELETED both end with the record `deleted`; a delete never sends a create,
    and a refused one leaves the record `done` (the copy is still there) for the next run."""
    rule = _DELETE_RULES.get(event)
    if rule is None:
        raise ValueError(f"unknown event {event!r}")
    return rule(s)


_DELETE_RULES: dict[DeleteEvent, Callable[[Situation], Action]] = {
    Kind.DONE: _prove("delete"),
    Kind.ACCEPTED: _prove("delete"),
    Kind.GONE: lambda s: Action(Step.DELETED, reason="already deleted on the service"),
    Presence.GONE: lambda s: Action(
        Step.DELETED,
        reason="deleted (proved by a read of the copy)" if s.answered else "already deleted on the service",
    ),
    Presence.NOT_OURS: _not_ours,
    Kind.REFUSED: lambda s: Action(Step.FAIL, reason="the delete was refused; the copy is still there"),
    Kind.AUTH: lambda s: Action(Step.STOP_LANE, reason="the service refused the credentials"),
    Kind.NOT_SENT: lambda s: _not_sent(s) if not s.verify_only else Action(Step.LEAVE),
    Kind.RATE_LIMITED: lambda s: _update_rate_limited(s, "deletes"),
    Kind.AMBIGUOUS: lambda s: Action(Step.READ, reason="the delete may have happened: read the copy"),
    Presence.PRESENT: _proved_otherwise("it still there", "delete", "deletes"),
    Presence.UNKNOWN: _unproved,
}
