"""From a loaded site config to a run's Options: shared by the plugin (inside a build) and by the
`mkdocs-syndicate` command (which loads mkdocs.yml itself, without building)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from mkdocs_syndicate.config.run import Options, Site, parse_options, require_site_url
from mkdocs_syndicate.config.schema import SyndicateConfig
from mkdocs_syndicate.config.values import site_settings
from mkdocs_syndicate.errors import ConfigError


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


def options_from(
    config: SiteConfig, settings: SyndicateConfig, *, sending: bool, reading_only: bool = False
) -> Options:
    """Validate the plugin's settings; a ConfigError names `mkdocs.yml: plugins.syndicate.<setting>`
    (in syndicate.yml, `syndicate.yml: <setting>`), every wrong setting at once: the site's and
    the channels' (6 wrong settings and 3 wrong channels took 7 builds to see)."""
    problems: list[ConfigError] = []
    try:
        config_name = Path(config.config_file_path or "mkdocs.yml").name
        site = Site(require_site_url(config.site_url), config.site_name or "", config.site_dir, config_name)
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


def _is_mkdocs(config: SiteConfig) -> bool:
    return hasattr(config, "plugins")


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
        options = options_from(self.config, self.settings, sending=sending, reading_only=reading_only)
        docs_dir = getattr(self.config, "docs_dir", None)  # mkdocs.yml's: its git history (engine/history.py)
        options.docs_dir = Path(docs_dir) if isinstance(docs_dir, str) else None
        return options


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
        from mkdocs_syndicate.config.files import bounded_config

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
