"""The pending query: which (post, channel) pairs still need work, with the exact payload of each.

Everything here is computed without any network, so a post whose message cannot be built stops
the run before the first request, and plan mode shows exactly what a send would put out. Only
`under_service_limits` asks a service (for its own limits), once a lane has started.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mkdocs_syndicate.channels.base import Channel, Prepared
from mkdocs_syndicate.content.fingerprint import fingerprint_of
from mkdocs_syndicate.content.images import image_removed
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.backlog import Adoption
from mkdocs_syndicate.engine.clues import Doubt
from mkdocs_syndicate.engine.memo import MessageMemo
from mkdocs_syndicate.engine.moves import Move
from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.schema import Record, State, live_parts
from mkdocs_syndicate.ledger.store import Ledger, PostRef

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp

PENDING_STATES = (None, State.FAILED, State.IN_FLIGHT)


class Change(enum.StrEnum):
    """What a pending pair's operation does to its copy (none: the first send). It picks the
    operation the executor carries (engine/updates.py, engine/thread_changes.py); the in_flight
    record's `op` says it in the ledger."""

    UPDATE = "update"  # the copy exists and its message changed: edited in place
    DELETE = "delete"  # the post was removed (engine/removals.py): its copy deleted
    KEEP = "keep"  # changed, on a channel that does not edit: only said (Plan.not_updated)


@dataclass(frozen=True)
class PendingPair:
    post: Post
    channel: Channel
    record: Record | None
    prepared: Prepared
    op: Change | None = None  # None: the first send

    @property
    def needs_verify(self) -> bool:
        """An in_flight record of an at-most-once channel is read back before anything is resent;
        so is an interrupted update (its copy is read by its own id)."""
        in_flight = self.record is not None and self.record.state == State.IN_FLIGHT
        copy_edit = self.op is not None and not self.channel.batched  # a ping again is read by nobody
        return in_flight and (self.channel.settings.at_most_once or copy_edit)

    @property
    def ref(self) -> PostRef:
        fingerprint = fingerprint_of(self.post).text()  # the post known after a rename no history shows
        post = self.post
        return PostRef(post.key, post.url, post.title, post.src or None, post.pin, fingerprint, post.entry_id)


@dataclass(frozen=True)
class Review:
    """A pair held for a person (its record's `review`): a change of its copy that a read did not
    prove, or a copy that is not this post's. No run sends, edits or deletes it until
    `mkdocs-syndicate resolve` clears it."""

    post_key: str
    channel_id: str
    record: Record

    def line(self) -> str:
        return (
            f"needs review: {self.post_key} on {self.channel_id}: {self.record.review}; nothing is sent for it "
            f"until `mkdocs-syndicate resolve {self.post_key} {self.channel_id} --retry` (or --done)"
        )


def held_for_review(ledger: Ledger, channels: Collection[Channel]) -> list[Review]:
    """Every pair of these channels whose record waits for a person, in ledger order."""
    ids = {channel.id for channel in channels}
    return [
        Review(key, channel_id, record)
        for key, entry in ledger.posts.items()
        for channel_id, record in entry.channels.items()
        if channel_id in ids and record.review
    ]


@dataclass
class Plan:
    lanes: dict[str, list[PendingPair]] = field(default_factory=dict)
    deferred: list[Post] = field(default_factory=list)  # over max_per_run: next run
    adoption: Adoption | None = None  # a first run's backlog, adopted not sent
    moves: list[Move] = field(default_factory=list)  # posts found under a new key: re-keyed, not announced again
    not_updated: list[PendingPair] = field(default_factory=list)  # copies out of date on channels that do not edit
    removal_lines: list[str] = field(default_factory=list)  # removed posts' copies kept, or not yet proved removed
    reviews: list[Review] = field(default_factory=list)  # pairs a person must decide on: no request for them
    doubts: list[Doubt] = field(default_factory=list)  # posts that may be old ones: held, not announced

    @property
    def pairs(self) -> list[PendingPair]:
        return [pair for pairs in self.lanes.values() for pair in pairs]

    def __bool__(self) -> bool:
        return bool(self.pairs)


def _pending(ledger: Ledger, post: Post, channel: Channel, memo: MessageMemo) -> list[PendingPair]:
    """The pair, prepared, when its record says it has work; an in_flight record's key is kept.
    A done copy whose message would now be different is an update, with `edits: update`."""
    record = ledger.record(post.key, channel.id)
    if record is not None and record.review:  # a person decides first (Plan.reviews)
        return []
    if record is not None and record.op is not None:  # an update whose outcome is unknown: settled by a read
        return [PendingPair(post, channel, record, _prepared(channel, post, record), Change(record.op))]
    if record is not None and record.state == State.DONE:
        return _out_of_date(post, channel, record, memo) if _same_door(ledger, post) else []
    if (record.state if record else None) not in PENDING_STATES:
        return []
    return [PendingPair(post, channel, record, _prepared(channel, post, record))]


