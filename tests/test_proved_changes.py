"""A post's life, proved (docs/design/protocol.md, "Every write proved"): an edit is done only when
a read of the copy shows the new text, a delete only when a read shows the copy gone; a service
that answers 200 and does not carry the change out leaves the pair *needs review*, named, and no
later run loops on it; a record that names another post's copy never changes that copy; a copy
its author withdrew by hand is not put back by an edit. Against the sandbox's emulators, each
fault a 200 with the body the real service answers, while nothing is done."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
from channel_specs import SPECS
from conftest import make_post
from test_channel_contracts import run
from test_hostile_deletes import KEPT, REMOVED, Life
from test_hostile_deletes import public as public  # a fixture
from test_hostile_deletes import record as removed_record

from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

pytestmark = pytest.mark.http

EDITING = ("mastodon", "bluesky", "matrix", "forem", "standard")
# The request of an edit, and a 200 its service would answer (ids filled in from the record).
EDIT_REQUEST = {
    "mastodon": "PUT /api/v1/statuses/",
    "bluesky": "com.atproto.repo.putRecord",
    "standard": "com.atproto.repo.putRecord",
    "matrix": "/send/m.room.message/",
    "forem": "PUT /api/articles/",
}
DELETE_REQUEST = {
    "mastodon": "DELETE /api/v1/statuses/",
    "bluesky": "com.atproto.repo.deleteRecord",
    "standard": "com.atproto.repo.deleteRecord",
    "matrix": "/redact/",
    "forem": "PUT /api/articles/",
}


def edit_answer(emulator: str, remote_id: str) -> dict:
    if emulator in ("bluesky", "standard"):
        return {"uri": remote_id, "cid": "bafyreih2y3rz6x5y6k3d5vli5mlvqk4zvnfsvpsx3y6v7ryb3nq5r4w5ea"}
    if emulator == "matrix":
        return {"event_id": "$edit-that-was-never-made"}
    return {"id": remote_id, "url": f"https://example.org/{remote_id}"}


def delete_answer(emulator: str, remote_id: str) -> dict:
    if emulator in ("bluesky", "standard"):
        return {}
    if emulator == "matrix":
        return {"event_id": "$redaction-that-was-never-made"}
    if emulator == "forem":
        return {"id": int(remote_id), "published": False}
    return {"id": remote_id}


@pytest.fixture(params=EDITING)
def emulator(request, sandbox, clock) -> str:
    sandbox.now = clock.time
    return str(request.param)


@pytest.fixture(params=["status", "undone_after"], ids=["a 200 of its own", "the service's 200, undone"])
def lie(request) -> str:
    """How the service says yes and does not: an injected 200 with the body the real service
    answers, or the emulator's own answer while its work is put back (the sandbox's `undone_after`)."""
    return str(request.param)


def said_yes(emulator: str, request_line: str, lie: str, body: dict) -> dict:
    if lie == "undone_after":
        return {"channel": emulator, "match": request_line, "action": "undone_after"}
    return {"channel": emulator, "match": request_line, "action": "status", "status": 200, "body": body}


def ledger_record(folder, key: str = "blog/post-1/"):
    return Ledger.read(folder / "ledger.yml").record(key, "ch")


def writes(sandbox, emulator: str, request: str) -> int:
    return sum(1 for r in sandbox.requests(emulator) if request in f"{r['method']} {r['path']}")


def by_hand(folder, key: str, decision: Decision):
    """What `mkdocs-syndicate resolve KEY ch --retry/--done` writes; the record it made."""
    with Ledger.open_for_writing(folder / "ledger.yml") as ledger:
        made = resolved(f"({key}, ch)", ledger.record(key, "ch"), decision, "2026-12-07T06:00:00Z", "by hand")
        assert not isinstance(made, str), made
        entry = ledger.posts[key]
        ledger.apply([Transition(PostRef(key, entry.url, entry.title), "ch", made)], by_hand=True)
    return made


def test_an_edit_answered_200_but_not_made_needs_review_and_is_not_retried(tmp_path, sandbox, clock, emulator, lie):
    raw = SPECS[emulator].raw(sandbox)
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    before = ledger_record(tmp_path)
    assert before is not None and before.remote_id
    fixed = dataclasses.replace(one, description="A corrected summary.")
    sandbox.add_fault(said_yes(emulator, EDIT_REQUEST[emulator], lie, edit_answer(emulator, before.remote_id)))
    report, _ = run(tmp_path, raw, [fixed], clock)
    (result,) = report.results
    assert result.needs_review and not result.ok, result
    assert "needs review" in result.detail and "old text" in result.detail, result.detail
    held = ledger_record(tmp_path)
    assert held is not None and held.review and held.remote_id == before.remote_id
    assert held.state != State.DONE  # not `done (updated)`: nothing proved the edit
    # The next run sends nothing for it, and says it again: it does not loop, and it is not silent.
    asked = writes(sandbox, emulator, EDIT_REQUEST[emulator])
    again, _ = run(tmp_path, raw, [fixed], clock)
    assert [r.needs_review for r in again.results] == [True], again.results
    assert writes(sandbox, emulator, EDIT_REQUEST[emulator]) == asked


def test_a_delete_answered_200_but_not_made_needs_review_and_the_copy_stays_named(
    tmp_path, sandbox, clock, public, emulator, lie
):
    life = Life(tmp_path, sandbox, clock, public, emulator)
    copy = removed_record(tmp_path)
    assert copy is not None and copy.remote_id
    sandbox.add_fault(said_yes(emulator, DELETE_REQUEST[emulator], lie, delete_answer(emulator, copy.remote_id)))
    report, _ = life.run()
    (result,) = report.results
    assert result.needs_review and not result.ok, result
    held = removed_record(tmp_path)
    assert held is not None and held.state != State.DELETED and held.review, held
    assert not life.copy_gone()  # still public, and the ledger does not say otherwise
    asked = len(life.asked())
    again, _ = life.run()
    assert [r.needs_review for r in again.results] == [True] and len(life.asked()) == asked


def test_an_edit_never_changes_another_posts_copy(tmp_path, sandbox, clock, emulator):
    """A merge slip: post 1's record is a copy of post 2's. The edit of post 1 reads the copy,
    sees it links to post 2, and changes nothing; the run names both posts and exits non-zero."""
    raw = SPECS[emulator].raw(sandbox)
    one, two = make_post(1), make_post(2)
    run(tmp_path, raw, [one, two], clock)
    ledger = Ledger.read(tmp_path / "ledger.yml")
    theirs = ledger.record(two.key, "ch")
    assert theirs is not None
    ours = ledger.record(one.key, "ch")
    assert ours is not None and ours.remote_id and theirs.remote_id
    _swap_record(tmp_path, one.key, two.key)  # post 1's record names post 2's copy
    assert ledger_record(tmp_path).remote_id == theirs.remote_id
    asked = writes(sandbox, emulator, EDIT_REQUEST[emulator])
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled"), two], clock)
    (result,) = [r for r in report.results if r.post_key == one.key]
    assert result.needs_review and not result.ok, result
    assert two.url in result.detail and one.url in result.detail, result.detail
    assert writes(sandbox, emulator, EDIT_REQUEST[emulator]) == asked


def test_a_removal_never_deletes_another_posts_copy(tmp_path, sandbox, clock, public, emulator):
    life = Life(tmp_path, sandbox, clock, public, emulator)
    _swap_record(tmp_path, REMOVED, KEPT)  # the removed post's record names the kept post's copy
    report, _ = life.run()
    (result,) = report.results
    assert result.needs_review and "another post's copy" in result.detail, result
    assert life.asked() == []  # no delete request at all
    kept = Ledger.read(tmp_path / "ledger.yml").record(KEPT, "ch")
    assert kept is not None and kept.state == State.DONE


def test_an_article_its_author_unpublished_is_not_published_again_by_an_edit(tmp_path, sandbox, clock):
    raw = SPECS["forem"].raw(sandbox)
    sandbox.now = clock.time
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    made = ledger_record(tmp_path)
    assert made is not None and made.remote_id
    headers = {"api-key": raw["api_key"], "Accept": "application/vnd.forem.api-v1+json"}
    httpx.put(
        f"{raw['api']}/articles/{made.remote_id}", json={"article": {"published": False}}, headers=headers
    ).raise_for_status()
    asked = writes(sandbox, "forem", "PUT /api/articles/")
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    (result,) = report.results
    assert result.state == "deleted" and "not made again" in result.detail, result
    assert writes(sandbox, "forem", "PUT /api/articles/") == asked  # no edit: it stays unpublished
    (article,) = sandbox.snapshot()["forem"]["articles"]
    assert article["published"] is False
    again, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled twice")], clock)
    assert again.results == [] and writes(sandbox, "forem", "PUT /api/articles/") == asked


def test_resolve_retry_lets_the_next_run_make_the_edit_and_prove_it(tmp_path, sandbox, clock):
    raw = SPECS["mastodon"].raw(sandbox)
    sandbox.now = clock.time
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    before = ledger_record(tmp_path)
    assert before is not None and before.remote_id
    fixed = dataclasses.replace(one, description="A corrected summary.")
    answer = edit_answer("mastodon", before.remote_id)
    sandbox.add_fault(
        {"channel": "mastodon", "match": "PUT /api/v1/statuses/", "action": "status", "status": 200, "body": answer}
    )
    run(tmp_path, raw, [fixed], clock)
    made = by_hand(tmp_path, one.key, Decision("retry"))
    assert made.review is None and made.state == State.IN_FLIGHT  # the next run reads the copy first
    report, _ = run(tmp_path, raw, [fixed], clock)
    assert [(r.state, r.detail) for r in report.results] == [("done", "updated (proved by a read of the copy)")]
    (status,) = sandbox.snapshot()["mastodon"]["statuses"]
    assert "A corrected summary." in status["text"]


def _swap_record(folder, into: str, source: str) -> None:
    """The ledger with `into`'s record for channel ch replaced by `source`'s: a bad merge."""
    from mkdocs_syndicate.ledger.format import dump

    ledger = Ledger.read(folder / "ledger.yml")
    posts = ledger.posts
    posts[into].channels["ch"] = posts[source].channels["ch"]
    (folder / "ledger.yml").write_text(dump(posts), encoding="utf-8")


@pytest.mark.parametrize(
    ("emulator", "hand", "request_line"),
    [("forem", "unpublish", "PUT /api/articles/"), ("mastodon", "delete", "PUT /api/v1/statuses/")],
)
def test_a_copy_withdrawn_by_hand_just_before_the_edit_is_not_put_back(
    tmp_path, sandbox, clock, emulator, hand, request_line
):
    """The author withdraws the copy between the read that proves it this post's and the edit
    (the sandbox's `by_hand_before`): the edit does not publish or make it again; the pair is
    recorded deleted, said once, and no later run touches it."""
    sandbox.now = clock.time
    raw = SPECS[emulator].raw(sandbox)
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    sandbox.add_fault({"channel": emulator, "match": request_line, "action": "by_hand_before", "hand": hand})
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    (result,) = report.results
    assert result.state == "deleted" and "not made again" in result.detail, result
    state = sandbox.snapshot()[emulator]
    if emulator == "forem":
        (article,) = state["articles"]
        assert article["published"] is False  # still the author's draft
    else:
        assert state["statuses"] == []
    asked = writes(sandbox, emulator, request_line)
    again, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled twice")], clock)
    assert again.results == [] and writes(sandbox, emulator, request_line) == asked


ELSEWHERE = "https://essays.example.net/on-harbours/"


def _own_article_elsewhere(sandbox, raw) -> str:
    """An article the author wrote on DEV about a page of another site (not announced by us)."""
    headers = {"api-key": raw["api_key"], "Accept": "application/vnd.forem.api-v1+json"}
    body = {"article": {"title": "On harbours", "body_markdown": "An essay.", "published": True}}
    body["article"]["canonical_url"] = ELSEWHERE
    made = httpx.post(f"{raw['api']}/articles", json=body, headers=headers)
    made.raise_for_status()
    return str(made.json()["id"])


def _point_at(folder, key: str, remote_id: str) -> None:
    """The ledger with `key`'s record naming the copy `remote_id` (a hand edit's slip)."""
    from mkdocs_syndicate.ledger.format import dump

    posts = Ledger.read(folder / "ledger.yml").posts
    channels = posts[key].channels
    channels["ch"] = dataclasses.replace(channels["ch"], remote_id=remote_id)
    (folder / "ledger.yml").write_text(dump(posts), encoding="utf-8")


def test_an_edit_never_changes_an_article_about_another_page(tmp_path, sandbox, clock):
    """DEV names the page an article is about (its canonical URL): the record's article is about
    a page of another site, so it is not this post's copy, whatever its text links to."""
    sandbox.now = clock.time
    raw = SPECS["forem"].raw(sandbox)
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    _point_at(tmp_path, one.key, _own_article_elsewhere(sandbox, raw))
    asked = writes(sandbox, "forem", EDIT_REQUEST["forem"])
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    (result,) = report.results
    assert result.needs_review and not result.ok, result
    assert ELSEWHERE in result.detail and one.url in result.detail, result.detail
    assert writes(sandbox, "forem", EDIT_REQUEST["forem"]) == asked
    (essay,) = [a for a in sandbox.snapshot()["forem"]["articles"] if a["canonical_url"] == ELSEWHERE]
    assert essay["title"] == "On harbours" and essay["published"] is True


