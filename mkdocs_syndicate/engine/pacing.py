"""The per-channel HTTP client: every request of a channel (sends and verify reads alike) waits for
the channel's pacing, and the lane is sequential, so at most one request is ever in flight per
channel. Waiting goes through the reporter so long waits show a countdown and the reason. Every
request is bounded in total time (`timeout`) and in response size (see bounded.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mkdocs_syndicate.ledger.schema import Posts, State
from mkdocs_syndicate.net.bounded import bounded_request
from mkdocs_syndicate.timeutil import Clock, from_iso

Sleeper = Callable[[float, str], Awaitable[None]]


class PacedHttp:
    def __init__(
        self, client: httpx.AsyncClient, *, min_interval: float, timeout: float, clock: Clock, sleep: Sleeper
    ) -> None:
        self._client = client
        self._min_interval = min_interval
        self._timeout = timeout
        self.clock = clock
        self._sleep = sleep
        self._next_at = 0.0  # epoch seconds before which no request may start
        self._next_reason = "pacing"
        self.requests = 0

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
        """The server asked us to wait (429 with Retry-After / X-RateLimit-Reset)."""
        self._hold(moment, reason)

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
        await self.wait_turn()
        started = self.clock.time()
        self._next_at, self._next_reason = started + self._min_interval, "pacing"
        self.requests += 1
        kwargs.setdefault("timeout", self._timeout)
        return await bounded_request(self._client, method, url, total=self._timeout, **kwargs)
