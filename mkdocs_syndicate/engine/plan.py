"""The pending query: which (post, channel) pairs still need work, with the exact payload of each.

Everything here is computed without any network, so a post whose message cannot be built stops
the run before the first request, and plan mode shows exactly what a send would put out.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from mkdocs_syndicate.channels.base import Channel, Prepared
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.backlog import Adoption
from mkdocs_syndicate.engine.moves import Move
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef

PENDING_STATES = (None, State.FAILED, State.IN_FLIGHT)


@dataclass(frozen=True)
class PendingPair:
    post: Post
    channel: Channel
    record: Record | None
    prepared: Prepared

    @property
    def needs_verify(self) -> bool:
        """An in_flight record of an at-most-once channel is read back before anything is resent."""
        return self.record is not None and self.record.state == State.IN_FLIGHT and self.channel.settings.at_most_once

    @property
    def ref(self) -> PostRef:
        return PostRef(self.post.key, self.post.url, self.post.title, self.post.src or None, self.post.pin)


@dataclass
class Plan:
    lanes: dict[str, list[PendingPair]] = field(default_factory=dict)
    deferred: list[Post] = field(default_factory=list)  # over max_per_run: next run
    adoption: Adoption | None = None  # a first run's backlog, adopted not sent
    moves: list[Move] = field(default_factory=list)  # posts found under a new key: re-keyed, not announced again

    @property
    def pairs(self) -> list[PendingPair]:
        return [pair for pairs in self.lanes.values() for pair in pairs]

    def __bool__(self) -> bool:
        return bool(self.pairs)


def _pending(ledger: Ledger, post: Post, channel: Channel) -> list[PendingPair]:
    """The pair, prepared, when its record says it has work; an in_flight record's key is kept."""
    record = ledger.record(post.key, channel.id)
    if (record.state if record else None) not in PENDING_STATES:
        return []
    prepared = channel.prepare(post, created_at=record.created_at if record else None)
    if record is not None and record.idempotency_key:
        prepared = replace(prepared, idempotency_key=record.idempotency_key)
    return [PendingPair(post, channel, record, prepared)]


def make_plan(
    ledger: Ledger,
    posts: list[Post],
    channels: list[Channel],
    max_per_run: int | None,
    skip: Collection[tuple[str, str]] = frozenset(),
) -> Plan:
    """`posts` are the announceable posts, oldest first; at most `max_per_run` of them get work.
    `skip`: (post key, channel) pairs left out (a backlog a plan would adopt)."""
    plan = Plan(lanes={c.id: [] for c in channels})
    taken = 0
    for post in posts:
        pairs = [
            pair
            for channel in channels
            if post.wants(channel.id) and (post.key, channel.id) not in skip
            for pair in _pending(ledger, post, channel)
        ]
        if not pairs:
            continue
        if max_per_run is not None and taken >= max_per_run:
            plan.deferred.append(post)
            continue
        taken += 1
        for pair in pairs:
            plan.lanes[pair.channel.id].append(pair)
    return plan
