"""Bluesky: `putRecord` at a deterministic TID record key with a frozen `createdAt`.

The rkey is derived from the post's canonical URL and channel id and stored in the record before
the call, and `createdAt` is frozen in the ledger at in_flight time, so a retry sends
byte-identical content: the PDS answers it as a no-op, and never makes a second post.
`swapRecord: null` refuses to overwrite different content (InvalidSwap), which goes to verify.
Verify is an exact `getRecord` by rkey, and what it finds counts only if it links to this post
(two sites on one account).
One session per run, opened only when Bluesky has work; its tokens live in memory only.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channels.base import (
    Channel,
    Copy,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    Outcome,
    Prepared,
    Presence,
    Verdict,
    check_unreachable,
    delete_outcome,
    error_detail,
    rate_limit_left,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.reading import BadAnswer, identifier, json_object, optional_text, optional_url
from mkdocs_syndicate.channels.sessions import SessionFile
from mkdocs_syndicate.config.channels import ChannelSettings, Option, Site, check_url
from mkdocs_syndicate.content.identity import client_id
from mkdocs_syndicate.content.images import LocalImage, site_image
from mkdocs_syndicate.content.messages import (
    LengthRule,
    grapheme_length,
    message_sha256,
    render_message,
)
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record
from mkdocs_syndicate.redaction import Secret
from mkdocs_syndicate.timeutil import to_iso_ms

if TYPE_CHECKING:
    import httpx
    import regex

COLLECTION = "app.bsky.feed.post"
DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"
MAX_THUMB = 1_000_000
MAX_TAG = 64  # app.bsky.richtext.facet#tag: maxGraphemes 64 (maxLength 640 bytes)
_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
# Tags and cashtags as the Bluesky app finds them: @atproto/api 0.20.44,
# https://github.com/bluesky-social/atproto/blob/main/packages/api/src/rich-text/util.ts
# TAG_REGEX and CASHTAG_REGEX, used by detection.ts `detectFacets`. A tag follows the start or
# white space, begins with "#" or the full-width "＃", runs to the next white space or zero-width
# character, and holds at least one character that is neither a digit nor punctuation; trailing
# punctuation is then cut off (`#foo.bar` is "foo.bar", `#C++` is "C"). A cashtag is "$" and 1-5
# letters or digits, the first a letter, after the start, white space or "(", and before the end,
# white space or one of .,;:!?)"'’; its tag is "$" and the ticker in upper case.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # JavaScript's \s
_ZERO_WIDTH = "\u00ad\u2060\u200a\u200b\u200c\u200d\u20e2"
_TAG = (
    rf"(?:^|(?<=[{_JS_SPACE}]))[#＃]((?!\ufe0f)[^{_JS_SPACE}{_ZERO_WIDTH}]*"
    rf"[^0-9{_JS_SPACE}\p{{P}}{_ZERO_WIDTH}]+[^{_JS_SPACE}{_ZERO_WIDTH}]*)?"
)
_CASHTAG = rf"(?:^|(?<=[{_JS_SPACE}(]))\$([A-Za-z][A-Za-z0-9]{{0,4}})(?=[{_JS_SPACE}]|\Z|[.,;:!?)\"'\u2019])"


@functools.cache
def _tag_rules() -> tuple[regex.Pattern[str], regex.Pattern[str], regex.Pattern[str]]:
    """The tag, cashtag and trailing-punctuation expressions (\\p{P} needs `regex`), compiled
    when a message is first given facets."""
    import regex

    return regex.compile(_TAG), regex.compile(_CASHTAG), regex.compile(r"\p{P}+\Z")


def bluesky_url_spans(text: str) -> list[tuple[int, int]]:
    """The Bluesky app's link detection (@atproto/api RichText.detectFacets): a URL runs to the
    next white space, then one trailing . , ; : ! or ? is dropped, then a ")" without a "("."""
    spans = []
    for match in re.finditer(r"(?:^|(?<=[\s(]))(https?://\S+)", text):
        start, end = match.span(1)
        if text[end - 1] in ".,;:!?":
            end -= 1
        if text[end - 1] == ")" and "(" not in text[start:end]:
            end -= 1
        spans.append((start, end))
    return spans


def bluesky_length(text: str) -> int:
    """Bluesky's limits: 300 graphemes and 3000 UTF-8 bytes; report whichever is tighter, in
    graphemes (a text over 3000 bytes is reported as over the limit)."""
    size = grapheme_length(text)
    return size if len(text.encode("utf-8")) <= 3000 else max(size, 301)


def tid(micros: int, clock_id: int) -> str:
    """A TID: 53 bits of microseconds since the epoch, 10 bits of clock id, base32-sortable."""
    number = (micros << 10) | (clock_id & 0x3FF)
    chars = []
    for _ in range(13):
        chars.append(_ALPHABET[number & 31])
        number >>= 5
    return "".join(reversed(chars))


def rkey_for(post: Post, channel_id: str) -> str:
    """Deterministic per (site, post, channel): the post's date in µs plus an offset and a clock
    id derived from its full canonical URL (two sites on one account never share a key)."""
    digest = int(client_id(post.url, channel_id, "bluesky-rkey"), 16)
    micros = int(post.date.timestamp()) * 1_000_000 + digest % 1_000_000
    return tid(micros, (digest >> 20) % 1024)


def _utf8(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def facets(text: str) -> list[dict[str, Any]]:
    """Link facets for every URL (where the Bluesky app's own detection ends it, not swallowing a
    trailing "." or ")") and tag facets for every #tag of at most 64 graphemes, with UTF-8 byte
    offsets."""
    found = [
        {
            "index": {"byteStart": _utf8(text, start), "byteEnd": _utf8(text, end)},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": text[start:end]}],
        }
        for start, end in bluesky_url_spans(text)
    ]
    for start, end, tag in _tags(text):
        found.append(
            {
                "index": {"byteStart": _utf8(text, start), "byteEnd": _utf8(text, end)},
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag}],
            }
        )
    return sorted(found, key=lambda f: f["index"]["byteStart"])


def _tags(text: str) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each tag and cashtag, as the app's detectFacets finds them (above)."""
    tags, cashtags, trailing_punctuation = _tag_rules()
    found = []
    for match in tags.finditer(text):
        tag = trailing_punctuation.sub("", match.group(1) or "")
        # The lexicon's limit (64 graphemes, 640 bytes): a longer tag stays plain text. The app
        # checks the graphemes only, and the PDS refuses a record with a longer tag.
        if not tag or grapheme_length(tag) > MAX_TAG or len(tag.encode("utf-8")) > 640:
            continue
        found.append((match.start(), match.start() + 1 + len(tag), tag))
    for match in cashtags.finditer(text):
        found.append((match.start(), match.end(), "$" + match.group(1).upper()))
    return found


