"""The `mkdocs-syndicate` command: see and steer what the plugin does without editing YAML by hand.

Every subcommand that needs the site takes `-f mkdocs.yml` like MkDocs. `run`, `plan` and `adopt`
work from the posts the last `mkdocs build` saved (.syndicate-cache/), so they never rebuild.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.config.site import LoadedSite, load_site
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.backlog import Adoption
from mkdocs_syndicate.engine.backlog import adopt as adopt_backlog
from mkdocs_syndicate.engine.modes import pull_request_reason
from mkdocs_syndicate.engine.plan import out_of_date
from mkdocs_syndicate.engine.preview import plan as make_the_plan
from mkdocs_syndicate.engine.preview import select_posts
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.errors import LedgerError, RunInterrupted, SyndicateError
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import STATES, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.output.display import run_with_display, undone_message
from mkdocs_syndicate.output.plan import full_plan_lines, hashtag_source
from mkdocs_syndicate.output.reporters import LOOKS
from mkdocs_syndicate.output.status import human_age, status_view
from mkdocs_syndicate.redaction import shown_url
from mkdocs_syndicate.safety import is_plain_name, json_safe, one_line, printable
from mkdocs_syndicate.sandbox.site import sandbox_note, sandbox_state_dir, site_sandbox
from mkdocs_syndicate.sources.manifest import manifest_path, read_manifest
from mkdocs_syndicate.timeutil import SystemClock, from_iso, to_iso, utcnow

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM

config_file_option = click.option(
    "-f",
    "--config-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Provide a specific MkDocs config, or a syndicate.yml (default: ./mkdocs.yml, else "
    "./properdocs.yml, else ./syndicate.yml).",
)
feed_option = click.option(
    "--feed",
    "feed",
    default=None,
    metavar="PATH_OR_URL",
    help="Take the posts from this RSS, Atom or JSON feed instead of the last MkDocs build.",
)


def git_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--git-push/--no-git-push`, `--git-remote`, `--git-branch`: the config's `git:` settings
    for this run only (the GitHub Action's inputs), so a site's config need not say them."""
    for option in reversed(
        (
            click.option(
                "--git-push/--no-git-push",
                "git_push",
                default=None,
                help="Commit and push the ledger as the run goes (git.push: true), or neither.",
            ),
            click.option("--git-remote", "git_remote", default=None, metavar="NAME", help="git.remote for this run."),
            click.option("--git-branch", "git_branch", default=None, metavar="NAME", help="git.branch for this run."),
        )
    ):
        command = option(command)
    return command


def _with_git(site: LoadedSite, push: bool | None, remote: str | None, branch: str | None) -> LoadedSite:
    """The site with its `git:` settings changed as the command line says."""
    from mkdocs_syndicate.ledger.gitsettings import git_name_problem

    for flag, name in (("--git-remote", remote), ("--git-branch", branch)):
        problem = None if name is None else git_name_problem(name)
        if problem is not None:
            raise click.BadParameter(problem, param_hint=f"'{flag}'")
    git = site.settings.git
    if push is not None:
        git["push"] = git["commit"] = push
    if remote is not None:
        git["remote"] = remote
    if branch is not None:
        git["branch"] = branch
    return site


@click.group()
@click.version_option(package_name="mkdocs-syndicate", prog_name="mkdocs-syndicate")
def main() -> None:
    """See and steer mkdocs-syndicate: what went out where, and what is left."""
    _refused_entries.clear()


_refused_entries: list[str] = []  # feed entries this command left out: it exits 1 once done


@main.result_callback()
def _after_a_command(*_: object, **__: object) -> None:
    if _refused_entries:  # the rest was read and done; the feed still needs fixing
        count = len(_refused_entries)
        raise click.ClickException(f"{count} feed entr{'y was' if count == 1 else 'ies were'} left out (see above)")


# ---------------------------------------------------------------------- helpers

T = TypeVar("T")


def _guard(action: Callable[[], T]) -> T:
    """Our errors become one clear line and exit 1, never a traceback."""
    try:
        return action()
    except RunInterrupted as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_TERMINATED if exc.by == "SIGTERM" else EXIT_INTERRUPTED)
    except SyndicateError as exc:
        raise click.ClickException(str(exc)) from None


