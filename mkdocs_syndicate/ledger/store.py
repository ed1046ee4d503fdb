"""The ledger: per (post, channel) state, loaded strictly, every transition written durably.

One writer at a time: `Ledger.open_for_writing` takes an OS lock next to the file (released by
the OS even on SIGKILL). After a failed write the ledger refuses every later transition, so the
runner cannot make a remote call it could not record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.errors import LedgerError, LedgerLocked, LedgerWriteError
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text, sweep_stale_temp_files
from mkdocs_syndicate.ledger.format import dump, parse
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record
from mkdocs_syndicate.localdirs import lock_path, private_dir

if TYPE_CHECKING:
    import filelock

    from mkdocs_syndicate.ledger.gitmirror import GitMirror

# Which states the runner may move a record from, for each target state.
_ALLOWED_FROM: dict[str, set[str | None]] = {
    "in_flight": {None, "failed", "in_flight"},
    "done": {"in_flight"},
    "failed": {"in_flight"},
    "skipped": {None, "failed", "in_flight"},
}
# A human's decision (`mkdocs-syndicate resolve`) may also say a failed pair did go out.
_BY_HAND_FROM: dict[str, set[str | None]] = {**_ALLOWED_FROM, "done": {"in_flight", "failed"}}


@dataclass(frozen=True)
class PostRef:
    """What the ledger keeps about a post besides its records."""

    key: str
    url: str
    title: str


@dataclass(frozen=True)
class Transition:
    post: PostRef
    channel: str
    record: Record


class Ledger:
    def __init__(self, path: Path, posts: Posts, lock: filelock.BaseFileLock | None) -> None:
        self.path = path
        self._posts = posts
        self._lock = lock
        self._poisoned: BaseException | None = None
        self.writes = 0
        self.mirror: GitMirror | None = None   # git persistence (CI), see gitstore.py
        self._rendered: dict[str, tuple[PostEntry, str]] = {}   # per-post text of the last write

    # -------------------------------------------------------------- opening

    @classmethod
    def read(cls, path: Path) -> Ledger:
        """Load without the lock, for plan mode and status: never writes."""
        return cls(path, _load(path), lock=None)

    @classmethod
    def open_for_writing(cls, path: Path, lock_timeout: float = 10.0) -> Ledger:
        """Take the lock, sweep temp files of a killed run, load. Close with `close()`."""
        if not path.parent.is_dir():
            raise LedgerError(str(path), f"folder {path.parent} does not exist")
        if path.is_dir():
            raise LedgerError(str(path), "is a folder; `ledger:` must name a file (e.g. ledger.yml)")
        import filelock  # only a run that writes takes the lock

        where = lock_path(path)
        shown = f"{where.parent.name}/{where.name}"
        try:
            private_dir(where.parent)
            lock = filelock.FileLock(str(where), timeout=lock_timeout)
            lock.acquire()
        except filelock.Timeout:
            raise LedgerLocked(str(path), f"another mkdocs-syndicate run holds {shown}; "
                               f"waited {lock_timeout:g} s. Nothing was sent.") from None
        except OSError as exc:  # a read-only folder, a folder where the lock file goes
            raise LedgerError(str(path), f"cannot create the lock file {shown} "
                              f"({exc.strerror or exc}); is the folder writable? Nothing was sent.") from None
        try:
            sweep_stale_temp_files(path)
            return cls(path, _load(path), lock=lock)
        except OSError as exc:
            lock.release()
            raise LedgerError(str(path), f"cannot clean up next to the ledger ({exc.strerror or exc}); "
                              "is the folder writable? Nothing was sent.") from None
        except BaseException:
            lock.release()
            raise

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- queries

    @property
    def posts(self) -> Posts:
        return self._posts

    def record(self, post_key: str, channel: str) -> Record | None:
        entry = self._posts.get(post_key)
        return entry.channels.get(channel) if entry else None

    def text(self) -> str:
        return dump(self._posts)

    # -------------------------------------------------------------- transitions

    def apply(self, transitions: Iterable[Transition], *, by_hand: bool = False, push: bool = True) -> None:
        """Apply transitions and make them durable in one atomic write (or raise, changing nothing).
        With a git mirror they are also committed, and pushed unless `push` is False (an
        at-least-once in_flight, which a later push carries)."""
        if self._lock is None:
            raise LedgerError(str(self.path), "opened read-only; cannot record a transition")
        if self._poisoned is not None:
            raise LedgerWriteError(str(self.path), f"an earlier write failed ({self._poisoned}); "
                                   "refusing to continue") from self._poisoned
        batch = list(transitions)
        befores = [self.record(item.post.key, item.channel) for item in batch]
        # Copy only the entries this batch touches: the others (and their rendered text) are reused.
        staged = dict(self._posts)
        copied: set[str] = set()
        for item in batch:
            current = staged.get(item.post.key)
            if current is not None and item.post.key not in copied:
                current = staged[item.post.key] = replace(current, channels=dict(current.channels))
                copied.add(item.post.key)
            before = current.channels.get(item.channel) if current else None
            allowed = (_BY_HAND_FROM if by_hand else _ALLOWED_FROM)[item.record.state]
            if (before.state if before else None) not in allowed:
                raise ValueError(f"illegal transition {before.state if before else 'pending'} -> "
                                 f"{item.record.state} for ({item.post.key}, {item.channel})")
            if current is None:
                current = staged[item.post.key] = PostEntry(url=item.post.url, title=item.post.title)
                copied.add(item.post.key)
            current.url, current.title = item.post.url or current.url, item.post.title or current.title
            current.channels[item.channel] = item.record
        text = dump(staged, self._rendered)
        try:
            atomic_write_text(self.path, text)
        except OSError as exc:
            self._poisoned = exc
            raise LedgerWriteError(str(self.path), f"could not write the ledger ({exc.strerror or exc}); "
                                   "stopping before any further remote call") from exc
        if self.mirror is not None:
            staged = self._mirror(batch, befores, staged, push, text)
        self._posts = staged
        self.writes += 1
        if checkpoints.enabled():
            for item in batch:
                checkpoints.note(f"{item.post.key}|{item.channel}|{item.record.state}")

    def _mirror(self, batch: list[Transition], befores: list[Record | None], staged: Posts, push: bool,
                text: str) -> Posts:
        from mkdocs_syndicate.ledger.gitmirror import GitError, Pair, StaleLedger

        assert self.mirror is not None
        items = [(Pair(t.post.key, t.channel), before, t.record, t.post.url, t.post.title)
                 for t, before in zip(batch, befores, strict=True)]
        try:
            kept = self.mirror.persist(items, staged, needs_push=push, text=text)
        except StaleLedger as exc:
            self._poisoned = exc
            raise
        except GitError as exc:
            self._poisoned = exc
            raise LedgerWriteError(str(self.path), f"{exc}; stopping before any further remote call") from None
        if kept is not staged:  # others' changes merged in on a new remote tip: keep them locally too
            atomic_write_text(self.path, dump(kept, self._rendered))
        return kept

    def reset_to(self, posts: Posts) -> None:
        """Replace this ledger with `posts` (the pushed ledger after a lost race), durably."""
        atomic_write_text(self.path, dump(posts, self._rendered))
        self._posts = posts
        self._poisoned = None

    def set(self, post: PostRef, channel: str, record: Record) -> None:
        self.apply([Transition(post, channel, record)])


def _load(path: Path) -> Posts:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise LedgerError(str(path), f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LedgerError(str(path), f"cannot read: {exc.strerror}") from None
    return parse(text, str(path))

