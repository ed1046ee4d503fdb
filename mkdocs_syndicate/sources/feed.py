"""Posts from a site's feed (RSS 2.0, Atom or JSON Feed), for sites MkDocs does not build: Zensical,
Hugo, any generator. Read with feedparser (RSS, Atom) or as JSON (JSON Feed); each entry becomes
the same Post the plugin makes from a page, under the same key (the URL path relative to
`site_url`), so a site that leaves MkDocs keeps its ledger.

The body DEV needs is the entry's full content, HTML made Markdown as a built page's is
(content.portable); an entry with a summary only leaves it empty, and DEV's channel then refuses
the post by name.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from mkdocs_syndicate.content.identity import post_key_of
from mkdocs_syndicate.content.portable import html_to_text, shorten
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import FeedError
from mkdocs_syndicate.redaction import shown_url
from mkdocs_syndicate.safety import one_line, public_text

MAX_FEED_BYTES = 20_000_000
SUMMARY_LENGTH = 400  # characters of an entry's summary kept as the description, as for excerpts
FETCH_TIMEOUT = 30.0


def read_feed(source: str, site_url: str) -> list[Post]:
    """Every entry of the feed at `source` (a path or an http(s) URL) as a Post."""
    name = f"feed {shown_url(source)}"  # credentials in the URL are never printed
    raw = _load(source, name)
    entries = _json_feed_entries(raw, name) if _is_json(raw) else _xml_feed_entries(raw, name)
    posts = [_post(entry, site_url, name) for entry in entries]
    seen: dict[str, str] = {}
    for post in posts:
        if post.key in seen:
            raise FeedError(f"{name}: two entries have the link {post.url} ({seen[post.key]!r} and {post.title!r})")
        seen[post.key] = post.title
    return posts


# ---------------------------------------------------------------------- loading


def _load(source: str, name: str) -> bytes:
    if urlsplit(source).scheme in ("http", "https"):
        import asyncio

        import httpx

        from mkdocs_syndicate.net.bounded import ResponseTooLarge, bounded_request

        async def fetch() -> httpx.Response:
            # Bounded as every other request: one deadline for the whole answer, and the body
            # refused past the limit while it is decompressed, not after.
            async with httpx.AsyncClient(follow_redirects=True, headers={"User-Agent": "mkdocs-syndicate"}) as client:
                return await bounded_request(client, "GET", source, total=FETCH_TIMEOUT, max_bytes=MAX_FEED_BYTES)

        try:
            response = asyncio.run(fetch())
        except ResponseTooLarge:
            raise FeedError(f"{name}: larger than {MAX_FEED_BYTES} bytes; nothing was sent") from None
        except httpx.HTTPError as exc:
            raise FeedError(f"{name}: cannot fetch it ({type(exc).__name__}); nothing was sent") from None
        if response.status_code != 200:
            raise FeedError(f"{name}: the server answered {response.status_code}; nothing was sent")
        return response.content
    # A local feed has the same bound as a fetched one; a FIFO or a device (/dev/zero) is refused
    # before it is opened, since reading one would hang or never end.
    import stat

    try:
        if not stat.S_ISREG(Path(source).stat().st_mode):
            raise FeedError(f"{name}: not a regular file; nothing was sent")
        with open(source, "rb") as handle:
            data = handle.read(MAX_FEED_BYTES + 1)
    except FileNotFoundError:
        raise FeedError(f"{name}: no such file (build the site first?); nothing was sent") from None
    except OSError as exc:
        raise FeedError(f"{name}: cannot read it ({exc.strerror or exc}); nothing was sent") from None
    if len(data) > MAX_FEED_BYTES:
        raise FeedError(f"{name}: larger than {MAX_FEED_BYTES} bytes; nothing was sent")
    return data


def _is_json(raw: bytes) -> bool:
    return raw.lstrip()[:1] == b"{"


# ---------------------------------------------------------------------- the formats


@dataclass(frozen=True)
class _Entry:
    """What the formats have in common, before it becomes a Post."""

    where: str  # "feed <source>: entry <n> (<link>)", for error messages
    link: Any
    title: Any
    date: dt.datetime | None
    summary_html: str
    content_html: str
    tags: list[str]
    image: Any


def _shown(value: Any) -> str:
    """An entry's link or title in a message: one line, control characters escaped, cut short."""
    text = one_line(str(value or "?"))
    return text if len(text) <= 120 else text[:119] + "…"


def _xml_feed_entries(raw: bytes, name: str) -> list[_Entry]:
    import feedparser

    try:
        parsed = feedparser.parse(raw)
    except (UnicodeError, ValueError) as exc:  # feedparser's own crash, e.g. on `&#xD800;`
        raise FeedError(
            f"{name}: not a feed this tool can read ({type(exc).__name__}: {one_line(str(exc))[:200]})"
        ) from None
    if parsed.bozo and not parsed.entries:
        reason = one_line(str(parsed.get("bozo_exception") or "not a feed"))
        raise FeedError(f"{name}: not an RSS, Atom or JSON feed ({reason})")
    if not parsed.get("version") and not parsed.entries:
        raise FeedError(f"{name}: not an RSS, Atom or JSON feed")
    return [_xml_entry(item, f"{name}: entry {number}") for number, item in enumerate(parsed.entries, 1)]