def language_tag(value: str, where: str) -> str:
    """A language tag as the record's `langs` needs it: one the IANA registry knows (checked by
    langcodes: `english` and `deutsch` are well-formed but no language), written in the registry's
    case (`EN` → `en`, `pt-br` → `pt-BR`), which both the PDS and the official SDK's strict check take."""
    import langcodes

    if "_" in value:
        raise ConfigError(
            f"{value!r} is not a BCP 47 language tag: subtags are joined by a hyphen ({value.replace('_', '-')!r})",
            where,
        )
    if not langcodes.tag_is_valid(value):
        raise ConfigError(
            f"{value!r} is not a BCP 47 language tag the IANA registry knows (like en, en-US, pt-BR or zh-Hant)",
            where,
        )
    return _registry_case(value)


def _registry_case(tag: str) -> str:
    """RFC 5646 section 2.1.1: language lower case, script title case, region upper case; after a
    singleton (an extension or private use) everything lower case."""
    parts = tag.split("-")
    out = [parts[0].lower()]
    tail = len(parts[0]) == 1  # x-… or i-…: private use or grandfathered
    for part in parts[1:]:
        if tail or len(part) == 1:
            tail = True
            out.append(part.lower())
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())
        elif len(part) == 2 and part.isalpha():
            out.append(part.upper())
        else:
            out.append(part.lower())
    return "-".join(out)


