"""On a terminal: a progress line per channel, with a live countdown while a channel waits, and the
summary table at the end (rich). Loaded only when something is sent."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table
from rich.text import Text

from mkdocs_syndicate.engine.results import PairResult, RunReport
from mkdocs_syndicate.output.reporters import LOOKS, PlainReporter, said_of
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.timeutil import Clock

_TICK = 0.5  # seconds between countdown refreshes


class RichReporter(PlainReporter):
    """A progress line per channel, with a live countdown while the channel waits."""

    def __init__(self, console: Console, log: Callable[[str], None]) -> None:
        super().__init__(log)
        self.progress = Progress(
            TextColumn("{task.fields[channel]:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichReporter:
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
        bar = (
            self.progress.add_task("", total=max(seconds, 0.001), channel=f"  {channel_id} ⏳", status="")
            if seconds >= 1
            else None
        )
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
        table.add_row(
            Text(one_line(result.post_key)),
            Text(one_line(result.channel)),
            Text(result.state, style=LOOKS[result.state].style),
            Text(one_line(said_of(result))),
        )
    return table