def _xml_entry(item: Any, where: str) -> _Entry:
    """One RSS or Atom entry as feedparser read it."""
    when = item.get("published_parsed") or item.get("updated_parsed")
    return _Entry(
        where=f"{where} ({_shown(item.get('link') or item.get('title'))})",
        link=item.get("link"),
        title=item.get("title"),
        date=dt.datetime.fromtimestamp(calendar.timegm(when), dt.UTC) if when else None,
        summary_html=str(item.get("summary") or ""),
        content_html=_xml_content(item),
        tags=[str(t.get("term")) for t in item.get("tags", []) if t.get("term")],
        image=_xml_image(item),
    )


def _xml_content(item: Any) -> str:
    """The entry's full content: the first HTML (or non-empty) content element's."""
    contents = [c for c in item.get("content", []) if "html" in c.get("type", "") or c.get("value")]
    return str(contents[0].get("value") or "") if contents else ""


def _xml_image(item: Any) -> str | None:
    """An image enclosure, else Media RSS's image content."""
    images = [e.get("href") for e in item.get("enclosures", []) if str(e.get("type", "")).startswith("image/")]
    images += [m.get("url") for m in item.get("media_content", []) if str(m.get("medium", "")) == "image"]
    return next((i for i in images if i), None)


def _json_feed_entries(raw: bytes, name: str) -> list[_Entry]:
    """JSON Feed 1.0/1.1 (https://www.jsonfeed.org/version/1.1/)."""
    try:
        feed = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FeedError(f"{name}: not valid JSON ({exc})") from None
    if not isinstance(feed, dict) or not str(feed.get("version", "")).startswith("https://jsonfeed.org/version/"):
        raise FeedError(f"{name}: JSON without a JSON Feed `version`")
    items = feed.get("items")
    if not isinstance(items, list):
        raise FeedError(f"{name}: `items` must be a list")
    return [_json_item(item, f"{name}: item {number}") for number, item in enumerate(items, 1)]


def _json_item(item: object, where: str) -> _Entry:
    if not isinstance(item, dict):
        raise FeedError(f"{where} is not an object")
    link = item.get("url") or item.get("external_url")
    where = f"{where} ({_shown(link or item.get('title'))})"
    return _Entry(
        where=where,
        link=link,
        title=item.get("title"),
        date=_rfc3339(item.get("date_published") or item.get("date_modified"), where),
        summary_html=str(item.get("summary") or ""),
        content_html=_json_content(item.get("content_html"), item.get("content_text")),
        tags=[str(t) for t in item.get("tags") or [] if isinstance(t, str)],
        image=item.get("image") or item.get("banner_image"),
    )


def _rfc3339(stamp: object, where: str) -> dt.datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise FeedError(f"{where}: date {stamp!r} is not RFC 3339") from None


def _json_content(html: object, text: object) -> str:
    """The item's HTML: content_html, else content_text as paragraphs."""
    if isinstance(html, str):
        return html
    return _escape(text) if isinstance(text, str) else ""


def _escape(text: str) -> str:
    import html

    return "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))


# ---------------------------------------------------------------------- entry → Post


def _link_and_key(entry: _Entry, site_url: str) -> tuple[str, str]:
    if not isinstance(entry.link, str) or not entry.link.strip():
        raise FeedError(f"{entry.where}: no link; every announced entry needs its page's URL")
    link = entry.link.strip()
    # The plugin's key for the same page, however the feed writes its link (query, fragment,
    # index.html, no trailing slash, http, host case): switching sources re-announces nothing.
    key = post_key_of(link, site_url)
    if key is None:
        raise FeedError(f"{entry.where}: the link {link} is outside site_url {site_url}")
    if not key:
        raise FeedError(f"{entry.where}: the link is the site's home page, not a post")
    return link, key


def _post(entry: _Entry, site_url: str, name: str) -> Post:
    link, key = _link_and_key(entry, site_url)
    url = site_url + key
    if entry.date is None:
        raise FeedError(f"{entry.where}: no date (published or updated); the backlog and `since` rules need one")
    date = entry.date if entry.date.tzinfo else entry.date.replace(tzinfo=dt.UTC)
    # A public post's title: escape sequences (an OSC 8 link's target too) and bidi overrides go,
    # whole; shown escaped, they would still be published, and linked, as text.
    title = " ".join(public_text(str(entry.title or "")).split()) or key
    summary = shorten(html_to_text(entry.summary_html), SUMMARY_LENGTH)
    if summary.casefold() == title.casefold():
        summary = ""
    body = entry.content_html if entry.content_html.strip() else ""
    image = urljoin(link, entry.image) if isinstance(entry.image, str) and entry.image else None
    return Post(
        key=key,
        url=url,
        title=title,
        date=date,
        source=entry.where,
        description=summary,
        tags=tuple(entry.tags),
        body_html=body,
        image=image,
        body_missing=not body,
    )
