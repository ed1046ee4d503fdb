"""Where client and emulator were wrong together (docs/design/testing.md, "Fidelity"): each
test pins the service's documented rule, so a client that drifts from it fails against its
emulator, and an emulator that drifts fails here."""

from __future__ import annotations

import pytest
from conftest import SITE, ListReporter, make_post
from test_channel_contracts import SPECS

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http


def run(folder, channels, posts, clock, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options)
    return send(opts, posts, ListReporter(), clock=clock)


# ------------------------------------------------------------------ Weibo: rip is required


def weibo(sandbox, **extra):
    raw = SPECS["weibo"].raw(sandbox, **extra)
    return {"weibo": raw}


def test_weibo_send_mode_requires_rip_naming_the_setting(tmp_path, sandbox):
    channels = weibo(sandbox)
    del channels["weibo"]["rip"]
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: missing .*public IP address.*WEIBO_RIP"):
        parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: missing"):  # the sandbox too
        parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=True, sending=True)
    parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=False)


@pytest.mark.parametrize("value", ["localhost", "1.2.3", "my-ip", "203.0.113.7/24"])
def test_weibo_rip_must_be_an_ip_address(tmp_path, sandbox, value):
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: .* is not an IP address"):
        parse_options(weibo(sandbox, rip=value), ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False, sending=True)


def test_weibo_sends_rip_and_the_emulator_refuses_a_share_without_it(tmp_path, sandbox, clock):
    import httpx

    report = run(tmp_path, weibo(sandbox, rip="2001:db8::7"), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"]
    answer = httpx.post(
        f"{sandbox.url}/weibo/2/statuses/share.json",
        data={"access_token": "sandbox-weibo-access-token", "status": "x https://example.com/"},
    )
    assert answer.status_code == 400 and answer.json()["error_code"] == 10016
    assert "rip" in answer.json()["error"]


# ------------------------------------------------------------------ IndexNow: 202 is not done


def test_indexnow_202_keeps_the_urls_for_the_next_run_until_a_200(tmp_path, sandbox, clock):
    site = tmp_path / "site"
    site.mkdir()
    (site / "fresh-key-0001.txt").write_text("fresh-key-0001")  # the built (deployed) site
    sandbox.key_file_root = site
    channels = {"ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "fresh-key-0001"}}
    posts = [make_post(1), make_post(2)]
    first = run(tmp_path, channels, posts, clock)
    assert [r.state for r in first.results] == ["waiting", "waiting"] and not first.undone
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "ping")
    assert record.state == "in_flight" and record.error.startswith("202 accepted, key validation pending")
    from test_sandbox import checked

    assert checked(sandbox, "fresh-key-0001") == "valid"  # the engine fetched the key file over HTTP

    second = run(tmp_path, channels, posts, clock)
    assert [r.state for r in second.results] == ["done", "done"]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "ping").state == "done"
    assert len(sandbox.snapshot()["indexnow"]["pings"]) == 2
    assert run(tmp_path, channels, posts, clock).results == []


def test_an_engine_that_answers_202_for_ever_gets_the_urls_five_times_then_they_are_done(tmp_path, sandbox, clock):
    """Every build pinged the same URLs and rewrote the ledger, for ever. A pair received five
    times (202 each time) is done, with a note that says so, and `status` shows that note."""
    from click.testing import CliRunner

    from mkdocs_syndicate.cli import main
    from mkdocs_syndicate.engine.policy import MAX_ACCEPTED_SENDS

    channels = {"ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "fresh-key-0003"}}
    sandbox.add_fault({"channel": "indexnow", "action": "status", "status": 202, "body": "", "times": 100})
    posts = [make_post(1), make_post(2)]
    for build in range(1, MAX_ACCEPTED_SENDS):
        report = run(tmp_path, channels, posts, clock)
        assert [r.state for r in report.results] == ["waiting", "waiting"], (build, report.results)
    last = run(tmp_path, channels, posts, clock)
    assert [r.state for r in last.results] == ["done", "done"] and not last.undone, last.results
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "ping")
    assert record.state == "done" and record.attempts == MAX_ACCEPTED_SENDS
    assert record.note == "received 5 times and never confirmed (202 each time); done, not sent again"
    assert run(tmp_path, channels, posts, clock).results == []  # and never pinged again
    assert len(sandbox.requests("indexnow")) == MAX_ACCEPTED_SENDS
    import yaml

    (tmp_path / "syndicate.yml").write_text(yaml.safe_dump({"site_url": SITE.url, "channels": channels}))
    shown = CliRunner().invoke(main, ["status", "-f", str(tmp_path / "syndicate.yml")])
    assert "done       ping" in shown.output and "never confirmed (202 each time)" in shown.output, shown.output


