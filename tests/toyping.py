"""The toy channel's batched sibling: a ping service told of many pages in one request, delivered
at least once (a repeat is harmless), as IndexNow is. Written against the public channel API
alone and installed as a plugin for the whole test session (tests/plugins/, conftest.py), so the
shared suites, built from the registry, must cover a batched type that is not built in: the
contract, the wrong-shape answers, the crash matrix and the soak (issue 37)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mkdocs_syndicate.channel_api import (
    Channel,
    ChannelType,
    Emulator,
    Http,
    Kind,
    Option,
    Outcome,
    Post,
    Prepared,
    Request,
    Response,
    message_sha256,
    status_outcome,
    transport_outcome,
)

MAX_URLS = 2  # pages per request: three posts make two requests


class ToyPingChannel(Channel):
    type_name = "toyping"
    default_delivery = "at_least_once"
    batched = True
    options: ClassVar[Mapping[str, Option]] = {
        "endpoint": Option("url", required=True),
        "token": Option("secret", required=True),
    }

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        return Prepared(None, description=f"ping {post.url}", payload_sha256=message_sha256(post.url))

    def batches(self, posts: list[Post]) -> list[list[Post]]:
        return [posts[i : i + MAX_URLS] for i in range(0, len(posts), MAX_URLS)]

    async def send_batch(self, http: Http, posts: list[Post]) -> Outcome:
        import httpx

        try:
            answer = await http.request(
                "POST",
                f"{self.settings.options['endpoint']}/pings",
                json={"urls": [post.url for post in posts]},
                headers={"X-Toy-Token": self.settings.options["token"].reveal()},
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 204:  # its body, if any, is not read: there is no copy to address
            return Outcome(Kind.DONE)
        return status_outcome(answer, http.now())


class ToyPingEmulator(Emulator):
    name = "toyping"
    creating = ("POST /pings",)
    duplicates_matter = False  # a page pinged again is harmless

    def initial_state(self) -> dict[str, Any]:
        return {"pings": []}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"endpoint": f"{url}/toyping", "token": "toyping-token"}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        """One item a request, its text the URLs it carried one a line (the batched convention)."""
        return [
            {"id": str(n), "text": "\n".join(ping["urls"]), "announces": "", "at": ping["at"], "link": ""}
            for n, ping in enumerate(state.get("pings", []), 1)
        ]

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        return Response(429, {"error": "slow down"}, {"Retry-After": str(int(fault.get("reset_in", 60)))})

    def handle(self, request: Request) -> Response:
        if request.headers.get("x-toy-token") != "toyping-token":
            return Response(401, {"error": "who are you"})
        if request.method == "POST" and request.path == "/pings":
            urls = request.json().get("urls")
            if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
                return Response(400, {"error": "urls: a list of page URLs"})
            self.state["pings"].append({"urls": urls, "at": self.server.now()})
            return Response(204)
        return Response(404, {"error": "no such thing"})


# Declared by the test session's plugin distribution (tests/plugins/*.dist-info/entry_points.txt).
CHANNEL = ChannelType("toyping", "toyping:ToyPingChannel", "toyping:ToyPingEmulator", "Toy Ping")
