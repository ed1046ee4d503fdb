"""SIGTERM (a container stopped or evicted, a CI system cancelling) stops a run the way Ctrl-C
does: the run's task is cancelled, lanes record what never left, and the last push carries it.
Only a shorter window for the next run, never what safety rests on: SIGKILL gets no say
(docs/design/protocol.md, "Stopping"). A second SIGTERM terminates at once."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def cancelled_by_sigterm(on_terminate: Callable[[], None]) -> Iterator[None]:
    """Inside: a SIGTERM calls `on_terminate` and cancels the current task."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread (a run inside a test's worker thread)
        return
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    previous = signal.getsignal(signal.SIGTERM)

    def terminate() -> None:
        on_terminate()
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
