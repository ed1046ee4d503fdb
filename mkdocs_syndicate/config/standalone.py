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
    _check_site_url(raw["site_url"], path)
    folder = path.resolve().parent
    site = StandaloneConfig(
        config_file_path=str(path.resolve()),
        site_url=raw["site_url"],
        site_name=str(raw.get("site_name") or ""),
        site_dir=str((folder / str(raw.get("site_dir") or "site")).resolve()),
    )
    return site, settings


def _check_site_url(url: str, path: Path) -> None:
    """Posts are announced by URLs under it, and its pages link there: an http(s) URL, https but
    on a loopback host (a local rehearsal), with no credentials in it."""
    from urllib.parse import urlsplit

    from mkdocs_syndicate.config.channels import is_loopback

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # a port that is no number raises here
    except ValueError:
        parts = urlsplit("")
    problem = (
        "has a user name or password in it (user:password@host); remove it: every post links there"
        if "@" in parts.netloc
        else f"{url!r} is not an http(s) URL; write the site's public address, like https://example.com/blog/"
        if parts.scheme not in ("http", "https") or not parts.hostname
        else f"{url!r} is plain http:// on a public host; use https:// (http:// only for a loopback host, "
        "such as a local preview)"
        if parts.scheme == "http" and not is_loopback(parts.hostname)
        else None
    )
    if problem is not None:
        raise ConfigError(problem, "site_url").located(str(path))


def _read(path: Path) -> dict[str, Any]:
    """The file's mapping, its site keys checked; a ConfigError names the file."""
    from mkdocs.utils.yaml import yaml_load

    from mkdocs_syndicate.config.envtags import note_env_names_in
    from mkdocs_syndicate.config.files import bounded_config

    try:
        data = bounded_config(path)  # a regular file of at most 1 MiB, before any parsing
        note_env_names_in(data)  # before any error can quote a value read by !ENV
        handle = io.BytesIO(data)
        handle.name = str(path)  # as a file's: MkDocs' INHERIT is relative to it
        raw = yaml_load(handle, loader=_loader(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except ConfigError:
        raise
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


def _loader(path: Path) -> Any:
    """A safe loader with MkDocs' !ENV (no python tag runs: mkdocs.yml's loader runs them) that
    refuses a key given twice in one mapping: YAML loaders keep the last one silently, so a second
    `channels:` further down would replace the first without a word."""
    import yaml
    from mkdocs.utils.yaml import get_yaml_loader

    class Loader(get_yaml_loader(loader=yaml.SafeLoader)):  # type: ignore[misc]
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
            _refuse_duplicate_keys(self, node, path)
            return super().construct_mapping(node, deep=deep)

    return Loader


def _refuse_duplicate_keys(loader: Any, node: Any, path: Path) -> None:
    from mkdocs_syndicate.safety import one_line

    seen: dict[Any, int] = {}
    for key_node, _value in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` is a merge, not a key
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # a key Python cannot hash (a mapping as a key): the schema refuses it
            continue
        if first is not None:
            raise ConfigError(
                f"{path}:{line}: {one_line(str(key))!r} is given twice in one mapping (first on line {first}); "
                "only the last would count, silently: keep one"
            )
        seen[key] = line
