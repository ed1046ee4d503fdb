import pytest
from conftest import SITE

from mkdocs_syndicate.channels import REGISTRY
from mkdocs_syndicate.channels.settings import missing_settings, parse_channels
from mkdocs_syndicate.engine.options import parse_options
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import Secret, redact

pytestmark = pytest.mark.unit


def parse(raw):
    return parse_channels(raw, REGISTRY)


def test_defaults_by_type():
    ping, masto = parse(
        {
            "ping": {"type": "indexnow", "key": "abcdefgh"},
            "masto": {"type": "mastodon", "instance": "https://m.example/", "token": "tok-sentinel-9"},
        }
    )
    assert (ping.delivery, masto.delivery) == ("at_least_once", "at_most_once")
    assert masto.options["instance"] == "https://m.example" and masto.timeout == 30
    assert isinstance(masto.options["token"], Secret) and "tok-sentinel-9" not in repr(masto)
    assert masto.options["max_characters"] == 500 and masto.enabled


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"x": {"type": "twitter"}}, "channels.x.type: unknown channel type 'twitter'"),
        ({"x": {"type": "mastodon", "instanse": "https://a"}}, "channels.x.instanse: unknown setting"),
        ({"x": {"type": "mastodon", "instance": "http://mastodon.social"}}, "channels.x.instance:.*non-loopback"),
        ({"x": {"type": "mastodon", "instance": "ftp://a"}}, "channels.x.instance:.*not an http"),
        ({"x": {"type": "mastodon", "delivery": "twice"}}, "channels.x.delivery"),
        ({"x": {"type": "mastodon", "min_interval": -1}}, "channels.x.min_interval"),
        ({"x": {"type": "mastodon", "timeout": 0}}, "channels.x.timeout"),
        ({"x": {"type": "mastodon", "template": "{{ title"}}, "channels.x.template: template error on line 1"),
        ({"x": {"type": "mastodon", "token": 12}}, "channels.x.token: must be text"),
        ({"x": "mastodon"}, "channels.x: must be a mapping"),
        (["mastodon"], "channels: must be a mapping"),
    ],
)
def test_bad_settings_name_the_setting(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse(raw)


def test_http_is_fine_on_loopback():
    for host in ("127.0.0.1:8787", "localhost", "[::1]:9"):
        parse({"x": {"type": "mastodon", "instance": f"http://{host}"}})


def test_missing_credentials_fail_in_send_mode_naming_channel_and_setting(tmp_path):
    raw = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": None}}
    with pytest.raises(ConfigError, match=r"channels.masto.token: missing \(or empty\); channel 'masto' cannot send"):
        parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=True)
    assert missing_settings({"masto": {"type": "mastodon", "enabled": False}}, REGISTRY) == []


def test_every_malformed_and_every_missing_setting_is_reported_at_once(tmp_path):
    """One at a time, and a malformed value hid the missing ones: a fix per build."""
    raw = {
        "masto": {
            "type": "mastodon",
            "instance": "https://m.example",
            "token": "t-123456",
            "visibility": "loud",
            "max_characters": -5,
        },
        "devto": {"type": "forem", "api": "ftp://dev.to/api"},
        "wb": {"type": "weibo", "access_token": "x-123456"},
    }
    with pytest.raises(ConfigError) as caught:
        parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=True)
    text = str(caught.value)
    for setting in (
        "channels.masto.visibility",
        "channels.masto.max_characters",
        "channels.devto.api",
        "channels.devto.api_key: missing",
        "channels.wb.rip: missing",
    ):
        assert setting in text, text
    assert text.endswith("Set them, or set 'enabled: false' on those channels.")


def test_sandbox_needs_no_credentials_and_plan_mode_does_not_check_them(tmp_path):
    raw = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": None}}
    parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=True, sending=True)
    parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=False)
    with pytest.raises(ConfigError):
        parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=True)


def test_indexnow_key_format_is_checked_up_front(tmp_path):
    with pytest.raises(ConfigError, match=r"channels.ping.key: an IndexNow key is 8-128"):
        parse_options(
            {"ping": {"type": "indexnow", "key": "short"}},
            ledger_path=tmp_path / "l.yml",
            site=SITE,
            sandbox=False,
            sending=True,
        )


def test_redact_removes_plain_and_url_encoded_forms():
    token = Secret("s3cr/t+value")
    text = "GET /x?access_token=s3cr%2Ft%2Bvalue failed; header s3cr/t+value"
    assert redact(text, [token]) == "GET /x?access_token=*** failed; header ***"


def test_enumerations_are_checked():
    with pytest.raises(ConfigError, match=r"channels\.m\.visibility: must be one of public, unlisted, private, direct"):
        parse({"m": {"type": "mastodon", "visibility": "followers"}})
