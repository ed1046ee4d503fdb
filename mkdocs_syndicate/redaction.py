"""Keeping credentials out of the ledger, logs, error messages and tracebacks."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any


def credential_problem(value: Any) -> str | None:
    """What is wrong with a token or password a service would refuse anyway (never quoting it:
    the value may be a real secret), or None."""
    if not isinstance(value, str):
        return "must be text (use !ENV NAME to read it from the environment)"
    if any(ch.isspace() for ch in value):
        return "contains white space or a line break (copied with a newline?); remove it"
    if not value.isascii() or not value.isprintable():
        return "contains characters that are not printable ASCII; tokens and app passwords are plain ASCII"
    return None


_SECRET_PARAMS = (
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "auth",
    "sig",
    "signature",
    "credential",
    "session",
    "code",
)


def shown_url(text: str) -> str:
    """A URL (or a path) as it may be printed: userinfo (`user:pw@`) and the values of query
    parameters whose names look secret (`access_token`, `api_key`, `sig`...) replaced with ***."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return text
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if "@" in parts.netloc:
        netloc = "***@" + netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(name, "***" if any(word in name.lower() for word in _SECRET_PARAMS) else value) for name, value in pairs],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class Secret:
    """A credential. Its repr and str never show the value, so it cannot leak through a
    traceback's locals, a log line or an f-string by accident; `reveal()` is the one way out."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def redact(text: str, secrets: Iterable[Secret | str | None]) -> str:
    """Replace every occurrence of each secret value with ***: as it is, in any letter case, URL
    (percent-) encoded, and base64-encoded (standard and URL-safe alphabets, padded or not, and
    inside a longer base64 text such as HTTP Basic's `user:token`): a server may echo a credential
    in any of these forms."""
    for secret in secrets:
        if secret is None:
            continue
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if len(value) < 4:  # too short to redact without mangling ordinary text
            continue
        text = _forms_of(value).sub("***", text)
    return text


# Encoded forms only for a value at least this long: shorter, its base64 is a few characters that
# ordinary text may hold. Real tokens and app passwords are far longer.
_ENCODED_FROM = 8


@functools.lru_cache(maxsize=64)
def _forms_of(value: str) -> re.Pattern[str]:
    """One pattern for every form of `value` a message may carry, the longest first."""
    from urllib.parse import quote, quote_plus

    textual = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    encoded = _base64_forms(value.encode("utf-8")) if len(value) >= _ENCODED_FROM else set()
    forms = [f"(?i:{re.escape(form)})" for form in textual] + [re.escape(form) for form in encoded]
    forms.sort(key=len, reverse=True)
    return re.compile("|".join(forms))


def _base64_forms(raw: bytes) -> set[str]:
    """`raw`'s base64, standard and URL-safe, padded or not, at each of the three alignments it
    may have inside a longer encoded text: the characters that depend on its bytes alone."""
    import base64

    found = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode("ascii")
        # Character i covers bits 6i..6i+6: keep those wholly inside raw's bits.
        start, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6
        core = encoded[start:end]
        found |= {core, core.replace("+", "-").replace("/", "_")}
        if offset == 0:  # on its own: its last characters, with and without the padding
            whole = {encoded, encoded.rstrip("=")}
            found |= whole | {form.replace("+", "-").replace("/", "_") for form in whole}
    return {form for form in found if len(form) >= _ENCODED_FROM}


# The environment variables a loaded config file reads with `!ENV` (config.envtags finds them).
# Their values may be credentials (`token: !ENV MASTODON_TOKEN`), even where they were put in the
# wrong setting by mistake, so an error quoting a setting's value says `!ENV NAME` instead.
_ENV_NAMES: set[str] = set()
_NAMED_FROM = 8  # shorter values are ordinary words ("send" from SYNDICATE_MODE) an error may say


def note_env_names(names: Iterable[str]) -> None:
    _ENV_NAMES.update(names)


def env_values() -> dict[str, str]:
    """Each variable a config file reads by `!ENV` whose value is long enough to be told from an
    ordinary word, with that value, the longest first."""
    import os

    values = {name: os.environ.get(name) or "" for name in _ENV_NAMES}
    # The longest first: a value inside another must not leave the rest of that one showing.
    ordered = sorted(values.items(), key=lambda item: (-len(item[1]), item[0]))
    return {name: value for name, value in ordered if len(value.strip()) >= _NAMED_FROM}


def env_named(text: str) -> str:
    """`text` with the value of each variable a config file reads by `!ENV` shown as `!ENV NAME`
    (quoted or not), never as the value itself."""
    for name, value in env_values().items():
        shown = f"!ENV {name}"
        text = text.replace(repr(value), shown).replace(value, shown)
    return text
