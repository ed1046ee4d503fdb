"""A Bluesky login answered with something unreadable (issue 36): each post logged in again, up
to four times, about 20 s a post (8 logins for 2 posts, 39 s). One failed login now stops the lane
for the run, as a refused one (401) does: nothing more is asked of the service, and the pairs not
attempted are reported."""

from __future__ import annotations

import pytest
from conftest import SITE, ListReporter, make_post
from test_feed import channels

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send

pytestmark = pytest.mark.http

CREATE = "com.atproto.server.createSession"


def bluesky_run(tmp_path, sandbox, clock, posts):
    options = parse_options(
        {"bsky": channels(sandbox)["bsky"]},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=True,
        backlog="send",
    )
    return send(options, posts, ListReporter(), clock=clock)


@pytest.mark.parametrize("body", ["<html>gateway</html>", '{"did": 42}', ""])
def test_one_unreadable_login_stops_the_lane_for_the_run(tmp_path, sandbox, clock, body):
    sandbox.add_fault(
        {"channel": "bluesky", "action": "status", "status": 200, "body": body, "match": CREATE, "times": 50}
    )
    report = bluesky_run(tmp_path, sandbox, clock, [make_post(1), make_post(2), make_post(3)])
    logins = [r for r in sandbox.requests("bluesky") if r["path"].endswith(CREATE)]
    assert len(logins) == 1 and len(sandbox.requests("bluesky")) == 1, sandbox.requests("bluesky")
    assert sandbox.snapshot()["bluesky"]["records"] == {}
    states = {r.post_key: (r.state, r.detail) for r in report.results}
    assert states["blog/post-1/"][0] == "failed" and "login: unreadable session" in states["blog/post-1/"][1]
    for key in ("blog/post-2/", "blog/post-3/"):  # reported, not silently dropped
        assert states[key][0] == "not_attempted" and "bsky stopped for this run: login:" in states[key][1], states


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_login_answered_with_a_server_error_stops_the_lane_too(tmp_path, sandbox, clock, status):
    sandbox.add_fault({"channel": "bluesky", "action": "status", "status": status, "match": CREATE, "times": 50})
    report = bluesky_run(tmp_path, sandbox, clock, [make_post(1), make_post(2)])
    assert len(sandbox.requests("bluesky")) == 1, sandbox.requests("bluesky")
    assert [r.state for r in report.results] == ["failed", "not_attempted"], report.results
    assert sum(clock.sleeps) < 60, clock.sleeps  # no waiting on a login that cannot succeed


def test_the_next_run_logs_in_again_and_posts(tmp_path, sandbox, clock):
    sandbox.add_fault({"channel": "bluesky", "action": "status", "status": 200, "body": "{}", "match": CREATE})
    bluesky_run(tmp_path, sandbox, clock, [make_post(1), make_post(2)])
    clock.now += 3600
    report = bluesky_run(tmp_path, sandbox, clock, [make_post(1), make_post(2)])
    assert not report.undone, report.results
    assert len(sandbox.snapshot()["bluesky"]["records"]) == 2
