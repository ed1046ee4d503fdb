"""What Mastodon's thread read shows a logged-out reader, as the emulator's context endpoint
answers it: which statuses are public (StatusPolicy), the ancestors it lists and the order of the
descendants (app/models/concerns/status_threading_concern.rb)."""

from __future__ import annotations

from typing import Any

from mkdocs_syndicate.sandbox.mastodon_tokens import ACCOUNT_ID


def is_public(status: dict[str, Any]) -> bool:
    """What a logged-out reader may see: StatusPolicy#show? for no account."""
    return status.get("visibility", "public") in ("public", "unlisted")


def ancestor_ids(status: dict[str, Any], everything: dict[str, dict[str, Any]], limit: int) -> list[str]:
    """StatusThreadingConcern#ancestor_ids: the nearest `limit` statuses up the reply chain,
    oldest first."""
    found: list[str] = []
    parent = status.get("in_reply_to_id")
    while parent in everything and parent not in found and len(found) < limit:
        found.append(parent)
        parent = everything[parent].get("in_reply_to_id")
    return found[::-1]


def self_replies_first(statuses: list[dict[str, Any]], everything: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """StatusThreadingConcern#promote_by!: replies of an author to their own status move up,
    to just after the leading run of such replies, in their order."""

    def author(status: dict[str, Any]) -> str:
        return str((status.get("account") or {}).get("id", ACCOUNT_ID))

    def own(status: dict[str, Any]) -> bool:
        parent = everything.get(status.get("in_reply_to_id") or "")
        return parent is not None and author(parent) == author(status)

    lead = next((index for index, status in enumerate(statuses) if not own(status)), len(statuses))
    rest = statuses[lead:]
    return statuses[:lead] + [s for s in rest if own(s)] + [s for s in rest if not own(s)]
