"""Issue 36, secrets: a credential is redacted in every form a server may echo it in; never taken
in a URL setting (user:password@); never printed from a setting it was put in by mistake, nor
from an error about a setting that read it with `!ENV`."""

from __future__ import annotations

import base64
import textwrap
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from conftest import SITE, ListReporter, make_post, mastodon_raw
from sites import write_site

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.channels import Option, parse_channels
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.config.site import load_site
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import redact
from mkdocs_syndicate.registry import clients

TOKEN = "Sentinel-Tok3n_+/ab9c8d7e6f"  # base64 of it has + and / in it: both alphabets matter


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


ECHOED = {
    "lower-cased": TOKEN.lower(),
    "upper-cased": TOKEN.upper(),
    "percent-encoded": quote(TOKEN, safe=""),
    "percent-encoded, lower-case hex": quote(TOKEN, safe="").lower(),
    "base64": b64(TOKEN.encode()),
    "base64, no padding": b64(TOKEN.encode()).rstrip("="),
    "urlsafe base64": base64.urlsafe_b64encode(TOKEN.encode()).decode(),
    "urlsafe base64, no padding": base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="),
    "HTTP Basic user:token": b64(f"user:{TOKEN}".encode()),
    "HTTP Basic u:token": b64(f"u:{TOKEN}".encode()),
    "HTTP Basic me:token": b64(f"me:{TOKEN}".encode()),
}


def leaks(text: str) -> list[str]:
    """The forms of TOKEN (and long enough pieces of them) still in `text`."""
    found = [name for name, form in ECHOED.items() if form[4:-4] in text]
    return found + (["as is"] if TOKEN[2:-2].lower() in text.lower() else [])


@pytest.mark.unit
@pytest.mark.parametrize("form", ECHOED)
def test_an_echoed_credential_is_redacted_in_every_encoding(form):
    text = redact(f"server said: bad credential {ECHOED[form]} (echoed)", [TOKEN])
    assert leaks(text) == [] and "***" in text, text
    assert text.startswith("server said: bad credential ") and text.endswith(" (echoed)")


@pytest.mark.unit
def test_redaction_leaves_ordinary_text_alone():
    assert redact("Authorization failed for user bob", ["abcd1234efgh5678"]) == "Authorization failed for user bob"
    assert redact("a short key abc", ["abc"]) == "a short key abc"  # too short to tell from a word


@pytest.mark.http
def test_a_server_echoing_the_token_encoded_leaves_it_in_no_ledger_record_and_no_output(tmp_path, sandbox, clock):
    sandbox.emulators["mastodon"].token = TOKEN
    body = {"error": " ".join(f"{name}={form}" for name, form in ECHOED.items())}
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 422, "body": body})
    opts = parse_options(
        {"masto": mastodon_raw(sandbox, token=TOKEN)},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=True,
    )
    reporter = ListReporter()
    report = send(opts, [make_post(1)], reporter, clock=clock)
    shown = [(tmp_path / "ledger.yml").read_text(), report.results[0].detail, repr(reporter.__dict__)]
    assert "lower-cased=***" in shown[0]  # the error was recorded, redacted
    for text in shown:
        assert leaks(text) == [], text


# ------------------------------------------------------------------ user:password@ in URL settings


def url_settings() -> list[tuple[str, str]]:
    """Every URL setting of every channel type: (type, setting)."""
    return [
        (name, setting)
        for name, kind in sorted(clients().items())
        for setting, option in kind.options.items()
        if isinstance(option, Option) and option.kind == "url"
    ]


@pytest.mark.unit
def test_every_channel_type_has_url_settings_to_check():
    assert {"mastodon", "forem", "weibo", "bluesky", "indexnow"} <= {name for name, _ in url_settings()}


