"""The emulators take replies as the services do (a thread is a chain of replies):

- Mastodon: `in_reply_to_id` names a status the account can see, else Api::V1::StatusesController's
  `set_thread` answers 404 with statuses.errors.in_reply_not_found, before PostStatusService (and
  before the Idempotency-Key is looked up); the status shows `in_reply_to_id`, and the thread's
  context lists the account's own replies.
- Bluesky: the PDS checks `reply` against app.bsky.feed.post#replyRef (root and parent, each a
  strongRef: an at-uri and a CID) and nothing more: a parent that does not exist is stored
  (measured on the reference PDS 0.5.35; tests/test_realserver_bluesky.py does it there).
"""

from __future__ import annotations

import httpx
import pytest

from mkdocs_syndicate.sandbox.atproto_account import APP_PASSWORD, DID, HANDLE
from mkdocs_syndicate.sandbox.bluesky import COLLECTION
from mkdocs_syndicate.sandbox.mastodon import IN_REPLY_NOT_FOUND
from mkdocs_syndicate.sandbox.mastodon_tokens import TOKEN

pytestmark = pytest.mark.http


def _masto(sandbox, text: str, **fields: str) -> httpx.Response:
    return httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": text, **fields},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )


def test_mastodon_reply_names_a_status_that_exists(sandbox):
    root = _masto(sandbox, "the first part").json()
    reply = _masto(sandbox, "the second part", in_reply_to_id=root["id"])
    assert reply.status_code == 200 and reply.json()["in_reply_to_id"] == root["id"]
    context = httpx.get(
        f"{sandbox.url}/mastodon/api/v1/statuses/{root['id']}/context", headers={"Authorization": f"Bearer {TOKEN}"}
    ).json()
    assert [s["id"] for s in context["descendants"]] == [reply.json()["id"]]


def test_mastodon_reply_to_no_status_is_a_404_before_the_key_is_looked_up(sandbox):
    missing = _masto(sandbox, "a reply", in_reply_to_id="1234567")
    assert missing.status_code == 404 and missing.json() == {"error": IN_REPLY_NOT_FOUND}
    assert [s for s in sandbox.snapshot()["mastodon"]["statuses"]] == []
    # The same key with a parent that exists: made (the 404 stored no key).
    root = _masto(sandbox, "root").json()
    made = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": "a reply", "in_reply_to_id": root["id"]},
        headers={"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": "k"},
    )
    refused = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses",
        data={"status": "a reply", "in_reply_to_id": "999"},
        headers={"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": "k"},
    )
    assert made.status_code == 200 and refused.status_code == 404


def _bsky_session(sandbox) -> dict[str, str]:
    session = httpx.post(
        f"{sandbox.url}/bluesky/xrpc/com.atproto.server.createSession",
        json={"identifier": HANDLE, "password": APP_PASSWORD},
    ).json()
    return {"Authorization": f"Bearer {session['accessJwt']}"}


def _put(sandbox, headers, rkey: str, record: dict) -> httpx.Response:
    return httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.putRecord",
        headers=headers,
        json={"repo": DID, "collection": COLLECTION, "rkey": rkey, "record": record},
    )


BASE = {"$type": COLLECTION, "text": "part", "createdAt": "2026-12-01T00:00:00.000Z"}


def test_bluesky_reply_refs_are_checked_for_shape_not_for_existence(sandbox):
    headers = _bsky_session(sandbox)
    root = _put(sandbox, headers, "3kaaaaaaaaa22", BASE).json()
    ref = {"uri": root["uri"], "cid": root["cid"]}
    missing = {"uri": f"at://{DID}/{COLLECTION}/3kzzzzzzzzz22", "cid": root["cid"]}
    assert _put(sandbox, headers, "3kbbbbbbbbb2a", {**BASE, "reply": {"root": ref, "parent": ref}}).status_code == 200
    assert (
        _put(sandbox, headers, "3kbbbbbbbbb2b", {**BASE, "reply": {"root": ref, "parent": missing}}).status_code == 200
    )
    refusals = {
        "no parent": ({"root": ref}, 'Missing required key "parent" at $.record.reply'),
        "no cid": (
            {"root": ref, "parent": {"uri": root["uri"]}},
            'Missing required key "cid" at $.record.reply.parent',
        ),
        "bad cid": (
            {"root": ref, "parent": {"uri": root["uri"], "cid": "notacid"}},
            'Invalid CID string (got "notacid") at $.record.reply.parent.cid',
        ),
        "bad uri": (
            {"root": ref, "parent": {"uri": "https://x", "cid": root["cid"]}},
            'Invalid at-uri (got "https://x") at $.record.reply.parent.uri',
        ),
        "not an object": ("x", 'Expected object value type (got "x") at $.record.reply'),
    }
    for name, (reply, message) in refusals.items():
        answer = _put(sandbox, headers, "3kccccccccc2c", {**BASE, "reply": reply})
        assert answer.status_code == 400, name
        assert answer.json() == {"error": "InvalidRequest", "message": f"Invalid app.bsky.feed.post record: {message}"}


def test_bluesky_thread_view_lists_the_accounts_own_replies(sandbox):
    headers = _bsky_session(sandbox)
    root = _put(sandbox, headers, "3kaaaaaaaaa22", BASE).json()
    ref = {"uri": root["uri"], "cid": root["cid"]}
    reply = _put(sandbox, headers, "3kbbbbbbbbb2a", {**BASE, "text": "two", "reply": {"root": ref, "parent": ref}})
    thread = httpx.get(
        f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": root["uri"]}
    ).json()["thread"]
    assert [r["post"]["uri"] for r in thread["replies"]] == [reply.json()["uri"]]
