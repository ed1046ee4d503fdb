"""Channel settings from mkdocs.yml, validated up front so a bad value fails the build before
any network call. Errors name the setting as the user wrote it: `channels.<id>.<setting>`."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import Secret, credential_problem

DELIVERIES = ("at_least_once", "at_most_once")
OptionKind = Literal["url", "secret", "text", "int", "float", "bool", "ip", "choice"]


@dataclass(frozen=True)
class Option:
    """One type-specific setting a channel type accepts."""

    kind: OptionKind
    required: bool = False
    only_to_send: bool = False  # needed to create a post, not to read one back (a verify-only run)
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()  # kind "choice": the values the service accepts


@dataclass(frozen=True)
class ChannelSettings:
    id: str
    type: str
    delivery: str
    min_interval: float
    timeout: float
    settle: float  # seconds before an unanswered at-most-once request may be read and resent
    enabled: bool
    template: str | None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def at_most_once(self) -> bool:
        """Public posts: a duplicate can't be unsent (pings are at-least-once)."""
        return self.delivery == "at_most_once"

    def secrets(self) -> list[Secret]:
        return [v for v in self.options.values() if isinstance(v, Secret)]

    def where(self, setting: str) -> str:
        return f"channels.{self.id}.{setting}"


COMMON = {"type", "delivery", "min_interval", "template", "timeout", "settle", "enabled", "label"}
DEFAULT_TIMEOUT = 30.0
DEFAULT_SETTLE = 600.0


