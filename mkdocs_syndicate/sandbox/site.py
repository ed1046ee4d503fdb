"""The sandbox a site rehearses against (`sandbox: true`): where its emulators listen, its state
folder, the emulators set up for the site, the one a run or a credential check uses, and the
channel settings it replaces (real credentials are never sent to an emulator). The engine and the
command are handed the channels (`run_channels`, `make_channels`), pointed at the sandbox in a
rehearsal; they do not wire one. Light to import: the server is loaded only when one starts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import ChannelSettings, ChannelType
from mkdocs_syndicate.config.channels import with_options
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.localdirs import SANDBOX_DIR
from mkdocs_syndicate.redaction import Secret
from mkdocs_syndicate.registry import TYPES
from mkdocs_syndicate.sandbox import DEFAULT_PUBLIC_BASE

if TYPE_CHECKING:
    from mkdocs_syndicate.channel_api import Channel
    from mkdocs_syndicate.sandbox.server import SandboxServer

SANDBOX_PACING_SCALE = 100


@dataclass(frozen=True)
class Sandbox:
    """Where the sandbox emulators listen, and where the links they hand out point."""

    url: str
    public_base: str = DEFAULT_PUBLIC_BASE
    note: str | None = None  # why the links do not use the default address


def make_channels(options: Options, sandbox: Sandbox | None = None) -> list[Channel]:
    """The config's enabled channels; in a rehearsal, pointed at `sandbox` (without one, at where
    `mkdocs-syndicate sandbox` listens by default: enough for a plan, which sends nothing)."""
    channels = []
    for declared in options.channels:
        if not declared.enabled:
            continue
        settings = declared
        kind = TYPES[settings.type]
        if options.sandbox:  # real credentials are never sent to the emulators: they get the sandbox's own
            settings = _sandboxed(settings, kind, options, sandbox)
        channels.append(kind.client_class()(settings, options.site))
    return channels


def site_files(options: Options) -> list[tuple[str, str]]:
    """What the enabled channels add to the built site, from their settings as configured: the
    key the user set is published in a rehearsal too (a deploy needs it before the first real
    ping). The sandbox's own files are not: see `sandbox_site_files`."""
    return [
        found
        for declared in options.channels
        if declared.enabled
        for found in TYPES[declared.type].client_class()(declared, options.site).site_files()
    ]


def sandbox_site_files(options: Options) -> list[tuple[str, str]]:
    """The files a run to the sandbox needs in the built site, where its engine fetches them (the
    sandbox's IndexNow key file): only a run that goes there writes them, since the built site
    is deployed as the real one. None outside a rehearsal."""
    if not options.sandbox:
        return []
    own = site_files(options)
    return [found for channel in make_channels(options) for found in channel.site_files() if found not in own]


def write_sandbox_site_files(options: Options) -> list[Path]:
    """`sandbox_site_files` written into an existing built site, before a run to the sandbox that
    did not build it (`mkdocs-syndicate run`); where there is none, the engine's 403 says to build."""
    site_dir = Path(options.site.site_dir) if options.site.site_dir else None
    if site_dir is None or not site_dir.is_dir():
        return []
    written = []
    for name, content in sandbox_site_files(options):
        path = site_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


@contextlib.contextmanager
def run_channels(options: Options) -> Iterator[tuple[list[Channel], str | None]]:
    """The channels a run or a credential check talks to, and in a rehearsal the sandbox's note
    (why its links do not use the default address), with the sandbox up while they are in use."""
    with _sandbox_for(options) as sandbox:
        yield make_channels(options, sandbox), sandbox.note if sandbox else None


def _sandboxed(
    settings: ChannelSettings, kind: ChannelType, options: Options, sandbox: Sandbox | None
) -> ChannelSettings:
    """A channel's settings pointed at its emulator, with the emulator's own credentials."""
    where = sandbox or Sandbox("http://127.0.0.1:8787")
    given = kind.emulator_class().client_options(where.url, where.public_base)
    spec = kind.client_class().options
    settings = with_options(
        settings,
        **{name: Secret(str(value)) if spec[name].kind == "secret" else value for name, value in given.items()},
    )
    if options.sandbox_pacing == "fast":  # a rehearsal need not wait DEV's 75 s per post
        settings = replace(settings, min_interval=settings.min_interval / SANDBOX_PACING_SCALE)
    return settings


def sandbox_note(options: Options) -> str | None:
    """What a sandbox run does differently from a real one, said once at its start."""
    if not options.sandbox:
        return None
    live = (
        "; wait_until_live looks for each new page in the built site_dir, not on the web"
        if options.wait_until_live
        else ""
    )
    paced = [c for c in options.channels if c.enabled and c.min_interval]
    if options.sandbox_pacing == "real" or not paced:
        return f"to the sandbox (real credentials are not sent there){live}"
    scaled = ", ".join(f"{c.id} {c.min_interval:g} s → {c.min_interval / SANDBOX_PACING_SCALE:g} s" for c in paced)
    return (
        f"to the sandbox, with pacing {SANDBOX_PACING_SCALE}× faster than configured ({scaled}; "
        f"`sandbox_pacing: real` keeps the real spacing){live}"
    )


def sandbox_state_dir(options: Options) -> Path:
    return options.sandbox_dir or options.ledger_path.parent / SANDBOX_DIR


@contextlib.contextmanager
def _sandbox_for(options: Options) -> Iterator[Sandbox | None]:
    """The sandbox of a run or a credential check (None for a real one): the one
    `mkdocs-syndicate sandbox` serves for this state folder, else one started for it."""
    from mkdocs_syndicate.sandbox.discovery import running_sandbox

    if not options.sandbox:
        yield None
        return
    state_dir = sandbox_state_dir(options)
    running = running_sandbox(state_dir)
    if running:  # `mkdocs-syndicate sandbox` is serving this state folder: use it
        yield Sandbox(running, running)
        return
    from mkdocs_syndicate.sandbox.links_port import links_base

    with site_sandbox(options) as server:
        note = links_base(server, state_dir)  # 8787 held by another site's sandbox: a port kept for this one
        yield Sandbox(server.url, server.public_base, note)


def site_sandbox(options: Options, **server_options: Any) -> SandboxServer:
    """The emulators set up for this site: its built site checked for the IndexNow key file, and
    its host as Weibo's safe domain (as a registered Weibo app would have it)."""
    from mkdocs_syndicate.registry import emulators
    from mkdocs_syndicate.sandbox.server import SandboxServer

    key_root = Path(options.site.site_dir) if options.site.site_dir else None
    named = {channel.type for channel in options.channels}  # a plugin's emulator only if the site names it
    server = SandboxServer(sandbox_state_dir(options), emulators(named), key_file_root=key_root, **server_options)
    for emulator in server.emulators.values():  # e.g. Weibo's safe domain: the site's host
        emulator.configure_for_site(options.site.url)
    for channel in options.channels:
        server.channel_names.setdefault(channel.type, []).append(channel.id)
    return server
