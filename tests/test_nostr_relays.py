"""Nostr's `relays:` (docs/services/nostr.md): one channel, one lane per relay named
`<id>@<relay host>`, each (post, relay) pair recorded on its own and read back from its own relay
before any resend. Against two sandbox relays, each its own server with its own events."""

from __future__ import annotations

from dataclasses import replace

import pytest
from channel_specs import SPECS
from conftest import ListReporter, as_in_flight, make_post, write_ledger

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.content.posts import ChannelOverride
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import clients, emulators
from mkdocs_syndicate.sandbox import SandboxServer

KEY = "5" * 64


def lanes(**values):
    return parse_channels({"no": {"type": "nostr", "secret_key": KEY, **values}}, clients())


@pytest.mark.unit
def test_nostr_relays_are_one_lane_each_named_by_the_relays_host():
    parsed = lanes(relays=["wss://relay.damus.io", "https://nos.lol", "ws://127.0.0.1:7777"], long_form=True)
    assert [(c.id, c.options["relay"]) for c in parsed] == [
        ("no@relay.damus.io", "wss://relay.damus.io"),
        ("no@nos.lol", "wss://nos.lol"),
        ("no@127.0.0.1:7777", "ws://127.0.0.1:7777"),
    ]
    assert all(c.options["long_form"] and c.edits == "update" and c.type == "nostr" for c in parsed)
    assert [c.id for c in lanes(relay="wss://relay.damus.io")] == ["no"]  # one relay: the channel itself


@pytest.mark.unit
@pytest.mark.parametrize(
    ("values", "setting", "said"),
    [
        ({}, "channels.no.relay", "give one of relay"),
        ({"relay": "wss://a.example", "relays": ["wss://b.example"]}, "channels.no.relays", "not both"),
        ({"relays": ["wss://a.example", "wss://A.example/other"]}, "channels.no.relays", "on one host"),
        ({"relays": ["wss://a.example", "ws://b.example"]}, "channels.no.relays[1]", "ws:// on a non-loopback"),
    ],
)
def test_nostr_relays_wrong_settings_are_config_errors_naming_the_setting(values, setting, said):
    with pytest.raises(ConfigError) as caught:
        lanes(**values)
    assert setting in str(caught.value) and said in str(caught.value), caught.value


@pytest.mark.unit
def test_nostr_relays_lane_id_colliding_with_another_channel_is_refused():
    raw = {
        "no": {"type": "nostr", "secret_key": KEY, "relays": ["wss://a.example", "wss://b.example"]},
        "no@b.example": {"type": "nostr", "secret_key": KEY, "relay": "wss://c.example"},
    }
    with pytest.raises(ConfigError, match=r"no@b\.example"):
        parse_channels(raw, clients())


@pytest.mark.unit
def test_nostr_relays_front_matter_of_the_channel_applies_to_each_lane_unless_a_lane_is_named():
    post = make_post(1, overrides={"no": ChannelOverride(enabled=False), "no@b.example": ChannelOverride(True)})
    assert not post.wants("no@a.example") and post.wants("no@b.example") and not post.wants("no")
    assert make_post(2, overrides={"no": ChannelOverride(True, text="Hi")}).override("no@a.example").text == "Hi"


# ------------------------------------------------------------------ against two relays


@pytest.fixture
def second(tmp_path):
    with SandboxServer(tmp_path / "second-relay", emulators()) as server:
        yield server


def channel(first, second, **extra):
    raw = SPECS["nostr"].raw(first)
    other = SPECS["nostr"].raw(second)["relay"]
    return {**{k: v for k, v in raw.items() if k != "relay"}, "relays": [raw["relay"], other], **extra}


def lane_ids(first, second):
    return [f"no@{server.url.removeprefix('http://')}" for server in (first, second)]


def run(folder, raw, posts, clock):
    folder.mkdir(exist_ok=True)
    options = parse_options(
        {"no": raw},
        ledger_path=folder / "ledger.yml",
        site=Site("https://example.com/", "Example"),
        sandbox=False,
        sending=True,
    )
    return send(options, posts, ListReporter(), clock=clock)


