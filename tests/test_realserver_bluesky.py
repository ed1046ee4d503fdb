"""The Bluesky channel against the reference PDS itself (atproto's own server, run by
@atproto/dev-env), not only against our emulator: what it stores must be what we sent, and a
record left `in_flight` must be found there by a read, never sent twice."""

from __future__ import annotations

import datetime as dt
import json
import re
import signal
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import realserver_child
from conftest import FakeClock, as_in_flight, make_post, write_ledger
from realserver_child import SETTLE, start_child
from realserver_pds import ScaledClock, start_pds

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): the PDS starts once, not once a
# worker; the rate-limited PDS's two tests share another group, so it also starts once.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-pds")]

SITE = Site("https://example.com/", "Example")


@pytest.fixture(scope="module")
def pds():
    yield from start_pds()


def raw(pds, handle: str, **extra) -> dict:
    account = pds.account(handle)
    return {"type": "bluesky", "service": pds.url, "handle": account.handle, "app_password": account.password, **extra}


def run(folder, channel: dict, posts, site: Site = SITE, clock=None, **options):
    from conftest import ListReporter

    folder.mkdir(exist_ok=True)
    parsed = parse_options(
        {"bsky": channel}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, **options
    )
    return send(parsed, posts, ListReporter(), clock=clock or FakeClock())


def records(pds, did: str) -> list[dict]:
    answer = httpx.get(
        f"{pds.url}/xrpc/com.atproto.repo.listRecords",
        params={"repo": did, "collection": "app.bsky.feed.post", "limit": 100},
    )
    answer.raise_for_status()
    return answer.json()["records"]


def test_posts_are_stored_as_sent_text_facets_card_languages_and_time(pds, tmp_path):
    posts = [make_post(n, title=f"Post {n} — café ☕", tags=("Python", "mkdocs")) for n in (1, 2, 3)]
    report = run(tmp_path, raw(pds, "alice.test", language="pt-BR"), posts)
    assert not report.undone
    alice = pds.account("alice.test")
    stored = {card(r): r for r in records(pds, alice.did) if card(r) in {p.url for p in posts}}
    assert sorted(stored) == sorted(p.url for p in posts)
    book = Ledger.read(tmp_path / "ledger.yml")
    for post in posts:
        record, value = book.record(post.key, "bsky"), stored[post.url]["value"]
        assert record.state == "done" and record.remote_id == stored[post.url]["uri"]
        text = value["text"].encode("utf-8")
        assert post.title.encode("utf-8") in text and value["langs"] == ["pt-BR"]
        # Facets are byte ranges into the UTF-8 text: each must cover exactly what it claims.
        for facet in value["facets"]:
            covered = text[facet["index"]["byteStart"] : facet["index"]["byteEnd"]].decode("utf-8")
            feature = facet["features"][0]
            if feature["$type"] == "app.bsky.richtext.facet#link":
                assert covered == feature["uri"] == post.url
            else:
                assert covered == "#" + feature["tag"]
        assert {f["features"][0].get("tag") for f in value["facets"]} >= {"Python", "mkdocs"}
        assert value["embed"]["external"]["title"] == post.title
        # createdAt is stored as sent: the one the ledger recorded before the call.
        assert value["createdAt"] == record.created_at


def test_an_in_flight_record_is_found_by_a_read_and_never_sent_again(pds, tmp_path):
    post = make_post(4)
    bob = pds.account("bob.test")
    first = run(tmp_path, raw(pds, "bob.test"), [post])
    assert not first.undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    # As if the run had been killed after the server committed, before `done` was written.
    write_ledger(
        tmp_path / "ledger.yml",
        {(post.key, "bsky"): as_in_flight(done)},
    )
    again = run(tmp_path, raw(pds, "bob.test"), [post])
    assert not again.undone
    resolved = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    assert resolved.state == "done" and resolved.remote_id == done.remote_id
    assert len(records(pds, bob.did)) == 1  # one record: found, not posted again
    assert dt.datetime.fromisoformat(resolved.created_at.replace("Z", "+00:00"))


def logged_in(entryway: str, handle: str, password: str) -> tuple[str, str, dict[str, str]]:
    """(the PDS's address, the account's DID, the authorization header) after createSession."""
    session = httpx.post(
        f"{entryway}/xrpc/com.atproto.server.createSession", json={"identifier": handle, "password": password}
    ).json()
    # The PDS the DID document names (the reference PDS, with no entryway before it, sends none).
    services = session.get("didDoc", {}).get("service", [])
    pds = next((s["serviceEndpoint"] for s in services if s["id"].endswith("atproto_pds")), entryway)
    return pds, session["did"], {"Authorization": f"Bearer {session['accessJwt']}"}


def put_three_times(entryway: str, handle: str, password: str) -> list[tuple[int, str]]:
    """putRecord under one record key chosen before the call (as the channel does), with
    `swapRecord: null` ("must not exist yet"): the record, the same record again, then another."""
    pds, did, headers = logged_in(entryway, handle, password)
    session = {"did": did}
    first = {"$type": "app.bsky.feed.post", "text": "once", "createdAt": "2026-12-01T08:00:00.000Z"}
    other = {**first, "text": "another text under the same key"}
    answers = []
    # A post's record key must be a TID (its lexicon says so): the last call's is not one.
    for rkey, record in (
        ("3lsyndicate2a", first),
        ("3lsyndicate2a", first),
        ("3lsyndicate2a", other),
        ("not-a-tid", first),
    ):
        answer = httpx.post(
            f"{pds}/xrpc/com.atproto.repo.putRecord",
            headers=headers,
            json={
                "repo": session["did"],
                "collection": "app.bsky.feed.post",
                "rkey": rkey,
                "record": record,
                "swapRecord": None,
            },
        )
        answers.append((answer.status_code, answer.json().get("error", "")))
    return answers


