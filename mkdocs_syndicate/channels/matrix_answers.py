"""What a Matrix homeserver's answers to a send, an edit or a redaction say, and the transaction
ids the channel derives (channels/matrix.py)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from mkdocs_syndicate.channel_api import BadAnswer, Kind, Outcome, identifier, json_object, status_outcome

if TYPE_CHECKING:
    import httpx


def refusal(answer: httpx.Response, now: float) -> Outcome:
    """A non-200 answer to a send, an edit or a redaction."""
    outcome = status_outcome(answer, now)
    if outcome.kind is Kind.RATE_LIMITED and outcome.retry_after is None:
        # M_LIMIT_EXCEEDED says how long in its body (Retry-After only since spec v1.10).
        return Outcome(Kind.RATE_LIMITED, error=outcome.error, retry_after=retry_after_ms(answer))
    return outcome


def has_event_id(answer: httpx.Response) -> bool:
    """Synapse's answer to a send or a redaction: `{"event_id": ...}`."""
    try:
        identifier(json_object(answer).get("event_id"), "event_id")
    except BadAnswer:
        return False
    return True


def part_marker(key: str, number: int) -> str:
    """A thread's part `number`'s marker and transaction id: part 1's is the pair's own (`key`,
    from the post's URL and the channel id), each later part's derived from it and the number."""
    return key if number == 1 else txn_id("part", key, str(number))


def txn_id(purpose: str, key: str, *parts: str) -> str:
    """A transaction id derived from the pair's own id (unique per site, post, channel)."""
    return hashlib.sha256("\n".join(("mkdocs-syndicate", f"matrix-{purpose}", key, *parts)).encode()).hexdigest()


def retry_after_ms(answer: httpx.Response) -> float | None:
    try:
        value = json.loads(answer.content).get("retry_after_ms")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 86_400_000:
        return None
    return value / 1000
