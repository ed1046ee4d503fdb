"""What an edit or a delete does after a read of the copy, once the service answered it as made
(policy.decide_update / decide_delete with `answered`): a read proves it, and a read that shows
otherwise is a service that said yes and did not: a person decides, and no run loops on it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mkdocs_syndicate.channels.base import Copy, Kind, Presence
from mkdocs_syndicate.engine.policy import Situation, Step, decide_delete, decide_update

pytestmark = pytest.mark.unit

# A change of an earlier run whose outcome is unknown (one request recorded), and one just answered.
BEFORE = Situation(
    at_most_once=True,
    repeat_safe=False,
    last_attempt=None,
    now=1000.0,
    settle=600.0,
    max_wait=300.0,
    sends_left=3,
    attempts=1,
)
ANSWERED = replace(BEFORE, answered=True)


@pytest.mark.parametrize(
    ("event", "before", "after"),
    [
        (Kind.DONE, Step.READ, Step.READ),  # a 200 is not yet an edit: the read proves it
        (Kind.ACCEPTED, Step.READ, Step.READ),
        (Copy.MATCHES, Step.DONE, Step.DONE),
        (Copy.DIFFERS, Step.SEND, Step.REVIEW),  # answered yes, still the old text
        (Copy.NOT_OURS, Step.REVIEW, Step.REVIEW),  # another post's copy: never changed
        (Copy.UNKNOWN, Step.HOLD, Step.LEAVE),  # not proved this post's: no change; after one, read next run
        (Copy.GONE, Step.DELETED, Step.DELETED),  # deleted by its author: never made again
    ],
)
def test_an_edit_is_done_only_when_a_read_shows_the_new_text(event, before, after):
    assert decide_update(event, BEFORE).step is before
    assert decide_update(event, ANSWERED).step is after


@pytest.mark.parametrize(
    ("event", "before", "after"),
    [
        (Kind.DONE, Step.READ, Step.READ),
        (Presence.GONE, Step.DELETED, Step.DELETED),
        (Presence.PRESENT, Step.SEND, Step.REVIEW),  # answered yes, still public
        (Presence.NOT_OURS, Step.REVIEW, Step.REVIEW),
        (Presence.UNKNOWN, Step.HOLD, Step.LEAVE),
    ],
)
def test_a_delete_is_done_only_when_a_read_shows_the_copy_gone(event, before, after):
    assert decide_delete(event, BEFORE).step is before
    assert decide_delete(event, ANSWERED).step is after


def test_a_review_is_said_as_one():
    action = decide_update(Copy.DIFFERS, ANSWERED)
    assert action.needs_review and "shows its old text" in action.reason and "resolve" in action.reason


def test_a_channel_that_cannot_read_its_copies_is_taken_on_its_answer():
    blind = replace(BEFORE, reads_copies=False, reads_presence=False)
    assert decide_update(Kind.DONE, blind).step is Step.DONE
    assert "cannot read its copies" in decide_update(Kind.DONE, blind).reason
    assert decide_delete(Kind.DONE, blind).step is Step.DONE


def test_the_read_before_a_change_lets_it_go_once_the_copy_is_this_posts():
    intent = replace(BEFORE, attempts=0)  # the change's in_flight record, no request made yet
    assert decide_update(Copy.MATCHES, intent).step is Step.SEND  # a read does not compare a thumbnail
    assert decide_update(Copy.DIFFERS, intent).step is Step.SEND
    assert decide_delete(Presence.PRESENT, intent).step is Step.SEND
    assert decide_update(Copy.NOT_OURS, intent).step is Step.REVIEW
    assert decide_update(Copy.GONE, intent).step is Step.DELETED  # deleted by its author: not made again
    assert decide_update(Copy.UNKNOWN, intent).step is Step.HOLD


def test_resolve_clears_a_review_and_says_what_the_person_saw():
    from mkdocs_syndicate.errors import SyndicateError
    from mkdocs_syndicate.ledger.resolution import Decision, resolved
    from mkdocs_syndicate.ledger.schema import Record, State

    held = Record(
        State.IN_FLIGHT, 1, "2026-12-07T06:00:00Z", remote_id="1", message_sha256="new", op="update", review="x"
    )
    retry = resolved("(p, ch)", held, Decision("retry"), "2026-12-07T07:00:00Z", "by hand")
    assert not isinstance(retry, str) and retry.review is None and retry.state == State.IN_FLIGHT
    done = resolved("(p, ch)", held, Decision("done"), "2026-12-07T07:00:00Z", "by hand")
    assert not isinstance(done, str) and done.state == State.DONE and done.message_sha256 == "new"
    gone = resolved("(p, ch)", replace(held, op="delete"), Decision("done"), "2026-12-07T07:00:00Z", "by hand")
    assert not isinstance(gone, str) and gone.state == State.DELETED and gone.remote_id == "1"
    with pytest.raises(SyndicateError, match="cannot be skipped"):
        resolved("(p, ch)", held, Decision("skip"), "2026-12-07T07:00:00Z", "by hand")


def test_a_send_answered_for_an_id_sent_before_is_read_back_before_it_counts():
    """Synapse answers a transaction id it remembers with the event it made then (for a day, a
    redacted one too): a replayed at-most-once send's 200 is read back first, and a read that then
    cannot find what the service answered with is for a person, never a second send."""
    from mkdocs_syndicate.channels.base import Found
    from mkdocs_syndicate.engine.policy import decide

    first = replace(BEFORE, attempts=1)
    replayed = replace(BEFORE, attempts=2, replay=True)  # as engine/situations.py says it
    assert decide(Kind.DONE, first).step is Step.DONE
    assert decide(Kind.DONE, replayed).step is Step.READ
    assert decide(Kind.DONE, replace(replayed, repeat_safe=True)).step is Step.DONE  # a repeat is a no-op (Bluesky)
    absent = decide(Found.ABSENT, replace(replayed, answered=True, last_attempt=0.0))
    assert absent.step is Step.REVIEW and absent.needs_review


@pytest.mark.parametrize(
    ("about", "whose"),
    [
        ("https://essays.example.net/on-harbours/", "a copy of another site's page"),
        ("http://example.com/blog/post-2/", "another post's copy"),
        ("https://dev.to/someone/on-harbours-4aca", "a copy of another site's page"),
    ],
)
def test_a_copy_about_another_page_by_the_services_own_field_is_not_this_posts(about, whose):
    """The page a copy is about by a field of the service's own (DEV's canonical URL, a Bluesky
    card) decides alone, though the copy's text links to this post or to no page of the site."""
    from conftest import make_post

    from mkdocs_syndicate.channels.base import Seen
    from mkdocs_syndicate.engine.proof import judged

    post = make_post(1)
    seen = Seen(Presence.PRESENT, links=(post.url,), about=about)
    found, why = judged(seen, post, Presence.UNKNOWN, Presence.NOT_OURS)
    assert found is Presence.NOT_OURS and about in why and post.url in why and whose in why, why


