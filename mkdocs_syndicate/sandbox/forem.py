"""DEV / Forem API emulator (reference: docs/design/services.md, "DEV / Forem"): api-key and the v1 Accept header,
POST /api/articles (201 + Location), PUT /api/articles/{id}, the own-articles listings, site-wide
uniqueness of a published canonical_url (422), the 5-minute title rule, the 4-tag limit, and the
per-user creation limit (429 with Retry-After).

Article's other validations the API meets (forem/forem app/models/article.rb, current): a
`body_markdown` of at most 800 KB (UTF-8 bytes, "Body markdown is too long."); a `canonical_url`
that validate_url takes with `no_local` (its host must have a dot: `http://localhost:8000/…` is
refused, "Canonical url is not a valid URL") and no whitespace ("Canonical url must not have
spaces"). Each problem is one sentence of the 422's `error`, in the model's order. Before it
validates, `normalize_title` turns each run of whitespace in the title into one space and strips
the ends (Ruby's whitespace class: ASCII only; its filter of characters outside words, punctuation and
a list of symbols is not modelled), so the title stored, counted and shown is that one.

Quirk `rack_attack`: DEV's Rack::Attack throttles (config/initializers/rack_attack.rb), before
the API sees the request, counted as sandbox/rack_attack.py says: `api_write_throttle`, one
POST, PUT or DELETE under /api/ a second per IP and api-key; `api_throttle`, three GETs under
/api/ a second per IP (the public comments too). The default throttled responder answers 429,
plain text "Retry later", and Retry-After (`throttled_response_retry_after_header = true`): the
seconds left in the window. Off by default: windows of one second counted on the machine's clock
would make a test depend on its speed.

`main_image` (the cover) is checked as Article checks it (forem/forem app/models/article.rb:
`validates :main_image, url: { allow_blank: true, schemes: %w[https http] }`, the validate_url
gem: an http(s) URL with a host, else "Main image is not a valid URL"). Nothing fetches it while
the article is saved: Articles::EnrichImageAttributesWorker reads its size later, in the
background, and tolerates a URL that does not answer or is no image, so such a cover is taken.
The API shows it as `cover_image`, the URL of DEV's image optimizer that serves it
(Images::Optimizer: `media2.dev.to/dynamic/image/width=1000,height=420,…/<the URL, escaped>`),
not the URL sent."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

import regex

from mkdocs_syndicate.emulator_api import Emulator, Hands, Request, Response
from mkdocs_syndicate.sandbox import conversations
from mkdocs_syndicate.sandbox.rack_attack import Window

API_KEY = "sandbox-forem-api-key"
ACCEPT = "application/vnd.forem.api-v1+json"
USERNAME = "sandbox"
CREATE_LIMIT, CREATE_WINDOW = 9, 30.0  # published_article_creation: 9 per 30 s
BODY_MAX_BYTES = 800 * 1024  # 800.kilobytes
_RUBY_WHITESPACE = re.compile(r"[ \t\r\n\f\v]+")  # Ruby's /\s+/: ASCII whitespace only


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "post"


def _valid_url(value: str, *, no_local: bool = False) -> bool:
    """validate_url's test with `schemes: %w[https http]`: it parses, has one of them and a host;
    with `no_local`, a host with a dot in it (`localhost` or `myserver` is refused, an IP address
    is not: validate_url 1.0.15 `host.include?('.')`)."""
    try:
        parts = urlsplit(value)
        has_host = parts.scheme in ("http", "https") and bool(parts.hostname) and not re.search(r"\s", value)
    except ValueError:
        return False
    return has_host and (not no_local or "." in str(parts.hostname))


def _canonical_problems(canonical: Any) -> list[str]:
    """`validates :canonical_url, url: {allow_blank: true, no_local: true, …}` and
    `canonical_url_must_not_have_spaces` ([[:space:]], Unicode spaces too)."""
    if not canonical:
        return []
    value = str(canonical)
    problems = [] if _valid_url(value, no_local=True) else ["Canonical url is not a valid URL"]
    return [*problems, "Canonical url must not have spaces"] if regex.search(r"[[:space:]]", value) else problems


def _body_problems(body: Any) -> list[str]:
    """`validates :body_markdown, bytesize: {maximum: 800.kilobytes}`: bytes of UTF-8, not characters."""
    return ["Body markdown is too long."] if len(str(body or "").encode()) > BODY_MAX_BYTES else []


def _title_problems(article: dict[str, Any]) -> list[str]:
    title = str(article.get("title") or "")
    problems = [] if title.strip() else ["Title can't be blank"]
    return [*problems, "Title is too long (maximum is 128 characters)"] if len(title) > 128 else problems


def _tag_problems(tags: Any) -> list[str]:
    if not isinstance(tags, list):
        return ["Tag list exceed the maximum of 4 tags"]
    problems = ["Tag list exceed the maximum of 4 tags"] if len(tags) > 4 else []
    for tag in tags:
        # Tag#validate_name: /\A[[:alnum:]]+\z/i (Unicode letters and digits), 30 at most.
        if not isinstance(tag, str) or not regex.fullmatch(r"[[:alnum:]]+", tag, regex.V1):
            problems.append(f"Tag {tag} contains non-alphanumeric or prohibited unicode characters")
        elif len(tag) > 30:
            problems.append(f"Tag {tag} is too long (maximum is 30 characters)")
    return problems


class ForemEmulator(Emulator):
    name = "forem"
    api_key = API_KEY  # what it accepts; tests may set their own (a sentinel)
    public_pages = ("/sandbox/",)
    creating = ("POST /api/articles",)
    read_marker = "articles/me"
    # Its 429 says Retry-After, in a plain-text body.
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "retry_after": 40}

    def initial_state(self) -> dict[str, Any]:
        return {"articles": [], "next_id": 1000}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"api": f"{url}/forem/api", "api_key": API_KEY}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {
                "id": str(a["id"]),
                "text": f"{a['title']}\n\n{a.get('body_markdown', '')[:280]}",
                "announces": a.get("canonical_url", ""),
                "at": a.get("created_epoch"),
                "link": a.get("url", ""),
                # A cover is the site's own image, not one the service keeps: shown as a link.
                "images": [{"src": a["main_image"], "alt": None, "remote": True}] if a.get("main_image") else [],
            }
            for a in state.get("articles", [])
            if a.get("user") == USERNAME
        ]

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        seconds = int(fault.get("retry_after", 30))
        if fault.get("plain"):  # Rack::Attack's throttle answer
            return Response(429, b"Retry later\n", {"Retry-After": str(seconds)})
        return Response(
            429,
            {"error": f"Rate limit reached, try again in {seconds} seconds", "status": 429},
            {"Retry-After": str(seconds)},
        )

    def add_foreign(self, canonical_url: str, title: str = "Imported elsewhere") -> None:
        """An article by another user holding a canonical URL (an RSS import, a scraper)."""
        with self.server.lock:
            self._store({"title": title, "canonical_url": canonical_url, "published": True}, user="someone-else")
            self.server.save()

    def _error(self, status: int, message: str) -> Response:
        return Response(status, {"error": message, "status": status})

    def handle(self, request: Request) -> Response:
        throttled = self._throttled(request)
        if throttled is not None:
            return throttled
        if request.path == "/api/comments" and request.method == "GET":  # public, no key
            return self._comments(request)
        if request.headers.get("api-key") != self.api_key:
            return self._error(401, "unauthorized")
        if ACCEPT not in request.headers.get("accept", ""):
            return self._error(406, f"send Accept: {ACCEPT}")
        for method, path, action in _ROUTES:
            match = path.fullmatch(request.path)
            if match and request.method == method:
                return action(self, request, match)
        return self._error(404, "not found")

    def _throttled(self, request: Request) -> Response | None:
        """Rack::Attack's answer when quirk `rack_attack` is on and the request's throttle is
        over its limit (every client here has one IP)."""
        if not self.quirks.get("rack_attack") or not request.path.startswith("/api/"):
            return None
        ip = "127.0.0.1"
        if request.method == "GET":
            window = Window(f"api_throttle {ip}", 3, 1)
        elif request.method in ("POST", "PUT", "DELETE"):
            key = request.headers.get("api-key")
            window = Window(f"api_write_throttle {ip}-{key}" if key else f"api_write_throttle {ip}", 1, 1)
        else:
            return None
        now = self.server.now()
        if window.count(self.state, now) <= window.limit:
            return None
        return self.rate_limited({"plain": True, "retry_after": window.seconds_left(now)})

    def _show(self, article_id: int) -> Response:
        found = self._find(article_id)
        return Response(200, found) if found and found["published"] else self._error(404, "not found")

    # ---------------------------------------------------------------- comments (comments: true)

    def _comments(self, request: Request) -> Response:
        """GET /api/comments?a_id=: a published article's comment threads (sandbox.conversations),
        CORS echoing the Origin as Forem's rack-cors does; 404 for an article that is not there."""
        origin = request.headers.get("origin")
        cors = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"} if origin else {}
        try:
            article_id = int(request.arg("a_id", "") or "")
            page = max(1, int(request.arg("page", "1") or 1))
            per_page = max(1, int(request.arg("per_page", str(conversations.FOREM_PER_PAGE)) or 1))
        except ValueError:
            return Response(404, {"error": "not found", "status": 404}, cors)
        found = self._find(article_id)
        if found is None or not found["published"]:
            return Response(404, {"error": "not found", "status": 404}, cors)
        threads = conversations.forem_threads(self.state.get("comments", []), str(article_id), page, per_page)
        return Response(200, threads, cors)

    def add_reply(
        self,
        parent: str,
        author: str,
        text: str,
        *,
        at: str | None = None,
        hidden: bool = False,
        deleted: bool = False,
    ) -> dict[str, Any]:
        """A reader's comment on an article of ours (`parent`: its id) or on a comment (its
        id_code); `text` is HTML, as Forem serves processed_html; `hidden` by the article's
        author, or `deleted` since."""
        comments = self.state.setdefault("comments", [])
        above = next((c for c in comments if c["id_code"] == parent), None)
        article = above["article_id"] if above else parent
        if above is None and not (parent.isdigit() and self._find(int(parent))):
            raise ValueError(f"no article or comment {parent} on the sandbox's DEV")
        self.state["next_comment"] = self.state.get("next_comment", 3000) + 1
        user = {"name": author.title(), "username": author, "twitter_username": None, "github_username": None}
        comment = {
            "id_code": conversations.id_code(self.state["next_comment"]),
            "article_id": article,
            "parent": above["id_code"] if above else None,
            "created_at": _iso(conversations.when(at, self.server.now())),
            "body_html": text,
            "user": user | {"website_url": None, "profile_image": "", "profile_image_90": ""},
            "hidden": hidden,
            "deleted": deleted,
        }
        comments.append(comment)
        return comment

    # ---------------------------------------------------------------- routes

    def _body(self, request: Request) -> dict[str, Any] | Response:
        try:
            article = request.json().get("article")
        except (ValueError, AttributeError):
            article = None
        if not isinstance(article, dict):
            return self._error(422, "param is missing or the value is empty: article")
        if isinstance(article.get("title"), str):  # before_validation :normalize_title
            article["title"] = _RUBY_WHITESPACE.sub(" ", article["title"]).strip()
        return article

    def _validate(self, article: dict[str, Any], current_id: int | None = None) -> str | None:
        """Every problem Rails' validations find, in one sentence each, or None."""
        # In article.rb's order: the `validates` lines, then the `validate` methods.
        problems = _body_problems(article.get("body_markdown"))
        committed = self.visible(self.state["articles"])  # Rails validates, then inserts: no lock
        if self._canonical_taken(article, committed, current_id):
            problems.append("Canonical url has already been taken. Email yo@dev.to for further details.")
        canonical = _canonical_problems(article.get("canonical_url"))
        problems += [p for p in canonical if "spaces" not in p]
        if article.get("main_image") and not _valid_url(str(article["main_image"])):
            problems.append("Main image is not a valid URL")
        problems += _title_problems(article)
        if current_id is None and self._title_used_lately(article, committed):
            problems.append("Title has already been used in the last five minutes")
        problems += [p for p in canonical if "spaces" in p]
        problems += _tag_problems(article.get("tags") or [])
        return " ".join(p if p.endswith(".") else p + "." for p in problems) if problems else None

    def _title_used_lately(self, article: dict[str, Any], committed: list[dict[str, Any]]) -> bool:
        now = self.server.now()
        return any(
            a["user"] == USERNAME and a["title"] == article.get("title") and now - a["created_epoch"] < 300
            for a in committed
        )

    @staticmethod
    def _canonical_taken(article: dict[str, Any], committed: list[dict[str, Any]], current_id: int | None) -> bool:
        """A published article's canonical URL is unique among published articles."""
        canonical = article.get("canonical_url")
        if not (article.get("published") and canonical):
            return False
        return any(a["canonical_url"] == canonical and a["published"] and a["id"] != current_id for a in committed)

    def _create(self, request: Request) -> Response:
        article = self._body(request)
        if isinstance(article, Response):
            return article
        now = self.server.now()
        recent = [
            a for a in self.state["articles"] if a["user"] == USERNAME and now - a["created_epoch"] < CREATE_WINDOW
        ]
        if len(recent) >= CREATE_LIMIT:
            return self.rate_limited({"retry_after": 30})
        problem = self._validate(article)
        if problem:
            return self._error(422, problem)
        stored = self._store(article, USERNAME, self.commit_time())
        held = stored["visible_at"] if stored["visible_at"] > now else None
        return Response(201, stored, {"Location": stored["url"]}, hold_until=held)

    def _store(self, article: dict[str, Any], user: str, visible_at: float = 0.0) -> dict[str, Any]:
        now = max(self.server.now(), visible_at)
        self.state["next_id"] += 1
        article_id = self.state["next_id"]
        title = str(article.get("title") or "")
        slug = f"{_slug(title)}-{hashlib.sha1(str(article_id).encode()).hexdigest()[:4]}"
        url = f"{self.server.public_base}/forem/{user}/{slug}"
        published = bool(article.get("published", False))
        stored = {
            "type_of": "article",
            "id": article_id,
            "title": title,
            "slug": slug,
            "path": f"/{user}/{slug}",
            "url": url,
            "canonical_url": article.get("canonical_url") or url,
            "published": published,
            "published_at": _iso(self.server_clock(now)) if published else None,
            "created_at": _iso(self.server_clock(now)),
            "description": article.get("description") or "",
            "tags": list(article.get("tags") or []),
            "tag_list": ", ".join(article.get("tags") or []),
            "body_markdown": article.get("body_markdown") or "",
            "main_image": article.get("main_image"),
            "cover_image": self._cover(article.get("main_image")),
            "user": user,
            "created_epoch": now,
            "visible_at": visible_at,
        }
        self.state["articles"].append(stored)
        return stored

    def _find(self, article_id: int) -> dict[str, Any] | None:
        return next((a for a in self.visible(self.state["articles"]) if a["id"] == article_id), None)

    def _update(self, article_id: int, request: Request) -> Response:
        found = self._find(article_id)
        if found is None or found["user"] != USERNAME:
            return self._error(404, "not found")
        article = self._body(request)
        if isinstance(article, Response):
            return article
        merged = {**found, **article}
        problem = self._validate(merged, current_id=article_id)
        if problem:
            return self._error(422, problem)
        found.update({k: v for k, v in article.items() if k in found and k != "cover_image"})
        found["cover_image"] = self._cover(found.get("main_image"))
        return Response(200, found)

    def _by_hand(self, request: Request, unpublish: bool) -> None:
        """The author, in DEV's editor, unpublishes (it stays among the drafts) or deletes the
        article a request names (fault by_hand_before)."""
        match = re.match(r"/api/articles/(\d+)", request.path)
        found = self._find(int(match[1])) if match else None
        if found is not None and unpublish:
            found["published"] = False
        elif found is not None:
            self.state["articles"].remove(found)

    hands: ClassVar[Hands] = {
        "unpublish": lambda self, request: self._by_hand(request, True),
        "delete": lambda self, request: self._by_hand(request, False),
    }

    def _cover(self, main_image: Any) -> str | None:
        """`cover_image`: the cover as DEV's image optimizer serves it (here, under /forem)."""
        if not main_image:
            return None
        fit = "width=1000,height=420,fit=cover,gravity=auto,format=auto"
        return f"{self.server.public_base}/forem/dynamic/image/{fit}/{quote(str(main_image), safe='')}"

    def _list(self, which: str, request: Request) -> Response:
        try:
            page = max(1, int(request.arg("page", "1") or 1))
            per_page = min(1000, max(1, int(request.arg("per_page", "30") or 30)))
        except ValueError:
            return self._error(400, "page and per_page must be numbers")
        mine = [a for a in self.visible(self.state["articles"]) if a["user"] == USERNAME]
        unpublished = [a for a in mine if not a["published"]]
        published = sorted((a for a in mine if a["published"]), key=lambda a: a["id"], reverse=True)
        chosen = {"all": unpublished + published, "published": published, "unpublished": unpublished}[which]
        return Response(200, chosen[(page - 1) * per_page : page * per_page])

    def _me(self) -> Response:
        """GET /api/users/me: the key's own user (Api::V1::UsersController#me)."""
        user = {
            "type_of": "user",
            "id": 1,
            "username": USERNAME,
            "name": "Sandbox",
            "summary": None,
            "joined_at": "Dec  1, 2026",
            "profile_image": f"{self.server.public_base}/forem/{USERNAME}.png",
        }
        return Response(200, user)


# The API: method, path, and what answers (with the path's match).
_Action = Callable[["ForemEmulator", Request, re.Match[str]], Response]
_ROUTES: list[tuple[str, re.Pattern[str], _Action]] = [
    ("GET", re.compile(r"/api/users/me"), lambda self, request, match: self._me()),
    ("POST", re.compile(r"/api/articles"), lambda self, request, match: self._create(request)),
    ("PUT", re.compile(r"/api/articles/(\d+)"), lambda self, request, match: self._update(int(match[1]), request)),
    ("GET", re.compile(r"/api/articles/(\d+)"), lambda self, request, match: self._show(int(match[1]))),
    (
        "GET",
        re.compile(r"/api/articles/me(?:/(all|published|unpublished))?"),
        lambda self, request, match: self._list(match[1] or "published", request),
    ),
]
