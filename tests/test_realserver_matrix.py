"""The Matrix channel against Synapse itself (tests/realserver_synapse.py), not only against our
emulator: what it stores must be what we sent, a message left `in_flight` must be found by a read
of its marker and never sent twice, an edit is one `m.replace` and a removal one redaction, a 429
is waited out, and the raw calls the channel relies on answer the same shapes from the emulator
and from Synapse."""

from __future__ import annotations

import json
import signal
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import realserver_child
from conftest import FakeClock, ListReporter, as_in_flight, make_post, write_ledger
from realserver_child import SETTLE, start_child
from realserver_synapse import SERVER_NAME, Synapse, make_room, start_synapse

from mkdocs_syndicate.channels.matrix import MARKER
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import SystemClock

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): Synapse starts once, not once a worker.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-synapse")]

SITE = Site("https://example.com/", "Example")


@pytest.fixture(scope="module")
def synapse(tmp_path_factory):
    yield from start_synapse(tmp_path_factory.mktemp("synapse"))


def raw(synapse: Synapse, user: str = "alice", **extra: Any) -> dict[str, Any]:
    return {
        "type": "matrix",
        "homeserver": synapse.url,
        "room_id": synapse.room_id,
        "access_token": synapse.users[user].token,
        **extra,
    }


def run(folder: Path, channel: dict, posts, site: Site = SITE, clock=None, **options):
    folder.mkdir(parents=True, exist_ok=True)
    parsed = parse_options(
        {"mx": channel}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, **options
    )
    return send(parsed, posts, ListReporter(), clock=clock or FakeClock())


def room_events(synapse: Synapse) -> list[dict[str, Any]]:
    """Every message and redaction in the room, newest first (paged through /messages)."""
    events: list[dict[str, Any]] = []
    token: str | None = None
    query = {"dir": "b", "limit": "1000", "filter": json.dumps({"types": ["m.room.message", "m.room.redaction"]})}
    while True:
        page = httpx.get(
            synapse.client(f"/rooms/{quote(synapse.room_id, safe='')}/messages"),
            params={**query, **({"from": token} if token else {})},
            headers=synapse.users["admin"].auth,
        ).json()
        events += page["chunk"]
        if not page["chunk"] or not page.get("end"):
            return events
        token = page["end"]


def url_in(body: str, site_url: str) -> str:
    return next((word for word in body.split() if word.startswith(site_url)), "")


def ours(synapse: Synapse, site_url: str) -> list[str]:
    """The post URLs of this site's messages in the room (originals, not redacted): one a message."""
    return sorted(
        url_in(e["content"]["body"], site_url)
        for e in room_events(synapse)
        if e["type"] == "m.room.message" and MARKER in e["content"] and url_in(e["content"]["body"], site_url)
    )


def edits_of(synapse: Synapse, event_id: str) -> list[dict[str, Any]]:
    """The m.replace events of a message (/relations is under /_matrix/client/v1 only)."""
    room, event = quote(synapse.room_id, safe=""), quote(event_id, safe="")
    answer = httpx.get(
        f"{synapse.url}/_matrix/client/v1/rooms/{room}/relations/{event}/m.replace",
        headers=synapse.users["admin"].auth,
    )
    answer.raise_for_status()
    chunk: list[dict[str, Any]] = answer.json()["chunk"]
    return chunk


def redactions_of(synapse: Synapse, event_id: str) -> int:
    return sum(1 for e in room_events(synapse) if e["type"] == "m.room.redaction" and e.get("redacts") == event_id)


def latest_text(synapse: Synapse, event_id: str) -> str:
    event = synapse.event(event_id).json()
    replaced = event["unsigned"].get("m.relations", {}).get("m.replace")
    return str((replaced["content"]["m.new_content"] if replaced else event["content"])["body"])


# ---------------------------------------------------------------- sends


def test_messages_are_stored_as_sent_with_their_marker_and_a_rerun_sends_nothing(synapse, tmp_path):
    posts = [make_post(n, url=f"https://stored.example/blog/{n}/", title=f"Post {n} — café ☕") for n in (1, 2)]
    assert not run(tmp_path, raw(synapse), posts).undone
    book = Ledger.read(tmp_path / "ledger.yml")
    for post in posts:
        record = book.record(post.key, "mx")
        event = synapse.event(record.remote_id).json()
        assert event["sender"] == synapse.users["alice"].user_id and event["type"] == "m.room.message"
        assert event["content"][MARKER] == record.idempotency_key and post.title in event["content"]["body"]
        assert record.remote_url.endswith(f"{quote(record.remote_id, safe='$')}?via=syndicate.test")
    assert ours(synapse, "https://stored.example/") == sorted(p.url for p in posts)
    assert run(tmp_path, raw(synapse), posts).results == []
    assert ours(synapse, "https://stored.example/") == sorted(p.url for p in posts)


