"""wait_until_live against a real page server on 127.0.0.1, and the stale-pending alarm of plan
builds (a warning, and a failure under --strict)."""

from __future__ import annotations

import datetime as dt
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from channel_specs import SPECS
from conftest import SITE, ListReporter, make_post, write_ledger
from sites import mkdocs, post, write_site

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http


class Pages:
    """Serves 404 for a page until it has been asked `live_after[path]` times, then 200."""

    def __init__(self) -> None:
        self.live_after: dict[str, int] = {}
        self.asked: dict[str, int] = {}
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                pages.asked[self.path] = pages.asked.get(self.path, 0) + 1
                live = pages.asked[self.path] > pages.live_after.get(self.path, 10**9)
                self.send_response(200 if live else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def pages():
    server = Pages()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def run(tmp_path, sandbox, posts, clock, **options):
    opts = parse_options(
        # Bluesky: its client makes the link facets itself. Mastodon would not link these pages'
        # loopback URLs (127.0.0.1, as a real instance would not), so no read could find the status.
        {"bsky": SPECS["bluesky"].raw(sandbox)},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=True,
        **options,
    )
    reporter = ListReporter()
    return send(opts, posts, reporter, clock=clock), reporter


def test_a_new_post_waits_for_its_page_and_one_that_never_comes_stays_pending(tmp_path, sandbox, clock, pages):
    soon = make_post(1, url=pages.url + "/posts/one/")
    never = make_post(2, url=pages.url + "/posts/two/")
    pages.live_after["/posts/one/"] = 3  # GitHub Pages still publishing: three 404s, then live
    report, reporter = run(tmp_path, sandbox, [soon, never], clock, wait_until_live=60.0, live_interval=10.0)
    states = {r.post_key: (r.state, r.detail) for r in report.results}
    assert states["blog/post-1/"][0] == "done"
    assert states["blog/post-2/"][0] == "not_attempted"
    assert "not live after 60 s" in states["blog/post-2/"][1] and "answered 404" in states["blog/post-2/"][1]
    assert pages.asked["/posts/one/"] == 4
    assert [w for w in reporter.waits if w[0] == "live" and "to go live" in w[2]]
    posted = [r["value"]["text"].splitlines()[0] for r in sandbox.snapshot()["bluesky"]["records"].values()]
    assert posted == ["Post 1"]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "bsky") is None  # still pending
    assert report.undone  # so the build exits non-zero

    pages.live_after["/posts/two/"] = 0
    report, _ = run(tmp_path, sandbox, [soon, never], clock, wait_until_live=60.0)
    assert [(r.post_key, r.state) for r in report.results] == [("blog/post-2/", "done")]


def test_posts_already_announced_somewhere_are_not_polled(tmp_path, sandbox, clock, pages):
    page = make_post(1, url=pages.url + "/posts/one/")
    pages.live_after["/posts/one/"] = 0
    run(tmp_path, sandbox, [page], clock, wait_until_live=60.0)
    asked = dict(pages.asked)
    sandbox.add_fault({"channel": "bluesky", "action": "status", "status": 422})
    # a failed pair of an announced post: no second wait for its page
    run(tmp_path, sandbox, [page, make_post(2, url=pages.url + "/posts/two/")], clock, wait_until_live=5.0)
    assert pages.asked["/posts/one/"] == asked["/posts/one/"]


def test_without_the_setting_nothing_is_polled(tmp_path, sandbox, clock, pages):
    report, _ = run(tmp_path, sandbox, [make_post(1, url=pages.url + "/posts/one/")], clock)
    assert [r.state for r in report.results] == ["done"] and pages.asked == {}


# ------------------------------------------------------------------ stale pending


def stale_site(tmp_path, sandbox, *, ledger=True, **extra):
    """A site whose sending step has run before (its ledger exists), with an old post pending."""
    today = dt.datetime.now(dt.UTC).date().isoformat()
    if ledger:
        from mkdocs_syndicate.ledger.format import dump

        (tmp_path / "ledger.yml").write_text(dump({}))
    return write_site(
        tmp_path,
        {
            "mode": "plan",
            **extra,
            "channels": {
                "masto": {"type": "mastodon", "instance": sandbox.url + "/mastodon", "token": "t"},
                "ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "stale-key-01"},
            },
        },
        {"old.md": post("Old", "2026-11-01"), "new.md": post("New", today)},
    )


@pytest.mark.process
def test_a_plan_build_warns_about_old_posts_still_pending(tmp_path, sandbox):
    result = mkdocs(stale_site(tmp_path, sandbox))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, warnings
    assert "posts/old/ is dated 2026-11-01" in warnings[0] and "still not announced on masto, ping" in warnings[0]
    assert sandbox.requests() == []


@pytest.mark.process
def test_no_alarm_before_the_sending_step_has_ever_run(tmp_path, sandbox):
    """The very first local build, before syndication is set up in CI: no ledger, no alarm."""
    result = mkdocs(stale_site(tmp_path, sandbox, ledger=False), "build", "--strict")
    assert result.returncode == 0 and "still not announced" not in result.stderr, result.stderr


@pytest.mark.process
def test_the_alarm_counts_only_pairs_nothing_has_attempted(tmp_path, sandbox):
    """An IndexNow ping answered 202 minutes ago is waiting for the engine, not for the sending
    step: only the pair nothing has attempted is named."""
    config = stale_site(tmp_path, sandbox)
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("posts/old/", "ping"): Record(
                State.IN_FLIGHT, 1, "2026-12-04T00:00:00Z", error="202 accepted, key validation pending"
            )
        },
    )
    result = mkdocs(config)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "still not announced on masto:" in warnings[0], warnings


@pytest.mark.process
def test_under_strict_the_alarm_fails_the_build(tmp_path, sandbox):
    result = mkdocs(stale_site(tmp_path, sandbox), "build", "--strict")
    assert result.returncode == 1 and "posts/old/" in result.stderr


@pytest.mark.process
def test_the_alarm_can_be_turned_off(tmp_path, sandbox):
    config = stale_site(tmp_path, sandbox, stale_after_hours=0)
    result = mkdocs(config, "build", "--strict")
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------ in the sandbox


@pytest.mark.unit
def test_in_the_sandbox_a_page_is_live_when_the_build_wrote_it(tmp_path):
    from mkdocs_syndicate.net.liveness import in_built_site

    (tmp_path / "blog" / "built").mkdir(parents=True)
    (tmp_path / "blog" / "built" / "index.html").write_text("<html></html>")
    verdicts = in_built_site(
        ["https://example.com/blog/built/", "https://example.com/blog/missing/"], "https://example.com/", str(tmp_path)
    )
    assert verdicts["https://example.com/blog/built/"] is None
    assert "not in the built site" in verdicts["https://example.com/blog/missing/"]


@pytest.mark.process
def test_a_sandbox_build_with_wait_until_live_checks_site_dir_not_the_web(tmp_path):
    """It polled the real site (example.com) for up to 10 minutes."""
    import time

    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    config = write_site(
        tmp_path,
        {
            "sandbox": True,
            "wait_until_live": True,
            "channels": {"masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "x-token-1"}},
        },
        {"new.md": post("New", today)},
    )
    started = time.monotonic()
    result = mkdocs(config, env={"CI": "true"})
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 60
    assert "wait_until_live looks for each new page in the built site_dir" in result.stderr
    assert Ledger.read(tmp_path / "ledger.yml").record("posts/new/", "masto").state == "done"
