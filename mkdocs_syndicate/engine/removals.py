"""Removed posts: which announced posts are gone, the proof that they are, and their copies' fate.

A post is *removed* only when both hold (docs/design/removals.md):

1. the source no longer lists it (after moves are matched: a renamed post is not a removed one),
   and the source found posts at all (a broken glob or an empty build proves nothing); a feed,
   which lists only its latest entries, counts only for posts announced since its oldest entry;
2. its public URL answers 404 or 410 (in the sandbox, where nothing is public: the build did
   not write its page). A 200, a redirect to a page, a 5xx or no answer: not removed.

Then, per channel: `removals: delete` on a channel that can delete makes a pair with `op: delete`
(carried by engine/updates.py, two-phase like any send); `removals: keep` (the default), or a
channel that cannot delete, keeps the copy, and the run says so. A removed post whose records are
`deleted` is not announced again if it comes back, until `resolve --retry` says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mkdocs_syndicate.channels.base import Channel, Prepared
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.plan import Change, PendingPair, copies, some
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State
from mkdocs_syndicate.timeutil import from_iso

if TYPE_CHECKING:
    import httpx

    from mkdocs_syndicate.ledger.store import Ledger

GONE_STATUSES = (404, 410)
PROBE_TIMEOUT = 15.0  # seconds per page, in total
PROBES_AT_ONCE = 8  # pages asked at the same time: a site's host is not to be hammered


@dataclass
class Removals:
    """What this run knows of posts gone from the source."""

    gone: list[str] = field(default_factory=list)  # keys the source no longer lists, with a copy left
    removed: dict[str, PostEntry] = field(default_factory=dict)  # of those, proved removed
    unproved: dict[str, str] = field(default_factory=dict)  # gone from the source, page still there: why
    note: str = ""  # why nothing was looked at (no posts found)


def gone_from_source(posts: Posts, present: list[Post]) -> tuple[list[str], str]:
    """Keys of announced posts (a copy `done`, or a delete in flight) that the source no longer
    lists, and a note when the source listed nothing (then nothing is gone: a broken glob, an
    empty feed or a failed build must never delete an archive)."""
    with_copies = [key for key, entry in posts.items() if any(_has_copy(r) for r in entry.channels.values())]
    if not present:
        note = (
            f"no posts were found in the source: none of the {len(with_copies)} announced post(s) "
            "is treated as removed (check the post globs or the feed)"
            if with_copies
            else ""
        )
        return [], note
    listed = {post.key for post in present}
    # A feed lists its latest entries only: a post older than its window is not gone from it.
    window = None if all(post.src for post in present) else min(post.date for post in present)
    gone = [
        key
        for key in with_copies
        if key not in listed and (window is None or _announced_since(posts[key], window) or _deleting(posts[key]))
    ]
    return gone, ""


def _has_copy(record: Record) -> bool:
    """A copy is out: done, a delete in flight, or a thread part way through a change."""
    changing_thread = bool(record.parts) and record.op is not None
    return record.state == State.DONE or (record.state == State.IN_FLIGHT and record.op == "delete") or changing_thread


def _deleting(entry: PostEntry) -> bool:
    """A removal decided already (its proof was made then). A thread's part delete is not one: a
    thread that shrank deletes parts too, so its removal is proved again (engine/thread_changes.py)."""
    return any(r.state == State.IN_FLIGHT and r.op == "delete" and not r.parts for r in entry.channels.values())


def _thread_changing(record: Record) -> bool:
    """A thread part way through an edit or a removal: a removal of its post deletes what is left."""
    return bool(record.parts) and record.op is not None and record.state in (State.IN_FLIGHT, State.FAILED)


def _announced_since(entry: PostEntry, start: dt.datetime) -> bool:
    """Whether the post's first announcement came after `start`: it was in the feed then."""
    times = [r.created_at or r.at for r in entry.channels.values() if r.created_at or r.at]
    try:
        return bool(times) and min(from_iso(t) for t in times) >= start
    except ValueError:  # a hand-edited time: not provably in the window
        return False


