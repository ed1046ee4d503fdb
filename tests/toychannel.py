"""A toy channel type, added through the registry alone (no other module names it): its client
and its emulator, written against the public channel API (mkdocs_syndicate.channel_api) and
nothing else of the package. If adding a channel needed more than this and one registry line, the
test that uses it would fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Channel,
    ChannelType,
    Emulator,
    Found,
    Http,
    Kind,
    LengthRule,
    Option,
    Outcome,
    Post,
    Prepared,
    Record,
    Request,
    Response,
    Verdict,
    identifier,
    json_list,
    json_object,
    render_message,
    status_outcome,
    transport_outcome,
)


class ToyChannel(Channel):
    type_name = "toy"
    options: ClassVar[Mapping[str, Option]] = {
        "endpoint": Option("url", required=True),
        "token": Option("secret", required=True),
    }

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        message = render_message(
            post,
            self.id,
            "{{ title }} {{ url }}",
            LengthRule(100, len),
            self.site.name,
            where=self.settings.where("template"),
        )
        return Prepared(message, description=message.text)

    def _headers(self) -> dict[str, str]:
        return {"X-Toy-Token": self.settings.options["token"].reveal()}

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        try:
            answer = await http.request(
                "POST",
                f"{self.settings.options['endpoint']}/posts",
                json={"text": prepared.message.text, "url": post.url},
                headers=self._headers(),
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if answer.status_code == 201:
            try:
                return Outcome(Kind.DONE, remote_id=identifier(json_object(answer).get("id")))
            except BadAnswer as exc:
                return Outcome(Kind.AMBIGUOUS, error=str(exc))
        return status_outcome(answer, http.now())

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        answer = await http.request("GET", f"{self.settings.options['endpoint']}/posts", headers=self._headers())
        if answer.status_code != 200:
            return Verdict(Found.UNKNOWN, reason=f"listing answered {answer.status_code}")
        found = [item for item in json_list(answer) if item.get("url") == post.url]
        return Verdict(Found.FOUND, identifier(found[0]["id"])) if found else Verdict(Found.ABSENT, reason="not listed")


class ToyEmulator(Emulator):
    name = "toy"
    creating = ("POST /posts",)

    def initial_state(self) -> dict[str, Any]:
        return {"posts": []}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"endpoint": f"{url}/toy", "token": "toy-token"}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {"id": p["id"], "text": p["text"], "announces": p["url"], "at": p["at"], "link": ""}
            for p in state.get("posts", [])
        ]

    def handle(self, request: Request) -> Response:
        if request.headers.get("x-toy-token") != "toy-token":
            return Response(401, {"error": "who are you"})
        if request.method == "POST" and request.path == "/posts":
            body = request.json()
            post = {
                "id": str(len(self.state["posts"]) + 1),
                "text": body["text"],
                "url": body["url"],
                "at": self.server.now(),
            }
            self.state["posts"].append(post)
            return Response(201, post)
        if request.method == "GET" and request.path == "/posts":
            return Response(200, self.state["posts"])
        return Response(404, {"error": "no such thing"})


# What a package of its own declares in the entry-point group `mkdocs_syndicate.channels`
# (tests/test_channel_plugins.py installs a distribution whose entry point names it).
CHANNEL = ChannelType("toy", "toychannel:ToyChannel", "toychannel:ToyEmulator", "Toy")
