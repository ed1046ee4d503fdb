"""Matrix's image message (`embed: image`, issue 35) against Synapse itself: the image in the
content repository, one m.image event naming it with the message as its caption, the upload's
mxc:// URI recorded; and the read a stored upload gets before reuse: Synapse's answer for media
it holds, and its M_NOT_FOUND for media it does not (the proof an upload is gone)."""

from __future__ import annotations

import io
from typing import Any

import httpx
import pytest
from conftest import make_post
from PIL import Image
from test_realserver_matrix import raw, room_events, run

from mkdocs_syndicate.channel_api import Media, MediaState
from mkdocs_syndicate.channels.matrix import MatrixChannel
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.pacing import PacedHttp
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sandbox.site import make_channels
from mkdocs_syndicate.timeutil import SystemClock

# The tests keep to one worker (xdist_group), so that the module's fixture
# (a Synapse) is made once a run, not once a worker.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-synapse-images")]

ALT = "A lighthouse on a rock, its lamp lit"


@pytest.fixture(scope="module")
def synapse(tmp_path_factory):
    from realserver_synapse import start_synapse

    yield from start_synapse(tmp_path_factory.mktemp("synapse-images"))


def test_an_image_post_is_one_m_image_event_naming_the_upload_and_its_read_tells_gone_from_there(synapse, tmp_path):
    out = io.BytesIO()
    Image.new("RGB", (80, 60), (200, 40, 40)).save(out, "PNG")
    (tmp_path / "site" / "img").mkdir(parents=True)
    (tmp_path / "site" / "img" / "lamp.png").write_bytes(out.getvalue())
    site = Site("https://lamp.example/", "Lamp", str(tmp_path / "site"))
    post = make_post(
        5, url="https://lamp.example/blog/post-5/", image="https://lamp.example/img/lamp.png", image_alt=ALT
    )
    channel: dict[str, Any] = raw(synapse, embed="image")
    report = run(tmp_path, channel, [post], site=site)
    assert not report.undone, report.results
    record = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    (media,) = record.media
    (event,) = [e for e in room_events(synapse) if e["event_id"] == record.remote_id]
    content = event["content"]
    assert content["msgtype"] == "m.image" and content["url"] == media.id and media.id.startswith("mxc://")
    assert content["filename"] == "lamp.png" and content["body"].endswith(ALT)
    assert content["info"] == {"mimetype": "image/png", "size": len(out.getvalue()), "w": 80, "h": 60}

    options = parse_options({"mx": channel}, ledger_path=tmp_path / "l.yml", site=site, sandbox=False, sending=True)
    (client,) = make_channels(options)
    assert isinstance(client, MatrixChannel)

    async def read(item: Media) -> MediaState:
        async with httpx.AsyncClient() as http:
            paced = PacedHttp(http, min_interval=0, timeout=10, clock=SystemClock(), sleep=_no_sleep)
            return await client.read_media(paced, item)

    import asyncio

    assert asyncio.run(read(media)) is MediaState.READY
    server = media.id.removeprefix("mxc://").split("/")[0]
    never = Media(f"mxc://{server}/NeverUploadedHere0123", media.sha256, "image/png", 1)
    assert asyncio.run(read(never)) is MediaState.GONE


async def _no_sleep(seconds: float, reason: str) -> None:
    return None
