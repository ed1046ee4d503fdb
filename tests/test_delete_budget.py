"""A removal of many posts on Mastodon keeps within the account's budget of deletes (30 per 30
minutes, in windows aligned to the epoch: Rack::Attack's `throttle_api_delete`): a run deletes
what the window allows, says how many are left and from when a run goes on, and exits as a run
whose work is deferred does; the next run after the window deletes the rest. No run sits out the
window (engine/budgets.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from channel_specs import SPECS
from conftest import ListReporter, make_post
from test_hostile_deletes import SITE, run
from test_hostile_deletes import public as public  # a fixture: the web, where removed pages answer 404

from mkdocs_syndicate.channels.base import WriteLimit
from mkdocs_syndicate.engine.budgets import WindowBudget
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
    assert "4 delete(s)" in line and "30 deletes per 30 minutes" in line and "2027-01-15T08:00:00Z" in line, line
    assert not first.undone  # deferred, as max_per_run defers: not a failure of this run
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits  # it did not sit the window out
    clock.now = 1_800_000_000.0 + 1  # the next window
    second, _ = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    assert [r.state for r in second.results] == ["deleted"] * 4
    ledger = Ledger.read(tmp_path / "ledger.yml")
    assert [key for key, entry in ledger.posts.items() if entry.channels["ch"].state != "deleted"] == ["blog/kept/"]


@pytest.mark.unit
def test_the_budget_counts_the_windows_writes_and_starts_whole_in_the_next():
    window = 1_800_000_000.0
    budget = WindowBudget(WriteLimit(30, 1800, "Mastodon"), [window + 5] * 29 + [window - 5] * 5, window + 60)
    assert budget.wait(window + 60) == 0.0  # 29 in this window: one left
    budget.spend()
    assert budget.wait(window + 60) == 1800 - 60
    assert budget.wait(window + 1800) == 0.0  # a new window: whole again


def run_images(folder, raw: dict, clock, posts: list, image: bytes, reporter: ListReporter | None = None):
    from test_image_channels import SITE_URL

    from mkdocs_syndicate.config.run import Site, parse_options
    from mkdocs_syndicate.engine.syndication import send

    (folder / "site" / "img").mkdir(parents=True, exist_ok=True)
    (folder / "site" / "img" / "cover.png").write_bytes(image)
    site = Site(SITE_URL, "Example", str(folder / "site"))
    options = parse_options(
        {"ch": raw}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, max_per_run=100
    )
    return send(options, posts, reporter or ListReporter(), clock=clock)


def test_a_backlog_of_image_posts_keeps_within_mastodons_upload_budget(tmp_path, sandbox, clock):
    """33 new posts with images: 30 go out with their uploads, 3 wait for a later run (said), and
    the next window's run sends them: no 429 from the instance's media throttle."""
    from test_image_channels import ALT, SITE_URL, png

    sandbox.now = clock.time
    clock.now = 1_800_000_000.0 - 600
    raw = SPECS["mastodon"].raw(sandbox)
    start = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    with_images = [
        make_post(
            1,
            key=f"blog/i{n}/",
            url=f"{SITE_URL}blog/i{n}/",
            title=f"Post {n}",
            date=start + dt.timedelta(days=n),
            image=f"{SITE_URL}img/cover.png",
            image_alt=ALT,
        )
        for n in range(1, 34)
    ]
    first = run_images(tmp_path, raw, clock, with_images, png(120, 80))
    uploads = [r for r in sandbox.requests("mastodon") if r["method"] == "POST" and "/media" in r["path"]]
    assert len(uploads) == 30 and [r.state for r in first.results] == ["done"] * 30, (len(uploads), first.results)
    line = next(w for w in first.warnings if "post(s) with an image to upload left" in w)
    assert line.startswith("ch: 3 post(s)") and "30 uploads per 30 minutes" in line, line
    clock.now = 1_800_000_000.0 + 1
    second = run_images(tmp_path, raw, clock, with_images, png(120, 80))
    assert [r.state for r in second.results] == ["done"] * 3, second.results


# Paragraphs of about 200 characters: on a 300-character Mastodon each is a part of its own, so a
# post of three is a thread of three statuses, and its removal three deletes.
PARAGRAPHS = [
    "The first paragraph sets the scene. " * 5,
    "The second paragraph goes deeper into the matter at hand. " * 3,
    "The third paragraph draws the threads together and ends. " * 3,
]


def threads(count: int) -> list:
    start = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    text = "\n\n".join(p.strip() for p in PARAGRAPHS)
    return [
        make_post(
            1,
            key=f"blog/t{n}/",
            url=f"{SITE}blog/t{n}/",
            title=f"Thread {n}",
            date=start + dt.timedelta(days=n),
            description=text,
        )
        for n in range(1, count + 1)
    ]


def test_a_removed_thread_costs_a_delete_a_part(tmp_path, sandbox, clock, public):
    """12 threads of 3 statuses are 36 deletes: a window takes 10 threads (30 deletes), the run
    says 2 are left and goes on in the next window, never meeting the instance's 429 or sitting
    out the window."""
    sandbox.now = clock.time
    clock.now = 1_800_000_000.0 - 600
    raw = SPECS["mastodon"].raw(sandbox, removals="delete", thread=True, max_characters=300, max_parts=4)
    made, _ = run(tmp_path, raw, clock, [KEPT, *threads(12)], max_per_run=100)
    assert [r.state for r in made.results] == ["done"] * 13, made.results
    ledger = Ledger.read(tmp_path / "ledger.yml")
    assert all(len(ledger.record(f"blog/t{n}/", "ch").parts) == 3 for n in range(1, 13))
    public.live.clear()
    public.live.add("/blog/kept/")
    first, reporter = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    deletes = [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]
    assert len(deletes) == 30 and [r.state for r in first.results] == ["deleted"] * 10, (len(deletes), first.results)
    line = next(w for w in first.warnings if "delete(s) of removed posts left" in w)
    assert "2 delete(s)" in line and "2027-01-15T08:00:00Z" in line, line
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits
    clock.now = 1_800_000_000.0 + 1
    second, _ = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    assert [r.state for r in second.results] == ["deleted"] * 2, second.results


def test_a_429_for_a_delete_leaves_the_rest_for_a_later_run_without_sitting_out_the_window(
    tmp_path, sandbox, clock, public
):
    """Another site on the same account spent most of the window (the ledger cannot know): the
    instance answers the third delete 429, its X-RateLimit-Reset ten minutes away. The run does
    not sit that out (the default max_wait would): it leaves that delete and the rest for a later
    run, says how many and from when, and the next window's run deletes them."""
    sandbox.now = clock.time
    clock.now = 1_800_000_000.0 - 600
    raw = SPECS["mastodon"].raw(sandbox, removals="delete")
    made, _ = run(tmp_path, raw, clock, [KEPT, *posts()[:5]], max_per_run=100)
    assert [r.state for r in made.results] == ["done"] * 6
    window = {"window": int(clock.now // 1800), "count": 28}
    sandbox.emulators["mastodon"].state.setdefault("rate_windows", {})["throttle_api_delete"] = window
    public.live.clear()
    public.live.add("/blog/kept/")
    first, reporter = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    assert [r.state for r in first.results].count("deleted") == 2, first.results
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits
    line = next(w for w in first.warnings if "delete(s) of removed posts left" in w)
    assert line.startswith("ch: 3 delete(s)") and "2027-01-15T08:00:00Z" in line, line
    clock.now = 1_800_000_000.0 + 1
    second, _ = run(tmp_path, raw, clock, [KEPT], max_per_run=100)
    assert [r.state for r in second.results] == ["deleted"] * 3, second.results
    ledger = Ledger.read(tmp_path / "ledger.yml")
    assert [key for key, entry in ledger.posts.items() if entry.channels["ch"].state != "deleted"] == ["blog/kept/"]


def test_a_429_for_an_upload_leaves_the_image_posts_for_a_later_run_and_the_text_posts_go(tmp_path, sandbox, clock):
    """Another client of the account spent the media window: the instance answers the second
    image's upload 429 (X-RateLimit-Reset ten minutes away). Nothing is sat out: that post and the
    other image posts wait for a later run, said with when, the text-only posts go now, and the
    next window's run sends the rest once each."""
    from test_image_channels import ALT, SITE_URL, png

    sandbox.now = clock.time
    clock.now = 1_800_000_000.0 - 600
    sandbox.emulators["mastodon"].state.setdefault("rate_windows", {})["throttle_api_media"] = {
        "window": int(clock.now // 1800),
        "count": 29,
    }
    start = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)

    def one(n: int, image: bool):
        extra = {"image": f"{SITE_URL}img/cover.png", "image_alt": ALT} if image else {}
        url = f"{SITE_URL}blog/m{n}/"
        return make_post(1, key=f"blog/m{n}/", url=url, title=f"Post {n}", date=start + dt.timedelta(days=n), **extra)

    mixed = [one(1, True), one(2, True), one(3, False), one(4, True), one(5, False)]
    raw = SPECS["mastodon"].raw(sandbox)
    reporter = ListReporter()
    first = run_images(tmp_path, raw, clock, mixed, png(120, 80), reporter)
    done = sorted(r.post_key for r in first.results if r.state == "done")
    assert done == ["blog/m1/", "blog/m3/", "blog/m5/"], first.results
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits
    line = next(w for w in first.warnings if "post(s) with an image to upload left" in w)
    assert line.startswith("ch: 2 post(s)") and "2027-01-15T08:00:00Z" in line, line
    clock.now = 1_800_000_000.0 + 1
    second = run_images(tmp_path, raw, clock, mixed, png(120, 80))
    assert sorted(r.post_key for r in second.results if r.state == "done") == ["blog/m2/", "blog/m4/"], second.results
    statuses = sandbox.emulators["mastodon"].state["statuses"]
    assert sorted(len(s.get("media_ids", [])) for s in statuses) == [0, 0, 1, 1, 1], statuses


def test_new_and_edited_statuses_keep_within_mastodons_statuses_family(tmp_path, sandbox, clock):
    """Mastodon counts 300 new or edited statuses per 3 hours per account (RateLimiter's
    `statuses` family; the instance answers the next one 429 until its window ends, up to three
    hours away). The ledger says 298 were made in this window: a post of one status goes, a thread
    of three waits for the next window, said, and goes then."""
    from conftest import write_ledger

    from mkdocs_syndicate.ledger.schema import Record, State
    from mkdocs_syndicate.timeutil import epoch_to_iso

    period = 3 * 3600
    sandbox.now = clock.time
    clock.now = (1_800_000_000.0 // period + 1) * period - 600  # ten minutes before a window ends
    made = {
        (f"blog/old{n}/", "ch"): Record(State.DONE, 1, epoch_to_iso(clock.now - 60), remote_id=str(n))
        for n in range(298)
    }
    write_ledger(tmp_path / "ledger.yml", made)
    raw = SPECS["mastodon"].raw(sandbox, thread=True, max_characters=300, max_parts=4)
    older = dt.datetime(2026, 9, 1, tzinfo=dt.UTC)  # planned first: oldest first
    single = make_post(1, key="blog/single/", url=f"{SITE}blog/single/", title="Single", date=older)
    (thread,) = threads(1)
    first, reporter = run(tmp_path, raw, clock, [single, thread], max_per_run=100)
    assert [(r.post_key, r.state) for r in first.results] == [("blog/single/", "done")], (first.warnings, first.notes)
    line = next(w for w in first.warnings if "post(s) to send or edit left" in w)
    assert line.startswith("ch: 1 post(s)") and "300 statuses per 180 minutes" in line, line
    assert epoch_to_iso(clock.now + 600) in line, line
    assert not [wait for wait in reporter.waits if wait[1] > 60], reporter.waits
    clock.now += 601
    second, _ = run(tmp_path, raw, clock, [single, thread], max_per_run=100)
    assert [(r.post_key, r.state) for r in second.results] == [("blog/t1/", "done")], second.results
    assert len(Ledger.read(tmp_path / "ledger.yml").record("blog/t1/", "ch").parts) == 3
