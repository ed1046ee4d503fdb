"""The verdict "nothing pending" of the last plan build, reused while nothing it rests on changed.

Every `mkdocs build` and `serve` that does not send plans. On a site where everything has gone
out, that verdict depends only on: the plugin's settings (each credential reduced to unset, empty,
well-formed or malformed: a plan never uses its value), the site URL, the mode decision, the
ledger's bytes, the posts the build found, the plugin's version, and time only through posts
dated in the future (they become due). When all of these are as they were, the plugin says
"nothing pending" again without loading the engine, the channels or the ledger parser: a few
milliseconds instead of a few tens on every build.

Only ever for a build that does not send: a run that sends always plans from scratch. Kept next to
the ledger in `.syndicate-cache/` (git-ignored, private); a missing or unreadable file only means
the next plan build does the whole work.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mkdocs_syndicate import __version__
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text
from mkdocs_syndicate.localdirs import CACHE_DIR, private_dir
from mkdocs_syndicate.redaction import credential_problem
from mkdocs_syndicate.timeutil import from_iso, to_iso

FORMAT = 1


def snapshot_path(ledger_path: Path) -> Path:
    return ledger_path.parent / CACHE_DIR / f"{ledger_path.name}.plan.json"


def settings_fingerprint(
    plugin_settings: Mapping[str, Any], site_url: str | None, decision: str, secret_names: Mapping[str, Sequence[str]]
) -> str | None:
    """A digest of everything the plugin was configured with, credentials reduced to their
    shape. None when a channel's type is not in `secret_names` (its credentials are unknown)."""
    channels = plugin_settings.get("channels")
    shaped: dict[str, Any] = {}
    if isinstance(channels, Mapping):
        for channel_id, values in channels.items():
            if not isinstance(values, Mapping):
                return None
            names = secret_names.get(str(values.get("type")))
            if names is None:
                return None
            shaped[str(channel_id)] = {key: _shape(value) if key in names else value for key, value in values.items()}
    everything = {
        **plugin_settings,
        "channels": shaped if isinstance(channels, Mapping) else channels,
        "site_url": site_url,
        "decision": decision,
        "version": __version__,
    }
    return _digest(everything)


def _shape(credential: Any) -> str:
    if credential is None:
        return "unset"
    if credential == "":
        return "empty"
    return "malformed" if credential_problem(credential) else "well-formed"


def inputs_fingerprint(ledger_path: Path, posts: list[dict[str, Any]]) -> str:
    """A digest of the ledger's bytes and of the posts the build found."""
    try:
        ledger = hashlib.sha256(ledger_path.read_bytes()).hexdigest()
    except FileNotFoundError:
        ledger = "absent"
    return _digest({"ledger": ledger, "posts": posts})


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data


def save(
    path: Path,
    *,
    settings: str,
    inputs: str,
    secret_names: Mapping[str, Sequence[str]],
    site_files: list[tuple[str, str]],
    due: dt.datetime | None,
) -> None:
    data = {
        "format": FORMAT,
        "settings": settings,
        "inputs": inputs,
        "secret_names": {k: sorted(v) for k, v in secret_names.items()},
        "site_files": [list(f) for f in site_files],
        "due": to_iso(due) if due else None,
    }
    private_dir(path.parent)
    atomic_write_text(path, json.dumps(data, indent=1) + "\n", checkpoint=False, durable=False)


def forget(path: Path) -> None:
    path.unlink(missing_ok=True)


def still_quiet(snapshot: Mapping[str, Any], inputs: str, now: dt.datetime) -> bool:
    """Same ledger and posts, and no future-dated post has come due since."""
    if snapshot.get("inputs") != inputs:
        return False
    due = snapshot.get("due")
    try:
        return due is None or now < from_iso(due)
    except (TypeError, ValueError):
        return False


def next_due(post_dates: Sequence[dt.datetime], now: dt.datetime) -> dt.datetime | None:
    """When the earliest future-dated post becomes announceable (the verdict holds until then)."""
    future = [d for d in post_dates if d > now]
    return min(future) if future else None
