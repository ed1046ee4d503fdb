"""Regular expressions compiled on first use. Every `mkdocs` command imports the plugin's modules,
and most of their expressions (message rules, Markdown rewriting) serve only a run that sends:
compiling them all at import would cost every build a few milliseconds for nothing."""

from __future__ import annotations

import re
from typing import Any, cast


class _Lazy:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile: harmless, same result
            compiled = self._compiled = re.compile(self._source, self._flags)
        return getattr(compiled, name)


def lazy_compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """Like re.compile, compiled when first used."""
    return cast("re.Pattern[str]", _Lazy(source, flags))
