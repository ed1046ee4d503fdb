"""What a run says in a log (CI): one plain line per event, and the list of what is left undone.
The terminal's live display is in progress.py. Only redacted text ever reaches here."""

from __future__ import annotations

from collections.abc import Callable

from mkdocs_syndicate.engine.results import PairResult, RunReport
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.timeutil import Clock

STATE_STYLES = {
    "done": "green",
    "failed": "red",
    "in_flight": "yellow",
    "waiting": "yellow",
    "not_attempted": "magenta",
    "pending": "cyan",
    "skipped": "dim",
    "deleted": "dim",
    "opted_out": "dim",
}


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


def summary_lines(report: RunReport) -> list[str]:
    """The summary table as a log says it: a heading, then one line per pair, sorted like the table."""
    results = sorted(report.results, key=lambda r: (r.post_key, r.channel))
    lines = [f"summary: {len(results)} pair(s) (post, channel, state, remote / reason)"]
    for result in results:
        said = result.remote_url if result.ok and result.remote_url else result.detail
        lines.append(one_line(f"  {result.post_key}  {result.channel}  {result.state}  {said}".rstrip()))
    return lines


def undone_lines(report: RunReport) -> list[str]:
    lines = []
    for result in report.undone:
        lines.append(one_line(f"({result.post_key}, {result.channel}) {result.state}: {result.detail}"))
    return lines
