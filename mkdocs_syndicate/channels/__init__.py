"""Channel clients, one module per service behind `base.Channel`; `registry.TYPES` names them."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "REGISTRY":  # every client class by type name, loaded on first use
        from mkdocs_syndicate.registry import clients

        return clients()
    raise AttributeError(name)
