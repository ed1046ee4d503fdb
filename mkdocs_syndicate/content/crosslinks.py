"""Where a post was announced, for its own page: the copies the ledger records as out (`done`, or
an edit of one in flight: `linked_record`) with a remote URL, as data for templates
(`page.meta.syndication`) and as a small block of links marked up for IndieWeb readers
(`u-syndication`, `rel="syndication"`, microformats2). The ledger is committed, so the next build
knows every copy without a request.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.safety import one_line, public_text

BLOCK_CLASS = "syndicate-links"  # content.portable leaves this block out of DEV's body
SCRIPT_PATH = "assets/syndicate/comments.js"  # in the built site, with comments: true


def comments_script() -> str:
    """The comments script's text, for the built site's SCRIPT_PATH."""
    from importlib.resources import files

    return (files("mkdocs_syndicate") / "assets" / "syndicate-comments.js").read_text("utf-8")


@dataclass(frozen=True)
class Replies:
    """Where a reader's browser reads a copy's public replies (the comments script)."""

    reader: str  # how the script reads the answer: the channel type ("mastodon", "bluesky")
    url: str
    web: str = ""  # the service's web address, for links to the replies (Bluesky)
    # A thread's later parts (`thread: true`), by the ids the answer names them with (Mastodon's
    # status ids, Bluesky's at:// URIs): they are the post, not replies, and the script leaves
    # them out.
    parts: tuple[str, ...] = ()


def later_parts(record: Record) -> tuple[str, ...]:
    """The ids of a thread's parts after the first, as its record lists them; one with a space
    (a hand-edited ledger) could not be told apart in the page's list, and is no service's id."""
    return tuple(p.remote_id for p in record.parts[1:] if p.remote_id and not any(c.isspace() for c in p.remote_id))


RepliesOf = Callable[[str, Record], "Replies | None"]


def linked_record(record: Record) -> bool:
    """Whether a record names a copy that is out, to link: `done`, or `in_flight` with `op: update`
    (an edit under way, waiting for its settle time or left by a killed run: the copy is public,
    at the id and URL the record keeps), or `op: delete` of a thread's later part (a thread grown
    shorter: part 1, the copy linked, stays out). Not a first send's `in_flight` (no copy is
    proved) nor a delete of part 1 or of a single copy (it may be gone)."""
    if record.state == State.DONE:
        return True
    return record.state == State.IN_FLIGHT and (
        record.op == "update" or (record.op == "delete" and record.part is not None and record.part > 1)
    )


@dataclass(frozen=True)
class Copy:
    channel: str  # the channel id, as in the ledger
    service: str  # what readers are shown: the channel's `label`, else its service's name
    url: str
    replies: Replies | None = None

    def as_meta(self) -> dict[str, str]:
        return {"channel": self.channel, "service": self.service, "url": self.url}


def labels(raw_channels: Any, services: Mapping[str, str]) -> dict[str, str]:
    """Channel id → what links call it: its `label:`, else its service's name (`services`: type →
    name), in the order the channels are configured. Read from the raw settings, which are
    checked elsewhere: a channel that is not a mapping of a known type is left out."""
    found: dict[str, str] = {}
    for channel, values in (raw_channels or {}).items() if isinstance(raw_channels, dict) else ():
        if isinstance(values, dict) and values.get("type") in services:
            label = values.get("label")
            label = label.strip() if isinstance(label, str) else ""
            found[str(channel)] = label or services[values["type"]]
    return found


MAX_COPY_URL = 2_048  # what a post page links to; the ledger is hand-editable, answers are a server's

OwnUrl = Callable[[str, str], bool]  # (channel id, URL): is the URL on that channel's own service?


@dataclass
class Vetting:
    """Which copies a post page may link, as the channel's own (rel=syndication, named after its
    service): a URL a hand-edited ledger or a server's answer put there is linked only when it is
    https (http only on a loopback host: the sandbox, a local test server) on the channel's own
    service, and at most MAX_COPY_URL characters. Each copy left out is said once, by `warn`."""

    is_own: OwnUrl
    sandbox: bool = False  # a sandbox build: the emulators' loopback links are the copies
    warn: Callable[[str], None] | None = None
    _said: set[tuple[str, str]] = field(default_factory=set)

    def refusal(self, channel: str, url: str) -> str | None:
        """Why `url` is not linked as `channel`'s copy, or None."""
        from urllib.parse import urlsplit

        if len(url) > MAX_COPY_URL:
            return f"its URL is {len(url)} characters long (at most {MAX_COPY_URL})"
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError:
            return "its URL is not a URL"
        if "@" in parts.netloc:
            return "its URL has a user name or password in it"
        if parts.scheme not in ("https", "http") or not host:
            return "its URL is not an https:// link"
        if self.sandbox and _is_loopback(host):
            return None
        if parts.scheme == "http" and not _is_loopback(host):
            return "its URL is plain http:// (https:// only)"
        if not self.is_own(channel, url):
            return f"its URL is not on {channel}'s own service (host {host})"
        return None

    def linked(self, post: str, channel: str, url: str) -> bool:
        why = self.refusal(channel, url)
        if why is not None and self.warn is not None and (post, channel) not in self._said:
            self._said.add((post, channel))
            self.warn(one_line(f"{post}: the {channel} copy is not linked on the post's page: {why}"))
        return why is None


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def copies(
    records: Mapping[str, Record] | None,
    labels: Mapping[str, str],
    replies_of: RepliesOf | None = None,
    vetting: Vetting | None = None,
    post: str = "",
) -> list[Copy]:
    """A post's copies (`records`: its ledger records by channel), in the order the channels are
    configured (`labels`: channel id → label); a channel no longer configured, or a pair without
    a copy out (`linked_record`) or without a URL, shows nothing; with `vetting`, neither does a
    URL not on its channel's own service (`post` names the post in the warning). With
    `replies_of`, each copy says where its replies are read."""
    if records is None:
        return []
    found = []
    for channel, label in _with_lanes(labels, records):
        record = records.get(channel)
        if (
            record is not None
            and linked_record(record)
            and _is_web_url(record.remote_url)
            and (
                len(str(record.remote_url)) <= MAX_COPY_URL
                if vetting is None
                else vetting.linked(post, channel, str(record.remote_url))
            )
        ):
            found.append(
                Copy(
                    channel,
                    label,
                    str(record.remote_url),
                    replies_of(channel, record) if replies_of is not None else None,
                )
            )
    return found


