"""Credentials checked before they are needed (`mkdocs-syndicate doctor`): for each enabled
channel, its own check (`Channel.check_credentials`), one authenticated read each, all at once.

It never writes the ledger (it does not even read it) and never sends. In the sandbox the checks
go to the emulators, with the sandbox's own credentials, as a rehearsal's sends do. A send run
uses `credentials_reason` when a channel's request is refused with 401/403: the same check says
what is wrong with the credential, in plain words, instead of "refused".
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channels.base import Channel, CredentialCheck, Health, Http
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.redaction import redact
from mkdocs_syndicate.safety import clauses, one_line
from mkdocs_syndicate.timeutil import Clock, SystemClock

if TYPE_CHECKING:
    import httpx

CHECK_TIMEOUT = 30.0  # seconds for each request of a check


@dataclass(frozen=True)
class ChannelCheck:
    """One channel's check, as the command shows it."""

    channel: str
    type_name: str
    check: CredentialCheck

    @property
    def line(self) -> str:
        """`masto (mastodon): failing: 401 The access token was revoked; make a new …`; a working
        credential with a problem (`ok: @me; warning: …`) is said to be working first."""
        check = self.check
        head = f"{self.channel} ({self.type_name}): {check.health.value.replace('_', ' ')}"
        if check.health.needs_a_person:
            return one_line(f"{head}: {clauses(check.problem, check.action)}")
        shown = (check.account, *check.details, *(() if self.warns else (check.problem,)))
        extra = ", ".join(part for part in shown if part)
        warning = f"; warning: {clauses(check.problem, check.action)}" if self.warns else ""
        return one_line(f"{head}" + (f": {extra}" if extra else "") + warning)

    @property
    def warns(self) -> bool:
        """A credential that works and should still be changed (Bluesky's account password)."""
        return self.check.health is Health.OK and bool(self.check.problem)

    def to_json(self) -> dict[str, Any]:
        return {"channel": self.channel, "type": self.type_name, **self.check.to_json()}


class _DirectHttp:
    """What a check's channel talks through: bounded requests, no pacing (one read each)."""

    def __init__(self, client: httpx.AsyncClient, clock: Clock) -> None:
        self._client, self._clock = client, clock

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        from mkdocs_syndicate.net.bounded import bounded_request

        kwargs.setdefault("timeout", CHECK_TIMEOUT)
        return await bounded_request(self._client, method, url, total=CHECK_TIMEOUT, **kwargs)

    def now(self) -> float:
        return self._clock.time()


def check_channels(
    options: Options, *, transport: httpx.AsyncBaseTransport | None = None, clock: Clock | None = None
) -> list[ChannelCheck]:
    """Every enabled channel's credential check, in the config's order (sandbox: the emulators')."""
    from mkdocs_syndicate.sandbox.site import run_channels

    with run_channels(options) as (channels, _):
        return asyncio.run(_check_all(channels, transport, clock or SystemClock()))


async def _check_all(
    channels: list[Channel], transport: httpx.AsyncBaseTransport | None, clock: Clock
) -> list[ChannelCheck]:
    import httpx

    async with httpx.AsyncClient(
        transport=transport, follow_redirects=False, headers={"User-Agent": "mkdocs-syndicate"}
    ) as client:
        http = _DirectHttp(client, clock)
        try:
            found = await asyncio.gather(*(checked(channel, http) for channel in channels))
        finally:
            for channel in channels:
                await channel.close()
    return [ChannelCheck(c.id, c.type_name, check) for c, check in zip(channels, found, strict=True)]


async def checked(channel: Channel, http: Http) -> CredentialCheck:
    """A channel's check that never raises, with every credential (and session token) the channel
    knows redacted from every field: a server may echo a token in its error."""
    try:
        found = await channel.check_credentials(http)
    except Exception as exc:  # a check is a read: whatever went wrong, it proved nothing
        found = CredentialCheck(
            Health.UNKNOWN, problem=f"the check failed ({type(exc).__name__}: {exc})", action="run the check again"
        )
    secrets = channel.secrets()

    def clean(text: str) -> str:
        return one_line(redact(text, secrets))

    return dataclasses.replace(
        found,
        account=clean(found.account),
        problem=clean(found.problem),
        action=clean(found.action),
        details=tuple(clean(detail) for detail in found.details),
    )


async def credentials_reason(channel: Channel, http: Http, refused: str) -> str:
    """What to say of a request refused for its credentials (401/403): the channel's check run
    once, lazily, and its finding in plain words. When the check finds the credential sound, the
    refusal is about this request, and it says so; when it proves nothing, the refusal stands as
    it was said."""
    found = await checked(channel, http)
    said = refused.strip().replace(" credentials refused", "")  # "401: …": the check says why
    if found.health in (Health.FAILING, Health.EXPIRING):
        parts = [f"credentials: {found.problem or said}", found.action]
        if found.problem and said and said not in found.problem:
            parts.insert(1, f"the request got {said}")
        return clauses(*parts)
    if found.health is Health.OK:
        return f"credentials look sound ({found.account or 'the check passed'}), yet the service answered {said}"
    return said  # the check proved nothing more than the refusal itself says
