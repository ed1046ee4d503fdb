"""Nostr's key and address encodings (NIP-19): the secret key a config names, as `nsec1…` bech32
or its 64 hex digits, checked when the config is read; and the bech32 names a copy's link carries
(`note1…` for a note's event id, `naddr1…` for a long-form article's address).

Bech32 is BIP-173's (NIP-19 uses bech32, not bech32m); it is a few lines, so it is written here
from the BIP rather than taken from an unmaintained package. Pure Python: reading a config loads
no curve library (the signing does, channels/nostr_events.py)."""

from __future__ import annotations

from mkdocs_syndicate.channel_api import ConfigError
from mkdocs_syndicate.redaction import Secret

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
# secp256k1's group order: a secret key is a number from 1 to ORDER - 1 (BIP-340).
ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def _polymod(values: list[int]) -> int:
    check = 1
    for value in values:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ value
        for i, generator in enumerate(_GENERATOR):
            check ^= generator if (top >> i) & 1 else 0
    return check


def _expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert(data: bytes | list[int], from_bits: int, to_bits: int, pad: bool) -> list[int] | None:
    acc, bits, out, most = 0, 0, [], (1 << to_bits) - 1
    for value in data:
        acc = (acc << from_bits) | value
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            out.append((acc >> bits) & most)
    if pad and bits:
        out.append((acc << (to_bits - bits)) & most)
    elif not pad and (bits >= from_bits or (acc << (to_bits - bits)) & most):
        return None
    return out


def bech32_encode(hrp: str, data: bytes) -> str:
    words = _convert(data, 8, 5, True) or []
    check = _polymod([*_expand(hrp), *words, 0, 0, 0, 0, 0, 0]) ^ 1
    words += [(check >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[w] for w in words)


def bech32_decode(text: str) -> tuple[str, bytes] | None:
    """(prefix, bytes), or None when `text` is not valid bech32 (a typo breaks its checksum)."""
    if text.lower() != text and text.upper() != text:
        return None
    text = text.lower()
    hrp, sep, rest = text.rpartition("1")
    if not sep or not hrp or len(rest) < 6 or any(c not in _CHARSET for c in rest):
        return None
    words = [_CHARSET.index(c) for c in rest]
    if _polymod([*_expand(hrp), *words]) != 1:
        return None
    data = _convert(words[:-6], 5, 8, False)
    return None if data is None else (hrp, bytes(data))


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


def note_name(event_id: str) -> str:
    """`note1…`: a note's event id as NIP-19 names it (what a web gateway's link takes)."""
    return bech32_encode("note", bytes.fromhex(event_id))


def naddr_name(kind: int, author: str, identifier: str, relay: str = "") -> str:
    """`naddr1…`: an addressable event's coordinate (kind, author, `d` tag) as NIP-19's TLV: type
    0 the identifier, 1 a relay, 2 the author's 32 bytes, 3 the kind as 4 big-endian bytes."""

    def tlv(kind_of: int, value: bytes) -> bytes:
        return bytes([kind_of, len(value)]) + value

    data = tlv(0, identifier.encode()) + (tlv(1, relay.encode()) if relay else b"")
    data += tlv(2, bytes.fromhex(author)) + tlv(3, kind.to_bytes(4, "big"))
    return bech32_encode("naddr", data)
