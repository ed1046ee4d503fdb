"""What a service holds, read from its own state after an event: the copies and thread parts it
shows, and the uploads it keeps that no copy names. One shape for every service, whether read
from an emulator's snapshot or from a real server's API, so the checks are the same for both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from crashsite import delivered_urls

from mkdocs_syndicate.sandbox.matrix import MatrixEmulator
from mkdocs_syndicate.sandbox.matrix_events import Room

# A Matrix room's view needs no server: `received` reads only the state it is handed (crashsite too).
_MATRIX = object.__new__(MatrixEmulator)


@dataclass(frozen=True)
class Held:
    """One copy or thread part as the service shows it."""

    id: str  # as the ledger records it
    announces: str  # the post URL it links to
    text: str
    reply_to: str = ""  # the id of what it replies to: a thread's later part
    images: tuple[str, ...] = ()  # the alt text (or caption) of each image it shows
    live: bool = True  # False: deleted, redacted or unpublished, though the service keeps a trace


@dataclass
class Holdings:
    held: list[Held] = field(default_factory=list)
    unnamed_uploads: list[str] | None = None  # None: the service keeps no upload that no copy names
    pings: list[str] = field(default_factory=list)  # an at-least-once type's deliveries: one URL a time
    # A feed's hub (WebSub): what each feed it fetched after a ping listed; None for other types.
    fetched: list[list[str]] | None = None

    def live(self, urls: set[str]) -> list[Held]:
        """The first posts (not thread parts) shown for any of these post URLs."""
        return [h for h in self.held if h.live and not h.reply_to and h.announces in urls]

    def replies_to(self, ids: set[str]) -> list[Held]:
        return [h for h in self.held if h.live and h.reply_to in ids]


def _alts(item: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(image.get("alt") or "") for image in item.get("images") or [])


def _generic(state: dict[str, Any], emulator: Any) -> list[Held]:
    return [
        Held(
            str(item.get("remote_id", item["id"])),
            str(item.get("announces") or ""),
            str(item.get("text") or ""),
            str(item.get("in_reply_to_id") or item.get("in_reply_to") or ""),
            _alts(item),
            not item.get("deleted"),
        )
        for item in emulator.received(state, "")
    ]


def _mastodon(state: dict[str, Any], emulator: Any) -> Holdings:
    # Mastodon keeps an unattached upload for a day (MediaCleanupScheduler): one no status names.
    unattached = [m["id"] for m in state.get("media", {}).values() if not m.get("status_id")]
    return Holdings(_generic(state, emulator), unattached)


def _matrix(state: dict[str, Any], emulator: Any) -> Holdings:
    return matrix_holdings(state)


def matrix_holdings(state: dict[str, Any]) -> Holdings:
    """The room as Element shows it: an edited message with its latest content (an image edited
    into text shows no image), a redacted one deleted. The content repository keeps every
    upload: one no event of the room names is an orphan."""
    room = Room(state.get("events", []))
    latest = {}
    for shown in room.timeline():
        edit = room.latest_edit(shown["event"])
        new = edit["content"].get("m.new_content") if edit is not None else None
        latest[shown["event"]["event_id"]] = new if isinstance(new, dict) else shown["event"]["content"]
    held = [
        replace(
            h, images=(str(latest[h.id].get("body") or ""),) if latest.get(h.id, {}).get("msgtype") == "m.image" else ()
        )
        for h in _generic(state, _MATRIX)
    ]
    named = set()
    for event in state.get("events", []):
        content = event.get("content") or {}
        for url in (content.get("url"), (content.get("m.new_content") or {}).get("url")):
            if url:
                named.add(str(url).rsplit("/", 1)[-1])
    return Holdings(held, [m for m in state.get("media", {}) if m not in named])


def _forem(state: dict[str, Any], emulator: Any) -> Holdings:
    # An unpublished article is its author's draft, not a public copy.
    articles = {str(a["id"]): a for a in state.get("articles", [])}
    return Holdings(
        [
            Held(
                h.id,
                h.announces,
                f"{h.text}\n\n{articles[h.id].get('description', '')}",
                live=bool(articles[h.id].get("published")),
            )
            for h in _generic(state, emulator)
        ]
    )


def _standard(state: dict[str, Any], emulator: Any) -> Holdings:
    # A document shows its title and its description (the post's summary).
    documents = state.get("collections", {}).get(emulator.collection, {})
    described = {f"{k}": str(r["value"].get("description", "")) for k, r in documents.items()}
    return Holdings(
        [
            replace(h, text=f"{h.text}\n\n{described.get(h.id.rsplit('/', 1)[-1], '')}")
            for h in _generic(state, emulator)
        ]
    )


def _indexnow(state: dict[str, Any], emulator: Any) -> Holdings:
    return Holdings(pings=delivered_urls({"indexnow": state}, "indexnow"))


def _websub(state: dict[str, Any], emulator: Any) -> Holdings:
    # The hub is told a feed changed; what it learns is the feed it then fetches.
    fetched = [item["text"].splitlines() for item in emulator.received(state, "")]
    return Holdings(pings=[url for feed in fetched for url in feed], fetched=fetched)


READERS: dict[str, Callable[[dict[str, Any], Any], Holdings]] = {
    "mastodon": _mastodon,
    "matrix": _matrix,
    "forem": _forem,
    "standard": _standard,
    "indexnow": _indexnow,
    "websub": _websub,
}


def from_emulator(sandbox: Any, type_name: str) -> Holdings:
    """What the emulator of `type_name` holds now, from its snapshot (once it has done what it
    does after answering: a hub's fetch of the feed)."""
    sandbox.wait_idle(15)
    state = sandbox.snapshot().get(type_name, {})
    emulator = sandbox.emulators[type_name]
    reader = READERS.get(type_name)
    return reader(state, emulator) if reader else Holdings(_generic(state, emulator))