async def probe_public(urls: list[str], *, transport: httpx.AsyncBaseTransport | None = None) -> dict[str, str | None]:
    """For each URL: None when it answers 404 or 410 (removed), else what it answered."""
    import asyncio

    import httpx

    from mkdocs_syndicate.net.bounded import bounded_request

    gate = asyncio.Semaphore(PROBES_AT_ONCE)
    headers = {"User-Agent": "mkdocs-syndicate (checking that a removed post is gone)"}

    async def probe(client: httpx.AsyncClient, url: str) -> str | None:
        async with gate:
            try:
                response = await bounded_request(client, "GET", url, total=PROBE_TIMEOUT, timeout=PROBE_TIMEOUT)
            except httpx.HTTPError as exc:
                return f"no answer ({type(exc).__name__})"
        return None if response.status_code in GONE_STATUSES else f"answered {response.status_code}"

    async with httpx.AsyncClient(
        transport=transport, follow_redirects=True, max_redirects=5, headers=headers
    ) as client:
        answers = await asyncio.gather(*(probe(client, url) for url in urls))
    return dict(zip(urls, answers, strict=True))


def probe_built_site(urls: list[str], site_url: str, site_dir: str) -> dict[str, str | None]:
    """The sandbox's proof: None when the build did not write the page. Without a built site
    (a feed-driven rehearsal) nothing is proved."""
    from mkdocs_syndicate.net.liveness import in_built_site

    if not site_dir:
        return {url: "no built site to look in (sandbox)" for url in urls}
    built = in_built_site(urls, site_url, site_dir)
    return {url: None if built[url] is not None else "its page is in the built site" for url in urls}


def deleting_channels(channels: list[Channel]) -> list[Channel]:
    return [channel for channel in channels if channel.settings.removals == "delete" and channel.deletes]


def find_removals(
    posts: Posts,
    present: list[Post],
    channels: list[Channel],
    *,
    probe: bool,
    sandbox: bool,
    site_url: str,
    site_dir: str,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Removals:
    """Posts gone from the source whose copies a channel would delete, each proved removed or
    said why not. Only those are probed (one GET each), and only with `probe` (a run that reads
    only, or a site that keeps every copy, asks nothing). A delete already in flight needs no new
    proof: it was proved when it was decided."""
    gone, note = gone_from_source(posts, present)
    ids = {channel.id for channel in deleting_channels(channels)}
    found = Removals(gone=gone, note=note if ids else "")
    import asyncio  # here: a build with nothing to send loads no event loop

    to_probe = [
        key
        for key in gone
        if probe
        and not _deleting(posts[key])
        and any(
            (record := posts[key].channels.get(i, _NONE)).state == State.DONE or _thread_changing(record) for i in ids
        )
    ]
    urls = {key: posts[key].url for key in to_probe}
    if sandbox:
        answers = probe_built_site(list(urls.values()), site_url, site_dir)
    else:
        answers = asyncio.run(probe_public(list(urls.values()), transport=transport)) if urls else {}
    for key in gone:
        if _deleting(posts[key]):
            found.removed[key] = posts[key]
        elif key in urls:
            why = answers[urls[key]]
            if why is None:
                found.removed[key] = posts[key]
            else:
                found.unproved[key] = f"{posts[key].url} {why}"
    return found


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


def plan_lines(ledger: Ledger, gone: list[str], channels: list[Channel]) -> list[str]:
    """What a plan (which asks no page) says of posts gone from the source."""
    deleting = {channel.id for channel in deleting_channels(channels)}
    lines = []
    for key in gone:
        done = [c.id for c in channels if (r := ledger.record(key, c.id)) is not None and r.state == State.DONE]
        doomed = [channel_id for channel_id in done if channel_id in deleting]
        kept = [channel_id for channel_id in done if channel_id not in deleting]
        said = []
        if doomed:
            said.append(f"its copies on {', '.join(doomed)} are deleted once its page answers 404 or 410")
        if kept:
            said.append(f"kept on {', '.join(kept)} (removals: keep, or the service cannot delete)")
        if said:
            lines.append(f"{key}: gone from the source; " + "; ".join(said))
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
