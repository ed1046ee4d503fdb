"""Webmention (issue 52, item 3): endpoint discovery as W3C §3.1.2 has it, private addresses
refused, one sub-record per (post, target) in the ledger, a changed post told again (a link taken
out too, once), against the emulator over real HTTP on 127.0.0.1 (`allow_loopback`, the test
setting)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import SITE, ListReporter, make_post

from mkdocs_syndicate.channels import webmention_discovery as discovery
from mkdocs_syndicate.channels.webmention import external_links
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger import fast
from mkdocs_syndicate.ledger.format import dump, parse
from mkdocs_syndicate.ledger.schema import Mention, PostEntry, Record, State
from mkdocs_syndicate.ledger.store import Ledger

BASE = "https://target.example/notes/a?x=1"


# ---------------------------------------------------------------- discovery (W3C §3.1.2)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("headers", "endpoint"),
    [
        (['<https://e.example/wm>; rel="webmention"'], "https://e.example/wm"),
        (["<wm?q=1>; rel=webmention"], "https://target.example/notes/wm?q=1"),  # relative, query kept
        (
            ['<https://o/>; rel="other", </x>; rel="me webmention"'],
            "https://target.example/x",
        ),  # 2nd link of one header
        (['<https://o/>; rel="other"', '<y>; rel="webmention"'], "https://target.example/notes/y"),  # 2nd header
        (['<https://o/>; title="a, b; rel=webmention"; rel="me"'], None),  # a rel inside a quoted title is no rel
        (['<https://e.example/1>; rel="webmention"', '<https://e.example/2>; rel="webmention"'], "https://e.example/1"),
    ],
)
def test_webmention_endpoint_from_the_link_header(headers, endpoint):
    assert discovery.endpoint_in_link_headers(headers, BASE) == endpoint


@pytest.mark.unit
@pytest.mark.parametrize(
    ("html", "endpoint"),
    [
        ('<link rel="webmention" href="/wm">', "https://target.example/wm"),
        (
            '<a rel="webmention" href="../wm?via=a">x</a><link rel="webmention" href="/l">',
            "https://target.example/wm?via=a",
        ),
        ('<!-- <link rel="webmention" href="/c"> --><a rel="webmention" href="/real">', "https://target.example/real"),
        ('<link rel="webmention" href="">', BASE),  # an empty href: the page itself
        ('<link rel="webmention"><a rel="webmention" href="/ok">', "https://target.example/ok"),  # no href: skipped
        ('<link rel="stylesheet webmention" href="/both">', "https://target.example/both"),
        ('<link rel="me" href="/no">', None),
    ],
)
def test_webmention_endpoint_from_the_html(html, endpoint):
    assert discovery.endpoint_in_html(html, BASE) == endpoint


@pytest.mark.unit
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/wm",
        "http://10.1.2.3/wm",
        "http://192.168.0.7/",
        "http://169.254.169.254/latest/meta-data/",  # a cloud's metadata service
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://100.64.0.1/",  # shared address space
        "http://localhost/",  # a name that resolves to loopback
        "ftp://ftp.example/",
    ],
)
def test_webmention_refuses_private_addresses(url):
    with pytest.raises(discovery.Refused):
        asyncio.run(discovery.check_public(url, allow_loopback=False))


@pytest.mark.unit
def test_webmention_allows_loopback_only_when_the_test_setting_says_so():
    asyncio.run(discovery.check_public("http://127.0.0.1:8080/wm", allow_loopback=True))
    asyncio.run(discovery.check_public("https://93.184.215.14/", allow_loopback=False))  # public: asked
    with pytest.raises(discovery.Refused):  # loopback allowed, private still not
        asyncio.run(discovery.check_public("http://10.0.0.1/", allow_loopback=True))


# ---------------------------------------------------------------- the links of a post


@pytest.mark.unit
def test_webmention_targets_are_the_posts_external_links_once_in_order():
    body = (
        '<p><a href="https://b.example/x#part">b</a> <a href="/blog/other/">own</a> '
        '<a href="https://example.com/blog/">own, absolute</a> <a href="mailto:me@example.org">mail</a> '
        '<a href="https://a.example/?q=1&amp;r=2">a</a> <a href="https://b.example/x">b again</a></p>'
        '\n<aside class="syndicate-links">Also on: <a href="https://mastodon.example/@me/1">Mastodon</a></aside>'
    )
    post = make_post(1, body_html=body)
    assert external_links(post, SITE.url) == ["https://b.example/x", "https://a.example/?q=1&r=2"]


@pytest.mark.unit
def test_webmention_plan_names_the_targets_and_caps_them(tmp_path):
    opts = options(tmp_path, {"type": "webmention", "max_targets": 2})
    (channel,) = channels_of(opts)
    post = make_post(1, body_html="".join(f'<a href="https://t{n}.example/">{n}</a>' for n in range(5)))
    prepared = channel.prepare(post)
    assert prepared.description.splitlines() == [
        "mention 2 link(s) of https://example.com/blog/post-1/ (3 more not told: max_targets)",
        "  https://t0.example/",
        "  https://t1.example/",
    ]
    assert channel.prepare(make_post(1, body_html='<a href="https://t9.example/">x</a>')).sha256 != prepared.sha256


@pytest.mark.unit
def test_webmention_is_at_least_once_and_tells_removals_by_default(tmp_path):
    (channel,) = channels_of(options(tmp_path, {"type": "webmention"}))
    assert channel.settings.delivery == "at_least_once"
    assert (channel.settings.edits, channel.settings.removals) == ("update", "delete")


# ---------------------------------------------------------------- the ledger's sub-records


@pytest.mark.unit
def test_webmention_mentions_round_trip_through_both_readers():
    told = (
        Mention("https://t.example/p?q=1", "https://t.example/wm", 201, "https://t.example/wm/1"),
        Mention("https://u.example/", error="the target names no Webmention endpoint, {a: b}]", unlinked=True),
    )
    posts = {
        "a/": PostEntry(
            "https://x.example/a/", "A", {"wm": Record(State.DONE, 1, "2026-12-01T00:00:00Z", mentions=told)}
        )
    }
    text = dump(posts)
    assert text.startswith("# mkdocs-syndicate ledger") and "version: 2\n" in text
    assert fast.parse_canonical(text) == posts
    assert parse(text, "ledger.yml") == posts


@pytest.mark.unit
def test_webmention_a_bad_mention_is_an_error_naming_the_file_and_line():
    text = (
        "version: 2\nposts:\n  a/:\n    url: https://x.example/a/\n    title: A\n    channels:\n"
        '      wm: {state: done, attempts: 1, at: "2026-12-01T00:00:00Z", mentions: [{target: "https://t/", status: "201"}]}\n...\n'
    )
    with pytest.raises(LedgerError, match=r"ledger\.yml:7: .*mention 1: status must be an HTTP status code"):
        parse(text, "ledger.yml")


# ---------------------------------------------------------------- over HTTP, against the emulator


def options(folder: Path, raw: dict, **extra):
    folder.mkdir(exist_ok=True)
    return parse_options(
        {"wm": raw}, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **extra
    )


def channels_of(opts):
    from mkdocs_syndicate.registry import clients

    return [clients()[settings.type](settings, SITE) for settings in opts.channels]


def run(folder: Path, raw: dict, posts, clock):
    reporter = ListReporter()
    return send(options(folder, raw), posts, reporter, clock=clock), reporter


def linking(n: int, *targets: str, text: str = ""):
    return make_post(n, body_html=f"<p>{text}</p>" + "".join(f'<p><a href="{t}">a page</a></p>' for t in targets))


def raw(**extra) -> dict:
    return {"type": "webmention", "allow_loopback": True, "min_interval": 0, **extra}


def page(sandbox, path: str) -> str:
    return f"{sandbox.url}/webmention/page/{path}"


def requests(sandbox) -> list[dict]:
    return sandbox.snapshot()["webmention"]["requests"]


def record(folder: Path, n: int = 1) -> Record:
    found = Ledger.read(folder / "ledger.yml").record(f"blog/post-{n}/", "wm")
    assert found is not None
    return found


@pytest.mark.http
def test_webmention_each_target_is_discovered_told_and_recorded(tmp_path, sandbox, clock):
    header, html, anchor = page(sandbox, "a"), page(sandbox, "html/b"), page(sandbox, "anchor/c")
    plain, gone, moved = page(sandbox, "plain/d"), page(sandbox, "gone/e"), page(sandbox, "moved/f")
    report, _ = run(tmp_path, raw(), [linking(1, header, html, anchor, plain, gone, moved)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    told = {m.target: m for m in record(tmp_path).mentions}
    assert list(told) == [header, html, anchor, plain, gone, moved]
    endpoint = f"{sandbox.url}/webmention/endpoint"
    # The Link header's, the relative <link>'s with its query string kept, the <a>'s, and the one
    # found after the redirect.
    assert [told[t].endpoint for t in (header, html, anchor, moved)] == [
        endpoint,
        f"{endpoint}?via=html",
        endpoint,
        endpoint,
    ]
    assert all(told[t].status == 202 for t in (header, html, anchor, moved))
    assert [told[t].remote_id for t in (header, html, anchor, moved)] == [
        f"{sandbox.url}/webmention/status/{n}" for n in (1, 2, 3, 4)
    ]
    assert (told[plain].endpoint, told[plain].error) == (None, "the target names no Webmention endpoint")
    assert (told[gone].endpoint, told[gone].error) == (None, "the target answered 410")
    sent = requests(sandbox)
    assert [(r["source"], r["target"]) for r in sent] == [
        ("https://example.com/blog/post-1/", t) for t in (header, html, anchor, moved)
    ]


@pytest.mark.http
def test_webmention_a_201_names_the_status_and_a_refusal_is_kept_with_its_words(tmp_path, sandbox, clock):
    site = tmp_path / "site" / "blog" / "post-1"
    site.mkdir(parents=True)
    linked = page(sandbox, "linked")
    (site / "index.html").write_text(f'<p>See <a href="{linked}">this</a>.</p>')
    sandbox.key_file_root = tmp_path / "site"  # the source, as the receiver reads it
    sandbox.quirks["webmention"] = {"synchronous": True}
    unlinked = page(sandbox, "not-in-the-page")
    report, _ = run(tmp_path, raw(), [linking(1, linked, unlinked)], clock)
    assert [r.state for r in report.results] == ["done"], report.results  # a refusal is an answer
    first, second = record(tmp_path).mentions
    assert (first.status, first.remote_id) == (201, f"{sandbox.url}/webmention/status/1")
    assert second.status == 400 and second.remote_id is None
    assert (
        second.error
        == "400 refused: Source URL did not mention the target (source does not link to the target: mention deleted)"
    )
    assert list(sandbox.snapshot()["webmention"]["mentions"]) == [f"https://example.com/blog/post-1/ {linked}"]


@pytest.mark.http
def test_webmention_an_edit_tells_every_target_again_and_a_removed_link_once(tmp_path, sandbox, clock):
    a, b, c = page(sandbox, "a"), page(sandbox, "b"), page(sandbox, "c")
    run(tmp_path, raw(), [linking(1, a, b)], clock)
    assert [r["target"] for r in requests(sandbox)] == [a, b]
    report, _ = run(tmp_path, raw(), [linking(1, a, c, text="Edited.")], clock)  # b taken out, c added
    assert [r.state for r in report.results] == ["done"], report.results
    assert [r["target"] for r in requests(sandbox)[2:]] == [a, c, b]  # spec §3.2.3: b too, so it drops the mention
    assert [(m.target, m.unlinked) for m in record(tmp_path).mentions] == [(a, False), (c, False), (b, True)]
    run(tmp_path, raw(), [linking(1, a, c, text="Edited again.")], clock)
    assert [r["target"] for r in requests(sandbox)[5:]] == [a, c]  # b was told: forgotten
    assert [m.target for m in record(tmp_path).mentions] == [a, c]
    run(tmp_path, raw(), [linking(1, a, c, text="Edited again.")], clock)  # unchanged: nothing sent
    assert len(requests(sandbox)) == 7


@pytest.mark.http
def test_webmention_private_targets_and_endpoints_are_never_asked(tmp_path, sandbox, clock):
    target = page(sandbox, "a")
    report, _ = run(tmp_path, {"type": "webmention", "min_interval": 0}, [linking(1, target)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    (mention,) = record(tmp_path).mentions
    assert mention.endpoint is None and mention.error is not None
    assert mention.error.startswith("refused: 127.0.0.1 is (or resolves to) 127.0.0.1, a non-public address")
    assert sandbox.requests("webmention") == []  # not even the page was read


@pytest.mark.http
def test_webmention_caps_the_targets_of_a_post(tmp_path, sandbox, clock):
    targets = [page(sandbox, f"t{n}") for n in range(4)]
    run(tmp_path, raw(max_targets=2), [linking(1, *targets)], clock)
    assert [r["target"] for r in requests(sandbox)] == targets[:2]


@pytest.mark.http
def test_webmention_a_large_page_is_not_read_whole_its_link_header_still_counts(sandbox):
    import httpx

    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.net.client import run_client
    from mkdocs_syndicate.timeutil import SystemClock

    async def go() -> discovery.Discovery:
        async with run_client() as client:

            async def sleep(seconds: float, reason: str) -> None:
                await asyncio.sleep(seconds)

            http = PacedHttp(client, min_interval=0, timeout=10, clock=SystemClock(), sleep=sleep)
            return await discovery.discover(http, page(sandbox, "a"), allow_loopback=True, max_bytes=20)

    found = asyncio.run(go())
    assert found.endpoint == f"{sandbox.url}/webmention/endpoint"
    assert [r["method"] for r in sandbox.snapshot()["requests"]] == ["GET", "HEAD"]
    assert httpx  # the client's module, imported by the run


@pytest.mark.http
def test_webmention_an_endpoint_that_fails_leaves_the_pair_to_be_sent_again(tmp_path, sandbox, clock):
    target = page(sandbox, "a")
    sandbox.add_fault({"channel": "webmention", "action": "status", "status": 503, "times": 10})
    report, _ = run(tmp_path, raw(), [linking(1, target)], clock)
    assert report.results[0].state != "done"
    sandbox.clear_faults()
    report, _ = run(tmp_path, raw(), [linking(1, target)], clock)
    assert [r.state for r in report.results] == ["done"], report.results  # at-least-once: sent again, harmless
    assert record(tmp_path).mentions[0].status == 202


@pytest.fixture
def pages():
    from realserver_webmention import Pages

    site = Pages()
    yield site
    site.close()


def page_linking(*targets: str) -> str:
    return "".join(f'<p><a href="{t}">a page</a></p>' for t in targets)


@pytest.mark.http
def test_webmention_a_removed_post_is_told_to_its_targets_again(tmp_path, sandbox, clock, pages):
    """The post's page answers 410: every target it was sent to is told once more, the receiver
    reads the source, finds it gone and drops the mention; the record is `deleted`."""
    from mkdocs_syndicate.config.run import Site

    site = Site(pages.url, "Pages")
    a, b = page(sandbox, "a"), page(sandbox, "b")
    one = make_post(1, url=f"{pages.url}blog/post-1/", body_html=page_linking(a, b))
    two = make_post(2, url=f"{pages.url}blog/post-2/", body_html=page_linking(a))
    for post in (one, two):
        pages.pages[f"/blog/{post.key.removeprefix('blog/')}"] = (200, post.body_html)
    opts = options(tmp_path, raw())
    first = send(replace_site(opts, site), [one, two], ListReporter(), clock=clock)
    assert [r.state for r in first.results] == ["done", "done"], first.results
    sandbox.wait_idle(15)  # the receiver verifies after answering
    shown = sandbox.snapshot()["webmention"]["mentions"]
    assert sorted(shown) == sorted([f"{one.url} {a}", f"{one.url} {b}", f"{two.url} {a}"]), requests(sandbox)
    pages.pages["/blog/post-1/"] = (410, "<p>Gone</p>")
    report = send(replace_site(opts, site), [two], ListReporter(), clock=clock)
    assert [(r.post_key, r.state) for r in report.results] == [("blog/post-1/", "deleted")], report.results
    assert [r["target"] for r in requests(sandbox)[3:]] == [a, b]
    assert [r["source"] for r in requests(sandbox)[3:]] == [one.url, one.url]
    gone = record(tmp_path)
    assert gone.state == State.DELETED and [m.target for m in gone.mentions] == [a, b]
    sandbox.wait_idle(15)  # the receiver verifies after answering
    assert sorted(sandbox.snapshot()["webmention"]["mentions"]) == [f"{two.url} {a}"]  # one's mentions dropped


def replace_site(opts, site):
    from dataclasses import replace

    return replace(opts, site=site)


@pytest.mark.process
def test_webmention_a_run_killed_after_the_receiver_answered_sends_again_harmlessly(tmp_path, sandbox):
    """Killed after the endpoint's answer, before the done write: the record is in_flight, and
    the next run sends the Webmention again (at-least-once, no read first): the receiver gets it
    twice, which is harmless (it verifies the source again), and the record is done."""
    import crashsite
    from sites import post, write_site

    target = page(sandbox, "a")
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"wm": raw()}},
        {"one.md": post("One") + f"\nIt cites [a page]({target}).\n"},
    )
    code, err = crashsite.run(config, SYNDICATE_CRASH_AT="after_response:1")
    assert code != 0, err
    killed = Ledger.read(config.parent / "ledger.yml").record("posts/one/", "wm")
    assert killed is not None and killed.state == State.IN_FLIGHT
    assert [r["target"] for r in requests(sandbox)] == [target]  # it arrived; its answer was never recorded
    code, err = crashsite.run(config)
    assert code == 0, err
    done = Ledger.read(config.parent / "ledger.yml").record("posts/one/", "wm")
    assert done is not None and done.state == State.DONE and done.mentions[0].status == 202
    assert [r["target"] for r in requests(sandbox)] == [target, target]
