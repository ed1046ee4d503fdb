"""Channel types from other packages, through the `mkdocs_syndicate.channels` entry-point group:
read only when needed, refused by name when broken, and the sixth channel (a Matrix room, kept as
its own package under tests/plugins/) working end to end. The shared suites cover it too, with no
edit to them (tests/channel_specs.py)."""

from __future__ import annotations

import importlib.metadata

import httpx
import pytest
from conftest import SITE, ListReporter, as_in_flight, make_post, write_ledger

from mkdocs_syndicate import registry
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger

INSTALL = "pip install -e tests/plugins/mkdocs-syndicate-matrix (the README's test command does)"


@pytest.mark.unit
def test_the_matrix_package_is_installed_as_a_channel_plugin():
    names = {entry.name for entry in importlib.metadata.entry_points(group=registry.ENTRY_POINT_GROUP)}
    assert "matrix" in names, f"the sixth-channel package is not installed: {INSTALL}"
    assert registry.TYPES["matrix"].client_class().type_name == "matrix"


@pytest.mark.unit
def test_the_group_is_read_only_for_a_name_not_built_in_or_a_listing():
    types = registry._Types(registry.BUILT_IN)
    assert types["mastodon"].name == "mastodon" and "bluesky" in types
    assert not types._plugins_read  # a site of built-in types reads no package metadata
    assert "matrix" in types and types._plugins_read
    listed = registry._Types(registry.BUILT_IN)
    assert "matrix" in list(listed)


@pytest.mark.unit
def test_a_site_of_built_in_types_reads_no_package_metadata(monkeypatch):
    """What a quiet build looks up (its channels' services and secret settings) is by name: the
    entry-point group, about 50 ms of metadata scanning, is read only for a plugin's type."""

    def scanned(group):
        raise AssertionError("the entry-point group was read")

    monkeypatch.setattr(importlib.metadata, "entry_points", scanned)
    monkeypatch.setattr(registry, "TYPES", registry._Types(registry.BUILT_IN))
    raw = {"masto": {"type": "mastodon"}, "bsky": {"type": "bluesky", "label": "Bsky"}, "x": "not a mapping"}
    assert sorted(registry.named_in(raw)) == ["bluesky", "mastodon"]


@pytest.mark.unit
def test_a_broken_entry_is_refused_by_name(monkeypatch):
    class Entry:
        name, value = "pigeon", "pigeon_post:NOT_A_TYPE"

        def load(self):
            return "not a ChannelType"

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [Entry()])
    with pytest.raises(registry.PluginError, match=r"pigeon = pigeon_post:NOT_A_TYPE .* not a ChannelType"):
        registry._Types(registry.BUILT_IN)["pigeon"]


@pytest.mark.unit
def test_a_plugin_cannot_take_a_built_in_name(monkeypatch):
    class Entry:
        name, value = "mastodon", "evil:CHANNEL"

        def load(self):
            raise AssertionError("a built-in name is never loaded from a plugin")

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [Entry()])
    types = registry._Types(registry.BUILT_IN)
    assert list(types) and types["mastodon"].client.startswith("mkdocs_syndicate.channels.")


@pytest.mark.http
def test_a_sandbox_rehearsal_announces_to_the_plugin_channel(tmp_path, clock):
    from mkdocs_syndicate.sandbox import SandboxServer

    options = parse_options(
        {"room": {"type": "matrix"}},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=True,
        sending=True,
        sandbox_dir=tmp_path / "sandbox",
    )
    posts = [make_post(1), make_post(2)]
    report = send(options, posts, ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    with SandboxServer(tmp_path / "sandbox", registry.emulators()) as server:
        received = httpx.get(f"{server.url}/_sandbox/received").json()
        assert [item["announces"] for item in received["matrix"]] == [p.url for p in posts]
        link = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "room").remote_url
        assert "/matrix/to/#/" in link


def matrix(sandbox, **extra):
    from channel_specs import SPECS

    return {"room": SPECS["matrix"].raw(sandbox, **extra)}


