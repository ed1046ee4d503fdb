"""Issue 36: a post page links a copy as the channel's own (rel=syndication, named after its
service) only when its URL is on that channel's service: a hand-edited ledger or a server's
answer cannot make the page vouch for another site, nor put a 200,000-character URL in it."""

from __future__ import annotations

import pytest
from conftest import write_ledger
from sites import mkdocs, post, write_site
from test_crosslinks import Links

from mkdocs_syndicate.content import crosslinks
from mkdocs_syndicate.content.crosslinks import Copy, copies
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.sources import ledger_copies

LONG = "https://m.example/@me/" + "1" * 200_000


def done(url: str) -> Record:
    return Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1", remote_url=url)


CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1234"},
    "devto": {"type": "forem", "api_key": "x-key-1234"},
    "bsky": {"type": "bluesky", "handle": "me.example", "app_password": "abcd-efgh-ijkl-mnop"},
    "weibo": {"type": "weibo", "access_token": "x-token-1234", "rip": "203.0.113.7"},
    "ping": {"type": "indexnow"},
}


@pytest.mark.unit
@pytest.mark.parametrize(
    "channel, own, other",
    [
        ("masto", "https://m.example/@me/1", "https://evil.example/phish"),
        ("devto", "https://dev.to/me/a-1", "https://dev.to.evil.example/me/a-1"),
        ("bsky", "https://bsky.app/profile/me.example/post/3k", "https://bsky.app/profile/someone.else/post/3k"),
        ("weibo", "https://m.weibo.cn/status/123", "https://weibo.evil.example/status/123"),
        ("ping", "https://example.com/x", "https://example.com/x"),  # IndexNow has no copies to link
    ],
)
def test_each_channel_type_knows_its_own_copies(channel, own, other):
    is_own = ledger_copies.own_urls(CHANNELS, "https://example.com/")
    assert is_own(channel, own) is (channel != "ping")
    assert is_own(channel, other) is False
    assert is_own("not-configured", own) is False


@pytest.mark.unit
def test_a_copy_not_on_its_channels_service_is_not_linked_and_said_once():
    said: list[str] = []
    vetting = crosslinks.Vetting(ledger_copies.own_urls(CHANNELS, "https://example.com/"), warn=said.append)
    too_long = LONG.replace("m.example/@me", "m.weibo.cn/status")
    records = {
        "masto": done("https://evil.example/phish"),
        "devto": done("http://dev.to/me/a-1"),
        "bsky": done("https://bsky.app/profile/me.example/post/3k"),
        "weibo": done(too_long),
    }
    labels = {"masto": "Mastodon", "devto": "DEV", "bsky": "Bluesky", "weibo": "Weibo"}
    for _ in range(3):  # a page is made more than once (the blog's index, links_rebuild)
        found = copies(records, labels, vetting=vetting, post="posts/a/")
        assert found == [Copy("bsky", "Bluesky", "https://bsky.app/profile/me.example/post/3k")]
    assert said == [
        "posts/a/: the masto copy is not linked on the post's page: its URL is not on masto's own service "
        "(host evil.example)",
        "posts/a/: the devto copy is not linked on the post's page: its URL is plain http:// (https:// only)",
        f"posts/a/: the weibo copy is not linked on the post's page: its URL is {len(too_long)} characters "
        "long (at most 2048)",
    ]


@pytest.mark.unit
def test_without_vetting_a_copy_url_is_still_capped():
    assert copies({"masto": done(LONG)}, {"masto": "Mastodon"}) == []


@pytest.mark.unit
def test_a_sandbox_build_links_the_emulators_loopback_copies():
    never = crosslinks.Vetting(lambda channel, url: False, sandbox=True)
    assert never.refusal("masto", "http://127.0.0.1:8787/mastodon/@sandbox/1") is None
    assert never.refusal("masto", "https://evil.example/phish") is not None
    strict = crosslinks.Vetting(lambda channel, url: True)
    assert strict.refusal("masto", "javascript:alert(1)//m.example") is not None
    assert strict.refusal("masto", "https://u:p@m.example/@me/1") is not None


@pytest.mark.process
def test_a_built_page_links_only_the_copies_on_their_channels_service(tmp_path):
    config = write_site(tmp_path, {"mode": "plan", "channels": CHANNELS}, {"a.md": post("Alpha")})
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("posts/a/", "masto"): done("https://evil.example/phish"),
            ("posts/a/", "devto"): done("https://dev.to/me/alpha-1"),
            ("posts/a/", "bsky"): done("https://bsky.app/profile/me.example/post/" + "3" * 200_000),
        },
    )
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / "posts" / "a" / "index.html").read_text()
    assert Links(page).found == [["syndication", "https://dev.to/me/alpha-1", "DEV"]]
    assert "evil.example" not in page and "3" * 3000 not in page
    warnings = [line for line in result.stderr.splitlines() if "not linked on the post's page" in line]
    assert len(warnings) == 2 and all(line.startswith("WARNING") for line in warnings), result.stderr
    assert "posts/a/: the masto copy" in warnings[0] and "posts/a/: the bsky copy" in warnings[1]
