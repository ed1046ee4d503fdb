"""What only the Nostr channel does: its key checked when the config is read (NIP-19's own
examples), a relay's OK reasons read as NIP-01 defines them, the sandbox relay's NIP-01/09/23
rules, and a long-form article edited in place on the emulator."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from conftest import make_post
from test_channel_contracts import SPECS, record, remote_posts, run

from mkdocs_syndicate.channels import nostr_wire
from mkdocs_syndicate.channels.base import Kind
from mkdocs_syndicate.channels.nostr import _outcome
from mkdocs_syndicate.channels.nostr_events import event_id, is_genuine, public_key, signed, unsigned
from mkdocs_syndicate.channels.nostr_keys import secret_key_bytes
from mkdocs_syndicate.channels.nostr_wire import Publication
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.nip19 import bech32_decode, note_name
from mkdocs_syndicate.registry import clients
from mkdocs_syndicate.sandbox.nostr import SECRET_KEY

# NIP-19's examples: a secret key as nsec1… and as hex, and its public key as npub1… and as hex.
NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
NSEC_HEX = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
NPUB_HEX = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"


def settings(**values):
    return parse_channels({"no": {"type": "nostr", "relay": "wss://relay.example.com", **values}}, clients())


# ------------------------------------------------------------------ keys and settings


@pytest.mark.unit
def test_nostr_reads_nip19s_examples():
    assert bech32_decode(NSEC) == ("nsec", bytes.fromhex(NSEC_HEX))
    assert bech32_decode(NPUB) == ("npub", bytes.fromhex(NPUB_HEX))
    assert secret_key_bytes(NSEC) == secret_key_bytes(NSEC_HEX) == bytes.fromhex(NSEC_HEX)
    assert public_key(NSEC_HEX) == NPUB_HEX  # NIP-19's two examples are one key pair (BIP-340's x-only key)


@pytest.mark.unit
def test_nostr_key_as_nsec_or_hex_is_the_same_setting():
    (a,), (b,) = settings(secret_key=NSEC), settings(secret_key=NSEC_HEX.upper())
    assert a.options["secret_key"] == b.options["secret_key"] and a.options["secret_key"].reveal() == NSEC_HEX


@pytest.mark.unit
@pytest.mark.parametrize(
    ("key", "said"),
    [
        (NPUB, "is a public name (npub1…), not the secret key"),
        (NSEC[:-1] + "6", "is not a valid nsec1… key"),  # its checksum broken by one character
        ("0" * 64, "outside the range of secp256k1 secret keys"),
        ("ff" * 32, "outside the range of secp256k1 secret keys"),  # above the curve's order
        ("my-secret-password", "is not a Nostr secret key"),
    ],
)
def test_nostr_a_bad_key_is_a_config_error_naming_the_setting_never_the_key(key, said):
    with pytest.raises(ConfigError) as raised:
        settings(secret_key=key)
    assert raised.value.setting == "channels.no.secret_key" and said in str(raised.value)
    assert key not in str(raised.value)


@pytest.mark.unit
def test_nostr_every_wrong_setting_is_reported_at_once():
    problems: list[ConfigError] = []
    parse_channels(
        {"no": {"type": "nostr", "relay": "ws://relay.example.com", "secret_key": NPUB, "edits": "update"}},
        clients(),
        problems=problems,
    )
    said = {part.setting for problem in problems for part in (problem.parts or (problem,))}
    assert said == {"channels.no.relay", "channels.no.secret_key", "channels.no.edits"}, problems


@pytest.mark.unit
@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("wss://relay.example.com", "wss://relay.example.com"),
        ("https://relay.example.com/", "wss://relay.example.com/"),
        ("ws://127.0.0.1:7777", "ws://127.0.0.1:7777"),
    ],
)
def test_nostr_relay_addresses(given, used):
    (parsed,) = settings(relay=given, secret_key=NSEC)
    assert parsed.options["relay"] == used


@pytest.mark.unit
def test_nostr_only_an_article_is_edited_in_place():
    (note,) = settings(secret_key=NSEC)
    (article,) = settings(secret_key=NSEC, long_form=True)
    assert (note.edits, article.edits) == ("ignore", "update")


# ------------------------------------------------------------------ events and answers


@pytest.mark.unit
def test_nostr_event_id_is_the_hash_of_nip01s_serialization_and_the_signature_verifies():
    import hashlib

    author = public_key(NSEC_HEX)
    event = signed(unsigned(author, 1_700_000_000, 1, [["r", "https://x.example/"]], 'é\n"quoted"'), NSEC_HEX)
    # NIP-01: [0,pubkey,created_at,kind,tags,content], UTF-8, no whitespace, " \ and \n escaped.
    text = f'[0,"{author}",1700000000,1,[["r","https://x.example/"]],"é\\n\\"quoted\\""]'
    assert (
        event["id"]
        == hashlib.sha256(text.encode()).hexdigest()
        == event_id(author, 1700000000, 1, event["tags"], event["content"])
    )
    assert is_genuine(event, author) and not is_genuine({**event, "content": "other"}, author)
    assert not is_genuine(event, public_key(SECRET_KEY))  # another author's claim
    assert note_name(event["id"]).startswith("note1") and bech32_decode(note_name(event["id"]))[1].hex() == event["id"]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (Publication(False, reason="could not connect (OSError)"), Kind.NOT_SENT),
        (Publication(True, reason="no OK within 30 s"), Kind.AMBIGUOUS),
        (Publication(True, True), Kind.DONE),
        (Publication(True, True, "duplicate: already have this event"), Kind.DONE),
        (Publication(True, False, "duplicate: exists"), Kind.DONE),  # nostr-relay's false
        (Publication(True, False, "rate-limited: slow down"), Kind.RATE_LIMITED),
        (Publication(True, False, "auth-required: we only accept events from registered users"), Kind.AUTH),
        (Publication(True, False, "restricted: not allowed to write"), Kind.AUTH),
        (Publication(True, False, "blocked: you are banned"), Kind.AUTH),
        (Publication(True, False, "invalid: event creation date is too far off"), Kind.REFUSED),
        (Publication(True, False, "pow: difficulty 26 is less than 30"), Kind.REFUSED),
        (Publication(True, False, "no prefix at all"), Kind.REFUSED),
        (Publication(False, reason="the relay refused the connection with HTTP 401", refused_handshake=401), Kind.AUTH),
    ],
)
def test_nostr_a_relays_ok_is_read_as_nip01_says(answer, kind):
    assert _outcome(answer).kind is kind


# ------------------------------------------------------------------ the sandbox relay


@pytest.fixture
def relay(sandbox, clock):
    sandbox.now = clock.time
    return sandbox.url.replace("http://", "ws://") + "/nostr"


def publish(relay: str, event: dict) -> Publication:
    return asyncio.run(nostr_wire.publish(relay, signed(event, SECRET_KEY), 10))


def query(relay: str, *filters: dict) -> list[dict]:
    answer = asyncio.run(nostr_wire.query(relay, list(filters), 10))
    assert answer.complete, answer
    return answer.events


@pytest.mark.http
def test_nostr_sandbox_relay_keeps_an_addresss_newest_version_and_nip09_deletes_up_to_its_time(relay, clock):
    author, now = public_key(SECRET_KEY), int(clock.time())

    def article(at: int, text: str) -> dict:
        return unsigned(author, at, 30023, [["d", "the-post"], ["title", "T"]], text)

    assert publish(relay, article(now, "first")).accepted
    assert publish(relay, article(now + 2, "second")).accepted
    older = publish(relay, article(now + 1, "late"))
    assert older.accepted is False and older.reason.startswith("invalid:"), older
    assert [e["content"] for e in query(relay, {"kinds": [30023], "#d": ["the-post"]})] == ["second"]
    address = f"30023:{author}:the-post"
    assert publish(relay, unsigned(author, now + 1, 5, [["a", address]], "")).accepted  # before the newest
    assert [e["content"] for e in query(relay, {"kinds": [30023], "#d": ["the-post"]})] == ["second"]
    assert publish(relay, unsigned(author, now + 3, 5, [["a", address]], "")).accepted
    assert query(relay, {"kinds": [30023], "#d": ["the-post"]}) == []
    assert len(query(relay, {"kinds": [5], "authors": [author], "#a": [address]})) == 2


@pytest.mark.http
def test_nostr_sandbox_relay_refuses_what_nostr_relay_refuses(relay, clock):
    author, now = public_key(SECRET_KEY), int(clock.time())
    note = signed(unsigned(author, now, 1, [], "hello"), SECRET_KEY)
    forged = {**note, "content": "changed after signing"}
    answer = asyncio.run(nostr_wire.publish(relay, forged, 10))
    assert (answer.accepted, answer.reason) == (False, "invalid: Bad signature")
    stranger = signed(unsigned(public_key(NSEC_HEX), now, 1, [], "hi"), NSEC_HEX)
    assert asyncio.run(nostr_wire.publish(relay, stranger, 10)).reason.startswith("restricted:")
    assert publish(relay, unsigned(author, now + 7200, 1, [], "from the future")).reason.endswith("is in the future")
    assert asyncio.run(nostr_wire.publish(relay, note, 10)).accepted
    again = asyncio.run(nostr_wire.publish(relay, note, 10))
    assert (again.accepted, again.reason) == (False, "duplicate: exists")
    assert [e["id"] for e in query(relay, {"ids": [note["id"]]}, {"authors": [author], "limit": 1})] == [note["id"]]


# ------------------------------------------------------------------ an article's life


@pytest.mark.http
def test_nostr_an_article_is_edited_in_place(tmp_path, sandbox, clock):
    """Its removal is the shared suites' (the crash matrix's `removals: delete` scenarios), and
    the realserver tier's on nostr-relay."""
    sandbox.now = clock.time
    raw = SPECS["nostr"].raw(sandbox, long_form=True, removals="delete")
    post = make_post(1, body_html="<p>The <em>first</em> body.</p>", tags=("Python",))
    run(tmp_path, raw, [post], clock)
    made = record(tmp_path)
    (held,) = remote_posts(sandbox, "nostr")
    assert made.remote_id == held["remote_id"] and "The *first* body." in held["text"]
    assert made.remote_url.startswith(f"{sandbox.url}/nostr/e/naddr1")
    clock.now += 60
    report, _ = run(tmp_path, raw, [replace(post, body_html="<p>The second body.</p>")], clock)
    assert [r.detail.split(" (")[0] for r in report.results] == ["updated"], report.results
    (held,) = remote_posts(sandbox, "nostr")
    assert "The second body." in held["text"] and record(tmp_path).remote_id == made.remote_id


