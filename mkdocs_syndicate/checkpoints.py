"""Test-only crash points at every durability boundary (off unless the environment asks).

SYNDICATE_CHECKPOINT_LOG=path   append "<n>\t<name>" for every checkpoint hit (to count them)
SYNDICATE_CRASH_AT=N            SIGKILL this process at the N-th checkpoint hit
SYNDICATE_CRASH_AT=name:K       SIGKILL at the K-th hit of the named checkpoint
SYNDICATE_CRASH_HOW=raise       raise InjectedCrash there instead (an unexpected error mid-run)

The kill is a real SIGKILL: no finally blocks, no atexit, exactly like a CI timeout.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

# Every checkpoint the code declares; tests fail if one is never reached.
DECLARED = (
    "before_in_flight_write",
    "ledger.tmp_written",
    "ledger.tmp_fsynced",
    "ledger.replaced",
    "after_in_flight_write",
    # "after the request is sent" has no client-side hook (httpx reports nothing between the last
    # byte out and the response); the emulators' kill_before/kill_after faults cover that window.
    "after_response",
    "before_done_write",
    "after_done_write",
    # A thread's later parts (engine/threads.py), each with its own two phases: the part's
    # in_flight write, its request, and the write that records it under `parts:`.
    "before_part_in_flight_write",
    "after_part_in_flight_write",
    "after_part_response",
    "before_part_write",
    "after_part_write",
    # A post's image (engine/uploads.py), after the pair's in_flight write and before its status:
    # the upload's request, and the write that records its id under `media:`.
    "before_upload",
    "after_upload",
    "before_media_write",
    "after_media_write",
)
# With the ledger in git, ledger/gitmirror.py also hits "git.committed" and "git.pushed" around
# each group's push (tests/test_git.py kills there); a run without git never reaches them.


class InjectedCrash(RuntimeError):
    """A test asked for an unexpected error at this checkpoint."""


class _Settings:
    def __init__(self, log_path: str | None = None, crash_spec: str | None = None, crash_how: str = "kill") -> None:
        self.log_path, self.crash_spec, self.crash_how = log_path, crash_spec, crash_how
        self.counter: Iterator[int] = itertools.count(1)  # checkpoints hit so far
        self.per_name: dict[str, int] = {}


_now = _Settings()


def configure_from_environment() -> None:
    """Read the variables above and start counting from zero. Done at import; a test child forked
    from a process that imported everything already (tests/forkserver.py) calls it again."""
    global _now  # noqa: PLW0603 - one swap of the whole settings object
    _now = _Settings(
        os.environ.get("SYNDICATE_CHECKPOINT_LOG") or None,
        os.environ.get("SYNDICATE_CRASH_AT") or None,
        os.environ.get("SYNDICATE_CRASH_HOW", "kill"),
    )


configure_from_environment()


def enabled() -> bool:
    return _now.log_path is not None or _now.crash_spec is not None


def hit(name: str) -> None:
    """Record a checkpoint; kill the process if this is the one the test asked for."""
    if not enabled():
        return
    count = next(_now.counter)
    _now.per_name[name] = _now.per_name.get(name, 0) + 1
    if _now.log_path is not None:
        with open(_now.log_path, "a", encoding="utf-8") as log:
            log.write(f"{count}\t{name}\n")
            log.flush()
            os.fsync(log.fileno())
    if _now.crash_spec is not None and _should_crash(_now.crash_spec, name, count):
        if _now.crash_how == "raise":
            raise InjectedCrash(f"injected crash at checkpoint {count} ({name})")
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def note(text: str) -> None:
    """A line in the checkpoint log that is not a crash point (what a write recorded), so a test
    can tell where a kill landed: `-\tnote\t<text>`."""
    if _now.log_path is None:
        return
    with open(_now.log_path, "a", encoding="utf-8") as log:
        log.write(f"-\tnote\t{text}\n")
        log.flush()


def _should_crash(spec: str, name: str, count: int) -> bool:
    if ":" in spec:
        wanted, _, nth = spec.rpartition(":")
        return wanted == name and _now.per_name[name] == int(nth)
    return count == int(spec)
