"""Servers that are broken or hostile, over real HTTP on 127.0.0.1: a pagination link to another
origin, a body that trickles in, a flood, a gzip bomb, answers of the wrong shape, absurd wait
hints, and a bug in one lane while another is mid-request. None may cost a duplicate, a leaked
credential, an unbounded wait, a traceback or a `remote_id: None` in the ledger."""

from __future__ import annotations

import functools
import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
import zlib

import pytest
from conftest import SITE, ListReporter, make_post, mastodon_raw, write_ledger
from rawserver import RawServer, answer
from test_channel_contracts import EVERY_TYPE, SPECS, delivered

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import LaneCrashed, SyndicateError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http

TOKEN = "hostile-test-token-1234"


def run(folder, channels, posts, clock, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options)
    return send(opts, posts, ListReporter(), clock=clock)


def masto(url, **extra):
    return {"masto": {"type": "mastodon", "instance": url, "token": TOKEN, **extra}}


def in_flight_2h_ago(folder, clock):
    import datetime as dt

    from mkdocs_syndicate.timeutil import to_iso

    folder.mkdir(parents=True, exist_ok=True)
    at = to_iso(dt.datetime.fromtimestamp(clock.now - 7200, dt.UTC))
    write_ledger(folder / "ledger.yml", {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, at, created_at=at)})


# ------------------------------------------------------------------ pagination


def test_a_next_page_on_another_origin_is_not_followed_and_gets_no_credential(tmp_path, clock):
    with RawServer(lambda conn, head: conn.sendall(answer(200, b"[]"))) as elsewhere:

        def instance(conn, head):
            line = head.split(b"\r\n", 1)[0]
            if b"verify_credentials" in line:
                conn.sendall(answer(200, b'{"id": "1"}'))
            else:  # one status that is not ours, and a next page on another server
                status = {"id": "9", "created_at": "2099-01-01T00:00:00.000Z", "content": "<p>other</p>"}
                conn.sendall(
                    answer(
                        200,
                        json.dumps([status]).encode(),
                        {"Link": f'<{elsewhere.url}/api/v1/accounts/1/statuses?max_id=9>; rel="next"'},
                    )
                )

        with RawServer(instance) as server:
            in_flight_2h_ago(tmp_path, clock)
            report = run(tmp_path, masto(server.url), [make_post(1)], clock)
        assert elsewhere.seen == []
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)]
    assert "another origin" in report.results[0].detail


# ------------------------------------------------------------------ time and size


def trickle(conn, head):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(600):
        conn.sendall(b" ")
        time.sleep(0.1)


def test_a_trickling_server_is_cut_at_the_timeout_in_total(tmp_path, clock):
    with RawServer(trickle) as server:
        started = time.monotonic()
        report = run(tmp_path, masto(server.url, timeout=1), [make_post(1)], clock, max_wait=0)
        took = time.monotonic() - started
    assert took < 4, f"a 1 s timeout took {took:.1f} s"  # one POST and one read, each cut at 1 s
    assert report.results[0].state == "in_flight"  # the post may exist: never resent blind
    assert "ReadTimeout" in report.results[0].detail


def test_wait_until_live_polls_are_bounded_in_total(tmp_path, sandbox, clock):
    with RawServer(trickle) as pages:
        post = make_post(1, url=pages.url + "/posts/one/")
        started = time.monotonic()
        opts = parse_options(
            {"masto": mastodon_raw(sandbox)},
            ledger_path=tmp_path / "ledger.yml",
            site=SITE,
            sandbox=False,
            sending=True,
            wait_until_live=1.0,
            live_interval=0.5,
        )
        report = send(opts, [post], ListReporter(), clock=clock)
        took = time.monotonic() - started
    assert report.results[0].state == "not_attempted"
    assert took < 8, took  # three polls of at most 1.5 s each (the trickle lasts a minute)


def test_wait_until_live_is_a_deadline_not_a_count_of_polls(tmp_path, sandbox):
    """`wait_until_live: 5` took 31 s: each poll could take 30 s whatever was left. Real clock."""
    with RawServer(trickle) as pages:
        post = make_post(1, url=pages.url + "/posts/one/")
        started = time.monotonic()
        opts = parse_options(
            {"masto": mastodon_raw(sandbox)},
            ledger_path=tmp_path / "ledger.yml",
            site=SITE,
            sandbox=False,
            sending=True,
            wait_until_live=2.0,
            live_interval=10.0,
        )
        report = send(opts, [post], ListReporter())
        took = time.monotonic() - started
    assert report.results[0].state == "not_attempted"
    assert took < 4.5, f"wait_until_live: 2 took {took:.1f} s"  # 2 s, and the run's own setup


CHILD = textwrap.dedent("""
    import asyncio, sys, httpx
    from mkdocs_syndicate.net.bounded import bounded_request

    async def main():
        async with httpx.AsyncClient() as client:
            try:
                await bounded_request(client, "GET", sys.argv[1], total=60)
                print("read it all")
            except httpx.HTTPError as exc:
                print(type(exc).__name__)
    asyncio.run(main())
    print(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
""")


def flood(conn, head):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n")
    block = b"a" * 1_000_000
    for _ in range(200):
        conn.sendall(block)


# Compressed once, before the server starts: compressing 200 MB inside the handler took longer
# than the client's read timeout on a loaded machine, so the test saw a ReadTimeout, not the bomb.
@functools.cache
def compressed(encoding: str) -> bytes:
    zeros = b"\0" * 200_000_000
    return gzip.compress(zeros, compresslevel=9) if encoding == "gzip" else zlib.compress(zeros, 9)


