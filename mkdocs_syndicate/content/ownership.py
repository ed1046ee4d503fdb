"""Whose copy a read found: a copy is changed (edited, deleted) only once a read of it shows it
is this post's, never on the ledger's word alone. A record that names another post's copy (a
merge slip, a hand edit) would otherwise overwrite or delete that post's public copy.

The evidence is what every copy carries: the links it shows. A copy that links to one of this
post's addresses (its URL now, or one it was announced under before a move) is this post's. One
that links to none of them but to another page of the same site is another post's. A copy that
links to no page of the site proves nothing either way, and the channel's own evidence (a record
key, a marker) decides. See docs/design/protocol.md, "A copy proved to be this post's".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from mkdocs_syndicate.content.identity import canonical_path, comparable_host
from mkdocs_syndicate.content.posts import Post

# A link in a text: what a status, a record's facets or an article's Markdown show. Punctuation
# that ends a sentence after a link is not part of it.
_LINK = re.compile(r"https?://[^\s<>\"'`\\\]\)]+", re.IGNORECASE)
_AFTER_LINK = ".,;:!?…"


def links_in(value: object) -> tuple[str, ...]:
    """Every http(s) link in the strings of a JSON value (a status, a record, an article), in
    order, each once."""
    found: list[str] = []

    def walk(item: object) -> None:
        if isinstance(item, str):
            found.extend(match.group(0).rstrip(_AFTER_LINK) for match in _LINK.finditer(item))
        elif isinstance(item, dict):
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list | tuple):
            for inner in item:
                walk(inner)

    walk(value)
    return tuple(dict.fromkeys(found))


def _page(url: str) -> tuple[str, str] | None:
    """A link as compared: its host and its path as MkDocs writes a page's (no query, no
    fragment, `index.html` dropped)."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return comparable_host(parts.netloc, parts.scheme), canonical_path(parts.path.lstrip("/"))


def addresses(post: Post) -> tuple[str, ...]:
    """Every address a copy of this post may link to: its URL and those of its earlier lives."""
    return (post.url, *post.former_urls)


def is_about(url: str, post: Post) -> bool:
    """Whether `url` is one of this post's addresses (its URL now, or one before a move)."""
    page = _page(url)
    return page is not None and any(page == _page(own) for own in addresses(post))


def another_post(links: Iterable[str], post: Post) -> str | None:
    """The link to another page of this post's site that a copy shows instead of any of this
    post's addresses; None when it links to this post, or to no other page of the site (the
    home page or a section above the post is no other post)."""
    ours = {page for url in addresses(post) if (page := _page(url)) is not None}
    seen = [(link, page) for link in links if (page := _page(link)) is not None]
    if not ours or any(page in ours for _, page in seen):
        return None
    hosts = {host for host, _ in ours}
    for link, (host, path) in seen:
        above = any(own.startswith(path) for own_host, own in ours if own_host == host)
        if host in hosts and not above:
            return link
    return None
