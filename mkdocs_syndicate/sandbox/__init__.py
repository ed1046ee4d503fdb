"""Loopback emulators of the channel APIs, for `sandbox: true`, the tests, and rehearsals.

Loaded on first use: naming the default address costs nothing, the server only when it runs."""

from __future__ import annotations

from typing import Any

DEFAULT_PUBLIC_BASE = "http://127.0.0.1:8787"  # where the links the emulators hand out point
_LAZY = {
    "SandboxServer": "mkdocs_syndicate.sandbox.server",
    "running_sandbox": "mkdocs_syndicate.sandbox.discovery",
    "Request": "mkdocs_syndicate.emulator_api",
    "Response": "mkdocs_syndicate.emulator_api",
}

__all__ = ["DEFAULT_PUBLIC_BASE", "Request", "Response", "SandboxServer", "running_sandbox"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
