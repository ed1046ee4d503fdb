"""Every timestamp the tool writes or shows, in one place (all UTC), and a clock tests can replace."""

from __future__ import annotations

import datetime as dt
import time
from typing import Protocol


def _utc(moment: dt.datetime) -> dt.datetime:
    """A naive time is taken as UTC (the ledger's and the front matter's convention)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def to_iso(moment: dt.datetime) -> str:
    """2026-12-02T07:00:02Z: the ledger's `at` and `created_at` (whole seconds)."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_to_iso(seconds: float) -> str:
    """An epoch time (a clock's reading) in the ledger's format."""
    return to_iso(dt.datetime.fromtimestamp(seconds, dt.UTC))


def to_iso_ms(moment: dt.datetime) -> str:
    """2026-12-02T07:00:02.000Z: milliseconds, as AT Protocol records carry `createdAt`."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def to_display(moment: dt.datetime) -> str:
    """2026-12-02 07:00 UTC: a post's date in messages to people."""
    return _utc(moment).strftime("%Y-%m-%d %H:%M UTC")


def from_iso(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


class Clock(Protocol):
    def time(self) -> float: ...  # wall clock, epoch seconds
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
    return dt.datetime.fromtimestamp(seconds, dt.UTC)
