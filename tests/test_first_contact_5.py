"""What a new user met in the fifth outside probe (issue 53, items 7-12 and 14): messages that
name the wrong file, the wrong service's setting or the wrong kind of character."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.unit
def test_the_reserved_site_url_note_names_syndicate_yml_on_a_site_it_configures(tmp_path: Path):
    # Item 11: a site configured by syndicate.yml has no mkdocs.yml to set site_url in.
    from mkdocs_syndicate.config.site import options_from
    from mkdocs_syndicate.config.standalone import load_standalone
    from mkdocs_syndicate.output.siteurl import placeholder

    config = tmp_path / "syndicate.yml"
    config.write_text(
        "site_url: https://blog.example.com/\n"
        "channels:\n  masto: {type: mastodon, instance: https://mastodon.social, token: x-token-1}\n",
        encoding="utf-8",
    )
    site, settings = load_standalone(config)
    found = placeholder(options_from(site, settings, sending=False))
    assert found is not None
    assert "set site_url in syndicate.yml" in found[1] and "mkdocs.yml" not in found[1], found


@pytest.mark.unit
def test_a_url_with_a_password_in_it_does_not_suggest_another_service_s_setting():
    # Item 11: Bluesky's `appview` with user:password@ suggested Mastodon's `token`.
    from mkdocs_syndicate.config.run import Site, parse_options
    from mkdocs_syndicate.errors import ConfigError

    channels = {
        "sky": {
            "type": "bluesky",
            "handle": "me.bsky.social",
            "app_password": "abcd-efgh-ijkl-mnop",
            "appview": "https://me:secret@appview.example",
        }
    }
    with pytest.raises(ConfigError) as caught:
        parse_options(
            channels,
            ledger_path=Path("/nowhere/ledger.yml"),
            site=Site("https://b.org/", "S"),
            sandbox=False,
            sending=False,
        )
    message = str(caught.value)
    assert "channels.sky.appview" in message and "secret" not in message.replace("secret setting", "")
    assert "token: !ENV MASTODON_TOKEN" not in message and "MASTODON" not in message, message


@pytest.mark.unit
@pytest.mark.parametrize(
    ("slug", "shown"),
    [("caf%C3%A9", "é counts as 6"), ("%E4%B8%AD", "中 counts as 9"), ("%F0%9F%98%80", "😀 counts as 12")],
)
def test_a_long_feed_key_s_hint_names_the_characters_it_has(slug: str, shown: str):
    # Item 11: "a CJK character counts as 9" was said of é and emoji slugs too.
    from mkdocs_syndicate.sources.feed import _encoding_note

    note = _encoding_note("/posts/" + slug * 40 + "/")
    assert shown in note, note
    assert "CJK" not in note


@pytest.mark.unit
def test_a_long_ascii_feed_key_gets_no_percent_encoding_hint():
    from mkdocs_syndicate.sources.feed import _encoding_note

    assert _encoding_note("/posts/" + "a" * 600 + "/") == ""
