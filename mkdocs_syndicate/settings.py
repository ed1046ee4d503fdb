"""Channel settings from mkdocs.yml, validated up front so a bad value fails the build before
any network call. Errors name the setting as the user wrote it: `channels.<id>.<setting>`."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping
from urllib.parse import urlsplit

from .errors import ConfigError
from .redaction import Secret

DELIVERIES = ("at_least_once", "at_most_once")
OptionKind = Literal["url", "secret", "text", "int", "float", "bool"]


@dataclass(frozen=True)
class Option:
    """One type-specific setting a channel type accepts."""

    kind: OptionKind
    required: bool = False
    default: Any = None
    help: str = ""


@dataclass(frozen=True)
class ChannelSettings:
    id: str
    type: str
    delivery: str
    min_interval: float
    timeout: float
    enabled: bool
    template: str | None
    options: Mapping[str, Any] = field(default_factory=dict)

    def secrets(self) -> list[Secret]:
        return [v for v in self.options.values() if isinstance(v, Secret)]

    def where(self, setting: str) -> str:
        return f"channels.{self.id}.{setting}"


COMMON = {"type", "delivery", "min_interval", "template", "timeout", "enabled"}


def parse_channels(raw: Any, registry: Mapping[str, Any]) -> list[ChannelSettings]:
    """`channels:` mapping → settings, in the order written. `registry` maps type → channel class."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise ConfigError("channels: must be a mapping of channel id to settings, "
                          f"not {type(raw).__name__}")
    parsed = []
    for channel_id, values in raw.items():
        parsed.append(_parse_one(str(channel_id), values, registry))
    return parsed


def _parse_one(channel_id: str, values: Any, registry: Mapping[str, Any]) -> ChannelSettings:
    where = f"channels.{channel_id}"
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: must be a mapping of settings (at least 'type')")
    type_name = values.get("type")
    if type_name not in registry:
        known = ", ".join(sorted(registry))
        raise ConfigError(f"{where}.type: unknown channel type {type_name!r} (known: {known})")
    cls = registry[type_name]
    spec: Mapping[str, Option] = cls.options
    unknown = set(values) - COMMON - set(spec)
    if unknown:
        allowed = ", ".join(sorted((COMMON | set(spec)) - {"type"}))
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown setting for type {type_name} "
                          f"(allowed: {allowed})")

    delivery = values.get("delivery", cls.default_delivery)
    if delivery not in DELIVERIES:
        raise ConfigError(f"{where}.delivery: must be at_least_once or at_most_once, not {delivery!r}")
    min_interval = _number(values.get("min_interval", cls.default_min_interval), f"{where}.min_interval")
    timeout = _number(values.get("timeout", 30), f"{where}.timeout")
    if timeout <= 0:
        raise ConfigError(f"{where}.timeout: must be more than 0 seconds")
    enabled = values.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}.enabled: must be true or false")
    template = values.get("template")
    if template is not None:
        if not isinstance(template, str):
            raise ConfigError(f"{where}.template: must be text (a Jinja2 template)")
        from .messages import compile_template  # late: messages imports nothing from here

        compile_template(template, f"{where}.template")

    options: dict[str, Any] = {}
    for name, option in spec.items():
        options[name] = _option(values.get(name, option.default), option, f"{where}.{name}")
    return ChannelSettings(channel_id, type_name, delivery, min_interval, timeout, enabled,
                           template, options)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"{where}: must be a number of seconds (0 or more), not {value!r}")
    return float(value)


def _option(value: Any, option: Option, where: str) -> Any:
    if value is None:
        return None  # `!ENV` of an unset variable: checked by require_credentials in send mode
    if option.kind == "secret":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be text (use !ENV NAME to read it from the environment)")
        return Secret(value)
    if option.kind == "url":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be a URL")
        return check_url(value.rstrip("/"), where)
    if option.kind == "text":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be text, not {type(value).__name__}")
        return value
    if option.kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: must be true or false")
        return value
    if option.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}: must be a whole number above 0, not {value!r}")
        return value
    return _number(value, where)


def check_url(url: str, where: str) -> str:
    """https anywhere; http only for loopback hosts (the sandbox, a local test server)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: {url!r} is not an http(s) URL")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ConfigError(f"{where}: {url!r} uses http:// on a non-loopback host; "
                          "use https:// (credentials would travel in clear text)")
    return url


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_credentials(channels: list[ChannelSettings], registry: Mapping[str, Any]) -> None:
    """Send mode: every enabled channel needs its required settings; never skip one silently."""
    for channel in channels:
        if not channel.enabled:
            continue
        for name, option in registry[channel.type].options.items():
            if option.required and channel.options.get(name) in (None, ""):
                hint = f" ({option.help})" if option.help else ""
                raise ConfigError(f"{channel.where(name)}: missing; channel {channel.id!r} cannot send "
                                  f"without it{hint}. Set it, or set 'enabled: false' on the channel.")


def with_options(channel: ChannelSettings, **changes: Any) -> ChannelSettings:
    return replace(channel, options={**channel.options, **changes})
