"""The sandbox Mastodon's access tokens as Doorkeeper answers them: the scopes each token has,
the 401 of a token refused (revoked or unknown), the 403 of an action outside its scopes, and
GET /oauth/token/info."""

from __future__ import annotations

from mkdocs_syndicate.emulator_api import Request, Response

TOKEN = "sandbox-mastodon-token"
# A token made with only the scopes an older README named: it can post and list statuses, but not
# call verify_credentials, which needs `profile` (Mastodon 4.3+), `read` or `read:accounts`.
STATUSES_ONLY_TOKEN = "sandbox-mastodon-token-statuses-only"
ALL_SCOPES = frozenset({"read", "write", "profile"})
# Credentials a person gets wrong (issue 38), as Doorkeeper answers them: a token its owner revoked
# (Settings → Authorized apps → Revoke), one that reads but may not post, and one that expires
# soon (Mastodon issues tokens without expiry; other servers of this API and Doorkeeper's
# `access_token_expires_in` do not).
REVOKED_TOKEN = "sandbox-mastodon-token-revoked"
READ_ONLY_TOKEN = "sandbox-mastodon-token-read-only"
EXPIRING_TOKEN = "sandbox-mastodon-token-expiring"
EXPIRING_IN = 3 * 86400
ACCOUNT_ID = "1"


def allows(scopes: frozenset[str], *any_of: str) -> bool:
    return bool(scopes & set(any_of))


def outside() -> Response:
    """Api::BaseController#doorkeeper_forbidden_render_options, and Doorkeeper's header."""
    return Response(
        403,
        {"error": "This action is outside the authorized scopes"},
        {
            "WWW-Authenticate": 'Bearer realm="Doorkeeper", error="insufficient_scope", '
            'error_description="The request requires higher privileges than provided '
            'by the access token."'
        },
    )


def scopes_of(request: Request, token: str) -> frozenset[str] | None:
    """The scopes of the token the request presents (`token`: the emulator's own, all scopes),
    or None when it presents none the server knows."""
    presented = request.headers.get("authorization", "")
    if presented in (f"Bearer {token}", f"Bearer {EXPIRING_TOKEN}"):
        return ALL_SCOPES
    if presented == f"Bearer {STATUSES_ONLY_TOKEN}":
        return frozenset({"write:statuses", "read:statuses"})
    if presented == f"Bearer {READ_ONLY_TOKEN}":
        return frozenset({"read", "profile"})
    return None


def unauthorized(request: Request) -> Response:
    """Api::BaseController#doorkeeper_unauthorized_render_options: Doorkeeper's description of
    why the token is refused (a revoked one says so), or "The access token is invalid"."""
    revoked = request.headers.get("authorization", "") == f"Bearer {REVOKED_TOKEN}"
    return Response(401, {"error": "The access token was revoked" if revoked else "The access token is invalid"})


def token_info(request: Request, scopes: frozenset[str] | None) -> Response:
    """GET /oauth/token/info, Doorkeeper's TokenInfoController (Mastodon's routes keep it): the
    token as AccessToken#as_json shows it, `scope` an array and `expires_in` null for a token
    without expiry; else (`scopes` None) 401 with OAuth's invalid_token body."""
    if scopes is None:
        revoked = request.headers.get("authorization", "") == f"Bearer {REVOKED_TOKEN}"
        description = "The access token was revoked" if revoked else "The access token is invalid"
        return Response(
            401,
            {"error": "invalid_token", "error_description": description},
            {
                "WWW-Authenticate": 'Bearer realm="Doorkeeper", error="invalid_token", '
                f'error_description="{description}"'
            },
        )
    expiring = request.headers.get("authorization", "") == f"Bearer {EXPIRING_TOKEN}"
    return Response(
        200,
        {
            "resource_owner_id": int(ACCOUNT_ID),
            "scope": sorted(scopes),
            "expires_in": EXPIRING_IN if expiring else None,
            "application": {"uid": "sandbox-application-uid"},
            "created_at": 1764547200,
        },
    )
