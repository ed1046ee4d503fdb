"""Running a send with the right display, shared by the plugin and `mkdocs-syndicate run`:
a live display on a terminal, plain lines in CI logs, then the summary table."""

from __future__ import annotations

import datetime as dt
from typing import Callable

from rich.console import Console

from mkdocs_syndicate.engine.plan import Plan
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.output.reporters import PlainReporter, RichReporter, plan_lines, summary_table, undone_lines
from mkdocs_syndicate.engine.runner import RunReport
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.engine.syndication import Options, send


def stderr_console() -> Console:
    console = Console(stderr=True)
    if not console.is_terminal:  # CI logs: no wrapping of keys and URLs at 80 columns
        console = Console(stderr=True, width=200)
    return console


def run_with_display(options: Options, posts: list[Post], log: Callable[[str], None],
                     warn: Callable[[str], None], *, verify_only: bool = False,
                     console: Console | None = None) -> RunReport:
    console = console or stderr_console()
    if console.is_terminal:
        with RichReporter(console, log) as reporter:
            report = send(options, posts, reporter, verify_only=verify_only)
    else:
        report = send(options, posts, PlainReporter(log), verify_only=verify_only)
    if report.adoption is not None:
        log(report.adoption.line())
    if not report.results:
        log("nothing in flight to verify (0 requests)" if verify_only
            else "nothing pending: every post is announced everywhere (0 requests)")
    else:
        console.print(summary_table(report))
    for key in report.deferred:
        warn(f"deferred by max_per_run, goes out next run: {key}")
    for line in report.warnings:
        warn(one_line(line))
    waiting: dict[tuple[str, str], list[str]] = {}
    for result in report.waiting:
        waiting.setdefault((result.channel, result.detail), []).append(result.post_key)
    for (channel, detail), keys in waiting.items():
        which = keys[0] if len(keys) == 1 else f"{len(keys)} posts"
        warn(one_line(f"{channel}: {which} not confirmed yet: {detail}"))
    return report


def undone_message(report: RunReport, options: Options) -> str | None:
    undone = undone_lines(report)
    if not undone:
        return None
    return (f"{len(undone)} pair(s) left undone (see {options.ledger_path.name}):\n  "
            + "\n  ".join(undone))


def log_plan(the_plan: Plan, reason: str, log: Callable[[str], None]) -> None:
    if the_plan.adoption is not None:
        log(f"plan ({reason}): the first send will adopt, not announce: " + the_plan.adoption.line())
    if not the_plan.pairs and not the_plan.deferred:
        log(f"plan ({reason}): nothing pending")
        return
    log(f"plan ({reason}): {len(the_plan.pairs)} pair(s) would be sent; nothing sent")
    for line in plan_lines(the_plan, collapse_after=COLLAPSE_AFTER):
        log(line)


COLLAPSE_AFTER = 10   # more lines of one kind than this become one line with a count


def stale_pending(the_plan: Plan, now: dt.datetime, hours: float) -> list[str]:
    """The "deployed but never announced" alarm: pending pairs of posts older than `hours`."""
    if not hours or hours <= 0:
        return []
    by_post: dict[str, list[str]] = {}
    dates: dict[str, dt.datetime] = {}
    for pair in the_plan.pairs:
        if now - pair.post.date > dt.timedelta(hours=hours):
            by_post.setdefault(pair.post.key, []).append(pair.channel.id)
            dates[pair.post.key] = pair.post.date
    return [f"{key} is dated {dates[key]:%Y-%m-%d %H:%M} UTC, more than {hours:g} h ago, and still not "
            f"announced on {', '.join(channels)}: is the sending step running? (`mkdocs-syndicate status`)"
            for key, channels in sorted(by_post.items())]
