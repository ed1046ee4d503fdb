"""The Nostr channel against nostr-relay itself (tests/realserver_nostr.py), not only against our
emulator: what it stores must be what we signed, a note left `in_flight` must be found by a REQ
for its id and never sent twice, an article is replaced by its edit and both kinds are deleted by
a NIP-09 request, and a run killed around a send leaves one note per post."""

from __future__ import annotations

import signal
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import realserver_child
from conftest import FakeClock, ListReporter, as_in_flight, make_post, write_ledger
from realserver_child import SETTLE, start_child
from realserver_nostr import KillingProxy, Relay, start_relay

from mkdocs_syndicate.channels.nostr_events import is_genuine, public_key
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): the relay starts once.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-nostr")]

SITE = Site("https://example.com/", "Example")
KEY = "3c1a7e5f0b2d4c6e8fa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c"
AUTHOR = public_key(KEY)


@pytest.fixture(scope="module")
def relay(tmp_path_factory):
    yield from start_relay(tmp_path_factory.mktemp("nostr-relay"))


def raw(relay: Relay, **extra: Any) -> dict[str, Any]:
    return {"type": "nostr", "relay": relay.url, "secret_key": KEY, **extra}


def run(folder: Path, channel: dict, posts, clock=None, site: Site = SITE):
    folder.mkdir(parents=True, exist_ok=True)
    parsed = parse_options({"no": channel}, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True)
    return send(parsed, posts, ListReporter(), clock=clock or FakeClock())


def notes_about(relay: Relay, site_url: str) -> list[str]:
    """The post URLs (their `r` tags) of our notes on the relay about this site: one a note."""
    events = relay.query({"kinds": [1], "authors": [AUTHOR]})
    return sorted(r for e in events for r in [_tag(e, "r")] if r.startswith(site_url))


def _tag(event: dict, name: str) -> str:
    return next((t[1] for t in event["tags"] if len(t) > 1 and t[0] == name), "")


# ---------------------------------------------------------------- sends


def test_notes_are_stored_as_signed_and_a_rerun_sends_nothing(relay, tmp_path):
    site = "https://stored.example/"
    posts = [make_post(n, url=f"{site}blog/{n}/", title=f"Post {n} — café ☕") for n in (1, 2)]
    assert not run(tmp_path, raw(relay), posts).undone
    book = Ledger.read(tmp_path / "ledger.yml")
    for post in posts:
        record = book.record(post.key, "no")
        (event,) = relay.query({"ids": [record.remote_id]})
        assert is_genuine(event, AUTHOR) and event["kind"] == 1 and event["id"] == record.idempotency_key
        assert post.title in event["content"] and post.url in event["content"] and _tag(event, "r") == post.url
        assert record.remote_url.startswith("https://njump.me/note1")
    assert notes_about(relay, site) == sorted(p.url for p in posts)
    assert run(tmp_path, raw(relay), posts).results == []
    assert notes_about(relay, site) == sorted(p.url for p in posts)


def test_an_in_flight_note_is_found_by_its_id_and_never_sent_again(relay, tmp_path):
    site = "https://found.example/"
    post = make_post(3, url=f"{site}blog/3/")
    assert not run(tmp_path, raw(relay), [post]).undone
    done = Ledger.read(tmp_path / "ledger.yml").record(post.key, "no")
    write_ledger(tmp_path / "ledger.yml", {(post.key, "no"): as_in_flight(done)})
    report = run(tmp_path, raw(relay), [post])
    assert not report.undone and "verify" in report.results[0].detail, report.results
    settled = Ledger.read(tmp_path / "ledger.yml").record(post.key, "no")
    assert settled.state == "done" and settled.remote_id == done.remote_id
    assert notes_about(relay, site) == [post.url]


def test_a_resend_of_the_same_note_is_a_duplicate_to_the_relay(relay, tmp_path):
    """The relay's own answer to the event sent again (the id chosen before the call): it has it,
    and it stores no second copy."""
    import asyncio

    from mkdocs_syndicate.channels import nostr_wire
    from mkdocs_syndicate.channels.nostr_events import signed, unsigned

    event = signed(unsigned(AUTHOR, int(FakeClock().time()), 1, [["r", "https://dup.example/"]], "twice"), KEY)
    first = asyncio.run(nostr_wire.publish(relay.url, event, 30))
    again = asyncio.run(nostr_wire.publish(relay.url, signed(event, KEY), 30))
    assert first.accepted is True and again.reason.startswith("duplicate:"), (first, again)
    assert len(relay.query({"ids": [event["id"]]})) == 1


def test_a_malformed_key_is_a_config_error_before_any_connection(relay, tmp_path):
    from mkdocs_syndicate.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        run(tmp_path, raw(relay, secret_key="nsec1notakey"), [make_post(1)])
    assert raised.value.setting == "channels.no.secret_key" and "nsec1notakey" not in str(raised.value)


# ---------------------------------------------------------------- articles, edits and removals


@pytest.fixture
def public(monkeypatch):
    yield from realserver_child.public_pages(monkeypatch)


