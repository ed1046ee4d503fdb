"""Bluesky emulator (reference: docs/design/services.md, "Bluesky"; bluesky-social/atproto packages/pds and the
lexicons): an entryway (`/bluesky`, like bsky.social) and the account's PDS (`/bluesky-pds`).

The entryway answers createSession with JWT-shaped access and refresh tokens and a DID document
whose `#atproto_pds` service names the PDS; repository calls must go to the PDS (the entryway
answers them MethodNotImplemented), as a client following the DID document does. The PDS serves
getSession, refreshSession, describeRepo (no auth), createRecord (500 on an existing rkey),
putRecord (identical bytes are a no-op; swapRecord null over different content is InvalidSwap),
getRecord (RecordNotFound), listRecords and uploadBlob, and checks what the lexicon and the PDS
check: the TID syntax of rkeys, 300 graphemes / 3000 bytes of text, facet ranges, #tag facets of
at most 64 graphemes / 640 bytes, up to 3 `langs` that are BCP 47 tags, and a `createdAt` that
is a strict atproto datetime. CIDs are real CIDv1
strings (dag-cbor or raw codec, sha2-256), so the official SDK can decode them.

Written from the service's rules, not from the client: its own TIDs, its own grapheme counting.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import math
import re
import secrets as _random
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, cast

import regex

from mkdocs_syndicate.sandbox.emulator import Emulator, Request, Response, first_url

# The PDS checks a record's `langs` with the lexicon's strict `language` format (checked against
# the reference PDS itself: tests/test_realserver_bluesky.py; the rule is bluesky-social/atproto's
# packages/syntax/src/language.ts, `parseLanguageString`): well-formed BCP 47 (RFC 5646 §2.1), no
# repeated variant or extension singleton (§4.1), and a primary language subtag of 2–3 lowercase
# letters. So `EN`, `PT-BR`, `english` and `en_US` are refused; `pt-br`, `zh-Hant` and `i-klingon`
# pass. (Older PDS versions checked the syntax alone and took `EN` and `english`.)
_GRANDFATHERED = re.compile(
    r"en-GB-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|"
    r"i-pwn|i-tao|i-tay|i-tsu|sgn-BE-FR|sgn-BE-NL|sgn-CH-DE|art-lojban|cel-gaulish|no-bok|"
    r"no-nyn|zh-guoyu|zh-hakka|zh-min|zh-min-nan|zh-xiang"
)
_PRIVATE_USE = re.compile(r"[xX](?:-[A-Za-z0-9]{1,8})+")
_LANGTAG = re.compile(
    r"(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}(?:-[A-Za-z]{3}){0,2})?|[A-Za-z]{4}|[A-Za-z]{5,8})"  # language
    r"(?:-[A-Za-z]{4})?"  # script
    r"(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"  # region
    r"(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*"  # variants
    r"(?:-[0-9A-WY-Za-wy-z](?:-[A-Za-z0-9]{2,8})+)*"  # extensions
    r"(?:-[xX](?:-[A-Za-z0-9]{1,8})+)?"
)  # private use


def _well_formed_language(value: str) -> bool:
    if _GRANDFATHERED.fullmatch(value) or _PRIVATE_USE.fullmatch(value):
        return True
    if not _LANGTAG.fullmatch(value):
        return False
    subtags = value.split("-")
    return bool(re.fullmatch(r"[a-z]{2,3}", subtags[0])) and _no_repeats(subtags, _past_region(subtags))


def _past_region(subtags: list[str]) -> int:
    """Where the variants start: after the language, its extlangs, the script and the region."""
    i = 1
    while i < len(subtags) and i <= 3 and re.fullmatch(r"[A-Za-z]{3}", subtags[i]):
        i += 1
    for optional in (r"[A-Za-z]{4}", r"[A-Za-z]{2}|[0-9]{3}"):  # script, then region
        if i < len(subtags) and re.fullmatch(optional, subtags[i]):
            i += 1
    return i


def _no_repeats(subtags: list[str], i: int) -> bool:
    """No variant twice, and no extension's singleton twice (private use, after x, aside)."""
    variants: list[str] = []
    while i < len(subtags) and len(subtags[i]) > 1:
        variants.append(subtags[i].lower())
        i += 1
    singletons = [t.lower() for t in subtags[i:] if len(t) == 1]
    singletons = singletons[: singletons.index("x")] if "x" in singletons else singletons
    return len(set(variants)) == len(variants) and len(set(singletons)) == len(singletons)


