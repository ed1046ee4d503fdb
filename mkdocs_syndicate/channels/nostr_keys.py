"""A Nostr secret key as a config names it (NIP-19): `nsec1…` bech32 or its 64 hex digits,
checked when the config is read. Pure Python: reading a config loads no curve library (the
signing does, channels/nostr_events.py)."""

from __future__ import annotations

from mkdocs_syndicate.channel_api import ConfigError
from mkdocs_syndicate.nip19 import bech32_decode
from mkdocs_syndicate.redaction import Secret

# secp256k1's group order: a secret key is a number from 1 to ORDER - 1 (BIP-340).
ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

_KEY_HELP = "give the account's secret key as nsec1… or as 64 hex digits, e.g. secret_key: !ENV NOSTR_SECRET_KEY"


def secret_key_bytes(text: str) -> bytes | str:
    """The 32 bytes of a secret key written as nsec1… or 64 hex digits, or what is wrong with it
    (never quoting it: the message names the setting, not the key)."""
    text = text.strip()
    if text.lower().startswith(("npub1", "note1", "nprofile1")):
        return f"is a public name ({text[:5].lower()}…), not the secret key; {_KEY_HELP}"
    if text.lower().startswith("nsec1"):
        decoded = bech32_decode(text)
        if decoded is None or decoded[0] != "nsec" or len(decoded[1]) != 32:
            return f"is not a valid nsec1… key (its checksum or length is wrong); {_KEY_HELP}"
        key = decoded[1]
    elif len(text) == 64 and all(c in "0123456789abcdefABCDEF" for c in text):
        key = bytes.fromhex(text)
    else:
        return f"is not a Nostr secret key; {_KEY_HELP}"
    if not 0 < int.from_bytes(key, "big") < ORDER:
        return f"is outside the range of secp256k1 secret keys; {_KEY_HELP}"
    return key


def secret_key(value: Secret, setting: str) -> Secret:
    """An Option check: the key as 64 lower-case hex digits (what signing uses), else a
    ConfigError naming the setting (and never the key)."""
    key = secret_key_bytes(value.reveal())
    if isinstance(key, str):
        raise ConfigError(key, setting)
    return Secret(key.hex())
