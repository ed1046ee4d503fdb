"""Rack::Attack's throttles as Mastodon and Forem configure them (sandbox/mastodon_limits.py,
sandbox/forem.py): each counts every request it matches, refused or not, in fixed windows
aligned to the epoch (rack-attack's cache keys each count by `now.to_i / period`), and a
request is refused once its window's count is over the limit. Weibo's daily budget
(sandbox/weibo.py) is counted in such windows too, a day long."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Window:
    """A limit counted in fixed windows of `period` seconds aligned to the epoch; the counts
    live in the emulator's state (`rate_windows`), as Rack::Attack's live in the cache store."""

    name: str
    limit: int
    period: int

    def used(self, state: dict[str, Any], now: float) -> int:
        """How many the current window has counted."""
        counter = state.get("rate_windows", {}).get(self.name, {})
        return int(counter.get("count", 0)) if counter.get("window") == int(now // self.period) else 0

    def count(self, state: dict[str, Any], now: float) -> int:
        """One more in the current window; how many it has counted now."""
        used = self.used(state, now) + 1
        state.setdefault("rate_windows", {})[self.name] = {"window": int(now // self.period), "count": used}
        return used

    def seconds_left(self, now: float) -> int:
        """`period - now.to_i % period`: what Rack::Attack's default responder sends as Retry-After."""
        return self.period - int(now) % self.period
