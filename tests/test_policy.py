"""The outcome policy, exhaustively: every event × delivery × repeat-safety × time × tries left.

The invariants are the promise itself; the table pins the decisions a reader can check by eye."""

from __future__ import annotations

import itertools

import pytest

from mkdocs_syndicate.channels.base import Found, Kind
from mkdocs_syndicate.engine.policy import (
    DEFAULT_429_WAIT,
    MAX_ACCEPTED_SENDS,
    MAX_UNCERTAIN_SENDS,
    Action,
    Situation,
    Step,
    decide,
)

pytestmark = pytest.mark.unit

NOW = 1_800_000_000.0
SETTLE = 600.0
EVENTS = [*Kind, *Found]
# (seconds since the last attempt, max_wait): inside settle with the wait allowed, inside settle
# beyond max_wait, exactly at settle, long after, and a last attempt "in the future" (clock skew).
TIMES = [(10.0, 900.0), (10.0, 60.0), (SETTLE, 900.0), (86_400.0, 900.0), (-30.0, 900.0)]


def situation(
    *, at_most_once=True, repeat_safe=False, ago=10.0, max_wait=900.0, sends_left=3, retry_after=None, attempts=1
) -> Situation:
    return Situation(
        at_most_once=at_most_once,
        repeat_safe=repeat_safe,
        last_attempt=NOW - ago,
        now=NOW,
        settle=SETTLE,
        max_wait=max_wait,
        sends_left=sends_left,
        retry_after=retry_after,
        attempts=attempts,
    )


ATTEMPTS = (1, MAX_UNCERTAIN_SENDS - 1, MAX_UNCERTAIN_SENDS, MAX_UNCERTAIN_SENDS + 4, MAX_ACCEPTED_SENDS)
ALL = [
    (
        event,
        situation(
            at_most_once=amo, repeat_safe=safe, ago=ago, max_wait=mw, sends_left=left, retry_after=ra, attempts=attempts
        ),
    )
    for event, amo, safe, (ago, mw), left, ra, attempts in itertools.product(
        EVENTS, (True, False), (True, False), TIMES, (0, 1, 3), (None, 5.0, 5000.0, float("inf")), ATTEMPTS
    )
]


def test_invariants_hold_for_every_combination():
    """Every event × delivery × repeat-safety × time × max_wait × tries left × wait hint × attempts."""
    assert len(ALL) == len(EVENTS) * 2 * 2 * len(TIMES) * 3 * 4 * len(ATTEMPTS)
    for event, s in ALL:
        check_invariants(event, s)


def check_invariants(event, s):
    action = decide(event, s)
    resend = action.step in (Step.SEND, Step.RETRY)
    if s.at_most_once and not s.repeat_safe and resend:
        # The rule: an at-most-once request whose outcome is unknown is repeated only after a read
        # proved the post absent once the settle time passed; otherwise only what never happened.
        # A 429 is not proof that nothing happened (servers have answered it after committing).
        proved_absent = event is Found.ABSENT and s.now >= s.last_attempt + s.settle
        nothing_happened = event is Kind.NOT_SENT
        assert proved_absent or nothing_happened, (event, s, action)
        if proved_absent:  # the retry budget: counted in the ledger, across waits and runs
            assert s.attempts < MAX_UNCERTAIN_SENDS, (event, s, action)
    if event in (Kind.AMBIGUOUS, Found.UNKNOWN, Kind.RATE_LIMITED) and s.at_most_once and not s.repeat_safe:
        assert action.step in (Step.READ, Step.LEAVE, Step.STOP_LANE)
        assert action.step is not Step.STOP_LANE or action.keep_in_flight, "an unknown outcome stays in_flight"
    if event is Kind.GONE:  # made, then deleted by its author: never again
        assert action.step is Step.DELETED
    if resend:
        assert s.sends_left > 0, "never more sends than the run allows"
    if action.step in (Step.READ_LATER, Step.RETRY) and action.at is not None:
        assert action.at - s.now <= s.max_wait, "never a wait beyond max_wait"
    if action.step is Step.READ_LATER:
        assert action.at >= s.last_attempt + s.settle
    if event in (Kind.DONE, Found.FOUND):
        assert action.step is Step.DONE
    if event is Kind.ACCEPTED:  # received, confirmed later (IndexNow 202): kept for the next run, a few times
        assert action.step is (Step.AWAIT if s.attempts < MAX_ACCEPTED_SENDS else Step.DONE)


@pytest.mark.parametrize(
    "event,expected",
    [
        (Kind.DONE, Step.DONE),
        (Found.FOUND, Step.DONE),
        (Kind.REFUSED, Step.FAIL),
        (Found.CONFLICT, Step.FAIL),
        (Kind.AUTH, Step.STOP_LANE),
        (Kind.NOT_SENT, Step.RETRY),
        (Kind.RATE_LIMITED, Step.READ),
        (Kind.GONE, Step.DELETED),
        (Kind.AMBIGUOUS, Step.READ),
        (Found.UNKNOWN, Step.LEAVE),
        (Found.ABSENT, Step.READ_LATER),
    ],
)
def test_at_most_once_just_after_an_attempt(event, expected):
    assert decide(event, situation()).step is expected