def test_an_in_flight_message_is_found_by_its_marker_and_never_sent_again(synapse, tmp_path):
    post = make_post(3, url="https://found.example/blog/3/")
    assert not run(tmp_path, raw(synapse), [post]).undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    write_ledger(tmp_path / "ledger.yml", {(post.key, "mx"): as_in_flight(done)})
    assert not run(tmp_path, raw(synapse), [post]).undone
    settled = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    assert settled.state == "done" and settled.remote_id == done.remote_id
    assert ours(synapse, "https://found.example/") == [post.url]


def test_two_sites_in_one_room_each_find_only_their_own_message(synapse, tmp_path):
    """The same post path on two sites, announced by one bot in one room: two messages with
    different markers; the second site's record left in_flight settles on its own message."""
    other = Site("https://two-b.example/", "Other")
    here = make_post(4, url="https://two-a.example/blog/same/")
    there = make_post(4, url="https://two-b.example/blog/same/")
    assert not run(tmp_path / "a", raw(synapse), [here]).undone
    assert not run(tmp_path / "b", raw(synapse), [there], site=other).undone
    mine = Ledger.read(tmp_path / "a" / "ledger.yml").record(here.key, "mx")
    theirs = Ledger.read(tmp_path / "b" / "ledger.yml").record(there.key, "mx")
    assert mine.remote_id != theirs.remote_id and mine.idempotency_key != theirs.idempotency_key
    write_ledger(tmp_path / "b" / "ledger.yml", {(there.key, "mx"): as_in_flight(theirs)})
    assert not run(tmp_path / "b", raw(synapse), [there], site=other).undone
    settled = Ledger.read(tmp_path / "b" / "ledger.yml").record(there.key, "mx")
    assert settled.state == "done" and settled.remote_id == theirs.remote_id
    assert ours(synapse, "https://two-a.example/") == [here.url] and ours(synapse, "https://two-b.example/") == [
        there.url
    ]


def test_a_429_is_not_made_and_is_waited_out_without_a_read(synapse, tmp_path):
    """`slow` keeps rc_message's 0.5 a second with a burst of 2: the third message meets
    M_LIMIT_EXCEEDED; the run waits `retry_after_ms` on the real clock and sends it, never
    reading first (Synapse checks the limit before it makes the event) and leaving nothing in_flight."""
    from realserver_proxy import RecordingProxy, matrix_call

    posts = [make_post(n, url=f"https://limited.example/blog/{n}/") for n in (1, 2, 3)]
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        report = run(tmp_path, {**raw(synapse, "slow"), "homeserver": proxy.url}, posts, clock=SystemClock())
        assert not report.undone, report.results
        assert proxy.count("PUT send", 429) >= 1 and proxy.count("PUT send", 200) == 3, proxy.calls
        assert proxy.count("GET messages") == 0, proxy.calls
    book = Ledger.read(tmp_path / "ledger.yml")
    assert all(book.record(p.key, "mx").state == "done" for p in posts)
    assert len(ours(synapse, "https://limited.example/")) == 3


# ---------------------------------------------------------------- kills around a send


def child_spec(folder: Path, site_url: str, channel: dict[str, Any]) -> Path:
    return realserver_child.child_spec(folder, site_url, "mx", channel)


def change_spec(spec: Path, change) -> None:
    settings = json.loads(spec.read_text())
    change(settings)
    spec.write_text(json.dumps(settings))


def killed(proxy, spec: Path, how: str, at: str, nth: int = 1, **env: str) -> str:
    """A run of `spec` SIGKILLed at a client checkpoint or by the proxy around a call; where it landed."""
    from realserver_proxy import Kill

    log = spec.parent / "checkpoints.log"
    env = {"SYNDICATE_CHECKPOINT_LOG": str(log), **env}
    if how == "checkpoint":
        env["SYNDICATE_CRASH_AT"] = at
    child = start_child(spec, **env)
    if how != "checkpoint":
        proxy.kill = Kill(at, how.removeprefix("proxy-"), pid=child.pid, nth=nth)
    output, errors = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, output + errors
    last = log.read_text().splitlines()[-1].split("\t")[1]
    if how == "checkpoint":
        assert last == at.split(":")[0]
    landed = proxy.kill.landed if proxy.kill else f"at checkpoint {last}"
    proxy.kill = None
    return landed


