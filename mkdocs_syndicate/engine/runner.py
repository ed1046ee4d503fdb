"""The runner: one lane per channel, all lanes concurrent, the two-phase protocol per pair.

Per pair: [read back if in_flight] → wait for pacing → write in_flight durably → send → act on the
outcome. What to do with an outcome is decided by `policy.decide` alone; this module only carries
it out: write the record, wait, read, send again, or leave the pair in_flight and report it.

A pair that must wait for its settle time before a read can prove it absent goes to the back of
its lane, so the other posts go out meanwhile. A failed ledger write, a lost git race or a bug in
one lane stops the others only between pairs: a request already out is finished and recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import random
import signal
import threading
import traceback
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Channel, Found, Kind, Outcome, Verdict
from mkdocs_syndicate.config.defaults import DEFAULT_MAX_WAIT
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.groupcommit import DirectWriter, GroupCommitter, LedgerWriter
from mkdocs_syndicate.engine.pacing import PacedHttp
from mkdocs_syndicate.engine.plan import PendingPair, Plan
from mkdocs_syndicate.engine.policy import DEFAULT_TRIES, Action, Event, Situation, Step, decide
from mkdocs_syndicate.engine.results import PairResult, Reporter, RunReport
from mkdocs_syndicate.errors import LaneCrashed, StaleLedger, SyndicateError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, Transition
from mkdocs_syndicate.redaction import redact
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.timeutil import Clock, epoch_to_iso, from_iso, to_iso, utcnow

ERROR_LENGTH = 300  # characters of an error kept in the ledger and the report
INTERRUPTED_BEFORE_SENDING = "interrupted before the request was sent (the next run sends it)"


class _Lazy(httpx.AsyncBaseTransport):
    def __init__(self, verify: bool) -> None:
        self.verify = verify
        self._inner: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._inner is None:
            self._inner = httpx.AsyncHTTPTransport(verify=self.verify)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


@contextlib.contextmanager
def _terminated_like_ctrl_c(runner: Runner) -> Iterator[None]:
    """SIGTERM (a container stopped or evicted, a CI system cancelling) stops the run the way
    Ctrl-C does: the run's task is cancelled, lanes record what never left, and the last push
    carries it. Only a shorter window for the next run, never what safety rests on: SIGKILL
    gets no say (reliability.md §4.1). A second SIGTERM terminates at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread (a run inside a test's worker thread)
        return
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    previous = signal.getsignal(signal.SIGTERM)

    def terminate() -> None:
        runner.terminated = True
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, terminate)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows' event loops have none
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _waits_for_push(channel: Channel) -> bool:
    """An at-most-once request leaves only once its in_flight record is durable (pushed, in git)."""
    return channel.settings.at_most_once


class _LaneStopped(Exception):
    """Auth refused or a wait beyond max_wait: the channel takes no more requests this run."""


@dataclass
class _Job:
    pair: PendingPair
    read_first: bool  # an in_flight record: read the remote side before anything else
    not_before: float = 0.0  # a settle wait: the read may not come sooner
    sends: int = 0  # sends of this pair so far in this run (not reset by a settle wait)


@dataclass
class _Attempt:
    """One pair's way through this run: the last event and what came with it."""

    channel: Channel
    http: PacedHttp
    job: _Job
    event: Event = Kind.NOT_SENT
    reason: str = ""
    outcome: Outcome | None = None  # the last send's outcome (its error, for the record)
    found: tuple[str | None, str | None] = (None, None)  # remote id and URL from the last read


class _GoOn(enum.Enum):
    GO_ON = "the pair's next event is ready: decide again"


