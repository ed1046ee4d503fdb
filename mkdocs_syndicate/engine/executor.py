"""The one loop that carries every write of a post's life — a first send (engine/runner.py), a
thread's later part (engine/threads.py), an edit or a delete of a copy (engine/updates.py), a
thread part's edit or delete (engine/thread_changes.py) — from its durable intent through its
request and the reads that prove it to the record that ends it.

Its shape is tenacity's `Retrying.__call__`: the loop does not know what a write is. It asks the
operation for its first event (a send, or a read when a request of an earlier run may be out),
then, after each event, for the policy's next step (engine/policy.py): a step that ends the
operation's way in this run (`ENDING_STEPS`) goes to its `end`, any other to its `step`, the
strategy that carries that step out (a wait, a write that says nothing was made, the next send
or read). What differs between writes — what is staged, what is read, what is written at the
end — is each operation's own; the order of "intent → call → proof → record" is this loop's
alone. See docs/design/protocol.md, "One operation, one loop".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from mkdocs_syndicate.engine.endings import ENDING_STEPS
from mkdocs_syndicate.engine.policy import Action

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True)
class Ended(Generic[T]):
    """A step that ended the operation's way in this run, with what it comes to (a unit's later
    reads, a lane's stop)."""

    value: T


class Operation(Protocol[T]):
    async def first(self) -> None:
        """The first event: the send, or a read when an earlier request may be out."""

    def decide(self) -> Action:
        """The policy's next step, after the last event."""

    async def step(self, action: Action) -> Ended[T] | None:
        """A step that goes on (send again, retry, read, read later): carried out, its event kept
        for the next `decide`; or an `Ended` when the way ends here."""

    async def end(self, action: Action) -> T:
        """The way's end in this run (one of ENDING_STEPS): written and reported."""


async def carry(operation: Operation[T]) -> T:
    """Carry `operation` as far as this run may."""
    await operation.first()
    while True:
        action = operation.decide()
        if action.step in ENDING_STEPS:
            return await operation.end(action)
        ended = await operation.step(action)
        if ended is not None:
            return ended.value
