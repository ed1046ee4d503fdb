"""The third fidelity audit against real server software (issue 36): each test pins the service's
own rule, read in its source or measured on the real server (the source is named in each test),
so a client or an emulator that drifts from it fails here."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from conftest import SITE, ListReporter, make_post
from test_channel_contracts import SPECS

from mkdocs_syndicate.channels.base import Kind
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.policy import Situation, Step, decide
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger


def run(folder, channels, posts, clock, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True, **options)
    return send(opts, posts, ListReporter(), clock=clock)


# ------------------------------------------------------------------ Matrix (Synapse 1.163)


def matrix(sandbox, **extra):
    return {"room": SPECS["matrix"].raw(sandbox, **extra)}


def matrix_reads(sandbox) -> list[str]:
    return [r["path"] for r in sandbox.requests("matrix") if r["path"].endswith("/messages")]


@pytest.mark.unit
def test_a_429_from_a_channel_that_limits_first_is_retried_after_its_wait_without_a_read():
    """F3: Synapse checks `rc_message` before it makes the event (handlers/message.py), so its 429
    means "not made": the policy waits as asked, then sends again, with no read and no settle."""
    situation = Situation(
        at_most_once=True,
        repeat_safe=False,
        last_attempt=1000.0,
        now=1000.0,
        settle=600.0,
        max_wait=120.0,
        sends_left=3,
        retry_after=5.0,
        rate_limit_checked_first=True,
    )
    action = decide(Kind.RATE_LIMITED, situation)
    assert (action.step, action.at) == (Step.RETRY, 1005.0)
    beyond = decide(Kind.RATE_LIMITED, Situation(**{**situation.__dict__, "retry_after": 600.0}))
    assert beyond.step is Step.STOP_LANE and not beyond.keep_in_flight  # failed: the next run sends


@pytest.mark.http
def test_matrix_429_is_not_made_so_the_pair_is_retried_with_no_read(tmp_path, sandbox, clock):
    """F3, measured on Synapse: a spent bucket left pairs in_flight for the 600 s settle time. A
    429 within max_wait is waited out and sent again; one beyond it leaves the pair failed, and
    the next run sends it at once."""
    sandbox.now = clock.time
    sandbox.add_fault({"channel": "matrix", "action": "status", "status": 429, "reset_in": 5})
    report = run(tmp_path / "a", matrix(sandbox), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert matrix_reads(sandbox) == []

    sandbox.add_fault({"channel": "matrix", "action": "status", "status": 429, "reset_in": 300})
    report = run(tmp_path / "b", matrix(sandbox), [make_post(2)], clock, max_wait=120)
    assert [r.state for r in report.results] == ["failed"], report.results
    assert Ledger.read(tmp_path / "b" / "ledger.yml").record("blog/post-2/", "room").state == "failed"
    clock.now += 300  # the wait asked for, and less than the 600 s settle time
    report = run(tmp_path / "b", matrix(sandbox), [make_post(2)], clock, max_wait=120)
    assert [r.state for r in report.results] == ["done"], report.results
    assert matrix_reads(sandbox) == []
    assert len(sandbox.emulators["matrix"].state["events"]) == 2


def put_message(base: str, token: str, txn: str, body: str = "hello") -> str:
    from mkdocs_syndicate.sandbox.matrix import ROOM

    answer = httpx.put(
        f"{base}/matrix/_matrix/client/v3/rooms/{ROOM}/send/m.room.message/{txn}",
        json={"msgtype": "m.text", "body": body},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["event_id"])


@pytest.mark.http
def test_matrix_emulator_keeps_transactions_per_device_for_24_hours(tmp_path, clock):
    """F5, measured on Synapse: the same txnId returns the same event after a restart and from a
    new token on the same device, whatever the body; another device gets a new event; the
    mapping is deleted after 24 h (events_worker.py `_cleanup_old_transaction_ids`)."""
    from mkdocs_syndicate import registry
    from mkdocs_syndicate.sandbox import SandboxServer
    from mkdocs_syndicate.sandbox.matrix import OTHER_DEVICE_TOKEN, SAME_DEVICE_TOKEN, TOKEN

    folder = tmp_path / "sandbox"
    with SandboxServer(folder, registry.emulators()) as server:
        server.now = clock.time
        first = put_message(server.url, TOKEN, "txn-1")
        assert put_message(server.url, TOKEN, "txn-1", body="another body") == first
    with SandboxServer(folder, registry.emulators()) as server:  # a restart
        server.now = clock.time
        assert put_message(server.url, TOKEN, "txn-1") == first
        assert put_message(server.url, SAME_DEVICE_TOKEN, "txn-1") == first
        assert put_message(server.url, OTHER_DEVICE_TOKEN, "txn-1") != first
        clock.now += 23 * 3600
        assert put_message(server.url, TOKEN, "txn-1") == first
        clock.now += 3600
        assert put_message(server.url, TOKEN, "txn-1") != first


@pytest.mark.http
def test_matrix_permalinks_name_a_server_for_a_room_id_without_one(tmp_path, sandbox, clock):
    """F6: Synapse's default room version is 12 (config/server.py), whose room ids have no server
    part; the spec says a permalink by room id needs `via` to be routable. The link names the
    bot's own server, which is in the room."""
    from mkdocs_syndicate.sandbox.matrix import ROOM, SERVER_NAME

    assert ":" not in ROOM
    sandbox.now = clock.time
    run(tmp_path, matrix(sandbox), [make_post(1)], clock)
    link = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "room").remote_url
    assert link.endswith(f"?via={SERVER_NAME}") and f"/#/{ROOM}/$" in link


