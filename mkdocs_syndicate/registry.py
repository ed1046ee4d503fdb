"""Channel types: one line each, naming the client and the emulator of a service.

Adding a channel type is one client module (under `channels/`), one emulator module (under
`sandbox/`) and one line here; nothing else names a type. Both are named by import path and
loaded on first use, so a build that sends nothing does not import HTTP clients or servers.

A channel type may also come from another package, through the entry-point group
`mkdocs_syndicate.channels`: each entry names a `ChannelType` (docs/channels.md). The group's names
are read only when a type is asked for that is not built in, or when every type is listed, and
once per process; an entry is imported only when a site names its type. A broken entry (its
import raises, it is not a ChannelType, its client is missing or lacks `prepare` and `send`, its
emulator is no Emulator) is a `PluginError` in one line naming its package and entry point,
raised only where it is named; importing this module reads nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, NamedTuple

from mkdocs_syndicate.errors import PluginError as PluginError  # raised here; in the errors' tree

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.emulator_api import Emulator


class ChannelType(NamedTuple):  # cheaper to define than a dataclass: every build imports this
    name: str  # what `channels.<id>.type` says
    client: str  # "module:Class" of the Channel
    emulator: str  # "module:Class" of its sandbox Emulator
    service: str = ""  # its name as readers know it (a post page's "Also on" links)
    origin: str = ""  # set when read from an entry point: its package and the entry, for errors

    def client_class(self) -> type[Channel]:
        loaded: type[Channel] = _checked_client(self, self._load(self.client, "client"))
        return loaded

    def emulator_class(self) -> type[Emulator]:
        loaded: type[Emulator] = _checked_emulator(self, self._load(self.emulator, "emulator"))
        return loaded

    def _load(self, spec: str, what: str) -> Any:
        if not self.origin:
            return _load(spec)  # a built-in type: a failure is our bug, shown as it is
        try:
            return _load(spec)
        except Exception as exc:  # whatever a third party's import raises
            raise self.broken(f"its {what} {spec} cannot be loaded: {_one_line(exc)}") from None

    def broken(self, problem: str) -> PluginError:
        return PluginError(f"channel type {self.name!r} {self.origin or '(registered by hand)'}: {problem}")


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}{'…' if len(text) > 200 else ''}"


def _checked_client(kind: ChannelType, loaded: Any) -> Any:
    """A client is a Channel with `prepare` and a way to send (`send`, or `send_batch` when it is
    `batched`), checked when it is loaded: a missing one would otherwise surface only after its
    request's in_flight record was written."""
    # Found among its bases by import path: this layer names the channels package, never imports it.
    bases = loaded.__mro__ if isinstance(loaded, type) else ()
    channel = next((c for c in bases if f"{c.__module__}:{c.__qualname__}" == CHANNEL_BASE), None)
    if channel is None:
        raise kind.broken(f"its client {kind.client} is not a Channel subclass")
    needed = ("prepare", "send_batch", "batches") if loaded.batched else ("prepare", "send")
    missing = [name for name in needed if getattr(loaded, name) is getattr(channel, name)]
    if missing:
        raise kind.broken(f"its client {kind.client} does not implement {', '.join(missing)}")
    return loaded


def _checked_emulator(kind: ChannelType, loaded: Any) -> Any:
    """A plugin's emulator is an Emulator subclass, checked when it is loaded: anything else ended
    a send build in an AttributeError about `client_options`, naming no package."""
    bases = loaded.__mro__ if isinstance(loaded, type) else ()
    if kind.origin and not any(f"{c.__module__}:{c.__qualname__}" == EMULATOR_BASE for c in bases):
        raise kind.broken(f"its emulator {kind.emulator} is not an Emulator subclass")
    return loaded


ENTRY_POINT_GROUP = "mkdocs_syndicate.channels"
CHANNEL_BASE = "mkdocs_syndicate.channels.base:Channel"  # what every client extends
EMULATOR_BASE = "mkdocs_syndicate.emulator_api:Emulator"  # what every emulator extends

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
    ChannelType(
        "standard",
        "mkdocs_syndicate.channels.standard:StandardChannel",
        "mkdocs_syndicate.sandbox.standard:StandardEmulator",
        "standard.site",
    ),
    ChannelType(
        "matrix",
        "mkdocs_syndicate.channels.matrix:MatrixChannel",
        "mkdocs_syndicate.sandbox.matrix:MatrixEmulator",
        "Matrix",
    ),
    ChannelType(
        "websub",
        "mkdocs_syndicate.channels.websub:WebSubChannel",
        "mkdocs_syndicate.sandbox.websub:WebSubEmulator",
        "WebSub",
    ),
    ChannelType(
        "nostr",
        "mkdocs_syndicate.channels.nostr:NostrChannel",
        "mkdocs_syndicate.sandbox.nostr:NostrEmulator",
        "Nostr",
    ),
    ChannelType(
        "webmention",
        "mkdocs_syndicate.channels.webmention:WebmentionChannel",
        "mkdocs_syndicate.sandbox.webmention:WebmentionEmulator",
        "Webmention",
    ),
)