def _write_problem(body: dict[str, Any], rkey: str | None) -> str | None:
    """What a PDS refuses in a write's addressing, in its words, or None. A repository holds
    records of any collection (an NSID); a record key is checked against its lexicon's key type
    where the PDS knows the lexicon (a post's is a TID), else by the record-key syntax alone
    (https://atproto.com/specs/record-key)."""
    collection = body.get("collection")
    if body.get("repo") not in (DID, HANDLE) or not isinstance(collection, str) or not _NSID.fullmatch(collection):
        return "Could not find repo or collection"
    if rkey is None:
        return 'Input must have the property "rkey"'
    if collection in _TID_KEYED and not _TID.fullmatch(rkey):
        # The reference PDS's words (checked against it: tests/test_realserver_bluesky.py).
        return f'Invalid record key for {collection}: Invalid TID string (got "{rkey}") at $'
    if not _RKEY.fullmatch(rkey) or rkey in (".", ".."):
        return "Invalid record key"
    return None


def _needs_the_pds(method: str, *, at_pds: bool) -> bool:
    """A repository method sent to the entryway: the repository lives on the PDS its DID
    document names (describeRepo answers anywhere)."""
    return method.startswith(_REPO_METHODS) and not at_pds and method != "com.atproto.repo.describeRepo"


HANDLE = "sandbox.bsky.social"
DID = "did:plc:sandbox0000000000000000"
APP_PASSWORD = "sandbox-bsky-app-password"
COLLECTION = "app.bsky.feed.post"
ACCESS_TTL = 7200.0
REFRESH_TTL = 90 * 86400.0
REFRESH_GRACE = 2 * 3600.0
WRITE_LIMIT, WRITE_WINDOW = 5000, 3600
_TID = re.compile(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}")
_RKEY = re.compile(r"[A-Za-z0-9._:~-]{1,512}")  # the record-key syntax
# An NSID (https://atproto.com/specs/nsid): a reversed domain and a name, e.g. site.standard.document.
_NSID = re.compile(
    r"[a-zA-Z](?:[a-zA-Z0-9-]{0,62})(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,62})){1,}\.[a-zA-Z][a-zA-Z0-9]{0,62}"
)
_S32 = "234567abcdefghijklmnopqrstuvwxyz"
_REPO_METHODS = ("com.atproto.repo.",)


def _cid(data: bytes, codec: int) -> str:
    """CIDv1, sha2-256 multihash, base32 lower (multibase 'b'): bafyrei… (dag-cbor), bafkrei… (raw)."""
    raw = bytes([0x01, codec, 0x12, 0x20]) + hashlib.sha256(data).digest()
    return "b" + base64.b32encode(raw).decode("ascii").lower().rstrip("=")


