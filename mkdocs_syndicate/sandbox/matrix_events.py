"""A Matrix room's events as Synapse 1.163.2 serves them to a client: relations, edits,
redactions, and the client format. Pure functions over the emulator's stored events (each a dict
with the client's keys plus `transaction_id`, `sent_by` and `visible_at`), no HTTP; the emulator
(sandbox/matrix.py) answers with them. Written from the Client-Server API
(https://spec.matrix.org/latest/client-server-api/, "Event replacements", "Redactions",
"Forming relationships between events") and Synapse's source, v1.163.2; "measured" means seen on
a Synapse 1.163.2 run here by raw HTTP calls.

- A relation is `content["m.relates_to"]` holding a string `rel_type` and a string `event_id`;
  anything else is no relation at all (synapse/events/__init__.py `relation_from_event`).
- Redacting an event removes its own relation (storage/databases/main/events.py
  `_handle_redact_relations`): a redacted edit no longer counts, and an earlier edit is the
  latest again (measured).
- The latest edit of an event (storage/databases/main/relations.py `get_applicable_edits`): the
  `m.replace` relations to it with its type, sender and room, the greatest by
  (`origin_server_ts`, `event_id`). Synapse checks nothing else: an edit without `m.new_content`,
  which the spec calls invalid, is bundled all the same (measured); an edit by another sender or
  of another type is stored and listed by /relations but never bundled (measured). Since
  MSC3925 the original's content is served unchanged, the edit under
  `unsigned["m.relations"]["m.replace"]` as a whole event (rest/client/room.py, "per MSC2676 ...
  return the *original* event").
- No aggregations for an event that is itself an `m.replace` or `m.annotation` (so an edit of an
  edit is never shown), nor for a redacted one: its later edits are accepted and ignored
  (handlers/relations.py `get_bundled_aggregations`, `_fetch_edits`; measured).
- A redacted event keeps only what the redaction algorithm keeps (the spec's "Redactions", room
  versions 11 and later; Synapse's rust/src/events/utils.rs `redact`): of `content`, nothing for
  a message, `redacts` for a redaction, the listed keys for the state events. Its `unsigned`
  carries `redacted_by` and `redacted_because`, the first redaction as a whole event, whatever
  redactions follow (measured).
- Synapse's client format (v1) adds `user_id` (the sender) and `age` at the top level and copies
  `redacted_because` there; a redaction carries `redacts` at the top level as well as in its
  content; `unsigned.membership` (MSC4115) on the events asked for, not on bundled ones; and
  `unsigned.transaction_id` only for the device that sent the event (measured).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

REPLACE = "m.replace"
THREAD = "m.thread"
ANNOTATION = "m.annotation"
REDACTION = "m.room.redaction"

# What the redaction algorithm keeps of `content`, by event type (room versions 11 and 12).
_KEPT_CONTENT = {
    "m.room.member": ("membership", "join_authorised_via_users_server"),
    "m.room.join_rules": ("join_rule", "allow"),
    "m.room.power_levels": (
        "ban",
        "events",
        "events_default",
        "invite",
        "kick",
        "redact",
        "state_default",
        "users",
        "users_default",
    ),
    "m.room.history_visibility": ("history_visibility",),
    REDACTION: ("redacts",),
}


def relation(event: dict[str, Any]) -> tuple[str, str] | None:
    """(rel_type, parent event id), or None: `relation_from_event`'s rule."""
    relates = event.get("content", {}).get("m.relates_to")
    if not isinstance(relates, dict):
        return None
    rel_type, parent = relates.get("rel_type"), relates.get("event_id")
    if not isinstance(rel_type, str) or not isinstance(parent, str):
        return None
    return rel_type, parent


def in_thread_after(event: dict[str, Any]) -> str | None:
    """For an event in a thread (`rel_type: m.thread`, spec "Threading"), the event its
    `m.in_reply_to` names (the thread's latest event when it was sent, with `is_falling_back`),
    else its thread's root; None for an event in no thread."""
    rel = relation(event)
    if rel is None or rel[0] != THREAD:
        return None
    reply = event["content"]["m.relates_to"].get("m.in_reply_to")
    before = reply.get("event_id") if isinstance(reply, dict) else None
    return before if isinstance(before, str) else rel[1]


def pruned_content(event: dict[str, Any]) -> dict[str, Any]:
    """The content the redaction algorithm keeps."""
    content: dict[str, Any] = event.get("content", {})
    if event["type"] == "m.room.create":
        return dict(content)  # room version 11+: a create event's content is kept whole
    kept = {k: content[k] for k in _KEPT_CONTENT.get(event["type"], ()) if k in content}
    invite = content.get("third_party_invite")
    if event["type"] == "m.room.member" and isinstance(invite, dict):
        kept["third_party_invite"] = {"signed": invite["signed"]} if "signed" in invite else {}
    return kept


