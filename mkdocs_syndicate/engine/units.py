"""What a lane carries (engine/runner.py): a unit, one request's worth of pairs, and an attempt,
a unit's way through this run: the last event and what came with it, as its endings read it."""

from __future__ import annotations

from dataclasses import dataclass

from mkdocs_syndicate.channels.base import Channel, Kind, Outcome
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.endings import Facts
from mkdocs_syndicate.engine.pacing import PacedHttp
from mkdocs_syndicate.engine.plan import PendingPair
from mkdocs_syndicate.engine.policy import Event
from mkdocs_syndicate.timeutil import epoch_to_iso


@dataclass
class Unit:
    """What one request carries: one pair, or, on a batched channel (IndexNow), a batch of pairs
    that share each outcome. The lane's loop and the policy's steps treat both alike."""

    members: list[PendingPair]
    batch: list[Post] | None = None  # a batched channel's request: its posts, as the channel grouped them
    read_first: bool = False  # an in_flight record: read the remote side before anything else
    not_before: float = 0.0  # a settle wait: the read may not come sooner
    sends: int = 0  # requests for it so far in this run (not reset by a settle wait)


@dataclass
class Attempt:
    """One unit's way through this run: the last event and what came with it."""

    channel: Channel
    http: PacedHttp
    unit: Unit
    event: Event = Kind.NOT_SENT
    reason: str = ""
    outcome: Outcome | None = None  # the last send's outcome (its error, for the record)
    found: tuple[str | None, str | None] = (None, None)  # remote id and URL from the last read
    ref: str | None = None  # what else names the copy the last read found (Bluesky's cid)

    def facts(self, now: str) -> Facts:
        """What the attempt has come to, for its members' endings (engine/endings.py)."""
        batch = self.unit.batch
        return Facts(
            self.channel.id,
            self.channel.secrets(),
            self.event,
            now,
            reason=self.reason,
            outcome=self.outcome,
            found=self.found,
            batch=len(batch) if batch is not None else None,
            sends=self.unit.sends,
        )


def settle_reason(unit: Unit) -> str:
    """A settle wait as the run prints it: which post, and when its read comes (issue 53)."""
    posts = ", ".join(member.post.key for member in unit.members)
    return (
        f"settle: {posts} is read at {epoch_to_iso(unit.not_before)}: the server may still be working on "
        "the last request, and nothing is sent again before a read proves it absent"
    )
