"""The example site lives a post's life in the sandbox, as the docs tell it (docs/getting-started.md, issue 34): a title
fixed (the post moves and its copies are edited, none made again), then a post removed with
`removals: delete` (its copies deleted where the service can, kept on Weibo, which cannot)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sites import ROOT, mkdocs

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process

HELLO = "blog/2026/11/20/hello-fediverse/"
HELLO_AGAIN = "blog/2026/11/20/hello-again-fediverse/"
RATE_LIMITS = "blog/2026/11/28/rate-limits-are-part-of-the-api/"


def emulated(tmp_path: Path) -> dict:
    return json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())


def test_the_example_site_fixes_a_title_then_removes_a_post(tmp_path):
    site = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", site, ignore=shutil.ignore_patterns("site"))
    (tmp_path / "ledger.yml").write_text(dump({}), encoding="utf-8")
    config = site / "mkdocs.yml"
    text = config.read_text()
    for channel in ("indexnow: {type: indexnow,", "devto: {type: forem,", "bluesky: {type: bluesky,"):
        text = text.replace(channel, channel + " removals: delete,")
    text = text.replace("          type: mastodon\n", "          type: mastodon\n          removals: delete\n")
    config.write_text(text)
    assert mkdocs(config).returncode == 0
    assert mkdocs(config).returncode == 0  # IndexNow's pings confirmed
    statuses = {s["id"]: s for s in emulated(tmp_path)["mastodon"]["statuses"]}
    assert len(statuses) == 3

    hello = site / "docs" / "blog" / "posts" / "hello.md"
    hello.write_text(hello.read_text().replace("# Hello, fediverse", "# Hello again, fediverse"))
    moved = mkdocs(config)
    assert moved.returncode == 0, moved.stderr
    assert f"moved: {HELLO} → {HELLO_AGAIN}" in moved.stderr
    after = emulated(tmp_path)["mastodon"]["statuses"]
    assert {s["id"] for s in after} == set(statuses)  # edited in place: no status made again
    assert any("Hello again, fediverse" in s["text"] and s.get("edits") for s in after)
    assert "weibo: 1 copy out of date, not updated (weibo cannot edit a post in place)" in moved.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    assert HELLO in book.posts[HELLO_AGAIN].aliases and HELLO not in book.posts

    (site / "docs" / "blog" / "posts" / "rate-limits.md").unlink()
    removed = mkdocs(config)
    assert removed.returncode == 0, removed.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    states = {channel: record.state for channel, record in book.posts[RATE_LIMITS].channels.items()}
    assert states == {
        "indexnow": State.DELETED,
        "mastodon": State.DELETED,
        "devto": State.DELETED,
        "bluesky": State.DELETED,
        "weibo": State.DONE,
    }
    assert "weibo: 1 copy of removed posts kept (weibo cannot delete a post)" in removed.stderr
    assert len(emulated(tmp_path)["mastodon"]["statuses"]) == 2
    again = mkdocs(config)
    assert again.returncode == 0 and "0 requests" in again.stderr, again.stderr
