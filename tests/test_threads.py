"""Long posts as threads (`thread: true`): a message over the channel's limit goes out as a chain
of replies, each part recorded under `parts:` as it is made, the pair done when all are. In real
`mkdocs build` processes against the sandbox emulators."""

from __future__ import annotations

from pathlib import Path

import pytest
from channel_specs import SPECS
from conftest import mastodon_raw
from sites import mkdocs, post, write_site

from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process
KEY = "posts/a/"
URL = "https://example.com/posts/a/"

# Three paragraphs, each about 200 characters: over Bluesky's 300 graphemes and a 300-character
# Mastodon twice over, so each makes a thread of three parts.
PARAGRAPHS = [
    "The first paragraph sets the scene. " * 5,
    "The second paragraph goes deeper into the matter at hand. " * 3,
    "The third paragraph draws the threads together and ends. " * 3,
]
DESCRIPTION = "\n\n".join(p.strip() for p in PARAGRAPHS)


def site(tmp_path: Path, channels: dict) -> Path:
    return write_site(
        tmp_path / "site",
        {"mode": "send", "channels": channels},
        {"a.md": post("A long post", description=DESCRIPTION, tags=["python"])},
    )


def record(config: Path, channel: str) -> Record:
    found = Ledger.read(config.parent / "ledger.yml").record(KEY, channel)
    assert found is not None
    return found


def masto(sandbox) -> dict:
    return mastodon_raw(sandbox, thread=True, max_characters=300)


def bsky(sandbox) -> dict:
    return SPECS["bluesky"].raw(sandbox, thread=True)


def test_a_long_post_is_a_mastodon_thread_of_replies(tmp_path, sandbox):
    config = site(tmp_path, {"masto": masto(sandbox)})
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    statuses = sorted(sandbox.snapshot()["mastodon"]["statuses"], key=lambda s: int(s["id"]))
    assert len(statuses) == 3
    first, second, third = statuses
    assert URL in first["text"] and "#python" in first["text"] and first.get("in_reply_to_id") is None
    assert second["in_reply_to_id"] == first["id"] and third["in_reply_to_id"] == second["id"]
    assert all(URL not in s["text"] for s in (second, third))
    done = record(config, "masto")
    assert done.state == State.DONE and done.part is None and done.remote_id == first["id"]
    assert [p.remote_id for p in done.parts] == [s["id"] for s in statuses]
    assert [p.message_sha256 for p in done.parts] == [message_sha256(s["text"]) for s in statuses]
    # Each part under its own Idempotency-Key; the first one's is the pair's.
    keys = [s["idempotency_key"] for s in statuses]
    assert keys[0] == done.idempotency_key and len(set(keys)) == 3
    again = mkdocs(config)
    assert again.returncode == 0 and "nothing pending" in again.stderr
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 3


def test_a_long_post_is_a_bluesky_thread_of_replies(tmp_path, sandbox):
    config = site(tmp_path, {"bsky": bsky(sandbox)})
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    records = sandbox.snapshot()["bluesky"]["records"]
    assert len(records) == 3
    done = record(config, "bsky")
    assert done.state == State.DONE and len(done.parts) == 3
    first, second, third = (records[p.remote_id.rsplit("/", 1)[-1]] for p in done.parts)
    root = {"uri": done.parts[0].remote_id, "cid": done.parts[0].cid}
    assert "reply" not in first["value"] and first["value"]["embed"]["external"]["uri"] == URL
    assert second["value"]["reply"] == {"root": root, "parent": root}
    assert third["value"]["reply"] == {
        "root": root,
        "parent": {"uri": done.parts[1].remote_id, "cid": done.parts[1].cid},
    }
    assert [p.cid for p in done.parts] == [first["cid"], second["cid"], third["cid"]]
    assert all(len(r["value"]["text"]) <= 300 for r in (first, second, third))
    again = mkdocs(config)
    assert again.returncode == 0 and "nothing pending" in again.stderr