def test_swap_record_semantics_are_the_real_servers_and_the_emulators(pds, sandbox):
    real = put_three_times(pds.url, "alice.test", pds.account("alice.test").password)
    emulated = put_three_times(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password")
    # A repeat of the same record is a no-op; another record under the key is refused.
    assert (
        real[:2] == [(200, ""), (200, "")] and real[2] == (400, "InvalidSwap") and real[3] == (400, "InvalidRequest")
    ), real
    assert emulated == real


# (Only tags the official SDK's models also take are stored: the sandbox fixture judges every
# record with them at the end.)
LANGUAGE_TAGS = (
    "en",
    "EN",
    "En",
    "pt-BR",
    "pt-br",
    "PT-BR",
    "english",
    "deutsch",
    "en_US",
    "e",
    "zh-Hant",
    "de-CH-1996",
    "de-1996-1996",
)


def languages_taken(entryway: str, handle: str, password: str) -> dict[str, int]:
    """createRecord with each `langs` value: the status the server answers."""
    pds, did, headers = logged_in(entryway, handle, password)
    taken = {}
    for tag in LANGUAGE_TAGS:
        record = {
            "$type": "app.bsky.feed.post",
            "text": f"in {tag}",
            "createdAt": "2026-12-01T08:00:00.000Z",
            "langs": [tag],
        }
        taken[tag] = httpx.post(
            f"{pds}/xrpc/com.atproto.repo.createRecord",
            headers=headers,
            json={"repo": did, "collection": "app.bsky.feed.post", "record": record},
        ).status_code
    return taken


def test_language_tags_are_checked_as_the_real_server_checks_them(pds, sandbox):
    """Issue 23 read an older PDS (syntax only: `EN` and `english` taken). The reference PDS now
    refuses both, as it refuses an upper-case primary subtag or a repeated variant; the emulator
    must answer every tag as it does."""
    real = languages_taken(pds.url, "bob.test", pds.account("bob.test").password)
    refused = {tag for tag, status in real.items() if status != 200}
    assert refused == {"EN", "En", "PT-BR", "english", "deutsch", "en_US", "e", "de-1996-1996"}, real
    assert languages_taken(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password") == real


def test_two_sites_on_two_accounts_each_post_under_its_own(pds, tmp_path):
    """Two sites, each with its ledger and its account on one PDS: each site's posts are records
    of its own account only, and a second run of either sends nothing."""
    from dataclasses import replace

    other = Site("https://other.example/", "Other")
    ours = [
        replace(make_post(n), key=f"blog/two-sites-{n}/", url=f"https://example.com/blog/two-sites-{n}/")
        for n in (5, 6)
    ]
    theirs = [replace(make_post(n), key=f"notes/{n}/", url=f"https://other.example/notes/{n}/") for n in (5, 6)]
    before = {h: len(records(pds, pds.account(h).did)) for h in ("alice.test", "bob.test")}
    assert not run(tmp_path / "a", raw(pds, "alice.test"), ours).undone
    assert not run(tmp_path / "b", raw(pds, "bob.test"), theirs, site=other).undone
    for handle, posts in (("alice.test", ours), ("bob.test", theirs)):
        mine = records(pds, pds.account(handle).did)
        assert len(mine) == before[handle] + 2
        cards = {r["value"].get("embed", {}).get("external", {}).get("uri") for r in mine}
        assert {p.url for p in posts} <= cards and not ({p.url for p in (theirs if posts is ours else ours)} & cards)
    assert not run(tmp_path / "a", raw(pds, "alice.test"), ours).undone
    assert len(records(pds, pds.account("alice.test").did)) == before["alice.test"] + 2


def test_two_sites_on_one_account_each_find_only_their_own_post(pds, tmp_path):
    """The same post path on two sites, both announced by one account: two records with different
    keys; a record of the second left in_flight is settled by finding its own post, not the
    first site's, and nothing is posted again."""
    from dataclasses import replace

    other = Site("https://other.example/", "Other")
    here = replace(make_post(7), key="blog/same-path/", url="https://example.com/blog/same-path/")
    there = replace(make_post(7), key="blog/same-path/", url="https://other.example/blog/same-path/")
    alice = pds.account("alice.test")
    before = len(records(pds, alice.did))
    assert not run(tmp_path / "here", raw(pds, "alice.test"), [here]).undone
    assert not run(tmp_path / "there", raw(pds, "alice.test"), [there], site=other).undone
    ours = Ledger.read(tmp_path / "here" / "ledger.yml").record(here.key, "bsky")
    theirs = Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "bsky")
    assert ours.remote_id != theirs.remote_id and len(records(pds, alice.did)) == before + 2
    write_ledger(
        tmp_path / "there" / "ledger.yml",
        {(there.key, "bsky"): as_in_flight(theirs)},
    )
    assert not run(tmp_path / "there", raw(pds, "alice.test"), [there], site=other).undone
    settled = Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "bsky")
    assert settled.state == "done" and settled.remote_id == theirs.remote_id
    assert len(records(pds, alice.did)) == before + 2


# ---------------------------------------------------------------- kills


def child_spec(folder: Path, site_url: str, service: str, account) -> Path:
    """Three posts of a site of their own on the account, for tests/crash_child.py."""
    channel = {"type": "bluesky", "service": service, "handle": account.handle, "app_password": account.password}
    return realserver_child.child_spec(folder, site_url, "bsky", channel)


def card(record: dict) -> str:
    """The address a record's link card points to ("" for a record without one)."""
    return record["value"].get("embed", {}).get("external", {}).get("uri", "")


def ours(pds, did: str, site_url: str) -> list[str]:
    """The link cards of this site's posts on the account: one per record."""
    return sorted(card(r) for r in records(pds, did) if card(r).startswith(site_url))


KILLS = realserver_child.send_kills("com.atproto.repo.putRecord")


@pytest.mark.parametrize("where", realserver_child.chosen(KILLS))
def test_killed_at_each_bluesky_checkpoint_then_rerun_leaves_one_record_per_post(pds, tmp_path, where):
    """SIGKILL during the second post (at a client checkpoint, or from a proxy in front of the
    real PDS around its commit), then a rerun after the settle time: exactly one record per post
    on the real server, and every pair done with its record's uri."""
    from crashlab import STATS
    from realserver_proxy import Kill, RecordingProxy

    how, at, held = KILLS[where]
    alice = pds.account("alice.test")
    site_url = f"https://kill-{abs(hash(where)) % 10**8}.example/"
    with RecordingProxy(pds.url) as proxy:
        spec = child_spec(tmp_path, site_url, proxy.url, alice)
        log = tmp_path / "checkpoints.log"
        env = {"SYNDICATE_CHECKPOINT_LOG": str(log)}
        if how == "checkpoint":
            env["SYNDICATE_CRASH_AT"] = at
        child = start_child(spec, **env)
        if how != "checkpoint":
            proxy.kill = Kill(at, how.removeprefix("proxy-"), pid=child.pid, nth=2)
        output, errors = child.communicate(timeout=120)
        assert child.returncode == -signal.SIGKILL, output + errors
        # Where the kill landed: the last checkpoint the run passed, what the server holds, and
        # the second post's record.
        last = log.read_text().splitlines()[-1].split("\t")[1]
        landed = proxy.kill.landed if proxy.kill else f"at checkpoint {last}"
        print(f"realserver kill [{where}]: landed {landed}; the server holds {len(ours(pds, alice.did, site_url))}")
        STATS[f"realserver kills landing {where}"] += 1
        assert len(ours(pds, alice.did, site_url)) == held
        assert Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "bsky").state == "in_flight"
        if how == "checkpoint":
            assert last == at.split(":")[0]
        rerun = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1))
        output, errors = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, output + errors
    assert ours(pds, alice.did, site_url) == [f"{site_url}blog/{n}/" for n in (1, 2, 3)]
    book = Ledger.read(tmp_path / "ledger.yml")
    uris = {card(r): r["uri"] for r in records(pds, alice.did)}
    for n in (1, 2, 3):
        record = book.record(f"blog/{n}/", "bsky")
        assert record.state == "done" and record.remote_id == uris[f"{site_url}blog/{n}/"]


# ---------------------------------------------------------------- thumbnails