_GO_ON = _GoOn.GO_ON
_Ending = float | None | _GoOn  # a settle wait's moment, None (finished), or go on


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
        self.tries = tries
        self.rng = rng or random.Random()
        self.verify_only = verify_only  # `mkdocs-syndicate verify`: reads only, never a send
        self.report = RunReport(deferred=[p.key for p in plan.deferred])
        self._stop: BaseException | None = None  # set by the first lane that fails
        self._writer: LedgerWriter = DirectWriter(ledger)
        self.terminated = False  # SIGTERM arrived: the run was cancelled as Ctrl-C cancels it

    async def run(self) -> RunReport:
        with _terminated_like_ctrl_c(self):
            return await self._run()

    async def _run(self) -> RunReport:
        channels = {pair.channel.id: pair.channel for pair in self.plan.pairs}
        # Transports are made on first use: loading the CA bundle costs more CPU than a whole paced
        # run against loopback emulators, and plain http (loopback only) never needs it.
        transport = self.transport or _Lazy(verify=False)
        mounts = None if self.transport else {"https://": _Lazy(verify=True)}
        async with httpx.AsyncClient(
            transport=transport, mounts=mounts, follow_redirects=False, headers={"User-Agent": "mkdocs-syndicate"}
        ) as client:
            # Lanes that wait for a push start first: their in_flight records are staged (and
            # the push under way) before another lane's first request sets up its connection.
            order = sorted(
                (channel_id for channel_id, pairs in self.plan.lanes.items() if pairs),
                key=lambda channel_id: not _waits_for_push(channels[channel_id]),
            )
            lanes = [
                self._guarded_lane(client, channels[channel_id], self.plan.lanes[channel_id]) for channel_id in order
            ]
            if self.ledger.mirror is not None:
                # Only at-most-once lanes ever wait for a push: a group is complete once they all do.
                waiting_kind = sum(1 for channel_id in order if _waits_for_push(channels[channel_id]))
                self._writer = GroupCommitter(self.ledger, waiting_kind, self._halt)
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
        http.seed(self._last_request_at(channel.id))
        self.reporter.lane_started(channel.id, len(pairs))
        try:
            if channel.batched:
                await self._batched(channel, http, pairs)
                return
            if not self.verify_only:
                pairs = await self._with_service_limits(channel, http, pairs)
            jobs = [_Job(pair, read_first=pair.needs_verify) for pair in pairs]
            while jobs:
                if self._stop is not None:
                    for job in jobs:
                        self._finish(job.pair, "not_attempted", f"the run stopped: {self._stop}")
                    return
                job = self._next(jobs)
                jobs.remove(job)
                wait = job.not_before - self.clock.time()
                if wait > 0:
                    await sleep(
                        wait,
                        "settle: the server may still be working on the last request; "
                        "reading again once it must have finished",
                    )
                try:
                    later = await self._pair(channel, http, job)
                except _LaneStopped as stop:
                    for left in jobs:
                        self._finish(left.pair, "not_attempted", str(stop))
                    return
                except Exception as error:
                    why = f"the run stopped: {self._clean(channel, str(error) or type(error).__name__)}"
                    state = self._state_of(job.pair)
                    self._finish(job.pair, state, why, needs_review=state == "in_flight")
                    for left in jobs:
                        self._finish(left.pair, "not_attempted", why)
                    raise
                if later is not None:
                    jobs.append(_Job(job.pair, read_first=True, not_before=later, sends=job.sends))
        finally:
            self.report.requests += http.requests

    def _next(self, jobs: list[_Job]) -> _Job:
        """The first job that may go now, in plan order; else the one that may go soonest."""
        now = self.clock.time()
        ready = [job for job in jobs if job.not_before <= now]
        return ready[0] if ready else min(jobs, key=lambda job: job.not_before)

    def _last_request_at(self, channel_id: str) -> float | None:
        times = [
            from_iso(entry.channels[channel_id].at).timestamp()
            for entry in self.ledger.posts.values()
            if channel_id in entry.channels and entry.channels[channel_id].state != State.SKIPPED
        ]
        return max(times) if times else None

    def _state_of(self, pair: PendingPair) -> str:
        record = self.ledger.record(pair.post.key, pair.channel.id)
        return record.state if record else "not_attempted"

    # ------------------------------------------------------------------ one pair

    async def _pair(self, channel: Channel, http: PacedHttp, job: _Job) -> float | None:
        """Carry one pair as far as this run may: the policy decides each step from the last
        event, and a handler of `_STEPS` carries it out. Returns a moment to read it again (a
        settle wait), or None when the pair is finished for this run."""
        if not job.read_first and self.verify_only:
            return None
        attempt = _Attempt(channel, http, job)
        if job.read_first:
            record = self.ledger.record(job.pair.post.key, channel.id)
            assert record is not None
            await self._read_into(attempt, record, None)
        else:
            await self._send_into(attempt)
        while True:
            current = self.ledger.record(job.pair.post.key, channel.id)
            action = decide(attempt.event, self._situation(channel, current, job.sends, attempt.outcome))
            if self.verify_only and action.step in (Step.SEND, Step.READ_LATER):
                await self._verify_only_ending(job.pair, current, action, attempt.event)
                return None
            ended = await _STEPS[action.step](self, attempt, current, action)
            if ended is not _GO_ON:
                return ended

    async def _send_into(self, attempt: _Attempt) -> None:
        attempt.outcome = await self._send(attempt.channel, attempt.http, attempt.job.pair)
        attempt.job.sends += 1
        attempt.event, attempt.reason = attempt.outcome.kind, attempt.outcome.error or ""

    async def _read_into(self, attempt: _Attempt, record: Record, after: Outcome | None) -> None:
        verdict = await self._read(attempt.channel, attempt.http, attempt.job.pair, record, after)
        attempt.event, attempt.reason = verdict.found, verdict.reason
        attempt.found = (verdict.remote_id, verdict.remote_url)

    # Each step of the policy table (engine/policy.py), carried out: _GO_ON when the pair's next
    # event is in `attempt`, else what `_pair` returns.

    async def _step_done(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        pair, outcome = attempt.job.pair, attempt.outcome
        if attempt.event is Kind.DONE and outcome is not None:  # the send's answer names it
            remote_id, remote_url = outcome.remote_id, outcome.remote_url
        else:  # a read found it
            remote_id, remote_url = attempt.found
        assert current is not None
        checkpoints.hit("before_done_write")
        await self._write(pair, self._done(current, remote_id, remote_url))
        checkpoints.hit("after_done_write")
        if attempt.event is Kind.DONE:
            how = "sent"
        else:
            how = "found by verify (sent by an earlier run)" if attempt.job.sends == 0 else "sent (confirmed by a read)"
        self._finish(pair, "done", how, remote_url)
        return None

    async def _step_skip(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        assert current is not None
        note = self._clean(attempt.channel, attempt.reason or action.reason)
        await self._write(attempt.job.pair, current.moved(State.SKIPPED, self._now(), note=note))
        self._finish(attempt.job.pair, "skipped", note)
        return None

    async def _step_failed(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        """FAIL, STOP_LANE and RETRY: the record says failed (when a request may have gone out, it
        was in_flight), then the pair ends, the lane stops, or it is sent again after a wait."""
        channel, pair = attempt.channel, attempt.job.pair
        error = self._error_text(channel, attempt.event, attempt.reason, action)
        if action.step is Step.STOP_LANE and action.keep_in_flight:
            self._finish(pair, "in_flight", f"{error}; {action.reason}")
            raise _LaneStopped(f"{channel.id} stopped for this run: {error}")
        assert current is not None
        if current.state == State.IN_FLIGHT:
            failed = self._failed(current, error)
            if attempt.event is Found.CONFLICT:
                # What is at our key is not ours: the next attempt takes a fresh key.
                failed = replace(failed, idempotency_key=None, created_at=None)
            await self._write(pair, failed)
        if action.step is Step.FAIL:
            self._finish(pair, "failed", error)
            return None
        if action.step is Step.STOP_LANE:
            self._finish(pair, "failed", error)
            raise _LaneStopped(f"{channel.id} stopped for this run: {error}")
        if action.at is not None:
            attempt.http.hold_until(action.at, "rate limited (server asked to wait)")
        else:
            await attempt.http.backoff(self._backoff(attempt.job.sends), "retrying (nothing was sent)")
        await self._send_into(attempt)
        return _GO_ON

    async def _step_send(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        await self._send_into(attempt)
        return _GO_ON

    async def _step_read(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        assert current is not None
        if action.at is not None:  # a 429: the read waits as the server asked
            attempt.http.hold_until(action.at, "rate limited (server asked to wait)")
        await self._read_into(attempt, current, attempt.outcome)
        return _GO_ON

    async def _step_read_later(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        assert action.at is not None
        return action.at

    async def _step_await(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        assert current is not None
        note = f"{self._clean(attempt.channel, attempt.reason)}; {action.reason}"
        await self._write(attempt.job.pair, replace(current, error=note))
        self._finish(attempt.job.pair, "waiting", note)
        return None

    async def _step_leave(self, attempt: _Attempt, current: Record | None, action: Action) -> _Ending:
        detail = self._leave_text(attempt.channel, attempt.outcome, attempt.reason, action)
        self._finish(attempt.job.pair, "in_flight", detail, needs_review=action.needs_review)
        return None

    def _situation(self, channel: Channel, current: Record | None, sends: int, outcome: Outcome | None) -> Situation:
        settings = channel.settings
        return Situation(
            at_most_once=settings.at_most_once,
            repeat_safe=channel.repeat_safe,
            # `at` is written to the second, truncated: the attempt may have been up to 1 s later.
            last_attempt=from_iso(current.at).timestamp() + 1.0 if current is not None and current.at else None,
            now=self.clock.time(),
            settle=settings.settle,
            max_wait=0.0 if self.verify_only else self.max_wait,
            sends_left=self.tries - sends,  # verify-only never sends: it stops at the decision
            retry_after=outcome.retry_after if outcome is not None else None,
            attempts=current.attempts if current is not None else 0,
        )

    async def _send(self, channel: Channel, http: PacedHttp, pair: PendingPair) -> Outcome:
        """Phase one (in_flight, durable) and the request itself."""
        await http.wait_turn()
        previous = self.ledger.record(pair.post.key, channel.id)
        checkpoints.hit("before_in_flight_write")
        record = Record(
            State.IN_FLIGHT,
            (previous.attempts if previous else 0) + 1,
            self._now(),
            idempotency_key=pair.prepared.idempotency_key,
            created_at=self._created_at(pair, previous),
            message_sha256=pair.prepared.sha256,
        )
        # What a send needs and changes nothing (a session) is fetched while the record is pushed.
        warming = asyncio.ensure_future(channel.warm_up(http))
        try:
            try:
                await self._write(pair, record, before_request=_waits_for_push(channel))
            except BaseException:
                warming.cancel()  # the record is not durable: no request of this pair leaves
                raise
            finally:
                await asyncio.gather(warming, return_exceptions=True)
        except asyncio.CancelledError:
            # Ctrl-C (or CI cancelling the job) while the record was on its way to the remote:
            # the request never left. Say so, or the pushed in_flight would cost the next run a
            # settle wait and a read before it may send.
            with contextlib.suppress(SyndicateError):  # a failed flush already says why
                await self._write(pair, self._failed(record, INTERRUPTED_BEFORE_SENDING))
            raise
        checkpoints.hit("after_in_flight_write")
        # A key sent before by a request whose outcome is unknown: the service may answer for it.
        replay = (
            previous is not None
            and previous.state == State.IN_FLIGHT
            and previous.idempotency_key is not None
            and previous.idempotency_key == pair.prepared.idempotency_key
        )
        prepared = replace(pair.prepared, replay=True) if replay else pair.prepared
        outcome = await channel.send(http, pair.post, prepared)
        checkpoints.hit("after_response")
        return outcome

    def _created_at(self, pair: PendingPair, previous: Record | None) -> str:
        """The pair's first attempt, kept while the payload is unchanged: windows and scan bounds
        are measured from it. A channel that freezes it into the payload (Bluesky) decides."""
        if pair.prepared.created_at:
            return pair.prepared.created_at
        if previous is not None and previous.created_at and previous.message_sha256 == pair.prepared.sha256:
            return previous.created_at
        return self._now()

    async def _read(
        self, channel: Channel, http: PacedHttp, pair: PendingPair, record: Record, after: Outcome | None
    ) -> Verdict:
        try:
            return await channel.verify(http, pair.post, record, after)
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            # Whatever went wrong, nothing was proved: the pair stays in_flight, never resent blind.
            return Verdict(Found.UNKNOWN, reason=f"the read failed ({type(exc).__name__})")

    async def _verify_only_ending(
        self, pair: PendingPair, current: Record | None, action: Action, event: Event
    ) -> None:
        """`mkdocs-syndicate verify` never sends: a proved absence becomes failed (pending again),
        unless the server may still be at work, which only a later read can tell."""
        assert current is not None
        if action.step is Step.SEND and event is Found.ABSENT:
            error = f"verify found no post on {pair.channel.id} after the settle time; the next run sends it"
            await self._write(pair, self._failed(current, error))
            self._finish(pair, "pending", error)
        elif action.step is Step.SEND:  # repeat-safe or at-least-once: the next run resends anyway
            self._finish(pair, "in_flight", "the next run sends it again (a repeat is harmless here)")
        else:
            assert action.at is not None
            self._finish(
                pair,
                "in_flight",
                f"not found yet, but the last request may still be running; "
                f"verify again after {epoch_to_iso(action.at)} (settle)",
            )
        return None

    def _backoff(self, sends: int) -> float:
        base = 2.0 ** max(1, sends)
        return base + self.rng.uniform(0, base / 2)

    def _error_text(self, channel: Channel, event: Event, reason: str, action: Action) -> str:
        error = self._clean(channel, reason or action.reason)
        if event is Kind.RATE_LIMITED and action.at is not None:
            error = f"{error}; retry after {epoch_to_iso(action.at)}"
        return error

    def _leave_text(self, channel: Channel, outcome: Outcome | None, reason: str, action: Action) -> str:
        cause = self._clean(channel, reason)
        last = self._clean(channel, outcome.error) if outcome is not None and outcome.error else ""
        text = f"{last}; {cause}" if last and last != cause else cause
        text = f"{text}; {action.reason}" if action.reason else text
        if action.at is not None:
            text += f" (after {epoch_to_iso(action.at)})"
        return ("needs review: " if action.needs_review else "") + text

    # ------------------------------------------------------------------ batched (IndexNow)

    async def _batched(self, channel: Channel, http: PacedHttp, pairs: list[PendingPair]) -> None:
        """At-least-once, one request for many posts: every pair of a batch shares its outcome. A
        batch that stops the lane leaves the later batches' pairs reported, not attempted."""
        if self.verify_only:
            return
        by_key = {pair.post.key: pair for pair in pairs}
        batches = channel.batches([pair.post for pair in pairs])
        for index, batch in enumerate(batches):
            stopped = await self._batch(channel, http, [by_key[post.key] for post in batch], batch)
            if stopped is not None:
                for later in batches[index + 1 :]:
                    for post in later:
                        self._finish(by_key[post.key], "not_attempted", stopped)
                return

    async def _batch(
        self, channel: Channel, http: PacedHttp, members: list[PendingPair], batch: list[Post]
    ) -> str | None:
        """Send one batch until the policy says it is finished for this run. Returns why the lane
        stops, or None."""
        sends = 0
        while True:
            await http.wait_turn()
            checkpoints.hit("before_in_flight_write")
            # At-least-once: this in_flight need not be pushed before the ping (a later push carries it).
            await self._write_many(
                [(p, self._next_in_flight(p)) for p in members], before_request=_waits_for_push(channel)
            )
            checkpoints.hit("after_in_flight_write")
            outcome = await channel.send_batch(http, batch)
            sends += 1
            checkpoints.hit("after_response")
            if outcome.kind is Kind.ACCEPTED:
                await self._accepted(channel, members, outcome)
                return None
            current = self.ledger.record(members[0].post.key, channel.id)
            action = decide(outcome.kind, self._situation(channel, current, sends, outcome))
            if action.step is Step.DONE:
                await self._batch_done(members, len(batch))
                return None
            if action.step is Step.SEND:
                await http.backoff(self._backoff(sends), "retrying")
                continue
            if action.step is Step.LEAVE:
                error = self._clean(channel, outcome.error)
                for p in members:
                    self._finish(p, "in_flight", f"no answer after {sends} tries ({error}); the next run resends")
                return None
            error = self._error_text(channel, outcome.kind, outcome.error or "", action)
            await self._write_many([(p, self._failed(self._current(p), error)) for p in members])
            if action.step is not Step.RETRY:
                for p in members:
                    self._finish(p, "failed", error)
                return f"{channel.id} stopped for this run: {error}" if action.step is Step.STOP_LANE else None
            if action.at is not None:
                http.hold_until(action.at, "rate limited (server asked to wait)")
            else:
                await http.backoff(self._backoff(sends), "retrying (nothing was sent)")

    async def _batch_done(self, members: list[PendingPair], size: int) -> None:
        checkpoints.hit("before_done_write")
        await self._write_many([(p, self._done(self._current(p), None, None)) for p in members])
        checkpoints.hit("after_done_write")
        for p in members:
            self._finish(p, "done", f"pinged with {size} URL(s)")

    def _next_in_flight(self, pair: PendingPair) -> Record:
        previous = self.ledger.record(pair.post.key, pair.channel.id)
        return Record(State.IN_FLIGHT, (previous.attempts if previous else 0) + 1, self._now())

    async def _with_service_limits(
        self, channel: Channel, http: PacedHttp, pairs: list[PendingPair]
    ) -> list[PendingPair]:
        """New pairs' messages made again under the service's own limits, when it states other
        ones (Mastodon's /api/v2/instance); a pair with a record keeps the message it was sent with."""
        fresh = [pair for pair in pairs if pair.record is None]
        if not fresh or not await channel.learn_limits(http, [pair.prepared for pair in fresh]):
            return pairs
        return [self._prepared_again(channel, pair) if pair.record is None else pair for pair in pairs]

    @staticmethod
    def _prepared_again(channel: Channel, pair: PendingPair) -> PendingPair:
        try:
            return replace(pair, prepared=channel.prepare(pair.post))
        except SyndicateError:  # it does not fit the service's rule: the first message goes, refused by name
            return pair

    async def _accepted(self, channel: Channel, members: list[PendingPair], outcome: Outcome) -> None:
        """Received, confirmed only later: each pair waits for the next run, or, sent often
        enough already (its own count of attempts), is done with a note."""
        writes: list[tuple[PendingPair, Record]] = []
        said: list[tuple[PendingPair, str, str]] = []
        for pair in members:
            current = self._current(pair)
            action = decide(Kind.ACCEPTED, self._situation(channel, current, 1, outcome))
            if action.step is Step.DONE:
                writes.append((pair, current.moved(State.DONE, self._now(), note=action.reason)))
                said.append((pair, "done", action.reason))
            else:
                note = f"{self._clean(channel, outcome.error)}; {action.reason}"
                writes.append((pair, replace(current, error=note)))
                said.append((pair, "waiting", note))
        if any(state == "done" for _, state, _ in said):
            checkpoints.hit("before_done_write")
        await self._write_many(writes)
        for pair, state, text in said:
            self._finish(pair, state, text)

    def _current(self, pair: PendingPair) -> Record:
        record = self.ledger.record(pair.post.key, pair.channel.id)
        assert record is not None
        return record

    # ------------------------------------------------------------------ helpers

    def _now(self) -> str:
        return to_iso(utcnow(self.clock))

    def _done(self, current: Record, remote_id: str | None, remote_url: str | None) -> Record:
        return current.moved(State.DONE, self._now(), remote_id=remote_id, remote_url=remote_url)

    def _failed(self, current: Record, error: str) -> Record:
        return current.moved(State.FAILED, self._now(), error=error)

    async def _write(self, pair: PendingPair, record: Record, *, before_request: bool = False) -> None:
        await self._write_many([(pair, record)], before_request=before_request)

    async def _write_many(self, items: list[tuple[PendingPair, Record]], *, before_request: bool = False) -> None:
        await self._writer.write([Transition(p.ref, p.channel.id, r) for p, r in items], before_request=before_request)

    def _clean(self, channel: Channel, text: str | None) -> str:
        """Credentials out first, then control characters, then cut: a token cut in half before
        redaction would leave its prefix behind."""
        clean = one_line(redact(text or "unknown error", channel.secrets()))
        return clean if len(clean) <= ERROR_LENGTH else clean[: ERROR_LENGTH - 1] + "…"

    def _finish(
        self, pair: PendingPair, state: str, detail: str, remote_url: str | None = None, needs_review: bool = False
    ) -> None:
        result = PairResult(pair.post.key, pair.channel.id, state, detail, remote_url, needs_review)
        self.report.results.append(result)
        self.reporter.pair_finished(result)


_Step = Callable[[Runner, _Attempt, Record | None, Action], Awaitable[_Ending]]
_STEPS: dict[Step, _Step] = {
    Step.DONE: Runner._step_done,
    Step.SKIP: Runner._step_skip,
    Step.FAIL: Runner._step_failed,
    Step.STOP_LANE: Runner._step_failed,
    Step.RETRY: Runner._step_failed,
    Step.SEND: Runner._step_send,
    Step.READ: Runner._step_read,
    Step.READ_LATER: Runner._step_read_later,
    Step.AWAIT: Runner._step_await,
    Step.LEAVE: Runner._step_leave,
}
