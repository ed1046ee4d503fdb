"""The `git:` settings (commit and push every ledger transition, for CI), validated by name. Apart
from the mirror itself, so that reading the configuration loads no git machinery."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mkdocs_syndicate.errors import ConfigError


@dataclass(frozen=True)
class GitSettings:
    commit: bool = False
    push: bool = False
    remote: str = "origin"
    branch: str | None = None  # default: $GITHUB_REF_NAME, else the checked-out branch

    @property
    def enabled(self) -> bool:
        return self.commit or self.push


def parse_git_settings(raw: object, where: str = "git") -> GitSettings:
    if raw in (None, {}, False):
        return GitSettings()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping like {{commit: true, push: true}}")
    unknown = set(raw) - {"commit", "push", "remote", "branch"}
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown setting (commit, push, remote, branch)")
    for name in ("commit", "push"):
        if name in raw and not isinstance(raw[name], bool):
            raise ConfigError(f"{where}.{name}: must be true or false")
    for name in ("remote", "branch"):
        if name in raw and raw[name] is not None and not (isinstance(raw[name], str) and raw[name].strip()):
            raise ConfigError(f"{where}.{name}: must be a name")
    push = bool(raw.get("push", False))
    return GitSettings(
        commit=bool(raw.get("commit", push)) or push,
        push=push,
        remote=str(raw.get("remote") or "origin"),
        branch=raw.get("branch"),
    )
