"""Secrets never reach stdout, stderr, logs, the ledger or tracebacks: real `mkdocs build -v`
(DEBUG) processes with sentinel credentials that the emulators accept, run clean, against servers
that echo the credential back in their error messages, and with an unexpected exception mid-run."""

from __future__ import annotations

import secrets
import textwrap
from pathlib import Path

import pytest
from sites import mkdocs, post

pytestmark = pytest.mark.process

SENTINELS = {
    name: f"SENTINEL{secrets.token_hex(12)}" for name in ("MASTO_TOKEN", "DEVTO_KEY", "WEIBO_TOKEN", "BSKY_PASSWORD")
}
JWT_PREFIX = f"SENTINELJWT{secrets.token_hex(6)}-"


@pytest.fixture
def site(tmp_path, sandbox):
    sandbox.emulators["mastodon"].token = SENTINELS["MASTO_TOKEN"]
    sandbox.emulators["forem"].api_key = SENTINELS["DEVTO_KEY"]
    sandbox.emulators["weibo"].token = SENTINELS["WEIBO_TOKEN"]
    sandbox.emulators["bluesky"].app_password = SENTINELS["BSKY_PASSWORD"]
    sandbox.emulators["bluesky"].jwt_prefix = JWT_PREFIX
    docs = tmp_path / "docs" / "posts"
    docs.mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    for n in (1, 2):
        (docs / f"p{n}.md").write_text(post(f"Post {n}", f"2026-11-2{n}"))
    url = sandbox.url
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        textwrap.dedent(f"""\
        site_name: Secret Site
        site_url: https://example.com/
        plugins:
          - syndicate:
              mode: send
              backlog: send
              channels:
                masto: {{type: mastodon, instance: "{url}/mastodon", token: !ENV MASTO_TOKEN}}
                devto: {{type: forem, api: "{url}/forem/api", api_key: !ENV DEVTO_KEY, min_interval: 0}}
                weibo: {{type: weibo, api: "{url}/weibo/2", access_token: !ENV WEIBO_TOKEN, rip: 203.0.113.7}}
                bsky: {{type: bluesky, service: "{url}/bluesky", handle: sandbox.bsky.social,
                        app_password: !ENV BSKY_PASSWORD}}
        """)
    )
    return config


def build(config: Path, **env: str):
    return mkdocs(config, "build", "-v", env={**SENTINELS, **env})


def assert_no_secret(config: Path, *texts: str) -> None:
    folder = config.parent
    everything = list(texts)
    for path in [folder / "ledger.yml", *folder.glob("site/**/*")]:
        if path.is_file():
            everything.append(path.read_text(errors="replace"))
    blob = "\n".join(everything)
    for secret in [*SENTINELS.values(), JWT_PREFIX]:
        assert secret not in blob, f"secret leaked: {secret[:12]}…"
        assert secret[8:24] not in blob, "part of a secret leaked"


def test_clean_debug_run_shows_no_secret(site, sandbox):
    result = build(site)
    assert result.returncode == 0, result.stderr
    assert "DEBUG" in result.stderr  # the verbose log really was on
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 2  # the sentinels were accepted
    assert sandbox.snapshot()["bluesky"]["sessions"]  # and a session token was handed out
    assert_no_secret(site, result.stdout, result.stderr)


def test_servers_echoing_the_credential_are_redacted(site, sandbox):
    for channel, secret, status in (
        ("mastodon", "MASTO_TOKEN", 401),
        ("forem", "DEVTO_KEY", 422),
        ("weibo", "WEIBO_TOKEN", 400),
    ):
        sandbox.add_fault(
            {
                "channel": channel,
                "action": "status",
                "status": status,
                "times": 20,
                "body": {"error": f"bad credential {SENTINELS[secret]} (echoed)"},
            }
        )
    sandbox.add_fault(
        {
            "channel": "bluesky",
            "action": "status",
            "status": 400,
            "times": 20,
            "match": "createRecord",
            "body": {
                "error": "InvalidRequest",
                "message": f"token {JWT_PREFIX}acc-0 password {SENTINELS['BSKY_PASSWORD']}",
            },
        }
    )
    sandbox.add_fault(
        {
            "channel": "bluesky",
            "action": "status",
            "status": 400,
            "times": 20,
            "match": "putRecord",
            "body": {
                "error": "InvalidRequest",
                "message": f"token {JWT_PREFIX}acc-0 password {SENTINELS['BSKY_PASSWORD']}",
            },
        }
    )
    result = build(site)
    assert result.returncode != 0
    assert "bad credential" in result.stderr and "(echoed)" in result.stderr  # the message itself is kept
    assert_no_secret(site, result.stdout, result.stderr)


def test_unexpected_exception_traceback_shows_no_secret(site, sandbox):
    result = build(site, SYNDICATE_CRASH_AT="after_in_flight_write:2", SYNDICATE_CRASH_HOW="raise")
    assert result.returncode != 0
    assert "InjectedCrash" in result.stderr and "Traceback" in result.stderr, result.stderr[-2000:]
    assert_no_secret(site, result.stdout, result.stderr)
