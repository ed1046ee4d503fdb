"""The runner against the real loopback emulators, with virtual time for pacing and waits."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from conftest import (
    SITE,
    FakeClock,
    ListReporter,
    RecordingTransport,
    RefusingTransport,
    indexnow_raw,
    make_post,
    mastodon_raw,
    write_ledger,
)

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import LedgerError, LedgerWriteError
from mkdocs_syndicate.ledger import atomicfile
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import to_iso

pytestmark = pytest.mark.http


def run(tmp_path, channels, posts, clock, transport=None, **options):
    opts = parse_options(
        channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True, **options
    )
    reporter = ListReporter()
    report = send(opts, posts, reporter, clock=clock, transport=transport)
    return report, reporter


def statuses(sandbox):
    return sandbox.snapshot()["mastodon"]["statuses"]


def ledger(tmp_path):
    return Ledger.read(tmp_path / "ledger.yml")


def test_fresh_run_announces_everything_and_a_second_run_makes_no_request(tmp_path, sandbox, clock):
    posts = [make_post(n) for n in (1, 2, 3)]
    channels = {"masto": mastodon_raw(sandbox), "ping": indexnow_raw(sandbox)}
    report, _ = run(tmp_path, channels, posts, clock)
    assert not report.undone and len(report.results) == 6
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["Post 1", "Post 2", "Post 3"]
    pings = sandbox.snapshot()["indexnow"]["pings"]
    assert len(pings) == 1 and pings[0]["urls"] == [p.url for p in posts]  # one batched POST
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    assert record.state == "done" and record.remote_id == statuses(sandbox)[0]["id"]
    assert record.remote_url.endswith(record.remote_id) and len(record.idempotency_key) == 64
    text = (tmp_path / "ledger.yml").read_text()

    again, _ = run(tmp_path, channels, posts, clock, transport=RefusingTransport())
    assert again.results == [] and again.requests == 0
    assert (tmp_path / "ledger.yml").read_text() == text


def test_pacing_spaces_every_request_of_a_channel(tmp_path, sandbox, clock):
    transport = RecordingTransport(clock)
    posts = [make_post(n) for n in (1, 2, 3)]
    run(tmp_path, {"masto": mastodon_raw(sandbox, min_interval=75)}, posts, clock, transport)
    times = [t for t, method, _ in transport.seen if method == "POST"]
    assert len(times) == 3
    assert [round(b - a) for a, b in itertools.pairwise(times)] == [75, 75]


def test_pacing_carries_over_from_the_previous_run(tmp_path, sandbox, clock):
    write_ledger(
        tmp_path / "ledger.yml",
        {("old/", "masto"): Record(State.DONE, 1, to_iso(dt.datetime.fromtimestamp(clock.now - 10, dt.UTC)))},
    )
    reporter_waits = run(tmp_path, {"masto": mastodon_raw(sandbox, min_interval=75)}, [make_post(1)], clock)[1].waits
    assert [round(w[1]) for w in reporter_waits] == [65]  # 75 s since the last run's request, not 0


def test_429_with_reset_header_waits_and_then_succeeds(tmp_path, sandbox, clock):
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 429, "reset_in": 30})
    report, reporter = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    assert not report.undone
    waits = [w for w in reporter.waits if "rate limited" in w[2]]
    # The reset is the server's real time + 30 s; the fake clock started at a whole second before
    # the request, which a busy machine can delay by a few more: the hint, not the 60 s default.
    assert len(waits) == 1 and 28 <= waits[0][1] <= 35
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    assert record.state == "done" and record.attempts == 2
    assert len(statuses(sandbox)) == 1


def test_429_beyond_the_cap_keeps_the_pair_in_flight_and_stops_the_lane(tmp_path, sandbox, clock):
    """A 429 is no proof that nothing was made: the pair stays in_flight (the next run reads
    before it sends), and the lane stops without sitting out the wait."""
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 429, "reset_in": 5000})
    posts = [make_post(1), make_post(2)]
    report, reporter = run(tmp_path, {"masto": mastodon_raw(sandbox)}, posts, clock, max_wait=900)
    states = {r.post_key: r.state for r in report.results}
    assert states == {"blog/post-1/": "in_flight", "blog/post-2/": "not_attempted"}
    assert "429 rate limited" in report.results[0].detail and "retry after 2" in report.results[0].detail
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    assert record.state == "in_flight"
    assert ledger(tmp_path).record("blog/post-2/", "masto") is None
    assert not [w for w in reporter.waits if "rate limited" in w[2]]  # did not sit through 5000 s
    assert len(sandbox.requests("mastodon")) == 1


def test_connection_dropped_after_commit_is_found_by_a_read_not_resent(tmp_path, sandbox, clock):
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after"})
    transport = RecordingTransport(clock)
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, transport)
    assert not report.undone and report.results[0].detail == "sent (confirmed by a read)"
    assert len(statuses(sandbox)) == 1
    assert [m for _, m, _ in transport.seen].count("POST") == 1  # the key was never relied on
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    assert record.state == "done" and record.attempts == 1 and record.remote_id == statuses(sandbox)[0]["id"]


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_is_ambiguous_and_never_doubles(tmp_path, sandbox, clock, status):
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": status})
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    assert not report.undone and len(statuses(sandbox)) == 1


def test_server_down_fails_with_nothing_sent(tmp_path, clock):
    channels = {"masto": {"type": "mastodon", "instance": "http://127.0.0.1:9", "token": "t0ken-x"}}
    report, _ = run(tmp_path, channels, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["failed"]
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    # Four tries, none of which reached the server: none counts among the uncertain sends.
    assert record.state == "failed" and "nothing was sent" in record.error and record.attempts == 0


def test_bad_token_fails_and_stops_the_lane(tmp_path, sandbox, clock):
    channels = {"masto": mastodon_raw(sandbox, token="wrong-token-value")}
    report, _ = run(tmp_path, channels, [make_post(1), make_post(2)], clock)
    assert [r.state for r in report.results] == ["failed", "not_attempted"]
    assert "401" in ledger(tmp_path).record("blog/post-1/", "masto").error
    assert "wrong-token-value" not in (tmp_path / "ledger.yml").read_text()
    # One post, then the credential check's one read (issue 38), and nothing more.
    seen = [(r["method"], r["path"]) for r in sandbox.requests("mastodon")]
    assert seen == [("POST", "/api/v1/statuses"), ("GET", "/api/v1/accounts/verify_credentials")]


def test_in_flight_inside_the_key_window_is_read_back_not_resent(tmp_path, sandbox, clock):
    run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    first = ledger(tmp_path).record("blog/post-1/", "masto")
    # As if killed after the server committed and before the done write:
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, first.at, idempotency_key=first.idempotency_key)},
    )
    transport = RecordingTransport(clock)
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"]
    assert [m for _, m, _ in transport.seen] == ["GET", "GET"]  # verify_credentials + one page
    assert len(statuses(sandbox)) == 1
    assert ledger(tmp_path).record("blog/post-1/", "masto").remote_id == first.remote_id


def _in_flight_hours_ago(tmp_path, clock, hours):
    at = to_iso(dt.datetime.fromtimestamp(clock.now - hours * 3600, dt.UTC))
    write_ledger(
        tmp_path / "ledger.yml", {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, at, idempotency_key="k" * 64)}
    )


def test_in_flight_after_the_window_found_by_reading_own_statuses(tmp_path, sandbox, clock):
    sandbox.idempotency_ttl = 0  # the first post's key has expired, as it would after an hour
    (tmp_path / "elsewhere").mkdir()
    posts = [make_post(1)] + [
        make_post(1, key=f"other-{n}/", url=f"https://example.com/o{n}/") for n in range(2, 50)
    ]  # push post 1 off the listing's first page
    run(tmp_path / "elsewhere", {"masto": mastodon_raw(sandbox)}, posts, clock, max_per_run=100)
    clock.now += 2 * 3600
    _in_flight_hours_ago(tmp_path, clock, 2)
    transport = RecordingTransport(clock)
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"] and "verify" in report.results[0].detail
    assert [m for _, m, _ in transport.seen] == ["GET", "GET", "GET"]  # credentials + 2 pages, no POST
    assert len(statuses(sandbox)) == 49


def test_in_flight_after_the_window_proved_absent_is_sent(tmp_path, sandbox, clock):
    _in_flight_hours_ago(tmp_path, clock, 2)
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"] and len(statuses(sandbox)) == 1


def test_in_flight_that_cannot_be_verified_needs_review(tmp_path, sandbox, clock):
    _in_flight_hours_ago(tmp_path, clock, 2)
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 503, "match": "verify_credentials"})
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)]
    assert ledger(tmp_path).record("blog/post-1/", "masto").state == "in_flight"
    assert statuses(sandbox) == []


def test_clean_run_makes_no_reads(tmp_path, sandbox, clock):
    transport = RecordingTransport(clock)
    run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1), make_post(2)], clock, transport)
    assert [m for _, m, _ in transport.seen] == ["POST", "POST"]


def test_indexnow_in_flight_is_simply_resent(tmp_path, sandbox, clock):
    write_ledger(
        tmp_path / "ledger.yml", {("blog/post-1/", "ping"): Record(State.IN_FLIGHT, 1, "2026-12-01T00:00:00Z")}
    )
    report, _ = run(tmp_path, {"ping": indexnow_raw(sandbox)}, [make_post(1), make_post(2)], clock)
    assert not report.undone
    assert ledger(tmp_path).record("blog/post-1/", "ping").attempts == 2
    assert sandbox.snapshot()["indexnow"]["pings"][0]["urls"] == [make_post(1).url, make_post(2).url]


def test_a_batch_that_stops_the_lane_leaves_the_later_batches_reported(tmp_path, sandbox, clock, monkeypatch):
    """Regression: a 429 beyond max_wait on the first of several IndexNow batches stopped the lane
    and the later batches' pairs were in no report at all (a run that looked finished)."""
    from mkdocs_syndicate.channels import indexnow

    monkeypatch.setattr(indexnow, "MAX_URLS", 1)  # one URL per request: three batches
    # A 429 asking for longer than max_wait stops the lane.
    sandbox.add_fault({"channel": "indexnow", "action": "status", "status": 429, "reset_in": 3600, "retry_after": 3600})
    posts = [make_post(n) for n in (1, 2, 3)]
    report, _ = run(tmp_path, {"ping": indexnow_raw(sandbox)}, posts, clock)
    states = {r.post_key: r.state for r in report.results}
    assert states == {"blog/post-1/": "failed", "blog/post-2/": "not_attempted", "blog/post-3/": "not_attempted"}
    assert len(report.undone) == 3
    assert all("ping stopped for this run" in r.detail for r in report.results if r.state == "not_attempted")