def rerun(spec: Path, **env: str) -> None:
    child = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1), **env)
    output, errors = child.communicate(timeout=120)
    assert child.returncode == 0, output + errors


KILLS = realserver_child.send_kills("PUT send")


@pytest.mark.parametrize("where", realserver_child.chosen(KILLS))
def test_killed_at_each_send_checkpoint_then_rerun_leaves_one_message_per_post(synapse, tmp_path, where):
    from crashlab import STATS
    from realserver_proxy import RecordingProxy, matrix_call

    how, at, held = KILLS[where]
    site_url = f"https://kill-{uuid.uuid4().hex[:8]}.example/"
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        spec = child_spec(tmp_path, site_url, {**raw(synapse), "homeserver": proxy.url})
        landed = killed(proxy, spec, how, at, nth=2)
        print(f"synapse kill [{where}]: landed {landed}; the server holds {len(ours(synapse, site_url))}")
        STATS[f"realserver matrix kills landing {where}"] += 1
        assert len(ours(synapse, site_url)) == held
        assert Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "mx").state == "in_flight"
        rerun(spec)
    assert ours(synapse, site_url) == [f"{site_url}blog/{n}/" for n in (1, 2, 3)]
    book = Ledger.read(tmp_path / "ledger.yml")
    for n in (1, 2, 3):
        record = book.record(f"blog/{n}/", "mx")
        assert record.state == "done" and url_in(synapse.event(record.remote_id).json()["content"]["body"], site_url)


# ---------------------------------------------------------------- edits


def test_an_edited_post_is_one_m_replace_and_a_rerun_edits_nothing_more(synapse, tmp_path):
    """The copy is edited with an m.replace whose new content keeps the marker; the original
    event keeps its content (Synapse serves the edit beside it); a rerun, and a run whose record
    was left in_flight after the edit, send nothing more."""
    post = make_post(5, url="https://edited.example/blog/5/", description="A first draft.")
    assert not run(tmp_path, raw(synapse), [post]).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    corrected = replace(post, description="A corrected summary.")
    report = run(tmp_path, raw(synapse), [corrected])
    assert not report.undone and [r.detail for r in report.results] == ["updated (proved by a read of the copy)"], (
        report.results
    )
    (edit,) = edits_of(synapse, made.remote_id)
    assert edit["sender"] == synapse.users["alice"].user_id
    assert edit["content"]["m.relates_to"] == {"rel_type": "m.replace", "event_id": made.remote_id}
    new = edit["content"]["m.new_content"]
    assert "A corrected summary." in new["body"] and new[MARKER] == made.idempotency_key
    assert edit["content"]["body"] == "* " + new["body"] and MARKER not in edit["content"]
    original = synapse.event(made.remote_id).json()
    assert "A first draft." in original["content"]["body"] and latest_text(synapse, made.remote_id) == new["body"]
    record = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    assert record.state == "done" and record.op is None and record.remote_id == made.remote_id
    assert run(tmp_path, raw(synapse), [corrected]).results == []
    write_ledger(tmp_path / "ledger.yml", {(post.key, "mx"): replace(record, state=State.IN_FLIGHT, op="update")})
    again = run(tmp_path, raw(synapse), [corrected])
    assert not again.undone and "confirmed by reading the copy" in again.results[0].detail
    assert len(edits_of(synapse, made.remote_id)) == 1
    assert ours(synapse, "https://edited.example/") == [post.url]


def test_a_redacted_copy_is_never_edited(synapse, tmp_path):
    """Its author deleted the message in the room (a redaction); the post is edited: the run
    reads the copy first and records it deleted, sending no edit (Synapse would accept one)."""
    post = make_post(6, url="https://redacted-first.example/blog/6/", description="First.")
    assert not run(tmp_path, raw(synapse), [post]).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    room, event = quote(synapse.room_id, safe=""), quote(made.remote_id, safe="")
    by_hand = httpx.put(
        synapse.client(f"/rooms/{room}/redact/{event}/by-hand-{uuid.uuid4().hex}"),
        json={},
        headers=synapse.users["alice"].auth,
    )
    assert by_hand.status_code == 200, by_hand.text
    report = run(tmp_path, raw(synapse), [replace(post, description="Second.")])
    assert [r.state for r in report.results] == ["deleted"], report.results
    assert edits_of(synapse, made.remote_id) == []
    assert Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx").state == "deleted"


