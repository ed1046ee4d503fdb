"""How long a server asked us to wait: Retry-After (seconds or HTTP-date), X-RateLimit-Reset
(Mastodon's ISO time, epoch seconds, or seconds-until) and RateLimit-Reset (Bluesky, epoch).
Malformed values are ignored (None), never guessed."""

from __future__ import annotations

import datetime as dt
import email.utils
from typing import Mapping

from .timeutil import from_iso

_EPOCH_THRESHOLD = 1e9  # larger numbers are epoch seconds, smaller ones seconds-until


def server_delay(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `now` (epoch seconds), or None when the headers say nothing usable."""
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
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, when.timestamp() - now)


def _reset(value: str, now: float) -> float | None:
    try:
        number = float(value)
    except ValueError:
        try:
            return max(0.0, from_iso(value).timestamp() - now)
        except ValueError:
            return None
    if number != number or number < 0:  # NaN or negative: malformed
        return None
    return max(0.0, number - now) if number > _EPOCH_THRESHOLD else number
