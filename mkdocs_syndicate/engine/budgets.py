"""A service's budget for one kind of write, kept by the run so that a long removal (or a backlog
of posts with images) spreads over runs instead of meeting the service's 429, or sitting out its
window in CI.

Mastodon allows an account 30 deletes and 30 media uploads per 30 minutes (Rack::Attack's
`throttle_api_delete` and `throttle_api_media`, counted in fixed windows aligned to the epoch,
answered 429 with `X-RateLimit-Reset` and no `Retry-After`), and 300 new or edited statuses per
3 hours (RateLimiter's `statuses` family). A channel type declares such limits
(`Channel.delete_limit`, `upload_limit`, `status_limit`); the lane counts the window's writes of
that kind — those the ledger records (a `deleted` record's `at`; a record naming an upload, by its
`at`: the upload came just before; a `done` record's, for its copy) and this run's — and, once
the window's budget is spent,
waits for the next window only when that is a short wait; otherwise the lane leaves its
remaining writes of that kind for a later run and the run says how many are left and from when
they go on (their records stay as they are, planned again next run, as posts deferred by
`max_per_run` are). Every write counts: a thread's removal makes a delete a part.

The service's own 429 stays the last word (deletes by hand, another site on the account, a run
killed before its ledger write count there, not here). A unit of a kind with a budget sits
through at most LONGEST_WAIT of a 429's wait (`max_wait`); beyond it, the lane leaves the rest of
that kind for a later run from the moment the 429 gave (`refused`), and its other writes go on.
See docs/removals.md, "A removal of many posts".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mkdocs_syndicate.channels.base import Channel, WriteLimit
from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.engine.plan import Change
from mkdocs_syndicate.engine.units import Unit
from mkdocs_syndicate.ledger.schema import Posts, Record, State, live_parts
from mkdocs_syndicate.timeutil import Clock, epoch_to_iso, from_iso

# The longest wait for a new window the lane sits through: a removal of many posts goes on in
# later runs rather than keeping CI busy for the half hour of Mastodon's window.
LONGEST_WAIT = 60.0
Sleeper = Callable[[float, str], Awaitable[None]]


class WindowBudget:
    """One window's count of a kind of write: those the ledger records in it, and this run's; and
    the moment the service itself said (a 429) that none may go before."""

    def __init__(self, limit: WriteLimit, used_at: list[float], now: float) -> None:
        self.limit = limit
        self._window = self._window_start(now)
        self._used = sum(1 for moment in used_at if moment >= self._window)
        self._refused_until = 0.0

    def _window_start(self, now: float) -> float:
        return now - now % self.limit.period

    def wait(self, now: float, cost: int = 1) -> float:
        """Seconds until `cost` more writes of this kind may go: 0 while the window has them left.
        A cost over a whole window's goes at the start of one."""
        if now < self._refused_until:
            return self._refused_until - now
        start = self._window_start(now)
        if start != self._window:  # a new window: its budget is whole
            self._window, self._used = start, 0
        fits = self._used == 0 or self._used + cost <= self.limit.count
        return 0.0 if fits else start + self.limit.period - now

    def spend(self, cost: int = 1) -> None:
        self._used += cost

    def refused_until(self, moment: float) -> None:
        """The service answered a write of this kind 429 (its count and ours differ: another site
        on the account, a run killed before its ledger write): none goes before `moment`."""
        self._refused_until = max(self._refused_until, moment)

    def resumes(self, now: float) -> str:
        return epoch_to_iso(max(self._window_start(now) + self.limit.period, self._refused_until))


@dataclass
class _Kind:
    """A kind of write a channel's limit counts: how many of them a unit makes, and how the run
    says what is left."""

    what: str  # "deletes", "uploads"
    left: str  # what is left for a later run: "delete(s) of removed posts"
    cost: Callable[[Unit], int]
    budget: WindowBudget
    # Its 429 is told apart from the channel's others (a delete's, an upload's request is of its
    # kind alone), so the lane may leave the kind for later and go on with the rest.
    own_429: bool = True


def _deletes(unit: Unit) -> int:
    """The deletes a unit makes: a removal's, one a part of a thread (each part is a status), and
    a thread edited to fewer parts, the parts it drops."""
    pair = unit.members[0]
    if unit.batch is not None:
        return 0
    parts = len(live_parts(pair.record.parts)) if pair.record is not None else 0
    if pair.op is Change.DELETE:
        return max(1, parts)
    message = pair.prepared.message
    if pair.op is Change.UPDATE and message is not None:
        return max(0, parts - len(message.texts))
    return 0


def _uploads(unit: Unit) -> int:
    """A send or an edit whose image no upload of its record names yet: it uploads first."""
    pair = unit.members[0]
    image = pair.prepared.image
    if unit.batch is not None or image is None or not pair.channel.uploads or pair.op is Change.DELETE:
        return 0
    return int(pair.record is None or all(media.sha256 != image.sha256 for media in pair.record.media))


