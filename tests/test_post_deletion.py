"""Deletion by the author is proved, never guessed (issue 34).

A copy counts as deleted only when the service's own documented answer says so: for a replayed
Mastodon Idempotency-Key, the API's JSON 404 "Record not found". A maintenance page answering 404
proves nothing: the pair stays in_flight, is read again later, and the run exits non-zero. Before,
any 404 to a replay made the pair `skipped` for ever, and every later run said "every post is
announced everywhere" with exit 0: a lost post.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import httpx
import pytest
from conftest import as_in_flight, mastodon_raw, write_ledger
from sites import mkdocs, post, write_site

from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process
KEY = "posts/a/"
AN_HOUR_AGO = "2026-01-01T00:00:00Z"  # long past any settle time


def killed_mid_post_then_deleted_by_its_author(tmp_path: Path, sandbox) -> Path:
    """A status made by a request whose answer was lost (the ledger says in_flight), then deleted
    on the instance by its author before any run read it back."""
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "max_wait": 1, "channels": {"masto": mastodon_raw(sandbox)}},
        {"a.md": post("A")},
    )
    first = mkdocs(config)
    assert first.returncode == 0, first.stderr
    done = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert done is not None and done.remote_id
    unanswered = dataclasses.replace(as_in_flight(done), at=AN_HOUR_AGO)
    write_ledger(config.parent / "ledger.yml", {(KEY, "masto"): unanswered})
    deleted = httpx.delete(
        f"{sandbox.url}/mastodon/api/v1/statuses/{done.remote_id}",
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    )
    assert deleted.status_code == 200
    return config


def status_of(config: Path) -> subprocess.CompletedProcess:
    from test_post_moves import cli

    return cli(config.parent, "status", "-f", str(config))


def test_a_maintenance_page_answering_404_to_a_replay_is_no_proof_of_deletion(tmp_path, sandbox):
    config = killed_mid_post_then_deleted_by_its_author(tmp_path, sandbox)
    sandbox.add_fault(
        {
            "channel": "mastodon",
            "action": "status",
            "status": 404,
            "match": "/api/v1/statuses",
            "body": "<html><body>Down for maintenance</body></html>",
            "headers": {"Content-Type": "text/html"},
        }
    )
    run = mkdocs(config)
    assert run.returncode != 0, run.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.IN_FLIGHT, record
    assert "every post is announced" not in run.stderr


def test_the_apis_own_record_not_found_to_a_replay_proves_the_author_deleted_it(tmp_path, sandbox):
    config = killed_mid_post_then_deleted_by_its_author(tmp_path, sandbox)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    record = Ledger.read(config.parent / "ledger.yml").record(KEY, "masto")
    assert record is not None and record.state == State.DELETED, record
    assert sandbox.snapshot()["mastodon"]["statuses"] == []  # never posted again
    status = status_of(config)
    assert "deleted" in status.stdout and "masto" in status.stdout, status.stdout
    again = mkdocs(config)
    assert again.returncode == 0 and sandbox.snapshot()["mastodon"]["statuses"] == []
