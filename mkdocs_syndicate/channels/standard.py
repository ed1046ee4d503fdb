"""standard.site: each post as a `site.standard.document` record in the author's AT Protocol
repository, under one `site.standard.publication` record for the site (docs/design/services.md,
"standard.site").

The same account, PDS and session as the Bluesky channel (its session logic is inherited, not
copied). A document is written with `putRecord` at a record key derived from the site and the post
(a valid TID, stored in the ledger before the call), `swapRecord: null`, and fields made from the
post alone (`publishedAt` is the post's date): a repeat sends the same bytes, which the PDS answers
as a no-op, so there is never a second document. Verify is `getRecord` at that key, and what it
finds counts only when its `site` and `path` are this post's. A document another tool made for the
post (the same `site` and `path`, at another key) is adopted, never written twice.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Copy,
    Found,
    Http,
    Kind,
    Message,
    Option,
    Outcome,
    Post,
    Prepared,
    Record,
    Seen,
    Verdict,
    client_id,
    grapheme_length,
    json_object,
    message_sha256,
    optional_text,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.atproto_session import HANDLE
from mkdocs_syndicate.channels.bluesky import BlueskyChannel
from mkdocs_syndicate.channels.bluesky_records import links_to, rkey_of, tid
from mkdocs_syndicate.timeutil import to_iso_ms

if TYPE_CHECKING:
    import httpx

DOCUMENT = "site.standard.document"
PUBLICATION = "site.standard.publication"
BLUESKY_POST = "app.bsky.feed.post"
WELL_KNOWN = ".well-known/site.standard.publication"
# The lexicons' limits (standard.site/docs/lexicons/document and /publication): title and name
# 500 graphemes / 5000 bytes, description 3000 / 30000, each tag 128 / 1280.
LIMITS = {"title": (500, 5000), "description": (3000, 30000), "name": (500, 5000), "tag": (128, 1280)}
MAX_LISTED = 100  # pages of listRecords read when adopting (100 records each)
UNWRITTEN = "nothing was written"
_PUBLICATION_EPOCH = 1_672_531_200  # 2023-01-01: a publication key's timestamp part starts here


def fits(text: str, what: str) -> str:
    """`text` cut to the lexicon's limit for `what` (graphemes and UTF-8 bytes), on a grapheme."""
    graphemes, size = LIMITS[what]
    if grapheme_length(text) <= graphemes and len(text.encode("utf-8")) <= size:
        return text
    import regex

    kept = ""
    for cluster in regex.findall(r"\X", text):
        if grapheme_length(kept) + 1 >= graphemes or len((kept + cluster + "…").encode("utf-8")) > size:
            break
        kept += cluster
    return kept.rstrip() + "…"


def publication_rkey(site_url: str, channel_id: str) -> str:
    """The site's one publication record: a TID derived from the site's URL and the channel id,
    so every run (and every machine) writes the same record, once."""
    digest = int(client_id(site_url, channel_id, "standard-publication"), 16)
    return tid(_PUBLICATION_EPOCH * 1_000_000 + digest % (10**15), (digest >> 60) % 1024)


def document_rkey(post: Post, channel_id: str, life: int = 0) -> str:
    """Deterministic per (site, post, channel): the post's date plus an offset derived from its
    canonical URL (as the Bluesky channel's key; another purpose, so another key)."""
    digest = int(client_id(post.url, channel_id, "standard-document", life), 16)
    micros = int(post.date.timestamp()) * 1_000_000 + digest % 1_000_000
    return tid(micros, (digest >> 20) % 1024)


def site_base(site_url: str) -> str:
    """The publication's `url`: the site's address without a trailing slash (the lexicon asks)."""
    return site_url.rstrip("/")


def document_path(post: Post, site_url: str) -> str:
    """The document's `path`: what follows the publication's url in the post's URL, with a
    leading slash (the lexicon's rule)."""
    base = site_base(site_url)
    if post.url.startswith(base + "/"):
        return post.url[len(base) :]
    return urlsplit(post.url).path or "/"