@dataclass
class Room:
    """The committed events of the room, indexed once per request."""

    events: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(init=False)
    position: dict[str, int] = field(init=False)
    redacted_by: dict[str, dict[str, Any]] = field(init=False)  # target id → its first redaction

    def __post_init__(self) -> None:
        self.by_id = {e["event_id"]: e for e in self.events}
        self.position = {e["event_id"]: i for i, e in enumerate(self.events)}
        self.redacted_by = {}
        for event in self.events:
            target = event["content"].get("redacts") if event["type"] == REDACTION else None
            if isinstance(target, str):
                self.redacted_by.setdefault(target, event)

    def is_target(self, event_id: str) -> bool:
        """Some event relates to it (Synapse's `event_is_target_of_relation`)."""
        return any((rel := relation(e)) is not None and rel[1] == event_id for e in self.related())

    def related(self) -> Iterable[dict[str, Any]]:
        """The events whose relation still counts: a redacted one has lost it."""
        return (e for e in self.events if e["event_id"] not in self.redacted_by and relation(e) is not None)

    def children(self, parent: dict[str, Any], rel_type: str | None, event_type: str | None) -> list[dict[str, Any]]:
        """What /relations lists, oldest first: any sender and type (the filters aside), but
        never the edits of a redacted event ("they leak event content", relations.py)."""
        redacted = parent["event_id"] in self.redacted_by
        found = []
        for event in self.related():
            rel = relation(event)
            assert rel is not None
            if rel[1] != parent["event_id"] or (redacted and rel[0] == REPLACE):
                continue
            if (rel_type is None or rel[0] == rel_type) and (event_type is None or event["type"] == event_type):
                found.append(event)
        return found

    def latest_edit(self, original: dict[str, Any]) -> dict[str, Any] | None:
        """The edit Synapse bundles with `original`, if any (see the module's docstring)."""
        rel = relation(original)
        if original["event_id"] in self.redacted_by or (rel is not None and rel[0] in (REPLACE, ANNOTATION)):
            return None
        same = ("type", "sender", "room_id")
        edits = [e for e in self.children(original, REPLACE, None) if all(e[k] == original[k] for k in same)]
        return max(edits, key=lambda e: (e["origin_server_ts"], e["event_id"]), default=None)

    # ---------------------------------------------------------------- client format

    def shown(self, event: dict[str, Any], device: str | None, now_ms: int, *, top: bool = True) -> dict[str, Any]:
        """`event` as Synapse's client format serves it to `device`; `top`: asked for (not bundled
        inside another event), so with its membership and its aggregations."""
        redaction = self.redacted_by.get(event["event_id"])
        content = pruned_content(event) if redaction is not None else event["content"]
        age = max(0, now_ms - int(event["origin_server_ts"]))
        shown: dict[str, Any] = {
            "age": age,
            "content": content,
            "event_id": event["event_id"],
            "origin_server_ts": event["origin_server_ts"],
            "room_id": event["room_id"],
            "sender": event["sender"],
            "type": event["type"],
            "user_id": event["sender"],
        }
        if event["type"] == REDACTION and "redacts" in content:
            shown["redacts"] = content["redacts"]
        unsigned: dict[str, Any] = {"age": age}
        if top:
            unsigned["membership"] = "join"
        if device is not None and device == event.get("sent_by"):
            unsigned["transaction_id"] = event["transaction_id"]
        if redaction is not None:
            because = self.shown(redaction, device, now_ms, top=False)
            unsigned["redacted_by"] = redaction["event_id"]
            unsigned["redacted_because"] = shown["redacted_because"] = because
        elif top and (edit := self.latest_edit(event)) is not None:
            unsigned["m.relations"] = {REPLACE: self.shown(edit, device, now_ms, top=False)}
        shown["unsigned"] = unsigned
        return shown

    # ---------------------------------------------------------------- as a reader sees the room

    def timeline(self) -> list[dict[str, Any]]:
        """What a person sees, oldest first, as Element shows it: neither edits nor redactions
        as messages of their own; an edited message with its latest `m.new_content` (an edit
        without one is ignored, as the spec says) and marked edited; a redacted one as deleted,
        with the redaction's reason."""
        seen = []
        for event in self.events:
            rel = relation(event)
            if event["type"] == REDACTION or (rel is not None and rel[0] == REPLACE):
                continue
            redaction = self.redacted_by.get(event["event_id"])
            edit = self.latest_edit(event)
            new = edit["content"].get("m.new_content") if edit is not None else None
            text = new.get("body") if isinstance(new, dict) else event["content"].get("body")
            seen.append(
                {
                    "event": event,
                    "text": "" if redaction is not None else str(text or ""),
                    "edited": redaction is None and isinstance(new, dict),
                    "deleted": redaction is not None,
                    "reason": str((redaction or {}).get("content", {}).get("reason") or ""),
                }
            )
        return seen