def _iso(epoch: float) -> str:
    """An AppView timestamp: UTC with milliseconds and a Z."""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def cid_of(value: Any) -> str:
    """The record's CID. A real PDS hashes its DAG-CBOR bytes; canonical JSON stands in here: the
    same content gives the same CID, other content another one, and the string is a valid CID."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _cid(canonical.encode("utf-8"), 0x71)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _tid(micros: int, clock_id: int) -> str:
    """A TID as the atproto spec defines it: 0, 53 bits of µs since the epoch, 10 bits of clock id,
    in base32-sortable, 13 characters."""
    number = (micros << 10) | clock_id
    return "".join(_S32[(number >> (5 * i)) & 31] for i in reversed(range(13)))


def _graphemes(text: str) -> int:
    return len(regex.findall(r"\X", text))


class BlueskyEmulator(Emulator):
    name = "bluesky"
    also_at: tuple[str, ...] = ("bluesky-pds", "bluesky-appview")  # the PDS; the public AppView readers' browsers ask
    app_password = APP_PASSWORD  # what it accepts; tests may set their own (a sentinel)
    jwt_prefix = ""  # tests: a marker inside every token it hands out
    public_pages: tuple[str, ...] = ("/profile/",)
    creating: tuple[str, ...] = ("POST /xrpc/com.atproto.repo.putRecord", "POST /xrpc/com.atproto.repo.createRecord")
    read_marker = "getRecord"
    _OPEN: ClassVar[dict[tuple[str, str], Callable[[BlueskyEmulator, Request], Response]]]
    _AUTHED: ClassVar[dict[tuple[str, str], Callable[[BlueskyEmulator, Request], Response]]]
    access_ttl = ACCESS_TTL
    expire_next_login = False  # tests: the next createSession hands out an already expired token
    # The account as its host may leave it (issue 38), as the reference PDS answers it
    # (packages/pds: createSession, getSession, auth-verifier.ts `findAccount`): "deactivated" by
    # its owner (a login works and says so; writes are refused AccountDeactivated), or
    # "takendown" by the host (a login is refused AccountTakedown). None: active.
    account_status: str | None = None

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
            }
            for rkey, r in state.get("records", {}).items()
        ]

    @staticmethod
    def _error(status: int, name: str, message: str, headers: dict[str, str] | None = None) -> Response:
        return Response(status, {"error": name, "message": message}, headers or {})

    def _pds(self, request: Request) -> str:
        """The PDS's address as this client reaches the server (the DID document's endpoint)."""
        return request.base.rsplit("/", 1)[0] + f"/{self.name}-pds"

    def did_doc(self, pds: str) -> dict[str, Any]:
        return {
            "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
            "id": DID,
            "alsoKnownAs": [f"at://{HANDLE}"],
            "verificationMethod": [
                {
                    "id": f"{DID}#atproto",
                    "type": "Multikey",
                    "controller": DID,
                    "publicKeyMultibase": "zQ3shXjHeiBuRCKmM36cuYnm7YEMzhGnCmCyW92sRJ9pribSF",
                }
            ],
            "service": [{"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": pds}],
        }

    def _rate_headers(self) -> dict[str, str]:
        now = self.server.now()
        used = sum(p["cost"] for p in self.state["points"] if now - p["at"] < WRITE_WINDOW)
        return {
            "RateLimit-Limit": str(WRITE_LIMIT),
            "RateLimit-Remaining": str(max(0, WRITE_LIMIT - used)),
            "RateLimit-Reset": str(int(now + WRITE_WINDOW)),
            "RateLimit-Policy": f"{WRITE_LIMIT};w={WRITE_WINDOW}",
        }

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        # As xrpc-server's rate-limiter-http.ts: the RateLimit-* status, and Retry-After in seconds.
        wait = float(fault.get("reset_in", 30))
        reset = int(self.server.now() + wait)
        return self._error(
            429,
            "RateLimitExceeded",
            "Rate Limit Exceeded",
            {
                "RateLimit-Limit": str(WRITE_LIMIT),
                "RateLimit-Remaining": "0",
                "RateLimit-Reset": str(reset),
                "RateLimit-Policy": f"{WRITE_LIMIT};w={WRITE_WINDOW}",
                "Retry-After": str(math.ceil(wait)),
            },
        )

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
        return self._not_implemented(method)

    def _not_implemented(self, method: str) -> Response:
        return self._error(501, "MethodNotImplemented", f"Method Not Implemented: {method}")

    def _get_session(self, request: Request) -> Response:
        body = {
            "handle": HANDLE,
            "did": DID,
            "didDoc": self.did_doc(self._pds(request)),
            "emailConfirmed": True,
            **self._status(),
        }
        return Response(200, body, self._rate_headers())

    def _status(self) -> dict[str, Any]:
        """formatAccountStatus: `active`, and `status` only for an account that is not."""
        if self.account_status is None:
            return {"active": True}
        return {"active": False, "status": self.account_status}

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
        commit = {"cid": _cid(f"delete:{rkey}".encode(), 0x71), "rev": self._fresh_tid()}
        return Response(200, {"commit": commit}, self._rate_headers())

    # ---------------------------------------------------------------- sessions

    def _jwt(self, scope: str, ttl: float) -> str:
        now = int(self.server.now())
        header = {"typ": "at+jwt" if scope != "com.atproto.refresh" else "refresh+jwt", "alg": "ES256K"}
        payload = {
            "scope": scope,
            "sub": DID,
            "aud": "did:web:sandbox.bsky.social",
            "iat": now,
            "exp": int(now + ttl),
            "jti": _random.token_hex(12),
        }
        # The test marker leads the signature segment, in plain sight (base64url-safe characters),
        # padded so the segment still decodes.
        signature = self.jwt_prefix + _b64url(_random.token_bytes(64))
        signature += "A" * (-len(signature) % 4)
        return ".".join((_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode()), signature))

    def _new_tokens(self, request: Request) -> dict[str, Any]:
        access = self._jwt("com.atproto.appPass", self.access_ttl)
        refresh = self._jwt("com.atproto.refresh", REFRESH_TTL)
        self.state["sessions"][access] = {"kind": "access", "expires": self.server.now() + self.access_ttl}
        self.state["sessions"][refresh] = {"kind": "refresh", "expires": self.server.now() + REFRESH_TTL}
        return {
            "accessJwt": access,
            "refreshJwt": refresh,
            "handle": HANDLE,
            "did": DID,
            "didDoc": self.did_doc(self._pds(request)),
            "email": "sandbox@example.com",
            "emailConfirmed": True,
            **self._status(),
        }

    def _create_session(self, request: Request) -> Response:
        if not self._login_allowed():
            return self.rate_limited({"reset_in": 300})
        try:
            body = request.json()
        except ValueError:
            return self._error(400, "InvalidRequest", "Input must be JSON")
        if body.get("identifier") not in (HANDLE, DID) or body.get("password") != self.app_password:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or password")
        if self.account_status == "takendown":
            return self._error(401, "AccountTakedown", "Account has been taken down")
        tokens = self._new_tokens(request)
        if self.expire_next_login:
            self.expire_next_login = False
            self.state["sessions"][tokens["accessJwt"]]["expires"] = self.server.now()
        return Response(200, tokens)

    def _login_allowed(self) -> bool:
        """createSession's limits: 30 in 5 minutes and 300 a day; a login the limits allow counts."""
        now = self.server.now()
        logins = [t for t in self.state["logins"] if now - t < 86400]
        if len([t for t in logins if now - t < 300]) >= 30 or len(logins) >= 300:
            return False
        self.state["logins"] = [*logins, now]
        return True

    def _bearer(self, request: Request) -> str:
        return request.headers.get("authorization", "").removeprefix("Bearer ")

    def _refresh(self, request: Request) -> Response:
        session = self.state["sessions"].get(self._bearer(request))
        if not session or session["kind"] != "refresh":
            return self._error(400, "InvalidToken", "Token could not be verified")
        now = self.server.now()
        if session["expires"] <= now:
            return self._error(400, "ExpiredToken", "Token has been revoked")
        # The PDS rotates the refresh token but honours the old one for a grace period (2 hours,
        # account-manager.ts rotateRefreshToken), so a client killed before it kept the new one
        # can still refresh.
        session["expires"] = min(session["expires"], now + REFRESH_GRACE)
        return Response(200, self._new_tokens(request))

    def _check_access(self, request: Request) -> Response | None:
        session = self.state["sessions"].get(self._bearer(request))
        if not session or session["kind"] != "access":
            return self._error(401, "AuthenticationRequired", "Authentication Required")
        if session["expires"] <= self.server.now():
            return self._error(400, "ExpiredToken", "Token has expired")
        return None

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
            known = _STANDARD_SITE.get(collection)
            return _lexicon_problem(collection, record, known) if known else None
        if not isinstance(record, dict) or record.get("$type") != COLLECTION:
            return _invalid("Record/$type must be app.bsky.feed.post")
        text = record.get("text", "")
        if not isinstance(text, str) or _graphemes(text) > 300 or len(text.encode("utf-8")) > 3000:
            return _invalid("Record/text must not be longer than 300 graphemes")
        if not isinstance(record.get("createdAt"), str):
            return _invalid('Record must have the property "createdAt"')
        if not _atproto_datetime(record["createdAt"]):
            # @atproto/lex-schema 0.2.7 (https://www.npmjs.com/package/@atproto/lex-schema, the
            # reference PDS 0.5.35's validator), dist/core/validation-issue.js IssueInvalidFormat:
            # `Invalid ${format} (got ${value}) at ${path}`, answered as InvalidRequest.
            return f"Invalid datetime (got {json.dumps(record['createdAt'])}) at $.record.createdAt"
        return (
            _bad_langs(record.get("langs"))
            or _bad_facets(record, text)
            or _bad_reply(record.get("reply"))
            or self._bad_thumb(record)
        )

    def _bad_thumb(self, record: dict[str, Any]) -> str | None:
        thumb = ((record.get("embed") or {}).get("external") or {}).get("thumb")
        if thumb is None:
            return None
        if thumb.get("size", 0) > 1_000_000 or thumb.get("ref", {}).get("$link") not in self.state["blobs"]:
            return _invalid("thumb blob is missing or over 1000000 bytes")
        if not str(thumb.get("mimeType", "")).startswith("image/"):
            # The lexicon's `accept: ["image/*"]`, checked on the type the record names.
            return _invalid(
                f'Expected "image/*" (got "{thumb.get("mimeType")}") at $.record.embed.external.thumb.mimeType'
            )
        stored = self.state["blobs"].get(thumb.get("ref", {}).get("$link"), {})
        if thumb.get("mimeType") != stored.get("mimeType"):
            return (
                f"Referenced Mimetype does not match stored blob. Expected: {stored.get('mimeType')}, "
                f"Got: {thumb.get('mimeType')}"
            )
        return None

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
        answer = self._over(existing, body, put, cid) if existing is not None else None
        if answer is not None:
            return answer
        return self._commit(rkey, record, cid, cost=2 if put else 3, collection=collection)

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
        commit = _cid(f"commit:{rkey}:{cid}".encode(), 0x71)
        body = {
            "uri": f"at://{DID}/{collection}/{rkey}",
            "cid": cid,
            "commit": {"cid": commit, "rev": self._fresh_tid()},
            "validationStatus": "valid" if collection in _TID_KEYED else "unknown",
        }
        return Response(
            200, body, self._rate_headers(), hold_until=committed if committed > self.server.now() else None
        )

    def _over(self, existing: dict[str, Any], body: dict[str, Any], put: bool, cid: str) -> Response | None:
        """A write to a record key already taken: None when it replaces the record, else the answer."""
        if not put:  # the MST insert throws; the PDS answers a bare 500
            return self._error(500, "InternalServerError", "Internal Server Error")
        if existing["cid"] == cid:  # the same record again: nothing to write
            collection = body["collection"]
            uri = f"at://{DID}/{collection}/{body['rkey']}"
            status = "valid" if collection in _TID_KEYED else "unknown"
            return Response(200, {"uri": uri, "cid": cid, "validationStatus": status}, self._rate_headers())
        if "swapRecord" in body and body["swapRecord"] != existing["cid"]:  # null: "must not exist"
            return self._error(400, "InvalidSwap", f"Record was at {existing['cid']}")
        return None

    def _visible_record(self, rkey: str, collection: str = COLLECTION) -> dict[str, Any] | None:
        found = self._table(collection).get(rkey)
        return found if found is not None and found.get("visible_at", 0) <= self.server.now() else None

    def _fresh_tid(self) -> str:
        return _tid(int(self.server.now() * 1_000_000), len(self.state["records"]) % 1024)

    def _get_record(self, request: Request) -> Response:
        rkey = request.arg("rkey") or ""
        collection = request.arg("collection") or ""
        if request.arg("repo") not in (DID, HANDLE) or not _NSID.fullmatch(collection):
            return self._error(400, "InvalidRequest", "Could not find repo")
        found = self._visible_record(rkey, collection)
        uri = f"at://{DID}/{collection}/{rkey}"
        if found is None:
            return self._error(400, "RecordNotFound", f"Could not locate record: {uri}")
        return Response(200, {"uri": uri, "cid": found["cid"], "value": found["value"]})

    def _list_records(self, request: Request) -> Response:
        collection = request.arg("collection") or ""
        table = self._table(collection) if _NSID.fullmatch(collection) else {}
        keys = sorted(
            (k for k in table if self._visible_record(k, collection)), reverse=request.arg("reverse") != "true"
        )
        cursor = request.arg("cursor")
        if cursor:
            keys = [k for k in keys if (k < cursor if request.arg("reverse") != "true" else k > cursor)]
        limit = min(100, max(1, int(request.arg("limit", "50") or 50)))
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
            return {
                "uri": uri,
                "cid": found["cid"],
                "author": {"did": DID, "handle": HANDLE, "displayName": "Sandbox"},
                "record": found["value"],
                "replyCount": 0,
                "repostCount": 0,
                "likeCount": 0,
                "indexedAt": _iso(found["at"]),
            }
        return next((dict(r["post"]) for r in self.state.get("replies", []) if r["post"]["uri"] == uri), None)

    def _thread(self, uri: str, depth: int) -> Response:
        """app.bsky.feed.getPostThread as the public AppView answers a browser: a threadViewPost
        with its replies (CORS open: the AppView serves any origin)."""
        cors = {"Access-Control-Allow-Origin": "*"}
        root = self._post_view(uri)
        if root is None:
            return self._error(400, "NotFound", f"Post not found: {uri}", cors)

        def view(post: dict[str, Any], level: int) -> dict[str, Any]:
            below = [r["post"] for r in self.state.get("replies", []) if r["parent"] == post["uri"]]
            below += self._own_replies(post["uri"])  # a thread's parts: the account's replies to itself
            node: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": post}
            if level < depth:
                node["replies"] = [view(dict(p), level + 1) for p in below]
            return node

        return Response(200, {"thread": view(root, 0)}, cors)

    def _own_replies(self, uri: str) -> list[dict[str, Any]]:
        """The account's own posts whose `reply.parent` names `uri` (the AppView indexes them)."""
        found = []
        for rkey in sorted(self.state.get("records", {})):
            value = self._visible_record(rkey)
            parent = ((value or {}).get("value", {}).get("reply") or {}).get("parent") or {}
            if value is not None and parent.get("uri") == uri:
                found.append(self._post_view(f"at://{DID}/{COLLECTION}/{rkey}"))
        return [view for view in found if view is not None]

    def add_reply(self, parent: str, author: str, text: str) -> dict[str, Any]:
        """Someone else's public reply to a post here (`parent`: its at:// URI or record key)."""
        uri = parent if parent.startswith("at://") else f"at://{DID}/{COLLECTION}/{parent}"
        above = self._post_view(uri)
        if above is None:
            raise ValueError(f"no post {uri} on the sandbox's Bluesky")
        now = self.server.now()
        did = "did:plc:" + hashlib.sha256(author.encode()).hexdigest()[:24]
        record = {
            "$type": COLLECTION,
            "text": text,
            "createdAt": _iso(now),
            "langs": ["en"],
            "reply": {"root": {"uri": uri, "cid": above["cid"]}, "parent": {"uri": uri, "cid": above["cid"]}},
        }
        post = {
            "uri": f"at://{did}/{COLLECTION}/{self._fresh_tid()}",
            "cid": cid_of(record),
            "author": {"did": did, "handle": f"{author}.elsewhere.example", "displayName": author},
            "record": record,
            "replyCount": 0,
            "repostCount": 0,
            "likeCount": 0,
            "indexedAt": _iso(now),
        }
        self.state.setdefault("replies", []).append({"parent": uri, "post": post})
        return post

    def _upload(self, request: Request) -> Response:
        # The PDS sniffs the bytes (file-type) and keeps the claimed type only when they say
        # nothing (checked against the reference PDS): a PDF sent as image/png is stored as
        # application/pdf, but plain text sent as image/png stays image/png, and a card may then
        # use it. Only the client's own sniffing keeps a non-image out of a post.
        claimed = request.headers.get("content-type")
        if not claimed:
            return self._error(400, "InvalidRequest", "Request encoding (Content-Type) required but not provided")
        cid = _cid(request.body, 0x55)
        mime = _sniffed(request.body) or claimed
        self.state["blobs"][cid] = {"size": len(request.body), "mimeType": mime}
        return Response(
            200, {"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": len(request.body)}}
        )


