"""A service's budget for one kind of write, kept by the run so that a long removal (or a backlog
of posts with images) spreads over runs instead of meeting the service's 429, or sitting out its
window in CI.

Mastodon allows an account 30 deletes and 30 media uploads per 30 minutes (Rack::Attack's
`throttle_api_delete` and `throttle_api_media`, counted in fixed windows aligned to the epoch,
answered 429 with `X-RateLimit-Reset` and no `Retry-After`). A channel type declares such limits
(`Channel.delete_limit`, `Channel.upload_limit`); the lane counts the window's writes of that
kind — those the ledger records (a `deleted` record's `at`; a record naming an upload, by its
`at`: the upload came just before) and this run's — and, once the window's budget is spent,
waits for the next window only when that is a short wait; otherwise the lane leaves its
remaining writes of that kind for a later run and the run says how many are left and from when
they go on (their records stay as they are, planned again next run, as posts deferred by
`max_per_run` are). The service's own 429 stays the last word: the budget only keeps us from
asking for it. See docs/removals.md, "A removal of many posts".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mkdocs_syndicate.channels.base import Channel, WriteLimit
from mkdocs_syndicate.engine.plan import Change
from mkdocs_syndicate.engine.units import Unit
from mkdocs_syndicate.ledger.schema import Posts, Record, State
from mkdocs_syndicate.timeutil import Clock, epoch_to_iso, from_iso

# The longest wait for a new window the lane sits through: a removal of many posts goes on in
# later runs rather than keeping CI busy for the half hour of Mastodon's window.
LONGEST_WAIT = 60.0
Sleeper = Callable[[float, str], Awaitable[None]]


class WindowBudget:
    """One window's count of a kind of write: those the ledger records in it, and this run's."""

    def __init__(self, limit: WriteLimit, used_at: list[float], now: float) -> None:
        self.limit = limit
        self._window = self._window_start(now)
        self._used = sum(1 for moment in used_at if moment >= self._window)

    def _window_start(self, now: float) -> float:
        return now - now % self.limit.period

    def wait(self, now: float) -> float:
        """Seconds until the next write of this kind may go: 0 while the window has budget left."""
        start = self._window_start(now)
        if start != self._window:  # a new window: its budget is whole
            self._window, self._used = start, 0
        return 0.0 if self._used < self.limit.count else start + self.limit.period - now

    def spend(self) -> None:
        self._used += 1

    def resumes(self, now: float) -> str:
        return epoch_to_iso(self._window_start(now) + self.limit.period)


@dataclass
class _Kind:
    """A kind of write a channel's limit counts: which units make one, and how the run says it."""

    what: str  # "deletes", "uploads"
    left: str  # what is left for a later run: "delete(s) of removed posts"
    takes: Callable[[Unit], bool]
    budget: WindowBudget


def _deletes(unit: Unit) -> bool:
    return unit.members[0].op is Change.DELETE and unit.batch is None


def _uploads(unit: Unit) -> bool:
    """A send or an edit whose image no upload of its record names yet: it uploads first."""
    pair = unit.members[0]
    image = pair.prepared.image
    if unit.batch is not None or image is None or not pair.channel.uploads or pair.op is Change.DELETE:
        return False
    return pair.record is None or all(media.sha256 != image.sha256 for media in pair.record.media)


def _times(posts: Posts, channel_id: str, counts: Callable[[Record], bool]) -> list[float]:
    return [
        from_iso(record.at).timestamp()
        for entry in posts.values()
        if (record := entry.channels.get(channel_id)) is not None and counts(record)
    ]


class LaneBudget:
    """A lane's writes kept within its channel's limits; a lane without any admits all."""

    def __init__(self, channel: Channel, posts: Posts, clock: Clock, *, verify_only: bool) -> None:
        self._channel_id, self._clock = channel.id, clock
        now, kinds = clock.time(), []
        if channel.delete_limit is not None and not verify_only:
            deleted = _times(posts, channel.id, lambda record: record.state == State.DELETED)
            budget = WindowBudget(channel.delete_limit, deleted, now)
            kinds.append(_Kind("deletes", "delete(s) of removed posts", _deletes, budget))
        if channel.upload_limit is not None and not verify_only:
            uploaded = _times(posts, channel.id, lambda record: bool(record.media))
            budget = WindowBudget(channel.upload_limit, uploaded, now)
            kinds.append(_Kind("uploads", "post(s) with an image to upload", _uploads, budget))
        self._kinds = kinds
        self._refused: _Kind | None = None

    async def admits(self, unit: Unit, sleep: Sleeper, max_wait: float) -> bool:
        """Whether `unit` may go now (its write counted against the window), after a short wait
        for a new window if need be."""
        for kind in self._kinds:
            if not kind.takes(unit):
                continue
            wait = kind.budget.wait(self._clock.time())
            if wait > min(max_wait, LONGEST_WAIT):
                self._refused = kind
                return False
            if wait > 0:
                limit = kind.budget.limit
                await sleep(
                    wait, f"{limit.service} allows {limit.count} {kind.what} per {limit.period / 60:.0f} minutes"
                )
                kind.budget.wait(self._clock.time())  # the new window
            kind.budget.spend()
        return True

    def left_for_later(self, unit: Unit, units: list[Unit], said: list[str]) -> list[Unit]:
        """The lane's units without those of the kind refused (`unit` among them): they go on in a
        later run, and `said` gets the line saying how many and from when."""
        kind = self._refused
        assert kind is not None
        left, limit = 1 + sum(1 for other in units if kind.takes(other)), kind.budget.limit
        said.append(
            f"{self._channel_id}: {left} {kind.left} left for a later run: {limit.service} allows {limit.count} "
            f"{kind.what} per {limit.period / 60:.0f} minutes per account; a run from "
            f"{kind.budget.resumes(self._clock.time())} goes on"
        )
        return [other for other in units if not kind.takes(other)]
