"""A pair held by `settle` (issue 53): after a kill before the answer, or repeated 429s, the default
`settle: 600` held the post for 10 minutes and every run in between exited 1 without saying why
or until when. The run's wait names the post and the time of its read; `status` says when each
held pair is read, and what `settle` is."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from conftest import SITE, ListReporter, make_post, mastodon_raw, write_ledger

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.timeutil import from_iso, to_iso


def in_flight(path, at: dt.datetime) -> None:
    when = to_iso(at)
    write_ledger(path, {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, when, created_at=when)})


@pytest.mark.http
def test_a_settle_wait_names_the_post_and_when_it_is_read(tmp_path, sandbox, clock):
    last = dt.datetime.fromtimestamp(clock.now - 60, dt.UTC).replace(microsecond=0)
    in_flight(tmp_path / "ledger.yml", last)
    options = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    reporter = ListReporter()
    send(options, [make_post(1)], reporter, clock=clock)
    (wait,) = [reason for _channel, _seconds, reason in reporter.waits if reason.startswith("settle")]
    assert wait.startswith("settle: blog/post-1/ is read at "), wait
    said = from_iso(wait.removeprefix("settle: blog/post-1/ is read at ").split(": ", 1)[0])
    assert abs((said - (last + dt.timedelta(seconds=600))).total_seconds()) <= 1, wait  # a second's rounding


@pytest.mark.unit
def test_status_says_when_a_held_pair_is_read_and_what_settle_is(tmp_path):
    (tmp_path / "syndicate.yml").write_text(
        "site_url: https://example.com/\nchannels:\n"
        "  masto: {type: mastodon, instance: 'https://m.example', token: tok-12345678, settle: 900}\n"
    )
    last = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(seconds=60)
    in_flight(tmp_path / "ledger.yml", last)
    result = CliRunner().invoke(main, ["status", "-f", str(tmp_path / "syndicate.yml")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    read_at = to_iso(last + dt.timedelta(seconds=900))
    assert f"held: the first run from {read_at} reads the service for it (settle)" in result.output, result.output
    assert "`settle` seconds (default 600) have passed since the last request" in result.output, result.output
