"""A thread's later parts (`thread: true`), each carried with the two-phase protocol of a send.

The first part is the pair's first send, unchanged (engine/runner.py): its record's `remote_id` is
the thread's. When it is made and the message has more parts, the record stays `in_flight` with
`part: 1` and the first part under `parts:`; then, for each part k from 2:

1. `in_flight` with `part: k` (and the parts sent so far), durable before the request;
2. the request: a reply to part k-1 (`Channel.send_part`), with a client id derived from
   (post URL, channel id, k);
3. the part's id (and Bluesky's cid) appended to `parts:`, the record still `in_flight` with
   `part: k`: part k is known, nothing is out. After the last part, the record is `done`.

So `part` names the part a record is about, and `len(parts)` says how many are known to exist:
`part > len(parts)` means part k's outcome is unknown, and it is settled by a read of that part
(`Channel.read_part`) before anything is sent again, by `policy.decide` as for a first send (a
Mastodon part is read only after the settle time; a Bluesky part, repeat-safe, is sent again at
once). A part refused for good leaves the record `failed` with the parts sent listed; the next
run (or `resolve --retry`) goes on from the first part not known. No part is ever sent twice
except by a repeat the service makes a no-op (Bluesky's putRecord of the same bytes at the same key).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Found, Kind, Outcome
from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.engine import twophase
from mkdocs_syndicate.engine.executor import Ended, carry
from mkdocs_syndicate.engine.policy import Action, Event, Step, decide
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.engine.twophase import staged_call
from mkdocs_syndicate.ledger.schema import Part, Record, State, live_parts
from mkdocs_syndicate.timeutil import epoch_to_iso

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair
    from mkdocs_syndicate.engine.twophase import UpdateHost

# Sends that made nothing for sure: not among the uncertain sends `attempts` counts.
_DEFINITE = frozenset({Kind.NOT_SENT, Kind.REFUSED, Kind.RATE_LIMITED, Kind.AUTH})


def in_progress(record: Record | None) -> bool:
    """A thread begun and not finished: some parts known, the record not done."""
    return (
        record is not None
        and bool(record.parts)
        and record.op is None
        and record.state in (State.IN_FLIGHT, State.FAILED)
    )


def texts_of(pair: PendingPair) -> tuple[str, ...]:
    message = pair.prepared.message
    return message.texts if message is not None else ()


def begun(pair: PendingPair, done: Record | None, ref: str | None) -> Record | None:
    """A first send made (`done`, the record its ending would write), of a message with more
    parts: the record stays in_flight (the thread is not done), its first part listed under
    `parts:` with `part: 1`. None when the pair is not a thread beginning."""
    texts = texts_of(pair)
    if done is None or done.state != State.DONE or len(texts) < 2 or done.parts:
        return None
    first = Part(done.remote_id or "", done.remote_url, message_sha256(texts[0]), ref)
    return replace(done, state=State.IN_FLIGHT, note=None, error=None, part=1, parts=(first,))


async def record_first_part(host: UpdateHost, pair: PendingPair, record: Record) -> None:
    checkpoints.hit("before_part_write")
    await host.write_records([(pair, record)])
    checkpoints.hit("after_part_write")


@dataclass
class PartWay:
    """One part's way through this run: the operation `executor.carry` carries."""

    host: UpdateHost
    http: PacedHttp
    pair: PendingPair
    number: int
    total: int  # the thread's parts, as the message has them now
    read_first: bool = False  # part k may be out: read before anything else
    sends: int = 0
    event: Event = Kind.NOT_SENT
    outcome: Outcome | None = None
    found: tuple[str | None, str | None, str | None] = (None, None, None)  # id, URL, ref from a read
    reason: str = ""
    op: str | None = None  # "update": a part added to a thread being edited (engine/thread_changes.py)

    async def first(self) -> None:
        await (read_part(self.host, self.http, self) if self.read_first else send_part(self.host, self.http, self))

    def decide(self) -> Action:
        record = self.host.record_of(self.pair)
        assert record is not None
        seen = _this_part(record, self.number) if self.op is None else record  # an edit's part counts its own sends
        return decide(self.event, self.host.situation_for(self.pair.channel, seen, self.sends, self.outcome))

    async def step(self, action: Action) -> Ended[tuple[bool, str | None]] | None:
        host, http, channel = self.host, self.http, self.pair.channel
        if action.step is Step.SEND:
            if isinstance(self.event, Kind):  # the last request went unanswered: not straight away
                await http.backoff(host.backoff_for(self.sends), "retrying")
            await send_part(host, http, self)
        elif action.step is Step.RETRY:
            await _not_made(host, self, host.cleaned(channel, self.reason or action.reason), definite=True)
            if action.at is not None:
                http.hold_until(action.at, "rate limited (server asked to wait)")
            else:
                await http.backoff(host.backoff_for(self.sends), "retrying (nothing was sent)")
            await send_part(host, http, self)
        else:  # READ, READ_LATER
            if action.at is not None:  # a 429's wait, or the settle time: the read waits
                http.hold_until(action.at, "settle: reading the part once the server must have finished")
            await read_part(host, http, self)
        return None

    async def end(self, action: Action) -> tuple[bool, str | None]:
        """(whether the part is made, why the lane stops)."""
        if action.step is Step.DONE:
            await _recorded(self.host, self, self.total)
            return True, None
        return False, await _end(self.host, self, action, self.total)


