"""The account side of the sandbox's PDS, as the reference PDS has it: createSession (its limits
of 30 logins in 5 minutes and 300 a day), refreshSession (rotating, with a grace period),
getSession, JWT-shaped tokens that expire, the account's DID document and status, and the write
points' RateLimit headers. The Bluesky and standard.site emulators are this account's PDS."""

from __future__ import annotations

import json
import math
import secrets as _random
from typing import Any

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.sandbox.atproto_data import b64url

HANDLE = "sandbox.bsky.social"
DID = "did:plc:sandbox0000000000000000"
APP_PASSWORD = "sandbox-bsky-app-password"
ACCOUNT_PASSWORD = "sandbox-bsky-account-password"  # the account's own: a login works, as on a PDS
ACCESS_TTL = 7200.0
REFRESH_TTL = 90 * 86400.0
REFRESH_GRACE = 2 * 3600.0
WRITE_LIMIT, WRITE_WINDOW = 5000, 3600


class AtprotoAccountEmulator(Emulator):
    """An AT Protocol account on its PDS: sessions, tokens, its DID document and status."""

    app_password = APP_PASSWORD  # what it accepts; tests may set their own (a sentinel)
    account_password = ACCOUNT_PASSWORD
    jwt_prefix = ""  # tests: a marker inside every token it hands out
    access_ttl = ACCESS_TTL
    expire_next_login = False  # tests: the next createSession hands out an already expired token
    # The account as its host may leave it (issue 38), as the reference PDS answers it
    # (packages/pds: createSession, getSession, auth-verifier.ts `findAccount`): "deactivated" by
    # its owner (a login works and says so; writes are refused AccountDeactivated), or
    # "takendown" by the host (a login is refused AccountTakedown). None: active.
    account_status: str | None = None

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
        signature = self.jwt_prefix + b64url(_random.token_bytes(64))
        signature += "A" * (-len(signature) % 4)
        return ".".join((b64url(json.dumps(header).encode()), b64url(json.dumps(payload).encode()), signature))

    def _new_tokens(self, request: Request, scope: str) -> dict[str, Any]:
        """`scope`: the access token's, as the PDS's `formatScope` gives it
        (packages/pds/src/account-manager/helpers/auth.ts): com.atproto.appPass for an app
        password's session, com.atproto.access for the account password's; a refresh keeps it."""
        access = self._jwt(scope, self.access_ttl)
        refresh = self._jwt("com.atproto.refresh", REFRESH_TTL)
        self.state["sessions"][access] = {"kind": "access", "expires": self.server.now() + self.access_ttl}
        self.state["sessions"][refresh] = {
            "kind": "refresh",
            "expires": self.server.now() + REFRESH_TTL,
            "scope": scope,
        }
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
        scopes = {self.app_password: "com.atproto.appPass", self.account_password: "com.atproto.access"}
        if body.get("identifier") not in (HANDLE, DID) or body.get("password") not in scopes:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or password")
        if self.account_status == "takendown":
            return self._error(401, "AccountTakedown", "Account has been taken down")
        tokens = self._new_tokens(request, scopes[body["password"]])
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
        return Response(200, self._new_tokens(request, session.get("scope", "com.atproto.appPass")))

    def _check_access(self, request: Request) -> Response | None:
        session = self.state["sessions"].get(self._bearer(request))
        if not session or session["kind"] != "access":
            return self._error(401, "AuthenticationRequired", "Authentication Required")
        if session["expires"] <= self.server.now():
            return self._error(400, "ExpiredToken", "Token has expired")
        return None
