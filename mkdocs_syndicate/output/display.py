"""Running a send with the right display, shared by the plugin and `mkdocs-syndicate run`:
a live display on a terminal, plain lines in CI logs, then the summary table."""

from __future__ import annotations

import os
from collections.abc import Callable

from rich.console import Console

from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.results import RunReport
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.output.actions import in_actions, report_run
from mkdocs_syndicate.output.progress import RichReporter, summary_table
from mkdocs_syndicate.output.reporters import PlainReporter, undone_lines
from mkdocs_syndicate.safety import one_line


def stderr_console() -> Console:
    console = Console(stderr=True)
    if not console.is_terminal:  # CI logs: no wrapping of keys and URLs at 80 columns
        console = Console(stderr=True, width=200)
    return console


def run_with_display(
    options: Options,
    posts: list[Post],
    log: Callable[[str], None],
    warn: Callable[[str], None],
    *,
    verify_only: bool = False,
    console: Console | None = None,
) -> RunReport:
    console = console or stderr_console()
    if console.is_terminal:
        with RichReporter(console, log) as reporter:
            report = send(options, posts, reporter, verify_only=verify_only)
    else:
        report = send(options, posts, PlainReporter(log), verify_only=verify_only)
    for note in report.notes:
        log(one_line(note))
    if report.adoption is not None:
        log(report.adoption.line())
    for move in report.moves:
        log(one_line(move.line()))
    if not report.results:
        log(
            "nothing in flight to verify (0 requests)"
            if verify_only
            else "nothing pending: every post is announced everywhere (0 requests)"
        )
    else:
        console.print(summary_table(report))
    _warn_of_what_is_left(report, warn)
    if in_actions(os.environ):  # the job summary and annotations: where a person looks in CI
        report_run(os.environ, report, options.ledger_path.name, sandbox=options.sandbox, warn=warn)
    return report


def _warn_of_what_is_left(report: RunReport, warn: Callable[[str], None]) -> None:
    """Posts deferred, messages' notes, and pairs waiting for a service's confirmation."""
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


def undone_message(report: RunReport, options: Options) -> str | None:
    undone = undone_lines(report)
    if not undone:
        return None
    return f"{len(undone)} pair(s) left undone (see {options.ledger_path.name}):\n  " + "\n  ".join(undone)
