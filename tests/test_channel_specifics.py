"""What only one channel does: Forem's canonical conflicts, Weibo's codes and token handling,
Bluesky's sessions, frozen createdAt, facets and link card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RecordingTransport, make_post, write_ledger
from test_channel_contracts import SPECS, record, remote_posts, run

from mkdocs_syndicate.channels.bluesky import BlueskyChannel
from mkdocs_syndicate.channels.bluesky_records import rkey_for
from mkdocs_syndicate.channels.bluesky_text import facets
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.registry import clients

pytestmark = pytest.mark.http


@pytest.fixture(autouse=True)
def shared_clock(sandbox, clock):
    sandbox.now = clock.time


# ------------------------------------------------------------------ forem


def test_forem_defaults_to_75_seconds_between_requests(tmp_path, sandbox, clock):
    raw = SPECS["forem"].raw(sandbox)
    del raw["min_interval"]
    transport = RecordingTransport(clock)
    run(tmp_path, raw, [make_post(1), make_post(2)], clock, transport)
    times = [t for t, m, _ in transport.seen if m == "POST"]
    assert round(times[1] - times[0]) == 75


def test_forem_article_fields(tmp_path, sandbox, clock):
    post = make_post(
        1, tags=("Python", "Open Source", "a", "b", "c"), body_html='<h1>Post 1</h1>\n<p>Text <a href="../y/">x</a></p>'
    )
    run(tmp_path, SPECS["forem"].raw(sandbox), [post], clock)
    article = remote_posts(sandbox, "forem")[0]
    assert article["canonical_url"] == post.url and article["published"] is True
    assert article["tags"] == ["python", "opensource", "a", "b"]
    # The title heading is not repeated; the link, relative to the post, is made absolute.
    assert article["body_markdown"] == "Text [x](https://example.com/blog/y/)"
    assert article["description"] == "About 1."


def test_forem_canonical_taken_by_someone_else_fails_with_what_to_do(tmp_path, sandbox, clock):
    sandbox.emulators["forem"].add_foreign(make_post(1).url)
    report, _ = run(tmp_path, SPECS["forem"].raw(sandbox), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["failed"]
    error = record(tmp_path).error
    assert "already used by a published article that is not on this account" in error
    assert len([a for a in remote_posts(sandbox, "forem") if a["user"] == "sandbox"]) == 0


def test_forem_429_plain_text_with_retry_after(tmp_path, sandbox, clock):
    sandbox.add_fault({"channel": "forem", "action": "status", "status": 429, "retry_after": 5, "plain": True})
    report, reporter = run(tmp_path, SPECS["forem"].raw(sandbox), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"]
    assert any(round(w[1]) == 5 for w in reporter.waits)


# ------------------------------------------------------------------ weibo


def test_weibo_message_has_url_and_marker_and_no_topics(tmp_path, sandbox, clock):
    post = make_post(1, title="#Python# 的幂等性 @bob", tags=("python",))
    run(tmp_path, SPECS["weibo"].raw(sandbox), [post], clock)
    status = sandbox.snapshot()["weibo"]["statuses"][0]
    assert "http://t.cn/" in status["text"] and "〔mkd·" in status["text"]
    assert "#Python#" not in status["original"] and "＃Python＃" in status["original"]


def test_weibo_template_without_url_is_refused_before_sending(tmp_path, sandbox, clock):
    with pytest.raises(PostError, match="must contain the post URL"):
        run(tmp_path, SPECS["weibo"].raw(sandbox, template="{{ title }}"), [make_post(1)], clock)
    assert sandbox.requests() == []


def test_weibo_long_title_is_shortened_to_140(tmp_path, sandbox, clock):
    post = make_post(1, title="很长的标题" * 40)
    report, _ = run(tmp_path, SPECS["weibo"].raw(sandbox), [post], clock)
    assert [r.state for r in report.results] == ["done"]
    assert "…" in sandbox.snapshot()["weibo"]["statuses"][0]["original"]


def test_weibo_repeat_content_not_in_timeline_needs_review(tmp_path, sandbox, clock):
    sandbox.add_fault(
        {
            "channel": "weibo",
            "action": "status",
            "status": 400,
            "body": {"request": "/2/statuses/share.json", "error_code": 20019, "error": "Repeat conetnt!"},
        }
    )
    report, _ = run(tmp_path, SPECS["weibo"].raw(sandbox), [make_post(1)], clock)
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)]
    assert "20019" in report.results[0].detail
    assert remote_posts(sandbox, "weibo") == []


def test_weibo_20032_sent_but_slow_is_confirmed_by_the_timeline(tmp_path, sandbox, clock):
    sandbox.add_fault(
        {
            "channel": "weibo",
            "action": "status_after",
            "status": 400,
            "body": {
                "request": "/2/statuses/share.json",
                "error_code": 20032,
                "error": "Update success, while server slow now, please wait 1-2 minutes",
            },
        }
    )
    report, _ = run(tmp_path, SPECS["weibo"].raw(sandbox), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"] and len(remote_posts(sandbox, "weibo")) == 1


def test_weibo_token_never_travels_in_a_url(tmp_path, sandbox, clock):
    transport = RecordingTransport(clock)
    run(tmp_path / "a", SPECS["weibo"].raw(sandbox), [make_post(1)], clock, transport)
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml", {("blog/post-1/", "ch"): Record(State.IN_FLIGHT, 1, record(tmp_path / "a").at)}
    )
    clock.now += 7200
    run(tmp_path / "b", SPECS["weibo"].raw(sandbox), [make_post(1)], clock, transport)
    assert any("user_timeline" in path for _, _, path in transport.seen)
    urls = [str(r) for r in transport.seen]
    assert not any("sandbox-weibo-access-token" in u for u in urls)


# ------------------------------------------------------------------ bluesky


def test_bluesky_one_session_for_many_posts_and_none_when_idle(tmp_path, sandbox, clock):
    posts = [make_post(n) for n in (1, 2, 3)]
    run(tmp_path, SPECS["bluesky"].raw(sandbox), posts, clock)
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 1
    run(tmp_path, SPECS["bluesky"].raw(sandbox), posts, clock)
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 1
    text = (tmp_path / "ledger.yml").read_text()
    assert "acc-" not in text and "ref-" not in text


def test_bluesky_retry_is_byte_identical_with_the_frozen_created_at(tmp_path, sandbox, clock):
    post = make_post(1)
    frozen = "2026-11-01T10:00:00.000Z"
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("blog/post-1/", "ch"): Record(
                State.IN_FLIGHT, 1, "2026-12-02T00:00:00Z", idempotency_key=rkey_for(post, "ch"), created_at=frozen
            )
        },
    )
    run(tmp_path, SPECS["bluesky"].raw(sandbox), [post], clock)
    stored = sandbox.snapshot()["bluesky"]["records"][rkey_for(post, "ch")]
    assert stored["value"]["createdAt"] == frozen and record(tmp_path).created_at == frozen
    # The same bytes again at the same key: a no-op success, still one record.
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("blog/post-1/", "ch"): Record(
                State.FAILED, 1, "2026-12-02T00:00:00Z", idempotency_key=rkey_for(post, "ch"), created_at=frozen
            )
        },
    )
    report, _ = run(tmp_path, SPECS["bluesky"].raw(sandbox), [post], clock)
    assert [r.state for r in report.results] == ["done"] and len(remote_posts(sandbox, "bluesky")) == 1


def test_bluesky_different_content_at_our_key_is_found_not_overwritten(tmp_path, sandbox, clock):
    post = make_post(1)
    run(tmp_path / "a", SPECS["bluesky"].raw(sandbox), [post], clock)
    changed = make_post(1, title="Edited title")  # template or title changed since the first send
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml",
        {("blog/post-1/", "ch"): Record(State.FAILED, 1, "2026-12-02T00:00:00Z", idempotency_key=rkey_for(post, "ch"))},
    )
    report, _ = run(tmp_path / "b", SPECS["bluesky"].raw(sandbox), [changed], clock)
    assert [r.state for r in report.results] == ["done"]
    records = remote_posts(sandbox, "bluesky")
    assert len(records) == 1 and records[0]["value"]["text"].startswith("Post 1")


def test_bluesky_expired_access_token_is_refreshed(tmp_path, sandbox, clock):
    sandbox.emulators["bluesky"].expire_next_login = True
    report, _ = run(tmp_path, SPECS["bluesky"].raw(sandbox), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"]
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 1  # refreshed, not logged in again


def kept_sessions() -> list[Path]:
    from mkdocs_syndicate.channels.sessions import state_dir

    return sorted(state_dir().glob("bluesky-*.json")) if state_dir().exists() else []


def test_bluesky_next_run_refreshes_the_kept_session_instead_of_logging_in(tmp_path, sandbox, clock):
    """createSession allows 30 logins in 5 minutes: runs in a row refresh the last run's session."""
    for n in (1, 2, 3):
        run(tmp_path, SPECS["bluesky"].raw(sandbox), [make_post(n)], clock)
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 1
    assert len(remote_posts(sandbox, "bluesky")) == 3
    [kept] = kept_sessions()
    # The owner's alone, outside the project, and no token of it in the ledger.
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.parent.stat().st_mode & 0o777 == 0o700
    assert not kept.is_relative_to(tmp_path)
    refresh = json.loads(kept.read_text())["refresh"]
    assert refresh not in (tmp_path / "ledger.yml").read_text()


