"""What a run reports: a result per pair, and the reporter interface that shows progress. Kept
apart from the runner so that showing a report never loads the HTTP machinery."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.backlog import Adoption
    from mkdocs_syndicate.engine.moves import Move
    from mkdocs_syndicate.timeutil import Clock


@dataclass
class PairResult:
    post_key: str
    channel: str
    state: str  # done | deleted | failed | in_flight | waiting | not_attempted | pending (verify only)
    detail: str = ""
    remote_url: str | None = None
    needs_review: bool = False

    @property
    def ok(self) -> bool:
        """Finished: the copy is there, or the service proved it was made and then removed."""
        return self.state in ("done", "deleted")


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
        return [r for r in self.results if not r.ok and r.state != "waiting"]

    @property
    def waiting(self) -> list[PairResult]:
        """Received but not yet confirmed by the service (IndexNow 202): not a failure of this
        run, but not done either; the next run sends again."""
        return [r for r in self.results if r.state == "waiting"]


class Reporter(Protocol):
    def lane_started(self, channel_id: str, total: int) -> None: ...
    def pair_finished(self, result: PairResult) -> None: ...
    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None: ...
