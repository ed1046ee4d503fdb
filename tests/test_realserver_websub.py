"""The WebSub channel against Flask-WebSub's hub itself (tests/realserver_websub.py), not only
against our emulator: the ping it sends is one that hub takes (its `hub.topic`), the hub then
fetches the feed from the site and delivers it to a subscriber it verified, and a run killed
around the ping pings again on the next run, which the hub takes as it took the first."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from conftest import FakeClock, ListReporter, make_post
from realserver_child import child_spec, start_child
from realserver_websub import Hub, Party, serve_party, start_hub

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): the hub starts once.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-websub")]

FEED = "feed_rss_created.xml"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    yield from start_hub(tmp_path_factory.mktemp("websub-hub"))


@pytest.fixture
def party(hub, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    yield from serve_party(site, hub.url)


def build(party: Party, urls: list[str]) -> None:
    """The site's feed as a build writes it: the posts, and the hub it names."""
    items = "".join(f"<item><title>{u}</title><link>{u}</link><guid>{u}</guid></item>" for u in urls)
    (party.site_dir / FEED).write_text(
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>'
        f'<title>Site</title><link>{party.url}</link><atom:link rel="hub" href="{party.hub}"/>'
        f'<atom:link rel="self" href="{party.url}{FEED}"/>{items}</channel></rss>'
    )


def delivered_within(party: Party, count: int, seconds: float = 30) -> list[bytes]:
    deadline = time.monotonic() + seconds
    while len(party.deliveries) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return party.deliveries


def records(folder: Path, channel: str = "ws") -> set[State]:
    return {entry.channels[channel].state for entry in Ledger.read(folder / "ledger.yml").posts.values()}


def test_websub_real_hub_fetches_the_pinged_feed_and_delivers_it_to_its_subscriber(hub: Hub, party: Party, tmp_path):
    site = Site(party.url, "Site", str(party.site_dir))
    posts = [make_post(n, url=f"{party.url}blog/post-{n}/") for n in (1, 2)]
    build(party, [p.url for p in posts])
    party.subscribe(f"{party.url}{FEED}")
    options = parse_options(
        {"ws": {"type": "websub", "hub": hub.url, "timeout": 10}},
        ledger_path=tmp_path / "ledger.yml",
        site=site,
        sandbox=False,
        sending=True,
    )
    report = send(options, posts, ListReporter(), clock=FakeClock())
    assert [r.state for r in report.results] == ["done", "done"] and report.warnings == [], report.results
    (body,) = delivered_within(party, 1)
    assert all(p.url.encode() in body for p in posts)
    assert records(tmp_path) == {State.DONE}


@pytest.mark.parametrize(("where", "delivered_before"), [("after_in_flight_write:1", 0), ("before_done_write:1", 1)])
def test_websub_real_hub_killed_around_the_ping_then_rerun_pings_again(
    hub: Hub, party: Party, tmp_path, where, delivered_before
):
    """At least once: killed after the in_flight write (no ping yet) or after the hub took the
    ping (no done yet), the rerun pings; the subscriber gets the feed, a second time in the second
    case, which is what a repeated ping is: harmless."""
    spec = child_spec(tmp_path, party.url, "ws", {"type": "websub", "hub": hub.url})
    written = json.loads(spec.read_text())
    build(party, [p["url"] for p in written["posts"]])
    spec.write_text(json.dumps({**written, "site_dir": str(party.site_dir)}))
    party.subscribe(f"{party.url}{FEED}")
    killed = start_child(spec, SYNDICATE_CRASH_AT=where)
    assert killed.wait(120) == -signal.SIGKILL
    assert len(delivered_within(party, delivered_before, 10)) == delivered_before
    assert records(tmp_path) == {State.IN_FLIGHT}
    rerun = start_child(spec)
    assert rerun.wait(120) == 0
    assert records(tmp_path) == {State.DONE}
    deliveries = delivered_within(party, delivered_before + 1)
    assert len(deliveries) == delivered_before + 1
    assert all(p["url"].encode() in deliveries[-1] for p in written["posts"])