def test_a_copy_about_this_posts_page_now_or_before_a_move_is_this_posts():
    from conftest import make_post

    from mkdocs_syndicate.channels.base import Seen
    from mkdocs_syndicate.engine.proof import judged

    moved = replace(
        make_post(1, url="http://example.com/blog/post-1-renamed/"), former_urls=("http://example.com/blog/post-1/",)
    )
    for about in ("http://example.com/blog/post-1-renamed/", "https://example.com/blog/post-1/index.html"):
        assert judged(Seen(Copy.DIFFERS, about=about), moved, Copy.UNKNOWN, Copy.NOT_OURS) == (Copy.DIFFERS, "")


def test_a_copy_its_author_withdrew_while_the_post_stayed_is_never_a_new_life():
    """An edit found the copy gone (recorded with the WITHDRAWN note): a later run that sees the
    post retitled does not take it for a new post at a removed post's URL and announce it again.
    A copy a removal deleted is still a new life's, as engine/lives.py decides."""
    from types import SimpleNamespace

    from conftest import make_post

    from mkdocs_syndicate.engine.lives import new_lives
    from mkdocs_syndicate.ledger.schema import WITHDRAWN, PostEntry, Record, State

    post = make_post(1, title="Post 1, retitled")
    copy = Record(State.DONE, 1, "2026-01-01T00:00:00Z", remote_id="1", created_at="2026-01-01T00:00:00Z")
    by_hand = copy.gone("2026-12-07T00:00:00Z", f"{WITHDRAWN}: the copy was deleted on the service; not made again")
    removed = copy.gone("2026-12-07T00:00:00Z", "deleted (proved by a read of the copy)")
    assert by_hand.withdrawn and not removed.withdrawn
    channel = SimpleNamespace(id="ch")
    for record, lives in ((by_hand, 0), (removed, 1)):
        posts = {post.key: PostEntry(url=post.url, title="Post 1", channels={"ch": record})}
        found = new_lives(posts, [post], [channel], lambda record: True)  # type: ignore[list-item]
        assert len(found) == lives, found
