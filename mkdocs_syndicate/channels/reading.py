"""Reading a service's answer against the fields a channel needs, and nothing more trusting.

Servers answer with HTML error pages, lists where objects belong, `"id": null`, `"url": 5`. Each
helper either returns a value of the right type or raises BadAnswer, which a channel turns into a
clear per-pair outcome: ambiguous after a write (the post may exist), unknown after a read. So the
ledger never gets `remote_id: None` or a number where a URL belongs, and no traceback escapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.timeutil import from_iso

if TYPE_CHECKING:
    import httpx

    from mkdocs_syndicate.ledger.schema import Record

_CONTROL = lazy_compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_ID = 512
MAX_URL = 4096


class BadAnswer(ValueError):
    """The answer does not have the shape the service documents."""


def json_of(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise BadAnswer(f"{response.status_code} answer is not JSON") from None


def json_object(response: httpx.Response) -> dict[str, Any]:
    body = json_of(response)
    if not isinstance(body, dict):
        raise BadAnswer(f"{response.status_code} answer is a JSON {type(body).__name__}, not an object")
    return body


def json_list(response: httpx.Response) -> list[dict[str, Any]]:
    body = json_of(response)
    if not isinstance(body, list) or not all(isinstance(item, dict) for item in body):
        raise BadAnswer(f"{response.status_code} answer is not a list of objects")
    return body


def objects(value: Any, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise BadAnswer(f"{what} is not a list of objects")
    return value


def identifier(value: Any, what: str = "id") -> str:
    """A remote id: a non-empty string or a whole number, printable, of sane length."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise BadAnswer(f"{what} is {_shown(value)}, not an identifier")
    text = str(value)
    if not text.strip() or len(text) > MAX_ID or _CONTROL.search(text) or text != text.strip():
        raise BadAnswer(f"{what} is not a usable identifier")
    return text


def optional_url(value: Any, what: str = "url") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadAnswer(f"{what} is {_shown(value)}, not a URL")
    parts = urlsplit(value)
    if (
        parts.scheme not in ("http", "https", "at")
        or not parts.netloc
        or len(value) > MAX_URL
        or _CONTROL.search(value)
        or any(ch.isspace() for ch in value)
    ):
        raise BadAnswer(f"{what} is not an http(s) URL")
    return value


def optional_text(value: Any, what: str) -> str:
    """Text the channel searches in (content, canonical_url): absent is empty, a non-string is wrong."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadAnswer(f"{what} is {_shown(value)}, not text")
    return value


def timestamp(value: Any, what: str) -> float:
    if not isinstance(value, str):
        raise BadAnswer(f"{what} is {_shown(value)}, not a time")
    try:
        return from_iso(value).timestamp()
    except ValueError:
        raise BadAnswer(f"{what} is not an ISO 8601 time") from None


def same_origin(url: str, base: str) -> bool:
    """Scheme, host and port equal: where a credential may be sent again (pagination links)."""
    a, b = urlsplit(url), urlsplit(base)
    return (a.scheme, a.hostname, a.port or _default_port(a.scheme)) == (
        b.scheme,
        b.hostname,
        b.port or _default_port(b.scheme),
    )


def same_host(url: str, base: str) -> bool:
    """The same host (a status page and the API of one instance, a DEV article and its API)."""
    host = urlsplit(url).hostname
    return bool(host) and host == urlsplit(base).hostname


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme)


def _shown(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


SKEW_MARGIN = 24 * 3600.0
"""How far before the pair's first attempt a read of the account's own posts goes: a service's
clock may be hours off ours, so "absent" needs the read to cover `created_at` minus this margin."""


def scan_bound(record: Record) -> float:
    """The oldest server timestamp a read must reach before it may call a post absent."""
    return first_attempt(record) - SKEW_MARGIN


def first_attempt(record: Record) -> float:
    """Epoch seconds of the pair's first attempt (`created_at`, else `at`): scan bounds and key
    windows are measured from here, never from `at`, which each attempt rewrites."""
    return from_iso(record.created_at or record.at).timestamp()


_PLAIN_SEGMENT = lazy_compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,254}[A-Za-z0-9_])?")


def plain_segment(value: Any) -> str | None:
    """A path segment of the service's own URL form (a user name, a slug) taken from its answer:
    letters, digits, `_`, `.` and `-` only, else None (never a path a server could steer)."""
    return value if isinstance(value, str) and _PLAIN_SEGMENT.fullmatch(value) else None


def copy_url(answered: str | None, own: str | None, is_own: Callable[[str], bool]) -> tuple[str | None, str | None]:
    """The URL to record for a copy whose answer named `answered`, and a note when that is not it:
    a URL on another host than the channel's service is suspect (a proxy's rewrite, a hostile or
    broken server), so the copy's URL in the service's own form, `own` (made from the copy's id
    and the channel's settings), is recorded instead (none when it cannot be made), and the note
    says so for the ledger and the run's report."""
    if answered is None or is_own(answered):
        return answered, None
    host = urlsplit(answered).hostname or "?"
    instead = f"{own} recorded, the service's own form" if own else "no URL recorded"
    return own, f"suspect: the service answered with the copy's URL on another host ({host}); {instead}"
