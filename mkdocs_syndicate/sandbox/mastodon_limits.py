"""The sandbox Mastodon's rate limits, written from Mastodon's source
(https://github.com/mastodon/mastodon; the paths below are in it):

- Rack::Attack's throttles (config/initializers/rack_attack.rb), checked before any controller
  runs, keyed by the account the token belongs to (`authenticated_user_id`: every token of the
  account shares them). `throttle_api_delete`: 30 `DELETE /api/v1/statuses/:id` and
  `POST /api/v1/statuses/:id/unreblog` per 30 minutes; `throttle_api_media`: 30
  `POST /api/v1/media` or `/api/v2/media` per 30 minutes; `throttle_per_token_api`: 300 API
  requests per 5 minutes per token. Each counts as sandbox/rack_attack.py says.
  The throttled responder answers 429 `{"error": "Too many requests"}` with `X-RateLimit-Limit`,
  `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset` (the window's end, ISO 8601 with
  microseconds), and no `Retry-After`. A request the throttles let through carries the same three
  headers for its most limited throttle (app/controllers/concerns/rate_limit_headers.rb).
- RateLimiter's families (app/lib/rate_limiter.rb): `statuses`, 300 per 3 hours per account, in
  fixed windows aligned to the epoch. RateLimitable's `after_create` records one for each Status
  (a new status) and each StatusEdit (an edit: app/models/status_edit.rb,
  `rate_limit by: :account, family: :statuses`; the snapshot of the original that a first edit
  also saves is made with `rate_limit: false`); over the limit it raises
  Mastodon::RateLimitExceededError, answered 429 with the family's headers
  (`override_rate_limit_headers :create` and `:update`, `family: :statuses`, in
  Api::V1::StatusesController).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from mkdocs_syndicate.emulator_api import Response
from mkdocs_syndicate.sandbox import rack_attack


@dataclass(frozen=True)
class Window(rack_attack.Window):
    """A limit in fixed epoch windows, answered with Mastodon's X-RateLimit-* headers."""

    def reset(self, now: float) -> str:
        """`now + (period - now.to_i % period)`, as Mastodon writes it."""
        end = now + self.seconds_left(now)
        return dt.datetime.fromtimestamp(end, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def headers(self, used: int, now: float) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.limit - used)),
            "X-RateLimit-Reset": self.reset(now),
        }

    def refused(self, now: float, *, reset: str | None = None) -> Response:
        """The 429 (Rack::Attack's throttled responder, or RateLimitExceededError's answer)."""
        headers = {**self.headers(self.limit, now), "X-RateLimit-Remaining": "0"}
        if reset is not None:
            headers["X-RateLimit-Reset"] = reset
        return Response(429, {"error": "Too many requests"}, headers)


THROTTLE_API_DELETE = Window("throttle_api_delete", 30, 30 * 60)
THROTTLE_API_MEDIA = Window("throttle_api_media", 30, 30 * 60)
THROTTLE_PER_TOKEN = Window("throttle_per_token_api", 300, 5 * 60)
STATUSES = Window("statuses", 300, 3 * 3600)

# The throttles with a path of their own: (method, path pattern, throttle).
_THROTTLED: tuple[tuple[str, re.Pattern[str], Window], ...] = (
    ("DELETE", re.compile(r"/api/v1/statuses/\d+"), THROTTLE_API_DELETE),
    ("POST", re.compile(r"/api/v1/statuses/\d+/unreblog"), THROTTLE_API_DELETE),
    ("POST", re.compile(r"/api/v\d+/media", re.IGNORECASE), THROTTLE_API_MEDIA),
)
# What the statuses family counts: a new status and an edit.
_FAMILY: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("POST", re.compile(r"/api/v1/statuses")),
    ("PUT", re.compile(r"/api/v1/statuses/[^/]+")),
)


def throttle_of(method: str, path: str) -> Window | None:
    """The Rack::Attack throttle of its own that a request meets, if any."""
    return next((w for m, pattern, w in _THROTTLED if m == method and pattern.fullmatch(path)), None)


def limit_of(method: str, path: str) -> Window:
    """The limit a 429 on this request speaks for: its own throttle, the statuses family, or the
    per-token throttle every API request meets."""
    own = throttle_of(method, path)
    if own is not None:
        return own
    in_family = any(m == method and pattern.fullmatch(path) for m, pattern in _FAMILY)
    return STATUSES if in_family else THROTTLE_PER_TOKEN
