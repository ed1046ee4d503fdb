"""What the channels' settings, taken together, lack or hold in the wrong place: the required
settings a send needs (named all at once, not one per build), and a credential's value in a
setting that is shown (a channel id, a URL, a template). Each channel's own values are checked
where they are parsed (config/channels.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mkdocs_syndicate.config.channels import ChannelSettings, Option
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import Secret
from mkdocs_syndicate.safety import one_line


def missing_settings(
    raw: object,
    registry: Mapping[str, Any],
    *,
    provided: Mapping[str, set[str]] | None = None,
    reading_only: bool = False,
) -> list[ConfigError]:
    """Send mode: every enabled channel needs its required settings; never skip one silently.
    Read from the raw `channels:` mapping, so a channel with a malformed setting still has its
    missing ones named. `provided`: per channel type, settings something else supplies (the
    sandbox's credentials)."""
    channels = raw.items() if isinstance(raw, dict) else ()
    return [
        error for key, values in channels for error in _missing_in(str(key), values, registry, provided, reading_only)
    ]


def _missing_in(
    channel_id: str,
    values: object,
    registry: Mapping[str, Any],
    provided: Mapping[str, set[str]] | None,
    reading_only: bool,
) -> list[ConfigError]:
    """One enabled channel's required settings that are unset (none for a type that is unknown:
    its `type` error says what is wrong)."""
    if not isinstance(values, dict):
        return []
    kind = _enabled_type(values, registry)
    if kind is None:
        return []
    given = (provided or {}).get(values["type"], set())  # the name it is registered by
    return [
        _missing(channel_id, name, option)
        for name, option in kind.options.items()
        if option.required and name not in given and not (reading_only and option.only_to_send)
        if values.get(name) in (None, "")
    ]


def _enabled_type(values: Mapping[str, Any], registry: Mapping[str, Any]) -> Any:
    """The channel class of an enabled channel whose type is known, else None."""
    if values.get("enabled", True) is False:
        return None
    type_name = values.get("type")
    try:
        return registry.get(type_name) if isinstance(type_name, str) else None
    except ImportError:  # a broken plugin: its `type` error says what is wrong
        return None


def _missing(channel_id: str, name: str, option: Option) -> ConfigError:
    hint = f" ({option.help})" if option.help else ""
    return ConfigError(
        f"missing (or empty); channel {channel_id!r} cannot send without it{hint}.", f"channels.{channel_id}.{name}"
    )


def config_problems(problems: list[ConfigError], missing: list[ConfigError]) -> ConfigError:
    """Everything wrong with the channels' settings, in one error (not one per build)."""
    if len(missing) == 1 and not problems:
        return ConfigError(f"{missing[0].problem} Set it, or set 'enabled: false' on the channel.", missing[0].setting)
    hint = "Set them, or set 'enabled: false' on those channels." if missing else ""
    if len(problems) == 1 and not missing:
        return problems[0]
    return ConfigError(hint, parts=[*problems, *missing])


def misplaced_credentials(raw: object, channels: list[ChannelSettings], others: Mapping[str, str]) -> list[ConfigError]:
    """A credential's value where it would be shown: in a channel id, a URL, a template, a label,
    or `others` (setting → value: the ledger's path). Such a setting names ledger records, goes
    into posts, plans and error messages, so it is refused, by name and without quoting it."""
    secrets = {
        f"channels.{channel.setting_id}.{name}": value.reveal()
        for channel in channels
        for name, value in channel.options.items()
        if isinstance(value, Secret)
    }
    if not secrets or not isinstance(raw, dict):
        return []
    shown: list[tuple[str, str]] = [(setting, value) for setting, value in others.items()]
    for position, (key, values) in enumerate(raw.items(), 1):
        shown.append((f"channels (the id of its channel number {position})", str(key)))
        if isinstance(values, dict):
            shown += [
                (f"channels.{one_line(str(key))}.{name}", value)
                for name, value in values.items()
                if isinstance(value, str) and f"channels.{key}.{name}" not in secrets
            ]
    return [
        ConfigError(
            f"holds the value of {where} (a credential in the wrong setting?); this setting is shown in "
            "ledger records, plans, posts or errors, so it must not hold a credential",
            setting,
        )
        for setting, value in shown
        for where, secret in secrets.items()
        if _holds(value, secret)
    ]


def _holds(value: str, secret: str) -> bool:
    """Whether `value` carries `secret`: equal to it, or containing it when it is long enough not
    to be an ordinary word (real tokens and app passwords are)."""
    return value == secret or (len(secret) >= 8 and secret in value)
