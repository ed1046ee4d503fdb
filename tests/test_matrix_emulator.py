"""The Matrix emulator's edits, redactions, single-event reads and relations, by raw HTTP: each
test pins what Synapse 1.163.2 does, measured on it by hand and read in its source (the file is
named in each test and in sandbox/matrix.py and sandbox/matrix_events.py)."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest

from mkdocs_syndicate.sandbox.matrix import OTHER_DEVICE_TOKEN, ROOM, SAME_DEVICE_TOKEN, TOKEN

pytestmark = pytest.mark.http

_txns = itertools.count()


def api(sandbox: Any, version: str = "v3") -> str:
    return f"{sandbox.url}/matrix/_matrix/client/{version}/rooms/{ROOM}"


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def send(sandbox: Any, content: dict[str, Any], *, event_type: str = "m.room.message", txn: str = "") -> httpx.Response:
    txn = txn or f"t{next(_txns)}"
    return httpx.put(f"{api(sandbox)}/send/{event_type}/{txn}", json=content, headers=auth())


def message(sandbox: Any, body: str) -> str:
    answer = send(sandbox, {"msgtype": "m.text", "body": body})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["event_id"])


def edit_content(original: str, body: str, *, new_content: bool = True) -> dict[str, Any]:
    content: dict[str, Any] = {
        "msgtype": "m.text",
        "body": f"* {body}",
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    }
    if new_content:
        content["m.new_content"] = {"msgtype": "m.text", "body": body}
    return content


def edit(sandbox: Any, original: str, body: str, **kwargs: Any) -> str:
    answer = send(sandbox, edit_content(original, body, **kwargs))
    assert answer.status_code == 200, answer.text
    return str(answer.json()["event_id"])


def redact(
    sandbox: Any, event_id: str, txn: str = "", body: dict[str, Any] | None = None, token: str = TOKEN
) -> httpx.Response:
    txn = txn or f"r{next(_txns)}"
    return httpx.put(f"{api(sandbox)}/redact/{event_id}/{txn}", json=body or {}, headers=auth(token))


def read(sandbox: Any, event_id: str, room: str = ROOM) -> httpx.Response:
    url = f"{sandbox.url}/matrix/_matrix/client/v3/rooms/{room}/event/{event_id}"
    return httpx.get(url, headers=auth())


def bundled(sandbox: Any, event_id: str) -> dict[str, Any] | None:
    answer = read(sandbox, event_id)
    assert answer.status_code == 200, answer.text
    edit_event: dict[str, Any] | None = answer.json()["unsigned"].get("m.relations", {}).get("m.replace")
    return edit_event


def test_an_event_reads_back_and_an_unknown_one_is_404_not_found(sandbox):
    """rest/client/room.py `RoomEventServlet`: the event as /messages gives it; an unknown id and
    an event asked for in another room are both 404 M_NOT_FOUND "Event not found." (measured)."""
    event_id = message(sandbox, "hello https://example.com/p")
    answer = read(sandbox, event_id)
    assert answer.status_code == 200, answer.text
    event = answer.json()
    assert (event["event_id"], event["room_id"], event["type"]) == (event_id, ROOM, "m.room.message")
    assert event["content"] == {"msgtype": "m.text", "body": "hello https://example.com/p"}
    assert event["unsigned"]["transaction_id"]  # the device that sent it
    for answer in (read(sandbox, "$unknown"), read(sandbox, event_id, room="!elsewhere")):
        assert answer.status_code == 404
        assert answer.json() == {"errcode": "M_NOT_FOUND", "error": "Event not found."}


def test_an_edit_leaves_the_original_content_and_bundles_the_latest_edit(sandbox):
    """MSC3925 (Synapse since 1.8x): the original reads with its own content and the latest edit,
    a whole event, under unsigned["m.relations"]["m.replace"]; /messages has every event."""
    original = message(sandbox, "first https://example.com/p")
    edit(sandbox, original, "second")
    latest = edit(sandbox, original, "third")
    assert read(sandbox, original).json()["content"]["body"] == "first https://example.com/p"
    replacement = bundled(sandbox, original)
    assert replacement is not None and replacement["event_id"] == latest
    assert replacement["content"]["m.new_content"] == {"msgtype": "m.text", "body": "third"}
    history = httpx.get(f"{api(sandbox)}/messages", params={"dir": "b", "limit": "10"}, headers=auth()).json()
    assert [e["content"]["body"] for e in history["chunk"]] == ["* third", "* second", "first https://example.com/p"]
    assert history["chunk"][2]["unsigned"]["m.relations"]["m.replace"]["event_id"] == latest


def test_invalid_replacements_are_stored_but_bundled_as_synapse_does(sandbox):
    """Synapse checks an edit only for a known parent in the same room (handlers/message.py
    `_validate_event_relation`: 400 M_UNKNOWN otherwise); when bundling, only the type, sender and
    room (relations.py `get_applicable_edits`), and never for an event that is itself an edit
    (handlers/relations.py). So, measured: another type is not bundled, an edit of an edit is not,
    and one without `m.new_content` is bundled all the same."""
    unknown = send(sandbox, edit_content("$nobody-sent-this", "x"))
    assert unknown.status_code == 400
    assert unknown.json() == {"errcode": "M_UNKNOWN", "error": "Can't send relation to unknown event"}

    original = message(sandbox, "original")
    good = edit(sandbox, original, "good")
    other_type = send(sandbox, edit_content(original, "other type"), event_type="m.custom")
    assert other_type.status_code == 200
    assert (bundled(sandbox, original) or {}).get("event_id") == good
    edit(sandbox, good, "edit of an edit")
    assert (bundled(sandbox, original) or {}).get("event_id") == good
    assert bundled(sandbox, good) is None
    no_new_content = edit(sandbox, original, "no new content", new_content=False)
    assert (bundled(sandbox, original) or {}).get("event_id") == no_new_content


def test_a_redaction_answers_its_event_id_and_the_event_reads_pruned(sandbox):
    """rest/client/room.py `RoomRedactEventRestServlet`: 200 `{event_id}` of the redaction; the
    event then reads with `content: {}` and `unsigned.redacted_because` (the redaction, with its
    `reason` and, room versions 11+, `redacts` in its content) and `redacted_by` (measured)."""
    target = message(sandbox, "to be deleted https://example.com/p")
    answer = redact(sandbox, target, body={"reason": "wrong post"})
    assert answer.status_code == 200, answer.text
    redaction = answer.json()["event_id"]
    assert list(answer.json()) == ["event_id"] and redaction != target
    event = read(sandbox, target).json()
    assert event["content"] == {}
    because = event["unsigned"]["redacted_because"]
    assert (because["event_id"], because["type"]) == (redaction, "m.room.redaction")
    assert because["content"] == {"reason": "wrong post", "redacts": target}
    assert event["unsigned"]["redacted_by"] == redaction
    assert read(sandbox, redaction).json()["redacts"] == target


def test_a_redaction_keeps_what_the_algorithm_keeps_for_its_type(sandbox):
    """The spec's redaction algorithm (room versions 11+; Synapse's rust/src/events/utils.rs
    `redact`): a message keeps no content, a redaction keeps `redacts`."""
    target = message(sandbox, "x")
    first = redact(sandbox, target, body={"reason": "because"}).json()["event_id"]
    assert redact(sandbox, first).status_code == 200
    assert read(sandbox, first).json()["content"] == {"redacts": target}
    assert read(sandbox, target).json()["content"] == {}


def test_a_redactions_transaction_id_is_kept_per_device_for_24_hours_and_shared_with_sends(sandbox, clock):
    """Sends and redactions share Synapse's `event_txn_id_device_id` table (room, user, device;
    24 hours): the same txnId answers the first redaction, from a new login on the device too;
    another device makes another; and a send's txnId used for a redaction answers the sent event
    (measured: rest/client/room.py looks the transaction up before making the redaction)."""
    sandbox.now = clock.time
    target = message(sandbox, "x")
    first = redact(sandbox, target, txn="red-1", body={"reason": "a"}).json()["event_id"]
    assert redact(sandbox, target, txn="red-1", body={"reason": "b"}).json()["event_id"] == first
    assert redact(sandbox, target, txn="red-1", token=SAME_DEVICE_TOKEN).json()["event_id"] == first
    assert redact(sandbox, target, txn="red-1", token=OTHER_DEVICE_TOKEN).json()["event_id"] != first
    sent = send(sandbox, {"msgtype": "m.text", "body": "y"}, txn="shared").json()["event_id"]
    assert redact(sandbox, target, txn="shared").json()["event_id"] == sent
    clock.now += 24 * 3600
    assert redact(sandbox, target, txn="red-1").json()["event_id"] != first


def test_a_second_redaction_is_accepted_and_the_first_stays_the_cause(sandbox):
    """Measured: redacting a redacted event again is 200 with a new redaction event; the event's
    `redacted_because` stays the first."""
    target = message(sandbox, "x")
    first = redact(sandbox, target, body={"reason": "one"}).json()["event_id"]
    again = redact(sandbox, target, body={"reason": "two"})
    assert again.status_code == 200 and again.json()["event_id"] != first
    assert read(sandbox, target).json()["unsigned"]["redacted_because"]["event_id"] == first


def test_an_edit_of_a_redacted_event_is_accepted_and_the_event_stays_redacted(sandbox):
    """Measured: the edit is 200, the event still reads `content: {}` with no edit bundled
    (handlers/relations.py `_fetch_edits`: "but not for redacted events"), and /relations lists
    no edits of it ("they leak event content", storage relations.py)."""
    target = message(sandbox, "x")
    edit(sandbox, target, "before")
    redact(sandbox, target)
    assert send(sandbox, edit_content(target, "after")).status_code == 200
    event = read(sandbox, target).json()
    assert event["content"] == {} and "m.relations" not in event["unsigned"]
    listed = httpx.get(f"{api(sandbox, 'v1')}/relations/{target}", headers=auth()).json()
    assert listed == {"chunk": []}


def test_redacting_the_latest_edit_brings_back_the_one_before(sandbox):
    """storage/databases/main/events.py `_handle_redact_relations`: a redacted edit loses its
    relation, so the previous edit is the latest again (measured)."""
    original = message(sandbox, "x")
    earlier = edit(sandbox, original, "earlier")
    later = edit(sandbox, original, "later")
    assert (bundled(sandbox, original) or {}).get("event_id") == later
    redact(sandbox, later)
    assert (bundled(sandbox, original) or {}).get("event_id") == earlier


def test_redacting_an_unknown_event_id_is_not_found_for_a_member_without_redact_power(sandbox):
    """Measured on Synapse 1.163.2 with a plain member (tests/test_realserver_matrix.py): a
    redaction of an id no event has is 404 M_NOT_FOUND; only a room admin's is accepted."""
    answer = redact(sandbox, "$nobody-sent-this")
    assert answer.status_code == 404
    assert answer.json() == {"errcode": "M_NOT_FOUND", "error": "Could not find event $nobody-sent-this"}


