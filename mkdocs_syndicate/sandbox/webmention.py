"""Webmention emulator, written from the W3C Recommendation (https://www.w3.org/TR/webmention/,
§3.2 "Receiving Webmentions") and from django-webmention's receiver (webmention/views.py and
resolution.py): the pages of a site that accepts Webmentions, and its receiver.

Pages (`GET /page/<anything>`): each names the receiver in an HTTP `Link` header, as
django-webmention's middleware does; under `/page/html/` in a `<link rel="webmention">` with a
relative href and a query string instead, under `/page/anchor/` in an `<a rel="webmention">`, under
`/page/plain/` nowhere (a site that takes no Webmention), under `/page/moved/` a 301 to the same
page without it, and under `/page/gone/` a 410. In the sandbox every other site's page is read here
(`/page/<host>/<path>`), so that a rehearsal never asks the web.

Receiver (`POST /endpoint`, form-encoded `source` and `target`; §3.2.1): 400 without both, when
either is not an http(s) URL, when they are the same, or when the target is not a page this
receiver takes (a page here named nowhere, or gone). Else the request is accepted: 202 with a
status page in `Location` (`/status/<n>`), the source verified after answering (§3.2.2: fetched;
it mentions the target when an `href` or `src` of it is the target; a source that answers 404 or
410, or no longer links to the target, deletes the mention it made before). With the quirk
`synchronous` the source is verified before answering, as django-webmention does: 201 with the
status page's `Location` when it mentions the target, 400 otherwise. Each request is one received
item (its text the source: what the request announced), so a mention sent again is seen twice.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import httpx

from mkdocs_syndicate.emulator_api import Emulator, Request, Response

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_VARIANTS = ("html", "anchor", "plain", "moved", "gone")


class _Mentions(HTMLParser):
    """Every href and src of a page, as the receiver looks for the target (§3.2.2)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.urls.add(value.strip())
                self.urls.add(value.strip().partition("#")[0])


def _mentions(html: str, target: str) -> bool:
    parser = _Mentions()
    parser.feed(html)
    parser.close()
    return target in parser.urls


