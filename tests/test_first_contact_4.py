"""Issue 36, a first contact's findings (fourth set): what an outside probe met on a first try."""

from __future__ import annotations

import pytest

# ------------------------------------------------------------------ the sandbox's wait_until_live


@pytest.mark.unit
def test_the_sandbox_finds_a_built_post_whose_url_is_percent_encoded(tmp_path):
    from mkdocs_syndicate.net.liveness import in_built_site

    for folder in ("café", "two words"):  # MkDocs names the files as the sources, page.url encodes them
        (tmp_path / "posts" / folder).mkdir(parents=True)
        (tmp_path / "posts" / folder / "index.html").write_text("<html></html>", encoding="utf-8")
    (tmp_path / "posts" / "flat é.html").write_text("<html></html>", encoding="utf-8")
    urls = [
        "https://example.com/posts/caf%C3%A9/",
        "https://example.com/posts/two%20words/",
        "https://example.com/posts/flat%20%C3%A9.html",
    ]
    assert in_built_site(urls, "https://example.com/", str(tmp_path)) == dict.fromkeys(urls)


@pytest.mark.unit
def test_the_sandbox_never_looks_outside_site_dir_for_a_post(tmp_path):
    from mkdocs_syndicate.net.liveness import _built_file

    (tmp_path / "site").mkdir()
    (tmp_path / "secret.html").write_text("x", encoding="utf-8")
    assert _built_file(str(tmp_path / "site"), "%2E%2E/secret.html") is None
    assert _built_file(str(tmp_path / "site"), "posts/a/") == (tmp_path / "site" / "posts/a/index.html").resolve()


# ------------------------------------------------------------------ settings said as the user writes them


def loaded(folder, text: str):
    """mkdocs.yml loaded as MkDocs loads it (no build): the config and the plugin's settings."""
    from mkdocs.config import load_config

    (folder / "docs").mkdir(exist_ok=True)
    path = folder / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    config = load_config(str(path))
    return config, config.plugins["syndicate"].config


@pytest.mark.unit
def test_a_missing_site_url_is_named_as_the_top_level_setting_it_is(tmp_path):
    from mkdocs_syndicate.config.site import options_from
    from mkdocs_syndicate.errors import ConfigError

    config, settings = loaded(tmp_path, "site_name: T\nplugins:\n  - syndicate:\n      channels: {}\n")
    with pytest.raises(ConfigError) as caught:
        options_from(config, settings, sending=True)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'mkdocs.yml'}: site_url: required"), message
    assert "plugins.syndicate" not in message and "top level" in message


@pytest.mark.unit
@pytest.mark.parametrize("written", ["devto", "dev", "dev.to", "DEV.to"])
def test_a_channel_typed_after_dev_says_dev_is_type_forem(written):
    from mkdocs_syndicate.channels import REGISTRY
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        parse_channels({"dev": {"type": written, "api_key": "x-key-12"}}, REGISTRY)
    assert caught.value.setting == "channels.dev.type"
    assert f"unknown channel type {written!r}; DEV is type forem (known: " in str(caught.value)


@pytest.mark.unit
def test_a_misspelt_channel_setting_or_type_gets_the_nearest_name():
    from mkdocs_syndicate.channels import REGISTRY
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        parse_channels({"masto": {"type": "mastodon", "instance": "https://m.example", "tokne": "x-token-1"}}, REGISTRY)
    assert caught.value.setting == "channels.masto.tokne"
    assert "unknown setting for type mastodon; did you mean 'token'? (allowed: " in str(caught.value)

    with pytest.raises(ConfigError) as caught:
        parse_channels({"masto": {"type": "mastadon"}}, REGISTRY)
    assert "unknown channel type 'mastadon'; did you mean 'mastodon'?" in str(caught.value)
