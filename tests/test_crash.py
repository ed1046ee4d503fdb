"""SIGKILL a real `mkdocs build` between the in_flight write and the response; the rerun finishes
the work with each post exactly once on every at-most-once channel and every IndexNow URL pinged.

One real build per kind of kill: at a checkpoint, and by the emulator just before and just after
its commit. What a real build adds to test_crash_matrix.py (which kills forked children at every
checkpoint, around every commit of every channel) is the plugin's own path: `mkdocs build` killed
mid-run leaves a whole ledger, and the next build finishes the work. That needs one kill of each
kind, not one per checkpoint or per channel."""

from __future__ import annotations

import signal

import crashsite
import pytest

from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.crash


# One IndexNow batch + 3 posts on each at-most-once channel: the last in_flight write of the run,
# so the rerun meets done pairs, the killed one in flight, and (lanes being concurrent) no other.
LAST_IN_FLIGHT_WRITE = 1 + 3 * len(crashsite.AT_MOST_ONCE)


def test_kill_after_the_in_flight_write_then_rerun(tmp_path, sandbox):
    nth = LAST_IN_FLIGHT_WRITE
    config = crashsite.make(tmp_path / "site", sandbox)
    code, err = crashsite.run(config, SYNDICATE_CRASH_AT=f"after_in_flight_write:{nth}")
    assert code == -signal.SIGKILL, err
    book = Ledger.read(config.parent / "ledger.yml")  # parses: the kill left a whole file
    assert any(r.state == "in_flight" for e in book.posts.values() for r in e.channels.values())
    code, err = crashsite.run(config)
    assert code == 0, err
    crashsite.check_outcome(config, sandbox)


@pytest.mark.parametrize(("emulator", "action", "which"), [("mastodon", "kill_before", 0), ("forem", "kill_after", 2)])
def test_emulator_kills_the_client_around_its_commit_then_rerun(tmp_path, sandbox, emulator, action, which):
    """The window no client-side checkpoint reaches: the server committed (or not), no reply came.
    Every channel, post and action is in test_crash_matrix.py (forked children)."""
    config = crashsite.make(tmp_path / "site", sandbox)
    # Target the nth create on that channel: let the earlier ones through unharmed.
    if which:
        sandbox.add_fault({"channel": emulator, "action": "delay_after", "seconds": 0, "times": which})
    process = crashsite.start(config)
    sandbox.add_fault({"channel": emulator, "action": action, "pid": process.pid})
    _, err = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL, err
    committed = len(crashsite.remote(sandbox.snapshot(), emulator))
    assert committed == which + (1 if action == "kill_after" else 0)
    code, err = crashsite.run(config)
    assert code == 0, err
    crashsite.check_outcome(config, sandbox)
