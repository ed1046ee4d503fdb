"""The Matrix channel (built in since issue 37): what is particular to Synapse and the Matrix
spec, beside the shared suites (contracts, faults, read-before-resend, crash) that cover it as
every at-most-once type."""

from __future__ import annotations

import pytest
from channel_specs import SPECS
from conftest import SITE, ListReporter, as_in_flight, make_post, write_ledger

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger


def matrix(sandbox, **extra):
    return {"room": SPECS["matrix"].raw(sandbox, **extra)}


@pytest.mark.http
def test_matrix_verify_proves_the_post_by_its_id_in_the_content_not_by_the_device(tmp_path, sandbox, clock):
    """An in_flight record is settled by the event whose content carries this pair's id, even
    when the homeserver forgot the transaction (no unsigned.transaction_id), and another post's
    message in the room is not taken for it."""
    sandbox.now = clock.time
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    send(options, [make_post(1), make_post(2)], ListReporter(), clock=clock)
    done = Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "room")
    for event in sandbox.emulators["matrix"].state["events"]:
        event["sent_by"] = "another-device-token"  # as if sent from a session since logged out
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/post-2/", "room"): as_in_flight(done)},
    )
    clock.now += 3600
    report = send(options, [make_post(2)], ListReporter(), clock=clock)
    assert [(r.state, "verify" in r.detail) for r in report.results] == [("done", True)], report.results
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "room").remote_id == done.remote_id
    assert len(sandbox.emulators["matrix"].state["events"]) == 2


@pytest.mark.http
def test_matrix_429_is_waited_out_as_its_body_says(tmp_path, sandbox, clock):
    """M_LIMIT_EXCEEDED gives `retry_after_ms` in its body; servers before spec v1.10 send no
    Retry-After header."""
    sandbox.now = clock.time
    sandbox.add_fault(
        {"channel": "matrix", "action": "status", "status": 429, "reset_in": 7, "retry_after_header": False}
    )
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    reporter = ListReporter()
    report = send(options, [make_post(1)], reporter, clock=clock)
    assert [r.state for r in report.results] == ["done"]
    assert [w for w in reporter.waits if "rate limited" in w[2]]
    assert any(abs(s - 7.0) < 0.01 for s in clock.sleeps), clock.sleeps


@pytest.mark.http
def test_matrix_a_server_that_forgot_the_transaction_still_posts_once(tmp_path, sandbox, clock):
    """The homeserver no longer knows the transaction id (restart, expired cache) and the answer
    is lost after the commit: the read finds the event by its content, nothing is sent twice."""
    sandbox.now = clock.time
    sandbox.set_quirks("matrix", ignore_idempotency_key=True)
    sandbox.add_fault({"channel": "matrix", "action": "drop_after"})
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    report = send(options, [make_post(1)], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.emulators["matrix"].state["events"]) == 1


@pytest.mark.http
def test_matrix_two_sites_in_one_room_each_find_only_their_own_message(tmp_path, sandbox, clock):
    """The same post path on two sites, announced to one room by one account: the second site's
    in_flight record is settled by its own message, never by the first site's."""
    from dataclasses import replace

    from mkdocs_syndicate.config.run import Site

    sandbox.now = clock.time
    other = Site("https://other.example/", "Other")
    here = make_post(1)
    there = replace(make_post(1), url="https://other.example/blog/post-1/")
    # The other site first: its message is the older one, so a read that took the first match of
    # the post path would find this site's newer message instead.
    for folder, site, post in (("there", other, there), ("here", SITE, here)):
        (tmp_path / folder).mkdir()
        options = parse_options(
            matrix(sandbox), ledger_path=tmp_path / folder / "ledger.yml", site=site, sandbox=False, sending=True
        )
        assert not send(options, [post], ListReporter(), clock=clock).undone
    ours = Ledger.read(tmp_path / "here" / "ledger.yml").record(here.key, "room")
    theirs = Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "room")
    assert ours.idempotency_key != theirs.idempotency_key and ours.remote_id != theirs.remote_id
    write_ledger(tmp_path / "there" / "ledger.yml", {(there.key, "room"): as_in_flight(theirs)})
    clock.now += 3600
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "there" / "ledger.yml", site=other, sandbox=False, sending=True
    )
    report = send(options, [there], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "room").remote_id == theirs.remote_id
    assert len(sandbox.emulators["matrix"].state["events"]) == 2
