"""DEV / Forem: create the article with `canonical_url` = the post URL.

There is no idempotency key; the site-wide uniqueness of a published canonical_url is the dedupe.
So a 422 "canonical url has already been taken" is ambiguous: the own-articles listing tells
whether the article is ours (done) or someone else's (failed, with what to do). Default spacing
75 s between requests; a 429's Retry-After is honoured.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote, urlsplit

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Channel,
    Copy,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    Message,
    Option,
    Outcome,
    Post,
    Prepared,
    Presence,
    Record,
    Seen,
    Verdict,
    check_unreachable,
    delete_outcome,
    edit_outcome,
    error_detail,
    identifier,
    json_list,
    json_object,
    links_in,
    optional_text,
    optional_url,
    same_host,
    scan_bound,
    status_outcome,
    timestamp,
    transport_outcome,
)
from mkdocs_syndicate.channels.reading import copy_url, plain_segment
from mkdocs_syndicate.content.portable import portable_markdown
from mkdocs_syndicate.content.textcut import cut_before, graphemes
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.lazyre import lazy_compile

if TYPE_CHECKING:
    import httpx

ACCEPT = "application/vnd.forem.api-v1+json"
MAX_TAGS = 4
MAX_TITLE = 128
PER_PAGE = 100  # articles carry their whole body_markdown: keep pages small
MAX_PAGES = 100
_TAKEN = lazy_compile(r"canonical url has already been taken", re.IGNORECASE)
_TITLE_USED = lazy_compile(r"title has already been used", re.IGNORECASE)


def forem_tags(tags: tuple[str, ...]) -> list[str]:
    """Forem's tag rule (Tag#validate_name: at most 30 characters of `[[:alnum:]]`, which in Ruby
    is Unicode-aware, so café and 日本語 are tags; names are looked up lower-cased), at most 4,
    no duplicates: `Open Source` → `opensource`, `C++` → `c`."""
    import regex  # Unicode letter classes, loaded when an article is made

    result: list[str] = []
    for tag in tags:
        if dropped_tag(tag):
            continue
        clean = regex.sub(r"[^\p{Alphabetic}\p{Nd}]", "", unicodedata.normalize("NFC", tag).lower())[:30]
        if clean and clean not in result:
            result.append(clean)
    return result[:MAX_TAGS]


def dropped_tag(tag: str) -> bool:
    """A tag whose letters need combining marks that Forem's rule removes (हिन्दी would become
    हिनदी, another word): left out, with a warning, rather than misspelt."""
    import regex

    return bool(regex.search(r"\p{M}", tag)) and bool(
        regex.search(r"\p{M}", regex.sub(r"[\p{Alphabetic}\p{Nd}]", "", unicodedata.normalize("NFC", tag)))
    )


def forem_title(title: str) -> str:
    """At most 128 characters as Forem counts them (Ruby's String#length: code points), cut on a
    grapheme boundary with an ellipsis, where a word ends as messages are (textcut.cut_before)."""
    if len(title) <= MAX_TITLE:
        return title
    clusters = graphemes(title)
    kept, size = [], 1  # the ellipsis
    for cluster in clusters:
        if size + len(cluster) > MAX_TITLE:
            break
        kept.append(cluster)
        size += len(cluster)
    return cut_before(kept, clusters[len(kept)])


def same_url(a: str | None, b: str) -> bool:
    def norm(url: str) -> str:
        return re.sub(r"^https?://", "", url.strip()).rstrip("/").lower()

    return a is not None and norm(a) == norm(b)


class ForemChannel(Channel):
    type_name = "forem"
    default_min_interval = 75.0
    edits_in_place = True  # PUT /api/articles/{id}
    deletes = True  # unpublished: PUT /api/articles/{id} with published false (the API deletes nothing)
    options: ClassVar[Mapping[str, Option]] = {
        "api": Option("url", default="https://dev.to/api", help="https://<forem>/api"),
        "api_key": Option(
            "secret", required=True, help="DEV → Settings → Extensions → DEV API Keys, e.g. !ENV DEVTO_API_KEY"
        ),
        "published": Option("bool", default=True),
    }

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        # Public and CORS-open for a GET (forem/forem Api::CommentsController#index: the article's
        # comment threads, paged by `page` and `per_page`, each with its `children`).
        api = options.get("api") or "https://dev.to/api"
        if not isinstance(api, str) or not record.remote_id:
            return None
        return f"{api.rstrip('/')}/comments?a_id={quote(record.remote_id, safe='')}"

    def recognises(self, remote_url: str) -> bool:
        return same_host(remote_url, str(self.settings.options["api"]))

    def _copy_url(self, article: dict[str, Any]) -> tuple[str | None, str | None]:
        """The article's URL as answered, unless it is on another host than the Forem's API: then
        Forem's own form, the article's `path` (`/<username>/<slug>`) on the API's host."""
        answered = optional_url(article.get("url"))
        parts = str(article.get("path") or "").split("/")
        path_ok = len(parts) == 3 and parts[0] == "" and all(plain_segment(part) for part in parts[1:])
        api = urlsplit(str(self.settings.options["api"]))
        own = f"{api.scheme}://{api.netloc}{'/'.join(parts)}" if path_ok else None
        return copy_url(answered, own, self.recognises)

    def _headers(self) -> dict[str, str]:
        return {"api-key": self.settings.options["api_key"].reveal(), "Accept": ACCEPT}

    def article(self, post: Post) -> dict[str, Any]:
        title = forem_title(post.title)
        article: dict[str, Any] = {
            "title": title,
            "body_markdown": portable_markdown(post.body_html, post.url, post.title, post.code_languages),
            "published": self.settings.options["published"],
            "canonical_url": post.url,
            "description": post.summary,
            "tags": forem_tags(post.tags),
        }
        if post.image and not post.image_in_body:
            # The cover DEV shows above the article: the post's own image, never its body's first
            # image, which the article shows already (it would be there twice).
            article["main_image"] = post.image
        return {"article": article}

    def _no_body(self, post: Post) -> str:
        what = f"{post.source or post.key}: channel {self.id} ({self.type_name}) publishes the whole article"
        if post.src:  # a page of an MkDocs build: it has front matter to opt out with
            return (
                f"{what}, and this build did not render the post's body (mkdocs serve --dirty?); build "
                "the whole site, or opt the post out of this channel in its front matter"
            )
        # A feed entry has no front matter: the way out is the feed's content, or the channel.
        return (
            f"{what}, and this feed entry has a summary only (Hugo's default RSS template and "
            "Zensical's feed give summaries); make the generator put each post's full content in "
            f"its feed (docs/recipes/ says how for each generator), or set `enabled: false` on "
            f"channel {self.id} in the config"
        )

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        if post.body_missing:
            # A feed entry with a summary only, a page `serve --dirty` did not render: DEV
            # publishes the whole article, and an empty one is not a cross-post.
            raise PostError(self._no_body(post))
        article = self.article(post)  # once: the body's conversion parses the whole post
        payload = json.dumps(article, ensure_ascii=False, sort_keys=True)
        body = article["article"]
        summary = (
            f"article {body['title']!r}, canonical {post.url}, tags {body['tags']}, "
            f"{len(body['body_markdown'])} characters of Markdown"
        )
        notes = tuple(
            f"{post.source or post.key}: tag {tag!r} is left out on {self.id}: Forem's tag rule would drop "
            "its combining marks and misspell it"
            for tag in post.tags
            if dropped_tag(tag)
        )
        message = Message(payload, len(body["title"]), MAX_TITLE, notes=notes, unit="title characters")
        return Prepared(message, description=summary, life=life)

    def preview(self, post: Post, prepared: Prepared) -> str:
        """The whole article as DEV would get it: its front fields, then the Markdown body."""
        article = self.article(post)["article"]
        head = (
            f"title: {article['title']}\ntags: {', '.join(article['tags'])}\n"
            f"canonical_url: {article['canonical_url']}\npublished: {article['published']}\n"
        )
        return head + "---\n" + str(article["body_markdown"]).strip()

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        try:
            response = await http.request(
                "POST",
                f"{self.settings.options['api']}/articles",
                # The article as prepared (and hashed), not converted again.
                json=json.loads(prepared.message.text) if prepared.message else self.article(post),
                headers=self._headers(),
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 201:
            try:
                article = json_object(response)
                remote_id = identifier(article.get("id"))
                url, note = self._copy_url(article)
                return Outcome(Kind.DONE, remote_id=remote_id, remote_url=url, note=note)
            except BadAnswer as exc:
                return Outcome(Kind.AMBIGUOUS, error=f"201 with an unreadable article ({exc}); the article exists")
        if response.status_code == 422:
            detail = error_detail(response)
            if _TAKEN.search(detail) or _TITLE_USED.search(detail):
                return Outcome(Kind.AMBIGUOUS, error=f"422{detail}")
        return status_outcome(response, http.now())

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """PUT /api/articles/{id} with the article as prepared: the same article, its body, title,
        tags and description made what the post says now. Not `published`: DEV keeps what the
        request does not name, so an article its author unpublished by hand, even after the read
        before this edit, stays among the drafts (the read after it finds no published copy)."""
        import httpx

        assert prepared.message is not None and record.remote_id
        body = json.loads(prepared.message.text)
        body["article"].pop("published", None)
        try:
            response = await http.request(
                "PUT",
                f"{self.settings.options['api']}/articles/{quote(record.remote_id, safe='')}",
                json=body,
                headers=self._headers(),
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        return edit_outcome(response, http.now(), record.remote_id, "article")

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """GET /api/articles/{id}: a published article by its own id. Its title, Markdown body,
        description and canonical URL say whether the update happened; DEV's JSON 404 says it is gone (deleted, or
        unpublished by its author: either way there is no copy to edit). Where the channel makes
        drafts (`published: false`), a draft is the copy as made: read among the author's own."""
        assert record.remote_id and prepared.message is not None
        response = await http.request(
            "GET",
            f"{self.settings.options['api']}/articles/{quote(record.remote_id, safe='')}",
            headers=self._headers(),
        )
        draft = None
        if response.status_code == 404 and _not_found(response) and not self.settings.options["published"]:
            draft = await self._own_draft(http, record.remote_id)
        if draft is None and response.status_code == 404 and _not_found(response):
            return Copy.GONE
        if draft is None and response.status_code != 200:
            return Copy.UNKNOWN
        article = draft if draft is not None else json_object(response)
        target = json.loads(prepared.message.text)["article"]
        # Every text field the update sets and DEV gives back as it was sent: a description-only
        # update must not pass for done because the body is unchanged.
        fields = ("title", "body_markdown", "description", "canonical_url")
        said = tuple(optional_text(article.get(name), name) for name in fields)
        found = Copy.MATCHES if said == tuple(target[name] for name in fields) else Copy.DIFFERS
        return Seen(found, links_in(article), about=_canonical(article))

    async def delete(self, http: Http, record: Record) -> Outcome:
        """Unpublish: PUT /api/articles/{id} with `published: false`, as the author would from
        the editor (DEV's API has no delete for its users; `/unpublish` is for moderators). The
        article stays among the author's drafts, where it can be published again by hand."""
        import httpx

        assert record.remote_id
        url = f"{self.settings.options['api']}/articles/{quote(record.remote_id, safe='')}"
        try:
            response = await http.request("PUT", url, json={"article": {"published": False}}, headers=self._headers())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 200 and _still_published(response):
            return Outcome(Kind.AMBIGUOUS, error="200, but the article says it is still published; read it again")
        return delete_outcome(response, http.now(), gone=False, what="article", confirms=_unpublished)

    async def read_presence(self, http: Http, record: Record) -> Presence | Seen:
        """GET /api/articles/{id}, the public read of a published article: DEV's JSON 404 says
        there is no published article with this id (unpublished, or deleted by its author)."""
        assert record.remote_id
        response = await http.request(
            "GET",
            f"{self.settings.options['api']}/articles/{quote(record.remote_id, safe='')}",
            headers=self._headers(),
        )
        if response.status_code == 404 and _not_found(response):
            return Presence.GONE
        if response.status_code != 200:
            return Presence.UNKNOWN
        article = json_object(response)
        return Seen(Presence.PRESENT, links_in(article), about=_canonical(article))

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await _forem_check(self, http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        import httpx

        taken = after is not None and bool(after.error) and bool(_TAKEN.search(after.error or ""))
        # "Taken" may be our own article from long ago (published by hand): read them all then.
        oldest = float("-inf") if taken else scan_bound(record)
        try:
            found = await self._scan(http, post, oldest)
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not list own articles ({type(exc).__name__})")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not list own articles: {exc}")
        return found or _not_ours(post, taken, after)

    async def _own_draft(self, http: Http, article_id: str) -> dict[str, Any] | None:
        """The author's unpublished article with this id (GET /api/articles/me/unpublished, paged),
        or None: not among the drafts (deleted by hand). A listing that fails raises: no proof."""
        for page in range(1, MAX_PAGES + 1):
            response = await http.request(
                "GET",
                f"{self.settings.options['api']}/articles/me/unpublished",
                params={"page": page, "per_page": PER_PAGE},
                headers=self._headers(),
            )
            if response.status_code != 200:
                raise BadAnswer(f"the drafts' listing answered {response.status_code}")
            articles = json_list(response)
            found = next((a for a in articles if isinstance(a, dict) and str(a.get("id")) == article_id), None)
            if found is not None or len(articles) < PER_PAGE:
                return found
        raise BadAnswer(f"more than {MAX_PAGES * PER_PAGE} drafts")

    async def _scan(self, http: Http, post: Post, oldest: float) -> Verdict | None:
        """Own articles come drafts first, then published ones newest first: stop at the first
        article published before the first attempt. None: not there."""
        for page in range(1, MAX_PAGES + 1):
            response = await http.request(
                "GET",
                f"{self.settings.options['api']}/articles/me/all",
                params={"page": page, "per_page": PER_PAGE},
                headers=self._headers(),
            )
            if response.status_code != 200:
                return Verdict(Found.UNKNOWN, reason=f"own-articles listing answered {response.status_code}")
            articles = json_list(response)
            reached_oldest = False
            for article in articles:
                if same_url(optional_text(article.get("canonical_url"), "canonical_url"), post.url):
                    url, note = self._copy_url(article)
                    return Verdict(Found.FOUND, identifier(article.get("id")), url, reason=note or "")
                published_at = article.get("published_at")
                if article.get("published") and published_at is not None:
                    reached_oldest |= timestamp(published_at, "published_at") < oldest
            if len(articles) < PER_PAGE or reached_oldest:
                return None
        return Verdict(Found.UNKNOWN, reason=f"more than {MAX_PAGES * PER_PAGE} own articles since the first attempt")


def _unpublished(response: httpx.Response) -> bool:
    """The documented answer to an unpublish: the article, `published: false`."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("published") is False


def _canonical(article: dict[str, Any]) -> str | None:
    """The page an article is about: its canonical URL (DEV's own URL where its author set none)."""
    value = article.get("canonical_url")
    return value if isinstance(value, str) and value else None


def _still_published(response: httpx.Response) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("published") is True


KEY_ADVICE = (
    "make a new key (DEV → Settings → Extensions → DEV Community API Keys) and put it where the "
    "config's api_key setting reads it"
)


async def _forem_check(channel: ForemChannel, http: Http) -> CredentialCheck:
    """GET /api/users/me with the key: a DEV key has no scopes and no expiry, so a 200 proves
    everything sending needs; 401 is a key revoked or mistyped."""
    import httpx

    try:
        response = await http.request("GET", f"{channel.settings.options['api']}/users/me", headers=channel._headers())
        if response.status_code == 200:
            username = optional_text(json_object(response).get("username"), "username")
            return CredentialCheck(Health.OK, f"@{username}", details=("API keys have no scopes and no expiry",))
    except (httpx.HTTPError, BadAnswer) as exc:
        return check_unreachable(exc)
    if response.status_code in (401, 403):
        return CredentialCheck(
            Health.FAILING,
            problem=f"{response.status_code} {error_detail(response).removeprefix(': ') or 'refused'}: "
            "the API key was revoked or is not this account's",
            action=KEY_ADVICE,
        )
    return CredentialCheck(
        Health.UNKNOWN,
        problem=f"users/me answered {response.status_code}{error_detail(response)}",
        action="check the api setting and whether the service is up, then run the check again",
    )


def _not_found(response: httpx.Response) -> bool:
    """DEV's own 404 for a record it does not have: JSON {"error": "not found", "status": 404}."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error") == "not found" and body.get("status") == 404


def _not_ours(post: Post, taken: bool, after: Outcome | None) -> Verdict:
    """Not among own articles: absent, unless DEV's 422 said something else holds it."""
    if taken:
        return Verdict(
            Found.CONFLICT,
            reason=(
                f"DEV says canonical_url {post.url} is already used by a published article that is not "
                "on this account (an RSS import, or another account?). Unpublish it or remove its "
                "canonical URL there, then run again"
            ),
        )
    if after is not None and after.error and _TITLE_USED.search(after.error):
        return Verdict(
            Found.CONFLICT,
            reason="another of your articles used this title in the last five minutes; run again later",
        )
    return Verdict(Found.ABSENT, reason="not among own articles")