class WebmentionEmulator(Emulator):
    name = "webmention"
    creating = ("POST /endpoint",)
    duplicates_matter = False  # a Webmention sent again is verified again: harmless (at-least-once)
    cited_page = "https://example.org/cited/"  # another site's page: in the sandbox, read here

    def initial_state(self) -> dict[str, Any]:
        # requests: every POST received; mentions: what the receiver shows now, by "source target".
        return {"requests": [], "mentions": {}}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, object]:
        return {"sandbox_targets": f"{url}/webmention/page"}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {"id": str(n), "text": r["source"], "announces": r["source"], "at": r.get("at"), "link": r.get("status")}
            for n, r in enumerate(state.get("requests", []), 1)
        ]

    site_path = "/"

    def configure_for_site(self, site_url: str) -> None:
        self.site_path = urlsplit(site_url).path or "/"

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        wait = fault.get("retry_after", fault.get("reset_in"))
        return Response(429, b"Too Many Requests", {"Retry-After": str(int(wait))} if wait is not None else {})

    def handle(self, request: Request) -> Response:
        path = request.path
        if request.method in ("GET", "HEAD") and path.startswith("/page/"):
            return self._page(request, path.removeprefix("/page/"))
        if request.method == "POST" and path == "/endpoint":
            return self._receive(request)
        if request.method == "GET" and path.startswith("/status/"):
            return self._status(path.removeprefix("/status/"))
        return Response(404, b"Not Found")

    # ---------------------------------------------------------------- the pages

    def _page(self, request: Request, rest: str) -> Response:
        variant = rest.split("/", 1)[0]
        endpoint = f"{request.base}/endpoint"
        html = "<!doctype html><title>a page</title><p>A page that can be mentioned.</p>"
        if variant == "gone":
            return Response(410, b"Gone")
        if variant == "moved":
            return Response(301, b"", {"Location": f"{request.base}/page/{rest.split('/', 1)[-1]}"})
        if variant == "plain":
            return Response(200, html.encode(), {"Content-Type": "text/html; charset=utf-8"})
        if variant == "html":  # relative to the page: from /page/html/<x>, ../../ is the emulator's root
            link = f'<link rel="webmention" href="{"../" * (rest.count("/") + 1)}endpoint?via=html">'
            return Response(200, (link + html).encode(), {"Content-Type": "text/html; charset=utf-8"})
        if variant == "anchor":
            body = f'{html}<a rel="nofollow webmention" href="{endpoint}">webmention</a>'
            return Response(200, body.encode(), {"Content-Type": "text/html; charset=utf-8"})
        headers = {"Content-Type": "text/html; charset=utf-8", "Link": f'<{endpoint}>; rel="webmention"'}
        return Response(200, html.encode(), headers)

    def _takes(self, request: Request, target: str) -> bool:
        """Whether the target is a page this receiver accepts Webmentions for."""
        parts = urlsplit(target)
        own = urlsplit(request.base)
        if (parts.hostname, parts.port) != (own.hostname, own.port):
            return True  # in the sandbox, every other site's page is one of ours (read at /page/<host>/...)
        rest = parts.path.removeprefix(f"{own.path}/page/")
        return parts.path != rest and rest.split("/", 1)[0] not in ("plain", "gone")

    # ---------------------------------------------------------------- the receiver

    def _receive(self, request: Request) -> Response:
        form = request.form()
        source, target = (form.get(name, [""])[0] for name in ("source", "target"))
        if not source or not target:
            return Response(400, b"webmention source and/or target not in request")
        if any(urlsplit(u).scheme not in ("http", "https") for u in (source, target)) or source == target:
            return Response(400, b"source and target must be two different http(s) URLs")
        if not self._takes(request, target):
            return Response(400, b"Target URL did not resolve to a resource on the server")
        number = len(self.state["requests"]) + 1
        status = f"{request.base}/status/{number}"
        self.state["requests"].append(
            {"source": source, "target": target, "at": self.server.now(), "status": status, "result": "pending"}
        )
        if self.quirks.get("synchronous"):
            result = self._verify(source, target, number)
            if result == "mentioned":
                return Response(201, b"The webmention was created", {"Location": status})
            return Response(400, f"Source URL did not mention the target ({result})".encode())
        return Response(
            202, b"The webmention was accepted", {"Location": status}, after=lambda: self._later(source, target, number)
        )

    def _later(self, source: str, target: str, number: int) -> None:
        self._verify(source, target, number, locked=False)

    def _verify(self, source: str, target: str, number: int, *, locked: bool = True) -> str:
        """Fetch the source and update what the receiver shows for (source, target)."""
        url = self._reachable(source)
        try:
            answer = httpx.get(url, timeout=5) if url else None
        except httpx.HTTPError:
            answer = None
        key = f"{source} {target}"
        if answer is None or answer.status_code >= 500:
            result = "source unreachable"
        elif answer.status_code in (404, 410):
            result = "source gone: mention deleted"
        elif answer.status_code == 200 and _mentions(answer.text, target):
            result = "mentioned"
        else:
            result = "source does not link to the target: mention deleted"
        if locked:
            self._record(key, result, number)
        else:
            with self.server.lock:
                self._record(key, result, number)
                self.server.save()
        return result

    def _record(self, key: str, result: str, number: int) -> None:
        mentions = self.state["mentions"]
        if result == "mentioned":
            mentions[key] = {"request": number, "at": self.server.now()}
        elif result != "source unreachable":
            mentions.pop(key, None)
        self.state["requests"][number - 1]["result"] = result

    def _status(self, number: str) -> Response:
        requests = self.state["requests"]
        if not number.isdigit() or not 1 <= int(number) <= len(requests):
            return Response(404, b"Not Found")
        return Response(200, dict(requests[int(number) - 1]))

    def _reachable(self, source: str) -> str | None:
        """Where the source is read: a loopback page as it is; in the sandbox, any other page in
        the built site it serves at /_site/ (nothing here is public)."""
        parts = urlsplit(source)
        if parts.hostname in _LOOPBACK:
            return source
        if self.server.key_file_root is not None and self.server.listening:
            if not parts.path.startswith(self.site_path):
                return f"{self.server.url}/_site/.outside-this-site"
            page = parts.path[len(self.site_path) :]
            return f"{self.server.url}/_site/{page}{'index.html' if page.endswith('/') or not page else ''}"
        return None