def _site(config_file: Path | None) -> LoadedSite:
    return _guard(lambda: load_site(config_file))


def _built_posts(options: Options, feed: str | None = None) -> tuple[list[Post], dt.datetime]:
    """The posts of the last MkDocs build, or of the feed when one is given (read now)."""
    if feed is not None:
        from mkdocs_syndicate.sources.feed import read_feed_posts

        read = _guard(lambda: read_feed_posts(feed, options.site.url))
        for message in read.refused:  # each entry left out alone, by name; the rest goes on
            click.echo(f"error: {printable(message)}", err=True)
        _refused_entries.extend(read.refused)
        return read.posts, _now()
    return _guard(lambda: read_manifest(manifest_path(options.ledger_path), options.site.url))


def _built_posts_if_any(options: Options, feed: str | None = None) -> list[Post] | None:
    """The last build's posts (the feed's, when given: then it must be readable), or None when
    there is no usable saved build (it is optional here)."""
    if feed is not None:
        return _built_posts(options, feed)[0]
    try:
        return read_manifest(manifest_path(options.ledger_path), options.site.url)[0]
    except SyndicateError:
        return None


def _source(feed: str | None, built_at: dt.datetime) -> str:
    """Where the posts came from, for messages: the last build, or the feed as read now."""
    return f"the feed {shown_url(feed)} (read {to_iso(built_at)})" if feed else f"the build of {to_iso(built_at)}"


def _now() -> dt.datetime:
    return utcnow(SystemClock())


def _out() -> Console:
    console = Console()
    if console.is_terminal:
        return console
    # Piped or in CI: no wrapping of keys and URLs, unless the caller says how wide (COLUMNS).
    return Console(width=int(os.environ.get("COLUMNS") or 200))


def _who() -> str:
    for name in ("GIT_AUTHOR_NAME", "GITHUB_ACTOR", "USER"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "someone"


def _channel_ids(options: Options) -> list[str]:
    return [c.id for c in options.channels if c.enabled]


# ---------------------------------------------------------------------- check


@main.command()
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


# ---------------------------------------------------------------------- doctor


@main.command()
@config_file_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(config_file: Path | None, as_json: bool) -> None:
    """Check each enabled channel's credentials with one authenticated read (no post, no ledger
    write): exit 1 naming each channel that needs a person, and what to do."""
    from mkdocs_syndicate.engine.doctor import check_channels
    from mkdocs_syndicate.output.actions import annotate_checks, in_actions, summarise_checks

    site = _site(config_file)
    options = _guard(lambda: site.options(sending=True, reading_only=True))  # Weibo's rip is not needed to read
    found = _guard(lambda: check_channels(options))
    failing = [c for c in found if c.check.health.needs_a_person]
    if as_json:
        data = {"ok": not failing, "sandbox": options.sandbox, "channels": [c.to_json() for c in found]}
        click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=1)))
    else:
        for checked in found:
            click.echo(printable(checked.line))
    if in_actions(os.environ):
        annotate_checks(found, click.echo)
        summarise_checks(os.environ, found, sandbox=options.sandbox, warn=_log)
    if failing:
        raise click.ClickException(
            f"{len(failing)} channel(s) need a person: {', '.join(c.channel for c in failing)} (see above)"
        )


# ---------------------------------------------------------------------- status


