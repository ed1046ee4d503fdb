"""A channel's thread settings: `thread`, `max_parts` and `thread_text` (config/channels.py's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mkdocs_syndicate.errors import ConfigError

DEFAULT_MAX_PARTS = 4
MOST_PARTS = 25  # a bound, not a style: each part is a request, paced like any other


def thread_parts(values: Mapping[str, Any], cls: Any, where: str) -> int:
    """`thread: true` and its `max_parts`: 1 when a long message is shortened instead."""
    thread = values.get("thread", False)
    if not isinstance(thread, bool):
        raise ConfigError("must be true or false", f"{where}.thread")
    if not thread:
        if "max_parts" in values:
            raise ConfigError("applies only with 'thread: true'", f"{where}.max_parts")
        return 1
    if not getattr(cls, "threads", False):
        raise ConfigError(f"{cls.type_name} cannot post a thread; remove 'thread: true'", f"{where}.thread")
    most = values.get("max_parts", DEFAULT_MAX_PARTS)
    if isinstance(most, bool) or not isinstance(most, int) or not 2 <= most <= MOST_PARTS:
        raise ConfigError(f"must be a whole number from 2 to {MOST_PARTS}, not {most!r}", f"{where}.max_parts")
    return most


def thread_text_of(values: Mapping[str, Any], where: str) -> str:
    """`thread_text` (content/threadtext.py): with `thread: true` only."""
    from mkdocs_syndicate.content.threadtext import DEFAULT_THREAD_TEXT, THREAD_TEXTS

    if "thread_text" in values and values.get("thread") is not True:
        raise ConfigError("applies only with 'thread: true'", f"{where}.thread_text")
    value = values.get("thread_text", DEFAULT_THREAD_TEXT)
    if value not in THREAD_TEXTS:
        raise ConfigError(f"must be {' or '.join(THREAD_TEXTS)}, not {value!r}", f"{where}.thread_text")
    return str(value)
