"""Mastodon: POST /api/v1/statuses with an Idempotency-Key stored in the record and reused.

An unknown outcome is resolved by reading the account's own statuses back to the pair's first
attempt (`created_at`) and matching the canonical URL in the content or the link card, never by
trusting the key (stored after the status is made, unlocked; others ignore it); same-origin pages.
Length and language rules: channels/mastodon_text.py; credentials: channels/mastodon_account.py;
the post's image (`embed: image`, the default: a link card shows beside no media): mastodon_media.py.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Channel,
    ChannelSettings,
    Copy,
    CredentialCheck,
    Found,
    Http,
    Kind,
    LengthRule,
    Media,
    MediaState,
    Option,
    Outcome,
    Part,
    Post,
    PostImage,
    Prepared,
    Presence,
    Record,
    Seen,
    Site,
    Verdict,
    client_id,
    delete_outcome,
    edit_outcome,
    identifier,
    json_list,
    json_object,
    links_in,
    optional_text,
    optional_url,
    post_image,
    render_message,
    same_host,
    same_origin,
    scan_bound,
    status_outcome,
    timestamp,
    transport_outcome,
)
from mkdocs_syndicate.channels.mastodon_account import MastodonCheck
from mkdocs_syndicate.channels.mastodon_media import MastodonMedia, edit_request, read_removal
from mkdocs_syndicate.channels.mastodon_text import (
    MASTODON_URL_WEIGHT,
    WRITE_LIMITS,
    instance_number,
    mastodon_language,
    mastodon_length,
    near_limit,
)
from mkdocs_syndicate.channels.reading import copy_url, plain_segment
from mkdocs_syndicate.content.identity import post_key_of
from mkdocs_syndicate.content.links import hrefs

if TYPE_CHECKING:  # HTTP is loaded only when something is sent
    import httpx

DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"
MAX_PAGES = 25  # 25 × 40 statuses


def idempotency_key(post_url: str, channel_id: str, life: int = 0) -> str:
    """Unique per (site, post, channel, life): from the full canonical URL, never the post key
    alone (two sites on one account share keys; the server would answer site B with site A's
    status), and never an earlier life's (Mastodon answers a key for an hour, a deleted status's 404)."""
    return client_id(post_url, channel_id, "mastodon-idempotency", life)


def part_key(post_url: str, channel_id: str, number: int, life: int = 0) -> str:
    """A thread's part `number`'s key: part 1's is the pair's own (unchanged: existing ledgers
    stay valid), each later part's its own, from (site, post, channel, number, life)."""
    if number == 1:
        return idempotency_key(post_url, channel_id, life)
    return client_id(post_url, channel_id, f"mastodon-idempotency-part-{number}", life)


def _json_error(response: httpx.Response) -> str | None:
    """The API's own error text (JSON {"error": ...}), or None for any other body."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, str) else None


SCOPE_HINT = (
    "the token may not read the account back: verify_credentials answered 403 (outside the "
    "authorized scopes). Make a token with the scopes write:statuses read:statuses profile "
    "(read:accounts before Mastodon 4.3); until then a post whose outcome is unknown cannot be "
    "checked"
)


def _record_not_found(response: httpx.Response) -> bool:
    """Mastodon's API answer for a record that does not exist: JSON {"error": "Record not found"}."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return False
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error") == "Record not found"


def _is_status(status_id: str, response: httpx.Response) -> bool:
    """The documented answer to DELETE /api/v1/statuses/:id: the deleted Status, with its id."""
    try:
        return identifier(json_object(response).get("id")) == status_id
    except BadAnswer:
        return False


