"""What a newcomer stumbled on setting up `type: matrix` and `type: standard` from the docs: a
room alias taken for a room id until `doctor` blamed the bot's membership, a handle copied with
its `@` refused as a bad app password, the account's own password accepted without a word, a
full stop invented after the title in standard.site's `textContent`, a server's full stop
doubled before our advice (`passed.; log the bot in`), and a `check` example the tool no longer
prints."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from click.testing import CliRunner
from conftest import SITE, make_post
from sites import ROOT

from mkdocs_syndicate.channels.answers import status_outcome
from mkdocs_syndicate.channels.base import CredentialCheck, Health
from mkdocs_syndicate.channels.standard import StandardChannel
from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.doctor import ChannelCheck, check_channels, credentials_reason
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.registry import BUILT_IN, clients
from mkdocs_syndicate.sandbox import atproto_account
from mkdocs_syndicate.sandbox import matrix as matrix_emulator

CLI_PAGE = ROOT / "docs" / "cli.md"


def checks(tmp_path, raw: dict) -> dict[str, ChannelCheck]:
    options = parse_options(
        raw, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True, reading_only=True
    )
    return {c.channel: c for c in check_channels(options)}


def atproto_raw(sandbox, kind: str, **extra) -> dict:
    return {
        "type": kind,
        "service": f"{sandbox.url}/{kind}",
        "handle": atproto_account.HANDLE,
        "app_password": atproto_account.APP_PASSWORD,
        "keep_session": False,
        **extra,
    }


# ---------------------------------------------------------------- the docs say what the tool does


@pytest.mark.unit
def test_the_check_example_is_what_check_prints(tmp_path, monkeypatch):
    page = CLI_PAGE.read_text(encoding="utf-8")
    shown = re.search(r"^\$ mkdocs-syndicate check broken\.yml\n(.+)$", page, re.MULTILINE)
    assert shown, "docs/cli.md has no `check broken.yml` example"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.yml").write_text(
        "# mkdocs-syndicate ledger: what was announced where. Commit this file.\nversion: 3\nposts: {}\n...\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["check", "broken.yml"])
    assert result.exit_code == 1 and result.output.strip() == shown.group(1), result.output


@pytest.mark.unit
def test_the_doctor_table_has_a_row_for_each_built_in_type():
    page = CLI_PAGE.read_text(encoding="utf-8")
    table = page.split("## `doctor", 1)[1].split("\n\n| type | the read |", 1)[1].split("\n\n", 1)[0]
    rows = {line.split("|")[1].strip() for line in table.splitlines()[2:]}
    assert rows == {kind.name for kind in BUILT_IN}


# ---------------------------------------------------------------- matrix: a room alias, a first setup


@pytest.mark.unit
@pytest.mark.parametrize(
    ("room", "said"),
    [
        ("#announcements:example.org", "is the room's alias, not its id"),
        ("https://matrix.to/#/!abc:example.org", "is not a room id"),
    ],
)
def test_a_room_id_that_is_not_one_is_refused_by_name_with_the_other_errors(room, said):
    raw = {
        "room": {
            "type": "matrix",
            "homeserver": "https://matrix.example.org",
            "room_id": room,
            "access_token": "syt_bot_token",
            "embed": "gif",
        }
    }
    with pytest.raises(ConfigError) as caught:
        parse_channels(raw, clients())
    parts = {str(part.setting): str(part) for part in caught.value.parts}
    assert set(parts) == {"channels.room.room_id", "channels.room.embed"}, caught.value
    assert said in parts["channels.room.room_id"]
    assert "starts with !" in parts["channels.room.room_id"]
    assert "Room settings → Advanced" in parts["channels.room.room_id"]


@pytest.mark.http
def test_a_bot_never_in_the_room_is_not_told_to_join_again(tmp_path, sandbox):
    sandbox.emulators["matrix"].joined = False
    raw = {
        "type": "matrix",
        "homeserver": sandbox.url + "/matrix",
        "room_id": matrix_emulator.ROOM,
        "access_token": matrix_emulator.TOKEN,
    }
    found = checks(tmp_path, {"room": raw})["room"].check
    assert found.health is Health.FAILING and "is not in the room" in found.problem
    assert "invite the bot to the room" in found.action and "again" not in found.action, found.action


# ---------------------------------------------------------------- AT Protocol: the handle, the password


@pytest.mark.unit
@pytest.mark.parametrize("kind", ["bluesky", "standard"])
def test_a_handle_copied_with_its_at_sign_is_read_without_it(kind):
    raw = {"c": {"type": kind, "handle": "@me.bsky.social", "app_password": "abcd-efgh-ijkl-mnop"}}
    (settings,) = parse_channels(raw, clients())
    assert settings.options["handle"] == "me.bsky.social"


@pytest.mark.http
@pytest.mark.parametrize("kind", ["bluesky", "standard"])
def test_a_handle_with_its_at_sign_logs_in(tmp_path, sandbox, kind):
    raw = atproto_raw(sandbox, kind, handle="@" + atproto_account.HANDLE)
    found = checks(tmp_path, {"c": raw})["c"].check
    assert found.health is Health.OK, found
    assert found.account == f"@{atproto_account.HANDLE}"


@pytest.mark.http
@pytest.mark.parametrize("kind", ["bluesky", "standard"])
def test_the_account_password_is_a_warning_and_an_app_password_is_not(tmp_path, sandbox, kind):
    """The PDS gives an app password's session the scope com.atproto.appPass (or appPassPrivileged)
    and the account password's com.atproto.access: doctor says ok to both, and warns of the second."""
    app = checks(tmp_path, {"c": atproto_raw(sandbox, kind)})["c"]
    assert app.check.health is Health.OK and not app.check.problem, app
    assert "app passwords do not expire" in app.check.details
    own = checks(tmp_path, {"c": atproto_raw(sandbox, kind, app_password=atproto_account.ACCOUNT_PASSWORD)})["c"]
    assert own.check.health is Health.OK and not own.check.health.needs_a_person, own
    assert "not an app password" in own.check.problem
    assert "can be revoked alone" in own.check.action
    assert "app passwords do not expire" not in own.check.details
    assert "warning: " in own.line and "not an app password" in own.line
    assert atproto_account.ACCOUNT_PASSWORD not in own.line