# The strict atproto datetime the PDS checks a record's `createdAt` with: @atproto/syntax 0.7.7,
# https://github.com/bluesky-social/atproto/blob/main/packages/syntax/src/datetime.ts
# `parseString`: RFC 3339 with "T", an upper-case "Z" or a ±hh:mm offset, any number of fraction
# digits; not "-00:00"; at most 64 characters. Then JavaScript's `Date` must parse it to a year
# from 0 to 9999 (V8 refuses a leap second, and takes 30 February as 2 March).
_DATETIME = re.compile(
    r"(?P<year>[0-9]{4})-(?:0[1-9]|1[012])-(?:[0-2][0-9]|3[01])T(?P<time>(?:[01][0-9]|2[0-3]):[0-5][0-9]):"
    r"(?P<second>[0-5][0-9]|60)(?:\.[0-9]+)?(?:Z|(?P<sign>[+-])(?P<offset>(?:[01][0-9]|2[0-3]):[0-5][0-9]))"
)


def _atproto_datetime(value: str) -> bool:
    match = _DATETIME.fullmatch(value)
    if len(value) > 64 or value.endswith("-00:00") or match is None or match["second"] == "60":
        return False
    # An offset can move the first or last minutes of the range out of it, to year -1 ("normalized
    # to a negative time") or 10000 ("too far in the future").
    shift = _minutes(match["offset"] or "00:00") * (1 if match["sign"] == "+" else -1)
    utc = _minutes(match["time"]) - shift
    too_early = value.startswith("0000-01-01T") and utc < 0
    too_late = value.startswith("9999-12-31T") and utc >= 24 * 60
    return not (too_early or too_late)


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


