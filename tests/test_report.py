import asyncio
import io

import pytest
from conftest import FakeClock
from rich.console import Console

from mkdocs_syndicate.engine.results import PairResult, PairState, RunReport
from mkdocs_syndicate.output.progress import RichReporter, summary_table
from mkdocs_syndicate.output.reporters import PlainReporter, undone_lines

pytestmark = pytest.mark.unit


def test_rich_countdown_shows_the_reason_and_the_seconds_left():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    clock = FakeClock()
    with RichReporter(console, lambda line: None) as reporter:
        reporter.lane_started("devto", 2)
        reporter.progress.refresh()
        asyncio.run(reporter.wait("devto", 3.0, "pacing", clock))
        reporter.pair_finished(PairResult("blog/a/", "devto", PairState.DONE))
    assert sum(clock.sleeps) == 3.0 and len(clock.sleeps) == 6  # ticks of 0.5 s
    assert "(pacing)" in out.getvalue() and "1/2" in out.getvalue()
    assert "3 s left: pacing" in out.getvalue() and "1 s left: pacing" in out.getvalue()
    assert "devto ⏳" in out.getvalue()  # the wait's own bar
    assert len(reporter.progress.tasks) == 1  # and it is gone once the wait is over


def test_table_cells_are_not_markup():
    report = RunReport(results=[PairResult("blog/[draft]/", "masto", PairState.FAILED, "422 [/] refused [bold]x")])
    out = io.StringIO()
    Console(file=out, width=200).print(summary_table(report))
    assert "blog/[draft]/" in out.getvalue() and "422 [/] refused [bold]x" in out.getvalue()


def test_plain_lines_for_logs():
    lines: list[str] = []
    reporter = PlainReporter(lines.append)
    asyncio.run(reporter.wait("devto", 75, "pacing", FakeClock()))
    reporter.pair_finished(PairResult("blog/a/", "devto", PairState.FAILED, "422 refused"))
    assert lines == ["devto: waiting 75 s (pacing)", "devto: blog/a/ failed (422 refused)"]


def test_summary_and_undone_list():
    report = RunReport(
        results=[
            PairResult("blog/a/", "masto", PairState.DONE, "sent", "https://m/1"),
            PairResult("blog/b/", "masto", PairState.IN_FLIGHT, "needs review: x", needs_review=True),
        ]
    )
    out = io.StringIO()
    Console(file=out, width=200).print(summary_table(report))
    assert "https://m/1" in out.getvalue() and "needs review: x" in out.getvalue()
    assert undone_lines(report) == ["(blog/b/, masto) in_flight: needs review: x"]


def test_every_state_a_pair_line_can_say_has_one_place_and_one_colour():
    """One vocabulary (issue 40): a record's states and the conditions no record holds are one
    enum, and one table gives each its place in `status` and its colour everywhere (there were two
    tables, in two packages, that disagreed on which states they knew)."""
    from mkdocs_syndicate.engine.results import PairState
    from mkdocs_syndicate.ledger.schema import State
    from mkdocs_syndicate.output.reporters import LOOKS

    assert set(LOOKS) == set(PairState)
    assert len({look.rank for look in LOOKS.values()}) == len(LOOKS)  # a total order
    assert {PairState.of(state) for state in State} <= set(PairState)
    assert PairState.of(None) is PairState.PENDING  # no record: one name, everywhere
    assert [s for s in sorted(PairState, key=lambda s: LOOKS[s].rank)][:3] == ["failed", "in_flight", "pending"]


WHY_202 = (
    "202 accepted, key validation pending (the engines fetch https://example.com/sandbox-indexnow-key-0001.txt; "
    "the sandbox's engine reads it from the built site: /tmp/site/sandbox-indexnow-key-0001.txt); sent again "
    "by the next run until the service answers 200 (at most 5 times)"
)


def test_a_channels_wait_for_confirmation_is_explained_once_a_run_and_wrapped():
    """IndexNow's "waiting (202 …)" was printed 7 times in command 1's output (a line a pair as it
    finished, a line a pair in the summary, and once after it), one line 960 characters long."""
    from mkdocs_syndicate.output.display import _warn_of_what_is_left
    from mkdocs_syndicate.output.reporters import summary_lines

    keys = ("blog/a/", "blog/b/", "blog/c/")
    report = RunReport([PairResult(key, "indexnow", PairState.WAITING, WHY_202) for key in keys])
    said: list[str] = []
    reporter = PlainReporter(said.append)
    for result in report.results:
        reporter.pair_finished(result)
    said += summary_lines(report)
    _warn_of_what_is_left(report, said.append)
    text = "\n".join(said)
    assert text.count("the engines fetch") == 1, text
    assert "indexnow: blog/a/ waiting (202 accepted, key validation pending (why: after the summary))" in said
    assert max(len(line) for line in text.splitlines()) <= 100, text
    assert "indexnow: 3 posts not confirmed yet: 202 accepted" in text and "(at most 5 times)" in text
    table = io.StringIO()
    Console(file=table, width=200).print(summary_table(report))
    assert "the engines fetch" not in table.getvalue()
