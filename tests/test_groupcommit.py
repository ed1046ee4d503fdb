"""The group committer without git: when it flushes, who waits for what, and what a failed flush
does to the writers waiting for it and after it (engine/groupcommit.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mkdocs_syndicate.engine.groupcommit import GroupCommitter
from mkdocs_syndicate.errors import LedgerWriteError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

pytestmark = pytest.mark.unit


def in_flight(n: int, channel: str = "masto") -> Transition:
    return Transition(
        PostRef(f"blog/p{n}/", f"https://example.com/blog/p{n}/", f"P{n}"),
        channel,
        Record(State.IN_FLIGHT, 1, "2026-12-03T00:00:00Z"),
    )


class CountingLedger(Ledger):
    """A real ledger file whose flushes are counted (and can be made slow or failing)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.flushed: list[list[str]] = []
        self.delay = 0.0
        self.fail_at: int | None = None
        # A flush in progress, told and held by events (not by sleeps a busy machine outlasts).
        self.in_flush = threading.Event()
        self.gate: threading.Event | None = None  # when given, each flush waits for it

    def write_flush(self, pending, push):
        self.in_flush.set()
        if self.gate is not None:
            assert self.gate.wait(30), "the test never let the flush end"
        time.sleep(self.delay)
        self.flushed.append([f"{t.post.key}|{t.channel}" for t in pending.transitions])
        if self.fail_at == len(self.flushed):
            raise LedgerWriteError(str(self.path), "git push failed: protected branch")
        return super().write_flush(pending, push)


def fail_on(error: BaseException) -> None:
    """A committer's failure fails the test, saying what it was."""
    pytest.fail(f"the committer failed: {error!r}")


@pytest.fixture
def ledger(tmp_path):
    import filelock

    lock = filelock.FileLock(str(tmp_path / "lock"))
    lock.acquire()
    book = CountingLedger(tmp_path / "ledger.yml", {}, lock)
    yield book
    lock.release()


def test_lanes_that_wait_together_share_one_flush(ledger):
    async def main():
        committer = GroupCommitter(ledger, lanes=3, on_failure=fail_on, linger=5.0)
        started = time.monotonic()
        await asyncio.gather(*(committer.write([in_flight(n)], before_request=True) for n in range(3)))
        waited = time.monotonic() - started
        for _ in range(3):
            committer.lane_done()
        await committer.close()
        return waited

    waited = asyncio.run(main())
    assert ledger.flushed == [["blog/p0/|masto", "blog/p1/|masto", "blog/p2/|masto"]]
    assert waited < 1.0  # every lane was waiting: no linger
    assert Ledger.read(ledger.path).record("blog/p2/", "masto").state == "in_flight"


def test_a_waiting_lane_does_not_wait_for_a_busy_one_beyond_the_linger(ledger):
    async def main():
        committer = GroupCommitter(ledger, lanes=2, on_failure=fail_on, linger=0.05)
        started = time.monotonic()
        await committer.write([in_flight(1)], before_request=True)  # the other lane never writes
        waited = time.monotonic() - started
        committer.lane_done()
        committer.lane_done()
        await committer.close()
        return waited

    waited = asyncio.run(main())
    assert 0.04 <= waited < 1.0 and ledger.flushed == [["blog/p1/|masto"]]


def test_records_that_need_no_wait_ride_along_with_the_next_flush(ledger):
    async def main():
        committer = GroupCommitter(ledger, lanes=2, on_failure=fail_on, linger=0.05, idle_flush=5.0)
        await committer.write([in_flight(1, "ping")], before_request=False)  # returns at once
        assert ledger.flushed == [] and ledger.record("blog/p1/", "ping").state == "in_flight"
        await committer.write([in_flight(2)], before_request=True)
        committer.lane_done()
        committer.lane_done()
        await committer.write([in_flight(3, "ping")], before_request=False)
        await committer.close()  # the run's last flush carries what is left

    asyncio.run(main())
    assert ledger.flushed == [["blog/p1/|ping", "blog/p2/|masto"], ["blog/p3/|ping"]]
    assert Ledger.read(ledger.path).record("blog/p3/", "ping").state == "in_flight"


