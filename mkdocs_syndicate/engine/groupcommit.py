"""How the runner's lanes write the ledger.

With a local file, every transition is written (and fsynced) where it happens: that costs
milliseconds. With the ledger in git, durable means pushed, and a push costs a round trip to the
remote (0.3–1.5 s from CI to GitHub), so transitions are group-committed: lanes stage them in
memory, and one committer task writes whatever is staged as one commit and one push, in a worker
thread, while the lanes go on with their requests.

Only one kind of write waits for its push: the `in_flight` of an at-most-once request, which may
not leave before a push containing that record succeeded. Everything else (`done`, `failed`, an
at-least-once `in_flight`) is staged and rides along with the next push; the last push of the run
carries what is left. A kill before that push costs the next run a read, never a duplicate: the
pushed record still says in_flight.

When to push: as soon as every lane still running is waiting for the committer (lanes that move
together — the usual case — then share every push), else after a short linger, so that lanes a
few milliseconds apart still share one. A failed push (refused, or lost to another writer) fails
the waiting writes and every later one: the run sends nothing further.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from mkdocs_syndicate.ledger.store import Ledger, Transition

LINGER = 0.05  # seconds a waiting in_flight may wait for other lanes' records to join its push
IDLE_FLUSH = 1.0  # seconds staged records without a waiter wait for a push to ride along with


class LedgerWriter(Protocol):
    async def write(self, transitions: list[Transition], *, before_request: bool) -> None:
        """Record transitions. `before_request`: an at-most-once request follows, which may only
        leave once the record is durable where the next run will look (pushed, in git mode)."""

    def lane_done(self) -> None:
        """A lane finished: the committer stops waiting for it to join a group."""

    async def close(self) -> None:
        """Make everything durable (the run's last push), or raise why not."""


class DirectWriter:
    """A local ledger file: each write is durable when it returns."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def write(self, transitions: list[Transition], *, before_request: bool) -> None:
        self.ledger.apply(transitions)

    def lane_done(self) -> None:
        pass

    async def close(self) -> None:
        pass


class GroupCommitter:
    """Group commit for a ledger kept in git (see the module docstring). `on_failure` hears the
    first failed flush, so the runner stops every lane, not only the ones that were waiting."""

    def __init__(
        self,
        ledger: Ledger,
        lanes: int,
        on_failure: Callable[[BaseException], None],
        *,
        linger: float = LINGER,
        idle_flush: float = IDLE_FLUSH,
    ) -> None:
        self.ledger = ledger
        self.lanes = lanes
        self.on_failure = on_failure
        self.linger, self.idle_flush = linger, idle_flush
        self._waiters: list[asyncio.Future[None]] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._first_wait_at: float | None = None  # loop time the group's first waiter came

    async def write(self, transitions: list[Transition], *, before_request: bool) -> None:
        self.ledger.stage(transitions)  # raises at once after a failed flush: nothing further is sent
        self._start()
        if not before_request:
            self._wake.set()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._wake.set()
        await waiter

    def lane_done(self) -> None:
        self.lanes -= 1
        self._wake.set()

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:  # started by the first write: nothing is staged without it
            await self._task
        if self._failure is not None:
            raise self._failure

    # ------------------------------------------------------------------ the committer

    def _start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._commit_loop())

    async def _commit_loop(self) -> None:
        while self._failure is None:
            if not self.ledger.has_staged:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._gather()
            await self._flush()

    async def _gather(self) -> None:
        """Wait until the group is worth pushing: every running lane waits for it, or the first
        waiter has lingered long enough (records without a waiter linger longer: no one needs
        them before the run's end, and a waiter may come for them to ride with)."""
        loop = asyncio.get_running_loop()
        staged_at = loop.time()
        while not self._closing:
            waiting = len(self._waiters)
            if waiting and waiting >= self.lanes:
                return
            if waiting:
                self._first_wait_at = self._first_wait_at or loop.time()
                left = self._first_wait_at + self.linger - loop.time()
            else:
                left = staged_at + self.idle_flush - loop.time()
            if left <= 0:
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), left)
            except TimeoutError:
                return

    async def _flush(self) -> None:
        waiters, self._waiters = self._waiters, []
        self._first_wait_at = None
        pending = self.ledger.begin_flush()
        if pending is None:
            for waiter in waiters:
                waiter.set_result(None)
            return
        try:
            kept = await asyncio.to_thread(self.ledger.write_flush, pending, True)
        except BaseException as exc:
            self.ledger.fail_flush(exc)
            self._failure = exc
            # Those waiting for the next group too: it will not come.
            waiters, self._waiters = waiters + self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_exception(exc)
            self.on_failure(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self.ledger.end_flush(pending, kept)
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
