"""The ledger kept in git, for CI: a working tree dies with its container, so "durable" means
"pushed" (docs/design/protocol.md, "In CI, durable means pushed").

A flush of the ledger (one group of transitions, see engine/groupcommit.py) becomes one commit of
the ledger file alone, written by a single `git fast-import` on top of the remote branch's tip,
so the user's index and working tree are never touched (except that the ledger file is written),
and one `git push`. The run starts from the remote branch as the checkout last fetched it and
does not fetch again while its pushes succeed: a push is a compare-and-swap, so a remote that
moved meanwhile refuses it. Then, and only then: fetch, and merge three ways per pair (the last
pushed ledger is the base): if the other writer changed none of the pairs this run changed,
our records go on top of theirs and the push is retried (bounded); if they changed one of ours,
raise StaleLedger: the caller takes their ledger and re-plans, and never sends on a stale one.
Any other push failure stops the run before further remote calls.

Credentials are the remote's business (the CI checkout's helper or extraheader): nothing here
writes to `.git/config` or builds a URL, and git's own output is redacted before it is shown.
"""

from __future__ import annotations

import os
import random
import re
import secrets
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.errors import ConfigError, GitError, LedgerError
from mkdocs_syndicate.ledger.format import dump, parse, parse_with_layout
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.ledger.merge import StaleLedger, contested_pairs, merge
from mkdocs_syndicate.ledger.schema import Posts
from mkdocs_syndicate.safety import one_line

PUSH_TRIES = 5
SKIP_CI = "[skip ci]"
_BOT = "mkdocs-syndicate <mkdocs-syndicate@users.noreply.github.com>"
_NON_FAST_FORWARD = re.compile(r"non-fast-forward|fetch first|\[rejected\]|stale info|cannot lock ref", re.I)
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
# fast-import needs a ref to build on; it is deleted again in the same stream (null sha), so a
# commit stays unreferenced until the push names it and nothing is left in the user's refs.
_SCRATCH_REF = "refs/syndicate/ledger"
_NULL = "0" * 40


def redact_git(text: str) -> str:
    """git's output as we may quote it: credentials in URLs hidden. (A hook's escape sequences,
    `remote: \\x1b[…`, are escaped where every error is: SyndicateError.__str__.)"""
    return _USERINFO.sub("***@", text)