def test_max_per_run_defers_the_newest_posts(tmp_path, sandbox, clock):
    posts = [make_post(n) for n in (1, 2, 3)]
    report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, posts, clock, max_per_run=2)
    assert report.deferred == ["blog/post-3/"] and len(statuses(sandbox)) == 2
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["Post 1", "Post 2"]


def test_corrupt_ledger_stops_before_any_request(tmp_path, sandbox, clock):
    (tmp_path / "ledger.yml").write_text("version: 1\nposts: {}\n")  # no end marker: truncated
    with pytest.raises(LedgerError, match=r"ledger.yml"):
        run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, RefusingTransport())


def test_failed_done_write_stops_every_further_request(tmp_path, sandbox, clock, monkeypatch):
    real = atomicfile.atomic_write_text
    calls = {"n": 0}

    def flaky(path, text, *args, **kwargs):
        if path.name == "ledger.yml":
            calls["n"] += 1
            if calls["n"] == 2:  # the done write of the first post
                raise OSError(28, "No space left on device")
        return real(path, text, *args, **kwargs)

    monkeypatch.setattr("mkdocs_syndicate.ledger.store.atomic_write_text", flaky)
    with pytest.raises(LedgerWriteError):
        run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1), make_post(2)], clock)
    assert len(sandbox.requests("mastodon")) == 1
    assert ledger(tmp_path).record("blog/post-1/", "masto").state == "in_flight"