def test_redaction_errors_as_synapse_answers_them(sandbox):
    """rest/client/room.py, measured: another room 404 M_NOT_FOUND (no room version), a
    `redacts` other than the path's 400 M_INVALID_PARAM, a body that is no object 400
    M_BAD_JSON, an empty one 400 M_NOT_JSON, and 403 M_FORBIDDEN once the bot is out of the
    room (which still reads what it sent)."""
    target = message(sandbox, "x")
    elsewhere = httpx.put(
        f"{sandbox.url}/matrix/_matrix/client/v3/rooms/!elsewhere/redact/{target}/e1", json={}, headers=auth()
    )
    assert elsewhere.status_code == 404
    assert elsewhere.json() == {"errcode": "M_NOT_FOUND", "error": "Could not find room_version for !elsewhere"}
    incoherent = redact(sandbox, target, body={"redacts": "$other"})
    assert (incoherent.status_code, incoherent.json()["errcode"]) == (400, "M_INVALID_PARAM")
    not_object = httpx.put(f"{api(sandbox)}/redact/{target}/e2", json=["x"], headers=auth())
    assert (not_object.status_code, not_object.json()["errcode"]) == (400, "M_BAD_JSON")
    no_body = httpx.put(f"{api(sandbox)}/redact/{target}/e3", headers=auth())
    assert (no_body.status_code, no_body.json()["errcode"]) == (400, "M_NOT_JSON")
    sandbox.emulators["matrix"].joined = False
    out = redact(sandbox, target)
    assert (out.status_code, out.json()["errcode"]) == (403, "M_FORBIDDEN")
    assert read(sandbox, target).json()["content"] == {"msgtype": "m.text", "body": "x"}  # still readable


