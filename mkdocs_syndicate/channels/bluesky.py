"""Bluesky: `putRecord` at a deterministic TID record key with a frozen `createdAt`.

The rkey is derived from the post's canonical URL and channel id and stored in the record before
the call, and `createdAt` is frozen in the ledger at in_flight time, so a retry sends
byte-identical content: the PDS answers it as a no-op, and never makes a second post.
`swapRecord: null` refuses to overwrite different content (InvalidSwap), which goes to verify.
Verify is an exact `getRecord` by rkey, and what it finds counts only if it links to this post
(two sites on one account).
One session per run, opened only when Bluesky has work (channels/atproto_session.py); its tokens
live in memory only. The record's rich text is channels/bluesky_text.py's, its key and the PDS's
answers channels/bluesky_records.py's, the credential check's verdicts channels/bluesky_account.py's,
the image post (`embed: image`: the post's image with its alt text instead of the link card)
channels/bluesky_images.py's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channel_api import (
    BadAnswer,
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
    delete_outcome,
    json_object,
    links_in,
    message_sha256,
    optional_text,
    optional_url,
    post_image,
    render_message,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.atproto_session import HANDLE, AtprotoSessionChannel
from mkdocs_syndicate.channels.bluesky_account import credentials_check
from mkdocs_syndicate.channels.bluesky_images import images_embed, missing_blob, upload_blob
from mkdocs_syndicate.channels.bluesky_records import (
    card_uri,
    found_verdict,
    is_delete_output,
    part_record,
    part_rkey,
    put_outcome,
    put_refused,
    reply_record,
    rkey_for,
    rkey_of,
    without_thumb,
)
from mkdocs_syndicate.channels.bluesky_text import MAX_TAG, bluesky_length, facets, language_tag
from mkdocs_syndicate.content.images import LocalImage, site_image
from mkdocs_syndicate.timeutil import to_iso_ms

if TYPE_CHECKING:
    import httpx

COLLECTION = "app.bsky.feed.post"
DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"
MAX_THUMB = 1_000_000


class BlueskyChannel(AtprotoSessionChannel):
    type_name = "bluesky"
    repeat_safe = True  # deterministic rkey + byte-identical putRecord: a repeat is a no-op
    edits_in_place = True  # putRecord at the same rkey, swapRecord the current record's CID
    deletes = True  # deleteRecord at the copy's rkey
    threads = True  # each part a post whose `reply` names the first part and the one before
    uploads = True  # `embed: image`: the post's image, uploaded as a blob before the post
    collection: ClassVar[str] = COLLECTION  # where the copies are: delete and read_presence address it
    copy_noun: ClassVar[str] = "post"
    options: ClassVar[Mapping[str, Option]] = {
        "service": Option("url", default="https://bsky.social", help="your PDS or the bsky.social entryway"),
        "handle": HANDLE,
        "app_password": Option(
            "secret",
            required=True,
            help="Settings → Privacy and security → App passwords, e.g. !ENV BLUESKY_APP_PASSWORD",
        ),
        "language": Option("text", help="a BCP 47 language tag such as en or pt-BR", check=language_tag),
        "embed": Option(
            "choice",
            default="card",
            choices=("card", "image"),
            help="card: the link card (the post's image its thumbnail); image: the post's image with its alt text",
        ),
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

    # ---------------------------------------------------------------- payload

    def record(
        self, post: Post, text: str, created_at: str, image: PostImage | None = None, media: tuple[Media, ...] = ()
    ) -> dict[str, Any]:
        """The post record: with the link card, or (`embed: image`, once uploaded) the image."""
        embed: dict[str, Any] = {
            "$type": "app.bsky.embed.external",
            "external": {"uri": post.url, "title": post.title, "description": post.summary},
        }
        if image is not None and media:
            embed = images_embed(image, media[0])
        record: dict[str, Any] = {
            "$type": COLLECTION,
            "text": text,
            "createdAt": created_at,
            "facets": facets(text),
            "embed": embed,
        }
        if self._language:
            record["langs"] = [self._language]
        return record

    def _thumb(self, post: Post) -> tuple[LocalImage | None, str]:
        """The post's image, read from the built site (it may not be deployed yet): only a real
        image file inside it (content/images.py), else none and why."""
        return site_image(post.image, self.site.url, self.site.site_dir, MAX_THUMB)

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            LengthRule(300, bluesky_length, "graphemes"),
            self.site.name,
            where=self.settings.where("template"),
            max_hashtag=MAX_TAG,
            max_parts=self.settings.max_parts,
            thread_text=self.settings.thread_text,
        )
        frozen = created_at or to_iso_ms(dt.datetime.now(dt.UTC))
        record = self.record(post, message.text, frozen)
        image = None
        if self.settings.options["embed"] == "image":
            image, notes = post_image(post, self.site.url, self.site.site_dir)
            message = replace(message, notes=(*message.notes, *notes))
        if image is not None:  # the post as an image: its bytes and alt text, not the card's
            fingerprint = json.dumps([record["text"], record["createdAt"], image.sha256, image.alt])
        else:
            thumb, why_not = self._thumb(post)
            if why_not:
                message = replace(message, notes=(*message.notes, f"{post.source or post.key}: {self.id}: {why_not}"))
            fingerprint = json.dumps(record, sort_keys=True, ensure_ascii=False) + (
                hashlib.sha256(thumb.data).hexdigest() if thumb else ""
            )
        if len(message.parts) > 1:  # a thread: its later parts too (a single message's hash is unchanged)
            fingerprint += json.dumps(message.parts[1:], ensure_ascii=False)
        return Prepared(
            message,
            idempotency_key=rkey_for(post, self.id, life),
            created_at=frozen,
            description=message.text,
            payload_sha256=message_sha256(fingerprint),
            image=image,
            life=life,
        )

    # ---------------------------------------------------------------- session

    # ---------------------------------------------------------------- send / verify

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.message is not None and prepared.created_at and prepared.idempotency_key
        failed = self._failed_login or await self._login(http)  # warm_up's verdict is used once
        self._failed_login = None
        if failed is not None:
            return failed
        assert self._session is not None
        record = self.record(post, prepared.message.text, prepared.created_at, prepared.image, prepared.media)
        body = {"repo": self._session["did"], "collection": COLLECTION, "rkey": prepared.idempotency_key}
        try:
            if prepared.image is None:
                blob = await self._uploaded_thumb(http, post)
                if blob is not None:
                    record["embed"]["external"]["thumb"] = blob
            return await self._put(http, post, prepared, {**body, "record": record, "swapRecord": None})
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        except BadAnswer:
            return Outcome(Kind.NOT_SENT, error="uploadBlob answered unreadably; nothing was posted")

    async def _put(self, http: Http, post: Post, prepared: Prepared, body: dict[str, Any]) -> Outcome:
        """putRecord of the post's copy (a send, or an edit with its swapRecord). Its image's blob
        that the PDS proved gone (BlobNotFound: it drops unused blobs) is uploaded again (the same
        bytes are the same blob) and the record put once more: the outcome names that upload,
        for the ledger."""
        assert prepared.message is not None and prepared.created_at
        response = await self._authed(http, "POST", "com.atproto.repo.putRecord", json=body)
        again: Outcome | None = None  # the image uploaded again, when the stored blob proved gone
        if prepared.image is not None and "reply" not in body["record"] and missing_blob(response, prepared.media):
            again = await self.upload(http, post, prepared.image)
            if again.kind is not Kind.DONE or again.media is None:
                return Outcome(Kind.NOT_SENT, error=f"the image upload: {again.error}; nothing was posted")
            record = self.record(post, prepared.message.text, prepared.created_at, prepared.image, (again.media,))
            response = await self._authed(http, "POST", "com.atproto.repo.putRecord", json={**body, "record": record})
        if response.status_code == 200:
            made = put_outcome(response, self._web_url(str(body["rkey"])))
            return replace(made, media=again.media) if again is not None else made  # the ledger names it
        if response.status_code == 400:
            return put_refused(response)
        return status_outcome(response, http.now())

    async def upload(self, http: Http, post: Post, image: PostImage) -> Outcome:
        failed = await self._login(http)
        if failed is not None:
            return failed
        return await upload_blob(self._authed, http, image, post.source or post.key)

    async def read_media(self, http: Http, media: Media) -> MediaState:
        """A read proves nothing (the PDS's getBlob answers alike for an unused blob and for none:
        channels/bluesky_images.py); putRecord's BlobNotFound does, and send uploads again then."""
        return MediaState.UNKNOWN

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

    # ---------------------------------------------------------------- a thread's later parts

    def _edited(self, post: Post, text: str, created_at: str, current: dict[str, Any]) -> dict[str, Any]:
        """What a copy is to say after an edit: a thread's later part (a reply) keeps its reply refs
        and its `createdAt` (its place in the thread); any other copy is the post with its card."""
        refs, when = current.get("reply"), current.get("createdAt")
        if isinstance(refs, dict) and isinstance(when, str):
            return reply_record(text, when, refs, self._language)
        return self.record(post, text, created_at)

    async def send_part(
        self, http: Http, post: Post, prepared: Prepared, number: int, sent: tuple[Part, ...], replay: bool
    ) -> Outcome:
        """putRecord at the part's own derived rkey, with frozen bytes: a repeat is a no-op, as
        for the first part. A part recorded without its CID (a read that did not give it) has it
        read first: a reply's refs need it."""
        import httpx

        assert prepared.message is not None and prepared.created_at
        failed = await self._login(http)
        if failed is not None:
            return failed
        assert self._session is not None
        rkey = part_rkey(post, self.id, number, prepared.life)
        try:
            sent = tuple([await self._with_cid(http, part) for part in sent])
            if any(part.cid is None for part in sent):
                return Outcome(Kind.NOT_SENT, error="the CID of a part before this one could not be read; not sent")
            record = part_record(prepared.message.texts[number - 1], prepared.created_at, number, sent, self._language)
            body = {"repo": self._session["did"], "collection": COLLECTION, "rkey": rkey, "record": record}
            response = await self._authed(http, "POST", "com.atproto.repo.putRecord", json={**body, "swapRecord": None})
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 200:
            return put_outcome(response, self._web_url(rkey))
        if response.status_code == 400:
            return put_refused(response)
        return status_outcome(response, http.now())

    async def _with_cid(self, http: Http, part: Part) -> Part:
        if part.cid is not None:
            return part
        response = await self._get(http, part.remote_id.rsplit("/", 1)[-1])
        try:
            cid = optional_text(json_object(response).get("cid"), "cid") if response.status_code == 200 else None
        except BadAnswer:
            cid = None
        return replace(part, cid=cid)

    async def read_part(self, http: Http, post: Post, record: Record, number: int) -> Verdict:
        """getRecord at the part's rkey: there and a reply to the part before it → found (with
        its CID); the PDS's RecordNotFound → absent."""
        import httpx

        failed = await self._login(http)
        if failed is not None:
            return Verdict(Found.UNKNOWN, reason=f"cannot find the account's PDS ({failed.error})")
        rkey = part_rkey(post, self.id, number, record.lives)
        try:
            response = await self._get(http, rkey)
            if response.status_code == 400 and "RecordNotFound" in response.text:
                return Verdict(Found.ABSENT, reason=f"getRecord: no record at part {number}'s key")
            if response.status_code != 200:
                return Verdict(Found.UNKNOWN, reason=f"getRecord answered {response.status_code}")
            body = json_object(response)
            uri, cid = optional_url(body.get("uri"), "uri"), optional_text(body.get("cid"), "cid")
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord failed ({type(exc).__name__})")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord: {exc}")
        value = body.get("value")
        parent = ((value.get("reply") or {}).get("parent") or {}) if isinstance(value, dict) else {}
        if not isinstance(parent, dict) or parent.get("uri") != record.parts[number - 2].remote_id:
            return Verdict(Found.CONFLICT, reason=f"the record at part {number}'s key {rkey} is not this thread's")
        return Verdict(Found.FOUND, uri, self._web_url(rkey), ref=cid)

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        appview = options.get("appview") or "https://public.api.bsky.app"
        if not isinstance(appview, str) or not (record.remote_id or "").startswith("at://"):
            return None
        return (
            f"{appview.rstrip('/')}/xrpc/app.bsky.feed.getPostThread?uri={quote(str(record.remote_id), safe='')}"
            f"&depth={10 + len(record.parts[1:])}"  # a thread's parts each take a level: replies keep 10
        )

    def recognises(self, remote_url: str) -> bool:
        return remote_url.startswith(self._web_url(""))

    def _web_url(self, rkey: str) -> str:
        return f"{self.settings.options['web_url']}/profile/{self.settings.options['handle']}/post/{rkey}"

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        import httpx

        rkey = record.idempotency_key or rkey_for(post, self.id, record.lives)
        # A public, strongly consistent read — at the account's PDS, which the session names.
        failed = await self._login(http)
        if failed is not None:
            return Verdict(Found.UNKNOWN, reason=f"cannot find the account's PDS ({failed.error})")
        assert self._session is not None
        repo = self._session["did"]
        try:
            response = await self._get_in(http, COLLECTION, rkey)
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord failed ({type(exc).__name__})")
        if response.status_code == 200:
            return found_verdict(response, post, f"at://{repo}/{COLLECTION}/{rkey}", self._web_url(rkey))
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Verdict(Found.ABSENT, reason="getRecord: no record at our key")
        return Verdict(Found.UNKNOWN, reason=f"getRecord answered {response.status_code}")

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
            read = json_object(current)
            cid, value = optional_text(read.get("cid"), "cid"), read.get("value")
            value = value if isinstance(value, dict) else {}
            new = await self._edit_target(http, post, prepared, value)
            body = {"repo": self._session["did"], "collection": COLLECTION, "rkey": rkey, "record": new}
            return await self._put(http, post, prepared, {**body, "swapRecord": cid})
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"an unreadable answer ({exc}); the copy may be updated")

    async def _edit_target(self, http: Http, post: Post, prepared: Prepared, value: dict[str, Any]) -> dict[str, Any]:
        """The record an edit puts: a thread's later part keeps its place (`_edited`); the post
        itself its image (the blob engine/updates.py recorded before the edit), or its card's
        thumbnail."""
        assert prepared.message is not None and prepared.created_at
        new = self._edited(post, prepared.message.text, prepared.created_at, value)
        if "reply" in new:
            return new
        if prepared.image is not None and prepared.media:
            return self.record(post, prepared.message.text, prepared.created_at, prepared.image, prepared.media)
        blob = await self._uploaded_thumb(http, post) if "embed" in new else None
        if blob is not None:
            new["embed"]["external"]["thumb"] = blob
        return new

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """getRecord at the copy's own rkey: the record (its card's thumbnail aside, a blob whose
        reference the PDS makes; an image post's blob the one the record names) says whether the
        update happened; the PDS's RecordNotFound says the copy is gone."""
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
        target = self._edited(post, prepared.message.text, prepared.created_at, value)
        if prepared.image is not None and "reply" not in target and record.media:
            if all(media.sha256 != prepared.image.sha256 for media in record.media):  # no upload of it recorded
                return self.seen(Copy.DIFFERS, value)
            # The blob the in_flight record named before the edit: what the copy must show now.
            target = self.record(post, prepared.message.text, prepared.created_at, prepared.image, record.media)
        elif prepared.image is not None and "reply" not in target and isinstance(value.get("embed"), dict):
            target["embed"] = value["embed"]  # no upload recorded: the text decides
        return self.seen(Copy.MATCHES if without_thumb(value) == without_thumb(target) else Copy.DIFFERS, value)

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
        return delete_outcome(response, http.now(), gone=False, what=self.copy_noun, confirms=is_delete_output)

    async def read_presence(self, http: Http, record: Record) -> Presence | Seen:
        """getRecord at the copy's own rkey: the PDS's RecordNotFound says it is gone."""
        failed = await self._login(http)
        if failed is not None:
            return Presence.UNKNOWN
        response = await self._get_in(http, self.collection, rkey_of(record))
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Presence.GONE
        if response.status_code != 200:
            return Presence.UNKNOWN
        value = json_object(response).get("value")
        return self.seen(Presence.PRESENT, value if isinstance(value, dict) else {})

    def seen(self, found: Copy | Presence, value: dict[str, Any]) -> Seen:
        """What a read of a record found, with what says whose copy it is: its links, its card's page."""
        return Seen(found, self.copy_links(value), about=card_uri(value))

    def copy_links(self, value: dict[str, Any]) -> tuple[str, ...]:
        """The links a record shows (its text's facets, its card): whose copy it is."""
        return links_in(value)

    async def _get(self, http: Http, rkey: str) -> httpx.Response:
        return await self._get_in(http, COLLECTION, rkey)

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await credentials_check(self, http)
