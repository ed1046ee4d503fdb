"""A post's lives in a room on Synapse itself (issue 49 item 5): announced, removed (redacted),
announced again with `resolve --retry` (a new life, under new transaction ids), the room shows
it again, and a second removal redacts the second life's message. And a send Synapse answers
with an event it made earlier under the same transaction id, since redacted (its table keeps
the id for a day): not done, its copy recorded gone, and a new life shows the post."""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from conftest import make_post
from test_realserver_matrix import raw, run

from mkdocs_syndicate.channels.matrix import MARKER
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-synapse-lives")]


@pytest.fixture(scope="module")
def synapse(tmp_path_factory):
    from realserver_synapse import start_synapse

    yield from start_synapse(tmp_path_factory.mktemp("synapse-lives"))


@pytest.fixture
def public(monkeypatch):
    import realserver_child

    yield from realserver_child.public_pages(monkeypatch)


def record(folder: Path, key: str) -> Record:
    found = Ledger.read(folder / "ledger.yml").record(key, "mx")
    assert found is not None
    return found


def retry(folder: Path, key: str, url: str) -> Record:
    """`mkdocs-syndicate resolve --retry` on the pair, as the command writes it."""
    ledger = Ledger.open_for_writing(folder / "ledger.yml")
    try:
        current = ledger.record(key, "mx")
        assert current is not None and current.state == State.DELETED, current
        again = resolved(f"({key}, mx)", current, Decision("retry"), "2026-12-07T00:00:00Z", "by hand")
        assert isinstance(again, Record)
        ledger.apply([Transition(PostRef(key, url, "Post"), "mx", again)], by_hand=True)
    finally:
        ledger.close()
    return again


def visible(synapse, event_id: str | None) -> bool:
    """The event is in the room, not redacted, with our marker: the room shows the post."""
    assert event_id
    event = synapse.event(event_id).json()
    return "redacted_because" not in event.get("unsigned", {}) and MARKER in event.get("content", {})


def test_a_post_announced_again_after_its_redaction_is_shown_and_its_second_removal_redacts_it(
    synapse, tmp_path, public
):
    site = Site(f"http://lives-{uuid.uuid4().hex[:8]}.example/", "Lives")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 2))
    public.live.update({"/blog/post-1/", "/blog/post-2/"})
    channel = raw(synapse, removals="delete")
    assert not run(tmp_path, channel, [kept, removed], site=site).undone
    first = record(tmp_path, removed.key)
    public.live.discard("/blog/post-2/")
    report = run(tmp_path, channel, [kept], site=site)
    assert [r.state for r in report.results] == ["deleted"] and not visible(synapse, first.remote_id)

    retry(tmp_path, removed.key, removed.url)
    public.live.add("/blog/post-2/")
    report = run(tmp_path, channel, [kept, removed], site=site)
    second = record(tmp_path, removed.key)
    assert second.state == State.DONE and second.life == 1, (second, report.results)
    assert second.remote_id != first.remote_id and visible(synapse, second.remote_id), "the room must show it again"

    public.live.discard("/blog/post-2/")
    report = run(tmp_path, channel, [kept], site=site)
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert not visible(synapse, second.remote_id), "the ledger says deleted: the second life's message must go"


def test_a_send_synapse_answers_with_its_redacted_event_is_not_done(synapse, tmp_path):
    """The ledger restored from a backup taken before the send; the message was redacted by its
    author meanwhile. Synapse answers the pair's transaction id with that event: the read of it
    says redacted, so the pair is `deleted` (naming it), never `done`; a new life shows it."""
    site = Site(f"http://answered-{uuid.uuid4().hex[:8]}.example/", "Answered")
    post = make_post(3, url=f"{site.url}blog/post-3/")
    assert not run(tmp_path, raw(synapse), [post], site=site).undone
    first = record(tmp_path, post.key)
    room, event = quote(synapse.room_id, safe=""), quote(str(first.remote_id), safe="")
    by_hand = httpx.put(
        synapse.client(f"/rooms/{room}/redact/{event}/by-hand-{uuid.uuid4().hex}"),
        json={},
        headers=synapse.users["alice"].auth,
    )
    assert by_hand.status_code == 200, by_hand.text
    (tmp_path / "ledger.yml").unlink()

    report = run(tmp_path, raw(synapse), [post], site=site)
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert record(tmp_path, post.key).remote_id == first.remote_id

    retry(tmp_path, post.key, post.url)
    report = run(tmp_path, raw(synapse), [post], site=site)
    again = record(tmp_path, post.key)
    assert again.state == State.DONE and again.life == 1 and visible(synapse, again.remote_id), report.results
