"""A removal of many posts on Mastodon keeps within the account's budget of deletes (30 per 30
minutes, in windows aligned to the epoch: Rack::Attack's `throttle_api_delete`): a run deletes
what the window allows, says how many are left and from when a run goes on, and exits as a run
whose work is deferred does; the next run after the window deletes the rest. No run sits out the
window (engine/budgets.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from channel_specs import SPECS
from conftest import make_post
from test_hostile_deletes import SITE, run
from test_hostile_deletes import public as public  # a fixture: the web, where removed pages answer 404

from mkdocs_syndicate.channels.base import WriteLimit
from mkdocs_syndicate.engine.budgets import DeleteBudget
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http

COUNT = 34  # four more than one window allows


KEPT = make_post(1, key="blog/kept/", url=f"{SITE}blog/kept/", title="Kept")  # an empty source proves nothing


def posts() -> list:
    start = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    return [
        make_post(1, key=f"blog/p{n}/", url=f"{SITE}blog/p{n}/", title=f"Post {n}", date=start + dt.timedelta(days=n))
        for n in range(1, COUNT + 1)
    ]


def test_a_removal_of_many_posts_spreads_over_runs_within_mastodons_delete_budget(tmp_path, sandbox, clock, public):
    sandbox.now = clock.time
    clock.now = 1_800_000_000.0 - 600  # ten minutes before a window ends: the budget is a window's
    raw = SPECS["mastodon"].raw(sandbox, removals="delete")
    made, _ = run(tmp_path, raw, clock, [KEPT, *posts()], max_per_run=100)
    assert [r.state for r in made.results] == ["done"] * (COUNT + 1)
    public.live.clear()  # every page but one gone from the web and from the source
    public.live.add("/blog/kept/")
    first, reporter = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    deletes = [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]
    assert len(deletes) == 30, (len(deletes), first.results[:3], first.warnings, first.notes)
    assert [r.state for r in first.results] == ["deleted"] * 30
    line = next(w for w in first.warnings if "delete(s) of removed posts left" in w)
    assert "4 delete(s)" in line and "30 per 30 minutes" in line and "2027-01-15T08:00:00Z" in line, line
    assert not first.undone  # deferred, as max_per_run defers: not a failure of this run
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits  # it did not sit the window out
    clock.now = 1_800_000_000.0 + 1  # the next window
    second, _ = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    assert [r.state for r in second.results] == ["deleted"] * 4
    ledger = Ledger.read(tmp_path / "ledger.yml")
    assert [key for key, entry in ledger.posts.items() if entry.channels["ch"].state != "deleted"] == ["blog/kept/"]


@pytest.mark.unit
def test_the_budget_counts_the_windows_deletes_the_ledger_records():
    from mkdocs_syndicate.ledger.schema import PostEntry, Record, State

    window = 1_800_000_000.0
    at = dt.datetime.fromtimestamp(window + 5, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    before = dt.datetime.fromtimestamp(window - 5, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    posts = {
        f"p{n}/": PostEntry(url=f"{SITE}p{n}/", title="t", channels={"m": Record(State.DELETED, 1, when)})
        for n, when in enumerate([at] * 29 + [before] * 5)
    }
    budget = DeleteBudget(WriteLimit(30, 1800, "Mastodon"), posts, "m", window + 60)
    assert budget.wait(window + 60) == 0.0
    budget.spend()
    assert budget.wait(window + 60) == 1800 - 60
    assert budget.wait(window + 1800) == 0.0  # a new window: whole again
