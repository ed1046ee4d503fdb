"""What a Matrix homeserver's answers to a send, an edit or a redaction say, what a read of one
event says, and the transaction ids the channel derives (channels/matrix.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Kind,
    Outcome,
    error_detail,
    identifier,
    json_object,
    status_outcome,
)

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
    """A transaction id derived from the pair's own id (unique per site, post, channel, life)."""
    return hashlib.sha256("\n".join(("mkdocs-syndicate", f"matrix-{purpose}", key, *parts)).encode()).hexdigest()


def retry_after_ms(answer: httpx.Response) -> float | None:
    try:
        value = json.loads(answer.content).get("retry_after_ms")
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 86_400_000:
        return None
    return value / 1000


@dataclass(frozen=True)
class EventRead:
    """An event as a read of its own id found it."""

    state: str  # "ours" (this pair's event, not redacted), "redacted", or "unknown"
    reason: str = ""
    content: Mapping[str, Any] | None = None  # what it says now: the latest replacement's new content
    latest: str = ""  # the event id of what it says now (the original's, or the latest replacement's)


def event_read(answer: httpx.Response, event_id: str, marker: str | None, key: str) -> EventRead:
    """`GET /rooms/{roomId}/event/{eventId}`'s answer: the event is this pair's when its own
    content carries `marker` under `key`; redacted when Synapse says so (`redacted_because`);
    anything else, a 404 included (also Synapse's answer to an event the bot may not see), unknown."""
    if answer.status_code != 200:
        return EventRead("unknown", f"the event read answered {answer.status_code}{error_detail(answer)}")
    try:
        event = json_object(answer)
    except BadAnswer as exc:
        return EventRead("unknown", f"the event read is unreadable ({exc})")
    unsigned, content = event.get("unsigned"), event.get("content")
    if event.get("event_id") != event_id or not isinstance(unsigned, dict) or not isinstance(content, dict):
        return EventRead("unknown", "the event read is not the copy's event")
    if isinstance(unsigned.get("redacted_because"), dict):
        return EventRead("redacted", "the message was redacted")
    if not marker or content.get(key) != marker:
        return EventRead("unknown", "the event does not carry this post's marker")
    relations = unsigned.get("m.relations")
    replaced = relations.get("m.replace") if isinstance(relations, dict) else None
    if replaced is None:
        return EventRead("ours", content=content, latest=event_id)
    edit = replaced if isinstance(replaced, dict) else {}
    edit_content = edit.get("content")
    new = edit_content.get("m.new_content") if isinstance(edit_content, dict) else None
    latest = edit.get("event_id")
    if not isinstance(new, dict) or not isinstance(latest, str) or not latest:
        return EventRead("unknown", "the event's latest replacement is unreadable")
    return EventRead("ours", content=new, latest=latest)


def answered_outcome(read: EventRead, event_id: str, link: str) -> Outcome:
    """A send's 200 as the read of the event it names proves it: this pair's, not redacted, is
    done; redacted is this life's copy gone (a transaction id used before, answered with what it
    made then: sending again under it would be answered the same); anything else proves nothing,
    and the engine's read decides (channels/matrix.py `verify`)."""
    if read.state == "ours":
        return Outcome(Kind.DONE, remote_id=event_id, remote_url=link)
    if read.state == "redacted":
        return Outcome(
            Kind.GONE,
            remote_id=event_id,
            remote_url=link,
            error=f"the send was answered with {event_id}, made earlier under the same transaction id and "
            "since redacted: this life's copy is gone, not sent again (`mkdocs-syndicate resolve --retry` "
            "announces it anew, under new ids)",
        )
    return Outcome(
        Kind.AMBIGUOUS,
        remote_id=event_id,
        remote_url=link,
        error=f"the send was answered with {event_id}, but {read.reason}",
    )