def test_an_edit_synapse_is_said_to_have_made_and_did_not_needs_review(synapse, tmp_path):
    """The m.replace answered 200 with an event id by a proxy that never forwarded it: the read
    of the message (Synapse's own) shows the old text, so the pair needs review (the run exits
    non-zero) and the next run sends nothing for it."""
    from realserver_proxy import Lie, RecordingProxy, matrix_call

    post = make_post(7, url="https://said-yes.example/blog/7/", description="First.")
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        channel = {**raw(synapse), "homeserver": proxy.url}
        assert not run(tmp_path, channel, [post]).undone
        made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
        proxy.lie = Lie("PUT send", {"event_id": "$an-edit-never-made"})
        corrected = replace(post, description="Second.")
        report = run(tmp_path, channel, [corrected])
        (result,) = report.results
        assert report.undone and result.needs_review and "old text" in result.detail, result
        assert proxy.lie.told == 1 and edits_of(synapse, made.remote_id) == []
        held = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
        assert held.review and held.state != State.DONE
        again = run(tmp_path, channel, [corrected])
        assert [r.needs_review for r in again.results] == [True] and proxy.lie.told == 1


# (where; whether Synapse has made the edit once the kill has landed)
EDIT_KILLS = {
    "before the call (in_flight written)": ("checkpoint", "after_in_flight_write:1", False),
    "the request never reached the server": ("proxy-before", "PUT send", False),
    "the server made the edit, no answer came": ("proxy-after", "PUT send", True),
    "the answer came, nothing written yet": ("checkpoint", "after_response:1", True),
    "before done is written": ("checkpoint", "before_done_write:1", True),
}


@pytest.mark.parametrize("where", realserver_child.chosen(EDIT_KILLS))
def test_killed_around_an_edit_then_rerun_leaves_one_edit(synapse, tmp_path, where):
    from crashlab import STATS
    from realserver_proxy import RecordingProxy, matrix_call

    how, at, made = EDIT_KILLS[where]
    site_url = f"https://edit-{uuid.uuid4().hex[:8]}.example/"
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        spec = child_spec(tmp_path, site_url, {**raw(synapse), "homeserver": proxy.url})
        rerun(spec)
        event_id = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "mx").remote_id

        def corrected(settings: dict) -> None:
            settings["posts"][1]["description"] = "Corrected: about 2."

        change_spec(spec, corrected)
        sends = proxy.count("PUT send")
        landed = killed(proxy, spec, how, at)
        print(f"synapse edit kill [{where}]: landed {landed}; {len(edits_of(synapse, event_id))} edit(s)")
        assert len(edits_of(synapse, event_id)) == (1 if made else 0)
        STATS[f"realserver matrix edit kills landing {where}"] += 1
        rerun(spec)
        assert proxy.count("PUT send") - sends <= 2  # the edit, and once more at most (the same txnId)
    (edit,) = edits_of(synapse, event_id)
    assert "Corrected: about 2." in edit["content"]["m.new_content"]["body"]
    assert "Corrected: about 2." in latest_text(synapse, event_id)
    assert ours(synapse, site_url) == [f"{site_url}blog/{n}/" for n in (1, 2, 3)]
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "mx")
    assert record.state == "done" and record.op is None and record.remote_id == event_id


# ---------------------------------------------------------------- removals


@pytest.fixture
def public(monkeypatch):
    yield from realserver_child.public_pages(monkeypatch)


def test_a_removed_posts_message_is_redacted_and_a_rerun_redacts_nothing_more(synapse, tmp_path, public):
    site = Site("http://removed-by-run.example/", "Removed")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 2))
    public.live.update({"/blog/post-1/", "/blog/post-2/"})
    channel = raw(synapse, removals="delete")
    assert not run(tmp_path, channel, [kept, removed], site=site).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "mx")
    public.live.discard("/blog/post-2/")
    report = run(tmp_path, channel, [kept], site=site)
    assert not report.undone and [(r.post_key, r.state) for r in report.results] == [(removed.key, "deleted")]
    event = synapse.event(made.remote_id).json()
    assert event["content"] == {} and "redacted_because" in event["unsigned"]
    assert Ledger.read(tmp_path / "ledger.yml").record(removed.key, "mx").state == "deleted"
    assert ours(synapse, site.url) == [kept.url] and redactions_of(synapse, made.remote_id) == 1
    assert run(tmp_path, channel, [kept], site=site).results == []
    assert redactions_of(synapse, made.remote_id) == 1


