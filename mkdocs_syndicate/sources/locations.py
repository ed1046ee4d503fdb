"""Where the ledger of an MkDocs site is: its `ledger` setting, relative to mkdocs.yml."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig


def ledger_path(config: MkDocsConfig, plugin_config: Any) -> Path:
    return (Path(config.config_file_path).parent / str(plugin_config.ledger)).resolve()
