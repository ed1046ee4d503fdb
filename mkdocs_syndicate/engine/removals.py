"""Removed posts: which announced posts their author removed, the proof that they are gone, and
their copies' fate.

A post's copies are deleted only when all of these hold (docs/design/removals.md):

1. its author removed it (engine/intent.py): its source file gone, `draft: true`, `syndicate:
   removed`, or an entry gone from inside a feed's window — after moves are matched (a renamed
   post is not a removed one), and only when the source found posts at all. `syndicate: false`,
   a narrowed `posts:` glob and a feed's tail stop its announcements, never more;
2. the built site has no page for it (when there is one to look in);
3. the web agrees (net/witness.py): its public URL answers 404 or 410 on two reads
   `removal_recheck` seconds apart, and the site's home page answers 2xx (in the sandbox, where
   nothing is public, the build not writing the page is the whole proof).

Then, per channel: `removals: delete` on a channel that can delete makes a pair with `op: delete`
(carried by engine/updates.py, two-phase like any send), printed with its evidence first;
`removals: keep` (the default), or a channel that cannot delete, keeps the copy, and the run says
so. A removed post whose records are `deleted` is not announced again if it comes back, until
`resolve --retry` says so; a new post at its URL is a new life (engine/lives.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate.channels.base import Channel, Prepared
from mkdocs_syndicate.content.pages import SitePages
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.intent import STOP, Intent, Source, deleting, drafts, has_copy, intents
from mkdocs_syndicate.engine.plan import Change, PendingPair, copies, some
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State
from mkdocs_syndicate.net.witness import GONE_STATUSES, PROBE_TIMEOUT, PROBES_AT_ONCE
from mkdocs_syndicate.timeutil import from_iso

if TYPE_CHECKING:
    import httpx

    from mkdocs_syndicate.ledger.store import Ledger

__all__ = ["GONE_STATUSES", "PROBES_AT_ONCE", "PROBE_TIMEOUT"]

Sleep = Callable[[float, str], Awaitable[None]]  # (seconds, reason)


@dataclass
class Removals:
    """What this run knows of posts the source no longer announces."""

    gone: list[str] = field(default_factory=list)  # keys of posts their author removed, with a copy left
    removed: dict[str, PostEntry] = field(default_factory=dict)  # of those, proved removed
    unproved: dict[str, str] = field(default_factory=dict)  # removed by the author, not proved gone: why
    evidence: dict[str, str] = field(default_factory=dict)  # the proved ones: why, as printed
    stopped: list[Intent] = field(default_factory=list)  # only no longer announced: never deleted
    note: str = ""  # why nothing was looked at (no posts found)


def gone_from_source(posts: Posts, present: list[Post], pages: SitePages | None = None) -> tuple[list[str], str]:
    """Keys of announced posts their author removed (engine/intent.py), and a note when the source
    listed nothing (then nothing is gone)."""
    found, note = intents(posts, present, pages)
    return [intent.key for intent in found if intent.removal], note


def _thread_changing(record: Record) -> bool:
    """A thread part way through an edit or a removal: a removal of its post deletes what is left."""
    return bool(record.parts) and record.op is not None and record.state in (State.IN_FLIGHT, State.FAILED)


async def probe_public(urls: list[str], *, transport: httpx.AsyncBaseTransport | None = None) -> dict[str, str | None]:
    """For each URL, one read: None when it answers 404 or 410, else what it answered."""
    from mkdocs_syndicate.net.witness import read_statuses

    statuses = await read_statuses(urls, transport=transport)
    return {
        url: None if status in GONE_STATUSES else (f"answered {status}" if isinstance(status, int) else status)
        for url, status in statuses.items()
    }


def probe_built_site(urls: list[str], site_url: str, site_dir: str) -> dict[str, str | None]:
    """The built site's word: None when the build did not write the page. Without a built site
    (a feed-driven rehearsal) nothing is proved."""
    from mkdocs_syndicate.net.liveness import in_built_site

    if not site_dir:
        return {url: "no built site to look in (sandbox)" for url in urls}
    built = in_built_site(urls, site_url, site_dir)
    return {url: None if built[url] is not None else f"its page is in the built site ({site_dir})" for url in urls}


def deleting_channels(channels: list[Channel]) -> list[Channel]:
    return [channel for channel in channels if channel.settings.removals == "delete" and channel.deletes]


@dataclass(frozen=True)
class Witnesses:
    """Where a removal's proof is looked for: the built site, and (outside the sandbox) the web."""

    site_url: str
    site_dir: str
    sandbox: bool
    recheck: float = 30.0
    sleep: Sleep | None = None  # how the wait between the two reads is sat through
    transport: httpx.AsyncBaseTransport | None = None

    def judge(self, urls: list[str]) -> dict[str, tuple[bool, str]]:
        """Each URL: (proved gone, the evidence or why not)."""
        if not urls:
            return {}
        if self.sandbox:
            built = probe_built_site(urls, self.site_url, self.site_dir)
            return {
                url: (True, "the build wrote no page for it (the sandbox's proof)") if why is None else (False, why)
                for url, why in built.items()
            }
        verdicts: dict[str, tuple[bool, str]] = {}
        asked = urls
        if self.site_dir and Path(self.site_dir).is_dir():  # a build to look in: its page must be gone there too
            built = probe_built_site(urls, self.site_url, self.site_dir)
            verdicts = {url: (False, why) for url, why in built.items() if why is not None}
            asked = [url for url in urls if url not in verdicts]
        import asyncio  # here: a build with nothing to delete loads no event loop

        from mkdocs_syndicate.net.witness import witness

        words = (
            asyncio.run(
                witness(
                    asked, self.site_url, recheck=self.recheck, sleep=self.sleep or _sleep, transport=self.transport
                )
            )
            if asked
            else {}
        )
        built_said = "the build has no page for it; " if self.site_dir and Path(self.site_dir).is_dir() else ""
        for url, word in words.items():
            verdicts[url] = (True, built_said + word.said) if word.gone else (False, word.said)
        return verdicts