def notes(server) -> list[str]:
    return [item["announces"] for item in server.emulators["nostr"].received(server.snapshot()["nostr"], server.url)]


@pytest.mark.http
def test_nostr_relays_each_relay_gets_the_note_and_a_record_of_its_own(tmp_path, sandbox, second, clock):
    sandbox.now = second.now = clock.time
    posts = [make_post(1), make_post(2)]
    report = run(tmp_path, channel(sandbox, second), posts, clock)
    assert sorted((r.channel, r.state) for r in report.results) == sorted(
        (lane, "done") for lane in lane_ids(sandbox, second) for _ in posts
    )
    assert notes(sandbox) == notes(second) == [p.url for p in posts]
    ledger = Ledger.read(tmp_path / "ledger.yml")
    for lane in lane_ids(sandbox, second):
        record = ledger.record("blog/post-1/", lane)
        assert record.state == State.DONE and record.remote_id == record.idempotency_key
    assert run(tmp_path, channel(sandbox, second), posts, clock).results == []  # nothing left


@pytest.mark.http
def test_nostr_relays_an_in_flight_pair_is_read_back_from_its_own_relay(tmp_path, sandbox, second, clock):
    """Both relays' records in_flight; the first relay has the note, the second does not (its
    answer was lost before it stored it): the first is found there and not sent again, the
    second is proved absent there and sent. A read of the wrong relay would get one of them wrong."""
    sandbox.now = second.now = clock.time
    post = make_post(1)
    run(tmp_path / "a", channel(sandbox, second), [post], clock)
    done = Ledger.read(tmp_path / "a" / "ledger.yml")
    first_lane, second_lane = lane_ids(sandbox, second)
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml",
        {("blog/post-1/", lane): as_in_flight(done.record("blog/post-1/", lane)) for lane in (first_lane, second_lane)},
    )
    second.state["nostr"]["events"].clear()  # the second relay never stored it
    clock.now += 3600  # past the settle time
    sent_before = len(sandbox.requests("nostr"))
    report = run(tmp_path / "b", channel(sandbox, second), [replace(post)], clock)
    by_lane = {r.channel: r for r in report.results}
    assert by_lane[first_lane].state == "done" and "verify" in by_lane[first_lane].detail, by_lane
    assert by_lane[second_lane].state == "done" and "verify" not in by_lane[second_lane].detail, by_lane
    assert notes(sandbox) == notes(second) == [post.url]
    assert [r["path"] for r in sandbox.requests("nostr")[sent_before:]] == ["/REQ"]  # read, nothing sent


@pytest.mark.unit
def test_nostr_relays_each_lanes_copy_is_linked_on_the_post_page_named_by_its_relay():
    """The page's links are by configured channel id; a lane's records (`no@<host>`) are its
    channel's, each labelled with its relay so that two copies are told apart."""
    from mkdocs_syndicate.content.crosslinks import copies
    from mkdocs_syndicate.ledger.schema import Record

    def done(url: str) -> Record:
        return Record(State.DONE, 1, "2026-12-01T00:00:00Z", remote_id=url[-4:], remote_url=url)

    records = {
        "no@relay.damus.io": done("https://njump.me/note1aaaa"),
        "no@nos.lol": done("https://njump.me/note1bbbb"),
        "masto": done("https://mastodon.social/@me/1"),
    }
    shown = [(c.channel, c.service, c.url) for c in copies(records, {"masto": "Mastodon", "no": "Nostr"})]
    assert shown == [
        ("masto", "Mastodon", "https://mastodon.social/@me/1"),
        ("no@nos.lol", "Nostr (nos.lol)", "https://njump.me/note1bbbb"),
        ("no@relay.damus.io", "Nostr (relay.damus.io)", "https://njump.me/note1aaaa"),
    ]
