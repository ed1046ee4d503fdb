"""From a loaded site config to a run's Options: shared by the plugin (inside a build) and by the
`mkdocs-syndicate` command (which loads mkdocs.yml itself, without building)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mkdocs_syndicate.config.defaults import (
    DEFAULT_BACKLOG_DAYS,
    DEFAULT_MAX_PER_RUN,
    DEFAULT_MAX_WAIT,
    DEFAULT_STALE_AFTER_HOURS,
)
from mkdocs_syndicate.config.durations import DURATION_LIMITS, duration
from mkdocs_syndicate.config.run import Options, RunSettings, Site, parse_options, require_site_url
from mkdocs_syndicate.config.schema import SyndicateConfig
from mkdocs_syndicate.errors import ConfigError, SyndicateError
from mkdocs_syndicate.net.liveness import DEFAULT_TIMEOUT


class SiteConfig(Protocol):
    """What the settings need of the site's config: an MkDocsConfig, or syndicate.yml's own."""

    @property
    def config_file_path(self) -> str: ...
    @property
    def site_url(self) -> str | None: ...
    @property
    def site_name(self) -> str: ...
    @property
    def site_dir(self) -> str: ...


def ledger_path(config: SiteConfig, settings: SyndicateConfig) -> Path:
    """The `ledger` setting, relative to the config file: a regular file, or none yet (a device
    such as /dev/zero, a FIFO or a folder would be read without end, or not at all)."""
    path = (Path(config.config_file_path).parent / settings.ledger).resolve()
    if path.exists() and not path.is_file():
        raise ConfigError(
            f"{path} exists and is not a regular file (a device, a FIFO or a folder); name a file", "ledger"
        )
    return path


MAX_CONFIG_BYTES = 1024 * 1024  # a site's settings are a few kilobytes; YAML is parsed whole


def bounded_config(path: Path) -> bytes:
    """A config file's bytes, refused before parsing when it is not a regular file or is over
    MAX_CONFIG_BYTES (a 2,000,000-element list under an unknown key took 1 GB before the key was
    refused). FileNotFoundError and other OSErrors are the caller's to name."""
    import stat

    if not stat.S_ISREG(path.stat().st_mode):
        raise ConfigError(f"{path}: not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than 1 MiB ({MAX_CONFIG_BYTES} bytes), more than any site's settings need")
    return data


def options_from(
    config: SiteConfig, settings: SyndicateConfig, *, sending: bool, reading_only: bool = False
) -> Options:
    """Validate the plugin's settings; a ConfigError names `mkdocs.yml: plugins.syndicate.<setting>`
    (in syndicate.yml, `syndicate.yml: <setting>`), every wrong setting at once: the site's and
    the channels' (6 wrong settings and 3 wrong channels took 7 builds to see)."""
    problems: list[ConfigError] = []
    try:
        site = Site(require_site_url(config.site_url), config.site_name or "", config.site_dir)
    except ConfigError as exc:
        problems.append(exc)
        site = Site("https://example.invalid/", "")
    values, wrong = site_settings(settings)
    problems += wrong
    values["git"], values["backlog"] = settings.git.settings(), settings.backlog
    values["sandbox_pacing"] = settings.sandbox_pacing
    try:
        options = parse_options(
            settings.channels,
            ledger_path=ledger_path(config, settings),
            site=site,
            sandbox=settings.sandbox,
            sending=sending,
            reading_only=reading_only,
            **values,
        )
    except ConfigError as exc:
        problems.append(exc)
    if problems:
        hint = next((p.problem for p in problems if p.parts and p.problem), "")  # the channels' closing hint
        error = problems[0] if len(problems) == 1 else ConfigError(hint, parts=problems)
        # In mkdocs.yml the settings are `plugins.syndicate.<key>`; in syndicate.yml just `<key>`.
        raise error.located(config.config_file_path, "plugins.syndicate" if _is_mkdocs(config) else None) from None
    return options


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


def _is_mkdocs(config: SiteConfig) -> bool:
    return hasattr(config, "plugins")


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


@dataclass
class LoadedSite:
    config: SiteConfig
    settings: SyndicateConfig

    @property
    def ledger_path(self) -> Path:
        return ledger_path(self.config, self.settings)

    @property
    def mode(self) -> str:
        return self.settings.mode

    def options(self, *, sending: bool, reading_only: bool = False) -> Options:
        """`reading_only`: a verify-only run, which needs the settings to read, not to create."""
        return options_from(self.config, self.settings, sending=sending, reading_only=reading_only)


CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml", "properdocs.yml", "properdocs.yaml")


def find_config(folder: Path | None = None) -> Path | None:
    """The site's config in `folder`: MkDocs' own names first, then ProperDocs' (which continues
    MkDocs 1.6 with the same format)."""
    folder = folder or Path.cwd()
    return next((folder / name for name in CONFIG_NAMES if (folder / name).is_file()), None)


def _found_here() -> Path:
    """The config in the current folder: MkDocs' or ProperDocs', else syndicate.yml."""
    from mkdocs_syndicate.config.standalone import STANDALONE_NAMES

    here = Path.cwd()
    found = find_config(here) or next((here / name for name in STANDALONE_NAMES if (here / name).is_file()), None)
    if found is None:
        raise ConfigError(f"no {', '.join(CONFIG_NAMES + STANDALONE_NAMES)} in {here}; name the config with -f")
    return found


def load_site(config_file: Path | None) -> LoadedSite:
    """Load and validate mkdocs.yml as MkDocs does (plugins included), without building; or a
    standalone syndicate.yml (named with -f, or found when there is no MkDocs config)."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError

    from mkdocs_syndicate.config.standalone import is_standalone, load_standalone

    config_file = config_file or _found_here()
    if is_standalone(config_file):
        return LoadedSite(*load_standalone(config_file))
    try:
        bounded_config(config_file)  # MkDocs reads it whole: its size is checked first
        config = load_config(config_file=str(config_file))
    except ConfigurationError as exc:
        raise ConfigError(f"{config_file}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{config_file}: {exc.strerror or exc}") from None
    for plugin in config.plugins.values():  # the plugin's own settings, found by their schema
        if isinstance(plugin.config, SyndicateConfig):
            return LoadedSite(config, plugin.config)
    raise ConfigError(f"{config.config_file_path}: the syndicate plugin is not in `plugins:`")