MATRIX_OPTIONS = {
    "type": "matrix",
    "homeserver": "https://hs.example",
    "room_id": "!r:example.org",
    "access_token": "t",
}


def matrix_channel(**changes):
    """A Matrix channel from its settings, as a site's config makes it (no network)."""
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.registry import TYPES, clients

    kind = TYPES["matrix"]
    settings = parse_channels({"room": {**MATRIX_OPTIONS, **changes}}, {**clients(), "matrix": kind.client_class()})
    return kind.client_class()(settings[0], SITE)


@pytest.mark.unit
def test_matrix_permalinks_fall_back_to_the_room_ids_server_part():
    """Before whoami has named the bot's server: the room id's own server part, else no via."""
    channel = matrix_channel()
    assert channel._link("$ev") == "https://matrix.to/#/!r:example.org/$ev?via=example.org"
    channel = matrix_channel(room_id="!opaqueRoomId")
    assert channel._link("$ev") == "https://matrix.to/#/!opaqueRoomId/$ev"


@pytest.mark.http
def test_matrix_emulator_gives_end_on_the_last_page_and_none_past_it(sandbox):
    """F7, measured on Synapse (and handlers/pagination.py `get_messages`): a page with events
    carries `end`, the last one too; the page past it is empty and has no `end`."""
    from mkdocs_syndicate.sandbox.matrix import ROOM, TOKEN

    put_message(sandbox.url, TOKEN, "a")
    put_message(sandbox.url, TOKEN, "b")
    url = f"{sandbox.url}/matrix/_matrix/client/v3/rooms/{ROOM}/messages"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    last = httpx.get(url, params={"dir": "b", "limit": "100"}, headers=headers).json()
    assert len(last["chunk"]) == 2 and last.get("end")
    past = httpx.get(url, params={"dir": "b", "limit": "100", "from": last["end"]}, headers=headers).json()
    assert past["chunk"] == [] and "end" not in past


class Pages:
    """A homeserver's /messages answers, one per call, in order (and whoami)."""

    def __init__(self, pages: list[dict]) -> None:
        self.pages = pages
        self.calls = 0

    async def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        if url.endswith("/account/whoami"):
            return httpx.Response(200, json={"user_id": "@bot:example.org"})
        self.calls += 1
        return httpx.Response(200, json=self.pages[self.calls - 1])

    def now(self) -> float:
        return 0.0