def png(width: int, height: int) -> bytes:
    """A real PNG (a gradient), made with the standard library only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in (x * 255 // width, y * 255 // height, 128))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_a_post_image_is_uploaded_and_the_card_holds_the_stored_png(pds, tmp_path):
    image = png(120, 63)
    (tmp_path / "site" / "img").mkdir(parents=True)
    (tmp_path / "site" / "img" / "card.png").write_bytes(image)
    site = Site("https://thumbs.example/", "Thumbs", str(tmp_path / "site"))
    post = replace(
        make_post(8),
        key="blog/thumb/",
        url="https://thumbs.example/blog/thumb/",
        image="https://thumbs.example/img/card.png",
    )
    bob = pds.account("bob.test")
    assert not run(tmp_path, raw(pds, "bob.test"), [post], site=site).undone
    [stored] = [r for r in records(pds, bob.did) if card(r) == post.url]
    thumb = stored["value"]["embed"]["external"]["thumb"]
    assert thumb["$type"] == "blob" and thumb["mimeType"] == "image/png" and thumb["size"] == len(image)
    blob = httpx.get(f"{pds.url}/xrpc/com.atproto.sync.getBlob", params={"did": bob.did, "cid": thumb["ref"]["$link"]})
    assert blob.status_code == 200 and blob.content == image


THUMB_CASES: dict[str, tuple[Any, str | None]] = {  # what is uploaded, and the type it claims
    "a PNG": ("png", "image/png"),
    "a PNG claiming text/plain": ("png", "text/plain"),
    "plain text claiming image/png": (b"plain text, not an image at all\n", "image/png"),
    "plain text as text/plain": (b"plain text, not an image at all\n", "text/plain"),
    "a PDF claiming image/png": (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "image/png"),
    "a PNG with no Content-Type": ("png", None),
}


def thumbs_taken(entryway: str, handle: str, password: str) -> dict[str, tuple]:
    """uploadBlob of each case, then a post whose card's thumb is the blob: (the upload's status,
    error and stored type; the post's status and error) for each."""
    pds, did, headers = logged_in(entryway, handle, password)
    answers: dict[str, tuple[Any, ...]] = {}
    for name, (data, claimed) in THUMB_CASES.items():
        sent = png(8, 8) if data == "png" else data
        upload = httpx.post(
            f"{pds}/xrpc/com.atproto.repo.uploadBlob",
            content=sent,
            headers={**headers, **({"Content-Type": claimed} if claimed else {})},
        )
        blob = upload.json().get("blob")
        answers[name] = (upload.status_code, upload.json().get("error", ""), (blob or {}).get("mimeType"))
        if blob:
            record = {
                "$type": "app.bsky.feed.post",
                "text": "card",
                "createdAt": "2026-12-01T08:00:00.000Z",
                "embed": {
                    "$type": "app.bsky.embed.external",
                    "external": {"uri": "https://example.com/", "title": "t", "description": "d", "thumb": blob},
                },
            }
            put = httpx.post(
                f"{pds}/xrpc/com.atproto.repo.createRecord",
                headers=headers,
                json={"repo": did, "collection": "app.bsky.feed.post", "record": record},
            )
            answers[name] += (put.status_code, put.json().get("error", ""), put.json().get("message", ""))
    return answers