class MastodonChannel(Channel):
    type_name = "mastodon"
    edits_in_place = True  # PUT /api/v1/statuses/:id (Mastodon 3.5+)
    deletes = True  # DELETE /api/v1/statuses/:id
    delete_limit, upload_limit, status_limit = WRITE_LIMITS  # per account (channels/mastodon_text.py)
    threads = True  # each part a reply to the one before (in_reply_to_id)
    uploads = True  # the post's image: POST /api/v2/media before the status (channels/mastodon_media.py)
    options: ClassVar[Mapping[str, Option]] = {
        "instance": Option("url", required=True, help="e.g. https://mastodon.social"),
        "token": Option(
            "secret",
            required=True,
            help="an access token with the scopes write:statuses read:statuses profile "
            "(read:accounts before Mastodon 4.3), and write:media for images, e.g. !ENV MASTODON_TOKEN",
        ),
        "visibility": Option("choice", default="public", choices=("public", "unlisted", "private", "direct")),
        "language": Option(
            "text", help="the statuses' language, an ISO 639-1 code such as en or ja", check=mastodon_language
        ),
        "max_characters": Option("int", default=500, help="the status length limit when the instance does not say"),
        "embed": Option(
            "choice",
            default="image",
            choices=("image", "card"),
            help="image: the post's image attached with its alt text; card: only the link card the instance makes",
        ),
    }

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        super().__init__(settings, site)
        # The instance's own limits (/api/v2/instance), once read in this run; until then the setting.
        self._max_characters: int = settings.options["max_characters"]
        self._url_weight = MASTODON_URL_WEIGHT
        self._limits_read = False
        self._media = MastodonMedia(self._base, self._auth)  # the token read only when sending

    @property
    def _base(self) -> str:
        return str(self.settings.options["instance"])

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.options['token'].reveal()}"}

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        weight = self._url_weight
        rule = LengthRule(self._max_characters, lambda text: mastodon_length(text, weight))
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            rule,
            self.site.name,
            where=self.settings.where("template"),
            max_parts=self.settings.max_parts,
            thread_text=self.settings.thread_text,
        )
        image = None
        if self.settings.options["embed"] == "image":
            image, notes = post_image(post, self.site.url, self.site.site_dir)
            message = replace(message, notes=(*message.notes, *notes))
        # The image is not in the message's hash: a copy is not edited for a new image alone.
        key = idempotency_key(post.url, self.id, life)
        return Prepared(message, idempotency_key=key, description=message.text, image=image, life=life)

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        assert prepared.message is not None
        media = tuple(m.id for m in prepared.media)
        return await self._post(
            http, post, prepared.message.text, prepared.idempotency_key or "", prepared.replay, media=media
        )

    async def upload(self, http: Http, post: Post, image: PostImage) -> Outcome:
        if not self._media.limits_read:
            self._media.learn(await self._instance_configuration(http))
        return await self._media.upload(http, image, post.source or post.key)

    async def read_media(self, http: Http, media: Media) -> MediaState:
        return await self._media.read(http, media)

    async def remove_media(self, http: Http, media: Media) -> MediaState:
        return await self._media.remove(http, media)

    async def describe_media(self, http: Http, media: Media, image: PostImage) -> MediaState:
        return await self._media.describe(http, media, image)

    async def send_part(
        self, http: Http, post: Post, prepared: Prepared, number: int, sent: tuple[Part, ...], replay: bool
    ) -> Outcome:
        """Part `number` as a reply to the part before it (`in_reply_to_id`), under its own key."""
        assert prepared.message is not None
        text, key = prepared.message.texts[number - 1], part_key(post.url, self.id, number, prepared.life)
        return await self._post(http, post, text, key, replay, in_reply_to=sent[-1].remote_id)

    async def _post(
        self,
        http: Http,
        post: Post,
        text: str,
        key: str,
        replay: bool,
        in_reply_to: str | None = None,
        media: tuple[str, ...] = (),
    ) -> Outcome:
        import httpx

        form: dict[str, str | list[str]] = {"status": text, "visibility": self.settings.options["visibility"]}
        if media:
            form["media_ids[]"] = list(media)
        if self.settings.options.get("language"):
            form["language"] = self.settings.options["language"]
        if in_reply_to is not None:
            form["in_reply_to_id"] = in_reply_to
        headers = {**self._auth(), "Idempotency-Key": key}
        try:
            response = await http.request("POST", f"{self._base}/api/v1/statuses", data=form, headers=headers)
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 200:
            return self._created(response, post, text, in_reply_to)
        if response.status_code == 404 and in_reply_to is not None and not _record_not_found(response):
            # set_thread's 404 (statuses.errors.in_reply_not_found), before anything is made: the
            # part before this one is gone or hidden. Mastodon's own JSON error says so.
            return Outcome(
                Kind.REFUSED if _json_error(response) else Kind.AMBIGUOUS,
                error=f"404 for a reply to {in_reply_to}: {_json_error(response) or 'not the API answer'}",
            )
        if response.status_code == 404 and replay and _record_not_found(response):
            # Mastodon answers a replayed Idempotency-Key whose status was deleted with its API's
            # own 404 (PostStatusService finds the key's status id; Status.find raises, and
            # Api::BaseController answers {"error": "Record not found"}): it existed, and its
            # author removed it. Any other 404 (a maintenance page, a proxy) proves nothing.
            return Outcome(
                Kind.GONE,
                error="404 Record not found for a replayed Idempotency-Key: the "
                "status was made and then deleted on the instance; not sent again",
            )
        if response.status_code == 404 and _record_not_found(response):
            # A first send whose key the instance still holds (up to an hour) for a status that
            # was deleted: a post announced again, after its copy was deleted, within that hour.
            return Outcome(
                Kind.REFUSED,
                error="404 Record not found: the instance still remembers this post's Idempotency-Key "
                "from its deleted status (for up to an hour after it was made); a run after that announces it",
            )
        if response.status_code in (404, 410) and replay:
            return Outcome(
                Kind.AMBIGUOUS,
                error=f"{response.status_code} for a replayed Idempotency-Key, not the API's own "
                "'Record not found': proves nothing; the post may exist",
            )
        return status_outcome(response, http.now())

    def _created(self, response: httpx.Response, post: Post, text: str, in_reply_to: str | None = None) -> Outcome:
        try:
            status = json_object(response)
            if in_reply_to is not None and optional_text(status.get("in_reply_to_id"), "in_reply_to_id") != in_reply_to:
                return Outcome(  # a replayed key answered with another status: not this part
                    Kind.AMBIGUOUS,
                    error=f"200 with a status that is not a reply to {in_reply_to}; the part may exist",
                )
            if post.url in text and not self._links_to(status, post.url):
                # A replayed key can answer with another post's status (a key collision):
                # recording it as ours would lose this post.
                return Outcome(
                    Kind.AMBIGUOUS,
                    error="200 with a status that does not link to this post "
                    "(another post's Idempotency-Key?); the post may exist",
                )
            remote_id = identifier(status.get("id"))
            url, note = self._copy_url(status, remote_id)
            return Outcome(Kind.DONE, remote_id=remote_id, remote_url=url, note=note)
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable status ({exc}); the post may exist")

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """PUT /api/v1/statuses/:id with the new text: the status keeps its id, its replies and
        boosts, and shows "edited". Mastodon answers a status that is gone (or not ours) with its
        API's 404 "Record not found"."""
        import httpx

        assert prepared.message is not None and record.remote_id
        body = edit_request(prepared.message.text, self.settings.options.get("language"), post, record, prepared.image)
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        try:
            response = await http.request("PUT", url, headers=self._auth(), **body)
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        return edit_outcome(response, http.now(), record.remote_id, "status")

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """GET /api/v1/statuses/:id/source: the status's plain text as its author wrote it (the
        `content` of a status is HTML, re-linked by the instance: no basis for a comparison)."""
        assert record.remote_id
        status_url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        response = await http.request("GET", f"{status_url}/source", headers=self._auth())
        if response.status_code == 404:  # gone, or an instance before 3.5: the status itself says which
            shown = await http.request("GET", status_url, headers=self._auth())
            return Copy.GONE if shown.status_code == 404 and _record_not_found(shown) else Copy.UNKNOWN
        if response.status_code != 200:
            return Copy.UNKNOWN
        text = optional_text(json_object(response).get("text"), "the status source's text")
        if not text or prepared.message is None:
            return Copy.UNKNOWN
        # An image removed: its media say whether the edit took it off.
        same = text == prepared.message.text
        found = await read_removal(http, status_url, self._auth(), post, record) if same else Copy.DIFFERS
        return Seen(found, links_in(text))

    async def delete(self, http: Http, record: Record) -> Outcome:
        """DELETE /api/v1/statuses/:id: 200 with the deleted status. A status already gone is
        the API's 404 "Record not found" (any other 404, a proxy's, proves nothing)."""
        import httpx

        assert record.remote_id
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        try:
            response = await http.request("DELETE", url, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        gone = response.status_code == 404 and _record_not_found(response)
        confirms = functools.partial(_is_status, record.remote_id)
        return delete_outcome(response, http.now(), gone=gone, what="status", confirms=confirms)

    async def read_presence(self, http: Http, record: Record) -> Presence | Seen:
        """GET /api/v1/statuses/:id: a status deleted by its author (or by us) is the API's 404
        "Record not found" at once (Mastodon discards it before the removal job runs)."""
        assert record.remote_id
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        response = await http.request("GET", url, headers=self._auth())
        if response.status_code == 200:
            return Seen(Presence.PRESENT, links_in(json_object(response)))
        if response.status_code == 404 and _record_not_found(response):
            return Presence.GONE
        return Presence.UNKNOWN

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        # Public for a public status: StatusesController#context only authorizes a token if given.
        instance = options.get("instance")
        if not isinstance(instance, str) or not record.remote_id:
            return None
        return f"{instance.rstrip('/')}/api/v1/statuses/{quote(record.remote_id, safe='')}/context"

    def recognises(self, remote_url: str) -> bool:
        return same_host(remote_url, self._base)

    def _copy_url(self, status: dict[str, Any], remote_id: str) -> tuple[str | None, str | None]:
        """The status's URL as answered, or (on another host) Mastodon's own `<instance>/@<username>/<id>`."""
        answered = optional_url(status.get("url")) or optional_url(status.get("uri"))
        account = status.get("account")
        username = plain_segment(account.get("username")) if isinstance(account, dict) else None
        own = f"{self._base.rstrip('/')}/@{username}/{quote(remote_id, safe='')}" if username else None
        return copy_url(answered, own, self.recognises)

    def _links_to(self, status: dict[str, Any], url: str) -> bool:
        """Whether a status links to `url`: its card, or an <a href> of its content, read the way
        the instance writes them (HTML-escaped by Rails: ' is &#39;), compared after unescaping
        and as a page of this site (a query string or trailing slash does not make it another)."""
        card = status.get("card")
        card_url = card.get("url") if isinstance(card, dict) else None
        links: list[str] = [card_url] if isinstance(card_url, str) else []
        links += hrefs(optional_text(status.get("content"), "content"))
        page = post_key_of(url, self.site.url)
        return any(link == url or (page is not None and post_key_of(link, self.site.url) == page) for link in links)

    async def learn_limits(self, http: Http, fresh: list[Prepared]) -> bool:
        """The instance's own length rule, read once per run and only when it can matter: a new
        message within NEAR_LIMIT of the limit used to make it (it may have been shortened for
        nothing, or count URLs differently from the instance). True when the rule changed."""
        if self._limits_read or not any(near_limit(p) for p in fresh):
            return False
        self._limits_read = True
        statuses = await self._instance_statuses(http)
        if statuses is None:
            return False  # the setting stands; the server's own check has the last word
        limit = instance_number(statuses.get("max_characters"), 1, 100_000, self._max_characters)
        weight = instance_number(statuses.get("characters_reserved_per_url"), 0, 1000, self._url_weight)
        changed = (limit, weight) != (self._max_characters, self._url_weight)
        self._max_characters, self._url_weight = limit, weight
        return changed

    async def _instance_statuses(self, http: Http) -> dict[str, Any] | None:
        """/api/v2/instance's configuration.statuses, or None when it cannot be read."""
        configuration = await self._instance_configuration(http)
        self._media.learn(configuration)  # read once: its media limits too
        statuses = configuration.get("statuses") if isinstance(configuration, dict) else None
        return statuses if isinstance(statuses, dict) else None

    async def _instance_configuration(self, http: Http) -> dict[str, Any] | None:
        """/api/v2/instance's configuration, or None when it cannot be read."""
        import httpx

        try:
            answer = await http.request("GET", f"{self._base}/api/v2/instance")
            configuration = json_object(answer).get("configuration") if answer.status_code == 200 else None
        except (httpx.HTTPError, BadAnswer):  # unreachable, undecodable, not JSON
            return None
        return configuration if isinstance(configuration, dict) else None

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await MastodonCheck(self._base, self._auth()).run(http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        return await self._read(http, record, lambda status: self._links_to(status, post.url))

    async def read_part(self, http: Http, post: Post, record: Record, number: int) -> Verdict:
        """Own statuses since the thread's first attempt: part k is the one that replies to part
        k-1 (the account's own reply to its own status; nothing else of ours replies there)."""
        parent = record.parts[number - 2].remote_id
        return await self._read(http, record, lambda status: status.get("in_reply_to_id") == parent)

    async def _read(self, http: Http, record: Record, matches: Callable[[dict[str, Any]], bool]) -> Verdict:
        import httpx

        try:
            return await self._scan(http, matches, scan_bound(record))
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read own statuses ({type(exc).__name__})")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read own statuses: {exc}")

    def _in_page(self, statuses: list[Any], matches: Callable[[dict[str, Any]], bool], oldest: float) -> Verdict | None:
        """This page's verdict: found, or absent once the page reaches back past the first attempt;
        None to read the next page."""
        reached_oldest = False
        for status in statuses:
            if isinstance(status, dict) and matches(status):
                remote_id = identifier(status.get("id"))
                url, note = self._copy_url(status, remote_id)
                return Verdict(Found.FOUND, remote_id, url, reason=note or "")
            reached_oldest |= timestamp(status.get("created_at"), "created_at") < oldest
        if not statuses or reached_oldest:
            return Verdict(Found.ABSENT, reason="not among own statuses since the first attempt")
        return None

    async def _scan(self, http: Http, matches: Callable[[dict[str, Any]], bool], oldest: float) -> Verdict:
        me = await http.request("GET", f"{self._base}/api/v1/accounts/verify_credentials", headers=self._auth())
        if me.status_code == 403:
            return Verdict(Found.UNKNOWN, reason=SCOPE_HINT)
        if me.status_code != 200:
            return Verdict(Found.UNKNOWN, reason=f"verify_credentials answered {me.status_code}")
        account_id = identifier(json_object(me).get("id"), "account id")
        url: str | None = f"{self._base}/api/v1/accounts/{account_id}/statuses"
        params: dict[str, Any] | None = {"limit": 40, "exclude_reblogs": "true", "exclude_replies": "true"}
        for _ in range(MAX_PAGES):
            assert url is not None
            page = await http.request("GET", url, params=params, headers=self._auth())
            if page.status_code != 200:
                return Verdict(Found.UNKNOWN, reason=f"listing own statuses answered {page.status_code}")
            verdict = self._in_page(json_list(page), matches, oldest)
            if verdict is not None:
                return verdict
            next_link = page.links.get("next", {}).get("url")
            if not next_link:
                return Verdict(Found.ABSENT, reason="not among own statuses (all read)")
            if not same_origin(next_link, self._base):
                return Verdict(
                    Found.UNKNOWN,
                    reason="the next page of own statuses is on another origin; "
                    "not followed (the token is only sent to the instance)",
                )
            url, params = next_link, None
        return Verdict(Found.UNKNOWN, reason=f"more than {MAX_PAGES * 40} statuses since the first attempt")