def _with_lanes(labels: Mapping[str, str], records: Mapping[str, Record]) -> list[tuple[str, str]]:
    """Each configured channel, then its lanes' records (`<id>@<host>`: Nostr's `relays:`), each
    lane labelled with its host so that two relays' copies are told apart on the page."""
    found = []
    for channel, label in labels.items():
        found.append((channel, label))
        lanes = sorted(key for key in records if key.startswith(f"{channel}@") and key not in labels)
        found += [(lane, f"{label} ({lane[len(channel) + 1 :]})") for lane in lanes]
    return found


def all_copies(posts: Mapping[str, Mapping[str, Record]], labels: Mapping[str, str]) -> set[tuple[str, Copy]]:
    """Every post's copies, to tell whether a run added any."""
    return {(key, copy) for key, records in posts.items() for copy in copies(records, labels)}


def _replies_attributes(copy: Copy) -> str:
    if copy.replies is None:
        return ""
    web = f' data-web="{html.escape(copy.replies.web)}"' if copy.replies.web else ""
    parts = f' data-parts="{html.escape(" ".join(copy.replies.parts))}"' if copy.replies.parts else ""
    return (
        f' data-service-type="{html.escape(copy.replies.reader)}" data-replies="{html.escape(copy.replies.url)}"'
        f"{web}{parts}"
    )


def _is_web_url(url: str | None) -> bool:
    return isinstance(url, str) and url.startswith(("https://", "http://"))


def without_block(page_html: str) -> str:
    """A post's content without the block this plugin appended to it (its copies change after
    every announcement; the post did not)."""
    head, found, _ = page_html.rpartition(f'\n<aside class="{BLOCK_CLASS}">')
    return head if found else page_html


def block_html(found: Iterable[Copy], lead: str = "Also on:", script_url: str | None = None) -> str:
    """`<aside class="syndicate-links">Also on: <a …>Mastodon</a> · <a …>DEV</a></aside>`, escaped;
    with `script_url`, links whose replies can be read say where, and the comments script loads."""
    found = list(found)
    links = " · ".join(
        f'<a class="u-syndication" rel="syndication" href="{html.escape(copy.url)}"'
        f"{_replies_attributes(copy) if script_url else ''}>{html.escape(public_text(copy.service))}</a>"
        for copy in found
    )
    if not links:
        return ""
    # The page keeps its scrollbar's place from the first paint: replies that make a short page
    # scroll would otherwise move all of it sideways as they appear (a layout shift).
    script = (
        f'<style>html{{scrollbar-gutter:stable}}</style><script src="{html.escape(script_url)}" defer></script>'
        if script_url and any(copy.replies for copy in found)
        else ""
    )
    return f'<aside class="{BLOCK_CLASS}"><p>{html.escape(public_text(lead))} {links}</p>{script}</aside>'
