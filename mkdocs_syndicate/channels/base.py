"""The one small interface every channel type implements, and what its calls and reads answer.

A channel turns a post into a request and a response into an `Outcome`; it never touches the
ledger and never sleeps. The runner owns state, pacing and retries.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mkdocs_syndicate.config.channels import ChannelSettings, Option, Site
from mkdocs_syndicate.content.images import PostImage
from mkdocs_syndicate.content.messages import Message
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.ledger.schema import Media, Mention, Part, Record

if TYPE_CHECKING:  # HTTP is loaded only when something is sent: a plan imports none of it
    import httpx


class Kind(enum.Enum):
    DONE = "done"  # the remote confirmed
    REFUSED = "refused"  # a definite no (4xx): failed, do not retry this run
    NOT_SENT = "not_sent"  # provably never left (connect error): failed, may retry
    RATE_LIMITED = "rate_limited"  # 429: failed with the time to retry
    AMBIGUOUS = "ambiguous"  # may or may not have happened: stays in_flight, verify
    AUTH = "auth"  # credentials refused: failed, and the lane stops
    ACCEPTED = "accepted"  # received, confirmed only later (IndexNow 202): resend next run
    GONE = "gone"  # it was made, and its author deleted it: skipped, never resent


@dataclass(frozen=True)
class Outcome:
    kind: Kind
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None
    retry_after: float | None = None  # seconds, from the server's hint
    code: int | None = None  # the service's own error code, where it has them (Weibo)
    ref: str | None = None  # what else names the copy for a reply to it (Bluesky's cid)
    media: Media | None = None  # an upload's (Channel.upload): what the ledger keeps to reuse it
    note: str | None = None  # DONE: what the record and the report say of the copy (a suspect URL)
    mentions: tuple[Mention, ...] | None = None  # Webmention's: each target told, and its answer (the record's)


class Found(enum.Enum):
    FOUND = "found"
    ABSENT = "absent"  # proved not there: safe to send again
    UNKNOWN = "unknown"  # cannot tell: an at-most-once pair needs a human
    CONFLICT = "conflict"  # not ours, and sending again cannot succeed: failed, with a reason


class Copy(enum.Enum):
    """A copy read by its own id (to settle an update or a delete whose outcome is unknown)."""

    MATCHES = "matches"  # it says what the update was to make it say
    DIFFERS = "differs"  # it is there, saying something else (the update did not happen)
    GONE = "gone"  # the service's documented answer: no such copy (or its author withdrew it)
    UNKNOWN = "unknown"  # the read proved nothing
    NOT_OURS = "not_ours"  # there, but another post's copy (its link, key or canonical URL say so)


class Presence(enum.Enum):
    """A copy read by its own id to settle a delete whose outcome is unknown."""

    PRESENT = "present"  # still there: the delete did not happen
    GONE = "gone"  # the service's documented answer: no such copy
    UNKNOWN = "unknown"  # the read proved nothing
    NOT_OURS = "not_ours"  # there, but another post's copy: never deleted for this post


@dataclass(frozen=True)
class WriteLimit:
    """A service's limit on one kind of write: `count` per `period` seconds, in windows aligned
    to the epoch (as Rack::Attack counts). The run keeps within it (engine/budgets.py)."""

    count: int
    period: float
    service: str  # who sets it, for the run's line ("Mastodon")


@dataclass(frozen=True)
class Seen:
    """What a read of a copy by its own id found (`Channel.read_copy`, `read_presence`), with the
    links the copy shows: the engine changes a copy only once those prove it is this post's
    (content/ownership.py). A read that returns the bare finding offers no such evidence."""

    found: Copy | Presence
    links: tuple[str, ...] = ()
    # The one page the copy is about by a field of the service's own (DEV's canonical_url, a
    # Bluesky link card's uri), where it has one: it alone decides whose copy this is.
    about: str | None = None


class MediaState(enum.Enum):
    """An uploaded image read by its own id (Channel.read_media), before a status uses it."""

    READY = "ready"  # there, and usable now
    PROCESSING = "processing"  # there, still being processed (Mastodon's 206): wait, then read again
    GONE = "gone"  # the service's documented answer: no such media (removed unused): upload again
    FAILED = "failed"  # the service could not process it (Mastodon's 422): never shown; upload again
    UNKNOWN = "unknown"  # the read proved nothing: the stored id is used, never a second upload


class Health(enum.Enum):
    """What a credential check found (`Channel.check_credentials`)."""

    OK = "ok"  # the credential works and has what sending needs
    EXPIRING = "expiring"  # it works now and stops before the next weekly check: renew it
    FAILING = "failing"  # sending would fail (revoked, expired, wrong scopes, account gone)
    UNKNOWN = "unknown"  # the check proved nothing (the service unreachable, an unreadable answer)
    NOT_CHECKED = "not_checked"  # this channel type has no check (or needs no credential)

    @property
    def needs_a_person(self) -> bool:
        return self in (Health.EXPIRING, Health.FAILING, Health.UNKNOWN)


@dataclass(frozen=True)
class CredentialCheck:
    """One channel's credential check: never a secret in any field (the caller redacts too)."""

    health: Health
    account: str = ""  # whom the credential acts as (@me@instance, a handle, a DEV username)
    problem: str = ""  # what is wrong, in the service's words where it has them
    action: str = ""  # what a person does about it
    details: tuple[str, ...] = ()  # what else the read told: scopes, expiry, rate limit left
    expires_in: float | None = None  # seconds, where the service says

    def to_json(self) -> dict[str, Any]:
        return {
            "health": self.health.value,
            "account": self.account,
            "problem": self.problem,
            "action": self.action,
            "details": list(self.details),
            "expires_in": self.expires_in,
        }