def test_lanes_run_concurrently(tmp_path, sandbox):
    """Two lanes each wait for their pacing once, and each lane's wait lasts until the other
    lane is waiting too: lanes that run at once meet there; lanes run one after the other would
    leave the first waiting alone until its patience (60 s) ran out. Nothing here depends on
    how fast the machine is (under load, one lane's send may take longer than the other's whole
    pacing wait, so comparing the waits' times proved nothing)."""
    import asyncio

    waiting: list[str] = []
    alone: list[str] = []

    class MeetingClock(FakeClock):
        def __init__(self) -> None:
            super().__init__()
            self.both: asyncio.Event | None = None

        async def sleep(self, seconds):
            if seconds < 0.3:
                return await super().sleep(seconds)
            self.both = self.both or asyncio.Event()
            waiting.append(f"{seconds}")
            if len(waiting) == 2:
                self.both.set()
            try:
                await asyncio.wait_for(self.both.wait(), timeout=60)
            except TimeoutError:
                alone.append(f"a lane waited {seconds} s alone")
            return await super().sleep(seconds)

    posts = [make_post(1), make_post(2)]
    channels = {"a": mastodon_raw(sandbox, min_interval=0.4), "b": mastodon_raw(sandbox, min_interval=0.4)}
    report, _ = run(tmp_path, channels, posts, MeetingClock())
    assert not report.undone
    assert len(waiting) == 2 and not alone, (waiting, alone)


