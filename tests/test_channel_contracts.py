"""The same contract for every channel type, run against its emulator over real HTTP: create, an
answer lost after the commit, 429 then success and refused credentials for every registered type
(a batched, at-least-once one such as IndexNow too); verify found / absent / unknown for the
at-most-once ones, which read before they resend. Virtual time is shared with the emulator."""

from __future__ import annotations

from dataclasses import replace

import pytest
from channel_specs import EVERY_TYPE, NOT_POST_COUNTED, SPECS, Spec  # other suites import them from here too
from conftest import SITE, ListReporter, RecordingTransport, as_in_flight, write_ledger

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.registry import TYPES

pytestmark = pytest.mark.http


def remote_posts(sandbox, channel_type):
    """What the service holds: its own records for the built-in types (tests look inside them),
    what the emulator says it received for any other."""
    state = sandbox.snapshot()
    own = {
        "mastodon": lambda: state["mastodon"]["statuses"],
        "forem": lambda: state["forem"]["articles"],
        "weibo": lambda: state["weibo"]["statuses"],
        "bluesky": lambda: list(state["bluesky"]["records"].values()),
    }
    if channel_type in own:
        return own[channel_type]()
    return sandbox.emulators[channel_type].received(state[channel_type], sandbox.url)


def delivered(sandbox, spec: Spec) -> list[str]:
    """Each post the service received, once per time it received it: a batched type's emulator
    lists its requests, each carrying its posts' URLs one a line (IndexNow's pings)."""
    if not spec.batched:
        return [str(p) for p in remote_posts(sandbox, spec.type)]
    return [url for item in remote_posts(sandbox, spec.type) for url in item["text"].splitlines()]


def run(folder, raw, posts, clock, transport=None, **options):
    folder.mkdir(exist_ok=True)
    opts = parse_options(
        {"ch": raw}, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options
    )
    reporter = ListReporter()
    return send(opts, posts, reporter, clock=clock, transport=transport), reporter


def retry_by_hand(folder):
    """What `mkdocs-syndicate resolve POST CHANNEL --retry` writes: failed, pending again."""
    ledger = Ledger.read(folder / "ledger.yml")
    ((key, entry),) = ledger.posts.items()
    current = entry.channels["ch"]
    with Ledger.open_for_writing(folder / "ledger.yml") as writable:
        writable.apply(
            [
                Transition(
                    PostRef(key, entry.url, entry.title),
                    "ch",
                    replace(current, state=State.FAILED, error="resolved by hand: send again"),
                )
            ],
            by_hand=True,
        )


@pytest.fixture(params=sorted(SPECS))
def spec(request, sandbox, clock):
    sandbox.now = clock.time
    return SPECS[request.param]


@pytest.fixture(params=sorted(EVERY_TYPE))
def any_spec(request, sandbox, clock):
    """Every registered type, whatever its delivery (the cases that do not read back)."""
    sandbox.now = clock.time
    return EVERY_TYPE[request.param]


def test_every_registered_type_is_in_the_shared_suites():
    """Issue 37: each suite takes its types from the registry, a batched plugin type among them
    (tests/toyping.py, installed for the session): the contract and the wrong-shape answers
    (EVERY_TYPE), the crash matrix and the soaks (crashlab's scenario), the emulators' kills
    around a commit, and the crash suite's `mkdocs build` site (crashsite)."""
    import crashlab
    import crashsite
    from test_crash_matrix import SERVER_KILLS

    registered = set(TYPES) - set(NOT_POST_COUNTED)  # each of those says where it is tested instead
    assert all(TYPES[name] and why for name, why in NOT_POST_COUNTED.items())
    assert set(EVERY_TYPE) == registered and {"indexnow", "toyping"} <= registered
    plugins_batched = [name for name, spec in EVERY_TYPE.items() if spec.batched and TYPES[name].origin]
    assert plugins_batched == ["toyping"] and not EVERY_TYPE["toyping"].at_most_once
    assert {settings["type"] for settings in crashlab.channels("http://x").values()} == registered
    assert set(crashsite.TYPE_OF.values()) == registered and len(crashsite.CHANNELS) == len(registered)
    assert {emulator for emulator, *_ in SERVER_KILLS} == registered


def record(folder, key="blog/post-1/"):
    return Ledger.read(folder / "ledger.yml").record(key, "ch")


def test_create(tmp_path, sandbox, clock, any_spec):
    spec = any_spec
    report, _ = run(tmp_path, spec.raw(sandbox), [spec.post(1), spec.post(2)], clock)
    assert [r.state for r in report.results] == ["done", "done"]
    assert len(delivered(sandbox, spec)) == 2
    if spec.at_most_once:  # a ping leaves nothing to address
        assert record(tmp_path).remote_id and (record(tmp_path).remote_url or not spec.web_copies)


def test_answer_lost_after_commit_ends_with_one_post(tmp_path, sandbox, clock, any_spec):
    """At most once: read back, one post. At least once: sent again (a repeat is harmless), done,
    and never left for a person."""
    spec = any_spec
    sandbox.add_fault({"channel": spec.type, "action": "drop_after"})
    report, _ = run(tmp_path, spec.raw(sandbox), [spec.post(1)], clock)
    assert [(r.state, r.needs_review) for r in report.results] == [("done", False)], report.results
    assert len(delivered(sandbox, spec)) == 1 if spec.at_most_once else len(delivered(sandbox, spec)) >= 1


