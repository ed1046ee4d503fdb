"""What each done copy's message would be now, remembered between runs, so that finding the copies
that are out of date (`edits: update`) does not make every message of every post on every build.

Making a message costs up to milliseconds (a DEV article's body is converted from HTML); a site of
10,000 posts on five channels would pay it 50,000 times per build. The memo keeps, per (post,
channel), a fingerprint of everything the message is made from (the post's fields, the channel's
settings, the pair's first attempt, this package's version) and the hash of the message made from
it. A pair whose fingerprint is unchanged and whose remembered hash is the one its record has
needs no message made. Anything else (no memo, a changed post, a new release) makes the message
and compares for real, so a missing or stale memo can cost time, never an edit: the memo is only
ever trusted to say "unchanged".

It lives in `.syndicate-cache/<ledger file>.messages.json` next to the ledger (never in git); losing it is
harmless. In CI, keeping `.syndicate-cache/` between runs (actions/cache) keeps builds fast.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate import __version__
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.localdirs import CACHE_DIR, private_dir

if TYPE_CHECKING:
    from mkdocs_syndicate.channels.base import Channel

_FORMAT = 1
# Every field of a post: a message may depend on any of them (a new field is in the fingerprint at once).
_POST_FIELDS = tuple(field.name for field in dataclasses.fields(Post))


class MessageMemo:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, list[str]] = {}
        self._changed = False
        self._release = __version__  # a release may render differently: its messages are made again
        self._channels: dict[str, bytes] = {}
        if path is not None:
            self._entries = _load(path)

    @classmethod
    def beside(cls, ledger_path: Path) -> MessageMemo:
        return cls(ledger_path.parent / CACHE_DIR / f"{ledger_path.name}.messages.json")

    def fingerprint(self, post: Post, channel: Channel, created_at: str | None) -> str:
        digest = hashlib.sha256(self._channel_part(channel))
        digest.update(repr(tuple(getattr(post, name) for name in _POST_FIELDS)).encode("utf-8", "surrogatepass"))
        digest.update(f"\x00{created_at}".encode())
        return digest.hexdigest()

    def _channel_part(self, channel: Channel) -> bytes:
        """What of the channel and the release a message depends on, made once per channel."""
        known = self._channels.get(channel.id)
        if known is None:
            settings = channel.settings
            options = sorted((name, repr(value)) for name, value in settings.options.items())
            text = repr((self._release, settings.type, settings.template, options, channel.site.name))
            known = self._channels[channel.id] = text.encode("utf-8", "surrogatepass")
        return known

    def unchanged(self, key: str, channel_id: str, fingerprint: str, sha: str) -> bool:
        """Whether the message made from `fingerprint` is known to hash to `sha`."""
        return self._entries.get(f"{key}\n{channel_id}") == [fingerprint, sha]

    def remember(self, key: str, channel_id: str, fingerprint: str, sha: str) -> None:
        name = f"{key}\n{channel_id}"
        if self._entries.get(name) != [fingerprint, sha]:
            self._entries[name] = [fingerprint, sha]
            self._changed = True

    def save(self) -> None:
        """Best effort: a memo that cannot be written only costs the next run some time."""
        if self.path is None or not self._changed:
            return
        try:
            private_dir(self.path.parent)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"format": _FORMAT, "entries": self._entries}), encoding="utf-8")
            temporary.replace(self.path)
            self._changed = False
        except OSError:
            pass


def _load(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return {k: v for k, v in data["entries"].items() if isinstance(v, list) and len(v) == 2}
