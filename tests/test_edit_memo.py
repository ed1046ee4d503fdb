"""Finding copies out of date without making every message on every build (engine/memo.py)."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import channel_settings, make_post, mastodon_raw, write_ledger

from mkdocs_syndicate.channels.mastodon import MastodonChannel
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.engine.memo import MessageMemo
from mkdocs_syndicate.engine.plan import make_plan
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.unit


class Counting(MastodonChannel):
    made = 0

    def prepare(self, post, created_at=None, life=0):
        Counting.made += 1
        return super().prepare(post, created_at, life)


class _Server:
    url = "http://127.0.0.1:1"


def setup(tmp_path, posts):
    (settings,) = channel_settings({"masto": mastodon_raw(_Server())})
    channel = Counting(settings, Site("https://example.com/", "Site"))
    records = {}
    for post in posts:
        sha = channel.prepare(post).sha256
        records[(post.key, "masto")] = Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1", message_sha256=sha)
    write_ledger(tmp_path / "ledger.yml", records)
    return channel, Ledger.read(tmp_path / "ledger.yml")


def test_a_second_plan_makes_no_message_for_posts_that_did_not_change(tmp_path):
    posts = [make_post(n) for n in range(1, 21)]
    channel, ledger = setup(tmp_path, posts)
    memo_path = tmp_path / "memo.json"
    first = MessageMemo(memo_path)
    Counting.made = 0
    assert not make_plan(ledger, posts, [channel], None, memo=first).pairs
    assert Counting.made == 20  # no memo yet: each message made once, and remembered
    first.save()
    Counting.made = 0
    assert not make_plan(ledger, posts, [channel], None, memo=MessageMemo(memo_path)).pairs
    assert Counting.made == 0


def test_the_memo_never_hides_an_edit(tmp_path):
    posts = [make_post(n) for n in range(1, 4)]
    channel, ledger = setup(tmp_path, posts)
    memo = MessageMemo(tmp_path / "memo.json")
    make_plan(ledger, posts, [channel], None, memo=memo)
    memo.save()
    edited = [dataclasses.replace(posts[0], description="Corrected."), *posts[1:]]
    plan = make_plan(ledger, edited, [channel], None, memo=MessageMemo(tmp_path / "memo.json"))
    assert [(pair.post.key, pair.op) for pair in plan.pairs] == [(posts[0].key, "update")]


def test_a_memo_that_lies_costs_time_not_an_edit(tmp_path):
    """A memo is trusted only to say "unchanged" for the hash the record has: a corrupt or foreign
    memo file is ignored, and a wrong entry only makes the message again."""
    posts = [make_post(1)]
    channel, ledger = setup(tmp_path, posts)
    (tmp_path / "memo.json").write_text("{not json", encoding="utf-8")
    edited = [dataclasses.replace(posts[0], description="Corrected.")]
    plan = make_plan(ledger, edited, [channel], None, memo=MessageMemo(tmp_path / "memo.json"))
    assert [pair.op for pair in plan.pairs] == ["update"]
