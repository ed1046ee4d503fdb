import pytest
from conftest import SITE, make_post, write_ledger

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.content.posts import ChannelOverride
from mkdocs_syndicate.engine.plan import make_plan
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import clients

pytestmark = pytest.mark.unit


def channels():
    raw = {
        "masto": {"type": "mastodon", "instance": "https://m.example", "token": "t0ken"},
        "ping": {"type": "indexnow", "key": "abcdefgh"},
    }
    return [clients()[s.type](s, SITE) for s in parse_channels(raw, clients())]


def test_pending_is_no_record_failed_or_in_flight(tmp_path):
    path = tmp_path / "ledger.yml"
    at = "2026-12-01T00:00:00Z"
    write_ledger(
        path,
        {
            ("blog/post-1/", "masto"): Record(State.DONE, 1, at, remote_id="1"),
            ("blog/post-1/", "ping"): Record(State.SKIPPED, 0, at),
            ("blog/post-2/", "masto"): Record(State.FAILED, 1, at, error="429"),
            ("blog/post-2/", "ping"): Record(State.IN_FLIGHT, 1, at),
            ("blog/post-3/", "masto"): Record(State.IN_FLIGHT, 1, at, idempotency_key="stored-key"),
        },
    )
    plan = make_plan(Ledger.read(path), [make_post(n) for n in (1, 2, 3)], channels(), None)
    pairs = {(p.post.key, p.channel.id): p for p in plan.pairs}
    assert set(pairs) == {
        ("blog/post-2/", "masto"),
        ("blog/post-2/", "ping"),
        ("blog/post-3/", "masto"),
        ("blog/post-3/", "ping"),
    }
    assert pairs[("blog/post-3/", "masto")].needs_verify
    assert pairs[("blog/post-3/", "masto")].prepared.idempotency_key == "stored-key"
    assert not pairs[("blog/post-2/", "ping")].needs_verify  # at-least-once: just resend
    assert not pairs[("blog/post-2/", "masto")].needs_verify


def test_opt_outs_and_max_per_run(tmp_path):
    posts = [make_post(1, overrides={"masto": ChannelOverride(enabled=False)}), make_post(2), make_post(3)]
    plan = make_plan(Ledger.read(tmp_path / "none.yml"), posts, channels(), 2)
    assert [(p.post.key, p.channel.id) for p in plan.pairs] == [
        ("blog/post-2/", "masto"),
        ("blog/post-1/", "ping"),
        ("blog/post-2/", "ping"),
    ]
    assert [p.key for p in plan.deferred] == ["blog/post-3/"]