def test_absent_after_the_settle_time_is_sent_again():
    assert decide(Found.ABSENT, situation(ago=SETTLE)).step is Step.SEND
    assert decide(Found.ABSENT, situation(ago=SETTLE - 1)).step is Step.READ_LATER


def test_absent_with_a_settle_wait_beyond_max_wait_is_left_for_a_later_run():
    action = decide(Found.ABSENT, situation(ago=10, max_wait=60))
    assert action.step is Step.LEAVE and not action.needs_review and action.at == NOW - 10 + SETTLE


def test_a_last_attempt_in_the_future_is_not_settled():
    assert decide(Found.ABSENT, situation(ago=-30)).step is Step.READ_LATER


def test_unknown_needs_review():
    action = decide(Found.UNKNOWN, situation(ago=86_400))
    assert action.step is Step.LEAVE and action.needs_review


@pytest.mark.parametrize("event", [Kind.AMBIGUOUS, Found.UNKNOWN, Found.ABSENT])
def test_at_least_once_resends(event):
    assert decide(event, situation(at_most_once=False)).step is Step.SEND


def test_repeat_safe_reads_first_then_resends_without_settling():
    assert decide(Kind.AMBIGUOUS, situation(repeat_safe=True)).step is Step.READ
    assert decide(Found.ABSENT, situation(repeat_safe=True, ago=1)).step is Step.SEND
    assert decide(Found.UNKNOWN, situation(repeat_safe=True, ago=1)).step is Step.SEND


@pytest.mark.parametrize("at_most_once", [False, True])
def test_rate_limit_waits_within_max_wait_and_stops_the_lane_beyond(at_most_once):
    wait = decide(Kind.RATE_LIMITED, situation(at_most_once=at_most_once, retry_after=30))
    assert wait.at == NOW + 30 and wait.step is (Step.READ if at_most_once else Step.RETRY)
    stop = decide(Kind.RATE_LIMITED, situation(at_most_once=at_most_once, retry_after=5000))
    assert stop.step is Step.STOP_LANE and stop.at == NOW + 5000
    assert stop.keep_in_flight is at_most_once


def test_a_429_on_an_at_most_once_channel_is_read_back_and_resent_only_after_settle():
    """A 429 after the server committed (with the key ignored) made a second status: it is an
    unknown outcome like any other."""
    assert decide(Kind.RATE_LIMITED, situation(retry_after=30)).step is Step.READ
    later = decide(Found.ABSENT, situation(ago=10, retry_after=30))
    assert later.step is Step.READ_LATER and later.at == NOW - 10 + SETTLE
    # The server's wait counts too, when it is the longer one.
    assert decide(Found.ABSENT, situation(ago=SETTLE, retry_after=300)).at == NOW + 300


def test_the_retry_budget_is_counted_across_runs():
    assert decide(Found.ABSENT, situation(ago=SETTLE, attempts=MAX_UNCERTAIN_SENDS - 1)).step is Step.SEND
    cap = decide(Found.ABSENT, situation(ago=SETTLE, attempts=MAX_UNCERTAIN_SENDS))
    assert cap.step is Step.LEAVE and cap.needs_review and f"sent {MAX_UNCERTAIN_SENDS} times" in cap.reason


@pytest.mark.parametrize("hint", [None, float("inf"), float("nan")])
def test_rate_limit_without_a_usable_hint_waits_the_default(hint):
    assert decide(Kind.RATE_LIMITED, situation(retry_after=hint)).at == NOW + DEFAULT_429_WAIT


def test_a_rate_limit_of_zero_is_not_a_hot_loop():
    assert decide(Kind.RATE_LIMITED, situation(retry_after=0)).at > NOW


def test_no_tries_left():
    assert decide(Kind.NOT_SENT, situation(sends_left=0)).step is Step.FAIL
    assert decide(Kind.RATE_LIMITED, situation(repeat_safe=True, sends_left=0, retry_after=5)).step is Step.FAIL
    assert decide(Found.ABSENT, situation(ago=SETTLE, sends_left=0)).step is Step.LEAVE
    assert decide(Kind.AMBIGUOUS, situation(at_most_once=False, sends_left=0)).step is Step.LEAVE


def test_a_verify_only_run_never_sends_and_says_what_the_next_run_does():
    """`mkdocs-syndicate verify` is an input of the policy, not a special case in the runner: for
    every event and situation, no step sends or waits inside the run."""
    from dataclasses import replace

    for event, s in ALL:
        if isinstance(event, Kind):
            continue  # a verify-only run reads: its events are reads' verdicts
        action = decide(event, replace(s, verify_only=True, max_wait=0.0))
        assert action.step not in (Step.SEND, Step.RETRY, Step.READ_LATER), (event, s, action)
    settled = situation(ago=SETTLE + 1, max_wait=0.0)
    released = decide(Found.ABSENT, replace(settled, verify_only=True))
    assert released.step is Step.RELEASE and "the next run sends it" in released.reason
    harmless = decide(Found.ABSENT, replace(settled, verify_only=True, repeat_safe=True))
    assert harmless == Action(Step.LEAVE, reason="the next run sends it again (a repeat is harmless here)")