def test_a_redaction_synapse_is_said_to_have_made_and_did_not_is_not_recorded_deleted(synapse, tmp_path, public):
    """The redaction answered 200 with an event id by a proxy that never forwarded it: the read
    of the message (Synapse's own) shows it unredacted, so the pair needs review, never `deleted`."""
    from realserver_proxy import Lie, RecordingProxy, matrix_call

    site = Site("http://said-redacted.example/", "Said redacted")
    kept, removed = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 2))
    public.live.update({"/blog/post-1/", "/blog/post-2/"})
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        channel = {**raw(synapse, removals="delete"), "homeserver": proxy.url}
        assert not run(tmp_path, channel, [kept, removed], site=site).undone
        made = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "mx")
        public.live.discard("/blog/post-2/")
        proxy.lie = Lie("PUT redact", {"event_id": "$a-redaction-never-made"})
        report = run(tmp_path, channel, [kept], site=site)
        (result,) = report.results
        assert report.undone and result.needs_review and result.state != "deleted", result
        assert proxy.lie.told == 1 and redactions_of(synapse, made.remote_id) == 0
        assert ours(synapse, site.url) == sorted([kept.url, removed.url])
        held = Ledger.read(tmp_path / "ledger.yml").record(removed.key, "mx")
        assert held.state != State.DELETED and held.review
        again = run(tmp_path, channel, [kept], site=site)
        assert [r.needs_review for r in again.results] == [True] and proxy.lie.told == 1


# (where; whether Synapse has redacted the message once the kill has landed)
DELETE_KILLS = {
    "before the call (in_flight written)": ("checkpoint", "after_in_flight_write:1", False),
    "the request never reached the server": ("proxy-before", "PUT redact", False),
    "the server redacted it, no answer came": ("proxy-after", "PUT redact", True),
    "the answer came, nothing written yet": ("checkpoint", "after_response:1", True),
    "before deleted is written": ("checkpoint", "before_done_write:1", True),
}


@pytest.mark.parametrize("where", realserver_child.chosen(DELETE_KILLS))
def test_killed_around_a_redaction_then_rerun_leaves_the_message_redacted(synapse, tmp_path, public, where):
    from crashlab import STATS
    from realserver_proxy import RecordingProxy, matrix_call

    how, at, redacted = DELETE_KILLS[where]
    site_url = f"http://redact-{uuid.uuid4().hex[:8]}.example/"
    public.live.update({f"/blog/{n}/" for n in (1, 2, 3)})
    with RecordingProxy(synapse.url, matrix_call) as proxy:
        spec = child_spec(tmp_path, site_url, {**raw(synapse), "homeserver": proxy.url, "removals": "delete"})
        rerun(spec, **public.env)
        event_id = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "mx").remote_id
        change_spec(spec, lambda s: s.update(posts=[p for p in s["posts"] if p["key"] != "blog/2/"]))
        public.live.discard("/blog/2/")
        sends = proxy.count("PUT send")
        landed = killed(proxy, spec, how, at, **public.env)
        print(f"synapse redaction kill [{where}]: landed {landed}")
        STATS[f"realserver matrix redaction kills landing {where}"] += 1
        assert ("redacted_because" in synapse.event(event_id).json()["unsigned"]) == redacted
        rerun(spec, **public.env)
        assert proxy.count("PUT send") == sends  # a redaction never turns into a send
        assert proxy.count("PUT redact") <= 2
    assert ours(synapse, site_url) == [f"{site_url}blog/{n}/" for n in (1, 3)]
    assert redactions_of(synapse, event_id) == 1  # a repeat under the same txnId is the same redaction
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "mx")
    assert record.state == "deleted" and record.op is None, record


# ---------------------------------------------------------------- the emulator agrees


