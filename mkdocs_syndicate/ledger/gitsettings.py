"""The `git:` settings (commit and push every ledger transition, for CI), as the mirror takes them
(config.schema.GitConfig reads and checks them). Apart from the mirror itself, so that reading
the configuration loads no git machinery."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GitSettings:
    commit: bool = False
    push: bool = False
    remote: str = "origin"
    branch: str | None = None  # default: $GITHUB_REF_NAME, else the checked-out branch

    @property
    def enabled(self) -> bool:
        return self.commit or self.push