def test_a_non_image_thumbnail_is_refused_as_the_real_server_refuses_it(pds, sandbox):
    """The PDS types a blob by its bytes when they say what they are (else it keeps the claimed
    type), and refuses a post whose card's thumb is not image/*; the emulator must answer each
    call the same way."""
    real = thumbs_taken(pds.url, "alice.test", pds.account("alice.test").password)
    assert real["a PNG claiming text/plain"][:4] == (200, "", "image/png", 200), real
    assert real["a PDF claiming image/png"][2:5] == ("application/pdf", 400, "InvalidRequest"), real
    assert real["plain text as text/plain"][3] == 400 and real["a PNG with no Content-Type"][0] == 400, real
    # The server does not protect a card from text that claims to be a PNG: the client must sniff
    # (content/images.py), and does.
    assert real["plain text claiming image/png"][2:4] == ("image/png", 200), real
    emulated = thumbs_taken(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password")
    assert emulated == real


# ---------------------------------------------------------------- the PDS's own rate limits

TIME_SCALE = 20  # the limited PDS's clock: its 5-minute login window passes in 15 s


@pytest.fixture(scope="module")
def limited_pds():
    yield from start_pds(rate_limits=True, time_scale=TIME_SCALE)


CREATE, REFRESH = "com.atproto.server.createSession", "com.atproto.server.refreshSession"


@pytest.mark.xdist_group("realserver-pds-limited")
def test_many_runs_in_a_row_log_in_once_and_refresh_after(limited_pds, tmp_path):
    """createSession allows 30 logins in 5 minutes per account: 35 runs in a row (each with a new
    post, the plugin's code path) log in once and then refresh the kept session, and never meet
    the limit. Counted by a proxy in front of the real server."""
    from realserver_proxy import RecordingProxy

    alice = limited_pds.account("alice.test")
    with RecordingProxy(limited_pds.url) as proxy:
        channel = {**raw(limited_pds, "alice.test"), "service": proxy.url}
        for n in range(35):
            # Each run a post of its own: its own source file and text (the same file at a new URL
            # would be a move of the earlier post, edited in place: docs/moves.md).
            post = replace(
                make_post(1 + n % 28),
                key=f"blog/run-{n}/",
                url=f"https://runs.example/blog/run-{n}/",
                title=f"Run {n}",
                description=f"The post of run {n}.",
                source=f"docs/blog/run-{n}.md",
            )
            assert not run(tmp_path, channel, [post], clock=ScaledClock(limited_pds)).undone, n
        assert proxy.count(CREATE) == 1 and proxy.count(REFRESH) == 34
        assert not [call for call in proxy.calls if call[1] == 429]
    assert len(ours(limited_pds, alice.did, "https://runs.example/")) == 35


@pytest.mark.xdist_group("realserver-pds-limited")
def test_a_429_from_the_real_server_is_waited_out_as_its_headers_say(limited_pds, tmp_path):
    """Logins spent until the real server answers 429 (its Retry-After and RateLimit-Reset on its
    clock); then a run (no kept session: it must log in) waits until then, on the same clock, and
    logs in once: a retry before the reset would meet another 429."""
    from realserver_proxy import RecordingProxy

    bob = limited_pds.account("bob.test")
    clock = ScaledClock(limited_pds)
    login = {"identifier": bob.handle, "password": bob.password}
    with RecordingProxy(limited_pds.url) as proxy:
        # Spent at once: 30 logins in the window, then the server refuses. The window is on the
        # server's scaled clock (15 s of ours), and a login is slow on a loaded machine: when the
        # first logins have left the window before the last came, more are let in, so the logins
        # go on until the server refuses one, as its clock says, not ours.
        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in range(10):
                list(pool.map(lambda _: httpx.post(f"{proxy.url}/xrpc/{CREATE}", json=login, timeout=60), range(34)))
                asked, answer = clock.time(), httpx.post(f"{proxy.url}/xrpc/{CREATE}", json=login, timeout=60)
                answered = clock.time()
                if answer.status_code == 429:
                    break
        logged_in = proxy.count(CREATE, 200)
        assert answer.status_code == 429 and logged_in >= 30, proxy.calls
        reset, retry_after = int(answer.headers["RateLimit-Reset"]), int(answer.headers["Retry-After"])
        # The two headers agree on the server's clock: it wrote them at a moment between our asking
        # and its answer (on the scaled clock a busy machine's 0.1 s is 2 s, so that interval, not
        # a fixed tolerance, bounds it), rounded as it rounds them (the reset down to a whole
        # second, Retry-After up: @atproto/xrpc-server's rate-limiter-http.js).
        assert 0 < retry_after <= 300 and asked - 2 <= reset - retry_after <= answered, (asked, answered)
        refused_before = proxy.count(CREATE, 429)
        channel = {**raw(limited_pds, "bob.test"), "service": proxy.url}
        post = replace(make_post(9), key="blog/limited/", url="https://limited.example/blog/limited/")
        report = run(tmp_path, channel, [post], clock=clock, max_wait=600)
        assert not report.undone
        # One 429 met by the run, one wait as long as the server said, then one login.
        assert proxy.count(CREATE, 429) == refused_before + 1 and proxy.count(CREATE, 200) == logged_in + 1, proxy.calls
        # No longer than from our last asking to the reset (the run met its 429 later), give or take
        # Retry-After's rounding up and our copy of the server's scaled clock: a bound on the clock
        # the test measures, not a fixed tolerance that measures how busy the machine was.
        waits = [s for s in clock.sleeps if s > 1]
        assert len(waits) == 1 and reset - 2 <= clock.time() and waits[0] <= reset - asked + 2, clock.sleeps
    assert ours(limited_pds, bob.did, "https://limited.example/") == [post.url]


def test_an_edited_post_is_updated_in_place_at_the_same_record_key(pds, tmp_path):
    """Edits (issue 34): putRecord at the copy's own rkey with swapRecord, accepted by the real
    PDS; the record keeps its key and createdAt and says the new text; a run killed after the
    update, its record left in_flight with op update, is settled by a read with no second write."""
    post = make_post(9, description="A first draft.")
    bob = pds.account("bob.test")
    assert not run(tmp_path, raw(pds, "bob.test"), [post]).undone
    (made,) = [r for r in records(pds, bob.did) if card(r) == post.url]
    corrected = replace(post, description="A corrected summary.")
    report = run(tmp_path, raw(pds, "bob.test"), [corrected])
    assert not report.undone and [r.detail for r in report.results] == ["updated (proved by a read of the copy)"], (
        report.results
    )
    (updated,) = [r for r in records(pds, bob.did) if card(r) == post.url]
    assert updated["uri"] == made["uri"] and updated["cid"] != made["cid"]
    assert updated["value"]["createdAt"] == made["value"]["createdAt"]
    assert updated["value"]["embed"]["external"]["description"] == "A corrected summary."
    record = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    assert record.state == "done" and record.op is None and record.remote_id == made["uri"]
    # Killed after the PDS committed the update: the next run reads, finds it, writes nothing.
    write_ledger(tmp_path / "ledger.yml", {(post.key, "bsky"): replace(record, state=State.IN_FLIGHT, op="update")})
    again = run(tmp_path, raw(pds, "bob.test"), [corrected])
    assert not again.undone and "confirmed by reading the copy" in again.results[0].detail
    (same,) = [r for r in records(pds, bob.did) if card(r) == post.url]
    assert same["cid"] == updated["cid"]


def test_the_credential_check_reports_a_revoked_app_password_and_a_deactivated_account(pds, tmp_path):
    """Issue 38, against the reference PDS: `mkdocs-syndicate doctor`'s Bluesky check (createSession
    with the app password, then getSession) on an app password made and revoked as the app's
    settings do it, and on an account its owner deactivated; the account's own password warned of."""
    from mkdocs_syndicate.channels.base import Health
    from mkdocs_syndicate.engine.doctor import check_channels

    alice = pds.account("alice.test")
    xrpc = f"{pds.url}/xrpc"
    _, _, owner = logged_in(pds.url, alice.handle, alice.password)

    def app_password(name: str) -> str:
        made = httpx.post(f"{xrpc}/com.atproto.server.createAppPassword", json={"name": name}, headers=owner)
        assert made.status_code == 200, made.text
        return made.json()["password"]

    def check(password: str):
        channel = raw(pds, alice.handle, app_password=password, keep_session=False)
        options = parse_options(
            {"bsky": channel},
            ledger_path=tmp_path / "ledger.yml",
            site=SITE,
            sandbox=False,
            sending=True,
            reading_only=True,
        )
        (found,) = check_channels(options)
        assert password not in repr(found)
        return found.check

    revoked = app_password("syndicate-revoked")
    found = check(revoked)
    assert found.health is Health.OK and not found.problem, found
    # The account's own password logs in too; its session's scope (com.atproto.access, where an
    # app password's is com.atproto.appPass) is warned of, not failed.
    own = check(alice.password)
    assert own.health is Health.OK and "not an app password" in own.problem, own
    gone = httpx.post(f"{xrpc}/com.atproto.server.revokeAppPassword", json={"name": "syndicate-revoked"}, headers=owner)
    assert gone.status_code == 200, gone.text
    found = check(revoked)
    assert found.health is Health.FAILING and "AuthenticationRequired" in found.problem, found
    assert "make a new app password" in found.action

    password = app_password("syndicate-deactivated")
    off = httpx.post(f"{xrpc}/com.atproto.server.deactivateAccount", json={}, headers=owner)
    assert off.status_code == 200, off.text
    try:
        found = check(password)
        assert found.health is Health.FAILING and found.problem == "the account is deactivated", found
        assert found.account == f"@{alice.handle}" and "reactivate" in found.action
    finally:
        _, _, again = logged_in(pds.url, alice.handle, alice.password)  # a deactivated account may log in
        on = httpx.post(f"{xrpc}/com.atproto.server.activateAccount", headers=again)
        assert on.status_code == 200, on.text
    assert check(password).health is Health.OK
    assert not (tmp_path / "ledger.yml").exists()


# ---------------------------------------------------------------- deletes (a removed post, issue 34)


@pytest.fixture
def public(monkeypatch):
    """The sites' public pages, asked as the HTTP proxy (the PDS on loopback is not proxied): a
    page of a post the test removed answers 404, the proof a removal needs."""
    from crashlab import PublicSite

    site = PublicSite(set())
    for name, value in site.env.items():
        monkeypatch.setenv(name, value)
    yield site
    site.close()


def test_an_edit_the_pds_is_said_to_have_made_and_did_not_needs_review(pds, tmp_path):
    """putRecord answered 200 with a uri and cid by a proxy that never forwarded it: the read of
    the record at its key (the real PDS's) shows the old text, so the pair needs review (the run
    exits non-zero) and the next run sends nothing for it."""
    from realserver_proxy import Lie, RecordingProxy

    post = make_post(12, url="https://said-yes.example/blog/12/", description="A first draft.")
    with RecordingProxy(pds.url) as proxy:
        channel = {**raw(pds, "bob.test"), "service": proxy.url}
        assert not run(tmp_path, channel, [post]).undone
        made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
        cid = "bafyreih2y3rz6x5y6k3d5vli5mlvqk4zvnfsvpsx3y6v7ryb3nq5r4w5ea"
        proxy.lie = Lie("com.atproto.repo.putRecord", {"uri": made.remote_id, "cid": cid})
        corrected = replace(post, description="A corrected summary.")
        report = run(tmp_path, channel, [corrected])
        (result,) = report.results
        assert report.undone and result.needs_review and "old text" in result.detail, result
        assert proxy.lie.told == 1
        held = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
        assert held.review and held.state != State.DONE and held.remote_id == made.remote_id
        shown = get_record(pds.url, pds.account("bob.test").did, made.remote_id).json()["value"]
        assert shown["embed"]["external"]["description"] == "A first draft."
        again = run(tmp_path, channel, [corrected])
        assert [r.needs_review for r in again.results] == [True] and proxy.lie.told == 1


def get_record(pds_url: str, did: str, uri: str) -> httpx.Response:
    return httpx.get(
        f"{pds_url}/xrpc/com.atproto.repo.getRecord",
        params={"repo": did, "collection": "app.bsky.feed.post", "rkey": uri.rsplit("/", 1)[1]},
    )


def test_a_removed_posts_record_is_deleted_by_the_real_server(pds, tmp_path, public):
    """deleteRecord at the copy's own record key, carried out by the reference PDS: the record
    is gone (getRecord: RecordNotFound), the ledger says deleted, the kept post keeps its record,
    and a rerun asks nothing."""
    site = Site("http://removed-by-run.example/", "Removed")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 2))
    public.live.update({"/blog/post-1/", "/blog/post-2/"})
    bob = pds.account("bob.test")
    channel = raw(pds, "bob.test", removals="delete")
    assert not run(tmp_path, channel, [kept, removed], site=site).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky")
    assert get_record(pds.url, bob.did, made.remote_id).status_code == 200
    public.live.discard("/blog/post-2/")
    report = run(tmp_path, channel, [kept], site=site)
    assert not report.undone and [(r.post_key, r.state) for r in report.results] == [(removed.key, "deleted")]
    gone = get_record(pds.url, bob.did, made.remote_id)
    assert gone.status_code == 400 and gone.json()["error"] == "RecordNotFound", gone.text
    assert Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky").state == "deleted"
    assert ours(pds, bob.did, site.url) == [kept.url]
    assert run(tmp_path, channel, [kept], site=site).results == []


