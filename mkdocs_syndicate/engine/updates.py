"""An update (`op: update`) or a delete (`op: delete`) of an existing copy, carried with the
two-phase protocol of a send.

A done copy whose message changed (`edits: update`) is edited in place: the `in_flight` record
with `op: update` (its `message_sha256` the target, its `remote_id` the copy) is durable before
the request; the answer makes it `done` with the new hash. An update whose outcome is unknown is
settled by reading the copy by its own id (`Channel.read_copy`): it says the target → done; it
says something else → the update is sent again (a repeat sets the same text: harmless); it is
gone → `deleted`. An update never becomes a create: every ending keeps the copy's remote id, and
a refused update puts the record back to `done` with the hash of what the copy still says, so
the next run tries again. What to do after each event is `policy.decide_update`'s alone.

An edit on a channel that `uploads` carries the post's image as a send does (engine/uploads.py):
after the `in_flight` record and before the request, an image the copy does not show yet is
uploaded and its id written into that record; the image the done copy shows is named again
without a read (Mastodon answers a read of attached media with 404). The record then names what
the copy shows, and a refused edit puts back the upload the copy still shows.

An image its author removed (content/images.py `image_removed`) is removed from the copy by the edit; the
`in_flight` record still names the upload (the copy shows it until the edit is proved), and the
write that settles the edit as done names none.

A delete (a removed post's copy, engine/removals.py) goes the same way: `in_flight` with `op:
delete` first, then `Channel.delete`; an unknown outcome is settled by `Channel.read_presence`
(gone → `deleted`; still there → deleted again, a harmless repeat), by `policy.decide_delete`.
Both end with the record `deleted`, and a refused delete leaves it `done`: the copy is still there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Copy, Kind, Outcome, Presence
from mkdocs_syndicate.content.images import image_removed
from mkdocs_syndicate.engine import twophase, uploads
from mkdocs_syndicate.engine.policy import (
    Action,
    DeleteEvent,
    Situation,
    Step,
    UpdateEvent,
    decide_delete,
    decide_update,
)
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.engine.twophase import UpdateHost, staged_call
from mkdocs_syndicate.ledger.schema import Media, Record, State
from mkdocs_syndicate.timeutil import epoch_to_iso

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair


@dataclass
class _Way:
    pair: PendingPair
    old_sha: str | None  # what the copy said before this run's update (None: not known)
    old_media: tuple[Media, ...] | None = None  # the uploads the copy showed before this run's update (None: not known)
    sends: int = 0
    event: UpdateEvent | DeleteEvent = Kind.NOT_SENT
    outcome: Outcome | None = None
    reason: str = ""

    @property
    def deleting(self) -> bool:
        return self.pair.op == "delete"

    @property
    def op(self) -> str:
        """What this way does to the copy, as the in_flight record's `op` and the report say it."""
        return "delete" if self.deleting else "update"

    def decide(self, situation: Situation) -> Action:
        if self.deleting:
            assert not isinstance(self.event, Copy)
            return decide_delete(self.event, situation)
        assert not isinstance(self.event, Presence)
        return decide_update(self.event, situation)


async def carry_change(host: UpdateHost, http: PacedHttp, pair: PendingPair, *, read_first: bool) -> str | None:
    """Carry one update or delete as far as this run may; returns why the lane must stop, or None."""
    channel = pair.channel
    before = host.record_of(pair)
    done = before if before is not None and before.state == State.DONE else None
    way = _Way(pair, done.message_sha256 if done else None, done.media if done else None)
    if read_first:
        await _read(host, http, way)
    elif host.verify_only:
        return None
    else:
        await _send(host, http, way)
    while True:
        record = host.record_of(pair)
        action = way.decide(host.situation_for(channel, record, way.sends, way.outcome))
        if action.step in (Step.SEND, Step.RETRY):
            if action.step is Step.RETRY:
                await _back_to_done(host, way, host.cleaned(channel, way.reason or action.reason))
            await twophase.pause(host, http, action, way.sends, way.event, "updating again")
            await _send(host, http, way)
        elif action.step is Step.READ:
            await _read(host, http, way)
        else:
            return await _end(host, way, action)


