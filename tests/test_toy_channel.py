"""Adding a channel type is one client module, one emulator module and one registry line: a toy
type, registered here and nowhere else, runs end to end — plan, send in the sandbox, the ledger,
the dashboard, a crash-free rerun."""

from __future__ import annotations

import pytest
from conftest import SITE, ListReporter, make_post

from mkdocs_syndicate import registry
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.preview import plan
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sandbox import SandboxServer

pytestmark = pytest.mark.http


@pytest.fixture
def toy_type():
    registry.register(registry.ChannelType("toy", "toychannel:ToyChannel", "toychannel:ToyEmulator"))
    yield
    del registry.TYPES["toy"]


def test_a_toy_channel_through_the_registry_alone(tmp_path, toy_type, clock):
    options = parse_options(
        {"play": {"type": "toy"}},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=True,
        sending=True,
        sandbox_dir=tmp_path / "sandbox",
    )
    posts = [make_post(1), make_post(2)]
    the_plan = plan(options, posts, clock)
    assert [p.prepared.description for p in the_plan.pairs] == [
        "Post 1 https://example.com/blog/post-1/",
        "Post 2 https://example.com/blog/post-2/",
    ]

    report = send(options, posts, ListReporter(), clock=clock)
    assert [(r.state, r.detail) for r in report.results] == [("done", "sent"), ("done", "sent")]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-2/", "play").remote_id == "2"
    assert send(options, posts, ListReporter(), clock=clock).results == []  # nothing left

    with SandboxServer(tmp_path / "sandbox", registry.emulators()) as server:  # the dashboard shows it too
        import httpx

        received = httpx.get(f"{server.url}/_sandbox/received").json()
        assert [item["announces"] for item in received["toy"]] == [p.url for p in posts]
        assert 'data-channel="toy"' in httpx.get(f"{server.url}/").text


def test_a_missing_toy_setting_is_named_like_any_other(tmp_path, toy_type):
    from mkdocs_syndicate.errors import ConfigError

    with pytest.raises(ConfigError, match=r"channels\.play\.token: missing"):
        parse_options(
            {"play": {"type": "toy", "endpoint": "https://toy.example"}},
            ledger_path=tmp_path / "l.yml",
            site=SITE,
            sandbox=False,
            sending=True,
        )