EXPIRY_WARNING = 7 * 86400.0
"""A credential that expires within this is EXPIRING: the sample workflow checks weekly, so it
would stop before the next check."""


@dataclass(frozen=True)
class Verdict:
    found: Found
    remote_id: str | None = None
    remote_url: str | None = None
    reason: str = ""
    ref: str | None = None  # as Outcome.ref, for a copy a read found


class Http(Protocol):
    """What a channel may use to talk to its service: the runner's paced client."""

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response: ...

    def now(self) -> float: ...  # wall clock, epoch seconds (the runner's clock, fake in tests)


@dataclass(frozen=True)
class Prepared:
    """What a send of this pair would put on the wire, computed without any network."""

    message: Message | None
    idempotency_key: str | None = None
    created_at: str | None = None
    description: str = ""
    payload_sha256: str | None = None  # when the payload is more than the message text
    replay: bool = False  # the key was sent before, by a request whose outcome is unknown
    image: PostImage | None = None  # `uploads` types: the post's image, uploaded before the status
    life: int = 0  # the pair's life (Record.life) its client ids were derived for: a part's are too
    media: tuple[Media, ...] = ()  # ...and what its upload made, handed to send (engine/uploads.py)

    @property
    def sha256(self) -> str | None:
        return self.payload_sha256 or (self.message.sha256 if self.message else None)

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.message.notes if self.message else ()