def test_an_article_is_replaced_by_its_edit_and_deleted_by_its_address(relay, tmp_path, public):
    site = Site("http://article.example/", "Articles")
    kept = make_post(1, url=f"{site.url}blog/post-1/")
    post = make_post(4, url=f"{site.url}blog/post-4/", description="A first draft.", body_html="<p>The first body.</p>")
    public.live.update({"/blog/post-1/", "/blog/post-4/"})
    channel = raw(relay, long_form=True, removals="delete")
    assert not run(tmp_path, channel, [kept, post], site=site).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "no")
    assert made.remote_id == f"30023:{AUTHOR}:{made.idempotency_key}"
    (first,) = relay.query({"kinds": [30023], "authors": [AUTHOR], "#d": [made.idempotency_key]})
    assert "The first body." in first["content"] and _tag(first, "title") == post.title

    corrected = replace(post, description="A corrected summary.", body_html="<p>The corrected body.</p>")
    report = run(tmp_path, channel, [kept, corrected], clock=FakeClock(FakeClock().time() + 5), site=site)
    assert not report.undone and [r.detail.split(" (")[0] for r in report.results] == ["updated"], report.results
    (latest,) = relay.query({"kinds": [30023], "authors": [AUTHOR], "#d": [made.idempotency_key]})
    assert "The corrected body." in latest["content"] and latest["created_at"] > first["created_at"]
    assert _tag(latest, "published_at") == _tag(first, "published_at")
    assert run(tmp_path, channel, [kept, corrected], clock=FakeClock(FakeClock().time() + 6), site=site).results == []

    public.live.discard("/blog/post-4/")
    removed = run(tmp_path, channel, [kept], clock=FakeClock(FakeClock().time() + 10), site=site)
    assert [(r.post_key, r.state) for r in removed.results] == [(post.key, "deleted")], removed.results
    assert relay.query({"kinds": [30023], "authors": [AUTHOR], "#d": [made.idempotency_key]}) == []
    (deletion,) = relay.query({"kinds": [5], "authors": [AUTHOR], "#a": [made.remote_id]})
    assert ["e", latest["id"]] in deletion["tags"]


def test_a_removed_posts_note_is_deleted_once(relay, tmp_path, public):
    site = Site("http://removed.example/", "Removed")
    kept, post = (make_post(n, url=f"{site.url}blog/post-{n}/") for n in (1, 5))
    public.live.update({"/blog/post-1/", "/blog/post-5/"})
    channel = raw(relay, removals="delete")
    assert not run(tmp_path, channel, [kept, post], site=site).undone
    made = Ledger.read(tmp_path / "ledger.yml").record(post.key, "no")
    public.live.discard("/blog/post-5/")
    removed = run(tmp_path, channel, [kept], clock=FakeClock(FakeClock().time() + 5), site=site)
    assert [(r.post_key, r.state) for r in removed.results] == [(post.key, "deleted")], removed.results
    assert relay.query({"ids": [made.remote_id]}) == [] and notes_about(relay, site.url) == [kept.url]
    assert len(relay.query({"kinds": [5], "authors": [AUTHOR], "#e": [made.remote_id]})) == 1
    assert run(tmp_path, channel, [kept], site=site).results == []


# ---------------------------------------------------------------- kills around a send


def killed(proxy: KillingProxy, spec: Path, how: str, at: str, nth: int, **more: str) -> str:
    """A run of `spec` SIGKILLed at a client checkpoint, or by the proxy as the relay's `nth` OK
    passes (the relay stored the event, the answer never reached the client); where it landed."""
    log = spec.parent / "checkpoints.log"
    env = {"SYNDICATE_CHECKPOINT_LOG": str(log), **more}
    if how == "checkpoint":
        env["SYNDICATE_CRASH_AT"] = at
    child = start_child(spec, **env)
    if how != "checkpoint":
        proxy.arm(child.pid, nth)
    output, errors = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, output + errors
    last = log.read_text().splitlines()[-1].split("\t")[1]
    if how == "checkpoint":
        assert last == at.split(":")[0]
        return f"at checkpoint {last}"
    assert proxy.landed, "the proxy never killed the run"
    return proxy.landed


# The send kills the tier makes: the checkpoints, and the proxy's kill once the relay stored the
# event ("the request never reached the server" is the kill before the call's twin: the same
# ledger and relay, realserver_child.SAME_FOR_THE_SERVER).
KILLS = {
    name: kill
    for name, kill in realserver_child.send_kills("EVENT").items()
    if kill[0] == "checkpoint" or kill[0] == "proxy-after"
}