def post_text(post: Post) -> str:
    """`textContent`: the post's text as plain text (no markup), its paragraphs kept, without the
    title heading (the document's `title` says it) and without the plugin's links."""
    from mkdocs_syndicate.content.crosslinks import without_block
    from mkdocs_syndicate.content.portable import plain_text

    return plain_text(without_block(post.body_html), post.title) if post.body_html else ""


class StandardChannel(BlueskyChannel):
    """A Bluesky session (inherited), another collection."""

    type_name = "standard"
    web_copies = False  # a document is a record, found again by its at:// URI; its page is the post
    repeat_safe = True  # deterministic rkey + byte-identical putRecord: a repeat is a no-op
    edits_in_place = True  # putRecord at the same rkey, swapRecord the current record's CID
    deletes = True  # deleteRecord at the document's rkey (BlueskyChannel.delete, in this collection)
    threads = False  # one document per post: never a thread
    collection = DOCUMENT
    copy_noun = "document"
    options: ClassVar[Mapping[str, Option]] = {
        "service": Option("url", default="https://bsky.social", help="your PDS or the bsky.social entryway"),
        "handle": HANDLE,
        "app_password": Option(
            "secret",
            required=True,
            help="Settings → Privacy and security → App passwords, e.g. !ENV BLUESKY_APP_PASSWORD",
        ),
        "bluesky": Option(
            "text",
            help="the id of this site's Bluesky channel on the same account: each document then "
            "points to the post announcing it (bskyPostRef)",
        ),
        "keep_session": Option("bool", default=True, help="keep the session for the next run"),
    }

    def __init__(self, settings: Any, site: Any) -> None:
        super().__init__(settings, site)
        self._published: str | None = None  # the publication's at:// URI, once written this run
        self._existing: dict[str, str] | None = None  # path → URI of documents found for this site

    # ---------------------------------------------------------------- payload, without network

    def document(self, post: Post, publication: str) -> dict[str, Any]:
        """The record: what the lexicon defines, made from the post alone (a repeat is the same)."""
        record: dict[str, Any] = {
            "$type": DOCUMENT,
            "site": publication,
            "path": document_path(post, self.site.url),
            "title": fits(post.title, "title"),
            "publishedAt": to_iso_ms(post.date),
        }
        if post.summary:
            record["description"] = fits(post.summary, "description")
        tags = [fits(tag.lstrip("#"), "tag") for tag in post.tags if tag.lstrip("#")]
        if tags:
            record["tags"] = tags
        text = post_text(post)
        if text:
            record["textContent"] = text
        return record

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        record = self.document(post, "at://{did}/" + f"{PUBLICATION}/{self._publication_rkey}")
        bluesky = self._bluesky_copy(post)
        # The Bluesky post it will point to is part of what is sent: once that post exists, the
        # document is out of date and the ordinary edit path writes it again with the reference.
        # Its CID is read when the document is written (a PDS makes it; nothing here can).
        sent = {**record, "bskyPostRef": {"uri": bluesky}} if bluesky else record
        text = json.dumps(sent, sort_keys=True, ensure_ascii=False)
        shown = f"{record['title']}\n{post.url}"
        message = Message(shown, grapheme_length(shown), None)
        return Prepared(
            message,
            idempotency_key=document_rkey(post, self.id, life),
            created_at=created_at or to_iso_ms(dt.datetime.now(dt.UTC)),  # the first attempt (scan bounds)
            description=f"{DOCUMENT} {record['path']}: {record['title']}",
            payload_sha256=message_sha256(text),
            life=life,
        )

    def _bluesky_copy(self, post: Post) -> str | None:
        """The at:// URI of the post announcing this one on Bluesky, when the `bluesky` setting
        names that channel and the ledger had its copy done when the run was planned (handed in
        with the post: `Post.copies`)."""
        bluesky = self.settings.options.get("bluesky")
        uri = post.copies.get(str(bluesky)) if bluesky else None
        return uri if uri and uri.startswith("at://") and f"/{BLUESKY_POST}/" in uri else None

    @property
    def _publication_rkey(self) -> str:
        return publication_rkey(self.site.url, self.id)

    def recognises(self, remote_url: str) -> bool:
        return False  # a document has no page of its own elsewhere: nothing to link "Also on"

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        return None

    # ---------------------------------------------------------------- the publication

    def _publication_uri(self) -> str:
        assert self._session is not None
        return f"at://{self._session['did']}/{PUBLICATION}/{self._publication_rkey}"

    async def _ensure_publication(self, http: Http) -> None:
        """The site's publication record, written once: read at its derived key, and created there
        when it is not. Before each run's first document write (a document must never name a
        publication that does not exist: a run killed between the two left exactly that, and no
        later run wrote it), and when a read finds a document; best effort: one that fails is
        written by the next run that writes. The documents name it by its URI, which needs no
        request (the DID and the derived key)."""
        import httpx

        if self._published is not None:
            return
        assert self._session is not None
        rkey = self._publication_rkey
        record = {
            "$type": PUBLICATION,
            "url": site_base(self.site.url),
            "name": fits(self.site.name or site_base(self.site.url), "name"),
        }
        try:
            current = await self._get_in(http, PUBLICATION, rkey)
            if current.status_code == 400 and "RecordNotFound" in current.text:
                # createRecord at the derived key: read absent just before, so made once (a race
                # with another run fails harmlessly: that run made it).
                body = {"repo": self._session["did"], "collection": PUBLICATION, "rkey": rkey, "record": record}
                current = await self._authed(http, "POST", "com.atproto.repo.createRecord", json=body)
        except httpx.TransportError:
            return
        if current.status_code == 200:
            self._published = self._publication_uri()

    # ---------------------------------------------------------------- send / verify

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.idempotency_key
        failed = self._failed_login or await self._login(http)
        self._failed_login = None
        if failed is not None:
            return failed
        assert self._session is not None
        try:
            publication = self._publication_uri()
            adopted = await self._adopted(http, post, prepared.idempotency_key)
            if adopted is not None:
                return Outcome(Kind.DONE, remote_id=adopted)  # a record has no web page: its URI is its address
            record = await self._with_bluesky_ref(http, post, self.document(post, publication))
            if isinstance(record, Outcome):
                return record
            await self._ensure_publication(http)
            response = await self._authed(
                http,
                "POST",
                "com.atproto.repo.putRecord",
                json={
                    "repo": self._session["did"],
                    "collection": DOCUMENT,
                    "rkey": prepared.idempotency_key,
                    "record": record,
                    "swapRecord": None,
                },
            )
        except httpx.TransportError as exc:
            outcome = transport_outcome(exc)
            return outcome
        except BadAnswer as exc:
            return Outcome(Kind.NOT_SENT, error=f"an unreadable answer before the document was written ({exc})")
        return await self._then_publication(http, self._written(response, http))

    async def _then_publication(self, http: Http, outcome: Outcome) -> Outcome:
        if outcome.kind is Kind.DONE:
            await self._ensure_publication(http)
        return outcome

    def _written(self, response: httpx.Response, http: Http) -> Outcome:
        if response.status_code == 200:
            try:
                uri = optional_text(json_object(response).get("uri"), "uri")
            except BadAnswer as exc:
                return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable answer ({exc}); the document may exist")
            if not uri or not uri.startswith("at://"):
                return Outcome(Kind.AMBIGUOUS, error="200 without the record's uri; the document may exist")
            return Outcome(Kind.DONE, remote_id=uri)
        if response.status_code == 400 and "InvalidSwap" in response.text:
            return Outcome(Kind.AMBIGUOUS, error="400 InvalidSwap: a different record is at our key; read it")
        return status_outcome(response, http.now())

    async def _adopted(self, http: Http, post: Post, rkey: str) -> str | None:
        """A document of this site for this post made by another tool (or by this channel under
        another id): its URI, so that no second document is written. Read once per run with
        listRecords; a listing that fails adopts nothing (the write at our key is still safe)."""
        if self._existing is None:
            self._existing = await self._documents_of_site(http)
        found = self._existing.get(document_path(post, self.site.url))
        return found if found is not None and not found.endswith(f"/{rkey}") else None

    async def _documents_of_site(self, http: Http) -> dict[str, str]:
        assert self._session is not None
        ours = await self._site_identities(http)
        found: dict[str, str] = {}
        for value, uri in await self._listed(http, DOCUMENT):
            if _site_of(value) in ours and isinstance(value.get("path"), str):
                found.setdefault(value["path"], uri)
        return found

    async def _site_identities(self, http: Http) -> set[str]:
        """What a document of this site may have as its `site`: the site's URL, or the URI of a
        publication record in this repository whose `url` is the site's."""
        ours = {site_base(self.site.url)}
        if self._published:
            ours.add(self._published)
        for value, uri in await self._listed(http, PUBLICATION):
            if site_base(str(value.get("url", ""))) == site_base(self.site.url):
                ours.add(uri)
        return ours

    async def _listed(self, http: Http, collection: str) -> list[tuple[dict[str, Any], str]]:
        """Every record of `collection` in the account's repository (bounded), as (value, uri)."""
        assert self._session is not None
        found: list[tuple[dict[str, Any], str]] = []
        cursor: str | None = None
        for _ in range(MAX_LISTED):
            params = {"repo": self._session["did"], "collection": collection, "limit": "100"}
            response = await http.request(
                "GET",
                f"{self._pds_xrpc}/com.atproto.repo.listRecords",
                params={**params, **({"cursor": cursor} if cursor else {})},
            )
            if response.status_code != 200:
                return found
            try:
                body = json_object(response)
            except BadAnswer:
                return found
            records = body.get("records")
            for item in records if isinstance(records, list) else []:
                if isinstance(item, dict) and isinstance(item.get("value"), dict) and isinstance(item.get("uri"), str):
                    found.append((item["value"], item["uri"]))
            cursor = body.get("cursor") if isinstance(body.get("cursor"), str) else None
            if not cursor or not records:
                return found
        return found

    async def _with_bluesky_ref(self, http: Http, post: Post, record: dict[str, Any]) -> dict[str, Any] | Outcome:
        """The document with `bskyPostRef`, a strong reference (URI and CID) to the Bluesky post
        the post was handed with (`_bluesky_copy`), read by getRecord for its CID. A post that is
        gone (RecordNotFound) or not about this post gives no reference; a read that proves
        nothing is an Outcome: nothing written, the next run tries again (the same PDS holds the
        document, so its write would most likely fail too)."""
        import httpx

        uri = self._bluesky_copy(post)
        if uri is None:
            return record
        repo, _, rkey = uri.removeprefix("at://").partition(f"/{BLUESKY_POST}/")
        try:
            response = await self._get_in(http, BLUESKY_POST, rkey, repo)
        except httpx.TransportError as exc:
            return Outcome(
                Kind.NOT_SENT, error=f"the Bluesky post could not be read ({type(exc).__name__}); {UNWRITTEN}"
            )
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return record
        try:
            if response.status_code != 200:
                raise BadAnswer(f"getRecord answered {response.status_code}")
            body = json_object(response)
            cid = optional_text(body.get("cid"), "cid")
        except BadAnswer as exc:
            return Outcome(Kind.NOT_SENT, error=f"the Bluesky post could not be read ({exc}); {UNWRITTEN}")
        if cid and links_to(body.get("value"), post.url):
            return {**record, "bskyPostRef": {"uri": uri, "cid": cid}}
        return record

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        import httpx

        rkey = record.idempotency_key or document_rkey(post, self.id, record.lives)
        failed = await self._login(http)
        if failed is not None:
            return Verdict(Found.UNKNOWN, reason=f"cannot find the account's PDS ({failed.error})")
        try:
            response = await self._get_in(http, DOCUMENT, rkey)
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord failed ({type(exc).__name__})")
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Verdict(Found.ABSENT, reason="getRecord: no document at our key")
        if response.status_code != 200:
            return Verdict(Found.UNKNOWN, reason=f"getRecord answered {response.status_code}")
        try:
            body = json_object(response)
            uri = optional_text(body.get("uri"), "uri")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"getRecord: {exc}")
        value = body.get("value")
        if not self._is_this_post(value, post):
            return Verdict(
                Found.CONFLICT,
                reason=f"the document at our key {rkey} is not {post.url} (its site and path differ)",
            )
        found = uri or f"at://{self._session['did'] if self._session else ''}/{DOCUMENT}/{rkey}"
        await self._ensure_publication(http)  # a send whose answer was lost may have stopped short of it
        return Verdict(Found.FOUND, found)

    def _is_this_post(self, value: Any, post: Post) -> bool:
        """A document proves it is this post by its `site` (this site's URL or publication) and
        its `path`."""
        if not isinstance(value, dict) or value.get("path") != document_path(post, self.site.url):
            return False
        site = _site_of(value)
        own = f"/{PUBLICATION}/{self._publication_rkey}"
        return site == site_base(self.site.url) or site.endswith(own) or site == self._published

    # ---------------------------------------------------------------- edits and removals

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """putRecord at the document's own key with `swapRecord` the CID read just before; a
        document that is gone is not made again (putRecord would create it)."""
        import httpx

        rkey = rkey_of(record)
        failed = await self._login(http)
        if failed is not None:
            return failed
        assert self._session is not None
        try:
            current = await self._get_in(http, DOCUMENT, rkey)
            if current.status_code == 400 and "RecordNotFound" in current.text:
                return Outcome(Kind.AMBIGUOUS, error="getRecord: no document at its key; read again")
            if current.status_code != 200:
                return status_outcome(current, http.now())
            cid = optional_text(json_object(current).get("cid"), "cid")
            new = await self._with_bluesky_ref(http, post, self.document(post, self._publication_uri()))
            if isinstance(new, Outcome):
                return new
            body = {"repo": self._session["did"], "collection": DOCUMENT, "rkey": rkey, "record": new}
            response = await self._authed(http, "POST", "com.atproto.repo.putRecord", json={**body, "swapRecord": cid})
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"an unreadable answer ({exc}); the document may be updated")
        if response.status_code == 400 and "InvalidSwap" not in response.text:
            return status_outcome(response, http.now())
        return await self._then_publication(http, self._written(response, http))

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """getRecord at the document's key: its fields (the Bluesky reference and the publication's
        DID aside) say whether the update happened; RecordNotFound says it is gone."""
        failed = await self._login(http)
        if failed is not None:
            return Copy.UNKNOWN
        response = await self._get_in(http, DOCUMENT, rkey_of(record))
        if response.status_code == 400 and "RecordNotFound" in response.text:
            return Copy.GONE
        if response.status_code != 200:
            return Copy.UNKNOWN
        value = json_object(response).get("value")
        if not isinstance(value, dict):
            return Copy.UNKNOWN
        target = self.document(post, _site_of(value))
        seen = {k: v for k, v in value.items() if k != "bskyPostRef"}
        return Seen(Copy.MATCHES if seen == target else Copy.DIFFERS, self.copy_links(value))

    def copy_links(self, value: dict[str, Any]) -> tuple[str, ...]:
        """A document names its page by `path` under the publication: that page's address."""
        path = value.get("path")
        return (site_base(self.site.url) + path,) if isinstance(path, str) and path.startswith("/") else ()


def _site_of(value: dict[str, Any]) -> str:
    site = value.get("site")
    return site_base(site) if isinstance(site, str) and not site.startswith("at://") else str(site or "")
