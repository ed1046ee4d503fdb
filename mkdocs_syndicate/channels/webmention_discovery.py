"""Webmention endpoint discovery (W3C Webmention, §3.1.2), and the guard that keeps a sender's
requests off private networks.

A sender fetches the target (following redirects) and takes, in this order: the first HTTP `Link`
header with `rel="webmention"`, then the first `<link>` or `<a>` element with `rel="webmention"`
and an `href` in the HTML. A relative endpoint is resolved against the target's URL after the
redirects; its query string is kept (it is never moved into the POST body); an empty `href` is the
page itself. The links of a post are chosen by its author, but the pages they point to and their
redirects are anybody's: every URL asked for (each redirect too, and the endpoint) is refused when
its host is, or resolves to, a loopback, private, link-local or otherwise non-public address,
unless a test allows loopback. (The check resolves the name before the request and the request
resolves it again; a name that answers differently the second time is not caught: see
docs/services/webmention.md.)
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from mkdocs_syndicate.lazyre import lazy_compile

if TYPE_CHECKING:
    from mkdocs_syndicate.channel_api import Http

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
MAX_PAGE_BYTES = 1_000_000  # of a target's HTML: the endpoint is in the head, or near the top

# One link of a Link header: <uri> and its parameters (RFC 8288 §3), each link ending at a comma
# outside the brackets and the quotes.
_LINK_VALUE = lazy_compile(r'\s*<([^>]*)>((?:\s*;\s*[^;,"]*(?:"[^"]*"[^;,"]*)*)*)\s*(?:,|$)')
_PARAM = lazy_compile(r';\s*([A-Za-z0-9!#$&+.^_`|~*-]+)\s*(?:=\s*(?:"([^"]*)"|([^;,\s]*)))?')


class Refused(Exception):
    """A URL the sender must not ask for (a private address), or cannot (not http(s))."""


class Unreachable(Exception):
    """The target could not be read now (no answer, a 5xx, too many redirects): try again later."""


@dataclass(frozen=True)
class Discovery:
    """What a target's discovery found: its endpoint, or why it has none (a definite answer)."""

    endpoint: str | None
    why_none: str = ""


def _is_webmention(rel: str | None) -> bool:
    return rel is not None and "webmention" in rel.lower().split()


def endpoint_in_link_headers(values: list[str], base: str) -> str | None:
    """The first Link header's link with rel webmention, resolved against `base`."""
    for value in values:
        position = 0
        while position < len(value):
            match = _LINK_VALUE.match(value, position)
            if match is None or match.end() == position:
                break
            position = match.end()
            # findall gives "" for the group that did not take part: a value is quoted or plain.
            params = {str(name).lower(): str(quoted or plain) for name, quoted, plain in _PARAM.findall(match.group(2))}
            if _is_webmention(params.get("rel")):
                return urljoin(base, str(match.group(1)).strip())
    return None


class _Endpoints(HTMLParser):
    """The first <link> or <a> with rel webmention and an href, in document order (comments,
    scripts' text and attributes of other elements are not looked at)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.href is not None or tag not in ("link", "a"):
            return
        found = dict(attrs)
        if _is_webmention(found.get("rel")) and "href" in found:
            self.href = found["href"] or ""

    handle_startendtag = handle_starttag


def endpoint_in_html(html: str, base: str) -> str | None:
    parser = _Endpoints()
    parser.feed(html)
    parser.close()
    return None if parser.href is None else urljoin(base, parser.href.strip())


async def check_public(url: str, *, allow_loopback: bool) -> None:
    """Raise Refused unless every address of `url`'s host is public (loopback too, if allowed)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"{url} is not an http(s) URL")
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or 443)
        except OSError as exc:
            raise Unreachable(f"{host} does not resolve ({exc.strerror or exc})") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    for found in addresses:
        mapped = found.ipv4_mapped if isinstance(found, ipaddress.IPv6Address) else None
        address = mapped or found  # ::ffff:127.0.0.1 is 127.0.0.1
        if address.is_loopback and allow_loopback:
            continue
        if not address.is_global or address.is_multicast:
            raise Refused(f"{host} is (or resolves to) {address}, a non-public address: not asked")


async def fetch(
    http: Http, url: str, *, allow_loopback: bool, max_bytes: int
) -> tuple[str, int, dict[str, list[str]], str]:
    """GET `url`, following redirects (each checked): (final URL, status, Link headers and the
    content type under "link"/"type", body text). Raises Refused or Unreachable."""
    import httpx

    from mkdocs_syndicate.net.bounded import ResponseTooLarge

    current = url
    for _ in range(MAX_REDIRECTS + 1):
        await check_public(current, allow_loopback=allow_loopback)
        try:
            response = await http.request(
                "GET", current, headers={"Accept": "text/html, */*;q=0.5"}, max_bytes=max_bytes
            )
        except ResponseTooLarge:  # a large page (a PDF, a video): its headers may still name the endpoint
            try:
                response = await http.request("HEAD", current)
            except httpx.HTTPError as exc:
                raise Unreachable(f"{current}: {type(exc).__name__}") from None
        except httpx.HTTPError as exc:
            raise Unreachable(f"{current}: {type(exc).__name__}: {exc}") from None
        location = response.headers.get("location")
        if response.status_code in REDIRECTS and location:
            current = urljoin(current, location)
            continue
        body = response.text if response.request.method == "GET" else ""
        headers = {"link": response.headers.get_list("link"), "type": [response.headers.get("content-type", "")]}
        return current, response.status_code, headers, body
    raise Unreachable(f"{url}: more than {MAX_REDIRECTS} redirects")


async def discover(http: Http, target: str, *, allow_loopback: bool, max_bytes: int = MAX_PAGE_BYTES) -> Discovery:
    """The target's Webmention endpoint, or why it has none. Raises Refused (a private address)
    or Unreachable (try later)."""
    final, status, headers, body = await fetch(http, target, allow_loopback=allow_loopback, max_bytes=max_bytes)
    if status >= 500 or status == 429:
        raise Unreachable(f"{target} answered {status}")
    if status >= 400:
        return Discovery(None, f"the target answered {status}")
    endpoint = endpoint_in_link_headers(headers["link"], final)
    if endpoint is None and "html" in headers["type"][0].lower():
        endpoint = endpoint_in_html(body, final)
    if endpoint is None:
        return Discovery(None, "the target names no Webmention endpoint")
    await check_public(endpoint, allow_loopback=allow_loopback)
    return Discovery(endpoint)