class BlueskyChannel(Channel):
    type_name = "bluesky"
    repeat_safe = True  # deterministic rkey + byte-identical putRecord: a repeat is a no-op
    edits_in_place = True  # putRecord at the same rkey, swapRecord the current record's CID
    deletes = True  # deleteRecord at the copy's rkey
    collection: ClassVar[str] = COLLECTION  # where the copies are: delete and read_presence address it
    copy_noun: ClassVar[str] = "post"
    options: ClassVar[Mapping[str, Option]] = {
        "service": Option("url", default="https://bsky.social", help="your PDS or the bsky.social entryway"),
        "handle": Option("text", required=True, help="e.g. me.bsky.social"),
        "app_password": Option(
            "secret",
            required=True,
            help="Settings → Privacy and security → App passwords, e.g. !ENV BLUESKY_APP_PASSWORD",
        ),
        "language": Option("text", help="a BCP 47 language tag such as en or pt-BR", check=language_tag),
        "web_url": Option("url", default="https://bsky.app"),
        "appview": Option(
            "url",
            default="https://public.api.bsky.app",
            help="the public AppView readers' browsers read replies from (comments: true)",
        ),
        "keep_session": Option(
            "bool",
            default=True,
            help="keep the session for the next run (channels/sessions.py): createSession "
            "allows 30 logins in 5 minutes",
        ),
    }

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        super().__init__(settings, site)
        self._language: str | None = settings.options.get("language")  # in the registry's case (language_tag)
        self._session: dict[str, Any] | None = None
        self._failed_login: Outcome | None = None  # from warm_up, for the send that follows
        self._login_failed: Outcome | None = None  # a login that stops the lane: never tried twice a run
        self._kept = (
            SessionFile("bluesky", str(settings.options["service"]), str(settings.options["handle"]))
            if settings.options.get("keep_session", True)
            else None
        )

    def secrets(self) -> list[Any]:
        tokens = [self._session[k] for k in ("access", "refresh")] if self._session else []
        return [*super().secrets(), *tokens]

    @property
    def _xrpc(self) -> str:
        return f"{self.settings.options['service']}/xrpc"

    # ---------------------------------------------------------------- payload

    def record(self, post: Post, text: str, created_at: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "$type": COLLECTION,
            "text": text,
            "createdAt": created_at,
            "facets": facets(text),
            "embed": {
                "$type": "app.bsky.embed.external",
                "external": {"uri": post.url, "title": post.title, "description": post.summary},
            },
        }
        if self._language:
            record["langs"] = [self._language]
        return record

    def _thumb(self, post: Post) -> tuple[LocalImage | None, str]:
        """The post's image, read from the built site (it may not be deployed yet): only a real
        image file inside it (content/images.py), else none and why."""
        return site_image(post.image, self.site.url, self.site.site_dir, MAX_THUMB)

    def prepare(self, post: Post, created_at: str | None = None) -> Prepared:
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            LengthRule(300, bluesky_length, "graphemes"),
            self.site.name,
            where=self.settings.where("template"),
            max_hashtag=MAX_TAG,
        )
        frozen = created_at or to_iso_ms(dt.datetime.now(dt.UTC))
        record = self.record(post, message.text, frozen)
        thumb, why_not = self._thumb(post)
        if why_not:
            message = replace(message, notes=(*message.notes, f"{post.source or post.key}: {self.id}: {why_not}"))
        fingerprint = json.dumps(record, sort_keys=True, ensure_ascii=False) + (
            hashlib.sha256(thumb.data).hexdigest() if thumb else ""
        )
        return Prepared(
            message,
            idempotency_key=rkey_for(post, self.id),
            created_at=frozen,
            description=message.text,
            payload_sha256=message_sha256(fingerprint),
        )

    # ---------------------------------------------------------------- session

    async def _login(self, http: Http) -> Outcome | None:
        """Open the run's one session: the last run's, refreshed, when it was kept and is still
        good, else a new login. An Outcome when that fails (nothing was posted)."""

        if self._login_failed is not None:  # this run's one login failed: no second one
            return self._login_failed
        if self._session is not None or await self._resume(http):
            return None
        failed = await self._create_session(http)
        if failed is not None and failed.kind is Kind.AUTH:
            self._login_failed = failed
        return failed

    async def _create_session(self, http: Http) -> Outcome | None:
        """createSession. A login that failed in a way another try this run would meet again
        (credentials refused, an unreadable answer, a server error) is Kind.AUTH: the lane stops,
        as it does for a 401, instead of logging in again for every post (8 logins for 2 posts)."""
        import httpx

        try:
            response = await http.request(
                "POST",
                f"{self._xrpc}/com.atproto.server.createSession",
                json={
                    "identifier": self.settings.options["handle"],
                    "password": self.settings.options["app_password"].reveal(),
                },
            )
        except httpx.TransportError as exc:
            outcome = transport_outcome(exc)
            if outcome.kind is Kind.AMBIGUOUS:  # a login creates nothing: no post can exist
                return Outcome(Kind.NOT_SENT, error=f"login: {outcome.error}")
            return outcome
        if response.status_code != 200:
            failed = status_outcome(response, http.now())
            kind = Kind.AUTH if response.status_code in (400, 401) or response.status_code >= 500 else failed.kind
            if kind is Kind.AMBIGUOUS:  # a login creates nothing: no post can exist
                kind = Kind.NOT_SENT
            return Outcome(kind, error=f"login: {failed.error}", retry_after=failed.retry_after)
        try:
            body = json_object(response)
            did = identifier(body.get("did"), "did")
            self._session = {
                "did": did,
                "handle": body.get("handle"),
                "pds": self._pds_of(body.get("didDoc"), did),
                "access": Secret(identifier(body.get("accessJwt"), "accessJwt")),
                "refresh": Secret(identifier(body.get("refreshJwt"), "refreshJwt")),
            }
        except BadAnswer as exc:
            return Outcome(Kind.AUTH, error=f"login: unreadable session ({exc}); nothing was posted")
        except ConfigError as exc:
            return Outcome(Kind.REFUSED, error=f"login: {exc}")
        self._keep()
        return None

    async def _resume(self, http: Http) -> bool:
        """The last run's kept session, refreshed: True when the server still honours it; a
        session it refuses is forgotten (the caller logs in)."""
        import httpx

        kept = self._kept.load() if self._kept is not None else None
        if self._kept is None or not kept or not {"did", "pds", "refresh"} <= kept.keys():
            return False
        self._session = {
            "did": kept["did"],
            "handle": kept.get("handle"),
            "pds": kept["pds"],
            "access": Secret(""),  # replaced by the refresh
            "refresh": Secret(kept["refresh"]),
        }
        try:
            if await self._refresh(http):
                return True
        except httpx.TransportError:
            self._session = None  # the login that follows meets the same network and says so
        self._kept.forget()
        return False

    def _keep(self) -> None:
        """Write the session down for the next run (refresh tokens rotate: each new one replaces
        the last; the server honours the old one for a grace period, so a kill before this write
        still refreshes)."""
        if self._kept is not None and self._session is not None:
            self._kept.save(
                {
                    "did": self._session["did"],
                    "pds": self._session["pds"],
                    "handle": str(self._session.get("handle") or ""),
                    "refresh": self._session["refresh"].reveal(),
                }
            )

    def _pds_of(self, did_doc: Any, did: str) -> str:
        """Where the account's repository lives: the `#atproto_pds` service of the DID document
        createSession returns (as the official SDK reads it), else `service` itself. The access
        token goes there, so it must be https (http only on loopback)."""
        services = did_doc.get("service") if isinstance(did_doc, dict) else None
        for service in services if isinstance(services, list) else []:
            if (
                isinstance(service, dict)
                and service.get("id") in ("#atproto_pds", f"{did}#atproto_pds")
                and service.get("type") == "AtprotoPersonalDataServer"
                and isinstance(service.get("serviceEndpoint"), str)
            ):
                return check_url(service["serviceEndpoint"].rstrip("/"), "the PDS in the account's DID document")
        return str(self.settings.options["service"])

    @property
    def _pds_xrpc(self) -> str:
        return f"{self._session['pds'] if self._session else self.settings.options['service']}/xrpc"

    async def _refresh(self, http: Http) -> bool:
        assert self._session is not None
        response = await http.request(
            "POST",
            f"{self._pds_xrpc}/com.atproto.server.refreshSession",
            headers={"Authorization": f"Bearer {self._session['refresh'].reveal()}"},
        )
        try:
            if response.status_code != 200:
                raise BadAnswer(f"refreshSession answered {response.status_code}")
            body = json_object(response)
            self._session.update(
                access=Secret(identifier(body.get("accessJwt"), "accessJwt")),
                refresh=Secret(identifier(body.get("refreshJwt"), "refreshJwt")),
            )
        except BadAnswer:
            self._session = None
            return False
        self._keep()
        return True

    async def _authed(self, http: Http, method: str, name: str, **kwargs: Any) -> httpx.Response:
        """A request with the session's access token, refreshed once if it expired."""
        assert self._session is not None
        for attempt in range(2):
            headers = {**kwargs.pop("headers", {}), "Authorization": f"Bearer {self._session['access'].reveal()}"}
            response = await http.request(method, f"{self._pds_xrpc}/{name}", headers=headers, **kwargs)
            if (
                response.status_code == 400
                and "ExpiredToken" in response.text
                and attempt == 0
                and await self._refresh(http)
            ):
                kwargs["headers"] = {k: v for k, v in headers.items() if k != "Authorization"}
                continue
            return response
        return response

    async def warm_up(self, http: Http) -> None:
        """Log in while the in_flight record is pushed: a session creates nothing. A failed login
        is kept, and the send reports it without a second try."""
        if self._session is None and self._failed_login is None:
            self._failed_login = await self._login(http)

    # ---------------------------------------------------------------- send / verify

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.message is not None and prepared.created_at and prepared.idempotency_key
        failed = self._failed_login or await self._login(http)  # warm_up's verdict is used once
        self._failed_login = None
        if failed is not None:
            return failed
        assert self._session is not None
        record = self.record(post, prepared.message.text, prepared.created_at)
        try:
            blob = await self._uploaded_thumb(http, post)
            if blob is not None:
                record["embed"]["external"]["thumb"] = blob
            response = await self._authed(
                http,
                "POST",
                "com.atproto.repo.putRecord",
                json={
                    "repo": self._session["did"],
                    "collection": COLLECTION,
                    "rkey": prepared.idempotency_key,
                    "record": record,
                    "swapRecord": None,
                },
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        except BadAnswer:
            return Outcome(Kind.NOT_SENT, error="uploadBlob answered unreadably; nothing was posted")
        if response.status_code == 200:
            return self._put(response, prepared.idempotency_key)
        if response.status_code == 400:
            return _put_refused(response)
        return status_outcome(response, http.now())

    async def _uploaded_thumb(self, http: Http, post: Post) -> dict[str, Any] | None:
        """The card's thumbnail as a blob of this repository, or None: the card goes without it."""
        thumb, _ = self._thumb(post)
        if thumb is None:
            return None
        uploaded = await self._authed(  # its type from its bytes, as the server sniffs them
            http, "POST", "com.atproto.repo.uploadBlob", content=thumb.data, headers={"Content-Type": thumb.mime}
        )
        blob = json_object(uploaded).get("blob") if uploaded.status_code == 200 else None
        return blob if isinstance(blob, dict) else None

    def _put(self, response: httpx.Response, rkey: str) -> Outcome:
        """putRecord's 200: done, with the record's URI."""
        try:
            uri = optional_url(json_object(response).get("uri"), "uri")
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable answer ({exc}); the post may exist")
        if uri is None:
            return Outcome(Kind.AMBIGUOUS, error="200 without the record's uri; the post may exist")
        return Outcome(Kind.DONE, remote_id=uri, remote_url=self._web_url(rkey))

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        appview = options.get("appview") or "https://public.api.bsky.app"
        if not isinstance(appview, str) or not (record.remote_id or "").startswith("at://"):
            return None
        return (
            f"{appview.rstrip('/')}/xrpc/app.bsky.feed.getPostThread?uri={quote(str(record.remote_id), safe='')}"
            "&depth=10"
        )

    def recognises(self, remote_url: str) -> bool:
        return remote_url.startswith(self._web_url(""))

    def _web_url(self, rkey: str) -> str:
        return f"{self.settings.options['web_url']}/profile/{self.settings.options['handle']}/post/{rkey}"

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        import httpx

        rkey = record.idempotency_key or rkey_for(post, self.id)
        # A public, strongly consistent read — at the account's PDS, which the session names.
        failed = await self._login(http)
        if failed is not None:
            return Verdict(Found.UNKNOWN, reason=f"cannot find the account's PDS ({failed.error})")
        assert self._session is not None
        repo = self._session["did"]
        try:
            response = await http.request(
                "GET",
                f"{self._pds_xrpc}/com.atproto.repo.getRecord",
                params={"repo": repo, "collection": COLLECTION, "rkey": rkey},
            )
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord failed ({type(exc).__name__})")
        if response.status_code == 200:
            return self._found(response, post, repo, rkey)
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Verdict(Found.ABSENT, reason="getRecord: no record at our key")
        return Verdict(Found.UNKNOWN, reason=f"getRecord answered {response.status_code}")

    def _found(self, response: httpx.Response, post: Post, repo: str, rkey: str) -> Verdict:
        """getRecord's 200: ours only if it is about this post (another site's may hold our key)."""
        try:
            body = json_object(response)
            uri = optional_url(body.get("uri"), "uri")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord: {exc}")
        if not _links_to(body.get("value"), post.url):
            return Verdict(
                Found.CONFLICT,
                reason=(
                    f"the record at our key {rkey} does not link to {post.url}: it is another post's "
                    "(another site on this account?); the next run sends under a fresh key"
                ),
            )
        return Verdict(Found.FOUND, uri or f"at://{repo}/{COLLECTION}/{rkey}", self._web_url(rkey))

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """putRecord at the copy's own rkey with the new record (its `createdAt` kept), and
        `swapRecord` set to the CID read just before: the PDS refuses (InvalidSwap) if the record
        changed in between, and never makes a record elsewhere. A copy that is gone is not made
        again: putRecord would create it, so the read comes first."""
        import httpx

        assert prepared.message is not None and prepared.created_at
        rkey = rkey_of(record)
        failed = await self._login(http)
        if failed is not None:
            return failed
        assert self._session is not None
        try:
            current = await self._get(http, rkey)
            if current.status_code == 400 and "RecordNotFound" in current.text:
                return Outcome(Kind.AMBIGUOUS, error="getRecord: no record at the copy's key; read again")
            if current.status_code != 200:
                return status_outcome(current, http.now())
            cid = optional_text(json_object(current).get("cid"), "cid")
            new = self.record(post, prepared.message.text, prepared.created_at)
            blob = await self._uploaded_thumb(http, post)
            if blob is not None:
                new["embed"]["external"]["thumb"] = blob
            body = {"repo": self._session["did"], "collection": COLLECTION, "rkey": rkey, "record": new}
            response = await self._authed(http, "POST", "com.atproto.repo.putRecord", json={**body, "swapRecord": cid})
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"an unreadable answer ({exc}); the copy may be updated")
        if response.status_code == 200:
            return self._put(response, rkey)
        if response.status_code == 400:
            return _put_refused(response)
        return status_outcome(response, http.now())

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy:
        """getRecord at the copy's own rkey: the record (its card's thumbnail aside, a blob whose
        reference the PDS makes) says whether the update happened; the PDS's RecordNotFound says
        the copy is gone."""
        failed = await self._login(http)
        if failed is not None or prepared.message is None or not prepared.created_at:
            return Copy.UNKNOWN
        response = await self._get(http, rkey_of(record))
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Copy.GONE
        if response.status_code != 200:
            return Copy.UNKNOWN
        value = json_object(response).get("value")
        if not isinstance(value, dict):
            return Copy.UNKNOWN
        target = self.record(post, prepared.message.text, prepared.created_at)
        return Copy.MATCHES if _without_thumb(value) == _without_thumb(target) else Copy.DIFFERS

    async def delete(self, http: Http, record: Record) -> Outcome:
        """deleteRecord at the copy's own rkey. The PDS answers 200 whether or not a record was
        there (deleting nothing is a no-op): either way the copy is gone."""
        import httpx

        failed = await self._login(http)
        if failed is not None:
            return failed
        assert self._session is not None
        body = {"repo": self._session["did"], "collection": self.collection, "rkey": rkey_of(record)}
        try:
            response = await self._authed(http, "POST", "com.atproto.repo.deleteRecord", json=body)
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        return delete_outcome(response, http.now(), gone=False, what=self.copy_noun, confirms=_is_delete_output)

    async def read_presence(self, http: Http, record: Record) -> Presence:
        """getRecord at the copy's own rkey: the PDS's RecordNotFound says it is gone."""
        failed = await self._login(http)
        if failed is not None:
            return Presence.UNKNOWN
        response = await self._get_in(http, self.collection, rkey_of(record))
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Presence.GONE
        return Presence.PRESENT if response.status_code == 200 else Presence.UNKNOWN

    async def _get(self, http: Http, rkey: str) -> httpx.Response:
        return await self._get_in(http, COLLECTION, rkey)

    async def _get_in(self, http: Http, collection: str, rkey: str) -> httpx.Response:
        assert self._session is not None
        return await http.request(
            "GET",
            f"{self._pds_xrpc}/com.atproto.repo.getRecord",
            params={"repo": self._session["did"], "collection": collection, "rkey": rkey},
        )

    async def check_credentials(self, http: Http) -> CredentialCheck:
        """A new login with the app password (a kept session would not prove the password still
        works), then getSession at the account's PDS: the account's status (deactivated, taken
        down) and its handle now."""
        import httpx

        if self._login_failed is not None:  # this run's login was refused: never a second one
            return _login_check(self._login_failed)
        try:
            failed = await self._create_session(http)
            if failed is not None:
                return _login_check(failed)
            assert self._session is not None
            response = await self._authed(http, "GET", "com.atproto.server.getSession")
            body = json_object(response) if response.status_code == 200 else None
        except (httpx.HTTPError, BadAnswer) as exc:
            return check_unreachable(exc)
        if body is None:
            return CredentialCheck(
                Health.UNKNOWN,
                problem=f"getSession answered {response.status_code}{error_detail(response)}",
                action="check the service setting and whether the PDS is up, then run the check again",
            )
        limits = rate_limit_left(response.headers)
        return _session_check(body, str(self.settings.options["handle"]), (limits,) if limits else ())

    async def close(self) -> None:
        self._session = None