@pytest.mark.unit
def test_matrix_verify_reads_on_past_an_empty_page_that_has_an_end():
    """The spec leaves `end` out only when no further events are available; Synapse gives an
    empty chunk with an `end` when its visibility filter removed a whole page. Such a page is not
    the end of the room's history."""
    from mkdocs_syndicate.channels.matrix import MARKER

    channel = matrix_channel()
    record = _in_flight_record("key-1")
    ours = {"event_id": "$found", "content": {"body": "x", MARKER: "key-1"}}
    pages = Pages([{"chunk": [], "end": "t1"}, {"chunk": [ours], "end": "t2"}])
    verdict = asyncio.run(channel.verify(pages, make_post(1), record, None))
    assert verdict.found.value == "found" and verdict.remote_id == "$found"
    stuck = Pages([{"chunk": [], "end": "t1"}, {"chunk": [], "end": "t1"}])
    assert asyncio.run(channel.verify(stuck, make_post(1), record, None)).found.value == "absent"


def _in_flight_record(key: str):
    from mkdocs_syndicate.ledger.schema import Record, State

    return Record(State.IN_FLIGHT, 1, "2026-12-04T10:00:00Z", idempotency_key=key)


# ------------------------------------------------------------------ Bluesky emulator (reference PDS 0.5.35)

# createdAt values and the reference PDS's verdict: the first five measured against the PDS itself
# (fidelity audit 3, F10), the rest with the validator it runs, @atproto/lex-schema 0.2.7 and
# @atproto/syntax 0.7.7 (`l.string({format: "datetime"})`) under Node. None: taken.
CREATED_AT = {
    "2026-12-01T08:00:00": "refused",
    "2026-12-01 08:00:00Z": "refused",
    "2026-12-01T08:00:00-00:00": "refused",
    "2026-12-01T08:00:00z": "refused",
    "2026-12-01": "refused",
    "2026-12-01T08:00:00Z": None,
    "2026-12-01T08:00:00+00:00": None,
    "2026-12-01T08:00:00+09:00": None,
    "2026-12-01T08:00:00.123Z": None,
    "2026-12-01T08:00:00.123456Z": None,
    "2026-12-01T08:00:00.1234567891Z": None,
    "2026-12-01T08:00:60Z": "refused",  # JavaScript's Date refuses a leap second
    "2026-12-01T24:00:00Z": "refused",
    "2026-12-01T08:00:00+0900": "refused",
    "2026-12-01T08:00:00.Z": "refused",
    "0000-01-01T00:30:00+01:00": "refused",  # year -1
    "9999-12-31T23:59:59-01:00": "refused",  # year 10000
    "2026-12-01T08:00:00Z\n": "refused",
}


def bluesky_session(sandbox) -> tuple[str, str, dict[str, str]]:
    """(the PDS's address, the DID, the authorization header), as a client following the DID
    document finds them."""
    session = httpx.post(
        f"{sandbox.url}/bluesky/xrpc/com.atproto.server.createSession",
        json={"identifier": "sandbox.bsky.social", "password": "sandbox-bsky-app-password"},
    ).json()
    pds = next(s["serviceEndpoint"] for s in session["didDoc"]["service"] if s["id"].endswith("atproto_pds"))
    return pds, session["did"], {"Authorization": f"Bearer {session['accessJwt']}"}


@pytest.mark.http
def test_bluesky_emulator_checks_created_at_as_the_reference_pds(sandbox):
    """F10: the emulator took any string; the PDS answers 400 InvalidRequest "Invalid datetime
    (got "…") at $.record.createdAt" for what is not a strict atproto datetime."""
    pds, did, headers = bluesky_session(sandbox)
    for value, verdict in CREATED_AT.items():
        record = {"$type": "app.bsky.feed.post", "text": "when", "createdAt": value}
        answer = httpx.post(
            f"{pds}/xrpc/com.atproto.repo.createRecord",
            headers=headers,
            json={"repo": did, "collection": "app.bsky.feed.post", "record": record},
        )
        if verdict is None:
            assert answer.status_code == 200, (value, answer.text)
        else:
            expected = f"Invalid datetime (got {json.dumps(value)}) at $.record.createdAt"
            assert (answer.status_code, answer.json()) == (400, {"error": "InvalidRequest", "message": expected})


# ------------------------------------------------------------------ Bluesky facets (@atproto/api 0.20.44)

