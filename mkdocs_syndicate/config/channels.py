"""Channel settings from mkdocs.yml, validated up front so a bad value fails the build before
any network call. Each error names its setting (as data: ConfigError.setting) as the user wrote
it: `channels.<id>.<setting>`."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from mkdocs_syndicate.config.durations import DURATION_LIMITS, duration
from mkdocs_syndicate.config.threadsettings import thread_parts, thread_text_of
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import Secret, credential_problem, shown_url
from mkdocs_syndicate.safety import is_plain_name, one_line

DELIVERIES = ("at_least_once", "at_most_once")
OptionKind = Literal["url", "secret", "text", "int", "float", "bool", "ip", "choice", "list"]


@dataclass(frozen=True)
class Site:
    """The site every channel is handed with its settings (config.run.Options carries it)."""

    url: str  # site_url, with a trailing slash
    name: str
    site_dir: str = ""
    config_name: str = "mkdocs.yml"  # the file site_url is set in: a fix names the file to edit


@dataclass(frozen=True)
class Option:
    """One type-specific setting a channel type accepts."""

    kind: OptionKind
    required: bool = False
    only_to_send: bool = False  # needed to create a post, not to read one back (a verify-only run)
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()  # kind "choice": the values the service accepts
    # The type's own rule, after the kind's (an IndexNow key's alphabet, a language tag): takes the
    # value and the setting's path, returns the value to use or raises ConfigError naming it.
    check: Callable[[Any, str], Any] | None = None


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
    edits: str = "ignore"  # "update": a copy whose message changed is edited in place
    removals: str = "keep"  # "delete": a removed post's copies are deleted (engine/removals.py)
    max_parts: int = 1  # `thread: true`: a message over the limit is a thread of up to this many parts
    configured: str = ""  # a lane's (Nostr's `relays:`): the id of the channel the config names, for its settings
    thread_text: str = "post"  # what a thread carries: the whole post, its excerpt, or its description

    @property
    def setting_id(self) -> str:
        """The id its settings are under in the config: a lane's are its channel's."""
        return self.configured or self.id

    @property
    def at_most_once(self) -> bool:
        """Public posts: a duplicate can't be unsent (pings are at-least-once)."""
        return self.delivery == "at_most_once"

    def secrets(self) -> list[Secret]:
        return [v for v in self.options.values() if isinstance(v, Secret)]

    def where(self, setting: str) -> str:
        return f"channels.{self.setting_id}.{setting}"


COMMON = {
    "type",
    "delivery",
    "min_interval",
    "template",
    "timeout",
    "settle",
    "enabled",
    "label",
    "edits",
    "removals",
    "thread",
    "max_parts",
    "thread_text",
}
DEFAULT_TIMEOUT = 30.0
DEFAULT_SETTLE = 600.0


