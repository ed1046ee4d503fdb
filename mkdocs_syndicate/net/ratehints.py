"""How long a server asked us to wait: Retry-After (seconds or HTTP-date), X-RateLimit-Reset
(Mastodon's ISO time, epoch seconds, or seconds-until) and RateLimit-Reset (Bluesky, epoch).
Malformed values (`inf`, `1e400`, `²`, a date in the past, garbage) are ignored (None, so the
caller uses its default wait), never guessed and never an exception; absurdly long waits are
clamped to MAX_DELAY (the caller's max_wait decides whether to sit through them)."""

from __future__ import annotations

import datetime as dt
import email.utils
import math
from collections.abc import Mapping

from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.timeutil import from_iso

_EPOCH_THRESHOLD = 1e9  # larger numbers are epoch seconds, smaller ones seconds-until
MAX_DELAY = 7 * 86400.0  # a week: anything longer is the same answer ("not in this run")
_DIGITS = lazy_compile(r"[0-9]{1,12}")  # ASCII only: str.isdigit() accepts '²'
_NUMBER = lazy_compile(r"[0-9]{1,20}(\.[0-9]{1,9})?")


def server_delay(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `now` (epoch seconds), or None when the headers say nothing usable."""
    try:
        delay = _delay(headers, now)
    except (ValueError, OverflowError, TypeError):  # belt and braces: a header never raises
        return None
    if delay is None or not math.isfinite(delay) or delay < 0:
        return None
    return min(delay, MAX_DELAY)


def _delay(headers: Mapping[str, str], now: float) -> float | None:
    retry_after = (headers.get("Retry-After") or "").strip()
    if retry_after:
        delay = _retry_after(retry_after, now)
        if delay is not None:
            return delay
    for name in ("X-RateLimit-Reset", "RateLimit-Reset"):
        reset = (headers.get(name) or "").strip()
        if reset:
            delay = _reset(reset, now)
            if delay is not None:
                return delay
    return None


def _retry_after(value: str, now: float) -> float | None:
    if _DIGITS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return _until(when.timestamp(), now)


def _until(moment: float, now: float) -> float | None:
    """A reset time already past says nothing usable (clock skew, a stale header)."""
    return moment - now if moment > now else None


def _reset(value: str, now: float) -> float | None:
    if not _NUMBER.fullmatch(value):
        try:
            return _until(from_iso(value).timestamp(), now)
        except (ValueError, OverflowError):
            return None
    number = float(value)
    return _until(number, now) if number > _EPOCH_THRESHOLD else number
