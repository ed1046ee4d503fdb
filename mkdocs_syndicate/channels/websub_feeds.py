"""The feeds a WebSub channel pings, and the hubs each names: without any network.

A hub is told that a topic (a feed) changed; subscribers find the hub in the feed itself (W3C
WebSub §4, Discovery): `<link rel="hub">` in Atom, `<atom:link rel="hub">` in RSS, `hubs` in a JSON
Feed (jsonfeed.org version 1.1), or an HTTP `Link` header. A feed that names no hub is pinged for
nobody: that is said, not hidden.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from mkdocs_syndicate.channel_api import ConfigError, Site
from mkdocs_syndicate.config.channels import check_url, is_loopback
from mkdocs_syndicate.localfiles import read_bounded

# Where the generators people use write their feeds, looked for in the built site when `feeds` is
# not set: mkdocs-rss-plugin (Material's blog) and its JSON twins, Zensical, Hugo, Jekyll, others.
KNOWN_FEEDS = (
    "feed_rss_created.xml",
    "feed_rss_updated.xml",
    "feed_json_created.json",
    "feed_json_updated.json",
    "feed.xml",
    "atom.xml",
    "rss.xml",
    "index.xml",
    "feed.json",
)
MAX_FEED_BYTES = 20 * 1024 * 1024  # a feed of thousands of full posts; more is not a feed


def feed_setting(values: tuple[str, ...], setting: str) -> tuple[str, ...]:
    """`feeds:`: absolute http(s) URLs, or paths relative to site_url (`feed_rss_created.xml`)."""
    checked = []
    for n, value in enumerate(values):
        where = f"{setting}[{n}]" if len(values) > 1 else setting
        if urlsplit(value).scheme or value.startswith("//"):
            checked.append(check_url(value, where))
        elif "\\" in value or ".." in value.split("/"):
            raise ConfigError(f"{value!r} is not a path in the site (like feed_rss_created.xml)", where)
        else:
            checked.append(value.lstrip("/"))
    return tuple(checked)


def hub_setting(values: tuple[str, ...], setting: str) -> tuple[str, ...]:
    """`hub:`: each an http(s) URL (http only on a loopback host)."""
    return tuple(check_url(v, f"{setting}[{n}]" if len(values) > 1 else setting) for n, v in enumerate(values))


def feed_urls(site: Site, configured: tuple[str, ...] | None) -> list[str]:
    """The topics to ping: the configured feeds (a path is under site_url), else the known feed
    files the built site holds. Empty when neither names one."""
    if configured:
        return list(dict.fromkeys(urljoin(site.url, value) for value in configured))
    if not site.site_dir:
        return []
    return [f"{site.url}{name}" for name in KNOWN_FEEDS if Path(site.site_dir, name).is_file()]


def built_file(site: Site, url: str) -> Path | None:
    """Where the built site holds the feed at `url`, if it is this site's and the build has it."""
    if not site.site_dir or not url.startswith(site.url):
        return None
    relative = urlsplit(url[len(site.url) :]).path
    path = Path(site.site_dir, relative or "index.html")
    return path if path.is_file() else None


def declared_hubs(body: bytes) -> set[str] | None:
    """The hubs a feed names (JSON Feed `hubs`, Atom/RSS `rel="hub"` links), without a trailing
    slash; None when it is no feed this can read."""
    text = body.lstrip()
    if text.startswith(b"{"):
        try:
            feed = json.loads(text)
        except ValueError:
            return None
        hubs = feed.get("hubs") if isinstance(feed, dict) else None
        listed = hubs if isinstance(hubs, list) else []
        return {_bare(h["url"]) for h in listed if isinstance(h, dict) and isinstance(h.get("url"), str)}
    import feedparser

    parsed = feedparser.parse(body)
    if not parsed.get("version") and parsed.get("bozo"):
        return None
    links = parsed.get("feed", {}).get("links", [])
    return {_bare(link["href"]) for link in links if link.get("rel") == "hub" and link.get("href")}


def link_header_hubs(header: str) -> set[str]:
    """The hubs an HTTP `Link` header names (`<https://hub>; rel="hub"`, RFC 8288)."""
    found = set()
    for part in header.split(","):
        target, *params = part.split(";")
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "rel" and "hub" in value.strip().strip('"').lower().split():
                found.add(_bare(target.strip().strip("<>")))
    return found


def missing_hubs(feed: str, named: set[str] | None, hubs: Iterable[str]) -> str | None:
    """What a person is told when the feed at `feed` does not name every hub it is pinged for."""
    if named is None:
        return f"{feed} is not a feed this can read (RSS, Atom or JSON Feed): subscribers cannot find the hub in it"
    public = [hub for hub in hubs if not _on_loopback(hub) or _on_loopback(feed)]
    if not public and named:
        return None  # a rehearsal: the deployed feed names the real hub, never the sandbox's
    missing = [hub for hub in public or hubs if _bare(hub) not in named]
    if not missing:
        return None
    how = '"hubs": [{"type": "WebSub", "url": …}]' if feed.endswith(".json") else '<atom:link rel="hub" href="…"/>'
    return (
        f"{feed} does not name the hub {', '.join(missing)}: a subscriber finds a feed's hub in the feed "
        f"({how}), so the ping reaches none until it does"
    )


def built_feed_notes(site: Site, feeds: Iterable[str], hubs: Iterable[str]) -> list[str]:
    """`missing_hubs` for each feed the built site holds (one not built yet is not judged)."""
    notes = []
    for feed in feeds:
        path = built_file(site, feed)
        if path is None:
            continue
        try:
            body = read_bounded(path, MAX_FEED_BYTES)
        except (OSError, ValueError) as exc:
            notes.append(f"{feed}: the built file {path} cannot be read ({exc})")
            continue
        note = missing_hubs(feed, declared_hubs(body), hubs)
        if note:
            notes.append(note)
    return notes


def _on_loopback(url: str) -> bool:
    return is_loopback(urlsplit(url).hostname or "")


def _bare(url: str) -> str:
    return url.strip().rstrip("/")
