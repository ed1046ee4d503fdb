"""The ledger kept in git, for CI: a working tree dies with its container, so "durable" means
"pushed" (reliability.md §0.3, §3.5).

Every transition becomes a commit of the ledger file alone, built with git plumbing on top of the
remote branch's tip, so the user's index and working tree are never touched (except that the
ledger file is written). For at-most-once channels the `in_flight` commit is pushed *before* the
remote call. A push rejected as non-fast-forward is a compare-and-swap failure: fetch, and if
another writer changed none of our pairs, reapply our transitions to their ledger and push again
(bounded); if they changed one of ours, raise StaleLedger: the caller re-reads and re-plans, and
never sends on a stale ledger. Any other push failure stops the run before further remote calls.

Credentials are the remote's business (the CI checkout's helper or extraheader): nothing here
writes to `.git/config` or builds a URL, and git's own output is redacted before it is shown.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mkdocs_syndicate.errors import ConfigError, SyndicateError
from mkdocs_syndicate.ledger.format import dump, parse
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.ledger.schema import Posts, Record
from mkdocs_syndicate.safety import one_line

PUSH_TRIES = 5
SKIP_CI = "[skip ci]"
_BOT = ("mkdocs-syndicate", "mkdocs-syndicate@users.noreply.github.com")
_NON_FAST_FORWARD = re.compile(r"non-fast-forward|fetch first|\[rejected\]|stale info|cannot lock ref", re.I)
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


class GitError(SyndicateError):
    """git failed in a way that is not a race; the run stops before any further remote call."""


@dataclass(frozen=True)
class Pair:
    post_key: str
    channel: str


class StaleLedger(SyndicateError):
    """Another writer changed pairs this run was about to send: re-read, re-plan, never send."""

    def __init__(self, contested: list[Pair], remote_posts: Posts, tip: str) -> None:
        self.contested = contested
        self.remote_posts = remote_posts
        self.tip = tip
        names = ", ".join(f"({p.post_key}, {p.channel})" for p in contested[:5])
        super().__init__(f"another run changed {names} in the pushed ledger; re-planning")


def redact_git(text: str) -> str:
    return _USERINFO.sub("***@", text)


@dataclass
class _Pending:
    pair: Pair
    before: Record | None
    after: Record
    url: str
    title: str


@dataclass
class GitMirror:
    """Commits (and pushes) each ledger transition. One per run; `start()` before any transition."""

    ledger_path: Path
    settings: GitSettings
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    tip: str | None = None                       # the commit our next commit builds on
    pushed: str | None = None                    # the last commit known to be on the remote
    unpushed: list[_Pending] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    started_head: str | None = None

    # ------------------------------------------------------------------ setup

    def start(self) -> str | None:
        """Find the repository and the branch; with push, fetch it. Returns the ledger text the
        run must start from (the remote's, when it differs from the file), or None."""
        self.root = Path(self._git("rev-parse", "--show-toplevel", cwd=self.ledger_path.parent).strip())
        self.rel = self.ledger_path.resolve().relative_to(self.root.resolve()).as_posix()
        self.branch = self._branch()
        self.started_head = self._git("rev-parse", "HEAD").strip()
        if not self.settings.push:
            self.tip = self.pushed = self.started_head
            return None
        self._fetch()
        remote_tip = self._remote_tip()
        self.tip = self.pushed = remote_tip or self.started_head
        remote_text = self._show(self.tip)
        local_text = self.ledger_path.read_text(encoding="utf-8") if self.ledger_path.exists() else None
        if remote_text is not None and remote_text != local_text:
            return remote_text  # the pushed ledger is the truth (see module docstring)
        return None

    def _branch(self) -> str:
        if self.settings.branch:
            return self.settings.branch
        if self.env.get("GITHUB_REF_NAME") and self.env.get("GITHUB_REF_TYPE", "branch") == "branch":
            return self.env["GITHUB_REF_NAME"]
        try:
            return self._git("symbolic-ref", "--short", "HEAD").strip()
        except GitError:
            raise ConfigError("git.branch: required, because HEAD is detached (no branch to push the "
                              "ledger to)") from None

    # ------------------------------------------------------------------ the hook

    def persist(self, batch: list[tuple[Pair, Record | None, Record, str, str]], posts: Posts,
                needs_push: bool, text: str | None = None) -> Posts:
        """Commit `posts` (the ledger after `batch`); push when `needs_push`. Returns the posts to
        keep, which include other writers' changes when a push had to be redone on their tip."""
        self.unpushed.extend(_Pending(pair, before, after, url, title) for pair, before, after, url, title in batch)
        message = _message(batch)
        self.messages.append(message)
        text = text if text is not None else dump(posts)  # the Ledger passes the text it just wrote
        self.tip = self._commit(text, self.tip, message)
        if not self.settings.push:
            self.unpushed.clear()
            return posts
        if not needs_push:
            return posts
        return self.push(posts)

    def push(self, posts: Posts) -> Posts:
        """Push our commits; on a race, rebuild them on the new remote tip (see module docstring)."""
        if not self.settings.push or self.tip == self.pushed:
            return posts
        for attempt in range(1, PUSH_TRIES + 1):
            result = self._run("push", "--porcelain", self.settings.remote, f"{self.tip}:refs/heads/{self.branch}")
            if result.returncode == 0:
                self.pushed = self.tip
                self.unpushed.clear()
                self.messages.clear()
                return posts
            output = redact_git(result.stderr + result.stdout)
            if not _NON_FAST_FORWARD.search(output):
                raise GitError(f"git push to {self.settings.remote}/{self.branch} failed: {output.strip()[-400:]}")
            self._fetch()
            remote_tip = self._remote_tip()
            assert remote_tip is not None
            remote_posts = parse(self._show(remote_tip) or _EMPTY, f"{self.settings.remote}/{self.branch}:{self.rel}")
            contested = [p.pair for p in self.unpushed
                         if _record(remote_posts, p.pair) != p.before]
            if contested:
                raise StaleLedger(contested, remote_posts, remote_tip)
            posts = _reapply(remote_posts, self.unpushed)
            message = "; ".join(self.messages)
            self.tip = self._commit(dump(posts), remote_tip, message)
            self.pushed = remote_tip
            time.sleep(random.uniform(0.05, 0.3) * attempt)
        raise GitError(f"git push to {self.settings.remote}/{self.branch} was rejected {PUSH_TRIES} times "
                       "in a row (others keep pushing); stopping")

    def adopt_remote(self, tip: str) -> None:
        """After StaleLedger: the remote's tip is our new base; our unpushed transitions are void."""
        self.tip = self.pushed = tip
        self.unpushed.clear()
        self.messages.clear()

    def finish(self) -> None:
        """Push what is left (at-least-once transitions), then bring the checkout along when only
        the ledger changed: move HEAD to our tip and refresh the index entry of the ledger."""
        if self.tip is None or self.started_head is None or self.tip == self.started_head:
            return
        changed = self._git("diff", "--name-only", self.started_head, self.tip).split()
        if changed != [self.rel]:
            return  # others changed more than the ledger: leave the checkout as it was
        head_ref = self._run("symbolic-ref", "-q", "HEAD").stdout.strip() or "HEAD"
        self._git("update-ref", head_ref, self.tip, self.started_head)
        self._git("add", "--", self.rel)

    # ------------------------------------------------------------------ plumbing

    def _commit(self, text: str, parent: str | None, message: str) -> str:
        blob = self._git("hash-object", "-w", "--stdin", input=text).strip()
        with tempfile.TemporaryDirectory() as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            if parent:
                self._git("read-tree", parent, extra_env=index)
            self._git("update-index", "--add", "--cacheinfo", f"100644,{blob},{self.rel}", extra_env=index)
            tree = self._git("write-tree", extra_env=index).strip()
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        commit = self._git(*args, extra_env=self._identity()).strip()
        return commit

    def _identity(self) -> dict[str, str]:
        """The user's git identity when they have one; otherwise a bot's, for this command only."""
        if self._run("config", "user.email").stdout.strip():
            return {}
        name, email = _BOT
        return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}

    def _fetch(self) -> None:
        result = self._run("fetch", "--quiet", self.settings.remote,
                           f"+refs/heads/{self.branch}:refs/remotes/{self.settings.remote}/{self.branch}")
        if result.returncode != 0 and "couldn't find remote ref" not in result.stderr:
            raise GitError(f"git fetch {self.settings.remote} {self.branch} failed: "
                           f"{redact_git(result.stderr).strip()[-400:]}")

    def _remote_tip(self) -> str | None:
        result = self._run("rev-parse", "--verify", "-q", f"refs/remotes/{self.settings.remote}/{self.branch}")
        return result.stdout.strip() or None

    def _show(self, commit: str) -> str | None:
        result = self._run("show", f"{commit}:{self.rel}")
        return result.stdout if result.returncode == 0 else None

    def _run(self, *args: str, input: str | None = None, cwd: Path | None = None,
             extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(extra_env or {})}
        try:
            return subprocess.run(["git", *args], cwd=cwd or getattr(self, "root", self.ledger_path.parent),
                                  input=input, capture_output=True, text=True, env=env, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from None

    def _git(self, *args: str, **kwargs: Any) -> str:
        result = self._run(*args, **kwargs)
        if result.returncode != 0:
            raise GitError(f"git {args[0]} failed: {redact_git(result.stderr).strip()[-400:]}")
        return str(result.stdout)


_EMPTY = "version: 1\nposts: {}\n...\n"


def _record(posts: Posts, pair: Pair) -> Record | None:
    entry = posts.get(pair.post_key)
    return entry.channels.get(pair.channel) if entry else None


def _reapply(remote: Posts, pending: list[_Pending]) -> Posts:
    from dataclasses import replace

    from mkdocs_syndicate.ledger.schema import PostEntry

    merged = {key: replace(entry, channels=dict(entry.channels)) for key, entry in remote.items()}
    for item in pending:
        entry = merged.get(item.pair.post_key)
        if entry is None:
            entry = merged[item.pair.post_key] = PostEntry(url=item.url, title=item.title)
        entry.channels[item.pair.channel] = item.after
    return merged


def _message(batch: list[tuple[Pair, Record | None, Record, str, str]]) -> str:
    channels = sorted({pair.channel for pair, *_ in batch})
    states = sorted({after.state for _, _, after, _, _ in batch})
    posts = sorted({pair.post_key for pair, *_ in batch})
    what = posts[0] if len(posts) == 1 else f"{len(posts)} posts"
    # One line, control characters escaped: a key must not forge trailers or paragraphs.
    return one_line(f"syndicate: {', '.join(channels)} {'/'.join(states)} for {what} {SKIP_CI}")
