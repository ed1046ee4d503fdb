"""Never twice against servers that are slow, ignore the key, or fail a replay (issue: the real
world). Each test here is a way a real deployment broke the at-most-once promise of a client that
trusted its Idempotency-Key; virtual time is shared by the runner and the emulator."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import SITE, ListReporter, RecordingTransport, make_post, mastodon_raw, write_ledger
from test_channel_contracts import SPECS, remote_posts

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import to_iso

pytestmark = pytest.mark.http


def run(folder, channels, posts, clock, transport=None, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options)
    return send(opts, posts, ListReporter(), clock=clock, transport=transport)


def statuses(sandbox):
    return sandbox.snapshot()["mastodon"]["statuses"]


def posts_made(transport):
    return [path for _, method, path in transport.seen if method == "POST"]


@pytest.fixture
def shared_time(sandbox, clock):
    sandbox.now = clock.time
    return clock


def test_slow_commit_with_a_short_timeout_makes_one_status(tmp_path, sandbox, shared_time):
    """Mastodon creates the status 8 s after the POST; the client gives up after 1.5 s. A resend
    with the same key 4 s later would find no key yet (it is stored after the create) and make a
    second status: the runner must read, and only after the settle time."""
    clock = shared_time
    sandbox.set_quirks("mastodon", commit_delay=8)
    transport = RecordingTransport(clock)
    report = run(tmp_path, {"masto": mastodon_raw(sandbox, timeout=1.5)}, [make_post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(statuses(sandbox)) == 1
    assert len(posts_made(transport)) == 1
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto")
    assert record.remote_id == statuses(sandbox)[0]["id"] and record.attempts == 1
    first_post = next(t for t, m, _ in transport.seen if m == "POST")
    reads_after_settle = [t for t, m, _ in transport.seen if m == "GET" and t >= first_post + 600]
    assert reads_after_settle, "absence is only trusted after the settle time"


def test_slow_commit_that_never_lands_is_sent_again_after_the_settle_time(tmp_path, sandbox, shared_time):
    clock = shared_time
    sandbox.add_fault({"channel": "mastodon", "action": "drop_before"})  # nothing created, no answer
    transport = RecordingTransport(clock)
    report = run(tmp_path, {"masto": mastodon_raw(sandbox, timeout=1)}, [make_post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"]
    assert len(statuses(sandbox)) == 1
    times = [t for t, m, _ in transport.seen if m == "POST"]
    assert len(times) == 2 and times[1] - times[0] >= 600


@pytest.mark.parametrize("quirk", ["ignore_idempotency_key", "replay_500"])
def test_answer_lost_after_commit_on_a_server_whose_key_cannot_be_trusted(tmp_path, sandbox, shared_time, quirk):
    clock = shared_time
    sandbox.set_quirks("mastodon", **{quirk: True})
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after"})
    transport = RecordingTransport(clock)
    report = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1), make_post(2)], clock, transport)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    assert len(statuses(sandbox)) == 2
    assert len(posts_made(transport)) == 2  # the lost answer was read back, never replayed


def test_ignored_key_with_a_resend_after_a_lost_answer_would_duplicate(sandbox, shared_time):
    """The emulator really ignores the key: the fault the test above relies on is there."""
    import httpx

    sandbox.set_quirks("mastodon", ignore_idempotency_key=True)
    headers = {"Authorization": "Bearer sandbox-mastodon-token", "Idempotency-Key": "same"}
    for _ in range(2):
        httpx.post(
            f"{sandbox.url}/mastodon/api/v1/statuses", data={"status": "x https://example.com/"}, headers=headers
        )
    assert len(statuses(sandbox)) == 2


def test_replayed_key_is_answered_with_500(sandbox, shared_time):
    import httpx

    sandbox.set_quirks("mastodon", replay_500=True)
    headers = {"Authorization": "Bearer sandbox-mastodon-token", "Idempotency-Key": "same"}
    codes = [
        httpx.post(f"{sandbox.url}/mastodon/api/v1/statuses", data={"status": "x"}, headers=headers).status_code
        for _ in range(2)
    ]
    assert codes == [200, 500] and len(statuses(sandbox)) == 1


def _status_at(sandbox, clock, moment, text):
    import httpx

    clock.now = moment
    answer = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": text},
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    )
    assert answer.status_code == 200


def test_verify_scans_back_to_the_first_attempt_not_the_last(tmp_path, sandbox, shared_time):
    """Run 1 is killed after the server answered (T0); run 2 at T0+30 min is killed after its
    in_flight write; run 3 at T0+80 min must find the T0 status: its scan is bounded by
    `created_at`, not by `at`, which run 2 rewrote. A resend there would double (key expired)."""
    clock = shared_time
    t0 = clock.now
    report = run(tmp_path / "first", {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    sent = Ledger.read(tmp_path / "first" / "ledger.yml").record("blog/post-1/", "masto")
    assert report.results[0].state == "done"
    # Between the bound a rewritten `at` would give (T0+30 min - margin) and T0: a full page of
    # statuses, so a scan that stops at that bound never reaches the T0 status.
    for n in range(40):
        _status_at(sandbox, clock, t0 + 600 + n * 10, f"older {n}")
    for n in range(45):
        _status_at(sandbox, clock, t0 + 35 * 60 + n * 10, f"newer {n}")
    clock.now = t0 + 80 * 60
    iso = lambda epoch: to_iso(dt.datetime.fromtimestamp(epoch, dt.UTC))  # noqa: E731
    (tmp_path / "third").mkdir()
    write_ledger(
        tmp_path / "third" / "ledger.yml",
        {
            ("blog/post-1/", "masto"): Record(
                State.IN_FLIGHT,
                2,
                iso(t0 + 30 * 60),
                idempotency_key=sent.idempotency_key,
                created_at=sent.created_at,
                message_sha256=sent.message_sha256,
            )
        },
    )
    transport = RecordingTransport(clock)
    report = run(tmp_path / "third", {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"], report.results
    assert posts_made(transport) == []
    assert Ledger.read(tmp_path / "third" / "ledger.yml").record("blog/post-1/", "masto").remote_id == sent.remote_id


def test_created_at_is_written_at_the_first_attempt_and_kept(tmp_path, sandbox, shared_time):
    clock = shared_time
    sandbox.add_fault({"channel": "mastodon", "action": "drop_before", "times": 2})
    run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock)
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto")
    assert record.state == "done" and record.attempts == 3
    assert record.created_at is not None and record.created_at < record.at


@pytest.fixture(params=sorted(SPECS))
def spec(request):
    return SPECS[request.param]


def test_every_at_most_once_channel_survives_commits_slower_than_its_timeout(tmp_path, sandbox, shared_time, spec):
    """Every create takes 20 s to commit, the client waits 0.5 s: whatever each channel does in
    between (read and wait, or, where a repeat is a no-op, repeat), one post in the end."""
    clock = shared_time
    sandbox.set_quirks(spec.type, commit_delay=20)
    report = run(tmp_path, {"ch": spec.raw(sandbox, timeout=0.5)}, [make_post(1)], clock)
    assert len(remote_posts(sandbox, spec.type)) == 1
    if report.results[0].state != "done":
        clock.now += 3600
        report = run(tmp_path, {"ch": spec.raw(sandbox, timeout=0.5)}, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(remote_posts(sandbox, spec.type)) == 1


def test_an_ambiguous_outcome_waits_at_the_back_of_the_lane(tmp_path, sandbox, shared_time):
    """The pair waiting for its settle time does not hold the others up."""
    clock = shared_time
    sandbox.add_fault({"channel": "mastodon", "action": "drop_before"})
    transport = RecordingTransport(clock)
    report = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(n) for n in (1, 2, 3)], clock, transport)
    assert [r.post_key for r in report.results] == ["blog/post-2/", "blog/post-3/", "blog/post-1/"]
    posts = [t for t, m, _ in transport.seen if m == "POST"]
    assert posts[1] - posts[0] < 10 and posts[3] - posts[0] >= 600
    assert len(statuses(sandbox)) == 3


def test_a_settle_wait_beyond_max_wait_leaves_the_pair_in_flight_and_fails_the_run(tmp_path, sandbox, shared_time):
    clock = shared_time
    sandbox.add_fault({"channel": "mastodon", "action": "drop_before"})
    report = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, max_wait=60)
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", False)]
    assert "settle" in report.results[0].detail
    assert statuses(sandbox) == []
    clock.now += 601  # the next run, after the settle time: read, absent, send
    report = run(tmp_path, {"masto": mastodon_raw(sandbox)}, [make_post(1)], clock, max_wait=60)
    assert [r.state for r in report.results] == ["done"] and len(statuses(sandbox)) == 1


def test_the_settle_time_counts_from_the_end_of_the_second_the_ledger_recorded(tmp_path, sandbox, shared_time):
    """`at` is written in whole seconds: an attempt at 100.9 s reads as 100 s. Counting the settle
    time from 100 would read (and resend) 0.9 s too early, before a slow commit lands."""
    clock = shared_time
    clock.now = float(int(clock.now)) + 0.9
    sandbox.set_quirks("mastodon", commit_delay=1.5)
    report = run(tmp_path, {"masto": mastodon_raw(sandbox, timeout=0.2, settle=2)}, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(statuses(sandbox)) == 1