async def carry_thread(host: UpdateHost, http: PacedHttp, pair: PendingPair) -> str | None:
    """Carry a thread's remaining parts as far as this run may; returns why the lane must stop, or None."""
    total = len(texts_of(pair))
    while True:
        record = host.record_of(pair)
        assert record is not None
        number = len(record.parts) + 1
        if number > total:
            await _finish(host, pair, record, total)
            return None
        changed = _changed_part(pair, record)
        if changed is not None:  # the parts still to send would not follow the parts sent
            text = (
                f"needs review: thread part {changed} as sent differs from the message now (the post "
                "changed, or the service's limit did); not continued: `mkdocs-syndicate resolve` "
                "(--done leaves the thread as it is)"
            )
            host.report_pair(
                pair, PairState.IN_FLIGHT if record.state == State.IN_FLIGHT else PairState.FAILED, text, None, True
            )
            return None
        read_first = record.state == State.IN_FLIGHT and record.part == number
        if not read_first and host.verify_only:
            host.report_pair(
                pair,
                PairState.PENDING,
                f"thread: {number - 1} of {total} parts sent; the next run sends the rest",
                None,
                False,
            )
            return None
        ended, stop = await carry(PartWay(host, http, pair, number, total, read_first))
        if not ended:
            return stop


def _changed_part(pair: PendingPair, record: Record) -> int | None:
    """The first part sent whose text is not the message's part of that number now, if any."""
    texts = texts_of(pair)
    for number, part in enumerate(record.parts, 1):
        if number > len(texts) or (part.message_sha256 and part.message_sha256 != message_sha256(texts[number - 1])):
            return number
    return None


def _this_part(record: Record, number: int) -> Record:
    """The record as the policy sees one part: the earlier parts' sends not counted against the
    cap on uncertain sends (each took at least one; one that took more counts here too, which
    errs on the side of a read)."""
    return replace(record, attempts=max(0, record.attempts - (number - 1)))


async def send_part(host: UpdateHost, http: PacedHttp, way: PartWay) -> None:
    pair = way.pair
    replay = False

    def stage(current: Record) -> Record:
        nonlocal replay
        replay = current.state == State.IN_FLIGHT and current.part == way.number
        staged = replace(current, state=State.IN_FLIGHT, attempts=current.attempts + 1, at=host.now_iso())
        # A removal's deleted parts (a post back before its removal ended) are no thread to reply to.
        staged = replace(staged, parts=live_parts(current.parts))
        return replace(staged, part=way.number, op=way.op, error=None, note=None, message_sha256=pair.prepared.sha256)

    async def call(staged: Record) -> Outcome:
        return await pair.channel.send_part(http, pair.post, pair.prepared, way.number, staged.parts, replay)

    unknown = "the part may be made"
    way.outcome = await staged_call(host, http, pair, stage, call, names=twophase.PART, unknown=unknown)
    way.sends += 1
    way.event, way.reason = way.outcome.kind, way.outcome.error or ""