@dataclass
class GitMirror:
    """Commits (and pushes) the ledger, a group of transitions at a time. One per run; `start()`
    before the first flush."""

    ledger_path: Path
    settings: GitSettings
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    tip: str | None = None  # the commit our next commit builds on
    pushed: str | None = None  # the last commit known to be on the remote
    base: Posts = field(default_factory=dict)  # the ledger in `pushed` (the three-way merge's base)
    started_head: str | None = None
    claimed: set[tuple[str, str]] = field(default_factory=set)  # the pairs this run's plan works on
    foreign: bool = False  # the tip holds others' commits, not only ours
    processes: int = 0  # git processes started (tests count them per push)
    run_id: str = field(default_factory=lambda: secrets.token_hex(8))  # makes our commits ours alone
    exclusive: set[str] | None = None  # at-most-once channel ids (None: treat every one so)
    remote_canonical: bool = True  # the pushed ledger `start` returned is in the canonical layout

    # ------------------------------------------------------------------ setup

    def start(self, local: Posts | None = None) -> Posts | None:
        """Find the repository, the branch and our identity; with push, start from the remote
        branch as last fetched (fetching only when the checkout never did). Returns the ledger the
        run must start from (the remote's, when it differs from the file), or None. `local`: the
        file's posts as the ledger read them, so an unchanged ledger is not parsed a second time."""
        here = self.ledger_path.parent
        located, identity = self._together(
            ("rev-parse", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD"),
            ("-c", "user.useConfigOnly=true", "var", "GIT_COMMITTER_IDENT"),
            cwd=here,
        )
        if located.returncode != 0:
            raise _failed("rev-parse", located)
        top, head, self.head_ref = located.stdout.split("\n")[:3]
        self.root = Path(top)
        self.rel = self.ledger_path.resolve().relative_to(self.root.resolve()).as_posix()
        self.branch = self._branch()
        self.started_head = head
        # The user's git identity when they set one (config or environment); otherwise a bot's,
        # rather than whatever git would guess from the host name. "Name <email> 1700000000 +0000"
        # without the time.
        self.identity = identity.stdout.strip().rsplit(" ", 2)[0] if identity.returncode == 0 else _BOT
        if not self.settings.push:
            self.tip = self.pushed = self.started_head
            return None
        return self._start_from_remote(local, head)

    def _start_from_remote(self, local: Posts | None, head: str) -> Posts | None:
        """With push: the remote branch's ledger is where this run starts (the module docstring)."""
        local_text = _utf8(self.ledger_path.read_bytes(), str(self.ledger_path)) if self.ledger_path.exists() else None
        remote_tip, remote_text = self._remote_ledger()
        if remote_tip is None:
            self._fetch()
            remote_tip, remote_text = self._remote_ledger()
        tip = self.tip = self.pushed = remote_tip or head
        if remote_tip is None:
            remote_text = self._show(tip)
        self.foreign = self.tip != self.started_head  # commits beyond ours between HEAD and the tip
        if remote_text is None:
            self.base = {}
            return None
        if remote_text == local_text and local is not None:
            self.base = local
            return None
        self.base, self.remote_canonical = parse_with_layout(remote_text, self._where())
        # The pushed ledger is the truth (see module docstring).
        return self.base if remote_text != local_text else None

    def _branch(self) -> str:
        if self.settings.branch:
            return self.settings.branch
        if self.env.get("GITHUB_REF_NAME") and self.env.get("GITHUB_REF_TYPE", "branch") == "branch":
            return self.env["GITHUB_REF_NAME"]
        try:
            return self._git("symbolic-ref", "--short", "HEAD").strip()
        except GitError:
            raise ConfigError(
                "required, because HEAD is detached (no branch to push the ledger to)", "git.branch"
            ) from None

    # ------------------------------------------------------------------ a flush

    def persist(
        self, posts: Posts, text: str, changes: list[tuple[str, str, str]], push: bool, message: str | None = None
    ) -> Posts:
        """Commit `posts` (whose text is `text`) and, with `push` and push enabled, push it.
        `changes` are the (post, channel, state) transitions since the last commit, for the
        message (or `message`, when no record changed). Returns the posts to keep: other writers'
        changes are in them when a push had to be redone on their tip."""
        subject = one_line(f"{message} {SKIP_CI}") if message else commit_message(changes)
        self.tip = self._commit(text, self.tip, subject)
        checkpoints.hit("git.committed")
        if not (self.settings.push and push):
            return posts
        return self.push(posts)

    def push(self, posts: Posts) -> Posts:
        """Push our commits; on a race, merge onto the new remote tip (see module docstring)."""
        if not self.settings.push or self.tip == self.pushed:
            return posts
        for attempt in range(1, PUSH_TRIES + 1):
            result = self._run("push", "--porcelain", self.settings.remote, f"{self.tip}:refs/heads/{self.branch}")
            if result.returncode == 0:
                checkpoints.hit("git.pushed")
                self.pushed = self.tip
                self.base = posts
                return posts
            output = redact_git(result.stderr + result.stdout)
            if not _NON_FAST_FORWARD.search(output):
                raise GitError(f"git push to {self.settings.remote}/{self.branch} failed: {output.strip()[-400:]}")
            self._fetch()
            remote_tip, remote_text = self._remote_ledger()
            assert remote_tip is not None
            theirs = parse(remote_text or _EMPTY, self._where())
            contested = contested_pairs(self.base, posts, theirs, self.claimed, self.exclusive)
            if contested:
                raise StaleLedger(contested, theirs, remote_tip, self.base)
            posts = merge(self.base, posts, theirs)
            self.foreign = True
            self.tip = self._commit(
                dump(posts), remote_tip, f"syndicate: this run's records on top of another run's {SKIP_CI}"
            )
            self.pushed, self.base = remote_tip, theirs
            time.sleep(random.uniform(0.05, 0.3) * attempt)
        raise GitError(
            f"git push to {self.settings.remote}/{self.branch} was rejected {PUSH_TRIES} times "
            "in a row (others keep pushing); stopping"
        )

    def adopt_remote(self, tip: str, posts: Posts) -> None:
        """After StaleLedger: the remote's tip and ledger are our new base."""
        self.tip = self.pushed = tip
        self.base = posts
        self.foreign = True

    def finish(self) -> None:
        """Bring the checkout along when only the ledger changed: move HEAD to our tip and
        refresh the index entry of the ledger."""
        if self.tip is None or self.started_head is None or self.tip == self.started_head:
            return
        if self.foreign:  # others' commits came in between: look before moving the checkout
            changed = self._git("diff", "--name-only", self.started_head, self.tip).split()
            if changed != [self.rel]:
                return  # others changed more than the ledger: leave the checkout as it was
        # Independent (the branch ref, the index): side by side, after the last push they are
        # what the run still waits for.
        moved = self._together(("update-ref", self.head_ref, self.tip, self.started_head), ("add", "--", self.rel))
        for result in moved:
            if result.returncode != 0:
                raise _failed(result.args[1], result)

    # ------------------------------------------------------------------ plumbing

    def _commit(self, text: str, parent: str | None, message: str) -> str:
        """One process: blob, tree and commit by `git fast-import`, which prints the commit id.
        The message ends with this run's id: two runs committing the same ledger on the same
        parent in the same second would otherwise make the same commit, and the second push
        would succeed as a no-op, both runs believing their in_flight pushed (regression)."""
        data, subject = text.encode("utf-8"), f"{message}\n\nSyndicate-Run: {self.run_id}".encode()
        ident = self.identity.encode("utf-8")
        stream = b"".join(
            [
                b"reset %s\ncommit %s\nmark :1\n" % (_SCRATCH_REF.encode(), _SCRATCH_REF.encode()),
                b"author %s now\ncommitter %s now\n" % (ident, ident),
                b"data %d\n%s\n" % (len(subject), subject),
                b"from %s\n" % parent.encode() if parent else b"",
                b"M 100644 inline %s\ndata %d\n%s\n\n" % (_quoted(self.rel), len(data), data),
                b"get-mark :1\n",
                b"reset %s\nfrom %s\n\n" % (_SCRATCH_REF.encode(), _NULL.encode()),
            ]
        )
        # With push, the commit is durable once pushed: fsyncing the local pack first only delays
        # it, and so does exploding a three-object pack into loose objects (a child process).
        quick = ("-c", "core.fsync=none", "-c", "fastimport.unpackLimit=0") if self.settings.push else ()
        result = self._run(*quick, "fast-import", "--quiet", "--date-format=now", "--force", input_bytes=stream)
        commit = result.stdout.strip()
        if result.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40,64}", commit):
            raise _failed("fast-import", result)
        return commit

    def _fetch(self) -> None:
        result = self._run(
            "fetch",
            "--quiet",
            self.settings.remote,
            f"+refs/heads/{self.branch}:refs/remotes/{self.settings.remote}/{self.branch}",
        )
        if result.returncode != 0 and "couldn't find remote ref" not in result.stderr:
            raise _failed(f"fetch {self.settings.remote} {self.branch}", result)

    def _remote_ledger(self) -> tuple[str | None, str | None]:
        """The remote-tracking tip and the ledger in it, in one process (None, None: no such ref)."""
        ref = f"refs/remotes/{self.settings.remote}/{self.branch}"
        out = self._run_bytes("cat-file", "--batch", input_bytes=f"{ref}\n{ref}:{self.rel}\n".encode())
        objects: list[tuple[str, str, bytes]] = []  # (name, type, content) or (name, "missing", b"")
        while out:
            header, _, out = out.partition(b"\n")
            fields = header.decode("utf-8", "replace").split(" ")
            if len(fields) != 3 or not fields[2].isdigit():  # "<name> missing", whatever the name holds
                objects.append((fields[0], "missing", b""))
                continue
            size = int(fields[2])
            objects.append((fields[0], fields[1], out[:size]))
            out = out[size + 1 :]
        if not objects or objects[0][1] != "commit":
            return None, None
        ledger = objects[1] if len(objects) > 1 and objects[1][1] == "blob" else None
        return objects[0][0], _utf8(ledger[2], self._where()) if ledger else None

    def _show(self, commit: str) -> str | None:
        result = self._spawn(("show", f"{commit}:{self.rel}"), None, None)
        return _utf8(result.stdout, f"{commit[:12]}:{self.rel}") if result.returncode == 0 else None

    def _where(self) -> str:
        return f"{self.settings.remote}/{self.branch}:{self.rel}"

    def _run(
        self, *args: str, input_bytes: bytes | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return _decoded(self._spawn(args, input_bytes, cwd))

    def _run_bytes(self, *args: str, input_bytes: bytes) -> bytes:
        """stdout as bytes (object sizes count bytes); empty when git failed."""
        result = self._spawn(args, input_bytes, None)
        return result.stdout if result.returncode == 0 else b""

    def _spawn(
        self, args: tuple[str, ...], input_bytes: bytes | None, cwd: Path | None
    ) -> subprocess.CompletedProcess[bytes]:
        process = self._popen(args, cwd)
        return self._wait(process, args, input_bytes)

    def _together(self, *commands: tuple[str, ...], cwd: Path | None = None) -> list[subprocess.CompletedProcess[str]]:
        """Independent git commands run side by side (each start costs milliseconds)."""
        processes = [self._popen(args, cwd) for args in commands]
        return [_decoded(self._wait(process, args, None)) for process, args in zip(processes, commands, strict=True)]

    def _popen(self, args: tuple[str, ...], cwd: Path | None) -> subprocess.Popen[bytes]:
        env = {**self.env, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.processes += 1
        try:
            return subprocess.Popen(
                ["git", *args],
                cwd=cwd or getattr(self, "root", self.ledger_path.parent),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        except OSError as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from None

    @staticmethod
    def _wait(
        process: subprocess.Popen[bytes], args: tuple[str, ...], input_bytes: bytes | None
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            stdout, stderr = process.communicate(input_bytes, timeout=120)
        except subprocess.TimeoutExpired as exc:
            process.kill()
            process.communicate()
            raise GitError(f"git {args[0]} could not run: {exc}") from None
        return subprocess.CompletedProcess(["git", *args], process.returncode, stdout, stderr)

    def _git(self, *args: str, **kwargs: Any) -> str:
        result = self._run(*args, **kwargs)
        if result.returncode != 0:
            raise _failed(args[0], result)
        return str(result.stdout)


_EMPTY = "version: 1\nposts: {}\n...\n"


def _utf8(data: bytes, where: str) -> str:
    """A ledger's text; one that is not UTF-8 (another writer's, or an editor's Latin-1) is named."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LedgerError(
            where,
            f"not UTF-8 text (byte {exc.start}); a ledger is UTF-8: fix the file where it is (re-save it as "
            "UTF-8, and push it when it is on the remote branch)",
        ) from None


def _decoded(result: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
    )


def _failed(what: str, result: subprocess.CompletedProcess[str]) -> GitError:
    """`git <what> failed: <the end of its stderr>`, credentials in URLs redacted."""
    return GitError(f"git {what} failed: {redact_git(result.stderr).strip()[-400:]}")


def _quoted(path: str) -> bytes:
    """A path in fast-import's C-style quotes (spaces, quotes, backslashes and all)."""
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'.encode()


def commit_message(changes: list[tuple[str, str, str]]) -> str:
    """One line: what moved where, e.g. `syndicate: masto, bsky in_flight for blog/x/ [skip ci]`,
    or a count when a group holds many posts."""
    states: dict[str, set[str]] = {}
    for _, channel, state in changes:
        states.setdefault(state, set()).add(channel)
    posts = sorted({key for key, _, _ in changes})
    what = posts[0] if len(posts) == 1 else f"{len(posts)} posts"
    parts = "; ".join(f"{', '.join(sorted(channels))} {state}" for state, channels in sorted(states.items()))
    # One line, control characters escaped: a key must not forge trailers or paragraphs.
    return one_line(f"syndicate: {parts} for {what} {SKIP_CI}")
