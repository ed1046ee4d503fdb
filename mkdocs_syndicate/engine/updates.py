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

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Copy, Kind, Outcome, Presence
from mkdocs_syndicate.content.images import image_removed
from mkdocs_syndicate.engine import twophase, uploads
from mkdocs_syndicate.engine.executor import Ended, carry
from mkdocs_syndicate.engine.plan import Change
from mkdocs_syndicate.engine.policy import (
    Action,
    DeleteEvent,
    Step,
    UpdateEvent,
    decide_delete,
    decide_update,
)
from mkdocs_syndicate.engine.proof import read_finding
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.engine.twophase import UpdateHost, staged_call
from mkdocs_syndicate.ledger.schema import WITHDRAWN, Media, Record, State
from mkdocs_syndicate.timeutil import epoch_to_iso

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair


@dataclass
class _Way:
    """One edit or delete of a copy: the operation `executor.carry` carries."""

    host: UpdateHost
    http: PacedHttp
    pair: PendingPair
    read_first: bool  # an in_flight change of an earlier run: read the copy before anything else
    old_sha: str | None  # what the copy said before this run's update (None: not known)
    old_media: tuple[Media, ...] | None = None  # the uploads the copy showed before this run's update (None: not known)
    before: Record | None = None  # the record as this run found it
    intent: bool = False  # this run wrote the change's in_flight record before a read, sending nothing yet
    sends: int = 0
    event: UpdateEvent | DeleteEvent = Kind.NOT_SENT
    outcome: Outcome | None = None
    reason: str = ""

    @property
    def deleting(self) -> bool:
        return self.pair.op is Change.DELETE

    @property
    def op(self) -> Change:
        """What this way does to the copy, as the in_flight record's `op` and the report say it."""
        return Change.DELETE if self.deleting else Change.UPDATE

    @property
    def reads(self) -> bool:
        """Whether the channel reads this copy back: its change is then proved by a read."""
        channel = self.pair.channel
        return channel.reads_presence if self.deleting else channel.reads_copies

    async def first(self) -> None:
        if self.read_first:
            await _read(self.host, self.http, self)
        elif self.reads:  # the intent durable, then a read: is the copy there, and this post's?
            await _stage_intent(self.host, self)
            await _read(self.host, self.http, self)
        else:
            await _send(self.host, self.http, self)

    def decide(self) -> Action:
        record = self.host.record_of(self.pair)
        situation = self.host.situation_for(self.pair.channel, record, self.sends, self.outcome)
        if self.deleting:
            assert not isinstance(self.event, Copy)
            return decide_delete(self.event, situation)
        assert not isinstance(self.event, Presence)
        return decide_update(self.event, situation)

    async def step(self, action: Action) -> Ended[str | None] | None:
        if action.step in (Step.SEND, Step.RETRY):
            if action.step is Step.RETRY:
                await _back_to_done(self.host, self, self.host.cleaned(self.pair.channel, self.reason or action.reason))
            await twophase.pause(self.host, self.http, action, self.sends, self.event, "updating again")
            await _send(self.host, self.http, self)
        else:  # READ (a change's policy has no later read)
            await _read(self.host, self.http, self)
        return None

    async def end(self, action: Action) -> str | None:
        return await _end(self.host, self, action)


async def carry_change(host: UpdateHost, http: PacedHttp, pair: PendingPair, *, read_first: bool) -> str | None:
    """Carry one update or delete as far as this run may; returns why the lane must stop, or None."""
    if not read_first and host.verify_only:  # a run that only reads has nothing to settle here
        return None
    before = host.record_of(pair)
    done = before if before is not None and before.state == State.DONE else None
    old_sha, old_media = (done.message_sha256, done.media) if done else (None, None)
    return await carry(_Way(host, http, pair, read_first, old_sha, old_media, before=before))