@main.command()
@config_file_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--check",
    "check_",
    is_flag=True,
    help="Exit 1 when any pair needs a person: failed, or in_flight on a channel that is not simply sent again.",
)
@click.option("--all", "show_all", is_flag=True, help="List done and skipped pairs too (they are counted otherwise).")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice([*STATES, PairState.PENDING.value, PairState.OPTED_OUT.value]),
    help="Only pairs in this state (repeatable).",
)
@click.option("--channel", "channel_ids", multiple=True, help="Only this channel id (repeatable).")
@click.option("--post", "post_text", default=None, help="Only posts whose key or URL contains this.")
@feed_option
def status(
    config_file: Path | None,
    as_json: bool,
    check_: bool,
    show_all: bool,
    states: tuple[str, ...],
    channel_ids: tuple[str, ...],
    post_text: str | None,
    feed: str | None,
) -> None:
    """Every (post, channel) pair: what is undone first; done ones counted (--all lists them)."""
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))
    ledger = _guard(lambda: Ledger.read(options.ledger_path))
    now = _now()
    configured = _channel_ids(options)
    known = sorted(set(configured) | {c for e in ledger.posts.values() for c in e.channels})
    unknown = sorted(set(channel_ids) - set(known))
    if unknown:  # a typo would otherwise show an empty, reassuring table
        raise click.BadParameter(
            f"unknown channel id {unknown[0]!r} (known: {', '.join(known) or 'none'})", param_hint="'--channel'"
        )
    built = _built_posts_if_any(options, feed)
    posts = _guard(lambda: select_posts(options, built, SystemClock())) if built is not None else None
    resent = frozenset(
        c.id for c in options.channels if c.enabled and not c.at_most_once
    )  # IndexNow's 202 is no problem
    view = status_view(ledger, configured, posts, now, resent).filtered(
        states=set(states), channels=set(channel_ids), post=post_text
    )
    # Copies whose message changed since they went out, from the last build (no request).
    stale = out_of_date(_guard(lambda: make_the_plan(options, built))) if built is not None else []
    if as_json:
        data = {"ledger": str(options.ledger_path), "build_seen": posts is not None, **view.to_json()}
        data["out_of_date"] = [{"post": key, "channel": channel, "then": then} for key, channel, then in stale]
        click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=1)))  # bidi and C1 as \uXXXX
    else:
        _print_status(view, options.ledger_path.name, show_all or bool(states), posts is not None, now)
        if stale:
            _out().print(Text(f"{len(stale)} cop{'y' if len(stale) == 1 else 'ies'} out of date (the post changed):"))
            for key, channel, then in stale:
                _out().print(Text(one_line(f"  {channel} · {key}: {then}")))
    if check_ and view.attention:
        sys.exit(1)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _status_lines(pair: Any, width: int) -> list[Text]:
    """One pair: its state, channel, when and post; under it the remote URL, the error or the note."""
    when = f"{human_age(pair.age_seconds)} ago" if pair.age_seconds is not None else (pair.at or "")[:10]
    head = Text(_cut(f"{pair.state:<10} {one_line(pair.channel):<10} {when:<11} {one_line(pair.post_key)}", width))
    head.stylize(LOOKS[pair.state].style, 0, len(pair.state))
    tries = f"(try {pair.attempts})" if pair.attempts > 1 else ""
    detail = " ".join(part for part in (tries, pair.remote_url or pair.error or pair.note or "") if part)
    return [head, Text(_cut(" " * 11 + one_line(detail), width))] if detail else [head]


def _print_status(view: Any, ledger_name: str, show_all: bool, build_seen: bool, now: dt.datetime) -> None:
    """Readable at 80 columns: undone pairs first, a line each (state, channel, when, post) and
    the remote URL or error under it; done and skipped pairs only counted unless asked for. The
    full text of every field is in `--json`."""
    console = _out()
    # A done pair with a note is listed: the note says what is unusual about it (sent five times
    # and never confirmed, resolved by hand).
    shown = [
        p
        for p in view.pairs
        if show_all or p.state not in (PairState.DONE, PairState.SKIPPED) or (p.state == PairState.DONE and p.note)
    ]
    shown.sort(key=lambda p: (LOOKS[p.state].rank, p.post_key, p.channel))
    console.print(Text(f"{one_line(ledger_name)}: {len(view.posts)} posts × {len(view.channels)} channels"))
    width = max(40, console.width)
    for pair in shown:
        said = pair
        if view.expected(pair):  # IndexNow's 202: received, confirmed by a later run's ping
            said = replace(pair, error=f"{pair.error or ''} (expected: the next run sends again)".lstrip())
        for line in _status_lines(said, width):
            console.print(line)
    hidden = Counter(p.state for p in view.pairs if p not in shown)
    totals = ", ".join(f"{n} {state}" for state, n in view.totals.items()) or "nothing yet"
    console.print(Text(f"totals: {totals}"))
    if hidden:
        console.print(
            Text(f"not listed: {', '.join(f'{n} {s}' for s, n in sorted(hidden.items()))} (--all lists them)")
        )
    for history in view.channel_history():  # per channel, from the ledger alone
        console.print(Text(_cut(one_line(history.line(now)), width)))
    if not build_seen:
        console.print("(no saved build: pairs with no record are not shown; run `mkdocs build` to see them)")


