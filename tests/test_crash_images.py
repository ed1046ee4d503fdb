"""A post's image, killed at every point of its upload's two phases (issue 35): the scenario's
long post (a thread) has an image, which Mastodon attaches to the thread's first part. SIGKILL
before the upload, after it (its id not yet written), before and after the write of its id; then
reruns after the settle time: one status with the image and its alt text, every post once, and a
second upload only when the first one's id was never written, the possible orphan reported."""

from __future__ import annotations

import signal

import pytest
from crashlab import IMAGE_ALT, IMAGE_POST, Scenario, landed

from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.crash

# (where the kill lands, uploads the service holds at the end, whether the rerun reports that an
# upload may be orphaned: it cannot tell a kill before the upload from one after it)
KILLS = {
    "before_upload:1": (1, True),  # the intent is written; nothing was uploaded
    "after_upload:1": (2, True),  # uploaded, its id not written: an orphan, and a second upload
    "before_media_write:1": (2, True),
    "after_media_write:1": (1, False),  # the id is written: the rerun reads it and reuses it
}


@pytest.mark.parametrize("at", list(KILLS))
def test_a_kill_at_each_upload_checkpoint_leaves_one_status_with_one_image(tmp_path, at):
    uploads, orphan = KILLS[at]
    scenario = Scenario(tmp_path / at.replace(":", "-"), threads=True)
    log = scenario.folder / "checkpoints.log"
    try:
        code, output = scenario.run(SYNDICATE_CRASH_AT=at, SYNDICATE_CHECKPOINT_LOG=str(log))
        assert code == -signal.SIGKILL, output
        assert landed(log)[0] == at.split(":")[0]
        stopped = Ledger.read(scenario.folder / "ledger.yml").record(IMAGE_POST, "masto")
        assert stopped.state == "in_flight" and bool(stopped.media) == (at == "after_media_write:1")
        scenario.settle()
        code, output = scenario.run()
        assert ("orphan" in output) == orphan, output
        scenario.recovers()  # every post once everywhere, every thread whole
        state = scenario.server.snapshot()["mastodon"]
        media = state.get("media", {})
        assert len(media) == uploads, media
        with_media = [s for s in state["statuses"] if s.get("media_ids")]
        (status,) = with_media  # the thread's first part, and nothing else, shows the image
        (shown,) = status["media_ids"]
        assert media[shown].get("description") == IMAGE_ALT
        record = Ledger.read(scenario.folder / "ledger.yml").record(IMAGE_POST, "masto")
        assert record.state == "done" and [m.id for m in record.media] == [shown]
        assert status["id"] == record.remote_id == record.parts[0].remote_id
    finally:
        scenario.close()
