"""Mastodon API emulator (reference: docs/design/services.md, "Mastodon"): statuses with Idempotency-Key semantics
(lookup first, stored only after a successful create, TTL from creation, body not compared, no
lock), verify_credentials, the own-statuses listing with max_id/min_id/limit and a Link header,
the instance's limits, the 500-character rule with URLs counted as 23, X-RateLimit-* headers.
A status's text (its length, HTML and language) is sandbox/mastodon_text.py's, the tokens and
their scopes sandbox/mastodon_tokens.py's, its media attachments sandbox/mastodon_media.py's."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any, ClassVar

from mkdocs_syndicate.emulator_api import Emulator, Hands, Request, Response, first_url
from mkdocs_syndicate.sandbox import conversations
from mkdocs_syndicate.sandbox.mastodon_limits import STATUSES, THROTTLE_PER_TOKEN, limit_of, throttle_of
from mkdocs_syndicate.sandbox.mastodon_media import MastodonMedia, images_of, instance, media_attributes, media_ids
from mkdocs_syndicate.sandbox.mastodon_text import ACCOUNT_LANGUAGE, countable_length, linkify, posting_language
from mkdocs_syndicate.sandbox.mastodon_threading import ancestor_ids, is_public, self_replies_first
from mkdocs_syndicate.sandbox.mastodon_tokens import (
    ACCOUNT_ID,
    TOKEN,
    allows,
    outside,
    scopes_of,
    token_info,
    unauthorized,
)

USERNAME = "sandbox"
MAX_CHARACTERS = 500
# Api::V1::Statuses::ContextsController: the context read's caps, logged out and with a token.
ANCESTORS_LIMIT, DESCENDANTS_LIMIT, CONTEXT_LIMIT = 40, 60, 4_096


_CONTEXT = re.compile(r"/api/v1/statuses/([^/]+)/context")
_STATUS = re.compile(r"/api/v1/statuses/([^/]+)")
_SOURCE = re.compile(r"/api/v1/statuses/([^/]+)/source")


def _iso_ms(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _iso_us(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class MastodonEmulator(Emulator):
    name = "mastodon"
    token = TOKEN  # what it accepts; tests may set their own (a sentinel)
    creating = ("POST /api/v1/statuses",)
    read_marker = "verify_credentials"
    public_pages = ("/@",)

    def initial_state(self) -> dict[str, Any]:
        return {"statuses": [], "idempotency": {}, "seq": 0}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"instance": f"{url}/mastodon", "token": TOKEN}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {
                "id": s["id"],
                "text": s["text"],
                "announces": first_url(s["text"]),
                "at": s.get("created_epoch"),
                "link": s.get("url", ""),
                "in_reply_to_id": s.get("in_reply_to_id"),
                "images": images_of(state, s, public_base),
            }
            for s in state.get("statuses", [])
        ]

    # ---------------------------------------------------------------- helpers

    @property
    def media(self) -> MastodonMedia:
        return MastodonMedia(self)

    def _public(self) -> str:
        return f"{self.server.public_base}/mastodon"

    def _account(self) -> dict[str, Any]:
        return {
            "id": ACCOUNT_ID,
            "username": USERNAME,
            "acct": USERNAME,
            "display_name": "Sandbox",
            "url": f"{self._public()}/@{USERNAME}",
        }

    def _rate_headers(self, now: float) -> dict[str, str]:
        """The statuses family's X-RateLimit-* (sandbox/mastodon_limits.py)."""
        return STATUSES.headers(STATUSES.used(self.state, now), now)

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        """An injected 429 speaks for the limit its request meets (sandbox/mastodon_limits.py):
        a delete's or an upload's throttle, the statuses family, or the per-token throttle."""
        now = self.server.now()
        method, _, path = str(fault.get("request", "POST /api/v1/statuses")).partition(" ")
        window = limit_of(method, path)
        if "reset_in" not in fault:
            return window.refused(now)
        return window.refused(now, reset=_iso_us(now + float(fault["reset_in"])))

    def _entity(self, status: dict[str, Any]) -> dict[str, Any]:
        return (
            {
                key: status[key]
                for key in ("id", "created_at", "uri", "url", "content", "visibility", "language", "card")
            }
            | {
                "account": self._account(),
                "application": {"name": "mkdocs-syndicate", "website": None},
                "in_reply_to_id": status.get("in_reply_to_id"),
                "in_reply_to_account_id": ACCOUNT_ID if status.get("in_reply_to_id") else None,
                "reblog": None,
                "spoiler_text": "",
                "sensitive": False,
                "media_attachments": self.media.of_status(status),
                "edited_at": status.get("edited_at"),
            }
            | conversations.mastodon_counts(self.state, status, self.visible(self.state["statuses"]))
        )

    # ---------------------------------------------------------------- routes

    def _max_characters(self) -> int:
        return int(self.quirks.get("max_characters", MAX_CHARACTERS))

    def _scopes(self, request: Request) -> frozenset[str] | None:
        return scopes_of(request, self.token)

    def _api_rate_headers(self) -> dict[str, str]:
        """The per-token throttle's X-RateLimit-* on an API answer (each call counts)."""
        now = self.server.now()
        return THROTTLE_PER_TOKEN.headers(THROTTLE_PER_TOKEN.count(self.state, now), now)

    def handle(self, request: Request) -> Response:
        context = _CONTEXT.fullmatch(request.path)
        if context and request.method == "GET":  # public for a public status: a token is optional
            return self._context(request, context.group(1))
        if _STATUS.fullmatch(request.path) and request.method == "GET" and "authorization" not in request.headers:
            return self._public_status(request.path.rsplit("/", 1)[-1])
        if request.path == "/api/v2/instance" and request.method == "GET":  # public, no token
            return Response(200, instance(self._max_characters()))
        if request.path == "/oauth/token/info" and request.method == "GET":
            return token_info(request, self._scopes(request))
        scopes = self._scopes(request)
        if scopes is None:
            return unauthorized(request)
        # Rack::Attack, before any controller: a throttle of the request's own counts it, whatever
        # the controller would answer, and its headers go out on the answer.
        throttle, now = throttle_of(request.method, request.path), self.server.now()
        used = throttle.count(self.state, now) if throttle is not None else 0
        if throttle is not None and used > throttle.limit:
            return throttle.refused(now)
        answer = self._route(request, scopes)
        if throttle is not None:
            answer.headers = {**throttle.headers(used, now), **answer.headers}
        return answer

    def _route(self, request: Request, scopes: frozenset[str]) -> Response:
        for method, path, needs, action in _ROUTES:
            if request.method == method and path.fullmatch(request.path):
                # Each action's scopes as Mastodon's controllers ask Doorkeeper for them (a broad
                # scope covers its granular ones); else a 403 with Doorkeeper's body and header.
                return action(self, request) if allows(scopes, *needs) else outside()
        return Response(404, {"error": "Record not found"})

    # ---------------------------------------------------------------- replies (comments: true)

    def _context(self, request: Request, status_id: str) -> Response:
        """GET /api/v1/statuses/:id/context: its ancestors and descendants (the replies), as a
        reader's browser asks for them: CORS open, as Mastodon's rack-cors allows /api/* from any
        origin. Api::V1::Statuses::ContextsController (https://github.com/mastodon/mastodon/blob/main/
        app/controllers/api/v1/statuses/contexts_controller.rb): a token is
        optional (`authorize_if_got_token!`); a reader without one gets at most ANCESTORS_LIMIT = 40
        ancestors and DESCENDANTS_LIMIT = 60 descendants, DESCENDANTS_DEPTH_LIMIT = 20 levels
        deep, with no pagination, and a status it may not see (private, direct) is a 404
        (`authorize @status, :show?` rescued as `not_found`). A reader with a token gets
        CONTEXT_LIMIT = 4,096 of each, at any depth."""
        cors = {"Access-Control-Allow-Origin": "*"}
        logged_in = self._scopes(request) is not None
        everything = {s["id"]: s for s in (*self.state["statuses"], *self.state.get("replies", []))}
        status = everything.get(status_id)
        if status is None or not (logged_in or is_public(status)):
            return Response(404, {"error": "Record not found"}, cors)
        # Quirk uncapped_context: a server of this API that gives everyone every reply.
        uncapped = logged_in or self.quirks.get("uncapped_context")
        limits = (CONTEXT_LIMIT, CONTEXT_LIMIT, None) if uncapped else (ANCESTORS_LIMIT, DESCENDANTS_LIMIT, 20)
        ancestors = [everything[i] for i in ancestor_ids(status, everything, limits[0])]
        descendants = [everything[i] for i in self._descendant_ids(status_id, limits[1], limits[2])]
        if not logged_in:  # Status.permitted_statuses_from_ids: what a logged-out reader may see
            ancestors, descendants = [s for s in ancestors if is_public(s)], [s for s in descendants if is_public(s)]
        body = {
            "ancestors": [self._shown(s) for s in ancestors],
            "descendants": [self._shown(s) for s in self_replies_first(descendants, everything)],
        }
        return Response(200, body, cors)

    def _descendant_ids(self, status_id: str, limit: int, depth: int | None) -> list[str]:
        """StatusThreadingConcern#descendant_ids: the replies tree below the status, ordered by
        path (depth first, siblings by id), at most `depth` levels down, the first `limit`."""
        children: dict[str, list[str]] = {}
        # Others' replies and the account's own (a thread: each part a reply to the one before).
        own = [s for s in self.visible(self.state["statuses"]) if s.get("in_reply_to_id")]
        for reply in (*self.state.get("replies", []), *own):
            children.setdefault(reply["in_reply_to_id"], []).append(reply["id"])
        found: list[str] = []

        def walk(parent: str, level: int) -> None:
            for child in sorted(children.get(parent, []), key=int):
                if len(found) == limit:
                    return
                found.append(child)
                if depth is None or level < depth:
                    walk(child, level + 1)

        walk(status_id, 1)
        return found

    def _shown(self, status: dict[str, Any]) -> dict[str, Any]:
        """A status of ours as the API shows it; a reply is stored as shown, but for its counts."""
        if "text" in status and "account" not in status:
            return self._entity(status)
        return status | conversations.mastodon_counts(self.state, status, self.visible(self.state["statuses"]))

    def _public_status(self, status_id: str) -> Response:
        """GET /api/v1/statuses/:id without a token (StatusesController#show:
        `authorize_if_got_token!`): a public or unlisted status with its counts, CORS open; any
        other is "Record not found"."""
        cors = {"Access-Control-Allow-Origin": "*"}
        everything = {s["id"]: s for s in (*self.visible(self.state["statuses"]), *self.state.get("replies", []))}
        status = everything.get(status_id)
        if status is None or not is_public(status):
            return Response(404, {"error": "Record not found"}, cors)
        return Response(200, self._shown(status), cors)

    def _status_ids(self) -> set[str]:
        """Ours and the replies to them."""
        return {s["id"] for s in self.state["statuses"]} | {r["id"] for r in self.state.get("replies", [])}

    def add_reply(
        self,
        parent_id: str,
        author: str,
        text: str,
        *,
        warning: str = "",
        sensitive: bool = False,
        at: str | None = None,
    ) -> dict[str, Any]:
        """Someone else's public reply (a test's or the CLI's), `text` as Mastodon gives content:
        HTML; `warning` its content warning (spoiler_text: the status is then sensitive, as
        PostStatusService makes it); `at` when it was written (its id follows, as a snowflake)."""
        if parent_id not in self._status_ids():
            raise ValueError(f"no status {parent_id} on the sandbox's Mastodon")
        replies = self.state.setdefault("replies", [])
        self.state["seq"] += 1
        now = conversations.when(at, self.server.now())
        reply_id = str((int(now * 1000) << 16) | (self.state["seq"] & 0xFFFF))
        account = {
            "id": conversations.account_id(author),
            "username": author,
            "acct": f"{author}@elsewhere.example",
            "display_name": author,
            "url": f"{self._public()}/@{author}",
        }
        reply = {
            "id": reply_id,
            "created_at": _iso_ms(now),
            "in_reply_to_id": parent_id,
            "uri": f"{self._public()}/users/{author}/statuses/{reply_id}",
            "url": f"{self._public()}/@{author}/{reply_id}",
            "content": text,
            "visibility": "public",
            "account": account,
            "spoiler_text": warning,
            "sensitive": bool(sensitive or warning),
            "reblog": None,
        }
        replies.append(reply)
        return reply

    def _create(self, request: Request) -> Response:
        # PostStatusService: GET the key first; create; SETEX the key only after the create is
        # committed, with no lock. A slow commit (quirk commit_delay) leaves a window in which a
        # replay with the same key creates a second status, as on a real instance.
        now = self.server.now()
        key = None if self.quirks.get("ignore_idempotency_key") else request.headers.get("idempotency-key")
        fields = _fields(request)
        parent = fields.get("in_reply_to_id")
        if parent and not self._may_reply_to(str(parent)):
            # Api::V1::StatusesController's before_action set_thread, ahead of PostStatusService
            # and its key: Status.find (RecordNotFound) or `authorize @thread, :show?` refused.
            return Response(404, {"error": IN_REPLY_NOT_FOUND})
        remembered = self.state["idempotency"].get(key) if key else None
        if remembered and remembered["at"] <= now < remembered["at"] + self.server.idempotency_ttl:
            return self._replay(remembered["id"], now)
        attached = media_ids(request) or []  # PostStatusService#validate_media!, before the text
        refused = self.media.check(attached, None) or self._invalid(fields, with_media=bool(attached))
        if refused is not None:
            return refused
        if STATUSES.used(self.state, now) >= STATUSES.limit:  # RateLimiter#record!, after_create
            return STATUSES.refused(now)
        STATUSES.count(self.state, now)
        self.state["seq"] += 1
        committed = self.commit_time()
        status = self._status(str((int(committed * 1000) << 16) | (self.state["seq"] & 0xFFFF)), committed, fields)
        status["idempotency_key"] = key
        self.media.attach(attached, status)
        self.state["statuses"].append(status)
        if key:
            self.state["idempotency"][key] = {"id": status["id"], "at": committed}
        return Response(
            200, self._entity(status), self._rate_headers(now), hold_until=committed if committed > now else None
        )

    def _may_reply_to(self, status_id: str) -> bool:
        """A status the account can see now: its own (once committed) or a public reply to one."""
        seen = (*self.visible(self.state["statuses"]), *self.state.get("replies", []))
        return any(status["id"] == status_id for status in seen)

    def _replay(self, status_id: str, now: float) -> Response:
        """A request with a key Mastodon remembers: the status it made, found again."""
        if self.quirks.get("replay_500"):  # mastodon/mastodon#40399: postprocess_status! on nil
            return Response(
                500,
                b"<!DOCTYPE html><html><body><h1>We're sorry, but something went wrong.</h1></body></html>",
                {"Content-Type": "text/html; charset=utf-8"},
            )
        for status in self.state["statuses"]:
            if status["id"] == status_id:
                return Response(200, self._entity(status), self._rate_headers(now))
        return Response(404, {"error": "Record not found"})

    def _invalid(self, fields: dict[str, Any], *, with_media: bool = False) -> Response | None:
        """Status's validations, in Mastodon's words: a 422 naming what is wrong, or None (the
        text may be blank when there are media: `presence: true, unless: with_media?`)."""
        text = str(fields.get("status") or "")
        if not text.strip() and not with_media:
            return Response(422, {"error": "Validation failed: Text can't be blank"})
        if countable_length(text) > self._max_characters():
            return Response(
                422, {"error": f"Validation failed: Text character limit of {self._max_characters()} exceeded"}
            )
        if (fields.get("visibility") or "public") not in ("public", "unlisted", "private", "direct"):
            return Response(422, {"error": "Validation failed: Visibility is not included in the list"})
        return None

    def _status(self, status_id: str, committed: float, fields: dict[str, Any]) -> dict[str, Any]:
        text = str(fields.get("status") or "")
        return {
            "id": status_id,
            "created_at": _iso_ms(self.server_clock(committed)),
            "created_epoch": committed,
            "visible_at": committed,
            "uri": f"{self._public()}/users/{USERNAME}/statuses/{status_id}",
            "url": f"{self._public()}/@{USERNAME}/{status_id}",
            "text": text,
            "content": linkify(text),
            "visibility": fields.get("visibility") or "public",
            "language": posting_language(fields.get("language")),
            "card": None,
            "in_reply_to_id": str(fields["in_reply_to_id"]) if fields.get("in_reply_to_id") else None,
        }

    hands: ClassVar[Hands] = {"delete": lambda self, request: self._delete(request.path.split("/")[4])}

    def _delete(self, status_id: str) -> Response:
        """DELETE /api/v1/statuses/:id (the author removes it). The Idempotency-Key stays in Redis
        until its TTL: a replay then finds no status (Status.find raises) and answers 404."""
        for status in self.state["statuses"]:
            if status["id"] == status_id:
                self.state["statuses"].remove(status)
                return Response(200, self._entity(status) | {"text": status["text"]})
        return Response(404, {"error": "Record not found"})

    def _edit(self, request: Request) -> Response:
        """PUT /api/v1/statuses/:id (Mastodon 3.5+, docs.joinmastodon.org/methods/statuses/#edit),
        as Api::V1::StatusesController#update and UpdateStatusService do it. Not the author's, or
        no such status: 404 "Record not found" (the status is found among the account's own).
        The controller always passes `media_ids`, so the media are always replaced: an edit that
        names none leaves the status with none (validate_media! `return [] if blank?`). The text
        is validated as a new status's is. An edit that changes nothing (text, language, the
        media, their order, a description) raises NoChangesSubmittedError: 200 with the status as
        it was, no revision, no new `edited_at`, nothing counted. Any other is a revision
        (StatusEdit) and counts in the statuses family, after the validations (its
        `after_create`): over the limit, 429 and nothing changed."""
        status_id = request.path.rsplit("/", 1)[-1]
        status = next((s for s in self.state["statuses"] if s["id"] == status_id), None)
        if status is None:
            return Response(404, {"error": "Record not found"})
        fields = _fields(request)
        attached = media_ids(request) or []
        refused = self.media.check(attached, status_id) or self._invalid(fields, with_media=bool(attached))
        if refused is not None:
            return refused
        now = self.server.now()
        text = str(fields.get("status") or "")
        # UpdateStatusService: valid_locale_cascade(@options[:language], @status.language, ...)
        language = posting_language(fields.get("language"), status.get("language") or ACCOUNT_LANGUAGE)
        described = self.media.descriptions_changed(attached, media_attributes(request))
        if (text, language, attached) == (status["text"], status["language"], status.get("media_ids", [])) and not (
            described
        ):
            return Response(200, self._entity(status), self._rate_headers(now))
        if STATUSES.used(self.state, now) >= STATUSES.limit:
            return STATUSES.refused(now)
        STATUSES.count(self.state, now)
        status.setdefault("edits", []).append({"text": status["text"], "at": _iso_ms(self.server_clock(now))})
        status["text"], status["content"], status["language"] = text, linkify(text), language
        self.media.attach(attached, status, media_attributes(request))
        status["edited_at"] = _iso_ms(self.server_clock(now))
        return Response(200, self._entity(status), self._rate_headers(now))

    def _show(self, request: Request) -> Response:
        """GET /api/v1/statuses/:id: the Status; 404 "Record not found" when there is none."""
        status_id = request.path.rsplit("/", 1)[-1]
        status = next((s for s in self.state["statuses"] if s["id"] == status_id), None)
        if status is None:
            return Response(404, {"error": "Record not found"})
        return Response(200, self._entity(status))

    def _source(self, request: Request) -> Response:
        """GET /api/v1/statuses/:id/source (Mastodon 3.5+): the plain text a client edits from,
        as StatusSource {id, text, spoiler_text}; 404 "Record not found" when there is none."""
        status_id = request.path.split("/")[-2]
        status = next((s for s in self.state["statuses"] if s["id"] == status_id), None)
        if status is None:
            return Response(404, {"error": "Record not found"})
        return Response(200, {"id": status_id, "text": status["text"], "spoiler_text": ""})

    def _list(self, request: Request) -> Response:
        limit = _limit(request)
        statuses = sorted(self.visible(self.state["statuses"]), key=lambda s: int(s["id"]), reverse=True)
        below, above = int(request.arg("max_id") or 0), max(int(request.arg(n) or 0) for n in ("min_id", "since_id"))
        statuses = [s for s in statuses if (not below or int(s["id"]) < below) and int(s["id"]) > above]
        page = statuses[:limit]
        headers = {"Link": _page_links(request, page, limit)} if page else {}
        return Response(200, [self._entity(s) for s in page], headers)


