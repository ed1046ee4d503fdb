"""The Post model and which posts get announced. No MkDocs here: the plugin fills `Post`s in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mkdocs_syndicate.content.pages import REMOVED_FLAG
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.safety import public_text
from mkdocs_syndicate.timeutil import from_iso


@dataclass(frozen=True)
class ChannelOverride:
    """Front matter `syndicate: {channel_id: ...}`: False opts out, `text` replaces the template."""

    enabled: bool = True
    text: str | None = None


@dataclass(frozen=True)
class Post:
    key: str  # ledger key: URL path relative to site_url, or front matter syndicate_id
    url: str  # absolute canonical URL
    title: str
    date: dt.datetime  # timezone-aware
    source: str = ""  # docs-relative source path, for error messages
    description: str = ""
    tags: tuple[str, ...] = ()
    draft: bool = False
    body_html: str = ""  # the post's content as the site shows it (MkDocs' HTML, a feed's content)
    image: str | None = None  # absolute URL of the post's image, if any (content/images.py chose it)
    image_alt: str | None = None  # its alt text: None when none was given, "" when decorative on purpose
    image_in_body: bool = False  # the image is the first the post shows (no front matter or feed image)
    opted_out: bool = False  # front matter `syndicate: false`
    overrides: dict[str, ChannelOverride] = field(default_factory=dict)
    excerpt_source: str = ""  # without a description: the Markdown of its excerpt (made text on use)
    body_missing: bool = False  # the source has no body to give (a feed entry with a summary only)
    code_languages: dict[str, str] = field(default_factory=dict)  # first line of code → language (source)
    src: str = ""  # the source file relative to docs_dir (posts the plugin finds): the same post after a move
    pin: str | None = None  # front matter `syndicate_id`, when the post has one
    # Its done copies as the ledger had them when the run was planned (engine/plan.py): channel
    # id → the copy's remote id. What one channel's message may depend on of another's (a
    # standard.site document's bskyPostRef names the Bluesky post), handed in with the post, so
    # that no channel reads the ledger, and a copy made later changes the message: an edit.
    copies: dict[str, str] = field(default_factory=dict)
    # The addresses it was announced under before a move (its ledger entry's URL and aliases, at
    # planning): a copy made then links there, and is still this post's (content/ownership.py).
    former_urls: tuple[str, ...] = ()
    # A feed's own id for the entry (Atom `id`, RSS `guid`, JSON Feed `id`): the same post when its
    # link changes (engine/moves.py).
    entry_id: str | None = None
    # Channel id → the hashes of the parts its thread copy has (the ledger's, at planning): a
    # corrected thread is cut where it was cut before, wherever that still fits (content/resplit.py).
    thread_parts: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # What every channel publishes of a post (a message, Forem's title and description, a
        # Bluesky card): never a feed's escape sequences, control characters or bidi overrides.
        object.__setattr__(self, "title", public_text(self.title))
        object.__setattr__(self, "description", public_text(self.description))
        object.__setattr__(self, "tags", tuple(public_text(tag) for tag in self.tags))
        if self.image_alt:
            object.__setattr__(self, "image_alt", public_text(self.image_alt))

    @property
    def summary(self) -> str:
        """What messages say about the post: its description, else its excerpt as plain text
        (converted only for posts that are announced, not for every post of every build)."""
        if self.description or not self.excerpt_source:
            return self.description
        from mkdocs_syndicate.content.portable import excerpt_text

        return excerpt_text(self.excerpt_source, self.title)

    def wants(self, channel_id: str) -> bool:
        if self.opted_out:
            return False
        override = self.override(channel_id)
        return override is None or override.enabled

    def override(self, channel_id: str) -> ChannelOverride | None:
        """Front matter's `syndicate: {channel_id: …}` for this channel; a lane (`nostr@relay.host`,
        one of a channel's relays) takes its channel's unless it is named itself."""
        found = self.overrides.get(channel_id)
        if found is None and "@" in channel_id:
            found = self.overrides.get(channel_id.rpartition("@")[0])
        return found


def parse_syndicate_meta(value: Any, source: str) -> tuple[bool | None, dict[str, ChannelOverride]]:
    """Read front matter `syndicate:` → (True/False/None for the whole post, per-channel overrides)."""
    if value is None:
        return None, {}
    if isinstance(value, bool):
        return value, {}
    if value == REMOVED_FLAG:  # taken down by its author: never announced (engine/intent.py deletes)
        return False, {}
    if not isinstance(value, dict):
        raise PostError(
            f"{source}: front matter 'syndicate' must be true, false, '{REMOVED_FLAG}' or a mapping of "
            f"channel ids, not {type(value).__name__}"
        )
    overrides: dict[str, ChannelOverride] = {}
    for channel, setting in value.items():
        where = f"{source}: front matter 'syndicate.{channel}'"
        if isinstance(setting, bool):
            overrides[str(channel)] = ChannelOverride(enabled=setting)
        elif isinstance(setting, dict):
            unknown = set(setting) - {"text"}
            if unknown:
                raise PostError(f"{where}: unknown key {sorted(unknown)[0]!r} (only 'text')")
            text = setting.get("text")
            if text is not None and not isinstance(text, str):
                raise PostError(f"{where}.text must be text")
            if text is not None and not text.strip():
                raise PostError(
                    f"{where}.text is empty; write the message, or use "
                    f"'syndicate: {{{channel}: false}}' to skip this channel"
                )
            overrides[str(channel)] = ChannelOverride(enabled=True, text=text)
        else:
            raise PostError(f"{where} must be false or {{text: ...}}")
    return True, overrides


MAX_KEY = 512
_CONTROL = lazy_compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_syndicate_id(key: str, source: str) -> str:
    """A pinned ledger key: one printable line of sane length (it names records, commits, logs)."""
    if len(key) > MAX_KEY:
        raise PostError(f"{source}: front matter 'syndicate_id' is {len(key)} characters; at most {MAX_KEY}")
    if _CONTROL.search(key) or key != key.strip():
        raise PostError(
            f"{source}: front matter 'syndicate_id' must be one line without control characters or surrounding spaces"
        )
    return key


_SURROGATE = lazy_compile(r"[\ud800-\udfff]")
MAX_URL = 2048


def check_text(post: Post) -> None:
    """Refuse, before any request, what no service and no ledger can carry: a lone surrogate
    (`&#xD800;` in a feed, `"\\ud800"` in JSON or YAML front matter is not text) and keys or URLs
    longer than any real page's."""
    if len(post.key) > MAX_KEY:
        raise PostError(
            f"{post.source}: its ledger key ({post.key[:60]!r}…) is {len(post.key)} characters; at most "
            f"{MAX_KEY}: give it a front matter 'syndicate_id', or a shorter URL"
        )
    if len(post.url) > MAX_URL:
        raise PostError(f"{post.source}: its URL is {len(post.url)} characters; at most {MAX_URL}")
    texts = {
        "key": post.key,
        "url": post.url,
        "title": post.title,
        "description": post.description,
        "body": post.body_html,
        "image": post.image or "",
        "image_alt": post.image_alt or "",
        "excerpt": post.excerpt_source,
        **{f"tag {n}": tag for n, tag in enumerate(post.tags, 1)},
        **{f"syndicate.{channel}.text": o.text or "" for channel, o in post.overrides.items()},
    }
    for name, value in texts.items():
        found = _SURROGATE.search(value)
        if found:
            raise PostError(
                f"{post.source}: its {name} holds a lone surrogate (U+{ord(found.group()):04X}) at "
                f"character {found.start()}, which is not text and cannot be sent or recorded; "
                "fix the source"
            )


def as_datetime(value: Any, source: str) -> dt.datetime:
    """Front matter dates (date, datetime or ISO text) → aware datetime (naive means UTC)."""
    if isinstance(value, dict):  # Material's `date: {created: ..., updated: ...}`
        value = value.get("created")
    if isinstance(value, str):
        try:
            value = from_iso(value.strip())
        except ValueError:
            raise PostError(f"{source}: front matter date {value!r} is not an ISO date") from None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    raise PostError(f"{source}: a post needs a date (front matter 'date: 2026-11-28')")


def announceable(posts: Iterable[Post], now: dt.datetime, since: dt.datetime | None) -> list[Post]:
    """Drafts, future posts, posts before `since` and opted-out posts never go out; oldest first."""
    chosen = [
        p for p in posts if not p.draft and not p.opted_out and p.date <= now and (since is None or p.date >= since)
    ]
    seen: dict[str, Post] = {}
    for post in chosen:
        check_text(post)
        if post.key in seen:
            raise PostError(
                f"{post.source} and {seen[post.key].source} have the same syndication key "
                f"{post.key!r}; give one of them a front matter 'syndicate_id'"
            )
        seen[post.key] = post
    return sorted(chosen, key=lambda p: (p.date, p.key))
