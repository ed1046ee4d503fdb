"""The ledger's records of copies that are out (`done`, or an edit of one in flight:
`crosslinks.linked_record`) and carry a URL, for the post pages' links: read on every build
(`serve` too), so kept beside the ledger as a small cache keyed by the ledger's bytes. A build
whose ledger has not changed reads the cache and never parses the ledger (the plan build's
shortcut, sources/plan_snapshot.py, stays as cheap as it was). A sandbox run's copies (on the
emulators, `sandbox: true` in the ledger) are linked only by a sandbox build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mkdocs_syndicate.content.crosslinks import OwnUrl, Replies, RepliesOf, later_parts, linked_record
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text
from mkdocs_syndicate.ledger.schema import Part, Record, State
from mkdocs_syndicate.localdirs import CACHE_DIR, private_dir

# 2: each copy says whether a sandbox run made it; 3: and a thread's parts' ids; 4: an edit in
# flight is listed too (a format 3 cache of the same ledger left it out: not read).
FORMAT = 4
Copies = dict[str, dict[str, Record]]  # post key → channel → the record of its copy out, with a URL


def cache_path(ledger_path: Path) -> Path:
    return ledger_path.parent / CACHE_DIR / f"{ledger_path.name}.copies.json"


def done_copies(ledger_path: Path, *, sandbox: bool = False) -> Copies:
    """The copies a build links: with `sandbox` (a sandbox build) a rehearsal's too, otherwise
    never one (issue 36: a real site linked "Also on" to http://127.0.0.1:8787/...). Raises
    LedgerError (naming the file and line) when the ledger does not parse."""
    found = _all_copies(ledger_path)
    if sandbox:
        return found
    real = {key: {c: r for c, r in records.items() if not r.sandbox} for key, records in found.items()}
    return {key: records for key, records in real.items() if records}


def _all_copies(ledger_path: Path) -> Copies:
    try:
        data = ledger_path.read_bytes()
    except FileNotFoundError:
        return {}
    digest = hashlib.sha256(data).hexdigest()
    cached = _cached(cache_path(ledger_path), digest)
    if cached is not None:
        return cached
    from mkdocs_syndicate.ledger.store import Ledger

    found = {
        key: {
            channel: record for channel, record in entry.channels.items() if linked_record(record) and record.remote_url
        }
        for key, entry in Ledger.read(ledger_path).posts.items()
    }
    found = {key: records for key, records in found.items() if records}
    try:
        private_dir(cache_path(ledger_path).parent)
        atomic_write_text(
            cache_path(ledger_path),
            json.dumps(
                {
                    "format": FORMAT,
                    "ledger": digest,
                    "copies": {
                        key: {
                            channel: [r.remote_id, r.remote_url, r.sandbox, [p.remote_id for p in r.parts]]
                            for channel, r in records.items()
                        }
                        for key, records in found.items()
                    },
                },
                ensure_ascii=False,
            ),
            checkpoint=False,
            durable=False,
        )
    except OSError:
        pass  # a cache: the next build parses the ledger again
    return found


def _cached(path: Path, digest: str) -> Copies | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("ledger") != digest:
            return None
        # What the links need, as a done record: a thread's parts by their ids alone (the comments
        # script leaves them out); an edit in flight links as its done record would.
        return {
            key: {
                channel: Record(
                    State.DONE,
                    remote_id=remote_id,
                    remote_url=remote_url,
                    sandbox=sandbox is True,
                    parts=tuple(Part(str(part)) for part in parts),
                )
                for channel, (remote_id, remote_url, sandbox, parts) in records.items()
            }
            for key, records in data["copies"].items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # absent, torn or from another version: read the ledger


def replies_locator(raw_channels: Any, *, sandbox: bool) -> RepliesOf:
    """For `comments: true`: where a reader's browser reads a copy's public replies, by its
    channel's settings (in the sandbox, the emulators' public addresses). Loads the clients."""
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.registry import TYPES, clients
    from mkdocs_syndicate.sandbox import DEFAULT_PUBLIC_BASE

    # Settings are checked elsewhere (on_config); here a channel that does not parse shows nothing.
    channels = {
        channel.id: channel for channel in parse_channels(raw_channels, clients(), check_templates=False, problems=[])
    }

    def options_for(channel: Any, record: Record) -> dict[str, Any]:
        if not sandbox:
            return dict(channel.options)
        # The sandbox that made the copy: its link's address (8787, or the port a run's own
        # sandbox bound when another site's held 8787).
        link = urlsplit(record.remote_url or "")
        base = f"{link.scheme}://{link.netloc}" if link.scheme == "http" and link.netloc else DEFAULT_PUBLIC_BASE
        return {**channel.options, **TYPES[channel.type].emulator_class().client_options(base, base)}

    def replies_of(channel_id: str, record: Record) -> Replies | None:
        channel = channels.get(channel_id)
        if channel is None:
            return None
        options = options_for(channel, record)
        url = TYPES[channel.type].client_class().replies_url(options, record)
        return Replies(channel.type, url, str(options.get("web_url") or ""), later_parts(record)) if url else None

    return replies_of


def own_urls(raw_channels: Any, site_url: str) -> OwnUrl:
    """For the post pages' links: whether a copy's URL is on its channel's own service, as the
    channel type tells (`Channel.recognises`: its host, its account), else (a type that does not
    say) on the host of one of the channel's URL settings. Loads the clients."""
    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.config.run import Site
    from mkdocs_syndicate.registry import TYPES, clients

    site = Site(site_url, "")
    channels: dict[str, Channel] = {}
    # Settings are checked elsewhere (on_config); here a channel that does not parse links nothing.
    for settings in parse_channels(raw_channels, clients(), check_templates=False, problems=[]):
        with contextlib.suppress(Exception):  # a plugin type's constructor: its fault is not the page's
            channels[settings.id] = TYPES[settings.type].client_class()(settings, site)

    def is_own(channel_id: str, url: str) -> bool:
        channel = channels.get(channel_id)
        if channel is None:
            return False
        if type(channel).recognises is not Channel.recognises:
            return bool(channel.recognises(url))
        hosts = {_host(value) for value in channel.settings.options.values() if isinstance(value, str)}
        return _host(url) in hosts - {""}

    return is_own


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "") if url.startswith(("https://", "http://")) else ""
    except ValueError:
        return ""
