"""Bluesky PDS emulator (reference: channel-apis.md §5): createSession / refreshSession with
expiring access tokens, createRecord (500 on an existing rkey), putRecord (identical bytes are a
no-op; swapRecord null over different content is InvalidSwap), getRecord (RecordNotFound),
listRecords, uploadBlob, the TID rule for rkeys, 300 graphemes / 3000 bytes, RateLimit-* headers."""

from __future__ import annotations

import hashlib
import json
import re
import secrets as _random
from typing import Any

from ..messages import grapheme_length
from .server import Emulator, Request, Response

HANDLE = "sandbox.bsky.social"
DID = "did:plc:sandbox0000000000000000"
APP_PASSWORD = "sandbox-bsky-app-password"
COLLECTION = "app.bsky.feed.post"
ACCESS_TTL = 7200.0
WRITE_LIMIT, WRITE_WINDOW = 5000, 3600
_TID = re.compile(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}")


def cid_of(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "bafyrei" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:52]


class BlueskyEmulator(Emulator):
    name = "bluesky"
    app_password = APP_PASSWORD  # what it accepts; tests may set their own (a sentinel)
    jwt_prefix = ""              # marks the session tokens it hands out
    creating = ("POST /xrpc/com.atproto.repo.putRecord", "POST /xrpc/com.atproto.repo.createRecord")
    access_ttl = ACCESS_TTL
    expire_next_login = False   # tests: the next createSession hands out an already expired token

    def initial_state(self) -> dict[str, Any]:
        return {"records": {}, "sessions": {}, "blobs": {}, "logins": [], "points": []}

    @staticmethod
    def _error(status: int, name: str, message: str, headers: dict[str, str] | None = None) -> Response:
        return Response(status, {"error": name, "message": message}, headers or {})

    def _rate_headers(self) -> dict[str, str]:
        now = self.server.now()
        used = sum(p["cost"] for p in self.state["points"] if now - p["at"] < WRITE_WINDOW)
        return {"RateLimit-Limit": str(WRITE_LIMIT), "RateLimit-Remaining": str(max(0, WRITE_LIMIT - used)),
                "RateLimit-Reset": str(int(now + WRITE_WINDOW)), "RateLimit-Policy": f"{WRITE_LIMIT};w={WRITE_WINDOW}"}

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        reset = int(self.server.now() + float(fault.get("reset_in", 30)))
        return self._error(429, "RateLimitExceeded", "Rate Limit Exceeded",
                           {"RateLimit-Limit": str(WRITE_LIMIT), "RateLimit-Remaining": "0",
                            "RateLimit-Reset": str(reset), "RateLimit-Policy": f"{WRITE_LIMIT};w={WRITE_WINDOW}"})

    # ---------------------------------------------------------------- dispatch

    def handle(self, request: Request) -> Response:
        method = request.path.removeprefix("/xrpc/")
        if method == "com.atproto.server.createSession" and request.method == "POST":
            return self._create_session(request)
        if method == "com.atproto.repo.getRecord" and request.method == "GET":
            return self._get_record(request)
        if method == "com.atproto.repo.listRecords" and request.method == "GET":
            return self._list_records(request)
        if method == "com.atproto.server.refreshSession" and request.method == "POST":
            return self._refresh(request)
        problem = self._check_access(request)
        if problem is not None:
            return problem
        if method == "com.atproto.repo.putRecord" and request.method == "POST":
            return self._write(request, put=True)
        if method == "com.atproto.repo.createRecord" and request.method == "POST":
            return self._write(request, put=False)
        if method == "com.atproto.repo.uploadBlob" and request.method == "POST":
            return self._upload(request)
        return self._error(501, "MethodNotImplemented", f"Method Not Implemented: {method}")

    # ---------------------------------------------------------------- sessions

    def _new_tokens(self) -> dict[str, str]:
        access = f"{self.jwt_prefix}acc-{_random.token_hex(16)}"
        refresh = f"{self.jwt_prefix}ref-{_random.token_hex(16)}"
        self.state["sessions"][access] = {"kind": "access", "expires": self.server.now() + self.access_ttl}
        self.state["sessions"][refresh] = {"kind": "refresh", "expires": self.server.now() + 90 * 86400}
        return {"accessJwt": access, "refreshJwt": refresh, "handle": HANDLE, "did": DID, "active": True}

    def _create_session(self, request: Request) -> Response:
        now = self.server.now()
        logins = [t for t in self.state["logins"] if now - t < 300]
        if len(logins) >= 30:
            return self.rate_limited({"reset_in": 300})
        self.state["logins"] = logins + [now]
        try:
            body = request.json()
        except ValueError:
            return self._error(400, "InvalidRequest", "Input must be JSON")
        if body.get("identifier") not in (HANDLE, DID) or body.get("password") != self.app_password:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or password")
        tokens = self._new_tokens()
        if self.expire_next_login:
            self.expire_next_login = False
            self.state["sessions"][tokens["accessJwt"]]["expires"] = self.server.now()
        return Response(200, tokens)

    def _bearer(self, request: Request) -> str:
        return request.headers.get("authorization", "").removeprefix("Bearer ")

    def _refresh(self, request: Request) -> Response:
        session = self.state["sessions"].get(self._bearer(request))
        if not session or session["kind"] != "refresh":
            return self._error(400, "InvalidToken", "Token could not be verified")
        del self.state["sessions"][self._bearer(request)]
        return Response(200, self._new_tokens())

    def _check_access(self, request: Request) -> Response | None:
        session = self.state["sessions"].get(self._bearer(request))
        if not session or session["kind"] != "access":
            return self._error(401, "AuthenticationRequired", "Authentication Required")
        if session["expires"] <= self.server.now():
            return self._error(400, "ExpiredToken", "Token has expired")
        return None

    # ---------------------------------------------------------------- records

    def _validate(self, record: Any) -> str | None:
        if not isinstance(record, dict) or record.get("$type") != COLLECTION:
            return "Invalid app.bsky.feed.post record: Record/$type must be app.bsky.feed.post"
        text = record.get("text", "")
        if not isinstance(text, str) or grapheme_length(text) > 300 or len(text.encode("utf-8")) > 3000:
            return "Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes"
        if not isinstance(record.get("createdAt"), str):
            return "Invalid app.bsky.feed.post record: Record must have the property \"createdAt\""
        for facet in record.get("facets") or []:
            index = facet.get("index", {})
            if not 0 <= index.get("byteStart", -1) < index.get("byteEnd", -1) <= len(text.encode("utf-8")):
                return "Invalid app.bsky.feed.post record: facet index out of range"
        thumb = ((record.get("embed") or {}).get("external") or {}).get("thumb")
        if thumb is not None and (thumb.get("size", 0) > 1_000_000
                                  or thumb.get("ref", {}).get("$link") not in self.state["blobs"]):
            return "Invalid app.bsky.feed.post record: thumb blob is missing or over 1000000 bytes"
        return None

    def _write(self, request: Request, put: bool) -> Response:
        try:
            body = request.json()
        except ValueError:
            return self._error(400, "InvalidRequest", "Input must be JSON")
        if body.get("repo") not in (DID, HANDLE) or body.get("collection") != COLLECTION:
            return self._error(400, "InvalidRequest", "Could not find repo or collection")
        rkey = body.get("rkey") or (None if put else self._fresh_tid())
        if rkey is None:
            return self._error(400, "InvalidRequest", "Input must have the property \"rkey\"")
        if not _TID.fullmatch(rkey):
            return self._error(400, "InvalidRequest", f"Invalid record key: {rkey}")
        record = body.get("record")
        problem = self._validate(record)
        if problem:
            return self._error(400, "InvalidRequest", problem)
        headers = self._rate_headers()
        if headers["RateLimit-Remaining"] == "0":
            return self.rate_limited({"reset_in": WRITE_WINDOW})
        cid = cid_of(record)
        uri = f"at://{DID}/{COLLECTION}/{rkey}"
        existing = self._visible_record(rkey)
        if existing is not None:
            if not put:  # the MST insert throws; the PDS answers a bare 500
                return self._error(500, "InternalServerError", "Internal Server Error")
            if existing["cid"] == cid:
                return Response(200, {"uri": uri, "cid": cid, "validationStatus": "valid"}, headers)
            if "swapRecord" in body and body["swapRecord"] != existing["cid"]:  # null: "must not exist"
                return self._error(400, "InvalidSwap", f"Record was at {existing['cid']}")
        self.state["points"].append({"at": self.server.now(), "cost": 2 if put else 3})
        committed = self.commit_time()
        self.state["records"][rkey] = {"cid": cid, "value": record, "at": committed, "visible_at": committed}
        return Response(200, {"uri": uri, "cid": cid, "commit": {"cid": cid_of([cid]), "rev": rkey},
                              "validationStatus": "valid"}, self._rate_headers(),
                        hold_until=committed if committed > self.server.now() else None)

    def _visible_record(self, rkey: str) -> dict[str, Any] | None:
        found = self.state["records"].get(rkey)
        return found if found is not None and found.get("visible_at", 0) <= self.server.now() else None

    def _fresh_tid(self) -> str:
        from ..channels.bluesky import tid

        return tid(int(self.server.now() * 1_000_000), len(self.state["records"]) % 1024)

    def _get_record(self, request: Request) -> Response:
        rkey = request.arg("rkey") or ""
        if request.arg("repo") not in (DID, HANDLE) or request.arg("collection") != COLLECTION:
            return self._error(400, "InvalidRequest", "Could not find repo")
        found = self._visible_record(rkey)
        uri = f"at://{DID}/{COLLECTION}/{rkey}"
        if found is None:
            return self._error(400, "RecordNotFound", f"Could not locate record: {uri}")
        return Response(200, {"uri": uri, "cid": found["cid"], "value": found["value"]})

    def _list_records(self, request: Request) -> Response:
        keys = sorted((k for k in self.state["records"] if self._visible_record(k)),
                      reverse=request.arg("reverse") != "true")
        cursor = request.arg("cursor")
        if cursor:
            keys = [k for k in keys if (k < cursor if request.arg("reverse") != "true" else k > cursor)]
        limit = min(100, max(1, int(request.arg("limit", "50") or 50)))
        page = keys[:limit]
        records = [{"uri": f"at://{DID}/{COLLECTION}/{k}", "cid": self.state["records"][k]["cid"],
                    "value": self.state["records"][k]["value"]} for k in page]
        return Response(200, {"records": records, **({"cursor": page[-1]} if len(page) == limit else {})})

    def _upload(self, request: Request) -> Response:
        cid = "bafkrei" + hashlib.sha256(request.body).hexdigest()[:52]
        mime = request.headers.get("content-type", "application/octet-stream")
        self.state["blobs"][cid] = {"size": len(request.body), "mimeType": mime}
        return Response(200, {"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime,
                                       "size": len(request.body)}})