def test_a_removal_never_unpublishes_an_article_about_another_page(tmp_path, sandbox, clock, public):
    sandbox.now = clock.time
    essay_id = _own_article_elsewhere(sandbox, SPECS["forem"].raw(sandbox))
    life = Life(tmp_path, sandbox, clock, public, "forem")
    _point_at(tmp_path, REMOVED, essay_id)
    report, _ = life.run()
    (result,) = report.results
    assert result.needs_review and ELSEWHERE in result.detail, result
    assert life.asked() == []
    (essay,) = [a for a in sandbox.snapshot()["forem"]["articles"] if a["canonical_url"] == ELSEWHERE]
    assert essay["published"] is True


def test_an_edit_never_changes_a_bluesky_post_whose_card_is_another_page(tmp_path, sandbox, clock):
    """A Bluesky post's link card names the page it is about: the author's own post with a card
    for another site's page is not this post's copy, though its text links nowhere."""
    sandbox.now = clock.time
    raw = SPECS["bluesky"].raw(sandbox)
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    session = httpx.post(
        f"{sandbox.url}/bluesky/xrpc/com.atproto.server.createSession",
        json={"identifier": raw["handle"], "password": raw["app_password"]},
    ).json()
    card = {
        "$type": "app.bsky.embed.external",
        "external": {"uri": ELSEWHERE, "title": "On harbours", "description": ""},
    }
    record = {"$type": "app.bsky.feed.post", "text": "Worth a read", "createdAt": "2026-12-04T00:00:00.000Z"}
    made = httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.createRecord",
        headers={"Authorization": f"Bearer {session['accessJwt']}"},
        json={"repo": session["did"], "collection": "app.bsky.feed.post", "record": {**record, "embed": card}},
    )
    made.raise_for_status()
    _point_at(tmp_path, one.key, made.json()["uri"])
    asked = writes(sandbox, "bluesky", EDIT_REQUEST["bluesky"])
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    (result,) = report.results
    assert result.needs_review and ELSEWHERE in result.detail and one.url in result.detail, result
    assert writes(sandbox, "bluesky", EDIT_REQUEST["bluesky"]) == asked


def test_a_channel_that_makes_drafts_edits_its_draft(tmp_path, sandbox, clock):
    """`published: false`: the copy is a draft, which DEV's public read does not show (it was
    recorded deleted by the first edit, and never edited again). An edit reads it among the
    author's drafts and edits it, still a draft."""
    sandbox.now = clock.time
    raw = SPECS["forem"].raw(sandbox, published=False)
    one = make_post(1)
    run(tmp_path, raw, [one], clock)
    report, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    assert [(r.state, r.detail) for r in report.results] == [("done", "updated (proved by a read of the copy)")]
    articles = sandbox.snapshot()["forem"]["articles"]
    assert [(a["title"], a["published"]) for a in articles] == [("Post 1, retitled", False)]
    again, _ = run(tmp_path, raw, [dataclasses.replace(one, title="Post 1, retitled")], clock)
    assert again.results == []
