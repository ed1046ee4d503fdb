"""Duration settings: each has a documented range (docs/security.md), looked up by the setting's
name. A value past it is a typo or a way to switch a bound off (`timeout: 1.0e+300` meant no
timeout at all)."""

from __future__ import annotations

import math

from mkdocs_syndicate.errors import ConfigError

DURATION_LIMITS: dict[str, float] = {
    "timeout": 300.0,  # seconds: one request
    "settle": 7 * 86400.0,  # seconds: before an unanswered request may be read and resent
    "min_interval": 86400.0,  # seconds between two requests to one channel
    "max_wait": 6 * 3600.0,  # seconds sat through in one run (a CI job's own limit)
    "wait_until_live": 3600.0,  # seconds
    "removal_recheck": 600.0,  # seconds between the two reads of a removed post's page
    "stale_after_hours": 8760.0,  # hours (a year)
    "backlog_days": 36500.0,  # days
}
OTHER_LIMIT = 10.0**6  # a number setting without a documented range of its own


def duration(value: object, name: str, *, setting: str | None = None, unit: str = "seconds") -> float:
    """The duration setting `name` (its limit's key), said as `setting` (its path: `channels.x.timeout`):
    a finite number, 0 or more and at most its limit; nan, inf, negatives and values past the limit
    are errors naming the setting and its range."""
    limit = DURATION_LIMITS.get(name, OTHER_LIMIT)
    where = setting or name
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"must be a number of {unit} from 0 to {limit:g}, not {value!r}", where)
    if value > limit:
        raise ConfigError(f"{value:g} {unit} is more than the {limit:g} this setting allows", where)
    return float(value)
