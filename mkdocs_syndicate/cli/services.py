"""The commands that talk to the services, or stand in for them: `doctor` (each channel's
credentials, checked by one authenticated read) and `sandbox` (the loopback emulators)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import Any

import click

from mkdocs_syndicate.cli.context import Invocation, config_file_option, guard, log, pass_invocation
from mkdocs_syndicate.safety import json_safe, one_line, printable
from mkdocs_syndicate.sandbox.site import sandbox_state_dir, site_sandbox, write_sandbox_site_files


@click.command()
@config_file_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_invocation
def doctor(given: Invocation, as_json: bool) -> None:
    """Check each enabled channel's credentials with one authenticated read (no post, no ledger
    write): exit 1 naming each channel that needs a person, and what to do."""
    from mkdocs_syndicate.engine.doctor import check_channels
    from mkdocs_syndicate.output.actions import annotate_checks, in_actions, summarise_checks

    options = given.options(sending=True, reading_only=True)  # Weibo's rip is not needed to read
    with contextlib.suppress(OSError):  # as a run to the sandbox does (else the check says what is missing)
        guard(lambda: write_sandbox_site_files(options))
    found = guard(lambda: check_channels(options))
    failing = [c for c in found if c.check.health.needs_a_person]
    if as_json:
        data = {"ok": not failing, "sandbox": options.sandbox, "channels": [c.to_json() for c in found]}
        click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=1)))
    else:
        for checked in found:
            click.echo(printable(checked.line))
    if in_actions(os.environ):
        annotate_checks(found, click.echo)
        summarise_checks(os.environ, found, sandbox=options.sandbox, warn=log)
    if failing:
        raise click.ClickException(
            f"{len(failing)} channel(s) need a person: {', '.join(c.channel for c in failing)} (see above)"
        )


@click.group(invoke_without_command=True)
@config_file_option
@click.option(
    "--port",
    default=None,
    type=click.IntRange(1, 65535),
    help="Port on 127.0.0.1 (default: the one this site's links use, 8787 unless it was taken).",
)
@click.pass_context
@pass_invocation
def sandbox(given: Invocation, ctx: click.Context, port: int | None) -> None:
    """Run the loopback emulators in the foreground with a page showing what each received.

    Builds of this site with `sandbox: true` send to this server while it runs. `sandbox reply`
    and `sandbox react` add what readers do there (replies, likes), for `comments: true` to show."""
    if ctx.invoked_subcommand is not None:
        return
    options = given.options(sending=False)
    state_dir = sandbox_state_dir(options)
    if port is None:
        from mkdocs_syndicate.sandbox.links_port import kept_port

        port = kept_port(state_dir) or 8787
    server = site_sandbox(options, port=port, public_base=f"http://127.0.0.1:{port}")
    server.on_request = lambda line: click.echo(one_line(line), err=True)
    if not options.sandbox:
        click.echo("note: mkdocs.yml has no `sandbox: true`, so builds will not send here", err=True)
    click.echo(
        f"sandbox emulators on http://127.0.0.1:{port}/ (state in {state_dir}); "
        f"{', '.join(c.id for c in options.channels if c.enabled)} "
        "will send here. Ctrl-C stops.",
        err=True,
    )
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("sandbox stopped", err=True)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # stop like Ctrl-C: the server removes its advert file


def _readers() -> None:
    from mkdocs_syndicate.cli.sandbox_readers import react, reply

    sandbox.add_command(reply)
    sandbox.add_command(react)


_readers()
