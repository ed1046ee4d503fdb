"""What the user sees: progress while lanes run or sleep, a per-pair summary table, the undone list.

On a terminal a rich progress display shows one line per channel with a countdown during waits;
elsewhere (CI logs) each event is one plain log line. Only redacted text ever reaches here.
"""

from __future__ import annotations

import logging
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table
from rich.text import Text

from mkdocs_syndicate.engine.plan import Plan
from mkdocs_syndicate.engine.runner import PairResult, RunReport
from mkdocs_syndicate.safety import one_line, printable
from mkdocs_syndicate.timeutil import Clock

_TICK = 0.5  # seconds between countdown refreshes
STATE_STYLES = {"done": "green", "failed": "red", "in_flight": "yellow", "waiting": "yellow", "not_attempted": "magenta",
                "pending": "cyan", "skipped": "dim", "opted_out": "dim"}


class PlainReporter:
    """One log line per event; waits are announced once, then slept through."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log

    def lane_started(self, channel_id: str, total: int) -> None:
        self.log(f"{channel_id}: {total} pending")

    def pair_finished(self, result: PairResult) -> None:
        where = f" {result.remote_url}" if result.remote_url else ""
        self.log(one_line(f"{result.channel}: {result.post_key} {result.state}{where} ({result.detail})"))

    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None:
        if seconds >= 1:
            self.log(f"{channel_id}: waiting {seconds:.0f} s ({reason})")
        await clock.sleep(seconds)


class RichReporter(PlainReporter):
    """A progress line per channel, with a live countdown while the channel waits."""

    def __init__(self, console: Console, log: Callable[[str], None]) -> None:
        super().__init__(log)
        self.progress = Progress(TextColumn("{task.fields[channel]:<12}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                                 console=console, transient=False)
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> "RichReporter":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def lane_started(self, channel_id: str, total: int) -> None:
        self._tasks[channel_id] = self.progress.add_task("", total=total, channel=channel_id, status="")

    def pair_finished(self, result: PairResult) -> None:
        task = self._tasks.get(result.channel)
        if task is not None:
            self.progress.update(task, advance=1, status=one_line(f"{result.post_key}: {result.state}"))

    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None:
        """A bar of its own under the channel's line, filling up as the wait runs down."""
        lane = self._tasks.get(channel_id)
        end = clock.time() + seconds
        bar = self.progress.add_task("", total=max(seconds, 0.001), channel=f"  {channel_id} ⏳",
                                     status="") if seconds >= 1 else None
        while (left := end - clock.time()) > 0:
            if lane is not None:
                self.progress.update(lane, status=f"waiting ({reason})")
            if bar is not None:
                self.progress.update(bar, completed=seconds - left, status=f"{left:.0f} s left: {reason}")
            self.progress.refresh()
            await clock.sleep(min(_TICK, left))
        if bar is not None:
            self.progress.remove_task(bar)
        if lane is not None:
            self.progress.update(lane, status="")


def summary_table(report: RunReport) -> Table:
    table = Table(title="mkdocs-syndicate", show_lines=False)
    for column in ("post", "channel", "state", "remote / reason"):
        table.add_column(column, overflow="fold")
    # Cells are Text, never markup: post keys and server error messages may hold "[...]".
    for result in sorted(report.results, key=lambda r: (r.post_key, r.channel)):
        table.add_row(Text(one_line(result.post_key)), Text(one_line(result.channel)),
                      Text(result.state, style=STATE_STYLES.get(result.state, "")),
                      Text(one_line(result.remote_url if result.ok and result.remote_url else result.detail)))
    return table


def undone_lines(report: RunReport) -> list[str]:
    lines = []
    for result in report.undone:
        lines.append(one_line(f"({result.post_key}, {result.channel}) {result.state}: {result.detail}"))
    return lines


def plan_lines(plan: Plan, collapse_after: int | None = None) -> list[str]:
    """One line per pending pair and per deferred post. With `collapse_after`, a kind of line
    (sends, resends, verifies, deferred posts) with more lines than that
    shows its first three and one line counting the rest: a big site's plan stays readable, and
    `mkdocs-syndicate plan` lists everything."""
    groups: dict[str, list[str]] = {}
    for channel_id, pairs in plan.lanes.items():
        for pair in pairs:
            verb = "verify then maybe resend" if pair.needs_verify else (
                "resend" if pair.record is not None else "send")
            text = one_line(printable(pair.prepared.description).replace("\n", " ⏎ "))
            length = ""
            if pair.prepared.message is not None and pair.prepared.message.limit:
                length = f" [{pair.prepared.message.length}/{pair.prepared.message.limit}]"
            groups.setdefault(f"would {verb}", []).append(
                f"{channel_id}: would {verb} {one_line(pair.post.key)}{length}: {text}")
    for post in plan.deferred:
        groups.setdefault("deferred to a later run (max_per_run)", []).append(
            f"deferred to a later run (max_per_run): {one_line(post.key)}")
    lines = []
    for kind, members in groups.items():
        if collapse_after is not None and len(members) > collapse_after:
            lines += members[:3]
            lines.append(f"{kind}: … and {len(members) - 3} more (`mkdocs-syndicate plan` lists them all)")
        else:
            lines += members
    for warning in sorted({w for pair in plan.pairs for w in pair.prepared.warnings}):
        lines.append(f"note: {one_line(warning)}")
    return lines


def plain_logger(logger: logging.Logger) -> Callable[[str], None]:
    return logger.info