@pytest.mark.http
def test_doctor_exits_0_for_the_account_password_and_says_why_to_change_it(tmp_path, sandbox):
    import yaml

    (tmp_path / "site").mkdir()
    raw = atproto_raw(sandbox, "bluesky", app_password=atproto_account.ACCOUNT_PASSWORD)
    config = tmp_path / "syndicate.yml"
    config.write_text(yaml.safe_dump({"site_url": SITE.url, "channels": {"bsky": raw}}), encoding="utf-8")
    env = {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None, "CI": None}
    result = CliRunner().invoke(main, ["doctor", "-f", str(config)], env=env)
    assert result.exit_code == 0, result.output
    assert "bsky (bluesky): ok: @sandbox.bsky.social" in result.output
    assert "warning: the session is the account password's, not an app password's" in result.output
    assert atproto_account.ACCOUNT_PASSWORD not in result.output


# ---------------------------------------------------------------- standard.site's textContent


@pytest.mark.unit
def test_text_content_is_the_posts_text_without_an_invented_full_stop():
    settings = parse_channels({"std": {"type": "standard", "handle": "me.bsky.social"}}, clients())[0]
    body = (
        '<h1 id="first-post-hello-rooms">First post: hello rooms<a class="headerlink" href="#x">¶</a></h1>\n'
        '<p>A first post, in two\nlines.</p>\n<h2 id="why">Why rooms</h2>\n<p>Because.</p>'
    )
    post = make_post(1, title="First post: hello rooms", body_html=body)
    record = StandardChannel(settings, SITE).document(post, "at://did:plc:x/site.standard.publication/3m")
    assert record["textContent"] == "A first post, in two lines.\n\nWhy rooms\n\nBecause."


# ---------------------------------------------------------------- a server's full stop, then our advice


class _Answers:
    """A Http that answers each request with the next of `answers`."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers = list(answers)

    async def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        return self.answers.pop(0)

    def now(self) -> float:
        return 0.0


@pytest.mark.unit
def test_a_servers_full_stop_is_not_doubled_before_the_advice():
    settings = parse_channels(
        {
            "room": {
                "type": "matrix",
                "homeserver": "https://matrix.example.org",
                "room_id": matrix_emulator.ROOM,
                "access_token": "syt_bot_token",
            }
        },
        clients(),
    )[0]
    channel = clients()["matrix"](settings, SITE)
    refused = httpx.Response(401, json={"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed."})
    found = asyncio.run(channel.check_credentials(_Answers(refused)))
    line = ChannelCheck("room", "matrix", found).line
    assert line.startswith("room (matrix): failing: 401: Invalid access token passed; log the bot in again"), line
    assert ".;" not in line
    said = asyncio.run(credentials_reason(channel, _Answers(refused), "401 credentials refused: Invalid token."))
    assert ".;" not in said and said.startswith("credentials: 401: Invalid access token passed; "), said
    outcome = status_outcome(httpx.Response(502, json={"error": "Bad gateway."}), 0.0)
    assert outcome.error == "502 from the server: Bad gateway; the post may exist"
    # An ellipsis is the server's own, and the last part keeps its full stop.
    kept = ChannelCheck("c", "t", CredentialCheck(Health.FAILING, problem="wait...", action="try later.")).line
    assert kept == "c (t): failing: wait...; try later."
