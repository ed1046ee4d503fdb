"""Channel types: one line each, naming the client and the emulator of a service.

Adding a channel type is one client module (under `channels/`), one emulator module (under
`sandbox/`) and one line here; nothing else names a type. Both are named by import path and
loaded on first use, so a build that sends nothing does not import HTTP clients or servers.

A channel type may also come from another package, through the entry-point group
`mkdocs_syndicate.channels`: each entry names a `ChannelType` (docs/channels.md). The group is read
only when a type is asked for that is not built in, or when every type is listed, and once per
process; importing this module reads nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.sandbox.emulator import Emulator


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


ENTRY_POINT_GROUP = "mkdocs_syndicate.channels"

BUILT_IN = (
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


class PluginError(ImportError):
    """An installed package's entry in the channels group is not a usable ChannelType."""


class _Types(MutableMapping[str, ChannelType]):
    """The channel types by name: the built-in ones, then those installed packages declare, read
    the first time they can matter (an unknown name, or a listing of all)."""

    def __init__(self, built_in: tuple[ChannelType, ...]) -> None:
        self._types = {t.name: t for t in built_in}
        self._plugins_read = False

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            if entry.name in self._types:
                continue  # a built-in type (or one registered by hand) keeps its name
            declared = entry.load()
            if not isinstance(declared, ChannelType) or declared.name != entry.name:
                raise PluginError(
                    f"entry point {entry.name} = {entry.value} (group {ENTRY_POINT_GROUP}) is not a "
                    f"ChannelType named {entry.name!r}"
                )
            self._types[entry.name] = declared

    def __getitem__(self, name: str) -> ChannelType:
        if name not in self._types:
            self._read_plugins()
        return self._types[name]

    def __contains__(self, name: object) -> bool:
        if name not in self._types:
            self._read_plugins()
        return name in self._types

    def __iter__(self) -> Iterator[str]:
        self._read_plugins()
        return iter(list(self._types))

    def __len__(self) -> int:
        self._read_plugins()
        return len(self._types)

    def __setitem__(self, name: str, channel_type: ChannelType) -> None:
        self._types[name] = channel_type

    def __delitem__(self, name: str) -> None:
        del self._types[name]


TYPES: MutableMapping[str, ChannelType] = _Types(BUILT_IN)


def named_in(raw_channels: object) -> dict[str, ChannelType]:
    """The channel types a raw `channels:` mapping names, those that exist: looked up by name, so
    a site of built-in types reads no package metadata (a build pays for the group only when it
    names a type from a plugin)."""
    values = raw_channels.values() if isinstance(raw_channels, Mapping) else ()
    names = {v.get("type") for v in values if isinstance(v, Mapping)}
    return {name: TYPES[name] for name in sorted(n for n in names if isinstance(n, str)) if name in TYPES}


def register(channel_type: ChannelType) -> None:
    """Add a channel type (a plugin of ours, or a test's toy channel)."""
    TYPES[channel_type.name] = channel_type


def clients() -> dict[str, type[Channel]]:
    """Every client class by type name (imports them)."""
    return {name: t.client_class() for name, t in TYPES.items()}


def emulators() -> list[type[Emulator]]:
    return [t.emulator_class() for t in TYPES.values()]
