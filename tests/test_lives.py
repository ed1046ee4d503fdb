"""A post announced anew after its copy was deleted is a new life, under new client-chosen ids.

Measured against Synapse 1.163.2 and the emulator alike: a Matrix transaction id derived from the
pair alone is answered, for a day, with the event it first made, even once that event is redacted.
So a post removed and announced again (`resolve --retry` on its deleted record) was recorded
`done` with the old, redacted event, and the room showed nothing; and a second removal's
redaction, under the first one's transaction id, was answered with the first redaction and left
the new message up while the ledger said `deleted`. Mastodon answers a replayed key of a deleted
status with 404 for up to an hour. Every id a client chooses is now derived from (site, post,
channel, part, life) (content/identity.py `client_id`, `Record.life`).

In-process runs over real HTTP against the emulators; the site's pages from a server on
127.0.0.1 asked as the HTTP proxy, so a removal is proved by its page answering 404."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from crashlab import PublicSite
from test_hostile_deletes import KEPT, REMOVED, SITE, Life, post, record, run

from mkdocs_syndicate.content.identity import client_id
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

pytestmark = pytest.mark.http

# The channels whose ids a client chooses (DEV finds its article by canonical URL, IndexNow pings).
CHOOSING = ["mastodon", "bluesky", "standard", "matrix"]


@pytest.fixture
def public(monkeypatch) -> Iterator[PublicSite]:
    site = PublicSite({"/" + KEPT, "/" + REMOVED})
    for name, value in site.env.items():
        monkeypatch.setenv(name, value)
    yield site
    site.close()


def live_copies(life: Life) -> int:
    """Copies of the removed post the service shows now (not deleted, not redacted)."""
    state, url = life.sandbox.snapshot(), SITE + REMOVED
    if life.emulator == "mastodon":
        return len([s for s in state["mastodon"]["statuses"] if url in s["text"]])
    if life.emulator == "bluesky":
        return len([r for r in state["bluesky"]["records"].values() if url in str(r["value"])])
    if life.emulator == "standard":
        documents = state["standard"].get("collections", {}).get("site.standard.document", {})
        return len([r for r in documents.values() if r["value"].get("path") == "/" + REMOVED])
    received = life.sandbox.emulators["matrix"].received(state["matrix"], "")
    return len([m for m in received if m["announces"] == url])


def announce_again(folder) -> Record:
    """`mkdocs-syndicate resolve --retry` on the deleted pair, as the command writes it."""
    ledger = Ledger.open_for_writing(folder / "ledger.yml")
    try:
        current = ledger.record(REMOVED, "ch")
        assert current is not None and current.state == State.DELETED, current
        again = resolved(f"({REMOVED}, ch)", current, Decision("retry"), "2026-12-07T00:00:00Z", "by hand")
        assert isinstance(again, Record)
        ledger.apply([Transition(PostRef(REMOVED, SITE + REMOVED, "Post 2"), "ch", again)], by_hand=True)
    finally:
        ledger.close()
    return again


@pytest.mark.parametrize("emulator", CHOOSING)
def test_a_post_removed_then_announced_again_gets_a_new_copy_and_its_second_removal_deletes_it(
    tmp_path, sandbox, clock, public, emulator
):
    sandbox.now = clock.time
    life = Life(tmp_path, sandbox, clock, public, emulator)
    first = record(tmp_path)
    assert first is not None and first.life is None
    report, _ = life.run()  # the page answers 404: its copy is deleted
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert live_copies(life) == 0

    again = announce_again(tmp_path)
    assert (again.life, again.idempotency_key, again.remote_id) == (1, None, None)
    public.live.add("/" + REMOVED)
    report, _ = run(tmp_path, life.settings, clock, [post(KEPT), post(REMOVED)])
    second = record(tmp_path)
    assert second is not None and second.state == State.DONE, (second, report.results)
    assert second.life == 1 and second.remote_id != first.remote_id, (first, second)
    assert second.idempotency_key != first.idempotency_key
    assert live_copies(life) == 1, "announced again, the service must show the post again"

    life.mark = len(sandbox.requests(emulator))  # from here on, no create
    public.live.discard("/" + REMOVED)  # removed a second time: the new copy goes too
    report, _ = life.run()
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert live_copies(life) == 0, "the ledger says deleted: the second life's copy must be gone"


@pytest.mark.unit
def test_the_first_lifes_ids_are_unchanged_and_every_later_life_has_its_own():
    """Existing ledgers keep their ids: the first life's digest is the one written before lives."""
    url, channel = "https://example.com/blog/post/", "masto"
    before = hashlib.sha256(f"mkdocs-syndicate:mastodon-idempotency:{url}\n{channel}".encode()).hexdigest()
    assert client_id(url, channel, "mastodon-idempotency") == before
    assert client_id(url, channel, "mastodon-idempotency", 0) == before
    assert len({client_id(url, channel, "mastodon-idempotency", n) for n in range(5)}) == 5


@pytest.mark.unit
def test_a_new_life_counts_up_and_carries_nothing_of_the_deleted_copy():
    gone = Record(State.DONE, 2, "2026-12-01T00:00:00Z", remote_id="1", idempotency_key="k", life=2)
    gone = gone.gone("2026-12-02T00:00:00Z", "deleted")
    assert gone.life == 2  # a deleted record keeps the life whose copy it names
    new = gone.new_life("2026-12-03T00:00:00Z", "again")
    assert (new.state, new.life, new.remote_id, new.idempotency_key, new.created_at) == (
        State.FAILED,
        3,
        None,
        None,
        None,
    )
