"""The `mkdocs-syndicate` command: see and steer what the plugin does without editing YAML by hand.

Every subcommand that needs the site takes `-f mkdocs.yml` like MkDocs. `run`, `plan` and `adopt`
work from the posts the last `mkdocs build` saved (.syndicate-cache/), so they never rebuild.
Each command is handed an `Invocation` (cli/context.py) that loads the site, its options, the
ledger and the posts the same way for all of them.

A command's module is imported only when that command runs (or its own `--help` is asked for):
`mkdocs-syndicate --help` lists the commands from the table below and loads neither the engine
nor the HTTP client nor the terminal UI, so it costs no more than `mkdocs --help`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

import click

if TYPE_CHECKING:
    from mkdocs_syndicate.cli.context import Invocation


class Command(NamedTuple):
    module: str  # under mkdocs_syndicate.cli
    attribute: str
    summary: str  # the first paragraph of the command's own help (tests/test_cli_lazy.py checks)


COMMANDS: dict[str, Command] = {
    "check": Command(
        "ledger",
        "check",
        "Validate LEDGER (default ledger.yml): exit 1 with file:line if it cannot be trusted.",
    ),
    "doctor": Command(
        "services",
        "doctor",
        "Check each enabled channel's credentials with one authenticated read (no post, no ledger write):"
        " exit 1 naming each channel that needs a person, and what to do.",
    ),
    "status": Command(
        "status",
        "status",
        "Every (post, channel) pair: what is undone first; done ones counted (--all lists them).",
    ),
    "plan": Command(
        "sending",
        "plan",
        "What a send would do now, with no network: each pending pair and exactly what would go out.",
    ),
    "run": Command(
        "sending",
        "run",
        "Send the pending pairs of the last build (or of --feed), without rebuilding (same code path as the plugin).",
    ),
    "verify": Command(
        "sending",
        "verify",
        "Resolve in_flight records by reading the remote side only; sends nothing.",
    ),
    "resolve": Command(
        "ledger",
        "resolve",
        "Record a human decision for POST on CHANNEL (a record that needs review, or any pending pair).",
    ),
    "adopt": Command(
        "ledger",
        "adopt",
        "First run on a site that already has posts: mark every existing pair skipped, so nothing old is "
        "announced. Pairs that already have a record are left as they are.",
    ),
    "rename-channel": Command(
        "ledger",
        "rename_channel",
        "Move every record of channel OLD to NEW (after renaming it in the config), so nothing is "
        "announced again under the new id.",
    ),
    "site-files": Command(
        "site_files",
        "site_files",
        "Write what the site serves for syndication into the built site: the channels' files (IndexNow's "
        "key file), and for each post's links and replies `syndication.json` with the comments script "
        "(`links: false` leaves those out). The plugin does it during `mkdocs build`; a site built "
        "without it (Zensical, a feed) runs this between the build and the deploy. In a rehearsal too, "
        "the key file is the configured key's: this site is deployed for real.",
    ),
    "inject": Command(
        "inject",
        "inject",
        "Rewrite the built pages of SITE_DIR (default: the config's site_dir) in place: on each post the "
        'ledger has copies of, the "Also on" links (and with `comments: true` the replies\' script), '
        "`fediverse:creator`, standard.site's link; and standard.site's `.well-known` file. From the "
        "committed ledger, no request. A second run changes nothing; other pages are not touched.",
    ),
    "sandbox": Command(
        "services",
        "sandbox",
        "Run the loopback emulators in the foreground with a page showing what each received.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported when they are run, listed from `COMMANDS` meanwhile."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            entry = COMMANDS[cmd_name]
            module = importlib.import_module(f"mkdocs_syndicate.cli.{entry.module}")
            self.add_command(getattr(module, entry.attribute), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(name, _short(self.commands.get(name), COMMANDS.get(name), limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _short(loaded: click.Command | None, entry: Command | None, limit: int) -> str:
    # A stand-in with the summary as its help shortens it the way click shortens the real one.
    shown = loaded or click.Command(None, help=entry.summary if entry else "")
    return shown.get_short_help_str(limit)


@click.group(cls=LazyGroup)
@click.version_option(package_name="mkdocs-syndicate", prog_name="mkdocs-syndicate")
@click.pass_context
def main(ctx: click.Context) -> None:
    """See and steer mkdocs-syndicate: what went out where, and what is left."""
    from mkdocs_syndicate.cli.context import Invocation

    ctx.obj = Invocation()


@main.result_callback()
@click.pass_obj
def _after_a_command(given: Invocation, /, *_: object, **__: object) -> None:
    if given.refused:  # the rest was read and done; the feed still needs fixing
        count = len(given.refused)
        raise click.ClickException(f"{count} feed entr{'y was' if count == 1 else 'ies were'} left out (see above)")