@pytest.mark.http
def test_matrix_verify_proves_the_post_by_its_id_in_the_content_not_by_the_device(tmp_path, sandbox, clock):
    """An in_flight record is settled by the event whose content carries this pair's id, even
    when the homeserver forgot the transaction (no unsigned.transaction_id), and another post's
    message in the room is not taken for it."""
    sandbox.now = clock.time
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    send(options, [make_post(1), make_post(2)], ListReporter(), clock=clock)
    done = Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "room")
    for event in sandbox.emulators["matrix"].state["events"]:
        event["sent_by"] = "another-device-token"  # as if sent from a session since logged out
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/post-2/", "room"): as_in_flight(done)},
    )
    clock.now += 3600
    report = send(options, [make_post(2)], ListReporter(), clock=clock)
    assert [(r.state, "verify" in r.detail) for r in report.results] == [("done", True)], report.results
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "room").remote_id == done.remote_id
    assert len(sandbox.emulators["matrix"].state["events"]) == 2


@pytest.mark.http
def test_matrix_429_is_waited_out_as_its_body_says(tmp_path, sandbox, clock):
    """M_LIMIT_EXCEEDED gives `retry_after_ms` in its body; servers before spec v1.10 send no
    Retry-After header."""
    sandbox.now = clock.time
    sandbox.add_fault(
        {"channel": "matrix", "action": "status", "status": 429, "reset_in": 7, "retry_after_header": False}
    )
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    reporter = ListReporter()
    report = send(options, [make_post(1)], reporter, clock=clock)
    assert [r.state for r in report.results] == ["done"]
    assert [w for w in reporter.waits if "rate limited" in w[2]]
    assert any(abs(s - 7.0) < 0.01 for s in clock.sleeps), clock.sleeps


@pytest.mark.http
def test_matrix_a_server_that_forgot_the_transaction_still_posts_once(tmp_path, sandbox, clock):
    """The homeserver no longer knows the transaction id (restart, expired cache) and the answer
    is lost after the commit: the read finds the event by its content, nothing is sent twice."""
    sandbox.now = clock.time
    sandbox.set_quirks("matrix", ignore_idempotency_key=True)
    sandbox.add_fault({"channel": "matrix", "action": "drop_after"})
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    report = send(options, [make_post(1)], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.emulators["matrix"].state["events"]) == 1


@pytest.mark.http
def test_matrix_two_sites_in_one_room_each_find_only_their_own_message(tmp_path, sandbox, clock):
    """The same post path on two sites, announced to one room by one account: the second site's
    in_flight record is settled by its own message, never by the first site's."""
    from dataclasses import replace

    from mkdocs_syndicate.config.run import Site

    sandbox.now = clock.time
    other = Site("https://other.example/", "Other")
    here = make_post(1)
    there = replace(make_post(1), url="https://other.example/blog/post-1/")
    # The other site first: its message is the older one, so a read that took the first match of
    # the post path would find this site's newer message instead.
    for folder, site, post in (("there", other, there), ("here", SITE, here)):
        (tmp_path / folder).mkdir()
        options = parse_options(
            matrix(sandbox), ledger_path=tmp_path / folder / "ledger.yml", site=site, sandbox=False, sending=True
        )
        assert not send(options, [post], ListReporter(), clock=clock).undone
    ours = Ledger.read(tmp_path / "here" / "ledger.yml").record(here.key, "room")
    theirs = Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "room")
    assert ours.idempotency_key != theirs.idempotency_key and ours.remote_id != theirs.remote_id
    write_ledger(tmp_path / "there" / "ledger.yml", {(there.key, "room"): as_in_flight(theirs)})
    clock.now += 3600
    options = parse_options(
        matrix(sandbox), ledger_path=tmp_path / "there" / "ledger.yml", site=other, sandbox=False, sending=True
    )
    report = send(options, [there], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert Ledger.read(tmp_path / "there" / "ledger.yml").record(there.key, "room").remote_id == theirs.remote_id
    assert len(sandbox.emulators["matrix"].state["events"]) == 2