def test_a_refused_part_leaves_the_record_failed_with_the_parts_sent_and_the_next_run_finishes(tmp_path, sandbox):
    """The instance refuses the second part for good (a 422): the record is failed, the first part
    listed; the next run sends the second and third parts, never the first again."""
    config = site(tmp_path, {"masto": masto(sandbox)})
    sandbox.add_fault(
        {"channel": "mastodon", "action": "status", "status": 422, "match": "POST /api/v1/statuses", "skip": 1}
    )
    run = mkdocs(config)
    assert run.returncode != 0
    failed = record(config, "masto")
    assert failed.state == State.FAILED and len(failed.parts) == 1 and failed.part == 2
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
    rerun = mkdocs(config)
    assert rerun.returncode == 0, rerun.stderr
    statuses = sorted(sandbox.snapshot()["mastodon"]["statuses"], key=lambda s: int(s["id"]))
    assert len(statuses) == 3 and statuses[1]["in_reply_to_id"] == statuses[0]["id"]
    assert record(config, "masto").state == State.DONE


def test_an_edited_thread_under_edits_ignore_is_said_out_of_date_and_left_as_it_was(tmp_path, sandbox):
    """`edits: ignore`: no part is touched, none made again; the run says so. (With `edits:
    update`, the default, tests/test_thread_life.py edits it.)"""
    config = site(tmp_path, {"masto": {**masto(sandbox), "edits": "ignore"}})
    assert mkdocs(config).returncode == 0
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("The third paragraph", "The corrected third paragraph"))
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    assert "masto: 1 copy out of date, not updated (channels.masto.edits is ignore)" in run.stderr
    statuses = sandbox.snapshot()["mastodon"]["statuses"]
    assert len(statuses) == 3 and not any(s.get("edits") for s in statuses)
    assert not [r for r in sandbox.requests("mastodon") if r["method"] == "PUT"]


def test_turning_threads_on_makes_a_shortened_post_the_first_part_of_its_thread(tmp_path, sandbox):
    """A post announced shortened, before `thread: true`: its message is now a thread, so (with
    `edits: update`) its copy is edited to be the first part and the rest follow as replies."""
    config = site(tmp_path, {"masto": mastodon_raw(sandbox, max_characters=300)})
    assert mkdocs(config).returncode == 0
    (before,) = sandbox.snapshot()["mastodon"]["statuses"]
    assert "…" in before["text"]
    text = config.read_text()
    line = next(line for line in text.splitlines() if line.strip() == "max_characters: 300")
    indent = line[: len(line) - len(line.lstrip())]
    config.write_text(text.replace(line, f"{line}\n{indent}thread: true"))
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    statuses = sorted(sandbox.snapshot()["mastodon"]["statuses"], key=lambda s: int(s["id"]))
    assert statuses[0]["id"] == before["id"] and len(statuses) == 3
    assert statuses[0].get("edits") and "…" not in statuses[0]["text"]
    assert statuses[1]["in_reply_to_id"] == before["id"] and statuses[2]["in_reply_to_id"] == statuses[1]["id"]
    assert record(config, "masto").state == State.DONE and len(record(config, "masto").parts) == 3


def test_a_half_sent_thread_whose_text_changed_is_not_continued(tmp_path, sandbox):
    """Part 2 refused, then the post corrected: the parts still to send would not follow the part
    sent, so the thread is left for a person (resolve), nothing sent."""
    config = site(tmp_path, {"masto": masto(sandbox)})
    sandbox.add_fault(
        {"channel": "mastodon", "action": "status", "status": 422, "match": "POST /api/v1/statuses", "skip": 1}
    )
    assert mkdocs(config).returncode != 0
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("The first paragraph", "The corrected first paragraph"))
    rerun = mkdocs(config)
    assert rerun.returncode != 0 and "needs review: thread part 1 as sent differs" in rerun.stderr
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
    assert record(config, "masto").state == State.FAILED