# Texts and the facets @atproto/api 0.20.44 gives them (`new RichText({text})`, then
# `detectFacetsWithoutResolution()`, run under Node 20): (byteStart, byteEnd, kind, tag or uri).
DETECTED = [
    ("Read #foo.bar today", [(5, 13, "tag", "foo.bar")]),
    ("(#paren) text", []),
    ("＃fullwidth tag", [(0, 12, "tag", "fullwidth")]),
    ("#emoji🙂 yes", [(0, 10, "tag", "emoji🙂")]),
    (
        "$AAPL and $tsla. ($MSFT) $GOOGLE $a1 x$BAD $B's",
        [
            (0, 5, "tag", "$AAPL"),
            (10, 15, "tag", "$TSLA"),
            (18, 23, "tag", "$MSFT"),
            (33, 36, "tag", "$A1"),
            (43, 45, "tag", "$B"),
        ],
    ),
    (
        "#日本語 #中文 #Python #C++",
        [
            (0, 10, "tag", "日本語"),
            (11, 18, "tag", "中文"),
            (19, 26, "tag", "Python"),
            (27, 31, "tag", "C++"),
        ],
    ),
    (
        "#123 #1a #a1 #_x #x_ #x- #-x",
        [
            (5, 8, "tag", "1a"),
            (9, 12, "tag", "a1"),
            (13, 16, "tag", "_x"),
            (17, 19, "tag", "x"),
            (21, 23, "tag", "x"),
            (25, 28, "tag", "-x"),
        ],
    ),
    (
        "end.#tag and a#b #tag, #tag! #tag… https://example.com/#frag #a#b",
        [
            (17, 21, "tag", "tag"),
            (23, 27, "tag", "tag"),
            (29, 33, "tag", "tag"),
            (37, 62, "link", "https://example.com/#frag"),
            (63, 67, "tag", "a#b"),
        ],
    ),
    ("#\ufe0f\u20e3 keycap #\ufe0fx", []),
    (
        "Title: https://example.com/blog/post-1/ #mkdocs\n\n#tag\u3000next #x\u200bsplit",
        [
            (7, 39, "link", "https://example.com/blog/post-1/"),
            (40, 47, "tag", "mkdocs"),
            (49, 53, "tag", "tag"),
            (61, 63, "tag", "x"),
        ],
    ),
    ("#café #cafe\u0301 #naïve", [(0, 6, "tag", "café"), (7, 14, "tag", "cafe\u0301"), (15, 22, "tag", "naïve")]),
    (
        'new\n#line\t#tab (#no) [#no] "#no" #end',
        [
            (4, 9, "tag", "line"),
            (10, 14, "tag", "tab"),
            (33, 37, "tag", "end"),
        ],
    ),
    ("#a.b.c. #1.5 #v1.0 #x!?", [(0, 6, "tag", "a.b.c"), (13, 18, "tag", "v1.0"), (19, 21, "tag", "x")]),
    (
        "(https://example.com/x) and https://example.com/y.",
        [
            (1, 22, "link", "https://example.com/x"),
            (28, 49, "link", "https://example.com/y"),
        ],
    ),
]


def facet_rows(found: list[dict]) -> list[tuple[int, int, str, str]]:
    rows = []
    for facet in found:
        (feature,) = facet["features"]
        kind = feature["$type"].removeprefix("app.bsky.richtext.facet#")
        rows.append(
            (facet["index"]["byteStart"], facet["index"]["byteEnd"], kind, feature.get("tag") or feature["uri"])
        )
    return sorted(rows)


@pytest.mark.unit
@pytest.mark.parametrize(("text", "expected"), DETECTED, ids=range(len(DETECTED)))
def test_bluesky_facets_are_the_apps_own(text, expected):
    """F8: tags kept their inner punctuation (`#foo.bar`), `＃` is a "#", cashtags are tags, and a
    tag needs white space (or the start) before it, as in the app; links as before."""
    from mkdocs_syndicate.channels.bluesky_text import facets

    assert facet_rows(facets(text)) == sorted(expected)


@pytest.mark.unit
def test_bluesky_leaves_out_a_tag_the_pds_would_refuse():
    """Where the client departs from the app on purpose: a tag of at most 64 graphemes but over
    the lexicon's 640 bytes (app.bsky.richtext.facet#tag maxLength) stays plain text, since the
    PDS refuses a record with it; the app makes the facet."""
    from mkdocs_syndicate.channels.bluesky_text import facets

    heavy = "a" + "\u0301" * 20  # one grapheme, 41 bytes
    assert facet_rows(facets("#" + heavy * 15)) == [(0, 616, "tag", heavy * 15)]
    assert facets("#" + heavy * 16) == []