@pytest.mark.unit
@pytest.mark.parametrize("type_name, setting", url_settings())
@pytest.mark.parametrize("userinfo", ["reader:s3cretPass@", "s3cretPass@", ":s3cretPass@"])
def test_a_url_setting_with_a_user_or_password_is_refused_without_quoting_it(type_name, setting, userinfo):
    with pytest.raises(ConfigError, match=rf"channels\.x\.{setting}: has a user name or password") as caught:
        parse_channels({"x": {"type": type_name, setting: f"https://{userinfo}host.example/api"}}, clients())
    assert "s3cretPass" not in str(caught.value)


@pytest.mark.unit
def test_a_site_url_with_a_user_or_password_is_refused(tmp_path):
    config = write_site(tmp_path, {"channels": {}}, {}, site_url="https://reader:s3cretPass@example.com/")
    with pytest.raises(ConfigError, match=r"site_url: has a user name or password") as caught:
        load_site(config).options(sending=False)
    assert "s3cretPass" not in str(caught.value)


@pytest.mark.process
def test_comments_never_publish_an_instance_url_with_credentials(tmp_path):
    from sites import mkdocs, post

    channels = {
        "masto": {"type": "mastodon", "instance": "https://reader:s3cretPass@m.example", "token": "x-token-1234"},
        "bsky": {
            "type": "bluesky",
            "handle": "me.example",
            "app_password": "abcd-efgh-ijkl-mnop",
            "appview": "https://reader:s3cretPass@appview.example",
        },
    }
    config = write_site(tmp_path, {"mode": "plan", "comments": True, "channels": channels}, {"a.md": post("A")})
    result = mkdocs(config)
    assert result.returncode != 0
    for setting in ("channels.masto.instance", "channels.bsky.appview"):
        assert f"{setting}: has a user name or password" in result.stderr, result.stderr
    published = "".join(p.read_text() for p in tmp_path.glob("site/**/*.html")) if (tmp_path / "site").exists() else ""
    assert "s3cretPass" not in result.stdout + result.stderr + published


# ------------------------------------------------------------------ a credential in the wrong setting


def raw_channels(**masto: object) -> dict:
    return {"masto": {"type": "mastodon", "instance": "https://m.example", "token": TOKEN, **masto}}


@pytest.mark.unit
@pytest.mark.parametrize(
    "raw, ledger, setting",
    [
        (raw_channels(template="{{ title }} " + TOKEN), "ledger.yml", r"channels\.masto\.template"),
        (raw_channels(label=f"Mastodon {TOKEN}"), "ledger.yml", r"channels\.masto\.label"),
        ({**raw_channels(), TOKEN: {"type": "indexnow"}}, "ledger.yml", r"channels \(the id of its channel number 2\)"),
        (raw_channels(), f"{TOKEN}.yml", "ledger"),
    ],
    ids=["template", "label", "channel id", "ledger"],
)
def test_a_credential_in_a_setting_that_is_shown_is_refused_by_name(tmp_path, raw, ledger, setting):
    with pytest.raises(ConfigError, match=rf"{setting}: holds the value of channels\.masto\.token") as caught:
        parse_options(raw, ledger_path=tmp_path / ledger, site=SITE, sandbox=False, sending=False)
    assert leaks(str(caught.value)) == []


MKDOCS_YML = """\
site_name: Env Site
site_url: https://example.com/
plugins:
  - syndicate:
      mode: {mode}
      channels:
        masto: {{type: mastodon, instance: {instance}, token: !ENV MASTODON_TOKEN}}
"""


@pytest.mark.unit
@pytest.mark.parametrize(
    "mode, instance, setting",
    [
        ("plan", "!ENV MASTODON_TOKEN", "channels.masto.instance"),  # our own check: not an http(s) URL
        ("!ENV MASTODON_TOKEN", "https://m.example", "mode"),  # MkDocs' check: "Expected one of ..."
    ],
)
def test_an_error_about_a_setting_read_by_env_names_the_variable_not_its_value(
    tmp_path, monkeypatch, caplog, mode, instance, setting
):
    monkeypatch.setenv("MASTODON_TOKEN", TOKEN)
    (tmp_path / "docs").mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text(MKDOCS_YML.format(mode=mode, instance=instance))
    result = CliRunner().invoke(main, ["status", "-f", str(config)])
    shown = result.output + caplog.text  # MkDocs logs its own checks' errors
    assert result.exit_code == 1, shown
    assert setting in shown and "!ENV MASTODON_TOKEN" in shown, shown
    assert leaks(shown) == [], shown