class Channel:
    """One service. A channel turns a post into a request and an answer into an Outcome, and reads
    the remote side when asked; it never touches the ledger and never sleeps (the runner does).

    Declared per type (class attributes):
      type_name          what `channels.<id>.type` says
      options            its settings, beside the common ones (type, delivery, min_interval, ...)
      default_delivery   "at_most_once" (public posts) or "at_least_once" (pings)
      default_min_interval  seconds between two of its requests
      batched            one request carries many posts (IndexNow): send_batch/batches, not send
      repeat_safe        a repeat of a request is a no-op by construction (Bluesky)
      rate_limit_checked_first  the service checks its rate limit before it makes anything, so
                         its 429 proves nothing was made: retried after the wait, not read first

    Methods a type overrides: prepare (always), send or send_batch (+ batches), verify (for
    at-most-once), and as needed preview, site_files, secrets, warm_up, check_credentials, close.
    """

    type_name: ClassVar[str]
    default_delivery: ClassVar[str] = "at_most_once"
    default_min_interval: ClassVar[float] = 0.0
    options: ClassVar[Mapping[str, Option]] = {}
    batched: ClassVar[bool] = False
    repeat_safe: ClassVar[bool] = False
    rate_limit_checked_first: ClassVar[bool] = False
    edits_in_place: ClassVar[bool] = False  # implements update and read_copy: `edits: update` is its default
    deletes: ClassVar[bool] = False  # implements delete and read_presence: `removals: delete` is allowed
    default_removals: ClassVar[str] = "keep"  # Webmention's is "delete": a removed page is told to its targets
    web_copies: ClassVar[bool] = True  # a done copy has a web page (remote_url); False: its id is all (standard.site)
    threads: ClassVar[bool] = False  # implements send_part and read_part: `thread: true` is allowed
    delete_limit: ClassVar[WriteLimit | None] = None  # the service's budget of deletes (Mastodon's)
    status_limit: ClassVar[WriteLimit | None] = None  # ... of copies made or edited, a thread's parts each
    upload_limit: ClassVar[WriteLimit | None] = None  # ... of media uploads
    uploads: ClassVar[bool] = False  # implements upload and read_media: `Prepared.image` goes before the status

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        self.settings = settings
        self.site = site

    @property
    def id(self) -> str:
        return self.settings.id

    # ---------------------------------------------------------------- without network

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        """The exact payload for this post, computed without any network (so plan mode shows it and
        a post that cannot be sent fails the run before the first request). `created_at`: the
        pair's first attempt, for channels that freeze it into the payload. `life`: the pair's
        life (`Record.life`), which every id the channel chooses is derived from with the post's
        URL and the channel id (`client_id(..., life=life)`), set on the result's `life`."""
        raise NotImplementedError

    def preview(self, post: Post, prepared: Prepared) -> str:
        """What `mkdocs-syndicate plan` shows of the payload (the message, by default, and the
        image an `uploads` type sends with it)."""
        if prepared.image is None:
            return prepared.description
        alt = f"alt text: {prepared.image.alt}" if prepared.image.alt else "no alt text"
        return f"{prepared.description}\n[image {prepared.image.filename}, {alt}]"

    def site_files(self) -> list[tuple[str, str]]:
        """Files this channel adds to the built site, as (path in the site, text): they deploy
        with it (IndexNow's key file)."""
        return []

    def secrets(self) -> list[Any]:
        """Everything to redact from errors: configured credentials, plus any session tokens."""
        return list(self.settings.secrets())

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        """Where a reader's browser can read the public replies to a copy, with no token (the
        post page's comments script); None: the service has no such read."""
        return None

    def recognises(self, remote_url: str) -> bool:
        """Whether a post at `remote_url` would be on this channel's account (its host, its handle):
        how a renamed channel id is told from a new one."""
        return False

    # ---------------------------------------------------------------- over the network

    async def warm_up(self, http: Http) -> None:
        """Whatever a send needs first and that changes nothing remote (a session), fetched while
        the pair's in_flight record is being pushed; never raises (the send reports failures)."""

    async def learn_limits(self, http: Http, fresh: list[Prepared]) -> bool:
        """Before a lane's first send: read what the service says about its own limits, if that
        could change the messages prepared for new pairs (`fresh`). True when the channel's rules
        changed and those messages must be prepared again. Never raises."""
        return False

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        """One request for one post (unless `batched`)."""
        raise NotImplementedError

    def batches(self, posts: list[Post]) -> list[list[Post]]:
        """`batched` channels: how pending posts are grouped into requests."""
        return [posts]

    async def send_batch(self, http: Http, posts: list[Post]) -> Outcome:
        """`batched` channels: one request for the posts of a batch, one outcome for them all."""
        raise NotImplementedError

    async def send_batch_after(self, http: Http, posts: list[Post], before: list[Record | None]) -> Outcome:
        """`batched` channels whose request depends on what an earlier one did (Webmention tells
        a target the post no longer links to): `send_batch`, with each post's record as it was
        before this attempt's in_flight write (`before`, in the order of `posts`)."""
        return await self.send_batch(http, posts)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        """Read the remote side for an in_flight `record`: always a real read, never an inference
        (an idempotency key is not a proof). `after` is the ambiguous outcome that made us ask
        (None when resolving an earlier run's record). Scan bounds come from `record.created_at`."""
        return Verdict(Found.UNKNOWN, reason=f"{self.type_name} has no way to read back a post")

    async def send_part(
        self, http: Http, post: Post, prepared: Prepared, number: int, sent: tuple[Part, ...], replay: bool
    ) -> Outcome:
        """`threads` types: post part `number` (2, 3, ...) of `prepared.message.parts` as a reply
        to `sent[-1]`, in the thread whose first part is `sent[0]`, under a client id derived from
        (post URL, channel id, number) (part 1's is the pair's own). `replay`: that id was sent
        before by a request whose outcome is unknown. DONE carries the part's id, URL and `ref`."""
        raise NotImplementedError

    async def read_part(self, http: Http, post: Post, record: Record, number: int) -> Verdict:
        """`threads` types: read whether part `number` of the thread exists (the parts before it
        are `record.parts`): FOUND with its id, URL and `ref`; ABSENT only when the read proves it
        was not made; UNKNOWN otherwise. Scan bounds come from `record.created_at`."""
        return Verdict(Found.UNKNOWN, reason=f"{self.type_name} has no way to read back a thread's part")

    async def upload(self, http: Http, post: Post, image: PostImage) -> Outcome:
        """`uploads` types: upload the post's image (made to fit the service's limits), with its
        alt text where the service keeps it on the media. DONE (or ACCEPTED while the service
        still processes it) with `media`, what a status names it by; REFUSED when it cannot be
        brought under the service's limits, saying the numbers. Nothing is posted."""
        raise NotImplementedError

    async def read_media(self, http: Http, media: Media) -> MediaState:
        """`uploads` types: read an uploaded image by its own id before a status uses it."""
        return MediaState.UNKNOWN

    async def remove_media(self, http: Http, media: Media) -> MediaState:
        """`uploads` types whose service deletes an upload no status shows: GONE once it is."""
        return MediaState.UNKNOWN

    async def describe_media(self, http: Http, media: Media, image: PostImage) -> MediaState:
        """`uploads` types that keep the alt text on the media (Mastodon): set `image.alt` on a
        stored upload a send reuses (the author may have changed it since). Read's states."""
        return MediaState.READY

    def part_copy(self, record: Record, number: int) -> Record:
        """`threads` types: the record as it names part `number` (of `record.parts`) alone, for
        `delete` and `read_presence` of that part, and the default `update_part`. A type whose
        parts carry a client id of their own (Matrix's marker) sets it as `idempotency_key`. The
        image is part 1's: a later part names no media."""
        part, media = record.parts[number - 1], record.media if number == 1 else ()
        return replace(
            record,
            remote_id=part.remote_id,
            remote_url=part.remote_url,
            message_sha256=part.message_sha256,
            parts=(),
            media=media,
        )

    def part_prepared(self, prepared: Prepared, number: int) -> Prepared:
        """Part `number` of a thread as a one-message `Prepared`: the first keeps its card and image."""
        message = prepared.message
        assert message is not None
        text = message.texts[number - 1]
        one = replace(message, text=text, parts=())
        if number == 1:
            return replace(prepared, message=one, description=text)
        return replace(prepared, message=one, description=text, payload_sha256=None, image=None, media=())

    async def update_part(self, http: Http, post: Post, prepared: Prepared, record: Record, number: int) -> Outcome:
        """`threads` types that edit in place: make part `number` say its text in `prepared` now,
        its place in the thread (what it replies to) unchanged. By default `update` of that part."""
        return await self.update(http, post, self.part_prepared(prepared, number), self.part_copy(record, number))

    async def read_part_copy(
        self, http: Http, post: Post, record: Record, prepared: Prepared, number: int
    ) -> Copy | Seen:
        """`threads` types that edit in place: read part `number` by its own id, to settle an update
        of it whose outcome is unknown. By default `read_copy` of that part."""
        return await self.read_copy(http, post, self.part_copy(record, number), self.part_prepared(prepared, number))

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """`edits_in_place` types: make the copy at `record.remote_id` say `prepared` now. A repeat
        is harmless (it sets the same text); it must never create a copy."""
        raise NotImplementedError

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy | Seen:
        """`edits_in_place` types: read the copy at `record.remote_id` by its own id, before an
        edit (is it there, and this post's?), after it (does it show `prepared` now?) and to settle
        one whose outcome is unknown: does it say `prepared`, something else, or is it gone? A
        `Seen` with the links the copy shows lets the engine prove whose copy it is. A type that
        does not override this cannot prove its edits: they are taken on the service's answer."""
        return Copy.UNKNOWN

    async def delete(self, http: Http, record: Record) -> Outcome:
        """`deletes` types: delete the copy at `record.remote_id` (its own id, never a search).
        DONE when the service confirmed; GONE when its documented answer says there is no such
        copy (deleted before: the goal is met). A 404 without that proof is AMBIGUOUS. A repeat
        is harmless. The post may no longer exist, so only the record is given."""
        raise NotImplementedError

    async def read_presence(self, http: Http, record: Record) -> Presence | Seen:
        """`deletes` types: read the copy at `record.remote_id` by its own id, before a delete (is
        it this post's?), after it (is it gone?) and to settle one whose outcome is unknown. A
        type that does not override this cannot prove its deletes: taken on the service's answer."""
        return Presence.UNKNOWN

    @property
    def reads_copies(self) -> bool:
        """Whether this type reads its copies back (overrides `read_copy`): its edits are proved."""
        return type(self).read_copy is not Channel.read_copy

    @property
    def reads_presence(self) -> bool:
        """Whether this type reads a copy's presence back (overrides `read_presence`)."""
        return type(self).read_presence is not Channel.read_presence

    async def check_credentials(self, http: Http) -> CredentialCheck:
        """One authenticated read that proves the credential works and has what sending needs,
        never a write (`mkdocs-syndicate doctor`, and a send whose first request was refused with
        401/403). Never raises: a transport error or an unreadable answer is Health.UNKNOWN."""
        return CredentialCheck(Health.NOT_CHECKED, problem=f"{self.type_name} has no credential check")

    async def close(self) -> None:
        """End any session opened during the run."""
