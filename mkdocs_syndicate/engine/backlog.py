"""The first run on a site that already has posts: adopt the old ones instead of announcing them.

On a ledger with no record yet, `backlog: adopt` (the default) marks every post dated more than
`backlog_days` before that first run `skipped` — in one write — so the first CI build announces
only what is new, and says how many it adopted. `backlog: send` announces everything (at most
`max_per_run` posts per run), as before this setting existed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import Record
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.timeutil import to_display, to_iso

NOTE = "adopted: existed before syndication started (backlog: adopt)"


@dataclass(frozen=True)
class Adoption:
    posts: list[Post]
    cut: dt.datetime          # posts dated before this are adopted

    def line(self) -> str:
        return (f"backlog: {len(self.posts)} post(s) dated before {to_display(self.cut)} existed before "
                f"syndication started: marked skipped, not announced (`backlog: send` announces them)")


def adoption(ledger: Ledger, posts: list[Post], *, backlog: str, days: float, now: dt.datetime) -> Adoption | None:
    """What a first run adopts; None when there is a record already (not a first run) or
    `backlog: send`."""
    if backlog != "adopt" or any(entry.channels for entry in ledger.posts.values()):
        return None
    cut = now - dt.timedelta(days=days)
    old = [post for post in posts if post.date < cut]
    return Adoption(old, cut) if old else None


def adopt(ledger: Ledger, found: Adoption, channels: list[str], now: dt.datetime) -> int:
    """Mark the adopted posts' pairs skipped, in one write. Returns how many pairs."""
    stamp = to_iso(now)
    transitions = [Transition(PostRef(post.key, post.url, post.title), channel, Record("skipped", 0, stamp, note=NOTE))
                   for post in found.posts for channel in channels if post.wants(channel)]
    if transitions:
        ledger.apply(transitions)
    return len(transitions)
