"""A thread's life after it is sent: edited in place, grown, shrunk, removed, one part at a time,
each change with the two phases of a send (issue 35; docs/changes.md, docs/removals.md).

A thread's record lists its parts under `parts:`, each with the hash of its text. A thread whose
message changed (`edits: update`), or whose post was removed (`removals: delete`), is brought to
what it must be by one change at a time, the next one always worked out from the record as it
stands (so a run killed anywhere goes on from where the ledger says):

1. fewer parts than the message now has: the last part deleted, again until the count is right;
2. the first part whose text differs edited in place (`Channel.update_part`: Mastodon's PUT at the
   part's id, Bluesky's putRecord at the part's own key, its reply refs and createdAt kept); on a
   channel whose payload holds more than the text (Bluesky's card), the first part is edited on
   every change of the post;
3. more parts than before: the next part sent as a reply to the last one, under the per-part
   client id, by the send path of a thread's later part (engine/threads.py).

A removal deletes every part, last first. Each change is `in_flight` with `part: k` and `op:
update` (`op: delete` for a delete), durable before its request; the answer writes what part k is
now under `parts:` (its new hash and CID; a deleted part dropped; an added part appended) and
clears `part`. A change whose answer was lost is settled by reading part k by its own id before
anything else: an edit by `Channel.read_part_copy` (the new text: done; the old: edited again, a
harmless repeat; gone: a person decides), a delete by `read_presence` (gone: done; there:
deleted again), an added part by `read_part` under the policy of a send. Nothing is repeated
blind, and an edit never becomes a create.

The record ends `done` (the message's hash, `op` and `part` cleared) when every part says what
the message says, `deleted` when a removed post's parts are all proved gone. A change refused for
good leaves the record `done` with the parts as they are and a hash that is no message's, so the
next run goes on from there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Copy, Kind, Outcome, Presence
from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.engine import threads, twophase
from mkdocs_syndicate.engine.executor import Ended, carry
from mkdocs_syndicate.engine.plan import Change
from mkdocs_syndicate.engine.policy import Action, DeleteEvent, Step, UpdateEvent, decide_delete, decide_update
from mkdocs_syndicate.engine.proof import read_finding
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.engine.twophase import staged_call
from mkdocs_syndicate.ledger.schema import Part, Record, State, live_parts
from mkdocs_syndicate.timeutil import epoch_to_iso

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair
    from mkdocs_syndicate.engine.twophase import UpdateHost


def is_thread_change(pair: PendingPair, record: Record | None) -> bool:
    """An edit or a removal that concerns a thread: one sent (its parts listed), or a copy whose
    message is a thread now."""
    if pair.op not in (Change.UPDATE, Change.DELETE) or pair.channel.batched or record is None:
        return False
    message = pair.prepared.message
    return bool(record.parts) or record.part is not None or (message is not None and len(message.texts) > 1)


def parts_of(record: Record) -> tuple[Part, ...]:
    """The parts a record says exist: its `parts`, or the one copy of a message sent whole (its
    hash the record's, which for a payload channel is no text's: that part is edited). Once a
    change has begun (`op`), `parts` says all: none left is none."""
    if record.parts or record.op is not None:
        return live_parts(record.parts)
    return (Part(record.remote_id or "", record.remote_url, record.message_sha256),) if record.remote_id else ()


def next_change(parts: tuple[Part, ...], texts: tuple[str, ...]) -> tuple[str, int] | None:
    """("delete" | "update" | "send", part number) of the next change that brings `parts` to the
    message `texts` (a removal: no texts), or None when they say it already."""
    if len(parts) > len(texts):
        return "delete", len(parts)
    for number, part in enumerate(parts, 1):
        if part.message_sha256 != message_sha256(texts[number - 1]):
            return "update", number
    return ("send", len(parts) + 1) if len(parts) < len(texts) else None


@dataclass
class _Change:
    """One part's change, through this run: the operation `executor.carry` carries."""

    host: UpdateHost
    http: PacedHttp
    pair: PendingPair
    kind: str  # "update" or "delete" ("send" goes through engine/threads.py)
    number: int
    parts: tuple[Part, ...] = ()  # the parts as the change begins (written with its in_flight record)
    read_first: bool = False  # a change of an earlier run may be out: read the part first
    sends: int = 0
    event: UpdateEvent | DeleteEvent = Kind.NOT_SENT
    outcome: Outcome | None = None
    reason: str = ""

    async def first(self) -> None:
        await (_read(self.host, self.http, self) if self.read_first else _call(self.host, self.http, self))

    def decide(self) -> Action:
        record = self.host.record_of(self.pair)
        assert record is not None
        situation = self.host.situation_for(self.pair.channel, record, self.sends, self.outcome)
        if self.kind == "delete":
            assert not isinstance(self.event, Copy)
            return decide_delete(self.event, situation)
        assert not isinstance(self.event, Presence)
        return decide_update(self.event, situation)

    async def step(self, action: Action) -> Ended[tuple[bool, str | None]] | None:
        if action.step in (Step.SEND, Step.RETRY):
            again = f"{self.kind} of a part again"
            await twophase.pause(self.host, self.http, action, self.sends, self.event, again)
            await _call(self.host, self.http, self)
        else:
            await _read(self.host, self.http, self)
        return None

    async def end(self, action: Action) -> tuple[bool, str | None]:
        """(whether the change is made, why the lane stops)."""
        if action.step is Step.DONE or (action.step is Step.DELETED and self.kind == "delete"):
            await _known(self.host, self)
            return True, None
        return False, await _end(self.host, self, action)


