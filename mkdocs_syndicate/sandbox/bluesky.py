"""Bluesky emulator (reference: docs/design/services.md, "Bluesky"; bluesky-social/atproto packages/pds and the
lexicons): an entryway (`/bluesky`, like bsky.social) and the account's PDS (`/bluesky-pds`).

The entryway answers createSession with JWT-shaped access and refresh tokens and a DID document
whose `#atproto_pds` service names the PDS; repository calls must go to the PDS (the entryway
answers them MethodNotImplemented), as a client following the DID document does. The PDS serves
getSession, refreshSession, describeRepo (no auth), createRecord (500 on an existing rkey),
putRecord (identical bytes are a no-op; swapRecord null over different content, or a CID over
no record, is InvalidSwap), getRecord (RecordNotFound), listRecords (`limit` an integer from 1 to
100, else 400 in the lexicon validator's words) and uploadBlob, and checks what the lexicon and the PDS
check: the TID syntax of rkeys, 300 graphemes / 3000 bytes of text, facet ranges, #tag facets of
at most 64 graphemes / 640 bytes, up to 3 `langs` that are BCP 47 tags, and a `createdAt` that
is a strict atproto datetime. CIDs are real CIDv1
strings (dag-cbor or raw codec, sha2-256), so the official SDK can decode them.

Written from the service's rules, not from the client: its own TIDs, its own grapheme counting.
The account (sessions, tokens, status) is sandbox/atproto_account.py's, the lexicons
sandbox/atproto_lexicon.py's, blobs and images sandbox/atproto_blobs.py's, the data formats
(CIDs, TIDs, datetimes) sandbox/atproto_data.py's; standard.site's emulator (sandbox/standard.py) is
this PDS under another name.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mkdocs_syndicate.emulator_api import Request, Response, first_url
from mkdocs_syndicate.sandbox import atproto_blobs, conversations
from mkdocs_syndicate.sandbox.atproto_account import APP_PASSWORD, DID, HANDLE, WRITE_WINDOW, AtprotoAccountEmulator
from mkdocs_syndicate.sandbox.atproto_data import (
    NSID,
    RKEY,
    TID,
    atproto_datetime,
    cid_of,
    grapheme_count,
    iso_ms,
    make_cid,
    tid,
)
from mkdocs_syndicate.sandbox.atproto_lexicon import (
    POST,
    STANDARD_SITE,
    TID_KEYED,
    bad_facets,
    bad_langs,
    bad_reply,
    invalid_post,
    lexicon_problem,
)

COLLECTION = POST
_REPO_METHODS = ("com.atproto.repo.",)


def _write_problem(body: dict[str, Any], rkey: str | None) -> str | None:
    """What a PDS refuses in a write's addressing, in its words, or None. A repository holds
    records of any collection (an NSID); a record key is checked against its lexicon's key type
    where the PDS knows the lexicon (a post's is a TID), else by the record-key syntax alone
    (https://atproto.com/specs/record-key)."""
    collection = body.get("collection")
    if body.get("repo") not in (DID, HANDLE) or not isinstance(collection, str) or not NSID.fullmatch(collection):
        return "Could not find repo or collection"
    if rkey is None:
        return 'Input must have the property "rkey"'
    if collection in TID_KEYED and not TID.fullmatch(rkey):
        # The reference PDS's words (checked against it: tests/test_realserver_bluesky.py).
        return f'Invalid record key for {collection}: Invalid TID string (got "{rkey}") at $'
    if not RKEY.fullmatch(rkey) or rkey in (".", ".."):
        return "Invalid record key"
    return None


def _needs_the_pds(method: str, *, at_pds: bool) -> bool:
    """A repository method sent to the entryway: the repository lives on the PDS its DID
    document names (describeRepo answers anywhere)."""
    return method.startswith(_REPO_METHODS) and not at_pds and method != "com.atproto.repo.describeRepo"


def _limit(value: str) -> int | str:
    """listRecords' `limit` as its lexicon types it (an integer from 1 to 100), or the issue in
    @atproto/lex-schema's words (checked against the reference PDS)."""
    if not re.fullmatch(r"-?[0-9]+", value):
        return f"Expected integer value type (got {json.dumps(value)})"
    number = int(value)
    if number < 1:
        return f"integer too small (minimum 1, got {number})"
    if number > 100:
        return f"integer too big (maximum 100, got {number})"
    return number


class BlueskyEmulator(AtprotoAccountEmulator):
    name = "bluesky"
    also_at: tuple[str, ...] = ("bluesky-pds", "bluesky-appview")  # the PDS; the public AppView readers' browsers ask
    public_pages: tuple[str, ...] = ("/profile/",)
    creating: tuple[str, ...] = ("POST /xrpc/com.atproto.repo.putRecord", "POST /xrpc/com.atproto.repo.createRecord")
    read_marker = "getRecord"
    _OPEN: ClassVar[dict[tuple[str, str], Callable[[BlueskyEmulator, Request], Response]]]
    _AUTHED: ClassVar[dict[tuple[str, str], Callable[[BlueskyEmulator, Request], Response]]]

    def initial_state(self) -> dict[str, Any]:
        return {"records": {}, "sessions": {}, "blobs": {}, "logins": [], "points": []}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> Mapping[str, object]:
        # A rehearsal keeps no session in the user's state folder.
        return {
            "service": f"{url}/bluesky",
            "handle": HANDLE,
            "app_password": APP_PASSWORD,
            "web_url": f"{public_base}/bluesky",
            "appview": f"{public_base}/bluesky-appview",
            "keep_session": False,
        }

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        def announces(record: dict[str, Any]) -> str:
            return (record.get("embed") or {}).get("external", {}).get("uri") or first_url(record.get("text", ""))

        return [
            {
                "id": rkey,
                "remote_id": f"at://{DID}/{COLLECTION}/{rkey}",
                "text": r["value"].get("text", ""),
                "announces": announces(r["value"]),
                "at": r.get("at"),
                "link": f"{public_base}/bluesky/profile/{HANDLE}/post/{rkey}",
                "in_reply_to": ((r["value"].get("reply") or {}).get("parent") or {}).get("uri"),
                "images": [
                    {"src": image["fullsize"], "alt": image["alt"]}
                    for image in (atproto_blobs.images_view(r["value"], public_base) or {}).get("images", [])
                ],
            }
            for rkey, r in state.get("records", {}).items()
        ]

    # ---------------------------------------------------------------- dispatch

    def handle(self, request: Request) -> Response:
        method = request.path.removeprefix("/xrpc/")
        if request.prefix.endswith("-appview"):
            return self._appview(method, request)
        if _needs_the_pds(method, at_pds=request.prefix.endswith("-pds")):
            # The entryway is not where the repository lives: follow the DID document to the PDS.
            return self._not_implemented(method)
        route = self._OPEN.get((request.method, method))
        if route is not None:  # no access token needed
            return route(self, request)
        route = self._AUTHED.get((request.method, method))
        if route is None:
            return self._not_implemented(method)
        refused = self._check_access(request)
        if refused is None and self.account_status == "deactivated" and method != "com.atproto.server.getSession":
            refused = self._error(401, "AccountDeactivated", "Account is deactivated")
        return refused or route(self, request)

    def _appview(self, method: str, request: Request) -> Response:
        """The public AppView: the one read a reader's browser makes (comments: true)."""
        if method == "app.bsky.feed.getPostThread" and request.method == "GET":
            return self._thread(request.arg("uri") or "", int(request.arg("depth", "6") or 6))
        if method == "app.bsky.feed.getPosts" and request.method == "GET":  # unknown URIs are left out
            views = [self._post_view(uri) for uri in request.query.get("uris", [])[:25]]
            return Response(200, {"posts": [v for v in views if v]}, {"Access-Control-Allow-Origin": "*"})
        return self._not_implemented(method)

    def _not_implemented(self, method: str) -> Response:
        return self._error(501, "MethodNotImplemented", f"Method Not Implemented: {method}")

    def _put_record(self, request: Request) -> Response:
        return self._write(request, put=True)

    def _create_record(self, request: Request) -> Response:
        return self._write(request, put=False)

    def _delete_record(self, request: Request) -> Response:
        """com.atproto.repo.deleteRecord, as the reference PDS has it: "delete a repository record,
        or ensure it doesn't exist" — 200 either way, with `commit` only when something was deleted;
        a `swapRecord` that is not the record's CID is InvalidSwap; it costs write points."""
        try:
            body = request.json()
        except ValueError:
            return self._error(400, "InvalidRequest", "Input must be JSON")
        rkey = body.get("rkey") if isinstance(body, dict) else None
        collection = body.get("collection") if isinstance(body, dict) else None
        if not isinstance(rkey, str) or not isinstance(collection, str) or body.get("repo") not in (DID, HANDLE):
            return self._error(400, "InvalidRequest", "repo, collection and rkey are required")
        if self._rate_headers()["RateLimit-Remaining"] == "0":
            return self.rate_limited({"reset_in": WRITE_WINDOW})
        existing = self._visible_record(rkey, collection)
        if existing is None:
            return Response(200, {}, self._rate_headers())  # no-op: the record already does not exist
        if body.get("swapRecord") and body["swapRecord"] != existing["cid"]:
            return self._error(400, "InvalidSwap", f"Record was at {existing['cid']}")
        self.state["points"].append({"at": self.server.now(), "cost": 1})
        del self._table(collection)[rkey]
        atproto_blobs.drop_dereferenced(self, existing["value"])
        commit = {"cid": make_cid(f"delete:{rkey}".encode(), 0x71), "rev": self._fresh_tid()}
        return Response(200, {"commit": commit}, self._rate_headers())

    def _describe_repo(self, request: Request) -> Response:
        if request.arg("repo") not in (DID, HANDLE):
            return self._error(400, "InvalidRequest", "Could not find repo")
        return Response(
            200,
            {
                "handle": HANDLE,
                "did": DID,
                "didDoc": self.did_doc(self._pds(request)),
                "collections": sorted(
                    [*([COLLECTION] if self.state["records"] else []), *self.state.get("collections", {})]
                ),
                "handleIsCorrect": True,
            },
        )

    # ---------------------------------------------------------------- records

    def _validate(self, record: Any, collection: str = COLLECTION) -> str | None:
        """The record checked as the lexicon and the PDS check it: the first problem, in the PDS's
        words, or None. A collection whose lexicon the PDS does not know is stored unvalidated
        (`validationStatus: unknown`), once its `$type` names the collection."""
        if collection != COLLECTION:
            if not isinstance(record, dict):
                return "Invalid record: must be an object"
            if record.get("$type", collection) != collection:
                return f"Invalid $type: expected {collection}, got {record.get('$type')}"
            known = STANDARD_SITE.get(collection)
            return lexicon_problem(collection, record, known) if known else None
        if not isinstance(record, dict) or record.get("$type") != COLLECTION:
            return invalid_post("Record/$type must be app.bsky.feed.post")
        text = record.get("text", "")
        if not isinstance(text, str) or grapheme_count(text) > 300 or len(text.encode("utf-8")) > 3000:
            return invalid_post("Record/text must not be longer than 300 graphemes")
        if not isinstance(record.get("createdAt"), str):
            return invalid_post('Record must have the property "createdAt"')
        if not atproto_datetime(record["createdAt"]):
            # @atproto/lex-schema 0.2.7 (https://www.npmjs.com/package/@atproto/lex-schema, the
            # reference PDS 0.5.35's validator), dist/core/validation-issue.js IssueInvalidFormat:
            # `Invalid ${format} (got ${value}) at ${path}`, answered as InvalidRequest.
            return f"Invalid datetime (got {json.dumps(record['createdAt'])}) at $.record.createdAt"
        return (
            bad_langs(record.get("langs"))
            or bad_facets(record, text)
            or bad_reply(record.get("reply"))
            or self._embed_problem(record.get("embed"))
        )

    def _embed_problem(self, embed: Any) -> str | None:
        """The lexicon's words for a bad embed, prefixed as the PDS prefixes a post's (the reference
        PDS: 'Invalid app.bsky.feed.post record: Expected "image/*" … at $.record.embed…')."""
        problem = atproto_blobs.embed_problem(embed, self._image_max())
        return invalid_post(problem) if problem else None

    def _image_max(self) -> int:
        return int(self.quirks.get("image_blob_max_size", atproto_blobs.IMAGE_MAX_SIZE))

    def _write(self, request: Request, put: bool) -> Response:
        try:
            body = request.json()
        except ValueError:
            return self._error(400, "InvalidRequest", "Input must be JSON")
        rkey = body.get("rkey") or (None if put else self._fresh_tid())
        problem = _write_problem(body, rkey) or self._validate(body.get("record"), str(body.get("collection")))
        if problem:
            return self._error(400, "InvalidRequest", problem)
        headers = self._rate_headers()
        if headers["RateLimit-Remaining"] == "0":
            return self.rate_limited({"reset_in": WRITE_WINDOW})
        record, rkey, collection = {"$type": body["collection"], **body["record"]}, str(rkey), body["collection"]
        cid = cid_of(record)
        existing = self._visible_record(rkey, collection)
        # The no-op and the swap are decided before the blobs are (processWrites' formatCommit,
        # then processWriteBlobs), after the lexicon.
        answer = self._over(existing, body, put, cid)
        if answer is not None:
            return answer
        refused = atproto_blobs.refs_problem(self, body["record"])
        if refused is not None:
            return refused
        atproto_blobs.make_permanent(self, record)
        answer = self._commit(rkey, record, cid, cost=2 if put else 3, collection=collection)
        if existing is not None:
            atproto_blobs.drop_dereferenced(self, existing["value"])
        return answer

    def _table(self, collection: str, *, create: bool = False) -> dict[str, Any]:
        """The records of one collection (posts where they always were: `records`); a read of a
        collection that holds nothing makes no entry for it."""
        if collection == COLLECTION:
            table: dict[str, Any] = self.state["records"]
        elif create:
            table = self.state.setdefault("collections", {}).setdefault(collection, {})
        else:
            table = self.state.get("collections", {}).get(collection, {})
        return table

    def _commit(self, rkey: str, record: Any, cid: str, cost: int, collection: str = COLLECTION) -> Response:
        """The write itself, committed (slowly, with the quirk commit_delay), and its answer."""
        self.state["points"].append({"at": self.server.now(), "cost": cost})
        committed = self.commit_time()
        self._table(collection, create=True)[rkey] = {
            "cid": cid,
            "value": record,
            "at": committed,
            "visible_at": committed,
        }
        commit = make_cid(f"commit:{rkey}:{cid}".encode(), 0x71)
        body = {
            "uri": f"at://{DID}/{collection}/{rkey}",
            "cid": cid,
            "commit": {"cid": commit, "rev": self._fresh_tid()},
            "validationStatus": "valid" if collection in TID_KEYED else "unknown",
        }
        return Response(
            200, body, self._rate_headers(), hold_until=committed if committed > self.server.now() else None
        )

    def _over(self, existing: dict[str, Any] | None, body: dict[str, Any], put: bool, cid: str) -> Response | None:
        """None when the write goes ahead, else its answer. To a free key: a putRecord whose
        `swapRecord` names a CID is InvalidSwap "Record was at null" (formatCommit: "There should
        be no current record for a create"), so a deleted record is never brought back by a swap
        on its old CID. To a key already taken: createRecord fails, the same record again is a
        no-op, a swap that is not the record's CID (null: "must not exist") is InvalidSwap."""
        if existing is None:
            if put and isinstance(body.get("swapRecord"), str):
                return self._error(400, "InvalidSwap", "Record was at null")
            return None
        if not put:  # the MST insert throws; the PDS answers a bare 500
            return self._error(500, "InternalServerError", "Internal Server Error")
        if existing["cid"] == cid:  # the same record again: nothing to write
            collection = body["collection"]
            uri = f"at://{DID}/{collection}/{body['rkey']}"
            status = "valid" if collection in TID_KEYED else "unknown"
            return Response(200, {"uri": uri, "cid": cid, "validationStatus": status}, self._rate_headers())
        if "swapRecord" in body and body["swapRecord"] != existing["cid"]:  # null: "must not exist"
            return self._error(400, "InvalidSwap", f"Record was at {existing['cid']}")
        return None

    def _visible_record(self, rkey: str, collection: str = COLLECTION) -> dict[str, Any] | None:
        found = self._table(collection).get(rkey)
        return found if found is not None and found.get("visible_at", 0) <= self.server.now() else None

    def _fresh_tid(self) -> str:
        return tid(int(self.server.now() * 1_000_000), len(self.state["records"]) % 1024)

    def _get_record(self, request: Request) -> Response:
        rkey = request.arg("rkey") or ""
        collection = request.arg("collection") or ""
        if request.arg("repo") not in (DID, HANDLE) or not NSID.fullmatch(collection):
            return self._error(400, "InvalidRequest", "Could not find repo")
        found = self._visible_record(rkey, collection)
        uri = f"at://{DID}/{collection}/{rkey}"
        if found is None:
            return self._error(400, "RecordNotFound", f"Could not locate record: {uri}")
        return Response(200, {"uri": uri, "cid": found["cid"], "value": found["value"]})

    def _list_records(self, request: Request) -> Response:
        collection = request.arg("collection") or ""
        table = self._table(collection) if NSID.fullmatch(collection) else {}
        keys = sorted(
            (k for k in table if self._visible_record(k, collection)), reverse=request.arg("reverse") != "true"
        )
        cursor = request.arg("cursor")
        if cursor:
            keys = [k for k in keys if (k < cursor if request.arg("reverse") != "true" else k > cursor)]
        limit = _limit(request.arg("limit") or "50")
        if isinstance(limit, str):
            return self._error(400, "InvalidRequest", f"Invalid com.atproto.repo.listRecords params: {limit}")
        page = keys[:limit]
        records = [
            {
                "uri": f"at://{DID}/{collection}/{k}",
                "cid": table[k]["cid"],
                "value": table[k]["value"],
            }
            for k in page
        ]
        return Response(200, {"records": records, **({"cursor": page[-1]} if len(page) == limit else {})})

    # ---------------------------------------------------------------- the AppView's threads (comments: true)

    def _post_view(self, uri: str) -> dict[str, Any] | None:
        rkey = uri.rsplit("/", 1)[-1]
        if uri == f"at://{DID}/{COLLECTION}/{rkey}" and (found := self._visible_record(rkey)) is not None:
            embed = atproto_blobs.images_view(found["value"], self.server.public_base)
            return ({"embed": embed} if embed else {}) | {
                "uri": uri,
                "cid": found["cid"],
                "author": conversations.author_view(DID, HANDLE, "Sandbox"),
                "record": found["value"],
                "replyCount": 0,
                "repostCount": 0,
                "likeCount": 0,
                "indexedAt": iso_ms(found["at"]),
            }
        return next((dict(r["post"]) for r in self.state.get("replies", []) if r["post"]["uri"] == uri), None)

    def _thread(self, uri: str, depth: int) -> Response:
        """app.bsky.feed.getPostThread as the public AppView answers a browser without a session
        (sandbox.conversations: v1's threadViewPost, its threadgate and counts, the replies a
        reader may see); CORS open: the AppView serves any origin."""
        cors = {"Access-Control-Allow-Origin": "*"}
        root = self._post_view(uri)
        if root is None:
            return self._error(400, "NotFound", f"Post not found: {uri}", cors)
        ours = uri.startswith(f"at://{DID}/")
        gate = conversations.bluesky_threadgate(self.state, DID, uri, iso_ms(self.server.now())) if ours else None
        thread = conversations.bluesky_thread(self.state, root, depth, gate, self._own_replies)
        # The thread's root's threadgate, beside the thread too (getPostThread's presentation).
        return Response(200, {"thread": thread, **({"threadgate": gate} if gate else {})}, cors)

    def _own_replies(self, uri: str) -> list[dict[str, Any]]:
        """The account's own posts whose `reply.parent` names `uri` (the AppView indexes them)."""
        found = []
        for rkey in sorted(self.state.get("records", {})):
            value = self._visible_record(rkey)
            parent = ((value or {}).get("value", {}).get("reply") or {}).get("parent") or {}
            if value is not None and parent.get("uri") == uri:
                found.append(self._post_view(f"at://{DID}/{COLLECTION}/{rkey}"))
        return [view for view in found if view is not None]

    def add_reply(
        self,
        parent: str,
        author: str,
        text: str,
        *,
        at: str | None = None,
        labels: list[str] | tuple[str, ...] = (),
        hidden: bool = False,
        blocked: bool = False,
        deleted: bool = False,
    ) -> dict[str, Any]:
        """Someone else's public reply to a post here or to a reply (`parent`: its at:// URI or
        record key): `at` its createdAt as the replier's app wrote it (any offset); `labels`
        what a labeler put on it; `hidden` the post's author hid it (threadgate); `blocked` its
        author and the parent's block each other; `deleted` since deleted."""
        uri = parent if parent.startswith("at://") else f"at://{DID}/{COLLECTION}/{parent}"
        above = self._post_view(uri)
        if above is None:
            raise ValueError(f"no post {uri} on the sandbox's Bluesky")
        root = above["record"].get("reply", {}).get("root") or {"uri": uri, "cid": above["cid"]}
        now = self.server.now()
        did = "did:plc:" + hashlib.sha256(author.encode()).hexdigest()[:24]
        record = {
            "$type": COLLECTION,
            "text": text,
            "createdAt": at or iso_ms(now),
            "langs": ["en"],
            "reply": {"root": root, "parent": {"uri": uri, "cid": above["cid"]}},
        }
        post_uri = f"at://{did}/{COLLECTION}/{self._fresh_tid()}"
        cid = cid_of(record)
        post = {
            "uri": post_uri,
            "cid": cid,
            "author": conversations.author_view(did, f"{author}.elsewhere.example", author),
            "record": record,
            "replyCount": 0,
            "repostCount": 0,
            "likeCount": 0,
            "indexedAt": iso_ms(now),
            "labels": [conversations.label(post_uri, cid, value, iso_ms(now)) for value in labels],
        }
        entry = {"parent": uri, "post": post, "hidden": hidden, "blocked": blocked, "deleted": deleted}
        self.state.setdefault("replies", []).append(entry)
        return post


# (HTTP method, XRPC method) -> handler: what answers without a session, and what needs one.
BlueskyEmulator._OPEN = {
    ("POST", "com.atproto.server.createSession"): BlueskyEmulator._create_session,
    ("POST", "com.atproto.server.refreshSession"): BlueskyEmulator._refresh,
    ("GET", "com.atproto.repo.getRecord"): BlueskyEmulator._get_record,
    ("GET", "com.atproto.repo.listRecords"): BlueskyEmulator._list_records,
    ("GET", "com.atproto.repo.describeRepo"): BlueskyEmulator._describe_repo,
}
BlueskyEmulator._AUTHED = {
    ("GET", "com.atproto.server.getSession"): BlueskyEmulator._get_session,
    ("POST", "com.atproto.repo.putRecord"): BlueskyEmulator._put_record,
    ("POST", "com.atproto.repo.createRecord"): BlueskyEmulator._create_record,
    ("POST", "com.atproto.repo.deleteRecord"): BlueskyEmulator._delete_record,
    ("POST", "com.atproto.repo.uploadBlob"): atproto_blobs.upload,
}