def _statuses(unit: Unit) -> int:
    """The copies a send or an edit makes or changes: a thread's parts each (an edit, those whose
    text changed and those added; one for a copy sent whole)."""
    pair = unit.members[0]
    message = pair.prepared.message
    if unit.batch is not None or pair.op is Change.DELETE or message is None:
        return 0
    parts = live_parts(pair.record.parts) if pair.record is not None else ()
    if pair.op is None:  # a first send, or a thread's parts after those already sent
        return max(1, len(message.texts) - len(parts)) if parts else len(message.texts)
    if not parts:
        return len(message.texts)
    changed = sum(
        1 for part, text in zip(parts, message.texts, strict=False) if part.message_sha256 != message_sha256(text)
    )
    return max(1, changed) + max(0, len(message.texts) - len(parts))


def _times(posts: Posts, channel_id: str, counts: Callable[[Record], int]) -> list[float]:
    """The moments of the ledger's writes of a kind: a record's `at`, once per write it counts."""
    return [
        from_iso(record.at).timestamp()
        for entry in posts.values()
        if (record := entry.channels.get(channel_id)) is not None
        for _ in range(counts(record))
    ]


def _deleted(record: Record) -> int:
    """A `deleted` record's deletes: one, or one a part of the thread it lists."""
    return max(1, len(record.parts)) if record.state == State.DELETED else 0


def _made(record: Record) -> int:
    """A `done` record's copies made or edited at its `at`: one, or one a part of its thread."""
    return max(1, len(live_parts(record.parts))) if record.state == State.DONE and record.remote_id else 0


class LaneBudget:
    """A lane's writes kept within its channel's limits; a lane without any admits all."""

    def __init__(self, channel: Channel, posts: Posts, clock: Clock, *, verify_only: bool) -> None:
        self._channel_id, self._clock = channel.id, clock
        now, kinds = clock.time(), []
        if channel.delete_limit is not None and not verify_only:
            budget = WindowBudget(channel.delete_limit, _times(posts, channel.id, _deleted), now)
            kinds.append(_Kind("deletes", "delete(s) of removed posts", _deletes, budget))
        if channel.upload_limit is not None and not verify_only:
            uploaded = _times(posts, channel.id, lambda record: int(bool(record.media)))
            budget = WindowBudget(channel.upload_limit, uploaded, now)
            kinds.append(_Kind("uploads", "post(s) with an image to upload", _uploads, budget))
        if channel.status_limit is not None and not verify_only:
            budget = WindowBudget(channel.status_limit, _times(posts, channel.id, _made), now)
            kinds.append(_Kind("statuses", "post(s) to send or edit", _statuses, budget, own_429=False))
        self._kinds = kinds
        self._refused: _Kind | None = None

    def _kind_of(self, unit: Unit) -> _Kind | None:
        """The kind whose 429 a unit's refused write is: of a kind that has its own."""
        return next((kind for kind in self._kinds if kind.own_429 and kind.cost(unit) > 0), None)

    def max_wait(self, unit: Unit, max_wait: float) -> float:
        """The longest wait a unit of a kept kind sits through (a 429 the service sends all the
        same): the window's rest is for a later run, never sat out in this one."""
        return min(max_wait, LONGEST_WAIT) if self._kind_of(unit) is not None else max_wait

    async def admits(self, unit: Unit, sleep: Sleeper, max_wait: float) -> bool:
        """Whether `unit` may go now (its writes counted against the window), after a short wait
        for a new window if need be."""
        for kind in self._kinds:
            cost = kind.cost(unit)
            if not cost:
                continue
            wait = kind.budget.wait(self._clock.time(), cost)
            if wait > min(max_wait, LONGEST_WAIT):
                self._refused = kind
                return False
            if wait > 0:
                limit = kind.budget.limit
                await sleep(
                    wait, f"{limit.service} allows {limit.count} {kind.what} per {limit.period / 60:.0f} minutes"
                )
                kind.budget.wait(self._clock.time(), cost)  # the new window
            kind.budget.spend(cost)
        return True

    def refused(self, unit: Unit, until: float | None) -> bool:
        """The service answered `unit`'s write 429 beyond the wait a kept kind sits through: that
        kind waits for a later run (True), while the lane's other writes go on. False when the
        unit is of no kept kind (the lane stops, as for any 429)."""
        kind = self._kind_of(unit)
        if kind is None or until is None:
            return False
        kind.budget.refused_until(until)
        self._refused = kind
        return True

    def left_for_later(self, unit: Unit, units: list[Unit], said: list[str]) -> list[Unit]:
        """The lane's units without those of the kind refused (`unit` among them): they go on in a
        later run, and `said` gets the line saying how many and from when."""
        kind = self._refused
        assert kind is not None
        left, limit = 1 + sum(1 for other in units if kind.cost(other)), kind.budget.limit
        said.append(
            f"{self._channel_id}: {left} {kind.left} left for a later run: {limit.service} allows {limit.count} "
            f"{kind.what} per {limit.period / 60:.0f} minutes per account; a run from "
            f"{kind.budget.resumes(self._clock.time())} goes on"
        )
        return [other for other in units if not kind.cost(other)]
