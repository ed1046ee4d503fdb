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
import codecs
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from mkdocs_syndicate.content.identity import post_key_of
from mkdocs_syndicate.content.images import first_image
from mkdocs_syndicate.content.portable import html_to_text, shorten
from mkdocs_syndicate.content.posts import MAX_KEY, Post, check_text
from mkdocs_syndicate.errors import FeedError, PostError
from mkdocs_syndicate.redaction import shown_url
from mkdocs_syndicate.safety import one_line, public_text

MAX_FEED_BYTES = 20_000_000
SUMMARY_LENGTH = 400  # characters of an entry's summary kept as the description, as for excerpts
FETCH_TIMEOUT = 30.0


MAX_JSON_DEPTH = 64  # a JSON Feed is a few levels deep; 10,000 nested arrays crashed the reader


@dataclass(frozen=True)
class FeedPosts:
    """A feed's entries as Posts, and one message per entry left out (naming it and why)."""

    posts: list[Post]
    refused: list[str]


def read_feed(source: str, site_url: str) -> list[Post]:
    """Every entry of the feed at `source` (a path or an http(s) URL) as a Post; a FeedError if
    any entry cannot be announced (`read_feed_posts` leaves those out instead)."""
    read = read_feed_posts(source, site_url)
    if read.refused:
        raise FeedError("\n".join(read.refused))
    return read.posts


def read_feed_posts(source: str, site_url: str) -> FeedPosts:
    """The feed's entries as Posts; an entry that cannot be announced (a field of the wrong type,
    no link or date, a link no ledger can key) is left out alone, by name, and the rest is read.
    A feed that cannot be read at all is a FeedError."""
    name = f"feed {shown_url(source)}"  # credentials in the URL are never printed
    raw = _load(source, name)
    entries = _json_feed_entries(raw, name) if _is_json(raw) else _xml_feed_entries(raw, name)
    posts, refused = [], []
    for entry in entries:
        try:
            if isinstance(entry, FeedError):
                raise entry
            posts.append(_post(entry, site_url, name))
        except (FeedError, PostError) as exc:
            refused.append(f"{exc}; the entry is left out")
    _refuse_duplicates(posts, name)
    return FeedPosts(posts, refused)


def _refuse_duplicates(posts: list[Post], name: str) -> None:
    seen: dict[str, str] = {}
    for post in posts:
        if post.key in seen:
            raise FeedError(f"{name}: two entries have the link {post.url} ({seen[post.key]!r} and {post.title!r})")
        seen[post.key] = post.title


# ---------------------------------------------------------------------- loading


def _load(source: str, name: str) -> bytes:
    scheme = urlsplit(source).scheme
    if scheme and "://" in source and scheme not in ("http", "https"):
        raise FeedError(f"{name}: the scheme {scheme}:// is not supported; give an http or https URL, or a path")
    if scheme in ("http", "https"):
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
    # before it is read, since reading one would hang or never end.
    from mkdocs_syndicate.localfiles import read_bounded

    try:
        return read_bounded(source, MAX_FEED_BYTES)
    except FileNotFoundError:
        raise FeedError(f"{name}: no such file (build the site first?); nothing was sent") from None
    except OSError as exc:
        raise FeedError(f"{name}: {_unreadable(exc)}; nothing was sent") from None


def _unreadable(exc: OSError) -> str:
    from mkdocs_syndicate.localfiles import Refused

    return str(exc.strerror) if isinstance(exc, Refused) else f"cannot read it ({exc.strerror or exc})"


def _is_json(raw: bytes) -> bool:
    return raw.removeprefix(codecs.BOM_UTF8).lstrip()[:1] == b"{"  # a BOM is allowed before it


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
    entry_id: Any = None  # Atom `id`, RSS `guid`, JSON Feed `id`: the entry across link changes


