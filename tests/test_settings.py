import pytest
from conftest import SITE

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.completeness import missing_settings
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import Secret, redact
from mkdocs_syndicate.registry import clients

pytestmark = pytest.mark.unit


def parse(raw):
    return parse_channels(raw, clients())


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
    assert missing_settings({"masto": {"type": "mastodon", "enabled": False}}, clients()) == []


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


def schema_errors(given):
    from mkdocs_syndicate.config.schema import SyndicateConfig, as_errors

    settings = SyndicateConfig(config_file_path="mkdocs.yml")
    settings.load_dict(given)
    errors, _ = as_errors(given, *settings.validate())
    return settings, [(name, str(error)) for name, error in errors]


@pytest.mark.parametrize(
    "git, expected",
    [
        ({"push": "yes"}, ("git.push", "must be true or false")),
        ({"psuh": True}, ("git.psuh", "unknown setting; did you mean 'push'?")),
        ({"push": True, "branch": ""}, ("git.branch", "must be a name")),
        ("yes", ("git", "expected a mapping like {commit: true, push: true}")),
    ],
)
def test_git_sub_settings_are_checked_by_the_schema_and_named_by_path(git, expected):
    """A misspelt `psuh: true` must not leave the ledger out of git without a word."""
    _, errors = schema_errors({"git": git})
    assert errors == [expected]


def test_git_push_implies_commit_and_false_means_off():
    from mkdocs_syndicate.ledger.gitsettings import GitSettings

    settings, errors = schema_errors({"git": {"push": True, "remote": "up"}})
    assert errors == [] and settings.git.settings() == GitSettings(commit=True, push=True, remote="up")
    offs: tuple[object, ...] = (False, None, {})
    for off in offs:
        settings, errors = schema_errors({"git": off})
        assert errors == [] and settings.git.settings() == GitSettings()


def test_a_config_error_carries_its_setting_and_is_placed_in_its_file(tmp_path):
    """The setting is data: a caller places the error in its file without reading its text."""
    raw = {"masto": {"type": "mastodon", "instance": "ftp://m.example", "token": "t-123456"}}
    with pytest.raises(ConfigError) as caught:
        parse_options(raw, ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=True)
    error = caught.value
    assert error.setting == "channels.masto.instance" and error.problem.startswith("'ftp://m.example' is not")
    placed = error.located("mkdocs.yml", "plugins.syndicate")
    assert str(placed).startswith("mkdocs.yml: plugins.syndicate.channels.masto.instance: 'ftp://m.example'")


def test_several_errors_are_each_placed_in_the_file():
    """Before, only the first line of a many-setting error got the file and plugins.syndicate."""
    raw = {"a": {"type": "mastodon", "visibility": "loud"}, "b": {"type": "forem", "api": "ftp://x"}}
    problems: list[ConfigError] = []
    parse_channels(raw, clients(), problems=problems)
    from mkdocs_syndicate.config.completeness import config_problems

    text = str(config_problems(problems, []).located("mkdocs.yml", "plugins.syndicate"))
    lines = text.split("\n  ")
    assert [line.split(": ", 2)[1] for line in lines] == [
        "plugins.syndicate.channels.a.visibility",
        "plugins.syndicate.channels.b.api",
    ]
    assert all(line.startswith("mkdocs.yml: ") for line in lines)


def test_settings_are_checked_without_constructing_a_channel(tmp_path, monkeypatch):
    """A type's own rules (an IndexNow key, a Bluesky language tag) are its options' checks, so
    validating needs no channel built against a made-up sandbox address."""
    from mkdocs_syndicate.channels.base import Channel

    def no_channel(self, settings, site):
        raise AssertionError("a channel was constructed to validate settings")

    monkeypatch.setattr(Channel, "__init__", no_channel)
    bluesky = {"type": "bluesky", "handle": "me.example", "app_password": "abcd-efgh-ijkl-mnop"}
    with pytest.raises(ConfigError, match=r"channels.sky.language: 'en_US' is not a BCP 47 language tag"):
        parse_options(
            {"sky": {**bluesky, "language": "en_US"}},
            ledger_path=tmp_path / "l",
            site=SITE,
            sandbox=False,
            sending=True,
        )
    options = parse_options(
        {"sky": {**bluesky, "language": "PT-br"}}, ledger_path=tmp_path / "l", site=SITE, sandbox=True, sending=True
    )
    assert options.channels[0].options["language"] == "pt-BR"


def test_a_float_setting_of_a_channel_type_is_a_duration_checked_against_its_range():
    """A type's `float` option is a duration: its documented range is found by the option's name."""
    from typing import ClassVar

    from mkdocs_syndicate.config.channels import Option

    class Paced:
        type_name = "paced"
        default_delivery = "at_least_once"
        default_min_interval = 0.0
        options: ClassVar = {"wait_until_live": Option("float", default=5.0), "pause": Option("float", default=5.0)}

    with pytest.raises(ConfigError, match=r"channels.p.wait_until_live: 4000 seconds is more than the 3600"):
        parse_channels({"p": {"type": "paced", "wait_until_live": 4000}}, {"paced": Paced})
    (channel,) = parse_channels({"p": {"type": "paced", "pause": 4000}}, {"paced": Paced})
    assert channel.options["pause"] == 4000.0  # a name without a documented range: the general bound