async def read_part(host: UpdateHost, http: PacedHttp, way: PartWay) -> None:
    record = host.record_of(way.pair)
    assert record is not None
    if record.op is not None:  # a part added by an edit: its attempts began at the in_flight write, not the thread's
        record = replace(record, created_at=record.at)
    try:
        verdict = await way.pair.channel.read_part(http, way.pair.post, record, way.number)
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        way.event, way.reason = Found.UNKNOWN, f"the read of part {way.number} failed ({type(exc).__name__})"
        return
    way.event, way.reason = verdict.found, verdict.reason
    way.found = (verdict.remote_id, verdict.remote_url, verdict.ref)


async def _recorded(host: UpdateHost, way: PartWay, total: int) -> None:
    """Part k is made: its id under `parts:` (the record done after the last part)."""
    pair = way.pair
    current = host.record_of(pair)
    assert current is not None
    if way.event is Kind.DONE and way.outcome is not None:
        remote_id, remote_url, ref = way.outcome.remote_id, way.outcome.remote_url, way.outcome.ref
    else:
        remote_id, remote_url, ref = way.found
    text = texts_of(pair)[way.number - 1]
    parts = (*current.parts, Part(remote_id or "", remote_url, message_sha256(text), ref))
    record = replace(current, state=State.IN_FLIGHT, at=host.now_iso(), part=way.number, parts=parts, error=None)
    checkpoints.hit("before_part_write")
    await host.write_records([(pair, record)])
    checkpoints.hit("after_part_write")


async def _finish(host: UpdateHost, pair: PendingPair, record: Record, total: int) -> None:
    done = replace(record, state=State.DONE, at=host.now_iso(), part=None, error=None, note=None)
    checkpoints.hit("before_done_write")
    await host.write_records([(pair, done)])
    checkpoints.hit("after_done_write")
    how = f"sent as a thread of {total} parts"
    host.report_pair(pair, PairState.DONE, how, record.remote_url, False)


async def _not_made(host: UpdateHost, way: PartWay, error: str, *, definite: bool) -> None:
    """Part k was not made (a definite no, or a read proved it absent): `failed`, the parts sent kept."""
    current = host.record_of(way.pair)
    if current is None or current.state != State.IN_FLIGHT:
        return
    attempts = current.attempts - 1 if definite else current.attempts
    failed = replace(current, state=State.FAILED, attempts=max(0, attempts), at=host.now_iso(), error=error)
    if way.op is not None:  # a part an edit adds: the thread stays done as it is, out of date for the next run
        parts = current.parts
        failed = replace(current, state=State.DONE, op=None, part=None, at=host.now_iso(), note=error, attempts=0)
        failed = replace(failed, remote_id=parts[0].remote_id, message_sha256=unfinished_sha(parts))
    await host.write_records([(way.pair, failed)])


def unfinished_sha(parts: tuple[Part, ...]) -> str:
    """A hash no message has: a thread left between two versions is out of date for the next run."""
    return message_sha256("a thread being changed: " + " ".join(p.message_sha256 or "-" for p in parts))


async def _end(host: UpdateHost, way: PartWay, action: Action, total: int) -> str | None:
    pair, channel = way.pair, way.pair.channel
    text = f"thread part {way.number} of {total}: {host.cleaned(channel, way.reason or action.reason)}"
    stop = f"{channel.id} stopped for this run: {text}" if action.step is Step.STOP_LANE else None
    if action.step is Step.LEAVE or action.keep_in_flight:
        when = f" (after {epoch_to_iso(action.at)})" if action.at is not None else ""
        host.report_pair(pair, PairState.IN_FLIGHT, f"{text}{when}", None, action.needs_review)
        return stop
    if action.step is Step.DELETED:  # made, then deleted by its author: a person decides
        host.report_pair(pair, PairState.IN_FLIGHT, f"needs review: {text}", None, True)
        return stop
    # FAIL, STOP_LANE, RELEASE: part k was not made; the parts sent stay listed.
    await _not_made(host, way, text, definite=way.event in _DEFINITE)
    state = PairState.PENDING if action.step is Step.RELEASE else PairState.FAILED
    host.report_pair(pair, state, text, None, False)
    return stop