class _Types(MutableMapping[str, ChannelType]):
    """The channel types by name: the built-in ones, then those installed packages declare. The
    group's names are read the first time they can matter (an unknown name, or a listing of all);
    an entry is imported only when its type is asked for, so a broken package breaks only the
    sites that name its type."""

    def __init__(self, built_in: tuple[ChannelType, ...]) -> None:
        self._types = {t.name: t for t in built_in}
        self._entries: dict[str, EntryPoint] = {}
        self._broken: dict[str, PluginError] = {}
        self._plugins_read = False

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            if entry.name not in self._types:  # a built-in type (or one registered by hand) keeps its name
                self._entries.setdefault(entry.name, entry)

    def _load_entry(self, name: str) -> ChannelType:
        if name in self._broken:
            raise self._broken[name]  # once: its import's side effects are not run again
        entry = self._entries[name]
        origin = _origin(entry)
        try:
            declared = entry.load()
        except Exception as exc:  # whatever a third party's import raises
            problem = f"cannot be loaded: {_one_line(exc)}"
        else:
            if isinstance(declared, ChannelType) and declared.name == entry.name:
                self._types[name] = declared._replace(origin=origin)
                del self._entries[name]
                return self._types[name]
            problem = f"is not a ChannelType named {entry.name!r}"
        self._broken[name] = PluginError(f"channel type {name!r} {origin}: the entry point {problem}")
        raise self._broken[name]

    def __getitem__(self, name: str) -> ChannelType:
        if name not in self._types:
            self._read_plugins()
            if name in self._entries or name in self._broken:
                return self._load_entry(name)
        return self._types[name]

    def __contains__(self, name: object) -> bool:
        if name not in self._types:
            self._read_plugins()
        return name in self._types or name in self._entries or name in self._broken

    def __iter__(self) -> Iterator[str]:
        self._read_plugins()
        return iter([*self._types, *self._entries, *self._broken])

    def __len__(self) -> int:
        self._read_plugins()
        return len(self._types) + len(self._entries) + len(self._broken)

    def __setitem__(self, name: str, channel_type: ChannelType) -> None:
        self._types[name] = channel_type

    def __delitem__(self, name: str) -> None:
        del self._types[name]


def _origin(entry: EntryPoint) -> str:
    """Where an entry comes from, as a user would look for it: its package and its line."""
    dist = getattr(entry, "dist", None)
    package = f"package {dist.name} {dist.version}, " if dist is not None else ""
    return f"(from {package}entry point {entry.name} = {entry.value} in group {ENTRY_POINT_GROUP})"


TYPES: MutableMapping[str, ChannelType] = _Types(BUILT_IN)


def named_in(raw_channels: object) -> dict[str, ChannelType]:
    """The channel types a raw `channels:` mapping names, those that exist and load: looked up by
    name, so a site of built-in types reads no package metadata (a build pays for the group only
    when it names a type from a plugin). A broken plugin is left out here: the settings' check
    reports it, as an error of the channel that names it."""
    values = raw_channels.values() if isinstance(raw_channels, Mapping) else ()
    names = sorted({n for v in values if isinstance(v, Mapping) for n in [v.get("type")] if isinstance(n, str)})
    found = {}
    for name in names:
        try:
            if name in TYPES:
                found[name] = TYPES[name]
        except PluginError:
            continue
    return found


def register(channel_type: ChannelType) -> None:
    """Add a channel type (a plugin of ours, or a test's toy channel)."""
    TYPES[channel_type.name] = channel_type


class _Clients(Mapping[str, "type[Channel]"]):
    """Every client class by type name, each imported when it is looked up: settings name only
    the types they use, so a broken plugin nobody names is never imported."""

    def __getitem__(self, name: str) -> type[Channel]:
        return TYPES[name].client_class()

    def __contains__(self, name: object) -> bool:
        return name in TYPES

    def __iter__(self) -> Iterator[str]:
        return iter(TYPES)

    def __len__(self) -> int:
        return len(TYPES)


def clients() -> Mapping[str, type[Channel]]:
    """Every client class by type name (each imported on first use)."""
    return _Clients()


def emulators(names: Iterable[str] | None = None) -> list[type[Emulator]]:
    """The built-in emulators and those of the plugin types `names` lists (every type if None)."""
    if names is None:
        return [t.emulator_class() for t in TYPES.values()]
    wanted = [*(t.name for t in BUILT_IN), *sorted(set(names) - {t.name for t in BUILT_IN})]
    return [TYPES[name].emulator_class() for name in dict.fromkeys(wanted) if name in TYPES]
