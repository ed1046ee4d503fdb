"""What a run reports: a result per pair, and the reporter interface that shows progress. Kept
apart from the runner so that showing a report never loads the HTTP machinery."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from mkdocs_syndicate.ledger.schema import State

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.backlog import Adoption
    from mkdocs_syndicate.engine.moves import Move
    from mkdocs_syndicate.timeutil import Clock


class PairState(enum.StrEnum):
    """What a line about a (post, channel) pair says it is, in a run's report or in `status`: the
    state of its record (ledger/schema.py `State`, by the same names), or one of the conditions
    below that no record holds. A StrEnum: printed and compared as its text. Shown in one order
    and style everywhere (output/reporters.py `LOOKS`)."""

    IN_FLIGHT = State.IN_FLIGHT.value
    DONE = State.DONE.value
    FAILED = State.FAILED.value
    SKIPPED = State.SKIPPED.value
    DELETED = State.DELETED.value
    # No record yet, so the next run sends it; also a pair a verify-only run proved absent (its
    # record says failed, and nothing is wrong: the next run sends it).
    PENDING = "pending"
    OPTED_OUT = "opted_out"  # status: no record, and the post opts out of this channel
    WAITING = "waiting"  # a run: received, confirmed only later (IndexNow's 202); still in_flight
    NOT_ATTEMPTED = "not_attempted"  # a run: left as it was (the run stopped, another run has it, not live yet)

    @classmethod
    def of(cls, record_state: State | None) -> PairState:
        """A record's state as a line says it; no record is pending."""
        return cls.PENDING if record_state is None else cls(record_state.value)


@dataclass
class PairResult:
    post_key: str
    channel: str
    state: PairState
    detail: str = ""
    remote_url: str | None = None
    needs_review: bool = False
    remote_id: str | None = None  # a done copy's id on its service, as its record holds it

    @property
    def copy(self) -> str | None:
        """Where a finished copy is, as the report says it: its URL, else its id (a standard.site
        document is a record with no page of its own: its at:// URI is its address)."""
        return (self.remote_url or self.remote_id) if self.ok else None

    @property
    def ok(self) -> bool:
        """Finished: the copy is there, or the service proved it was made and then removed; and
        nothing about it waits for a person."""
        return self.state in (PairState.DONE, PairState.DELETED) and not self.needs_review


@dataclass
class RunReport:
    results: list[PairResult] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    requests: int = 0
    warnings: list[str] = field(default_factory=list)  # messages changed to fit a channel's rules
    adoption: Adoption | None = None  # a first run's backlog, adopted not sent
    moves: list[Move] = field(default_factory=list)  # posts found under a new key: the same post, re-keyed
    notes: list[str] = field(default_factory=list)  # said once in the log (the ledger rewritten, ...)

    @property
    def undone(self) -> list[PairResult]:
        return [r for r in self.results if not r.ok and r.state != PairState.WAITING]

    @property
    def waiting(self) -> list[PairResult]:
        """Received but not yet confirmed by the service (IndexNow 202): not a failure of this
        run, but not done either; the next run sends again."""
        return [r for r in self.results if r.state == PairState.WAITING]


class Reporter(Protocol):
    def lane_started(self, channel_id: str, total: int) -> None: ...
    def pair_finished(self, result: PairResult) -> None: ...
    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None: ...
