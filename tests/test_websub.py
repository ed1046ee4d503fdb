"""What the WebSub channel does (docs/services/websub.md): its settings, the hub a feed names,
the publish ping against the sandbox hub (which fetches the built feed, as a hub does) with its
at-least-once ledger, the hub's own rules (W3C WebSub), and a run killed after its in_flight
write. The shared post-counting suites leave it out (tests/channel_specs.py, NOT_POST_COUNTED):
these tests hold it to its delivery instead."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import httpx
import pytest
from conftest import ListReporter, make_post

from mkdocs_syndicate.channels.base import Health
from mkdocs_syndicate.channels.websub_feeds import declared_hubs, feed_urls, link_header_hubs, missing_hubs
from mkdocs_syndicate.config.channels import Site, parse_channels
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import clients

HUB = "https://hub.example.com/"


def websub(**values):
    (parsed,) = parse_channels({"ws": {"type": "websub", "hub": HUB, **values}}, clients())
    return parsed


def rss(hub: str | None, *urls: str) -> str:
    link = f'<atom:link rel="hub" href="{hub}"/>' if hub else ""
    items = "".join(f"<item><title>{u}</title><link>{u}</link></item>" for u in urls)
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>'
        f"<title>Example</title><link>https://example.com/</link>{link}{items}</channel></rss>"
    )


# ------------------------------------------------------------------ settings and feeds


@pytest.mark.unit
def test_websub_hub_is_one_url_or_a_list_and_feeds_are_urls_or_site_paths():
    assert websub().options["hub"] == (HUB,)  # as given: a hub's endpoint may need its slash
    both = websub(hub=[HUB, "http://127.0.0.1:8080/hub"], feeds=["feed_rss_created.xml", "https://example.com/a.json"])
    assert both.options["hub"] == (HUB, "http://127.0.0.1:8080/hub")
    site = Site("https://example.com/", "Example")
    assert feed_urls(site, both.options["feeds"]) == [
        "https://example.com/feed_rss_created.xml",
        "https://example.com/a.json",
    ]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("values", "setting", "said"),
    [
        ({"hub": "http://hub.example.com/"}, "channels.ws.hub", "http:// on a non-loopback host"),
        ({"hub": []}, "channels.ws.hub", "one text or a list"),
        ({"feeds": ["../outside.xml"]}, "channels.ws.feeds", "not a path in the site"),
        ({"feeds": ["ftp://example.com/feed.xml"]}, "channels.ws.feeds", "not an http(s) URL"),
    ],
)
def test_websub_a_wrong_setting_is_a_config_error_naming_it(values, setting, said):
    with pytest.raises(ConfigError) as caught:
        websub(**values)
    assert setting in str(caught.value) and said in str(caught.value)


@pytest.mark.unit
def test_websub_default_feeds_are_the_feed_files_the_built_site_has(tmp_path):
    (tmp_path / "feed_rss_created.xml").write_text(rss(HUB))
    (tmp_path / "feed_json_created.json").write_text("{}")
    site = Site("https://example.com/blog/", "Example", str(tmp_path))
    assert feed_urls(site, None) == [
        "https://example.com/blog/feed_rss_created.xml",
        "https://example.com/blog/feed_json_created.json",
    ]
    assert feed_urls(Site("https://example.com/", "Example"), None) == []  # no build: nothing guessed


@pytest.mark.unit
def test_websub_the_hub_a_feed_names_in_rss_atom_json_feed_or_a_link_header():
    atom = f'<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title><link rel="hub" href="{HUB}"/></feed>'
    json_feed = json.dumps({"version": "https://jsonfeed.org/version/1.1", "hubs": [{"type": "WebSub", "url": HUB}]})
    for body in (rss(HUB), atom, json_feed):
        assert declared_hubs(body.encode()) == {HUB.rstrip("/")}, body
    assert declared_hubs(rss(None).encode()) == set()
    assert link_header_hubs(f'<{HUB}>; rel="hub", <https://example.com/feed.xml>; rel="self"') == {HUB.rstrip("/")}
    said = missing_hubs("https://example.com/feed.xml", set(), [HUB])
    assert said and HUB in said and 'rel="hub"' in said
    assert missing_hubs("https://example.com/feed.xml", {HUB.rstrip("/")}, [HUB]) is None
    # A rehearsal pings the sandbox's hub for a public site's feed, which names the real hub.
    sandboxed = ["http://127.0.0.1:8765/websub"]
    assert missing_hubs("https://example.com/feed.xml", {HUB.rstrip("/")}, sandboxed) is None
    assert "does not name the hub" in (missing_hubs("https://example.com/feed.xml", set(), sandboxed) or "")
    assert "does not name the hub" in (missing_hubs("http://127.0.0.1:9/feed.xml", {HUB.rstrip("/")}, sandboxed) or "")


@pytest.mark.unit
def test_websub_a_built_feed_that_names_no_hub_is_a_note_of_the_plan(tmp_path):
    (tmp_path / "feed_rss_created.xml").write_text(rss(None, "https://example.com/blog/post-1/"))
    channel = clients()["websub"](websub(), Site("https://example.com/", "Example", str(tmp_path)))
    prepared = channel.prepare(make_post(1))
    (note,) = prepared.warnings
    assert "feed_rss_created.xml does not name the hub" in note
    assert prepared.description == f"ping {HUB} for https://example.com/feed_rss_created.xml"
    (tmp_path / "feed_rss_created.xml").write_text(rss(HUB, "https://example.com/blog/post-1/"))
    assert channel.prepare(make_post(1)).warnings == ()


# ------------------------------------------------------------------ against the sandbox's hub


def built_site(folder: Path, hub: str | None, posts) -> Site:
    site = folder / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "feed_rss_created.xml").write_text(rss(hub, *(p.url for p in posts)))
    return Site("https://example.com/", "Example", str(site))


def run(folder: Path, sandbox, site: Site, posts, clock, **extra):
    sandbox.key_file_root = Path(site.site_dir)  # where the hub fetches https://example.com/… from
    channel = {"type": "websub", "hub": f"{sandbox.url}/websub", "min_interval": 0, "timeout": 5, **extra}
    options = parse_options(
        {"ws": channel}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, max_wait=0
    )
    report = send(options, posts, ListReporter(), clock=clock)
    sandbox.wait_idle(15)  # the hub fetches the feed after answering
    return report


def records(folder: Path) -> dict[str, Record]:
    ledger = Ledger.read(folder / "ledger.yml")
    return {key: entry.channels["ws"] for key, entry in ledger.posts.items()}


def fetched(sandbox) -> list[list[str]]:
    """Each publish the hub took, as the post links it found when it fetched the feed."""
    return [
        item["text"].splitlines() for item in sandbox.emulators["websub"].received(sandbox.snapshot()["websub"], "")
    ]


@pytest.mark.http
def test_websub_one_round_of_pings_tells_the_hub_and_it_finds_every_post_in_the_feed(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    posts = [make_post(1), make_post(2)]
    site = built_site(tmp_path, f"{sandbox.url}/websub", posts)
    report = run(tmp_path, sandbox, site, posts, clock)
    assert [r.state for r in report.results] == ["done", "done"] and report.warnings == []
    assert fetched(sandbox) == [[p.url for p in posts]]
    (ping,) = sandbox.snapshot()["websub"]["pings"]
    assert (
        ping["topics"] == ["https://example.com/feed_rss_created.xml"]
        and ping["fetched"][ping["topics"][0]]["names_hub"]
    )
    assert {r.state for r in records(tmp_path).values()} == {State.DONE}
    again = run(tmp_path, sandbox, site, posts, clock)
    assert again.results == [] and len(fetched(sandbox)) == 1  # nothing changed: no ping


@pytest.mark.http
def test_websub_a_feed_without_the_hub_is_pinged_and_said(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    posts = [make_post(1)]
    report = run(tmp_path, sandbox, built_site(tmp_path, None, posts), posts, clock)
    assert [r.state for r in report.results] == ["done"]
    assert any("does not name the hub" in w for w in report.warnings), report.warnings


@pytest.mark.http
def test_websub_an_unanswered_ping_stays_in_flight_and_the_next_run_pings_again(tmp_path, sandbox, clock):
    """At least once: a 503 or a lost answer proves nothing either way; the next run pings again
    (the hub only fetches the feed once more) and is done; never left for a person."""
    sandbox.now = clock.time
    posts = [make_post(1), make_post(2)]
    site = built_site(tmp_path, f"{sandbox.url}/websub", posts)
    sandbox.add_fault({"channel": "websub", "action": "status", "status": 503, "times": 5})
    first = run(tmp_path, sandbox, site, posts, clock)
    assert {r.state for r in first.results} <= {"in_flight", "failed"} and not any(
        r.needs_review for r in first.results
    )
    assert {r.state for r in records(tmp_path).values()} <= {State.IN_FLIGHT, State.FAILED}
    sandbox.clear_faults()
    sandbox.add_fault({"channel": "websub", "action": "drop_after"})
    run(tmp_path, sandbox, site, posts, clock)
    final = run(tmp_path, sandbox, site, posts, clock)
    assert {r.state for r in records(tmp_path).values()} == {State.DONE}, (final.results, records(tmp_path))
    assert fetched(sandbox)[-1] == [p.url for p in posts]


@pytest.mark.http
def test_websub_a_hub_that_refuses_the_topic_fails_the_pairs_naming_hub_and_feed(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    posts = [make_post(1)]
    site = built_site(tmp_path, None, posts)
    body = b"Invalid topic: not allowed on this hub"
    sandbox.add_fault({"channel": "websub", "action": "status", "status": 400, "body": body.decode()})
    report = run(tmp_path, sandbox, site, posts, clock)
    (result,) = report.results
    assert result.state == "failed" and "400" in result.detail, result
    assert f"{sandbox.url}/websub" in result.detail and "feed_rss_created.xml" in result.detail


@pytest.mark.http
def test_websub_no_feed_anywhere_fails_naming_the_feeds_setting(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    (tmp_path / "site").mkdir()
    report = run(
        tmp_path, sandbox, Site("https://example.com/", "Example", str(tmp_path / "site")), [make_post(1)], clock
    )
    (result,) = report.results
    assert result.state == "failed" and "channels.ws.feeds" in result.detail
    assert sandbox.requests("websub") == []


@pytest.mark.http
def test_websub_every_hub_is_pinged_for_every_feed(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    posts = [make_post(1)]
    site = built_site(tmp_path, f"{sandbox.url}/websub", posts)
    Path(site.site_dir, "feed.json").write_text('{"items": [{"url": "https://example.com/blog/post-1/"}]}')
    hubs = [f"{sandbox.url}/websub", f"http://localhost:{sandbox.url.rsplit(':', 1)[1]}/websub"]
    run(tmp_path, sandbox, site, posts, clock, hub=hubs, feeds=["feed_rss_created.xml", "feed.json"])
    topics = [p["topics"] for p in sandbox.snapshot()["websub"]["pings"]]
    assert topics == [["https://example.com/feed_rss_created.xml"], ["https://example.com/feed.json"]] * 2


@pytest.mark.http
def test_websub_doctor_reads_the_feed_and_fails_until_it_names_the_hub(tmp_path, sandbox, clock):
    posts = [make_post(1)]
    site = built_site(tmp_path, None, posts)
    channel = clients()["websub"](websub(hub=f"{sandbox.url}/websub"), site)

    class NoRequests:  # the built file is read: no request
        async def request(self, method: str, url: str, **kwargs: object) -> httpx.Response:
            raise AssertionError(f"unexpected {method} {url}")

        def now(self) -> float:
            return clock.time()

    check = asyncio.run(channel.check_credentials(NoRequests()))
    assert check.health is Health.FAILING and "does not name the hub" in check.problem
    Path(site.site_dir, "feed_rss_created.xml").write_text(rss(f"{sandbox.url}/websub", posts[0].url))
    assert asyncio.run(channel.check_credentials(NoRequests())).health is Health.OK


# ------------------------------------------------------------------ the hub's own rules


def hub_post(sandbox, **form) -> httpx.Response:
    return httpx.post(f"{sandbox.url}/websub", data=form, timeout=5)


@pytest.mark.http
def test_websub_sandbox_hub_answers_as_the_spec_says(sandbox):
    assert hub_post(sandbox, **{"hub.mode": "publish", "hub.url": "https://example.com/feed.xml"}).status_code == 202
    assert hub_post(sandbox, **{"hub.mode": "publish", "hub.topic": "https://example.com/feed.xml"}).status_code == 202
    for bad in ({"hub.mode": "publish"}, {"hub.mode": "publish", "hub.url": "/feed.xml"}, {"hub.mode": "shout"}):
        answer = hub_post(sandbox, **bad)
        assert answer.status_code == 400 and answer.text, bad
    as_json = httpx.post(f"{sandbox.url}/websub", json={"hub.mode": "publish", "hub.url": "https://e.com/f"}, timeout=5)
    assert as_json.status_code == 400  # a form, not JSON
    assert httpx.get(f"{sandbox.url}/websub", timeout=5).status_code == 405
    sandbox.wait_idle(15)
    assert len(sandbox.snapshot()["websub"]["pings"]) == 2


@pytest.mark.http
def test_websub_sandbox_hub_verifies_a_subscriber_and_sends_it_the_published_feed(tmp_path, sandbox):
    """§5.3 and §7: a subscriber echoes the challenge, then gets the feed's body with a Link
    header naming hub and self once its topic is published."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlsplit

    got: list[tuple[str, bytes, str]] = []

    class Subscriber(BaseHTTPRequestHandler):
        def do_GET(self):
            challenge = parse_qs(urlsplit(self.path).query)["hub.challenge"][0].encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(challenge)))
            self.end_headers()
            self.wfile.write(challenge)

        def do_POST(self):
            got.append((self.path, self.rfile.read(int(self.headers["Content-Length"])), self.headers["Link"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Subscriber) as subscriber:
        threading.Thread(target=subscriber.serve_forever, daemon=True).start()
        callback = f"http://127.0.0.1:{subscriber.server_address[1]}/cb"
        site = built_site(tmp_path, f"{sandbox.url}/websub", [make_post(1)])
        sandbox.key_file_root = Path(site.site_dir)
        topic = "https://example.com/feed_rss_created.xml"
        form = {"hub.mode": "subscribe", "hub.callback": callback, "hub.topic": topic}
        assert hub_post(sandbox, **form).status_code == 202
        sandbox.wait_idle(15)
        assert hub_post(sandbox, **{"hub.mode": "publish", "hub.url": topic}).status_code == 202
        sandbox.wait_idle(15)
        subscriber.shutdown()
    ((path, body, link),) = got
    assert path == "/cb" and b"https://example.com/blog/post-1/" in body and 'rel="hub"' in link and topic in link


# ------------------------------------------------------------------ killed around the ping


@pytest.mark.process
def test_websub_killed_after_its_in_flight_write_pings_again_on_the_next_run(tmp_path, sandbox):
    """In_flight written, then SIGKILL before the ping: the rerun pings (at least once: the
    records are not left for a person) and the hub finds the posts; killed after the hub took
    the ping but before done was written, the rerun pings again, which is harmless."""
    from realserver_child import child_spec, start_child

    for where, pings_before in (("after_in_flight_write:1", 0), ("before_done_write:1", 1)):
        folder = tmp_path / where.split(":")[0]
        spec = child_spec(folder, "https://example.com/", "ws", {"type": "websub", "hub": f"{sandbox.url}/websub"})
        written = json.loads(spec.read_text())
        urls = [p["url"] for p in written["posts"]]
        site = built_site(folder, f"{sandbox.url}/websub", [make_post(1, url=u) for u in urls])
        spec.write_text(json.dumps({**written, "site_dir": site.site_dir}))
        sandbox.key_file_root = Path(site.site_dir)
        before = len(sandbox.snapshot()["websub"]["pings"])
        child = start_child(spec, SYNDICATE_CRASH_AT=where)
        assert child.wait(120) == -signal.SIGKILL, where
        sandbox.wait_idle(15)
        assert len(sandbox.snapshot()["websub"]["pings"]) - before == pings_before, where
        assert {r.state for r in records(folder).values()} == {State.IN_FLIGHT}, where
        rerun = start_child(spec)
        assert rerun.wait(120) == 0, where
        sandbox.wait_idle(15)
        assert {r.state for r in records(folder).values()} == {State.DONE}, where
        assert fetched(sandbox)[-1] == urls, where