def parse_channels(
    raw: Any, registry: Mapping[str, Any], *, check_templates: bool = True, problems: list[str] | None = None
) -> list[ChannelSettings]:
    """`channels:` mapping → settings, in the order written. `registry` maps type → channel class.
    With `problems`, a channel whose settings are wrong adds what is wrong there (every setting,
    not the first) and is left out, so the caller can report all of them at once."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise ConfigError(f"channels: must be a mapping of channel id to settings, not {type(raw).__name__}")
    parsed = []
    seen: dict[str, str] = {}
    for key, values in raw.items():
        channel_id = str(key)
        if channel_id.casefold() in seen:
            raise ConfigError(
                f"channels.{channel_id}: differs from channels.{seen[channel_id.casefold()]} only "
                "by case; channel ids name ledger records, so they must differ in more than that"
            )
        seen[channel_id.casefold()] = channel_id
        try:
            parsed.append(_parse_one(channel_id, values, registry, check_templates))
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
    return parsed


def _parse_one(channel_id: str, values: Any, registry: Mapping[str, Any], check_templates: bool) -> ChannelSettings:
    where = f"channels.{channel_id}"
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: must be a mapping of settings (at least 'type')")
    type_name = values.get("type")
    if not isinstance(type_name, str) or type_name not in registry:
        known = ", ".join(sorted(registry))
        raise ConfigError(f"{where}.type: unknown channel type {type_name!r} (known: {known})")
    cls = registry[type_name]
    spec: Mapping[str, Option] = cls.options
    unknown = set(values) - COMMON - set(spec)
    if unknown:
        allowed = ", ".join(sorted((COMMON | set(spec)) - {"type"}))
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown setting for type {type_name} (allowed: {allowed})")

    delivery = values.get("delivery", cls.default_delivery)
    if delivery not in DELIVERIES:
        raise ConfigError(f"{where}.delivery: must be at_least_once or at_most_once, not {delivery!r}")
    min_interval = _number(values.get("min_interval", cls.default_min_interval), f"{where}.min_interval")
    timeout = _number(values.get("timeout", DEFAULT_TIMEOUT), f"{where}.timeout")
    if timeout <= 0:
        raise ConfigError(f"{where}.timeout: must be more than 0 seconds (at most {DURATION_LIMITS['timeout']:g})")
    if "settle" in values:
        settle = _number(values["settle"], f"{where}.settle")
        if settle < 2 * timeout:
            raise ConfigError(
                f"{where}.settle: {settle:g} s is less than twice the timeout ({timeout:g} s): "
                "a request that timed out may still be running on the server for that long"
            )
    else:
        settle = max(DEFAULT_SETTLE, 2 * timeout)
    enabled = values.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}.enabled: must be true or false")
    label = values.get("label")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ConfigError(f"{where}.label: must be text (what the post page's links call this channel)")
    template = values.get("template")
    if template is not None:
        if not isinstance(template, str):
            raise ConfigError(f"{where}.template: must be text (a Jinja2 template)")
        if check_templates:  # a build that sends nothing need not load the template engine
            from mkdocs_syndicate.content.messages import compile_template

            compile_template(template, f"{where}.template")

    options: dict[str, Any] = {}
    wrong = []
    for name, option in spec.items():
        try:
            options[name] = _option(values.get(name, option.default), option, f"{where}.{name}")
        except ConfigError as exc:  # every malformed setting of the channel, not only the first
            wrong.append(str(exc))
    if wrong:
        raise ConfigError("\n  ".join(wrong))
    return ChannelSettings(channel_id, type_name, delivery, min_interval, timeout, settle, enabled, template, options)


def _number(value: Any, where: str) -> float:
    return seconds(value, where)


# Every duration setting has a documented range (README, "Settings"): a value past it is a typo
# or a way to switch a bound off (`timeout: 1.0e+300` meant no timeout at all).
DURATION_LIMITS: dict[str, float] = {
    "timeout": 300.0,  # seconds: one request
    "settle": 7 * 86400.0,  # seconds: before an unanswered request may be read and resent
    "min_interval": 86400.0,  # seconds between two requests to one channel
    "max_wait": 6 * 3600.0,  # seconds sat through in one run (a CI job's own limit)
    "wait_until_live": 3600.0,  # seconds
    "stale_after_hours": 8760.0,  # hours (a year)
    "backlog_days": 36500.0,  # days
}


def seconds(value: Any, where: str, unit: str = "seconds") -> float:
    """A duration setting: a finite number, 0 or more and at most its documented limit (nan, inf,
    negatives and values past the limit are errors naming the setting and its range)."""
    setting = where.rsplit(".", 1)[-1]
    limit = DURATION_LIMITS.get(setting, 10.0**6)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: must be a number of {unit} from 0 to {limit:g}, not {value!r}")
    if value > limit:
        raise ConfigError(f"{where}: {value:g} {unit} is more than the {limit:g} this setting allows")
    return float(value)


def _option(value: Any, option: Option, where: str) -> Any:
    if value is None:
        return None  # `!ENV` of an unset variable: checked by missing_settings in send mode
    if option.kind == "secret" and value == "":
        return None  # an empty secret (a fork's pull request gets those) is a missing one
    if option.kind == "secret":
        return Secret(check_credential(value, where))
    if option.kind == "url":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be a URL")
        return check_url(value.rstrip("/"), where)
    if option.kind == "text":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be text, not {type(value).__name__}")
        return value
    if option.kind == "choice":
        if value not in option.choices:
            raise ConfigError(f"{where}: must be one of {', '.join(option.choices)}, not {value!r}")
        return value
    if option.kind == "ip":
        try:
            return str(ipaddress.ip_address(str(value).strip()))
        except ValueError:
            raise ConfigError(f"{where}: {value!r} is not an IP address (like 203.0.113.7 or 2001:db8::7)") from None
    if option.kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: must be true or false")
        return value
    if option.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value > 10**9:
            raise ConfigError(f"{where}: must be a whole number above 0, not {value!r}")
        return value
    return _number(value, where)


def check_credential(value: Any, where: str) -> str:
    """Tokens and passwords: what a service would refuse anyway is refused here, by name, before
    any request (and never echoed back: the value may be a real secret)."""
    problem = credential_problem(value)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return str(value)


def check_url(url: str, where: str) -> str:
    """https anywhere; http only for loopback hosts (the sandbox, a local test server)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: {url!r} is not an http(s) URL")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ConfigError(
            f"{where}: {url!r} uses http:// on a non-loopback host; "
            "use https:// (credentials would travel in clear text)"
        )
    return url


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def missing_settings(
    raw: Any, registry: Mapping[str, Any], *, provided: Mapping[str, set[str]] | None = None, reading_only: bool = False
) -> list[str]:
    """Send mode: every enabled channel needs its required settings; never skip one silently.
    Read from the raw `channels:` mapping, so a channel with a malformed setting still has its
    missing ones named. `provided`: per channel type, settings something else supplies (the
    sandbox's credentials)."""
    missing = []
    for key, values in (raw or {}).items() if isinstance(raw, dict) else ():
        type_name = values.get("type") if isinstance(values, dict) else None
        if not isinstance(type_name, str) or type_name not in registry or values.get("enabled", True) is False:
            continue
        for name, option in registry[type_name].options.items():
            if provided is not None and name in provided.get(type_name, set()):
                continue
            if reading_only and option.only_to_send:
                continue
            if option.required and values.get(name) in (None, ""):
                hint = f" ({option.help})" if option.help else ""
                missing.append(
                    f"channels.{key}.{name}: missing (or empty); channel {str(key)!r} cannot send without it{hint}."
                )
    return missing


def config_problems(problems: list[str], missing: list[str]) -> ConfigError:
    """Everything wrong with the channels' settings, in one error (not one per build)."""
    lines = problems + missing
    if missing:
        lines.append(
            "Set them, or set 'enabled: false' on those channels."
            if len(missing) > 1
            else "Set it, or set 'enabled: false' on the channel."
        )
    if len(lines) == 2 and len(missing) == 1 and not problems:
        return ConfigError(f"{lines[0]} {lines[1]}")
    return ConfigError("\n  ".join(lines))


def with_options(channel: ChannelSettings, **changes: Any) -> ChannelSettings:
    return replace(channel, options={**channel.options, **changes})