async def carry_thread_change(host: UpdateHost, http: PacedHttp, pair: PendingPair) -> str | None:
    """Carry a thread's edit or removal as far as this run may; returns why the lane must stop, or None."""
    removing = pair.prepared.message is None
    texts = () if removing else threads.texts_of(pair)
    record = host.record_of(pair)
    assert record is not None
    made = 0
    if record.state == State.IN_FLIGHT and record.part is not None:  # a change may be out: read it first
        ended, stop = await _settle_unknown(host, http, pair, record, texts)
        if not ended:
            return stop
    # The first part holds more than its text on some channels (Bluesky's card): edited whenever
    # the post changed. Said by its hash left out, which the first change's in_flight write keeps.
    refresh = record.state != State.IN_FLIGHT and bool(pair.prepared.payload_sha256) and not removing
    while True:
        record = host.record_of(pair)
        assert record is not None
        parts = parts_of(record)
        if refresh and record.state != State.IN_FLIGHT and parts:
            parts = (replace(parts[0], message_sha256=None), *parts[1:])
        change = next_change(parts, texts)
        if change is None and record.state == State.DONE:  # nothing to change, and done already
            host.report_pair(pair, PairState.DONE, "up to date", record.remote_url, False)
            return None
        if change is None:
            await _finish(host, pair, record, texts, made)
            return None
        if host.verify_only:  # a read settles; a change waits for a run that sends
            host.report_pair(pair, PairState.PENDING, f"thread: {change[0]} of part {change[1]} to come", None, False)
            return None
        kind, number = change
        if kind == "send":
            ended, stop = await _add(host, http, pair, number, len(texts))
        else:
            ended, stop = await carry(_Change(host, http, pair, kind, number, parts))
        if not ended:
            return stop
        made += 1


async def _settle_unknown(
    host: UpdateHost, http: PacedHttp, pair: PendingPair, record: Record, texts: tuple[str, ...]
) -> tuple[bool, str | None]:
    """The change an in_flight record announces, settled by a read of that part."""
    number, parts = record.part, parts_of(record)
    assert number is not None
    if number > len(parts):  # an added part: read as a send's (engine/threads.py)
        if not texts:
            text = (
                f"needs review: thread part {number} was being added when the post was removed; whether it "
                "exists is not known: check the service, then `mkdocs-syndicate resolve`"
            )
            host.report_pair(pair, PairState.IN_FLIGHT, text, None, True)
            return False, None
        return await _add(host, http, pair, number, len(texts), read_first=True)
    if record.op == "delete":
        return await carry(_Change(host, http, pair, "delete", number, read_first=True))
    if not texts or (number <= len(texts) and parts[number - 1].message_sha256 == message_sha256(texts[number - 1])):
        return True, None  # recorded already, or a removal now: nothing to settle
    if number > len(texts):  # the post changed again since: the part is deleted now
        return True, None
    return await carry(_Change(host, http, pair, "update", number, read_first=True))


async def _add(
    host: UpdateHost, http: PacedHttp, pair: PendingPair, number: int, total: int, *, read_first: bool = False
) -> tuple[bool, str | None]:
    """Part `number` added at the end: the send path of a thread's later part, under `op: update`."""
    return await carry(threads.PartWay(host, http, pair, number, total, read_first, op="update"))


async def _call(host: UpdateHost, http: PacedHttp, change: _Change) -> None:
    pair, number = change.pair, change.number

    def stage(current: Record) -> Record:
        again = current.state == State.IN_FLIGHT and current.part == number
        staged = replace(
            current, state=State.IN_FLIGHT, at=host.now_iso(), attempts=current.attempts + 1 if again else 1
        )
        target = current.message_sha256 if pair.prepared.message is None else pair.prepared.sha256
        op = "delete" if change.kind == "delete" else "update"
        parts = change.parts if current.state != State.IN_FLIGHT and change.parts else parts_of(current)
        if pair.prepared.message is None and current.state == State.IN_FLIGHT:  # a removal: deleted parts stay listed
            parts = current.parts
        return replace(staged, op=op, part=number, parts=parts, message_sha256=target, error=None, note=None)

    async def call(staged: Record) -> Outcome:
        if change.kind == "delete":
            return await pair.channel.delete(http, pair.channel.part_copy(staged, number))
        return await pair.channel.update_part(http, pair.post, pair.prepared, staged, number)

    unknown = f"part {number} may be changed"
    change.outcome = await staged_call(host, http, pair, stage, call, names=twophase.PART, unknown=unknown)
    change.sends += 1
    change.event, change.reason = change.outcome.kind, change.outcome.error or ""


