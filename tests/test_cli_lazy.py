"""`mkdocs-syndicate --help` lists the commands without importing them (cli/__init__.py's table),
so it loads neither the engine, nor the HTTP client, nor the terminal UI; the listing it prints is
the one click would print with every command imported, and each command still runs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap

import click
import pytest
from click.testing import CliRunner

from mkdocs_syndicate.cli import COMMANDS, LazyGroup, main

HEAVY = (
    "httpx",
    "rich",
    "yaml",
    "mkdocs_syndicate.engine",
    "mkdocs_syndicate.config",
    "mkdocs_syndicate.ledger",
    "asyncio",
)

PROBE = textwrap.dedent("""
    import json, sys
    import click
    from mkdocs_syndicate.cli import main
    try:
        main(sys.argv[1:], standalone_mode=False)
    except (SystemExit, click.exceptions.UsageError):
        pass
    print(json.dumps(sorted(sys.modules)))
""")


def loaded_by(*args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.process
@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_the_command_list_loads_nothing_heavy(args: list[str]) -> None:
    heavy = [m for m in loaded_by(*args) if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == [], f"`mkdocs-syndicate {' '.join(args)}` loaded {heavy[:8]}"


@pytest.mark.unit
def test_each_summary_is_its_commands_own_first_paragraph() -> None:
    for name, entry in COMMANDS.items():
        command = getattr(importlib.import_module(f"mkdocs_syndicate.cli.{entry.module}"), entry.attribute)
        assert command.name == name
        assert entry.summary == " ".join((command.help or "").split("\n\n")[0].split()), name


@pytest.mark.unit
def test_the_lazy_listing_is_the_one_click_prints_with_every_command_loaded() -> None:
    lazy = CliRunner().invoke(LazyGroup(name="mkdocs-syndicate", callback=main.callback), ["--help"]).output
    eager = click.Group(name="mkdocs-syndicate", callback=main.callback)
    for entry in COMMANDS.values():
        eager.add_command(getattr(importlib.import_module(f"mkdocs_syndicate.cli.{entry.module}"), entry.attribute))
    assert lazy == CliRunner().invoke(eager, ["--help"]).output
    assert all(f"  {name} " in lazy for name in COMMANDS)


@pytest.mark.unit
def test_a_listed_command_runs_and_an_unknown_one_is_refused() -> None:
    assert "Validate LEDGER" in CliRunner().invoke(main, ["check", "--help"]).output
    unknown = CliRunner().invoke(main, ["chek"])
    assert unknown.exit_code == 2 and "No such command 'chek'" in unknown.output
