"""Keeping credentials out of the ledger, logs, error messages and tracebacks."""

from __future__ import annotations

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
    """Replace every occurrence of each secret value (and its URL-encoded form) with ***."""
    from urllib.parse import quote

    for secret in secrets:
        if secret is None:
            continue
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if len(value) < 4:  # too short to redact without mangling ordinary text
            continue
        for form in {value, quote(value, safe=""), quote(value)}:
            text = text.replace(form, "***")
    return text