def test_a_delete_the_pds_is_said_to_have_made_and_did_not_is_not_recorded_deleted(pds, tmp_path, public):
    """deleteRecord answered 200 by a proxy that never forwarded it: getRecord (the real PDS's)
    still finds the record, so the pair needs review, never `deleted`; the next run deletes nothing."""
    from realserver_proxy import Lie, RecordingProxy

    site = Site("http://said-deleted.example/", "Said deleted")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 2))
    public.live.update({"/blog/post-1/", "/blog/post-2/"})
    bob = pds.account("bob.test")
    with RecordingProxy(pds.url) as proxy:
        channel = {**raw(pds, "bob.test", removals="delete"), "service": proxy.url}
        assert not run(tmp_path, channel, [kept, removed], site=site).undone
        made = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky")
        public.live.discard("/blog/post-2/")
        proxy.lie = Lie("com.atproto.repo.deleteRecord", {})
        report = run(tmp_path, channel, [kept], site=site)
        (result,) = report.results
        assert report.undone and result.needs_review and result.state != "deleted", result
        assert proxy.lie.told == 1 and get_record(pds.url, bob.did, made.remote_id).status_code == 200
        held = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky")
        assert held.state != State.DELETED and held.review
        again = run(tmp_path, channel, [kept], site=site)
        assert [r.needs_review for r in again.results] == [True] and proxy.lie.told == 1


# (where: a client checkpoint of the delete, or the proxy around the server's deleteRecord;
# whether the real server has deleted the record once the kill has landed)
DELETE_KILLS = {
    "before the in_flight write": ("checkpoint", "before_in_flight_write:1", False),
    "before the call (in_flight written)": ("checkpoint", "after_in_flight_write:1", False),
    "the request never reached the server": ("proxy-before", "com.atproto.repo.deleteRecord", False),
    "the server deleted it, no answer came": ("proxy-after", "com.atproto.repo.deleteRecord", True),
    "the answer came, nothing written yet": ("checkpoint", "after_response:1", True),
    "before deleted is written": ("checkpoint", "before_done_write:1", True),
    "after deleted is written": ("checkpoint", "after_done_write:1", True),
}


@pytest.mark.parametrize("where", realserver_child.chosen(DELETE_KILLS))
def test_killed_at_each_checkpoint_of_a_delete_then_rerun_leaves_the_record_deleted(pds, tmp_path, public, where):
    """Three posts announced; the second removed from the source and the web; the delete run is
    SIGKILLed at a checkpoint (or by a proxy in front of the real PDS around its deleteRecord);
    a rerun after the settle time leaves the record deleted on the real server, the others one
    each, no record made again, and the ledger saying deleted."""
    from crashlab import STATS
    from realserver_proxy import Kill, RecordingProxy

    how, at, deleted = DELETE_KILLS[where]
    alice = pds.account("alice.test")
    site_url = f"http://delete-{abs(hash(where)) % 10**8}.example/"
    public.live.update({f"/blog/{n}/" for n in (1, 2, 3)})
    with RecordingProxy(pds.url) as proxy:
        spec = child_spec(tmp_path, site_url, proxy.url, alice)
        settings = json.loads(spec.read_text())
        settings["channels"]["bsky"]["removals"] = "delete"
        spec.write_text(json.dumps(settings))
        first = start_child(spec, **public.env)
        assert first.wait(timeout=120) == 0, first.communicate()
        assert len(ours(pds, alice.did, site_url)) == 3
        uri = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "bsky").remote_id
        settings["posts"] = [p for p in settings["posts"] if p["key"] != "blog/2/"]
        spec.write_text(json.dumps(settings))
        public.live.discard("/blog/2/")
        log = tmp_path / "checkpoints.log"
        env = {"SYNDICATE_CHECKPOINT_LOG": str(log), **public.env}
        if how == "checkpoint":
            env["SYNDICATE_CRASH_AT"] = at
        child = start_child(spec, **env)
        if how != "checkpoint":
            proxy.kill = Kill(at, how.removeprefix("proxy-"), pid=child.pid)
        output, errors = child.communicate(timeout=120)
        assert child.returncode == -signal.SIGKILL, output + errors
        last = log.read_text().splitlines()[-1].split("\t")[1]
        landed = proxy.kill.landed if proxy.kill else f"at checkpoint {last}"
        held = ours(pds, alice.did, site_url)
        print(f"realserver delete kill [{where}]: landed {landed}; the server holds {len(held)}")
        STATS[f"realserver delete kills landing {where}"] += 1
        if how == "checkpoint":
            assert last == at.split(":")[0]
        assert (f"{site_url}blog/2/" not in held) == deleted, held
        creates = proxy.count("com.atproto.repo.createRecord") + proxy.count("com.atproto.repo.putRecord")
        rerun = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1), **public.env)
        output, errors = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, output + errors
        # No record written since the announcement: the delete never turns into a create.
        assert proxy.count("com.atproto.repo.createRecord") + proxy.count("com.atproto.repo.putRecord") == creates
        assert proxy.count("com.atproto.repo.deleteRecord") <= 2
    assert ours(pds, alice.did, site_url) == [f"{site_url}blog/{n}/" for n in (1, 3)]
    book = Ledger.read(tmp_path / "ledger.yml")
    record = book.record("blog/2/", "bsky")
    assert record.state == "deleted" and record.op is None, record
    assert get_record(pds.url, alice.did, uri).json().get("error") == "RecordNotFound"


def delete_scenario(entryway: str, handle: str, password: str) -> list[tuple[int, str, bool]]:
    """deleteRecord as the channel sends it, against one server: with a swapRecord that is no
    longer the record's CID, on the record itself, on the record once it is gone (the no-op),
    then getRecord of it. Each answer as (status, error name, whether it names a commit)."""
    pds, did, headers = logged_in(entryway, handle, password)
    rkey = "3lsyndicatedl"
    record = {"$type": "app.bsky.feed.post", "text": "to be removed", "createdAt": "2026-12-01T08:00:00.000Z"}
    target = {"repo": did, "collection": "app.bsky.feed.post", "rkey": rkey}
    first = httpx.post(f"{pds}/xrpc/com.atproto.repo.putRecord", headers=headers, json={**target, "record": record})
    edited = {**record, "text": "edited since"}
    second = httpx.post(
        f"{pds}/xrpc/com.atproto.repo.putRecord",
        headers=headers,
        json={**target, "record": edited, "swapRecord": first.json()["cid"]},
    )
    assert first.status_code == second.status_code == 200, (first.text, second.text)
    answers = []
    for swap in (first.json()["cid"], None, None):
        body = {**target, **({"swapRecord": swap} if swap else {})}
        answer = httpx.post(f"{pds}/xrpc/com.atproto.repo.deleteRecord", headers=headers, json=body)
        said = answer.json() if answer.content.strip() else {}
        answers.append((answer.status_code, said.get("error", ""), "commit" in said))
    read = httpx.get(f"{pds}/xrpc/com.atproto.repo.getRecord", params=target)
    answers.append((read.status_code, read.json().get("error", ""), False))
    return answers


