"""What Bluesky's login and getSession say about the account, as a credential check: a refused
app password, an account taken down or deactivated, a handle that moved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    CredentialCheck,
    Health,
    Http,
    Kind,
    Outcome,
    check_unreachable,
    error_detail,
    json_object,
    rate_limit_left,
)

if TYPE_CHECKING:
    from mkdocs_syndicate.channels.atproto_session import AtprotoSessionChannel

PASSWORD_ADVICE = (
    "make a new app password (Settings → Privacy and security → App passwords) and put it where the "
    "config's app_password setting reads it; if the account's handle changed, set `handle` to the new one"
)

OWN_PASSWORD = "com.atproto.access"  # the access token's scope for the account password's session


def login_check(failed: Outcome) -> CredentialCheck:
    """createSession refused: the password (revoked, mistyped, or a handle that moved), the account
    (taken down), or no usable answer."""
    said = (failed.error or "").removeprefix("login: ").replace(" credentials refused", "")
    if failed.kind is Kind.AUTH and "AccountTakedown" in said:
        return CredentialCheck(
            Health.FAILING,
            problem=f"the account has been taken down by its host ({said})",
            action="appeal to the account's host; nothing can be posted until then",
        )
    if failed.kind is Kind.AUTH and said.startswith(("401", "400")):
        return CredentialCheck(
            Health.FAILING,
            problem=f"the app password was refused ({said}): revoked, mistyped, or the handle changed",
            action=PASSWORD_ADVICE,
        )
    return CredentialCheck(
        Health.UNKNOWN,
        problem=said,
        action="check the service setting and whether the PDS is up, then run the check again",
    )


def session_check(
    body: dict[str, Any], configured: str, details: tuple[str, ...], scope: str | None = None
) -> CredentialCheck:
    """getSession's answer: an account that is not active (deactivated, taken down, suspended)
    cannot post; a handle that is no longer the configured one breaks every link the channel makes.
    `scope`, the access token's: the account password's session works, and is warned of."""
    given = body.get("handle")
    handle = given if isinstance(given, str) and given != "handle.invalid" else ""
    account = f"@{handle}" if handle else str(body.get("did") or "")
    status = body.get("status") if isinstance(body.get("status"), str) else None
    if body.get("active") is False or status:
        state = status or "inactive"
        action = (
            "reactivate the account (log in to the Bluesky app and choose to reactivate it)"
            if state == "deactivated"
            else "the account's host has restricted it: appeal there; nothing can be posted until then"
        )
        return CredentialCheck(
            Health.FAILING, account, problem=f"the account is {state}", action=action, details=details
        )
    if not configured.startswith("did:") and handle.lower() != configured.lower():
        shown = handle or "no valid handle (handle.invalid: it no longer resolves)"
        return CredentialCheck(
            Health.FAILING,
            account,
            problem=f"the account's handle is now {shown}, not {configured}: the links made from it would break",
            action=f"set the channel's handle to {handle}" if handle else "fix the account's handle, then set it here",
            details=details,
        )
    if scope == OWN_PASSWORD:
        return CredentialCheck(
            Health.OK,
            account,
            problem="the session is the account password's, not an app password's",
            action="make an app password (Settings → Privacy and security → App passwords) and put it where "
            "app_password reads it: an app password can be revoked alone, without changing the account's "
            "password, and cannot change the account's settings",
            details=details,
        )
    return CredentialCheck(Health.OK, account, details=(*details, "app passwords do not expire"))


async def credentials_check(channel: AtprotoSessionChannel, http: Http) -> CredentialCheck:
    """A new login with the app password (a kept session would not prove the password still
    works), then getSession at the account's PDS: the account's status (deactivated, taken
    down) and its handle now."""
    import httpx

    if channel._login_failed is not None:  # this run's login was refused: never a second one
        return login_check(channel._login_failed)
    try:
        failed = await channel._create_session(http)
        if failed is not None:
            return login_check(failed)
        assert channel._session is not None
        response = await channel._authed(http, "GET", "com.atproto.server.getSession")
        body = json_object(response) if response.status_code == 200 else None
    except (httpx.HTTPError, BadAnswer) as exc:
        return check_unreachable(exc)
    if body is None:
        return CredentialCheck(
            Health.UNKNOWN,
            problem=f"getSession answered {response.status_code}{error_detail(response)}",
            action="check the service setting and whether the PDS is up, then run the check again",
        )
    details = (limits,) if (limits := rate_limit_left(response.headers)) else ()
    return session_check(body, str(channel.settings.options["handle"]), details, channel.access_scope())