def _leave_in_flight(source, target, clock):
    """Copy source's done record into target as the in_flight it was before the answer came."""
    done = record(source)
    target.mkdir(exist_ok=True)
    write_ledger(
        target / "ledger.yml",
        {("blog/post-1/", "ch"): as_in_flight(done)},
    )
    clock.now += 2 * 3600  # beyond any idempotency window
    return done


def test_verify_found_makes_no_second_post(tmp_path, sandbox, clock, spec):
    run(tmp_path / "a", spec.raw(sandbox), [spec.post(1)], clock)
    done = _leave_in_flight(tmp_path / "a", tmp_path / "b", clock)
    transport = RecordingTransport(clock)
    report, _ = run(tmp_path / "b", spec.raw(sandbox), [spec.post(1)], clock, transport)
    assert [r.state for r in report.results] == ["done"] and "verify" in report.results[0].detail
    assert record(tmp_path / "b").remote_id == done.remote_id
    assert len(remote_posts(sandbox, spec.type)) == 1
    # Reads only (Bluesky opens a session first, a new one or the last run's refreshed: the
    # session names the PDS to read from).
    assert all(m == "GET" or p.endswith(("createSession", "refreshSession")) for _, m, p in transport.seen), (
        transport.seen
    )


def test_verify_absent_sends(tmp_path, sandbox, clock, spec):
    run(tmp_path / "a", spec.raw(sandbox), [spec.post(1)], clock)
    _leave_in_flight(tmp_path / "a", tmp_path / "b", clock)
    sandbox.state[spec.type] = sandbox.emulators[spec.type].initial_state()  # the post never landed
    report, _ = run(tmp_path / "b", spec.raw(sandbox), [spec.post(1)], clock)
    assert [r.state for r in report.results] == ["done"]
    assert len(remote_posts(sandbox, spec.type)) == 1


def test_verify_unknown_needs_review_and_sends_nothing(tmp_path, sandbox, clock, spec):
    run(tmp_path / "a", spec.raw(sandbox), [spec.post(1)], clock)
    _leave_in_flight(tmp_path / "a", tmp_path / "b", clock)
    sandbox.add_fault({"channel": spec.type, "action": "status", "status": 503, "match": spec.read_path})
    report, _ = run(tmp_path / "b", spec.raw(sandbox), [spec.post(1)], clock)
    if spec.repeat_safe:  # a repeat is a no-op there (Bluesky): resent at once, still one post
        assert [r.state for r in report.results] == ["done"]
    else:
        assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)]
        assert record(tmp_path / "b").state == "in_flight"
    assert len(remote_posts(sandbox, spec.type)) == 1


def test_429_then_success(tmp_path, sandbox, clock, any_spec):
    spec = any_spec
    sandbox.add_fault({"channel": spec.type, **spec.rate_limit})
    report, reporter = run(tmp_path, spec.raw(sandbox), [spec.post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert [w for w in reporter.waits if "rate limited" in w[2]]
    # A channel whose repeat is harmless, or whose service refuses with 429 before it makes
    # anything (Matrix: rate_limit_checked_first), retries a 429 outright: the 429 made nothing, so
    # only the send that worked is counted. The others read first, and both sends stay counted (the
    # 429's outcome was unknown to them: a 429 is no proof on a channel that could make a duplicate).
    client = TYPES[spec.type].client_class()
    safe = client.repeat_safe or client.rate_limit_checked_first or not spec.at_most_once
    assert record(tmp_path).attempts == (1 if safe else 2)
    assert len(delivered(sandbox, spec)) == 1


def test_refused_credentials_fail_and_stop_the_lane(tmp_path, sandbox, clock, any_spec):
    spec = any_spec
    if not spec.bad_credentials:
        pytest.skip(f"{spec.type} has no secret setting (IndexNow's key is public: its refusal is a key check)")
    # A batched type's first request carries several posts: they fail together, and the lane
    # stops there (one request), the posts of later requests not attempted.
    posts = [spec.post(n) for n in (1, 2, 3)] if spec.batched else [spec.post(1), spec.post(2)]
    report, _ = run(tmp_path, spec.raw(sandbox, **spec.bad_credentials), posts, clock)
    states = [r.state for r in report.results]
    creating = sandbox.emulators[spec.type].creating
    creates = [r for r in sandbox.requests(spec.type) if f"{r['method']} {r['path']}".startswith(creating)]
    assert len(creates) <= 1 and states[0] == "failed" and states[-1] == "not_attempted", (creates, states)
    assert states == sorted(states, key=["failed", "not_attempted"].index), states
    text = (tmp_path / "ledger.yml").read_text()
    details = " ".join(r.detail for r in report.results)
    assert all(str(v) not in text and str(v) not in details for v in spec.bad_credentials.values())
    assert delivered(sandbox, spec) == []