async def _sleep(seconds: float, reason: str) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def find_removals(
    posts: Posts,
    present: list[Post],
    channels: list[Channel],
    *,
    probe: bool,
    witnesses: Witnesses,
    pages: SitePages | None = None,
) -> Removals:
    """Posts their author removed whose copies a channel would delete, each proved removed or
    said why not; and the posts only no longer announced. Only removals are probed, and only with
    `probe` (a run that reads only, or a site that keeps every copy, asks nothing). A delete
    already in flight needs no new proof: it was proved when it was decided."""
    found_intents, note = intents(posts, present, pages)
    ids = {channel.id for channel in deleting_channels(channels)}
    gone = [intent for intent in found_intents if intent.removal]
    found = Removals(
        gone=[intent.key for intent in gone],
        note=note if ids else "",
        stopped=[intent for intent in found_intents if not intent.removal],
    )
    to_probe = [
        intent
        for intent in gone
        if probe
        and not deleting(posts[intent.key])
        and any(
            (record := posts[intent.key].channels.get(i, _NONE)).state == State.DONE or _thread_changing(record)
            for i in ids
        )
    ]
    urls = {intent.key: posts[intent.key].url for intent in to_probe}
    verdicts = witnesses.judge(list(dict.fromkeys(urls.values())))
    for intent in gone:
        key = intent.key
        if deleting(posts[key]):
            found.removed[key] = posts[key]
            found.evidence[key] = "its delete was decided, on proof, by an earlier run"
        elif key in urls:
            proved, said = verdicts[urls[key]]
            if proved:
                found.removed[key] = posts[key]
                found.evidence[key] = f"{intent.why}; {said}"
            else:
                found.unproved[key] = f"{intent.why}, but {said}"
    return found


def removal_notes(removals: Removals, channels: list[Channel]) -> list[str]:
    """What a run says before its first request: each removal with its evidence, each removal
    not proved and why, and the posts only no longer announced."""
    deleting = [channel.id for channel in deleting_channels(channels)]
    lines = []
    for key, entry in removals.removed.items():
        where = [channel_id for channel_id in deleting if has_copy(entry.channels.get(channel_id, _NONE))]
        if where:
            lines.append(f"{key}: removed ({removals.evidence[key]}): its copies on {', '.join(where)} are deleted")
    lines += [f"{key}: {why}: its copies are deleted once it is proved gone" for key, why in removals.unproved.items()]
    return lines + stopped_lines([(intent.state, intent.key, intent.why) for intent in removals.stopped])


def stopped_lines(stopped: list[tuple[Source, str, str]]) -> list[str]:
    """One line per post only no longer announced; past five of one kind, one line for them."""
    by_state: dict[Source, list[tuple[str, str]]] = {}
    for state, key, why in stopped:
        by_state.setdefault(state, []).append((key, why))
    lines = []
    for found in by_state.values():
        if len(found) <= 5:
            lines += [f"{key}: {why}: {STOP}" for key, why in found]
        else:
            lines.append(f"{some([key for key, _ in found])}: {found[0][1]}: {STOP}")
    return lines


