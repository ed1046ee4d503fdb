"""Reading a config file (mkdocs.yml, properdocs.yml, syndicate.yml): a regular file of at most
MAX_CONFIG_BYTES, checked before a byte of it is parsed, by every reader of it (the loader, and the
`!ENV` scan that runs before it)."""

from __future__ import annotations

from pathlib import Path

from mkdocs_syndicate.errors import ConfigError

MAX_CONFIG_BYTES = 1024 * 1024  # a site's settings are a few kilobytes; YAML is parsed whole


def bounded_config(path: str | Path) -> bytes:
    """A config file's bytes, refused before parsing when it is not a regular file (a FIFO would
    hang the read) or is over MAX_CONFIG_BYTES (a 2,000,000-element list under an unknown key took
    1 GB before the key was refused; a 4 MB file with `!ENV` in it 27 s and 775 MB).
    FileNotFoundError and other OSErrors are the caller's to name."""
    from mkdocs_syndicate.localfiles import Refused, read_bounded

    try:
        return read_bounded(path, MAX_CONFIG_BYTES)
    except Refused as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
