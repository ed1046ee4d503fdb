"""A human's decision on one pair (`mkdocs-syndicate resolve`): which decisions a record allows,
and the record each one makes. The ledger's own rules, so the command only asks and prints."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.schema import Record, State


@dataclass(frozen=True)
class Decision:
    kind: Literal["done", "retry", "skip"]
    url: str | None = None  # done: where the post is
    remote_id: str | None = None  # done: its id on the service, if known

    def describe(self) -> str:
        if self.kind == "done":
            return "marked done" + (f" ({self.url})" if self.url else "")
        return "to be sent again" if self.kind == "retry" else "skipped"


def resolved(
    where: str, current: Record | None, decision: Decision, at: str, note: str, *, known: bool = True
) -> Record | str:
    """The record `decision` makes for a pair whose record is `current` (None: never attempted),
    or a sentence saying that nothing needs to change. `known`: the ledger has an entry for the
    post; a post it has none for may be held as perhaps an old one (engine/clues.py), and
    `--retry` then records it as a new post, pending. Refused (SyndicateError, naming the pair
    `where`) when the pair is finished: a post that went out cannot be skipped or sent again.
    What a later resend or read must reuse (key, first attempt, payload hash) is carried forward,
    except from a `deleted` record."""
    if current is not None and current.review:
        return _reviewed(where, current, decision, at, note)
    if current is not None and current.state in (State.DONE, State.SKIPPED) and decision.kind != "skip":
        raise SyndicateError(f"{where} is already {current.state}; nothing to resolve")
    # Never attempted: nothing to carry forward. Deleted: the copy its ids, parts and uploads name
    # is gone, and a new life starts from nothing (under new client-chosen ids: its life counted
    # one up), whatever is decided.
    if current is None:
        base = Record(State.FAILED, 0, at)
    elif current.state == State.DELETED:
        base = current.new_life(at, "a new life")
    else:
        base = current
    if decision.kind == "done":
        if base.parts and decision.remote_id is None and decision.url is None:
            # A thread left as it is: its first part is the copy, the parts sent stay listed.
            return base.moved(State.DONE, at, remote_id=base.remote_id, remote_url=base.remote_url, note=note)
        return base.moved(State.DONE, at, remote_id=decision.remote_id, remote_url=decision.url, note=note)
    state = current.state if current is not None else None
    if decision.kind == "retry":
        if state is None and not known:  # decided a new post, not an old one moved: its key is known now
            return replace(base, error="resolved by hand: a new post, not an old one moved", note=note)
        if state in (None, State.FAILED):
            return f"{where} is already pending: the next run sends it"
        if state == State.DELETED:  # a new announcement: a new life
            return replace(base, error="resolved by hand: announce again (its copy was deleted)", note=note)
        return base.moved(State.FAILED, at, error="resolved by hand: send again", note=note)
    if state == State.SKIPPED:
        return f"{where} is already skipped"
    if state == State.DONE:
        raise SyndicateError(f"{where} is done (it went out); it cannot be skipped")
    return base.moved(State.SKIPPED, at, note=note)


def _reviewed(where: str, current: Record, decision: Decision, at: str, note: str) -> Record:
    """A pair held for a person (`review`): a change a read did not prove, or a copy that is not
    this post's. `--retry`: the next run reads the copy again and decides (a change not made is
    made again, after a read shows the copy is this post's). `--done`: the person saw the copy as
    it should be: an edit's target recorded, a delete's copy gone, or (with --url/--remote-id)
    the record pointed at this post's own copy."""
    if decision.kind == "skip":
        raise SyndicateError(f"{where} has a copy on the service; it cannot be skipped: use --retry or --done")
    cleared = replace(current, review=None, note=note)
    if decision.kind == "retry":
        return cleared
    remote_id = decision.remote_id or current.remote_id
    remote_url = decision.url or current.remote_url
    if current.op == "delete":
        return cleared.gone(at, "deleted (seen gone by hand)")
    return cleared.moved(State.DONE, at, remote_id=remote_id, remote_url=remote_url, note=note)