# ---------------------------------------------------------------------- plan


@main.command()
@config_file_option
@feed_option
def plan(config_file: Path | None, feed: str | None) -> None:
    """What a send would do now, with no network: each pending pair and exactly what would go out."""
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))
    posts, built_at = _built_posts(options, feed)
    the_plan = _guard(lambda: make_the_plan(options, posts))
    hashtags_from = hashtag_source(site.settings.hashtags_from, feed=feed is not None)
    for line in full_plan_lines(
        the_plan, _source(feed, built_at), options.max_per_run, hashtags_from, options.site.url
    ):
        click.echo(line)
    if the_plan.pairs:
        _warn_of_a_placeholder(options)


# ---------------------------------------------------------------------- run / verify


def _log(text: str) -> None:
    click.echo(printable(text), err=True)


def _warn_of_a_placeholder(options: Options) -> None:
    from mkdocs_syndicate.output.siteurl import placeholder

    found = placeholder(options)
    if found is not None:
        _log(("warning: " if found[0] else "note: ") + found[1])


@main.command()
@config_file_option
@feed_option
@git_options
def run(
    config_file: Path | None, feed: str | None, git_push: bool | None, git_remote: str | None, git_branch: str | None
) -> None:
    """Send the pending pairs of the last build (or of --feed), without rebuilding (same code path
    as the plugin)."""
    site = _with_git(_site(config_file), git_push, git_remote, git_branch)
    if site.mode == "off":
        click.echo("mode: off — nothing sent", err=True)
        return
    pull_request = pull_request_reason(os.environ) if site.mode == "auto" else None
    if pull_request:
        click.echo(
            f"mode auto: {pull_request} — nothing sent (`mkdocs-syndicate plan` shows what would go out)", err=True
        )
        return
    options = _guard(lambda: site.options(sending=True))
    posts, built_at = _built_posts(options, feed)
    note = sandbox_note(options)
    _log(f"sending the posts of {_source(feed, built_at)}" + (f" {note}" if note else ""))
    _warn_of_a_placeholder(options)
    report = _guard(lambda: run_with_display(options, posts, _log, _log))
    message = undone_message(report, options)
    if message:
        raise click.ClickException(message)


@main.command()
@config_file_option
@feed_option
@git_options
def verify(
    config_file: Path | None, feed: str | None, git_push: bool | None, git_remote: str | None, git_branch: str | None
) -> None:
    """Resolve in_flight records by reading the remote side only; sends nothing."""
    site = _with_git(_site(config_file), git_push, git_remote, git_branch)
    options = _guard(lambda: site.options(sending=True, reading_only=True))  # Weibo's rip is not needed to read
    ledger = _guard(lambda: Ledger.read(options.ledger_path))
    posts = _posts_for_verify(options, ledger, feed)
    report = _guard(lambda: run_with_display(options, posts, _log, _log, verify_only=True))
    pings = _pings_in_flight(options, ledger)
    if pings:  # `status` lists them in_flight: say why verify left them so
        _log(
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


def _posts_for_verify(options: Options, ledger: Ledger, feed: str | None = None) -> list[Post]:
    """The last build's (or the feed's) posts where there is one; else what the ledger knows."""
    built = {p.key: p for p in _built_posts_if_any(options, feed) or []}
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


# ---------------------------------------------------------------------- resolve


@main.command()
@config_file_option
@click.argument("post")
@click.argument("channel")
@click.option("--done", "done_url", metavar="URL", help="It did go out: here is where.")
@click.option("--id", "remote_id", metavar="ID", help="With --done: the remote id, if you know it.")
@click.option("--retry", is_flag=True, help="It did not go out: the next run sends it.")
@click.option("--skip", is_flag=True, help="Never announce this post on this channel.")
@click.option("--note", default="", help="Why, for whoever reads the ledger next.")
@click.option("--by", default=None, help="Who decided (default: $GIT_AUTHOR_NAME, $GITHUB_ACTOR or $USER).")
def resolve(
    config_file: Path | None,
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
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))

    def decide() -> str:
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            ref = _find_post(ledger, options, post)
            if channel not in _channel_ids(options) and ledger.record(ref.key, channel) is None:
                raise SyndicateError(f"no channel {channel!r} in mkdocs.yml nor in the ledger for {ref.key}")
            current = ledger.record(ref.key, channel)
            now = to_iso(_now())
            decision = (
                Decision("done", done_url, remote_id)
                if done_url is not None
                else Decision("retry" if retry else "skip")
            )
            text = f"resolved by hand by {by or _who()} on {now[:10]}: {decision.describe()}" + (
                f" — {note}" if note else ""
            )
            record = resolved(f"({ref.key}, {channel})", current, decision, now, text)
            if isinstance(record, str):
                return record
            ledger.apply([Transition(ref, channel, record)], by_hand=True)
            return f"({ref.key}, {channel}) {current.state if current else 'pending'} → {record.state}: {text}"

    click.echo(one_line(_guard(decide)))  # --note and --by are shown as given, escapes inert


