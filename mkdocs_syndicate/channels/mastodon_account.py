"""Mastodon's credential check: verify_credentials proves the token and names the account;
Doorkeeper's GET /oauth/token/info gives its scopes and expiry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mkdocs_syndicate.channel_api import (
    EXPIRY_WARNING,
    BadAnswer,
    CredentialCheck,
    Health,
    Http,
    check_unreachable,
    error_detail,
    json_object,
    optional_text,
    rate_limit_left,
)

if TYPE_CHECKING:
    import httpx


# What sending needs of a token, each met by its granular scope or the broad one above it: to post
# and edit, to read own statuses back (verify), and verify_credentials (the account's id).
NEEDED_SCOPES = (
    ("write:statuses", "write"),
    ("read:statuses", "read"),
    ("profile", "read:accounts", "read"),
)
TOKEN_ADVICE = (
    "make a new access token (Preferences → Development → your application) with the scopes "
    "write:statuses read:statuses profile, and put it where the config's token setting reads it"
)


class MastodonCheck:
    """The credential check (`MastodonChannel.check_credentials`) of the token `auth` carries, at
    the instance `base`: verify_credentials proves the token and names the account; Doorkeeper's
    GET /oauth/token/info (which Mastodon's routes keep: `use_doorkeeper` without skipping
    token_info) gives its scopes and expiry."""

    def __init__(self, base: str, auth: dict[str, str]) -> None:
        self.base = base
        self.auth = auth

    async def run(self, http: Http) -> CredentialCheck:
        import httpx

        try:
            me = await http.request("GET", f"{self.base}/api/v1/accounts/verify_credentials", headers=self.auth)
            if me.status_code != 200:
                return refused_check(me)
            account = "@" + optional_text(json_object(me).get("acct"), "acct")
            info = await http.request("GET", f"{self.base}/oauth/token/info", headers=self.auth)
        except (httpx.HTTPError, BadAnswer) as exc:
            return check_unreachable(exc)
        limits = rate_limit_left(me.headers)
        return self._scopes_and_expiry(account, info, (limits,) if limits else ())

    def _scopes_and_expiry(self, account: str, info: httpx.Response, details: tuple[str, ...]) -> CredentialCheck:
        try:
            body = json_object(info) if info.status_code == 200 else None
        except BadAnswer:
            body = None
        scopes = body.get("scope") if body else None
        if isinstance(scopes, str):  # other servers of this API may send OAuth's space-separated string
            scopes = scopes.split()
        if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
            said = f"/oauth/token/info answered {info.status_code}"
            return CredentialCheck(
                Health.OK, account, details=(*details, f"scopes not reported by this server ({said})")
            )
        details = (*details, "scopes: " + " ".join(scopes))
        missing = [group[0] for group in NEEDED_SCOPES if not set(group) & set(scopes)]
        if missing:
            return CredentialCheck(
                Health.FAILING,
                account,
                problem=f"the token lacks the scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}",
                action=TOKEN_ADVICE,
                details=details,
            )
        expires_in = body.get("expires_in") if body else None
        if isinstance(expires_in, int) and not isinstance(expires_in, bool):
            days = expires_in / 86400
            details = (*details, f"expires in {days:.1f} days")
            if expires_in < EXPIRY_WARNING:
                return CredentialCheck(
                    Health.EXPIRING,
                    account,
                    problem=f"the token expires in {days:.1f} days",
                    action=TOKEN_ADVICE,
                    details=details,
                    expires_in=float(expires_in),
                )
            return CredentialCheck(Health.OK, account, details=details, expires_in=float(expires_in))
        return CredentialCheck(Health.OK, account, details=(*details, "does not expire"))


def refused_check(response: httpx.Response) -> CredentialCheck:
    """verify_credentials refused: 401 is the token itself (invalid, revoked, expired: Doorkeeper's
    words), 403 its scopes; anything else proves nothing about the token."""
    detail = error_detail(response).removeprefix(": ")
    if response.status_code == 401:
        return CredentialCheck(Health.FAILING, problem=f"401 {detail or 'token refused'}", action=TOKEN_ADVICE)
    if response.status_code == 403:
        return CredentialCheck(
            Health.FAILING,
            problem=f"403 {detail or 'forbidden'}: the token may not call verify_credentials",
            action=TOKEN_ADVICE,
        )
    return CredentialCheck(
        Health.UNKNOWN,
        problem=f"verify_credentials answered {response.status_code}{error_detail(response)}",
        action="check the instance setting and whether the instance is up, then run the check again",
    )
