"""From an MkDocs config to a run's Options: shared by the plugin (inside a build) and by the
`mkdocs-syndicate` command (which loads mkdocs.yml itself, without building)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channels.base import Site
from mkdocs_syndicate.channels.settings import DURATION_LIMITS, seconds
from mkdocs_syndicate.content.posts import as_datetime
from mkdocs_syndicate.engine.options import Options, parse_options, require_site_url
from mkdocs_syndicate.errors import ConfigError, SyndicateError
from mkdocs_syndicate.ledger.gitsettings import parse_git_settings
from mkdocs_syndicate.net.liveness import DEFAULT_TIMEOUT
from mkdocs_syndicate.sources.locations import ledger_path

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig


def options_from(config: MkDocsConfig, plugin_config: Any, *, sending: bool, reading_only: bool = False) -> Options:
    """Validate the plugin's settings; a ConfigError names `mkdocs.yml: plugins.syndicate.<setting>`."""
    # In mkdocs.yml the settings are `plugins.syndicate.<key>`; in syndicate.yml just `<key>`.
    where = f"{config.config_file_path}: plugins.syndicate" if hasattr(config, "plugins") else None
    try:
        site = Site(require_site_url(config.site_url), config.site_name or "", config.site_dir)
        since = plugin_config.since
        max_per_run = plugin_config.max_per_run if plugin_config.max_per_run is not None else 10
        if max_per_run < 1:
            raise SyndicateError("max_per_run: must be 1 or more")
        seconds(plugin_config.stale_after_hours, "stale_after_hours", "hours")
        return parse_options(
            plugin_config.channels,
            ledger_path=ledger_path(config, plugin_config),
            site=site,
            sandbox=plugin_config.sandbox,
            sending=sending,
            reading_only=reading_only,
            since=as_datetime(since, "since") if since is not None else None,
            max_per_run=max_per_run,
            max_wait=seconds(plugin_config.max_wait, "max_wait"),
            git=parse_git_settings(plugin_config.git, "git"),
            wait_until_live=_live_timeout(plugin_config.wait_until_live),
            backlog=plugin_config.backlog,
            backlog_days=seconds(plugin_config.backlog_days, "backlog_days", "days"),
            sandbox_pacing=plugin_config.sandbox_pacing,
        )
    except SyndicateError as exc:
        text = str(exc)
        if where is None:
            raise ConfigError(f"{config.config_file_path}: {text}") from None
        raise ConfigError(
            f"{where}.{text}"
            if text.startswith(
                ("channels", "max_per_run", "git", "wait_until_live", "max_wait", "stale_after_hours", "backlog_days")
            )
            else f"{where}: {text}"
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
    raise ConfigError(f"wait_until_live: true, false, or the seconds to wait (more than 0, at most {limit:g})")


@dataclass
class LoadedSite:
    config: MkDocsConfig  # or, for syndicate.yml, a StandaloneConfig with the same few fields
    plugin_config: Any

    @property
    def ledger_path(self) -> Path:
        return ledger_path(self.config, self.plugin_config)

    @property
    def mode(self) -> str:
        return str(self.plugin_config.mode)

    def options(self, *, sending: bool, reading_only: bool = False) -> Options:
        """`reading_only`: a verify-only run, which needs the settings to read, not to create."""
        return options_from(self.config, self.plugin_config, sending=sending, reading_only=reading_only)


CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml", "properdocs.yml", "properdocs.yaml")


def find_config(folder: Path | None = None) -> Path | None:
    """The site's config in `folder`: MkDocs' own names first, then ProperDocs' (which continues
    MkDocs 1.6 with the same format)."""
    folder = folder or Path.cwd()
    return next((folder / name for name in CONFIG_NAMES if (folder / name).is_file()), None)


def load_site(config_file: Path | None) -> LoadedSite:
    """Load and validate mkdocs.yml as MkDocs does (plugins included), without building; or a
    standalone syndicate.yml (named with -f, or found when there is no MkDocs config)."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError

    from mkdocs_syndicate.plugin import SyndicatePlugin
    from mkdocs_syndicate.sources.standalone import STANDALONE_NAMES, is_standalone, load_standalone

    if config_file is None:
        config_file = find_config() or next(
            (Path.cwd() / name for name in STANDALONE_NAMES if (Path.cwd() / name).is_file()), None
        )
        if config_file is None:
            raise ConfigError(
                f"no {', '.join(CONFIG_NAMES + STANDALONE_NAMES)} in {Path.cwd()}; name the config with -f"
            )
    if is_standalone(config_file):
        standalone, settings = load_standalone(config_file)
        return LoadedSite(standalone, settings)  # type: ignore[arg-type]  # the fields options_from reads
    try:
        config = load_config(config_file=str(config_file) if config_file else None)
    except ConfigurationError as exc:
        raise ConfigError(f"{config_file or 'mkdocs.yml'}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{config_file or 'mkdocs.yml'}: {exc.strerror or exc}") from None
    for plugin in config.plugins.values():
        if isinstance(plugin, SyndicatePlugin):
            return LoadedSite(config, plugin.config)
    raise ConfigError(f"{config.config_file_path}: the syndicate plugin is not in `plugins:`")
