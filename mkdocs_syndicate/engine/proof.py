"""What a read of a copy by its own id proves, before and after a change of it: the channel says
what it found (`Copy`, `Presence`) and, with `Seen`, the links the copy shows; the copy counts as
this post's only where those do not name another post instead (content/ownership.py), and where
the service names the page a copy is about in a field of its own (`Seen.about`: DEV's canonical
URL, a Bluesky card), only where that is one of this post's addresses. A read that failed proves
nothing. See docs/design/protocol.md, "Every write proved"."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx

from mkdocs_syndicate.channels.base import Copy, Presence, Seen
from mkdocs_syndicate.content.ownership import another_post, is_about
from mkdocs_syndicate.content.posts import Post

Found = TypeVar("Found", Copy, Presence)

# What a read may raise on an answer it cannot make sense of: it proved nothing.
READ_FAILED = (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError)


def judged(read: Found | Seen, post: Post, unknown: Found, not_ours: Found) -> tuple[Found, str]:
    """The finding, made NOT_OURS where the copy links to another post of the site and not to this
    one; with the reason a person reads."""
    if not isinstance(read, Seen):
        return read, ""
    found = read.found
    assert isinstance(found, type(unknown))
    if found in (Copy.GONE, Presence.GONE, unknown):  # no copy to own, or nothing shown
        return found, ""
    if read.about is not None:  # the service's own field names the page: it is this post's, or not
        if is_about(read.about, post):
            return found, ""
        whose = "another post's copy" if another_post((read.about,), post) else "a copy of another site's page"
        return not_ours, f"the copy is about {read.about}, not this post ({post.url}): {whose}"
    other = another_post(read.links, post)
    if other is None:
        return found, ""
    return not_ours, f"the copy links to {other}, not to this post ({post.url}): another post's copy"


async def read_finding(
    reading: Callable[[], Awaitable[Found | Seen]], post: Post, unknown: Found, not_ours: Found
) -> tuple[Found, str]:
    """`reading()` judged, a failed read taken as `unknown` with why."""
    try:
        read = await reading()
    except READ_FAILED as exc:
        return unknown, f"the read of the copy failed ({type(exc).__name__})"
    return judged(read, post, unknown, not_ours)