@pytest.mark.parametrize("spoil", ["revoked", "garbage"])
def test_bluesky_a_kept_session_the_server_refuses_means_one_login(tmp_path, sandbox, clock, spoil):
    run(tmp_path, SPECS["bluesky"].raw(sandbox), [make_post(1)], clock)
    [kept] = kept_sessions()
    if spoil == "revoked":  # the app password was revoked, or the server forgot the session
        sandbox.emulators["bluesky"].state["sessions"].clear()
    else:
        kept.write_text("{not json")
    report, _ = run(tmp_path, SPECS["bluesky"].raw(sandbox), [make_post(2)], clock)
    assert [r.state for r in report.results] == ["done"]
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 2
    assert json.loads(kept.read_text())["refresh"] in sandbox.emulators["bluesky"].state["sessions"]


def test_bluesky_keep_session_false_keeps_nothing(tmp_path, sandbox, clock):
    raw = {**SPECS["bluesky"].raw(sandbox), "keep_session": False}
    for n in (1, 2):
        run(tmp_path, raw, [make_post(n)], clock)
    assert len(sandbox.snapshot()["bluesky"]["logins"]) == 2 and kept_sessions() == []


def test_bluesky_facets_use_utf8_byte_offsets():
    text = "幂等性 https://example.com/p/ #python"
    found = facets(text)
    data = text.encode("utf-8")
    link, tag = found
    assert data[link["index"]["byteStart"] : link["index"]["byteEnd"]] == b"https://example.com/p/"
    assert data[tag["index"]["byteStart"] : tag["index"]["byteEnd"]] == b"#python"
    assert link["index"]["byteStart"] == len("幂等性 ".encode())


PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f"
    b"\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)  # a real 1x1 PNG


def test_bluesky_link_card_with_thumbnail_from_the_built_site(tmp_path, sandbox, clock):
    site_dir = tmp_path / "site"
    (site_dir / "img").mkdir(parents=True)
    (site_dir / "img" / "card.png").write_bytes(PNG)
    site = Site("https://example.com/", "Example", str(site_dir))
    settings = parse_channels({"ch": SPECS["bluesky"].raw(sandbox)}, clients())
    from conftest import ListReporter

    from mkdocs_syndicate.config.run import Options
    from mkdocs_syndicate.engine.syndication import send

    options = Options(ledger_path=tmp_path / "ledger.yml", channels=settings, site=site)
    post = make_post(1, image="https://example.com/img/card.png")
    send(options, [post], ListReporter(), clock=clock)
    value = remote_posts(sandbox, "bluesky")[0]["value"]
    external = value["embed"]["external"]
    assert external["uri"] == post.url and external["title"] == "Post 1" and external["description"] == "About 1."
    assert external["thumb"]["mimeType"] == "image/png" and external["thumb"]["size"] == len(PNG)


def test_bluesky_rkey_is_a_valid_deterministic_tid():
    import re

    a, b = rkey_for(make_post(1), "bsky"), rkey_for(make_post(1), "bsky")
    assert a == b and re.fullmatch(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}", a)
    assert rkey_for(make_post(2), "bsky") != a


# ---------------------------------------------------------------- Mastodon: the instance's limits, the token's scopes


