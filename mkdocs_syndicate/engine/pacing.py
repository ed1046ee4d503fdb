"""The per-channel HTTP client: every request of a channel waits for the channel's pacing, and the
lane is sequential, so at most one request is ever in flight per channel. A write (any method but
GET and HEAD) waits `min_interval` after the last write — the pacing a service asks for its
writes (DEV's 75 s) — and a read at most `READ_INTERVAL` after the last request, so that the reads
that prove a write (one before an edit or a delete, one after it) do not triple its time; a wait
the server asked for (429) holds both. Waiting goes through the reporter so long waits show a
countdown and the reason. Every request is bounded in total time (`timeout`) and in response size
(see bounded.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mkdocs_syndicate.ledger.schema import Posts, State
from mkdocs_syndicate.net.bounded import bounded_request
from mkdocs_syndicate.net.ratehints import server_delay
from mkdocs_syndicate.timeutil import Clock, from_iso

Sleeper = Callable[[float, str], Awaitable[None]]
READ_INTERVAL = 1.0  # seconds between a channel's reads at most: a read is no write the service paces
_READS = ("GET", "HEAD")


class PacedHttp:
    def __init__(
        self, client: httpx.AsyncClient, *, min_interval: float, timeout: float, clock: Clock, sleep: Sleeper
    ) -> None:
        self._client = client
        self._min_interval = min_interval
        self._timeout = timeout
        self.clock = clock
        self._sleep = sleep
        self._next_at = 0.0  # epoch seconds before which no write may start
        self._next_reason = "pacing"
        self._read_at = 0.0  # ... before which no read may start
        self._held_at = 0.0  # ... before which nothing may start: the server asked (429)
        self.requests = 0
        self.refused_until: float | None = None  # the last 429's "not before" (its headers'), if any

    def now(self) -> float:
        return self.clock.time()

    def seed(self, posts: Posts, channel_id: str) -> None:
        """Carry pacing across runs: the ledger says when this channel last saw a request."""
        times = [
            from_iso(entry.channels[channel_id].at).timestamp()
            for entry in posts.values()
            if channel_id in entry.channels and entry.channels[channel_id].state != State.SKIPPED
        ]
        if times and self._min_interval:
            self._hold(max(times) + self._min_interval, "pacing (since the last run's request)")

    def hold_until(self, moment: float, reason: str) -> None:
        """The server asked us to wait (429 with Retry-After / X-RateLimit-Reset): reads too."""
        self._hold(moment, reason)
        self._held_at = max(self._held_at, moment)

    def _hold(self, moment: float, reason: str) -> None:
        if moment > self._next_at:
            self._next_at, self._next_reason = moment, reason

    def wait_needed(self) -> float:
        return max(0.0, self._next_at - self.clock.time())

    async def wait_turn(self) -> None:
        delay = self.wait_needed()
        if delay > 0:
            await self._sleep(delay, self._next_reason)

    async def backoff(self, seconds: float, reason: str) -> None:
        await self._sleep(seconds, reason)

    def unpaced(self) -> PacedHttp:
        """The same client with no pacing: for the one read of a credential check after a refused
        request (the pacing is there for the service's write limits, not for a read)."""
        return PacedHttp(self._client, min_interval=0.0, timeout=self._timeout, clock=self.clock, sleep=self._sleep)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        reading = method.upper() in _READS
        if reading:
            delay = max(self._read_at, self._held_at) - self.clock.time()
            if delay > 0:
                await self._sleep(delay, self._next_reason if self._held_at > self._read_at else "pacing (reads)")
        else:
            await self.wait_turn()
        started = self.clock.time()
        self._read_at = started + min(READ_INTERVAL, self._min_interval)
        if not reading:
            self._next_at, self._next_reason = started + self._min_interval, "pacing"
        self.requests += 1
        kwargs.setdefault("timeout", self._timeout)
        answer = await bounded_request(self._client, method, url, total=self._timeout, **kwargs)
        if answer.status_code == 429:  # for the lane's budgets (engine/budgets.py): until when
            now = self.clock.time()
            hint = server_delay(answer.headers, now)
            self.refused_until = now + hint if hint is not None else None
        return answer