# standard.site's lexicons, which the reference PDS (0.5.35) bundles and checks records against
# (its dist/lexicons/site/standard/*.defs.js; checked against it: tests/test_realserver_bluesky.py):
# per field, (required, kind, max graphemes, max UTF-8 bytes). Both are keyed by TIDs.
_Field = tuple[bool, str, int, int]
_STANDARD_SITE: dict[str, dict[str, _Field]] = {
    "site.standard.document": {
        "site": (True, "uri", 0, 0),
        "title": (True, "string", 500, 5000),
        "publishedAt": (True, "datetime", 0, 0),
        "path": (False, "string", 0, 0),
        "description": (False, "string", 3000, 30000),
        "textContent": (False, "string", 0, 0),
        "tags": (False, "strings", 128, 1280),
        "updatedAt": (False, "datetime", 0, 0),
        "bskyPostRef": (False, "strongRef", 0, 0),
    },
    "site.standard.publication": {
        "url": (True, "uri", 0, 0),
        "name": (True, "string", 500, 5000),
        "description": (False, "string", 3000, 30000),
    },
}
_TID_KEYED = {COLLECTION, *_STANDARD_SITE}


def _lexicon_problem(collection: str, record: dict[str, Any], fields: dict[str, _Field]) -> str | None:
    """A standard.site record checked as the PDS's lexicon validator checks it, in its words."""
    for name, (required, kind, graphemes, size) in fields.items():
        where = f"$.record.{name}"
        if name not in record:
            if required:
                return f'Invalid {collection} record: Missing required key "{name}" at $.record'
            continue
        problem = _field_problem(record[name], kind, graphemes, size, where)
        if problem:
            return f"Invalid {collection} record: {problem}"
    return None