@pytest.mark.parametrize("instance_limit", [1000, 300])
def test_mastodon_uses_the_instances_own_length_limit(tmp_path, sandbox, clock, instance_limit):
    """500 and 23 are Mastodon's defaults, not every instance's: a message near the limit is made
    under /api/v2/instance's `max_characters` (read once per run, only then)."""
    sandbox.set_quirks("mastodon", max_characters=instance_limit)
    long = make_post(1, description="word " * 300)
    short = make_post(2)
    report, _ = run(tmp_path, SPECS["mastodon"].raw(sandbox), [long, short], clock)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    texts = {s["text"].split("\n")[0]: s["text"] for s in remote_posts(sandbox, "mastodon")}
    from mkdocs_syndicate.channels.mastodon_text import mastodon_length

    sent = mastodon_length(texts["Post 1"])
    assert instance_limit - 10 <= sent <= instance_limit, sent  # not cut at 500, nor refused above the limit
    reads = [r for r in sandbox.requests("mastodon") if r["path"].endswith("/api/v2/instance")]
    assert len(reads) == 1


def test_mastodon_reads_no_limits_when_no_message_is_near_them(tmp_path, sandbox, clock):
    report, _ = run(tmp_path, SPECS["mastodon"].raw(sandbox), [make_post(1), make_post(2)], clock)
    assert [r.state for r in report.results] == ["done", "done"]
    assert not [r for r in sandbox.requests("mastodon") if r["path"].endswith("/api/v2/instance")]


def test_a_mastodon_token_without_the_profile_scope_is_named_at_the_first_read(tmp_path, sandbox, clock):
    """The scopes an older README gave (write:statuses read:statuses) cannot call
    verify_credentials, so every unknown outcome ended in a bare "needs review"."""
    import httpx

    from mkdocs_syndicate.sandbox.mastodon_tokens import STATUSES_ONLY_TOKEN

    answer = httpx.get(
        f"{sandbox.url}/mastodon/api/v1/accounts/verify_credentials",
        headers={"Authorization": f"Bearer {STATUSES_ONLY_TOKEN}"},
    )
    assert answer.status_code == 403 and answer.json() == {"error": "This action is outside the authorized scopes"}
    assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]
    raw = SPECS["mastodon"].raw(sandbox, token=STATUSES_ONLY_TOKEN)
    write_ledger(tmp_path / "ledger.yml", {("blog/post-1/", "ch"): Record(State.IN_FLIGHT, 1, "2026-12-02T00:00:00Z")})
    report, _ = run(tmp_path, raw, [make_post(1)], clock)
    (result,) = report.results
    assert result.state == "in_flight" and result.needs_review, result
    assert "write:statuses read:statuses profile" in result.detail and "403" in result.detail, result.detail
    assert remote_posts(sandbox, "mastodon") == []  # never resent blind


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 200, "body": "<html>maintenance</html>"},
        {"status": 200, "body": {"configuration": "none"}},
        {"status": 200, "body": {"configuration": {"statuses": [500]}}},
        {
            "status": 200,
            "body": {"configuration": {"statuses": {"max_characters": "lots", "characters_reserved_per_url": -1}}},
        },
        {"status": 200, "body": b"\x00\x01 not gzip", "headers": {"Content-Encoding": "gzip"}},
        {"status": 503, "body": {"error": "down"}},
    ],
)
def test_a_garbage_instance_answer_leaves_the_configured_limit_and_sends_once(tmp_path, sandbox, clock, answer):
    """The limits read is advice: whatever the instance answers there, the message made under the
    configured limit goes, once (it crashed the lane on a non-dict `configuration` or a bad gzip)."""
    sandbox.add_fault({"channel": "mastodon", "match": "GET /api/v2/instance", "action": "status", **answer})
    report, _ = run(tmp_path, SPECS["mastodon"].raw(sandbox), [make_post(1, description="word " * 300)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    (status,) = remote_posts(sandbox, "mastodon")
    from mkdocs_syndicate.channels.mastodon_text import mastodon_length

    assert 450 <= mastodon_length(status["text"]) <= 500


def test_a_sandbox_rehearsal_keeps_no_bluesky_session():
    """The sandbox's settings (its emulator's client_options) turn keeping off: a rehearsal
    leaves nothing in the user's state folder."""
    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.sandbox.site import make_channels

    options = parse_options(
        {"bsky": {"type": "bluesky"}},
        ledger_path=Path("/nonexistent/l.yml"),
        site=Site("https://example.com/", "x"),
        sandbox=True,
        sending=True,
    )
    (channel,) = make_channels(options)
    assert isinstance(channel, BlueskyChannel)
    assert channel.settings.options["keep_session"] is False and channel._kept is None
