"""Messages that misled (issue 36): `site-files` with nothing to write said so and exited 0;
`adopt --before garbage` spoke of a front matter date; Weibo's 500 with `{}` said "500 error
None: None"; a raw NUL in the ledger was placed by character position, not by line."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from mkdocs_syndicate.channels.weibo import _failure
from mkdocs_syndicate.cli import main
from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger.format import parse


def standalone(folder, channels: dict) -> str:
    (folder / "site").mkdir()
    path = folder / "syndicate.yml"
    path.write_text(yaml.safe_dump({"site_url": "https://example.com/", "channels": channels}), encoding="utf-8")
    return str(path)


@pytest.mark.unit
def test_site_files_with_an_unset_indexnow_key_names_it_and_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INDEXNOW_KEY", raising=False)
    config = standalone(tmp_path, {})
    with open(config, "w", encoding="utf-8") as settings:  # the key: a CI secret this job does not have
        settings.write(
            "site_url: https://example.com/\nchannels:\n  masto: {type: mastodon, instance: 'https://m.example'}\n"
            "  ping: {type: indexnow, key: !ENV INDEXNOW_KEY}\n"
        )
    result = CliRunner().invoke(main, ["site-files", "-f", config])
    assert result.exit_code == 1, result.output
    assert "no channel's file written: channels.ping.key: missing (or empty)" in result.output
    assert "masto" not in result.output  # a setting no file depends on is not the problem
    # The listing and the comments script need no key (issue 41); no key file is made up.
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == ["assets", "syndication.json"]


@pytest.mark.unit
def test_site_files_without_a_key_file_channel_still_writes_the_listing(tmp_path, monkeypatch):
    """Since the listing for pages the plugin does not build (issue 41), site-files always has
    something to write: syndication.json and the comments script, with no IndexNow channel."""
    monkeypatch.chdir(tmp_path)
    config = standalone(tmp_path, {"masto": {"type": "mastodon", "instance": "https://m.example"}})
    result = CliRunner().invoke(main, ["site-files", "-f", config])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "syndication.json").is_file()


@pytest.mark.unit
@pytest.mark.parametrize("value", ["garbage", "2026-13-45", "yesterday"])
def test_adopt_before_a_value_that_is_no_date_says_so_with_the_accepted_forms(tmp_path, value):
    result = CliRunner().invoke(main, ["adopt", "--before", value, "-f", str(tmp_path / "syndicate.yml")])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '--before': {value!r} is not a date; give it like 2026-11-28," in result.output
    assert "front matter" not in result.output


@pytest.mark.unit
@pytest.mark.parametrize(
    "status, body, said",
    [
        (500, {}, "500 from the server"),
        (503, {"error": "  "}, "503 from the server"),
        (502, "<html>bad gateway</html>", "502 from the server"),
        (500, {"error": "system busy"}, "500 from the server: system busy"),
        (400, {"error_code": 20019, "error": "repeated weibo text"}, "400 error 20019: repeated weibo text"),
        (400, {"error_code": 20019}, "400 error 20019"),
    ],
)
def test_a_weibo_failure_is_said_without_nones(status, body, said):
    assert _failure(status, body).error == said
    assert "None" not in _failure(status, body).error


@pytest.mark.unit
def test_a_raw_nul_byte_in_the_ledger_is_placed_by_its_line():
    text = "version: 1\nposts:\n  a/:\n    url: https://example.com/a/\n    title: A\x00B\n    channels: {}\n...\n"
    with pytest.raises(LedgerError) as caught:
        parse(text, "ledger.yml")
    assert str(caught.value) == (
        "ledger ledger.yml:5: not valid YAML: character U+0000 (control characters are not allowed); remove it"
    )
    assert caught.value.line == 5 and "position" not in str(caught.value)


@pytest.mark.unit
def test_check_refuses_a_ledger_that_is_not_a_regular_file(tmp_path):
    """`check /dev/zero` was read until a MemoryError; a folder stands in for it here, so that a
    regression fails without taking the machine's memory first."""
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 1 and f"{tmp_path}: not a regular file" in result.output, result.output
