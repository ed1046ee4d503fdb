"""IndexNow emulator (reference: docs/design/services.md, "IndexNow"; indexnow.org/documentation, Yandex's IndexNow
reference): GET and POST, the key format, every URL on the request's host (422), and the key
check as the engines do it — asynchronously, over HTTP, from the live site.

A ping with a key the engine has not validated yet is answered 202 ("URL received. IndexNow key
validation pending"); after answering, the engine fetches the key file (`keyLocation`, else
`https://<host>/<key>.txt`) and remembers the verdict: later pings with a valid key get 200, with
an invalid one (file missing, or not holding the key) 403 — and a 403 triggers a fresh check, so
a key file deployed later is found. The "live site" is whatever answers that URL: a loopback
server as it is, any other host through the built site the sandbox serves at `/_site/`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from mkdocs_syndicate.emulator_api import Emulator, Request, Response

_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")
KEY = "sandbox-indexnow-key-0001"  # the key sandbox runs ping with
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _refused(host: Any, key: Any, urls: list[Any], location: Any) -> bytes | None:
    """Why the engines answer 422, or None."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        return b"Invalid key: 8-128 characters of a-z, A-Z, 0-9 and -"
    if not urls or len(urls) > 10_000:
        return b"urlList must hold 1 to 10000 URLs"
    if any(urlsplit(u).hostname != host for u in urls):
        return b"URL does not belong to the host"
    return _location_refused(host, urls, location) if location else None


def _location_refused(host: Any, urls: list[Any], location: str) -> bytes | None:
    if urlsplit(location).hostname != host:
        return b"Invalid key location"
    # indexnow.org: a key file in a folder covers only the URLs under that folder
    # ("https://example.com/catalog/key.txt" → URLs starting with /catalog/).
    folder = urlsplit(location).path.rsplit("/", 1)[0] + "/"
    if any(not (urlsplit(u).path or "/").startswith(folder) for u in urls):
        return b"URL is not under the key location's folder"
    return None


class IndexNowEmulator(Emulator):
    name = "indexnow"
    creating = ("POST /", "GET /")

    def initial_state(self) -> dict[str, Any]:
        return {"pings": [], "keys": {}}  # key -> "pending" | "valid" | "invalid"

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"endpoint": f"{url}/indexnow", "key": KEY}

    duplicates_matter = False  # pinging a URL again is harmless (at-least-once)

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {"id": str(n), "text": "\n".join(p["urls"]), "announces": "", "at": p.get("at"), "link": ""}
            for n, p in enumerate(state.get("pings", []), 1)
        ]

    def trust(self, *keys: str) -> None:
        """Tests that are not about the key check: these keys were validated long ago."""
        with self.server.lock:
            for key in keys:
                self.state["keys"][key] = "valid"

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        headers = {"Retry-After": str(int(fault["retry_after"]))} if "retry_after" in fault else {}
        return Response(429, b"Too Many Requests", headers)

    def handle(self, request: Request) -> Response:
        if request.path not in ("/", "", "/indexnow"):
            return Response(404, b"Not Found")
        submitted = self._submission(request)
        if isinstance(submitted, Response):
            return submitted
        host, key, urls, location = submitted
        problem = _refused(host, key, urls, location)
        if problem is not None:
            return Response(422, problem)
        where = location or f"https://{host}/{key}.txt"
        if isinstance(self.state["keys"], list):  # a state.json from before keys had verdicts
            self.state["keys"] = {k: "valid" for k in self.state["keys"]}
        verdict = self.state["keys"].get(key)
        if verdict == "invalid":
            return Response(
                403,
                b"Key not valid: key file not found or content does not match",
                after=lambda: self._check(key, where),
            )
        self.state["pings"].append({"at": self.server.now(), "host": host, "key": key, "urls": urls})
        if verdict == "valid":
            return Response(200, b"")
        self.state["keys"][key] = "pending"
        return Response(202, b"", after=lambda: self._check(key, where))

    @staticmethod
    def _submission(request: Request) -> Response | tuple[Any, Any, list[Any], Any]:
        """(host, key, URLs, key location) of a POST of many URLs or a GET of one, or the 400/405."""
        if request.method == "POST":
            try:
                body = request.json()
                return body["host"], body["key"], list(body["urlList"]), body.get("keyLocation")
            except (ValueError, KeyError, TypeError):
                return Response(400, b"Bad request: expected JSON with host, key and urlList")
        if request.method == "GET":
            url, key = request.arg("url"), request.arg("key")
            if not url or not key:
                return Response(400, b"Bad request: url and key are required")
            return urlsplit(url).hostname, key, [url], request.arg("keyLocation")
        return Response(405, b"Method Not Allowed")

    def _check(self, key: str, location: str) -> None:
        """The engine's later fetch of the key file, over HTTP."""
        url = self._reachable(location)
        if url is None:
            return  # the site is nowhere this machine can reach: validation stays pending
        try:
            answer = httpx.get(url, timeout=5)
            valid = answer.status_code == 200 and answer.text.strip() == key
        except httpx.HTTPError:
            valid = False
        with self.server.lock:
            self.state["keys"][key] = "valid" if valid else "invalid"
            self.server.save()

    def configure_for_site(self, site_url: str) -> None:
        # Where the built site is deployed: a GitHub Pages project site serves site_dir under
        # /<project>/, and the host's root is someone else's (the user site).
        self.site_path = urlsplit(site_url).path or "/"

    site_path = "/"

    def _reachable(self, location: str) -> str | None:
        parts = urlsplit(location)
        if parts.hostname in _LOOPBACK:
            return location
        if self.server.key_file_root is not None and self.server.listening:
            if not parts.path.startswith(self.site_path):
                return f"{self.server.url}/_site/.outside-this-site"  # not in this site's build: 404
            return f"{self.server.url}/_site/{parts.path[len(self.site_path) :]}"
        return None