@pytest.mark.unit
def test_syndicate_yml_errors_name_the_env_variable_too(tmp_path, monkeypatch):
    monkeypatch.setenv("MASTODON_TOKEN", TOKEN)
    config = tmp_path / "syndicate.yml"
    config.write_text(
        textwrap.dedent("""\
        site_url: https://example.com/
        channels:
          masto: {type: mastodon, instance: !ENV MASTODON_TOKEN, token: !ENV MASTODON_TOKEN}
        """)
    )
    with pytest.raises(ConfigError) as caught:
        load_site(config).options(sending=False)
    message = str(caught.value)
    assert "channels.masto.instance: !ENV MASTODON_TOKEN is not an http(s) URL" in message, message
    assert leaks(message) == []


@pytest.mark.process
def test_the_plugins_own_setting_errors_name_the_env_variable_too(tmp_path):
    from sites import mkdocs

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: S\nsite_url: https://example.com/\nplugins:\n"
        "  - syndicate: {mode: plan, links: !ENV MASTODON_TOKEN, channels: {}}\n"
    )
    result = mkdocs(config, env={"MASTODON_TOKEN": TOKEN})
    assert result.returncode != 0 and "links: must be block" in result.stderr, result.stderr
    assert "!ENV MASTODON_TOKEN" in result.stderr and leaks(result.stdout + result.stderr) == []


@pytest.mark.unit
def test_an_env_value_holding_another_is_named_whole(monkeypatch):
    from mkdocs_syndicate.redaction import env_named, note_env_names

    monkeypatch.setenv("A_SHORT", "tok3n-abcdefgh")
    monkeypatch.setenv("B_LONG", "tok3n-abcdefgh-and-more")
    note_env_names(["A_SHORT", "B_LONG"])
    assert env_named("'tok3n-abcdefgh-and-more' is not a URL") == "!ENV B_LONG is not a URL"
    assert env_named("not tok3n-abcdefgh") == "not !ENV A_SHORT"


# ------------------------------------------------------------------ a channel id is a name (issue 53)


def sandbox_config(tmp_path, channel_key: str):
    """A rehearsal's syndicate.yml: the sandbox supplies Mastodon's token, so none is configured."""
    path = tmp_path / "syndicate.yml"
    path.write_text(
        "site_url: https://example.com/\nsandbox: true\nchannels:\n"
        f"  {channel_key}: {{type: mastodon, instance: https://mastodon.social}}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.unit
@pytest.mark.parametrize(
    "channel_key, said",
    [
        ("!ENV MASTODON_TOKEN", "is the value of an environment variable"),
        ("!ENV [MASTODON_TOKEN, masto]", "is the value of an environment variable"),
        ("!ENV UNSET_SYNDICATE_VARIABLE", "this one is empty"),
        ('""', "this one is empty"),
        ('"  "', "this one is empty"),
        ("~", "this one is empty"),
    ],
)
def test_a_channel_id_that_is_empty_or_read_from_the_environment_is_refused(tmp_path, monkeypatch, channel_key, said):
    """`!ENV MASTODON_TOKEN:` as a channel's key made the token the key of every ledger record of
    that channel (exit 0): a channel id is a name written in the file, never a variable's value."""
    monkeypatch.setenv("MASTODON_TOKEN", TOKEN)
    monkeypatch.delenv("UNSET_SYNDICATE_VARIABLE", raising=False)
    site = load_site(sandbox_config(tmp_path, channel_key))
    with pytest.raises(ConfigError) as caught:
        site.options(sending=True)
    message = str(caught.value)
    assert "channels (the id of its channel number 1): a channel id" in message and said in message, message
    assert leaks(message) == [], message