def raw_calls(homeserver: str, token: str, room: str) -> list[tuple[Any, ...]]:
    """The calls the channel makes, raw, against one server; each answer reduced to its shape."""
    client = f"{homeserver}/_matrix/client/v3"
    auth = {"Authorization": f"Bearer {token}"}
    path = quote(room, safe="")
    run_id = uuid.uuid4().hex

    def put(what: str, txn: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.put(f"{client}/rooms/{path}/{what}/{run_id}-{txn}", json=body, headers=auth)

    def event(event_id: str) -> dict[str, Any]:
        return body(httpx.get(f"{client}/rooms/{path}/event/{quote(event_id, safe='')}", headers=auth))

    def body(answer: httpx.Response) -> dict[str, Any]:
        """The answer's JSON object ({} when it has none: a shape that differs, not a crash)."""
        try:
            found = answer.json()
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}

    shapes: list[tuple[Any, ...]] = []
    sent = put("send/m.room.message", "a", {"msgtype": "m.text", "body": "hello", MARKER: run_id})
    original = str(body(sent).get("event_id"))
    shapes.append(("send", sent.status_code, sorted(body(sent))))
    repeat = put("send/m.room.message", "a", {"msgtype": "m.text", "body": "other"})
    shapes.append(("send again", repeat.status_code, body(repeat).get("event_id") == original))
    read = event(original)
    unsigned = read.get("unsigned", {})
    shapes.append(("read", read.get("event_id") == original, read.get("content"), "m.relations" in unsigned))
    new = {"msgtype": "m.text", "body": "edited", MARKER: run_id}
    edit_body = {
        "msgtype": "m.text",
        "body": "* edited",
        "m.new_content": new,
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    }
    edit = put("send/m.room.message", "b", edit_body)
    shapes.append(("edit", edit.status_code, sorted(body(edit))))
    read = event(original)
    replaced = read.get("unsigned", {}).get("m.relations", {}).get("m.replace", {})
    shapes.append(
        (
            "read after the edit",
            read.get("content", {}).get("body"),
            replaced.get("event_id") == body(edit).get("event_id"),
            replaced.get("content", {}).get("m.new_content"),
            replaced.get("content", {}).get("m.relates_to"),
        )
    )
    redaction = put(f"redact/{quote(original, safe='')}", "c", {})
    shapes.append(("redact", redaction.status_code, sorted(body(redaction))))
    again = put(f"redact/{quote(original, safe='')}", "c", {})
    shapes.append(("redact again", again.status_code, body(again).get("event_id") == body(redaction).get("event_id")))
    other = put(f"redact/{quote(original, safe='')}", "d", {})
    shapes.append(("redact under another txnId", other.status_code, sorted(body(other))))
    read = event(original)
    unsigned = read.get("unsigned", {})
    shapes.append(("read redacted", read.get("content"), "redacted_because" in unsigned, "m.relations" in unsigned))
    late = put("send/m.room.message", "e", {**edit_body, "body": "* late"})
    shapes.append(("edit of a redacted event", late.status_code))
    missing = httpx.get(
        f"{client}/rooms/{path}/event/{quote('$nosuchevent0000000000000000000000000000000')}", headers=auth
    )
    shapes.append(("read of no such event", missing.status_code, body(missing).get("errcode")))

    return shapes


