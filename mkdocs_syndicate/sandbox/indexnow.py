"""IndexNow emulator (reference: channel-apis.md §4): GET and POST, key format, every URL on the
request's host (422), the key file checked against the built site when one is given (403), 202 on
a key's first use and 200 after."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .server import Emulator, Request, Response

_KEY = re.compile(r"[A-Za-z0-9-]{8,128}")


class IndexNowEmulator(Emulator):
    name = "indexnow"
    creating = ("POST /", "GET /")

    def initial_state(self) -> dict[str, Any]:
        return {"pings": [], "keys": []}

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        headers = {"Retry-After": str(int(fault["retry_after"]))} if "retry_after" in fault else {}
        return Response(429, b"Too Many Requests", headers)

    def handle(self, request: Request) -> Response:
        if request.path not in ("/", "", "/indexnow"):
            return Response(404, b"Not Found")
        if request.method == "POST":
            try:
                body = request.json()
                host, key, urls = body["host"], body["key"], list(body["urlList"])
                location = body.get("keyLocation")
            except (ValueError, KeyError, TypeError):
                return Response(400, b"Bad request: expected JSON with host, key and urlList")
        elif request.method == "GET":
            url, key = request.arg("url"), request.arg("key")
            if not url or not key:
                return Response(400, b"Bad request: url and key are required")
            host, urls, location = urlsplit(url).hostname, [url], request.arg("keyLocation")
        else:
            return Response(405, b"Method Not Allowed")
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return Response(422, b"Invalid key: 8-128 characters of a-z, A-Z, 0-9 and -")
        if not urls or len(urls) > 10_000:
            return Response(422, b"urlList must hold 1 to 10000 URLs")
        if any(urlsplit(u).hostname != host for u in urls):
            return Response(422, b"URL does not belong to the host")
        if location and urlsplit(location).hostname != host:
            return Response(422, b"Invalid key location")
        if not self._key_file_ok(key):
            return Response(403, b"Key not valid: key file not found or content does not match")
        first_use = key not in self.state["keys"]
        if first_use:
            self.state["keys"].append(key)
        self.state["pings"].append({"at": self.server.now(), "host": host, "key": key, "urls": urls})
        return Response(202 if first_use else 200, b"")

    def _key_file_ok(self, key: str) -> bool:
        root = self.server.key_file_root
        if root is None:
            return True
        path = root / f"{key}.txt"
        try:
            return path.read_text(encoding="utf-8").strip() == key
        except OSError:
            return False
