"""One request to an existing copy or a thread's part, with the two phases of a send: the staged
`in_flight` record durable before the request, the request, and no answer read as "unknown".

engine/updates.py (an edit or a delete of a copy), engine/threads.py (a thread's later part) and
engine/thread_changes.py (a thread's part edited, added or deleted) each call this; what the
answer means, and what is written after it, stays theirs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Channel, Copy, Kind, Outcome, Presence
from mkdocs_syndicate.engine.policy import Action, Situation, Step
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import Record

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair


class UpdateHost(Protocol):
    """What the runner lends an update: its clock, ledger writes, reporting and limits."""

    verify_only: bool

    def situation_for(
        self, channel: Channel, record: Record | None, sends: int, outcome: Outcome | None
    ) -> Situation: ...
    async def write_records(self, items: list[tuple[PendingPair, Record]], *, before_request: bool = False) -> None: ...
    def record_of(self, pair: PendingPair) -> Record | None: ...
    def report_pair(
        self, pair: PendingPair, state: PairState, detail: str, remote_url: str | None, needs_review: bool
    ) -> None: ...
    def cleaned(self, channel: Channel, text: str | None) -> str: ...
    def now_iso(self) -> str: ...
    def backoff_for(self, sends: int) -> float: ...
    @property
    def warnings(self) -> list[str]: ...  # the run's warnings (an upload that may be an orphan)


# The checkpoints around a copy's request, and around a thread part's.
COPY = ("before_in_flight_write", "after_in_flight_write", "after_response")
PART = ("before_part_in_flight_write", "after_part_in_flight_write", "after_part_response")


async def staged_call(
    host: UpdateHost,
    http: PacedHttp,
    pair: PendingPair,
    stage: Callable[[Record], Record],
    call: Callable[[Record], Awaitable[Outcome]],
    *,
    names: tuple[str, str, str],
    unknown: str,
) -> Outcome:
    """Wait for the lane's turn, write `stage(current record)` (pushed first, in git mode, for an
    at-most-once channel), then make `call(staged)`. A transport error the channel let through
    proves nothing: AMBIGUOUS, `unknown` saying what may have happened."""
    await http.wait_turn()
    current = host.record_of(pair)
    assert current is not None
    staged = stage(current)
    checkpoints.hit(names[0])
    await host.write_records([(pair, staged)], before_request=pair.channel.settings.at_most_once)
    checkpoints.hit(names[1])
    try:
        outcome = await call(staged)
    except httpx.TransportError as exc:
        outcome = Outcome(Kind.AMBIGUOUS, error=f"no answer ({type(exc).__name__}); {unknown}")
    checkpoints.hit(names[2])
    return outcome


# A read that answered: the copy is there, unchanged. The service is up; sending at once is safe
# (a run resumed after a kill would otherwise sit out a backoff before each edit or delete).
ANSWERED_BY_A_READ = (Copy.DIFFERS, Presence.PRESENT)


async def pause(host: UpdateHost, http: PacedHttp, action: Action, sends: int, event: object, again: str) -> None:
    """The wait before an edit or a delete goes again (`Step.SEND` or `Step.RETRY`): a 429's as the
    server asked, a backoff after nothing was sent or nothing answered, none after a read that
    found the copy unchanged."""
    if action.step is Step.RETRY and action.at is not None:
        http.hold_until(action.at, "rate limited (server asked to wait)")
    elif action.step is Step.RETRY:
        await http.backoff(host.backoff_for(sends), "retrying (nothing was sent)")
    elif event not in ANSWERED_BY_A_READ:  # the last request went unanswered: not straight away
        await http.backoff(host.backoff_for(sends), again)
