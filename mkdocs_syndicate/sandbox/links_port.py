"""Where a site's sandbox links point, kept per site (issue 53). A run's sandbox listens on any
free port and hands out links at 8787, where `mkdocs-syndicate sandbox` serves them after the run.
When 8787 was taken (another site's sandbox), the run's links used the port it bound, a new one
each run, so the links the ledger recorded stopped working. The port chosen then is written into
the site's sandbox state (`links-port`), and every later run's links, and `mkdocs-syndicate
sandbox` by default, use it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate.sandbox import DEFAULT_PUBLIC_BASE

if TYPE_CHECKING:
    from mkdocs_syndicate.sandbox.server import SandboxServer

PORT_FILE = "links-port"


def kept_port(state_dir: Path) -> int | None:
    """The port this site's sandbox links use, when one was chosen for it; else None (8787)."""
    with contextlib.suppress(OSError, ValueError):
        port = int((state_dir / PORT_FILE).read_text(encoding="ascii").strip())
        if 0 < port < 65536:
            return port
    return None


def keep_port(state_dir: Path, port: int) -> None:
    with contextlib.suppress(OSError):
        state_dir.mkdir(parents=True, exist_ok=True)
        (state_dir / PORT_FILE).write_text(f"{port}\n", encoding="ascii")


def links_base(server: SandboxServer, state_dir: Path) -> str | None:
    """Set `server.public_base` to this site's links address: the kept port, else 8787, else (8787
    taken) the port it bound, then kept. Returns what to tell the user, or None."""
    kept = kept_port(state_dir)
    if kept is not None:
        server.public_base = f"http://127.0.0.1:{kept}"
        return (
            f"sandbox: this site's links stay at {server.public_base} (kept in {state_dir / PORT_FILE} since "
            f"{DEFAULT_PUBLIC_BASE} was taken); `mkdocs-syndicate sandbox` serves them there after the run"
        )
    note = server.own_links_if_taken()
    if note is not None:
        keep_port(state_dir, int(server.public_base.rsplit(":", 1)[1]))
        note += f"; kept for this site's later runs ({state_dir / PORT_FILE})"
    return note