async def during_the_first_flush(ledger, first_write, then):
    """Start `first_write`, wait until its flush is in its worker thread, start `then` (which stages
    its records before it first waits), and only then let the first flush end."""
    ledger.gate = threading.Event()
    first = asyncio.ensure_future(first_write)
    assert await asyncio.to_thread(ledger.in_flush.wait, 30), "the first flush never started"
    second = asyncio.ensure_future(then)
    await asyncio.sleep(0)  # `then` has staged its records and waits
    ledger.gate.set()
    return first, second


def test_writes_made_during_a_flush_go_in_the_next_one(ledger):
    async def main():
        committer = GroupCommitter(ledger, lanes=2, on_failure=fail_on, linger=0.0)
        first, second = await during_the_first_flush(
            ledger,
            committer.write([in_flight(1)], before_request=True),
            committer.write([in_flight(2)], before_request=True),
        )
        await second
        assert first.done()
        committer.lane_done()
        committer.lane_done()
        await committer.close()

    asyncio.run(main())
    assert ledger.flushed == [["blog/p1/|masto"], ["blog/p2/|masto"]]


def test_a_failed_flush_fails_its_waiters_the_next_groups_and_every_later_write(ledger):
    """Regression: a lane waiting for the group after a failed one waited forever."""
    ledger.fail_at = 1
    heard: list[BaseException] = []

    async def main():
        committer = GroupCommitter(ledger, lanes=2, on_failure=heard.append, linger=0.0)
        first, second = await during_the_first_flush(
            ledger,
            committer.write([in_flight(1)], before_request=True),
            committer.write([in_flight(2)], before_request=True),
        )
        results = await asyncio.wait_for(asyncio.gather(first, second, return_exceptions=True), 5)
        with pytest.raises(LedgerWriteError):
            await committer.write([in_flight(3)], before_request=False)
        with pytest.raises(LedgerWriteError):
            await committer.close()
        return results

    results = asyncio.run(main())
    assert all(isinstance(r, LedgerWriteError) for r in results), results
    assert len(heard) == 1 and ledger.flushed == [["blog/p1/|masto"]]
    assert ledger.record("blog/p1/", "masto") is None  # the last durable state: nothing
    assert not ledger.path.exists()


def test_the_flush_runs_outside_the_event_loop(ledger):
    """Other lanes go on with their requests while a push takes its round trip."""
    ledger.delay = 0.3
    threads: list[str] = []
    original = ledger.write_flush

    def recording(pending, push):
        threads.append(threading.current_thread().name)
        return original(pending, push)

    ledger.write_flush = recording

    async def main():
        committer = GroupCommitter(ledger, lanes=2, on_failure=fail_on, linger=0.0)
        ticks = 0

        async def other_lane():
            nonlocal ticks
            for _ in range(10):
                await asyncio.sleep(0.01)
                ticks += 1

        await asyncio.gather(committer.write([in_flight(1)], before_request=True), other_lane())
        committer.lane_done()
        committer.lane_done()
        await committer.close()
        return ticks

    assert asyncio.run(main()) == 10
    assert threads and threads[0] != threading.main_thread().name


def test_the_linger_runs_from_the_first_waiter_not_from_an_earlier_record(ledger):
    """Regression: a ping's done record staged first started the linger clock, so lanes answering
    a few milliseconds after the first waiter missed its push (10 pushes for 5 posts, not 6)."""

    async def main():
        committer = GroupCommitter(ledger, lanes=3, on_failure=fail_on, linger=0.2, idle_flush=5.0)
        await committer.write([in_flight(1, "ping")], before_request=False)
        await asyncio.sleep(0.15)
        first = asyncio.ensure_future(committer.write([in_flight(2)], before_request=True))
        await asyncio.sleep(0.1)  # 0.25 s after the ping's record, 0.1 s after the first waiter
        second = asyncio.ensure_future(committer.write([in_flight(3)], before_request=True))
        await asyncio.gather(first, second)
        for _ in range(3):
            committer.lane_done()
        await committer.close()

    asyncio.run(main())
    assert ledger.flushed == [["blog/p1/|ping", "blog/p2/|masto", "blog/p3/|masto"]]
