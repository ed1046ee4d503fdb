"""Nostr events as NIP-01 defines them: the id is the SHA-256 of the serialized
`[0, pubkey, created_at, kind, tags, content]` (UTF-8 JSON, no whitespace, no escapes beyond
JSON's own), signed with a BIP-340 Schnorr signature over that id.

Signing uses coincurve (Python bindings to Bitcoin Core's libsecp256k1, with wheels for every
common platform, kept up by the ofek/coincurve project): a maintained library for the curve, not
code of our own, and the same one the reference Python relay (nostr-relay, through aionostr)
verifies with. It is imported on first use, so a plan that sends nothing does not load it."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

Event = dict[str, Any]

NOTE = 1  # NIP-01: a short text note
DELETION = 5  # NIP-09: a request to delete the events it names
ARTICLE = 30023  # NIP-23: long-form content, addressable by its `d` tag


def serialized(pubkey: str, created_at: int, kind: int, tags: list[list[str]], content: str) -> bytes:
    return json.dumps([0, pubkey, created_at, kind, tags, content], separators=(",", ":"), ensure_ascii=False).encode()


def event_id(pubkey: str, created_at: int, kind: int, tags: list[list[str]], content: str) -> str:
    return hashlib.sha256(serialized(pubkey, created_at, kind, tags, content)).hexdigest()


def unsigned(pubkey: str, created_at: int, kind: int, tags: list[list[str]], content: str) -> Event:
    return {
        "id": event_id(pubkey, created_at, kind, tags, content),
        "pubkey": pubkey,
        "created_at": created_at,
        "kind": kind,
        "tags": tags,
        "content": content,
    }


@functools.lru_cache(maxsize=8)
def public_key(secret_hex: str) -> str:
    """The x-only public key (BIP-340) of a secret key, as 64 hex digits: the events' `pubkey`."""
    from coincurve import PublicKeyXOnly

    return str(PublicKeyXOnly.from_secret(bytes.fromhex(secret_hex)).format().hex())


def signed(event: Event, secret_hex: str) -> Event:
    """The event with its `sig`: BIP-340 over its id, with fresh auxiliary randomness (the id, and
    so the event's identity, does not depend on it)."""
    import os

    from coincurve import PrivateKey

    signature = PrivateKey(bytes.fromhex(secret_hex)).sign_schnorr(bytes.fromhex(event["id"]), os.urandom(32))
    return {**event, "sig": signature.hex()}


def is_genuine(event: object, author: str) -> bool:
    """Whether a relay's event is what it claims: the fields NIP-01 requires, by `author`, its id
    the hash of its fields, and its signature valid for that id. A read counts nothing else."""
    if not isinstance(event, dict) or event.get("pubkey") != author:
        return False
    tags, content, created_at, kind = (
        event.get("tags"),
        event.get("content"),
        event.get("created_at"),
        event.get("kind"),
    )
    if not (
        isinstance(tags, list)
        and all(isinstance(t, list) and all(isinstance(v, str) for v in t) for t in tags)
        and isinstance(content, str)
        and isinstance(created_at, int)
        and isinstance(kind, int)
        and isinstance(event.get("sig"), str)
    ):
        return False
    if event.get("id") != event_id(author, created_at, kind, tags, content):
        return False
    from coincurve import PublicKeyXOnly

    try:
        return bool(
            PublicKeyXOnly(bytes.fromhex(author)).verify(bytes.fromhex(event["sig"]), bytes.fromhex(event["id"]))
        )
    except ValueError:
        return False


def tag_value(event: Event, name: str) -> str | None:
    """The first value of the event's first tag called `name`."""
    for tag in event.get("tags", ()):
        if len(tag) > 1 and tag[0] == name:
            return str(tag[1])
    return None