def _field_problem(value: Any, kind: str, graphemes: int, size: int, where: str) -> str | None:
    if kind == "strings":
        if not isinstance(value, list):
            return f"Expected array value type (got {type(value).__name__}) at {where}"
        for i, item in enumerate(value):
            problem = _field_problem(item, "string", graphemes, size, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if kind == "strongRef":
        ok = isinstance(value, dict) and isinstance(value.get("uri"), str) and isinstance(value.get("cid"), str)
        return None if ok else f"Expected a strong reference (uri and cid) at {where}"
    if not isinstance(value, str):
        return f"Expected string value type (got {type(value).__name__}) at {where}"
    if kind == "datetime" and not _atproto_datetime(value):
        return f"Invalid datetime (got {json.dumps(value)}) at {where}"
    if kind == "uri" and not re.fullmatch(r"[a-z][a-z.+-]*:\S+", value):
        return f"Invalid uri (got {json.dumps(value)}) at {where}"
    if graphemes and _graphemes(value) > graphemes:
        return f"grapheme too big (maximum {graphemes}, got {_graphemes(value)}) at {where}"
    if size and len(value.encode("utf-8")) > size:
        return f"string too big (maximum {size}, got {len(value.encode('utf-8'))}) at {where}"
    return None


def _invalid(why: str) -> str:
    return f"Invalid app.bsky.feed.post record: {why}"


_AT_URI = re.compile(r"at://[^/\s?#]+(?:/[^\s?#]*)?(?:#\S*)?")
_CID = re.compile(r"b[a-z2-7]{20,}|Qm[1-9A-HJ-NP-Za-km-z]{44}")  # base32 CIDv1, or a base58 CIDv0


def _bad_reply(reply: Any) -> str | None:
    """`reply` as the lexicon's app.bsky.feed.post#replyRef: `root` and `parent`, each a
    com.atproto.repo.strongRef (an at-uri and a CID), in the reference PDS's words (0.5.35;
    tests/test_realserver_bluesky.py). The PDS checks the shape only: a parent that does not exist,
    or a cid that is not the parent's, is stored (the AppView, not the PDS, builds threads)."""
    if reply is None:
        return None
    if not isinstance(reply, dict):
        return _invalid(f"Expected object value type (got {json.dumps(reply)}) at $.record.reply")
    for name in ("root", "parent"):
        if name not in reply:
            return _invalid(f'Missing required key "{name}" at $.record.reply')
    for name in ("root", "parent"):
        ref, where = reply[name], f"$.record.reply.{name}"
        if not isinstance(ref, dict):
            return _invalid(f"Expected object value type (got {json.dumps(ref)}) at {where}")
        for key in ("uri", "cid"):
            if key not in ref:
                return _invalid(f'Missing required key "{key}" at {where}')
        if not isinstance(ref["uri"], str) or not _AT_URI.fullmatch(ref["uri"]):
            return _invalid(f"Invalid at-uri (got {json.dumps(ref['uri'])}) at {where}.uri")
        if not isinstance(ref["cid"], str) or not _CID.fullmatch(ref["cid"]):
            return _invalid(f"Invalid CID string (got {json.dumps(ref['cid'])}) at {where}.cid")
    return None


def _bad_langs(langs: Any) -> str | None:
    if langs is None:
        return None
    if (
        not isinstance(langs, list)
        or len(langs) > 3
        or not all(isinstance(x, str) and _well_formed_language(x) for x in langs)
    ):
        return _invalid("Record/langs must be at most 3 valid language tags")
    return None


def _bad_facets(record: dict[str, Any], text: str) -> str | None:
    """Facet ranges inside the text's UTF-8 bytes, and #tag facets of at most 64 graphemes."""
    size = len(text.encode("utf-8"))
    for facet in record.get("facets") or []:
        index = facet.get("index", {})
        if not 0 <= index.get("byteStart", -1) < index.get("byteEnd", -1) <= size:
            return _invalid("facet index out of range")
        for feature in facet.get("features") or []:
            tag = feature.get("tag") if feature.get("$type") == "app.bsky.richtext.facet#tag" else None
            if tag is not None and (_graphemes(tag) > 64 or len(tag.encode("utf-8")) > 640):
                return _invalid("Record/facets/features/tag must not be longer than 64 graphemes")
    return None


def _sniffed(data: bytes) -> str | None:
    """A blob's type by its magic bytes, for the images and a few common others (the PDS uses the
    file-type package, which knows hundreds; plain text it does not recognise)."""
    for magic, mime in (
        (b"%PDF", "application/pdf"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ):
        if data.startswith(magic):
            return mime
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


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
    ("POST", "com.atproto.repo.uploadBlob"): BlueskyEmulator._upload,
}


class StandardEmulator(BlueskyEmulator):
    """The same PDS for the `standard` channel type (standard.site's `site.standard.publication`
    and `site.standard.document` records, which a PDS stores like any collection it has no
    lexicon for). Its own instance, under `/standard`, because the shared suites and the sandbox
    give each channel type its emulator and state; a `site.standard.document`'s `bskyPostRef`
    names a post of the Bluesky emulator's, which a getRecord here reads as the real PDS reads a
    record it does not hold: from the network (the AppView)."""

    name = "standard"
    also_at: tuple[str, ...] = ("standard-pds",)
    public_pages: tuple[str, ...] = ()
    creating = ("POST /xrpc/com.atproto.repo.putRecord",)  # the documents (the publication: createRecord, once)
    collection = "site.standard.document"

    @classmethod
    def client_options(cls, url: str, public_base: str) -> Mapping[str, object]:
        return {"service": f"{url}/standard", "handle": HANDLE, "app_password": APP_PASSWORD, "keep_session": False}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        documents = state.get("collections", {}).get(self.collection, {})
        publications = state.get("collections", {}).get("site.standard.publication", {})
        urls = {f"at://{DID}/site.standard.publication/{k}": p["value"].get("url", "") for k, p in publications.items()}

        def announces(value: dict[str, Any]) -> str:
            site = str(value.get("site", ""))
            return str(urls.get(site, site)).rstrip("/") + str(value.get("path", ""))

        return [
            {
                "id": rkey,
                "remote_id": f"at://{DID}/{self.collection}/{rkey}",
                "text": str(r["value"].get("title", "")),
                "announces": announces(r["value"]),
                "at": r.get("at"),
                "link": None,
            }
            for rkey, r in sorted(documents.items(), key=lambda item: item[1].get("at") or 0)
        ]

    def _standard_get(self, request: Request) -> Response:
        answer = self._get_record(request)
        bluesky = self.server.emulators.get("bluesky")
        if answer.status == 400 and request.arg("collection") == COLLECTION and isinstance(bluesky, BlueskyEmulator):
            return bluesky._get_record(request)  # not held here: read from the network
        return answer


StandardEmulator._OPEN = {
    **BlueskyEmulator._OPEN,
    ("GET", "com.atproto.repo.getRecord"): lambda emulator, request: StandardEmulator._standard_get(
        cast(StandardEmulator, emulator), request
    ),
}
