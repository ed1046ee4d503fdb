"""An AT Protocol account's session for a channel: one login per run (createSession), the last
run's session resumed when it was kept, tokens refreshed once when they expire, and the account's
PDS found from its DID document. The tokens live in memory (and the refresh token in the kept
session file), never in the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Channel,
    ChannelSettings,
    ConfigError,
    Http,
    Kind,
    Option,
    Outcome,
    Site,
    identifier,
    json_object,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.sessions import SessionFile
from mkdocs_syndicate.config.channels import check_url
from mkdocs_syndicate.redaction import Secret

if TYPE_CHECKING:
    import httpx


def without_at(value: str, setting: str) -> str:
    """The handle as createSession takes it: the apps show it as `@me.bsky.social`, and people
    copy it from there. No handle or DID starts with `@`, so dropping it changes no account."""
    return value.removeprefix("@")


HANDLE = Option("text", required=True, help="e.g. me.bsky.social (a leading @ is dropped)", check=without_at)


class AtprotoSessionChannel(Channel):
    """A channel that writes to an AT Protocol repository through an app-password session."""

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        super().__init__(settings, site)
        self._session: dict[str, Any] | None = None
        self._failed_login: Outcome | None = None  # from warm_up, for the send that follows
        self._login_failed: Outcome | None = None  # a login that stops the lane: never tried twice a run
        self._kept = (
            SessionFile("bluesky", str(settings.options["service"]), str(settings.options["handle"]))
            if settings.options.get("keep_session", True)
            else None
        )

    def secrets(self) -> list[Any]:
        tokens = [self._session[k] for k in ("access", "refresh")] if self._session else []
        return [*super().secrets(), *tokens]

    def access_scope(self) -> str | None:
        """The `scope` in the session's access token's payload (the PDS's: com.atproto.appPass for
        an app password's session, com.atproto.access for the account password's), None when it
        cannot be read. Only that claim is read; the token itself is never kept or shown."""
        import base64
        import binascii
        import json

        token = self._session["access"].reveal() if self._session else ""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except (ValueError, binascii.Error):
            return None
        scope = payload.get("scope") if isinstance(payload, dict) else None
        return scope if isinstance(scope, str) else None

    @property
    def _xrpc(self) -> str:
        return f"{self.settings.options['service']}/xrpc"

    async def _login(self, http: Http) -> Outcome | None:
        """Open the run's one session: the last run's, refreshed, when it was kept and is still
        good, else a new login. An Outcome when that fails (nothing was posted)."""

        if self._login_failed is not None:  # this run's one login failed: no second one
            return self._login_failed
        if self._session is not None or await self._resume(http):
            return None
        failed = await self._create_session(http)
        if failed is not None and failed.kind is Kind.AUTH:
            self._login_failed = failed
        return failed

    async def _create_session(self, http: Http) -> Outcome | None:
        """createSession. A login that failed in a way another try this run would meet again
        (credentials refused, an unreadable answer, a server error) is Kind.AUTH: the lane stops,
        as it does for a 401, instead of logging in again for every post (8 logins for 2 posts)."""
        import httpx

        try:
            response = await http.request(
                "POST",
                f"{self._xrpc}/com.atproto.server.createSession",
                json={
                    "identifier": self.settings.options["handle"],
                    "password": self.settings.options["app_password"].reveal(),
                },
            )
        except httpx.TransportError as exc:
            outcome = transport_outcome(exc)
            if outcome.kind is Kind.AMBIGUOUS:  # a login creates nothing: no post can exist
                return Outcome(Kind.NOT_SENT, error=f"login: {outcome.error}")
            return outcome
        if response.status_code != 200:
            failed = status_outcome(response, http.now())
            kind = Kind.AUTH if response.status_code in (400, 401) or response.status_code >= 500 else failed.kind
            if kind is Kind.AMBIGUOUS:  # a login creates nothing: no post can exist
                kind = Kind.NOT_SENT
            return Outcome(kind, error=f"login: {failed.error}", retry_after=failed.retry_after)
        try:
            body = json_object(response)
            did = identifier(body.get("did"), "did")
            self._session = {
                "did": did,
                "handle": body.get("handle"),
                "pds": self._pds_of(body.get("didDoc"), did),
                "access": Secret(identifier(body.get("accessJwt"), "accessJwt")),
                "refresh": Secret(identifier(body.get("refreshJwt"), "refreshJwt")),
            }
        except BadAnswer as exc:
            return Outcome(Kind.AUTH, error=f"login: unreadable session ({exc}); nothing was posted")
        except ConfigError as exc:
            return Outcome(Kind.REFUSED, error=f"login: {exc}")
        self._keep()
        return None

    async def _resume(self, http: Http) -> bool:
        """The last run's kept session, refreshed: True when the server still honours it; a
        session it refuses is forgotten (the caller logs in)."""
        import httpx

        kept = self._kept.load() if self._kept is not None else None
        if self._kept is None or not kept or not {"did", "pds", "refresh"} <= kept.keys():
            return False
        self._session = {
            "did": kept["did"],
            "handle": kept.get("handle"),
            "pds": kept["pds"],
            "access": Secret(""),  # replaced by the refresh
            "refresh": Secret(kept["refresh"]),
        }
        try:
            if await self._refresh(http):
                return True
        except httpx.TransportError:
            self._session = None  # the login that follows meets the same network and says so
        self._kept.forget()
        return False

    def _keep(self) -> None:
        """Write the session down for the next run (refresh tokens rotate: each new one replaces
        the last; the server honours the old one for a grace period, so a kill before this write
        still refreshes)."""
        if self._kept is not None and self._session is not None:
            self._kept.save(
                {
                    "did": self._session["did"],
                    "pds": self._session["pds"],
                    "handle": str(self._session.get("handle") or ""),
                    "refresh": self._session["refresh"].reveal(),
                }
            )

    def _pds_of(self, did_doc: Any, did: str) -> str:
        """Where the account's repository lives: the `#atproto_pds` service of the DID document
        createSession returns (as the official SDK reads it), else `service` itself. The access
        token goes there, so it must be https (http only on loopback)."""
        services = did_doc.get("service") if isinstance(did_doc, dict) else None
        for service in services if isinstance(services, list) else []:
            if (
                isinstance(service, dict)
                and service.get("id") in ("#atproto_pds", f"{did}#atproto_pds")
                and service.get("type") == "AtprotoPersonalDataServer"
                and isinstance(service.get("serviceEndpoint"), str)
            ):
                return check_url(service["serviceEndpoint"].rstrip("/"), "the PDS in the account's DID document")
        return str(self.settings.options["service"])

    @property
    def _pds_xrpc(self) -> str:
        return f"{self._session['pds'] if self._session else self.settings.options['service']}/xrpc"

    async def _refresh(self, http: Http) -> bool:
        assert self._session is not None
        response = await http.request(
            "POST",
            f"{self._pds_xrpc}/com.atproto.server.refreshSession",
            headers={"Authorization": f"Bearer {self._session['refresh'].reveal()}"},
        )
        try:
            if response.status_code != 200:
                raise BadAnswer(f"refreshSession answered {response.status_code}")
            body = json_object(response)
            self._session.update(
                access=Secret(identifier(body.get("accessJwt"), "accessJwt")),
                refresh=Secret(identifier(body.get("refreshJwt"), "refreshJwt")),
            )
        except BadAnswer:
            self._session = None
            return False
        self._keep()
        return True

    async def _authed(self, http: Http, method: str, name: str, **kwargs: Any) -> httpx.Response:
        """A request with the session's access token, refreshed once if it expired."""
        assert self._session is not None
        for attempt in range(2):
            headers = {**kwargs.pop("headers", {}), "Authorization": f"Bearer {self._session['access'].reveal()}"}
            response = await http.request(method, f"{self._pds_xrpc}/{name}", headers=headers, **kwargs)
            if (
                response.status_code == 400
                and "ExpiredToken" in response.text
                and attempt == 0
                and await self._refresh(http)
            ):
                kwargs["headers"] = {k: v for k, v in headers.items() if k != "Authorization"}
                continue
            return response
        return response

    async def warm_up(self, http: Http) -> None:
        """Log in while the in_flight record is pushed: a session creates nothing. A failed login
        is kept, and the send reports it without a second try."""
        if self._session is None and self._failed_login is None:
            self._failed_login = await self._login(http)

    async def close(self) -> None:
        self._session = None

    async def _get_in(self, http: Http, collection: str, rkey: str, repo: str | None = None) -> httpx.Response:
        """getRecord at the account's PDS: in the account's repository unless `repo` names one."""
        assert self._session is not None
        return await http.request(
            "GET",
            f"{self._pds_xrpc}/com.atproto.repo.getRecord",
            params={"repo": repo or self._session["did"], "collection": collection, "rkey": rkey},
        )
