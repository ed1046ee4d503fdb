"""UTC timestamps in the ledger's format, and a clock that tests can replace."""

from __future__ import annotations

import datetime as dt
import time
from typing import Protocol


def to_iso(moment: dt.datetime) -> str:
    """2026-12-02T07:00:02Z (seconds, UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_iso(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment


class Clock(Protocol):
    def time(self) -> float: ...          # wall clock, epoch seconds
    def monotonic(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


def utcnow(clock: Clock | None = None) -> dt.datetime:
    seconds = clock.time() if clock is not None else time.time()
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
