"""Test-only crash points at every durability boundary (off unless the environment asks).

SYNDICATE_CHECKPOINT_LOG=path   append "<n>\t<name>" for every checkpoint hit (to count them)
SYNDICATE_CRASH_AT=N            SIGKILL this process at the N-th checkpoint hit
SYNDICATE_CRASH_AT=name:K       SIGKILL at the K-th hit of the named checkpoint
SYNDICATE_CRASH_HOW=raise       raise InjectedCrash there instead (an unexpected error mid-run)

The kill is a real SIGKILL: no finally blocks, no atexit, exactly like a CI timeout.
"""

from __future__ import annotations

import os
import signal

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
)

_log_path = os.environ.get("SYNDICATE_CHECKPOINT_LOG") or None
_crash_spec = os.environ.get("SYNDICATE_CRASH_AT") or None
_crash_how = os.environ.get("SYNDICATE_CRASH_HOW", "kill")


class InjectedCrash(RuntimeError):
    """A test asked for an unexpected error at this checkpoint."""
_count = 0
_per_name: dict[str, int] = {}


def enabled() -> bool:
    return _log_path is not None or _crash_spec is not None


def hit(name: str) -> None:
    """Record a checkpoint; kill the process if this is the one the test asked for."""
    if _log_path is None and _crash_spec is None:
        return
    global _count
    _count += 1
    _per_name[name] = _per_name.get(name, 0) + 1
    if _log_path is not None:
        with open(_log_path, "a", encoding="utf-8") as log:
            log.write(f"{_count}\t{name}\n")
            log.flush()
            os.fsync(log.fileno())
    if _crash_spec is not None and _should_crash(name):
        if _crash_how == "raise":
            raise InjectedCrash(f"injected crash at checkpoint {_count} ({name})")
        os.kill(os.getpid(), signal.SIGKILL)


def note(text: str) -> None:
    """A line in the checkpoint log that is not a crash point (what a write recorded), so a test
    can tell where a kill landed: `-\tnote\t<text>`."""
    if _log_path is None:
        return
    with open(_log_path, "a", encoding="utf-8") as log:
        log.write(f"-\tnote\t{text}\n")
        log.flush()


def _should_crash(name: str) -> bool:
    assert _crash_spec is not None
    if ":" in _crash_spec:
        wanted, _, nth = _crash_spec.rpartition(":")
        return wanted == name and _per_name[name] == int(nth)
    return _count == int(_crash_spec)