def _staged(host: UpdateHost, way: _Way, current: Record, attempts: int) -> Record:
    """The in_flight record of this change: the copy it addresses, and the change's target."""
    assert current.remote_id  # a copy to update
    return Record(
        State.IN_FLIGHT,
        attempts,
        host.now_iso(),
        remote_id=current.remote_id,
        remote_url=current.remote_url,
        idempotency_key=current.idempotency_key,
        created_at=current.created_at,
        # An update's target; a delete keeps what the copy says (there is no new text).
        message_sha256=current.message_sha256 if way.deleting else way.pair.prepared.sha256,
        op=way.op,
        media=current.media,  # what the copy shows, named again by the edit
        life=current.life,
    )


async def _stage_intent(host: UpdateHost, way: _Way) -> None:
    """The change durable before the read that comes before it (no request made yet: no
    attempts): whatever the read finds is then written as the end of an in_flight change, and a
    kill after this write leaves a change the next run settles by a read, as one after the call."""
    current = host.record_of(way.pair)
    assert current is not None
    await host.write_records([(way.pair, _staged(host, way, current, 0))])
    way.intent = True


async def _send(host: UpdateHost, http: PacedHttp, way: _Way) -> None:
    pair = way.pair

    def stage(current: Record) -> Record:
        again = current.state == State.IN_FLIGHT and current.attempts > 0
        return _staged(host, way, current, current.attempts + 1 if again else 1)

    # What the copy showed before this run's change (uploads reuse the image it names).
    previous = way.before if way.sends == 0 else host.record_of(pair)

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
    """The copy read by its own id, and judged: this post's, another's, gone, or unknown."""
    record = host.record_of(way.pair)
    assert record is not None
    pair = way.pair
    if way.deleting:
        way.event, why = await read_finding(
            lambda: pair.channel.read_presence(http, record), pair.post, Presence.UNKNOWN, Presence.NOT_OURS
        )
    else:
        way.event, why = await read_finding(
            lambda: pair.channel.read_copy(http, pair.post, record, pair.prepared),
            pair.post,
            Copy.UNKNOWN,
            Copy.NOT_OURS,
        )
    way.reason = why or way.reason


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
    if action.step is Step.DELETED:  # an edit's copy gone: the author's hand, recorded as such
        note = action.reason if way.deleting else f"{WITHDRAWN}: {action.reason}"
        checkpoints.hit("before_done_write")
        await host.write_records([(pair, current.gone(host.now_iso(), note))])
        checkpoints.hit("after_done_write")
        host.report_pair(pair, PairState.DELETED, action.reason, None, False)
        return None
    if action.step is Step.REVIEW:  # recorded: no later run changes this copy until a person decides
        why = host.cleaned(channel, "; ".join(part for part in (way.reason, action.reason) if part))
        await host.write_records([(pair, replace(current, review=f"{way.op}: {why}"))])
        host.report_pair(pair, PairState.of(current.state), f"needs review: {way.op}: {why}", None, True)
        return None
    if action.step is Step.HOLD and way.intent and way.sends == 0:  # nothing sent: done as it was
        await _back_to_done(host, way, text)
        host.report_pair(pair, PairState.FAILED, f"{way.op} not made: {text}", None, False)
        return None
    if action.step is Step.HOLD:  # a change of an earlier run, not settled: the next run reads again
        host.report_pair(pair, PairState.IN_FLIGHT, f"{way.op}: {text}", None, False)
        return None
    if action.step is Step.LEAVE or action.keep_in_flight:
        when = f" (after {epoch_to_iso(action.at)})" if action.at is not None else ""
        host.report_pair(pair, PairState.IN_FLIGHT, f"{way.op}: {text}{when}", None, action.needs_review)
        return f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
    # FAIL, STOP_LANE: a definite no; the copy keeps its old text, and the next run tries again.
    await _back_to_done(host, way, text)
    host.report_pair(pair, PairState.FAILED, f"{way.op} not made: {text}", None, False)
    return f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