# config/locales/en.yml statuses.errors.in_reply_not_found, the body of set_thread's 404.
IN_REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist."


def _limit(request: Request) -> int:
    """`limit`: 20 by default, at most 40 (a bad number reads as the default)."""
    try:
        return min(40, max(1, int(request.arg("limit", "20") or 20)))
    except ValueError:
        return 20


def _fields(request: Request) -> dict[str, Any]:
    """A status's parameters, as JSON or as a form (Rails reads both)."""
    if request.headers.get("content-type", "").startswith("application/json"):
        return dict(request.json())
    return {k: v[0] for k, v in request.form().items()}


def _page_links(request: Request, page: list[dict[str, Any]], limit: int) -> str:
    """The Link header of a page of statuses: the next (older) page and the previous (newer) one."""
    base = f"{request.base}/api/v1/accounts/{ACCOUNT_ID}/statuses?limit={limit}"
    return f'<{base}&max_id={page[-1]["id"]}>; rel="next", <{base}&min_id={page[0]["id"]}>; rel="prev"'


# The token-guarded API: method, path, the scopes any of which allows it, and what answers.
_MEDIA, _MEDIA_ID = ("write", "write:media"), re.compile(r"/api/v1/media/([^/]+)")  # the media controllers
_Action = Callable[["MastodonEmulator", Request], Response]
_ROUTES: list[tuple[str, re.Pattern[str], tuple[str, ...], _Action]] = [
    ("POST", re.compile(r"/api/v1/statuses"), ("write", "write:statuses"), MastodonEmulator._create),
    ("PUT", _STATUS, ("write", "write:statuses"), MastodonEmulator._edit),
    ("GET", _SOURCE, ("read", "read:statuses"), MastodonEmulator._source),
    ("GET", _STATUS, ("read", "read:statuses"), MastodonEmulator._show),
    (
        "DELETE",
        _STATUS,
        ("write", "write:statuses"),
        lambda self, request: self._delete(request.path.rsplit("/", 1)[-1]),
    ),
    (
        "GET",
        re.compile(r"/api/v1/accounts/verify_credentials"),
        ("profile", "read", "read:accounts"),
        lambda self, request: Response(200, self._account(), self._api_rate_headers()),
    ),
    ("GET", re.compile(rf"/api/v1/accounts/{ACCOUNT_ID}/statuses"), ("read", "read:statuses"), MastodonEmulator._list),
    ("POST", re.compile(r"/api/v1/media"), _MEDIA, lambda self, request: self.media.upload(request, v2=False)),
    ("POST", re.compile(r"/api/v2/media"), _MEDIA, lambda self, request: self.media.upload(request, v2=True)),
    ("GET", _MEDIA_ID, _MEDIA, lambda self, request: self.media.show(request.path.rsplit("/", 1)[-1])),
    ("PUT", _MEDIA_ID, _MEDIA, lambda self, request: self.media.update(request, request.path.rsplit("/", 1)[-1])),
    ("DELETE", _MEDIA_ID, _MEDIA, lambda self, request: self.media.destroy(request.path.rsplit("/", 1)[-1])),
]
