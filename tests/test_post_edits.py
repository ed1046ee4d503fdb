"""A post's life: a corrected post's copies follow it, edited in place, never made again (issue 34,
"Edits"). In real `mkdocs build` processes against the sandbox emulators."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import mastodon_raw
from sites import mkdocs, post, write_site

from mkdocs_syndicate.content.messages import message_sha256
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process
KEY = "posts/a/"


def statuses(sandbox) -> list[dict]:
    return sandbox.snapshot()["mastodon"]["statuses"]


def masto_site(tmp_path: Path, sandbox, **masto) -> Path:
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox, **masto)}},
        {"a.md": post("First thoughts", description="A first draft.")},
    )
    first = mkdocs(config)
    assert first.returncode == 0, first.stderr
    return config


def correct(config: Path) -> None:
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("A first draft.", "A corrected summary."))


def test_a_corrected_post_updates_its_copy_in_place(tmp_path, sandbox):
    config = masto_site(tmp_path, sandbox)
    (made,) = statuses(sandbox)
    before = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    correct(config)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    (edited,) = statuses(sandbox)  # the same status, edited: never a second one
    assert edited["id"] == made["id"] and "A corrected summary." in edited["text"]
    assert len(edited["edits"]) == 1
    after = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert after is not None and before is not None
    assert after.state == State.DONE and after.remote_id == before.remote_id
    assert after.message_sha256 != before.message_sha256 and after.op is None
    again = mkdocs(config)
    assert again.returncode == 0 and "nothing pending" in again.stderr
    assert len(statuses(sandbox)[0]["edits"]) == 1


def test_edits_ignore_leaves_the_copy_as_it_was(tmp_path, sandbox):
    config = masto_site(tmp_path, sandbox, edits="ignore")
    correct(config)
    run = mkdocs(config)
    assert run.returncode == 0 and "nothing pending" in run.stderr
    assert "edits" not in statuses(sandbox)[0]


def test_an_update_whose_answer_was_lost_is_settled_by_reading_the_copy(tmp_path, sandbox):
    """The PUT was carried out and its answer lost: the copy is read by its own id, says the new
    text, and the update is done without a second PUT."""
    config = masto_site(tmp_path, sandbox)
    correct(config)
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after", "match": "PUT /api/v1/statuses/"})
    lost = mkdocs(config)
    assert lost.returncode == 0, lost.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.DONE and record.op is None
    puts = [r for r in sandbox.requests("mastodon") if r["method"] == "PUT"]
    assert len(puts) == 1, puts
    (status,) = statuses(sandbox)
    assert "A corrected summary." in status["text"] and len(status["edits"]) == 1


def test_an_update_of_a_status_its_author_deleted_marks_it_deleted_and_makes_nothing(tmp_path, sandbox):
    import httpx

    config = masto_site(tmp_path, sandbox)
    (made,) = statuses(sandbox)
    httpx.delete(
        f"{sandbox.url}/mastodon/api/v1/statuses/{made['id']}",
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    ).raise_for_status()
    correct(config)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.DELETED
    assert statuses(sandbox) == []
    # The record still names the copy the read proved gone, and nothing takes it for a live one:
    # a later correction edits nothing, and the page does not link it.
    assert (record.remote_id, record.remote_url) == (made["id"], made["url"])
    asked = len(sandbox.requests("mastodon"))
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("A corrected summary.", "A summary corrected twice."))
    again = mkdocs(config)
    assert again.returncode == 0 and "nothing pending" in again.stderr, again.stderr
    assert len(sandbox.requests("mastodon")) == asked
    assert made["url"] not in (config.parent / "site" / "posts" / "a" / "index.html").read_text()


def test_a_run_killed_during_an_update_is_settled_by_the_next_runs_read(tmp_path, sandbox):
    """What a run killed after the PUT left: in_flight with op update, the copy already edited.
    The next run reads the copy, finds the target text, and sends no PUT."""
    import dataclasses

    import httpx
    from conftest import write_ledger

    config = masto_site(tmp_path, sandbox)
    correct(config)
    done = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert done is not None and done.remote_id
    # The edit the killed run made, and the record it left (its target: the message's hash).
    new_text = statuses(sandbox)[0]["text"].replace("A first draft.", "A corrected summary.")
    httpx.put(
        f"{sandbox.url}/mastodon/api/v1/statuses/{done.remote_id}",
        data={"status": new_text},
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    ).raise_for_status()
    target = message_sha256(new_text)
    killed = dataclasses.replace(done, state=State.IN_FLIGHT, op="update", message_sha256=target, attempts=1)
    write_ledger(config.parent / "ledger.yml", {(KEY, "masto"): killed})
    puts_before = len([r for r in sandbox.requests("mastodon") if r["method"] == "PUT"])
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.DONE and record.op is None, record
    assert len([r for r in sandbox.requests("mastodon") if r["method"] == "PUT"]) == puts_before
    assert len(statuses(sandbox)[0]["edits"]) == 1


def test_a_typo_fixed_in_the_body_updates_the_dev_article_and_leaves_the_status_alone(tmp_path, sandbox):
    """A body-only change touches only channels whose message holds the body (DEV's article)."""
    # No pacing: DEV's default 75 s between requests would be waited out for real between the builds.
    forem = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0}
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox), "devto": forem}},
        {"a.md": post("First thoughts", description="A summary.") + "\nA tpyo in the body.\n"},
    )
    assert mkdocs(config).returncode == 0
    (article,) = sandbox.snapshot()["forem"]["articles"]
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("tpyo", "typo"))
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    (updated,) = sandbox.snapshot()["forem"]["articles"]
    assert updated["id"] == article["id"] and "A typo in the body." in updated["body_markdown"]
    assert "edits" not in statuses(sandbox)[0]  # the status has no body: untouched
    methods = [(r["method"], r["path"]) for r in sandbox.requests("forem")]
    assert [m for m, _ in methods].count("PUT") == 1 and [m for m, _ in methods].count("POST") == 1
    assert "nothing pending" in mkdocs(config).stderr


