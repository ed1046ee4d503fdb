"""Code nobody here wrote, as the judge: the official AT Protocol SDK (`atproto`) logs in to the
Bluesky emulator and reads back what the channel wrote, and validates every record; the
third-party `mastodon-mock` runs as a second Mastodon server for a send, a replayed key and a
verify read. Each test skips only when its package cannot be imported (the `test` extra, which
`.ci/run` installs, has both)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
from conftest import SITE, ListReporter, as_in_flight, make_post
from test_channel_contracts import SPECS

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http

BSKY = SPECS["bluesky"]


def run(folder, channels, posts, clock, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options)
    return send(opts, posts, ListReporter(), clock=clock)


def sdk_valid(record: dict) -> None:
    """The SDK's models with its strict string formats (datetime, uri, language)."""
    from atproto import models
    from atproto_client.models.utils import get_or_create

    parsed = get_or_create(record, models.AppBskyFeedPost.Record, strict=True, strict_string_format=True)
    assert isinstance(parsed, models.AppBskyFeedPost.Record)


def test_the_sdk_logs_in_to_the_emulator_and_reads_back_what_the_channel_wrote(tmp_path, sandbox, clock):
    atproto = pytest.importorskip("atproto")
    posts = [make_post(1, tags=("python", "mkdocs")), make_post(2, description="Ünïcödé — “quotes” 日本語")]
    report = run(tmp_path, {"ch": BSKY.raw(sandbox, language="en")}, posts, clock)
    assert [r.state for r in report.results] == ["done", "done"]

    client = atproto.Client(base_url=f"{sandbox.url}/bluesky")
    # The SDK's httpx client holds the connection open until closed: else the garbage collector
    # finds its socket in a later test.
    try:
        client.login("sandbox.bsky.social", "sandbox-bsky-app-password", fetch_bsky_profile=False)
        assert client._session.pds_endpoint == f"{sandbox.url}/bluesky-pds"  # from the DID document
        session = client.com.atproto.server.get_session()
        assert session.did == "did:plc:sandbox0000000000000000"
        described = client.com.atproto.repo.describe_repo({"repo": session.did})
        assert described.handle == "sandbox.bsky.social"
        for post in posts:
            rkey = Ledger.read(tmp_path / "ledger.yml").record(post.key, "ch").idempotency_key
            found = client.com.atproto.repo.get_record(
                {"repo": session.did, "collection": "app.bsky.feed.post", "rkey": rkey}
            )
            assert found.value.text.startswith(post.title)
            from atproto import CID

            CID.decode(found.cid)  # a real CID, not a look-alike
    finally:
        client.request.close()


def test_every_record_the_channel_sends_passes_the_sdk(tmp_path, sandbox, clock):
    pytest.importorskip("atproto")
    posts = [
        make_post(
            1,
            title="(A link) #tagged",
            description="see (https://example.com/x/).",
            tags=("Open Source", "a" * 70, "日本語"),
        ),
        make_post(2, description="emoji 👩‍👩‍👧 and é"),
    ]
    run(tmp_path, {"ch": BSKY.raw(sandbox, language="pt-BR")}, posts, clock)
    records = [r["value"] for r in sandbox.snapshot()["bluesky"]["records"].values()]
    assert len(records) == 2
    for record in records:
        sdk_valid(record)


def test_the_sdk_refuses_what_the_config_check_refuses():
    pytest.importorskip("atproto")
    from atproto_client.exceptions import ModelError

    record = {"$type": "app.bsky.feed.post", "text": "x", "createdAt": "2026-12-03T00:00:00.000Z", "langs": ["en_US"]}
    with pytest.raises((ModelError, ValueError)):
        sdk_valid(record)


# ------------------------------------------------------------------ mastodon-mock


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def mastodon_mock(tmp_path):
    pytest.importorskip("mastodon_mock")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mastodon_mock", "serve", "--in-memory", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    import httpx

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v2/instance", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("mastodon-mock did not start")
    yield url
    process.terminate()
    process.wait(timeout=10)


def mock_statuses(url: str) -> list[dict]:
    import httpx

    headers = {"Authorization": "Bearer mock_token"}
    me = httpx.get(f"{url}/api/v1/accounts/verify_credentials", headers=headers).json()
    return httpx.get(f"{url}/api/v1/accounts/{me['id']}/statuses", params={"limit": 40}, headers=headers).json()


@pytest.mark.process
def test_a_second_mastodon_server_mastodon_mock(tmp_path, mastodon_mock, clock):
    """Where mastodon-mock differs from real Mastodon (noted, and allowed for here): it keeps
    Idempotency-Keys forever instead of for an hour, it counts length as raw len() rather than
    grapheme clusters with every URL as 23, and it has no lock around the key."""
    channels = {"masto": {"type": "mastodon", "instance": mastodon_mock, "token": "mock_token"}}
    posts = [make_post(1), make_post(2)]
    report = run(tmp_path, channels, posts, clock)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    ours = [s for s in mock_statuses(mastodon_mock) if "example.com/blog/post-" in s["content"]]
    assert len(ours) == 2

    # A replay with the same key (the record as a killed run would leave it): a read finds the
    # status first, so nothing is sent; and a direct replay returns the original status.
    import httpx

    done = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto")
    replay = httpx.post(
        f"{mastodon_mock}/api/v1/statuses",
        data={"status": "replayed"},
        headers={"Authorization": "Bearer mock_token", "Idempotency-Key": done.idempotency_key},
    )
    assert replay.status_code == 200 and replay.json()["id"] == done.remote_id

    from conftest import write_ledger

    (tmp_path / "again").mkdir()
    write_ledger(
        tmp_path / "again" / "ledger.yml",
        {("blog/post-1/", "masto"): as_in_flight(done)},
    )
    clock.now += 3600
    report = run(tmp_path / "again", channels, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"] and "verify" in report.results[0].detail
    assert Ledger.read(tmp_path / "again" / "ledger.yml").record("blog/post-1/", "masto").remote_id == done.remote_id
    assert len([s for s in mock_statuses(mastodon_mock) if "example.com/blog/post-" in s["content"]]) == 2
