"""The runner: one lane per channel, all lanes concurrent, the two-phase protocol per pair.

Per pair: [verify if in_flight] → wait for pacing → write in_flight durably → send → write done or
failed. Ambiguous outcomes (no answer after sending, 5xx) stay in_flight and go to verify. A 429
is recorded as failed with the time to retry; the lane waits when that is within `max_wait` and
otherwise stops, leaving the rest of its pairs for the next run. A failed ledger write aborts the
whole run before any further remote call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Protocol

import httpx
import tenacity

from . import checkpoints
from .channels.base import Channel, Found, Kind, Outcome, Verdict
from .gitstore import StaleLedger
from .ledger import Ledger, Transition
from .ledger_format import Record
from .pacing import PacedHttp
from .planning import PendingPair, Plan
from .redaction import redact
from .timeutil import Clock, from_iso, to_iso, utcnow

DEFAULT_MAX_WAIT = 900.0   # longest server-requested wait we sit through within one run
DEFAULT_TRIES = 4          # attempts per pair within one run (the first send plus retries)
DEFAULT_429_WAIT = 60.0    # a 429 without any hint


@dataclass
class PairResult:
    post_key: str
    channel: str
    state: str               # done | failed | in_flight | not_attempted | pending (verify only)
    detail: str = ""
    remote_url: str | None = None
    needs_review: bool = False

    @property
    def ok(self) -> bool:
        return self.state == "done"


@dataclass
class RunReport:
    results: list[PairResult] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    requests: int = 0

    @property
    def undone(self) -> list[PairResult]:
        return [r for r in self.results if not r.ok]


class Reporter(Protocol):
    def lane_started(self, channel_id: str, total: int) -> None: ...
    def pair_finished(self, result: PairResult) -> None: ...
    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None: ...


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


class _TryAgain(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.error)
        self.outcome = outcome


class _LaneStopped(Exception):
    """Auth refused or a wait beyond max_wait: the channel takes no more requests this run."""


class Runner:
    def __init__(self, ledger: Ledger, plan: Plan, *, clock: Clock, reporter: Reporter,
                 transport: httpx.AsyncBaseTransport | None = None, max_wait: float = DEFAULT_MAX_WAIT,
                 tries: int = DEFAULT_TRIES, rng: random.Random | None = None,
                 verify_only: bool = False) -> None:
        self.ledger = ledger
        self.plan = plan
        self.clock = clock
        self.reporter = reporter
        self.transport = transport
        self.max_wait = max_wait
        self.tries = tries
        self.rng = rng or random.Random()
        self.verify_only = verify_only   # `mkdocs-syndicate verify`: reads only, never a send
        self.report = RunReport(deferred=[p.key for p in plan.deferred])

    async def run(self) -> RunReport:
        channels = {pair.channel.id: pair.channel for pair in self.plan.pairs}
        # Transports are made on first use: loading the CA bundle costs more CPU than a whole paced
        # run against loopback emulators, and plain http (loopback only) never needs it.
        transport = self.transport or _Lazy(verify=False)
        mounts = None if self.transport else {"https://": _Lazy(verify=True)}
        async with httpx.AsyncClient(transport=transport, mounts=mounts, follow_redirects=False,
                                     headers={"User-Agent": "mkdocs-syndicate"}) as client:
            try:
                async with asyncio.TaskGroup() as group:
                    for channel_id, pairs in self.plan.lanes.items():
                        if pairs:
                            group.create_task(self._lane(client, channels[channel_id], pairs))
            except BaseExceptionGroup as group_error:
                # Surface the first real error (a failed ledger write, a bug) as itself; a lost
                # git race first, since the other lanes' errors follow from it.
                stale = [e for e in group_error.exceptions if isinstance(e, StaleLedger)]
                raise (stale or group_error.exceptions)[0] from None
            finally:
                for channel in channels.values():
                    await channel.close()
        return self.report

    # ------------------------------------------------------------------ lanes

    async def _lane(self, client: httpx.AsyncClient, channel: Channel, pairs: list[PendingPair]) -> None:
        settings = channel.settings

        async def sleep(seconds: float, reason: str) -> None:
            await self.reporter.wait(channel.id, seconds, reason, self.clock)

        http = PacedHttp(client, min_interval=settings.min_interval, timeout=settings.timeout,
                         clock=self.clock, sleep=sleep)
        http.seed(self._last_request_at(channel.id))
        self.reporter.lane_started(channel.id, len(pairs))
        try:
            if channel.batched:
                await self._batched(channel, http, pairs)
            else:
                remaining = list(pairs)
                while remaining:
                    pair = remaining.pop(0)
                    try:
                        await self._pair(channel, http, pair)
                    except _LaneStopped as stop:
                        for left in remaining:
                            self._finish(left, "not_attempted", str(stop))
                        break
        finally:
            self.report.requests += http.requests

    def _last_request_at(self, channel_id: str) -> float | None:
        times = [from_iso(entry.channels[channel_id].at).timestamp()
                 for entry in self.ledger.posts.values()
                 if channel_id in entry.channels and entry.channels[channel_id].state != "skipped"]
        return max(times) if times else None

    # ------------------------------------------------------------------ one pair

    async def _pair(self, channel: Channel, http: PacedHttp, pair: PendingPair) -> None:
        record = pair.record
        if pair.needs_verify:
            assert record is not None
            verdict = await self._verify(channel, http, pair, record, None, read_back=self.verify_only)
            if verdict.found is Found.FOUND:
                self._write(pair, self._done(record, verdict.remote_id, verdict.remote_url))
                self._finish(pair, "done", "found by verify (sent by an earlier run)", verdict.remote_url)
                return
            if verdict.found is Found.UNKNOWN:
                self._finish(pair, "in_flight", f"needs review: {verdict.reason}", needs_review=True)
                return
            if verdict.found is Found.CONFLICT:
                self._conflict(pair, record, verdict)
                return
            if self.verify_only:  # proved absent: pending again, for the next run to send
                error = f"verify found no post on {channel.id}; the next run sends it"
                self._write(pair, self._failed(record, error))
                self._finish(pair, "pending", error)
                return
        if self.verify_only:
            return
        await self._send_with_retries(channel, http, pair, record.attempts if record else 0)

    async def _verify(self, channel: Channel, http: PacedHttp, pair: PendingPair, record: Record,
                      after: Outcome | None, read_back: bool = False) -> Verdict:
        try:
            if read_back:
                return await channel.read_back(http, pair.post, record)
            return await channel.verify(http, pair.post, record, after)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            return Verdict(Found.UNKNOWN, reason=f"verify failed ({type(exc).__name__})")

    async def _send_with_retries(self, channel: Channel, http: PacedHttp, pair: PendingPair,
                                 attempts: int) -> None:
        state = {"attempts": attempts}
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.tries),
            retry=tenacity.retry_if_exception_type(_TryAgain),
            wait=self._backoff,
            sleep=lambda seconds: http.backoff(seconds, "retrying") if seconds else asyncio.sleep(0),
            reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    await self._attempt(channel, http, pair, state)
        except _TryAgain as last:
            outcome = last.outcome
            if outcome.kind is Kind.AMBIGUOUS:
                self._finish(pair, "in_flight", f"needs review: {self._clean(channel, outcome.error)}",
                             needs_review=channel.settings.delivery == "at_most_once")
            else:
                self._finish(pair, "failed", self._clean(channel, outcome.error))

    def _backoff(self, retry_state: tenacity.RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, _TryAgain) and error.outcome.kind is Kind.RATE_LIMITED:
            return 0.0  # the paced client already holds until the server's reset time
        base = 2.0 ** retry_state.attempt_number
        return base + self.rng.uniform(0, base / 2)

    async def _attempt(self, channel: Channel, http: PacedHttp, pair: PendingPair, state: dict) -> None:
        await http.wait_turn()
        state["attempts"] += 1
        previous = self.ledger.record(pair.post.key, channel.id)
        checkpoints.hit("before_in_flight_write")
        self._write(pair, Record("in_flight", state["attempts"], self._now(),
                                 idempotency_key=pair.prepared.idempotency_key,
                                 created_at=pair.prepared.created_at or (previous.created_at if previous else None),
                                 message_sha256=pair.prepared.sha256))
        checkpoints.hit("after_in_flight_write")
        outcome = await channel.send(http, pair.post, pair.prepared)
        checkpoints.hit("after_response")
        await self._settle(channel, http, pair, outcome)

    async def _settle(self, channel: Channel, http: PacedHttp, pair: PendingPair, outcome: Outcome) -> None:
        current = self.ledger.record(pair.post.key, channel.id)
        assert current is not None
        if outcome.kind is Kind.DONE:
            checkpoints.hit("before_done_write")
            self._write(pair, self._done(current, outcome.remote_id, outcome.remote_url))
            checkpoints.hit("after_done_write")
            self._finish(pair, "done", "sent", outcome.remote_url)
            return
        if outcome.kind is Kind.AMBIGUOUS:
            if channel.settings.delivery == "at_most_once":
                verdict = await self._verify(channel, http, pair, current, outcome)
                if verdict.found is Found.FOUND:
                    self._write(pair, self._done(current, verdict.remote_id, verdict.remote_url))
                    self._finish(pair, "done", "sent (confirmed by verify)", verdict.remote_url)
                    return
                if verdict.found is Found.CONFLICT:
                    self._conflict(pair, current, verdict)
                    return
                if verdict.found is Found.UNKNOWN:
                    self._finish(pair, "in_flight", f"needs review: {self._clean(channel, outcome.error)}; "
                                 f"{verdict.reason}", needs_review=True)
                    return
            raise _TryAgain(outcome)
        error = self._clean(channel, outcome.error)
        if outcome.kind is Kind.RATE_LIMITED:
            delay = outcome.retry_after if outcome.retry_after is not None else DEFAULT_429_WAIT
            retry_at = self.clock.time() + delay
            error = f"{error}; retry after {to_iso(dt.datetime.fromtimestamp(retry_at, dt.timezone.utc))}"
        self._write(pair, self._failed(current, error))
        if outcome.kind is Kind.AUTH:
            self._finish(pair, "failed", error)
            raise _LaneStopped(f"{channel.id} refused the credentials ({error})")
        if outcome.kind is Kind.RATE_LIMITED:
            if delay > self.max_wait:
                self._finish(pair, "failed", error)
                raise _LaneStopped(f"{channel.id} is rate limited for {delay:.0f} s, "
                                   f"beyond max_wait {self.max_wait:.0f} s")
            http.hold_until(retry_at, "rate limited (server asked to wait)")
            raise _TryAgain(Outcome(Kind.RATE_LIMITED, error=error))
        if outcome.kind is Kind.NOT_SENT:
            raise _TryAgain(Outcome(Kind.NOT_SENT, error=error))
        self._finish(pair, "failed", error)  # REFUSED: a definite no; retrying would be refused again

    # ------------------------------------------------------------------ batched (IndexNow)

    async def _batched(self, channel: Channel, http: PacedHttp, pairs: list[PendingPair]) -> None:
        by_key = {pair.post.key: pair for pair in pairs}
        for batch in channel.batches([pair.post for pair in pairs]):
            members = [by_key[post.key] for post in batch]
            attempts = {p.post.key: (p.record.attempts if p.record else 0) for p in members}
            outcome: Outcome | None = None
            for attempt in range(1, self.tries + 1):
                await http.wait_turn()
                for key in attempts:
                    attempts[key] += 1
                checkpoints.hit("before_in_flight_write")
                # At-least-once: this in_flight need not be pushed before the ping (a later push carries it).
                self._write_many([(p, Record("in_flight", attempts[p.post.key], self._now())) for p in members],
                                 push=channel.settings.delivery == "at_most_once")
                checkpoints.hit("after_in_flight_write")
                outcome = await channel.send_batch(http, batch)
                checkpoints.hit("after_response")
                if outcome.kind is Kind.DONE:
                    checkpoints.hit("before_done_write")
                    self._write_many([(p, Record("done", attempts[p.post.key], self._now())) for p in members])
                    checkpoints.hit("after_done_write")
                    for p in members:
                        self._finish(p, "done", f"pinged with {len(batch)} URL(s)")
                    break
                error = self._clean(channel, outcome.error)
                if outcome.kind is Kind.AMBIGUOUS:
                    # At-least-once: resending is harmless; the records stay in_flight meanwhile.
                    if attempt < self.tries:
                        await http.backoff(2.0 ** attempt, "retrying")
                        continue
                    for p in members:
                        self._finish(p, "in_flight", f"no answer after {attempt} tries ({error}); "
                                     "the next run resends")
                    break
                delay = outcome.retry_after if outcome.retry_after is not None else DEFAULT_429_WAIT
                if outcome.kind is Kind.RATE_LIMITED:
                    error += f"; retry after {to_iso(dt.datetime.fromtimestamp(self.clock.time() + delay, dt.timezone.utc))}"
                self._write_many([(p, Record("failed", attempts[p.post.key], self._now(), error=error))
                                  for p in members])
                retry = ((outcome.kind is Kind.RATE_LIMITED and delay <= self.max_wait)
                         or outcome.kind is Kind.NOT_SENT) and attempt < self.tries
                if not retry:
                    for p in members:
                        self._finish(p, "failed", error)
                    break
                if outcome.kind is Kind.RATE_LIMITED:
                    http.hold_until(self.clock.time() + delay, "rate limited (server asked to wait)")
                else:
                    await http.backoff(2.0 ** attempt, "retrying")

    # ------------------------------------------------------------------ helpers

    def _conflict(self, pair: PendingPair, current: Record, verdict: Verdict) -> None:
        error = self._clean(pair.channel, verdict.reason)
        self._write(pair, self._failed(current, error))
        self._finish(pair, "failed", error)

    def _now(self) -> str:
        return to_iso(utcnow(self.clock))

    def _done(self, current: Record, remote_id: str | None, remote_url: str | None) -> Record:
        return Record("done", current.attempts, self._now(), remote_id=remote_id, remote_url=remote_url,
                      idempotency_key=current.idempotency_key, created_at=current.created_at,
                      message_sha256=current.message_sha256)

    def _failed(self, current: Record, error: str) -> Record:
        """Failed, keeping what a resend must reuse (the idempotency key, the frozen payload time)."""
        return Record("failed", current.attempts, self._now(), error=error,
                      idempotency_key=current.idempotency_key, created_at=current.created_at,
                      message_sha256=current.message_sha256)

    def _write(self, pair: PendingPair, record: Record) -> None:
        self.ledger.apply([Transition(pair.ref, pair.channel.id, record)])

    def _write_many(self, items: list[tuple[PendingPair, Record]], push: bool = True) -> None:
        self.ledger.apply([Transition(p.ref, p.channel.id, r) for p, r in items], push=push)

    def _clean(self, channel: Channel, text: str | None) -> str:
        return redact(text or "unknown error", channel.secrets())

    def _finish(self, pair: PendingPair, state: str, detail: str, remote_url: str | None = None,
                needs_review: bool = False) -> None:
        result = PairResult(pair.post.key, pair.channel.id, state, detail, remote_url, needs_review)
        self.report.results.append(result)
        self.reporter.pair_finished(result)