# ------------------------------------------------------------------ reads prove only what is ours


class _Clock:
    def __init__(self, clock) -> None:
        self.clock = clock

    def now(self) -> float:
        return float(self.clock.time())


def channel_at(sandbox):
    from mkdocs_syndicate.config.run import Site

    (parsed,) = parse_channels({"no": SPECS["nostr"].raw(sandbox)}, clients())
    return clients()["nostr"](parsed, Site("https://example.com/", "Example"))


@pytest.mark.http
def test_nostr_a_relays_forged_copy_of_the_in_flight_event_proves_nothing(sandbox, clock):
    """A relay that serves an event under the in-flight id, by our key, but whose fields do not
    hash to it (or whose signature fails): not FOUND, so the real event is sent."""
    from mkdocs_syndicate.ledger.schema import Record, State

    sandbox.now = clock.time
    channel = channel_at(sandbox)
    post = make_post(1)
    prepared = channel.prepare(post)
    real = signed(channel._note(post, prepared.message.text, prepared.created_at), SECRET_KEY)
    forged = {**real, "content": "something else entirely"}
    sandbox.state["nostr"]["events"].append({"event": forged, "visible_at": 0, "at": clock.time()})
    record = Record(State.IN_FLIGHT, 1, prepared.created_at, idempotency_key=prepared.idempotency_key)
    verdict = asyncio.run(channel.verify(_Clock(clock), post, record, None))
    assert verdict.found.value == "absent", verdict


