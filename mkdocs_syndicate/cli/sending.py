"""The commands that plan or send: `plan` (what a send would do, no network), `run` (send, as the
plugin does) and `verify` (read back what is in_flight, send nothing)."""

from __future__ import annotations

import os

import click

from mkdocs_syndicate.cli.context import (
    Invocation,
    config_file_option,
    feed_option,
    git_options,
    guard,
    log,
    pass_invocation,
    source,
    warn_of_a_placeholder,
)
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.modes import pull_request_reason
from mkdocs_syndicate.engine.preview import plan as make_the_plan
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.output.display import run_with_display, undone_message
from mkdocs_syndicate.output.plan import full_plan_lines, hashtag_source
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.sandbox.site import sandbox_note, write_sandbox_site_files
from mkdocs_syndicate.timeutil import from_iso


@click.command()
@config_file_option
@feed_option
@pass_invocation
def plan(given: Invocation, feed: str | None) -> None:
    """What a send would do now, with no network: each pending pair and exactly what would go out."""
    options = given.options(sending=False)
    posts, built_at = given.posts(options, feed)
    the_plan = guard(lambda: make_the_plan(options, posts))
    hashtags_from = hashtag_source(given.site.settings.hashtags_from, feed=feed is not None)
    for line in full_plan_lines(the_plan, source(feed, built_at), options.max_per_run, hashtags_from, options.site.url):
        click.echo(line)
    if the_plan.pairs:
        warn_of_a_placeholder(options)


@click.command()
@config_file_option
@feed_option
@git_options
@pass_invocation
def run(given: Invocation, feed: str | None) -> None:
    """Send the pending pairs of the last build (or of --feed), without rebuilding (same code path
    as the plugin)."""
    site = given.site
    if site.mode == "off":
        click.echo("mode: off — nothing sent", err=True)
        return
    pull_request = pull_request_reason(os.environ) if site.mode == "auto" else None
    if pull_request:
        click.echo(
            f"mode auto: {pull_request} — nothing sent (`mkdocs-syndicate plan` shows what would go out)", err=True
        )
        return
    options = given.options(sending=True)
    posts, built_at = given.posts(options, feed)
    note = sandbox_note(options)
    log(f"sending the posts of {source(feed, built_at)}" + (f" {note}" if note else ""))
    warn_of_a_placeholder(options)
    # A plan build left the sandbox's key file out of the site; its engine fetches it there.
    try:
        for path in guard(lambda: write_sandbox_site_files(options)):
            log(f"wrote {path} for the sandbox's engine (a build that sends nothing leaves it out)")
    except OSError as exc:  # the engine's 403 then says which file it did not find
        log(f"warning: could not write the sandbox's key file: {exc.strerror or exc}")
    report = guard(lambda: run_with_display(options, posts, log, log))
    message = undone_message(report, options)
    if message:
        raise click.ClickException(message)


@click.command()
@config_file_option
@feed_option
@git_options
@pass_invocation
def verify(given: Invocation, feed: str | None) -> None:
    """Resolve in_flight records by reading the remote side only; sends nothing."""
    options = given.options(sending=True, reading_only=True)  # Weibo's rip is not needed to read
    ledger = given.ledger(options)
    posts = _posts_for_verify(given, options, ledger, feed)
    report = guard(lambda: run_with_display(options, posts, log, log, verify_only=True))
    pings = _pings_in_flight(options, ledger)
    if pings:  # `status` lists them in_flight: say why verify left them so
        log(
            f"{pings} in_flight record(s) of at-least-once channels not read back: a ping has nothing "
            "to read, so the next run sends it again (a repeated ping is harmless)"
        )
    review = [r for r in report.results if r.state in (PairState.IN_FLIGHT, PairState.FAILED)]
    if review:
        raise click.ClickException(
            f"{len(review)} record(s) need a decision (`mkdocs-syndicate resolve`):\n  "
            + "\n  ".join(one_line(f"({r.post_key}, {r.channel}) {r.state}: {r.detail}") for r in review)
        )


def _pings_in_flight(options: Options, ledger: Ledger) -> int:
    """In-flight records of the configured at-least-once channels, which verify never reads."""
    pinged = {channel.id for channel in options.channels if not channel.at_most_once}
    return sum(1 for _, channel, record in ledger.records() if channel in pinged and record.state == State.IN_FLIGHT)


def _posts_for_verify(given: Invocation, options: Options, ledger: Ledger, feed: str | None = None) -> list[Post]:
    """The last build's (or the feed's) posts where there is one; else what the ledger knows."""
    built = {p.key: p for p in given.posts_if_any(options, feed) or []}
    posts = []
    for key, entry in ledger.posts.items():
        if not any(r.state == State.IN_FLIGHT for r in entry.channels.values()):
            continue
        if key in built:
            posts.append(built[key])
            continue
        first = min(from_iso(r.at) for r in entry.channels.values())
        posts.append(Post(key=key, url=entry.url, title=entry.title, date=first, source=str(options.ledger_path)))
    return posts