# ------------------------------------------------------------------ Mastodon emulator: the context read


def mastodon_status(sandbox, clock, visibility="public") -> str:
    sandbox.now = clock.time
    answer = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": "A post https://example.com/blog/post-1/", "visibility": visibility},
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


def context(sandbox, status_id: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{status_id}/context", headers=headers)


@pytest.mark.http
def test_mastodon_context_has_the_logged_out_limits(sandbox, clock):
    """F11: Api::V1::Statuses::ContextsController gives a reader without a token at most 60
    descendants, 20 levels deep, and 40 ancestors, with no pagination; with a token, 4,096."""
    root = mastodon_status(sandbox, clock)
    parent = root
    chain = []
    for level in range(45):  # a chain of replies, each answering the one before
        clock.now += 1
        parent = sandbox.add_reply("mastodon", parent, author=f"r{level}", text=f"<p>{level}</p>")["id"]
        chain.append(parent)
    for n in range(70):  # and many direct replies
        clock.now += 1
        sandbox.add_reply("mastodon", root, author=f"d{n}", text=f"<p>direct {n}</p>")

    descendants = context(sandbox, root).json()["descendants"]
    assert len(descendants) == 60
    # Depth first: the chain comes first (its first reply is the oldest), cut at 20 levels.
    assert [d["id"] for d in descendants[:20]] == chain[:20]
    assert "Link" not in context(sandbox, root).headers
    assert len(context(sandbox, root, "sandbox-mastodon-token").json()["descendants"]) == 115

    assert len(context(sandbox, chain[-1]).json()["ancestors"]) == 40
    assert context(sandbox, chain[-1]).json()["ancestors"][-1]["id"] == chain[-2]  # oldest first, nearest last
    assert len(context(sandbox, chain[-1], "sandbox-mastodon-token").json()["ancestors"]) == 45


@pytest.mark.http
def test_mastodon_context_of_a_private_status_is_not_found_without_a_token(sandbox, clock):
    """F11: `authorize @status, :show?` fails for a logged-out reader of a private status, and
    the controller answers 404; the author's token sees it."""
    private = mastodon_status(sandbox, clock, visibility="private")
    assert context(sandbox, private).status_code == 404
    assert context(sandbox, private, "sandbox-mastodon-token").status_code == 200
    public = mastodon_status(sandbox, clock)
    reply = sandbox.add_reply("mastodon", public, author="ana", text="<p>hidden</p>")
    sandbox.emulators["mastodon"].state["replies"][-1]["visibility"] = "private"
    assert context(sandbox, public).json()["descendants"] == []
    assert [d["id"] for d in context(sandbox, public, "sandbox-mastodon-token").json()["descendants"]] == [reply["id"]]


@pytest.mark.http
def test_mastodon_context_puts_the_authors_own_replies_first(sandbox, clock):
    """StatusThreadingConcern#promote_by!: a reply of the author to their own status comes
    before the others' replies."""
    root = mastodon_status(sandbox, clock)
    clock.now += 1
    other = sandbox.add_reply("mastodon", root, author="ana", text="<p>first</p>")["id"]
    clock.now += 1
    own = sandbox.add_reply("mastodon", root, author="sandbox", text="<p>a thread</p>")
    emulator = sandbox.emulators["mastodon"]
    emulator.state["replies"][-1]["account"] = emulator._account()  # the author's own reply
    assert [d["id"] for d in context(sandbox, root).json()["descendants"]] == [own["id"], other]


# ------------------------------------------------------------------ Mastodon: language (N10)


@pytest.mark.unit
@pytest.mark.parametrize(("value", "hint"), [("english", ""), ("EN", "; did you mean 'en'?"), ("xx", ""), ("-en", "")])
def test_mastodon_language_mastodon_would_drop_is_refused_naming_the_setting(tmp_path, value, hint):
    """N10: LanguagesHelper#valid_locale_cascade replaces a language it does not support with the
    account's default, silently; the setting is refused when the config is read."""
    from mkdocs_syndicate.errors import ConfigError

    channels = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "t", "language": value}}
    with pytest.raises(ConfigError) as refused:
        parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    assert str(refused.value).startswith(f"channels.masto.language: {value!r} is not a language Mastodon takes")
    assert "ISO 639-1" in str(refused.value) and str(refused.value).endswith(f"ast){hint}")


