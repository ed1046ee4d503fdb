"""The plugin's own time inside a build: its event handlers timed in-process (imports they trigger
included), free of the run-to-run noise of whole builds. Used by startup.py (in a fresh
interpreter per build) and build_overhead.py (in-process)."""

from __future__ import annotations

import time
from typing import Any

HANDLERS = ("on_startup", "on_config", "on_files", "on_post_build", "on_shutdown")


def time_plugin_handlers() -> list[float]:
    """Wrap the plugin's event handlers; the returned one-element list accumulates their seconds."""
    from mkdocs_syndicate.plugin import SyndicatePlugin

    spent = [0.0]
    for name in HANDLERS:
        original = getattr(SyndicatePlugin, name)

        def timed(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _original(self, *args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        setattr(SyndicatePlugin, name, timed)
    return spent


if __name__ == "__main__":  # python handler_timing.py mkdocs.yml: one build, prints the handlers' seconds
    import sys

    spent = time_plugin_handlers()
    from mkdocs.__main__ import cli

    try:
        cli(["build", "-q", "-f", sys.argv[1]], standalone_mode=False)
    finally:
        print(spent[0])