_NONE = Record(State.FAILED)  # a pair without a record, for a lookup


def deletions(
    ledger: Ledger, removals: Removals, channels: list[Channel], skip: Collection[tuple[str, str]] = ()
) -> list[list[PendingPair]]:
    """Per removed post, the pairs that delete its copies (`removals: delete` on a channel that
    can), and those whose delete is in flight, to be settled."""
    grouped = []
    for key, entry in removals.removed.items():
        pairs = []
        for channel in channels:
            record = ledger.record(key, channel.id)
            if record is None or (key, channel.id) in skip or not ledger.may_work_on(record):
                continue
            in_flight = record.state == State.IN_FLIGHT and record.op == "delete" and not record.parts
            wanted = (record.state == State.DONE or _thread_changing(record)) and (
                channel.settings.removals == "delete" and channel.deletes
            )
            if in_flight or (wanted and (record.remote_id or channel.batched)):
                pairs.append(PendingPair(ghost(key, entry, record), channel, record, Prepared(None), Change.DELETE))
        if pairs:
            grouped.append(pairs)
    return grouped


def kept_lines(ledger: Ledger, removals: Removals, channels: list[Channel]) -> list[str]:
    """One line per channel whose removed posts' copies stay, and why."""
    lines = []
    for channel in channels:
        keys = [
            key
            for key in removals.removed
            if (record := ledger.record(key, channel.id)) is not None
            and record.state == State.DONE
            and not (channel.settings.removals == "delete" and channel.deletes)
        ]
        if not keys:
            continue
        why = (
            f"{channel.type_name} cannot delete a post"
            if not channel.deletes
            else f"channels.{channel.settings.setting_id}.removals is keep"
        )
        lines.append(f"{channel.id}: {copies(len(keys))} of removed posts kept ({why}): {some(keys)}")
    return lines


def plan_lines(
    ledger: Ledger,
    present: list[Post],
    pages: SitePages | None,
    channels: list[Channel],
    recheck: float,
    held: Collection[str] = (),
) -> list[str]:
    """What a plan (which asks no page) says of posts the source no longer announces: a removal's
    copies deleted (after the witnesses) or kept, a post only no longer announced, and drafts.
    `held`: entries a post held for review may be (engine/clues.py), judged only once it is decided."""
    found, note = intents({key: entry for key, entry in ledger.posts.items() if key not in held}, present, pages)
    deleting = {channel.id for channel in deleting_channels(channels)}
    lines = [note] if note and deleting else []
    stopped = []
    for intent in found:
        done = [c.id for c in channels if (r := ledger.record(intent.key, c.id)) is not None and r.state == State.DONE]
        if not intent.removal:
            if done:
                stopped.append((intent.state, intent.key, intent.why))
            continue
        doomed = [channel_id for channel_id in done if channel_id in deleting]
        kept = [channel_id for channel_id in done if channel_id not in deleting]
        said = []
        if doomed:
            said.append(
                f"its copies on {', '.join(doomed)} are deleted once the build has no page for it and its URL "
                f"answers 404 or 410 twice, {recheck:g} s apart, with the site's home page up"
            )
        if kept:
            said.append(f"kept on {', '.join(kept)} (removals: keep, or the service cannot delete)")
        if said:
            lines.append(f"{intent.key}: {intent.why}; " + "; ".join(said))
    lines += stopped_lines(stopped)
    lines += [
        f"{key}: a draft (draft: true): not announced while it is one" for key in drafts(present, pages, ledger.posts)
    ]
    return lines


def came_back_lines(ledger: Ledger, present: list[Post], channels: list[Channel]) -> list[str]:
    """Posts in the source again whose copies were deleted: not announced again by themselves."""
    lines = []
    for post in present:
        deleted = [
            c.id for c in channels if (r := ledger.record(post.key, c.id)) is not None and r.state == State.DELETED
        ]
        if deleted:
            lines.append(
                f"{post.key}: its copies on {', '.join(deleted)} were deleted; it is not announced there again "
                f"unless you say so (mkdocs-syndicate resolve {post.key} CHANNEL --retry)"
            )
    return lines


def ghost(key: str, entry: PostEntry, record: Record) -> Post:
    """The removed post as the ledger remembers it: enough to address and report its copies."""
    try:
        when = from_iso(record.created_at or record.at)
    except ValueError:
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return Post(key=key, url=entry.url, title=entry.title, date=when, former_urls=entry.former_urls(entry.url))
