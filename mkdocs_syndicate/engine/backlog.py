"""The first run on a site that already has posts: adopt the old ones instead of announcing them.

On a ledger with no record yet, `backlog: adopt` (the default) marks every post dated more than
`backlog_days` before that first run `skipped` — in one write — so the first CI build announces
only what is new, and says how many it adopted. A channel id the ledger has no record of (a
channel added to a site that has been announcing for a while) is the same first run for that
channel: its backlog is adopted for it alone. `backlog: send` announces everything (at most
`max_per_run` posts per run), as before this setting existed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from mkdocs_syndicate.channels.base import Channel
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.timeutil import to_display, to_iso

NOTE = "adopted: existed before syndication started (backlog: adopt)"


NEW_CHANNEL_NOTE = "adopted: existed before this channel was added (backlog: adopt)"


@dataclass(frozen=True)
class Adoption:
    posts: list[Post]
    cut: dt.datetime  # posts dated before this are adopted
    channels: tuple[str, ...] | None = None  # new channels of a ledger with records; None: all (first run)

    def line(self) -> str:
        if self.channels is not None:
            return (
                f"backlog: {', '.join(self.channels)} is new to the ledger: {len(self.posts)} post(s) dated "
                f"before {to_display(self.cut)} marked skipped for it, not announced there "
                f"(`backlog: send` announces them)"
            )
        return (
            f"backlog: {len(self.posts)} post(s) dated before {to_display(self.cut)} existed before "
            f"syndication started: marked skipped, not announced (`backlog: send` announces them)"
        )

    def pairs(self, channels: list[str]) -> set[tuple[str, str]]:
        """The (post key, channel) pairs it adopts among `channels`."""
        chosen = channels if self.channels is None else [c for c in channels if c in self.channels]
        return {(post.key, channel) for post in self.posts for channel in chosen if post.wants(channel)}


def adoption(
    ledger: Ledger, posts: list[Post], *, backlog: str, days: float, now: dt.datetime, channels: Sequence[str] = ()
) -> Adoption | None:
    """What a run adopts: on a ledger without records, the backlog for every channel; on one with
    records, the backlog for each of `channels` the ledger has never seen. None when there is
    nothing to adopt, or with `backlog: send`."""
    if backlog != "adopt":
        return None
    seen = {channel for _, channel, _ in ledger.records()}  # a real run does not count a rehearsal's
    new = None if not seen else tuple(sorted(set(channels) - seen))
    if new == ():
        return None
    cut = now - dt.timedelta(days=days)
    old = [post for post in posts if post.date < cut]
    return Adoption(old, cut, new) if old else None


def adopt(
    ledger: Ledger, found: Adoption, channels: list[str], now: dt.datetime, note: str | None = None
) -> list[tuple[str, str]]:
    """Mark the adopted posts' pairs skipped, in one write; a pair that already has a record is
    left as it is. Returns the pairs marked. (A first run and `mkdocs-syndicate adopt` both come
    through here; the command gives its own note, naming who decided.)"""
    stamp = to_iso(now)
    note = note or (NOTE if found.channels is None else NEW_CHANNEL_NOTE)
    refs = {post.key: PostRef(post.key, post.url, post.title) for post in found.posts}
    marked = sorted(pair for pair in found.pairs(channels) if ledger.record(*pair) is None)
    if marked:
        ledger.apply(
            [
                Transition(
                    refs[key], channel, Record(State.SKIPPED, 0, stamp, note=note, sandbox=ledger.sandbox is True)
                )
                for key, channel in marked
            ]
        )
    return marked


def refuse_renamed_channels(ledger: Ledger, channels: list[Channel], configured: set[str]) -> None:
    """Refuse a config in which a channel id of the ledger vanished and a new id on the same
    account appeared: most likely a rename, which would announce the recent posts again under
    the new id. `configured` is every id in the config, disabled ones too (the way to keep an old
    channel apart). `mkdocs-syndicate rename-channel OLD NEW` moves the records."""
    known, samples = _remote_samples(ledger)
    unsure = _unsure_outcomes(ledger)
    new = [channel for channel in channels if channel.id not in known]
    for old in sorted(known - configured):
        renamed = next((c for c in new if any(c.recognises(url) for url in samples.get(old, []))), None)
        how = f"is new on the same {renamed.type_name} account" if renamed is not None else ""
        if renamed is None and old in unsure:
            # No copy's URL to tell the account by, and a request whose outcome is unknown: the
            # new id may be the same account, whose next send would be a second post.
            renamed = next((c for c in new if c.settings.at_most_once), None)
            how = (
                "is new, and nothing in the ledger tells whether it is the same account "
                f"({old!r} has a request whose outcome is unknown)"
            )
        if renamed is not None:
            raise ConfigError(
                f"{old!r} has records in {ledger.path.name} but is no longer configured, and "
                f"{renamed.id!r} {how}. If it was renamed, run "
                f"`mkdocs-syndicate rename-channel {old} {renamed.id}` (it moves the records, so nothing "
                f"is announced twice); if {old!r} is a separate channel, keep it with 'enabled: false'",
                "channels",
            )


def _unsure_outcomes(ledger: Ledger) -> set[str]:
    """Channel ids with an at-most-once request whose outcome is unknown (an in_flight record
    of one post: a batch ping's records have no `created_at`), or a copy made without a URL to
    tell its account by."""
    ids: set[str] = set()
    for _, channel_id, record in ledger.records():
        one_post = record.created_at is not None  # a batch ping (IndexNow) has no first-attempt time
        if one_post and (record.state == State.IN_FLIGHT or (record.state == State.DONE and not record.remote_url)):
            ids.add(channel_id)
    return ids


def _remote_samples(ledger: Ledger) -> tuple[set[str], dict[str, list[str]]]:
    """Every channel id of the ledger, and a few remote URLs per id: enough to tell its account."""
    known: set[str] = set()
    samples: dict[str, list[str]] = {}
    for _, channel_id, record in ledger.records():
        known.add(channel_id)
        if record.remote_url and len(samples.setdefault(channel_id, [])) < 20:
            samples[channel_id].append(record.remote_url)
    return known, samples
