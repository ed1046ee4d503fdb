"""The ledger: per (post, channel) state, loaded strictly, every transition written durably.

One writer at a time: `Ledger.open_for_writing` takes an OS lock next to the file (released by
the OS even on SIGKILL). After a failed write the ledger refuses every later transition, so the
runner cannot make a remote call it could not record.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.errors import LedgerError, LedgerLocked, LedgerWriteError
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text, sweep_stale_temp_files
from mkdocs_syndicate.ledger.format import dump, parse_with_layout
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State, record_in
from mkdocs_syndicate.localdirs import lock_path, private_dir

if TYPE_CHECKING:
    import filelock

    from mkdocs_syndicate.ledger.gitmirror import GitMirror

# Which states the runner may move a record from, for each target state. An in_flight record
# over a done one is an update or a delete of that copy (it carries `op`: checked apart).
_ALLOWED_FROM: dict[State, set[State | None]] = {
    State.IN_FLIGHT: {None, State.FAILED, State.IN_FLIGHT, State.DONE},
    State.DONE: {State.IN_FLIGHT},
    State.FAILED: {State.IN_FLIGHT},
    State.SKIPPED: {None, State.FAILED, State.IN_FLIGHT},
    State.DELETED: {State.IN_FLIGHT},
}
# A human's decision (`mkdocs-syndicate resolve`) may also say a failed pair did go out, or that
# a post whose copy was deleted (removed, or deleted by its author) is to be announced again, was
# announced again by hand, or is never to be announced here again (ledger/resolution.py: a new life);
# and that a post held as perhaps an old one is a new one, pending (engine/clues.py).
_BY_HAND_FROM: dict[State, set[State | None]] = {
    **_ALLOWED_FROM,
    State.DONE: {State.IN_FLIGHT, State.FAILED, State.DELETED},
    State.FAILED: {None, State.IN_FLIGHT, State.DELETED},
    State.SKIPPED: {None, State.FAILED, State.IN_FLIGHT, State.DELETED},
}


@dataclass(frozen=True)
class PostRef:
    """What the ledger keeps about a post besides its records. `src` and `pin` (its source file
    and pinned syndicate_id, when known) are written with the post's first transition, so a later
    move of the post is recognised (engine/moves.py)."""

    key: str
    url: str
    title: str
    src: str | None = None
    pin: str | None = None
    fingerprint: str | None = None  # content/fingerprint.py: written with the first transition too
    entry_id: str | None = None  # a feed's id for the post (Atom id, RSS guid, JSON Feed id)


@dataclass(frozen=True)
class Transition:
    post: PostRef
    channel: str
    record: Record


class Ledger:
    def __init__(self, path: Path, posts: Posts, lock: filelock.BaseFileLock | None, *, canonical: bool = True) -> None:
        self.path = path
        self._posts = posts
        self.canonical = canonical  # the file (or in git mode the pushed ledger) is as `dump` writes it
        self._lock = lock
        self._poisoned: BaseException | None = None
        self._durable = posts  # the last state on disk (and in git)
        self._staged: list[Transition] = []  # applied in memory, not yet flushed
        self.abandoned: Posts | None = None  # the view in memory when a flush failed
        self.writes = 0
        self.mirror: GitMirror | None = None  # git persistence (CI), see gitmirror.py
        self._rendered: dict[str, tuple[PostEntry, str]] = {}  # per-post text of the last write
        self._flushing: Posts | None = None  # what the flush under way writes to the file
        # The run's kind, set by the engine from `sandbox:` (None: a tool that shows every record).
        # A sandbox run's records carry `sandbox: true`; a real run sees none of them.
        self.sandbox: bool | None = None

    # -------------------------------------------------------------- opening

    @classmethod
    def read(cls, path: Path) -> Ledger:
        """Load without the lock, for plan mode and status: never writes."""
        posts, canonical = _load(path)
        return cls(path, posts, lock=None, canonical=canonical)

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
            raise LedgerLocked(
                str(path), f"another mkdocs-syndicate run holds {shown}; waited {lock_timeout:g} s. Nothing was sent."
            ) from None
        except OSError as exc:  # a read-only folder, a folder where the lock file goes
            raise LedgerError(
                str(path),
                f"cannot create the lock file {shown} "
                f"({exc.strerror or exc}); is the folder writable? Nothing was sent.",
            ) from None
        try:
            sweep_stale_temp_files(path)
            posts, canonical = _load(path)
            return cls(path, posts, lock=lock, canonical=canonical)
        except OSError as exc:
            lock.release()
            raise LedgerError(
                str(path),
                f"cannot clean up next to the ledger ({exc.strerror or exc}); "
                "is the folder writable? Nothing was sent.",
            ) from None
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
        """The pair's record as this run sees it: to a real run, a sandbox run's record is none."""
        record = record_in(self._posts, post_key, channel)
        if record is not None and record.sandbox and self.sandbox is False:
            return None  # a rehearsal's: the pair is pending, and its first transition replaces it
        return record

    def records(self) -> Iterator[tuple[str, str, Record]]:
        """Every (post key, channel, record) as this run sees it (see `record`)."""
        hide = self.sandbox is False
        for key, entry in self._posts.items():
            for channel, record in entry.channels.items():
                if not (hide and record.sandbox):
                    yield key, channel, record

    def sandbox_records(self) -> int:
        """How many records a sandbox run wrote."""
        return sum(record.sandbox for entry in self._posts.values() for record in entry.channels.values())

    def may_work_on(self, record: Record | None) -> bool:
        """Whether this run may take a pair with this record (as `record` gives it): a sandbox run
        leaves a real copy (done, deleted, skipped) and a real request whose outcome is unknown
        (in_flight) alone: it never announces a real copy to the emulators, nor settles a real
        request by reading them. A real failed record is pending to both."""
        return self.sandbox is not True or record is None or record.sandbox or record.state == State.FAILED

    def text(self) -> str:
        return dump(self._posts)

    # -------------------------------------------------------------- transitions

    def apply(self, transitions: Iterable[Transition], *, by_hand: bool = False, push: bool = True) -> None:
        """Apply transitions and make them durable in one atomic write (or raise, keeping the last
        durable state). With a git mirror they are also committed, and pushed unless `push` is
        False (a later push carries them)."""
        self.stage(transitions, by_hand=by_hand)
        self.flush(push=push)

    def stage(self, transitions: Iterable[Transition], *, by_hand: bool = False) -> None:
        """Check and apply transitions in memory; `flush` makes them durable. A group commit
        stages the transitions of several lanes and flushes them together (engine/groupcommit.py)."""
        if self._lock is None:
            raise LedgerError(str(self.path), "opened read-only; cannot record a transition")
        if self._poisoned is not None:
            raise LedgerWriteError(
                str(self.path), f"an earlier write failed ({self._poisoned}); refusing to continue"
            ) from self._poisoned
        batch = list(transitions)
        if self.sandbox is True:  # every record a sandbox run writes says so, whichever part wrote it
            batch = [t if t.record.sandbox else replace(t, record=replace(t.record, sandbox=True)) for t in batch]
        self._posts = _with_transitions(self._posts, batch, _BY_HAND_FROM if by_hand else _ALLOWED_FROM)
        self._staged.extend(batch)

    @property
    def has_staged(self) -> bool:
        return bool(self._staged)

    def flush(self, push: bool = True) -> None:
        """Make everything staged durable: the file, and with a mirror a commit (and a push)."""
        pending = self.begin_flush()
        if pending is None:
            return
        try:
            kept = self.write_flush(pending, push)
        except BaseException as exc:
            self.fail_flush(exc)
            raise
        self.end_flush(pending, kept)

    def begin_flush(self) -> Flush | None:
        """Take what is staged (in the event loop's thread); `write_flush` may then run in another."""
        if not self._staged:
            return None
        pending = Flush(self._posts, self._staged)
        self._staged = []
        self._flushing = pending.posts
        return pending

    def write_flush(self, pending: Flush, push: bool) -> Posts:
        """The slow part, safe to run in a worker thread: nothing here touches state that staging
        changes. Returns the posts that are now durable (with other writers' records merged in
        when a git push had to be redone on their tip)."""
        changes = [(t.post.key, t.channel, str(t.record.state)) for t in pending.transitions]
        return self._write(pending.posts, changes, push)

    def _write(
        self, posts: Posts, changes: list[tuple[str, str, str]], push: bool, message: str | None = None
    ) -> Posts:
        """The file, then with a mirror the commit (and push) whose message lists `changes`
        (or is `message`)."""
        text = dump(posts, self._rendered)
        # With push, durable means pushed: the file is the checkout's copy, and a run starts from
        # the remote's ledger whenever the two differ, so its fsyncs would only delay the push.
        pushed = self.mirror is not None and self.mirror.settings.push
        try:
            atomic_write_text(self.path, text, durable=not pushed)
        except OSError as exc:
            raise LedgerWriteError(
                str(self.path),
                f"could not write the ledger ({exc.strerror or exc}); stopping before any further remote call",
            ) from exc
        self.canonical = True
        if self.mirror is None:
            return posts
        from mkdocs_syndicate.errors import GitError

        try:
            kept = self.mirror.persist(posts, text, changes, push, message)
        except GitError as exc:
            raise LedgerWriteError(str(self.path), f"{exc}; stopping before any further remote call") from None
        if kept is not posts:  # others' records merged in on a new remote tip: keep them locally too
            atomic_write_text(self.path, dump(kept, self._rendered), durable=not pushed)
        return kept

    def end_flush(self, pending: Flush, kept: Posts) -> None:
        """Back in the event loop's thread: what was flushed is durable."""
        if kept is not pending.posts:
            # Others' records came in under ours; what was staged meanwhile goes on top again.
            self._posts = _with_transitions(kept, self._staged)
        self._durable = kept
        self._flushing = None
        self.writes += 1
        if checkpoints.enabled():
            for item in pending.transitions:
                checkpoints.note(f"{item.post.key}|{item.channel}|{item.record.state}")

    def fail_flush(self, error: BaseException) -> None:
        """A flush failed: refuse every later transition, and show the last durable state (what
        was staged never became a record anyone can rely on)."""
        self._poisoned = error
        self.abandoned = self._posts
        self._posts = self._durable
        self._staged = []
        written, self._flushing = self._flushing, None
        if self.mirror is not None and written is not None:
            self._unwrite_unpushed(written)

    def _unwrite_unpushed(self, written: Posts) -> None:
        """In git mode the file is written before the commit and push: after one that failed
        (refused, killed by the same Ctrl-C, lost to a race), the file holds in_flight records
        whose at-most-once requests waited for that push and never left, while the run reports
        those pairs as the durable ledger has them (pending). Take them out of the file too, so
        that no later run waits a settle time and reads for nothing (issue 36); the records of
        requests that did go out (done, failed) stay."""
        from mkdocs_syndicate.ledger.merge import without_unpushed_in_flight

        assert self.mirror is not None
        kept = without_unpushed_in_flight(written, self._durable)
        with contextlib.suppress(OSError):  # the write that failed may have been this file's: it is as it was
            atomic_write_text(self.path, dump(kept, self._rendered), durable=not self.mirror.settings.push)

    def push_if_ahead(self) -> None:
        """With git push: commit and push the ledger when it holds records the remote lacks (ours,
        merged onto another run's ledger after a lost race, with no round left to carry them)."""
        mirror = self.mirror
        if mirror is None or not mirror.settings.push:
            return
        from mkdocs_syndicate.ledger.merge import changed_pairs

        ahead = sorted(changed_pairs(mirror.base, self._posts))
        if not ahead and mirror.tip == mirror.pushed:
            return
        records = [(key, channel, self.record(key, channel)) for key, channel in ahead]
        changes = [(key, channel, record.state if record else "removed") for key, channel, record in records]
        self._posts = self._durable = self._write(self._posts, changes, push=True)

    def reset_to(self, posts: Posts) -> None:
        """Replace this ledger with `posts` (the pushed ledger after a lost race), durably."""
        atomic_write_text(self.path, dump(posts, self._rendered))
        self._posts = self._durable = posts
        self._staged = []
        self._poisoned = None
        self.abandoned = None

    def rewrite_canonical(self) -> bool:
        """Write the ledger back in the canonical layout when it was read in another (block
        style from a YAML formatter, hand edits): the full parser would otherwise read it on
        every run, and in git mode, which starts from the pushed ledger and writes only on a
        change, forever. In git mode it is committed, and pushed with push. Before any
        transition of the run; True when it wrote."""
        if self.canonical:
            return False
        if self._lock is None:
            raise LedgerError(str(self.path), "opened read-only; cannot rewrite it")
        if self._poisoned is not None or self._staged:
            raise LedgerWriteError(str(self.path), "a rewrite must come before the run's transitions")
        message = f"syndicate: {self.path.name} in the canonical layout (no record changed)"
        self._posts = self._durable = self._write(self._posts, [], push=True, message=message)
        self.canonical = True
        return True

    def rename_channel(self, old: str, new: str) -> int:
        """Move every record of channel `old` to `new`, in one write; how many posts had one. A
        rename is not a transition (no state changes), so it is written whole."""
        if self._lock is None:
            raise LedgerError(str(self.path), "opened read-only; cannot rename a channel")
        clash = next((key for key, entry in self._posts.items() if new in entry.channels), None)
        if clash is not None:
            raise LedgerError(
                str(self.path),
                f"channel {new!r} already has records (e.g. {clash}); a rename would mix two channels' history",
            )
        posts: Posts = {}
        changes: list[tuple[str, str, str]] = []
        for key, entry in self._posts.items():
            posts[key] = entry
            if old in entry.channels:
                moved = {(new if channel == old else channel): record for channel, record in entry.channels.items()}
                posts[key] = PostEntry(entry.url, entry.title, dict(sorted(moved.items())))
                changes.append((key, new, f"renamed from {old}"))
        if changes:
            self._posts = self._durable = self._write(posts, changes, push=True)
        return len(changes)

    def rewrite(self, posts: Posts, changes: list[tuple[str, str, str]]) -> None:
        """Replace the posts with `posts` in one durable write (pushed, in git mode), before any
        transition of the run: a post's entry re-keyed after a move, or given what identifies it
        (engine/moves.py). `changes` name what changed, for the commit message."""
        if self._lock is None:
            raise LedgerError(str(self.path), "opened read-only; cannot record a move")
        if self._poisoned is not None or self._staged:
            raise LedgerWriteError(str(self.path), "a rewrite must come before the run's transitions")
        self._posts = self._durable = self._write(posts, changes, push=True)

    def preview(self, posts: Posts) -> None:
        """A read-only ledger seen as it would be after a rewrite (a plan writes nothing)."""
        if self._lock is not None:
            raise LedgerError(str(self.path), "a ledger open for writing is rewritten, not previewed")
        self._posts = posts

    def set(self, post: PostRef, channel: str, record: Record) -> None:
        self.apply([Transition(post, channel, record)])


@dataclass(frozen=True)
class Flush:
    """A group of staged transitions on its way to disk (and git)."""

    posts: Posts
    transitions: list[Transition]


def _with_transitions(
    posts: Posts, transitions: list[Transition], allowed_from: dict[State, set[State | None]] | None = None
) -> Posts:
    """`posts` with `transitions` applied (each checked against `allowed_from` when given). Only
    the entries they touch are copied: the others (and their rendered text) are reused, and a
    flush in progress keeps the mapping it took, unchanged."""
    result = dict(posts)
    copied: set[str] = set()
    for item in transitions:
        current = result.get(item.post.key)
        if current is not None and item.post.key not in copied:
            current = result[item.post.key] = replace(current, channels=dict(current.channels))
            copied.add(item.post.key)
        if allowed_from is not None:
            _check_allowed(current, item, allowed_from)
        if current is None:
            current = result[item.post.key] = PostEntry(url=item.post.url, title=item.post.title)
            copied.add(item.post.key)
        current.url, current.title = item.post.url or current.url, item.post.title or current.title
        current.src = item.post.src or current.src
        current.id = item.post.pin or current.id
        current.fingerprint = current.fingerprint or item.post.fingerprint  # identify() refreshes a stale one
        current.entry_id = item.post.entry_id or current.entry_id
        current.channels[item.channel] = item.record
    return result


def _check_allowed(entry: PostEntry | None, item: Transition, allowed_from: dict[State, set[State | None]]) -> None:
    before = entry.channels.get(item.channel) if entry else None
    if before is not None and item.record.sandbox and not before.sandbox and before.state != State.FAILED:
        raise ValueError(  # Ledger.may_work_on: a rehearsal never touches a real copy or request
            f"illegal transition: a sandbox run's {item.record.state} over a real {before.state} "
            f"record for ({item.post.key}, {item.channel})"
        )
    if before is not None and before.sandbox and not item.record.sandbox and not _allowed(before, item, allowed_from):
        before = None  # a rehearsal's record is not a real copy: a real run starts the pair afresh
    if not _allowed(before, item, allowed_from):
        raise ValueError(
            f"illegal transition {before.state if before else 'pending'} -> "
            f"{item.record.state} for ({item.post.key}, {item.channel})"
        )


def _allowed(before: Record | None, item: Transition, allowed_from: dict[State, set[State | None]]) -> bool:
    was = before.state if before else None
    # Only an update or a delete may start from a copy that exists: never a second create.
    wrong_op = item.record.state == State.IN_FLIGHT and was == State.DONE and item.record.op is None
    return was in allowed_from[item.record.state] and not wrong_op


def _load(path: Path) -> tuple[Posts, bool]:
    """The posts, and whether the file is in the canonical layout (no file is: nothing to rewrite)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, True
    except UnicodeDecodeError as exc:
        raise LedgerError(str(path), f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LedgerError(str(path), f"cannot read: {exc.strerror}") from None
    return parse_with_layout(text, str(path))