@pytest.mark.http
@pytest.mark.parametrize(("value", "stored"), [("ja", "ja"), ("en_US", "en"), ("pt-BR", "pt"), ("zh-TW", "zh-TW")])
def test_mastodon_language_goes_out_as_mastodon_stores_it(tmp_path, sandbox, clock, value, stored):
    """A code Mastodon supports is sent as it is; a region it does not know is cut off as
    Mastodon cuts it (en_US posts as en), so the ledger's payload is what the status says."""
    from conftest import mastodon_raw

    sandbox.now = clock.time
    report = run(tmp_path, {"masto": mastodon_raw(sandbox, language=value)}, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    sent = [r for r in sandbox.requests("mastodon") if r["method"] == "POST"]
    assert len(sent) == 1 and sandbox.emulators["mastodon"].state["statuses"][0]["language"] == stored


@pytest.mark.http
@pytest.mark.parametrize(("value", "stored"), [("english", "en"), ("EN", "en"), ("ja-JP", "ja"), ("zh-CN", "zh-CN")])
def test_mastodon_emulator_stores_the_language_as_mastodon_does(sandbox, clock, value, stored):
    """PostStatusService's valid_locale_cascade in the emulator: a supported code kept, a region
    cut off, anything else the account's language (the sandbox account's is en)."""
    sandbox.now = clock.time
    answer = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": "hello", "language": value},
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    )
    assert answer.json()["language"] == stored


# ------------------------------------------------------------------ Mastodon: what counts as a URL (N9)

# Texts and Mastodon's count, by StatusLengthValidator#countable_text: what twitter-text 3.1's
# extractor finds (with config/initializers/twitter_regex.rb's overrides) counts 23, the rest
# in full.
MASTODON_COUNTS = [
    ("https://example.com/p/(draft", 23 + 6),  # a path does not take a bare "("
    ("see https://example.com/p/?q=(1)", 4 + 23 + 1),  # a query does not end on ")"
    ("(https://example.com/p/).", 1 + 23 + 2),
    ("https://en.wikipedia.org/wiki/Foo_(bar)", 23),  # balanced parentheses
    ("http://127.0.0.1:8000/blog/post/", 32),  # an IP address has no top-level domain
    ("http://localhost:8000/blog/", 27),
    ("https://a.b/c", 13),  # nor does a one-letter label
    ("https://blog.example/post/", 26),  # reserved names are in no registry (RFC 2606)
    ("https://build.test/p/ and https://x.localhost/", 21 + 5 + 20),
    ("seehttps://example.com/x", 24),  # a URL may not follow a letter
    ("gemini://example.org/capsule/", 23),  # Mastodon's schemes include gemini
    ("https://日本語.jp/パス", 23),
]


@pytest.mark.unit
@pytest.mark.parametrize(("text", "count"), MASTODON_COUNTS, ids=range(len(MASTODON_COUNTS)))
def test_mastodon_counts_urls_as_mastodon_finds_them(text, count):
    """N9: the client counted any http(s) run as a URL (so `(draft`, an IP address or localhost
    counted 23), and the emulator counted IP and loopback hosts as URLs too."""
    from mkdocs_syndicate.channels.mastodon_text import mastodon_length
    from mkdocs_syndicate.sandbox.mastodon_text import countable_length

    assert (mastodon_length(text), countable_length(text)) == (count, count)


@pytest.mark.http
def test_mastodon_emulator_links_only_what_mastodon_links(sandbox, clock):
    """The formatter links with the same extraction: a loopback URL stays text, a real one is a
    link whose href ends where the rule ends it."""
    sandbox.now = clock.time
    answer = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": "local http://127.0.0.1:8000/p/ and (https://example.com/p/)."},
        headers={"Authorization": "Bearer sandbox-mastodon-token"},
    )
    content = answer.json()["content"]
    assert 'href="https://example.com/p/"' in content and 'href="http://127' not in content
