"""The runner: one lane per channel, all lanes concurrent, the two-phase protocol per pair.

A lane carries units: a pair, or on a batched channel (IndexNow) a batch of pairs sent by one
request. One loop carries both: [read back if in_flight] → wait for pacing → write in_flight
durably → send → act on the outcome. What to do with an outcome is decided by `policy.decide`
alone, for each member (a verify-only run is one of its inputs); this module only carries it
out: write the records, wait, read, send again, or leave the pair in_flight and report it.

A pair that must wait for its settle time before a read can prove it absent goes to the back of
its lane, so the other posts go out meanwhile. A failed ledger write, a lost git race or a bug in
one lane stops the others only between units: a request already out is finished and recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Channel, Found, Kind, Outcome, Verdict
from mkdocs_syndicate.config.defaults import DEFAULT_MAX_WAIT
from mkdocs_syndicate.engine import thread_changes, threads, uploads
from mkdocs_syndicate.engine.budgets import LaneBudget
from mkdocs_syndicate.engine.endings import ENDING_STEPS, INTERRUPTED_BEFORE_SENDING, clean, ending, error_text
from mkdocs_syndicate.engine.executor import Ended, carry
from mkdocs_syndicate.engine.groupcommit import DirectWriter, GroupCommitter, LedgerWriter
from mkdocs_syndicate.engine.pacing import PacedHttp
from mkdocs_syndicate.engine.plan import PendingPair, Plan, under_service_limits
from mkdocs_syndicate.engine.policy import DEFAULT_TRIES, Action, Situation, Step, decide
from mkdocs_syndicate.engine.records import as_sent, in_flight, not_made
from mkdocs_syndicate.engine.results import PairResult, PairState, Reporter, RunReport
from mkdocs_syndicate.engine.sigterm import cancelled_by_sigterm
from mkdocs_syndicate.engine.situations import situation
from mkdocs_syndicate.engine.units import Attempt, Unit, settle_reason
from mkdocs_syndicate.engine.updates import carry_change
from mkdocs_syndicate.errors import LaneCrashed, SyndicateError
from mkdocs_syndicate.ledger.merge import StaleLedger
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, Transition
from mkdocs_syndicate.net.client import run_client
from mkdocs_syndicate.redaction import redact
from mkdocs_syndicate.timeutil import Clock, to_iso, utcnow


def _waits_for_push(channel: Channel) -> bool:
    """An at-most-once request leaves only once its in_flight record is durable (pushed, in git)."""
    return channel.settings.at_most_once


class _LaneStopped(Exception):
    """Auth refused or a wait beyond max_wait: the channel takes no more requests this run."""


class Runner:
    def __init__(
        self,
        ledger: Ledger,
        plan: Plan,
        *,
        clock: Clock,
        reporter: Reporter,
        transport: httpx.AsyncBaseTransport | None = None,
        max_wait: float = DEFAULT_MAX_WAIT,
        tries: int = DEFAULT_TRIES,
        rng: random.Random | None = None,
        verify_only: bool = False,
    ) -> None:
        self.ledger = ledger
        self.plan = plan
        self.clock = clock
        self.reporter = reporter
        self.transport = transport
        self.max_wait = max_wait
        self._max_waits: dict[str, float] = {}  # a lane's for a 429 of the unit it carries (engine/budgets.py)
        self.tries = tries
        self.rng = rng or random.Random()
        self.verify_only = verify_only  # `mkdocs-syndicate verify`: reads only, never a send
        self.report = RunReport(deferred=[p.key for p in plan.deferred])
        self._stop: BaseException | None = None  # set by the first lane that fails
        self._writer: LedgerWriter = DirectWriter(ledger)
        self.terminated = False  # SIGTERM arrived: the run was cancelled as Ctrl-C cancels it

    async def run(self) -> RunReport:
        with cancelled_by_sigterm(self._terminated):
            return await self._run()

    def _terminated(self) -> None:
        self.terminated = True

    async def _run(self) -> RunReport:
        channels = {pair.channel.id: pair.channel for pair in self.plan.pairs}
        async with run_client(self.transport) as client:
            lanes = self._lanes(client, channels)
            try:
                # Not a TaskGroup: one lane's failure must not cancel another in the middle of a
                # request, whose outcome would then go unrecorded.
                await asyncio.gather(*lanes)
            finally:
                for channel in channels.values():
                    await channel.close()
                try:
                    await self._writer.close()  # with git: the run's last push
                except SyndicateError as error:
                    self._halt(error)
        if self._stop is not None:
            raise self._stop
        return self.report

    # ------------------------------------------------------------------ lanes

    def _lanes(self, client: httpx.AsyncClient, channels: dict[str, Channel]) -> list[Awaitable[None]]:
        """One lane per channel with work, those that wait for a push first: their in_flight
        records are staged (and the push under way) before another lane's first request sets up
        its connection. In git mode the writer groups their writes."""
        order = sorted(
            (channel_id for channel_id, pairs in self.plan.lanes.items() if pairs),
            key=lambda channel_id: not _waits_for_push(channels[channel_id]),
        )
        if self.ledger.mirror is not None:
            # Only at-most-once lanes ever wait for a push: a group is complete once they all do.
            waiting_kind = sum(1 for channel_id in order if _waits_for_push(channels[channel_id]))
            self._writer = GroupCommitter(self.ledger, waiting_kind, self._halt)
        return [self._guarded_lane(client, channels[channel_id], self.plan.lanes[channel_id]) for channel_id in order]

    async def _guarded_lane(self, client: httpx.AsyncClient, channel: Channel, pairs: list[PendingPair]) -> None:
        try:
            if isinstance(self._writer, GroupCommitter) and not _waits_for_push(channel):
                # One turn of the loop first, so the committer starts the push of the other lanes'
                # in_flight records before this lane's first request sets up its connection.
                await asyncio.sleep(0)
            await self._lane(client, channel, pairs)
        except SyndicateError as error:  # a failed ledger write, a lost git race
            self._halt(error)
        except Exception as exc:
            text = self._clean(channel, f"{type(exc).__name__}: {exc}")
            trace = redact("".join(traceback.format_exception(exc)), channel.secrets())
            self._halt(LaneCrashed(f"unexpected error on channel {channel.id}: {text}", trace))
        finally:
            if _waits_for_push(channel):
                self._writer.lane_done()

    def _halt(self, error: BaseException) -> None:
        # A lost git race explains the errors that follow it in other lanes: report it first.
        if self._stop is None or (isinstance(error, StaleLedger) and not isinstance(self._stop, StaleLedger)):
            self._stop = error

    async def _lane(self, client: httpx.AsyncClient, channel: Channel, pairs: list[PendingPair]) -> None:
        settings = channel.settings

        async def sleep(seconds: float, reason: str) -> None:
            await self.reporter.wait(channel.id, seconds, reason, self.clock)

        http = PacedHttp(
            client, min_interval=settings.min_interval, timeout=settings.timeout, clock=self.clock, sleep=sleep
        )
        http.seed(self.ledger.posts, channel.id)
        self.reporter.lane_started(channel.id, len(pairs))
        try:
            if not self.verify_only and not channel.batched:
                pairs = await under_service_limits(channel, http, pairs)
            units = self._units(channel, pairs)
            budget = LaneBudget(channel, self.ledger.posts, self.clock, verify_only=self.verify_only)
            while units:
                if self._stop is not None:
                    self._not_attempted(units, f"the run stopped: {self._stop}")
                    return
                unit = self._next(units)
                units.remove(unit)
                if not await budget.admits(unit, sleep, self.max_wait):  # the service's budget of deletes spent
                    units = budget.left_for_later(unit, units, self.report.warnings)
                    continue
                self._max_waits[channel.id], http.refused_until = budget.max_wait(unit, self.max_wait), None
                wait = unit.not_before - self.clock.time()
                if wait > 0:
                    await sleep(wait, settle_reason(unit))
                try:
                    units += await self._carry(channel, http, unit)
                except _LaneStopped as stop:
                    if budget.refused(unit, http.refused_until):  # a 429 for a kind with a budget: the rest later
                        units = budget.left_for_later(unit, units, self.report.warnings)
                        continue
                    self._not_attempted(units, str(stop))
                    return
                except Exception as error:
                    why = f"the run stopped: {self._clean(channel, str(error) or type(error).__name__)}"
                    for member in unit.members:
                        state = self._state_of(member)
                        self._finish(member, state, why, needs_review=state == PairState.IN_FLIGHT)
                    self._not_attempted(units, why)
                    raise
        finally:
            self.report.requests += http.requests

    @staticmethod
    def _units(channel: Channel, pairs: list[PendingPair]) -> list[Unit]:
        """The lane's requests, in plan order: a pair each, or the channel's batches."""
        if not channel.batched:
            return [Unit([pair], read_first=pair.needs_verify) for pair in pairs]
        by_key = {pair.post.key: pair for pair in pairs}
        batches = channel.batches([pair.post for pair in pairs])
        return [Unit([by_key[post.key] for post in batch], batch=batch) for batch in batches]

    def _not_attempted(self, units: list[Unit], why: str) -> None:
        for unit in units:
            for member in unit.members:
                self._finish(member, PairState.NOT_ATTEMPTED, why)

    def _next(self, units: list[Unit]) -> Unit:
        """The first unit that may go now, in plan order; else the one that may go soonest."""
        now = self.clock.time()
        ready = [unit for unit in units if unit.not_before <= now]
        return ready[0] if ready else min(units, key=lambda unit: unit.not_before)

    def _state_of(self, pair: PendingPair) -> PairState:
        record = self._record(pair)
        return PairState.of(record.state if record else None)

    # ------------------------------------------------------------------ one unit

    async def _carry(self, channel: Channel, http: PacedHttp, unit: Unit) -> list[Unit]:
        """Carry one unit as far as this run may, as tenacity's loop carries a call: the policy
        decides each step from the last event, for each member (their records may differ), and
        the unit either ends (each member its own way, written together) or goes on by a step
        of `_STEPS`. Returns what the lane must take up again later (a settle wait), or []."""
        pair = unit.members[0]
        if thread_changes.is_thread_change(pair, self._record(pair)):  # a thread edited or removed
            stop = await thread_changes.carry_thread_change(self, http, pair)
            if stop is not None:
                raise _LaneStopped(stop)
            return []
        if pair.op in ("update", "delete") and not channel.batched:  # a copy changed (engine/updates.py)
            stop = await carry_change(self, http, pair, read_first=unit.read_first)
            if stop is not None:
                raise _LaneStopped(stop)
            return []
        if not channel.batched and threads.in_progress(self._record(unit.members[0])):  # a thread half sent
            return await self._thread(http, unit.members[0])
        if not unit.read_first and self.verify_only:
            return []
        return await carry(_UnitWay(self, Attempt(channel, http, unit)))

    async def _send_into(self, attempt: Attempt) -> None:
        attempt.outcome = await self._send(attempt.channel, attempt.http, attempt.unit)
        attempt.unit.sends += 1
        attempt.event, attempt.reason = attempt.outcome.kind, attempt.outcome.error or ""
        if attempt.outcome.kind is Kind.AUTH:  # the lane stops: say what is wrong with the credential
            from mkdocs_syndicate.engine.doctor import credentials_reason

            attempt.reason = await credentials_reason(attempt.channel, attempt.http.unpaced(), attempt.reason)

    async def _read_into(self, attempt: Attempt) -> None:
        (pair,) = attempt.unit.members  # a batch is read post by post (_step_read)
        record = self._record(pair)
        assert record is not None
        verdict = await self._read(attempt.channel, attempt.http, pair, record, attempt.outcome)
        attempt.event, attempt.reason = verdict.found, verdict.reason
        attempt.found = (verdict.remote_id, verdict.remote_url)
        attempt.ref = verdict.ref

    async def _end(self, attempt: Attempt, actions: list[Action]) -> PendingPair | None:
        """The members' ends, written and reported; a member whose thread goes on after its first
        part is returned instead, its first part recorded (only a single pair's unit has one)."""
        members = attempt.unit.members
        facts = attempt.facts(self._now())
        ends = [ending(facts, self._record(member), action) for member, action in zip(members, actions, strict=True)]
        ref = attempt.outcome.ref if attempt.event is Kind.DONE and attempt.outcome is not None else attempt.ref
        if len(members) == 1 and (begun := threads.begun(members[0], ends[0].record, ref)) is not None:
            await threads.record_first_part(self, members[0], begun)
            return members[0]
        writes = [(member, end.record) for member, end in zip(members, ends, strict=True) if end.record is not None]
        # A removed page's ping ends `deleted`: its end is as much the answer's record as a done one.
        await self._write_ends(writes, done=any(end.state in (PairState.DONE, PairState.DELETED) for end in ends))
        for member, end in zip(members, ends, strict=True):
            self._finish(member, end.state, end.text, end.remote_url, end.needs_review)
        stopped = next((end.stops_lane for end in ends if end.stops_lane), None)
        if stopped is not None:
            raise _LaneStopped(stopped)
        return None

    async def _thread(self, http: PacedHttp, pair: PendingPair) -> list[Unit]:
        stop = await threads.carry_thread(self, http, pair)
        if stop is not None:
            raise _LaneStopped(stop)
        return []

    async def _write_ends(self, writes: list[tuple[PendingPair, Record]], *, done: bool) -> None:
        """The members' last records of this run, in one write (between the done checkpoints)."""
        if done:
            checkpoints.hit("before_done_write")
        if writes:
            await self._write_many(writes)
        if done:
            checkpoints.hit("after_done_write")

    # The steps that go on (engine/policy.py): None when the unit's next event is in `attempt`,
    # else what `_carry` returns.

    async def _step_retry(self, attempt: Attempt, action: Action) -> list[Unit] | None:
        """Nothing happened remotely: record failed, wait as the server asked (or back off), send."""
        now = self._now()
        error = error_text(attempt.facts(now), action)
        writes = [
            (member, not_made(record, error, now, definite=True))
            for member, record in self._in_flight_records(attempt.unit)
        ]
        if writes:
            await self._write_many(writes)
        if action.at is not None:
            attempt.http.hold_until(action.at, "rate limited (server asked to wait)")
        else:
            await attempt.http.backoff(self._backoff(attempt.unit.sends), "retrying (nothing was sent)")
        await self._send_into(attempt)
        return None

    async def _step_send(self, attempt: Attempt, action: Action) -> list[Unit] | None:
        if isinstance(attempt.event, Kind):  # the last request went unanswered: not straight away
            await attempt.http.backoff(self._backoff(attempt.unit.sends), "retrying")
        await self._send_into(attempt)
        return None

    async def _step_read(self, attempt: Attempt, action: Action) -> list[Unit] | None:
        unit = attempt.unit
        if len(unit.members) > 1:  # a verify reads one post: each member is read on its own
            return [
                Unit([member], read_first=True, not_before=action.at or 0.0, sends=unit.sends)
                for member in unit.members
            ]
        if action.at is not None:  # a 429: the read waits as the server asked
            attempt.http.hold_until(action.at, "rate limited (server asked to wait)")
        await self._read_into(attempt)
        return None

    async def _step_read_later(self, attempt: Attempt, action: Action) -> list[Unit] | None:
        assert action.at is not None
        return [replace(attempt.unit, read_first=True, not_before=action.at)]

    def _situation(self, channel: Channel, current: Record | None, sends: int, outcome: Outcome | None) -> Situation:
        limited = outcome is not None and outcome.kind is Kind.RATE_LIMITED  # a settle wait keeps max_wait
        now, wait = self.clock.time(), self._max_waits.get(channel.id, self.max_wait) if limited else self.max_wait
        return situation(
            channel, current, sends, outcome, now=now, max_wait=wait, tries=self.tries, verify_only=self.verify_only
        )

    async def _send(self, channel: Channel, http: PacedHttp, unit: Unit) -> Outcome:
        """Phase one (in_flight, durable, for every member) and the request itself."""
        await http.wait_turn()
        previous = [self._record(member) for member in unit.members]
        checkpoints.hit("before_in_flight_write")
        now, batched, sandbox = self._now(), unit.batch is not None, self.ledger.sandbox is True
        staged = [
            (member, in_flight(member, before, now, batched=batched, sandbox=sandbox))
            for member, before in zip(unit.members, previous, strict=True)
        ]
        # What a send needs and changes nothing (a session) is fetched while the record is pushed.
        warming = asyncio.ensure_future(channel.warm_up(http))
        try:
            try:
                # At-least-once: this in_flight need not be pushed before the request (a later push carries it).
                await self._write_many(staged, before_request=_waits_for_push(channel))
            except BaseException:
                warming.cancel()  # the record is not durable: no request of this unit leaves
                raise
            finally:
                await asyncio.gather(warming, return_exceptions=True)
        except asyncio.CancelledError:
            # Ctrl-C (or CI cancelling the job) while the record was on its way to the remote:
            # the request never left. Say so, or the pushed in_flight would cost the next run a
            # settle wait and a read before it may send.
            with contextlib.suppress(SyndicateError):  # a failed flush already says why
                await self._write_many(
                    [(m, not_made(r, INTERRUPTED_BEFORE_SENDING, self._now(), definite=True)) for m, r in staged]
                )
            raise
        checkpoints.hit("after_in_flight_write")
        if unit.batch is not None:
            outcome = await channel.send_batch_after(http, unit.batch, previous)
        else:
            (pair,) = unit.members
            # The post's image first, its id recorded before the status (engine/uploads.py).
            prepared, failed = await uploads.with_media(
                self, http, pair, as_sent(pair, previous[0]), previous[0], self.report.warnings
            )
            outcome = failed or await channel.send(http, pair.post, prepared)
            await uploads.record_new_upload(self, pair, outcome)
        checkpoints.hit("after_response")
        return outcome

    async def _read(
        self, channel: Channel, http: PacedHttp, pair: PendingPair, record: Record, after: Outcome | None
    ) -> Verdict:
        try:
            return await channel.verify(http, pair.post, record, after)
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            # Whatever went wrong, nothing was proved: the pair stays in_flight, never resent blind.
            return Verdict(Found.UNKNOWN, reason=f"the read failed ({type(exc).__name__})")

    def _backoff(self, sends: int) -> float:
        base = 2.0 ** max(1, sends)
        return base + self.rng.uniform(0, base / 2)

    def _record(self, pair: PendingPair) -> Record | None:
        return self.ledger.record(pair.post.key, pair.channel.id)

    def _in_flight_records(self, unit: Unit) -> list[tuple[PendingPair, Record]]:
        records = [(member, self._record(member)) for member in unit.members]
        return [
            (member, record) for member, record in records if record is not None and record.state == State.IN_FLIGHT
        ]

    # ------------------------------------------------------------------ helpers

    def _now(self) -> str:
        return to_iso(utcnow(self.clock))

    async def _write_many(self, items: list[tuple[PendingPair, Record]], *, before_request: bool = False) -> None:
        await self._writer.write([Transition(p.ref, p.channel.id, r) for p, r in items], before_request=before_request)

    @staticmethod
    def _clean(channel: Channel, text: str | None) -> str:
        return clean(text, channel.secrets())

    def _finish(
        self,
        pair: PendingPair,
        state: PairState,
        detail: str,
        remote_url: str | None = None,
        needs_review: bool = False,
    ) -> None:
        # Every way's done is written before it is reported: the id comes from the record.
        record = self._record(pair) if state == PairState.DONE else None
        remote_id = record.remote_id if record is not None else None
        result = PairResult(pair.post.key, pair.channel.id, state, detail, remote_url, needs_review, remote_id)
        self.report.results.append(result)
        self.reporter.pair_finished(result)

    # ------------------------------------------------------------------ what an update borrows (engine/updates.py)

    # The runner's own, under the names engine/updates.py's UpdateHost gives them.
    situation_for = _situation
    write_records = _write_many
    record_of = _record
    report_pair = _finish
    cleaned = _clean
    now_iso = _now
    backoff_for = _backoff

    @property
    def warnings(self) -> list[str]:
        return self.report.warnings


@dataclass
class _UnitWay:
    """A unit's way through this run (a first send, or a batch's): the operation `executor.carry`
    carries. One request serves every member; while one member must go on, the unit goes on."""

    runner: Runner
    attempt: Attempt
    actions: list[Action] = field(default_factory=list)  # each member's, after the last event

    async def first(self) -> None:
        attempt = self.attempt
        await (self.runner._read_into(attempt) if attempt.unit.read_first else self.runner._send_into(attempt))

    def decide(self) -> Action:
        runner, attempt = self.runner, self.attempt
        records = [runner._record(member) for member in attempt.unit.members]
        self.actions = [
            decide(attempt.event, runner._situation(attempt.channel, record, attempt.unit.sends, attempt.outcome))
            for record in records
        ]
        return next((action for action in self.actions if action.step not in ENDING_STEPS), self.actions[0])

    async def step(self, action: Action) -> Ended[list[Unit]] | None:
        later = await _STEPS[action.step](self.runner, self.attempt, action)
        return Ended(later) if later is not None else None

    async def end(self, action: Action) -> list[Unit]:
        continuing = await self.runner._end(self.attempt, self.actions)  # a thread's first part made: the rest follow
        return await self.runner._thread(self.attempt.http, continuing) if continuing is not None else []


_Step = Callable[[Runner, Attempt, Action], Awaitable[list[Unit] | None]]
_STEPS: dict[Step, _Step] = {
    Step.RETRY: Runner._step_retry,
    Step.SEND: Runner._step_send,
    Step.READ: Runner._step_read,
    Step.READ_LATER: Runner._step_read_later,
}
if set(_STEPS) | ENDING_STEPS != set(Step):  # pragma: no cover - a step added to the policy, not here
    raise AssertionError("every policy step must end a unit or go on with it")
