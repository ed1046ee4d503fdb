"""What the policy is told about a pair before each decision (`policy.Situation`): its channel's
delivery and reads, its record's last attempt, the run's limits and the last request's answer.
One place, so that every operation the executor carries is decided on the same facts."""

from __future__ import annotations

from mkdocs_syndicate.channels.base import Channel, Kind, Outcome
from mkdocs_syndicate.engine.policy import Situation
from mkdocs_syndicate.ledger.schema import Record
from mkdocs_syndicate.timeutil import from_iso


def situation(
    channel: Channel,
    current: Record | None,
    sends: int,
    outcome: Outcome | None,
    *,
    now: float,
    max_wait: float,
    tries: int,
    verify_only: bool,
) -> Situation:
    settings = channel.settings
    return Situation(
        at_most_once=settings.at_most_once,
        repeat_safe=channel.repeat_safe,
        # `at` is written to the second, truncated: the attempt may have been up to 1 s later.
        last_attempt=from_iso(current.at).timestamp() + 1.0 if current is not None and current.at else None,
        now=now,
        settle=settings.settle,
        max_wait=0.0 if verify_only else max_wait,
        sends_left=tries - sends,  # verify-only never sends: it stops at the decision
        retry_after=outcome.retry_after if outcome is not None else None,
        attempts=current.attempts if current is not None else 0,
        verify_only=verify_only,
        rate_limit_checked_first=channel.rate_limit_checked_first,
        answered=outcome is not None and outcome.kind in (Kind.DONE, Kind.ACCEPTED),
        replay=current is not None and current.attempts > 1,
        reads_copies=channel.reads_copies,
        reads_presence=channel.reads_presence,
    )