def not_updated_lines(pairs: list[PendingPair]) -> list[str]:
    """One line per channel whose copies are out of date and will not be edited, and why."""
    by_channel: dict[str, tuple[Channel, list[str]]] = {}
    for pair in pairs:
        by_channel.setdefault(pair.channel.id, (pair.channel, []))[1].append(pair.post.key)
    return [
        f"{channel_id}: {copies(len(keys))} out of date, not updated ({why_not_updated(channel)}): {some(keys)}"
        for channel_id, (channel, keys) in by_channel.items()
    ]


def why_not_updated(channel: Channel) -> str:
    if not channel.edits_in_place:
        return f"{channel.type_name} cannot edit a post in place"
    return f"channels.{channel.settings.setting_id}.edits is ignore"


def copies(count: int) -> str:
    return f"{count} cop{'y' if count == 1 else 'ies'}"


def some(keys: list[str]) -> str:
    """The first three post keys, and how many more: a line in a log stays a line."""
    return ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def out_of_date(plan: Plan) -> list[tuple[str, str, str]]:
    """(post key, channel, what happens) for every copy whose message changed since it was sent:
    `status` lists them from the last build, without a request."""
    updating = [
        (p.post.key, p.channel.id, "the next run edits it in place") for p in plan.pairs if p.op is Change.UPDATE
    ]
    kept = [(p.post.key, p.channel.id, f"not updated: {why_not_updated(p.channel)}") for p in plan.not_updated]
    return sorted(updating + kept)


def _same_door(ledger: Ledger, post: Post) -> bool:
    """Whether the post was read the way its copies' messages were made: by the plugin (its
    source file, as the entry has it) or from a feed (no source file on either side). A site that
    moves from the plugin to its feed sees each post described differently (a feed's summary is
    not the page's excerpt): that is not an edit, and no copy is touched for it."""
    entry = ledger.posts.get(post.key)
    return entry is not None and (entry.src or "") == post.src


def _prepared(channel: Channel, post: Post, record: Record | None) -> Prepared:
    prepared = channel.prepare(post, created_at=record.created_at if record else None, life=_life(record))
    if record is not None and record.idempotency_key:
        prepared = replace(prepared, idempotency_key=record.idempotency_key)
    return prepared


def _life(record: Record | None) -> int:
    """The pair's life, for the ids its channel chooses (content/identity.py `client_id`)."""
    return record.lives if record is not None else 0


def _out_of_date(post: Post, channel: Channel, record: Record, memo: MessageMemo) -> list[PendingPair]:
    """A done copy to update: its message (as `message_sha256` recorded it) is not the one the
    channel would send now. A record without a hash (written before hashes) or without a remote
    id (nothing to address) is left alone. The memo spares making the message of a post that did
    not change (engine/memo.py)."""
    if not record.message_sha256:
        return []
    if not record.remote_id and not channel.batched:  # nothing to address (a ping has no copy: it pings again)
        return []
    fingerprint = memo.fingerprint(post, channel, record.created_at)
    # An image its author removed is a change of the post, though a message without the image
    # may hash the same (Mastodon's text): the copy is edited to show none.
    removed = image_removed(post, record)
    if not removed and memo.unchanged(post.key, channel.id, fingerprint, record.message_sha256):
        return []
    prepared = _prepared(channel, post, record)
    if prepared.sha256 is None:
        return []
    if prepared.sha256 != record.message_sha256 and _as_announced_without(channel, post, record):
        memo.remember(post.key, channel.id, fingerprint, record.message_sha256)
        return []
    memo.remember(post.key, channel.id, fingerprint, prepared.sha256)
    if prepared.sha256 == record.message_sha256 and not removed:
        return []
    # With `edits: ignore` (Weibo cannot edit) the copy is only said to be out of date. A thread
    # (one now, or one before) is edited part by part (engine/thread_changes.py).
    edits = channel.settings.edits == "update"
    return [PendingPair(post, channel, record, prepared, Change.UPDATE if edits else Change.KEEP)]


def _as_announced_without(channel: Channel, post: Post, record: Record) -> bool:
    """Whether the copy says what the post made without the image only its body shows, and its
    record names no upload: the image was derived, not set by the author, and a copy announced
    before images were derived (or one whose message never held that image) is not edited for
    it alone (docs/changes.md, "A post's image in an edit"). A change of the post's own text,
    title, URL or front matter image still edits it, and the edit carries the image."""
    if record.media or not post.image_in_body:
        return False
    without = replace(post, image=None, image_alt=None, image_in_body=False)
    return _prepared(channel, without, record).sha256 == record.message_sha256


