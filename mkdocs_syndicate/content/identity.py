"""Identity: one page has one post key however it is found, and every id a client chooses before a
call is unique per (site, post, channel, part, life).

The post key is the page's URL path under `site_url`, in the form MkDocs writes `page.url`
(percent-encoded, `dir/` for a directory URL, `name.html` otherwise). A link found any other way
— a feed entry with `?utm_source=…`, a `#fragment`, `index.html`, no trailing slash (also after
a last segment with a dot, `release-v1.2`), `http` for `https`, the host in capitals, doubled
slashes, another percent-encoding case or Unicode normalisation (macOS writes NFD, MkDocs NFC) —
canonicalises to the same key (`post_key_of`). See docs/design/identity.md. Ids a client picks
(Mastodon's Idempotency-Key, Bluesky's record key, Weibo's marker) are derived from the post's full
canonical URL and the channel id (`client_id`), never from the key alone: two sites on one account
(translations with the same file names) share keys, not URLs.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
from urllib.parse import quote, unquote, urlsplit

# What MkDocs leaves unescaped in page.url (urllib.parse.quote's default safe set is "/").
_SAFE = "/"


def comparable_host(netloc: str, scheme: str) -> str:
    """Host and port as compared: lower case, no userinfo, the scheme's default port left out."""
    host = netloc.lower().rsplit("@", 1)[-1]
    default = {"https": ":443", "http": ":80"}.get(scheme.lower(), "")
    return host[: -len(default)] if default and host.endswith(default) else host


_SLASHES = re.compile(r"/{2,}")
# A page is a directory (`post/`) or an HTML file (`post.html`, MkDocs' use_directory_urls: false);
# any other last segment is a directory URL without its slash (`release-v1.2` is `release-v1.2/`).
_PAGE_FILE = (".html", ".htm")


def canonical_path(path: str) -> str:
    """A URL path as MkDocs writes page.url: NFC, percent-encoded the one way, no doubled
    slashes, `index.html` dropped, any last segment but an HTML file made a directory
    (`post` → `post/`, `release-v1.2` → `release-v1.2/`)."""
    plain = _SLASHES.sub("/", unicodedata.normalize("NFC", unquote(path)))
    text = quote(plain, safe=_SAFE)
    if text.endswith("/index.html"):
        text = text[: -len("index.html")]
    elif text == "index.html":
        text = ""
    last = text.rsplit("/", 1)[-1]
    if last and not last.lower().endswith(_PAGE_FILE):
        text += "/"
    return text


def post_key_of(url: str, site_url: str) -> str | None:
    """The post key of a link to a page of the site at `site_url`, or None when the link is not
    under it. Scheme and host case, default ports, query strings and fragments do not count."""
    link, site = urlsplit(url.strip()), urlsplit(site_url)
    if link.scheme.lower() not in ("http", "https") or not link.netloc:
        return None
    if comparable_host(link.netloc, link.scheme) != comparable_host(site.netloc, site.scheme):
        return None
    base = site.path if site.path.endswith("/") else site.path + "/"
    path = _SLASHES.sub("/", unquote(link.path)) or "/"
    base_plain = unquote(base)
    if path + "/" == base_plain:  # https://example.com/sub without its slash: the home page
        return ""
    if not path.startswith(base_plain):
        return None
    rest = posixpath.normpath(path[len(base_plain) :]) if path[len(base_plain) :] else ""
    if rest in (".", ""):
        return ""
    if rest.startswith("../") or rest == "..":
        return None
    if path.endswith("/") and not rest.endswith("/"):
        rest += "/"
    return canonical_path(rest)


def client_id(post_url: str, channel_id: str, purpose: str, life: int = 0) -> str:
    """A hex digest unique per (site, post, channel, life): for ids chosen before the call.
    `purpose` keeps two ids of one channel apart (a thread's part names its number there). `life`
    counts the pair's announcements anew after its copy was deleted (`Record.life`): a new life
    must never be answered with the old, deleted copy (a Matrix transaction id is remembered for a
    day, a Mastodon key for an hour). The first life's ids are those written before lives were
    counted, so existing ledgers keep theirs."""
    suffix = f"\nlife {life}" if life else ""
    return hashlib.sha256(f"mkdocs-syndicate:{purpose}:{post_url}\n{channel_id}{suffix}".encode()).hexdigest()