def _find_post(ledger: Ledger, options: Options, given: str) -> PostRef:
    """A post by ledger key, with or without slashes around it, or by its URL."""
    built = {p.key: p for p in _built_posts_if_any(options) or []}
    candidates = {given, given.strip("/") + "/", given.lstrip("/")}
    for key, entry in ledger.posts.items():
        if key in candidates or entry.url == given:
            return PostRef(key, entry.url, entry.title)
    for key, found in built.items():
        if key in candidates or found.url == given:
            return PostRef(key, found.url, found.title)
    raise SyndicateError(f"no post {given!r} in {options.ledger_path.name} nor in the last build")


# ---------------------------------------------------------------------- adopt


@main.command()
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
def adopt(config_file: Path | None, before: str | None, by: str | None, feed: str | None) -> None:
    """First run on a site that already has posts: mark every existing pair skipped, so nothing
    old is announced. Pairs that already have a record are left as they are."""
    cutoff = _before_date(before) if before else _now()
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))
    posts, built_at = _built_posts(options, feed)

    def mark() -> str:
        channels = _channel_ids(options)
        now = _now()
        note = f"adopted by {by or _who()} on {to_iso(now)[:10]}: existed before syndication started"
        found = Adoption([p for p in posts if not p.draft and p.date < cutoff], cutoff)
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            kept = sum(1 for p in found.posts for ch in channels if ledger.record(p.key, ch) is not None)
            marked = adopt_backlog(ledger, found, channels, now, note=note)
        later = len([p for p in posts if not p.draft and p.date >= cutoff])
        return (
            f"adopted {len({key for key, _ in marked})} post(s): {len(marked)} pair(s) marked skipped"
            + (f", {kept} pair(s) already recorded left as they are" if kept else "")
            + (f"; {later} post(s) dated {to_iso(cutoff)} or later stay pending" if later else "")
            + f" ({_source(feed, built_at).removeprefix('the ')})"
        )

    click.echo(one_line(_guard(mark)))


# ---------------------------------------------------------------------- rename-channel


@main.command("rename-channel")
@config_file_option
@click.argument("old")
@click.argument("new")
def rename_channel(config_file: Path | None, old: str, new: str) -> None:
    """Move every record of channel OLD to NEW (after renaming it in the config), so nothing is
    announced again under the new id."""
    if not is_plain_name(new):  # it would name records, commits and log lines: as a config id would
        raise click.BadParameter(f"{new!r} has a control, line-break, bidi or invisible character", param_hint="NEW")
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))

    def move() -> str:
        with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
            moved = ledger.rename_channel(old, new)
        if not moved:
            raise SyndicateError(f"{options.ledger_path.name} has no record of channel {old!r}; nothing to rename")
        hint = "" if new in {c.id for c in options.channels} else f" (add {new!r} to the config's channels)"
        return f"renamed channel {old} → {new}: {moved} post(s) moved in {options.ledger_path.name}{hint}"

    click.echo(one_line(_guard(move)))


# ---------------------------------------------------------------------- site-files