def with_copies(ledger: Ledger, post: Post) -> Post:
    """The post with its done copies as this run sees the ledger now, at planning (`Post.copies`),
    the addresses it had before a move (`Post.former_urls`) and its threads' parts
    (`Post.thread_parts`): a channel is handed what it may
    need of another channel's copy, and the engine what proves a copy is this post's; neither
    reads the ledger."""
    entry = ledger.posts.get(post.key)
    copies = {
        channel: record.remote_id
        for channel in (entry.channels if entry is not None else {})
        if (record := ledger.record(post.key, channel)) is not None and record.state == State.DONE and record.remote_id
    }
    former = entry.former_urls(post.url) if entry is not None else ()
    threads = {
        channel: tuple(part.message_sha256 or "" for part in live_parts(record.parts))
        for channel in (entry.channels if entry is not None else {})
        if (record := ledger.record(post.key, channel)) is not None and record.parts
    }
    if copies == post.copies and former == post.former_urls and threads == post.thread_parts:
        return post
    return replace(post, copies=copies, former_urls=former, thread_parts=threads)


def make_plan(
    ledger: Ledger,
    posts: list[Post],
    channels: list[Channel],
    max_per_run: int | None,
    skip: Collection[tuple[str, str]] = frozenset(),
    memo: MessageMemo | None = None,
    deletions: list[list[PendingPair]] | None = None,
) -> Plan:
    """`posts` are the announceable posts, oldest first; at most `max_per_run` of them get work,
    then the removed posts whose copies are deleted (`deletions`, a list per post: they count
    toward `max_per_run` too). `skip`: (post key, channel) pairs left out (a backlog a plan would
    adopt)."""
    plan = Plan(lanes={c.id: [] for c in channels}, reviews=held_for_review(ledger, channels))
    memo = memo or MessageMemo(None)
    taken = 0
    for post in map(functools.partial(with_copies, ledger), posts):
        pairs = [
            pair
            for channel in channels
            if post.wants(channel.id) and (post.key, channel.id) not in skip
            for pair in _pending(ledger, post, channel, memo)
            if ledger.may_work_on(pair.record)  # a rehearsal leaves real copies alone
        ]
        plan.not_updated += [pair for pair in pairs if pair.op is Change.KEEP]
        pairs = [pair for pair in pairs if pair.op is not Change.KEEP]
        if not pairs:
            continue
        if max_per_run is not None and taken >= max_per_run:
            plan.deferred.append(post)
            continue
        taken += 1
        for pair in pairs:
            plan.lanes[pair.channel.id].append(pair)
    for removed in deletions or []:
        pairs = [
            pair
            for pair in removed
            if (pair.post.key, pair.channel.id) not in skip and not (pair.record is not None and pair.record.review)
        ]
        if not pairs:
            continue
        if max_per_run is not None and taken >= max_per_run:
            plan.deferred.append(pairs[0].post)
            continue
        taken += 1
        for pair in pairs:
            plan.lanes[pair.channel.id].append(pair)
    return plan


async def under_service_limits(channel: Channel, http: PacedHttp, pairs: list[PendingPair]) -> list[PendingPair]:
    """New pairs' messages made again under the service's own limits, when it states other
    ones (Mastodon's /api/v2/instance); a pair with a record keeps the message it was sent with,
    except a thread half sent, whose parts are cut again as its first run cut them."""
    fresh = [
        pair for pair in pairs if pair.record is None or pair.op is Change.UPDATE or _thread_half_sent(pair.record)
    ]
    if not fresh or not await channel.learn_limits(http, [pair.prepared for pair in fresh]):
        return pairs
    again = [_prepared_again(channel, pair) if pair in fresh else pair for pair in pairs]
    # An update whose message, made under the service's limits, is what the copy says: none.
    return [pair for pair in again if not (pair.op is Change.UPDATE and _up_to_date(pair))]


def _thread_half_sent(record: Record) -> bool:
    return bool(record.parts) and record.state != State.DONE


def _prepared_again(channel: Channel, pair: PendingPair) -> PendingPair:
    try:
        if pair.record is not None and _thread_half_sent(pair.record):
            return replace(pair, prepared=_prepared(channel, pair.post, pair.record))
        return replace(pair, prepared=channel.prepare(pair.post, life=_life(pair.record)))
    except SyndicateError:  # it does not fit the service's rule: the first message goes, refused by name
        return pair


def _up_to_date(pair: PendingPair) -> bool:
    return (
        pair.record is not None
        and pair.record.state == State.DONE
        and pair.record.message_sha256 == pair.prepared.sha256
    )
