"""The local folders next to the ledger that never belong in git (`.syndicate-cache/`,
`.syndicate-sandbox/`): each carries its own `.gitignore` of `*`, so `git status` stays clean
without the user adding anything to theirs."""

from __future__ import annotations

from pathlib import Path

CACHE_DIR = ".syndicate-cache"  # the last build's posts, the ledger's lock, the messages' memo
SANDBOX_DIR = ".syndicate-sandbox"  # what the sandbox emulators received


def private_dir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# written by mkdocs-syndicate: nothing in this folder belongs in git\n*\n", encoding="utf-8")
    return folder


def lock_path(ledger_path: Path) -> Path:
    """The one-writer lock of a ledger: in the cache folder, out of `git status`."""
    return ledger_path.parent / CACHE_DIR / f"{ledger_path.name}.lock"
