"""The `mkdocs-syndicate` command: see and steer what the plugin does without editing YAML by hand.

Every subcommand that needs the site takes `-f mkdocs.yml` like MkDocs. `run`, `plan` and `adopt`
work from the posts the last `mkdocs build` saved (.syndicate-cache/), so they never rebuild.
Each command is handed an `Invocation` (cli/context.py) that loads the site, its options, the
ledger and the posts the same way for all of them.
"""

from __future__ import annotations

import click

from mkdocs_syndicate.cli.context import Invocation
from mkdocs_syndicate.cli.inject import inject
from mkdocs_syndicate.cli.ledger import adopt, check, rename_channel, resolve
from mkdocs_syndicate.cli.sending import plan, run, verify
from mkdocs_syndicate.cli.services import doctor, sandbox
from mkdocs_syndicate.cli.site_files import site_files
from mkdocs_syndicate.cli.status import status


@click.group()
@click.version_option(package_name="mkdocs-syndicate", prog_name="mkdocs-syndicate")
@click.pass_context
def main(ctx: click.Context) -> None:
    """See and steer mkdocs-syndicate: what went out where, and what is left."""
    ctx.obj = Invocation()


@main.result_callback()
@click.pass_obj
def _after_a_command(given: Invocation, /, *_: object, **__: object) -> None:
    if given.refused:  # the rest was read and done; the feed still needs fixing
        count = len(given.refused)
        raise click.ClickException(f"{count} feed entr{'y was' if count == 1 else 'ies were'} left out (see above)")


for command in (check, doctor, status, plan, run, verify, resolve, adopt, rename_channel, site_files, inject, sandbox):
    main.add_command(command)
