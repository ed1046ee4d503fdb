"""A service's login session kept between runs, so that the next run refreshes it instead of
logging in again.

Bluesky's createSession is rate limited per account (30 in 5 minutes, 300 a day): a site whose
builds each log in would be locked out by a busy afternoon of deploys or a retry loop, while
refreshSession has no such limit. As atproto's own CLI (goat) does, the session is kept in the
user's state folder, `$XDG_STATE_HOME/mkdocs-syndicate/sessions/` (else `~/.local/state/…`): one
file per (service, account), readable by its owner only (0600, in a 0700 folder), written whole.

It holds a refresh token, a credential: never in the project folder, whose ledger is committed
and whose caches are uploaded by CI setups. Keeping it is best effort: a file that cannot be read
or written costs one login, never a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from mkdocs_syndicate.ledger.atomicfile import atomic_write_text


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mkdocs-syndicate" / "sessions"


class SessionFile:
    """The kept session of one account on one service: a flat mapping of strings."""

    def __init__(self, channel_type: str, service: str, account: str) -> None:
        # The name says nothing of the account (the folder may be listed by others on a shared
        # machine); the contents are the owner's alone.
        digest = hashlib.sha256("\n".join((channel_type, service, account.lower())).encode()).hexdigest()[:32]
        self.path = state_dir() / f"{channel_type}-{digest}.json"

    def load(self) -> dict[str, str] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return None
        return data

    def save(self, data: dict[str, str]) -> None:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(data), mode=0o600, checkpoint=False, durable=False)
        except OSError:
            pass  # not kept: the next run logs in

    def forget(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