PASSWORD_ADVICE = (
    "make a new app password (Settings → Privacy and security → App passwords) and put it where the "
    "config's app_password setting reads it; if the account's handle changed, set `handle` to the new one"
)


def _login_check(failed: Outcome) -> CredentialCheck:
    """createSession refused: the password (revoked, mistyped, or a handle that moved), the account
    (taken down), or no usable answer."""
    said = (failed.error or "").removeprefix("login: ").replace(" credentials refused", "")
    if failed.kind is Kind.AUTH and "AccountTakedown" in said:
        return CredentialCheck(
            Health.FAILING,
            problem=f"the account has been taken down by its host ({said})",
            action="appeal to the account's host; nothing can be posted until then",
        )
    if failed.kind is Kind.AUTH and said.startswith(("401", "400")):
        return CredentialCheck(
            Health.FAILING,
            problem=f"the app password was refused ({said}): revoked, mistyped, or the handle changed",
            action=PASSWORD_ADVICE,
        )
    return CredentialCheck(
        Health.UNKNOWN,
        problem=said,
        action="check the service setting and whether the PDS is up, then run the check again",
    )


def _session_check(body: dict[str, Any], configured: str, details: tuple[str, ...]) -> CredentialCheck:
    """getSession's answer: an account that is not active (deactivated, taken down, suspended)
    cannot post; a handle that is no longer the configured one breaks every link the channel makes."""
    given = body.get("handle")
    handle = given if isinstance(given, str) and given != "handle.invalid" else ""
    account = f"@{handle}" if handle else str(body.get("did") or "")
    status = body.get("status") if isinstance(body.get("status"), str) else None
    if body.get("active") is False or status:
        state = status or "inactive"
        action = (
            "reactivate the account (log in to the Bluesky app and choose to reactivate it)"
            if state == "deactivated"
            else "the account's host has restricted it: appeal there; nothing can be posted until then"
        )
        return CredentialCheck(
            Health.FAILING, account, problem=f"the account is {state}", action=action, details=details
        )
    if not configured.startswith("did:") and handle.lower() != configured.lower():
        shown = handle or "no valid handle (handle.invalid: it no longer resolves)"
        return CredentialCheck(
            Health.FAILING,
            account,
            problem=f"the account's handle is now {shown}, not {configured}: the links made from it would break",
            action=f"set the channel's handle to {handle}" if handle else "fix the account's handle, then set it here",
            details=details,
        )
    return CredentialCheck(Health.OK, account, details=(*details, "app passwords do not expire"))


