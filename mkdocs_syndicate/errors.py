"""Exceptions with messages meant for a human: each names the file, setting or post at fault."""

from __future__ import annotations

from mkdocs_syndicate.safety import printable


class SyndicateError(Exception):
    """Base class: anything this package raises on purpose. Its text is shown with control
    characters escaped, whatever it quotes (a feed title, a git hook's output, a server's answer):
    a message may reach a terminal, and an escape sequence in it must not act there."""

    def __str__(self) -> str:
        return printable(super().__str__())


class ConfigError(SyndicateError):
    """A setting in mkdocs.yml is missing or wrong; the message names it."""


class LedgerError(SyndicateError):
    """The ledger file cannot be trusted (corrupt, truncated, unknown version, ...)."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"ledger {where}: {message}")
        self.path = path
        self.line = line


class LedgerWriteError(LedgerError):
    """A durable write failed; no further remote call may happen in this process."""


class LedgerLocked(LedgerError):
    """Another run holds the ledger lock."""


class PostError(SyndicateError):
    """A post's front matter is unusable; the message names the post's source file."""
