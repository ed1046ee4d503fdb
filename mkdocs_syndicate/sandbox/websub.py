"""A WebSub hub (W3C WebSub Recommendation, 2018; the PubSubHubbub 0.4 publish convention;
Flask-WebSub's hub, flask_websub/hub/, read for what a real one accepts).

- One endpoint, form-encoded POSTs (§5.1): `hub.mode` says what is asked. Parameters it does not
  understand are ignored ("Hubs MUST ignore additional request parameters they do not
  understand"); a request that is not a form, or lacks what its mode needs, is a 400 with the
  reason in the body, as the spec's "4xx or 5xx" with "a description of the failure".
- `publish`: the topic in `hub.url` (repeatable, Google's hub and PubSubHubbub 0.4) or `hub.topic`
  (Flask-WebSub); each an absolute http(s) URL, else 400. Answered 202 Accepted; then, as a hub does
  to distribute new content (§7), it fetches each topic and keeps what it found: the feed's entry
  links and whether the feed names a hub (§4, Discovery). The topic is fetched where it is: a
  loopback URL as it is, another site's through the built site the sandbox serves at `/_site/`.
- `subscribe` / `unsubscribe` (§5.1, §5.3): 202 Accepted, then the subscriber's intent verified by
  a GET of its callback with `hub.challenge`, which it must echo; a verified subscriber is sent
  each published topic's content (§7: a POST of the body with a `Link` header naming hub and self).
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any
from urllib.parse import urlsplit

import httpx

from mkdocs_syndicate.emulator_api import Emulator, Request, Response

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_SECRET = 200  # bytes (§5.1: "hub.secret … MUST be less than 200 bytes in length")


def _absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class WebSubEmulator(Emulator):
    name = "websub"
    creating = ("POST /",)
    duplicates_matter = False  # a topic published again is fetched again: harmless

    def initial_state(self) -> dict[str, Any]:
        return {"pings": [], "subscriptions": {}}  # topic -> {callback: {"lease_seconds", "secret"}}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"hub": f"{url}/websub"}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        """Each publish: the post links its topics held when the hub fetched them, one a line (the
        topics themselves for a topic it could not fetch)."""
        found = []
        for n, ping in enumerate(state.get("pings", []), 1):
            lines = [
                url for topic in ping["topics"] for url in ping.get("fetched", {}).get(topic, {}).get("entries", [])
            ]
            found.append({"id": str(n), "text": "\n".join(lines), "announces": "", "at": ping["at"], "link": ""})
        return found

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        headers = {"Retry-After": str(int(fault["retry_after"]))} if "retry_after" in fault else {}
        return Response(429, b"Too Many Requests", headers)

    def handle(self, request: Request) -> Response:
        if request.path not in ("", "/"):
            return Response(404, b"Not Found")
        if request.method != "POST":
            return Response(405, b"Method Not Allowed: the hub takes a form POST")
        if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            return Response(400, b"Bad Request: the body must be application/x-www-form-urlencoded")
        form = request.form()
        mode = (form.get("hub.mode") or [""])[0]
        if mode == "publish":
            return self._publish(form)
        if mode in ("subscribe", "unsubscribe"):
            return self._subscription(mode, form)
        return Response(400, f"Invalid hub.mode {mode!r}: subscribe, unsubscribe or publish".encode())

    def _publish(self, form: dict[str, list[str]]) -> Response:
        topics = list(dict.fromkeys([*form.get("hub.url", []), *form.get("hub.topic", [])]))
        if not topics:
            return Response(400, b"Missing hub.url (or hub.topic): the topic that changed")
        bad = [t for t in topics if not _absolute(t)]
        if bad:
            return Response(400, f"Invalid topic {bad[0]!r}: an absolute http(s) URL".encode())
        ping: dict[str, Any] = {"at": self.server.now(), "topics": topics, "fetched": {}}
        self.state["pings"].append(ping)
        return Response(202, b"Publish request accepted\n", after=lambda: self._distribute(ping))

    def _subscription(self, mode: str, form: dict[str, list[str]]) -> Response:
        callback, topic = (form.get("hub.callback") or [""])[0], (form.get("hub.topic") or [""])[0]
        if not _absolute(callback) or not _absolute(topic):
            return Response(400, b"hub.callback and hub.topic must be absolute http(s) URLs")
        secret = (form.get("hub.secret") or [""])[0]
        if len(secret.encode()) >= MAX_SECRET:
            return Response(400, b"hub.secret must be less than 200 bytes")
        lease = (form.get("hub.lease_seconds") or ["864000"])[0]
        return Response(202, b"", after=lambda: self._verify_intent(mode, callback, topic, lease, secret))

    # ---------------------------------------------------------------- after answering

    def _verify_intent(self, mode: str, callback: str, topic: str, lease: str, secret: str) -> None:
        challenge = secrets.token_hex(16)
        params = {"hub.mode": mode, "hub.topic": topic, "hub.challenge": challenge, "hub.lease_seconds": lease}
        try:
            answer = httpx.get(callback, params=params, timeout=5)
            verified = answer.status_code == 200 and answer.text == challenge
        except httpx.HTTPError:
            verified = False
        if not verified:
            return
        with self.server.lock:
            subscribers = self.state["subscriptions"].setdefault(topic, {})
            if mode == "subscribe":
                subscribers[callback] = {"lease_seconds": lease, "secret": bool(secret)}
            else:
                subscribers.pop(callback, None)
            self.server.save()

    def _distribute(self, ping: dict[str, Any]) -> None:
        """§7: fetch each topic, keep what it holds, and send it to the topic's subscribers."""
        for topic in ping["topics"]:
            fetched, body, kind = self._fetch(topic)
            with self.server.lock:
                ping["fetched"][topic] = fetched
                subscribers = list(self.state["subscriptions"].get(topic, {}))
                self.server.save()
            if body is None:
                continue
            link = f'<{self.server.url}/websub>; rel="hub", <{topic}>; rel="self"'
            for callback in subscribers:
                with contextlib.suppress(httpx.HTTPError):  # a hub retries later; this one does not
                    httpx.post(callback, content=body, headers={"Content-Type": kind, "Link": link}, timeout=5)

    def _fetch(self, topic: str) -> tuple[dict[str, Any], bytes | None, str]:
        url = self._reachable(topic)
        if url is None:
            return {"error": "not reachable from this machine"}, None, ""
        try:
            answer = httpx.get(url, timeout=5)
        except httpx.HTTPError as exc:
            return {"error": type(exc).__name__}, None, ""
        if answer.status_code != 200:
            return {"error": f"{answer.status_code}"}, None, ""
        entries, names_hub = _entries(answer.content)
        kind = answer.headers.get("content-type", "application/xml")
        return {"entries": entries, "names_hub": names_hub}, answer.content, kind

    def _reachable(self, topic: str) -> str | None:
        parts = urlsplit(topic)
        if parts.hostname in _LOOPBACK:
            return topic
        if self.server.key_file_root is not None and self.server.listening:
            return f"{self.server.url}/_site/{parts.path.lstrip('/')}"
        return None


def _entries(body: bytes) -> tuple[list[str], bool]:
    """A feed's entry links, and whether it names a hub: RSS, Atom or JSON Feed."""
    import json

    if body.lstrip().startswith(b"{"):
        try:
            feed = json.loads(body)
        except ValueError:
            return [], False
        items = feed.get("items", []) if isinstance(feed, dict) else []
        links = [str(i.get("url")) for i in items if isinstance(i, dict) and i.get("url")]
        return links, bool(feed.get("hubs")) if isinstance(feed, dict) else False
    import feedparser

    parsed = feedparser.parse(body)
    links = [str(e.get("link")) for e in parsed.get("entries", []) if e.get("link")]
    return links, any(link.get("rel") == "hub" for link in parsed.get("feed", {}).get("links", []))
