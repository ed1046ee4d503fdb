"""Every error of a config in one build or one command (issue 36): six wrong site settings and
three wrong channels took seven builds to see (MkDocs stops validating at the first wrong setting,
the site-level ranges were checked one after another, and a channel's bad `timeout` hid its type's
errors)."""

from __future__ import annotations

import pytest
import yaml
from sites import mkdocs, post, write_site

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.site import load_site
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.registry import clients

WRONG_TYPES = {"mode": "bogus", "sandbox": "yes", "posts": 5, "git": {"push": "no"}, "chanels": {}}
WRONG_VALUES = {
    "max_per_run": 0,
    "max_wait": -1,
    "backlog_days": 1.0e9,
    "stale_after_hours": float("nan"),
    "since": "garbage",
    "wait_until_live": 99999,
}
WRONG_CHANNELS = {
    "masto": {"type": "mastodon", "instance": "ftp://x", "timeout": -1, "tokn": "x"},
    "bsky": {"type": "bluesky", "handle": "me.bsky.social", "language": "!!", "timeout": 0},
    "ping": {"type": "indexnow", "key": "bad key", "enabled": "yes"},
}
VALUE_SETTINGS = {
    *WRONG_VALUES,
    "channels.masto.instance",
    "channels.masto.timeout",
    "channels.masto.tokn",
    "channels.bsky.language",
    "channels.bsky.timeout",
    "channels.ping.key",
    "channels.ping.enabled",
}
TYPE_SETTINGS = {"mode", "sandbox", "posts", "git.push", "chanels"}


def settings_of(error: ConfigError) -> set[str]:
    return {str(part.setting) for part in error.parts or (error,)}


def standalone(folder, settings: dict):
    path = folder / "syndicate.yml"
    path.write_text(yaml.safe_dump({"site_url": "https://example.com/", **settings}), encoding="utf-8")
    return path


@pytest.mark.unit
def test_one_command_on_syndicate_yml_lists_every_wrong_value(tmp_path):
    site = load_site(standalone(tmp_path, {**WRONG_VALUES, "channels": WRONG_CHANNELS}))
    with pytest.raises(ConfigError) as caught:
        site.options(sending=False)
    assert settings_of(caught.value) == VALUE_SETTINGS
    assert str(caught.value).count(f"{tmp_path / 'syndicate.yml'}: ") == len(VALUE_SETTINGS)


@pytest.mark.unit
def test_wrong_types_and_wrong_values_are_listed_together(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_site(standalone(tmp_path, {**WRONG_TYPES, **WRONG_VALUES, "channels": WRONG_CHANNELS}))
    assert settings_of(caught.value) == TYPE_SETTINGS | VALUE_SETTINGS
    assert str(caught.value).startswith(f"{tmp_path / 'syndicate.yml'}: chanels: unknown setting")


@pytest.mark.unit
def test_a_bad_timeout_does_not_hide_the_types_own_errors():
    raw = {"masto": {"type": "mastodon", "timeout": 0, "settle": -3, "delivery": "twice", "visibility": "everyone"}}
    with pytest.raises(ConfigError) as caught:
        parse_channels(raw, clients())
    assert settings_of(caught.value) == {
        "channels.masto.timeout",
        "channels.masto.settle",
        "channels.masto.delivery",
        "channels.masto.visibility",
    }


@pytest.mark.process
def test_one_mkdocs_build_lists_every_error_of_the_plugins_settings(tmp_path):
    plugin = {**WRONG_TYPES, **WRONG_VALUES, "channels": WRONG_CHANNELS}
    plugin.pop("chanels")
    config = write_site(tmp_path, plugin, {"a.md": post("Alpha")})
    result = mkdocs(config)
    assert result.returncode == 1, result.stderr
    named = {setting for setting in TYPE_SETTINGS | VALUE_SETTINGS if f"option '{setting}'" in result.stderr}
    assert named == (TYPE_SETTINGS | VALUE_SETTINGS) - {"chanels"}, result.stderr