def test_a_corrected_post_updates_its_bluesky_record_at_the_same_key(tmp_path, sandbox):
    """putRecord at the copy's own rkey, swapRecord the CID read just before: one record, its
    createdAt kept, the new text; the official SDK's models accept it (conftest)."""
    bsky = {
        "type": "bluesky",
        "service": sandbox.url + "/bluesky",
        "handle": "sandbox.bsky.social",
        "app_password": "sandbox-bsky-app-password",
    }
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"bsky": bsky}},
        {"a.md": post("First thoughts", description="A first draft.")},
    )
    assert mkdocs(config).returncode == 0
    (before,) = sandbox.snapshot()["bluesky"]["records"].values()
    correct(config)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    records = sandbox.snapshot()["bluesky"]["records"]
    (after,) = records.values()
    assert after["value"]["createdAt"] == before["value"]["createdAt"]
    assert after["value"] != before["value"] and "A corrected summary." in str(after["value"])
    puts = [r for r in sandbox.requests("bluesky") if r["path"].endswith("putRecord")]
    assert len(puts) == 2  # the post, then its one update
    assert "nothing pending" in mkdocs(config).stderr


def test_a_changed_page_is_pinged_again_and_an_unchanged_one_is_not(tmp_path, sandbox):
    """IndexNow exists to say "this URL's content changed": a corrected post is pinged again."""
    from conftest import site_channels

    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": site_channels(sandbox)},
        {"a.md": post("First thoughts", description="A first draft."), "b.md": post("Second", "2026-11-21")},
    )
    sandbox.key_file_root = config.parent / "site"
    assert mkdocs(config).returncode == 0
    pinged = [url for ping in sandbox.snapshot()["indexnow"]["pings"] for url in ping["urls"]]
    assert sorted(pinged) == ["https://example.com/posts/a/", "https://example.com/posts/b/"]
    correct(config)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    pings = sandbox.snapshot()["indexnow"]["pings"]
    assert pings[-1]["urls"] == ["https://example.com/posts/a/"]  # only the changed page
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "ping")
    assert record is not None and record.state == State.DONE and record.op is None
    assert "nothing pending" in mkdocs(config).stderr


def test_a_copy_on_a_channel_that_cannot_edit_is_said_to_be_out_of_date_and_left_alone(tmp_path, sandbox):
    """Weibo has no edit: the run says which copies are out of date and why, and sends nothing."""
    from channel_specs import SPECS

    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"wb": SPECS["weibo"].raw(sandbox)}},
        {"a.md": post("First thoughts", description="A first draft.")},
    )
    assert mkdocs(config).returncode == 0
    requests = len(sandbox.requests("weibo"))
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("First thoughts", "Second thoughts"))  # the title
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    assert "wb: 1 copy out of date, not updated (weibo cannot edit a post in place): posts/a/" in run.stderr
    assert len(sandbox.requests("weibo")) == requests


@pytest.mark.parametrize("answer", [b"<html>gateway</html>", b'{"id": 42}', b""])
def test_a_garbage_answer_to_an_update_is_settled_by_reading_the_copy(tmp_path, sandbox, answer):
    """The instance made the edit and answered something unreadable (a proxy's page, the wrong
    shape, nothing): the copy is read by its own id, and nothing is edited twice or made again."""
    config = masto_site(tmp_path, sandbox)
    correct(config)
    sandbox.add_fault(
        {
            "channel": "mastodon",
            "action": "status_after",
            "status": 200,
            "body": answer,
            "match": "PUT /api/v1/statuses/",
        }
    )
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.DONE and record.op is None
    (status,) = statuses(sandbox)
    assert "A corrected summary." in status["text"] and len(status["edits"]) == 1


def test_status_says_which_copies_are_out_of_date_from_the_last_build(tmp_path, sandbox):
    """`status` after a build that did not send (a plan build): the corrected post's copies are
    listed as out of date, with what the next run does about each, and no request is made."""
    import json

    from channel_specs import SPECS
    from sites import command

    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox), "wb": SPECS["weibo"].raw(sandbox)}},
        {"a.md": post("First thoughts", description="A first draft.")},
    )
    assert mkdocs(config).returncode == 0
    correct(config)
    source = config.parent / "docs" / "posts" / "a.md"
    source.write_text(source.read_text().replace("First thoughts", "Second thoughts"))  # Weibo's text too
    import yaml

    raw = yaml.safe_load(config.read_text())
    raw["plugins"][0]["syndicate"]["mode"] = "plan"  # a build that sends nothing, and saves its posts
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    planned = mkdocs(config)
    assert planned.returncode == 0, planned.stderr
    requests = len(sandbox.requests("mastodon")) + len(sandbox.requests("weibo"))
    shown = command(config, "status")
    out, err = shown.communicate(timeout=120)
    assert shown.returncode == 0, err
    assert "2 copies out of date (the post changed):" in out
    assert "masto · posts/a/: the next run edits it in place" in out
    assert "wb · posts/a/: not updated: weibo cannot edit" in out
    as_json = command(config, "status", "--json")
    data = json.loads(as_json.communicate(timeout=120)[0])
    assert {(item["post"], item["channel"]) for item in data["out_of_date"]} == {
        ("posts/a/", "masto"),
        ("posts/a/", "wb"),
    }
    assert len(sandbox.requests("mastodon")) + len(sandbox.requests("weibo")) == requests
