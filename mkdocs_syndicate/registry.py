"""Channel types: one line each, naming the client and the emulator of a service.

Adding a channel type is one client module (under `channels/`), one emulator module (under
`sandbox/`) and one line here; nothing else names a type. Both are named by import path and
loaded on first use, so a build that sends nothing does not import HTTP clients or servers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.sandbox.server import Emulator


class ChannelType(NamedTuple):  # cheaper to define than a dataclass: every build imports this
    name: str  # what `channels.<id>.type` says
    client: str  # "module:Class" of the Channel
    emulator: str  # "module:Class" of its sandbox Emulator
    service: str = ""  # its name as readers know it (a post page's "Also on" links)

    def client_class(self) -> type[Channel]:
        loaded: type[Channel] = _load(self.client)
        return loaded

    def emulator_class(self) -> type[Emulator]:
        loaded: type[Emulator] = _load(self.emulator)
        return loaded


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


TYPES: dict[str, ChannelType] = {
    t.name: t
    for t in (
        ChannelType(
            "indexnow",
            "mkdocs_syndicate.channels.indexnow:IndexNowChannel",
            "mkdocs_syndicate.sandbox.indexnow:IndexNowEmulator",
            "IndexNow",
        ),
        ChannelType(
            "mastodon",
            "mkdocs_syndicate.channels.mastodon:MastodonChannel",
            "mkdocs_syndicate.sandbox.mastodon:MastodonEmulator",
            "Mastodon",
        ),
        ChannelType(
            "forem",
            "mkdocs_syndicate.channels.forem:ForemChannel",
            "mkdocs_syndicate.sandbox.forem:ForemEmulator",
            "DEV",
        ),
        ChannelType(
            "weibo",
            "mkdocs_syndicate.channels.weibo:WeiboChannel",
            "mkdocs_syndicate.sandbox.weibo:WeiboEmulator",
            "Weibo",
        ),
        ChannelType(
            "bluesky",
            "mkdocs_syndicate.channels.bluesky:BlueskyChannel",
            "mkdocs_syndicate.sandbox.bluesky:BlueskyEmulator",
            "Bluesky",
        ),
    )
}


def register(channel_type: ChannelType) -> None:
    """Add a channel type (a plugin of ours, or a test's toy channel)."""
    TYPES[channel_type.name] = channel_type


def clients() -> dict[str, type[Channel]]:
    """Every client class by type name (imports them)."""
    return {name: t.client_class() for name, t in TYPES.items()}


def emulators() -> list[type[Emulator]]:
    return [t.emulator_class() for t in TYPES.values()]
