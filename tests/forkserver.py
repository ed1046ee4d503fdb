"""Crash-test children without the interpreter's start-up: a fork server that has imported the
engine, the channels and httpx once forks each child (multiprocessing's "forkserver" context).

A child is still a separate process running `syndication.send` from the start, killed with a
real SIGKILL: only the 0.3–0.4 s of imports before its first line of work is shared. Its
environment is set before the run starts (the checkpoints module reads it again), its output
goes to files the harness reads like a pipe, and `ForkedChild` answers like `subprocess.Popen`
(pid, poll, wait, send_signal, communicate, returncode: -9 when killed)."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mkdocs_syndicate.registry import TYPES

# The child's own module (the engine, the ledger, git, httpx), every channel client and what they
# import on first use: the HTTP stack under httpx (imported by its first request), the ledger's
# lock, the message templates' sandbox, the thread cutter and Pillow's image plugins (an upload).
# Each was imported anew in every child: about 0.06 s of CPU a child, in nearly a thousand
# children a run (listed by comparing sys.modules before and after a child's run).
PRELOAD = [
    "crash_child",
    *sorted({kind.client.partition(":")[0] for kind in TYPES.values()}),
    "jinja2",
    "jinja2.meta",
    "jinja2.sandbox",
    "regex",
    "anyio._backends._asyncio",
    "httpcore",
    "h11",
    "certifi",
    "filelock",
    "mkdocs_syndicate.content.threads",
    "PIL.BmpImagePlugin",
    "PIL.GifImagePlugin",
    "PIL.JpegImagePlugin",
    "PIL.PpmImagePlugin",
]
_context_lock = threading.Lock()
_context: multiprocessing.context.ForkServerContext | None = None
# multiprocessing is not thread-safe here: Process.start() polls every earlier child, and a poll
# *reads* the exit code the fork server sent; two threads polling one child race for those bytes
# and the loser records 255 (EOF). Every call that may poll goes through this lock; waiting is a
# select on the child's sentinel, outside it.
_poll_lock = threading.Lock()


def _fork_context() -> multiprocessing.context.ForkServerContext:
    global _context  # noqa: PLW0603 - one fork server per test process
    with _context_lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            _context = context
        return _context


def _child(spec: str, env: dict[str, str], out: str, err: str) -> None:
    """In the forked child: the environment a fresh process would have had, output to files."""
    os.environ.clear()
    os.environ.update(env)
    for path, fd in ((out, 1), (err, 2)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
    from crash_child import main

    from mkdocs_syndicate import checkpoints

    checkpoints.configure_from_environment()
    code = main(spec)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # like a process that ends: no multiprocessing clean-up in between


class ForkedChild:
    """The part of subprocess.Popen the crash harness uses."""

    def __init__(self, spec: Path, env: dict[str, str]) -> None:
        self._folder = tempfile.mkdtemp(prefix="child-", dir=spec.parent)
        self._out, self._err = os.path.join(self._folder, "out"), os.path.join(self._folder, "err")
        self._process = _fork_context().Process(
            target=_child, args=(str(spec), env, self._out, self._err), daemon=False
        )
        with _poll_lock:
            self._process.start()
        self.pid = self._process.pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with _poll_lock:
                if not self._process.is_alive():
                    self._process.join()
                    self.returncode = self._process.exitcode
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        multiprocessing.connection.wait([self._process.sentinel], timeout)
        if self.poll() is None:
            raise subprocess.TimeoutExpired("crash_child", timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        # The child belongs to the fork server, which reaps it: it may end between poll and kill.
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        deadline = None if timeout is None else time.monotonic() + timeout
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return (
            Path(self._out).read_text(encoding="utf-8", errors="replace"),
            Path(self._err).read_text(encoding="utf-8", errors="replace"),
        )
