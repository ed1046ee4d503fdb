"""Untrusted input on the surfaces added after the core was hardened: a post's image path, a
standalone syndicate.yml, misspelt settings. None may read a file outside the built site, run
code, or turn a typo into "nothing to do"."""

from __future__ import annotations

import os

import pytest
from conftest import ListReporter, make_post
from test_channel_contracts import SPECS, remote_posts
from test_channel_specifics import PNG

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Options, Site
from mkdocs_syndicate.content.images import site_image, sniff
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.registry import clients

SITE = "https://example.com/"


@pytest.fixture
def built(tmp_path):
    site_dir = tmp_path / "work" / "site"
    (site_dir / "img").mkdir(parents=True)
    (site_dir / "img" / "card.png").write_bytes(PNG)
    (tmp_path / "work" / ".git").mkdir()
    (tmp_path / "work" / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n")
    return site_dir


@pytest.mark.unit
@pytest.mark.parametrize(
    "image",
    [
        "https://example.com/../.git/config",
        "https://example.com/%2e%2e/.git/config",
        "https://example.com/img/../../.git/config",
        "https://example.com/../../../../proc/self/environ",
    ],
)
def test_an_image_path_outside_the_built_site_is_never_read(built, image):
    found, why = site_image(image, SITE, str(built), 1_000_000)
    assert found is None and ("outside the built site" in why or "not a file" in why), why


@pytest.mark.unit
def test_a_symlink_out_of_the_built_site_is_not_followed(built):
    os.symlink(built.parent / ".git" / "config", built / "img" / "innocent.png")
    found, why = site_image("https://example.com/img/innocent.png", SITE, str(built), 1_000_000)
    assert found is None and "outside the built site" in why


@pytest.mark.unit
def test_an_image_is_an_image_by_its_bytes_and_its_size(built):
    (built / "img" / "notes.png").write_text("not an image at all")
    found, why = site_image("https://example.com/img/notes.png", SITE, str(built), 1_000_000)
    assert found is None and "not a PNG, JPEG, GIF or WebP" in why
    found, why = site_image("https://example.com/img/card.png", SITE, str(built), 10)
    assert found is None and "larger than 10 bytes" in why
    found, why = site_image("https://example.com/img/card.png?v=2", SITE, str(built), 1_000_000)
    assert found is not None and found.mime == "image/png" and found.data == PNG and not why
    assert sniff(b"\xff\xd8\xff\xe0") == "image/jpeg" and sniff(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"


@pytest.mark.http
def test_a_traversing_image_posts_without_a_thumbnail_and_says_so(built, sandbox, clock, tmp_path):
    site = Site(SITE, "Example", str(built))
    options = Options(
        ledger_path=tmp_path / "ledger.yml",
        site=site,
        channels=parse_channels({"ch": SPECS["bluesky"].raw(sandbox)}, clients()),
    )
    post = make_post(1, image="https://example.com/../.git/config")
    report = send(options, [post], ListReporter(), clock=clock)
    assert not report.undone
    assert any("outside the built site" in w for w in report.warnings), report.warnings
    assert sandbox.snapshot()["bluesky"]["blobs"] == {}
    assert "thumb" not in remote_posts(sandbox, "bluesky")[0]["value"]["embed"]["external"]


@pytest.mark.http
def test_the_bluesky_emulator_refuses_a_thumb_that_is_not_an_image(sandbox):
    """As the PDS: the blob's type is sniffed from its bytes; a record whose thumb is not image/* is
    refused. (Text sent as image/png stays image/png there, and is taken: the client's own sniffing
    is what keeps it out; tests/test_realserver_bluesky.py checks both against the real PDS.)"""
    import httpx

    base = sandbox.url + "/bluesky/xrpc"
    session = httpx.post(
        f"{base}/com.atproto.server.createSession",
        json={"identifier": "sandbox.bsky.social", "password": "sandbox-bsky-app-password"},
    ).json()
    auth = {"Authorization": f"Bearer {session['accessJwt']}"}
    base = session["didDoc"]["service"][0]["serviceEndpoint"] + "/xrpc"  # the account's PDS
    blob = httpx.post(
        f"{base}/com.atproto.repo.uploadBlob",
        content=b"%PDF-1.4\n%secret",
        headers={**auth, "Content-Type": "image/png"},
    ).json()["blob"]
    assert blob["mimeType"] == "application/pdf"
    record = {
        "$type": "app.bsky.feed.post",
        "text": "x",
        "createdAt": "2026-12-01T00:00:00.000Z",
        "embed": {
            "$type": "app.bsky.embed.external",
            "external": {"uri": "https://example.com/", "title": "t", "description": "", "thumb": blob},
        },
    }
    answer = httpx.post(
        f"{base}/com.atproto.repo.createRecord",
        headers=auth,
        json={"repo": session["did"], "collection": "app.bsky.feed.post", "record": record},
    )
    assert answer.status_code == 400 and 'Expected \\"image/*\\" (got \\"application/pdf\\")' in answer.text


# ------------------------------------------------------------------ syndicate.yml and settings


@pytest.mark.unit
def test_syndicate_yml_runs_no_python_tags_but_keeps_env(tmp_path, monkeypatch):
    from mkdocs_syndicate.config.standalone import load_standalone

    marker = tmp_path / "pwned"
    (tmp_path / "syndicate.yml").write_text(
        f"site_url: https://example.com/\nsite_name: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_standalone(tmp_path / "syndicate.yml")
    assert "syndicate.yml" in str(caught.value) and not marker.exists()
    monkeypatch.setenv("SITE_NAME_FOR_TEST", "From the environment")
    (tmp_path / "syndicate.yml").write_text("site_url: https://example.com/\nsite_name: !ENV SITE_NAME_FOR_TEST\n")
    site, _ = load_standalone(tmp_path / "syndicate.yml")
    assert site.site_name == "From the environment"


@pytest.mark.unit
def test_a_misspelt_setting_in_syndicate_yml_is_an_error_naming_the_nearest(tmp_path):
    from mkdocs_syndicate.config.standalone import load_standalone

    (tmp_path / "syndicate.yml").write_text("site_url: https://example.com/\nchanels: {}\n")
    with pytest.raises(ConfigError, match=r"syndicate\.yml: chanels: unknown setting; did you mean 'channels'\?"):
        load_standalone(tmp_path / "syndicate.yml")


@pytest.mark.unit
def test_a_misspelt_plugin_setting_fails_the_mkdocs_config(tmp_path):
    from mkdocs_syndicate.plugin import SyndicatePlugin

    errors, warnings = SyndicatePlugin().load_config({"chanels": {}, "mode": "plan"}, str(tmp_path / "mkdocs.yml"))
    assert [(key, str(error)) for key, error in errors] == [("chanels", "unknown setting; did you mean 'channels'?")]
    assert not [w for w in warnings if w[0] == "chanels"]


# ------------------------------------------------------------------ feeds


@pytest.mark.http
@pytest.mark.parametrize(
    "url,secrets",
    [
        ("http://someone:hunter2-secret@127.0.0.1:1/feed.xml", ["hunter2-secret", "someone"]),
        ("http://127.0.0.1:1/feed.xml?access_token=tok-123456&page=2", ["tok-123456"]),
        ("http://127.0.0.1:1/feed.xml?api_key=key-98765", ["key-98765"]),
    ],
)
def test_credentials_in_a_feed_url_are_never_printed(url, secrets):
    from mkdocs_syndicate.errors import FeedError
    from mkdocs_syndicate.redaction import shown_url
    from mkdocs_syndicate.sources.feed import read_feed

    with pytest.raises(FeedError) as caught:
        read_feed(url, SITE)
    for secret in secrets:
        assert secret not in str(caught.value)
        assert secret not in shown_url(url)
    assert "127.0.0.1:1/feed.xml" in str(caught.value)
    assert "page=2" in shown_url("http://h/f?access_token=x&page=2")


@pytest.mark.unit
def test_a_local_feed_that_is_a_device_a_fifo_or_too_large_is_refused(tmp_path, monkeypatch):
    from mkdocs_syndicate.errors import FeedError
    from mkdocs_syndicate.sources import feed as feeds

    with pytest.raises(FeedError, match="not a regular file"):
        feeds.read_feed("/dev/zero", SITE)
    fifo = tmp_path / "feed.fifo"
    os.mkfifo(fifo)
    with pytest.raises(FeedError, match="not a regular file"):  # and it does not hang
        feeds.read_feed(str(fifo), SITE)
    big = tmp_path / "big.xml"
    big.write_bytes(b"<rss>" + b" " * 200 + b"</rss>")
    monkeypatch.setattr(feeds, "MAX_FEED_BYTES", 100)
    with pytest.raises(FeedError, match="larger than 100 bytes"):
        feeds.read_feed(str(big), SITE)


# ---------------------------------------------------------------- what a feed can carry


def _json_feed(folder, sandbox, **item):
    import json

    from test_feed import JSON_FEED, standalone_site

    site = standalone_site(folder, sandbox)
    feed = json.loads(json.dumps(JSON_FEED))
    feed["items"][0].update(item)
    (site / "public" / "feed.json").write_text(json.dumps(feed), encoding="utf-8")
    return site


@pytest.mark.process
def test_escape_sequences_in_a_feed_never_reach_the_terminal(tmp_path, sandbox):
    from test_feed import cli

    evil = "\x1b[2J\x1b]0;owned\x07\x1b[31m"
    site = _json_feed(
        tmp_path,
        sandbox,
        title=f"Title {evil}",
        url=f"https://example.com/posts/{evil}hello/",
        summary=f"Summary {evil}",
        tags=[f"tag{evil}"],
        image=f"/img/{evil}.png",
    )
    outputs = []
    for command in (
        ["plan", "--feed", "public/feed.json"],
        ["run", "--feed", "public/feed.json"],
        ["status"],
        ["plan", "--feed", "public/nothing.json"],
    ):
        result = cli(site, *command)
        outputs.append(result.stdout + result.stderr)
        assert "\x1b" not in outputs[-1] and "\x07" not in outputs[-1], (command, outputs[-1])
    # The title goes out without its escapes (issue 36: a public post is no place for them, even
    # shown escaped), and was sent.
    assert "Title\n" in outputs[0] and "Title \\x1b" not in outputs[0] and len(sandbox.requests()) > 0


@pytest.mark.process
@pytest.mark.parametrize(
    "item,expected",
    [
        ({"title": "Bad \ud800 title"}, "its title holds a lone surrogate (U+D800) at character 4"),
        ({"content_html": "<p>\udfff</p>"}, "its body holds a lone surrogate (U+DFFF)"),
        ({"url": "https://example.com/posts/" + "a" * 1100 + "/"}, "is 1107 characters as a ledger key"),
    ],
)
def test_a_feed_entry_no_ledger_could_hold_is_refused_by_name_before_any_request(tmp_path, sandbox, item, expected):
    from test_feed import cli

    site = _json_feed(tmp_path, sandbox, **item)
    result = cli(site, "run", "--feed", "public/feed.json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "feed public/feed.json: item 1 (" in result.stderr and expected in result.stderr, result.stderr
    assert len(result.stderr) < 1000  # the entry is named, not its whole link
    assert sandbox.requests() == [] and not (site / "ledger.yml").exists()


@pytest.mark.unit
def test_a_character_reference_feedparser_cannot_take_is_a_feed_error(tmp_path):
    from test_feed import ATOM

    from mkdocs_syndicate.errors import FeedError
    from mkdocs_syndicate.sources.feed import read_feed

    feed = tmp_path / "atom.xml"
    feed.write_text(ATOM.replace("<title>Group commits</title>", "<title>Bad &#xD800; title</title>"))
    with pytest.raises(FeedError, match=r"atom\.xml: not a feed this tool can read"):
        read_feed(str(feed), SITE)
