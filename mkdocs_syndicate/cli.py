"""The `mkdocs-syndicate` command. For now: `check`, which validates a ledger without touching it."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import LedgerError
from .ledger import Ledger
from .ledger_format import STATES


@click.group()
def main() -> None:
    """Operate mkdocs-syndicate's ledger."""


@main.command()
@click.argument("ledger", type=click.Path(path_type=Path), default="ledger.yml")
def check(ledger: Path) -> None:
    """Validate LEDGER (default ledger.yml): exit 1 with file:line if it cannot be trusted."""
    if not ledger.exists():
        raise click.ClickException(f"{ledger}: no such file")
    try:
        loaded = Ledger.read(ledger)
    except LedgerError as exc:
        raise click.ClickException(str(exc)) from None
    records = [r for entry in loaded.posts.values() for r in entry.channels.values()]
    states = {s: sum(r.state == s for r in records) for s in STATES}
    summary = ", ".join(f"{n} {s}" for s, n in states.items() if n)
    click.echo(f"{ledger}: ok, {len(loaded.posts)} posts, {len(records)} records"
               + (f" ({summary})" if summary else ""))