def test_delete_record_answers_are_the_real_servers_and_the_emulators(pds, sandbox):
    """The emulator's deleteRecord answers as the reference PDS does: a stale swapRecord is
    InvalidSwap, the record itself is deleted with a commit, a record already gone is the no-op
    200 without one, and getRecord then says RecordNotFound (what read_presence relies on)."""
    real = delete_scenario(pds.url, "alice.test", pds.account("alice.test").password)
    emulated = delete_scenario(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password")
    assert real == [(400, "InvalidSwap", False), (200, "", True), (200, "", False), (400, "RecordNotFound", False)], (
        real
    )
    assert emulated == real


# ---------------------------------------------------------------- standard.site (issue 37), on the same PDS


def standard_raw(pds, handle: str, **extra) -> dict:
    account = pds.account(handle)
    return {"type": "standard", "service": pds.url, "handle": account.handle, "app_password": account.password, **extra}


def run_standard(folder, channel: dict, posts, site: Site = SITE, **options):
    from conftest import ListReporter

    folder.mkdir(exist_ok=True)
    parsed = parse_options(
        {"std": channel}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, **options
    )
    return send(parsed, posts, ListReporter(), clock=FakeClock())


def listed(pds, did: str, collection: str) -> list[dict]:
    answer = httpx.get(
        f"{pds.url}/xrpc/com.atproto.repo.listRecords", params={"repo": did, "collection": collection, "limit": 100}
    )
    answer.raise_for_status()
    return answer.json()["records"]


def documents(pds, did: str, site: str) -> dict[str, dict]:
    """This site's documents on the account, by path (a list each: two would be a duplicate)."""
    found: dict[str, list] = {}
    publications = {r["uri"] for r in listed(pds, did, "site.standard.publication") if r["value"]["url"] == site}
    for r in listed(pds, did, "site.standard.document"):
        if r["value"]["site"] in publications | {site}:
            found.setdefault(r["value"]["path"], []).append(r)
    assert all(len(v) == 1 for v in found.values()), found
    return {path: v[0] for path, v in found.items()}


def test_standard_documents_and_the_publication_are_stored_as_sent_and_a_rerun_writes_nothing(pds, tmp_path):
    """The reference PDS takes both collections (it has no lexicon for them: stored as sent, with
    `validationStatus: unknown`): one publication for the site, one document per post, with
    the fields the lexicon names; a second run writes nothing."""
    site = Site("https://std-stored.example/blog/", "Stored")
    alice = pds.account("alice.test")
    posts = [
        make_post(1, url="https://std-stored.example/blog/a/", key="a/", tags=("python", "#mkdocs")),
        make_post(2, url="https://std-stored.example/blog/b/", key="b/", body_html="<p>Hello <em>there</em>.</p>"),
    ]
    report = run_standard(tmp_path, standard_raw(pds, "alice.test"), posts, site)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    (publication,) = [
        r
        for r in listed(pds, alice.did, "site.standard.publication")
        if r["value"]["url"] == "https://std-stored.example/blog"
    ]
    assert publication["value"] == {
        "$type": "site.standard.publication",
        "url": "https://std-stored.example/blog",
        "name": "Stored",
    }
    found = documents(pds, alice.did, publication["uri"])
    assert sorted(found) == ["/a/", "/b/"]
    a, b = found["/a/"]["value"], found["/b/"]["value"]
    assert a["site"] == publication["uri"] and a["title"] == "Post 1" and a["description"] == "About 1."
    assert a["publishedAt"] == "2026-11-01T00:00:00.000Z" and a["tags"] == ["python", "mkdocs"]
    assert b["textContent"] == "Hello there." and "textContent" not in a
    book = Ledger.read(tmp_path / "ledger.yml")
    assert book.record("a/", "std").remote_id == found["/a/"]["uri"]
    again = run_standard(tmp_path, standard_raw(pds, "alice.test"), posts, site)
    assert again.results == [] and documents(pds, alice.did, publication["uri"]) == found


def test_standard_repeat_is_a_no_op_and_another_record_at_the_key_is_refused(pds, sandbox):
    """The documents' write, asked directly of the real PDS and of our emulator, with the same
    answers: the same document again at its key (swapRecord null) is a no-op answered 200;
    another document there is InvalidSwap; a record whose $type is not the collection, or that
    breaks the lexicon, is refused in the PDS's words."""

    def answers(service: str, handle: str, password: str) -> list[tuple[int, str, str]]:
        pds_url, did, auth = logged_in(service, handle, password)
        with httpx.Client(timeout=30) as client:
            doc = {
                "$type": "site.standard.document",
                "site": "https://x.example",
                "path": "/p/",
                "title": "T",
                "publishedAt": "2026-11-01T00:00:00.000Z",
            }
            body = {"repo": did, "collection": "site.standard.document", "rkey": "3mabcdefghij2", "swapRecord": None}
            seen = []
            untitled = {k: v for k, v in doc.items() if k != "title"}
            for record in (
                doc,
                doc,
                {**doc, "title": "Other"},
                {**doc, "$type": "app.bsky.feed.like"},
                untitled,
                {**doc, "title": "x" * 600},
                {**doc, "publishedAt": "yesterday"},
            ):
                body["rkey"] = "3mabcdefghij2" if record is doc or record.get("title") == "Other" else "3mabcdefghij3"
                answer = client.post(
                    f"{pds_url}/xrpc/com.atproto.repo.putRecord", headers=auth, json={**body, "record": record}
                )
                said = answer.json()
                message = re.sub(r"bafy\w+", "<cid>", said.get("message", ""))  # the PDS hashes DAG-CBOR; we, JSON
                seen.append((answer.status_code, said.get("error") or said.get("validationStatus", ""), message))
            answer = client.post(
                f"{pds_url}/xrpc/com.atproto.repo.putRecord",
                headers=auth,
                json={**body, "rkey": "not-a-tid", "record": doc},
            )
            seen.append((answer.status_code, answer.json().get("error", ""), answer.json().get("message", "")))
            return seen

    alice = pds.account("bob.test")
    real = answers(pds.url, alice.handle, alice.password)
    emulated = answers(sandbox.url + "/standard", "sandbox.bsky.social", "sandbox-bsky-app-password")
    print(f"standard.site writes: real {real}, emulated {emulated}")
    assert real == emulated
    # The PDS knows standard.site's lexicons: it validates the record ("valid"), and refuses one
    # without a title, with a title over 500 graphemes, a publishedAt that is no datetime, or a
    # record key that is not a TID.
    assert real[0] == real[1] == (200, "valid", "") and real[2][:2] == (400, "InvalidSwap")


def test_standard_edit_updates_the_document_in_place_and_a_removal_deletes_it(pds, tmp_path):
    """An edited post: putRecord at the document's own key with swapRecord, the same record key;
    `delete` (removals: delete) is deleteRecord, and a read of the key then proves it gone."""
    import asyncio

    from mkdocs_syndicate.channels.base import Presence
    from mkdocs_syndicate.sandbox.site import make_channels

    site = Site("https://std-edit.example/", "Edits")
    bob = pds.account("bob.test")
    post = make_post(3, url="https://std-edit.example/blog/e/", key="blog/e/")
    assert not run_standard(tmp_path, standard_raw(pds, "bob.test"), [post], site).undone
    made = documents(pds, bob.did, next(iter(_publications(pds, bob.did, "https://std-edit.example"))))["/blog/e/"]
    corrected = replace(post, title="Post 3, corrected")
    report = run_standard(tmp_path, standard_raw(pds, "bob.test"), [corrected], site)
    assert not report.undone and [r.detail for r in report.results] == ["updated (proved by a read of the copy)"], (
        report.results
    )
    updated = documents(pds, bob.did, made["value"]["site"])["/blog/e/"]
    assert updated["uri"] == made["uri"] and updated["value"]["title"] == "Post 3, corrected"
    record = Ledger.read(tmp_path / "ledger.yml").record(post.key, "std")

    parsed = parse_options(
        {"std": standard_raw(pds, "bob.test")}, ledger_path=tmp_path / "l.yml", site=site, sandbox=False, sending=True
    )
    (channel,) = make_channels(parsed)

    async def delete_then_read():
        async with httpx.AsyncClient(timeout=30) as client:
            http = _Http(client)
            outcome = await channel.delete(http, record)
            return outcome, await channel.read_presence(http, record)

    outcome, presence = asyncio.run(delete_then_read())
    assert outcome.kind.value == "done" and presence is Presence.GONE
    assert documents(pds, bob.did, made["value"]["site"]) == {}


def test_standard_adopts_a_document_another_tool_made_and_never_writes_a_second(pds, tmp_path):
    """The user published the post with another tool (a document at a key of its own, `site` the
    site's URL): the first run finds it by site and path and records it done, writing nothing."""
    alice = pds.account("alice.test")
    pds_url, _, auth = logged_in(pds.url, alice.handle, alice.password)
    theirs = {
        "$type": "site.standard.document",
        "site": "https://std-adopt.example",
        "path": "/posts/old/",
        "title": "Old post",
        "publishedAt": "2025-01-01T00:00:00.000Z",
    }
    made = httpx.post(
        f"{pds_url}/xrpc/com.atproto.repo.createRecord",
        headers=auth,
        json={"repo": alice.did, "collection": "site.standard.document", "record": theirs},
    ).json()
    site = Site("https://std-adopt.example/", "Adopt")
    post = make_post(4, url="https://std-adopt.example/posts/old/", key="posts/old/")
    report = run_standard(tmp_path, standard_raw(pds, "alice.test"), [post], site)
    assert [r.state for r in report.results] == ["done"], report.results
    assert Ledger.read(tmp_path / "ledger.yml").record(post.key, "std").remote_id == made["uri"]
    docs = [r for r in listed(pds, alice.did, "site.standard.document") if r["value"]["path"] == "/posts/old/"]
    assert [d["uri"] for d in docs] == [made["uri"]]


def test_standard_documents_point_to_their_bluesky_post_one_run_after_it_is_made(pds, tmp_path):
    """bskyPostRef on the real PDS: a document written before its Bluesky post (here: the Bluesky
    channel added a run later) is updated in place the run after that post is made, with a strong
    reference the PDS itself vouches for (the CID it computed from the post's DAG-CBOR bytes, not
    the emulator's stand-in); a further run writes nothing."""
    from conftest import ListReporter

    site = Site("https://std-ref.example/", "Refs")
    alice = pds.account("alice.test")
    post = make_post(4, url="https://std-ref.example/blog/r/", key="blog/r/")
    std = standard_raw(pds, "alice.test", bluesky="bsky", keep_session=False)

    def both(channels: dict):
        folder = tmp_path / "site"
        folder.mkdir(exist_ok=True)
        parsed = parse_options(channels, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True)
        return send(parsed, [post], ListReporter(), clock=FakeClock())

    assert not both({"std": std}).undone
    publication = next(iter(_publications(pds, alice.did, "https://std-ref.example")))
    assert "bskyPostRef" not in documents(pds, alice.did, publication)["/blog/r/"]["value"]
    with_bluesky = {"std": std, "bsky": raw(pds, "alice.test", keep_session=False)}
    assert [(r.channel, r.state) for r in both(with_bluesky).results] == [("bsky", "done")]
    third = both(with_bluesky)
    assert [(r.channel, r.detail) for r in third.results] == [("std", "updated (proved by a read of the copy)")], (
        third.results
    )
    (bluesky_post,) = [
        r for r in records(pds, alice.did) if (r["value"].get("embed") or {}).get("external", {}).get("uri") == post.url
    ]
    document = documents(pds, alice.did, publication)["/blog/r/"]
    assert document["value"]["bskyPostRef"] == {"uri": bluesky_post["uri"], "cid": bluesky_post["cid"]}
    assert both(with_bluesky).results == []


def _publications(pds, did: str, url: str) -> list[str]:
    return [r["uri"] for r in listed(pds, did, "site.standard.publication") if r["value"]["url"] == url]


class _Http:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def request(self, method: str, url: str, **kwargs):
        return await self.client.request(method, url, **kwargs)

    def now(self) -> float:
        import time

        return time.time()


@pytest.mark.parametrize("where", realserver_child.chosen(KILLS))  # the same places: documents are putRecord
def test_standard_killed_at_each_checkpoint_then_rerun_leaves_one_document_per_post(pds, tmp_path, where):
    """SIGKILL during the second post's document, then a rerun after the settle time: one
    document per post on the real PDS, every pair done with its document's URI."""
    from crashlab import STATS
    from realserver_proxy import Kill, RecordingProxy

    how, at, held = KILLS[where]
    bob = pds.account("bob.test")
    site_url = f"https://std-kill-{abs(hash(where)) % 10**8}.example/"
    with RecordingProxy(pds.url) as proxy:
        spec = child_spec(tmp_path, site_url, proxy.url, bob)
        data = json.loads(spec.read_text())
        data["channels"]["bsky"]["type"] = "standard"
        spec.write_text(json.dumps(data))
        log = tmp_path / "checkpoints.log"
        env = {"SYNDICATE_CHECKPOINT_LOG": str(log)}
        if how == "checkpoint":
            env["SYNDICATE_CRASH_AT"] = at
        child = start_child(spec, **env)
        if how != "checkpoint":
            proxy.kill = Kill(at, how.removeprefix("proxy-"), pid=child.pid, nth=2)
        output, errors = child.communicate(timeout=120)
        assert child.returncode == -signal.SIGKILL, output + errors
        held_now = len(documents(pds, bob.did, _publication_of(pds, bob.did, site_url)))
        last = log.read_text().splitlines()[-1].split("\t")[1]
        landed = proxy.kill.landed if proxy.kill else f"at checkpoint {last}"
        print(f"realserver standard kill [{where}]: landed {landed}; the server holds {held_now}")
        STATS[f"realserver standard.site kills landing {where}"] += 1
        assert held_now == held
        rerun = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1))
        output, errors = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, output + errors
    found = documents(pds, bob.did, _publication_of(pds, bob.did, site_url))
    assert sorted(found) == ["/blog/1/", "/blog/2/", "/blog/3/"]
    book = Ledger.read(tmp_path / "ledger.yml")
    for n in (1, 2, 3):
        record = book.record(f"blog/{n}/", "bsky")
        assert record.state == "done" and record.remote_id == found[f"/blog/{n}/"]["uri"]


