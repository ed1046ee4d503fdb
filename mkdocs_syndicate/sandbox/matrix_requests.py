"""What Synapse 1.163.2 keeps in memory about a client's requests, for the sandbox's homeserver
(sandbox/matrix.py): lost when the server restarts, as the emulator object is. The paths below
are in Synapse's source (https://github.com/element-hq/synapse/tree/v1.163.2).

- The HTTP transaction cache (synapse/rest/client/transactions.py `HttpTransactionCache`): a
  `PUT` with a transaction id (a send, a redaction) is answered from it before its servlet runs,
  so before the body is even parsed. Its key is the request's path, the user and the device
  (`_get_transaction_key`); only a request that succeeded is kept ("we don't cache transient
  errors like rate-limiting errors"), and entries are cleaned every 30 minutes once older than 30
  minutes ("at *LEAST* 30 mins, and at *MOST* 60 mins"): here, 30 minutes. Behind it, the
  database's `event_txn_id_device_id` table keeps the event per (room, user, device, txnId) for
  24 hours (sandbox/matrix.py).
- The event senders' rate limit `rc_message` (synapse/api/ratelimiting.py `Ratelimiter`,
  synapse/config/ratelimiting.py: `per_second` 0.2 and `burst_count` 10 by default): a leaky
  bucket per user. handlers/message.py checks it without counting (`update=False`) before it
  looks the transaction id up in the database, and counts the event once it is built
  (`handle_new_client_event`), before a redaction's permission is checked. The 429 is
  M_LIMIT_EXCEEDED "Too Many Requests" with `retry_after_ms` and `Retry-After` (api/errors.py
  `LimitExceededError`). Quirk `rc_message`: `true` for Synapse's defaults, or
  `{"per_second": …, "burst_count": …}`; without it the emulator does not limit (a test server's
  `rc_message` set high).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mkdocs_syndicate.emulator_api import Response

CACHE_LIFETIME = 30 * 60.0
RC_MESSAGE_DEFAULTS = {"per_second": 0.2, "burst_count": 10.0}


@dataclass
class TransactionCache:
    """Successful answers to PUTs with a transaction id, by (path, device)."""

    answers: dict[tuple[str, str], tuple[dict[str, Any], float]] = field(default_factory=dict)

    def get(self, path: str, device: str, now: float) -> Response | None:
        found = self.answers.get((path, device))
        if found is None or now > found[1] + CACHE_LIFETIME:
            return None
        return Response(200, dict(found[0]))

    def keep(self, path: str, device: str, answer: Response, now: float) -> None:
        if answer.status == 200 and isinstance(answer.body, dict):
            self.answers[(path, device)] = (dict(answer.body), now)


@dataclass
class MessageLimiter:
    """`Ratelimiter.can_do_action` for one user: (action count, when the count started)."""

    count: float = 0.0
    start: float = 0.0

    def refused(self, settings: Any, now: float) -> Response | None:
        """The 429 if an event may not be sent now (nothing counted), else None."""
        rate, burst = _settings(settings)
        if rate is None:
            return None
        count, start = self._decayed(rate, now)
        if count - (now - start) * rate <= burst - 1:
            return None
        allowed_at = max(now, start + (count - burst + 1) / rate)
        wait_ms = int(1000 * (allowed_at - now))
        body = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests", "retry_after_ms": wait_ms}
        return Response(429, body, {"Retry-After": str(math.ceil(wait_ms / 1000))})

    def record(self, settings: Any, now: float) -> None:
        """One event sent (counted whether or not it was allowed: the check came before)."""
        rate, _ = _settings(settings)
        if rate is not None:
            self.count, self.start = self._decayed(rate, now)
            self.count += 1

    def _decayed(self, rate: float, now: float) -> tuple[float, float]:
        """The count and its start, reset once everything counted has leaked away."""
        if self.count - (now - self.start) * rate < 0:
            return 0.0, now
        return self.count, self.start


def _settings(settings: Any) -> tuple[float | None, float]:
    """(per_second, burst_count) of quirk `rc_message`, or (None, 0) when it is not set."""
    if not settings:
        return None, 0.0
    chosen = {**RC_MESSAGE_DEFAULTS, **(settings if isinstance(settings, dict) else {})}
    return float(chosen["per_second"]), float(chosen["burst_count"])
