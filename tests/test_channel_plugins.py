"""Channel types from other packages, through the `mkdocs_syndicate.channels` entry-point group:
read only when needed, refused by name when broken, and one from an installed distribution (the
toy channel of tests/toychannel.py, declared by a real `.dist-info` entry point as pip would
install it) working end to end. Matrix, once such a package, is built in (issue 37)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import httpx
import pytest
from conftest import SITE, ListReporter, make_post

from mkdocs_syndicate import registry
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.store import Ledger


def install_toy_package(folder: Path) -> Path:
    """A distribution `toy-channel 1.0` whose one entry point declares the channel type `toy`:
    what `pip install` of a channel package leaves in site-packages (its module, tests/toychannel.py,
    is importable already)."""
    info = folder / "toy_channel-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-channel\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\ntoy = toychannel:CHANNEL\n")
    return folder


@pytest.fixture
def toy_installed(tmp_path, monkeypatch):
    """The toy package installed into a folder on sys.path, with the registry as at the start of
    a command (the group not read yet). The registry object is reset in place, not replaced:
    modules imported earlier hold it by name."""
    monkeypatch.syspath_prepend(str(install_toy_package(tmp_path / "site-packages")))
    for name, value in vars(registry._Types(registry.BUILT_IN)).items():
        monkeypatch.setattr(registry.TYPES, name, value)
    monkeypatch.delitem(sys.modules, "toychannel", raising=False)


@pytest.mark.unit
def test_an_installed_package_declares_a_channel_type(toy_installed):
    names = {entry.name for entry in importlib.metadata.entry_points(group=registry.ENTRY_POINT_GROUP)}
    assert "toy" in names
    kind = registry.TYPES["toy"]
    assert kind.client_class().type_name == "toy"
    assert kind.origin.startswith("(from package toy-channel 1.0, entry point toy = toychannel:CHANNEL")


@pytest.mark.unit
def test_matrix_is_built_in_and_needs_no_package(monkeypatch):
    """Issue 37: `type: matrix` works with only this package installed."""

    def scanned(group):
        raise AssertionError("the entry-point group was read")

    monkeypatch.setattr(importlib.metadata, "entry_points", scanned)
    types = registry._Types(registry.BUILT_IN)
    assert types["matrix"].client == "mkdocs_syndicate.channels.matrix:MatrixChannel"
    assert types["matrix"].client_class().type_name == "matrix" and not types["matrix"].origin
    assert types["matrix"].emulator_class().name == "matrix"


@pytest.mark.unit
def test_the_group_is_read_only_for_a_name_not_built_in_or_a_listing(toy_installed):
    types = registry._Types(registry.BUILT_IN)
    assert types["mastodon"].name == "mastodon" and "bluesky" in types and "matrix" in types
    assert not types._plugins_read  # a site of built-in types reads no package metadata
    assert "toy" in types and types._plugins_read
    listed = registry._Types(registry.BUILT_IN)
    assert "toy" in list(listed)


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
def test_a_broken_plugin_s_error_is_in_the_project_s_error_tree(monkeypatch):
    """A caller that catches what this package raises on purpose (SyndicateError) catches it, and
    its text is escaped as every such error's is; it stays an ImportError for those that catch that."""

    class Entry:
        name, value = "pigeon", "pigeon_post:CHANNEL"

        def load(self):
            raise RuntimeError("the pigeon\x1b[2J flew away")

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [Entry()])
    with pytest.raises(SyndicateError) as caught:
        registry._Types(registry.BUILT_IN)["pigeon"]
    assert isinstance(caught.value, ImportError) and isinstance(caught.value, registry.PluginError)
    assert "\x1b" not in str(caught.value) and "pigeon_post:CHANNEL" in str(caught.value)


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
def test_a_sandbox_rehearsal_announces_to_the_plugin_channel(tmp_path, clock, toy_installed):
    from mkdocs_syndicate.sandbox import SandboxServer

    options = parse_options(
        {"play": {"type": "toy"}},
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
        assert [item["announces"] for item in received["toy"]] == [p.url for p in posts]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "play").remote_id == "2"
