"""What the author meant by a post that is no longer announced: removed, or only no longer a post.

An announced post that the source does not list as an announceable post is in one of the states
of `Source`, and each state's `Fate` (the table `FATES`) says whether its copies may be deleted at
all. Only the author's own acts remove a post — its source file gone, `draft: true`, front matter
`syndicate: removed`, or (from a feed, which is all there is of such a site) its entry gone from
inside the feed's window. `syndicate: false`, a `posts:` glob that no longer matches, a feed's
tail and a saved build without its pages mean "stop announcing", never "delete". Whether a
removal's copies are then deleted is the witnesses' to say (engine/removals.py: the built site,
and two reads of the web with the home page up). See docs/removals.md.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable
from dataclasses import dataclass

from mkdocs_syndicate.content.pages import PageFacts, SitePages
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State
from mkdocs_syndicate.timeutil import from_iso


class Source(enum.StrEnum):
    """Where an announced post stands in the source."""

    LISTED = "listed"  # an announceable post: nothing to decide
    GONE = "gone"  # no page of the build comes from its source file, or has its key
    DRAFT = "draft"  # front matter `draft: true` (Material's blog's drafts too), or MkDocs' draft_docs
    FLAGGED = "flagged"  # front matter `syndicate: removed`
    FEED_GONE = "feed_gone"  # a feed no longer lists it, though it is newer than the feed's oldest entry
    OPTED_OUT = "opted_out"  # front matter `syndicate: false`
    NOT_A_POST = "not_a_post"  # its page is still built, but the posts: globs (or the blog) no longer take it
    FEED_TAIL = "feed_tail"  # older than the feed's oldest entry: it fell off the feed's end
    UNKNOWN = "unknown"  # the saved build has no list of its pages (an earlier version saved it)


@dataclass(frozen=True)
class Fate:
    removal: bool  # the author removed the post: its copies may be deleted, once the witnesses agree
    said: str  # what the run and the plan say of it ({src}: its source file)


FATES: dict[Source, Fate] = {
    Source.LISTED: Fate(False, ""),
    Source.GONE: Fate(True, "gone from the source ({src} is not in the build)"),
    Source.DRAFT: Fate(True, "marked as a draft ({src})"),
    Source.FLAGGED: Fate(True, "marked syndicate: removed ({src})"),
    Source.FEED_GONE: Fate(True, "gone from the feed (newer than its oldest entry)"),
    Source.OPTED_OUT: Fate(False, "marked syndicate: false ({src})"),
    Source.NOT_A_POST: Fate(False, "still a page of the site ({src}), no longer one of its posts (the posts: setting)"),
    Source.FEED_TAIL: Fate(False, "older than the feed's oldest entry (it fell off the end of the feed)"),
    Source.UNKNOWN: Fate(
        False, "not in the saved build, which lists no pages (saved by an earlier version: run mkdocs build again)"
    ),
}
if set(FATES) != set(Source):  # pragma: no cover - a state added without its fate
    raise AssertionError("every source state needs its fate")

STOP = "no longer announced; its copies stay (only a removal by its author deletes them: docs/removals.md)"


@dataclass(frozen=True)
class Intent:
    """One announced post the source no longer announces, and what its author meant."""

    key: str
    state: Source
    src: str = ""

    @property
    def fate(self) -> Fate:
        return FATES[self.state]

    @property
    def removal(self) -> bool:
        return self.fate.removal

    @property
    def why(self) -> str:
        return self.fate.said.format(src=self.src or "its source file")


def intents(posts: Posts, present: list[Post], pages: SitePages | None) -> tuple[list[Intent], str]:
    """Each announced post (a copy out) the source does not list as an announceable post, with its
    state; and a note when the source listed nothing at all (then nothing is judged: a broken
    glob, an empty feed or a failed build must never delete an archive). `pages` None: the posts
    handed in are the whole source (a feed, a library caller's list)."""
    with_copies = [key for key, entry in posts.items() if any(has_copy(r) for r in entry.channels.values())]
    if not present:
        note = (
            f"no posts were found in the source: none of the {len(with_copies)} announced post(s) "
            "is treated as removed (check the post globs or the feed)"
            if with_copies
            else ""
        )
        return [], note
    listed = {post.key: post for post in present}
    # A feed lists its latest entries only: a post older than its window is not gone from it.
    window = None if all(post.src for post in present) else min(post.date for post in present)
    found = []
    for key in with_copies:
        entry = posts[key]
        state = _state(entry, key, listed.get(key), pages, window)
        if state is not Source.LISTED:
            page = pages.find(entry.src, key) if pages is not None else None
            found.append(Intent(key, state, (page.src if page else "") or entry.src or ""))
    return found, ""


def _state(
    entry: PostEntry, key: str, post: Post | None, pages: SitePages | None, window: dt.datetime | None
) -> Source:
    page = pages.find(entry.src or (post.src if post else None), key) if pages is not None else None
    if post is not None:  # listed: the first rule that holds, in order of the author's word
        return next((state for holds, state in LISTED_RULES if holds(post, page)), Source.LISTED)
    if deleting(entry):  # decided on proof already: settled whatever the source says now
        return Source.GONE
    if pages is None:  # the posts are the whole source
        if window is None:
            return Source.GONE
        return Source.FEED_GONE if _announced_since(entry, window) else Source.FEED_TAIL
    if not pages.known:
        return Source.UNKNOWN
    if page is None:
        return Source.GONE
    return next((state for holds, state in PAGE_RULES if holds(page)), Source.NOT_A_POST)


# A post the source lists, and a page of the build that is no post: the first rule that holds
# names its state. The explicit flag first: it is the author's plainest word.
LISTED_RULES: tuple[tuple[Callable[[Post, PageFacts | None], bool], Source], ...] = (
    (lambda post, page: page is not None and page.removed, Source.FLAGGED),
    (lambda post, page: post.draft, Source.DRAFT),
    (lambda post, page: post.opted_out, Source.OPTED_OUT),
)
PAGE_RULES: tuple[tuple[Callable[[PageFacts], bool], Source], ...] = (
    (lambda page: page.removed, Source.FLAGGED),
    (lambda page: page.draft, Source.DRAFT),
    (lambda page: page.opted_out, Source.OPTED_OUT),
)


def has_copy(record: Record) -> bool:
    """A copy is out: done, a delete in flight, or a thread part way through a change."""
    changing_thread = bool(record.parts) and record.op is not None
    return record.state == State.DONE or (record.state == State.IN_FLIGHT and record.op == "delete") or changing_thread


def deleting(entry: PostEntry) -> bool:
    """A removal decided already (its proof was made then). A thread's part delete is not one: a
    thread that shrank deletes parts too, so its removal is proved again (engine/thread_changes.py)."""
    return any(r.state == State.IN_FLIGHT and r.op == "delete" and not r.parts for r in entry.channels.values())


def _announced_since(entry: PostEntry, start: dt.datetime) -> bool:
    """Whether the post's first announcement came after `start`: it was in the feed then."""
    times = [r.created_at or r.at for r in entry.channels.values() if r.created_at or r.at]
    try:
        return bool(times) and min(from_iso(t) for t in times) >= start
    except ValueError:  # a hand-edited time: not provably in the window
        return False


def drafts(present: list[Post], pages: SitePages | None, posts: Posts) -> list[str]:
    """Keys of drafts never announced (a draft with copies is an `Intent`): named by the plan."""
    keys = {post.key for post in present if post.draft}
    if pages is not None:
        keys |= {page.key for page in pages.pages if page.draft and page.post}
    return sorted(
        key for key in keys if not any(has_copy(r) for r in (posts[key].channels.values() if key in posts else ()))
    )
