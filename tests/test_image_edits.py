"""A post's image through its copy's life (docs/changes.md, "A post's image in an edit"), against
the sandbox's emulators: an upgrade that derives an image from an unchanged post edits nothing;
an edit records the upload it made and names it; a Mastodon edit carries the alt text as the
author has it now."""

from __future__ import annotations

from dataclasses import replace

import pytest
from channel_specs import SPECS
from conftest import make_post
from test_image_channels import ALT, SITE_URL, png, record, run

from mkdocs_syndicate.errors import LaneCrashed

pytestmark = pytest.mark.http

IMAGE = f"{SITE_URL}img/cover.png"


@pytest.fixture(autouse=True)
def shared_clock(sandbox, clock):
    sandbox.now = clock.time


def calls(sandbox, channel: str, method: str, path: str) -> int:
    return sum(1 for r in sandbox.requests(channel) if r["method"] == method and r["path"].endswith(path))


def stored_value(sandbox) -> dict:
    (stored,) = sandbox.snapshot()["bluesky"]["records"].values()
    return stored.get("value", stored)


@pytest.mark.parametrize(
    "change",
    [{"description": "A corrected summary."}, {"image_in_body": False}],
    ids=["text corrected", "image set in front matter"],
)
def test_an_upgrade_edits_no_copy_for_the_image_only_the_posts_body_shows(tmp_path, sandbox, clock, change):
    """A copy announced before images (its record has no `media:`, its hash the message made
    without the body's image) is not edited on the first run after the upgrade, though the card
    would now carry the body's first image as its thumbnail. Once the author changes the post
    (its text, or sets that image as its own), the edit carries the thumbnail."""
    raw = SPECS["bluesky"].raw(sandbox)  # the link card, its thumbnail the post's image
    old = make_post(1)  # the post as a version before images read it: no image of its own
    first = run(tmp_path, raw, [old], clock, png(120, 80))
    assert [r.state for r in first.results] == ["done"], first.results
    announced = record(tmp_path)
    assert not announced.media and "thumb" not in stored_value(sandbox)["embed"]["external"]

    now = replace(old, image=IMAGE, image_alt=ALT, image_in_body=True)  # its body's first image, found now
    upgraded = run(tmp_path, raw, [now], clock, png(120, 80))
    assert upgraded.results == [], upgraded.results
    assert calls(sandbox, "bluesky", "POST", "com.atproto.repo.putRecord") == 1  # the first send's alone
    assert record(tmp_path).message_sha256 == announced.message_sha256

    changed = replace(now, **change)
    edited = run(tmp_path, raw, [changed], clock, png(120, 80))
    assert [r.state for r in edited.results] == ["done"], edited.results
    external = stored_value(sandbox)["embed"]["external"]
    assert external["description"] == changed.summary and "thumb" in external
    again = run(tmp_path, raw, [changed], clock, png(120, 80))
    assert again.results == [], again.results


@pytest.mark.parametrize(
    "fault",
    [None, {"action": "drop_after"}, {"action": "drop_before"}],
    ids=["answered", "answer lost", "request lost"],
)
def test_a_bluesky_edit_records_the_blob_it_uploaded_and_names_it(tmp_path, sandbox, clock, fault):
    """The author replaces the image: the edit uploads it, the in_flight `op: update` record
    names the new blob before the putRecord, and the done record names the blob the copy shows.
    A putRecord whose answer was lost is settled by a read of the copy that compares its blob
    (the text alone is unchanged): done when it shows the new one, put again when it does not."""
    raw = SPECS["bluesky"].raw(sandbox, embed="image")
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    (before,) = record(tmp_path).media
    if fault is not None:
        sandbox.add_fault({"channel": "bluesky", "match": "com.atproto.repo.putRecord", **fault})
    edited = run(tmp_path, raw, [post], clock, png(160, 90))  # the same post, another picture
    done = record(tmp_path)
    assert [r.state for r in edited.results] == ["done"] and done.state == "done", edited.results
    (media,) = done.media
    (shown,) = stored_value(sandbox)["embed"]["images"]
    assert media.id != before.id and shown["image"]["ref"]["$link"] == media.id
    assert shown["aspectRatio"] == {"width": 160, "height": 90} and media.size == shown["image"]["size"]
    assert run(tmp_path, raw, [post], clock, png(160, 90)).results == []


