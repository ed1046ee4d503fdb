"""A channel's pacing is for its writes (DEV asks 75 s between them): the reads that prove a write
— one before an edit or a delete, one after it — wait at most a second, not the write interval;
a wait the server asked for holds reads and writes alike (engine/pacing.py)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from conftest import FakeClock

from mkdocs_syndicate.engine.pacing import READ_INTERVAL, PacedHttp

pytestmark = pytest.mark.unit


def paced(min_interval: float) -> tuple[PacedHttp, FakeClock, list[tuple[float, str]]]:
    clock = FakeClock(1_000.0)
    waits: list[tuple[float, str]] = []

    async def sleep(seconds: float, reason: str) -> None:
        waits.append((seconds, reason))
        clock.now += seconds

    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=httpx.ByteStream(b"{}")))
    )
    return PacedHttp(client, min_interval=min_interval, timeout=5, clock=clock, sleep=sleep), clock, waits


def test_a_read_after_a_write_waits_a_second_and_the_next_write_the_whole_interval():
    http, _clock, waits = paced(75)

    async def edit() -> None:
        await http.request("GET", "http://127.0.0.1/api/articles/1")  # the read before
        await http.request("PUT", "http://127.0.0.1/api/articles/1")  # the edit
        await http.request("GET", "http://127.0.0.1/api/articles/1")  # the read after
        await http.request("PUT", "http://127.0.0.1/api/articles/2")  # the next write

    asyncio.run(edit())
    # The read before goes at once, the edit too (no write before it), the read after a second
    # later, and the next write once 75 s have passed since the edit.
    assert [seconds for seconds, _ in waits] == [READ_INTERVAL, 75 - READ_INTERVAL]


def test_a_wait_the_server_asked_for_holds_reads_too():
    http, clock, waits = paced(0)
    http.hold_until(clock.now + 30, "rate limited (server asked to wait)")
    asyncio.run(http.request("GET", "http://127.0.0.1/api/v1/statuses/1"))
    assert waits == [(30, "rate limited (server asked to wait)")]