def _shown(value: Any) -> str:
    """An entry's link or title in a message: one line, control characters escaped, cut short."""
    text = one_line(str(value or "?"))
    return text if len(text) <= 120 else text[:119] + "…"


def _xml_feed_entries(raw: bytes, name: str) -> list[_Entry | FeedError]:
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
        entry_id=item.get("id"),  # feedparser's name for Atom's <id> and RSS's <guid>, permalink or not
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


def _json_feed_entries(raw: bytes, name: str) -> list[_Entry | FeedError]:
    """JSON Feed 1.0/1.1 (https://www.jsonfeed.org/version/1.1/): each item an _Entry, or the
    FeedError that leaves it out."""
    try:
        feed = json.loads(raw)  # bytes: a UTF-8 BOM is recognised
    except RecursionError:
        raise FeedError(
            f"{name}: nested too deeply to read (a JSON Feed is a few levels deep); nothing was sent"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise FeedError(f"{name}: not valid JSON ({exc})") from None
    if _depth_over(feed, MAX_JSON_DEPTH):
        raise FeedError(
            f"{name}: nested more than {MAX_JSON_DEPTH} levels deep (a JSON Feed is a few); nothing was sent"
        )
    if not isinstance(feed, dict) or not str(feed.get("version", "")).startswith("https://jsonfeed.org/version/"):
        raise FeedError(f"{name}: JSON without a JSON Feed `version`")
    items = feed.get("items")
    if not isinstance(items, list):
        raise FeedError(f"{name}: `items` must be a list")
    return [_json_item_or_error(item, f"{name}: item {number}") for number, item in enumerate(items, 1)]


def _depth_over(value: object, limit: int) -> bool:
    """Whether arrays and objects nest deeper than `limit` (walked without recursion)."""
    level: list[tuple[object, int]] = [(value, 1)]
    while level:
        node, depth = level.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        level.extend((child, depth + 1) for child in children)
    return False


# Each item field this reader uses, and the JSON type it must have (null counts as absent).
_JSON_FIELDS: dict[str, type] = {
    "id": str,
    "url": str,
    "external_url": str,
    "title": str,
    "summary": str,
    "content_html": str,
    "content_text": str,
    "date_published": str,
    "date_modified": str,
    "image": str,
    "banner_image": str,
    "tags": list,
}
_JSON_TYPE_NAMES = {
    str: "a string",
    list: "a list of strings",
    int: "a number",
    float: "a number",
    bool: "true or false",
    dict: "an object",
}


def _json_item_or_error(item: object, where: str) -> _Entry | FeedError:
    try:
        return _json_item(item, where)
    except FeedError as exc:
        return exc


def _json_item(item: object, where: str) -> _Entry:
    if not isinstance(item, dict):
        raise FeedError(f"{where} is not an object")
    named = next((item.get(k) for k in ("url", "external_url", "id", "title") if isinstance(item.get(k), str)), None)
    where = f"{where} ({_shown(named)})"
    _check_json_types(item, where)
    link = item.get("url") or item.get("external_url")
    return _Entry(
        where=where,
        link=link,
        title=item.get("title"),
        date=_rfc3339(item.get("date_published") or item.get("date_modified"), where),
        summary_html=str(item.get("summary") or ""),
        content_html=_json_content(item.get("content_html"), item.get("content_text")),
        tags=list(item.get("tags") or []),
        image=item.get("image") or item.get("banner_image"),
        entry_id=item.get("id"),
    )


def _check_json_types(item: dict[str, Any], where: str) -> None:
    """A field of the wrong type leaves the item out, by name (an int `tags` crashed the run)."""
    for field, expected in _JSON_FIELDS.items():
        value = item.get(field)
        if field == "id" and isinstance(value, int | float) and not isinstance(value, bool):
            continue  # numeric ids exist in the wild; only used to name the item
        wrong = value is not None and not isinstance(value, expected)
        if field == "tags" and isinstance(value, list):
            wrong = not all(isinstance(tag, str) for tag in value)
        if wrong:
            raise FeedError(
                f"{where}: `{field}` must be {_JSON_TYPE_NAMES[expected]}, not {_json_type_of(value, field)}"
            )


def _json_type_of(value: object, field: str) -> str:
    if field == "tags" and isinstance(value, list):
        return "a list holding " + ", ".join(sorted({_json_type_of(t, "") for t in value if not isinstance(t, str)}))
    if value is None:
        return "null"
    for kind in (bool, str, int, float, list, dict):
        if isinstance(value, kind):
            return _JSON_TYPE_NAMES[kind].replace("a list of strings", "a list")
    return type(value).__name__


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


def _without_title(summary_html: str, title: str) -> str:
    """An entry's summary HTML without the heading it opens with when that heading is the title:
    Zensical's and mkdocs-rss-plugin's descriptions begin with the page's `<h1>`, which would
    say the title twice."""
    import re

    first = re.match(r"\s*<h1\b[^>]*>(.*?)</h1\s*>", summary_html, re.IGNORECASE | re.DOTALL)
    if first and html_to_text(first.group(1)).casefold() == title.casefold():
        return summary_html[first.end() :]
    return summary_html


def _encoding_note(key: str) -> str:
    """How the key's own non-ASCII characters count, percent-encoded (3 per UTF-8 byte: é 6, a CJK
    character 9, an emoji 12); nothing when it has none."""
    wide = next((char for char in unquote(key) if not char.isascii()), None)
    if wide is None:
        return ""
    return f" (percent-encoded: {wide} counts as {3 * len(wide.encode())})"


def _entry_id(value: Any, key: str, site_url: str) -> str | None:
    """An entry's id as identity: one printable line of sane length (a number in JSON Feed is
    its text), else none. None too for an id that names the entry's own page (a permalink guid):
    the link says as much. One that names another page is the link the entry was first published
    under (a generator that keeps its guids): engine/moves.py finds the post by that page."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    if not text or len(text) > MAX_KEY or not text.isprintable() or post_key_of(text, site_url) == key:
        return None
    return text


def _post(entry: _Entry, site_url: str, name: str) -> Post:
    link, key = _link_and_key(entry, site_url)
    url = site_url + key
    if len(key) > MAX_KEY:  # a feed entry has no front matter to pin a shorter key with
        raise FeedError(
            f"{entry.where}: its link's path is {len(key)} characters as a ledger key{_encoding_note(key)}; "
            f"at most {MAX_KEY}: give the page a shorter URL slug"
        )
    if entry.date is None:
        raise FeedError(f"{entry.where}: no date (published or updated); the backlog and `since` rules need one")
    date = entry.date if entry.date.tzinfo else entry.date.replace(tzinfo=dt.UTC)
    # A public post's title: escape sequences (an OSC 8 link's target too) and bidi overrides go,
    # whole; shown escaped, they would still be published, and linked, as text.
    title = " ".join(public_text(str(entry.title or "")).split()) or key
    summary = shorten(html_to_text(_without_title(entry.summary_html, title)), SUMMARY_LENGTH)
    if summary.casefold() == title.casefold():
        summary = ""
    body = entry.content_html if entry.content_html.strip() else ""
    image = urljoin(link, entry.image) if isinstance(entry.image, str) and entry.image else None
    alt, in_body = None, False  # an enclosure has no alt text; the first image of the content has its own
    if image is None and (found := first_image(body, link)) is not None:
        (image, alt), in_body = found, True
    post = Post(
        key=key,
        url=url,
        title=title,
        date=date,
        source=entry.where,
        description=summary,
        tags=tuple(entry.tags),
        body_html=body,
        image=image,
        image_alt=alt,
        image_in_body=in_body,
        body_missing=not body,
        entry_id=_entry_id(entry.entry_id, key, site_url),
    )
    check_text(post)  # a lone surrogate leaves this entry out, not the whole run
    return post
