"""Three-way merge of two ledgers per (post, channel) pair, against the ledger last pushed: the
pure part of keeping the ledger in git (ledger/gitmirror.py runs git; this decides).

Every pair only one side changed is taken from that side. A pair both sides changed, or one our
plan may be about to send, is *contested*: the run takes the other writer's ledger and re-plans
(StaleLedger, raised by ledger/gitmirror.py), and never sends on a stale one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, State, record_in


@dataclass(frozen=True)
class Pair:
    post_key: str
    channel: str


class StaleLedger(SyndicateError):
    """Another writer changed pairs this run changed too: take theirs, re-plan, never send."""

    def __init__(self, contested: list[Pair], remote_posts: Posts, tip: str, base: Posts) -> None:
        self.contested = contested
        self.remote_posts = remote_posts
        self.tip = tip
        self.base = base  # the ledger this run last pushed (or started from): what "changed" means
        names = ", ".join(f"({p.post_key}, {p.channel})" for p in contested[:5])
        super().__init__(f"another run changed {names} in the pushed ledger; re-planning")


def _pairs(*ledgers: Posts) -> Iterable[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for posts in ledgers:
        for key, entry in posts.items():
            for channel in entry.channels:
                if (key, channel) not in seen:
                    seen.add((key, channel))
                    yield key, channel


def changed_pairs(base: Posts, other: Posts) -> set[tuple[str, str]]:
    """Pairs whose record in `other` differs from `base`. Entries are copied on write (the
    ledger's staging, `merge`), so an entry both share is unchanged: skipped without comparing
    (every run compares its whole ledger with the pushed one)."""
    return {(k, c) for k, c in _pairs(*_unshared(base, other)) if record_in(base, k, c) != record_in(other, k, c)}


def _unshared(base: Posts, other: Posts) -> tuple[Posts, Posts]:
    """The entries of each that the other does not hold as the very same object."""
    return (
        {k: e for k, e in base.items() if other.get(k) is not e},
        {k: e for k, e in other.items() if base.get(k) is not e},
    )


def contested_pairs(
    base: Posts, ours: Posts, theirs: Posts, claimed: set[tuple[str, str]], exclusive: set[str] | None = None
) -> list[Pair]:
    """Pairs both sides changed since `base` (differently, or both to in_flight on an at-most-once
    channel), and pairs of our plan they changed: a lane may be about to send one of those on what
    it planned from, so the plan is stale. Two in_flight records of an at-most-once pair are two
    claims on one send even when they are equal byte for byte (same second, same text:
    regression), and only the pushed one may send; equal finished records merge, and so do equal
    in_flight records of an at-least-once channel (`exclusive`: the at-most-once channel ids;
    None treats every channel as one), where a second send is harmless."""
    mine = changed_pairs(base, ours)
    return [
        Pair(k, c)
        for k, c in sorted(changed_pairs(base, theirs) & (mine | claimed))
        if (k, c) not in mine
        or record_in(ours, k, c) != record_in(theirs, k, c)
        or (_claims(ours, k, c) and (exclusive is None or c in exclusive))
    ]


def _claims(posts: Posts, key: str, channel: str) -> bool:
    record = record_in(posts, key, channel)
    return record is not None and record.state == State.IN_FLIGHT


def merge(base: Posts, ours: Posts, theirs: Posts) -> Posts:
    """Theirs, with every pair that only we changed since `base` taken from ours."""
    merged = {key: replace(entry, channels=dict(entry.channels)) for key, entry in theirs.items()}
    for key, channel in sorted(changed_pairs(base, ours) - changed_pairs(base, theirs)):
        record = record_in(ours, key, channel)
        entry = merged.get(key)
        if entry is None:
            entry = merged[key] = PostEntry(url=ours[key].url, title=ours[key].title)
        if record is None:
            entry.channels.pop(channel, None)
        else:
            entry.channels[channel] = record
    return merged


def without_unpushed_in_flight(ours: Posts, base: Posts) -> Posts:
    """Our ledger as a failed push left it, minus in_flight records the push did not carry: their
    at-most-once requests waited for that push and never left (an at-least-once one is sent again)."""
    kept = {key: replace(entry, channels=dict(entry.channels)) for key, entry in ours.items()}
    for key, channel in _pairs(ours):
        record = record_in(ours, key, channel)
        if record is not None and record.state == State.IN_FLIGHT and record != record_in(base, key, channel):
            previous = record_in(base, key, channel)
            if previous is None:
                del kept[key].channels[channel]
            else:
                kept[key].channels[channel] = previous
    return {key: entry for key, entry in kept.items() if entry.channels or key in base}
