"""A service's budget for one kind of write, kept by the run so that a long removal spreads over
runs instead of meeting the service's 429 (or sitting out its window in CI).

Mastodon allows an account 30 deletes per 30 minutes (Rack::Attack's `throttle_api_delete`,
counted in fixed windows aligned to the epoch, answered 429 with `X-RateLimit-Reset` and no
`Retry-After`). A channel type declares such a limit (`Channel.delete_limit`); the lane counts the
deletes of the current window — those the ledger records (a `deleted` record's `at`) and this
run's — and, once the window's budget is spent, waits for the next window only when that is
within `max_wait`; otherwise the lane leaves its remaining deletes for a later run and the run
says how many are left and from when they go on (they stay `done`, planned again next run, as
posts deferred by `max_per_run` are). The service's own 429 stays the last word: the budget only
keeps us from asking for it. See docs/removals.md, "A removal of many posts".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mkdocs_syndicate.channels.base import Channel, WriteLimit
from mkdocs_syndicate.engine.plan import Change
from mkdocs_syndicate.engine.units import Unit
from mkdocs_syndicate.ledger.schema import Posts, State
from mkdocs_syndicate.timeutil import Clock, epoch_to_iso, from_iso

# The longest wait for a new window the lane sits through: a removal of many posts goes on in
# later runs rather than keeping CI busy for the half hour of Mastodon's window.
LONGEST_WAIT = 60.0
Sleeper = Callable[[float, str], Awaitable[None]]


class DeleteBudget:
    """One window's count of a channel's deletes: the ledger's `deleted` records in it, and this run's."""

    def __init__(self, limit: WriteLimit, posts: Posts, channel_id: str, now: float) -> None:
        self.limit = limit
        start = self._window_start(now)
        self._window = start
        self._used = sum(
            1
            for entry in posts.values()
            if (record := entry.channels.get(channel_id)) is not None
            and record.state == State.DELETED
            and from_iso(record.at).timestamp() >= start
        )

    def _window_start(self, now: float) -> float:
        return now - now % self.limit.period

    def wait(self, now: float) -> float:
        """Seconds until a delete may go: 0 while the window has budget left."""
        start = self._window_start(now)
        if start != self._window:  # a new window: its budget is whole
            self._window, self._used = start, 0
        return 0.0 if self._used < self.limit.count else start + self.limit.period - now

    def spend(self) -> None:
        self._used += 1

    def left_line(self, channel_id: str, left: int, now: float) -> str:
        resumes = epoch_to_iso(self._window_start(now) + self.limit.period)
        return (
            f"{channel_id}: {left} delete(s) of removed posts left for a later run: {self.limit.service} allows "
            f"{self.limit.count} per {self.limit.period / 60:.0f} minutes per account; a run from {resumes} goes on"
        )


def _deletes(unit: Unit) -> bool:
    return unit.members[0].op is Change.DELETE and unit.batch is None


class LaneBudget:
    """A lane's deletes kept within its channel's `delete_limit`; a lane without one admits all."""

    def __init__(self, channel: Channel, posts: Posts, clock: Clock, *, verify_only: bool) -> None:
        limit = None if verify_only else channel.delete_limit
        self._channel_id = channel.id
        self._clock = clock
        self._budget = DeleteBudget(limit, posts, channel.id, clock.time()) if limit is not None else None

    async def admits(self, unit: Unit, sleep: Sleeper, max_wait: float) -> bool:
        """Whether `unit` may go now (a delete counted against the window), after a short wait for
        a new window if need be."""
        if self._budget is None or not _deletes(unit):
            return True
        wait = self._budget.wait(self._clock.time())
        if wait > min(max_wait, LONGEST_WAIT):
            return False
        if wait > 0:
            limit = self._budget.limit
            await sleep(wait, f"{limit.service} allows {limit.count} deletes per {limit.period / 60:.0f} minutes")
            self._budget.wait(self._clock.time())  # the new window
        self._budget.spend()
        return True

    def left_for_later(self, unit: Unit, units: list[Unit], said: list[str]) -> list[Unit]:
        """The lane's units without its deletes (`unit`, refused, among them): they go on in a later
        run, and `said` gets the line saying how many and from when."""
        assert self._budget is not None
        left = 1 + sum(1 for other in units if _deletes(other))
        said.append(self._budget.left_line(self._channel_id, left, self._clock.time()))
        return [other for other in units if not _deletes(other)]
