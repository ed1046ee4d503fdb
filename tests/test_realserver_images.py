"""A post's image on the reference Bluesky PDS (issue 35): a 3-part thread whose first part is
the image with its alt text, killed at each point of the upload's two phases and mid-thread, and
found again on the rerun: one post per part, one blob, the image and its alt on part 1."""

from __future__ import annotations

import hashlib
import json
import signal
from pathlib import Path

import httpx
import pytest
from conftest import write_ledger
from realserver_child import SETTLE, start_child
from realserver_pds import start_pds
from test_realserver_bluesky import LONG, logged_in, png, records

from mkdocs_syndicate.ledger.schema import Media, Record, State
from mkdocs_syndicate.ledger.store import Ledger

# The tests keep to one worker (xdist_group), so that the module's fixture
# (a reference PDS) is made once a run, not once a worker.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-pds-images")]

ALT = "A gradient from teal to violet, the thread's cover"


@pytest.fixture(scope="module")
def pds():
    yield from start_pds()


def spec_for(tmp_path, pds, site_url: str, image: bytes) -> Path:
    account = pds.account("alice.test")
    (tmp_path / "site" / "img").mkdir(parents=True, exist_ok=True)
    (tmp_path / "site" / "img" / "cover.png").write_bytes(image)
    channel = {
        "type": "bluesky",
        "service": pds.url,
        "handle": account.handle,
        "app_password": account.password,
        "embed": "image",
        "thread": True,
        "keep_session": False,
        "timeout": 5,
        "settle": SETTLE,
    }
    spec = {
        "ledger": str(tmp_path / "ledger.yml"),
        "site_url": site_url,
        "site_dir": str(tmp_path / "site"),
        "channels": {"bsky": channel},
        "posts": [
            {
                "key": "blog/cover/",
                "url": f"{site_url}blog/cover/",
                "title": "A thread with a cover",
                "date": "2026-11-21T00:00:00+00:00",
                "description": LONG,
                "image": f"{site_url}img/cover.png",
                "image_alt": ALT,
            }
        ],
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def thread_of(pds, did: str, site_url: str) -> list[dict]:
    """This site's thread on the account: its first part (the post whose text links to the site),
    then each reply to the one before."""
    mine = [r for r in records(pds, did) if site_url in json.dumps(r["value"]) or "reply" in r["value"]]
    roots = [r for r in mine if "reply" not in r["value"] and site_url in json.dumps(r["value"])]
    chain = list(roots)
    while roots:
        parent = roots[0]["uri"]
        roots = [r for r in mine if r["value"].get("reply", {}).get("parent", {}).get("uri") == parent]
        chain += roots
    return chain


KILLS = [
    "before_upload:1",  # the intent written, nothing uploaded
    "after_upload:1",  # the blob uploaded, its CID not yet recorded: an orphan, reported
    "after_media_write:1",  # the CID recorded, the post not sent: the rerun reuses the blob
    "after_response:1",  # part 1 made, not recorded: the rerun finds it
    "after_part_response:1",  # part 2 made, not recorded: the rerun finds it and sends part 3
]


@pytest.mark.parametrize("at", KILLS)
def test_a_thread_with_an_image_killed_anywhere_is_one_thread_with_the_image_and_alt_on_part_1(pds, tmp_path, at):
    site_url = f"https://cover-{KILLS.index(at)}.example/"
    image = png(320, 180)
    spec = spec_for(tmp_path, pds, site_url, image)
    log = tmp_path / "checkpoints.log"
    child = start_child(spec, SYNDICATE_CRASH_AT=at, SYNDICATE_CHECKPOINT_LOG=str(log))
    output, errors = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, output + errors
    stopped = Ledger.read(tmp_path / "ledger.yml").record("blog/cover/", "bsky")
    assert stopped.state == "in_flight"
    assert bool(stopped.media) == (at not in ("before_upload:1", "after_upload:1"))
    rerun = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1))
    output, errors = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, output + errors
    if at == "after_upload:1":  # the upload whose CID was never written is reported, not looked for
        assert "orphan" in output + errors
    alice = pds.account("alice.test")
    first, second, third = thread_of(pds, alice.did, site_url)  # exactly three posts, no second thread
    embed = first["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.images"
    (shown,) = embed["images"]
    assert shown["alt"] == ALT and shown["aspectRatio"] == {"width": 320, "height": 180}
    assert "embed" not in second["value"] and "embed" not in third["value"]
    done = Ledger.read(tmp_path / "ledger.yml").record("blog/cover/", "bsky")
    assert done.state == "done" and [p.remote_id for p in done.parts] == [r["uri"] for r in (first, second, third)]
    (media,) = done.media
    assert media.id == shown["image"]["ref"]["$link"] and media.size == len(image) == shown["image"]["size"]
    # The blob the post names is the image, byte for byte.
    pds_url, did, _ = logged_in(pds.url, alice.handle, alice.password)
    blob = httpx.get(f"{pds_url}/xrpc/com.atproto.sync.getBlob", params={"did": did, "cid": media.id})
    assert blob.status_code == 200 and blob.content == image


def test_a_blob_the_pds_does_not_hold_is_uploaded_again_and_the_post_names_it(pds, tmp_path):
    """A stored blob the PDS dropped (here: one it never had) is proved gone by putRecord's
    BlobNotFound; the image is uploaded again and the post made once."""
    site_url = "https://dropped-blob.example/"
    image = png(64, 64)
    spec = spec_for(tmp_path, pds, site_url, image)
    cid = "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy"  # a blob this PDS never had
    gone = Media(cid, hashlib.sha256(image).hexdigest(), "image/png", 99)
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/cover/", "bsky"): Record(State.FAILED, 0, "2026-11-21T00:00:00Z", error="x", media=(gone,))},
    )
    run = start_child(spec)
    output, errors = run.communicate(timeout=120)
    assert run.returncode == 0, output + errors
    first, _, _ = thread_of(pds, pds.account("alice.test").did, site_url)
    (shown,) = first["value"]["embed"]["images"]
    assert shown["image"]["ref"]["$link"] != gone.id and shown["image"]["size"] == len(image)
    done = Ledger.read(tmp_path / "ledger.yml").record("blog/cover/", "bsky")
    assert [m.id for m in done.media] == [shown["image"]["ref"]["$link"]]  # the ledger names the new upload