@pytest.mark.http
def test_nostr_a_copy_gone_without_our_deletion_is_not_proved_deleted(sandbox, clock):
    """The relay no longer has the note, and holds no deletion request of ours (it pruned it):
    that proves nothing about our delete; only the copy absent with our deletion present does."""
    from mkdocs_syndicate.channels.base import Presence
    from mkdocs_syndicate.ledger.schema import Record, State

    sandbox.now = clock.time
    channel = channel_at(sandbox)
    post = make_post(1)
    prepared = channel.prepare(post)
    outcome = asyncio.run(channel.send(_Clock(clock), post, prepared))
    record = Record(State.IN_FLIGHT, 1, prepared.created_at, remote_id=outcome.remote_id, op="delete")
    assert asyncio.run(channel.read_presence(_Clock(clock), record)) is Presence.PRESENT
    sandbox.state["nostr"]["events"].clear()  # pruned by the relay
    assert asyncio.run(channel.read_presence(_Clock(clock), record)) is Presence.UNKNOWN
    assert asyncio.run(channel.delete(_Clock(clock), record)).kind is Kind.DONE
    assert asyncio.run(channel.read_presence(_Clock(clock), record)) is Presence.GONE


@pytest.mark.http
def test_nostr_doctor_names_the_keys_npub_and_a_relay_that_does_not_answer(sandbox, clock):
    from dataclasses import replace as changed

    from mkdocs_syndicate.channels.base import Health
    from mkdocs_syndicate.nip19 import bech32_encode

    sandbox.now = clock.time
    channel = channel_at(sandbox)
    check = asyncio.run(channel.check_credentials(_Clock(clock)))
    assert check.health is Health.OK and check.account == bech32_encode("npub", bytes.fromhex(public_key(SECRET_KEY)))
    sandbox.add_fault({"channel": "nostr", "action": "status", "status": 503, "match": "/REQ"})
    assert asyncio.run(channel.check_credentials(_Clock(clock))).health is Health.UNKNOWN
    channel.settings = changed(channel.settings, options={**channel.settings.options, "relay": "ws://127.0.0.1:9"})
    down = asyncio.run(channel.check_credentials(_Clock(clock)))
    assert down.health is Health.UNKNOWN and "could not connect" in down.problem
    assert SECRET_KEY not in repr(down)