def without_ids(shapes: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    # The marker (the run's own id) and the replaced event's id differ between the servers.
    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<id>" if k in (MARKER, "event_id") else plain(v)) for k, v in value.items()}
        return value

    return [tuple(plain(v) for v in shape) for shape in shapes]


def test_the_raw_calls_answer_the_same_shapes_from_the_emulator_and_from_synapse(synapse, sandbox):
    from channel_specs import SPECS

    real = raw_calls(synapse.url, synapse.users["alice"].token, synapse.room_id)
    assert without_ids(real) == [
        ("send", 200, ["event_id"]),
        ("send again", 200, True),
        ("read", True, {"msgtype": "m.text", "body": "hello", MARKER: "<id>"}, False),
        ("edit", 200, ["event_id"]),
        (
            "read after the edit",
            "hello",
            True,
            {"msgtype": "m.text", "body": "edited", MARKER: "<id>"},
            {"rel_type": "m.replace", "event_id": "<id>"},
        ),
        ("redact", 200, ["event_id"]),
        ("redact again", 200, True),
        ("redact under another txnId", 200, ["event_id"]),
        ("read redacted", {}, True, False),
        ("edit of a redacted event", 200),
        ("read of no such event", 404, "M_NOT_FOUND"),
    ], real
    emulated_settings = SPECS["matrix"].raw(sandbox)
    emulated = raw_calls(
        emulated_settings["homeserver"], emulated_settings["access_token"], emulated_settings["room_id"]
    )

    assert without_ids(emulated) == without_ids(real)


def redaction_of_no_such_event(homeserver: str, token: str, room: str) -> tuple[int, Any]:
    """A redaction of an event id no event has: Synapse's answer, as (status, errcode)."""
    nowhere = quote("$nosuchevent0000000000000000000000000000000", safe="")
    answer = httpx.put(
        f"{homeserver}/_matrix/client/v3/rooms/{quote(room, safe='')}/redact/{nowhere}/{uuid.uuid4().hex}",
        json={},
        headers={"Authorization": f"Bearer {token}"},
    )
    return answer.status_code, answer.json().get("errcode")


def test_a_redaction_of_no_such_event_is_answered_as_synapse_answers_it(synapse, sandbox):
    """Synapse 1.163.2 refuses it, 404 M_NOT_FOUND "Could not find event ..." (measured here); the
    emulator's notes say Synapse accepts it (200). The client does not rely on either (a 404 to a
    redaction is read before anything else), but the emulator should answer as Synapse does."""
    from channel_specs import SPECS

    real = redaction_of_no_such_event(synapse.url, synapse.users["alice"].token, synapse.room_id)
    assert real == (404, "M_NOT_FOUND")
    emulated = SPECS["matrix"].raw(sandbox)
    assert redaction_of_no_such_event(emulated["homeserver"], emulated["access_token"], emulated["room_id"]) == real


def replay_after_leaving(homeserver: str, token: str, room: str, leave: Any) -> list[tuple[Any, ...]]:
    """A message sent under a transaction id, the sender out of the room (`leave()`), then the
    same id again (under another event type too) and a new one: each answer as (status, what)."""
    client = f"{homeserver}/_matrix/client/v3/rooms/{quote(room, safe='')}"
    auth = {"Authorization": f"Bearer {token}"}
    txn = uuid.uuid4().hex

    def put(event_type: str, txn: str) -> httpx.Response:
        return httpx.put(f"{client}/send/{event_type}/{txn}", json={"msgtype": "m.text", "body": "x"}, headers=auth)

    first = put("m.room.message", txn)
    assert first.status_code == 200, first.text
    leave()
    again, other_type, new = put("m.room.message", txn), put("org.example.other", txn), put("m.room.message", "new")
    return [
        ("again", again.status_code, again.json().get("event_id") == first.json()["event_id"]),
        ("another event type", other_type.status_code, other_type.json().get("event_id") == first.json()["event_id"]),
        ("a new id", new.status_code, new.json().get("errcode")),
    ]


def test_a_repeated_transaction_id_answers_its_first_event_after_the_sender_left(synapse, sandbox):
    """Synapse asks its transaction cache (rest/client/transactions.py) before it makes the event,
    and handlers/message.py looks the id up in its table before it checks membership: a repeat
    from a sender no longer in the room answers the first event, a new id 403. So does the emulator."""
    from channel_specs import SPECS

    room = make_room(synapse.url, synapse.users)  # a room of its own: bob leaves it
    bob = synapse.users["bob"]

    def leave() -> None:
        left = httpx.post(synapse.client(f"/rooms/{quote(room, safe='')}/leave"), json={}, headers=bob.auth)
        left.raise_for_status()

    real = replay_after_leaving(synapse.url, bob.token, room, leave)
    assert real == [("again", 200, True), ("another event type", 200, True), ("a new id", 403, "M_FORBIDDEN")]
    emulated = SPECS["matrix"].raw(sandbox)

    def emulator_leaves() -> None:
        sandbox.emulators["matrix"].joined = False

    assert (
        replay_after_leaving(emulated["homeserver"], emulated["access_token"], emulated["room_id"], emulator_leaves)
        == real
    )


# ---------------------------------------------------------------- threads (issue 35)

# A thread's part holds at most 2,000 characters: each paragraph is a part.
PARAGRAPHS = [f"Paragraph {n} of a long post, written at length. " * 35 for n in ("one", "two", "three")]


def thread_of(synapse: Synapse, root: str) -> list[dict[str, Any]]:
    """The thread's events as Synapse relates them to its root (`/relations/{root}/m.thread`),
    oldest first."""
    room, event = quote(synapse.room_id, safe=""), quote(root, safe="")
    answer = httpx.get(
        f"{synapse.url}/_matrix/client/v1/rooms/{room}/relations/{event}/m.thread",
        params={"dir": "f"},
        headers=synapse.users["admin"].auth,
    )
    answer.raise_for_status()
    chunk: list[dict[str, Any]] = answer.json()["chunk"]
    return chunk


def test_a_thread_lives_in_m_thread_edited_grown_and_redacted_on_synapse(synapse, tmp_path, public):
    """Sent: part 1, then parts in its m.thread, each with the reply fallback to the part before.
    Edited (the second paragraph) and grown (a third): one m.replace of each part whose text
    changed, part 3 added in the thread after part 2. Removed: every part redacted, last first, the ledger `deleted`."""
    site = Site("http://thread-on-synapse.example/", "Threads")
    post = make_post(21, url=f"{site.url}blog/post-21/", description="\n\n".join(PARAGRAPHS[:2]))
    other = make_post(22, url=f"{site.url}blog/post-22/")
    public.live.update({"/blog/post-21/", "/blog/post-22/"})
    channel = raw(synapse, thread=True, removals="delete")
    assert not run(tmp_path, channel, [post, other], site=site).undone
    sent = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    assert len(sent.parts) == 2 and sent.remote_id == sent.parts[0].remote_id
    (second,) = thread_of(synapse, sent.parts[0].remote_id)
    assert second["event_id"] == sent.parts[1].remote_id
    assert second["content"]["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": sent.parts[0].remote_id,
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": sent.parts[0].remote_id},
    }
    corrected = "A corrected second paragraph, better put. " * 35
    edited = replace(post, description="\n\n".join([PARAGRAPHS[0], corrected, PARAGRAPHS[2]]))
    assert not run(tmp_path, channel, [edited, other], site=site).undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    assert done.state == "done" and len(done.parts) == 3
    assert [p.remote_id for p in done.parts[:2]] == [p.remote_id for p in sent.parts]
    for before, now in zip(sent.parts, done.parts, strict=False):  # one m.replace for each part whose text changed
        assert len(edits_of(synapse, now.remote_id)) == (before.message_sha256 != now.message_sha256)
    said = " ".join(latest_text(synapse, part.remote_id) for part in done.parts)
    assert "A corrected second paragraph" in said and "Paragraph two" not in said
    in_thread = thread_of(synapse, sent.parts[0].remote_id)
    third = next(e for e in in_thread if e["event_id"] == done.parts[2].remote_id)
    assert third["content"]["m.relates_to"]["m.in_reply_to"] == {"event_id": sent.parts[1].remote_id}
    assert run(tmp_path, channel, [edited, other], site=site).results == []
    public.live.discard("/blog/post-21/")
    report = run(tmp_path, channel, [other], site=site)
    assert not report.undone and [(r.post_key, r.state) for r in report.results] == [(post.key, "deleted")]
    for part in done.parts:
        event = synapse.event(part.remote_id).json()
        assert event["content"] == {} and "redacted_because" in event["unsigned"], event
        assert redactions_of(synapse, part.remote_id) == 1
    gone = Ledger.read(tmp_path / "ledger.yml").record(post.key, "mx")
    assert gone.state == "deleted" and gone.parts == done.parts and gone.remote_id == done.remote_id


# ---------------------------------------------------------------- the fifth audit's Matrix scenarios


def fresh_user(synapse: Synapse, name: str) -> tuple[str, str]:
    """A user of its own (the admin API's), logged in: (user id, access token)."""
    user_id = f"@{name}:{SERVER_NAME}"
    admin = synapse.users["admin"].auth
    password = uuid.uuid4().hex
    made = httpx.put(
        f"{synapse.url}/_synapse/admin/v2/users/{quote(user_id, safe='')}", json={"password": password}, headers=admin
    )
    made.raise_for_status()
    login = {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": name}, "password": password}
    logged_in = httpx.post(synapse.client("/login"), json=login)
    logged_in.raise_for_status()
    return user_id, str(logged_in.json()["access_token"])


def test_the_matrix_emulator_answers_the_fifth_audits_scenarios_as_synapse(synapse, sandbox):
    """Redacting another user's event, a body that is no JSON sent to no room, replays of a PUT
    through the HTTP transaction cache, where rc_message stands: the emulator's answers are
    Synapse's, and Synapse's are the ones tests/test_emulators_as_servers.py pins."""
    from matrix_scenarios import Room
    from test_emulators_as_servers import MATRIX_ANSWERS, matrix_scenarios_of, sandbox_matrix_scenarios

    user_id, token = fresh_user(synapse, f"carol{uuid.uuid4().hex[:8]}")  # its rc_message changes
    admin = synapse.users["admin"].auth
    path = quote(synapse.room_id, safe="")
    httpx.post(synapse.client(f"/rooms/{path}/invite"), json={"user_id": user_id}, headers=admin).raise_for_status()
    joined = httpx.post(synapse.client(f"/rooms/{path}/join"), json={}, headers={"Authorization": f"Bearer {token}"})
    joined.raise_for_status()
    theirs = Room(synapse.url, synapse.users["admin"].token, synapse.room_id).send("theirs")
    theirs.raise_for_status()

    def override(per_second: int, burst_count: int) -> None:
        set_to = {"messages_per_second": per_second, "burst_count": burst_count}
        overridden = httpx.post(
            f"{synapse.url}/_synapse/admin/v1/users/{quote(user_id, safe='')}/override_ratelimit",
            json=set_to,
            headers=admin,
        )
        overridden.raise_for_status()

    override(0, 0)  # no limit, until the scenario sets one

    def limit() -> None:  # a burst of 0: no new event passes, and none ever refills it
        override(1, 0)

    real = matrix_scenarios_of(
        Room(synapse.url, token, synapse.room_id), theirs.json()["event_id"], "!nosuchroom:syndicate.test", limit
    )
    print(real)
    assert real == MATRIX_ANSWERS, real
    assert sandbox_matrix_scenarios(sandbox) == real
