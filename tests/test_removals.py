"""Which posts are removed (engine/removals.py) and what a delete does next (policy.decide_delete),
unit by unit: the two witnesses (the source, the web) and the rules table."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import make_post

from mkdocs_syndicate.channels.base import Kind, Presence
from mkdocs_syndicate.engine.policy import Situation, Step, decide_delete
from mkdocs_syndicate.engine.removals import gone_from_source, probe_built_site, probe_public
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State

pytestmark = pytest.mark.unit


def entry(key: str, state: State = State.DONE, at: str = "2026-11-20T10:00:00Z", op: str | None = None) -> PostEntry:
    record = Record(state, 1, at, remote_id="1", created_at=at, op=op)
    return PostEntry(url=f"https://example.com/{key}", title=key, channels={"masto": record})


def test_a_post_the_build_no_longer_lists_is_gone_and_one_it_lists_is_not():
    posts = {"posts/a/": entry("posts/a/"), "posts/b/": entry("posts/b/")}
    listed = [make_post(1, key="posts/a/", src="posts/a.md")]
    assert gone_from_source(posts, listed) == (["posts/b/"], "")


def test_a_source_that_lists_nothing_removes_nothing_and_says_so():
    gone, note = gone_from_source({"posts/a/": entry("posts/a/")}, [])
    assert gone == [] and "no posts were found in the source" in note


def test_only_posts_with_a_copy_left_can_be_gone():
    posts = {
        "posts/skipped/": entry("posts/skipped/", State.SKIPPED),
        "posts/deleted/": entry("posts/deleted/", State.DELETED),
        "posts/failed/": entry("posts/failed/", State.FAILED),
        "posts/deleting/": entry("posts/deleting/", State.IN_FLIGHT, op="delete"),
    }
    assert gone_from_source(posts, [make_post(1, key="posts/x/", src="x.md")])[0] == ["posts/deleting/"]


def test_a_feed_is_a_window_older_posts_fell_off_its_end():
    """A feed lists its latest entries: a post announced before its oldest entry is not gone."""
    posts = {
        "posts/old/": entry("posts/old/", at="2026-01-05T10:00:00Z"),
        "posts/recent/": entry("posts/recent/", at="2026-11-21T10:00:00Z"),
    }
    feed = [make_post(1, key="posts/new/", date=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))]  # no src: a feed
    assert gone_from_source(posts, feed)[0] == ["posts/recent/"]
    built = [make_post(1, key="posts/new/", src="new.md", date=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))]
    assert sorted(gone_from_source(posts, built)[0]) == ["posts/old/", "posts/recent/"]  # a build lists all


@pytest.mark.http
def test_only_404_and_410_prove_a_page_gone():
    import asyncio
    import http.server
    import socket
    import threading

    answers = {"/gone": 404, "/gone-for-good": 410, "/there": 200, "/down": 503, "/moved": 301}

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(answers[self.path])
            if self.path == "/moved":
                self.send_header("Location", "/there")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.socket() as closed:  # a port nobody listens on: no answer
        closed.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        said = asyncio.run(probe_public([base + path for path in answers] + [refused]))
    finally:
        server.shutdown()
        server.server_close()
    assert said[base + "/gone"] is None and said[base + "/gone-for-good"] is None
    assert said[base + "/there"] == "answered 200" and said[base + "/down"] == "answered 503"
    assert said[base + "/moved"] == "answered 200"  # a redirect to a page is a move, not a removal
    assert said[refused].startswith("no answer")


def test_in_the_sandbox_a_page_the_build_did_not_write_is_the_proof(tmp_path):
    (tmp_path / "posts" / "a").mkdir(parents=True)
    (tmp_path / "posts" / "a" / "index.html").write_text("<p>a</p>")
    said = probe_built_site(
        ["https://example.com/posts/a/", "https://example.com/posts/b/"], "https://example.com/", str(tmp_path)
    )
    assert said["https://example.com/posts/b/"] is None and said["https://example.com/posts/a/"] is not None
    assert probe_built_site(["https://example.com/posts/b/"], "https://example.com/", "") != {
        "https://example.com/posts/b/": None
    }  # no built site (a feed rehearsal): nothing proved


def situation(sends_left: int = 3, verify_only: bool = False) -> Situation:
    return Situation(
        at_most_once=True,
        repeat_safe=False,
        last_attempt=None,
        now=1000.0,
        settle=600.0,
        max_wait=300.0,
        sends_left=sends_left,
        verify_only=verify_only,
    )


@pytest.mark.parametrize(
    ("event", "step"),
    [
        (Kind.DONE, Step.READ),  # answered: a read of the copy proves it gone
        (Kind.GONE, Step.DELETED),
        (Presence.GONE, Step.DELETED),
        (Kind.AMBIGUOUS, Step.READ),
        (Presence.PRESENT, Step.SEND),
        (Presence.UNKNOWN, Step.HOLD),  # not proved to be this post's: not deleted
        (Presence.NOT_OURS, Step.REVIEW),
        (Kind.REFUSED, Step.FAIL),
        (Kind.AUTH, Step.STOP_LANE),
        (Kind.NOT_SENT, Step.RETRY),
    ],
)
def test_what_a_delete_does_after_each_event(event, step):
    assert decide_delete(event, situation()).step is step


def test_a_copy_still_there_with_no_tries_left_waits_for_the_next_run():
    action = decide_delete(Presence.PRESENT, situation(sends_left=0))
    assert action.step is Step.LEAVE and "the next run deletes it" in action.reason