def _publication_of(pds, did: str, site_url: str) -> str:
    """The site's publication URI: the one record, or (before it is written) the site's URL."""
    found = _publications(pds, did, site_url.rstrip("/"))
    assert len(found) <= 1, found
    return found[0] if found else site_url.rstrip("/")


# ---------------------------------------------------------------- threads (issue 35)

LONG = "\n\n".join(
    [
        "A first paragraph that sets out what the long post is about, at some length. " * 3,
        "A second paragraph that goes into the details the first one only promised. " * 3,
        "A third paragraph that ties it all together and closes the thread. " * 2,
    ]
)


def by_key(pds, did: str) -> dict[str, dict]:
    return {r["uri"].rsplit("/", 1)[-1]: r for r in records(pds, did)}


def test_a_long_post_is_stored_as_a_thread_of_replies_with_the_pds_cids(pds, tmp_path):
    post = make_post(11, description=LONG)
    report = run(tmp_path, raw(pds, "alice.test", thread=True), [post])
    assert not report.undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    assert done.state == "done" and len(done.parts) == 3 and done.remote_id == done.parts[0].remote_id
    stored = by_key(pds, pds.account("alice.test").did)
    first, second, third = (stored[p.remote_id.rsplit("/", 1)[-1]] for p in done.parts)
    # What the ledger says of each part is what the PDS holds: its URI and its CID.
    assert [p.cid for p in done.parts] == [first["cid"], second["cid"], third["cid"]]
    root = {"uri": first["uri"], "cid": first["cid"]}
    assert second["value"]["reply"] == {"root": root, "parent": root}
    assert third["value"]["reply"] == {"root": root, "parent": {"uri": second["uri"], "cid": second["cid"]}}
    assert card(first) == post.url and "embed" not in second["value"]


