"""Issue 38: credentials checked before they are needed (`mkdocs-syndicate doctor`): one
authenticated read per channel, against the emulators' healthy, revoked, expiring and wrong-scope
credentials; never a write, never the ledger."""

from __future__ import annotations

import asyncio
import io
import json

import httpx
import pytest
from conftest import SITE, indexnow_raw, make_post, mastodon_raw

from mkdocs_syndicate.channels.answers import rate_limit_left
from mkdocs_syndicate.channels.base import Channel, CredentialCheck, Health
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.doctor import check_channels
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.sandbox import mastodon_tokens
from mkdocs_syndicate.sandbox import matrix as matrix_emulator
from mkdocs_syndicate.sandbox import weibo as weibo_emulator


@pytest.mark.unit
def test_a_channel_type_without_a_check_says_so_and_needs_no_person():
    class Quiet(Channel):
        type_name = "quiet"

    settings = parse_channels({"q": {"type": "quiet"}}, {"quiet": Quiet})[0]
    found = asyncio.run(Quiet(settings, SITE).check_credentials(None))
    assert found == CredentialCheck(Health.NOT_CHECKED, problem="quiet has no credential check")
    assert not found.health.needs_a_person


@pytest.mark.unit
@pytest.mark.parametrize(
    ("headers", "said"),
    [
        (
            {
                "X-RateLimit-Limit": "300",
                "X-RateLimit-Remaining": "287",
                "X-RateLimit-Reset": "2026-12-04T18:00:00.019685Z",
            },
            "287 of 300 requests left (resets 2026-12-04T18:00:00Z)",
        ),
        (
            {"RateLimit-Limit": "5000", "RateLimit-Remaining": "4997", "RateLimit-Reset": "1796400000"},
            "4997 of 5000 requests left (resets 2026-12-04T16:00:00Z)",
        ),
        ({"X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "²"}, None),
        ({}, None),
    ],
)
def test_rate_limit_left_is_read_where_the_service_reports_it(headers, said):
    assert rate_limit_left(headers) == said


# ---------------------------------------------------------------- each channel against its emulator


def checks(tmp_path, raw: dict, site=SITE, transport=None):
    options = parse_options(
        raw, ledger_path=tmp_path / "ledger.yml", site=site, sandbox=False, sending=True, reading_only=True
    )
    found = check_channels(options, transport=transport)
    assert not (tmp_path / "ledger.yml").exists()  # never the ledger
    return {c.channel: c.check for c in found}


def reads_only(sandbox, channel: str) -> None:
    """Nothing made: every request of a check is a read (a login and a token read are POSTs)."""
    for request in sandbox.requests(channel):
        assert request["method"] == "GET" or request["path"].endswith(("createSession", "get_token_info")), request
    assert not sandbox.emulators[channel].received(sandbox.snapshot()[channel], sandbox.url)


@pytest.mark.http
@pytest.mark.parametrize(
    ("token", "health", "said"),
    [
        (mastodon_tokens.TOKEN, Health.OK, "scopes: profile read write"),
        (mastodon_tokens.REVOKED_TOKEN, Health.FAILING, "401 The access token was revoked"),
        ("sandbox-mastodon-token-mistyped", Health.FAILING, "401 The access token is invalid"),
        (mastodon_tokens.EXPIRING_TOKEN, Health.EXPIRING, "the token expires in 3.0 days"),
        (mastodon_tokens.READ_ONLY_TOKEN, Health.FAILING, "the token lacks the scope write:statuses"),
        (mastodon_tokens.STATUSES_ONLY_TOKEN, Health.FAILING, "403 This action is outside the authorized scopes"),
    ],
)
def test_mastodon_token_is_checked_with_verify_credentials_and_its_scopes(tmp_path, sandbox, token, health, said):
    found = checks(tmp_path, {"masto": mastodon_raw(sandbox, token=token)})["masto"]
    assert found.health is health, found
    assert said in " ".join((found.problem, *found.details)), found
    if health is Health.OK:
        assert found.account == "@sandbox"
        assert any(d.startswith("299 of 300 requests left (resets ") for d in found.details), found.details
    else:
        assert "write:statuses read:statuses profile" in found.action
    assert token not in repr(found)
    reads_only(sandbox, "mastodon")


@pytest.mark.http
@pytest.mark.parametrize(
    ("key", "health", "said"),
    [("sandbox-forem-api-key", Health.OK, ""), ("sandbox-forem-api-key-revoked", Health.FAILING, "401 unauthorized")],
)
def test_dev_key_is_checked_with_users_me(tmp_path, sandbox, key, health, said):
    raw = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": key}
    found = checks(tmp_path, {"devto": raw})["devto"]
    assert found.health is health and said in found.problem, found
    assert found.account == ("@sandbox" if health is Health.OK else "")
    reads_only(sandbox, "forem")


@pytest.mark.http
@pytest.mark.parametrize(
    ("token", "health", "said"),
    [
        (weibo_emulator.TOKEN, Health.OK, "expires in 1825 days"),
        (weibo_emulator.EXPIRING_TOKEN, Health.EXPIRING, "the access token expires in 3.0 days"),
        (weibo_emulator.EXPIRED_TOKEN, Health.FAILING, "error 21327: expired_token"),
        ("sandbox-weibo-revoked", Health.FAILING, "error 21332: invalid_access_token"),
    ],
)
def test_weibo_token_is_checked_with_get_token_info(tmp_path, sandbox, token, health, said):
    raw = {"type": "weibo", "api": sandbox.url + "/weibo/2", "access_token": token}
    found = checks(tmp_path, {"weibo": raw})["weibo"]
    assert found.health is health, found
    assert said in " ".join((found.problem, *found.details)), found
    assert token not in repr(found)
    reads_only(sandbox, "weibo")


@pytest.mark.http
@pytest.mark.parametrize(
    ("change", "health", "said"),
    [
        ({}, Health.OK, ""),
        (
            {"app_password": "sandbox-bsky-app-password-revoked"},
            Health.FAILING,
            "app password was refused (401: AuthenticationRequired)",
        ),
        ({"account_status": "deactivated"}, Health.FAILING, "the account is deactivated"),
        ({"account_status": "takendown"}, Health.FAILING, "taken down by its host (401: AccountTakedown)"),
    ],
)
def test_bluesky_app_password_and_account_are_checked(tmp_path, sandbox, change, health, said):
    emulator = sandbox.emulators["bluesky"]
    if "account_status" in change:
        emulator.account_status = change["account_status"]
    raw = {
        "type": "bluesky",
        "service": sandbox.url + "/bluesky",
        "handle": "sandbox.bsky.social",
        "app_password": change.get("app_password", "sandbox-bsky-app-password"),
        "keep_session": False,
    }
    found = checks(tmp_path, {"bsky": raw})["bsky"]
    assert found.health is health and said in found.problem, found
    if health is Health.OK:
        assert found.account == "@sandbox.bsky.social"
        assert any(d.startswith("5000 of 5000 requests left") for d in found.details), found.details
    reads_only(sandbox, "bluesky")


@pytest.mark.http
@pytest.mark.parametrize(
    ("token", "joined", "health", "said"),
    [
        (matrix_emulator.TOKEN, True, Health.OK, ""),
        ("sandbox-matrix-token-revoked", True, Health.FAILING, "401: Unrecognised access token"),
        (matrix_emulator.EXPIRED_TOKEN, True, Health.FAILING, "401: Access token has expired"),
        (matrix_emulator.TOKEN, False, Health.FAILING, "is not in the room"),
    ],
)
def test_matrix_token_and_room_membership_are_checked(tmp_path, sandbox, token, joined, health, said):
    sandbox.emulators["matrix"].joined = joined
    raw = {
        "type": "matrix",
        "homeserver": sandbox.url + "/matrix",
        "room_id": matrix_emulator.ROOM,
        "access_token": token,
    }
    found = checks(tmp_path, {"room": raw})["room"]
    assert found.health is health and said in found.problem, found
    reads_only(sandbox, "matrix")


@pytest.mark.http
@pytest.mark.parametrize(
    ("written", "health", "said"),
    [
        ("site-key-1234\n", Health.OK, ""),
        (None, Health.FAILING, "the key file is not there"),
        ("another-key-999", Health.FAILING, "does not hold the configured key"),
    ],
)
def test_indexnow_key_file_is_checked_where_the_engine_reads_it(tmp_path, sandbox, written, health, said):
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    if written is not None:
        (site_dir / "site-key-1234.txt").write_text(written, encoding="utf-8")
    site = Site(SITE.url, SITE.name, site_dir=str(site_dir))
    found = checks(tmp_path, {"ping": indexnow_raw(sandbox, key="site-key-1234")}, site=site)["ping"]
    assert found.health is health and said in found.problem, found
    assert sandbox.requests("indexnow") == []  # no ping


@pytest.mark.unit
@pytest.mark.parametrize(
    ("status", "body", "health"),
    [(200, "site-key-1234", Health.OK), (404, "not found", Health.FAILING), (200, "<html>", Health.FAILING)],
)
def test_indexnow_key_file_is_read_on_the_live_site(tmp_path, status, body, health):
    seen = []

    def live_site(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(status, stream=httpx.ByteStream(body.encode()))  # read as a server sends it

    raw = {"ping": {"type": "indexnow", "key": "site-key-1234"}}
    found = checks(tmp_path, raw, transport=httpx.MockTransport(live_site))["ping"]
    assert seen == ["https://example.com/site-key-1234.txt"]
    assert found.health is health, found


# ---------------------------------------------------------------- the command, and GitHub Actions


def standalone(folder, channels: dict, **extra):
    import yaml

    (folder / "site").mkdir(parents=True, exist_ok=True)
    (folder / "site" / "site-key-1234.txt").write_text("site-key-1234", encoding="utf-8")
    settings = {"site_url": SITE.url, "site_name": "Example", "mode": "send", "channels": channels, **extra}
    config = folder / "syndicate.yml"
    config.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return config


def doctor(config, *args, env=None):
    from click.testing import CliRunner

    from mkdocs_syndicate.cli import main

    base = {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None, "CI": None}
    return CliRunner().invoke(main, ["doctor", "-f", str(config), *args], env={**base, **(env or {})})


def five_channels(sandbox, **tokens) -> dict:
    return {
        "masto": mastodon_raw(sandbox, token=tokens.get("masto", mastodon_tokens.TOKEN)),
        "devto": {
            "type": "forem",
            "api": sandbox.url + "/forem/api",
            "api_key": tokens.get("devto", "sandbox-forem-api-key"),
        },
        "weibo": {
            "type": "weibo",
            "api": sandbox.url + "/weibo/2",
            "access_token": tokens.get("weibo", weibo_emulator.TOKEN),
        },
        "bsky": {
            "type": "bluesky",
            "service": sandbox.url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": tokens.get("bsky", "sandbox-bsky-app-password"),
            "keep_session": False,
        },
        "ping": indexnow_raw(sandbox, key="site-key-1234"),
    }


@pytest.mark.http
def test_doctor_passes_when_every_credential_works_and_writes_nothing(tmp_path, sandbox):
    config = standalone(tmp_path, five_channels(sandbox))
    result = doctor(config)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "masto (mastodon)",
        "devto (forem)",
        "weibo (weibo)",
        "bsky (bluesky)",
        "ping (indexnow)",
    ]
    assert all(": ok" in line for line in lines), lines
    assert not (tmp_path / "ledger.yml").exists()
    assert all(not e.received(sandbox.snapshot()[n], sandbox.url) for n, e in sandbox.emulators.items())


@pytest.mark.http
def test_doctor_fails_with_one_line_per_failing_channel_and_what_to_do(tmp_path, sandbox):
    revoked = {"masto": mastodon_tokens.REVOKED_TOKEN, "weibo": weibo_emulator.EXPIRING_TOKEN}
    config = standalone(tmp_path, five_channels(sandbox, **revoked))
    result = doctor(config)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    masto = next(line for line in lines if line.startswith("masto"))
    assert masto.startswith("masto (mastodon): failing: 401 The access token was revoked; make a new access token")
    weibo = next(line for line in lines if line.startswith("weibo"))
    assert weibo.startswith("weibo (weibo): expiring: the access token expires in 3.0 days; authorise the app again")
    assert "Error: 2 channel(s) need a person: masto, weibo (see above)" in result.output
    assert mastodon_tokens.REVOKED_TOKEN not in result.output


@pytest.mark.http
def test_doctor_json_says_each_channel_in_full(tmp_path, sandbox):
    config = standalone(tmp_path, five_channels(sandbox, devto="revoked-key-0000"))
    result = doctor(config, "--json")
    assert result.exit_code == 1
    data = json.loads(result.output.split("\nError:")[0])
    assert data["ok"] is False and data["sandbox"] is False
    found = {c["channel"]: c for c in data["channels"]}
    assert found["devto"]["health"] == "failing" and "DEV Community API Keys" in found["devto"]["action"]
    assert found["masto"]["health"] == "ok" and found["masto"]["account"] == "@sandbox"
    assert "revoked-key-0000" not in result.output


@pytest.mark.http
def test_doctor_in_the_sandbox_checks_the_emulators_with_their_own_credentials(tmp_path):
    config = standalone(
        tmp_path, {"masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "real"}}, sandbox=True
    )
    result = doctor(config)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("masto (mastodon): ok: @sandbox")


@pytest.mark.http
def test_in_github_actions_doctor_annotates_and_writes_the_job_summary(tmp_path, sandbox):
    summary = tmp_path / "summary.md"
    config = standalone(tmp_path, five_channels(sandbox, masto=mastodon_tokens.READ_ONLY_TOKEN))
    result = doctor(config, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("::error")]
    assert errors == [
        "::error title=mkdocs-syndicate%3A masto credentials::masto (mastodon): failing: the token lacks the scope "
        "write:statuses; make a new access token (Preferences → Development → your application) with the scopes "
        "write:statuses read:statuses profile, and put it where the config's token setting reads it"
    ]
    markdown = summary.read_text(encoding="utf-8")
    assert markdown.startswith(
        "### mkdocs-syndicate: credentials\n\n| Channel | Type | Health | Account | Details |\n|---|---|---|---|---|\n"
    )
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and "Channel" not in line]
    assert rows[0].startswith("| masto | mastodon | ❌ failing | @sandbox | the token lacks the scope write:statuses; ")
    assert rows[1].startswith("| devto | forem | ✅ ok | @sandbox | API keys have no scopes and no expiry")
    assert len(rows) == 5


@pytest.mark.http
def test_outside_github_actions_nothing_is_annotated_or_summarised(tmp_path, sandbox):
    summary = tmp_path / "summary.md"
    config = standalone(tmp_path, five_channels(sandbox, masto=mastodon_tokens.READ_ONLY_TOKEN))
    result = doctor(config, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1 and "::" not in result.output
    assert not summary.exists()


# ---------------------------------------------------------------- a send run


def send_run(tmp_path, raw: dict, posts, clock):
    from conftest import ListReporter

    from mkdocs_syndicate.engine.syndication import send

    options = parse_options(
        raw, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True, backlog="send"
    )
    return options, send(options, posts, ListReporter(), clock=clock)


@pytest.mark.http
@pytest.mark.parametrize(
    ("token", "said"),
    [
        (
            mastodon_tokens.REVOKED_TOKEN,
            "credentials: 401 The access token was revoked; the request got 401: The access "
            "token was revoked; make a new access token",
        ),
        (
            mastodon_tokens.READ_ONLY_TOKEN,
            "credentials: the token lacks the scope write:statuses; the request got 403: "
            "This action is outside the authorized scopes; make a new access token",
        ),
    ],
)
def test_a_send_refused_for_its_credentials_checks_them_and_says_so(tmp_path, sandbox, clock, token, said):
    from mkdocs_syndicate.ledger.store import Ledger

    _, report = send_run(tmp_path, {"masto": mastodon_raw(sandbox, token=token)}, [make_post(1), make_post(2)], clock)
    first, second = report.results
    assert first.state == "failed" and first.detail.startswith(said), first.detail
    assert second.state == "not_attempted" and f"masto stopped for this run: {said}" in second.detail
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto").error.startswith(said)
    assert token not in (tmp_path / "ledger.yml").read_text()


@pytest.mark.http
def test_a_refusal_the_credential_check_does_not_confirm_is_said_to_be_about_the_request(tmp_path, sandbox, clock):
    # DEV answers this one request 401 (a proxy's, say), and its users/me answers 200.
    sandbox.add_fault({"channel": "forem", "action": "status", "status": 401, "match": "POST /api/articles"})
    raw = {"devto": {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key"}}
    _, report = send_run(tmp_path, raw, [make_post(1)], clock)
    assert report.results[0].detail.startswith("credentials look sound (@sandbox), yet the service answered 401")


@pytest.mark.http
def test_in_github_actions_a_run_writes_its_job_summary_and_annotations(tmp_path, sandbox, clock, monkeypatch, capsys):
    from rich.console import Console

    from mkdocs_syndicate.output.display import run_with_display

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("MASTO_TOKEN", mastodon_tokens.TOKEN)
    raw = {
        "masto": mastodon_raw(sandbox),
        "devto": {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "revoked-api-key-0000"},
        "ping": indexnow_raw(sandbox, key="fresh-key-5678"),  # a key the engine has not fetched yet: 202
    }
    options = parse_options(
        raw, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True, backlog="send"
    )
    logged: list[str] = []
    run_with_display(options, [make_post(1)], logged.append, logged.append, console=Console(file=io.StringIO()))
    markdown = summary.read_text(encoding="utf-8")
    status = sandbox.snapshot()["mastodon"]["statuses"][0]
    assert markdown.startswith("### mkdocs-syndicate\n\n**Went out**\n\n| Post | Channel | Copy |\n|---|---|---|\n")
    assert f'| blog/post-1/ | masto | <a href="{status["url"]}">{status["url"]}</a> |' in markdown
    assert (
        "**Waits**\n\n| Post | Channel | State | Why |\n|---|---|---|---|\n| blog/post-1/ | ping | waiting | 202 accepted, key validation pending"
        in markdown
    )
    assert (
        "**Needs a person**\n\n| Post | Channel | State | Why |\n|---|---|---|---|\n| blog/post-1/ | devto | failed | credentials: 401 unauthorized"
        in markdown
    )
    assert "revoked-api-key-0000" not in markdown and mastodon_tokens.TOKEN not in markdown
    commands = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    assert commands == [
        "::error title=mkdocs-syndicate%3A devto failed::(blog/post-1/, devto) failed: credentials: 401 unauthorized: "
        "the API key was revoked or is not this account's; the request got 401: unauthorized; "
        "make a new key (DEV → Settings → Extensions → DEV Community API Keys) and put it where the config's "
        "api_key setting reads it"
    ]


@pytest.mark.unit
def test_a_job_summary_cell_cannot_break_the_table_or_carry_markup():
    from mkdocs_syndicate.engine.results import PairResult, RunReport
    from mkdocs_syndicate.output.actions import command, run_summary

    report = RunReport(
        [PairResult("blog/a|b/", "masto", PairState.FAILED, "<img src=x> | broken\nline", needs_review=True)]
    )
    row = run_summary(report, "ledger.yml").splitlines()[6]
    assert row == "| blog/a\\|b/ | masto | failed | &lt;img src=x&gt; \\| broken\\x0aline |"
    assert command("error", "a: b, c", "one\ntwo %") == "::error title=a%3A b%2C c::one\\x0atwo %25"


@pytest.mark.process
def test_in_github_actions_the_plugins_build_writes_the_job_summary_too(tmp_path, sandbox):
    from conftest import site_channels
    from sites import mkdocs, post, write_site

    summary = tmp_path / "summary.md"
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": site_channels(sandbox, token=mastodon_tokens.REVOKED_TOKEN)},
        {"a.md": post("First")},
    )
    sandbox.key_file_root = config.parent / "site"
    result = mkdocs(config, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1
    markdown = summary.read_text(encoding="utf-8")
    assert "**Needs a person**" in markdown
    assert "| posts/a/ | masto | failed | credentials: 401 The access token was revoked; " in markdown
    assert "**Went out**" in markdown and "| posts/a/ | ping | pinged with 1 URL(s) |" in markdown
    assert "::error title=mkdocs-syndicate%3A masto failed::(posts/a/, masto) failed: credentials: 401" in result.stdout
    assert mastodon_tokens.REVOKED_TOKEN not in markdown + result.stdout + result.stderr
