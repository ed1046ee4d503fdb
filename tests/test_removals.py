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


# ---------------------------------------------------------------- the author's intent (issue 50)


def sourced(key: str, src: str) -> PostEntry:
    found = entry(key)
    found.src = src
    return found


def test_each_post_no_longer_announced_is_judged_by_what_the_build_has_of_its_page():
    from mkdocs_syndicate.content.pages import PageFacts, SitePages
    from mkdocs_syndicate.engine.intent import Source, intents

    names = ("listed", "draft-listed", "gone", "draft", "flagged", "opted-out", "not-a-post", "off-listed")
    posts = {f"posts/{name}/": sourced(f"posts/{name}/", f"posts/{name}.md") for name in names}
    present = [
        make_post(1, key="posts/listed/", src="posts/listed.md"),
        make_post(2, key="posts/draft-listed/", src="posts/draft-listed.md", draft=True),
        make_post(3, key="posts/off-listed/", src="posts/off-listed.md", opted_out=True),
    ]
    pages = SitePages(
        (
            PageFacts("posts/listed.md", "posts/listed/", post=True),
            PageFacts("posts/draft-listed.md", "posts/draft-listed/", draft=True, post=True),
            PageFacts("posts/draft.md", "posts/draft/", built=False, draft=True, post=True),  # Material's
            PageFacts("posts/flagged.md", "posts/flagged/", removed=True),
            PageFacts("posts/opted-out.md", "posts/opted-out/", opted_out=True),
            PageFacts("posts/not-a-post.md", "posts/not-a-post/"),  # the posts: globs no longer take it
            PageFacts("posts/off-listed.md", "posts/off-listed/", opted_out=True, post=True),
        )
    )
    found, note = intents(posts, present, pages)
    assert note == ""
    assert {intent.key: intent.state for intent in found} == {
        "posts/draft-listed/": Source.DRAFT,
        "posts/gone/": Source.GONE,
        "posts/draft/": Source.DRAFT,
        "posts/flagged/": Source.FLAGGED,
        "posts/opted-out/": Source.OPTED_OUT,
        "posts/not-a-post/": Source.NOT_A_POST,
        "posts/off-listed/": Source.OPTED_OUT,
    }
    removals = sorted(intent.key for intent in found if intent.removal)
    assert removals == ["posts/draft-listed/", "posts/draft/", "posts/flagged/", "posts/gone/"]
    unknown, _ = intents(posts, present, SitePages(known=False))  # a saved build without its pages
    assert {i.key: i.state for i in unknown if i.key == "posts/gone/"} == {"posts/gone/": Source.UNKNOWN}
    assert not [i for i in unknown if i.state is Source.UNKNOWN and i.removal]


def test_only_the_authors_own_acts_remove_a_post():
    from mkdocs_syndicate.engine.intent import FATES, Source

    removals = {state for state, fate in FATES.items() if fate.removal}
    assert removals == {Source.GONE, Source.DRAFT, Source.FLAGGED, Source.FEED_GONE}


def test_syndicate_removed_in_front_matter_is_read_as_no_announcement():
    from mkdocs_syndicate.content.posts import parse_syndicate_meta

    assert parse_syndicate_meta("removed", "docs/posts/b.md") == (False, {})


def test_a_new_post_at_a_removed_posts_key_is_a_new_life_and_the_old_one_back_is_not():
    from mkdocs_syndicate.engine.lives import new_lives, with_new_lives

    class Masto:
        id = "masto"

    deleted = Record(State.DELETED, 1, "2026-11-22T10:00:00Z", remote_id="1", created_at="2026-11-21T10:00:00Z")
    posts = {"posts/b/": PostEntry(url="https://example.com/posts/b/", title="Beta", channels={"masto": deleted})}

    def lives(**post):
        return new_lives(posts, [make_post(1, key="posts/b/", **post)], [Masto()], lambda _: True)  # type: ignore[list-item]

    assert lives(title="Beta", date=dt.datetime(2026, 11, 20, tzinfo=dt.UTC)) == []  # restored: resolve --retry
    (retitled,) = lives(title="Another", date=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))
    assert "titled 'Another'" in retitled.why and retitled.life == 1
    (later,) = lives(title="Beta", date=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    assert "after the removed post was first announced" in later.why
    started = with_new_lives(posts, [later], "2026-12-02T10:00:00Z")["posts/b/"].channels["masto"]
    assert started.state == State.FAILED and started.life == 1 and started.remote_id is None
    assert posts["posts/b/"].channels["masto"] is deleted  # the ledger's own posts untouched


@pytest.mark.http
def test_the_web_says_gone_only_twice_and_with_the_home_page_up():
    import asyncio
    import http.server
    import threading

    from mkdocs_syndicate.net.witness import witness

    scripts = {"/gone": [404, 410], "/glitch": [404, 200], "/there": [200, 200], "/": [200]}

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(scripts[self.path].pop(0))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    slept: list[float] = []

    async def sleep(seconds: float, reason: str) -> None:
        slept.append(seconds)

    def ask(paths: list[str]) -> dict:
        return asyncio.run(witness([base + p for p in paths], base + "/", recheck=30.0, sleep=sleep))

    try:
        words = ask(["/gone", "/glitch", "/there"])
        assert slept == [30.0]  # one wait for all of them
        assert words[base + "/gone"].gone and "answered 404, then 410 30 s later" in words[base + "/gone"].said
        assert not words[base + "/glitch"].gone and "a passing 404 proves nothing" in words[base + "/glitch"].said
        assert not words[base + "/there"].gone and words[base + "/there"].said.endswith("answered 200")
        scripts.update({"/gone": [404, 404], "/": [503]})
        down = ask(["/gone"])[base + "/gone"]
        assert not down.gone and "home page" in down.said and "answered 503" in down.said
        scripts.update({"/there": [200]})
        ask(["/there"])
        assert slept == [30.0, 30.0]  # nothing answered 404: no wait, no second read
    finally:
        server.shutdown()
        server.server_close()