def test_a_part_whose_answer_was_lost_is_found_by_a_read_and_the_thread_finished(pds, tmp_path):
    """Killed after the PDS stored part 2, before the ledger listed it: the rerun reads part 2 at
    its own key, records it with its CID, and sends only part 3."""
    post = make_post(12, description=LONG)
    assert not run(tmp_path, raw(pds, "bob.test", thread=True), [post]).undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    third = done.parts[2].remote_id.rsplit("/", 1)[-1]
    did = pds.account("bob.test").did
    session = logged_in(pds.url, "bob.test", pds.account("bob.test").password)
    deleted = httpx.post(
        f"{session[0]}/xrpc/com.atproto.repo.deleteRecord",
        headers=session[2],
        json={"repo": did, "collection": "app.bsky.feed.post", "rkey": third},
    )
    assert deleted.status_code == 200
    before = by_key(pds, did)
    stopped = replace(done, state=State.IN_FLIGHT, part=2, parts=done.parts[:1])
    write_ledger(tmp_path / "ledger.yml", {(post.key, "bsky"): stopped})
    again = run(tmp_path, raw(pds, "bob.test", thread=True), [post])
    assert not again.undone
    resolved = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    after = by_key(pds, did)
    assert resolved.state == "done" and [p.remote_id for p in resolved.parts] == [p.remote_id for p in done.parts]
    assert resolved.parts[1].cid == before[done.parts[1].remote_id.rsplit("/", 1)[-1]]["cid"]
    assert set(after) - set(before) == {third}  # only the third part was sent again


def replies_taken(entryway: str, handle: str, password: str) -> list[tuple[int, str]]:
    """putRecord of replies: well formed (to a record that exists, and to one that does not),
    then each way a reply ref can be malformed: the status and the message."""
    pds, did, headers = logged_in(entryway, handle, password)
    base = {"$type": "app.bsky.feed.post", "text": "part", "createdAt": "2026-12-01T08:00:00.000Z"}

    def put(rkey: str, record: dict) -> httpx.Response:
        return httpx.post(
            f"{pds}/xrpc/com.atproto.repo.putRecord",
            headers=headers,
            json={"repo": did, "collection": "app.bsky.feed.post", "rkey": rkey, "record": record},
        )

    root = put("3lthreadroot2", base).json()
    ref = {"uri": root["uri"], "cid": root["cid"]}
    nowhere = {"uri": f"at://{did}/app.bsky.feed.post/3lthreadgone2", "cid": root["cid"]}
    cases = [
        {"root": ref, "parent": ref},
        {"root": ref, "parent": nowhere},
        {"root": ref},
        {"root": ref, "parent": {"uri": root["uri"]}},
        {"root": ref, "parent": {"uri": root["uri"], "cid": "notacid"}},
        {"root": ref, "parent": {"uri": "https://example.com/", "cid": root["cid"]}},
        "a reply",
    ]
    answers = []
    for index, reply in enumerate(cases):
        answer = put(f"3lthreadpart{'abcdefg'[index]}", {**base, "reply": reply})
        message = answer.json().get("message", "") if answer.status_code != 200 else ""
        answers.append((answer.status_code, message.replace(did, "<did>")))
    return answers


def test_reply_refs_are_checked_by_the_real_server_as_by_the_emulator(pds, sandbox):
    """The PDS checks a reply's shape (two strong refs) and nothing else: a reply to a record
    that does not exist is stored. The emulator answers every case alike, in the same words."""
    real = replies_taken(pds.url, "alice.test", pds.account("alice.test").password)
    emulated = replies_taken(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password")
    assert real[:2] == [(200, ""), (200, "")] and all(code == 400 for code, _ in real[2:]), real
    assert emulated == real


# ---------------------------------------------------------------- a thread's life (issue 35)

FOURTH = "A fourth paragraph, added later, with a thought the first version lacked. " * 5


def test_an_edited_and_longer_thread_is_changed_in_place_and_grown_on_the_real_server(pds, tmp_path):
    """The second paragraph corrected, a fourth added: the PDS holds the first three parts at their
    own keys, the second edited with its reply refs as they were, the next a new reply to the
    third under that part's CID now; the ledger's CIDs are the PDS's."""
    post = make_post(13, description=LONG)
    channel = raw(pds, "alice.test", thread=True, max_parts=6)
    assert not run(tmp_path, channel, [post]).undone
    sent = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    did = pds.account("alice.test").did
    before = by_key(pds, did)
    paragraphs = LONG.split("\n\n")
    corrected = "A corrected second paragraph that says what the first version got wrong. " * 3
    edited = replace(post, description="\n\n".join([paragraphs[0], corrected, paragraphs[2], FOURTH]))
    report = run(tmp_path, channel, [edited])
    assert not report.undone, report.results
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "bsky")
    assert done.state == "done" and done.op is None and len(done.parts) > len(sent.parts) == 3
    assert [p.remote_id for p in done.parts[:3]] == [p.remote_id for p in sent.parts]
    after = by_key(pds, did)
    keys = [p.remote_id.rsplit("/", 1)[-1] for p in done.parts]
    assert after[keys[1]]["value"]["text"].startswith("A corrected second")
    assert after[keys[1]]["value"]["reply"] == before[keys[1]]["value"]["reply"]
    for old, new in zip(sent.parts[1:], done.parts[1:3], strict=True):  # a later part whose text stayed: not touched
        same = old.message_sha256 == new.message_sha256
        assert same == (
            after[new.remote_id.rsplit("/", 1)[-1]]["cid"] == before[old.remote_id.rsplit("/", 1)[-1]]["cid"]
        )
    third = {"uri": after[keys[2]]["uri"], "cid": after[keys[2]]["cid"]}
    assert after[keys[3]]["value"]["reply"]["parent"] == third
    assert [p.cid for p in done.parts] == [after[k]["cid"] for k in keys]
    assert set(after) - set(before) == set(keys[3:])  # only the new parts were made
    assert run(tmp_path, channel, [edited]).results == []


def test_a_removed_threads_every_part_is_deleted_by_the_real_server(pds, tmp_path, public):
    site = Site("http://thread-removed.example/", "Removed")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/", description=LONG) for n in (14, 15))
    public.live.update({"/blog/post-14/", "/blog/post-15/"})
    channel = raw(pds, "bob.test", thread=True, removals="delete")
    assert not run(tmp_path, channel, [kept, removed], site=site).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky")
    assert len(made.parts) == 3
    public.live.discard("/blog/post-15/")
    report = run(tmp_path, channel, [kept], site=site)
    assert not report.undone and [(r.post_key, r.state) for r in report.results] == [(removed.key, "deleted")]
    bob = pds.account("bob.test")
    for part in made.parts:
        gone = get_record(pds.url, bob.did, part.remote_id)
        assert gone.status_code == 400 and gone.json()["error"] == "RecordNotFound", gone.text
    gone_record = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "bsky")
    assert gone_record.state == "deleted" and gone_record.parts == made.parts
    assert (gone_record.remote_id, gone_record.remote_url) == (made.remote_id, made.remote_url)
    kept_parts = Ledger.read(tmp_path / "ledger.yml").record(kept.key, "bsky").parts
    assert all(get_record(pds.url, bob.did, p.remote_id).status_code == 200 for p in kept_parts)
    assert run(tmp_path, channel, [kept], site=site).results == []


# ---------------------------------------------------------------- the fifth audit's PDS scenarios


def test_the_pds_emulator_answers_the_fifth_audits_scenarios_as_the_reference_pds(pds, sandbox):
    """A swap on a deleted record, blobs their last record stopped naming, references to a
    permanent and a temporary blob, listRecords' limits: the emulator's answers are the PDS's,
    word for word, and the PDS's are the ones tests/test_emulators_as_servers.py pins."""
    from pds_scenarios import Account
    from test_emulators_as_servers import PDS_ANSWERS, pds_scenarios_of

    real = pds_scenarios_of(Account(pds.url, "alice.test", pds.account("alice.test").password), "3lfiv")
    emulated = pds_scenarios_of(Account(f"{sandbox.url}/bluesky", "sandbox.bsky.social", "sandbox-bsky-app-password"))
    assert real == PDS_ANSWERS, real
    assert emulated == real