def test_a_rate_limited_redaction_makes_nothing_and_says_how_long_to_wait(sandbox):
    """Synapse checks `rc_message` before it makes a redaction too (handlers/message.py
    `create_and_send_nonmember_event`, `update=False` first): 429 M_LIMIT_EXCEEDED with
    `retry_after_ms` and Retry-After, and the event is not redacted."""
    target = message(sandbox, "x")
    sandbox.add_fault({"channel": "matrix", "action": "status", "status": 429, "reset_in": 7})
    answer = redact(sandbox, target)
    assert answer.status_code == 429
    assert answer.json()["errcode"] == "M_LIMIT_EXCEEDED" and answer.json()["retry_after_ms"] == 7000
    assert answer.headers["Retry-After"] == "7"
    assert read(sandbox, target).json()["content"] == {"msgtype": "m.text", "body": "x"}


def test_relations_are_on_v1_only_newest_first_filtered_and_paged(sandbox):
    """rest/client/relations.py: `/_matrix/client/v1/.../relations/{eventId}[/{relType}]`, newest
    first, `limit` 5 by default, `next_batch` while more remain; on v3 404 M_UNRECOGNIZED; an
    unknown event 404 M_UNKNOWN "Unknown parent event." (measured)."""
    original = message(sandbox, "x")
    edits = [edit(sandbox, original, f"e{i}") for i in range(6)]
    unrelated = message(sandbox, "y")
    url = f"{api(sandbox, 'v1')}/relations/{original}"
    first = httpx.get(url, headers=auth()).json()
    assert [e["event_id"] for e in first["chunk"]] == edits[::-1][:5]
    rest = httpx.get(url, params={"from": first["next_batch"]}, headers=auth()).json()
    assert [e["event_id"] for e in rest["chunk"]] == edits[:1] and "next_batch" not in rest
    typed = httpx.get(f"{url}/m.replace", params={"limit": "2", "dir": "f"}, headers=auth()).json()
    assert [e["event_id"] for e in typed["chunk"]] == edits[:2]
    assert httpx.get(f"{url}/m.annotation", headers=auth()).json() == {"chunk": []}
    assert httpx.get(f"{api(sandbox, 'v1')}/relations/{unrelated}", headers=auth()).json() == {"chunk": []}
    v3 = httpx.get(f"{api(sandbox)}/relations/{original}", headers=auth())
    assert (v3.status_code, v3.json()["errcode"]) == (404, "M_UNRECOGNIZED")
    for params in ({"limit": "-1"}, {"limit": "x"}, {"dir": "x"}):  # http/servlet.py's parsing
        bad = httpx.get(url, params=params, headers=auth())
        assert (bad.status_code, bad.json()["errcode"]) == (400, "M_INVALID_PARAM"), params
    unknown = httpx.get(f"{api(sandbox, 'v1')}/relations/$unknown", headers=auth())
    assert unknown.status_code == 404
    assert unknown.json() == {"errcode": "M_UNKNOWN", "error": "Unknown parent event."}


