"""`mkdocs-syndicate status`: every (post, channel) pair, undone first, readable at 80 columns."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections import Counter
from dataclasses import replace
from typing import Any

import click
from rich.text import Text

from mkdocs_syndicate.cli.context import (
    Invocation,
    channel_ids,
    config_file_option,
    feed_option,
    guard,
    now,
    out,
    pass_invocation,
)
from mkdocs_syndicate.engine.plan import out_of_date
from mkdocs_syndicate.engine.preview import plan, select_posts
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import STATES
from mkdocs_syndicate.output.reporters import LOOKS
from mkdocs_syndicate.output.status import human_age, status_view
from mkdocs_syndicate.safety import json_safe, one_line
from mkdocs_syndicate.timeutil import SystemClock


@click.command()
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
@click.option("--channel", "channel_ids_given", multiple=True, help="Only this channel id (repeatable).")
@click.option("--post", "post_text", default=None, help="Only posts whose key or URL contains this.")
@feed_option
@pass_invocation
def status(
    given: Invocation,
    as_json: bool,
    check_: bool,
    show_all: bool,
    states: tuple[str, ...],
    channel_ids_given: tuple[str, ...],
    post_text: str | None,
    feed: str | None,
) -> None:
    """Every (post, channel) pair: what is undone first; done ones counted (--all lists them)."""
    options = given.options(sending=False)
    ledger = given.ledger(options)
    moment = now()
    configured = channel_ids(options)
    known = sorted(set(configured) | {c for e in ledger.posts.values() for c in e.channels})
    unknown = sorted(set(channel_ids_given) - set(known))
    if unknown:  # a typo would otherwise show an empty, reassuring table
        raise click.BadParameter(
            f"unknown channel id {unknown[0]!r} (known: {', '.join(known) or 'none'})", param_hint="'--channel'"
        )
    built = given.posts_if_any(options, feed)
    posts = guard(lambda: select_posts(options, built, SystemClock())) if built is not None else None
    resent = frozenset(
        c.id for c in options.channels if c.enabled and not c.at_most_once
    )  # IndexNow's 202 is no problem
    view = status_view(ledger, configured, posts, moment, resent).filtered(
        states=set(states), channels=set(channel_ids_given), post=post_text
    )
    # Copies whose message changed since they went out, from the last build (no request).
    stale = out_of_date(guard(lambda: plan(options, built))) if built is not None else []
    if as_json:
        data = {"ledger": str(options.ledger_path), "build_seen": posts is not None, **view.to_json()}
        data["out_of_date"] = [{"post": key, "channel": channel, "then": then} for key, channel, then in stale]
        click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=1)))  # bidi and C1 as \uXXXX
    else:
        settles = {c.id: c.settle for c in options.channels if c.enabled and c.at_most_once}
        _print_status(view, options.ledger_path.name, show_all or bool(states), posts is not None, moment, settles)
        if stale:
            out().print(Text(f"{len(stale)} cop{'y' if len(stale) == 1 else 'ies'} out of date (the post changed):"))
            for key, channel, then in stale:
                out().print(Text(one_line(f"  {channel} · {key}: {then}")))
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
    said = pair.remote_url or pair.error or pair.note or ""
    if pair.state == PairState.DELETED:  # the copy it names is gone: named as such, never as a link to follow
        copy = pair.remote_url or pair.remote_id
        said = "; ".join(part for part in (pair.note, f"was {copy}" if copy else None) if part)
    detail = " ".join(part for part in (tries, said) if part)
    return [head, Text(_cut(" " * 11 + one_line(detail), width))] if detail else [head]


def _held(pair: Any, settles: dict[str, float], moment: dt.datetime) -> str | None:
    """When an in_flight pair of an at-most-once channel is read again (its `settle`), or None."""
    from mkdocs_syndicate.timeutil import from_iso, to_iso

    if pair.state != PairState.IN_FLIGHT or pair.channel not in settles or not pair.at:
        return None
    try:
        read_at = from_iso(pair.at) + dt.timedelta(seconds=settles[pair.channel])
    except ValueError:
        return None
    if read_at <= moment:
        return "the next run reads the service for it before anything is sent again"
    return f"held: the first run from {to_iso(read_at)} reads the service for it (settle)"


SETTLE_NOTE = (
    "in_flight: the request may have reached the service, so it is never sent again blind; a run "
    "reads the service first, once `settle` seconds (default 600) have passed since the last request, "
    "and until then each run lists the pair and exits 1"
)


def _print_status(
    view: Any,
    ledger_name: str,
    show_all: bool,
    build_seen: bool,
    moment: dt.datetime,
    settles: dict[str, float] | None = None,
) -> None:
    """Readable at 80 columns: undone pairs first, a line each (state, channel, when, post) and
    the remote URL or error under it; done and skipped pairs only counted unless asked for. The
    full text of every field is in `--json`."""
    console = out()
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
        held = _held(pair, settles or {}, moment)
        if held is not None:
            console.print(Text(_cut(" " * 11 + held, width)))
    hidden = Counter(p.state for p in view.pairs if p not in shown)
    totals = ", ".join(f"{n} {state}" for state, n in view.totals.items()) or "nothing yet"
    console.print(Text(f"totals: {totals}"))
    if hidden:
        console.print(
            Text(f"not listed: {', '.join(f'{n} {s}' for s, n in sorted(hidden.items()))} (--all lists them)")
        )
    for history in view.channel_history():  # per channel, from the ledger alone
        console.print(Text(_cut(one_line(history.line(moment)), width)))
    if any(_held(pair, settles or {}, moment) for pair in shown):
        console.print(Text(SETTLE_NOTE))
    if not build_seen:
        console.print("(no saved build: pairs with no record are not shown; run `mkdocs build` to see them)")