@pytest.mark.parametrize("where", [w for w in realserver_child.chosen(KILLS) if w in KILLS])
def test_killed_at_each_send_checkpoint_then_rerun_leaves_one_note_per_post(relay, tmp_path, where):
    from crashlab import STATS

    how, at, held = KILLS[where]
    site_url = f"https://kill-{uuid.uuid4().hex[:8]}.example/"
    with KillingProxy(relay.url) as proxy:
        spec = realserver_child.child_spec(tmp_path, site_url, "no", {**raw(relay), "relay": proxy.url})
        landed = killed(proxy, spec, how, at, nth=2)
        print(f"nostr-relay kill [{where}]: landed {landed}; the relay holds {len(notes_about(relay, site_url))}")
        STATS[f"realserver nostr kills landing {where}"] += 1
        assert len(notes_about(relay, site_url)) == held
        assert Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "no").state == "in_flight"
        child = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1))
        output, errors = child.communicate(timeout=120)
        assert child.returncode == 0, output + errors
    assert notes_about(relay, site_url) == [f"{site_url}blog/{n}/" for n in (1, 2, 3)]
    book = Ledger.read(tmp_path / "ledger.yml")
    for n in (1, 2, 3):
        record = book.record(f"blog/{n}/", "no")
        (event,) = relay.query({"ids": [record.remote_id]})
        assert record.state == "done" and _tag(event, "r") == f"{site_url}blog/{n}/"


# ---------------------------------------------------------------- kills around a deletion

# (where; whether the relay holds our deletion request once the kill has landed)
DELETE_KILLS = {
    "before the call (in_flight written)": ("checkpoint", "after_in_flight_write:1", False),
    "the relay stored the deletion, no answer came": ("proxy-after", "EVENT", True),
    "the answer came, nothing written yet": ("checkpoint", "after_response:1", True),
    "before deleted is written": ("checkpoint", "before_done_write:1", True),
}


@pytest.mark.parametrize("where", realserver_child.chosen(DELETE_KILLS))
def test_killed_around_a_deletion_then_rerun_leaves_the_note_deleted(relay, tmp_path, public, where):
    import json

    from crashlab import STATS

    how, at, stored = DELETE_KILLS[where]
    site_url = f"http://delete-{uuid.uuid4().hex[:8]}.example/"
    public.live.update({f"/blog/{n}/" for n in (1, 2, 3)})
    with KillingProxy(relay.url) as proxy:
        channel = {**raw(relay), "relay": proxy.url, "removals": "delete"}
        spec = realserver_child.child_spec(tmp_path, site_url, "no", channel)
        announcing = start_child(spec, **public.env)  # the three posts announced, first
        assert announcing.wait(timeout=120) == 0
        note = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "no").remote_id
        settings = json.loads(spec.read_text())
        settings["posts"] = [p for p in settings["posts"] if p["key"] != "blog/2/"]
        spec.write_text(json.dumps(settings))
        public.live.discard("/blog/2/")
        landed = killed(proxy, spec, how, at, nth=1, **public.env)
        deletions = relay.query({"kinds": [5], "authors": [AUTHOR], "#e": [note]})
        print(f"nostr-relay deletion kill [{where}]: landed {landed}; {len(deletions)} deletion(s) stored")
        STATS[f"realserver nostr deletion kills landing {where}"] += 1
        assert bool(deletions) == stored
        child = start_child(spec, CRASH_CLOCK_OFFSET=str(SETTLE + 1), **public.env)
        output, errors = child.communicate(timeout=120)
        assert child.returncode == 0, output + errors
    assert relay.query({"ids": [note]}) == []
    assert notes_about(relay, site_url) == [f"{site_url}blog/{n}/" for n in (1, 3)]
    assert 1 <= len(relay.query({"kinds": [5], "authors": [AUTHOR], "#e": [note]})) <= 2  # a repeat is harmless
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/2/", "no")
    assert record.state == "deleted" and record.op is None, record


# ---------------------------------------------------------------- several relays


@pytest.fixture(scope="module")
def second_relay(tmp_path_factory):
    yield from start_relay(tmp_path_factory.mktemp("nostr-relay-2"))


def lane(relay: Relay) -> str:
    return f"no@{relay.url.removeprefix('ws://')}"


def test_nostr_relays_each_pair_is_read_back_from_its_own_relay_before_a_resend(relay, second_relay, tmp_path):
    """`relays:` on nostr-relay twice: the note went to the first relay only (the second's
    answer was lost before it stored it); both records in_flight with that note's id. The rerun
    reads each relay: found on the first (nothing sent there), absent on the second (sent
    there), so each relay ends with the note once, and the ledger says so per relay."""
    site = "https://two-relays.example/"
    post = make_post(4, url=f"{site}blog/4/")
    one = {k: v for k, v in raw(relay).items() if k != "relay"}
    assert not run(tmp_path / "a", {**one, "relays": [relay.url]}, [post]).undone
    done = Ledger.read(tmp_path / "a" / "ledger.yml").record(post.key, lane(relay))
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml",
        {(post.key, lane(r)): as_in_flight(done) for r in (relay, second_relay)},
    )
    clock = FakeClock()
    clock.now += 3600  # past the settle time: an absent note may be sent again
    both = {**one, "relays": [relay.url, second_relay.url]}
    report = run(tmp_path / "b", both, [post], clock)
    by_lane = {r.channel: r.detail for r in report.results}
    assert "verify" in by_lane[lane(relay)] and "verify" not in by_lane[lane(second_relay)], by_lane
    book = Ledger.read(tmp_path / "b" / "ledger.yml")
    for r in (relay, second_relay):
        record = book.record(post.key, lane(r))
        assert record.state == "done" and record.remote_id == done.remote_id, (lane(r), record)
        assert notes_about(r, site) == [post.url]