@main.command("site-files")
@config_file_option
@click.option(
    "--site-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The built site (default: the config's site_dir).",
)
def site_files(config_file: Path | None, site_dir: Path | None) -> None:
    """Write what the site serves for syndication into the built site: the channels' files
    (IndexNow's key file), and for each post's links and replies `syndication.json` with the
    comments script (`links: false` leaves those out). The plugin does it during `mkdocs build`;
    a site built without it (Zensical, a feed) runs this between the build and the deploy."""
    from mkdocs_syndicate.sandbox.site import make_channels
    from mkdocs_syndicate.sources.standard_site import well_known_file

    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))
    target = site_dir or Path(options.site.site_dir)
    if not target.is_dir():
        raise click.ClickException(f"site dir {target}: no such folder (build the site first, or give --site-dir)")
    channel_files = [f for channel in _guard(lambda: make_channels(options)) for f in channel.site_files()]
    channel_files += _guard(
        lambda: well_known_file(options.ledger_path, site.settings.channels, options.site.url, sandbox=options.sandbox)
    )
    files = channel_files + _link_files(site, options)
    for name, content in files:
        path = target / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"{path}: could not write ({exc.strerror or exc})") from None
        click.echo(f"wrote {path}", err=True)
    problem = _nothing_to_write(site) if not channel_files else None
    # A deploy without the key file would fail every IndexNow ping: say why, even when the
    # links' files were written. With no such channel at all, the links' files are enough.
    if problem is not None and not files:
        raise click.ClickException(problem)
    if problem is not None and not problem.startswith(_NO_CHANNEL_FILE):
        raise click.ClickException(problem.replace("nothing written:", "no channel's file written:", 1))


def _link_files(site: LoadedSite, options: Options) -> list[tuple[str, str]]:
    """`syndication.json` and the comments script that shows it on a post's page, unless `links`
    is off."""
    from importlib.resources import files as package_files

    from mkdocs_syndicate.content.crosslinks import SCRIPT_PATH
    from mkdocs_syndicate.sources.syndication_file import FILE_NAME, syndication_json

    settings = site.settings
    if settings.links is False or settings.links == "off":
        return []
    listing = _guard(
        lambda: syndication_json(
            options.ledger_path,
            settings.channels,
            options.site.url,
            sandbox=options.sandbox,
            comments=settings.comments,
            lead=settings.links_lead,
            warn=lambda text: click.echo(f"warning: {printable(text)}", err=True),
        )
    )
    script = (package_files("mkdocs_syndicate") / "assets" / "syndicate-comments.js").read_text("utf-8")
    return [(FILE_NAME, listing), (SCRIPT_PATH, script)]


def _before_date(value: str) -> dt.datetime:
    try:
        return from_iso(value.strip())
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date; give it like 2026-11-28, 2026-11-28T09:30 or 2026-11-28T09:30:00+01:00 "
            "(UTC when it has no offset)",
            param_hint="'--before'",
        ) from None


def _nothing_to_write(site: LoadedSite) -> str:
    """What is missing when no channel has a file for the site: a setting, or such a channel."""
    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.config.channels import missing_settings
    from mkdocs_syndicate.registry import clients

    raw = site.settings.channels
    with_files = {  # the channels whose type adds files to the site
        key: values
        for key, values in raw.items()
        if isinstance(values, dict) and values.get("type") in clients()
        if clients()[values["type"]].site_files is not Channel.site_files
    }
    missing = missing_settings(with_files, clients())
    if missing:
        said = "; ".join(f"{m.setting}: {m.problem}" for m in missing)
        return f"nothing written: {said}"
    return f"{_NO_CHANNEL_FILE} (IndexNow adds its key file)"


_NO_CHANNEL_FILE = "nothing written: no enabled channel adds a file to the site"


# ---------------------------------------------------------------------- sandbox


@main.command()
@config_file_option
@click.option("--port", default=8787, show_default=True, type=click.IntRange(1, 65535), help="Port on 127.0.0.1.")
def sandbox(config_file: Path | None, port: int) -> None:
    """Run the loopback emulators in the foreground with a page showing what each received.

    Builds of this site with `sandbox: true` send to this server while it runs."""
    site = _site(config_file)
    options = _guard(lambda: site.options(sending=False))
    state_dir = sandbox_state_dir(options)
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


if __name__ == "__main__":  # python -m mkdocs_syndicate.cli
    main()
