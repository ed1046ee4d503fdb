"""The values of the site-level settings, checked (their ranges: the schema has checked their
types), and every value problem of a raw config, the channels' included: shared by a run's
options (config/site.py) and by the schema's list of every error (config/schema.py)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from typing import Any

from mkdocs_syndicate.config.defaults import (
    DEFAULT_BACKLOG_DAYS,
    DEFAULT_MAX_PER_RUN,
    DEFAULT_MAX_WAIT,
    DEFAULT_REMOVAL_RECHECK,
    DEFAULT_STALE_AFTER_HOURS,
)
from mkdocs_syndicate.config.durations import DURATION_LIMITS, duration
from mkdocs_syndicate.config.run import RunSettings
from mkdocs_syndicate.errors import ConfigError, SyndicateError
from mkdocs_syndicate.net.liveness import DEFAULT_TIMEOUT


def site_settings(values: Mapping[str, Any]) -> tuple[RunSettings, list[ConfigError]]:
    """The site-level settings a run takes, checked (their ranges: the schema has checked their
    types), and every one that is wrong. `values`: the loaded settings, or a raw mapping (a
    setting it lacks takes its default)."""
    checked: dict[str, Any] = {}
    problems: list[ConfigError] = []
    checks: dict[str, Callable[[Any], Any]] = {
        "max_per_run": _max_per_run,
        "stale_after_hours": lambda v: duration(v, "stale_after_hours", unit="hours"),
        "since": _since,
        "max_wait": lambda v: duration(v, "max_wait"),
        "wait_until_live": _live_timeout,
        "removal_recheck": lambda v: duration(v, "removal_recheck"),
        "backlog_days": lambda v: duration(v, "backlog_days", unit="days"),
    }
    for name, check in checks.items():
        try:
            checked[name] = check(values.get(name, _DEFAULTS.get(name)))
        except ConfigError as exc:
            problems.append(exc)
    checked.pop("stale_after_hours", None)  # read by the status view, not the run
    return RunSettings(**checked), problems  # type: ignore[typeddict-item]


def value_problems(given: Mapping[str, Any]) -> list[ConfigError]:
    """What is wrong with the values of raw settings whose types are right: the site-level ranges
    and the channels' settings (not those only a sending run needs). For a config the schema
    already refused, so that one build lists every error."""
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.registry import clients

    problems = site_settings(given)[1]
    channels = given.get("channels")
    if isinstance(channels, dict):
        wrong: list[ConfigError] = []
        try:
            parse_channels(channels, clients(), check_templates=True, problems=wrong)
        except ConfigError as exc:  # ids that differ only by case: nothing further is checked
            wrong.append(exc)
        problems += [part for error in wrong for part in (error.parts or (error,))]
    return problems


_DEFAULTS: dict[str, Any] = {
    "max_wait": DEFAULT_MAX_WAIT,
    "stale_after_hours": DEFAULT_STALE_AFTER_HOURS,
    "backlog_days": DEFAULT_BACKLOG_DAYS,
    "wait_until_live": False,
    "removal_recheck": DEFAULT_REMOVAL_RECHECK,
}


def _max_per_run(value: object) -> int:
    if value is None:
        return DEFAULT_MAX_PER_RUN
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"must be 1 or more, not {value!r}", "max_per_run")
    return value


def _since(value: object) -> dt.datetime | None:
    from mkdocs_syndicate.content.posts import as_datetime

    if value is None:
        return None
    try:
        return as_datetime(value, "since")
    except SyndicateError:
        raise ConfigError(
            f"{value!r} is not a date; write it like 2026-11-28 or 2026-11-28T09:30:00Z", "since"
        ) from None


def _live_timeout(value: object) -> float | None:
    """wait_until_live: false | true (600 s) | seconds."""
    if value is False or value is None:
        return None
    if value is True:
        return DEFAULT_TIMEOUT
    limit = DURATION_LIMITS["wait_until_live"]
    if isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= limit:
        return float(value)
    raise ConfigError(f"true, false, or the seconds to wait (more than 0, at most {limit:g})", "wait_until_live")
