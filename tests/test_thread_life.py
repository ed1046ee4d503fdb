"""A thread lives like a post (issue 35): a corrected long post has each part whose text changed
edited in place, a longer one gets new parts at the end, a shorter one loses its last parts, and
a removed one loses every part. In real `mkdocs build` processes against the sandbox emulators,
with kills at every part checkpoint of an edit, a grow, a shrink and a removal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from channel_specs import SPECS
from conftest import mastodon_raw
from sites import mkdocs, post, write_site
from test_post_removals import PublicSite

from mkdocs_syndicate.channels.bluesky_records import part_rkey
from mkdocs_syndicate.channels.mastodon import part_key
from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process
KEY = "posts/a/"
SITE = "http://example.com/"
URL = f"{SITE}{KEY}"

# Paragraphs of about 200 characters: each is a part of its own on a 300-character Mastodon and
# on Bluesky (the first part holds the template's text, the post's URL and the first paragraph).
PARAGRAPHS = [
    "The first paragraph sets the scene. " * 5,
    "The second paragraph goes deeper into the matter at hand. " * 3,
    "The third paragraph draws the threads together and ends. " * 3,
    "A fourth paragraph adds a late thought that the first version lacked. " * 3,
]
SOURCE = "a.md"


@pytest.fixture
def web() -> Iterator[PublicSite]:
    """The site as the web sees it (test_post_removals.PublicSite): a removal is proved by its 404."""
    site = PublicSite()
    yield site
    site.server.shutdown()
    site.server.server_close()


def description(paragraphs: list[str]) -> str:
    return "\n\n".join(p.strip() for p in paragraphs)


def masto(sandbox, **extra) -> dict:
    return mastodon_raw(sandbox, thread=True, max_characters=300, max_parts=4, **extra)


def bsky(sandbox, **extra) -> dict:
    return SPECS["bluesky"].raw(sandbox, thread=True, max_parts=4, **extra)


def site(tmp_path: Path, channels: dict, paragraphs: list[str], public: PublicSite | None = None) -> Path:
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": channels},
        {SOURCE: post("A long post", description=description(paragraphs), tags=["python"])},
        site_url=SITE,
    )
    if public is not None:
        public.root = config.parent / "site"
    return config


def rewrite(config: Path, paragraphs: list[str]) -> None:
    source = config.parent / "docs" / "posts" / SOURCE
    source.write_text(post("A long post", description=description(paragraphs), tags=["python"]))


def record(config: Path, channel: str) -> Record:
    found = Ledger.read(config.parent / "ledger.yml").record(KEY, channel)
    assert found is not None
    return found


def statuses(sandbox) -> list[dict]:
    return sorted(sandbox.snapshot()["mastodon"]["statuses"], key=lambda s: int(s["id"]))


def chain(sandbox) -> list[dict]:
    """The thread as Mastodon holds it, from its first status down the replies; no status twice
    in reply to one parent (no part twice), and none left out of the chain (none orphaned)."""
    held = statuses(sandbox)
    parents = [s["in_reply_to_id"] for s in held if s.get("in_reply_to_id")]
    assert len(parents) == len(set(parents)), held
    by_parent = {s["in_reply_to_id"]: s for s in held if s.get("in_reply_to_id")}
    (first,) = [s for s in held if not s.get("in_reply_to_id")]
    found = [first]
    while found[-1]["id"] in by_parent:
        found.append(by_parent[found[-1]["id"]])
    assert len(found) == len(held), held
    return found


def run_ok(config: Path, env: dict | None = None) -> str:
    run = mkdocs(config, env=env)
    assert run.returncode == 0, run.stderr
    return run.stderr


def requests(sandbox, emulator: str, method: str, path: str = "") -> list[dict]:
    return [r for r in sandbox.requests(emulator) if r["method"] == method and path in r["path"]]


def test_a_corrected_thread_has_only_its_changed_part_edited_in_place(tmp_path, sandbox):
    config = site(tmp_path, {"masto": masto(sandbox)}, PARAGRAPHS[:3])
    run_ok(config)
    before = chain(sandbox)
    assert len(before) == 3
    rewrite(config, [*PARAGRAPHS[:2], "The corrected third paragraph draws it together. " * 3])
    err = run_ok(config)
    after = chain(sandbox)
    assert [s["id"] for s in after] == [s["id"] for s in before]  # edited in place, nothing made
    assert [bool(s.get("edits")) for s in after] == [False, False, True]
    assert after[2]["text"].startswith("The corrected third paragraph")
    puts = requests(sandbox, "mastodon", "PUT")
    assert [r["path"].rsplit("/", 1)[-1] for r in puts] == [before[2]["id"]]
    done = record(config, "masto")
    assert done.state == State.DONE and done.op is None and done.part is None
    assert [p.message_sha256 for p in done.parts] == [message_sha256(s["text"]) for s in after]
    assert "updated: a thread of 3 parts" in err
    assert "nothing pending" in run_ok(config)


def test_a_longer_thread_gets_its_new_part_at_the_end_and_the_edited_ones_in_place(tmp_path, sandbox):
    """Grow and edit at once: the first paragraph corrected, a fourth added. The first part is
    edited, the fourth sent as a reply to the third, under its own Idempotency-Key."""
    config = site(tmp_path, {"masto": masto(sandbox)}, PARAGRAPHS[:3])
    run_ok(config)
    before = chain(sandbox)
    rewrite(config, ["The corrected first paragraph sets the scene. " * 4, *PARAGRAPHS[1:4]])
    run_ok(config)
    after = chain(sandbox)
    assert len(after) == 4 and [s["id"] for s in after[:3]] == [s["id"] for s in before]
    assert after[3]["in_reply_to_id"] == before[2]["id"] and after[3]["text"].startswith("A fourth")
    assert after[3]["idempotency_key"] == part_key(URL, "masto", 4)
    assert [bool(s.get("edits")) for s in after] == [True, False, False, False]
    done = record(config, "masto")
    assert done.state == State.DONE and [p.remote_id for p in done.parts] == [s["id"] for s in after]
    assert "nothing pending" in run_ok(config)


def test_a_shorter_thread_loses_its_last_parts_last_first(tmp_path, sandbox):
    config = site(tmp_path, {"masto": masto(sandbox)}, PARAGRAPHS)
    run_ok(config)
    before = chain(sandbox)
    assert len(before) == 4
    rewrite(config, PARAGRAPHS[:2])
    run_ok(config)
    after = chain(sandbox)
    assert [s["id"] for s in after] == [s["id"] for s in before[:2]]
    deletes = [r["path"].rsplit("/", 1)[-1] for r in requests(sandbox, "mastodon", "DELETE")]
    assert deletes == [before[3]["id"], before[2]["id"]]
    done = record(config, "masto")
    assert done.state == State.DONE and [p.remote_id for p in done.parts] == [s["id"] for s in after]
    assert "nothing pending" in run_ok(config)


def test_a_thread_that_fits_in_one_post_now_is_one_post(tmp_path, sandbox):
    config = site(tmp_path, {"masto": masto(sandbox)}, PARAGRAPHS[:3])
    run_ok(config)
    first = chain(sandbox)[0]
    rewrite(config, ["A short one now."])
    run_ok(config)
    (only,) = chain(sandbox)
    assert only["id"] == first["id"] and "A short one now." in only["text"]
    done = record(config, "masto")
    assert done.state == State.DONE and done.parts == () and done.message_sha256 == message_sha256(only["text"])
    assert "nothing pending" in run_ok(config)


def test_a_bluesky_thread_is_edited_at_each_parts_own_key_its_reply_refs_kept(tmp_path, sandbox):
    config = site(tmp_path, {"bsky": bsky(sandbox)}, PARAGRAPHS[:3])
    run_ok(config)
    before = {rkey: dict(r) for rkey, r in sandbox.snapshot()["bluesky"]["records"].items()}
    rewrite(config, [PARAGRAPHS[0], "The corrected second paragraph goes deeper. " * 4, PARAGRAPHS[2], PARAGRAPHS[3]])
    run_ok(config)
    records = sandbox.snapshot()["bluesky"]["records"]
    done = record(config, "bsky")
    assert done.state == State.DONE and len(done.parts) == 4
    ghost = Post(key=KEY, url=URL, title="A long post", date=_date())
    keys = [part_rkey(ghost, "bsky", n) for n in range(1, 5)]
    assert [p.remote_id.rsplit("/", 1)[-1] for p in done.parts] == keys
    second = records[keys[1]]["value"]
    assert second["text"].startswith("The corrected second") and second["reply"] == before[keys[1]]["value"]["reply"]
    assert records[keys[2]]["cid"] == before[keys[2]]["cid"]  # the third part: untouched
    fourth = records[keys[3]]["value"]
    assert fourth["reply"]["parent"] == {"uri": done.parts[2].remote_id, "cid": done.parts[2].cid}
    assert [p.cid for p in done.parts] == [records[k]["cid"] for k in keys]
    assert "nothing pending" in run_ok(config)


def _date():
    import datetime as dt

    return dt.datetime(2026, 11, 20, tzinfo=dt.UTC)


def test_a_removed_thread_loses_every_part_last_first(tmp_path, sandbox, web):
    config = site(
        tmp_path,
        {"masto": masto(sandbox, removals="delete"), "bsky": bsky(sandbox, removals="delete")},
        PARAGRAPHS[:3],
        web,
    )
    run_ok(config, web.env)
    masto_ids = [s["id"] for s in chain(sandbox)]
    bsky_parts = record(config, "bsky").parts
    assert len(bsky_parts) == 3
    (config.parent / "docs" / "posts" / SOURCE).unlink()
    (config.parent / "docs" / "posts" / "b.md").write_text(post("Another", "2026-11-21"))
    run_ok(config, web.env)
    assert statuses(sandbox) == [s for s in statuses(sandbox) if s["text"].startswith("Another")]
    deletes = [r["path"].rsplit("/", 1)[-1] for r in requests(sandbox, "mastodon", "DELETE")]
    assert deletes == masto_ids[::-1]
    records = sandbox.snapshot()["bluesky"]["records"]
    assert not [k for k in records if any(p.remote_id.endswith(k) for p in bsky_parts)]
    made = {"masto": masto_ids, "bsky": [p.remote_id for p in bsky_parts]}
    for channel in ("masto", "bsky"):
        gone = record(config, channel)
        assert gone.state == State.DELETED and gone.op is None and gone.part is None, gone
        # The ledger still names the copy and every part the removal proved gone.
        assert [p.remote_id for p in gone.parts] == made[channel] and gone.remote_id == made[channel][0], gone
        assert not any(p.deleted for p in gone.parts) and gone.remote_url, gone


# A Matrix thread's part holds at most 2,000 characters: each paragraph a part.
LONG_MATRIX = [f"Paragraph {n} of a long post. " * 50 for n in ("one", "two", "three")]


def matrix_events(sandbox) -> list[dict]:
    return [e for e in sandbox.snapshot()["matrix"]["events"] if e["type"] == "m.room.message"]


def test_a_matrix_thread_is_an_m_thread_edited_and_redacted_part_by_part(tmp_path, sandbox, web):
    channels = {"mx": SPECS["matrix"].raw(sandbox, thread=True, removals="delete")}
    config = site(tmp_path, channels, LONG_MATRIX[:2], web)
    run_ok(config, web.env)
    first, second = matrix_events(sandbox)
    assert "m.relates_to" not in first["content"] and URL in first["content"]["body"]
    assert second["content"]["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": first["event_id"],
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": first["event_id"]},
    }
    rewrite(config, [LONG_MATRIX[0], "A corrected second paragraph. " * 50, LONG_MATRIX[2]])
    run_ok(config, web.env)
    events = matrix_events(sandbox)
    edits = [e for e in events if e["content"].get("m.relates_to", {}).get("rel_type") == "m.replace"]
    assert [e["content"]["m.relates_to"]["event_id"] for e in edits] == [second["event_id"]]
    third = events[-1]
    assert third["content"]["m.relates_to"]["event_id"] == first["event_id"]
    assert third["content"]["m.relates_to"]["m.in_reply_to"] == {"event_id": second["event_id"]}
    done = record(config, "mx")
    assert done.state == State.DONE and [p.remote_id for p in done.parts] == [
        first["event_id"],
        second["event_id"],
        third["event_id"],
    ]
    assert "nothing pending" in run_ok(config, web.env)
    (config.parent / "docs" / "posts" / SOURCE).unlink()
    (config.parent / "docs" / "posts" / "b.md").write_text(post("Another", "2026-11-21"))
    run_ok(config, web.env)
    redactions = [e for e in sandbox.snapshot()["matrix"]["events"] if e["type"] == "m.room.redaction"]
    assert [e["content"]["redacts"] for e in redactions] == [p.remote_id for p in done.parts][::-1]
    gone = record(config, "mx")
    assert gone.state == State.DELETED and gone.parts == done.parts and gone.remote_id == done.remote_id


def test_a_refused_new_part_leaves_the_thread_done_as_it_is_and_the_next_run_adds_it(tmp_path, sandbox):
    """The instance refuses the new fourth part for good (a 422): the record is `done` with the
    three parts it has and a hash that is no message's, so the next run adds the part, and only it."""
    config = site(tmp_path, {"masto": masto(sandbox)}, PARAGRAPHS[:3])
    run_ok(config)
    before = chain(sandbox)
    rewrite(config, PARAGRAPHS)
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 422, "match": "POST /api/v1/statuses"})
    refused = mkdocs(config)
    assert refused.returncode != 0 and "422" in refused.stderr, refused.stderr
    halted = record(config, "masto")
    assert halted.state == State.DONE and halted.op is None and len(halted.parts) == 3
    assert [s["id"] for s in chain(sandbox)] == [s["id"] for s in before]
    run_ok(config)
    after = chain(sandbox)
    assert len(after) == 4 and [s["id"] for s in after[:3]] == [s["id"] for s in before]
    assert not any(s.get("edits") for s in after)
    assert record(config, "masto").state == State.DONE and "nothing pending" in run_ok(config)