def test_the_dashboard_shows_an_edit_as_element_does_and_a_redaction_as_deleted(sandbox):
    """Element shows a message once, with its latest text and "(edited)", and a redacted one as
    "Message deleted": so do the dashboard, a received post's page and what the emulator says it
    received (an edit is not a second post, a deleted one announces nothing)."""
    edited = message(sandbox, "old https://example.com/a")
    edit(sandbox, edited, "new https://example.com/b")
    deleted = message(sandbox, "gone https://example.com/c")
    redact(sandbox, deleted, body={"reason": "a mistake"})
    seen = httpx.get(f"{sandbox.url}/_sandbox/received").json()["matrix"]
    assert [(e["id"], e["text"], e["announces"]) for e in seen] == [
        (edited, "new https://example.com/b", "https://example.com/b"),
        (deleted, "", ""),
    ]
    page = httpx.get(f"{sandbox.url}/").text
    assert "new https://example.com/b</pre> <small class=edited>(edited)</small>" in page
    assert "<i>Message deleted</i> (reason: a mistake)" in page
    assert "old https://example.com/a" not in page and "gone https://example.com/c" not in page
    room = httpx.get(f"{sandbox.url}/matrix/to").text
    assert "(edited)" in room and "Message deleted" in room and "gone https://" not in room


def test_a_repeated_transaction_id_answers_its_first_event_after_the_bot_left_the_room(sandbox):
    """rest/client/room.py `RoomSendEventRestServlet.on_PUT` asks the transaction cache
    (rest/client/transactions.py) before it makes the event, and handlers/message.py
    `create_and_send_nonmember_event` looks the transaction id up before it checks that the sender
    is in the room: a repeat answers the first event's id (another event type too: the table is
    per room, user, device and id), a new id 403 M_FORBIDDEN. The emulator answered 403 to both."""
    first = send(sandbox, {"msgtype": "m.text", "body": "x"}, txn="left-1")
    assert first.status_code == 200, first.text
    sandbox.emulators["matrix"].joined = False
    for event_type in ("m.room.message", "org.example.other"):
        again = send(sandbox, {"msgtype": "m.text", "body": "y"}, event_type=event_type, txn="left-1")
        assert (again.status_code, again.json()) == (200, first.json()), (event_type, again.text)
    new = send(sandbox, {"msgtype": "m.text", "body": "z"}, txn="left-2")
    assert (new.status_code, new.json()["errcode"]) == (403, "M_FORBIDDEN")
    assert len(httpx.get(f"{sandbox.url}/_sandbox/received").json()["matrix"]) == 1