def test_a_run_restores_sigterm_and_runs_where_the_loop_has_no_signal_handlers(tmp_path, sandbox, clock, monkeypatch):
    """The SIGTERM handler lives only while a run does (a build's other code keeps its own), and a
    loop without signal support (Windows') runs without one instead of failing."""
    import asyncio
    import signal

    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
        assert not report.undone and signal.getsignal(signal.SIGTERM) is mine

        def unsupported(self, *args):
            raise NotImplementedError

        monkeypatch.setattr(asyncio.SelectorEventLoop, "add_signal_handler", unsupported)
        report, _ = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(2)], clock)
        assert not report.undone and signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_bug_in_a_batched_lane_reports_every_member_of_every_batch(tmp_path, sandbox, clock, monkeypatch):
    """Regression (one executor for pairs and batches): a batch's unexpected error left its own
    members and the later batches' in no report; a pair's said where it stopped."""
    from mkdocs_syndicate.channels import indexnow
    from mkdocs_syndicate.errors import LaneCrashed

    async def broken(self, http, posts):
        raise RuntimeError("a bug in the ping channel")

    monkeypatch.setattr(indexnow, "MAX_URLS", 1)
    monkeypatch.setattr(indexnow.IndexNowChannel, "send_batch", broken)
    opts = parse_options(
        {"ping": indexnow_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    reporter = ListReporter()
    with pytest.raises(LaneCrashed, match="a bug in the ping channel"):
        send(opts, [make_post(n) for n in (1, 2, 3)], reporter, clock=clock)
    finished = [line.split(" ", 3)[1:3] for line in reporter.lines if line.startswith("ping blog/")]
    assert finished == [
        ["blog/post-1/", "in_flight"],
        ["blog/post-2/", "not_attempted"],
        ["blog/post-3/", "not_attempted"],
    ]


def test_a_pair_with_no_record_is_pending_in_a_stopped_run_as_in_status(tmp_path, sandbox, clock, monkeypatch):
    """One name for "no record" (issue 40): a lane that stops on a bug before its pair's first
    record says `pending`, as `status` and an interrupted run do (it said `not_attempted`)."""
    from mkdocs_syndicate import checkpoints
    from mkdocs_syndicate.errors import LaneCrashed

    def broken(name):
        if name == "before_in_flight_write":
            raise RuntimeError("a bug before the record")

    monkeypatch.setattr(checkpoints, "hit", broken)
    opts = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    reporter = ListReporter()
    with pytest.raises(LaneCrashed, match="a bug before the record"):
        send(opts, [make_post(1), make_post(2)], reporter, clock=clock)
    finished = [line.split(" ", 3)[1:3] for line in reporter.lines if line.startswith("masto blog/")]
    assert finished == [["blog/post-1/", "pending"], ["blog/post-2/", "not_attempted"]]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto") is None


def test_an_at_most_once_batch_without_an_answer_is_read_post_by_post_not_resent(tmp_path, sandbox, clock):
    """A batched channel set to at_most_once: an unanswered batch request is never repeated
    blind. Its posts are read one by one (IndexNow cannot read back, so each needs review)."""
    sandbox.add_fault({"channel": "indexnow", "action": "drop_after"})
    posts = [make_post(1), make_post(2)]
    report, _ = run(tmp_path, {"ping": indexnow_raw(sandbox, delivery="at_most_once")}, posts, clock)
    assert [(r.post_key, r.state, r.needs_review) for r in report.results] == [
        ("blog/post-1/", "in_flight", True),
        ("blog/post-2/", "in_flight", True),
    ]
    assert len(sandbox.snapshot()["indexnow"]["pings"]) == 1  # the one request, not a second
    assert all("no way to read back" in r.detail for r in report.results)
