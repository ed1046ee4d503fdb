"""Reading a local file a user names (a config, a feed) without being made to hang or fill memory:
a FIFO would block the read for ever, a device such as /dev/zero never end it, and a file of many
megabytes be parsed whole before any bound is checked. The file is opened without blocking and
checked on the opened descriptor (so it cannot be swapped for a FIFO between a check and the
read), then read to at most `limit` bytes."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class Refused(OSError):
    """The file is not a regular one, or is over the bound; `strerror` says which, as an OSError's
    does, so callers that name an unreadable file name this one the same way."""


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; Refused when it is not a
    regular file or holds more. FileNotFoundError and other OSErrors are the caller's to name."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise Refused(0, "not a regular file (a FIFO, a device or a folder); name a file")
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise Refused(0, f"larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB ({limit} bytes)" if limit % mib == 0 else f"{limit} bytes"
