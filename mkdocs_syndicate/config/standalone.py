"""`syndicate.yml`: the plugin's settings for a site MkDocs does not build (Zensical, Hugo, ...).

The same keys as `plugins.syndicate` in mkdocs.yml, checked by the same schema, plus the site's
own: `site_url` (required: keys are URL paths relative to it), `site_name`, and `site_dir` (where
the built site is, for files a channel adds to it such as IndexNow's key file). `!ENV` works as in
mkdocs.yml. Paths (the ledger) are relative to the file's folder.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs_syndicate.config.schema import SyndicateConfig, as_errors
from mkdocs_syndicate.errors import ConfigError

STANDALONE_NAMES = ("syndicate.yml", "syndicate.yaml")
SITE_KEYS = ("site_url", "site_name", "site_dir")


@dataclass
class StandaloneConfig:
    """What the settings need of an MkDocs config, for a site without one."""

    config_file_path: str
    site_url: str | None
    site_name: str
    site_dir: str


def is_standalone(path: Path) -> bool:
    return path.name in STANDALONE_NAMES


def load_standalone(path: Path) -> tuple[StandaloneConfig, SyndicateConfig]:
    """Read and check `syndicate.yml` → (site, plugin settings); a ConfigError names the file."""
    raw = _read(path)
    settings = SyndicateConfig(config_file_path=str(path))
    settings.load_dict({k: v for k, v in raw.items() if k not in SITE_KEYS})
    errors, _warnings = as_errors(raw, *settings.validate(), also_known=SITE_KEYS)
    if errors:  # every one at once, an unknown setting first
        parts = [ConfigError(str(error), name) for name, error in errors]
        raise (parts[0] if len(parts) == 1 else ConfigError("", parts=parts)).located(str(path))
    if not raw.get("site_url"):
        raise ConfigError("required (posts are announced by their public URL)", "site_url").located(str(path))
    folder = path.resolve().parent
    site = StandaloneConfig(
        config_file_path=str(path.resolve()),
        site_url=raw["site_url"],
        site_name=str(raw.get("site_name") or ""),
        site_dir=str((folder / str(raw.get("site_dir") or "site")).resolve()),
    )
    return site, settings


def _read(path: Path) -> dict[str, Any]:
    """The file's mapping, its site keys checked; a ConfigError names the file."""
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    from mkdocs_syndicate.config.site import bounded_config

    try:
        handle = io.BytesIO(bounded_config(path))  # at most 1 MiB, before any parsing
        handle.name = str(path)  # as a file's: MkDocs' INHERIT is relative to it
        # A safe loader with MkDocs' !ENV: no python tags run (mkdocs.yml's loader runs them).
        raw = yaml_load(handle, loader=get_yaml_loader(loader=yaml.SafeLoader))
    except ConfigError:
        raise
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except Exception as exc:  # yaml's errors, an unset !ENV variable: name the file
        raise ConfigError(f"{path}: {' '.join(str(exc).split())}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected the settings as a mapping (site_url: ..., channels: ...)")
    for key in SITE_KEYS:
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ConfigError("must be text", key).located(str(path))
    return raw