def test_a_mastodon_edit_updates_the_alt_text_and_keeps_the_image(tmp_path, sandbox, clock):
    """The author corrects the post and its `image_alt`: the edit names the status's media again
    with the new description (`media_attributes`), and the record still names the upload."""
    raw = SPECS["mastodon"].raw(sandbox)
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    (media,) = record(tmp_path).media
    better = "A harbour at dawn, two red boats moored by the lighthouse"
    corrected = replace(post, description="A corrected summary.", image_alt=better)
    edited = run(tmp_path, raw, [corrected], clock, png(120, 80))
    assert [r.state for r in edited.results] == ["done"], edited.results
    state = sandbox.snapshot()["mastodon"]
    (status,) = state["statuses"]
    assert "A corrected summary." in status["text"] and status["media_ids"] == [media.id]
    assert state["media"][media.id]["description"] == better
    assert record(tmp_path).media == (media,)
    assert calls(sandbox, "mastodon", "POST", "/api/v2/media") == 1  # the copy's own upload, not read nor made again


def test_a_refused_edit_leaves_the_record_naming_the_upload_the_copy_shows(tmp_path, sandbox, clock):
    """The author replaces the image and corrects the text; the edit's new upload is recorded,
    then the instance refuses the edit: the copy still shows the first image, and so does the
    record (a later edit names it again, never an upload the status does not show)."""
    raw = SPECS["mastodon"].raw(sandbox)
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    (shown,) = record(tmp_path).media
    refusal = {"status": 422, "body": {"error": "Validation failed: no"}}
    sandbox.add_fault({"channel": "mastodon", "match": "PUT /api/v1/statuses/", "action": "status", **refusal})
    refused = run(tmp_path, raw, [replace(post, description="A corrected summary.")], clock, png(160, 90))
    assert [r.state for r in refused.results] == ["failed"], refused.results
    after = record(tmp_path)
    assert after.state == "done" and after.media == (shown,)
    assert sandbox.snapshot()["mastodon"]["statuses"][0]["media_ids"] == [shown.id]


@pytest.mark.parametrize(
    "fault",
    [None, {"action": "drop_after"}, {"action": "drop_before"}],
    ids=["answered", "answer lost", "request lost"],
)
def test_an_image_the_author_removes_leaves_the_mastodon_status(tmp_path, sandbox, clock, fault):
    """The author deletes `image:` (the body has none): the status's text is unchanged, yet the
    post changed, and the edit removes the image (`media_ids: []`); the done record names no
    upload. An edit whose answer was lost is settled by a read of the status's media, not of its
    text alone (which says the same either way)."""
    raw = SPECS["mastodon"].raw(sandbox)
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    assert len(record(tmp_path).media) == 1
    if fault is not None:
        sandbox.add_fault({"channel": "mastodon", "match": "PUT /api/v1/statuses/", **fault})
    without = replace(post, image=None, image_alt=None)
    edited = run(tmp_path, raw, [without], clock, png(120, 80))
    done = record(tmp_path)
    assert [r.state for r in edited.results] == ["done"] and done.state == "done", edited.results
    (status,) = sandbox.snapshot()["mastodon"]["statuses"]
    assert status["media_ids"] == [] and done.media == ()
    assert run(tmp_path, raw, [without], clock, png(120, 80)).results == []  # nothing left to remove


def test_an_image_removal_answered_with_the_image_still_attached_leaves_the_record_naming_it(tmp_path, sandbox, clock):
    """The instance answers the removal's edit with 200 and the status as it now is, its
    `media_attachments` still listing the image (a Mastodon-compatible server that ignores
    `media_ids: []`): the read after the edit shows the image still attached, so the record keeps
    naming the upload the status shows, and the pair needs review: the service said yes and did
    not, and no run loops on it."""
    raw = SPECS["mastodon"].raw(sandbox)
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    (media,) = record(tmp_path).media
    (status,) = sandbox.snapshot()["mastodon"]["statuses"]
    kept = {"id": status["id"], "url": status.get("url"), "media_attachments": [{"id": media.id, "type": "image"}]}
    sandbox.add_fault(
        {"channel": "mastodon", "match": "PUT /api/v1/statuses/", "action": "status", "status": 200, "body": kept}
    )
    run(tmp_path, raw, [replace(post, image=None, image_alt=None)], clock, png(120, 80))
    assert sandbox.snapshot()["mastodon"]["statuses"][0]["media_ids"] == [media.id]  # the instance kept it
    assert record(tmp_path).media == (media,), "the record says the image is gone; no run removes it now"
    assert record(tmp_path).review, "a 200 that did not remove the image is for a person to look at"


