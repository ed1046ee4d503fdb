"""Every exception this package raises on purpose, in one place. Each message is meant for a human
and names the file, setting, post or pair at fault.

    SyndicateError                 the base: its text is shown with control characters escaped
    ├── ConfigError                a setting is missing or wrong
    ├── PostError                  a post's front matter is unusable
    ├── FeedError                  a feed cannot be read, or an entry cannot be announced
    ├── ManifestError              no usable record of the last build's posts
    ├── LedgerError                the ledger file cannot be trusted
    │   ├── LedgerWriteError       a durable write failed: no further remote call in this process
    │   └── LedgerLocked           another run holds the ledger's lock
    ├── GitError                   git failed in a way that is not a race
    ├── PluginError                an installed channel plugin cannot be used (also an ImportError)
    ├── LaneCrashed                an unexpected error in one lane; the others stopped cleanly
    └── RunInterrupted             Ctrl-C or SIGTERM: what finished, and what is left

`ledger.merge.StaleLedger` (another writer changed this run's pairs: re-plan, never send) lives
beside the merge whose pairs it carries: this module knows nothing of the ledger or the engine.

Internal signals that never leave their module (a lane told to stop, a ledger that is not in the
canonical layout, a template that grew too large) stay beside the code that raises them; so do
`net.bounded`'s subclasses of httpx's own errors, which must be caught as httpx's.
"""

from __future__ import annotations

from collections.abc import Sequence

from mkdocs_syndicate.redaction import env_named
from mkdocs_syndicate.safety import printable


class SyndicateError(Exception):
    """Base class: anything this package raises on purpose. Its text is shown with control
    characters escaped, whatever it quotes (a feed title, a git hook's output, a server's answer):
    a message may reach a terminal, and an escape sequence in it must not act there."""

    def __str__(self) -> str:
        return printable(super().__str__())


class ConfigError(SyndicateError):
    """A setting is missing or wrong. The setting is data, not a guess from the text: `setting` is
    its path as the user wrote it (`max_wait`, `channels.masto.token`), `problem` what is wrong
    with it; an error about several settings holds one error per setting in `parts` (and its own
    `problem` is a closing hint, or empty). `located` places it in its file: `mkdocs.yml:
    plugins.syndicate.max_wait: ...`, or `syndicate.yml: max_wait: ...`."""

    def __init__(
        self,
        problem: str,
        setting: str | None = None,
        *,
        parts: Sequence[ConfigError] = (),
        file: str | None = None,
        under: str | None = None,
        top_level: bool = False,  # a setting of the file itself (site_url), never under the plugin's
    ) -> None:
        self.problem = problem
        self.setting = setting
        self.top_level = top_level
        self.parts: tuple[ConfigError, ...] = tuple(part for error in parts for part in (error.parts or (error,)))
        self.file = file
        self.under = under  # the settings' own place in the file: plugins.syndicate in mkdocs.yml
        # A value a setting got by `!ENV` is quoted by its variable's name: it may be a credential.
        super().__init__(env_named(self._text()))

    def _text(self) -> str:
        if not self.parts:
            return self._line(self.setting, self.problem, self.top_level)
        lines = [self._line(part.setting, part.problem, part.top_level) for part in self.parts]
        return "\n  ".join([*lines, self.problem] if self.problem else lines)

    def _line(self, setting: str | None, problem: str, top_level: bool = False) -> str:
        path = ".".join(name for name in (None if top_level else self.under, setting) if name)
        said = f"{path}: {problem}" if path else problem
        return f"{self.file}: {said}" if self.file else said

    def located(self, file: str, under: str | None = None) -> ConfigError:
        """The same error, said as found in `file`, its settings under `under`."""
        return ConfigError(
            self.problem, self.setting, parts=self.parts, file=file, under=under, top_level=self.top_level
        )


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


class FeedError(SyndicateError):
    """A feed that cannot be read or an entry that cannot be announced; nothing is sent."""


class ManifestError(SyndicateError):
    """No usable record of the last build's posts."""


class PluginError(SyndicateError, ImportError):
    """An installed package's entry in the channels group (registry.py) is not a usable channel
    type: one line, naming the package and the entry point. Raised only where a site names that
    type. Also an ImportError: what cannot be used is something that could not be imported."""


class GitError(SyndicateError):
    """git failed in a way that is not a race; the run stops before any further remote call."""


class LaneCrashed(SyndicateError):
    """An unexpected error in one lane; the others finished their current pair and stopped.
    `trace` is its traceback with credentials redacted, for a verbose log."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message)
        self.trace = trace


class RunInterrupted(SyndicateError):
    """Ctrl-C (or SIGTERM) during a run: says what finished and what is left for the next run
    (`left`: one line per pair, said by the engine, which knows the plan and the ledger)."""

    def __init__(self, finished: int, left: Sequence[str], by: str = "Ctrl-C") -> None:
        self.by = by
        self.left = list(left)
        stopped = "terminated" if by == "SIGTERM" else "interrupted"
        super().__init__(
            f"{stopped} ({by}): {finished} pair(s) finished, {len(self.left)} left for the "
            f"next run (the ledger is consistent):\n  " + "\n  ".join(self.left)
        )
