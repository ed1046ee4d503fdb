"""What a newcomer stumbled on setting up `type: matrix` and `type: standard` from the docs: a
room alias taken for a room id until `doctor` blamed the bot's membership, a handle copied with
its `@` refused as a bad app password, the account's own password accepted without a word, a
full stop invented after the title in standard.site's `textContent`, a server's full stop
doubled before our advice (`passed.; log the bot in`), and a `check` example the tool no longer
prints."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import SITE
from sites import ROOT

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.doctor import ChannelCheck, check_channels
from mkdocs_syndicate.registry import BUILT_IN
from mkdocs_syndicate.sandbox import atproto_account

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