async def _read(host: UpdateHost, http: PacedHttp, change: _Change) -> None:
    pair, number = change.pair, change.number
    record = host.record_of(pair)
    assert record is not None
    if change.kind == "delete":
        part = pair.channel.part_copy(record, number)
        change.event, why = await read_finding(
            lambda: pair.channel.read_presence(http, part), pair.post, Presence.UNKNOWN, Presence.NOT_OURS
        )
    else:
        change.event, why = await read_finding(
            lambda: pair.channel.read_part_copy(http, pair.post, record, pair.prepared, number),
            pair.post,
            Copy.UNKNOWN,
            Copy.NOT_OURS,
        )
    if why:
        change.reason = f"thread part {number}: {why}"


async def _known(host: UpdateHost, change: _Change) -> None:
    """Part k is what the change made it: edited (its new hash, and CID when the answer gave it),
    or deleted (dropped: it was the last). Nothing is out."""
    pair, number = change.pair, change.number
    current = host.record_of(pair)
    assert current is not None
    parts = parts_of(current)
    if change.kind == "delete" and pair.prepared.message is None:  # a removal: listed as deleted, for the end
        parts = (*parts[: number - 1], replace(parts[number - 1], deleted=True), *current.parts[number:])
    elif change.kind == "delete":  # a thread grown shorter: the part is no more
        parts = parts[: number - 1]
    else:
        text = threads.texts_of(pair)[number - 1]
        # The last request's answer (a read after it proved the edit): a settle-read alone names no CID.
        answered = change.outcome if change.outcome is not None and change.outcome.kind is Kind.DONE else None
        cid = answered.ref if answered is not None else None  # a read leaves it to be read when a reply needs it
        edited = replace(parts[number - 1], message_sha256=message_sha256(text), cid=cid)
        parts = (*parts[: number - 1], edited, *parts[number:])
    record = replace(current, state=State.IN_FLIGHT, at=host.now_iso(), part=None, parts=parts, attempts=0)
    checkpoints.hit("before_part_write")
    await host.write_records([(pair, record)])
    checkpoints.hit("after_part_write")


async def _finish(host: UpdateHost, pair: PendingPair, record: Record, texts: tuple[str, ...], made: int) -> None:
    parts = parts_of(record)
    if not texts:  # every part of the removed post is gone
        end = record.gone(host.now_iso(), "deleted (the post was removed), every part of its thread")
        state, how, url = PairState.DELETED, "deleted, every part of its thread (the post was removed)", None
    else:
        first = parts[0]
        end = replace(record, state=State.DONE, at=host.now_iso(), op=None, part=None, error=None, note=None)
        end = replace(end, remote_id=first.remote_id, remote_url=first.remote_url or record.remote_url)
        end = replace(end, message_sha256=pair.prepared.sha256, parts=parts if len(texts) > 1 else (), attempts=0)
        state, url = PairState.DONE, end.remote_url
        proof = "each edit and delete proved by a read of its part, each part added by the answer naming it"
        how = (
            f"updated: a thread of {len(texts)} parts ({made} changed; {proof})"
            if len(texts) > 1
            else f"updated ({proof})"
        )
    if end != record:
        checkpoints.hit("before_done_write")
        await host.write_records([(pair, end)])
        checkpoints.hit("after_done_write")
    host.report_pair(pair, state, how, url, False)


async def _halt(host: UpdateHost, change: _Change, note: str) -> None:
    """A change not made (a definite no): `done` with the parts as they are, for the next run."""
    current = host.record_of(change.pair)
    if current is None or current.state != State.IN_FLIGHT:
        return
    parts = parts_of(current)
    # A done record lists the parts still out: those a removal deleted before are in git's history.
    kept = replace(current, state=State.DONE, at=host.now_iso(), op=None, part=None, note=note, attempts=0)
    kept = replace(kept, parts=parts)
    kept = replace(kept, remote_id=parts[0].remote_id if parts else current.remote_id)
    removing = change.pair.prepared.message is None
    await host.write_records(
        [
            (
                change.pair,
                replace(kept, message_sha256=current.message_sha256 if removing else threads.unfinished_sha(parts)),
            )
        ]
    )


async def _end(host: UpdateHost, change: _Change, action: Action) -> str | None:
    pair, channel = change.pair, change.pair.channel
    text = f"{change.kind} of thread part {change.number}: {host.cleaned(channel, change.reason or action.reason)}"
    stop = f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
    if action.step is Step.DELETED:  # an edit of a part someone deleted: never made again
        host.report_pair(pair, PairState.IN_FLIGHT, f"needs review: {text} (resolve)", None, True)
        return stop
    if action.step is Step.LEAVE or action.keep_in_flight:
        when = f" (after {epoch_to_iso(action.at)})" if action.at is not None else ""
        host.report_pair(pair, PairState.IN_FLIGHT, f"{text}{when}", None, action.needs_review)
        return stop
    await _halt(host, change, f"{change.kind} not made: {text}")
    host.report_pair(pair, PairState.FAILED, f"{change.kind} not made: {text}", None, False)
    return stop