def _without_thumb(value: dict[str, Any]) -> dict[str, Any]:
    embed = value.get("embed")
    if not isinstance(embed, dict) or not isinstance(embed.get("external"), dict):
        return value
    external = {k: v for k, v in embed["external"].items() if k != "thumb"}
    return {**value, "embed": {**embed, "external": external}}


def _is_delete_output(response: httpx.Response) -> bool:
    """The documented answer to deleteRecord: a JSON object (`commit` only when a record was
    deleted), or no body at all (the lexicon had no output before `commit` was added)."""
    if not response.content.strip():
        return True
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("commit", {}), dict)


def rkey_of(record: Record) -> str:
    """The copy's record key: the last part of its at:// URI (the key it was made under)."""
    if record.remote_id and record.remote_id.startswith("at://"):
        return record.remote_id.rsplit("/", 1)[-1]
    assert record.idempotency_key
    return record.idempotency_key


def _put_refused(response: httpx.Response) -> Outcome:
    """putRecord's 400: InvalidSwap means a record is at our key already (ours, or another's: a
    read tells); anything else is a refusal."""
    detail = error_detail(response)
    if "InvalidSwap" in response.text:
        return Outcome(Kind.AMBIGUOUS, error=f"400 InvalidSwap{detail}: a different record is at our key")
    return Outcome(Kind.REFUSED, error=f"400 refused{detail}")


def _links_to(value: Any, url: str) -> bool:
    """Whether a post record is about `url`: its link card, a link facet, or the URL in its text."""
    if not isinstance(value, dict):
        return False
    embed = value.get("embed")
    external = embed.get("external") if isinstance(embed, dict) else None
    if isinstance(external, dict) and external.get("uri") == url:
        return True
    text = value.get("text")
    return _facet_links_to(value.get("facets"), url) or (isinstance(text, str) and url in text)


def _facet_links_to(facets: object, url: str) -> bool:
    for facet in facets if isinstance(facets, list) else []:
        features = facet.get("features") if isinstance(facet, dict) else None
        if any(isinstance(f, dict) and f.get("uri") == url for f in features or []):
            return True
    return False
