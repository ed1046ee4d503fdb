"""A new post at a removed post's URL is a new life: announced as new where the old one's copies
are gone (`deleted`), under new client-chosen ids (its record's `life` one up). A removed post
that comes back (its file restored) is not: its copies were deleted on purpose, and it waits for
`resolve --retry` (engine/removals.py `came_back_lines`); so does a copy its author withdrew on
the service while the post stayed (`Record.withdrawn`: the author's hand wins). The two are told apart by what the
ledger remembers of the removed post: a post with another title, or dated after the removed
post was first announced, is a new one; the same title and an earlier date is the old one back.
See docs/removals.md, "A new post at an old URL"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from mkdocs_syndicate.channels.base import Channel
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State
from mkdocs_syndicate.timeutil import from_iso

NEW_LIFE = "a new post at the URL of a removed one: announced as new"


@dataclass(frozen=True)
class NewLife:
    key: str
    channel_id: str
    life: int  # the life it starts (1 for the first after a removal)
    why: str  # what makes it a new post, not the removed one back


def new_lives(
    posts: Posts, chosen: list[Post], channels: list[Channel], may_work_on: Callable[[Record | None], bool]
) -> list[NewLife]:
    """The pairs of announceable posts that are new posts at a removed post's key, on channels
    where its copy is `deleted`."""
    found = []
    for post in chosen:
        entry = posts.get(post.key)
        if entry is None:
            continue
        for channel in channels:
            record = entry.channels.get(channel.id)
            deleted = record is not None and record.state == State.DELETED and not record.withdrawn
            if record is None or not deleted or record.review or not post.wants(channel.id):
                continue
            why = _new_post(entry, record, post)
            if why and may_work_on(record):
                found.append(NewLife(post.key, channel.id, record.lives + 1, why))
    return found


def _new_post(entry: PostEntry, record: Record, post: Post) -> str:
    """Why `post` is not the removed post back, or "" when it may be."""
    if " ".join(entry.title.split()).casefold() != " ".join(post.title.split()).casefold():
        return f"titled {post.title!r}; the removed post was {entry.title!r}"
    first = record.created_at or record.at
    try:
        announced = from_iso(first)
    except ValueError:  # a hand-edited time: nothing says it is newer
        return ""
    if post.date > announced:
        return f"dated {post.date:%Y-%m-%d %H:%M}, after the removed post was first announced ({first})"
    return ""


def with_new_lives(posts: Posts, lives: list[NewLife], at: str) -> Posts:
    """The posts with each new life's record started: pending, its life counted one up."""
    changed = dict(posts)
    for life in lives:
        entry = changed[life.key]
        channels = dict(entry.channels)
        channels[life.channel_id] = channels[life.channel_id].new_life(at, NEW_LIFE)
        changed[life.key] = replace(entry, channels=channels)
    return changed


def new_life_lines(lives: list[NewLife]) -> list[str]:
    """One line per post: what the plan and the run say."""
    by_key: dict[str, list[NewLife]] = {}
    for life in lives:
        by_key.setdefault(life.key, []).append(life)
    return [
        f"{key}: a new post at the URL of a removed one ({found[0].why}): announced as new on "
        f"{', '.join(life.channel_id for life in found)} (its records' life: {max(life.life for life in found)})"
        for key, found in by_key.items()
    ]