async def _send(host: UpdateHost, http: PacedHttp, way: _Way) -> None:
    pair = way.pair

    def stage(current: Record) -> Record:
        assert current.remote_id  # a copy to update
        return Record(
            State.IN_FLIGHT,
            current.attempts + 1 if current.state == State.IN_FLIGHT else 1,
            host.now_iso(),
            remote_id=current.remote_id,
            remote_url=current.remote_url,
            idempotency_key=current.idempotency_key,
            created_at=current.created_at,
            # An update's target; a delete keeps what the copy says (there is no new text).
            message_sha256=current.message_sha256 if way.deleting else pair.prepared.sha256,
            op=way.op,
            media=current.media,  # what the copy shows, named again by the edit
            life=current.life,
        )

    previous = host.record_of(pair)

    async def call(staged: Record) -> Outcome:
        if way.deleting:
            return await pair.channel.delete(http, staged)
        prepared, failed = await uploads.with_media(host, http, pair, pair.prepared, previous, host.warnings)
        if failed is not None:
            return failed
        current = host.record_of(pair)
        assert current is not None
        outcome = await pair.channel.update(http, pair.post, prepared, current)
        await uploads.record_new_upload(host, pair, outcome)
        return outcome

    unknown = "the copy may be changed"
    way.outcome = await staged_call(host, http, pair, stage, call, names=twophase.COPY, unknown=unknown)
    way.sends += 1
    way.event, way.reason = way.outcome.kind, way.outcome.error or ""


async def _read(host: UpdateHost, http: PacedHttp, way: _Way) -> None:
    record = host.record_of(way.pair)
    assert record is not None
    failed = (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError)
    if way.deleting:
        try:
            way.event = await way.pair.channel.read_presence(http, record)
        except failed as exc:
            way.event, way.reason = Presence.UNKNOWN, f"the read of the copy failed ({type(exc).__name__})"
        return
    try:
        way.event = await way.pair.channel.read_copy(http, way.pair.post, record, way.pair.prepared)
    except failed as exc:
        way.event, way.reason = Copy.UNKNOWN, f"the read of the copy failed ({type(exc).__name__})"


async def _back_to_done(host: UpdateHost, way: _Way, error: str) -> None:
    """Nothing was changed remotely: the record says done again, with what the copy still says."""
    current = host.record_of(way.pair)
    if current is None or current.state != State.IN_FLIGHT:
        return
    kept = current.moved(State.DONE, host.now_iso(), remote_id=current.remote_id, remote_url=current.remote_url)
    media = kept.media if way.old_media is None else way.old_media  # not a new upload the copy does not show
    kept = replace(kept, message_sha256=way.old_sha, media=media, note=f"{way.op} not made: {error}")
    await host.write_records([(way.pair, kept)])


async def _end(host: UpdateHost, way: _Way, action: Action) -> str | None:
    pair, channel = way.pair, way.pair.channel
    current = host.record_of(pair)
    assert current is not None
    text = host.cleaned(channel, way.reason or action.reason)
    if action.step is Step.DONE and way.deleting:  # the service confirmed the delete
        checkpoints.hit("before_done_write")
        await host.write_records([(pair, current.gone(host.now_iso(), action.reason))])
        checkpoints.hit("after_done_write")
        host.report_pair(pair, PairState.DELETED, action.reason, None, False)
        return None
    if action.step is Step.DONE:
        url = (way.outcome.remote_url if way.outcome is not None else None) or current.remote_url
        done = current.moved(State.DONE, host.now_iso(), remote_id=current.remote_id, remote_url=url)
        media = () if image_removed(pair.post, current) else current.media  # the copy shows no image now
        checkpoints.hit("before_done_write")
        await host.write_records([(pair, replace(done, message_sha256=pair.prepared.sha256, media=media))])
        checkpoints.hit("after_done_write")
        host.report_pair(pair, PairState.DONE, action.reason or "updated", url, False)
        return None
    if action.step is Step.DELETED:
        await host.write_records([(pair, current.gone(host.now_iso(), action.reason))])
        host.report_pair(pair, PairState.DELETED, action.reason, None, False)
        return None
    if action.step is Step.LEAVE or action.keep_in_flight:
        when = f" (after {epoch_to_iso(action.at)})" if action.at is not None else ""
        host.report_pair(pair, PairState.IN_FLIGHT, f"{way.op}: {text}{when}", None, action.needs_review)
        return f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
    # FAIL, STOP_LANE: a definite no; the copy keeps its old text, and the next run tries again.
    await _back_to_done(host, way, text)
    host.report_pair(pair, PairState.FAILED, f"{way.op} not made: {text}", None, False)
    return f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
