"""Which environment variables a config file reads with `!ENV` (mkdocs.yml, properdocs.yml and
syndicate.yml alike), so that an error quoting a setting's value names the variable instead of
showing what it holds: `token: !ENV MASTODON_TOKEN` put under `instance:` by mistake must not
print the token in a CI log (redaction.env_named does the replacing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.redaction import note_env_names

ENV_TAG = "!ENV"


def note_env_variables(path: str | Path | None) -> str | None:
    """Remember the variables `path` reads by `!ENV`; a file that is not a regular file or is over
    the config bound is not read (a FIFO would hang here, a file of megabytes be composed whole
    before the bound refused it): what is wrong with it is returned, for its loader to report. A
    file that cannot be read adds none (its loader reports why)."""
    if not path:
        return None
    from mkdocs_syndicate.config.files import bounded_config

    try:
        data = bounded_config(path)
    except ConfigError as exc:
        return str(exc)
    except OSError:
        return None
    note_env_names_in(data)
    return None


def note_env_names_in(data: bytes) -> None:
    """Remember the variables a config file's `data` reads by `!ENV`."""
    if ENV_TAG.encode() in data:  # most files: no YAML parse at all
        note_env_names(env_variables(data))


def env_variables(data: bytes | str) -> set[str]:
    """Every variable name an `!ENV NAME` or `!ENV [NAME, OTHER, default]` node names, found by
    composing the YAML (no value is constructed: no tag runs, no variable is read)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(data, Loader=loader)
    except yaml.YAMLError:
        return set()
    return set(_names(root))


def _names(node: Any) -> Iterator[str]:
    import yaml

    stack = [node] if node is not None else []
    seen: set[int] = set()
    while stack:  # iterative: a deeply nested file cannot exhaust the stack
        current = stack.pop()
        if id(current) in seen:  # an alias points back at a node already walked
            continue
        seen.add(id(current))
        if current.tag == ENV_TAG:
            if isinstance(current, yaml.ScalarNode):
                yield str(current.value)
            elif isinstance(current, yaml.SequenceNode):
                # The last item is the default when there are two or more (as MkDocs reads it).
                names = current.value[:-1] if len(current.value) > 1 else current.value
                yield from (str(item.value) for item in names if isinstance(item, yaml.ScalarNode))
        if isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            stack.extend(part for pair in current.value for part in pair)
