"""The `git:` settings (commit and push every ledger transition, for CI), as the mirror takes them
(config.schema.GitConfig reads and checks them). Apart from the mirror itself, so that reading
the configuration loads no git machinery."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mkdocs_syndicate.errors import ConfigError

# What git refuses in a ref or remote name (git check-ref-format), and what would read as an option.
_NOT_IN_A_NAME = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^[-/.]|/\.|[/.]$|\.lock$")


def git_name_problem(name: object) -> str | None:
    """Why `name` cannot be a git remote or branch name, or None when it can."""
    if not isinstance(name, str) or not name.strip():
        return "must be a name"
    if _NOT_IN_A_NAME.search(name):
        if re.search(r"@(?!\{)", name):  # a URL with user:token@ (the Action's git-remote input): never shown whole
            return f"{_without_userinfo(name)!r} looks like a URL with credentials in it; give a remote's name (origin)"
        return (
            f"{name!r} is not a name git accepts: no spaces or control characters, none of ~ ^ : ? * [ \\, "
            "no '..', '@{' or '//', not starting with '-', '/' or '.', not ending with '/', '.' or '.lock'"
        )
    return None


def _without_userinfo(text: str) -> str:
    """`https://user:token@host/x.git` (or `user:token@host:x.git`) as `https://***@host/x.git`."""
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)?[^/]*@", lambda m: (m.group(1) or "") + "***@", text)


@dataclass(frozen=True)
class GitSettings:
    commit: bool = False
    push: bool = False
    remote: str = "origin"
    branch: str | None = None  # default: $GITHUB_REF_NAME, else the checked-out branch

    def __post_init__(self) -> None:  # a library caller's settings, checked as the schema checks a file's
        for setting, value in (("remote", self.remote), ("branch", self.branch)):
            problem = None if value is None and setting == "branch" else git_name_problem(value)
            if problem is not None:
                raise ConfigError(problem, f"git.{setting}")

    @property
    def enabled(self) -> bool:
        return self.commit or self.push