def parse_channels(
    raw: object,
    registry: Mapping[str, Any],
    *,
    check_templates: bool = True,
    problems: list[ConfigError] | None = None,
) -> list[ChannelSettings]:
    """`channels:` mapping → settings, in the order written. `registry` maps type → channel class.
    With `problems`, a channel whose settings are wrong adds what is wrong there (every setting,
    not the first) and is left out, so the caller can report all of them at once."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise ConfigError(f"must be a mapping of channel id to settings, not {type(raw).__name__}", "channels")
    parsed = []
    seen: dict[str, str] = {}
    for position, (key, values) in enumerate(raw.items(), 1):
        channel_id = "" if key is None else str(key)
        problem = _id_problem(channel_id)
        if problem is not None:
            shown = one_line(channel_id) if channel_id.strip() and problem is not _FROM_ENV else ""
            where = f"channels.{shown}" if shown else f"channels (the id of its channel number {position})"
            raise ConfigError(problem, where)
        if channel_id.casefold() in seen:
            raise ConfigError(
                f"differs from channels.{seen[channel_id.casefold()]} only by case; channel ids name "
                "ledger records, so they must differ in more than that",
                f"channels.{channel_id}",
            )
        seen[channel_id.casefold()] = channel_id
        try:
            lanes = _lanes(_parse_one(channel_id, values, registry, check_templates), registry)
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(exc)
            continue
        for lane in lanes[1:] if lanes[0].id == channel_id else lanes:  # a lane's id is a ledger key too
            if lane.id.casefold() in seen and seen[lane.id.casefold()] != channel_id:
                raise ConfigError(f"its lane {lane.id} has the id of another channel", f"channels.{channel_id}")
            seen[lane.id.casefold()] = channel_id
        parsed.extend(lanes)
    return parsed


_WHY_A_NAME = "it names ledger records, commits and log lines"
_FROM_ENV = (
    f"a channel id is a name written in the file ({_WHY_A_NAME}): this one is the value of an "
    "environment variable (a key read by !ENV?), which may be a credential; write a name"
)


def _id_problem(channel_id: str) -> str | None:
    """What makes `channel_id` no name for a channel: empty, an invisible or control character,
    or a value read from the environment (`!ENV MASTODON_TOKEN:` made the token the key, and the
    ledger's). Never quotes the id: it may be a credential."""
    from mkdocs_syndicate.redaction import env_values

    if not channel_id.strip():
        return f"a channel id must be a name ({_WHY_A_NAME}): this one is empty (read by !ENV from an unset variable?)"
    if not is_plain_name(channel_id):
        return (
            f"a channel id must be one line of visible characters ({_WHY_A_NAME}): this one has a "
            "control, line-break, bidi or invisible character; rename it"
        )
    if any(value in channel_id for value in env_values().values()):
        return _FROM_ENV
    return None


def _lanes(settings: ChannelSettings, registry: Mapping[str, Any]) -> list[ChannelSettings]:
    """One configured channel as the lanes it runs as: itself, or (Nostr's `relays:`) one lane
    per server, each with an id of its own (the type's `lanes`, a classmethod), so that each
    has its own ledger records, pacing and reads."""
    split = getattr(registry[settings.type], "lanes", None)
    return list(split(settings)) if split is not None else [settings]


def _parse_one(channel_id: str, values: object, registry: Mapping[str, Any], check_templates: bool) -> ChannelSettings:
    """One channel's settings; every wrong one at once (a bad `timeout` hid its type's errors)."""
    where = f"channels.{channel_id}"
    if not isinstance(values, dict):
        raise ConfigError("must be a mapping of settings (at least 'type')", where)
    cls = _channel_type(values, registry, where)
    wrong: list[ConfigError] = _unknown_settings(values, cls, where)

    def checked(check: Callable[[], Any]) -> Any:
        try:
            return check()
        except ConfigError as exc:
            wrong.extend(exc.parts or (exc,))
            return None

    timing = _timing(values, cls, where, wrong)
    enabled = checked(lambda: _enabled(values.get("enabled", True), f"{where}.enabled"))
    checked(lambda: _label(values.get("label"), f"{where}.label"))
    template = checked(lambda: _template(values.get("template"), f"{where}.template", check_templates))
    options: dict[str, Any] = {}
    for name, option in cls.options.items():
        try:
            options[name] = _option(values.get(name, option.default), option, where, name)
        except ConfigError as exc:
            wrong.append(exc)
    edits = checked(lambda: _edits(values, cls, f"{where}.edits"))
    removals_default = getattr(cls, "default_removals", "keep")  # Webmention's: a removed page is told
    removals = checked(lambda: _removals(values.get("removals", removals_default), cls, f"{where}.removals"))
    max_parts = checked(lambda: thread_parts(values, cls, where))
    thread_text = checked(lambda: thread_text_of(values, where))
    if wrong:
        raise wrong[0] if len(wrong) == 1 else ConfigError("", parts=wrong)
    return ChannelSettings(
        channel_id,
        cls.type_name,
        *timing,
        enabled,
        template,
        options,
        edits,
        removals,
        max_parts,
        thread_text=thread_text,
    )


def _edits(values: Mapping[str, Any], cls: Any, setting: str) -> str:
    # A type may edit in place in one mode only (Nostr: a long-form article, not a note).
    decides = getattr(cls, "edits_in_place_with", None)
    in_place = decides(values) if decides is not None else getattr(cls, "edits_in_place", False)
    edits = _life_choice(values.get("edits", "update" if in_place else "ignore"), EDITS, setting)
    if edits == "update" and not in_place:
        raise ConfigError(f"{cls.type_name} cannot edit a post in place; use 'edits: ignore'", setting)
    return edits


def _removals(value: object, cls: Any, setting: str) -> str:
    removals = _life_choice(value, REMOVALS, setting)
    if removals == "delete" and not getattr(cls, "deletes", False):  # said plainly, not accepted and ignored
        raise ConfigError(f"{cls.type_name} cannot delete a post; use 'removals: keep'", setting)
    return removals


EDITS = ("update", "ignore")
REMOVALS = ("keep", "delete")


def _life_choice(value: object, allowed: tuple[str, ...], setting: str) -> str:
    if value not in allowed:
        raise ConfigError(f"must be {' or '.join(allowed)}, not {value!r}", setting)
    return str(value)


def _enabled(value: object, setting: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError("must be true or false", setting)
    return value


def _label(value: object, setting: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError("must be text (what the post page's links call this channel)", setting)


def _channel_type(values: Mapping[str, Any], registry: Mapping[str, Any], where: str) -> Any:
    """The channel class its `type` names."""
    type_name = values.get("type")
    if not isinstance(type_name, str) or type_name not in registry:
        known = ", ".join(sorted(registry))
        hint = _type_hint(type_name, registry)
        raise ConfigError(f"unknown channel type {type_name!r}{hint} (known: {known})", f"{where}.type")
    try:
        return registry[type_name]
    except ImportError as exc:  # registry.PluginError: an installed package's type that cannot load
        raise ConfigError(f"{exc}; fix or uninstall that package", f"{where}.type") from None


def _unknown_settings(values: Mapping[str, Any], cls: Any, where: str) -> list[ConfigError]:
    """Every key that is none of the type's settings, each named."""
    unknown = sorted(set(values) - COMMON - set(cls.options), key=str)
    names = sorted((COMMON | set(cls.options)) - {"type"})
    allowed = ", ".join(names)
    return [
        ConfigError(
            f"unknown setting for type {cls.type_name}{_did_you_mean(str(key), names)} (allowed: {allowed})",
            f"{where}.{key}",
        )
        for key in unknown
    ]


# What people call a service whose channel type is named after the software it runs.
SERVICE_TYPES = {"dev": ("DEV", "forem"), "devto": ("DEV", "forem")}


def _type_hint(type_name: object, registry: Mapping[str, Any]) -> str:
    """What follows an unknown type: that DEV is type forem (`type: dev.to`), else the nearest
    known type, else nothing."""
    if not isinstance(type_name, str):
        return ""
    service = SERVICE_TYPES.get("".join(c for c in type_name.lower() if c.isalnum()))
    if service is not None and service[1] in registry:
        return f"; {service[0]} is type {service[1]}"
    return _did_you_mean(type_name.lower(), list(registry))


def _did_you_mean(word: str, names: list[str]) -> str:
    import difflib

    return "".join(f"; did you mean '{near}'?" for near in difflib.get_close_matches(word, names, n=1, cutoff=0.6))


def _timing(
    values: Mapping[str, Any], cls: Any, where: str, wrong: list[ConfigError]
) -> tuple[str, float, float, float]:
    """delivery, min_interval, timeout, settle: how and how often the channel's requests go out.
    What is wrong is added to `wrong` (the values returned then are placeholders)."""
    delivery = values.get("delivery", cls.default_delivery)
    if delivery not in DELIVERIES:
        wrong.append(ConfigError(f"must be at_least_once or at_most_once, not {delivery!r}", f"{where}.delivery"))
    try:
        min_interval = _duration(values.get("min_interval", cls.default_min_interval), "min_interval", where)
    except ConfigError as exc:
        wrong.append(exc)
        min_interval = 0.0
    try:
        timeout = _duration(values.get("timeout", DEFAULT_TIMEOUT), "timeout", where)
        if timeout <= 0:
            raise ConfigError(
                f"must be more than 0 seconds (at most {DURATION_LIMITS['timeout']:g})", f"{where}.timeout"
            )
    except ConfigError as exc:
        wrong.append(exc)
        timeout = DEFAULT_TIMEOUT
    if "settle" not in values:
        return delivery, min_interval, timeout, max(DEFAULT_SETTLE, 2 * timeout)
    try:
        settle = _duration(values["settle"], "settle", where)
        if settle < 2 * timeout:
            raise ConfigError(
                f"{settle:g} s is less than twice the timeout ({timeout:g} s): a request that timed out "
                "may still be running on the server for that long",
                f"{where}.settle",
            )
    except ConfigError as exc:
        wrong.append(exc)
        settle = DEFAULT_SETTLE
    return delivery, min_interval, timeout, settle


def _duration(value: object, name: str, where: str) -> float:
    return duration(value, name, setting=f"{where}.{name}")


def _template(value: object, setting: str, check: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError("must be text (a Jinja2 template)", setting)
    if check:  # a build that sends nothing need not load the template engine
        from mkdocs_syndicate.content.messages import compile_template

        compile_template(value, setting)
    return value


def _option(value: Any, option: Option, where: str, name: str) -> Any:
    setting = f"{where}.{name}"
    if value is None:
        return None  # `!ENV` of an unset variable: checked by completeness.missing_settings in send mode
    if option.kind == "secret" and value == "":
        return None  # an empty secret (a fork's pull request gets those) is a missing one
    if option.kind == "float":  # a duration: its documented range is looked up by its name
        checked: Any = duration(value, name, setting=setting)
    else:
        checked = _OPTION_KINDS[option.kind](value, option, setting)
    return option.check(checked, setting) if option.check is not None else checked


def _secret(value: Any, option: Option, setting: str) -> Secret:
    return Secret(check_credential(value, setting))


def _url(value: Any, option: Option, setting: str) -> str:
    if not isinstance(value, str):
        raise ConfigError("must be a URL", setting)
    return check_url(value.rstrip("/"), setting)


def _text(value: Any, option: Option, setting: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"must be text, not {type(value).__name__}", setting)
    return value


def _list(value: Any, option: Option, setting: str) -> tuple[str, ...]:
    """One text or a list of them (`hub: https://a` or `hub: [https://a, https://b]`), each
    checked by the option's own `check` after this."""
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ConfigError("must be one text or a list of them, none empty", setting)
    return tuple(v.strip() for v in values)


def _choice(value: Any, option: Option, setting: str) -> str:
    if value not in option.choices:
        raise ConfigError(f"must be one of {', '.join(option.choices)}, not {value!r}", setting)
    return str(value)


def _ip(value: Any, option: Option, setting: str) -> str:
    try:
        return str(ipaddress.ip_address(str(value).strip()))
    except ValueError:
        raise ConfigError(f"{value!r} is not an IP address (like 203.0.113.7 or 2001:db8::7)", setting) from None


def _bool(value: Any, option: Option, setting: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError("must be true or false", setting)
    return value


def _int(value: Any, option: Option, setting: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value > 10**9:
        raise ConfigError(f"must be a whole number above 0, not {value!r}", setting)
    return value


_OPTION_KINDS: dict[str, Callable[[Any, Option, str], Any]] = {
    "secret": _secret,
    "url": _url,
    "text": _text,
    "choice": _choice,
    "ip": _ip,
    "bool": _bool,
    "int": _int,
    "list": _list,
}


def check_credential(value: Any, setting: str) -> str:
    """Tokens and passwords: what a service would refuse anyway is refused here, by name, before
    any request (and never echoed back: the value may be a real secret)."""
    problem = credential_problem(value)
    if problem is not None:
        raise ConfigError(problem, setting)
    return str(value)


def check_url(url: str, setting: str) -> str:
    """https anywhere; http only for loopback hosts (the sandbox, a local test server); never a
    user name or password in it (quoted in errors without them)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # a port that is no number raises here, not in a later request
    except ValueError:
        raise ConfigError(f"{shown_url(url)!r} is not a URL this tool can use", setting) from None
    if "@" in parts.netloc:
        raise ConfigError(
            "has a user name or password in it (user:password@host); remove it: a URL setting may be "
            "published (the post pages' links and comments) and printed, so credentials go in the channel's "
            "own secret setting (its password or token), given with !ENV",
            setting,
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{shown_url(url)!r} is not an http(s) URL", setting)
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ConfigError(
            f"{shown_url(url)!r} uses http:// on a non-loopback host; use https:// (credentials would travel "
            "in clear text)",
            setting,
        )
    return url


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def with_options(channel: ChannelSettings, **changes: Any) -> ChannelSettings:
    return replace(channel, options={**channel.options, **changes})
