"""The state of every (post, channel) pair, for `mkdocs-syndicate status`. No network, no MkDocs.

Posts come from the ledger and, when a build has been saved, from its manifest (so posts with
no record yet show as pending)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import from_iso

ATTENTION = (PairState.FAILED, PairState.IN_FLIGHT)


@dataclass(frozen=True)
class PairStatus:
    post_key: str
    channel: str
    state: PairState  # a record's state; pending or opted_out when it has none
    attempts: int = 0
    at: str | None = None
    age_seconds: int | None = None  # in_flight only: how long it has been unresolved
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class ChannelStatus:
    """One channel's history, from the ledger alone: when it last succeeded, what failed last."""

    channel: str
    last_success: str | None = None  # the latest `at` of a done record
    last_failure_at: str | None = None  # the latest failed record (or in_flight one with an error)
    last_failure: str | None = None  # its error

    def line(self, now: dt.datetime) -> str:
        success = f"last success {_when(self.last_success, now)}" if self.last_success else "no success on record"
        failure = (
            f"last failure {_when(self.last_failure_at, now)}: {self.last_failure}"
            if self.last_failure_at
            else "no failure on record"
        )
        return f"{self.channel}: {success}; {failure}"


def _when(at: str, now: dt.datetime) -> str:
    return f"{at[:10]} ({human_age(max(0, int((now - from_iso(at)).total_seconds())))} ago)"


@dataclass
class StatusView:
    pairs: list[PairStatus]
    posts: dict[str, str]  # key -> url
    channels: list[str]
    resent: frozenset[str] = frozenset()  # at-least-once channels: an in_flight record is the next run's work

    @property
    def totals(self) -> dict[str, int]:
        return dict(sorted(Counter(p.state for p in self.pairs).items()))

    def filtered(self, *, states: set[str], channels: set[str], post: str | None) -> StatusView:
        """Only the pairs asked for (`mkdocs-syndicate status --state/--channel/--post`)."""

        def keep(pair: PairStatus) -> bool:
            return (
                (not states or pair.state in states)
                and (not channels or pair.channel in channels)
                and (post is None or post in pair.post_key or post in self.posts.get(pair.post_key, ""))
            )

        pairs = [p for p in self.pairs if keep(p)]
        kept = {p.post_key for p in pairs}
        return StatusView(
            pairs,
            {k: v for k, v in self.posts.items() if k in kept or not (states or channels or post)},
            [c for c in self.channels if not channels or c in channels],
            self.resent,
        )

    @property
    def attention(self) -> list[PairStatus]:
        """What needs a person (`status --check`): failed pairs, and in_flight ones of channels
        that are not simply sent again. An at-least-once channel's in_flight record (IndexNow's
        202, "key validation pending", right after a post) is the next run's work, not a problem."""
        return [p for p in self.pairs if p.state in ATTENTION and not self.expected(p)]

    def expected(self, pair: PairStatus) -> bool:
        return pair.state == PairState.IN_FLIGHT and pair.channel in self.resent

    def channel_history(self) -> list[ChannelStatus]:
        """Per channel, from the ledger alone: its last success and its last failure."""
        history = []
        for channel in self.channels:
            mine = [p for p in self.pairs if p.channel == channel and p.at]
            done = [p.at for p in mine if p.state == PairState.DONE and p.at]
            failed = [
                p
                for p in mine
                if p.state == PairState.FAILED or (p.state == PairState.IN_FLIGHT and p.error and not self.expected(p))
            ]
            last = max(failed, key=lambda p: from_iso(p.at or ""), default=None)
            history.append(
                ChannelStatus(
                    channel,
                    max(done, key=from_iso, default=None),
                    last.at if last else None,
                    (last.error or last.state) if last else None,
                )
            )
        return history

    def to_json(self) -> dict[str, Any]:
        return {
            "channels": self.channels,
            "channel_history": {
                c.channel: {
                    "last_success": c.last_success,
                    "last_failure_at": c.last_failure_at,
                    "last_failure": c.last_failure,
                }
                for c in self.channel_history()
            },
            "totals": self.totals,
            "posts": [
                {
                    "key": key,
                    "url": url,
                    "channels": {
                        p.channel: {
                            k: v for k, v in asdict(p).items() if k not in ("post_key", "channel") and v is not None
                        }
                        for p in self.pairs
                        if p.post_key == key
                    },
                }
                for key, url in self.posts.items()
            ],
        }


def status_view(
    ledger: Ledger,
    channels: list[str],
    built_posts: list[Post] | None,
    now: dt.datetime,
    resent: frozenset[str] = frozenset(),
) -> StatusView:
    """`built_posts`: the announceable posts of the last build (None when there is no build);
    `resent`: the at-least-once channels (an in_flight record there is the next run's work)."""
    known = {p.key: p for p in built_posts or []}
    keys = sorted(set(ledger.posts) | set(known))
    all_channels = list(channels) + sorted({c for e in ledger.posts.values() for c in e.channels} - set(channels))
    pairs: list[PairStatus] = []
    urls: dict[str, str] = {}
    for key in keys:
        entry = ledger.posts.get(key)
        post = known.get(key)
        urls[key] = post.url if post else (entry.url if entry else "")
        for channel in all_channels:
            record = entry.channels.get(channel) if entry else None
            if record is None:
                if post is None or channel not in channels:
                    continue
                wanted = PairState.PENDING if post.wants(channel) else PairState.OPTED_OUT
                pairs.append(PairStatus(key, channel, wanted))
                continue
            age = int((now - from_iso(record.at)).total_seconds()) if record.state == State.IN_FLIGHT else None
            pairs.append(
                PairStatus(
                    key,
                    channel,
                    PairState.of(record.state),
                    record.attempts,
                    record.at,
                    age,
                    record.remote_id,
                    record.remote_url,
                    record.error,
                    record.note,
                )
            )
    return StatusView(pairs, urls, all_channels, resent)


def human_age(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"
