"""What a run says in a log (CI): one plain line per event, and the list of what is left undone.
The terminal's live display is in progress.py. Only redacted text ever reaches here."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from mkdocs_syndicate.engine.results import PairResult, PairState, RunReport
from mkdocs_syndicate.safety import one_line
from mkdocs_syndicate.timeutil import Clock


class Look(NamedTuple):
    rank: int  # where `status` lists it: what needs a human first
    style: str  # its colour (rich), in `status`, the summary table and the live display


# The one table of how each state of a pair is shown: its order and its colour.
LOOKS: dict[PairState, Look] = {
    PairState.FAILED: Look(0, "red"),
    PairState.IN_FLIGHT: Look(1, "yellow"),
    PairState.PENDING: Look(2, "cyan"),
    PairState.DELETED: Look(3, "dim"),
    PairState.OPTED_OUT: Look(4, "dim"),
    PairState.DONE: Look(5, "green"),
    PairState.SKIPPED: Look(6, "dim"),
    PairState.WAITING: Look(7, "yellow"),  # a run's states, never in `status`
    PairState.NOT_ATTEMPTED: Look(8, "magenta"),
}


def said_of(result: PairResult) -> str:
    """What a line about one pair says of it: its copy, else why. A pair waiting for the service's
    confirmation (IndexNow's 202) says only the answer here: the whole of why, the same for every
    post of the channel, is said once after the summary (output/display.py), not once a pair."""
    if result.copy:
        return result.copy
    if result.state == PairState.WAITING:
        return brief(result.detail) + " (why: after the summary)"
    return result.detail


def brief(detail: str) -> str:
    """A detail's first clause: `202 accepted, key validation pending` of a longer explanation."""
    return detail.split(" (", 1)[0].split("; ", 1)[0]


class PlainReporter:
    """One log line per event; waits are announced once, then slept through."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log

    def lane_started(self, channel_id: str, total: int) -> None:
        self.log(f"{channel_id}: {total} pending")

    def pair_finished(self, result: PairResult) -> None:
        shown = result.copy or result.remote_url  # a copy out, else a URL a result that is not done names
        where = f" {shown}" if shown else ""
        detail = said_of(result) if result.state == PairState.WAITING else result.detail
        self.log(one_line(f"{result.channel}: {result.post_key} {result.state}{where} ({detail})"))

    async def wait(self, channel_id: str, seconds: float, reason: str, clock: Clock) -> None:
        if seconds >= 1:
            self.log(f"{channel_id}: waiting {seconds:.0f} s ({reason})")
        await clock.sleep(seconds)


def summary_lines(report: RunReport) -> list[str]:
    """The summary table as a log says it: a heading, then one line per pair, sorted like the table."""
    results = sorted(report.results, key=lambda r: (r.post_key, r.channel))
    lines = [f"summary: {len(results)} pair(s) (post, channel, state, remote / reason)"]
    for result in results:
        said = said_of(result)
        lines.append(one_line(f"  {result.post_key}  {result.channel}  {result.state}  {said}".rstrip()))
    return lines


def undone_lines(report: RunReport) -> list[str]:
    lines = []
    for result in report.undone:
        lines.append(one_line(f"({result.post_key}, {result.channel}) {result.state}: {result.detail}"))
    return lines
