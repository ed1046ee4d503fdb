"""An edit that changes a copy's image is done only when a read shows the new image: a service
that answers 200 to an edit swapping the picture under the same caption, and keeps the old one,
leaves the pair *needs review*, and the record goes on naming the upload the copy shows."""

from __future__ import annotations

import pytest
from channel_specs import SPECS
from conftest import make_post
from test_image_channels import ALT, SITE_URL, png, record, run

pytestmark = pytest.mark.http

IMAGE = f"{SITE_URL}img/cover.png"


def test_a_matrix_picture_swap_answered_200_but_not_made_needs_review(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    raw = SPECS["matrix"].raw(sandbox, embed="image")
    post = make_post(1, image=IMAGE, image_alt=ALT)
    run(tmp_path, raw, [post], clock, png(64, 48))
    (shown,) = record(tmp_path).media
    sandbox.add_fault({"channel": "matrix", "match": "/send/m.room.message/", "action": "undone_after"})
    swapped = run(tmp_path, raw, [post], clock, png(160, 90, noise=True))  # the same caption, a new picture
    (result,) = swapped.results
    assert result.needs_review and not result.ok, result
    held = record(tmp_path)
    assert held.review and held.state != "done", held
    (event,) = [e for e in sandbox.snapshot()["matrix"]["events"] if e.get("content", {}).get("url")]
    assert event["content"]["url"] == shown.id and "m.new_content" not in event["content"]
    again = run(tmp_path, raw, [post], clock, png(160, 90, noise=True))
    assert [r.needs_review for r in again.results] == [True], again.results
