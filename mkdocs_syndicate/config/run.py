"""A run's options, validated: what the engine is handed, from mkdocs.yml, properdocs.yml,
syndicate.yml or a library caller. Validation reads each channel type's declared settings; no
channel is constructed to check them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import urlsplit

from mkdocs_syndicate.config.channels import ChannelSettings, parse_channels
from mkdocs_syndicate.config.channels import (
    Site as Site,  # its home for the channels (config/channels.py); imported from here by plugins
)
from mkdocs_syndicate.config.completeness import config_problems, misplaced_credentials, missing_settings
from mkdocs_syndicate.config.defaults import DEFAULT_MAX_PER_RUN, DEFAULT_MAX_WAIT, DEFAULT_REMOVAL_RECHECK
from mkdocs_syndicate.content.pages import SitePages
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.net.liveness import DEFAULT_INTERVAL
from mkdocs_syndicate.safety import is_plain_name

if TYPE_CHECKING:
    from typing import Unpack


@dataclass
class Options:
    ledger_path: Path
    channels: list[ChannelSettings]
    site: Site
    since: dt.datetime | None = None
    max_per_run: int | None = DEFAULT_MAX_PER_RUN
    sandbox: bool = False
    sandbox_dir: Path | None = None  # default: next to the ledger
    max_wait: float = DEFAULT_MAX_WAIT
    lock_timeout: float = 10.0
    git: GitSettings = field(default_factory=GitSettings)
    wait_until_live: float | None = None  # seconds to wait for a new post's page to answer 200
    live_interval: float = DEFAULT_INTERVAL
    # First run: "adopt" posts older than backlog_days, or "send" them. The plugin's setting
    # defaults to adopt; callers of this library say which they want.
    backlog: str = "send"
    backlog_days: float = 2.0
    sandbox_pacing: str = "fast"  # sandbox only: "fast" (min_interval / 100) or "real"
    # Pages the site redirects (mkdocs-redirects): old page key → new page key. A post announced
    # under the old one is the same post under the new one (engine/moves.py).
    redirects: dict[str, str] = field(default_factory=dict)
    # Every page of the build (the plugin's, or the saved build's): a post missing from the posts
    # is removed only when its page is gone too (engine/intent.py). None: the posts handed in are
    # the whole source (a library caller's list, a feed).
    pages: SitePages | None = None
    removal_recheck: float = DEFAULT_REMOVAL_RECHECK  # seconds between the two reads of a removed page
    # The site's source folder, when a build read it: its git history says where a renamed
    # post's file went (engine/history.py). None for a feed.
    docs_dir: Path | None = None


class RunSettings(TypedDict, total=False):
    """The Options fields beside the channels that parse_options takes as they are (each already
    validated by whoever read it: the schema, or a library caller)."""

    since: dt.datetime | None
    max_per_run: int | None
    sandbox_dir: Path | None
    max_wait: float
    lock_timeout: float
    git: GitSettings
    wait_until_live: float | None
    live_interval: float
    backlog: str
    backlog_days: float
    sandbox_pacing: str
    removal_recheck: float


def parse_options(
    raw_channels: object,
    *,
    ledger_path: Path,
    site: Site,
    sandbox: bool,
    sending: bool,
    reading_only: bool = False,
    **settings: Unpack[RunSettings],
) -> Options:
    """Validate the channels a run needs; raises ConfigError naming the setting (all of them at
    once: a malformed value does not hide a missing one)."""
    from mkdocs_syndicate.registry import clients

    registry = clients()  # each type imported when the settings name it, and only then
    # Templates are checked now when this run sends; a plan checks each one when it renders it.
    problems: list[ConfigError] = []
    channels = parse_channels(raw_channels, registry, check_templates=sending, problems=problems)
    problems += misplaced_credentials(raw_channels, channels, {"ledger": str(ledger_path)})
    # In the sandbox the emulators' own credentials and addresses replace the real ones, but
    # every other required setting (Weibo's rip, say) must be there, as it must for real.
    provided = _sandbox_provided(raw_channels, problems) if sandbox else None
    missing = missing_settings(raw_channels, registry, provided=provided, reading_only=reading_only) if sending else []
    if problems or missing:
        raise config_problems(problems, missing)
    return Options(ledger_path=ledger_path, channels=channels, site=site, sandbox=sandbox, **settings)


def _sandbox_provided(raw_channels: object, problems: list[ConfigError]) -> dict[str, set[str]]:
    """Per channel type the settings, credentials and addresses, the sandbox's emulator supplies;
    an emulator that cannot be loaded (a broken plugin) is an error of the first channel naming it."""
    from mkdocs_syndicate.registry import PluginError, named_in

    provided: dict[str, set[str]] = {}
    if not isinstance(raw_channels, Mapping):
        return provided
    for name, kind in named_in(raw_channels).items():
        try:
            provided[name] = set(kind.emulator_class().client_options("", ""))
        except PluginError as exc:
            channel = next(k for k, v in raw_channels.items() if isinstance(v, Mapping) and v.get("type") == name)
            problems.append(ConfigError(f"{exc}; fix or uninstall that package", f"channels.{channel}.type"))
    return provided


def require_site_url(site_url: str | None) -> str:
    if not site_url:
        raise ConfigError(
            "required by the syndicate plugin (posts are announced by their public URL): "
            "set it at the top level of the file, e.g. site_url: https://your-site/",
            "site_url",
            top_level=True,
        )
    if any(ch.isspace() for ch in site_url) or not is_plain_name(site_url):
        # urlsplit drops \n, \r and \t without a word: the text would reach posts and pages as is
        raise ConfigError(
            "has a line break, white space or an invisible character in it; write the address alone, on one line",
            "site_url",
        )
    if "@" in urlsplit(site_url).netloc:  # it goes into every post and page: never with credentials
        raise ConfigError("has a user name or password in it (user:password@host); remove it", "site_url")
    return site_url if site_url.endswith("/") else site_url + "/"
