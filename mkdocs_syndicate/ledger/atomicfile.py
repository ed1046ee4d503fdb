"""Durable atomic replacement of a text file: temp in the same folder, fsync, os.replace, fsync folder."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from mkdocs_syndicate import checkpoints


def temp_prefix(path: Path) -> str:
    """Prefix of the temp files for `path` (also used to sweep leftovers of a killed run)."""
    return f".{path.name}."


def atomic_write_text(
    path: Path, text: str, mode: int = 0o644, *, checkpoint: bool = True, durable: bool = True
) -> None:
    """Replace `path` with `text` so that a crash leaves either the old or the new file, whole.

    Any OSError (EIO, ENOSPC, a failed fsync) propagates: fsync failures are never retried,
    because Linux may have dropped the dirty pages already (fsyncgate). `checkpoint=False` keeps
    the crash-test checkpoints for the ledger's own writes (the sandbox writes its state too).
    `durable=False` skips both fsyncs, for a cache whose reader rejects a torn or empty file: the
    rename still makes it whole or absent for every other process.
    """
    hit = checkpoints.hit if checkpoint else _no_checkpoint
    folder = path.parent
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            hit("ledger.tmp_written")
            if durable:
                os.fsync(handle.fileno())
        hit("ledger.tmp_fsynced")
        os.chmod(tmp_name, mode)  # mkstemp makes 0600; a committed file should be 0644
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    if durable:
        _fsync_folder(folder)
    hit("ledger.replaced")


def _no_checkpoint(name: str) -> None:
    pass


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); Windows cannot open folders, and needs no call."""
    if os.name == "nt":
        return
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def sweep_stale_temp_files(path: Path) -> list[Path]:
    """Remove temp files a killed writer left next to `path`. Call only while holding the lock."""
    removed = []
    for leftover in path.parent.glob(temp_prefix(path) + "*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
            removed.append(leftover)
    return removed
