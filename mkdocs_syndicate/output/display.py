"""Running a send with the right display, shared by the plugin and `mkdocs-syndicate run`:
a live display on a terminal, plain lines in CI logs, then the summary (a table, or a list in a log)."""

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
from mkdocs_syndicate.output.reporters import PlainReporter, summary_lines, undone_lines
from mkdocs_syndicate.safety import one_line

# What `verify` says when it has nothing to read. In-flight pings of an at-least-once channel
# (IndexNow) are not counted: there is nothing to read them back from, so the next run sends them
# again (`mkdocs-syndicate verify` says how many).
NOTHING_TO_VERIFY = "nothing to read back: no in_flight record of an at-most-once channel (0 requests)"


def stderr_console() -> Console:
    """Rich's own width: the terminal's, or `COLUMNS`, or 80 in a log (where the summary is a
    list, which needs no width: see print_summary)."""
    return Console(stderr=True)


def print_summary(console: Console, report: RunReport) -> None:
    """The summary of the run: a table on a terminal, or at the width `COLUMNS` asks for; in a log
    (CI), one line per pair, neither padded nor wrapped, so keys and URLs stay whole and the log
    is no wider than what it says."""
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        console.print(summary_table(report))
        return
    for line in summary_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


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
        live = RichReporter(console, log)

        def first_then_progress(report: RunReport) -> None:
            _say_what_came_first(report, log)  # above the progress lines, not under them
            live.progress.start()

        try:
            report = send(options, posts, live, verify_only=verify_only, on_start=first_then_progress)
        finally:
            live.progress.stop()
    else:
        report = send(
            options,
            posts,
            PlainReporter(log),
            verify_only=verify_only,
            on_start=lambda report: _say_what_came_first(report, log),
        )
    if not report.results:
        log(NOTHING_TO_VERIFY if verify_only else "nothing pending: every post is announced everywhere (0 requests)")
    else:
        print_summary(console, report)
    _warn_of_what_is_left(report, warn)
    if in_actions(os.environ):  # the job summary and annotations: where a person looks in CI
        report_run(os.environ, report, options.ledger_path.name, sandbox=options.sandbox, warn=warn)
    return report


def _say_what_came_first(report: RunReport, log: Callable[[str], None]) -> None:
    """What a run did before its first request: a ledger rewritten, posts found moved, the
    backlog adopted. Said before the sending's lines, in the order it happened."""
    for note in report.notes:
        log(one_line(note))
    if report.adoption is not None:
        log(report.adoption.line())
    for move in report.moves:
        log(one_line(move.line()))


def _warn_of_what_is_left(report: RunReport, warn: Callable[[str], None]) -> None:
    """Posts deferred, messages' notes, and pairs waiting for a service's confirmation."""
    for key in report.deferred:
        warn(f"deferred by max_per_run, goes out next run: {key}")
    for line in report.warnings:
        warn(one_line(line))
    waiting: dict[tuple[str, str], list[str]] = {}
    for result in report.waiting:
        waiting.setdefault((result.channel, result.detail), []).append(result.post_key)
    for (channel, detail), keys in waiting.items():  # once a channel and reason, wrapped: it is long
        which = keys[0] if len(keys) == 1 else f"{len(keys)} posts"
        warn(wrapped(one_line(f"{channel}: {which} not confirmed yet: {detail}")))


def wrapped(text: str, width: int = 100) -> str:
    """A long line as lines of at most `width` (URLs and paths unbroken), the rest indented."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))


def undone_message(report: RunReport, options: Options) -> str | None:
    undone = undone_lines(report)
    if not undone:
        return None
    return f"{len(undone)} pair(s) left undone (see {options.ledger_path.name}):\n  " + "\n  ".join(undone)
