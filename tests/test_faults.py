"""Faults without kills, over real HTTP against the emulators, for every channel: a read timeout
after the server committed, a connection reset before or after the commit, 500/503 before and
after the commit, a 429 storm, and a server that is down. Each must end in the right state with
no duplicate; the at-most-once channels are run through the same specs as the contract suite."""

from __future__ import annotations

import socket

import pytest
from conftest import make_post
from test_channel_contracts import SPECS, record, remote_posts, retry_by_hand, run

from mkdocs_syndicate.engine.policy import MAX_UNCERTAIN_SENDS
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http

POSTS = [make_post(1), make_post(2)]


@pytest.fixture(params=sorted(SPECS))
def spec(request, sandbox, clock):
    sandbox.now = clock.time
    return SPECS[request.param]


def dead_url() -> str:
    """A loopback port nobody listens on: connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def states(report):
    return [r.state for r in report.results]


def creates(sandbox, channel_type):
    """Requests that would create something (the emulator's own notion of it)."""
    creating = sandbox.emulators[channel_type].creating
    return [
        r for r in sandbox.requests(channel_type) if any(f"{r['method']} {r['path']}".startswith(c) for c in creating)
    ]


# ------------------------------------------------------------------ at-most-once channels


def test_read_timeout_after_commit_ends_with_one_post(tmp_path, sandbox, clock, spec):
    sandbox.add_fault({"channel": spec.type, "action": "delay_after", "seconds": 1.5})
    report, _ = run(tmp_path, spec.raw(sandbox, timeout=0.4), POSTS, clock)
    assert states(report) == ["done", "done"], report.results
    assert len(remote_posts(sandbox, spec.type)) == 2
    assert record(tmp_path).remote_id


def test_connection_reset_before_commit_sends_once(tmp_path, sandbox, clock, spec):
    sandbox.add_fault({"channel": spec.type, "action": "drop_before"})
    report, _ = run(tmp_path, spec.raw(sandbox), POSTS, clock)
    assert states(report) == ["done", "done"], report.results
    assert len(remote_posts(sandbox, spec.type)) == 2


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_before_commit_is_verified_then_sent_once(tmp_path, sandbox, clock, spec, status):
    sandbox.add_fault({"channel": spec.type, "action": "status", "status": status})
    report, _ = run(tmp_path, spec.raw(sandbox), POSTS, clock)
    assert states(report) == ["done", "done"], report.results
    assert len(remote_posts(sandbox, spec.type)) == 2
    assert record(tmp_path).attempts == 2


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_after_commit_is_found_by_verify(tmp_path, sandbox, clock, spec, status):
    sandbox.add_fault(
        {"channel": spec.type, "action": "status_after", "status": status, "body": {"error": "upstream timeout"}}
    )
    report, _ = run(tmp_path, spec.raw(sandbox), POSTS, clock)
    assert states(report) == ["done", "done"], report.results
    assert len(remote_posts(sandbox, spec.type)) == 2
    assert record(tmp_path).remote_id


def test_429_storm_is_bounded_and_the_next_run_sends_once(tmp_path, sandbox, clock, spec):
    sandbox.add_fault({"channel": spec.type, **spec.rate_limit, "times": 50})
    report, _ = run(tmp_path, spec.raw(sandbox), POSTS[:1], clock)
    assert remote_posts(sandbox, spec.type) == []
    assert 1 < len(creates(sandbox, spec.type)) <= 4  # bounded tries, not a hot loop
    if spec.repeat_safe or spec.rate_limit_checked_first:
        # A repeat is a no-op (Bluesky), or the 429 came before anything was made (Matrix): a
        # plain failure with its time.
        assert states(report) == ["failed"], report.results
        failed = record(tmp_path)
        assert failed.state == "failed" and "retry after" in failed.error
    else:
        # A 429 proves nothing was made (servers have answered it after committing): each one is
        # read back before the next send; a run stops at its tries, and after MAX_UNCERTAIN_SENDS
        # sends in all (counted in the ledger) the pair waits for a human.
        assert states(report) == ["in_flight"], report.results
        for _ in range(MAX_UNCERTAIN_SENDS):
            if report.results[0].needs_review:
                break
            clock.now += 3600
            report, _ = run(tmp_path, spec.raw(sandbox), POSTS[:1], clock)
        assert report.results[0].needs_review, report.results
        assert len(creates(sandbox, spec.type)) == MAX_UNCERTAIN_SENDS
        assert record(tmp_path).attempts == MAX_UNCERTAIN_SENDS
        retry_by_hand(tmp_path)

    sandbox.clear_faults()
    clock.now += 3600
    report, _ = run(tmp_path, spec.raw(sandbox), POSTS[:1], clock)
    assert states(report) == ["done"]
    assert len(remote_posts(sandbox, spec.type)) == 1


def test_server_down_fails_saying_nothing_was_sent(tmp_path, sandbox, clock, spec):
    raw = spec.raw(sandbox)
    down = dead_url()
    raw = {k: (v.replace(sandbox.url, down) if isinstance(v, str) else v) for k, v in raw.items()}
    report, _ = run(tmp_path, raw, POSTS, clock)
    assert next(r.state for r in report.results if r.state != "not_attempted") == "failed"
    assert all(r.state in ("failed", "not_attempted") for r in report.results)
    assert "nothing was sent" in report.results[0].detail
    ledger = Ledger.read(tmp_path / "ledger.yml")
    assert not [r for e in ledger.posts.values() for r in e.channels.values() if r.state == "in_flight"]

    report, _ = run(tmp_path, spec.raw(sandbox), POSTS, clock)  # the service is back
    assert states(report) == ["done", "done"]
    assert len(remote_posts(sandbox, spec.type)) == 2


# ------------------------------------------------------------------ IndexNow (at-least-once)


def indexnow(sandbox, base=None, **extra):
    return {
        "type": "indexnow",
        "endpoint": f"{base or sandbox.url}/indexnow",
        "key": "sandbox-indexnow-key-0001",
        **extra,
    }


def pinged(sandbox) -> set[str]:
    return {url for ping in sandbox.snapshot()["indexnow"]["pings"] for url in ping["urls"]}


@pytest.mark.parametrize(
    "fault",
    [
        {"action": "delay_after", "seconds": 1.5},
        {"action": "drop_after"},
        {"action": "drop_before"},
        {"action": "status", "status": 500},
        {"action": "status", "status": 503},
    ],
)
def test_indexnow_retries_transient_faults_until_every_url_is_pinged(tmp_path, sandbox, clock, fault):
    sandbox.add_fault({"channel": "indexnow", **fault})
    report, _ = run(tmp_path, indexnow(sandbox, timeout=0.4), POSTS, clock)
    assert states(report) == ["done", "done"], report.results
    assert pinged(sandbox) == {p.url for p in POSTS}


def test_indexnow_429_storm_fails_and_the_next_run_pings(tmp_path, sandbox, clock):
    sandbox.add_fault({"channel": "indexnow", "action": "status", "status": 429, "retry_after": 30, "times": 50})
    report, _ = run(tmp_path, indexnow(sandbox), POSTS, clock)
    assert states(report) == ["failed", "failed"]
    assert "retry after" in record(tmp_path).error
    assert pinged(sandbox) == set()
    sandbox.clear_faults()
    report, _ = run(tmp_path, indexnow(sandbox), POSTS, clock)
    assert states(report) == ["done", "done"]
    assert pinged(sandbox) == {p.url for p in POSTS}


def test_indexnow_server_down_fails_saying_nothing_was_sent(tmp_path, sandbox, clock):
    report, _ = run(tmp_path, indexnow(sandbox, base=dead_url()), POSTS, clock)
    assert states(report) == ["failed", "failed"]
    assert "nothing was sent" in record(tmp_path).error
