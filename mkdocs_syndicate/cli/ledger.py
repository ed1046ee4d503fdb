"""The commands that check the ledger or change it by hand: `check`, `resolve` (a person's
decision for a pair), `adopt` (an existing site's backlog, skipped) and `rename-channel`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from mkdocs_syndicate.cli.context import (
    Invocation,
    channel_ids,
    config_file_option,
    feed_option,
    guard,
    now,
    pass_invocation,
    source,
    who,
)
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.engine.backlog import Adoption
from mkdocs_syndicate.engine.backlog import adopt as adopt_backlog
from mkdocs_syndicate.errors import LedgerError, SyndicateError
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import STATES
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.safety import is_plain_name, one_line
from mkdocs_syndicate.timeutil import from_iso, to_iso


@click.command()
@click.argument("ledger", type=click.Path(path_type=Path), default="ledger.yml")
def check(ledger: Path) -> None:
    """Validate LEDGER (default ledger.yml): exit 1 with file:line if it cannot be trusted."""
    if not ledger.exists():
        raise click.ClickException(f"{ledger}: no such file")
    if not ledger.is_file():  # /dev/zero would be read until memory runs out
        raise click.ClickException(f"{ledger}: not a regular file (a device, a FIFO or a folder)")
    try:
        loaded = Ledger.read(ledger)
    except LedgerError as exc:
        raise click.ClickException(str(exc)) from None
    records = [r for entry in loaded.posts.values() for r in entry.channels.values()]
    states = {s: sum(r.state == s for r in records) for s in STATES}
    summary = ", ".join(f"{n} {s}" for s, n in states.items() if n)
    click.echo(
        f"{ledger}: ok, {len(loaded.posts)} posts, {len(records)} records" + (f" ({summary})" if summary else "")
    )


@click.command()
@config_file_option
@click.argument("post")
@click.argument("channel")
@click.option("--done", "done_url", metavar="URL", help="It did go out: here is where.")
@click.option("--id", "remote_id", metavar="ID", help="With --done: the remote id, if you know it.")
@click.option("--retry", is_flag=True, help="It did not go out: the next run sends it.")
@click.option("--skip", is_flag=True, help="Never announce this post on this channel.")
@click.option("--note", default="", help="Why, for whoever reads the ledger next.")
@click.option("--by", default=None, help="Who decided (default: $GIT_AUTHOR_NAME, $GITHUB_ACTOR or $USER).")
@pass_invocation
def resolve(
    given: Invocation,
    post: str,
    channel: str,
    done_url: str | None,
    remote_id: str | None,
    retry: bool,
    skip: bool,
    note: str,
    by: str | None,
) -> None:
    """Record a human decision for POST on CHANNEL (a record that needs review, or any pending pair)."""
    if sum((done_url is not None, retry, skip)) != 1:
        raise click.UsageError("say exactly one of --done URL, --retry or --skip")
    if remote_id and done_url is None:
        raise click.UsageError("--id goes with --done")
    options = given.options(sending=False)

    def decide() -> str:
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            ref = _find_post(given, ledger, options, post)
            if channel not in channel_ids(options) and ledger.record(ref.key, channel) is None:
                raise SyndicateError(f"no channel {channel!r} in mkdocs.yml nor in the ledger for {ref.key}")
            current = ledger.record(ref.key, channel)
            at = to_iso(now())
            decision = (
                Decision("done", done_url, remote_id)
                if done_url is not None
                else Decision("retry" if retry else "skip")
            )
            text = f"resolved by hand by {by or who()} on {at[:10]}: {decision.describe()}" + (
                f" — {note}" if note else ""
            )
            where = f"({ref.key}, {channel})"
            record = resolved(where, current, decision, at, text, known=ref.key in ledger.posts)
            if isinstance(record, str):
                return record
            ledger.apply([Transition(ref, channel, record)], by_hand=True)
            return f"({ref.key}, {channel}) {current.state if current else 'pending'} → {record.state}: {text}"

    click.echo(one_line(guard(decide)))  # --note and --by are shown as given, escapes inert


def _find_post(given: Invocation, ledger: Ledger, options: Options, text: str) -> PostRef:
    """A post by ledger key, with or without slashes around it, or by its URL."""
    built = {p.key: p for p in given.posts_if_any(options) or []}
    candidates = {text, text.strip("/") + "/", text.lstrip("/")}
    for key, entry in ledger.posts.items():
        if key in candidates or entry.url == text:
            return PostRef(key, entry.url, entry.title)
    for key, found in built.items():
        if key in candidates or found.url == text:
            return PostRef(key, found.url, found.title)
    raise SyndicateError(f"no post {text!r} in {options.ledger_path.name} nor in the last build")


@click.command()
@config_file_option
@click.option(
    "--before",
    default=None,
    metavar="DATE",
    help=(
        "Only posts whose date (the post's own: front matter `date`, or the feed entry's) is before "
        "DATE, given as 2026-11-28, 2026-11-28T09:30 or 2026-11-28T09:30:00+01:00 (UTC without an "
        "offset). Default: every post of the last build."
    ),
)
@click.option("--by", default=None, help="Who decided (default: $GIT_AUTHOR_NAME, $GITHUB_ACTOR or $USER).")
@feed_option
@pass_invocation
def adopt(given: Invocation, before: str | None, by: str | None, feed: str | None) -> None:
    """First run on a site that already has posts: mark every existing pair skipped, so nothing
    old is announced. Pairs that already have a record are left as they are."""
    cutoff = _before_date(before) if before else now()
    options = given.options(sending=False)
    posts, built_at = given.posts(options, feed)

    def mark() -> str:
        channels = channel_ids(options)
        moment = now()
        note = f"adopted by {by or who()} on {to_iso(moment)[:10]}: existed before syndication started"
        found = Adoption([p for p in posts if not p.draft and p.date < cutoff], cutoff)
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            kept = sum(1 for p in found.posts for ch in channels if ledger.record(p.key, ch) is not None)
            marked = adopt_backlog(ledger, found, channels, moment, note=note)
        later = len([p for p in posts if not p.draft and p.date >= cutoff])
        return (
            f"adopted {len({key for key, _ in marked})} post(s): {len(marked)} pair(s) marked skipped"
            + (f", {kept} pair(s) already recorded left as they are" if kept else "")
            + (f"; {later} post(s) dated {to_iso(cutoff)} or later stay pending" if later else "")
            + f" ({source(feed, built_at).removeprefix('the ')})"
        )

    click.echo(one_line(guard(mark)))


def _before_date(value: str) -> dt.datetime:
    try:
        return from_iso(value.strip())
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date; give it like 2026-11-28, 2026-11-28T09:30 or 2026-11-28T09:30:00+01:00 "
            "(UTC when it has no offset)",
            param_hint="'--before'",
        ) from None


@click.command("rename-channel")
@config_file_option
@click.argument("old")
@click.argument("new")
@pass_invocation
def rename_channel(given: Invocation, old: str, new: str) -> None:
    """Move every record of channel OLD to NEW (after renaming it in the config), so nothing is
    announced again under the new id."""
    if not is_plain_name(new):  # it would name records, commits and log lines: as a config id would
        raise click.BadParameter(f"{new!r} has a control, line-break, bidi or invisible character", param_hint="NEW")
    options = given.options(sending=False)

    def move() -> str:
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            moved = ledger.rename_channel(old, new)
        if not moved:
            raise SyndicateError(f"{options.ledger_path.name} has no record of channel {old!r}; nothing to rename")
        hint = "" if new in {c.id for c in options.channels} else f" (add {new!r} to the config's channels)"
        return f"renamed channel {old} → {new}: {moved} post(s) moved in {options.ledger_path.name}{hint}"

    click.echo(one_line(guard(move)))