def bomb(conn, head):
    conn.sendall(answer(200, compressed("gzip"), {"Content-Encoding": "gzip", "Content-Type": "application/json"}))


def deflate_bomb(conn, head):
    conn.sendall(answer(200, compressed("deflate"), {"Content-Encoding": "deflate"}))


@pytest.mark.process
@pytest.mark.parametrize("respond", [flood, bomb, deflate_bomb], ids=["200MB", "gzip-bomb", "deflate-bomb"])
def test_huge_or_bombed_bodies_are_refused_with_bounded_memory(respond):
    if respond is not flood:
        compressed("gzip" if respond is bomb else "deflate")
    with RawServer(respond) as server:
        result = subprocess.run(
            [sys.executable, "-c", CHILD, server.url], capture_output=True, text=True, timeout=120, env={**os.environ}
        )
    outcome, peak_kb = result.stdout.split()
    assert outcome == "ResponseTooLarge", result.stdout + result.stderr
    print(f"peak RSS {int(peak_kb) / 1024:.0f} MB")
    assert int(peak_kb) < 200 * 1024


# ------------------------------------------------------------------ wrong shapes

BAD_BODIES = [
    b"<html>Bad gateway</html>",
    b"[]",
    b'{"id": null}',
    b'{"id": "5", "url": 5}',
    b'{"id": true}',
    b'"just a string"',
    b'{"idstr": ["x"], "uri": {"a": 1}}',
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_a_success_code_with_a_body_of_the_wrong_shape_is_resolved_by_a_read(tmp_path, sandbox, clock, body):
    """The post was created, but the answer cannot be read: ambiguous, read back, done with a real
    id. Every registered type: one that is at least once (IndexNow) reads no body from its success
    and is done, the post delivered, never left for a person."""
    sandbox.now = clock.time
    for channel_type, spec in EVERY_TYPE.items():
        sandbox.add_fault(  # no status: the service's own success code, whatever it documents
            {
                "channel": channel_type,
                "action": "status_after",
                "body": body.decode() if not body.startswith((b"{", b"[", b'"')) else json.loads(body),
            }
        )
        report = run(tmp_path / channel_type, {"ch": spec.raw(sandbox)}, [spec.post(1)], clock)
        assert [(r.state, r.needs_review) for r in report.results] == [("done", False)], (channel_type, report.results)
        assert len(delivered(sandbox, spec)) == 1
        if not spec.at_most_once:
            continue
        record = Ledger.read(tmp_path / channel_type / "ledger.yml").record("blog/post-1/", "ch")
        assert isinstance(record.remote_id, str) and record.remote_id not in ("None", "5", "True")
        assert record.remote_url is None or record.remote_url.startswith("http")


@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_a_listing_of_the_wrong_shape_proves_nothing(tmp_path, clock, body):
    def instance(conn, head):
        conn.sendall(answer(200, body))

    with RawServer(instance) as server:
        in_flight_2h_ago(tmp_path, clock)
        report = run(tmp_path, masto(server.url), [make_post(1)], clock)
    assert [(r.state, r.needs_review) for r in report.results] == [("in_flight", True)]
    assert all(not line.startswith("POST") for line in server.seen)


# ------------------------------------------------------------------ wait hints


@pytest.mark.parametrize(
    "hint", ["inf", "1e400", "²", "nan", "-3", "Thu, 01 Jan 1970 00:00:00 GMT", "soon", "99999999999999999999999999"]
)
def test_absurd_wait_hints_fall_back_to_the_default_wait(tmp_path, sandbox, clock, hint):
    sandbox.now = clock.time
    sandbox.add_fault(
        {
            "channel": "mastodon",
            "action": "status",
            "status": 429,
            "body": {"error": "Too many requests"},
            "headers": {"Retry-After": hint, "X-RateLimit-Reset": hint, "RateLimit-Reset": hint},
        }
    )
    reporter = ListReporter()
    opts = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    report = send(opts, [make_post(1)], reporter, clock=clock)
    assert [r.state for r in report.results] == ["done"]
    assert [round(w[1]) for w in reporter.waits if "rate limited" in w[2]] == [60]


# ------------------------------------------------------------------ one lane's bug


def test_a_bug_in_one_lane_lets_the_others_finish_their_request(tmp_path, sandbox, clock, monkeypatch):
    from mkdocs_syndicate.channels.weibo import WeiboChannel

    async def broken(self, http, post, prepared):
        raise RuntimeError("a bug in the weibo channel")

    monkeypatch.setattr(WeiboChannel, "send", broken)
    sandbox.add_fault({"channel": "mastodon", "action": "delay_after", "seconds": 0.5})  # mid-request when weibo fails
    channels = {"masto": mastodon_raw(sandbox), "weibo": SPECS["weibo"].raw(sandbox)}
    opts = parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    with pytest.raises(LaneCrashed, match=r"weibo.*RuntimeError: a bug in the weibo channel"):
        send(opts, [make_post(1), make_post(2)], ListReporter(), clock=clock)
    book = Ledger.read(tmp_path / "ledger.yml")
    assert book.record("blog/post-1/", "masto").state == "done"  # finished and recorded
    assert book.record("blog/post-2/", "masto") is None  # not started after the stop
    assert book.record("blog/post-1/", "weibo").state == "in_flight"  # unknown: the next run reads
    assert isinstance(LaneCrashed("x"), SyndicateError)