def test_an_image_the_author_removes_leaves_the_bluesky_post_for_the_card(tmp_path, sandbox, clock):
    """On Bluesky (`embed: image`) the edit puts the record back with the link card, and the done
    record names no blob: a later image is uploaded anew, not taken for one the post shows."""
    raw = SPECS["bluesky"].raw(sandbox, embed="image")
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    assert len(record(tmp_path).media) == 1
    edited = run(tmp_path, raw, [replace(post, image=None, image_alt=None)], clock, png(120, 80))
    assert [r.state for r in edited.results] == ["done"], edited.results
    embed = stored_value(sandbox)["embed"]
    assert embed["$type"] == "app.bsky.embed.external" and embed["external"]["uri"] == post.url
    assert record(tmp_path).media == ()


def test_an_image_the_author_removes_is_replaced_by_text_on_matrix(tmp_path, sandbox, clock):
    """On Matrix (`embed: image`) the edit's `m.new_content` is the text message (the spec lets
    a replacement change `msgtype`); the done record names no upload. The original `m.image`
    event keeps its content, as every replaced event does (docs/services/matrix.md)."""
    raw = SPECS["matrix"].raw(sandbox, embed="image")
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(64, 48))
    assert len(record(tmp_path).media) == 1
    without = replace(post, image=None, image_alt=None)
    edited = run(tmp_path, raw, [without], clock, png(64, 48))
    assert [r.state for r in edited.results] == ["done"], edited.results
    events = [e for e in sandbox.snapshot()["matrix"]["events"] if e.get("type") == "m.room.message"]
    assert [e["content"]["m.new_content"]["msgtype"] for e in events if "m.new_content" in e["content"]] == ["m.text"]
    assert record(tmp_path).media == ()
    assert run(tmp_path, raw, [without], clock, png(64, 48)).results == []


@pytest.mark.parametrize("at", ["after_in_flight_write:1", "after_response:1"])
def test_a_run_stopped_in_an_image_removal_is_settled_by_the_next_one(tmp_path, sandbox, clock, monkeypatch, at):
    """A run stopped after the `in_flight` `op: update` write (the edit not sent) or after the
    edit's answer (not recorded) leaves the record naming the upload; the next run reads the
    status's media and ends with the image gone from the status and from the record."""
    from mkdocs_syndicate import checkpoints

    raw = SPECS["mastodon"].raw(sandbox)
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(120, 80))
    without = replace(post, image=None, image_alt=None)
    monkeypatch.setenv("SYNDICATE_CRASH_AT", at)
    monkeypatch.setenv("SYNDICATE_CRASH_HOW", "raise")
    checkpoints.configure_from_environment()
    try:
        with pytest.raises(LaneCrashed, match="InjectedCrash"):
            run(tmp_path, raw, [without], clock, png(120, 80))
    finally:
        monkeypatch.delenv("SYNDICATE_CRASH_AT")
        checkpoints.configure_from_environment()
    stopped = record(tmp_path)
    assert stopped.state == "in_flight" and stopped.op == "update" and len(stopped.media) == 1
    resumed = run(tmp_path, raw, [without], clock, png(120, 80))
    assert [r.state for r in resumed.results] == ["done"], resumed.results
    (status,) = sandbox.snapshot()["mastodon"]["statuses"]
    assert status["media_ids"] == [] and record(tmp_path).media == ()


def test_a_matrix_edit_that_replaces_the_image_shows_the_new_one(tmp_path, sandbox, clock):
    """The author replaces the picture (a larger file than the first) and corrects the text: the
    read before the edit compares the caption, not a fitting of the new picture into the old
    upload's size (which failed with TooLarge, so the edit was never made); the edit then names
    the new upload, and the record too."""
    raw = SPECS["matrix"].raw(sandbox, embed="image")
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(64, 48))
    (before,) = record(tmp_path).media
    corrected = replace(post, description="A corrected summary.", image_alt="Two boats")
    edited = run(tmp_path, raw, [corrected], clock, png(160, 90, noise=True))
    assert [(r.state, r.detail) for r in edited.results] == [("done", "updated (proved by a read of the copy)")]
    (media,) = record(tmp_path).media
    assert media.id != before.id
    events = [e for e in sandbox.snapshot()["matrix"]["events"] if "m.new_content" in e.get("content", {})]
    (new,) = [e["content"]["m.new_content"] for e in events]
    assert new["msgtype"] == "m.image" and new["url"] == media.id and new["body"].endswith("Two boats")
