"""The shared readings of a service's HTTP answer: a transport error, a status, an edit's or a
delete's answer, a rate limit's hints, an error's words. Every built-in client reads its answers
through these, so that one status means one thing on every channel (channel_api re-exports them)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mkdocs_syndicate.channels.base import CredentialCheck, Health, Kind, Outcome
from mkdocs_syndicate.net.ratehints import server_delay
from mkdocs_syndicate.safety import clauses

if TYPE_CHECKING:
    import httpx


def transport_outcome(exc: httpx.TransportError) -> Outcome:
    """A connect failure proves nothing left; anything after connecting may have reached the server."""
    import httpx

    name = type(exc).__name__
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return Outcome(Kind.NOT_SENT, error=f"could not connect ({name}); nothing was sent")
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
        return Outcome(Kind.REFUSED, error=f"request could not be made ({name})")
    return Outcome(Kind.AMBIGUOUS, error=f"no answer after sending ({name}); the post may exist")


def status_outcome(response: httpx.Response, now: float) -> Outcome:
    """Non-2xx responses, the same for every channel unless the channel knows better."""
    code = response.status_code
    detail = error_detail(response)
    if code == 429:
        return Outcome(
            Kind.RATE_LIMITED, error=f"429 rate limited{detail}", retry_after=server_delay(response.headers, now)
        )
    if code in (401, 403):
        return Outcome(Kind.AUTH, error=f"{code} credentials refused{detail}")
    if code >= 500 or code == 408:
        return Outcome(Kind.AMBIGUOUS, error=clauses(f"{code} from the server{detail}", "the post may exist"))
    if code < 400:
        # Not the documented success, and not a documented refusal (a 200 HTML page where 201 is
        # documented, a redirect to a login page): nothing proves the post was not made.
        return Outcome(
            Kind.AMBIGUOUS,
            error=clauses(f"{code}, an answer the service does not document{detail}", "the post may exist"),
        )
    return Outcome(Kind.REFUSED, error=f"{code} refused{detail}")


def edit_outcome(response: httpx.Response, now: float, remote_id: str, what: str) -> Outcome:
    """The answer to an edit of an existing copy (a PUT at its own id): 200 is done, the copy
    keeping its id; a 404 proves nothing (only a read of the copy's own id may say it is gone:
    engine/updates.py reads it next); anything else as any answer. `what`: "status", "article"."""
    from mkdocs_syndicate.channels.reading import BadAnswer, json_object, optional_url

    if response.status_code == 200:
        try:
            url = optional_url(json_object(response).get("url"))
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable {what} ({exc}); it may be updated")
        return Outcome(Kind.DONE, remote_id=remote_id, remote_url=url)
    outcome = status_outcome(response, now)
    if response.status_code == 404:
        return Outcome(Kind.AMBIGUOUS, error=clauses(outcome.error or "", f"the {what} is read before anything else"))
    return outcome


def delete_outcome(
    response: httpx.Response,
    now: float,
    *,
    gone: bool,
    what: str,
    confirms: Callable[[httpx.Response], bool] | None = None,
) -> Outcome:
    """The answer to a delete of an existing copy at its own id: a 2xx is done when it is the
    service's documented answer (`confirms`, judged by the channel: a proxy's or a captive
    portal's 200 page proves nothing, and `deleted` is never recorded without proof); `gone` (the
    service's documented "no such copy") is GONE, the goal met before; any other 404 proves
    nothing. What proves nothing is AMBIGUOUS: a read of the copy decides (engine/updates.py)."""
    if 200 <= response.status_code < 300:
        if confirms is None or confirms(response):
            return Outcome(Kind.DONE)
        said = f"{response.status_code}, but not the service's answer to a delete"
        return Outcome(Kind.AMBIGUOUS, error=f"{said}; the {what} is read before anything else")
    if gone:
        return Outcome(Kind.GONE, error=f"the {what} was already deleted")
    outcome = status_outcome(response, now)
    if response.status_code == 404:
        return Outcome(Kind.AMBIGUOUS, error=clauses(outcome.error or "", f"the {what} is read before anything else"))
    return outcome


def check_unreachable(exc: Exception) -> CredentialCheck:
    """A credential check that got no usable answer: it proves nothing either way."""
    return CredentialCheck(
        Health.UNKNOWN,
        problem=f"no usable answer ({type(exc).__name__}{': ' + str(exc) if str(exc) else ''})",
        action="check the service's address in the config and whether it is up, then run the check again",
    )


def rate_limit_left(headers: Mapping[str, str]) -> str | None:
    """'287 of 300 requests left (resets 2026-12-04T18:00:00Z)' from the X-RateLimit-* (Mastodon)
    or RateLimit-* (Bluesky) headers, where the service sends them; None otherwise."""
    for prefix in ("X-RateLimit-", "RateLimit-"):
        limit, left = headers.get(prefix + "Limit", "").strip(), headers.get(prefix + "Remaining", "").strip()
        if limit.isascii() and limit.isdigit() and left.isascii() and left.isdigit():
            reset = _reset_time(headers.get(prefix + "Reset", "").strip())
            return f"{left} of {limit} requests left" + (f" (resets {reset})" if reset else "")
    return None


def _reset_time(value: str) -> str | None:
    """A reset header as an ISO time: Mastodon sends one; Bluesky sends epoch seconds."""
    from mkdocs_syndicate.timeutil import epoch_to_iso, from_iso, to_iso

    try:
        if value.isascii() and value.isdigit():
            return epoch_to_iso(int(value))
        return to_iso(from_iso(value)) if value else None
    except (ValueError, OverflowError, OSError):
        return None


def error_detail(response: httpx.Response) -> str:
    """': <the service's error message>' from a JSON error body, else the plain text. Not cut here:
    the runner redacts credentials first and shortens after (a cut token would leave its prefix)."""
    text = ""
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        for name in ("error", "error_description", "message", "detail"):
            if isinstance(body.get(name), str):
                text = body[name]
                break
    elif response.content and response.headers.get("content-type", "").startswith("text/plain"):
        text = response.text
    text = " ".join(text.split())
    return f": {text}" if text else ""