def test_indexnow_key_file_never_deployed_fails_with_403_after_the_202(tmp_path, sandbox, clock):
    sandbox.key_file_root = tmp_path / "empty-site"
    (tmp_path / "empty-site").mkdir()
    channels = {"ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "fresh-key-0002"}}
    run(tmp_path, channels, [make_post(1)], clock)
    from test_sandbox import checked

    assert checked(sandbox, "fresh-key-0002") == "invalid"
    report = run(tmp_path, channels, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["failed"]
    assert "403" in report.results[0].detail and "deploy the site" in report.results[0].detail


# ------------------------------------------------------------------ where a URL ends


def test_mastodon_counts_punctuation_after_a_url_as_characters(tmp_path, sandbox, clock):
    """twitter-text ends "(https://example.com/p/)." before ")."; a client that counted them
    inside the URL (23) would cut the text 2 characters too long, and Mastodon would refuse it."""
    from mkdocs_syndicate.channels.mastodon_text import mastodon_length
    from mkdocs_syndicate.sandbox.mastodon_text import countable_length

    assert mastodon_length("(https://example.com/p/).") == countable_length("(https://example.com/p/).") == 26
    post = make_post(1, description="word " * 200)
    raw = {
        "type": "mastodon",
        "instance": sandbox.url + "/mastodon",
        "token": "sandbox-mastodon-token",
        "template": "{{ title }}: {{ description }} ({{ url }}).",
    }
    report = run(tmp_path, {"masto": raw}, [post], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    text = sandbox.snapshot()["mastodon"]["statuses"][0]["text"]
    assert 494 <= countable_length(text) <= 500  # cut to the limit, after a whole word ("word " is 5)
    assert 'href="https://example.com/blog/post-1/"' in sandbox.snapshot()["mastodon"]["statuses"][0]["content"]


def test_bluesky_link_facets_end_where_the_app_ends_them(tmp_path, sandbox, clock):
    raw = {**SPECS["bluesky"].raw(sandbox), "template": "{{ title }} ({{ url }}). More: {{ url }}!"}
    run(tmp_path, {"bsky": raw}, [make_post(1)], clock)
    (stored,) = sandbox.snapshot()["bluesky"]["records"].values()
    record = stored["value"]
    links = [f for f in record["facets"] if f["features"][0]["$type"].endswith("#link")]
    assert [f["features"][0]["uri"] for f in links] == ["https://example.com/blog/post-1/"] * 2
    data = record["text"].encode()
    assert all(
        data[f["index"]["byteStart"] : f["index"]["byteEnd"]] == b"https://example.com/blog/post-1/" for f in links
    )


def test_bluesky_hashtags_over_64_graphemes_are_left_out_with_a_warning(tmp_path, sandbox, clock):
    long_tag = "Ä" * 65
    report = run(tmp_path, {"bsky": SPECS["bluesky"].raw(sandbox)}, [make_post(1, tags=("short", long_tag))], clock)
    assert [r.state for r in report.results] == ["done"]
    assert any("longer than bsky's 64 characters" in w for w in report.warnings), report.warnings
    (stored,) = sandbox.snapshot()["bluesky"]["records"].values()
    tags = [f["features"][0]["tag"] for f in stored["value"]["facets"] if "tag" in f["features"][0]]
    assert tags == ["short"] and long_tag not in stored["value"]["text"]


def test_the_bluesky_emulator_refuses_a_tag_facet_over_64_graphemes(sandbox):
    import httpx

    entry = f"{sandbox.url}/bluesky/xrpc"
    session = httpx.post(
        f"{entry}/com.atproto.server.createSession",
        json={"identifier": "sandbox.bsky.social", "password": "sandbox-bsky-app-password"},
    ).json()
    pds = session["didDoc"]["service"][0]["serviceEndpoint"] + "/xrpc"
    text = "#" + "a" * 65
    record = {
        "$type": "app.bsky.feed.post",
        "text": text,
        "createdAt": "2026-12-03T00:00:00.000Z",
        "facets": [
            {
                "index": {"byteStart": 0, "byteEnd": len(text)},
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "a" * 65}],
            }
        ],
    }
    answer = httpx.post(
        f"{pds}/com.atproto.repo.putRecord",
        headers={"Authorization": f"Bearer {session['accessJwt']}"},
        json={"repo": session["did"], "collection": "app.bsky.feed.post", "rkey": "3lenax2ss2227", "record": record},
    )
    assert answer.status_code == 400 and "64 graphemes" in answer.json()["message"]
    record["facets"], record["langs"] = [], ["en_US"]
    answer = httpx.post(
        f"{pds}/com.atproto.repo.putRecord",
        headers={"Authorization": f"Bearer {session['accessJwt']}"},
        json={"repo": session["did"], "collection": "app.bsky.feed.post", "rkey": "3lenax2ss2227", "record": record},
    )
    assert answer.status_code == 400 and "langs" in answer.json()["message"]
    sandbox.state["bluesky"]["records"].clear()


@pytest.mark.parametrize("language", ["en_US", "english!", "e", "en-", "english", "deutsch", "EN_us", "en-QQQQ"])
def test_bluesky_language_must_be_a_tag_the_registry_knows(tmp_path, sandbox, language):
    """`english` and `deutsch` are well-formed (5-8 letters) but no language: the PDS refuses them
    (its strict check wants a 2-3 letter primary subtag), as does the official SDK."""
    with pytest.raises(ConfigError, match=r"channels\.bsky\.language: .* is not a BCP 47 language tag"):
        parse_options(
            {"bsky": SPECS["bluesky"].raw(sandbox, language=language)},
            ledger_path=tmp_path / "l.yml",
            site=SITE,
            sandbox=False,
            sending=False,
        )


@pytest.mark.parametrize(
    "language, sent",
    [
        ("EN", "en"),
        ("En-US", "en-US"),
        ("pt-br", "pt-BR"),
        ("ZH-hant-tw", "zh-Hant-TW"),
        ("de-CH-1996", "de-CH-1996"),
        ("en-US-x-Twain", "en-US-x-twain"),
    ],
)
def test_bluesky_language_is_sent_in_the_registrys_case_which_the_sdk_and_the_server_take(
    tmp_path, sandbox, clock, language, sent
):
    from atproto_client.models.string_formats import LANG_RE  # the official SDK's strict rule

    report = run(tmp_path, {"bsky": SPECS["bluesky"].raw(sandbox, language=language)}, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    (record,) = [r["value"] for r in sandbox.snapshot()["bluesky"]["records"].values()]
    assert record["langs"] == [sent] and LANG_RE.match(sent)


@pytest.mark.parametrize(
    "langs, accepted",
    [
        (["EN"], False),
        (["english"], False),
        (["en_US"], False),
        (["e"], False),
        (["en", "de", "fr", "it"], False),
        (["de-1996-1996"], False),
        (["pt-br"], True),
        (["i-klingon"], True),
        (["x-private"], True),
        (["qaa"], True),
        (["en-US-u-ca-gregory"], True),
    ],
)
def test_the_bluesky_emulator_checks_langs_as_the_pds_does(sandbox, langs, accepted):
    """The reference PDS's strict `language` format (atproto syntax `parseLanguageString`, asked of
    the server itself in tests/test_realserver_bluesky.py): well-formed, no repeated variant, and a
    lower-case 2-3 letter primary subtag. The emulator does the same, not what our client sends."""
    import httpx

    session = httpx.post(
        f"{sandbox.url}/bluesky/xrpc/com.atproto.server.createSession",
        json={"identifier": "sandbox.bsky.social", "password": "sandbox-bsky-app-password"},
    ).json()
    record = {"$type": "app.bsky.feed.post", "text": "hi", "createdAt": "2026-12-04T00:00:00.000Z", "langs": langs}
    answer = httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.putRecord",
        headers={"Authorization": f"Bearer {session['accessJwt']}"},
        json={"repo": session["did"], "collection": "app.bsky.feed.post", "rkey": "3lenax2ss2227", "record": record},
    )
    assert (answer.status_code == 200) is accepted, answer.text
    sandbox.state["bluesky"]["records"].clear()  # stored as the PDS would; the SDK's teardown check would not take it


def test_bluesky_writes_and_reads_at_the_pds_the_did_document_names(tmp_path, sandbox, clock):
    from conftest import RecordingTransport

    transport = RecordingTransport(clock)
    opts = parse_options(
        {"bsky": SPECS["bluesky"].raw(sandbox)},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=True,
    )
    report = send(opts, [make_post(1)], ListReporter(), clock=clock, transport=transport)
    assert [r.state for r in report.results] == ["done"]
    paths = [p for _, _, p in transport.seen]
    assert paths[0] == "/bluesky/xrpc/com.atproto.server.createSession"  # the entryway
    assert paths[1:] == ["/bluesky-pds/xrpc/com.atproto.repo.putRecord"]  # the PDS


def test_the_bluesky_entryway_does_not_serve_the_repository(sandbox):
    import httpx

    answer = httpx.get(
        f"{sandbox.url}/bluesky/xrpc/com.atproto.repo.getRecord",
        params={"repo": "did:plc:sandbox0000000000000000", "collection": "app.bsky.feed.post", "rkey": "3lenax2ss2227"},
    )
    assert answer.status_code == 501 and answer.json()["error"] == "MethodNotImplemented"


# ------------------------------------------------------------------ Forem


def test_forem_keeps_unicode_tags_and_counts_the_title_in_code_points(tmp_path, sandbox, clock):
    title = "é" * 100 + "👩‍👩‍👧" * 10  # 110 graphemes, 150 code points: Forem counts 150
    post = make_post(1, title=title, tags=("Café", "日本語", "Open Source", "C++"))
    report = run(tmp_path, {"devto": SPECS["forem"].raw(sandbox)}, [post], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    (article,) = sandbox.snapshot()["forem"]["articles"]
    assert article["tags"] == ["café", "日本語", "opensource", "c"]
    assert len(article["title"]) <= 128 and article["title"].endswith("…")
    assert "‍" not in article["title"][-2:]  # not cut inside the family emoji


def test_a_long_forem_title_is_cut_where_a_word_ends():
    """A title over Forem's 128 is cut at the last space before the
    limit ("…next to mk…" is no word), as messages are, unless that drops more than half of it."""
    from mkdocs_syndicate.channels.forem import forem_title

    title = "Announcing posts from a static site without posting twice: " + "idempotency " * 8
    cut = forem_title(title)
    assert len(cut) <= 128 and cut.endswith("idempotency…"), cut
    assert forem_title("x" * 200) == "x" * 127 + "…"  # one long word: cut where it must
    assert forem_title("a " + "y" * 200).endswith("y…")  # the only space is too early to cut at


def test_the_forem_emulator_refuses_tags_forem_refuses(sandbox):
    import httpx

    answer = httpx.post(
        f"{sandbox.url}/forem/api/articles",
        headers={"api-key": "sandbox-forem-api-key", "Accept": "application/vnd.forem.api-v1+json"},
        json={"article": {"title": "T", "body_markdown": "b", "published": True, "tags": ["c++", "x" * 31]}},
    )
    assert answer.status_code == 422
    assert "c++ contains non-alphanumeric" in answer.json()["error"] and "is too long" in answer.json()["error"]


# ------------------------------------------------------------------ emulators stand alone


def test_no_emulator_imports_client_code():
    """An emulator written from the client would share its bugs: each implements the service's
    rule itself; only neutral modules (a standard, file writing) may be shared."""
    import ast
    from pathlib import Path

    import mkdocs_syndicate.sandbox as sandbox_package

    # Neutral modules: file writing, the local folders, and the emulators' base (emulator_api,
    # which imports nothing of the package). (Not the registry: the server is
    # handed its emulators, so nothing in the sandbox package names a client, even by path.)
    # And a standard's encoding: NIP-19's bech32 (the names of a Nostr note's and article's pages).
    allowed = {"mkdocs_syndicate.ledger.atomicfile", "mkdocs_syndicate.localdirs", "mkdocs_syndicate.emulator_api"}
    allowed.add("mkdocs_syndicate.nip19")
    # sandbox/site.py is not an emulator: it sets the emulators up for a site from its config
    # (the wiring that left the engine), and no emulator imports it.
    for path in Path(sandbox_package.__file__).parent.glob("*.py"):
        if path.name == "site.py":
            continue
        assert "sandbox.site" not in path.read_text() or path.name == "__init__.py", path.name
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name.startswith("mkdocs_syndicate") and not name.startswith("mkdocs_syndicate.sandbox"):
                    assert name in allowed, f"{path.name} imports {name}"
